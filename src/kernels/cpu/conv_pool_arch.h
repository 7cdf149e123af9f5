/* The batch-lane output store with 2 x 2 max pooling (conv_arch_api.h:
 * from_bl_pool), part of the conv_arch.h template: included by it once
 * per instruction set, after CONV_COMMON, whose types, transposes, relu
 * and from_bl it uses.
 *
 * Why here: a convolution in batch lanes holds L images' outputs as
 * vectors over the images, so a 2 x 2 window is four whole vectors and
 * its maximum three vector compares, and only the pooled quarter goes
 * through the transpose back to NCHW. The unfused graph writes the whole
 * output, then reads it again to pool (conv2d; relu; max_pool2d_compact).
 *
 * The same bits as those ops: relu first (as the relu op: NaN passes,
 * the rest not above zero becomes +0), then the window in row-major
 * order with the pooling kernels' rule (a later element wins when it is
 * greater or NaN, so the first NaN wins and ties keep the first), the
 * offsets 0..3 as max_pool2d_compact stores them. Odd rows and columns
 * past the last whole window are dropped, as floor-mode pooling does. */
#ifndef CONV_POOL_SEL
/* a where mask, else b (vectors of type V, masks of type M) */
#define CONV_POOL_SEL(M, V, mask, a, b) ((V)(((M)(a) & (mask)) | ((M)(b) & ~(mask))))
#endif

#define CONV_POOL(T, SUF)                                                        \
    /* src[c][h][w][L] is pooled in place into its first c * (h/2) * (w/2)   \
     * vectors (each window's vectors are read before any store reaches     \
     * them: store i lands at or below window i's first vector, and later    \
     * windows start above it); kb holds as many mask vectors */              \
    static void CA(from_bl_pool_##SUF)(void *srcv, int64_t n, int64_t c,        \
                                       int64_t h, int64_t w, bool relu,         \
                                       void *kbv, void *dst, int64_t img_stride, \
                                       uint8_t *off, int64_t off_stride)         \
    {                                                                            \
        typedef CA(v_##SUF) V;                                                   \
        typedef CA(vu_##SUF) VU;                                                 \
        typedef CA(mask_##SUF) M;                                                \
        typedef uint8_t B __attribute__((vector_size(VEC_BYTES / sizeof(T))));   \
        typedef uint8_t BU __attribute__((vector_size(VEC_BYTES / sizeof(T)),    \
                                          aligned(1), may_alias));               \
        enum { L = CA(L_##SUF) };                                                \
        T *src = srcv;                                                           \
        M *kb = kbv;                                                             \
        int64_t ph = h / 2, pw = w / 2, i = 0;                                   \
        for (int64_t ch = 0; ch < c; ch++)                                       \
            for (int64_t py = 0; py < ph; py++)                                  \
                for (int64_t px = 0; px < pw; px++, i++) {                       \
                    const T *s = src + ((ch * h + 2 * py) * w + 2 * px) * L;     \
                    V e[4] = {*(const VU *)s, *(const VU *)(s + L),              \
                              *(const VU *)(s + w * L), *(const VU *)(s + (w + 1) * L)}; \
                    CA_UNROLL for (int q = 0; relu && q < 4; q++)                \
                        e[q] = CA(relu_##SUF)(e[q]);                             \
                    V m = e[0];                                                  \
                    M k = (M){0};                                                \
                    CA_UNROLL for (int q = 1; q < 4; q++) {                      \
                        M t = (e[q] > m) | (e[q] != e[q]);                       \
                        m = CONV_POOL_SEL(M, V, t, e[q], m);                     \
                        k = (t & q) | (~t & k);                                  \
                    }                                                            \
                    *(VU *)(src + i * L) = m;                                    \
                    kb[i] = k;                                                   \
                }                                                                \
        CA(from_bl_##SUF)(src, n, c, ph, pw, dst, img_stride, false);            \
        /* the offsets: L windows' masks at a time, transposed as the values \
         * are (bit moves only), each image's lane narrowed to bytes */         \
        for (int64_t p0 = 0; p0 < i; p0 += L) {                                  \
            int64_t m = i - p0 < L ? i - p0 : L;                                 \
            V r[L];                                                              \
            CA_UNROLL for (int q = 0; q < L; q++)                                \
                r[q] = q < m ? (V)kb[p0 + q] : (V){0};                           \
            CONV_TRANSPOSE_##SUF(r);                                              \
            for (int64_t l = 0; l < n; l++) {                                    \
                B b = __builtin_convertvector((M)r[l], B);                       \
                uint8_t *d = off + l * off_stride + p0;                          \
                if (m == L)                                                      \
                    *(BU *)d = b;                                                \
                else                                                             \
                    memcpy(d, &b, (size_t)m);                                    \
            }                                                                    \
        }                                                                        \
    }

CONV_POOL(float, f32)
CONV_POOL(double, f64)
