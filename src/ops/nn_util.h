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

#endif
