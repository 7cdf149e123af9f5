/* Instance and group normalisation (PyTorch's F.instance_norm without
 * running statistics and F.group_norm), composed from layer_norm: both
 * normalise each (sample, group) block over its elements, which is a
 * layer norm over the trailing axes of a view of x, followed by a
 * per-channel affine transform. Reusing layer_norm's fused kernels gives
 * its speed, its first-order fused gradient, its create_graph composite
 * and its forward-mode rule without a new op definition. */
#include "ops/nn_util.h"
#include "ops/composite.h"

/* v [C] -> [C, 1, ...] with nd - 2 trailing ones: broadcasts against
 * x [N, C, ...] of rank nd */
static tg_tensor *channel_shape(tg_tensor *v, int nd)
{
    int64_t shape[TG_MAX_DIMS];
    shape[0] = tg_numel(v);
    for (int i = 1; i < nd - 1; i++)
        shape[i] = 1;
    return tg_reshape(v, nd - 1, shape);
}

static bool check_channel_param(const char *op, const char *name, const tg_tensor *p,
                                const tg_tensor *x)
{
    char a[160], b[160];
    if (!p)
        return true;
    if (p->ndim != 1 || p->shape[0] != x->shape[1]) {
        tg__error(TG_ERR_SHAPE, "%s: %s has shape %s, expected [%lld] (the channels of "
                  "the input %s)", op, name, tg_shape_str(p->ndim, p->shape, a, sizeof a),
                  (long long)x->shape[1], tg_shape_str(x->ndim, x->shape, b, sizeof b));
        return false;
    }
    if (!tg_dtype_is_float(p->dtype)) {
        tg__error(TG_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", op, name,
                  tg_dtype_name(p->dtype));
        return false;
    }
    return true;
}

/* y * weight + bias per channel (either may be NULL) */
static tg_tensor *affine(tg_tensor *y, tg_tensor *weight, tg_tensor *bias, int nd)
{
    if (weight)
        y = tg_mul(y, channel_shape(tg_cast(weight, tg_dtype_of(y)), nd));
    if (bias)
        y = tg_add(y, channel_shape(tg_cast(bias, tg_dtype_of(y)), nd));
    return y;
}

static bool check_input(const char *op, const tg_tensor *x, int min_nd)
{
    char a[160];
    if (!tg__nn_have(op, x, "input"))
        return false;
    if (x->ndim < min_nd) {
        tg__error(TG_ERR_SHAPE, "%s: expected an input [N, C%s] of at least %d dims, got %s",
                  op, min_nd > 2 ? ", ..." : ", *", min_nd,
                  tg_shape_str(x->ndim, x->shape, a, sizeof a));
        return false;
    }
    return tg_require_float(op, x, 0) == TG_OK;
}

tg_tensor *tg__instance_norm(tg_tensor *x, tg_tensor *weight, tg_tensor *bias, double eps)
{
    const char *op = "instance_norm";
    if (!check_input(op, x, 3) || !check_channel_param(op, "weight", weight, x) ||
        !check_channel_param(op, "bias", bias, x))
        return NULL;
    int nd = x->ndim;
    TG_LOCAL_BEGIN();
    tg_tensor *y = affine(tg_layer_norm(x, nd - 2, NULL, NULL, eps), weight, bias, nd);
    TG_LOCAL_RETURN(y);
}

tg_tensor *tg_instance_norm(tg_tensor *x, tg_tensor *weight, tg_tensor *bias, double eps)
{
    const char *op = "instance_norm";
    if (!check_input(op, x, 3))
        return NULL;
    /* PyTorch refuses one value per instance: its variance is 0 and the
     * output is just the bias */
    int64_t spatial = tg__shape_numel(x->ndim - 2, x->shape + 2);
    if (spatial == 1) {
        char a[160];
        return tg__error_null(TG_ERR_SHAPE, "instance_norm: expected more than 1 spatial "
                              "element when training, got input %s",
                              tg_shape_str(x->ndim, x->shape, a, sizeof a));
    }
    return tg__instance_norm(x, weight, bias, eps);
}

tg_tensor *tg_group_norm(tg_tensor *x, int num_groups, tg_tensor *weight, tg_tensor *bias,
                         double eps)
{
    const char *op = "group_norm";
    if (!check_input(op, x, 2) || !check_channel_param(op, "weight", weight, x) ||
        !check_channel_param(op, "bias", bias, x))
        return NULL;
    int64_t C = x->shape[1];
    if (num_groups < 1 || C % num_groups != 0)
        return tg__error_null(TG_ERR_ARG, "group_norm: expected number of channels in input "
                              "(%lld) to be divisible by num_groups (%d)", (long long)C,
                              num_groups);
    int nd = x->ndim;
    /* [N, G, C/G * spatial]: each group of a sample is one row */
    int64_t rows[3] = {x->shape[0], num_groups,
                       (C / num_groups) * tg__shape_numel(nd - 2, x->shape + 2)};
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_layer_norm(tg_reshape(x, 3, rows), 1, NULL, NULL, eps);
    y = affine(tg_reshape(y, nd, x->shape), weight, bias, nd);
    TG_LOCAL_RETURN(y);
}
