/* Readers of files the user names refuse, at once and with a message, what
 * is not a regular file. A FIFO used to block the open itself until some
 * writer appeared (a hang on a hostile path), before the check for a
 * regular file could run; the alarm below turns such a hang into a
 * failure of this test. */
#include "harness.h"
#include "tg/tg.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], fifo[128];

static void test_safetensors_refuses_a_fifo(void)
{
    tg_state_dict *sd = tg_safetensors_load(fifo);
    CHECK(sd == NULL);
    CHECK(strstr(tg_last_error(), "not a regular file") != NULL);
    tg_state_dict_free(sd);
}

static void test_idx_refuses_a_fifo(void)
{
    tg_tensor *t = tg_idx_load(fifo, 0);
    CHECK(t == NULL);
    CHECK(strstr(tg_last_error(), "not a regular file") != NULL);
}

static void test_onnx_refuses_a_fifo(void)
{
    tg_onnx_model *m = tg_onnx_load(fifo);
    CHECK(m == NULL);
    CHECK(strstr(tg_last_error(), "not a regular file") != NULL);
}

static void test_html_profile_refuses_a_fifo(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("g");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){4});
    tg_graph_begin(g);
    tg_tensor *y = tg_exp(x);
    tg_graph_end();
    char out[160];
    snprintf(out, sizeof out, "%s/page.html", dir);
    tg_html_options o = {.n_fetches = 1, .fetches = &y, .profile = fifo};
    CHECK_FAILS(tg_graph_to_html(g, out, &o), TG_ERR_IO, "not a regular file");
    unlink(out);
    tg_graph_free(g);
    tg_scope_end();
}

/* the missing file and the directory keep their own messages */
static void test_other_paths(void)
{
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none", dir);
    CHECK(tg_safetensors_load(missing) == NULL);
    CHECK(strstr(tg_last_error(), "No such file") != NULL);
    CHECK(tg_idx_load(dir, 0) == NULL);
    CHECK(strstr(tg_last_error(), "not a regular file") != NULL);
    CHECK(tg_onnx_load(missing) == NULL);
    CHECK(strstr(tg_last_error(), "No such file") != NULL);
}

int main(void)
{
    alarm(60); /* a reader blocked on the FIFO ends the test as a failure */
    snprintf(dir, sizeof dir, "/tmp/tg_readers_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    if (mkfifo(fifo, 0600) != 0) {
        perror("mkfifo");
        return 1;
    }
    RUN(test_safetensors_refuses_a_fifo);
    RUN(test_idx_refuses_a_fifo);
    RUN(test_onnx_refuses_a_fifo);
    RUN(test_html_profile_refuses_a_fifo);
    RUN(test_other_paths);
    unlink(fifo);
    rmdir(dir);
    return tt_finish();
}
