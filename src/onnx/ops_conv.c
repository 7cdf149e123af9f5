/* ONNX ConvTranspose -> tensorgraph: the attributes (strides, dilations,
 * group, output_padding, pads / auto_pad / output_shape) become the
 * padding of the output of a full transposed convolution, in 1-D (through
 * the 2-D op with a unit height), 2-D and 3-D. When the pads are
 * symmetric and output_padding is smaller than the stride this is one
 * conv_transpose op with its bias (which exports back as ConvTranspose);
 * otherwise the op with the common padding, then a crop or zero extension
 * of each end, then the bias. */
#include "onnx/ops.h"

#include "ops/op.h"

#include <string.h>

#define MAXSP 3

typedef struct tgeom {
    int nsp;
    int64_t in[MAXSP], k[MAXSP], s[MAXSP], d[MAXSP], op[MAXSP];
    int64_t pb[MAXSP], pe[MAXSP], full[MAXSP], out[MAXSP];
} tgeom;

/* floor division (ONNX's reference splits negative totals that way) */
static int64_t fdiv2(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

/* reads an ints attribute of nsp values (absent: each `dflt`) into out */
static tg_status spatial_ints(onnx_ictx *c, const char *name, int nsp, int64_t dflt,
                              int64_t lo, int64_t *out)
{
    const int64_t *v;
    int n;
    tg_status s = oa_ints(c, name, &v, &n);
    if (s != TG_OK)
        return s;
    if (n >= 0 && n != nsp)
        return onnx_err(c, TG_ERR_IO, "%s has %d values for %d spatial dims", name, n, nsp);
    for (int i = 0; i < nsp; i++) {
        out[i] = n < 0 ? dflt : v[i];
        if (out[i] < lo || out[i] > INT32_MAX)
            return onnx_err(c, TG_ERR_IO, "%s must be in [%lld, 2^31)", name, (long long)lo);
    }
    return TG_OK;
}

/* ONNX's ConvTranspose shape rules: the full output of each spatial dim
 * is s * (in - 1) + output_padding + (k - 1) * d + 1, from which pads
 * (explicit, or from output_shape or SAME_*: total split with the larger
 * half at the end for SAME_UPPER, at the start otherwise) are removed */
static tg_status read_tgeom(onnx_ictx *c, const tg_tensor *x, const tg_tensor *w,
                            tgeom *g)
{
    int nsp = tg_ndim(x) - 2;
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    tg_status s;
    if ((s = spatial_ints(c, "strides", nsp, 1, 1, g->s)) != TG_OK ||
        (s = spatial_ints(c, "dilations", nsp, 1, 1, g->d)) != TG_OK ||
        (s = spatial_ints(c, "output_padding", nsp, 0, 0, g->op)) != TG_OK)
        return s;
    const int64_t *ks, *pads, *oshape;
    int nk, np, no;
    const char *auto_pad;
    if ((s = oa_ints(c, "kernel_shape", &ks, &nk)) != TG_OK ||
        (s = oa_ints(c, "pads", &pads, &np)) != TG_OK ||
        (s = oa_ints(c, "output_shape", &oshape, &no)) != TG_OK ||
        (s = oa_string(c, "auto_pad", "NOTSET", &auto_pad)) != TG_OK)
        return s;
    if (nk >= 0 && (nk != nsp || memcmp(ks, tg_shape(w) + 2, (size_t)nsp * 8)))
        return onnx_err(c, TG_ERR_IO, "kernel_shape does not match W");
    bool upper = !strcmp(auto_pad, "SAME_UPPER"), same = upper || !strcmp(auto_pad, "SAME_LOWER");
    if (!same && strcmp(auto_pad, "NOTSET") && strcmp(auto_pad, "VALID"))
        return onnx_err(c, TG_ERR_IO, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER "
                        "or VALID", auto_pad);
    /* output_shape may list the spatial dims or the whole shape */
    if (no >= 0 && no != nsp && no != nsp + 2)
        return onnx_err(c, TG_ERR_IO, "output_shape has %d values for %d spatial dims", no,
                        nsp);
    if (no == nsp + 2)
        oshape += 2;
    if (np >= 0 && np != 2 * nsp)
        return onnx_err(c, TG_ERR_IO, "pads has %d values, expected %d", np, 2 * nsp);
    for (int i = 0; i < nsp; i++) {
        g->in[i] = tg_shape(x)[2 + i];
        g->k[i] = tg_shape(w)[2 + i];
        if (g->in[i] < 1 || g->k[i] < 1)
            return onnx_err(c, TG_ERR_SHAPE, "empty input or kernel in spatial dim %d", i);
        /* sizes below 2^28 (the import bound), attributes below 2^31: no
         * product here reaches 2^63 */
        g->full[i] = g->s[i] * (g->in[i] - 1) + g->op[i] + (g->k[i] - 1) * g->d[i] + 1;
        int64_t want = -1;
        if (no >= 0)
            want = oshape[i];
        else if (same)
            want = g->in[i] * g->s[i];
        if (want >= 0) {
            int64_t total = g->full[i] - want;
            g->pb[i] = upper ? fdiv2(total) : total - fdiv2(total);
            g->pe[i] = total - g->pb[i];
        } else if (np > 0 && strcmp(auto_pad, "VALID")) {
            g->pb[i] = pads[i];
            g->pe[i] = pads[nsp + i];
            if (g->pb[i] < 0 || g->pe[i] < 0 || g->pb[i] > INT32_MAX || g->pe[i] > INT32_MAX)
                return onnx_err(c, TG_ERR_IO, "pads must be in [0, 2^31)");
        }
        g->out[i] = g->full[i] - g->pb[i] - g->pe[i];
        if (g->out[i] < 1)
            return onnx_err(c, TG_ERR_SHAPE, "the output of spatial dim %d would be %lld "
                            "long", i, (long long)g->out[i]);
    }
    return onnx_check_numel(c, nsp, g->out, "the output");
}

/* the transposed convolution of x by w with symmetric padding p[] and
 * output_padding op[] (both per spatial dim), no bias */
static tg_tensor *transpose(tg_tensor *x, tg_tensor *w, tg_tensor *b, const tgeom *g,
                            const int64_t *p, const int64_t *op, int group)
{
    if (g->nsp == 3) {
        tg_conv_transpose3d_opts o = {.groups = group};
        for (int i = 0; i < 3; i++) {
            o.stride[i] = (int)g->s[i];
            o.padding[i] = (int)p[i];
            o.output_padding[i] = (int)op[i];
            o.dilation[i] = (int)g->d[i];
        }
        return tg_conv_transpose3d(x, w, b, &o);
    }
    tg_conv_transpose2d_opts o = {.groups = group};
    for (int i = 0; i < 2; i++) {
        o.stride[i] = (int)g->s[i];
        o.padding[i] = (int)p[i];
        o.output_padding[i] = (int)op[i];
        o.dilation[i] = (int)g->d[i];
    }
    return tg_conv_transpose2d(x, w, b, &o);
}

static tg_status n_conv_transpose(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X"), *w = x ? oi_req(c, 1, "W") : NULL;
    tg_tensor *b = c->n_in > 2 ? c->in[2] : NULL;
    if (!w)
        return tg_last_status();
    int nsp = tg_ndim(x) - 2;
    if (nsp < 1 || nsp > 3)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "%d-D ConvTranspose is not supported (1-D "
                        "to 3-D are)", nsp);
    if (tg_ndim(w) != nsp + 2)
        return onnx_err(c, TG_ERR_IO, "W has rank %d, expected %d", tg_ndim(w), nsp + 2);
    int64_t group;
    tg_status s = oa_int(c, "group", 1, &group);
    if (s != TG_OK)
        return s;
    if (group < 1 || group > INT32_MAX)
        return onnx_err(c, TG_ERR_IO, "group %lld must be positive", (long long)group);
    tgeom g;
    if ((s = read_tgeom(c, x, w, &g)) != TG_OK)
        return s;
    if (nsp == 1) { /* [N, C, L] as [N, C, 1, L] (views) */
        x = tg_unsqueeze(x, 2);
        w = tg_unsqueeze(w, 2);
        g = (tgeom){.nsp = 2, .in = {1, g.in[0]}, .k = {1, g.k[0]}, .s = {1, g.s[0]},
                    .d = {1, g.d[0]}, .op = {0, g.op[0]}, .pb = {0, g.pb[0]},
                    .pe = {0, g.pe[0]}, .full = {1, g.full[0]}, .out = {1, g.out[0]}};
    }
    /* symmetric pads and an output_padding PyTorch allows (below the
     * stride or the dilation) are the op's own attributes */
    bool direct = true;
    int64_t zero[MAXSP] = {0, 0, 0};
    for (int i = 0; i < g.nsp; i++)
        direct = direct && g.pb[i] == g.pe[i] && g.pb[i] >= 0 &&
                 (g.op[i] < g.s[i] || g.op[i] < g.d[i]);
    tg_tensor *y;
    if (direct) {
        y = transpose(x, w, b, &g, g.pb, g.op, (int)group);
    } else {
        /* without padding the op covers full positions [0, full - op), all
         * that any input reaches; the output is [pb, pb + out): crop, and
         * extend past the op's end with zeros (what the output padding
         * holds before the bias) */
        y = transpose(x, w, NULL, &g, zero, zero, (int)group);
        for (int i = 0; i < g.nsp && y; i++) {
            int64_t lo = g.pb[i], len = g.full[i] - g.op[i];
            int64_t hi = lo + g.out[i]; /* in the op's coordinates */
            int64_t pads[2 * (2 + MAXSP)] = {0};
            pads[2 * (2 + i)] = lo < 0 ? -lo : 0;
            pads[2 * (2 + i) + 1] = hi > len ? hi - len : 0;
            int64_t a = lo > 0 ? lo : 0, e = hi < len ? hi : len;
            if (a > 0 || e < len)
                y = tg_slice(y, 2 + i, a, e, 1);
            if (pads[2 * (2 + i)] || pads[2 * (2 + i) + 1])
                y = tg_pad(y, 2 * (2 + g.nsp), pads, 0);
        }
        if (b) {
            int64_t bs[2 + MAXSP] = {1, tg_numel(b), 1, 1, 1};
            y = tg_add(y, tg_reshape(b, 2 + g.nsp, bs));
        }
    }
    if (y && nsp == 1)
        y = tg_squeeze(y, 2);
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

const onnx_op_entry onnx_ops_conv[] = {
    {"ConvTranspose", {1, 11}, 2, 3, 1, 1, n_conv_transpose, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
