/* Skinny products (gemm.h: tg__gemm_skinny): C with at most
 * TG__GEMM_SKINNY_M rows times a large B, a classifier's Linear at batch 1
 * to 8 (MobileNetV2's 1280 -> 1000 Gemm: B is 5 MB). The blocked kernel
 * packs all of B (a read and a write of B, then the product reads the copy)
 * for a few rows of C, three passes over memory where one does: here B is
 * streamed once, straight from where it lies.
 *
 * op(A) is copied once into rows of k (zero-padded to whole groups of
 * SK_LANES), then
 *   - B stored transposed (tb: B is [n][k], torch's Linear weights): each
 *     C(i, j) is a dot product of A's row i with B's row j, summed in
 *     SK_LANES partial sums (element p into sum p % SK_LANES, in order of
 *     p), the partial sums added by a fixed tree;
 *   - B stored as is ([k][n]): C's rows in blocks of SK_COLS columns,
 *     accumulated over p in order (c += A(i, p) * B(p, j)).
 * Then C = alpha * sum + beta * C (beta 0 overwrites). The loops are the
 * same C at every instruction-set level (isa_clone.h) and the partial sums
 * do not depend on the vector width, so every level gives the same bits.
 * Columns are split over the pool's threads, in units of SK_UNIT, when B
 * is large enough (tg__gemm_skinny_threads): the product is bound by
 * reading B, and two cores keep twice the lines in flight. Each C(i, j)
 * is summed the same way wherever the split falls, so the bits do not
 * depend on the number of threads. */
#include "core/threadpool.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_arch_api.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/scratch.h"

#include <string.h>

#define SK_LANES 16
#define SK_COLS 128
/* columns per call of the dot-product kernel (B transposed) */
#define SK_CHUNK SK_COLS
/* the threads' share of C's columns: whole units of SK_UNIT (groups of 4
 * rows of B for the dot products) */
#define SK_UNIT 16
/* the least B, in bytes, split over threads, whatever m (the multiply-adds
 * of 1 x 1000 x 512 are under TG__GEMM_PAR_WORK, its 2 MB of B are not).
 * Bench, 1 row, B in cache, 1 -> 2 threads: 256 KB 0.0039 -> 0.0043 ms,
 * 512 KB 0.008-0.011 -> 0.007-0.008, 2 MB 0.033 -> 0.018 */
#define SK_PAR_BYTES ((int64_t)512 << 10)

typedef struct skinny_job {
    const tg__gemm_call *g;
    const void *ap; /* op(A), [m][kp] */
    int64_t kp;
} skinny_job;

#define SK_KERNELS(T, SUF)                                                          \
    static inline __attribute__((always_inline)) void sk_store_##SUF(             \
        const tg__gemm_call *g, int64_t i, int64_t j, T sum)                        \
    {                                                                               \
        T *c = (T *)g->c + i * g->ldc + j;                                          \
        T alpha = (T)g->alpha, beta = (T)g->beta;                                   \
        *c = beta == 0 ? alpha * sum : alpha * sum + beta * *c;                     \
    }                                                                               \
                                                                                    \
    /* C's columns [j0, j1), B transposed: the instruction set's dot       \
     * products (gemm_skinny_arch.h), SK_CHUNK columns at a time */            \
    static void sk_cols_t_##SUF(const skinny_job *s, int64_t j0, int64_t j1)      \
    {                                                                               \
        const tg__gemm_call *g = s->g;                                              \
        const tg__gemm_kern *kn = &tg__gemm_arch_now()->k[g->f64];                  \
        T out[TG__GEMM_SKINNY_M * SK_CHUNK];                                        \
        for (int64_t jb = j0; jb < j1; jb += SK_CHUNK) {                            \
            int64_t nj = j1 - jb < SK_CHUNK ? j1 - jb : SK_CHUNK;                   \
            kn->skinny(g->m, s->ap, s->kp, (const T *)g->b + jb * g->ldb, g->ldb,   \
                       g->k, nj, j1 - jb, out);                                     \
            for (int64_t i = 0; i < g->m; i++)                                      \
                for (int64_t j = 0; j < nj; j++)                                    \
                    sk_store_##SUF(g, i, jb + j, out[i * nj + j]);                  \
        }                                                                           \
    }                                                                               \
                                                                                    \
    /* C's columns [j0, j1), B as is: rows of SK_COLS accumulated over p */       \
    static inline __attribute__((always_inline)) void sk_cols_n_##SUF(            \
        int M, const skinny_job *s, int64_t j0, int64_t j1)                         \
    {                                                                               \
        const tg__gemm_call *g = s->g;                                              \
        const T *ap = s->ap, *b = g->b;                                             \
        T acc[TG__GEMM_SKINNY_M][SK_COLS];                                          \
        for (int64_t jb = j0; jb < j1; jb += SK_COLS) {                             \
            int64_t w = j1 - jb < SK_COLS ? j1 - jb : SK_COLS;                      \
            for (int i = 0; i < M; i++)                                             \
                for (int64_t l = 0; l < SK_COLS; l++)                               \
                    acc[i][l] = 0;                                                  \
            for (int64_t p = 0; p < g->k; p++) {                                    \
                const T *brow = b + p * g->ldb + jb;                                \
                if (w == SK_COLS)                                                   \
                    for (int i = 0; i < M; i++)                                     \
                        for (int64_t l = 0; l < SK_COLS; l++)                       \
                            acc[i][l] += ap[i * s->kp + p] * brow[l];               \
                else                                                                \
                    for (int i = 0; i < M; i++)                                     \
                        for (int64_t l = 0; l < w; l++)                             \
                            acc[i][l] += ap[i * s->kp + p] * brow[l];               \
            }                                                                       \
            for (int i = 0; i < M; i++)                                             \
                for (int64_t l = 0; l < w; l++)                                     \
                    sk_store_##SUF(g, i, jb + l, acc[i][l]);                        \
        }                                                                           \
    }                                                                               \
                                                                                    \
    /* M as a constant in each case, so that the row loops unroll */              \
    TG_ISA_DISPATCH(static, void, sk_cols_n_any_##SUF,                              \
                    (const skinny_job *s, int64_t j0, int64_t j1), (s, j0, j1))     \
    {                                                                               \
        switch (s->g->m) {                                                          \
        case 1: sk_cols_n_##SUF(1, s, j0, j1); break;                               \
        case 2: sk_cols_n_##SUF(2, s, j0, j1); break;                               \
        case 3: sk_cols_n_##SUF(3, s, j0, j1); break;                               \
        case 4: sk_cols_n_##SUF(4, s, j0, j1); break;                               \
        case 5: sk_cols_n_##SUF(5, s, j0, j1); break;                               \
        case 6: sk_cols_n_##SUF(6, s, j0, j1); break;                               \
        case 7: sk_cols_n_##SUF(7, s, j0, j1); break;                               \
        default: sk_cols_n_##SUF(8, s, j0, j1); break;                              \
        }                                                                           \
    }                                                                               \
                                                                                    \
    static void sk_range_##SUF(const skinny_job *s, int64_t j0, int64_t j1)       \
    {                                                                               \
        if (s->g->tb)                                                               \
            sk_cols_t_##SUF(s, j0, j1);                                             \
        else                                                                        \
            sk_cols_n_any_##SUF(s, j0, j1);                                         \
    }                                                                               \
                                                                                    \
    /* op(A) into rows of kp, zeros after k */                                     \
    static void sk_copy_a_##SUF(const tg__gemm_call *g, int64_t kp, T *dst)        \
    {                                                                               \
        const T *a = g->a;                                                          \
        for (int64_t i = 0; i < g->m; i++) {                                        \
            T *row = dst + i * kp;                                                  \
            for (int64_t p = 0; p < g->k; p++)                                      \
                row[p] = g->ta ? a[p * g->lda + i] : a[i * g->lda + p];             \
            for (int64_t p = g->k; p < kp; p++)                                     \
                row[p] = 0;                                                         \
        }                                                                           \
    }

SK_KERNELS(float, f32)
SK_KERNELS(double, f64)

static void sk_body(void *ctx, int64_t begin, int64_t end)
{
    const skinny_job *s = ctx;
    int64_t j0 = begin * SK_UNIT, j1 = end * SK_UNIT;
    j1 = j1 < s->g->n ? j1 : s->g->n;
    if (s->g->f64)
        sk_range_f64(s, j0, j1);
    else
        sk_range_f32(s, j0, j1);
}

bool tg__gemm_skinny_fits(const tg__gemm_call *g)
{
    /* below this much of B, packing it costs little and the blocked
     * kernel's tiles win */
    /* B as is: its rows of C accumulate in L1, which holds fewer of them
     * (bench: at 5 to 8 rows the blocked kernel is as fast) */
    int64_t max_m = g->tb ? TG__GEMM_SKINNY_M : TG__GEMM_SKINNY_M / 2;
    /* a frozen B's packed copy is kept (pack_cache.c), so the blocked
     * kernel does no packing: at 8 rows it is as fast or faster (1 thread,
     * B^T of 128x512, 256x1024, 512x1000, 1280x1000: 0.51, 0.70, 0.85,
     * 1.00x the skinny time; at 7 rows 1280x1000 lost 10%, at 6 rows 27%;
     * after the prefetch and the paired rows of op(A), 8 x 1000 x 512 is
     * even: 0.12-0.14 ms against 0.13 with B in cache, 0.20 against 0.18-0.19
     * with B in memory). The skinny path itself keeps no packed copy: B
     * transposed is already rows of k read in order, one pass */
    if (g->b_serial && max_m > 7)
        max_m = 7;
    return g->m >= 1 && g->m <= max_m && g->k >= SK_LANES &&
           g->n * g->k >= TG__GEMM_SKINNY_MIN_B && g->alpha != 0;
}

int tg__gemm_skinny_threads(const tg__gemm_call *g)
{
    int64_t bytes = g->n * g->k * (g->f64 ? 8 : 4);
    if (bytes < SK_PAR_BYTES || tg_in_parallel_region())
        return 1;
    return tg_get_num_threads();
}

tg_status tg__gemm_skinny(const tg__gemm_call *g, int threads)
{
    size_t z = g->f64 ? sizeof(double) : sizeof(float);
    int64_t kp = (g->k + SK_LANES - 1) / SK_LANES * SK_LANES;
    void *ap = tg__scratch(TG_SCRATCH_GEMM_A, (size_t)(g->m * kp) * z);
    if (!ap)
        return TG_ERR_NOMEM;
    if (g->f64)
        sk_copy_a_f64(g, kp, ap);
    else
        sk_copy_a_f32(g, kp, ap);
    skinny_job s = {.g = g, .ap = ap, .kp = kp};
    int64_t units = (g->n + SK_UNIT - 1) / SK_UNIT;
    if (threads > 1 && units > 1)
        tg_parallel_for(units, 1, sk_body, &s);
    else
        sk_body(&s, 0, units);
    return TG_OK;
}
