/* Internal GEMM: C = alpha * op(A) @ op(B) + beta * C on row-major float32
 * and float64 matrices, by the built-in blocked kernel for the CPU's
 * instruction set or by CBLAS (when built with it, TG_HAVE_CBLAS),
 * whichever is faster for the shape on this machine; plus integer loops. */
#ifndef TG_KERNELS_GEMM_H
#define TG_KERNELS_GEMM_H

#include "tg/core.h"

/* a GEMM of fewer multiply-adds (m * n * k) stays on one thread: a
 * parallel_for costs more than it saves (measured with bench/gemm.c) */
#define TG__GEMM_PAR_WORK ((int64_t)1 << 19)

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

/* the same where B is a frozen weight (core/tensor_impl.h): b_serial and
 * b_version are its storage's serial and version (0, 0: not frozen, as
 * tg__sgemm). When the built-in kernel runs the product (not CBLAS, not
 * the skinny path), B's packed form is kept in pack_cache.h under them,
 * B's address and layout, and reused by later calls: the same bits as
 * packing it again. */
tg_status tg__sgemm_frozen_b(bool trans_a, bool trans_b, int64_t m, int64_t n,
                             int64_t k, float alpha, const float *a, int64_t lda,
                             const float *b, int64_t ldb, float beta, float *c,
                             int64_t ldc, uint64_t b_serial, uint64_t b_version);
tg_status tg__dgemm_frozen_b(bool trans_a, bool trans_b, int64_t m, int64_t n,
                             int64_t k, double alpha, const double *a, int64_t lda,
                             const double *b, int64_t ldb, double beta, double *c,
                             int64_t ldc, uint64_t b_serial, uint64_t b_version);

/* the same under the names the tests and benchmarks use */
tg_status tg__gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n,
                       int64_t k, float alpha, const float *a, int64_t lda,
                       const float *b, int64_t ldb, float beta, float *c,
                       int64_t ldc);
tg_status tg__gemm_f64(bool trans_a, bool trans_b, int64_t m, int64_t n,
                       int64_t k, double alpha, const double *a, int64_t lda,
                       const double *b, int64_t ldb, double beta, double *c,
                       int64_t ldc);

/* each implementation alone, serial, in every build: the built-in kernel
 * (for the CPU's instruction set) and CBLAS (the built-in one when the
 * library was built without CBLAS) */
tg_status tg__gemm_builtin_f32(bool trans_a, bool trans_b, int64_t m,
                               int64_t n, int64_t k, float alpha,
                               const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c, int64_t ldc);
tg_status tg__gemm_builtin_f64(bool trans_a, bool trans_b, int64_t m,
                               int64_t n, int64_t k, double alpha,
                               const double *a, int64_t lda, const double *b,
                               int64_t ldb, double beta, double *c,
                               int64_t ldc);
tg_status tg__gemm_blas_f32(bool trans_a, bool trans_b, int64_t m, int64_t n,
                            int64_t k, float alpha, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float beta, float *c,
                            int64_t ldc);
tg_status tg__gemm_blas_f64(bool trans_a, bool trans_b, int64_t m, int64_t n,
                            int64_t k, double alpha, const double *a,
                            int64_t lda, const double *b, int64_t ldb,
                            double beta, double *c, int64_t ldc);

/* ---- choosing the implementation (gemm_select.c) -------------------------
 * The built-in kernel where it has vector kernels for the running
 * instruction set (AVX2, AVX-512), CBLAS below that: a rule, the same for
 * every shape, so that runs give the same bits; TG_GEMM=builtin|blas
 * forces one (read once). Without CBLAS: always the built-in kernel. */
bool tg__gemm_use_blas(void);
/* threads a product of this size runs on when called from here */
int tg__gemm_threads(int64_t m, int64_t n, int64_t k);
/* one product, for running it with a given implementation */
typedef struct tg__gemm_call {
    bool ta, tb, f64;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    const void *a, *b;
    void *c;
    uint64_t b_serial, b_version; /* B frozen (tg__sgemm_frozen_b), or 0 */
} tg__gemm_call;
/* runs g by the built-in kernel or CBLAS, split over `threads` threads */
tg_status tg__gemm_exec(const tg__gemm_call *g, bool blas, int threads);
/* skinny products (gemm_skinny.c): at most TG__GEMM_SKINNY_M rows of C and
 * at least TG__GEMM_SKINNY_MIN_B elements of B (a classifier's Linear at
 * batch 1-8) stream B once instead of packing it; taken by tg__sgemm /
 * tg__dgemm in the automatic mode (TG_GEMM unset) when _fits says so */
#define TG__GEMM_SKINNY_M 8
#define TG__GEMM_SKINNY_MIN_B ((int64_t)1 << 16)
bool tg__gemm_skinny_fits(const tg__gemm_call *g);
/* the threads a skinny product runs on: its time is reading B, so the
 * choice goes by B's size, not by the multiply-adds (TG__GEMM_PAR_WORK) */
int tg__gemm_skinny_threads(const tg__gemm_call *g);
/* g split over up to `threads` threads by C's columns */
tg_status tg__gemm_skinny(const tg__gemm_call *g, int threads);
typedef enum tg__gemm_mode {
    TG_GEMM_AUTO,
    TG_GEMM_BUILTIN,
    TG_GEMM_BLAS
} tg__gemm_mode;
/* overrides TG_GEMM (benchmarks); cached choices are kept for AUTO */
void tg__gemm_set_mode(tg__gemm_mode mode);
tg__gemm_mode tg__gemm_get_mode(void);

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

/* "openblas", "cblas" or "none": the BLAS the library was built with */
const char *tg__gemm_backend(void);
/* OpenBLAS's name for the CPU kernels it picked ("Haswell"), or "" */
const char *tg__blas_corename(void);

#endif
