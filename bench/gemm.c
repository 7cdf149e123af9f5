/* float32 GEMM benchmark (JSON lines): LeNet-5's products (batch 64: the
 * forward, input-gradient and weight-gradient GEMMs of fc1, fc2, fc3),
 * 512/1024 squares and ResNet-18's classifier at batch 1 to 8 (fc1000.bM,
 * B [1000, 512] transposed: the skinny path), at 1 and 2 threads. Each measurement runs in a child
 * process per OpenBLAS core: the one OpenBLAS detects ("detected") and
 * each of --cores forced with OPENBLAS_CORETYPE (read when OpenBLAS
 * loads). A child samples the first three in turn, so that they see the
 * same machine load, and OpenBLAS's own threads after them (they spin
 * between calls and would slow the others down):
 *   "chosen"    the library's per-shape choice (gemm_select.c),
 *   "built-in"  the built-in kernel for this CPU (over our pool),
 *   "openblas[CORE]"  OpenBLAS as the library calls it (1 thread per call,
 *               split over our pool),
 *   "openblas[CORE]-own-threads"  OpenBLAS's own threading (2 threads).
 * GFLOP/s are medians of 7 samples (each ~2 ms of repeats), the best
 * sample beside it. Per shape and thread count a summary gives the
 * chosen implementation and its speed over the best of the others in
 * the same child, the worst such ratio over the children.
 *   bench_gemm [--cores SkylakeX,Cooperlake,Zen] [--quick] [--only PREFIX]
 * (--quick: only the detected core; --only: shapes whose name starts so;
 * internal: --child CORE SHAPE THREADS) */
#include "tg/tg.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TG_HAVE_CBLAS
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
#endif

#define SAMPLES 7

typedef struct shape {
    const char *name;
    bool ta, tb;
    int64_t m, n, k;
} shape;

static const shape shapes[] = {
    {"fc1.fwd", false, true, 64, 120, 400},   {"fc1.dx", false, false, 64, 400, 120},
    {"fc1.dw", true, false, 120, 400, 64},    {"fc2.fwd", false, true, 64, 84, 120},
    {"fc2.dx", false, false, 64, 120, 84},    {"fc2.dw", true, false, 84, 120, 64},
    {"fc3.fwd", false, true, 64, 10, 84},     {"fc3.dx", false, false, 64, 84, 10},
    {"fc3.dw", true, false, 10, 84, 64},      {"square512", false, false, 512, 512, 512},
    {"square1024", false, false, 1024, 1024, 1024},
    /* ResNet-18's classifier (Linear 512 -> 1000, weights [1000, 512]) at
     * batch 1 to 8: "chosen" is the skinny path (gemm_skinny.c) */
    {"fc1000.b1", false, true, 1, 1000, 512}, {"fc1000.b2", false, true, 2, 1000, 512},
    {"fc1000.b3", false, true, 3, 1000, 512}, {"fc1000.b4", false, true, 4, 1000, 512},
    {"fc1000.b5", false, true, 5, 1000, 512}, {"fc1000.b6", false, true, 6, 1000, 512},
    {"fc1000.b7", false, true, 7, 1000, 512}, {"fc1000.b8", false, true, 8, 1000, 512},
    /* TransformerEncoderLayer(128, 4, 512) on 2048 tokens (bench/function_modes.py):
     * each Linear's forward (NT), input gradient (NN) and weight gradient (TN) */
    {"tr.qkv.fwd", false, true, 2048, 384, 128}, {"tr.qkv.dw", true, false, 384, 128, 2048},
    {"tr.out.fwd", false, true, 2048, 128, 128}, {"tr.out.dx", false, false, 2048, 128, 128},
    {"tr.out.dw", true, false, 128, 128, 2048},  {"tr.ff1.fwd", false, true, 2048, 512, 128},
    {"tr.ff1.dx", false, false, 2048, 128, 512}, {"tr.ff1.dw", true, false, 512, 128, 2048},
    {"tr.ff2.fwd", false, true, 2048, 128, 512}, {"tr.ff2.dx", false, false, 2048, 512, 128},
    {"tr.ff2.dw", true, false, 128, 512, 2048},
    /* its attention, one head of one sample (64 tokens, 32 features; 128 such
     * products per batched matmul): scores (NT), probabilities @ values (NN),
     * the values' gradient (TN) */
    {"attn.qk", false, true, 64, 64, 32}, {"attn.av", false, false, 64, 32, 64},
    {"attn.dv", true, false, 64, 32, 64},
};
#define N_SHAPES (int)(sizeof shapes / sizeof shapes[0])

typedef enum impl { CHOSEN, BUILTIN, BLAS_SPLIT, BLAS_OWN } impl;

typedef struct bench_ctx {
    const shape *s;
    tg__gemm_call g;
    int threads;
} bench_ctx;

static void run_once(const bench_ctx *b, impl i)
{
    const tg__gemm_call *g = &b->g;
    switch (i) {
    case CHOSEN:
        tg__gemm_f32(g->ta, g->tb, g->m, g->n, g->k, 1, g->a, g->lda, g->b, g->ldb,
                     0, g->c, g->ldc);
        break;
    case BUILTIN:
    case BLAS_SPLIT:
        tg__gemm_exec(g, i == BLAS_SPLIT, tg__gemm_threads(g->m, g->n, g->k));
        break;
    case BLAS_OWN:
#ifdef TG_HAVE_CBLAS
        cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
                    g->tb ? CblasTrans : CblasNoTrans, (int)g->m, (int)g->n,
                    (int)g->k, 1, g->a, (int)g->lda, g->b, (int)g->ldb, 0, g->c,
                    (int)g->ldc);
#endif
        break;
    }
}

/* repeats of b by implementation i lasting about 2 ms */
static int calibrate_reps(const bench_ctx *b, impl i)
{
    run_once(b, i); /* warm-up (and the calibration, for CHOSEN) */
    double t0 = now_s();
    run_once(b, i);
    double one = now_s() - t0;
    return one > 2e-3 ? 1 : (int)(2e-3 / (one > 1e-7 ? one : 1e-7)) + 1;
}

/* median and best GFLOP/s over SAMPLES samples of each of the n
 * implementations, sampled in turn so that all see the same machine load */
static void measure(const bench_ctx *b, int n, const impl *which, double *median,
                    double *best)
{
    double flop = 2.0 * (double)(b->g.m * b->g.n * b->g.k), t[4][SAMPLES];
    int reps[4];
    for (int i = 0; i < n; i++)
        reps[i] = calibrate_reps(b, which[i]);
    for (int s = 0; s < SAMPLES; s++)
        for (int i = 0; i < n; i++) {
            double t0 = now_s();
            for (int r = 0; r < reps[i]; r++)
                run_once(b, which[i]);
            t[i][s] = (now_s() - t0) / reps[i];
        }
    for (int i = 0; i < n; i++) {
        qsort(t[i], SAMPLES, sizeof t[i][0], cmp_double);
        median[i] = flop / t[i][SAMPLES / 2] * 1e-9;
        best[i] = flop / t[i][0] * 1e-9;
    }
}

static void report(const bench_ctx *b, const char *what, double med, double best)
{
    const shape *s = b->s;
    printf("{\"bench\":\"sgemm\",\"shape\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,"
           "\"trans\":\"%c%c\",\"threads\":%d,\"impl\":\"%s\",\"gflops\":%.1f,"
           "\"gflops_best\":%.1f}\n", s->name, (long long)s->m, (long long)s->n,
           (long long)s->k, s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', b->threads, what,
           med, best);
    fflush(stdout);
}

static bench_ctx make_ctx(const shape *s, int threads, float *a, float *bm, float *c)
{
    bench_ctx b = {.s = s, .threads = threads};
    b.g = (tg__gemm_call){.ta = s->ta, .tb = s->tb, .m = s->m, .n = s->n, .k = s->k,
                          .lda = s->ta ? s->m : s->k, .ldb = s->tb ? s->k : s->n,
                          .ldc = s->n, .alpha = 1, .beta = 0, .a = a, .b = bm, .c = c};
    return b;
}

/* the child's rows (OpenBLAS with core `core`, which the parent put in
 * OPENBLAS_CORETYPE unless it is "detected"), and chosen / best of them */
static double child(const char *core, int s, int threads, float *a, float *bm, float *c)
{
    char names[4][96];
    impl which[4] = {CHOSEN, BUILTIN, BLAS_SPLIT, BLAS_OWN};
    double med[4], best[4], top = 0;
    int n = threads > 1 ? 4 : 3;
    bench_ctx b = make_ctx(&shapes[s], threads, a, bm, c);
    tg_set_num_threads(threads);
#ifdef TG_HAVE_CBLAS
    openblas_set_num_threads(threads); /* for BLAS_OWN; the library sets 1 per call */
#endif
    snprintf(names[0], sizeof names[0], "chosen");
    snprintf(names[1], sizeof names[1], "built-in");
    snprintf(names[2], sizeof names[2], "openblas[%s]", core);
    snprintf(names[3], sizeof names[3], "openblas[%s]-own-threads", core);
    /* OpenBLAS's own threads run last, on their own: once started they
     * spin after each call and would take a core from the other rows */
    measure(&b, 3, which, med, best);
    if (n == 4)
        measure(&b, 1, which + 3, med + 3, best + 3);
    for (int i = 0; i < n; i++) {
        report(&b, names[i], med[i], best[i]);
        top = i > 0 && med[i] > top ? med[i] : top;
    }
    return top > 0 ? med[0] / top : 0;
}

/* runs the child for one core, echoing its rows; returns its ratio */
static double run_child(const char *self, const char *core, int s, int threads)
{
    char cmd[512], line[512];
    if (strcmp(core, "detected") == 0)
        snprintf(cmd, sizeof cmd, "'%s' --child %s %d %d", self, core, s, threads);
    else
        snprintf(cmd, sizeof cmd, "OPENBLAS_CORETYPE=%s '%s' --child %s %d %d", core,
                 self, core, s, threads);
    FILE *p = popen(cmd, "r");
    double ratio = 0;
    while (p && fgets(line, sizeof line, p)) {
        const char *r = strstr(line, "\"ratio\":");
        if (r)
            ratio = atof(r + 8);
        else
            fputs(line, stdout);
    }
    if (p)
        pclose(p);
    fflush(stdout);
    return ratio;
}

int main(int argc, char **argv)
{
    const char *cores = "SkylakeX,Cooperlake,Zen";
    int child_shape = -1, child_threads = 1;
    const char *child_core = NULL;
    bool quick = false;
    const char *only = NULL; /* a shape name prefix */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cores") == 0 && i + 1 < argc)
            cores = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--child") == 0 && i + 3 < argc) {
            child_core = argv[i + 1];
            child_shape = atoi(argv[i + 2]);
            child_threads = atoi(argv[i + 3]);
            i += 3;
        }
    }
    size_t big = 1024 * 1024;
    float *a = malloc(big * sizeof *a), *bm = malloc(big * sizeof *bm);
    float *c = malloc(big * sizeof *c);
    for (size_t i = 0; i < big; i++) {
        a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        bm[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    }
    if (child_core) {
        if (child_shape >= 0 && child_shape < N_SHAPES)
            printf("{\"ratio\":%.4f}\n",
                   child(child_core, child_shape, child_threads, a, bm, c));
        return 0;
    }
    printf("{\"bench\":\"sgemm-setup\",\"isa\":\"%s\",\"blas\":\"%s\","
           "\"blas_core\":\"%s\"}\n", tg__isa_name(tg__cpu_isa()), tg__gemm_backend(),
           tg__blas_corename());
    for (int s = 0; s < N_SHAPES; s++)
        for (int t = 1; t <= 2 && (!only || strncmp(shapes[s].name, only, strlen(only)) == 0); t++) {
            char list[256];
            snprintf(list, sizeof list, "detected%s%s", quick ? "" : ",", quick ? "" : cores);
            double worst = 1e9;
            for (char *core = strtok(list, ","); core; core = strtok(NULL, ",")) {
                double r = run_child(argv[0], core, s, t);
                worst = r < worst ? r : worst;
            }
            const shape *sh = &shapes[s];
            tg_set_num_threads(t);
            tg__gemm_call sg = {.ta = sh->ta, .tb = sh->tb, .m = sh->m, .n = sh->n,
                                .k = sh->k, .alpha = 1};
            const char *choice =
                tg__gemm_skinny_fits(&sg) ? "skinny"
                : tg__gemm_use_blas() ? "openblas" : "built-in";
            printf("{\"bench\":\"sgemm-summary\",\"shape\":\"%s\",\"threads\":%d,"
                   "\"chosen\":\"%s\",\"chosen_over_best\":%.3f}\n", sh->name, t,
                   choice, worst);
            fflush(stdout);
        }
    free(a);
    free(bm);
    free(c);
    return 0;
}
