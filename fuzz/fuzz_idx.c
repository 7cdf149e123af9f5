/* libFuzzer target for the IDX reader (MNIST's format, src/data/idx.c):
 * the bytes as a file (magic, dtype code, rank, dimensions, payload), at
 * every expected rank the loaders ask for. Any failure must be a clean
 * error with a message. fuzz/run.sh idx builds and runs it. */
#include "fuzz_check.h"
#include "tg/data.h"
#include "tg/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/tg_fuzz_idx_%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t wrote = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || wrote != size)
        return 0;
    for (int rank = 0; rank <= 4; rank++) { /* 0: any rank */
        tg_tensor *t = tg_idx_load(path, rank);
        if (!t) {
            fuzz_require_message("fuzz_idx");
            continue;
        }
        tg_release(t);
    }
    return 0;
}
