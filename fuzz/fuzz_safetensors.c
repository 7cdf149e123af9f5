/* libFuzzer target for the safetensors reader: parse the bytes as a file
 * (header length, JSON header, offsets, dtypes, shapes), then touch every
 * tensor and metadata entry it accepted, and write the dict back out and
 * read that again, which must give the same names. Any failure must be a
 * clean error with a message. fuzz/run.sh safetensors builds and runs it. */
#include "fuzz_check.h"
#include "tg/io.h"
#include "tg/tensor.h"
#include "tg/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double touch(const tg_state_dict *sd)
{
    double sum = 0;
    for (int i = 0; i < tg_state_dict_size(sd); i++) {
        tg_tensor *t = tg_state_dict_tensor(sd, i); /* a new reference */
        sum += (double)tg_numel(t) + (double)strlen(tg_state_dict_name(sd, i));
        tg_release(t);
    }
    for (int i = 0; i < tg_state_dict_meta_size(sd); i++)
        sum += (double)strlen(tg_state_dict_meta_key(sd, i)) +
               (double)strlen(tg_state_dict_meta_value(sd, i));
    return sum;
}

/* the accepted dict written and read back: the same entries */
static void round_trip(const tg_state_dict *sd)
{
    char path[] = "/tmp/tg_fuzz_st_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return;
    close(fd);
    if (tg_safetensors_save_dict(path, sd) == TG_OK) {
        tg_state_dict *back = tg_safetensors_load(path);
        if (!back || tg_state_dict_size(back) != tg_state_dict_size(sd)) {
            fprintf(stderr, "fuzz_safetensors: a written dict did not read back: %s\n",
                    tg_last_error());
            abort();
        }
        tg_state_dict_free(back);
    } else
        fuzz_require_message("fuzz_safetensors");
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_state_dict *sd = tg_safetensors_parse(data, size);
    if (!sd) {
        fuzz_require_message("fuzz_safetensors");
        return 0;
    }
    volatile double sink = touch(sd);
    (void)sink;
    round_trip(sd);
    tg_state_dict_free(sd);
    return 0;
}
