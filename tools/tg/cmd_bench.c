/* tg bench: micro-benchmarks printing JSON lines.
 *   dispatch  per-op overhead of eager add on 4-element float32 tensors,
 *             with and without grad recording
 *   onnx      an ONNX model against onnxruntime (bench_onnx.c) */
#include "commands.h"
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median over repeats of the mean time of `iters` adds, each in a scope
 * that is closed every 64 ops (how eager C code is written) */
static double time_add(tg_tensor *a, tg_tensor *b, int iters, int repeats)
{
    double *t = malloc((size_t)repeats * sizeof *t);
    for (int r = 0; r < repeats; r++) {
        double t0 = now_ns();
        for (int i = 0; i < iters; i += 64) {
            tg_scope_begin();
            for (int k = 0; k < 64; k++)
                tg_add(a, b);
            tg_scope_end();
        }
        t[r] = (now_ns() - t0) / iters;
    }
    qsort(t, (size_t)repeats, sizeof *t, cmp_double);
    double med = t[repeats / 2];
    free(t);
    return med;
}

static int bench_dispatch(void)
{
    int64_t shape[1] = {4};
    tg_tensor *a = tg_ones(TG_FLOAT32, 1, shape);
    tg_tensor *b = tg_ones(TG_FLOAT32, 1, shape);
    const int iters = 64 * 2000, repeats = 15;
    time_add(a, b, iters, 3); /* warm up */
    double plain = time_add(a, b, iters, repeats);
    tg_set_requires_grad(a, true);
    double grad = time_add(a, b, iters, repeats);
    printf("{\"bench\":\"dispatch\",\"op\":\"add\",\"grad\":false,\"ns_per_op\":%.1f}\n", plain);
    printf("{\"bench\":\"dispatch\",\"op\":\"add\",\"grad\":true,\"ns_per_op\":%.1f}\n", grad);
    tg_release(a);
    tg_release(b);
    return 0;
}

int tg_cmd_bench(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        printf("usage: tg bench dispatch | onnx MODEL [--batch B] [--threads T] [--runs N]\n"
               "                                    [--profile TRACE.json]\n"
               "  dispatch  eager add overhead on 4-element float32 tensors,\n"
               "            without and with grad recording (ns per op, median)\n"
               "  onnx      an ONNX model's time per run (graph mode, warm, median; wall\n"
               "            and the process's CPU time) on a random input of batch B\n"
               "            (default 1, threads 2, 20 runs), and onnxruntime's with the\n"
               "            largest output difference when node and onnxruntime-node are\n"
               "            installed (scripts/install_ort.sh)\n");
        return argc < 2 ? 1 : 0;
    }
    if (!strcmp(argv[1], "dispatch"))
        return bench_dispatch();
    if (!strcmp(argv[1], "onnx"))
        return tg_bench_onnx(argc - 1, argv + 1);
    fprintf(stderr, "tg bench: unknown benchmark '%s'\n", argv[1]);
    return 1;
}
