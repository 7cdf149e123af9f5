/* Internal GEMM: C = alpha * op(A) @ op(B) + beta * C on row-major float32
 * and float64 matrices, through CBLAS when built with it (TG_HAVE_CBLAS)
 * and a cache-blocked built-in kernel otherwise; plus integer loops. */
#ifndef TG_KERNELS_GEMM_H
#define TG_KERNELS_GEMM_H

#include "tg/core.h"

/* a GEMM of fewer multiply-adds (m * n * k) stays on one thread: waking
 * the pool costs more than it saves (measured with bench/gemm.c) */
#define TG__GEMM_PAR_WORK ((int64_t)1 << 22)

/* op(A) is [m, k] and op(B) is [k, n]; A is stored [m, k] (trans_a: [k, m])
 * with row stride lda >= its row length, likewise B; C is [m, n] with row
 * stride ldc >= n. beta == 0 overwrites C (NaNs in C do not propagate).
 * Large products are split over the thread pool by blocks of C; inside a
 * pool region they run on the calling thread. Returns TG_OK or
 * TG_ERR_NOMEM (the built-in kernel allocates packing buffers). */
tg_status tg__sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n,
                    int64_t k, float alpha, const float *a, int64_t lda,
                    const float *b, int64_t ldb, float beta, float *c,
                    int64_t ldc);
tg_status tg__dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n,
                    int64_t k, double alpha, const double *a, int64_t lda,
                    const double *b, int64_t ldb, double beta, double *c,
                    int64_t ldc);

/* the same, always on the calling thread (for callers that already split
 * their work over the pool) */
tg_status tg__sgemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n,
                           int64_t k, float alpha, const float *a, int64_t lda,
                           const float *b, int64_t ldb, float beta, float *c,
                           int64_t ldc);
tg_status tg__dgemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n,
                           int64_t k, double alpha, const double *a,
                           int64_t lda, const double *b, int64_t ldb,
                           double beta, double *c, int64_t ldc);

/* the built-in kernel itself, serial, in every build (tests, benchmarks) */
tg_status tg__gemm_builtin_f32(bool trans_a, bool trans_b, int64_t m,
                               int64_t n, int64_t k, float alpha,
                               const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c, int64_t ldc);
tg_status tg__gemm_builtin_f64(bool trans_a, bool trans_b, int64_t m,
                               int64_t n, int64_t k, double alpha,
                               const double *a, int64_t lda, const double *b,
                               int64_t ldb, double beta, double *c,
                               int64_t ldc);

/* integer C = op(A) @ op(B) (overwrites C), with general element strides:
 * A(i, p) at a[i * sa0 + p * sa1], B(p, j) at b[p * sb0 + j * sb1],
 * C(i, j) at c[i * ldc + j]. Arithmetic wraps, as in PyTorch. */
#define TG__IGEMM_DECL(NAME, T)                                             \
    void NAME(int64_t m, int64_t n, int64_t k, const T *a, int64_t sa0,     \
              int64_t sa1, const T *b, int64_t sb0, int64_t sb1, T *c,      \
              int64_t ldc);
TG__IGEMM_DECL(tg__gemm_i32, int32_t)
TG__IGEMM_DECL(tg__gemm_i64, int64_t)
TG__IGEMM_DECL(tg__gemm_u8, uint8_t)

/* "openblas" (or "cblas") or "built-in": which kernel serves float GEMM */
const char *tg__gemm_backend(void);

#endif
