/* Small helpers shared by the neural-network op families (pool, norm, nn,
 * loss): input checks for public wrappers, contiguous internal copies,
 * and splitting work across the thread pool only when it is large. */
#ifndef TG_NN_UTIL_H
#define TG_NN_UTIL_H

#include "core/threadpool.h"
#include "ops/elementwise.h"

/* work (in elements touched) below which a kernel stays on one thread */
#define TG_NN_PAR_MIN 32768

/* false (with an error, unless an earlier one explains the NULL) when t
 * is NULL; public wrappers call it before looking inside a tensor */
static inline bool tg__nn_have(const char *op, const tg_tensor *t,
                               const char *what)
{
    if (t)
        return true;
    if (!tg__error_is_set())
        tg__error(TG_ERR_ARG, "%s: %s is NULL", op, what);
    return false;
}

/* x itself (retained) when C-contiguous, else a contiguous copy; the
 * caller owns the reference (nothing is published to a scope) */
static inline tg_tensor *tg__nn_contig(tg_tensor *x, tg_dtype dt)
{
    if (x->dtype == dt && tg_is_contiguous(x))
        return tg_retain(x);
    tg_tensor *y = tg__alloc(dt, x->ndim, x->shape);
    if (y)
        tg__convert_into(y, x);
    return y;
}

/* PyTorch's pooling output size along one dim (pool.c; pool3d.c too):
 * false with "shape too large" when the arithmetic would overflow */
bool tg__pool_out_size(const char *op, int64_t in, int64_t k, int64_t s, int64_t p,
                       bool ceil_mode, int64_t *out);

/* the key under which the convolution kernels may keep a packed form of
 * the weights w (kernels/cpu/pack_cache.h): their storage's serial and
 * version when it is frozen (an imported model's) and w is the weights
 * the op was given (not a converted copy), else zeros (conv.c) */
void tg__conv_weight_tag(const tg_tensor *given, const tg_tensor *w, uint64_t *serial,
                         uint64_t *version);

/* nd sizes (spatial dims, windows) as "AxBxC" in b, for messages (pool.c) */
const char *tg__dims_str(int nd, const int64_t *v, char *b, size_t len);

/* runs fn over [0, n) items of `per_item` elements each, in parallel only
 * when the total is large enough to pay for the threads */
static inline void tg__nn_parallel(int64_t n, int64_t per_item,
                                   tg_range_fn fn, void *ctx)
{
    if (per_item < 1)
        per_item = 1;
    if (n * per_item < TG_NN_PAR_MIN) {
        fn(ctx, 0, n);
        return;
    }
    int64_t grain = TG_NN_PAR_MIN / per_item;
    tg_parallel_for(n, grain < 1 ? 1 : grain, fn, ctx);
}

/* Row reductions in double with four independent partial sums: in strict
 * left-to-right order every add would wait on the previous one. */
#define TG_NN_REDUCTIONS(SFX, T)                                              \
    /* sum of x */                                                            \
    static inline double tg__nn_sum_##SFX(const T *x, int64_t n)              \
    {                                                                         \
        double a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                \
        int64_t i = 0;                                                        \
        for (; i + 4 <= n; i += 4) {                                          \
            a0 += x[i];                                                       \
            a1 += x[i + 1];                                                   \
            a2 += x[i + 2];                                                   \
            a3 += x[i + 3];                                                   \
        }                                                                     \
        for (; i < n; i++)                                                    \
            a0 += x[i];                                                       \
        return (a0 + a1) + (a2 + a3);                                         \
    }                                                                         \
    /* sum of (x - c)^2 */                                                    \
    static inline double tg__nn_sqdev_##SFX(const T *x, int64_t n, double c)  \
    {                                                                         \
        double a[4] = {0, 0, 0, 0};                                           \
        int64_t i = 0;                                                        \
        for (; i + 4 <= n; i += 4)                                            \
            for (int l = 0; l < 4; l++)                                       \
                a[l] += (x[i + l] - c) * (x[i + l] - c);                      \
        for (; i < n; i++)                                                    \
            a[0] += (x[i] - c) * (x[i] - c);                                  \
        return (a[0] + a[1]) + (a[2] + a[3]);                                 \
    }                                                                         \
    /* *sd += sum of d * w, *sdx += sum of d * w * (x - c); w NULL means 1 */ \
    static inline void tg__nn_dots_##SFX(const T *d, const T *x,              \
                                         const double *w, int64_t n,          \
                                         double c, double *sd, double *sdx)   \
    {                                                                         \
        double a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};                      \
        int64_t i = 0;                                                        \
        for (; i + 4 <= n; i += 4)                                            \
            for (int l = 0; l < 4; l++) {                                     \
                double g = w ? d[i + l] * w[i + l] : (double)d[i + l];        \
                a[l] += g;                                                    \
                b[l] += g * (x[i + l] - c);                                   \
            }                                                                 \
        for (; i < n; i++) {                                                  \
            double g = w ? d[i] * w[i] : (double)d[i];                        \
            a[0] += g;                                                        \
            b[0] += g * (x[i] - c);                                           \
        }                                                                     \
        *sd += (a[0] + a[1]) + (a[2] + a[3]);                                 \
        *sdx += (b[0] + b[1]) + (b[2] + b[3]);                                \
    }
TG_NN_REDUCTIONS(f32, float)
TG_NN_REDUCTIONS(f64, double)

#endif
