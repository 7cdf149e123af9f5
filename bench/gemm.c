/* GEMM micro-benchmark (JSON lines): the library's float32 GEMM
 * (CBLAS or built-in, split over the pool) at 1 and 2 threads, the
 * built-in kernel alone, and, built with -DWITH_OPENBLAS (add -lopenblas),
 * OpenBLAS threading itself, which backs the threading choice described
 * in src/kernels/cpu/gemm.c. Usage: bench_gemm [n ...] (square n^3). */
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef WITH_OPENBLAS
#include <cblas.h>
#endif

/* internal symbols of the library (src/kernels/cpu/gemm.h), declared here
 * so that the benchmark needs only the public headers */
tg_status tg__sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                    float alpha, const float *a, int64_t lda, const float *b,
                    int64_t ldb, float beta, float *c, int64_t ldc);
tg_status tg__gemm_builtin_f32(bool trans_a, bool trans_b, int64_t m,
                               int64_t n, int64_t k, float alpha,
                               const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c, int64_t ldc);
const char *tg__gemm_backend(void);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef void (*gemm_fn)(int64_t n, const float *a, const float *b, float *c);

static void lib_gemm(int64_t n, const float *a, const float *b, float *c)
{
    tg__sgemm(false, false, n, n, n, 1, a, n, b, n, 0, c, n);
}

static void builtin_gemm(int64_t n, const float *a, const float *b, float *c)
{
    tg__gemm_builtin_f32(false, false, n, n, n, 1, a, n, b, n, 0, c, n);
}

#ifdef WITH_OPENBLAS
static void blas_gemm(int64_t n, const float *a, const float *b, float *c)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n,
                (int)n, 1, a, (int)n, b, (int)n, 0, c, (int)n);
}
#endif

/* best of a few runs, in GFLOP/s */
static double gflops(gemm_fn f, int64_t n, const float *a, const float *b,
                     float *c)
{
    double flop = 2.0 * (double)n * (double)n * (double)n, best = 1e30;
    int reps = n >= 512 ? 5 : n >= 128 ? 50 : 2000;
    f(n, a, b, c);
    for (int t = 0; t < 5; t++) {
        double t0 = now_s();
        for (int r = 0; r < reps; r++)
            f(n, a, b, c);
        double dt = (now_s() - t0) / reps;
        if (dt < best)
            best = dt;
    }
    return flop / best * 1e-9;
}

static void report(const char *what, int threads, int64_t n, double g)
{
    printf("{\"bench\":\"sgemm\",\"impl\":\"%s\",\"threads\":%d,\"n\":%lld,"
           "\"gflops\":%.2f}\n", what, threads, (long long)n, g);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int64_t sizes[16] = {64, 128, 256, 512, 1024};
    int ns = 5;
    if (argc > 1)
        for (ns = 0; ns < argc - 1 && ns < 16; ns++)
            sizes[ns] = atoll(argv[ns + 1]);
    for (int s = 0; s < ns; s++) {
        int64_t n = sizes[s];
        float *a = malloc((size_t)(n * n) * sizeof *a);
        float *b = malloc((size_t)(n * n) * sizeof *b);
        float *c = malloc((size_t)(n * n) * sizeof *c);
        for (int64_t i = 0; i < n * n; i++) {
            a[i] = (float)((i * 7) % 13) / 13.0f;
            b[i] = (float)((i * 5) % 11) / 11.0f;
        }
        for (int t = 1; t <= 2; t++) {
            tg_set_num_threads(t);
            report(tg__gemm_backend(), t, n, gflops(lib_gemm, n, a, b, c));
        }
        report("built-in-serial", 1, n, gflops(builtin_gemm, n, a, b, c));
#ifdef WITH_OPENBLAS
        /* OpenBLAS's own threads, called from outside our pool */
        lib_gemm(1, a, b, c); /* the library's once-only set_num_threads(1) */
        openblas_set_num_threads(2);
        report("openblas-own-threads", 2, n, gflops(blas_gemm, n, a, b, c));
        openblas_set_num_threads(1);
#endif
        free(a);
        free(b);
        free(c);
    }
    return 0;
}
