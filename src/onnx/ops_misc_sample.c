/* ONNX GridSample and RoiAlign, composed of differentiable tensorgraph
 * ops as PyTorch computes them (F.grid_sample; torchvision's roi_align):
 * the sampling positions computed with elementwise ops, each tap of the
 * interpolation a gather from the image flattened over H*W, weighted and
 * summed. Gradients reach the image (through gather) and GridSample's
 * grid (through the weights). */
#include "onnx/ops_misc.h"
#include "ops/op.h"

#include <math.h>
#include <string.h>

/* ---- shared: taps ------------------------------------------------------------------------ */
typedef struct image {
    tg_tensor *x;    /* [R, C, H * W]: one image per output row */
    int64_t R, C, H, W, P;
} image;

/* x at the integral positions (iy, ix) (float [R, P]) times weight w
 * ([R, P]; NULL for 1), 0 where a position is outside the image */
static tg_tensor *tap(const image *im, tg_tensor *iy, tg_tensor *ix, tg_tensor *w)
{
    tg_dtype gt = tg_dtype_of(ix), xt = tg_dtype_of(im->x);
    /* a NaN position (an infinite one reflected) reads nothing */
    iy = tg_where(tg_isnan(iy), tg_scalar(gt, -1), iy);
    ix = tg_where(tg_isnan(ix), tg_scalar(gt, -1), ix);
    tg_tensor *inside = tg_logical_and(
        tg_logical_and(tg_ge(ix, tg_scalar(gt, 0)), tg_le(ix, tg_scalar(gt, (double)(im->W - 1)))),
        tg_logical_and(tg_ge(iy, tg_scalar(gt, 0)), tg_le(iy, tg_scalar(gt, (double)(im->H - 1)))));
    tg_tensor *cy = onnx_as(tg_clamp(iy, 0, (double)(im->H - 1)), TG_INT64);
    tg_tensor *cx = onnx_as(tg_clamp(ix, 0, (double)(im->W - 1)), TG_INT64);
    tg_tensor *lin = tg_add(tg_mul(cy, tg_scalar(TG_INT64, (double)im->W)), cx);
    int64_t r1p[3] = {im->R, 1, im->P}, rcp[3] = {im->R, im->C, im->P};
    tg_tensor *v = tg_gather(im->x, 2, tg_expand(tg_reshape(lin, 3, r1p), 3, rcp));
    tg_tensor *wm = tg_where(inside, w ? w : tg_scalar(gt, 1), tg_scalar(gt, 0));
    return tg_mul(v, onnx_as(tg_reshape(wm, 3, r1p), xt));
}

static tg_tensor *add_to(tg_tensor *sum, tg_tensor *t)
{
    return sum ? tg_add(sum, t) : t;
}

/* ---- GridSample(mode, padding_mode, align_corners) ------------------------------------- */
enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION };

typedef struct grid_spec {
    int pad;
    bool align;
} grid_spec;

/* torch's reflection of a coordinate into [lo2 / 2, hi2 / 2] */
static tg_tensor *reflect(tg_tensor *v, double lo2, double hi2)
{
    tg_dtype dt = tg_dtype_of(v);
    if (lo2 == hi2)
        return tg_mul_scalar(v, 0);
    double lo = lo2 / 2, span = (hi2 - lo2) / 2;
    tg_tensor *d = tg_abs(tg_add_scalar(v, -lo));
    tg_tensor *flips = tg_floor(tg_mul_scalar(d, 1 / span));
    tg_tensor *extra = tg_sub(d, tg_mul_scalar(flips, span));
    tg_tensor *even = tg_eq(tg_remainder(flips, tg_scalar(dt, 2)), tg_scalar(dt, 0));
    return tg_where(even, tg_add_scalar(extra, lo),
                    tg_add_scalar(tg_neg(extra), span + lo));
}

/* the padding mode applied to a coordinate along a dim of `size` */
static tg_tensor *pad_coord(const grid_spec *g, tg_tensor *v, int64_t size)
{
    if (g->pad == PAD_ZEROS)
        return v;
    if (g->pad == PAD_REFLECTION)
        v = g->align ? reflect(v, 0, 2.0 * (double)(size - 1))
                     : reflect(v, -1, 2.0 * (double)size - 1);
    return tg_clamp(v, 0, (double)(size - 1));
}

/* a normalised coordinate in [-1, 1] as a pixel position (NaN: outside) */
static tg_tensor *unnormalize(const grid_spec *g, tg_tensor *v, int64_t size)
{
    double s = (double)size;
    tg_tensor *p = g->align ? tg_mul_scalar(tg_add_scalar(v, 1), (s - 1) / 2)
                            : tg_mul_scalar(tg_add_scalar(tg_mul_scalar(tg_add_scalar(v, 1),
                                                                        s), -1), 0.5);
    return tg_where(tg_isnan(p), tg_scalar(tg_dtype_of(p), -2), p);
}

/* Keys' cubic convolution weights (a = -0.75, PyTorch's) of the taps at
 * -1, 0, 1, 2 for the fraction t */
static void cubic_weights(tg_tensor *t, tg_tensor *w[4])
{
    const double A = -0.75;
    tg_tensor *t1 = tg_add_scalar(t, 1), *u = tg_add_scalar(tg_neg(t), 1);
    tg_tensor *u1 = tg_add_scalar(u, 1);
    /* |d| in (1, 2): ((A d - 5A) d + 8A) d - 4A; |d| <= 1: ((A+2) d - (A+3)) d d + 1 */
    #define FAR(d) tg_add_scalar(tg_mul(tg_add_scalar(tg_mul(tg_add_scalar(tg_mul_scalar(d, A), \
                   -5 * A), d), 8 * A), d), -4 * A)
    #define NEAR(d) tg_add_scalar(tg_mul(tg_mul(tg_add_scalar(tg_mul_scalar(d, A + 2), \
                    -(A + 3)), d), d), 1)
    w[0] = FAR(t1);
    w[1] = NEAR(t);
    w[2] = NEAR(u);
    w[3] = FAR(u1);
    #undef FAR
    #undef NEAR
}

static tg_tensor *sample_bicubic(const image *im, const grid_spec *g, tg_tensor *iy,
                                 tg_tensor *ix)
{
    tg_tensor *y0 = tg_floor(iy), *x0 = tg_floor(ix), *wy[4], *wx[4], *sum = NULL;
    cubic_weights(tg_sub(iy, y0), wy);
    cubic_weights(tg_sub(ix, x0), wx);
    for (int j = 0; j < 4; j++) {
        tg_tensor *yy = pad_coord(g, tg_add_scalar(y0, j - 1), im->H);
        for (int i = 0; i < 4; i++) {
            tg_tensor *xx = pad_coord(g, tg_add_scalar(x0, i - 1), im->W);
            sum = add_to(sum, tap(im, yy, xx, tg_mul(wy[j], wx[i])));
        }
    }
    return sum;
}

static tg_tensor *sample_bilinear(const image *im, tg_tensor *iy, tg_tensor *ix)
{
    tg_tensor *y0 = tg_floor(iy), *x0 = tg_floor(ix);
    tg_tensor *y1 = tg_add_scalar(y0, 1), *x1 = tg_add_scalar(x0, 1);
    tg_tensor *ly = tg_sub(iy, y0), *lx = tg_sub(ix, x0);
    tg_tensor *hy = tg_add_scalar(tg_neg(ly), 1), *hx = tg_add_scalar(tg_neg(lx), 1);
    tg_tensor *sum = tap(im, y0, x0, tg_mul(hy, hx));
    sum = add_to(sum, tap(im, y0, x1, tg_mul(hy, lx)));
    sum = add_to(sum, tap(im, y1, x0, tg_mul(ly, hx)));
    return add_to(sum, tap(im, y1, x1, tg_mul(ly, lx)));
}

static tg_status grid_attrs(onnx_ictx *c, int *mode, grid_spec *g)
{
    const char *m, *p;
    int64_t align;
    tg_status s = oa_string(c, "mode", "bilinear", &m);
    if (s == TG_OK)
        s = oa_string(c, "padding_mode", "zeros", &p);
    if (s == TG_OK)
        s = oa_int(c, "align_corners", 0, &align);
    if (s != TG_OK)
        return s;
    static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    *mode = g->pad = -1;
    for (int i = 0; i < 3; i++) {
        if (!strcmp(m, modes[i]))
            *mode = i;
        if (!strcmp(p, pads[i]))
            g->pad = i;
    }
    if (*mode < 0 || g->pad < 0)
        return onnx_err(c, TG_ERR_IO, "mode '%s' / padding_mode '%s': expected bilinear, "
                        "nearest or bicubic / zeros, border or reflection", m, p);
    g->align = align != 0;
    return TG_OK;
}

tg_status misc_grid_sample(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *grid = x ? oi_req(c, 1, "grid") : NULL;
    if (!grid)
        return tg_last_status();
    int mode;
    grid_spec g;
    tg_status s = grid_attrs(c, &mode, &g);
    if (s != TG_OK)
        return s;
    const int64_t *xs = tg_shape(x), *gs = tg_shape(grid);
    if (tg_ndim(x) != 4 || tg_ndim(grid) != 4 || gs[0] != xs[0] || gs[3] != 2 ||
        !tg_dtype_is_float(tg_dtype_of(x)) || !tg_dtype_is_float(tg_dtype_of(grid)))
        return onnx_err(c, TG_ERR_IO, "X should be float [N, C, H, W] and grid float [N, "
                        "H_out, W_out, 2] of the same N");
    if (!xs[2] || !xs[3])
        return onnx_err(c, TG_ERR_IO, "X has an empty spatial dim");
    image im = {.R = xs[0], .C = xs[1], .H = xs[2], .W = xs[3], .P = gs[1] * gs[2]};
    int64_t np[2] = {im.R, im.P};
    im.x = tg_reshape(x, 3, (int64_t[]){im.R, im.C, im.H * im.W});
    tg_tensor *ix = unnormalize(&g, tg_reshape(tg_slice(grid, 3, 0, 1, 1), 2, np), im.W);
    tg_tensor *iy = unnormalize(&g, tg_reshape(tg_slice(grid, 3, 1, 2, 1), 2, np), im.H);
    tg_tensor *y;
    if (mode == 2) {
        y = sample_bicubic(&im, &g, iy, ix);
    } else {
        ix = pad_coord(&g, ix, im.W);
        iy = pad_coord(&g, iy, im.H);
        y = mode == 0 ? sample_bilinear(&im, iy, ix)
                      : tap(&im, tg_round(iy), tg_round(ix), NULL);
    }
    return misc_done(c, y ? tg_reshape(y, 4, (int64_t[]){im.R, im.C, gs[1], gs[2]}) : NULL);
}

/* ---- RoiAlign(mode, output_height, output_width, sampling_ratio, spatial_scale,
 *               coordinate_transformation_mode) -------------------------------------------
 * torchvision's roi_align: each of the ph x pw bins of a box averages a
 * gh x gw grid of bilinear samples (gh = sampling_ratio, or adaptive:
 * ceil(box height / ph) per box). Positions are laid out [R, ph, GH, pw,
 * GW] with GH, GW the largest grid; samples past a box's own grid weigh 0. */
typedef struct roi_spec {
    int64_t ph, pw, ratio;
    double scale, offset;
} roi_spec;

/* the largest adaptive grid over the boxes, computed as torchvision does
 * in the boxes' precision (the boxes' values known at import) */
static tg_status roi_max_grid(onnx_ictx *c, const roi_spec *sp, int64_t *gh, int64_t *gw)
{
    tg_tensor *b = misc_value_req(c, 1, "rois", "sampling_ratio 0 makes each box's "
                                  "sample count depend on its size");
    void *v;
    bool f;
    tg_status s = b ? misc_host_values(c, b, &v, &f) : tg_last_status();
    if (s != TG_OK)
        return s;
    bool single = tg_dtype_of(b) == TG_FLOAT32;
    *gh = *gw = 1;
    for (int64_t r = 0; r < tg_shape(b)[0]; r++) {
        const double *q = (const double *)v + 4 * r;
        double g[2];
        for (int k = 0; k < 2; k++) { /* k = 0: x (width), 1: y (height) */
            double lo = q[k] * sp->scale - sp->offset, hi = q[k + 2] * sp->scale - sp->offset;
            double len = hi - lo, bins = (double)(k ? sp->ph : sp->pw);
            if (single)
                len = (double)((float)((float)q[k + 2] * (float)sp->scale - (float)sp->offset) -
                               (float)((float)q[k] * (float)sp->scale - (float)sp->offset));
            if (sp->offset == 0 && len < 1)
                len = 1;
            g[k] = single ? ceil((double)((float)len / (float)bins)) : ceil(len / bins);
            if (!(g[k] <= 4096))
                return onnx_err(c, TG_ERR_UNSUPPORTED, "box %lld would take %g samples per "
                                "bin along one axis (at most 4096)", (long long)r, g[k]);
        }
        *gw = g[0] > *gw ? (int64_t)g[0] : *gw;
        *gh = g[1] > *gh ? (int64_t)g[1] : *gh;
    }
    return TG_OK;
}

/* a box's sample positions along one axis: [R, bins, G] for column k
 * (0: x, 1: y) of rois, and the mask of the samples inside its own grid */
static tg_tensor *roi_positions(const roi_spec *sp, tg_tensor *rois, int k, int64_t bins,
                                int64_t G, tg_tensor **valid, tg_tensor **count)
{
    int64_t R = tg_shape(rois)[0];
    tg_dtype dt = tg_dtype_of(rois);
    int64_t r11[3] = {R, 1, 1};
    tg_tensor *lo = tg_add_scalar(tg_mul_scalar(tg_slice(rois, 1, k, k + 1, 1), sp->scale),
                                  -sp->offset);
    tg_tensor *hi = tg_add_scalar(tg_mul_scalar(tg_slice(rois, 1, k + 2, k + 3, 1),
                                                sp->scale), -sp->offset);
    tg_tensor *len = tg_sub(hi, lo);
    if (sp->offset == 0) /* output_half_pixel: boxes at least 1 pixel */
        len = tg_maximum(len, tg_scalar(dt, 1));
    /* torchvision divides (roi_height / pooled_height) in the boxes' type */
    tg_tensor *bin = tg_reshape(tg_div(len, tg_scalar(dt, (double)bins)), 3, r11);
    /* bin's shape, whose R may be known only when the graph runs */
    tg_tensor *grid = sp->ratio > 0
                          ? tg__expand_as(tg_full(dt, 3, (int64_t[]){1, 1, 1}, (double)sp->ratio), bin)
                          : tg_ceil(bin);
    int tok = onnx_eager_begin();
    tg_tensor *a = tg_reshape(tg_arange(dt, 0, (double)bins, 1), 3, (int64_t[]){1, bins, 1});
    tg_tensor *i = tg_reshape(tg_arange(dt, 0, (double)G, 1), 3, (int64_t[]){1, 1, G});
    onnx_eager_end(tok);
    *valid = tg_expand(tg_lt(i, grid), 3, (int64_t[]){R, bins, G});
    *count = grid;
    tg_tensor *start = tg_add(tg_reshape(lo, 3, r11), tg_mul(a, bin));
    return tg_add(start, tg_div(tg_mul(tg_add_scalar(i, 0.5), bin), grid));
}

/* torchvision's bilinear_interpolate clamping: below 0 reads row 0, at or
 * past size - 1 reads the last row with no fraction; *out marks the
 * positions past (-1, size), which give 0 */
static void roi_clamp(tg_tensor *p, int64_t size, tg_tensor **low, tg_tensor **high,
                      tg_tensor **frac, tg_tensor **out)
{
    tg_dtype dt = tg_dtype_of(p);
    double last = (double)(size - 1);
    *out = tg_logical_or(tg_lt(p, tg_scalar(dt, -1)), tg_gt(p, tg_scalar(dt, (double)size)));
    tg_tensor *q = tg_maximum(p, tg_scalar(dt, 0));
    tg_tensor *l = tg_floor(q), *top = tg_ge(l, tg_scalar(dt, last));
    *low = tg_where(top, tg_scalar(dt, last), l);
    *high = tg_where(top, tg_scalar(dt, last), tg_add_scalar(l, 1));
    *frac = tg_where(top, tg_scalar(dt, 0), tg_sub(q, l));
}

static tg_status roi_attrs(onnx_ictx *c, roi_spec *sp)
{
    const char *mode, *ctm = "output_half_pixel";
    tg_status s = oa_string(c, "mode", "avg", &mode);
    if (s == TG_OK)
        s = oa_int(c, "output_height", 1, &sp->ph);
    if (s == TG_OK)
        s = oa_int(c, "output_width", 1, &sp->pw);
    if (s == TG_OK)
        s = oa_int(c, "sampling_ratio", 0, &sp->ratio);
    if (s == TG_OK)
        s = oa_float(c, "spatial_scale", 1.0, &sp->scale);
    if (s == TG_OK && c->version >= 16)
        s = oa_string(c, "coordinate_transformation_mode", "half_pixel", &ctm);
    if (s != TG_OK)
        return s;
    if (strcmp(mode, "avg"))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "mode '%s' is not supported (avg is)", mode);
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return onnx_err(c, TG_ERR_IO, "coordinate_transformation_mode '%s': expected "
                        "half_pixel or output_half_pixel", ctm);
    if (sp->ph < 1 || sp->pw < 1 || sp->ph > 4096 || sp->pw > 4096 || sp->ratio < 0 ||
        sp->ratio > 4096 || !isfinite(sp->scale))
        return onnx_err(c, TG_ERR_IO, "output_height/width should be in [1, 4096], "
                        "sampling_ratio in [0, 4096], spatial_scale finite");
    sp->offset = strcmp(ctm, "half_pixel") ? 0.0 : 0.5;
    return TG_OK;
}

tg_status misc_roi_align(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *rois = x ? oi_req(c, 1, "rois") : NULL;
    tg_tensor *bi = rois ? oi_req(c, 2, "batch_indices") : NULL;
    roi_spec sp;
    tg_status s = bi ? roi_attrs(c, &sp) : tg_last_status();
    if (s != TG_OK)
        return s;
    const int64_t *xs = tg_shape(x);
    /* R may be known only when the graph runs (boxes a NonZero selected):
     * -1, which the reshapes below keep in place */
    int64_t R = tg_ndim(rois) == 2 ? tg_shape(rois)[0] : -2;
    if (tg_ndim(x) != 4 || !tg_dtype_is_float(tg_dtype_of(x)) || R < -1 ||
        tg_shape(rois)[1] != 4 || tg_dtype_of(rois) != tg_dtype_of(x) ||
        tg_ndim(bi) != 1 || (tg_shape(bi)[0] != R && R >= 0 && tg_shape(bi)[0] >= 0) ||
        (tg_dtype_of(bi) != TG_INT64 && tg_dtype_of(bi) != TG_INT32))
        return onnx_err(c, TG_ERR_IO, "X should be float [N, C, H, W], rois [R, 4] of X's "
                        "type, batch_indices int64 [R]");
    if (!xs[2] || !xs[3])
        return onnx_err(c, TG_ERR_IO, "X has an empty spatial dim");
    tg_tensor *known = misc_value(c, 2);
    if (known) {
        void *v;
        bool f;
        if ((s = misc_host_values(c, known, &v, &f)) != TG_OK)
            return s;
        for (int64_t r = 0; r < R; r++)
            if (((int64_t *)v)[r] < 0 || ((int64_t *)v)[r] >= xs[0])
                return onnx_err(c, TG_ERR_IO, "batch_indices[%lld] = %lld is outside [0, "
                                "%lld)", (long long)r, (long long)((int64_t *)v)[r],
                                (long long)xs[0]);
    }
    int64_t GH = sp.ratio, GW = sp.ratio;
    if (!sp.ratio && (s = roi_max_grid(c, &sp, &GH, &GW)) != TG_OK)
        return s;
    int64_t P = sp.ph * GH * sp.pw * GW;
    if ((s = onnx_check_numel(c, 3, (int64_t[]){R < 0 ? 1 : R, xs[1], P}, "the samples")) != TG_OK)
        return s;
    tg_tensor *vy, *vx, *cy, *cx;
    tg_tensor *py = roi_positions(&sp, rois, 1, sp.ph, GH, &vy, &cy);
    tg_tensor *px = roi_positions(&sp, rois, 0, sp.pw, GW, &vx, &cx);
    tg_tensor *yl, *yh, *ly, *oy, *xl, *xh, *lx, *ox;
    roi_clamp(py, xs[2], &yl, &yh, &ly, &oy);
    roi_clamp(px, xs[3], &xl, &xh, &lx, &ox);
    /* [R, ph, GH] against [R, pw, GW] as [R, ph, GH, 1, 1] and [R, 1, 1, pw, GW] */
    int64_t ys[5] = {R, sp.ph, GH, 1, 1}, xs5[5] = {R, 1, 1, sp.pw, GW};
    int64_t full[5] = {R, sp.ph, GH, sp.pw, GW}, rp[2] = {R, P};
    #define AS_Y(t) tg_reshape(t, 5, ys)
    #define AS_X(t) tg_reshape(t, 5, xs5)
    #define FLAT(t) tg_reshape(tg_expand(t, 5, full), 2, rp)
    tg_tensor *keep = tg_logical_and(tg_logical_and(AS_Y(vy), AS_X(vx)),
                                     tg_logical_not(tg_logical_or(AS_Y(oy), AS_X(ox))));
    tg_dtype dt = tg_dtype_of(rois);
    tg_tensor *k = tg_where(keep, tg_scalar(dt, 1), tg_scalar(dt, 0));
    tg_tensor *hy = tg_add_scalar(tg_neg(ly), 1), *hx = tg_add_scalar(tg_neg(lx), 1);
    image im = {.R = R, .C = xs[1], .H = xs[2], .W = xs[3], .P = P};
    im.x = tg_index_select(tg_reshape(x, 3, (int64_t[]){xs[0], xs[1], xs[2] * xs[3]}), 0,
                           onnx_as(bi, TG_INT64));
    tg_tensor *rows[2] = {yl, yh}, *cols[2] = {xl, xh}, *wr[2] = {hy, ly}, *wc[2] = {hx, lx};
    tg_tensor *sum = NULL;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            tg_tensor *w = FLAT(tg_mul(k, tg_mul(AS_Y(wr[j]), AS_X(wc[i]))));
            sum = add_to(sum, tap(&im, FLAT(AS_Y(rows[j])), FLAT(AS_X(cols[i])), w));
        }
    #undef AS_Y
    #undef AS_X
    #undef FLAT
    if (!sum)
        return tg_last_status();
    int axes[2] = {3, 5};
    tg_tensor *bins = tg_sum(tg_reshape(sum, 6, (int64_t[]){R, xs[1], sp.ph, GH, sp.pw, GW}),
                             2, axes, false);
    tg_tensor *count = tg_maximum(tg_mul(tg_reshape(cy, 1, &R), tg_reshape(cx, 1, &R)),
                                  tg_scalar(dt, 1));
    count = onnx_as(tg_reshape(count, 4, (int64_t[]){R, 1, 1, 1}), tg_dtype_of(x));
    return misc_done(c, tg_div(bins, count));
}
