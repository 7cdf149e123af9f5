/* ONNX neural-network ops -> tensorgraph: Conv, pools (tg's 2-D pools or a
 * strided-slice composite), Gemm, MatMul, Softmax, normalisations, Dropout. */
#include "onnx/ops.h"

#include "ops/op.h"

#include <math.h>
#include <string.h>

static tg_status done(onnx_ictx *c, int i, tg_tensor *y)
{
    c->out[i] = y;
    return y ? TG_OK : tg_last_status();
}

static bool wants(const onnx_ictx *c, int i)
{
    return i < c->n_out && c->node->output[i] && c->node->output[i][0];
}

/* ---- spatial geometry shared by Conv and the pools --------------------------------- */
typedef struct geom {
    int nsp;                    /* spatial dims */
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
    bool ceil_mode;
} geom;

/* reads kernel (given), strides, dilations, pads / auto_pad; computes the
 * output size with ONNX's formula */
static tg_status read_geom(onnx_ictx *c, const tg_tensor *x, const int64_t *kernel,
                           bool dilations, geom *g)
{
    int nsp = tg_ndim(x) - 2;
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    const int64_t *v;
    int n;
    tg_status s;
    for (int i = 0; i < nsp; i++) {
        g->in[i] = tg_shape(x)[2 + i];
        g->k[i] = kernel[i];
        g->s[i] = g->d[i] = 1;
        if (g->k[i] < 1 || g->k[i] > INT32_MAX)
            return onnx_err(c, TG_ERR_IO, "kernel size %lld must be in [1, 2^31)",
                            (long long)g->k[i]);
    }
    if ((s = oa_ints(c, "strides", &v, &n)) != TG_OK)
        return s;
    if (n >= 0 && n != nsp)
        return onnx_err(c, TG_ERR_IO, "strides has %d values for %d spatial dims", n, nsp);
    for (int i = 0; i < n; i++)
        if ((g->s[i] = v[i]) < 1 || v[i] > INT32_MAX)
            return onnx_err(c, TG_ERR_IO, "strides must be in [1, 2^31)");
    if (dilations) {
        if ((s = oa_ints(c, "dilations", &v, &n)) != TG_OK)
            return s;
        if (n >= 0 && n != nsp)
            return onnx_err(c, TG_ERR_IO, "dilations has %d values for %d spatial dims", n,
                            nsp);
        for (int i = 0; i < n; i++)
            if ((g->d[i] = v[i]) < 1 || v[i] > INT32_MAX)
                return onnx_err(c, TG_ERR_IO, "dilations must be in [1, 2^31)");
    }
    int64_t ceil_mode = 0;
    if (onnx_attr(c, "ceil_mode") && (s = oa_int(c, "ceil_mode", 0, &ceil_mode)) != TG_OK)
        return s;
    g->ceil_mode = ceil_mode != 0;
    const char *pad;
    if ((s = oa_string(c, "auto_pad", "NOTSET", &pad)) != TG_OK)
        return s;
    if ((s = oa_ints(c, "pads", &v, &n)) != TG_OK)
        return s;
    bool same = !strcmp(pad, "SAME_UPPER") || !strcmp(pad, "SAME_LOWER");
    if (!strcmp(pad, "NOTSET")) {
        if (n >= 0 && n != 2 * nsp)
            return onnx_err(c, TG_ERR_IO, "pads has %d values, expected %d", n, 2 * nsp);
        for (int i = 0; i < n; i++)
            if (v[i] < 0 || v[i] > INT32_MAX)
                return onnx_err(c, TG_ERR_IO, "pads must be in [0, 2^31)");
        for (int i = 0; i < nsp && n > 0; i++) {
            g->pb[i] = v[i];
            g->pe[i] = v[nsp + i];
        }
    } else if (!same && strcmp(pad, "VALID")) {
        return onnx_err(c, TG_ERR_IO, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER "
                        "or VALID", pad);
    }
    /* plain arithmetic is safe here: kernels, strides, dilations and pads
     * are below 2^31 and dims at most ONNX_IMPORT_MAX_ELEMENTS (2^28), so
     * no product below reaches 2^63 */
    for (int i = 0; i < nsp; i++) {
        int64_t ext = (g->k[i] - 1) * g->d[i] + 1;
        if (same) {
            g->out[i] = (g->in[i] + g->s[i] - 1) / g->s[i];
            int64_t total = (g->out[i] - 1) * g->s[i] + ext - g->in[i];
            if (total < 0)
                total = 0;
            g->pb[i] = !strcmp(pad, "SAME_UPPER") ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
            continue;
        }
        int64_t num = g->in[i] + g->pb[i] + g->pe[i] - ext;
        if (num < 0)
            return onnx_err(c, TG_ERR_SHAPE, "the kernel (extent %lld) is larger than the "
                            "padded input (%lld) in spatial dim %d", (long long)ext,
                            (long long)(g->in[i] + g->pb[i] + g->pe[i]), i);
        g->out[i] = (g->ceil_mode ? (num + g->s[i] - 1) / g->s[i] : num / g->s[i]) + 1;
        /* a ceil_mode window that would start past the input and its left
         * padding reads nothing and is dropped, as onnx's later spec text
         * (its case maxpool_2d_ceil_output_size_reduce_by_one), onnxruntime
         * and PyTorch do */
        if (g->ceil_mode && g->out[i] > 1 && (g->out[i] - 1) * g->s[i] >= g->in[i] + g->pb[i])
            g->out[i]--;
    }
    return TG_OK;
}

static bool unit(const int64_t *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] != 1)
            return false;
    return true;
}

/* zero (or `value`) padding of the spatial dims of x [N, C, ...] */
static tg_tensor *pad_spatial(tg_tensor *x, const geom *g, const int64_t *extra, double value)
{
    int64_t pads[2 * TG_MAX_DIMS] = {0};
    bool any = false;
    for (int i = 0; i < g->nsp; i++) {
        pads[2 * (2 + i)] = g->pb[i];
        pads[2 * (2 + i) + 1] = g->pe[i] + (extra ? extra[i] : 0);
        any = any || pads[2 * (2 + i)] || pads[2 * (2 + i) + 1];
    }
    return any ? tg_pad(x, 2 * (2 + g->nsp), pads, value) : x;
}

/* ---- Conv --------------------------------------------------------------------------- */
static tg_status n_conv(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *w = x ? oi_req(c, 1, "W") : NULL;
    tg_tensor *b = c->n_in > 2 ? c->in[2] : NULL;
    if (!w)
        return tg_last_status();
    int nsp = tg_ndim(x) - 2;
    if (nsp < 1 || nsp > 3)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "%d-D convolution is not supported (1-D "
                        "to 3-D are)", nsp);
    if (tg_ndim(w) != nsp + 2)
        return onnx_err(c, TG_ERR_IO, "W has rank %d, expected %d", tg_ndim(w), nsp + 2);
    int64_t group;
    const int64_t *ks;
    int nk;
    tg_status s = oa_int(c, "group", 1, &group);
    if (s == TG_OK)
        s = oa_ints(c, "kernel_shape", &ks, &nk);
    if (s != TG_OK)
        return s;
    if (nk >= 0 && (nk != nsp || memcmp(ks, tg_shape(w) + 2, (size_t)nsp * 8)))
        return onnx_err(c, TG_ERR_IO, "kernel_shape does not match W");
    if (group < 1 || group > INT32_MAX)
        return onnx_err(c, TG_ERR_IO, "group %lld must be positive", (long long)group);
    geom g;
    if ((s = read_geom(c, x, tg_shape(w) + 2, true, &g)) != TG_OK)
        return s;
    if (nsp == 3) {
        tg_conv3d_opts o = {.groups = (int)group};
        bool sym = true;
        for (int i = 0; i < 3; i++) {
            o.stride[i] = (int)g.s[i];
            o.dilation[i] = (int)g.d[i];
            o.padding[i] = (int)g.pb[i];
            sym = sym && g.pb[i] == g.pe[i];
        }
        if (!sym) { /* asymmetric pads: padded first */
            x = pad_spatial(x, &g, NULL, 0);
            memset(o.padding, 0, sizeof o.padding);
        }
        return done(c, 0, tg_conv3d(x, w, b, &o));
    }
    if (nsp == 1) { /* [N, C, L] as [N, C, 1, L] */
        x = tg_unsqueeze(x, 2);
        w = tg_unsqueeze(w, 2);
        g = (geom){.nsp = 2, .in = {1, g.in[0]}, .k = {1, g.k[0]}, .s = {1, g.s[0]},
                   .d = {1, g.d[0]}, .pb = {0, g.pb[0]}, .pe = {0, g.pe[0]},
                   .out = {1, g.out[0]}};
    }
    tg_conv2d_opts o = {.groups = (int)group};
    for (int i = 0; i < 2; i++) {
        o.stride[i] = (int)g.s[i];
        o.dilation[i] = (int)g.d[i];
    }
    if (g.pb[0] == g.pe[0] && g.pb[1] == g.pe[1]) {
        o.padding[0] = (int)g.pb[0];
        o.padding[1] = (int)g.pb[1];
    } else {
        x = pad_spatial(x, &g, NULL, 0);
    }
    tg_tensor *y = tg_conv2d(x, w, b, &o);
    if (y && nsp == 1)
        y = tg_squeeze(y, 2);
    return done(c, 0, y);
}

/* ---- pools --------------------------------------------------------------------------- */
/* the window offsets along every spatial dim, one strided slice each:
 * y = reduce over the offsets of x_padded[j*d : j*d + (out-1)*s + 1 : s] */
static tg_tensor *pool_slices(tg_tensor *xp, const geom *g, bool max)
{
    int64_t total = 1;
    for (int i = 0; i < g->nsp; i++)
        total *= g->k[i];
    tg_tensor *acc = NULL;
    for (int64_t t = 0; t < total; t++) {
        int64_t r = t;
        tg_tensor *v = xp;
        for (int i = g->nsp - 1; i >= 0; i--) {
            int64_t j = r % g->k[i];
            r /= g->k[i];
            int64_t start = j * g->d[i];
            v = tg_slice(v, 2 + i, start, start + (g->out[i] - 1) * g->s[i] + 1, g->s[i]);
        }
        acc = !acc ? v : max ? tg_maximum(acc, v) : tg_add(acc, v);
        if (!acc)
            return NULL;
    }
    return acc;
}

/* extra end padding so that ceil_mode's last windows exist */
static void ceil_extra(const geom *g, int64_t *extra)
{
    for (int i = 0; i < g->nsp; i++) {
        int64_t need = (g->out[i] - 1) * g->s[i] + (g->k[i] - 1) * g->d[i] + 1;
        int64_t have = g->in[i] + g->pb[i] + g->pe[i];
        extra[i] = need > have ? need - have : 0;
    }
}

static tg_tensor *generic_max(tg_tensor *x, const geom *g)
{
    int64_t extra[3] = {0, 0, 0};
    ceil_extra(g, extra);
    tg_dtype dt = tg_dtype_of(x);
    tg_tensor *xf = tg_dtype_is_float(dt) ? x : tg_cast(x, TG_FLOAT64);
    tg_tensor *y = pool_slices(pad_spatial(xf, g, extra, -INFINITY), g, true);
    return onnx_as(y, dt);
}

static tg_tensor *generic_avg(tg_tensor *x, const geom *g, bool include_pad)
{
    int64_t extra[3] = {0, 0, 0};
    ceil_extra(g, extra);
    tg_tensor *sum = pool_slices(pad_spatial(x, g, extra, 0), g, false);
    /* the divisor per output position: window cells inside the input, and
     * inside the explicit pads with count_include_pad (never the cells
     * ceil_mode adds); a constant, computed eagerly */
    int tok = onnx_eager_begin();
    int64_t shape[TG_MAX_DIMS] = {1, 1};
    for (int i = 0; i < g->nsp; i++)
        shape[2 + i] = g->in[i];
    tg_tensor *mask = tg_ones(tg_dtype_of(x), 2 + g->nsp, shape);
    if (include_pad) {
        geom nopad = *g;
        memset(nopad.pb, 0, sizeof nopad.pb);
        memset(nopad.pe, 0, sizeof nopad.pe);
        mask = pad_spatial(pad_spatial(mask, g, NULL, 1), &nopad, extra, 0);
    } else {
        mask = pad_spatial(mask, g, extra, 0);
    }
    tg_tensor *count = pool_slices(mask, g, false);
    onnx_eager_end(tok);
    return tg_div(sum, count);
}

/* ONNX pool geometry that tg's 2-D (nd 2) or 3-D (nd 3) pools compute
 * identically */
static bool fast_pool_nd(const tg_tensor *x, const geom *g, bool want_float, int nd)
{
    if (g->nsp != nd || !unit(g->d, nd) || (want_float && !tg_dtype_is_float(tg_dtype_of(x))))
        return false;
    for (int i = 0; i < nd; i++) {
        if (g->pb[i] != g->pe[i] || 2 * g->pb[i] > g->k[i])
            return false;
        /* PyTorch drops a ceil_mode window starting in the right padding */
        int64_t num = g->in[i] + 2 * g->pb[i] - g->k[i];
        int64_t o = (g->ceil_mode ? (num + g->s[i] - 1) / g->s[i] : num / g->s[i]) + 1;
        if (g->ceil_mode && o > 0 && (o - 1) * g->s[i] >= g->in[i] + g->pb[i])
            o--;
        if (o != g->out[i])
            return false;
    }
    return true;
}

static bool fast_pool(const tg_tensor *x, const geom *g, bool want_float)
{
    return fast_pool_nd(x, g, want_float, 2);
}

static bool fast_pool3(const tg_tensor *x, const geom *g, bool want_float)
{
    return fast_pool_nd(x, g, want_float, 3);
}

static tg_pool3d_opts pool3_opts(const geom *g, bool include_pad)
{
    tg_pool3d_opts o = {.ceil_mode = g->ceil_mode, .count_include_pad = include_pad};
    for (int i = 0; i < 3; i++) {
        o.kernel[i] = (int)g->k[i];
        o.stride[i] = (int)g->s[i];
        o.padding[i] = (int)g->pb[i];
    }
    return o;
}

/* a 1-D geometry as the 2-D one of [N, C, 1, L] (a unit first dim) */
static geom lift_1d(const geom *g)
{
    return (geom){.nsp = 2, .in = {1, g->in[0]}, .k = {1, g->k[0]}, .s = {1, g->s[0]},
                  .d = {1, g->d[0]}, .pb = {0, g->pb[0]}, .pe = {0, g->pe[0]},
                  .out = {1, g->out[0]}, .ceil_mode = g->ceil_mode};
}

static tg_status pool_geom(onnx_ictx *c, tg_tensor *x, bool dilations, geom *g)
{
    const int64_t *ks;
    int nk;
    tg_status s = oa_ints(c, "kernel_shape", &ks, &nk);
    if (s != TG_OK)
        return s;
    int nsp = tg_ndim(x) - 2;
    if (nsp < 1 || nsp > 3)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "pooling over %d spatial dims is not "
                        "supported (1 to 3 are)", nsp);
    if (nk != nsp)
        return onnx_err(c, TG_ERR_IO, "kernel_shape (required) should have %d values", nsp);
    return read_geom(c, x, ks, dilations, g);
}

/* the composite pools make one slice per window cell: bounded */
static tg_status generic_ok(onnx_ictx *c, const geom *g)
{
    int64_t window = 1;
    for (int i = 0; i < g->nsp; i++) {
        window *= g->k[i];
        if (window > ONNX_MAX_POOL_WINDOW)
            return onnx_err(c, TG_ERR_UNSUPPORTED, "this pooling geometry (padding, "
                            "dilation, ceil_mode or rank) with a window of more than %d "
                            "cells is not supported", ONNX_MAX_POOL_WINDOW);
    }
    return TG_OK;
}

static tg_status pool2d_max(onnx_ictx *c, tg_tensor *x, const geom *gp);
static tg_status pool3d_max_indices(onnx_ictx *c, tg_tensor *x, const geom *g);

static tg_status n_maxpool(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    geom g;
    tg_status s = x ? pool_geom(c, x, true, &g) : tg_last_status();
    if (s != TG_OK)
        return s;
    /* 1-D: tg's 2-D pool on [N, C, 1, L] when it computes the same */
    geom g2 = g.nsp == 1 ? lift_1d(&g) : g;
    if (g.nsp == 1 && fast_pool(x, &g2, wants(c, 1))) {
        /* Indices in [N, C, L] are n*C*L + c*L + l, the same as in [N, C, 1, L]
         * (either storage order, with a unit height) */
        onnx_ictx c2 = *c;
        c2.in[0] = tg_unsqueeze(x, 2);
        if ((s = pool2d_max(&c2, c2.in[0], &g2)) != TG_OK)
            return s;
        for (int i = 0; i < 2; i++)
            c->out[i] = c2.out[i] ? tg_squeeze(c2.out[i], 2) : NULL;
        return c->out[0] ? TG_OK : tg_last_status();
    }
    if (g.nsp == 3 && !wants(c, 1) && fast_pool3(x, &g, false)) {
        tg_dtype dt = tg_dtype_of(x);
        tg_tensor *xf = tg_dtype_is_float(dt) ? x : tg_cast(x, TG_FLOAT64);
        tg_pool3d_opts o = pool3_opts(&g, false);
        return done(c, 0, onnx_as(tg_max_pool3d(xf, &o), dt));
    }
    if (g.nsp == 3 && wants(c, 1) && fast_pool3(x, &g, true))
        return pool3d_max_indices(c, x, &g);
    return pool2d_max(c, x, &g);
}

/* 3-D MaxPool with Indices (row-major storage only): max_pool3d's
 * positions in the D*H*W volume plus each volume's offset in the input */
static tg_status pool3d_max_indices(onnx_ictx *c, tg_tensor *x, const geom *g)
{
    int64_t so;
    tg_status s = oa_int(c, "storage_order", 0, &so);
    if (s != TG_OK)
        return s;
    if (so)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "3-D MaxPool Indices in column-major "
                        "storage_order are not supported");
    const tg_op_def *op = tg_op_find("max_pool3d");
    int64_t v[9];
    for (int i = 0; i < 3; i++) {
        v[i] = g->k[i];
        v[3 + i] = g->s[i];
        v[6 + i] = g->pb[i];
    }
    tg_attr a[4] = {TG_AINTS("kernel", v, 3), TG_AINTS("stride", v + 3, 3),
                    TG_AINTS("padding", v + 6, 3), TG_AI("ceil_mode", g->ceil_mode)};
    tg_tensor *out[2];
    if (!op || tg_op_run(op, 1, &x, a, 4, out) != TG_OK)
        return tg_last_status();
    int64_t N = tg_shape(x)[0], C = tg_shape(x)[1], vol = g->in[0] * g->in[1] * g->in[2];
    int tok = onnx_eager_begin();
    tg_tensor *base = tg_reshape(tg_arange(TG_INT64, 0, (double)(N * C * vol), (double)vol), 5,
                                 (int64_t[]){N, C, 1, 1, 1});
    onnx_eager_end(tok);
    c->out[0] = out[0];
    return done(c, 1, tg_add(out[1], base));
}

/* MaxPool with the geometry g (1-D lifted to 2-D, 2-D, or 3-D) */
static tg_status pool2d_max(onnx_ictx *c, tg_tensor *x, const geom *gp)
{
    geom g = *gp;
    tg_status s;
    tg_pool2d_opts o = {.kernel = {(int)g.k[0], (int)g.k[1]},
                        .stride = {(int)g.s[0], (int)g.s[1]},
                        .padding = {(int)g.pb[0], (int)g.pb[1]}, .ceil_mode = g.ceil_mode};
    if (!wants(c, 1)) {
        if (fast_pool(x, &g, false)) {
            tg_dtype dt = tg_dtype_of(x);
            tg_tensor *xf = tg_dtype_is_float(dt) ? x : tg_cast(x, TG_FLOAT64);
            return done(c, 0, onnx_as(tg_max_pool2d(xf, &o), dt));
        }
        return generic_ok(c, &g) != TG_OK ? tg_last_status() : done(c, 0, generic_max(x, &g));
    }
    /* Indices: flattened positions in the whole input (N, C, H, W) */
    if (!fast_pool(x, &g, true))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "the Indices output needs a 1-D to 3-D float "
                        "pool with symmetric pads at most half the kernel and no dilation");
    int64_t so;
    if ((s = oa_int(c, "storage_order", 0, &so)) != TG_OK)
        return s;
    const tg_op_def *op = tg_op_find("max_pool2d");
    int64_t v[6] = {g.k[0], g.k[1], g.s[0], g.s[1], g.pb[0], g.pb[1]};
    tg_attr a[4] = {TG_AINTS("kernel", v, 2), TG_AINTS("stride", v + 2, 2),
                    TG_AINTS("padding", v + 4, 2), TG_AI("ceil_mode", g.ceil_mode)};
    tg_tensor *out[2];
    if (!op || tg_op_run(op, 1, &x, a, 4, out) != TG_OK)
        return tg_last_status();
    int64_t N = tg_shape(x)[0], C = tg_shape(x)[1], plane = g.in[0] * g.in[1];
    int tok = onnx_eager_begin();
    tg_tensor *base = tg_reshape(tg_arange(TG_INT64, 0, (double)(N * C * plane), (double)plane),
                                 4, (int64_t[]){N, C, 1, 1});
    onnx_eager_end(tok);
    tg_tensor *idx = out[1]; /* h * W + w within the plane */
    if (so) { /* column major: w * H + h */
        tg_tensor *p = tg_cast(idx, TG_FLOAT64);
        tg_tensor *h = tg_floor(tg_div(p, tg_scalar(TG_FLOAT64, (double)g.in[1])));
        tg_tensor *w = tg_sub(p, tg_mul(h, tg_scalar(TG_FLOAT64, (double)g.in[1])));
        idx = tg_cast(tg_add(tg_mul(w, tg_scalar(TG_FLOAT64, (double)g.in[0])), h), TG_INT64);
    }
    c->out[0] = out[0];
    return done(c, 1, tg_add(idx, base));
}

static tg_status n_avgpool(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    geom g;
    tg_status s = x ? pool_geom(c, x, false, &g) : tg_last_status();
    int64_t cip;
    if (s == TG_OK)
        s = oa_int(c, "count_include_pad", 0, &cip);
    if (s != TG_OK)
        return s;
    geom g2 = g.nsp == 1 ? lift_1d(&g) : g;
    if (g.nsp == 1 && !g.ceil_mode && fast_pool(x, &g2, true)) {
        tg_pool1d_opts o = {.kernel = (int)g.k[0], .stride = (int)g.s[0],
                            .padding = (int)g.pb[0], .count_include_pad = cip != 0};
        return done(c, 0, tg_avg_pool1d(x, &o));
    }
    if (!g.ceil_mode && fast_pool3(x, &g, true)) {
        tg_pool3d_opts o = pool3_opts(&g, cip != 0);
        return done(c, 0, tg_avg_pool3d(x, &o));
    }
    /* with ceil_mode PyTorch's divisors differ from ONNX's: composite */
    if (!g.ceil_mode && fast_pool(x, &g, true)) {
        tg_pool2d_opts o = {.kernel = {(int)g.k[0], (int)g.k[1]},
                            .stride = {(int)g.s[0], (int)g.s[1]},
                            .padding = {(int)g.pb[0], (int)g.pb[1]},
                            .count_include_pad = cip != 0};
        return done(c, 0, tg_avg_pool2d(x, &o));
    }
    if (!tg_dtype_is_float(tg_dtype_of(x)))
        return onnx_err(c, TG_ERR_DTYPE, "AveragePool needs a floating-point input");
    if ((s = generic_ok(c, &g)) != TG_OK)
        return s;
    return done(c, 0, generic_avg(x, &g, cip != 0));
}

/* the p of LpPool and GlobalLpPool (an int from version 2, the one in
 * opset 7), positive */
tg_status onnx_lp_order(onnx_ictx *c, double *p)
{
    int64_t ip = 2;
    tg_status s = oa_int(c, "p", 2, &ip);
    *p = (double)ip;
    if (s == TG_OK && ip < 1)
        return onnx_err(c, TG_ERR_IO, "p must be positive, got %lld", (long long)ip);
    return s;
}

/* LpPool: (sum over the window of |x|^p)^(1/p), the padding adding 0: the
 * window sums of the composite pools over |x|^p */
static tg_status n_lppool(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    geom g;
    double p;
    tg_status s = x ? pool_geom(c, x, false, &g) : tg_last_status();
    if (s == TG_OK)
        s = onnx_lp_order(c, &p);
    if (s == TG_OK && !tg_dtype_is_float(tg_dtype_of(x)))
        return onnx_err(c, TG_ERR_DTYPE, "LpPool needs a floating-point input");
    if (s != TG_OK || (s = generic_ok(c, &g)) != TG_OK)
        return s;
    int64_t extra[3] = {0, 0, 0};
    ceil_extra(&g, extra);
    tg_tensor *powers = tg_pow_scalar(tg_abs(x), p);
    tg_tensor *sums = pool_slices(pad_spatial(powers, &g, extra, 0), &g, false);
    return done(c, 0, tg_pow_scalar(sums, 1 / p));
}

static tg_status n_global_avg(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    if (!x)
        return tg_last_status();
    int r = tg_ndim(x);
    if (r == 4)
        return done(c, 0, tg_global_avg_pool2d(x));
    if (r < 3)
        return onnx_err(c, TG_ERR_SHAPE, "X should be [N, C, spatial...], has rank %d", r);
    int axes[TG_MAX_DIMS];
    for (int i = 2; i < r; i++)
        axes[i - 2] = i;
    return done(c, 0, tg_mean(x, r - 2, axes, true));
}

/* ---- matrix products -------------------------------------------------------------------- */
static tg_status n_gemm(onnx_ictx *c)
{
    tg_tensor *a = oi_req(c, 0, "A"), *b = a ? oi_req(c, 1, "B") : NULL;
    tg_tensor *cc = c->n_in > 2 ? c->in[2] : NULL;
    if (!b)
        return tg_last_status();
    double alpha, beta;
    int64_t ta, tb;
    tg_status s = oa_float(c, "alpha", 1.0, &alpha);
    if (s == TG_OK)
        s = oa_float(c, "beta", 1.0, &beta);
    if (s == TG_OK)
        s = oa_int(c, "transA", 0, &ta);
    if (s == TG_OK)
        s = oa_int(c, "transB", 0, &tb);
    if (s != TG_OK)
        return s;
    return done(c, 0, tg_gemm(a, b, cc, alpha, beta, ta != 0, tb != 0));
}

static tg_status n_matmul(onnx_ictx *c)
{
    tg_tensor *a = oi_req(c, 0, "A"), *b = a ? oi_req(c, 1, "B") : NULL;
    return b ? done(c, 0, tg_matmul(a, b)) : tg_last_status();
}

/* ---- softmax ------------------------------------------------------------------------------ */
static tg_status softmax_like(onnx_ictx *c, bool log)
{
    tg_tensor *x = oi_req(c, 0, "input");
    if (!x)
        return tg_last_status();
    int r = tg_ndim(x), axis;
    int64_t a;
    tg_status s = oa_int(c, "axis", c->version >= 13 ? -1 : 1, &a);
    if (s == TG_OK)
        s = onnx_axis(c, a, r > 0 ? r : 1, "axis", &axis);
    if (s != TG_OK)
        return s;
    tg_tensor *(*fn)(tg_tensor *, int) = log ? tg_log_softmax : tg_softmax;
    if (r == 0)
        return done(c, 0, tg_reshape(fn(tg_reshape(x, 1, (int64_t[]){1}), 0), 0, NULL));
    if (c->version >= 13 || axis == r - 1)
        return done(c, 0, fn(x, axis));
    /* opset < 13: the input is seen as 2-D [prod(dims < axis), prod(dims >= axis)] */
    int64_t rows = 1, cols = 1;
    for (int i = 0; i < r; i++)
        *(i < axis ? &rows : &cols) *= tg_shape(x)[i];
    tg_tensor *y = fn(tg_reshape(x, 2, (int64_t[]){rows, cols}), 1);
    return done(c, 0, tg_reshape(y, r, tg_shape(x)));
}

static tg_status n_softmax(onnx_ictx *c) { return softmax_like(c, false); }
static tg_status n_log_softmax(onnx_ictx *c) { return softmax_like(c, true); }

/* ---- normalisation ---------------------------------------------------------------------- */
/* v [C] -> [1, C, 1, ...] for broadcasting over x of rank r */
static tg_tensor *per_channel(tg_tensor *v, int r)
{
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < r; i++)
        shape[i] = i == 1 ? tg_numel(v) : 1;
    return tg_reshape(v, r, shape);
}

static tg_status n_batchnorm(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *scale = x ? oi_req(c, 1, "scale") : NULL;
    tg_tensor *b = scale ? oi_req(c, 2, "B") : NULL;
    tg_tensor *mean = b ? oi_req(c, 3, "input_mean") : NULL;
    tg_tensor *var = mean ? oi_req(c, 4, "input_var") : NULL;
    if (!var)
        return tg_last_status();
    double eps, momentum;
    int64_t training = 0, spatial = 1;
    tg_status s = oa_float(c, "epsilon", 1e-5, &eps);
    if (s == TG_OK)
        s = oa_float(c, "momentum", 0.9, &momentum);
    if (s == TG_OK && c->version >= 14)
        s = oa_int(c, "training_mode", 0, &training);
    if (s == TG_OK && c->version == 7) /* spatial = 0: statistics per [C, D1, ...] */
        s = oa_int(c, "spatial", 1, &spatial);
    if (s != TG_OK)
        return s;
    if (c->version < 14) /* before training_mode, training is asking for the statistics */
        training = wants(c, 1) || wants(c, 2) || wants(c, 3) || wants(c, 4);
    int r = tg_ndim(x);
    if (r < 2)
        return onnx_err(c, TG_ERR_SHAPE, "X should be [N, C, ...], has rank %d", r);
    if (!spatial && !training) { /* the statistics broadcast over N as they are */
        tg_tensor *y = tg_mul(tg_sub(x, mean), tg_mul(tg_rsqrt(tg_add_scalar(var, eps)), scale));
        return done(c, 0, tg_add(y, b));
    }
    if (!spatial)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "training with spatial = 0 is not supported");
    if (!training) {
        if (c->n_out > 1 && (wants(c, 1) || wants(c, 2)))
            return onnx_err(c, TG_ERR_IO, "outputs mean and var exist in training mode only");
        if (r == 4 || r == 3 || r == 2) {
            tg_tensor *y = tg_batch_norm(x, mean, var, scale, b, false, 1 - momentum, eps);
            if (y || r == 4)
                return done(c, 0, y);
            tg_clear_error();
        }
        tg_tensor *inv = tg_rsqrt(tg_add_scalar(var, eps));
        tg_tensor *y = tg_mul(tg_sub(x, per_channel(mean, r)), per_channel(tg_mul(inv, scale), r));
        return done(c, 0, tg_add(y, per_channel(b, r)));
    }
    /* training mode: normalise with the batch statistics (population
     * variance) and output the updated running statistics */
    int axes[TG_MAX_DIMS], n = 0;
    for (int i = 0; i < r; i++)
        if (i != 1)
            axes[n++] = i;
    tg_tensor *bm = tg_mean(x, n, axes, false);
    tg_tensor *bv = tg_var(x, n, axes, 0, false);
    tg_tensor *inv = tg_rsqrt(tg_add_scalar(bv, eps));
    tg_tensor *y = tg_mul(tg_sub(x, per_channel(bm, r)), per_channel(tg_mul(inv, scale), r));
    c->out[0] = tg_add(y, per_channel(b, r));
    if (wants(c, 1))
        c->out[1] = tg_add(tg_mul_scalar(mean, momentum), tg_mul_scalar(bm, 1 - momentum));
    if (wants(c, 2))
        c->out[2] = tg_add(tg_mul_scalar(var, momentum), tg_mul_scalar(bv, 1 - momentum));
    if (wants(c, 3) || wants(c, 4))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "outputs saved_mean and saved_var (opset "
                        "< 14) are not supported");
    return c->out[0] ? TG_OK : tg_last_status();
}

static tg_status n_layernorm(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *scale = x ? oi_req(c, 1, "Scale") : NULL;
    tg_tensor *b = c->n_in > 2 ? c->in[2] : NULL;
    if (!scale)
        return tg_last_status();
    int64_t a, stash;
    double eps;
    int r = tg_ndim(x), axis;
    tg_status s = oa_int(c, "axis", -1, &a);
    if (s == TG_OK)
        s = oa_float(c, "epsilon", 1e-5, &eps);
    if (s == TG_OK)
        s = oa_int(c, "stash_type", 1, &stash);
    if (s == TG_OK)
        s = onnx_axis(c, a, r, "axis", &axis);
    if (s != TG_OK)
        return s;
    int n = r - axis;
    bool exact = tg_ndim(scale) == n && !memcmp(tg_shape(scale), tg_shape(x) + axis, (size_t)n * 8) &&
                 (!b || (tg_ndim(b) == n && !memcmp(tg_shape(b), tg_shape(x) + axis, (size_t)n * 8)));
    if (!wants(c, 1) && !wants(c, 2) && exact)
        return done(c, 0, tg_layer_norm(x, n, scale, b, eps));
    int axes[TG_MAX_DIMS];
    for (int i = 0; i < n; i++)
        axes[i] = axis + i;
    tg_tensor *mean = tg_mean(x, n, axes, true);
    tg_tensor *d = tg_sub(x, mean);
    tg_tensor *inv = tg_rsqrt(tg_add_scalar(tg_mean(tg_mul(d, d), n, axes, true), eps));
    tg_tensor *y = tg_mul(tg_mul(d, inv), scale);
    if (b)
        y = tg_add(y, b);
    c->out[0] = onnx_as(y, tg_dtype_of(x));
    if (wants(c, 1))
        c->out[1] = mean;
    if (wants(c, 2))
        c->out[2] = inv;
    return c->out[0] ? TG_OK : tg_last_status();
}

/* ---- Dropout: the identity in inference mode; training mode (known
 * training_mode = true) draws a mask (a random node in a graph) ------------------------------------------- */
static tg_status n_dropout(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    if (!x)
        return tg_last_status();
    double ratio = 0.5, tm = 0;
    tg_status s = TG_OK;
    if (c->n_in > 1 && c->in[1]) /* Dropout-7/10's attribute too (versions.c) */
        s = oi_scalar(c, 1, "ratio", &ratio);
    if (s == TG_OK && c->version >= 12 && c->n_in > 2 && c->in[2])
        s = oi_scalar(c, 2, "training_mode", &tm);
    if (s != TG_OK)
        return s;
    if (ratio < 0 || ratio >= 1)
        return onnx_err(c, TG_ERR_IO, "ratio %g should be in [0, 1)", ratio);
    if (!tm || ratio == 0) {
        c->out[0] = x;
        if (wants(c, 1)) {
            int tok = onnx_eager_begin();
            /* Dropout-7's mask has the data's type, bool from version 10 */
            c->out[1] = tg_ones(c->version < 10 ? tg_dtype_of(x) : TG_BOOL, tg_ndim(x),
                                tg_shape(x));
            onnx_eager_end(tok);
            c->out_known[1] = c->out[1] != NULL;
        }
        return wants(c, 1) && !c->out[1] ? tg_last_status() : TG_OK;
    }
    tg_generator *gen, *own;
    if ((s = onnx_node_gen(c, &gen, &own)) != TG_OK)
        return s;
    /* bernoulli(1 - ratio) as U(0, 1) < 1 - ratio: eagerly tg_rand_bernoulli's
     * draws; in a graph a node drawing at every run */
    tg_tensor *mask = tg_lt(tg__rand_like(x, gen, TG_FLOAT64, false, 0, 1),
                            tg_scalar(TG_FLOAT64, 1 - ratio));
    tg_generator_free(own);
    c->out[0] = tg_mul(x, tg_mul_scalar(tg_cast(mask, tg_dtype_of(x)), 1 / (1 - ratio)));
    if (wants(c, 1))
        c->out[1] = mask;
    return c->out[0] ? TG_OK : tg_last_status();
}

const onnx_op_entry onnx_ops_nn[] = {
    {"Conv", {1, 11}, 2, 3, 1, 1, n_conv, 0},
    {"MaxPool", {1, 8, 10, 11, 12}, 1, 1, 1, 2, n_maxpool, 0},
    {"AveragePool", {1, 7, 10, 11}, 1, 1, 1, 1, n_avgpool, 0},
    {"GlobalAveragePool", {1}, 1, 1, 1, 1, n_global_avg, 0},
    {"LpPool", {2, 11}, 1, 1, 1, 1, n_lppool, 0},
    {"Gemm", {1, 6, 7, 9, 11, 13}, 2, 3, 1, 1, n_gemm, 0},
    {"MatMul", {1, 9, 13}, 2, 2, 1, 1, n_matmul, 0},
    {"Softmax", {1, 11, 13}, 1, 1, 1, 1, n_softmax, 0},
    {"LogSoftmax", {1, 11, 13}, 1, 1, 1, 1, n_log_softmax, 0},
    {"BatchNormalization", {1, 6, 7, 9, 14, 15}, 5, 5, 1, 5, n_batchnorm, 0},
    {"LayerNormalization", {17}, 2, 3, 1, 3, n_layernorm, 0},
    {"Dropout", {1, 6, 7, 10, 12, 13}, 1, 3, 1, 2, n_dropout, ONNX_OP_NO_FOLD},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
