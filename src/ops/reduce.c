/* Reductions over any set of axes, with keepdim: sum (more to come in
 * this family), and sum_to, the gradient of broadcasting. */
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"

#include <string.h>

/* ---- axes ------------------------------------------------------------------- */
/* parses the "axes" attribute into a mask (no axes: all) */
static tg_status axes_mask(const char *op, const tg_tensor *x, const int64_t *axes,
                           int n, bool *mask)
{
    memset(mask, 0, TG_MAX_DIMS * sizeof *mask);
    if (n == 0) {
        for (int i = 0; i < x->ndim; i++)
            mask[i] = true;
        return TG_OK;
    }
    for (int i = 0; i < n; i++) {
        int a;
        if (!tg__norm_axis(op, (int)axes[i], x->ndim, &a))
            return tg_last_status();
        if (mask[a])
            return tg__error(TG_ERR_INDEX, "%s: axis %lld appears twice", op,
                             (long long)axes[i]);
        mask[a] = true;
    }
    return TG_OK;
}

/* the reduced shape; with keepdim the reduced axes stay as 1 */
static int reduced_shape(const tg_tensor *x, const bool *mask, bool keepdim,
                         int64_t *out)
{
    int n = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (!mask[i])
            out[n++] = x->shape[i];
        else if (keepdim)
            out[n++] = 1;
    }
    return n;
}

static tg_status reduce_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const int64_t *axes;
    int n = tg_attr_ints(c->attrs, c->n_attrs, "axes", &axes);
    bool keepdim = tg_attr_int(c->attrs, c->n_attrs, "keepdim", 0);
    bool mask[TG_MAX_DIMS];
    tg_status s = axes_mask(c->op->name, x, axes, n, mask);
    if (s != TG_OK)
        return s;
    if (x->dtype == TG_BOOL)
        return tg__error(TG_ERR_DTYPE, "%s: bool input; cast it first", c->op->name);
    int64_t shape[TG_MAX_DIMS];
    int nd = reduced_shape(x, mask, keepdim, shape);
    return tg_infer_set(c, 0, x->dtype, nd, shape);
}

/* ---- sum: accumulate in double (floats) or int64 (integers) ------------- */
#define SUM_ROW(NAME, T, ACC)                                               \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)      \
    {                                                                       \
        (void)ctx;                                                          \
        if (s[1] == 0) { /* the whole row lands in one accumulator */       \
            ACC acc = 0;                                                    \
            for (int64_t i = 0; i < n; i++)                                 \
                acc += *(const T *)(p[0] + i * s[0]);                       \
            *(ACC *)p[1] += acc;                                            \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++)                                 \
                *(ACC *)(p[1] + i * s[1]) += *(const T *)(p[0] + i * s[0]); \
        }                                                                   \
    }
SUM_ROW(sum_f32, float, double)
SUM_ROW(sum_f64, double, double)
SUM_ROW(sum_i32, int32_t, int64_t)
SUM_ROW(sum_i64, int64_t, int64_t)
SUM_ROW(sum_u8, uint8_t, int64_t)
static const tg_iter_row_fn sum_rows[TG_NUM_DTYPES] = {sum_f32, sum_f64, sum_i32,
                                                      sum_i64, sum_u8, NULL};

/* x summed into out (out has x's rank with size-1 reduced dims) */
static tg_status sum_into(tg_tensor *out_keep, const tg_tensor *x)
{
    tg_dtype acc_dt = tg_dtype_is_float(x->dtype) ? TG_FLOAT64 : TG_INT64;
    tg_tensor *acc = tg__alloc(acc_dt, out_keep->ndim, out_keep->shape);
    if (!acc)
        return TG_ERR_NOMEM;
    memset(tg__base(acc), 0, (size_t)acc->numel * 8);
    const tg_tensor *ops[2] = {x, acc};
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    tg_iter_run_serial(&it, sum_rows[x->dtype], NULL);
    tg__convert_into(out_keep, acc);
    tg_release(acc);
    return TG_OK;
}

/* out viewed with x's rank: reduced axes as size 1 */
static tg_tensor *keepdim_alias(const tg_tensor *out, const tg_tensor *x,
                                const bool *mask)
{
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        shape[i] = mask[i] ? 1 : x->shape[i];
    int64_t strides[TG_MAX_DIMS];
    tg__contiguous_strides(x->ndim, shape, strides);
    return tg__alias(out, x->ndim, shape, strides, out->offset);
}

static tg_status sum_kernel(tg_op_ctx *c)
{
    const int64_t *axes;
    int n = tg_attr_ints(c->attrs, c->n_attrs, "axes", &axes);
    bool mask[TG_MAX_DIMS];
    axes_mask(c->op->name, c->in[0], axes, n, mask);
    tg_tensor *keep = keepdim_alias(c->out[0], c->in[0], mask);
    if (!keep)
        return TG_ERR_NOMEM;
    tg_status s = sum_into(keep, c->in[0]);
    tg_release(keep);
    return s;
}

/* dy broadcast back over the reduced axes */
static tg_tensor *expand_back(tg_grad_ctx *g, tg_tensor *dy)
{
    const tg_meta *m = &g->in_meta[0];
    const int64_t *axes;
    int n = tg_attr_ints(g->attrs, g->n_attrs, "axes", &axes);
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < m->ndim; i++) {
        bool reduced = n == 0;
        for (int k = 0; k < n; k++)
            reduced |= (axes[k] < 0 ? axes[k] + m->ndim : axes[k]) == i;
        shape[i] = reduced ? 1 : m->shape[i];
    }
    return tg_expand(tg_reshape(dy, m->ndim, shape), m->ndim, m->shape);
}

static tg_status sum_grad(tg_grad_ctx *g)
{
    g->dx[0] = expand_back(g, g->dy[0]);
    return TG_OK;
}

const tg_op_def tg_op_sum = {
    .name = "sum", .n_in = 1, .n_out = 1,
    .infer = reduce_infer, .kernel = sum_kernel, .grad = sum_grad};

static tg_tensor *reduce_call(const tg_op_def *op, tg_tensor *x, int n_axes,
                              const int *axes, bool keepdim)
{
    int64_t ax[TG_MAX_DIMS];
    if (n_axes < 0 || n_axes > TG_MAX_DIMS || (n_axes > 0 && !axes))
        return tg__error_null(TG_ERR_ARG, "%s: bad axes (%d)", op->name, n_axes);
    for (int i = 0; i < n_axes; i++)
        ax[i] = axes[i];
    tg_attr attrs[2] = {TG_AINTS("axes", ax, n_axes), TG_AI("keepdim", keepdim)};
    return tg_op_call(op, 1, &x, attrs, 2);
}

tg_tensor *tg_sum(tg_tensor *x, int n_axes, const int *axes, bool keepdim)
{
    return reduce_call(&tg_op_sum, x, n_axes, axes, keepdim);
}

/* ---- sum_to ---------------------------------------------------------------- */
tg_tensor *tg_sum_to(tg_tensor *x, int ndim, const int64_t *shape)
{
    if (!x)
        return NULL;
    char a[160], b[160];
    if (ndim > x->ndim || ndim < 0)
        return tg__error_null(TG_ERR_SHAPE, "sum_to: cannot sum %s to %s",
                              tg_shape_str(x->ndim, x->shape, a, sizeof a),
                              tg_shape_str(ndim, shape, b, sizeof b));
    int axes[TG_MAX_DIMS], n = 0, lead = x->ndim - ndim;
    for (int i = 0; i < x->ndim; i++) {
        int j = i - lead;
        if (j < 0 || (shape[j] == 1 && x->shape[i] != 1))
            axes[n++] = i;
        else if (shape[j] != x->shape[i])
            return tg__error_null(TG_ERR_SHAPE, "sum_to: cannot sum %s to %s "
                                  "(dim %d)", tg_shape_str(x->ndim, x->shape, a, sizeof a),
                                  tg_shape_str(ndim, shape, b, sizeof b), i);
    }
    if (n == 0 && x->ndim == ndim)
        return tg__publish(tg_retain(x));
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_reshape(tg_sum(x, n, axes, true), ndim, shape);
    TG_LOCAL_RETURN(y);
}

const tg_op_def *const tg_ops_reduce[] = {&tg_op_sum, NULL};
