/* Memory of a graph-mode while_loop against its trip count (JSON lines):
 * one graph, a loop over a float32[n] variable and an int64 counter whose
 * bound is fed, run for growing trip counts in one process. Each line
 * gives the trip count, the seconds the run took and the process's peak
 * resident memory (VmHWM) after it: flat memory means the peak does not
 * grow with the trip count. A last line does the same for the loop's
 * gradient (while_grad keeps every iteration's variables: that peak grows).
 *   bench_while_memory [--n ELEMENTS] */
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* vars: x, k; user: the bound (a value of the enclosing graph: a capture) */
static tg_status cond_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_lt(in[1], *(tg_tensor **)user);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status body_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_add_scalar(tg_mul_scalar(tg_tanh(in[0]), 0.999), 0.001);
    out[1] = tg_add_scalar(in[1], 1);
    return out[0] && out[1] ? TG_OK : tg_last_status();
}

int main(int argc, char **argv)
{
    int64_t n = 65536;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--n") == 0)
            n = atoll(argv[++i]);
    tg_graph *g = tg_graph_new("while_memory");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, &n);
    tg_tensor *bound = tg_placeholder(g, "bound", TG_INT64, 0, NULL);
    tg_tensor *init[2] = {x, tg_scalar(TG_INT64, 0)}, *out[2], *dx = NULL;
    tg_graph_begin(g);
    tg_status s = tg_while_loop(cond_fn, body_fn, &bound, 2, init, out, NULL);
    tg_tensor *loss = s == TG_OK ? tg_sum(out[0], 0, NULL, false) : NULL;
    tg_graph_end();
    if (!loss || tg_graph_gradients(g, 1, &loss, NULL, 1, &x, &dx) != TG_OK) {
        fprintf(stderr, "bench_while_memory: %s\n", tg_last_error());
        return 1;
    }
    tg_session *sess = tg_session_new(g);
    tg_tensor *xv = tg_full(TG_FLOAT32, 1, &n, 0.5);
    const int64_t trips[] = {10, 100, 1000, 10000};
    for (int k = 0; k < 5; k++) {
        bool grad = k == 4;
        int64_t t = grad ? 1000 : trips[k];
        tg_tensor *bv = tg_scalar(TG_INT64, (double)t), *res[2];
        double t0 = now();
        s = tg_session_run(sess, 2, (tg_tensor *[]){x, bound}, (tg_tensor *[]){xv, bv}, 2,
                           grad ? (tg_tensor *[]){loss, dx} : (tg_tensor *[]){loss, out[1]},
                           res, 0, NULL);
        double sec = now() - t0;
        if (s != TG_OK) {
            fprintf(stderr, "bench_while_memory: %s\n", tg_last_error());
            return 1;
        }
        printf("{\"bench\": \"while_memory\", \"what\": \"%s\", \"elements\": %lld, "
               "\"trips\": %lld, \"seconds\": %.4f, \"peak_rss_kib\": %ld}\n",
               grad ? "loss and gradient" : "loss", (long long)n, (long long)t, sec,
               peak_kib());
        tg_release(res[0]);
        tg_release(res[1]);
        tg_release(bv);
    }
    tg_session_free(sess);
    tg_graph_free(g);
    return 0;
}
