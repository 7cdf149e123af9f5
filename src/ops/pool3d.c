/* 3-D pooling over [N, C, D, H, W] with PyTorch's semantics (output size,
 * padding at most half the kernel, ceil_mode, count_include_pad):
 * max_pool3d (values and argmax indices, positions in the D*H*W volume),
 * avg_pool3d and its gradient op. The max pool's gradient and forward
 * rule are the 2-D ops' (max_pool2d_grad, max_pool2d_select): they work
 * on positions within a plane, so a volume is the plane [D*H, W] of
 * reshaped (contiguous: no copy) views. */
#include "autodiff/jvp.h"
#include "kernels/cpu/pool3d.h"
#include "ops/nn_util.h"
#include "ops/pool.h"

#include <string.h>

typedef struct pool3_attrs {
    int64_t kernel[3], stride[3], padding[3];
    bool ceil_mode, count_include_pad;
    int64_t input_size[3];
} pool3_attrs;
#define WINDOW_SPECS                                                            \
    TG_SPEC_INT_ARRAY(pool3_attrs, kernel, NULL, TG_REQUIRED),                  \
    TG_SPEC_INT_ARRAY(pool3_attrs, stride, NULL, TG_REQUIRED),                  \
    TG_SPEC_INT_ARRAY(pool3_attrs, padding, NULL, TG_REQUIRED),                 \
    TG_SPEC_BOOL(pool3_attrs, ceil_mode, 0)
static const tg_attr_spec max_specs[] = {WINDOW_SPECS, {0}};
static const tg_attr_spec avg_specs[] = {
    WINDOW_SPECS, TG_SPEC_BOOL(pool3_attrs, count_include_pad, 1), {0}};
static const tg_attr_spec avg_grad_specs[] = {
    WINDOW_SPECS, TG_SPEC_BOOL(pool3_attrs, count_include_pad, 1),
    TG_SPEC_INT_ARRAY(pool3_attrs, input_size, NULL, TG_REQUIRED, TG_MIN(1)), {0}};

/* a as an attribute list (avg adds count_include_pad, input_size the
 * gradient op's input size); returns the count */
static int attr_list(const pool3_attrs *a, bool avg, bool input_size, tg_attr *out)
{
    pool3_attrs *m = (pool3_attrs *)a; /* only read */
    return tg__pool_nd_attrs(&TG_POOL_ND(3, m), avg, input_size, out);
}

/* the window of a over an input volume `in` */
static tg_status read_geom(const char *op, const pool3_attrs *a, const int64_t *in,
                           tg__pool3_geom *g)
{
    memset(g, 0, sizeof *g);
    g->include_pad = a->count_include_pad;
    for (int i = 0; i < 3; i++) {
        int64_t k = a->kernel[i], s = a->stride[i], p = a->padding[i];
        if (k < 1 || s < 1 || p < 0)
            return tg__error(TG_ERR_ARG, "%s: kernel %lld and stride %lld must be positive "
                             "and padding %lld non-negative (spatial dim %d)", op,
                             (long long)k, (long long)s, (long long)p, i);
        if (p > k / 2)
            return tg__error(TG_ERR_ARG, "%s: padding %lld must be at most half the kernel "
                             "%lld (spatial dim %d)", op, (long long)p, (long long)k, i);
        if (in[i] < 1)
            return tg__error(TG_ERR_SHAPE, "%s: empty input in spatial dim %d", op, i);
        g->in[i] = in[i];
        g->k[i] = k;
        g->s[i] = s;
        g->p[i] = p;
        if (!tg__pool_out_size(op, in[i], k, s, p, a->ceil_mode, &g->out[i]))
            return tg_last_status();
        if (g->out[i] < 1)
            return tg__error(TG_ERR_SHAPE, "%s: kernel %lld is larger than the padded input "
                             "%lld (input %lld, padding %lld) in spatial dim %d", op,
                             (long long)k, (long long)(in[i] + 2 * p), (long long)in[i],
                             (long long)p, i);
    }
    return TG_OK;
}

static tg_status need_5d(const char *op, const tg_tensor *x, const char *what)
{
    char b[160];
    if (x->ndim != 5)
        return tg__error(TG_ERR_SHAPE, "%s: expected a 5-D %s [N, C, D, H, W], got %s", op,
                         what, tg_shape_str(x->ndim, x->shape, b, sizeof b));
    return tg_require_float(op, x, 0);
}

static tg_status pool_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    tg__pool3_geom g;
    tg_status s = need_5d(c->op->name, x, "input");
    if (s == TG_OK)
        s = read_geom(c->op->name, c->attr, x->shape + 2, &g);
    if (s != TG_OK)
        return s;
    int64_t shape[5] = {x->shape[0], x->shape[1], g.out[0], g.out[1], g.out[2]};
    s = tg_infer_set(c, 0, x->dtype, 5, shape);
    if (s == TG_OK && c->op->n_out == 2)
        s = tg_infer_set(c, 1, TG_INT64, 5, shape);
    return s;
}

/* runs kind k from input `in` (made contiguous) into out */
static tg_status run_kind(tg__pool3_kind k, const tg__pool3_geom *g, tg_tensor *in,
                          tg_tensor *out, tg_tensor *idx)
{
    tg_tensor *a = tg__nn_contig(in, out->dtype);
    if (!a)
        return TG_ERR_NOMEM;
    tg__pool3d(k, g, out->dtype, tg__base(a), tg__base(out),
               idx ? (int64_t *)tg__base(idx) : NULL, out->shape[0] * out->shape[1]);
    tg_release(a);
    return TG_OK;
}

/* ---- max_pool3d ------------------------------------------------------------------- */
extern const tg_op_def tg_op_max_pool2d_grad, tg_op_max_pool2d_select;

static tg_status max_kernel(tg_op_ctx *c)
{
    tg__pool3_geom g;
    read_geom(c->op->name, c->attr, c->in[0]->shape + 2, &g);
    return run_kind(TG_POOL3_MAX, &g, c->in[0], c->out[0], c->out[1]);
}

/* t [N, C, a, b, c] as the plane [N, C, a*b, c] */
static tg_tensor *as_plane(tg_tensor *t)
{
    const int64_t *s = tg_shape(t);
    return tg_reshape(t, 4, (int64_t[]){s[0], s[1], s[2] * s[3], s[4]});
}

/* dy scattered into the input volume at the argmax positions */
static tg_tensor *scatter(tg_tensor *dy, tg_tensor *idx, const int64_t *in_shape)
{
    int64_t hw[2] = {in_shape[2] * in_shape[3], in_shape[4]};
    tg_attr a = TG_AINTS("input_size", hw, 2);
    tg_tensor *in[2] = {as_plane(dy), as_plane(idx)};
    return tg_reshape(tg_op_call(&tg_op_max_pool2d_grad, 2, in, &a, 1), 5, in_shape);
}

static tg_status max_grad(tg_grad_ctx *g)
{
    g->dx[0] = scatter(g->dy[0], g->out[1], g->in_meta[0].shape);
    return TG_OK;
}

/* the tangent at the argmax positions */
static tg_status max_jvp(tg_jvp_ctx *c)
{
    tg_tensor *in[2] = {as_plane(c->dx[0]), as_plane(c->out[1])};
    tg_tensor *y = tg_op_call(&tg_op_max_pool2d_select, 2, in, NULL, 0);
    return tg__jvp_set(c, 0, tg_reshape(y, 5, tg_shape(c->out[1])));
}

static const tg_arg_spec float_in[] = {{"x", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec float_out[] = {{"y", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec max_out[] = {{"y", TG_DTS_FLOAT}, {"indices", TG_DT(TG_INT64)}, {0}};

const tg_op_def tg_op_max_pool3d = {
    .name = "max_pool3d", .n_in = 1, .n_out = 2, .inputs = float_in, .outputs = max_out,
    .attrs = {max_specs, sizeof(pool3_attrs)}, .flags = TG_OP_PURE, .save_outputs = 2u,
    .infer = pool_infer, .kernel = {[TG_CPU] = max_kernel}, .grad = max_grad,
    .jvp = max_jvp, .onnx = {"MaxPool", 12}};

/* ---- avg_pool3d and its gradient ---------------------------------------------------- */
extern const tg_op_def tg_op_avg_pool3d, tg_op_avg_pool3d_grad;

static tg_status avg_kernel(tg_op_ctx *c)
{
    tg__pool3_geom g;
    read_geom(c->op->name, c->attr, c->in[0]->shape + 2, &g);
    return run_kind(TG_POOL3_AVG, &g, c->in[0], c->out[0], NULL);
}

static tg_status avg_grad(tg_grad_ctx *g)
{
    pool3_attrs p = *(const pool3_attrs *)g->attr;
    memcpy(p.input_size, g->in_meta[0].shape + 2, sizeof p.input_size);
    tg_attr a[6];
    int n = attr_list(&p, true, true, a);
    g->dx[0] = tg_op_call(&tg_op_avg_pool3d_grad, 1, &g->dy[0], a, n);
    return TG_OK;
}

const tg_op_def tg_op_avg_pool3d = {
    .name = "avg_pool3d", .n_in = 1, .n_out = 1, .inputs = float_in, .outputs = float_out,
    .attrs = {avg_specs, sizeof(pool3_attrs)}, .flags = TG_OP_PURE, .infer = pool_infer,
    .kernel = {[TG_CPU] = avg_kernel}, .grad = avg_grad, .jvp = tg__jvp_linear,
    .onnx = {"AveragePool", 11}};

/* avg_pool3d_grad(dy): each dy spread over its window of the input */
static tg_status avg_grad_geom(tg_op_ctx *c, tg__pool3_geom *g)
{
    const pool3_attrs *a = c->attr;
    const tg_tensor *dy = c->in[0];
    tg_status s = need_5d(c->op->name, dy, "gradient");
    if (s == TG_OK)
        s = read_geom(c->op->name, a, a->input_size, g);
    if (s == TG_OK && memcmp(dy->shape + 2, g->out, sizeof g->out))
        s = tg__error(TG_ERR_SHAPE, "avg_pool3d_grad: gradient of %lldx%lldx%lld, but "
                      "pooling the input gives %lldx%lldx%lld", (long long)dy->shape[2],
                      (long long)dy->shape[3], (long long)dy->shape[4], (long long)g->out[0],
                      (long long)g->out[1], (long long)g->out[2]);
    return s;
}

static tg_status avg_grad_infer(tg_op_ctx *c)
{
    tg__pool3_geom g;
    tg_status s = avg_grad_geom(c, &g);
    if (s != TG_OK)
        return s;
    const int64_t *d = c->in[0]->shape;
    return tg_infer_set(c, 0, c->in[0]->dtype, 5,
                        (int64_t[]){d[0], d[1], g.in[0], g.in[1], g.in[2]});
}

static tg_status avg_grad_kernel(tg_op_ctx *c)
{
    tg__pool3_geom g;
    avg_grad_geom(c, &g);
    return run_kind(TG_POOL3_AVG_GRAD, &g, c->in[0], c->out[0], NULL);
}

/* linear in dy: its adjoint is the pooling itself */
static tg_status avg_grad_grad(tg_grad_ctx *g)
{
    if (g->needs_grad[0]) {
        tg_attr a[6];
        int n = attr_list(g->attr, true, false, a);
        g->dx[0] = tg_op_call(&tg_op_avg_pool3d, 1, &g->dy[0], a, n);
    }
    return TG_OK;
}

const tg_op_def tg_op_avg_pool3d_grad = {
    .name = "avg_pool3d_grad", .n_in = 1, .n_out = 1, .inputs = float_in,
    .outputs = float_out, .attrs = {avg_grad_specs, sizeof(pool3_attrs)},
    .flags = TG_OP_PURE, .infer = avg_grad_infer, .kernel = {[TG_CPU] = avg_grad_kernel},
    .grad = avg_grad_grad, .jvp = tg__jvp_linear};

/* ---- public functions --------------------------------------------------------------- */
/* the checks of the 2-D functions (ops/pool.h); attributes in a, backed by p */
static int prepare(const char *op, tg_tensor *x, const tg_pool3d_opts *o, bool avg,
                   pool3_attrs *p, tg_attr *a)
{
    return tg__pool_prepare(op, x, o ? &TG_POOL_OPTS_ND(o) : NULL, avg, &TG_POOL_ND(3, p), a);
}

tg_tensor *tg_max_pool3d(tg_tensor *x, const tg_pool3d_opts *opts)
{
    pool3_attrs p;
    tg_attr a[5];
    int n = prepare("max_pool3d", x, opts, false, &p, a);
    return n < 0 ? NULL : tg__pool_max_values(&tg_op_max_pool3d, x, a, n);
}

tg_tensor *tg_avg_pool3d(tg_tensor *x, const tg_pool3d_opts *opts)
{
    pool3_attrs p;
    tg_attr a[5];
    int n = prepare("avg_pool3d", x, opts, true, &p, a);
    return n < 0 ? NULL : tg_op_call(&tg_op_avg_pool3d, 1, &x, a, n);
}

const tg_op_def *const tg_ops_pool3d[] = {&tg_op_max_pool3d, &tg_op_avg_pool3d,
                                          &tg_op_avg_pool3d_grad, NULL};
