/* Implicit GEMM for stride-1 convolution in the wide layout (im2col.h):
 * the patch matrix is never built. Its row p (tap p = (c, i, j)) is the
 * contiguous run img[off[p] ...] of one padded image, and the kernels
 * read those runs where im2col would have copied them: the forward
 * product W @ patches and the weight gradient patches @ dy^T.
 * tg__conv_fwd reads up to TG__CONV_SLACK elements past the last element
 * of img that the product uses: images are allocated that much longer.
 * (The input gradient stays a GEMM plus col2im: as an implicit product
 * with only og = 16 steps per tile, LeNet's conv2 ran 30% slower.) */
#ifndef TG_KERNELS_CONV_GEMM_H
#define TG_KERNELS_CONV_GEMM_H

#include <stdint.h>

/* elements (of either dtype): one 64-byte vector of float32 */
#define TG__CONV_SLACK 16

/* elements of the packed form of an [m, k] matrix */
int64_t tg__conv_pack_len(int64_t m, int64_t k);
/* elements of the dtype of that size per vector: the weight gradient
 * wants at least this many output channels (per group) to pay */
int64_t tg__conv_lanes(int64_t elem_size);

#define TG__CONV_GEMM_DECL(T, SUF)                                            \
    /* a [m, k] (row stride k) packed for tg__conv_fwd */                     \
    void tg__conv_pack_##SUF(const T *a, int64_t m, int64_t k, T *dst);       \
    /* y[i][t] = sum_p A[i][p] * img[off[p] + t] for i < m, t < n (row        \
     * stride ldy), A packed by tg__conv_pack */                              \
    void tg__conv_fwd_##SUF(int64_t m, int64_t n, int64_t k, const T *ap,     \
                            const T *img, const int64_t *off, T *y,           \
                            int64_t ldy);                                     \
    /* dwt[p][o] += sum_t img[off[p] + t] * dyt[t][o] for p < k taps,         \
     * o < m channels, t < n positions; dyt rows (stride ldt) are zero from   \
     * m up to a multiple of tg__conv_lanes, dwt rows have stride ldw */      \
    void tg__conv_wgrad_##SUF(int64_t m, int64_t n, int64_t k, const T *img,  \
                              const int64_t *off, const T *dyt, int64_t ldt,  \
                              T *dwt, int64_t ldw);
TG__CONV_GEMM_DECL(float, f32)
TG__CONV_GEMM_DECL(double, f64)

#endif
