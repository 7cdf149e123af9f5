/* ONNX ops that map onto tensorgraph's composite ops: InstanceNormalization
 * (what PyTorch's instance and group norms export to), Resize (nearest,
 * n-linear and cubic, the coordinate modes PyTorch exports and the other
 * simple ones) and Einsum; and ONNX ops composed here of tensorgraph ops
 * (exported back as those): PRelu, Hardmax, GlobalMaxPool,
 * MeanVarianceNormalization, LRN. */
#include "onnx/ops.h"

#include "ops/composite.h"

#include <math.h>
#include <string.h>

static tg_status done(onnx_ictx *c, tg_tensor *y)
{
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

/* ---- InstanceNormalization ----------------------------------------------------------- */
static tg_status n_instance_norm(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input"), *scale = x ? oi_req(c, 1, "scale") : NULL;
    tg_tensor *b = scale ? oi_req(c, 2, "B") : NULL;
    double eps;
    if (!b)
        return tg_last_status();
    tg_status s = oa_float(c, "epsilon", 1e-5, &eps);
    if (s != TG_OK)
        return s;
    if (tg_ndim(x) < 3)
        return onnx_err(c, TG_ERR_SHAPE, "input should be [N, C, D1, ...], has rank %d",
                        tg_ndim(x));
    return done(c, onnx_as(tg__instance_norm(x, scale, b, eps), tg_dtype_of(x)));
}

/* ---- Resize ---------------------------------------------------------------------------- */
typedef struct named {
    const char *name;
    int value;
} named;

static const named coord_modes[] = {
    {"half_pixel", TG_COORD_HALF_PIXEL},
    {"pytorch_half_pixel", TG_COORD_PYTORCH_HALF_PIXEL},
    {"align_corners", TG_COORD_ALIGN_CORNERS},
    {"asymmetric", TG_COORD_ASYMMETRIC},
    {"tf_half_pixel_for_nn", TG_COORD_TF_HALF_PIXEL_NN},
    {"tf_crop_and_resize", TG_COORD_TF_CROP_AND_RESIZE},
    {NULL, 0},
};
static const named nearest_modes[] = {
    {"round_prefer_floor", TG_NEAREST_ROUND_PREFER_FLOOR},
    {"round_prefer_ceil", TG_NEAREST_ROUND_PREFER_CEIL},
    {"floor", TG_NEAREST_FLOOR},
    {"ceil", TG_NEAREST_CEIL},
    {NULL, 0},
};

static tg_status pick(onnx_ictx *c, const char *attr, const char *dflt, const named *t,
                      int *out)
{
    const char *v;
    tg_status s = oa_string(c, attr, dflt, &v);
    if (s != TG_OK)
        return s;
    for (; t->name; t++)
        if (!strcmp(t->name, v)) {
            *out = t->value;
            return TG_OK;
        }
    return onnx_err(c, TG_ERR_UNSUPPORTED, "%s '%s' is not supported", attr, v);
}

/* the mode and coordinate attributes; unsupported choices name themselves */
static tg_status resize_modes(onnx_ictx *c, tg_resize_spec *spec)
{
    const char *mode;
    tg_status s = oa_string(c, "mode", "nearest", &mode);
    if (s != TG_OK)
        return s;
    if (!strcmp(mode, "nearest"))
        spec->mode = TG_RESIZE_NEAREST;
    else if (!strcmp(mode, "linear"))
        spec->mode = TG_RESIZE_LINEAR;
    else if (!strcmp(mode, "cubic"))
        spec->mode = TG_RESIZE_CUBIC;
    else
        return onnx_err(c, TG_ERR_UNSUPPORTED, "mode '%s' is not supported (nearest, linear "
                        "and cubic are)", mode);
    int64_t exclude = 0;
    if ((s = oa_float(c, "cubic_coeff_a", -0.75, &spec->cubic_a)) != TG_OK ||
        (s = oa_int(c, "exclude_outside", 0, &exclude)) != TG_OK)
        return s;
    spec->exclude_outside = exclude != 0;
    int coord = TG_COORD_ASYMMETRIC, nearest = TG_NEAREST_FLOOR;
    if (c->version >= 11) { /* Resize-10 is Upsample's asymmetric floor */
        const char *ctm;
        if ((s = oa_string(c, "coordinate_transformation_mode", "half_pixel", &ctm)) != TG_OK)
            return s;
        if ((s = pick(c, "coordinate_transformation_mode", "half_pixel", coord_modes,
                      &coord)) != TG_OK ||
            (s = pick(c, "nearest_mode", "round_prefer_floor", nearest_modes, &nearest)) !=
                TG_OK)
            return s;
    }
    static const char *const later[] = {"antialias", "axes", "keep_aspect_ratio_policy"};
    for (int i = 0; i < 3; i++)
        if (onnx_attr(c, later[i]))
            return onnx_err(c, TG_ERR_UNSUPPORTED, "attribute %s (opset 18) is not "
                            "supported", later[i]);
    spec->coord = (tg_coord_mode)coord;
    spec->nearest = (tg_nearest_mode)nearest;
    return TG_OK;
}

/* an optional input that is absent, "" or empty */
static bool absent(const onnx_ictx *c, int i)
{
    return i >= c->n_in || !c->in[i] || tg_numel(c->in[i]) == 0;
}

static tg_status n_resize(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    if (!x)
        return tg_last_status();
    tg_resize_spec spec = {0};
    tg_status s = resize_modes(c, &spec);
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x), i_scales = c->version >= 11 ? 2 : 1, i_sizes = 3;
    int64_t out[TG_MAX_DIMS], n = 0;
    double scale[TG_MAX_DIMS];
    if (!absent(c, i_scales)) {
        double *v;
        if ((s = oi_floats(c, i_scales, "scales", &v, &n)) != TG_OK)
            return s;
        if (n != r)
            return onnx_err(c, TG_ERR_IO, "scales has %lld values for an input of rank %d",
                            (long long)n, r);
        for (int d = 0; d < r; d++) {
            double o = floor((double)tg_shape(x)[d] * v[d]);
            if (!(v[d] > 0) || !(o <= (double)ONNX_IMPORT_MAX_ELEMENTS))
                return onnx_err(c, TG_ERR_IO, "scale %g of axis %d should be positive and "
                                "give at most 2^28 elements", v[d], d);
            out[d] = (int64_t)o;
            scale[d] = v[d];
        }
    } else if (!absent(c, i_sizes)) {
        int64_t *v;
        if ((s = oi_ints(c, i_sizes, "sizes", &v, &n)) != TG_OK)
            return s;
        if (n != r)
            return onnx_err(c, TG_ERR_IO, "sizes has %lld values for an input of rank %d",
                            (long long)n, r);
        for (int d = 0; d < r; d++) {
            if (v[d] < 1 || v[d] > ONNX_IMPORT_MAX_ELEMENTS)
                return onnx_err(c, TG_ERR_IO, "size %lld of axis %d is out of range",
                                (long long)v[d], d);
            out[d] = v[d];
            scale[d] = (double)v[d] / (double)tg_shape(x)[d];
        }
    } else {
        return onnx_err(c, TG_ERR_IO, "one of scales and sizes must be given");
    }
    if ((s = onnx_check_numel(c, r, out, "the output")) != TG_OK)
        return s;
    if (spec.coord == TG_COORD_TF_CROP_AND_RESIZE) { /* the region: a known roi input */
        double *roi;
        int64_t nr;
        if (absent(c, 1))
            return onnx_err(c, TG_ERR_IO, "tf_crop_and_resize needs the roi input");
        if ((s = oi_floats(c, 1, "roi", &roi, &nr)) != TG_OK ||
            (s = oa_float(c, "extrapolation_value", 0.0, &spec.extrapolation)) != TG_OK)
            return s;
        if (nr != 2 * r)
            return onnx_err(c, TG_ERR_IO, "roi has %lld values for an input of rank %d "
                            "(expected %d)", (long long)nr, r, 2 * r);
        spec.roi = roi;
    }
    spec.out = out;
    spec.scale = scale;
    return done(c, tg__resize(x, &spec));
}

/* ---- Einsum ------------------------------------------------------------------------------ */
static tg_status n_einsum(onnx_ictx *c)
{
    const char *eq;
    tg_status s = oa_string(c, "equation", NULL, &eq);
    if (s != TG_OK)
        return s;
    if (!eq)
        return onnx_err(c, TG_ERR_IO, "attribute equation is required");
    for (int i = 0; i < c->n_in; i++)
        if (!oi_req(c, i, "Inputs"))
            return tg_last_status();
    return done(c, tg_einsum(eq, c->n_in, c->in));
}

/* ---- PRelu: slope broadcast to X (unidirectionally, as numpy) ------------------------- */
static tg_status n_prelu(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *slope = x ? oi_req(c, 1, "slope") : NULL;
    if (!slope)
        return tg_last_status();
    tg_dtype dt = tg_dtype_of(x);
    tg_tensor *neg = tg_lt(x, tg_scalar(dt, 0));
    return done(c, onnx_as(tg_where(neg, tg_mul(x, onnx_as(slope, dt)), x), dt));
}

/* ---- Hardmax(axis): 1 at the first maximum along axis, else 0 ------------------------ */
static tg_status n_hardmax(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t a;
    tg_status s = x ? oa_int(c, "axis", c->version >= 13 ? -1 : 1, &a) : tg_last_status();
    int r = x ? tg_ndim(x) : 0, axis;
    if (s == TG_OK)
        s = onnx_axis(c, a, r, "axis", &axis);
    if (s != TG_OK)
        return s;
    tg_tensor *v = x;
    if (c->version < 13) { /* over the input flattened to 2-D at axis */
        int64_t rows = 1, cols = 1;
        for (int i = 0; i < r; i++)
            *(i < axis ? &rows : &cols) *= tg_shape(x)[i];
        v = tg_reshape(x, 2, (int64_t[]){rows, cols});
        axis = 1;
    }
    int64_t n = v ? tg_shape(v)[axis] : 0, shape[TG_MAX_DIMS];
    if (n == 0) /* an empty axis has no maximum: the result is empty */
        return done(c, v ? onnx_as(tg_reshape(v, tg_ndim(x), tg_shape(x)), tg_dtype_of(x))
                         : NULL);
    /* positions along axis, shaped to broadcast against the argmax */
    for (int i = 0; i < tg_ndim(v); i++)
        shape[i] = i == axis ? n : 1;
    int tok = onnx_eager_begin();
    tg_tensor *pos = tg_reshape(tg_arange(TG_INT64, 0, (double)n, 1), tg_ndim(v), shape);
    onnx_eager_end(tok);
    tg_tensor *y = tg_cast(tg_eq(pos, tg_argmax(v, axis, true)), tg_dtype_of(x));
    return done(c, y ? tg_reshape(y, r, tg_shape(x)) : NULL);
}

/* ---- GlobalMaxPool: max over the spatial dims, kept ----------------------------------- */
static tg_status n_global_max_pool(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    if (!x)
        return tg_last_status();
    int r = tg_ndim(x), axes[TG_MAX_DIMS];
    if (r < 3)
        return onnx_err(c, TG_ERR_SHAPE, "X should be [N, C, D1, ...], has rank %d", r);
    for (int i = 2; i < r; i++)
        axes[i - 2] = i;
    return done(c, tg_max(x, r - 2, axes, true));
}

/* ---- GlobalLpPool: (sum over the spatial dims of |x|^p)^(1/p), kept ------------------ */
static tg_status n_global_lp_pool(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    double p;
    tg_status s = x ? onnx_lp_order(c, &p) : tg_last_status();
    if (s != TG_OK)
        return s;
    int r = tg_ndim(x), axes[TG_MAX_DIMS];
    if (r < 3)
        return onnx_err(c, TG_ERR_SHAPE, "X should be [N, C, D1, ...], has rank %d", r);
    if (!tg_dtype_is_float(tg_dtype_of(x)))
        return onnx_err(c, TG_ERR_DTYPE, "GlobalLpPool needs a floating-point input");
    for (int i = 2; i < r; i++)
        axes[i - 2] = i;
    tg_tensor *sums = tg_sum(tg_pow_scalar(tg_abs(x), p), r - 2, axes, true);
    return done(c, tg_pow_scalar(sums, 1 / p));
}

/* ---- LpNormalization(axis, p): x over its L1 (p = 1) or L2 (p = 2) norm
 * along axis (a zero norm gives NaN or infinities, as the definition) ---------------- */
static tg_status n_lp_norm(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t a, p;
    int axis;
    tg_status s = x ? oa_int(c, "axis", -1, &a) : tg_last_status();
    if (s == TG_OK)
        s = oa_int(c, "p", 2, &p);
    if (s == TG_OK && p != 1 && p != 2)
        return onnx_err(c, TG_ERR_IO, "p must be 1 or 2, got %lld", (long long)p);
    if (s == TG_OK)
        s = onnx_axis(c, a, tg_ndim(x) > 0 ? tg_ndim(x) : 1, "axis", &axis);
    if (s != TG_OK)
        return s;
    if (!tg_dtype_is_float(tg_dtype_of(x)))
        return onnx_err(c, TG_ERR_DTYPE, "LpNormalization needs a floating-point input");
    if (tg_ndim(x) == 0)
        return done(c, tg_div(x, tg_abs(x)));
    tg_tensor *norm = p == 1 ? tg_sum(tg_abs(x), 1, &axis, true)
                             : tg_sqrt(tg_sum(tg_mul(x, x), 1, &axis, true));
    return done(c, tg_div(x, norm));
}

/* ---- MeanVarianceNormalization(axes): ONNX's function body, (x - E[x]) /
 * (sqrt(E[x^2] - E[x]^2) + 1e-9) over axes (default 0, 2, 3) ------------------------ */
static tg_status n_mvn(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    const int64_t *v;
    int n, axes[TG_MAX_DIMS];
    tg_status s = x ? oa_ints(c, "axes", &v, &n) : tg_last_status();
    if (s != TG_OK)
        return s;
    static const int64_t dflt[3] = {0, 2, 3};
    if (n < 0) {
        v = dflt;
        n = 3;
    }
    int r = tg_ndim(x);
    bool seen[TG_MAX_DIMS] = {false};
    if (n > r)
        return onnx_err(c, TG_ERR_IO, "%d axes for rank %d", n, r);
    for (int i = 0; i < n; i++) {
        if ((s = onnx_axis(c, v[i], r, "axes value", &axes[i])) != TG_OK)
            return s;
        if (seen[axes[i]])
            return onnx_err(c, TG_ERR_IO, "axes repeats axis %d", axes[i]);
        seen[axes[i]] = true;
    }
    if (!tg_dtype_is_float(tg_dtype_of(x)))
        return onnx_err(c, TG_ERR_IO, "X should be floating point, is %s",
                        tg_dtype_name(tg_dtype_of(x)));
    if (n == 0) /* no axes: each element is its own mean, 0 / (0 + eps) */
        return done(c, tg_sub(x, x));
    tg_tensor *mean = tg_mean(x, n, axes, true);
    tg_tensor *var = tg_sub(tg_mean(tg_mul(x, x), n, axes, true), tg_mul(mean, mean));
    tg_tensor *sd = tg_add(tg_sqrt(var), tg_scalar(tg_dtype_of(x), 1e-9));
    return done(c, tg_div(tg_sub(x, mean), sd));
}

/* LRN: x / (bias + alpha / size * the sum of squares over `size`
 * channels around each)^beta, the window floor((size-1)/2) channels
 * before and ceil((size-1)/2) after: the squares as [N, 1, C, rest],
 * zero-padded along C and averaged over (size, 1) windows */
static tg_status n_lrn(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    double alpha, beta, bias;
    int64_t size;
    if (!x)
        return tg_last_status();
    tg_status s = oa_float(c, "alpha", 1e-4, &alpha);
    if (s == TG_OK)
        s = oa_float(c, "beta", 0.75, &beta);
    if (s == TG_OK)
        s = oa_float(c, "bias", 1.0, &bias);
    if (s == TG_OK)
        s = oa_int(c, "size", 0, &size);
    if (s != TG_OK)
        return s;
    if (!onnx_attr(c, "size") || size < 1 || size > INT32_MAX)
        return onnx_err(c, TG_ERR_IO, "attribute 'size' (a positive window of channels) is "
                        "required");
    int nd = tg_ndim(x);
    if (nd < 3)
        return onnx_err(c, TG_ERR_SHAPE, "input should be [N, C, D1, ...], has rank %d", nd);
    const int64_t *sh = tg_shape(x);
    int64_t rest = 1;
    for (int i = 2; i < nd; i++)
        rest *= sh[i];
    tg_tensor *sq = tg_reshape(tg_mul(x, x), 4, (int64_t[]){sh[0], 1, sh[1], rest});
    int64_t pads[6] = {0, 0, 0, 0, (size - 1) / 2, size / 2};
    tg_pool2d_opts o = {{(int)size, 1}, {1, 1}, {0, 0}, false, true};
    tg_tensor *avg = tg_avg_pool2d(tg_pad(sq, 6, pads, 0.0), &o);
    tg_tensor *den = tg_pow_scalar(tg_add_scalar(tg_mul_scalar(avg, alpha), bias), beta);
    return done(c, tg_div(x, tg_reshape(den, nd, sh)));
}

/* Upsample-7/9 (and the deprecated 10) compute what Resize-10 does: X and
 * scales (Upsample-7's attribute arrives as input 1, versions.c),
 * asymmetric coordinates, nearest rounding down */
static tg_status n_upsample(onnx_ictx *c)
{
    int version = c->version;
    c->version = 10;
    tg_status s = n_resize(c);
    c->version = version;
    return s;
}

const onnx_op_entry onnx_ops_composite[] = {
    {"InstanceNormalization", {1, 6}, 3, 3, 1, 1, n_instance_norm, 0},
    {"Resize", {10, 11, 13}, 1, 4, 1, 1, n_resize, 0},
    {"Upsample", {1, 7, 9, 10}, 2, 2, 1, 1, n_upsample, 0},
    {"Einsum", {12}, 1, ONNX_MAX_IO, 1, 1, n_einsum, 0},
    {"PRelu", {1, 6, 7, 9, 16}, 2, 2, 1, 1, n_prelu, 0},
    {"Hardmax", {1, 11, 13}, 1, 1, 1, 1, n_hardmax, 0},
    {"GlobalMaxPool", {1}, 1, 1, 1, 1, n_global_max_pool, 0},
    {"GlobalLpPool", {2}, 1, 1, 1, 1, n_global_lp_pool, 0},
    {"LpNormalization", {1}, 1, 1, 1, 1, n_lp_norm, 0},
    {"MeanVarianceNormalization", {9, 13}, 1, 1, 1, 1, n_mvn, 0},
    {"LRN", {1, 13}, 1, 1, 1, 1, n_lrn, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
