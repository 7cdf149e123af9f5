/* 1-D convolution and pooling over [N, C, L]: the 2-D ops on a unit
 * height, [N, C, 1, L], through views (unsqueeze before, squeeze after:
 * no copies), so gradients, forward mode, graphs and ONNX export come
 * from the 2-D ops. Only the public functions live here. */
#include "ops/nn_util.h"
#include "ops/op.h"

/* x (what) must be 3-D: the layout names the dims for the message */
static bool need_3d(const char *op, const tg_tensor *x, const char *what, const char *layout)
{
    char s[160];
    if (!tg__nn_have(op, x, what))
        return false;
    if (x->ndim == 3)
        return true;
    tg__error(TG_ERR_SHAPE, "%s: %s must be 3-D %s, got %s", op, what, layout,
              tg_shape_str(x->ndim, x->shape, s, sizeof s));
    return false;
}

/* x and w as [N, C, 1, L] and [O, C/groups, 1, k] (views), or false */
static bool lift(const char *op, tg_tensor *x, tg_tensor *w, const char *wlayout,
                 tg_tensor **x4, tg_tensor **w4)
{
    if (!need_3d(op, x, "input", "[N, C, L]") || !need_3d(op, w, "weight", wlayout))
        return false;
    *x4 = tg_unsqueeze(x, 2);
    *w4 = tg_unsqueeze(w, 2);
    return *x4 && *w4;
}

tg_tensor *tg_conv1d(tg_tensor *x, tg_tensor *w, tg_tensor *b, const tg_conv1d_opts *opts)
{
    tg_conv1d_opts o = {1, 0, 1, 1};
    if (opts)
        o = *opts;
    TG_LOCAL_BEGIN();
    tg_tensor *x4, *w4, *y = NULL;
    if (lift("conv1d", x, w, "[O, C/groups, k]", &x4, &w4)) {
        tg_conv2d_opts o2 = {{1, o.stride}, {0, o.padding}, {1, o.dilation}, o.groups};
        y = tg_squeeze(tg_conv2d(x4, w4, b, &o2), 2);
    }
    TG_LOCAL_RETURN(y);
}

tg_tensor *tg_conv_transpose1d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                               const tg_conv_transpose1d_opts *opts)
{
    tg_conv_transpose1d_opts o = {1, 0, 0, 1, 1};
    if (opts)
        o = *opts;
    TG_LOCAL_BEGIN();
    tg_tensor *x4, *w4, *y = NULL;
    if (lift("conv_transpose1d", x, w, "[C, O/groups, k]", &x4, &w4)) {
        tg_conv_transpose2d_opts o2 = {{1, o.stride}, {0, o.padding}, {0, o.output_padding},
                                       {1, o.dilation}, o.groups};
        y = tg_squeeze(tg_conv_transpose2d(x4, w4, b, &o2), 2);
    }
    TG_LOCAL_RETURN(y);
}

/* the 2-D options of a 1-D pooling: a 1 x kernel window of stride 1 x s */
static bool pool_opts(const char *op, tg_tensor *x, const tg_pool1d_opts *o,
                      tg_pool2d_opts *o2)
{
    if (!need_3d(op, x, "input", "[N, C, L]"))
        return false;
    if (!o) {
        tg__error(TG_ERR_ARG, "%s: opts is NULL (the kernel size is required)", op);
        return false;
    }
    *o2 = (tg_pool2d_opts){{1, o->kernel}, {1, o->stride == 0 ? o->kernel : o->stride},
                           {0, o->padding}, o->ceil_mode, o->count_include_pad};
    return true;
}

tg_tensor *tg_max_pool1d(tg_tensor *x, const tg_pool1d_opts *opts)
{
    tg_pool2d_opts o2;
    if (!pool_opts("max_pool1d", x, opts, &o2))
        return NULL;
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_squeeze(tg_max_pool2d(tg_unsqueeze(x, 2), &o2), 2);
    TG_LOCAL_RETURN(y);
}

tg_tensor *tg_avg_pool1d(tg_tensor *x, const tg_pool1d_opts *opts)
{
    tg_pool2d_opts o2;
    if (!pool_opts("avg_pool1d", x, opts, &o2))
        return NULL;
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_squeeze(tg_avg_pool2d(tg_unsqueeze(x, 2), &o2), 2);
    TG_LOCAL_RETURN(y);
}
