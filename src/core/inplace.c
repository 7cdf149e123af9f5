/* In-place updates: copy_, fill_, add_ (axpy), mul_scalar_. They bump the
 * storage version so autograd can detect a saved tensor that changed,
 * and refuse tensors that require grad while grad mode is on. */
#include "core/tensor_impl.h"
#include "kernels/cpu/fill.h"
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"
#include "tg/autograd.h"

#include <string.h>

void tg__bump_version(tg_tensor *t) { t->storage->version++; }

bool tg__check_inplace(const char *op, const tg_tensor *t)
{
    if (!t) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "%s: tensor is NULL", op);
        return false;
    }
    if (!tg__check_concrete(op, t))
        return false;
    if (t->requires_grad && tg_grad_enabled()) {
        tg__error(TG_ERR_AUTOGRAD,
                  "%s: in-place update of a tensor that requires grad; do it "
                  "inside tg_no_grad_begin/end (as for parameter updates)", op);
        return false;
    }
    /* an expanded (stride-0) destination would write one element many
     * times: accumulating ops would add repeatedly, threads would race */
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] > 1 && t->strides[i] == 0) {
            tg__error(TG_ERR_ARG,
                      "%s: more than one element of the destination refers to "
                      "the same memory location (axis %d is expanded); clone "
                      "it before writing to it", op, i);
            return false;
        }
    return true;
}

/* does src read exactly the element of dst being written, everywhere?
 * (then an in-place elementwise update through both is safe) */
static bool same_elements(const tg_tensor *dst, const tg_tensor *src)
{
    if (src->offset != dst->offset || src->dtype != dst->dtype)
        return false;
    int lead = dst->ndim - src->ndim;
    for (int i = 0; i < dst->ndim; i++) {
        if (dst->shape[i] == 1)
            continue;
        int j = i - lead;
        if (j < 0 || src->shape[j] == 1 || src->strides[j] != dst->strides[i])
            return false;
    }
    return true;
}

/* src in dtype dt, ready to read while dst is written: a private copy
 * when the two overlap in memory other than element for element (as in
 * x[1:] = x[:-1]), where reading after writing would give wrong values.
 * Internal reference; the caller releases it. */
static tg_tensor *readable_source(const tg_tensor *dst, const tg_tensor *src,
                                  tg_dtype dt)
{
    if (src->storage != dst->storage || same_elements(dst, src))
        return tg__as_dtype((tg_tensor *)src, dt);
    tg_tensor *c = tg__alloc(dt, src->ndim, src->shape);
    if (c)
        tg__convert_into(c, src);
    return c;
}

/* the first checks of an update of dst from src: dst may be written in
 * place, src is there and has data */
static tg_status check_dst_src(const char *op, const tg_tensor *dst,
                               const tg_tensor *src)
{
    if (!tg__check_inplace(op, dst))
        return tg_last_status();
    if (!src)
        return tg__error(TG_ERR_ARG, "%s: source is NULL", op);
    if (!tg__check_concrete(op, src))
        return tg_last_status();
    return TG_OK;
}

tg_status tg_copy_(tg_tensor *dst, const tg_tensor *src)
{
    tg_status s = check_dst_src("copy_", dst, src);
    if (s != TG_OK)
        return s;
    int nd;
    int64_t shape[TG_MAX_DIMS];
    s = tg_broadcast_shapes("copy_", dst->ndim, dst->shape, src->ndim,
                                      src->shape, &nd, shape);
    if (s != TG_OK)
        return s;
    if (!tg__shape_eq(nd, shape, dst->ndim, dst->shape)) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE, "copy_: source of shape %s does not broadcast "
                         "to the destination's shape %s",
                         tg_shape_str(src->ndim, src->shape, a, sizeof a),
                         tg_shape_str(dst->ndim, dst->shape, b, sizeof b));
    }
    tg_tensor *x = readable_source(dst, src, src->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    tg__convert_into(dst, x);
    tg_release(x);
    tg__bump_version(dst);
    return TG_OK;
}

tg_status tg_fill_(tg_tensor *dst, double value)
{
    if (!tg__check_inplace("fill_", dst))
        return tg_last_status();
    if (tg_is_contiguous(dst)) {
        tg__fill_contiguous(dst->dtype, tg__base(dst), dst->numel, value);
    } else {
        tg_tensor *v = tg__alloc(dst->dtype, 0, NULL);
        if (!v)
            return TG_ERR_NOMEM;
        tg__store(v->dtype, tg__base(v), value);
        tg__convert_into(dst, v);
        tg_release(v);
    }
    tg__bump_version(dst);
    return TG_OK;
}

/* dst += alpha * src, computed in dst's dtype; an integer alpha converts
 * through int64 (CONV) so that negative values wrap into uint8 */
#define AXPY_ROW(NAME, T, CONV)                                             \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)      \
    {                                                                       \
        const T alpha = (T)(CONV) * (const double *)ctx;                    \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                       \
            T *d = (T *)p[0];                                               \
            const T *x = (const T *)p[1];                                   \
            for (int64_t i = 0; i < n; i++)                                 \
                d[i] += alpha * x[i];                                       \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++)                                 \
                *(T *)(p[0] + i * s[0]) += alpha * *(const T *)(p[1] + i * s[1]); \
        }                                                                   \
    }
AXPY_ROW(axpy_f32, float, double)
AXPY_ROW(axpy_f64, double, double)
AXPY_ROW(axpy_i32, int32_t, int64_t)
AXPY_ROW(axpy_i64, int64_t, int64_t)
AXPY_ROW(axpy_u8, uint8_t, int64_t)
static const tg_iter_row_fn axpy_rows[TG_NUM_DTYPES] = {axpy_f32, axpy_f64, axpy_i32,
                                                       axpy_i64, axpy_u8, NULL};

tg_status tg_add_(tg_tensor *dst, const tg_tensor *src, double alpha)
{
    tg_status s = check_dst_src("add_", dst, src);
    if (s != TG_OK)
        return s;
    if (dst->dtype == TG_BOOL)
        return tg__error(TG_ERR_DTYPE, "add_: bool destination is not supported");
    int nd;
    int64_t shape[TG_MAX_DIMS];
    s = tg_broadcast_shapes("add_", dst->ndim, dst->shape, src->ndim,
                                      src->shape, &nd, shape);
    if (s == TG_OK && !tg__shape_eq(nd, shape, dst->ndim, dst->shape))
        s = tg__error(TG_ERR_SHAPE, "add_: the source does not broadcast to the "
                      "destination's shape");
    if (s != TG_OK)
        return s;
    tg_tensor *x = readable_source(dst, src, dst->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    const tg_tensor *ops[2] = {dst, x};
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    tg_iter_run(&it, axpy_rows[dst->dtype], &alpha);
    tg_release(x);
    tg__bump_version(dst);
    return TG_OK;
}

#define SCALE_ROW(NAME, T, CONV)                                            \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)      \
    {                                                                       \
        const T k = (T)(CONV) * (const double *)ctx;                        \
        for (int64_t i = 0; i < n; i++)                                     \
            *(T *)(p[0] + i * s[0]) *= k;                                   \
    }
SCALE_ROW(scale_f32, float, double)
SCALE_ROW(scale_f64, double, double)
SCALE_ROW(scale_i32, int32_t, int64_t)
SCALE_ROW(scale_i64, int64_t, int64_t)
SCALE_ROW(scale_u8, uint8_t, int64_t)
static const tg_iter_row_fn scale_rows[TG_NUM_DTYPES] = {scale_f32, scale_f64, scale_i32,
                                                        scale_i64, scale_u8, NULL};

tg_status tg_mul_scalar_(tg_tensor *dst, double s)
{
    if (!tg__check_inplace("mul_scalar_", dst))
        return tg_last_status();
    if (dst->dtype == TG_BOOL)
        return tg__error(TG_ERR_DTYPE, "mul_scalar_: bool tensor is not supported");
    const tg_tensor *ops[1] = {dst};
    tg_iter it;
    tg_iter_init(&it, 1, ops);
    tg_iter_run(&it, scale_rows[dst->dtype], &s);
    tg__bump_version(dst);
    return TG_OK;
}
