/* ONNX reductions -> tensorgraph: ReduceX (axes attribute or input, keepdims),
 * ReduceL1/ReduceL2 (vector_norm), ReduceSumSquare and ReduceLogSum (sum of
 * x * x, log of sum), ArgMax/ArgMin (select_last_index) and
 * the scan CumSum, TopK, results in the
 * input's type. */
#include "onnx/ops.h"

#include <string.h>

/* R_SUMSQ: sum of squares (ReduceSumSquare), R_LOGSUM: log of the sum */
typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_LSE, R_L1, R_L2, R_SUMSQ, R_LOGSUM } rkind;

static tg_status reduce(onnx_ictx *c, rkind k)
{
    tg_tensor *x = oi_req(c, 0, "data");
    if (!x)
        return tg_last_status();
    int64_t keep, noop = 0;
    tg_status s = oa_int(c, "keepdims", 1, &keep);
    int64_t *ax = NULL, n = 0;
    bool axes_input = k == R_SUM && c->version >= 13;
    if (s == TG_OK && axes_input) {
        s = oa_int(c, "noop_with_empty_axes", 0, &noop);
        if (s == TG_OK && onnx_attr(c, "axes"))
            s = onnx_err(c, TG_ERR_IO, "axes is an input from opset 13, not an attribute");
        if (s == TG_OK && c->n_in > 1 && c->in[1])
            s = oi_ints(c, 1, "axes", &ax, &n);
    } else if (s == TG_OK) {
        if (c->n_in > 1)
            return onnx_err(c, TG_ERR_IO, "takes one input (axes is an attribute)");
        const int64_t *v;
        int k2;
        s = oa_ints(c, "axes", &v, &k2);
        if (s == TG_OK && k2 > 0) {
            ax = onnx_tmp_alloc(c, (size_t)k2 * sizeof *ax);
            if (!ax)
                return tg_last_status();
            memcpy(ax, v, (size_t)k2 * sizeof *ax);
            n = k2;
        }
    }
    if (s != TG_OK)
        return s;
    if (n == 0 && noop) {
        c->out[0] = x;
        return TG_OK;
    }
    int r = tg_ndim(x), axes[TG_MAX_DIMS];
    bool seen[TG_MAX_DIMS] = {false};
    if (n > r)
        return onnx_err(c, TG_ERR_IO, "%lld axes for rank %d", (long long)n, r);
    for (int64_t i = 0; i < n; i++) {
        if ((s = onnx_axis(c, ax[i], r, "axes value", &axes[i])) != TG_OK)
            return s;
        if (seen[axes[i]])
            return onnx_err(c, TG_ERR_IO, "axes repeats axis %d", axes[i]);
        seen[axes[i]] = true;
    }
    if (r == 0) { /* a scalar reduces to itself (its absolute value for the norms) */
        c->out[0] = k == R_L1 || k == R_L2 ? tg_abs(x) : k == R_SUMSQ ? tg_mul(x, x)
                    : k == R_LOGSUM ? tg_log(x) : x;
        return c->out[0] ? TG_OK : tg_last_status();
    }
    tg_dtype dt = tg_dtype_of(x);
    bool isf = tg_dtype_is_float(dt);
    tg_tensor *y;
    switch (k) {
    case R_SUM: y = tg_sum(x, (int)n, axes, keep != 0); break;
    case R_SUMSQ: y = tg_sum(tg_mul(x, x), (int)n, axes, keep != 0); break;
    case R_LOGSUM: /* integers: in float64, the result cast back */
        y = tg_log(tg_sum(isf ? x : tg_cast(x, TG_FLOAT64), (int)n, axes, keep != 0));
        break;
    case R_PROD: y = tg_prod(x, (int)n, axes, keep != 0); break;
    case R_MAX: y = tg_max(x, (int)n, axes, keep != 0); break;
    case R_MIN: y = tg_min(x, (int)n, axes, keep != 0); break;
    case R_MEAN: y = tg_mean(isf ? x : tg_cast(x, TG_FLOAT64), (int)n, axes, keep != 0); break;
    case R_L1: /* integers: in float64, the result cast back */
    case R_L2:
        y = tg_vector_norm(isf ? x : tg_cast(x, TG_FLOAT64), k == R_L1 ? 1 : 2, (int)n, axes,
                           keep != 0);
        break;
    default: y = tg_logsumexp(isf ? x : tg_cast(x, TG_FLOAT64), (int)n, axes, keep != 0);
    }
    c->out[0] = onnx_as(y, dt);
    return c->out[0] ? TG_OK : tg_last_status();
}

static tg_status r_sum(onnx_ictx *c) { return reduce(c, R_SUM); }
static tg_status r_mean(onnx_ictx *c) { return reduce(c, R_MEAN); }
static tg_status r_max(onnx_ictx *c) { return reduce(c, R_MAX); }
static tg_status r_min(onnx_ictx *c) { return reduce(c, R_MIN); }
static tg_status r_prod(onnx_ictx *c) { return reduce(c, R_PROD); }
static tg_status r_lse(onnx_ictx *c) { return reduce(c, R_LSE); }
static tg_status r_l1(onnx_ictx *c) { return reduce(c, R_L1); }
static tg_status r_l2(onnx_ictx *c) { return reduce(c, R_L2); }
static tg_status r_sumsq(onnx_ictx *c) { return reduce(c, R_SUMSQ); }
static tg_status r_logsum(onnx_ictx *c) { return reduce(c, R_LOGSUM); }

/* select_last_index: the first extreme of the reversed axis, mapped back */
static tg_status arg(onnx_ictx *c, bool max)
{
    tg_tensor *x = oi_req(c, 0, "data");
    int64_t a, keep, last = 0;
    tg_status s = x ? oa_int(c, "axis", 0, &a) : tg_last_status();
    if (s == TG_OK)
        s = oa_int(c, "keepdims", 1, &keep);
    if (s == TG_OK && c->version >= 12)
        s = oa_int(c, "select_last_index", 0, &last);
    int axis;
    if (s == TG_OK)
        s = onnx_axis(c, a, tg_ndim(x), "axis", &axis);
    if (s != TG_OK)
        return s;
    tg_tensor *(*fn)(tg_tensor *, int, bool) = max ? tg_argmax : tg_argmin;
    if (!last) {
        c->out[0] = fn(x, axis, keep != 0);
        return c->out[0] ? TG_OK : tg_last_status();
    }
    int64_t dim = tg_shape(x)[axis];
    int tok = onnx_eager_begin();
    tg_tensor *rev = tg_arange(TG_INT64, (double)dim - 1, -0.5, -1);
    onnx_eager_end(tok);
    tg_tensor *i = fn(tg_index_select(x, axis, rev), axis, keep != 0);
    c->out[0] = i ? tg_sub(tg_scalar(TG_INT64, (double)(dim - 1)), i) : NULL;
    return c->out[0] ? TG_OK : tg_last_status();
}

static tg_status r_argmax(onnx_ictx *c) { return arg(c, true); }
static tg_status r_argmin(onnx_ictx *c) { return arg(c, false); }

/* CumSum(x, axis): axis is a known scalar input; exclusive, reverse */
static tg_status r_cumsum(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "x");
    int64_t excl, rev, *ax, n;
    tg_status s = x ? oa_int(c, "exclusive", 0, &excl) : tg_last_status();
    if (s == TG_OK)
        s = oa_int(c, "reverse", 0, &rev);
    if (s == TG_OK && !oi_req(c, 1, "axis"))
        s = tg_last_status();
    if (s == TG_OK)
        s = oi_ints(c, 1, "axis", &ax, &n);
    if (s == TG_OK && n != 1)
        s = onnx_err(c, TG_ERR_IO, "axis must be a scalar, has %lld elements", (long long)n);
    int axis;
    if (s == TG_OK)
        s = onnx_axis(c, ax[0], tg_ndim(x) ? tg_ndim(x) : 1, "axis", &axis);
    if (s != TG_OK)
        return s;
    c->out[0] = onnx_as(tg_cumsum(x, axis, excl != 0, rev != 0), tg_dtype_of(x));
    return c->out[0] ? TG_OK : tg_last_status();
}

/* TopK(X, K): K a known one-element input (TopK-1's attribute k too);
 * axis, largest and sorted (opset 11) */
/* TopK whose K the graph computes (detection models take min(count,
 * limit)): every element along the axis in order, then the first K of
 * them (slice_by, its length known when the graph runs) */
static tg_status topk_at_run(onnx_ictx *c, tg_tensor *x, int ax, bool largest)
{
    tg_tensor *v, *i, *one = tg_full(TG_INT64, 1, (int64_t[]){1}, 1);
    tg_status s = tg_sort(x, ax, largest, &v, &i);
    if (s != TG_OK)
        return s;
    tg_tensor *k = tg_reshape(onnx_as(c->in[1], TG_INT64), 1, (int64_t[]){1});
    tg_tensor *from = tg_zeros(TG_INT64, 1, (int64_t[]){1});
    tg_tensor *axes = tg_full(TG_INT64, 1, (int64_t[]){1}, ax);
    c->out[0] = tg_slice_by(v, from, k, axes, one);
    c->out[1] = tg_slice_by(i, from, k, axes, one);
    return c->out[0] && c->out[1] ? TG_OK : tg_last_status();
}

static tg_status r_topk(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    int64_t axis, largest = 1, sorted = 1, k;
    tg_status s = x ? oa_int(c, "axis", -1, &axis) : tg_last_status();
    if (s == TG_OK && c->version >= 11)
        s = oa_int(c, "largest", 1, &largest);
    if (s == TG_OK && c->version >= 11)
        s = oa_int(c, "sorted", 1, &sorted);
    int ax;
    if (s == TG_OK && oi_req(c, 1, "K") && !onnx_known(c, 1) &&
        (s = onnx_axis(c, axis, tg_ndim(x), "axis", &ax)) == TG_OK)
        return topk_at_run(c, x, ax, largest != 0);
    if (s == TG_OK) { /* TopK-1's attribute k arrives as this input (versions.c) */
        int64_t *kv, n;
        s = oi_req(c, 1, "K") ? oi_ints(c, 1, "K", &kv, &n) : tg_last_status();
        if (s == TG_OK && n != 1)
            s = onnx_err(c, TG_ERR_IO, "K must have one element, has %lld", (long long)n);
        if (s == TG_OK)
            k = kv[0];
    }
    if (s == TG_OK)
        s = onnx_axis(c, axis, tg_ndim(x), "axis", &ax);
    if (s == TG_OK && k < 0)
        s = onnx_err(c, TG_ERR_IO, "K is %lld; it must be >= 0", (long long)k);
    if (s != TG_OK)
        return s;
    return tg_topk(x, k, ax, largest != 0, sorted != 0, &c->out[0], &c->out[1]);
}

const onnx_op_entry onnx_ops_reduce[] = {
    {"TopK", {1, 10, 11}, 1, 2, 2, 2, r_topk, 0},
    {"CumSum", {11, 14}, 2, 2, 1, 1, r_cumsum, 0},
    {"ReduceSum", {1, 11, 13}, 1, 2, 1, 1, r_sum, 0},
    {"ReduceMean", {1, 11, 13}, 1, 1, 1, 1, r_mean, 0},
    {"ReduceMax", {1, 11, 12, 13}, 1, 1, 1, 1, r_max, 0},
    {"ReduceMin", {1, 11, 12, 13}, 1, 1, 1, 1, r_min, 0},
    {"ReduceProd", {1, 11, 13}, 1, 1, 1, 1, r_prod, 0},
    {"ReduceLogSumExp", {1, 11, 13}, 1, 1, 1, 1, r_lse, 0},
    {"ReduceL1", {1, 11, 13}, 1, 1, 1, 1, r_l1, 0},
    {"ReduceL2", {1, 11, 13}, 1, 1, 1, 1, r_l2, 0},
    {"ReduceSumSquare", {1, 11, 13}, 1, 1, 1, 1, r_sumsq, 0},
    {"ReduceLogSum", {1, 11, 13}, 1, 1, 1, 1, r_logsum, 0},
    {"ArgMax", {1, 11, 12, 13}, 1, 1, 1, 1, r_argmax, 0},
    {"ArgMin", {1, 11, 12, 13}, 1, 1, 1, 1, r_argmin, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
