/* Tensor creation: empty, zeros, ones, full, scalar, arange, from a C
 * array, and the *_like variants. */
#include "core/tensor_impl.h"
#include "kernels/cpu/fill.h"

#include <math.h>
#include <string.h>

static tg_tensor *new_tensor(const char *op, tg_dtype dt, int ndim,
                             const int64_t *shape)
{
    if (!tg_dtype_is_valid((int)dt))
        return tg__error_null(TG_ERR_DTYPE, "%s: invalid dtype %d", op, (int)dt);
    if (!tg__check_shape(op, ndim, shape))
        return NULL;
    return tg__alloc(dt, ndim, shape);
}

tg_tensor *tg_empty(tg_dtype dt, int ndim, const int64_t *shape)
{
    return tg__publish(new_tensor("tg_empty", dt, ndim, shape));
}

tg_tensor *tg_full(tg_dtype dt, int ndim, const int64_t *shape, double value)
{
    tg_tensor *t = new_tensor("tg_full", dt, ndim, shape);
    if (t)
        tg__fill_contiguous(dt, tg__base(t), t->numel, value);
    return tg__publish(t);
}

tg_tensor *tg_zeros(tg_dtype dt, int ndim, const int64_t *shape)
{
    tg_tensor *t = new_tensor("tg_zeros", dt, ndim, shape);
    if (t)
        memset(tg__base(t), 0, (size_t)t->numel * tg_dtype_size(dt));
    return tg__publish(t);
}

tg_tensor *tg_ones(tg_dtype dt, int ndim, const int64_t *shape)
{
    return tg_full(dt, ndim, shape, 1.0);
}

tg_tensor *tg_scalar(tg_dtype dt, double value)
{
    return tg_full(dt, 0, NULL, value);
}

tg_tensor *tg_arange(tg_dtype dt, double start, double stop, double step)
{
    if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step))
        return tg__error_null(TG_ERR_ARG,
                              "tg_arange: need finite start/stop and a non-zero "
                              "step, got start %g stop %g step %g",
                              start, stop, step);
    double n = ceil((stop - start) / step);
    if (n > (double)(INT64_MAX / 16)) /* also catches an infinite count */
        return tg__error_null(TG_ERR_SHAPE, "tg_arange: %g elements is too large", n);
    int64_t len = n > 0 ? (int64_t)n : 0;
    tg_tensor *t = new_tensor("tg_arange", dt, 1, &len);
    if (!t)
        return NULL;
    size_t es = tg_dtype_size(dt);
    for (int64_t i = 0; i < len; i++)
        tg__store(dt, tg__base(t) + i * (int64_t)es, start + (double)i * step);
    return tg__publish(t);
}

tg_tensor *tg_from_data(tg_dtype dt, int ndim, const int64_t *shape,
                        const void *data)
{
    tg_tensor *t = new_tensor("tg_from_data", dt, ndim, shape);
    if (!t)
        return NULL;
    size_t n = (size_t)t->numel * tg_dtype_size(dt);
    if (n && !data) {
        tg_release(t);
        return tg__error_null(TG_ERR_ARG, "tg_from_data: data is NULL");
    }
    if (n)
        memcpy(tg__base(t), data, n);
    if (dt == TG_BOOL) { /* any non-zero byte is true: store it as 1 */
        uint8_t *b = (uint8_t *)tg__base(t);
        for (int64_t i = 0; i < t->numel; i++)
            b[i] = b[i] != 0;
    }
    return tg__publish(t);
}

/* a NULL input is usually an earlier failure: keep its message */
static tg_tensor *null_input(const char *fn)
{
    if (!tg__error_is_set())
        tg__error(TG_ERR_ARG, "%s: tensor is NULL", fn);
    return NULL;
}

/* a symbolic t with unknown dims (-1): the value broadcast to t's shape
 * when the graph runs (a view of a 0-d constant) */
tg_tensor *tg__expand_as(tg_tensor *x, tg_tensor *ref); /* src/ops/dynamic.c */

static tg_tensor *full_unknown(const tg_tensor *t, double value)
{
    tg_scope_begin();
    tg_tensor *y = tg_keep(tg__expand_as(tg_scalar(t->dtype, value), (tg_tensor *)t));
    tg_scope_end();
    return y;
}

static bool unknown_dims(const tg_tensor *t)
{
    return t && t->graph && t->numel < 0;
}

tg_tensor *tg_zeros_like(const tg_tensor *t)
{
    if (unknown_dims(t))
        return full_unknown(t, 0.0);
    return t ? tg_zeros(t->dtype, t->ndim, t->shape) : null_input("tg_zeros_like");
}

tg_tensor *tg_ones_like(const tg_tensor *t)
{
    if (unknown_dims(t))
        return full_unknown(t, 1.0);
    return t ? tg_full(t->dtype, t->ndim, t->shape, 1.0) : null_input("tg_ones_like");
}

tg_tensor *tg_full_like(const tg_tensor *t, double value)
{
    if (unknown_dims(t))
        return full_unknown(t, value);
    return t ? tg_full(t->dtype, t->ndim, t->shape, value) : null_input("tg_full_like");
}
