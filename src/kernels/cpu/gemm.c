/* GEMM for float32/float64: CBLAS (OpenBLAS) when available, else a
 * packed, cache-blocked kernel in plain C written for the vectorizer;
 * large products are split over the library's one thread pool. Integer
 * matmul is a plain loop. */
#include "kernels/cpu/gemm.h"
#include "core/threadpool.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- threading policy ----------------------------------------------------
 * There is one thread pool in the library. A BLAS that starts threads of
 * its own would compete with it for the cores (and each pool worker
 * calling a threaded BLAS would ask for all of them), so OpenBLAS is told
 * once to use 1 thread and big GEMMs are split here, by blocks of rows
 * (or columns) of C, over tg_parallel_for; a GEMM reached from inside a
 * pool region (conv over the batch, batched matmul) runs on its caller's
 * thread. Measured with bench/gemm.c on this 2-core box (sgemm n^3,
 * GFLOP/s, best of 5; 1 OpenBLAS thread / split over our 2 threads /
 * OpenBLAS's own 2 threads), machine otherwise quiet:
 *   n = 128: 95 / 50 / 127,  256: 99 / 164 / 172,  512: 94 / 195 / 188,
 *   1024: 90 / 181 / 186;
 * with other jobs on the cores, OpenBLAS's spinning threads fell to 16-40
 * while the split kept 33-88. So the split costs little where OpenBLAS
 * threading wins, degrades better, and tg_set_num_threads governs all
 * threads. Small products stay serial (TG__GEMM_PAR_WORK: the pool's
 * wake-up costs ~10-50 us). openblas_set_num_threads is looked up weakly:
 * a CBLAS other than OpenBLAS simply lacks it. */
#ifdef TG_HAVE_CBLAS
#include <cblas.h>
#include <pthread.h>
void openblas_set_num_threads(int num_threads);
#pragma weak openblas_set_num_threads

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static void blas_init(void)
{
    if (openblas_set_num_threads)
        openblas_set_num_threads(1);
}
#endif

const char *tg__gemm_backend(void)
{
#ifdef TG_HAVE_CBLAS
    return openblas_set_num_threads ? "openblas" : "cblas";
#else
    return "built-in";
#endif
}

#define PAR_MIN_WORK TG__GEMM_PAR_WORK
/* parallel blocks of C are at least this many rows or columns */
#define PAR_MIN_SPLIT 16

/* ---- the built-in kernel -------------------------------------------------
 * Goto's scheme: B is packed in KC x NR column panels, A in MC x KC
 * blocks of MR-row panels (alpha folded in), and an MR x NR micro-kernel
 * accumulates a tile in registers. The micro-kernel is plain C with
 * constant trip counts so that gcc/clang turn the j loop into vectors;
 * NR is two vectors wide for the target's SIMD width. */
#if defined(__AVX512F__)
#define VEC_BYTES 64
#elif defined(__AVX__)
#define VEC_BYTES 32
#else
#define VEC_BYTES 16
#endif
#define MR 6
#define KC 256
#define MC 96 /* a multiple of MR */
#define NC 2048

static void *buf_alloc(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

/* -std=c11 turns off FMA contraction (-ffp-contract=off), so fused
 * multiply-adds are asked for by name where the target has them */
#if defined(__FMA__)
#define MADD(FMA, acc, x, y) FMA(x, y, acc)
#else
#define MADD(FMA, acc, x, y) ((acc) + (x) * (y))
#endif

#define GEMM_KERNEL(T, SUF, FMA)                                                 \
    enum { NR_##SUF = 2 * VEC_BYTES / (int)sizeof(T) };                          \
                                                                                 \
    /* A(i0.., p0..) block of mc x kc into MR-row panels, times alpha,           \
     * zero-padded to a multiple of MR rows */                                   \
    static void pack_a_##SUF(bool ta, const T *a, int64_t lda, int64_t i0,       \
                             int64_t mc, int64_t p0, int64_t kc, T alpha, T *dst)\
    {                                                                            \
        for (int64_t ip = 0; ip < mc; ip += MR) {                                \
            int64_t mr = mc - ip < MR ? mc - ip : MR;                            \
            for (int64_t i = 0; i < MR; i++) {                                   \
                T *d = dst + i;                                                  \
                int64_t row = i0 + ip + (i < mr ? i : 0);                        \
                const T *s = ta ? a + p0 * lda + row : a + row * lda + p0;       \
                if (i >= mr)                                                     \
                    for (int64_t p = 0; p < kc; p++)                             \
                        d[p * MR] = 0;                                           \
                else if (ta)                                                     \
                    for (int64_t p = 0; p < kc; p++)                             \
                        d[p * MR] = alpha * s[p * lda];                          \
                else                                                             \
                    for (int64_t p = 0; p < kc; p++)                             \
                        d[p * MR] = alpha * s[p];                                \
            }                                                                    \
            dst += MR * kc;                                                      \
        }                                                                        \
    }                                                                            \
                                                                                 \
    /* B(p0.., j0..) block of kc x nc into NR-column panels, zero-padded */      \
    static void pack_b_##SUF(bool tb, const T *b, int64_t ldb, int64_t p0,       \
                             int64_t kc, int64_t j0, int64_t nc, T *dst)         \
    {                                                                            \
        enum { NR = NR_##SUF };                                                  \
        for (int64_t jp = 0; jp < nc; jp += NR) {                                \
            int64_t nr = nc - jp < NR ? nc - jp : NR;                            \
            for (int64_t p = 0; p < kc; p++) {                                   \
                T *d = dst + p * NR;                                             \
                if (!tb && nr == NR) {                                           \
                    const T *s = b + (p0 + p) * ldb + j0 + jp;                   \
                    for (int j = 0; j < NR; j++)                                 \
                        d[j] = s[j];                                             \
                } else {                                                         \
                    for (int64_t j = 0; j < NR; j++) {                           \
                        int64_t col = j0 + jp + j;                               \
                        d[j] = j >= nr ? 0                                       \
                               : tb   ? b[col * ldb + p0 + p]                    \
                                      : b[(p0 + p) * ldb + col];                 \
                    }                                                            \
                }                                                                \
            }                                                                    \
            dst += NR * kc;                                                      \
        }                                                                        \
    }                                                                            \
                                                                                 \
    /* C tile (mr x nr of MR x NR) += packed A panel @ packed B panel */         \
    static void micro_##SUF(int64_t kc, const T *restrict ap,                    \
                            const T *restrict bp, T *restrict c, int64_t ldc,    \
                            int64_t mr, int64_t nr)                              \
    {                                                                            \
        enum { NR = NR_##SUF };                                                  \
        T acc[MR][NR];                                                           \
        memset(acc, 0, sizeof acc);                                              \
        for (int64_t p = 0; p < kc; p++) {                                       \
            const T *bv = bp + p * NR;                                           \
            _Pragma("GCC unroll 8")                                              \
            for (int i = 0; i < MR; i++) {                                       \
                const T av = ap[p * MR + i];                                     \
                for (int j = 0; j < NR; j++)                                     \
                    acc[i][j] = MADD(FMA, acc[i][j], av, bv[j]);                 \
            }                                                                    \
        }                                                                        \
        if (mr == MR && nr == NR) {                                              \
            for (int i = 0; i < MR; i++)                                         \
                for (int j = 0; j < NR; j++)                                     \
                    c[i * ldc + j] += acc[i][j];                                 \
        } else {                                                                 \
            for (int64_t i = 0; i < mr; i++)                                     \
                for (int64_t j = 0; j < nr; j++)                                 \
                    c[i * ldc + j] += acc[i][j];                                 \
        }                                                                        \
    }                                                                            \
                                                                                 \
    static void scale_c_##SUF(int64_t m, int64_t n, T beta, T *c, int64_t ldc)   \
    {                                                                            \
        if (beta == 1)                                                           \
            return;                                                              \
        for (int64_t i = 0; i < m; i++) {                                        \
            T *r = c + i * ldc;                                                  \
            if (beta == 0)                                                       \
                memset(r, 0, (size_t)n * sizeof(T));                             \
            else                                                                 \
                for (int64_t j = 0; j < n; j++)                                  \
                    r[j] *= beta;                                                \
        }                                                                        \
    }                                                                            \
                                                                                 \
    tg_status tg__gemm_builtin_##SUF(bool ta, bool tb, int64_t m, int64_t n,     \
                                     int64_t k, T alpha, const T *a,             \
                                     int64_t lda, const T *b, int64_t ldb,       \
                                     T beta, T *c, int64_t ldc)                  \
    {                                                                            \
        enum { NR = NR_##SUF };                                                  \
        if (m <= 0 || n <= 0)                                                    \
            return TG_OK;                                                        \
        scale_c_##SUF(m, n, beta, c, ldc);                                       \
        if (k == 0 || alpha == 0)                                                \
            return TG_OK;                                                        \
        int64_t kcap = k < KC ? k : KC;                                          \
        int64_t mcap = m < MC ? (m + MR - 1) / MR * MR : MC;                     \
        int64_t ncap = n < NC ? (n + NR - 1) / NR * NR : NC;                     \
        T *pa = buf_alloc((size_t)(mcap * kcap) * sizeof(T));                    \
        T *pb = buf_alloc((size_t)(ncap * kcap) * sizeof(T));                    \
        if (!pa || !pb) {                                                        \
            free(pa);                                                            \
            free(pb);                                                            \
            return TG_ERR_NOMEM;                                                 \
        }                                                                        \
        for (int64_t jc = 0; jc < n; jc += NC) {                                 \
            int64_t nc = n - jc < NC ? n - jc : NC;                              \
            for (int64_t pc = 0; pc < k; pc += KC) {                             \
                int64_t kc = k - pc < KC ? k - pc : KC;                          \
                pack_b_##SUF(tb, b, ldb, pc, kc, jc, nc, pb);                    \
                for (int64_t ic = 0; ic < m; ic += MC) {                         \
                    int64_t mc = m - ic < MC ? m - ic : MC;                      \
                    pack_a_##SUF(ta, a, lda, ic, mc, pc, kc, alpha, pa);         \
                    for (int64_t jr = 0; jr < nc; jr += NR) {                    \
                        int64_t nr = nc - jr < NR ? nc - jr : NR;                \
                        for (int64_t ir = 0; ir < mc; ir += MR) {                \
                            int64_t mr = mc - ir < MR ? mc - ir : MR;            \
                            micro_##SUF(kc, pa + ir * kc, pb + jr * kc,          \
                                        c + (ic + ir) * ldc + jc + jr, ldc, mr,  \
                                        nr);                                     \
                        }                                                        \
                    }                                                            \
                }                                                                \
            }                                                                    \
        }                                                                        \
        free(pa);                                                                \
        free(pb);                                                                \
        return TG_OK;                                                            \
    }

GEMM_KERNEL(float, f32, fmaf)
GEMM_KERNEL(double, f64, fma)

/* ---- serial entry points -------------------------------------------------- */
#ifdef TG_HAVE_CBLAS
#define BLAS_T(t) ((t) ? CblasTrans : CblasNoTrans)
/* BLAS insists on lda >= the row length even where a stride is never used
 * (a single row or column); such strides are normalised here */
static int64_t fix_ld(int64_t ld, int64_t rows, int64_t cols)
{
    int64_t need = cols > 1 ? cols : 1;
    return rows <= 1 && ld < need ? need : ld;
}
static bool fits_int(int64_t x, int64_t y, int64_t z)
{
    return x <= INT_MAX && y <= INT_MAX && z <= INT_MAX;
}
#define SERIAL_CALL(T, SUF, BLASFN)                                             \
    pthread_once(&blas_once, blas_init);                                        \
    if (m <= 0 || n <= 0)                                                       \
        return TG_OK;                                                           \
    if (k == 0) {                                                               \
        scale_c_##SUF(m, n, beta, c, ldc);                                      \
        return TG_OK;                                                           \
    }                                                                           \
    if (!fits_int(m, n, k) || !fits_int(lda, ldb, ldc)) /* CBLAS takes int */   \
        return tg__gemm_builtin_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb,   \
                                      beta, c, ldc);                            \
    BLASFN(CblasRowMajor, BLAS_T(ta), BLAS_T(tb), (int)m, (int)n, (int)k,       \
           alpha, a, (int)fix_ld(lda, ta ? k : m, ta ? m : k), b,               \
           (int)fix_ld(ldb, tb ? n : k, tb ? k : n), beta, c,                   \
           (int)fix_ld(ldc, m, n));                                             \
    return TG_OK;
#else
#define SERIAL_CALL(T, SUF, BLASFN)                                             \
    return tg__gemm_builtin_##SUF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, \
                                  c, ldc);
#endif

tg_status tg__sgemm_serial(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                           float alpha, const float *a, int64_t lda,
                           const float *b, int64_t ldb, float beta, float *c,
                           int64_t ldc)
{
    SERIAL_CALL(float, f32, cblas_sgemm)
}

tg_status tg__dgemm_serial(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                           double alpha, const double *a, int64_t lda,
                           const double *b, int64_t ldb, double beta, double *c,
                           int64_t ldc)
{
    SERIAL_CALL(double, f64, cblas_dgemm)
}

/* ---- the parallel split ------------------------------------------------------
 * C is cut into `parts` blocks of whole rows (or, when C is short and
 * wide, whole columns); each block is an independent GEMM. */
typedef struct split_job {
    bool ta, tb, by_rows, is_f64;
    int64_t m, n, k, lda, ldb, ldc, parts;
    double alpha, beta;
    const void *a, *b;
    void *c;
    tg_status status; /* first failure (NOMEM only) */
} split_job;

static void split_range(int64_t len, int64_t parts, int64_t t, int64_t *b,
                        int64_t *e)
{
    *b = len * t / parts;
    *e = len * (t + 1) / parts;
}

static void split_body(void *ctx, int64_t begin, int64_t end)
{
    split_job *j = ctx;
    size_t z = j->is_f64 ? sizeof(double) : sizeof(float);
    for (int64_t t = begin; t < end; t++) {
        int64_t lo, hi;
        split_range(j->by_rows ? j->m : j->n, j->parts, t, &lo, &hi);
        if (hi <= lo)
            continue;
        /* offsets of the block's first element of op(A)/op(B)/C */
        int64_t oa = 0, ob = 0, oc;
        int64_t m = j->m, n = j->n;
        if (j->by_rows) {
            oa = j->ta ? lo : lo * j->lda;
            oc = lo * j->ldc;
            m = hi - lo;
        } else {
            ob = j->tb ? lo * j->ldb : lo;
            oc = lo;
            n = hi - lo;
        }
        const char *a = (const char *)j->a + oa * (int64_t)z;
        const char *b = (const char *)j->b + ob * (int64_t)z;
        char *c = (char *)j->c + oc * (int64_t)z;
        tg_status s = j->is_f64
            ? tg__dgemm_serial(j->ta, j->tb, m, n, j->k, j->alpha,
                               (const double *)a, j->lda, (const double *)b,
                               j->ldb, j->beta, (double *)c, j->ldc)
            : tg__sgemm_serial(j->ta, j->tb, m, n, j->k, (float)j->alpha,
                               (const float *)a, j->lda, (const float *)b,
                               j->ldb, (float)j->beta, (float *)c, j->ldc);
        if (s != TG_OK)
            j->status = s; /* any failure will do; all are NOMEM */
    }
}

/* true (and the job filled in) when the product is worth splitting */
static bool plan_split(split_job *j)
{
    if (j->m * j->n * j->k < PAR_MIN_WORK || tg_in_parallel_region())
        return false;
    int64_t threads = tg_get_num_threads();
    if (threads <= 1)
        return false;
    j->by_rows = j->m >= j->n || j->m >= threads * 4 * PAR_MIN_SPLIT;
    int64_t len = j->by_rows ? j->m : j->n;
    j->parts = len / PAR_MIN_SPLIT < threads ? len / PAR_MIN_SPLIT : threads;
    return j->parts > 1;
}

#define PARALLEL_GEMM(T, IS64, SERIAL)                                          \
    split_job j = {ta, tb, false, IS64, m, n, k, lda, ldb, ldc, 1,              \
                   alpha, beta, a, b, c, TG_OK};                                \
    if (!plan_split(&j))                                                        \
        return SERIAL(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);    \
    tg_parallel_for(j.parts, 1, split_body, &j);                                \
    return j.status;

tg_status tg__sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    float alpha, const float *a, int64_t lda, const float *b,
                    int64_t ldb, float beta, float *c, int64_t ldc)
{
    PARALLEL_GEMM(float, false, tg__sgemm_serial)
}

tg_status tg__dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    double alpha, const double *a, int64_t lda, const double *b,
                    int64_t ldb, double beta, double *c, int64_t ldc)
{
    PARALLEL_GEMM(double, true, tg__dgemm_serial)
}

/* ---- integers: i-p-j loops (the j loop runs along C's row) ------------------- */
#define IGEMM(NAME, T, UT)                                                      \
    void NAME(int64_t m, int64_t n, int64_t k, const T *a, int64_t sa0,         \
              int64_t sa1, const T *b, int64_t sb0, int64_t sb1, T *c,          \
              int64_t ldc)                                                      \
    {                                                                           \
        for (int64_t i = 0; i < m; i++) {                                       \
            UT *r = (UT *)(c + i * ldc);                                        \
            for (int64_t j = 0; j < n; j++)                                     \
                r[j] = 0;                                                       \
            for (int64_t p = 0; p < k; p++) {                                   \
                const UT av = (UT)a[i * sa0 + p * sa1];                         \
                const T *brow = b + p * sb0;                                    \
                if (sb1 == 1)                                                   \
                    for (int64_t j = 0; j < n; j++)                             \
                        r[j] += av * (UT)brow[j];                               \
                else                                                            \
                    for (int64_t j = 0; j < n; j++)                             \
                        r[j] += av * (UT)brow[j * sb1];                         \
            }                                                                   \
        }                                                                       \
    }

IGEMM(tg__gemm_i32, int32_t, uint32_t)
IGEMM(tg__gemm_i64, int64_t, uint64_t)
IGEMM(tg__gemm_u8, uint8_t, uint8_t)
