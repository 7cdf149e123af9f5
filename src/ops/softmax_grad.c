/* softmax_grad(dy, y) = y * (dy - sum(dy * y, axis)): the backward of
 * softmax as one op, one read of dy and y per row and one write, where the
 * rule written with ops made four nodes (mul, sum, sub, mul) and three
 * temporaries of the attention's [batch * heads, L, S] size. softmax's
 * rule calls it (nn.c), so eager autograd, symbolic gradients and graphs
 * run this kernel. Rows along the last axis (attention's) run in float32
 * lanes that vectorize; other axes and float64 in plain loops.
 *
 * Its own derivatives, with public ops (s = sum(dy y)):
 *   d/d dy: softmax_grad(g, y);   d/dy: g (dy - s) - dy sum(g y). */
#include "autodiff/jvp.h"
#include "kernels/cpu/isa_clone.h"
#include "ops/elementwise.h"
#include "ops/nn_util.h"
#include "ops/softmax.h"

#define SG_LANES 16 /* independent partial sums: the vector width of AVX-512 */

/* one row of n along the last axis, float32 */
TG_ISA_DISPATCH(static, void, sg_row_f32,
                (const float *dy, const float *y, float *dx, int64_t n), (dy, y, dx, n))
{
    float acc[SG_LANES] = {0};
    int64_t k = 0;
    for (; k + SG_LANES <= n; k += SG_LANES)
        for (int j = 0; j < SG_LANES; j++)
            acc[j] += dy[k + j] * y[k + j];
    float s = 0;
    for (; k < n; k++)
        s += dy[k] * y[k];
    for (int j = 0; j < SG_LANES; j++)
        s += acc[j];
    for (k = 0; k < n; k++)
        dx[k] = y[k] * (dy[k] - s);
}

typedef struct sg_task {
    bool f64;
    const char *dy, *y;
    char *dx;
    int64_t n, inner;
} sg_task;

/* [n, inner] at o: columns j summed over k in double (float64 and axes
 * before the last, where rows are strided) */
#define SG_COLS(SFX, T)                                                     \
    static void sg_cols_##SFX(const sg_task *t, int64_t o)                  \
    {                                                                       \
        const int64_t n = t->n, in = t->inner, base = o * n * in;           \
        const T *dy = (const T *)t->dy + base, *y = (const T *)t->y + base; \
        T *dx = (T *)t->dx + base;                                          \
        for (int64_t j = 0; j < in; j++) {                                  \
            double s = 0;                                                   \
            for (int64_t k = 0; k < n; k++)                                 \
                s += (double)dy[k * in + j] * (double)y[k * in + j];        \
            for (int64_t k = 0; k < n; k++)                                 \
                dx[k * in + j] = y[k * in + j] * (dy[k * in + j] - (T)s);   \
        }                                                                   \
    }
SG_COLS(f32, float)
SG_COLS(f64, double)

static void sg_range(void *ctx, int64_t b, int64_t e)
{
    const sg_task *t = ctx;
    for (int64_t o = b; o < e; o++) {
        if (t->f64)
            sg_cols_f64(t, o);
        else if (t->inner == 1)
            sg_row_f32((const float *)t->dy + o * t->n, (const float *)t->y + o * t->n,
                       (float *)t->dx + o * t->n, t->n);
        else
            sg_cols_f32(t, o);
    }
}

static tg_status sg_infer(tg_op_ctx *c)
{
    const tg_tensor *y = c->in[1];
    int64_t axis = ((const tg_softmax_attrs *)c->attr)->axis;
    tg_status s = tg__infer_grad_pair(c, "y");
    int ax;
    if (s == TG_OK && !tg__norm_axis("softmax_grad", (int)axis, y->ndim ? y->ndim : 1, &ax))
        return tg_last_status();
    return s;
}

static tg_status sg_kernel(tg_op_ctx *c)
{
    tg_tensor *dy = tg__nn_contig(c->in[0], c->in[0]->dtype);
    tg_tensor *y = dy ? tg__nn_contig(c->in[1], c->in[1]->dtype) : NULL;
    if (!y) {
        tg_release(dy);
        return TG_ERR_NOMEM;
    }
    int a = (int)((const tg_softmax_attrs *)c->attr)->axis;
    if (a < 0)
        a += y->ndim;
    sg_task t = {.f64 = y->dtype == TG_FLOAT64, .dy = tg__base(dy), .y = tg__base(y),
                 .dx = tg__base(c->out[0]), .n = y->ndim ? y->shape[a] : 1, .inner = 1};
    for (int i = a + 1; i < y->ndim; i++)
        t.inner *= y->shape[i];
    if (t.n > 0 && t.inner > 0)
        tg__nn_parallel(y->numel / (t.n * t.inner), 3 * t.n * t.inner, sg_range, &t);
    tg_release(dy);
    tg_release(y);
    return TG_OK;
}

static int sg_axis(const void *attr) { return (int)((const tg_softmax_attrs *)attr)->axis; }

/* sum over the axis, kept (a 0-d softmax has a single element: itself) */
static tg_tensor *axis_sum(tg_tensor *v, int a, int ndim)
{
    return ndim ? tg_sum(v, 1, &a, true) : v;
}

static tg_status sg_rule(tg_grad_ctx *g)
{
    tg_tensor *dy = g->in[0], *y = g->in[1], *gr = g->dy[0];
    int a = sg_axis(g->attr), nd = g->in_meta[1].ndim;
    if (g->needs_grad[0])
        g->dx[0] = tg__softmax_grad(gr, y, a);
    if (g->needs_grad[1]) {
        tg_tensor *s = axis_sum(tg_mul(dy, y), a, nd);
        g->dx[1] = tg_sub(tg_mul(gr, tg_sub(dy, s)), tg_mul(dy, axis_sum(tg_mul(gr, y), a, nd)));
    }
    return TG_OK;
}

/* softmax_grad(t_dy, y) + t_y (dy - s) - y sum(dy t_y) */
static tg_status sg_jvp(tg_jvp_ctx *c)
{
    tg_tensor *dy = c->in[0], *y = c->in[1], *acc = NULL;
    int a = sg_axis(c->attr), nd = c->in_meta[1].ndim;
    if (c->dx[0])
        TG_JVP_TERM(c, acc, tg__softmax_grad(c->dx[0], y, a));
    if (c->dx[1]) {
        tg_tensor *ty = c->dx[1];
        tg_tensor *s = axis_sum(tg_mul(dy, y), a, nd);
        TG_JVP_TERM(c, acc, tg_sub(tg_mul(ty, tg_sub(dy, s)),
                                   tg_mul(y, axis_sum(tg_mul(dy, ty), a, nd))));
    }
    return tg__jvp_set(c, 0, acc);
}

static const tg_arg_spec sg_in[] = {{"dy", TG_DTS_FLOAT}, {"y", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec sg_out[] = {{"dx", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_softmax_grad = {
    .name = "softmax_grad", .n_in = 2, .n_out = 1, .inputs = sg_in, .outputs = sg_out,
    .attrs = {tg_softmax_specs, sizeof(tg_softmax_attrs)}, .flags = TG_OP_PURE,
    .save_inputs = 3u, .infer = sg_infer, .kernel = {[TG_CPU] = sg_kernel},
    .grad = sg_rule, .jvp = sg_jvp};

tg_tensor *tg__softmax_grad(tg_tensor *dy, tg_tensor *y, int axis)
{
    tg_tensor *in[2] = {dy, y};
    tg_attr attr = TG_AI("axis", axis);
    return tg_op_call(&tg_op_softmax_grad, 2, in, &attr, 1);
}

const tg_op_def *const tg_ops_softmax_grad[] = {&tg_op_softmax_grad, NULL};
