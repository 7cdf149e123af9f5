/* The CPU time of an ONNX model's run in tensorgraph (graph mode, one
 * session, warm), for before/after comparisons on a shared machine where
 * wall times are inflated by other processes: `tg bench onnx` times the
 * wall clock, this times the process's CPU time per run (all threads, so
 * with --threads 2 it includes the pool's spinning), median of N runs,
 * after at least 300 ms of warm-up runs. One JSON line.
 *   bench_onnx_cpu MODEL [--batch B] [--threads T] [--runs N] */
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median CPU ms per run of the built net on x, or -1 */
static double time_runs(tg_session *s, tg_onnx_net *net, tg_tensor *x, int runs)
{
    tg_tensor *p = tg_onnx_net_input(net, 0), *y = tg_onnx_net_output(net, 0);
    double *t = malloc((size_t)runs * sizeof *t), med = -1;
    if (!t)
        return -1;
    double start = clock_of(CLOCK_MONOTONIC);
    for (int i = 0; clock_of(CLOCK_MONOTONIC) - start < 300 || i < 3; i++) {
        tg_tensor *res = NULL;
        if (tg_session_run(s, 1, &p, &x, 1, &y, &res, 0, NULL) != TG_OK)
            goto out;
        tg_release(res);
    }
    for (int i = 0; i < runs; i++) {
        tg_tensor *res = NULL;
        double t0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
        if (tg_session_run(s, 1, &p, &x, 1, &y, &res, 0, NULL) != TG_OK)
            goto out;
        t[i] = clock_of(CLOCK_PROCESS_CPUTIME_ID) - t0;
        tg_release(res);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    med = t[runs / 2];
out:
    free(t);
    return med;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int batch = 1, threads = 1, runs = 50;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--batch"))
            batch = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--threads"))
            threads = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--runs"))
            runs = atoi(argv[++i]);
        else
            path = argv[i];
    }
    if (!path || batch < 1 || threads < 1 || runs < 1) {
        fprintf(stderr, "usage: bench_onnx_cpu MODEL [--batch B] [--threads T] [--runs N]\n");
        return 1;
    }
    tg_set_num_threads(threads);
    tg_onnx_model *m = tg_onnx_load(path);
    tg_onnx_value_info vi;
    if (!m || tg_onnx_input_info(m, 0, &vi) != TG_OK || vi.ndim < 1 || vi.ndim > 8) {
        fprintf(stderr, "bench_onnx_cpu: %s: %s\n", path, tg_last_error());
        tg_onnx_free(m);
        return 1;
    }
    int64_t shape[8];
    for (int d = 0; d < vi.ndim; d++)
        shape[d] = d == 0 ? batch : vi.shape[d];
    tg_generator *gen = tg_generator_new(1);
    tg_tensor *x = tg_rand_uniform(gen, TG_FLOAT32, vi.ndim, shape, -1, 1);
    tg_graph *g = tg_graph_new("bench");
    double ms = -1;
    if (x && g && tg_graph_begin(g) == TG_OK) {
        tg_onnx_opts o = {.specialize = false};
        tg_onnx_net *net = tg_onnx_build(m, 1, &vi.name, &x, &o);
        tg_graph_end();
        tg_session *s = net ? tg_session_new(g) : NULL;
        if (s)
            ms = time_runs(s, net, x, runs);
        tg_session_free(s);
        tg_onnx_net_free(net);
    }
    if (ms < 0)
        fprintf(stderr, "bench_onnx_cpu: %s\n", tg_last_error());
    else
        printf("{\"bench\": \"onnx_cpu\", \"model\": \"%s\", \"batch\": %d, \"threads\": %d, "
               "\"runs\": %d, \"clock\": \"cpu\", \"ms\": %.4f}\n",
               path, batch, threads, runs, ms);
    tg_graph_free(g);
    tg_release(x);
    tg_generator_free(gen);
    tg_onnx_free(m);
    return ms < 0;
}
