/* Resizing: tg_interpolate (PyTorch's F.interpolate, modes nearest,
 * nearest-exact and (bi/tri)linear) and tg__resize, the general form ONNX
 * Resize maps to. Both modes are separable, so x is resized one axis at a
 * time: nearest is an index_select of the source slices, linear the
 * weighted sum of two index_selects (the neighbours below and above the
 * source coordinate). The index lists and weights are constants computed
 * here from the sizes alone, so the gradient (index_select's scatter-add)
 * and the forward-mode rule come from index_select, mul and add, in eager
 * and graph mode alike. */
#include "ops/composite.h"
#include "ops/nn_util.h"

#include <math.h>
#include <stdlib.h>

/* v * inv, or v / scale (ONNX's reference divides by the given scale) */
static double step(const tg_resize_spec *s, int axis, double v)
{
    if (s->scale)
        return v / s->scale[axis];
    if (s->f32_coords) /* PyTorch's nearest multiplies in float32 */
        return (double)((float)v * (float)s->inv[axis]);
    return v * s->inv[axis];
}

static double source_coord(const tg_resize_spec *s, int nd, int axis, int64_t i, int64_t in,
                           int64_t out)
{
    double x = (double)i;
    switch (s->coord) {
    case TG_COORD_HALF_PIXEL: return step(s, axis, x + 0.5) - 0.5;
    case TG_COORD_PYTORCH_HALF_PIXEL: return out > 1 ? step(s, axis, x + 0.5) - 0.5 : 0.0;
    case TG_COORD_ALIGN_CORNERS:
        /* corners to corners of the (integer) output, as PyTorch and
         * onnxruntime do; ONNX 1.12's reference stretches to the unrounded
         * in * scale instead (see expected_failures.txt) */
        return out > 1 ? x * (double)(in - 1) / (double)(out - 1) : 0.0;
    case TG_COORD_ASYMMETRIC: return step(s, axis, x);
    case TG_COORD_TF_HALF_PIXEL_NN: return step(s, axis, x + 0.5);
    case TG_COORD_TF_CROP_AND_RESIZE: {
        double r0 = s->roi[axis], r1 = s->roi[nd + axis], ext = (double)(in - 1);
        if (out == 1)
            return 0.5 * (r0 + r1) * ext;
        return r0 * ext + x * (r1 - r0) * ext / (double)(out - 1);
    }
    }
    return 0.0;
}

static int64_t clamp_index(double v, int64_t in)
{
    if (!(v > 0)) /* also NaN */
        return 0;
    return v >= (double)(in - 1) ? in - 1 : (int64_t)v;
}

static int64_t nearest_index(tg_nearest_mode m, double x, int64_t in)
{
    double r;
    switch (m) {
    case TG_NEAREST_ROUND_PREFER_FLOOR: r = ceil(x - 0.5); break;
    case TG_NEAREST_ROUND_PREFER_CEIL: r = floor(x + 0.5); break;
    case TG_NEAREST_FLOOR: r = floor(x); break;
    default: r = ceil(x); break;
    }
    return clamp_index(r, in);
}

/* [out, 1, ...] weights in x's dtype, broadcasting along `axis` of x */
static tg_tensor *axis_weights(const double *w, int64_t out, int axis, const tg_tensor *x)
{
    int64_t shape[TG_MAX_DIMS];
    int nd = x->ndim - axis;
    shape[0] = out;
    for (int i = 1; i < nd; i++)
        shape[i] = 1;
    if (x->dtype == TG_FLOAT64)
        return tg_from_data(TG_FLOAT64, nd, shape, w);
    float *f = malloc((size_t)(out ? out : 1) * sizeof *f);
    if (!f)
        return tg__error_null(TG_ERR_NOMEM, "resize: out of memory");
    for (int64_t i = 0; i < out; i++)
        f[i] = (float)w[i];
    tg_tensor *t = tg_from_data(TG_FLOAT32, nd, shape, f);
    free(f);
    return t;
}

/* Keys' cubic convolution kernel at distance d (PyTorch's and ONNX's, with
 * the coefficient a: -0.75 in both) */
static double cubic_weight(double d, double a)
{
    d = fabs(d);
    if (d <= 1)
        return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2)
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0;
}

/* the taps of output i: source indices (clamped: the border repeats) and
 * weights; returns the number of taps */
static int taps(const tg_resize_spec *s, double c, int64_t in, int64_t *idx, double *w)
{
    if (s->mode == TG_RESIZE_NEAREST) {
        idx[0] = nearest_index(s->nearest, c, in);
        w[0] = 1;
        return 1;
    }
    double f = floor(c), t = isfinite(c) ? c - f : 0;
    if (s->mode == TG_RESIZE_LINEAR) { /* (1 - t) x[f] + t x[f + 1] */
        idx[0] = clamp_index(f, in);
        idx[1] = clamp_index(f + 1, in);
        w[0] = 1 - t;
        w[1] = t;
        return 2;
    }
    double sum = 0; /* cubic: x[f - 1] .. x[f + 2] */
    for (int k = 0; k < 4; k++) {
        double j = f - 1 + k;
        w[k] = cubic_weight(t + 1 - k, s->cubic_a);
        if (s->exclude_outside && (j < 0 || j > (double)(in - 1)))
            w[k] = 0; /* ONNX's exclude_outside: renormalised below */
        idx[k] = clamp_index(j, in);
        sum += w[k];
    }
    for (int k = 0; s->exclude_outside && sum != 0 && k < 4; k++)
        w[k] /= sum;
    return 4;
}

/* x resized along one axis: sum over the taps k of index_select(x, idx_k)
 * weighted by w_k (one index_select for nearest); *skip set (and NULL
 * returned) when the axis would come out unchanged */
static tg_tensor *resize_axis(tg_tensor *x, int axis, const tg_resize_spec *s, bool *skip)
{
    int64_t in = x->shape[axis], out = s->out[axis], n = out ? out : 1;
    *skip = false;
    int64_t *idx = malloc((size_t)(4 * n) * sizeof *idx);
    double *w = malloc((size_t)(4 * n) * sizeof *w);
    bool *inside = malloc((size_t)n * sizeof *inside);
    tg_tensor *y = NULL;
    if (!idx || !w || !inside) {
        tg__error(TG_ERR_NOMEM, "resize: out of memory");
        goto done;
    }
    int K = 1;
    bool identity = out == in, used[4] = {false}, any_outside = false;
    for (int64_t i = 0; i < out; i++) {
        int64_t ti[4];
        double tw[4], self = 0, c = source_coord(s, x->ndim, axis, i, in, out);
        K = taps(s, c, in, ti, tw);
        /* tf_crop_and_resize: outside the input (mask 0 in inside[i]) */
        inside[i] = s->coord != TG_COORD_TF_CROP_AND_RESIZE || (c >= 0 && c <= (double)(in - 1));
        any_outside = any_outside || !inside[i];
        identity = identity && inside[i];
        for (int k = 0; k < K; k++) { /* tap-major: [k * out + i] */
            idx[k * out + i] = ti[k];
            w[k * out + i] = tw[k];
            used[k] = used[k] || tw[k] != 0;
            self += ti[k] == i ? tw[k] : 0;
            identity = identity && (tw[k] == 0 || ti[k] == i);
        }
        identity = identity && self == 1;
    }
    if (identity) {
        *skip = true;
        goto done;
    }
    TG_LOCAL_BEGIN();
    for (int k = 0; k < K; k++) {
        if (!used[k] && (k < K - 1 || y))
            continue; /* a tap that never contributes */
        tg_tensor *t = tg_index_select(x, axis, tg_from_data(TG_INT64, 1, &out, idx + k * out));
        if (K > 1)
            t = tg_mul(t, axis_weights(w + k * out, out, axis, x));
        y = y ? tg_add(y, t) : t;
    }
    if (any_outside) { /* the extrapolation value where the source is outside */
        int64_t shape[TG_MAX_DIMS];
        shape[0] = out;
        for (int d = 1; d < x->ndim - axis; d++)
            shape[d] = 1;
        tg_tensor *mask = tg_from_data(TG_BOOL, x->ndim - axis, shape, inside);
        y = tg_where(mask, y, tg_scalar(x->dtype, s->extrapolation));
    }
    y = tg_keep(y);
    tg_scope_end();
done:
    free(idx);
    free(w);
    free(inside);
    return y;
}

tg_tensor *tg__resize(tg_tensor *x, const tg_resize_spec *s)
{
    if (!tg__nn_have("resize", x, "input"))
        return NULL;
    if (s->mode != TG_RESIZE_NEAREST && tg_require_float("interpolate", x, 0) != TG_OK)
        return NULL;
    for (int d = 0; d < x->ndim; d++)
        if (s->out[d] < 0 || (x->shape[d] == 0 && s->out[d] > 0)) {
            char a[160];
            return tg__error_null(TG_ERR_SHAPE, "interpolate: cannot resize axis %d of the "
                                  "input %s to %lld", d,
                                  tg_shape_str(x->ndim, x->shape, a, sizeof a),
                                  (long long)s->out[d]);
        }
    TG_LOCAL_BEGIN();
    tg_tensor *y = x;
    for (int d = 0; d < x->ndim && y; d++) {
        bool skip;
        tg_tensor *r = resize_axis(y, d, s, &skip);
        if (!skip)
            y = r;
    }
    if (y == x)
        y = tg_clone(x); /* a new tensor, as every op returns */
    TG_LOCAL_RETURN(y);
}

static const char *const mode_names[] = {"nearest", "nearest-exact", "linear", "bicubic"};

tg_tensor *tg_interpolate(tg_tensor *x, int n, const int64_t *size,
                          const double *scale_factor, tg_interp_mode mode,
                          bool align_corners)
{
    const char *op = "interpolate";
    char a[160];
    if (!tg__nn_have(op, x, "input"))
        return NULL;
    if ((int)mode < 0 || mode > TG_INTERP_BICUBIC)
        return tg__error_null(TG_ERR_UNSUPPORTED, "interpolate: unknown mode %d (nearest, "
                              "nearest-exact, linear and bicubic are supported)", (int)mode);
    if (x->ndim < 3 || x->ndim > 5 || n != x->ndim - 2)
        return tg__error_null(TG_ERR_SHAPE, "interpolate: expected an input [N, C, d1 (, d2 "
                              "(, d3))] with one size or scale factor per spatial dim, got "
                              "%s and %d values", tg_shape_str(x->ndim, x->shape, a, sizeof a),
                              n);
    if (!size == !scale_factor)
        return tg__error_null(TG_ERR_ARG, "interpolate: exactly one of size and scale_factor "
                              "should be given");
    bool interpolating = mode == TG_INTERP_LINEAR || mode == TG_INTERP_BICUBIC;
    if (align_corners && !interpolating)
        return tg__error_null(TG_ERR_ARG, "interpolate: align_corners option can only be set "
                              "with the interpolating modes: linear | bilinear | bicubic | "
                              "trilinear (mode is %s)", mode_names[mode]);
    if (mode == TG_INTERP_BICUBIC && x->ndim != 4)
        return tg__error_null(TG_ERR_SHAPE, "interpolate: bicubic needs a 4-D input, got %s",
                              tg_shape_str(x->ndim, x->shape, a, sizeof a));
    int64_t out[TG_MAX_DIMS];
    double inv[TG_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        out[d] = x->shape[d];
        inv[d] = 1.0;
    }
    for (int i = 0; i < n; i++) {
        int64_t in = x->shape[2 + i];
        if (size) {
            if (size[i] < 1)
                return tg__error_null(TG_ERR_ARG, "interpolate: output size %lld of spatial "
                                      "dim %d must be positive", (long long)size[i], i);
            out[2 + i] = size[i];
            inv[2 + i] = (double)in / (double)size[i];
        } else {
            double sf = scale_factor[i], o = floor((double)in * sf);
            if (!(sf > 0) || !(o >= 1) || o > (double)INT32_MAX)
                return tg__error_null(TG_ERR_ARG, "interpolate: scale factor %g of spatial "
                                      "dim %d gives no valid output size for an input of %lld",
                                      sf, i, (long long)in);
            out[2 + i] = (int64_t)o;
            inv[2 + i] = 1.0 / sf; /* PyTorch uses the given factor, not out / in */
        }
    }
    tg_resize_spec s = {.mode = mode == TG_INTERP_LINEAR    ? TG_RESIZE_LINEAR
                                : mode == TG_INTERP_BICUBIC ? TG_RESIZE_CUBIC
                                                            : TG_RESIZE_NEAREST,
                        .nearest = TG_NEAREST_FLOOR, .cubic_a = -0.75, .out = out,
                        /* PyTorch's nearest computes coordinates in float32, its
                         * interpolating modes in the input's precision */
                        .f32_coords = !interpolating || x->dtype != TG_FLOAT64,
                        .inv = inv};
    if (mode == TG_INTERP_NEAREST)
        s.coord = TG_COORD_ASYMMETRIC;
    else if (mode == TG_INTERP_NEAREST_EXACT)
        s.coord = TG_COORD_TF_HALF_PIXEL_NN;
    else if (align_corners)
        s.coord = TG_COORD_ALIGN_CORNERS;
    else /* bicubic reaches below 0 (no clamp); linear's clamp is the border repeat */
        s.coord = TG_COORD_HALF_PIXEL;
    return tg__resize(x, &s);
}
