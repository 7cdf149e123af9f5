/* grad_link(v, x) = v, recorded as a function of x too, whose derivative
 * in x is zero.
 *
 * PyTorch writes the backward of hardtanh, leaky_relu, the shrinks,
 * threshold, hardsigmoid and the pools as ops of the forward's input
 * (hardtanh_backward(grad, self, ...)), differentiable with a zero
 * derivative in that input. So under create_graph their gradients require
 * grad whenever the input does, and differentiating them again gives the
 * input zeros rather than nothing (a gradient penalty through leaky_relu
 * alone is a zero, not an error). Our rules build those gradients from
 * masks and constants, which carry no such dependence: tg__grad_of_input
 * adds it, only while a gradient is itself being recorded. */
#include "autodiff/jvp.h"
#include "core/tensor_impl.h"
#include "ops/elementwise.h"
#include "ops/op.h"
#include "tg/autograd.h"

static tg_status grad_link_infer(tg_op_ctx *c)
{
    const tg_tensor *v = c->in[0];
    return tg_infer_set(c, 0, v->dtype, v->ndim, v->shape);
}

static tg_status grad_link_kernel(tg_op_ctx *c)
{
    tg__convert_into(c->out[0], c->in[0]);
    return TG_OK;
}

/* v's gradient passes through; x's is zero */
static tg_status grad_link_grad(tg_grad_ctx *g)
{
    if (g->needs_grad[0])
        g->dx[0] = g->dy[0];
    if (g->needs_grad[1]) {
        const tg_meta *m = &g->in_meta[1];
        g->dx[1] = tg_zeros(m->dtype, m->ndim, m->shape);
    }
    return TG_OK;
}

static const tg_arg_spec grad_link_in[] = {{"v", TG_DTS_FLOAT}, {"x", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec grad_link_out[] = {{"y", TG_DTS_FLOAT}, {0}};

static const tg_op_def tg_op_grad_link = {
    .name = "grad_link", .n_in = 2, .n_out = 1, .inputs = grad_link_in,
    .outputs = grad_link_out, .flags = TG_OP_PURE, .infer = grad_link_infer,
    .kernel = {[TG_CPU] = grad_link_kernel}, .grad = grad_link_grad,
    .jvp = tg__jvp_linear};

tg_tensor *tg__grad_of_input(tg_tensor *v, tg_tensor *x)
{
    if (!v || !x || !tg_grad_enabled() || !tg_requires_grad(x) || tg_requires_grad(v) ||
        !tg_dtype_is_float(v->dtype) || !tg_dtype_is_float(x->dtype))
        return v;
    tg_tensor *in[2] = {v, x};
    return tg_op_call(&tg_op_grad_link, 2, in, NULL, 0);
}

/* grad_tie(x) = x, whose gradient is returned through tg__grad_of_input:
 * the same tie for functions composed of public ops (Python's adaptive
 * and fractional pools, gathers and means whose gradients are scatters of
 * the output gradient alone), applied to their input once instead of in
 * each rule */
static tg_status grad_tie_grad(tg_grad_ctx *g)
{
    if (g->needs_grad[0])
        g->dx[0] = tg__grad_of_input(g->dy[0], g->in[0]);
    return TG_OK;
}

static const tg_arg_spec grad_tie_in[] = {{"x", TG_DTS_FLOAT}, {0}};

static const tg_op_def tg_op_grad_tie = {
    .name = "grad_tie", .n_in = 1, .n_out = 1, .inputs = grad_tie_in,
    .outputs = grad_link_out, .flags = TG_OP_PURE, .save_inputs = 1u, .infer = grad_link_infer,
    .kernel = {[TG_CPU] = grad_link_kernel}, .grad = grad_tie_grad, .jvp = tg__jvp_linear};

tg_tensor *tg_grad_tie(tg_tensor *x)
{
    if (!x)
        return tg__error_null(TG_ERR_ARG, "grad_tie: x is NULL");
    if (!tg_grad_enabled() || !tg_requires_grad(x) || !tg_dtype_is_float(x->dtype))
        return tg__publish(tg_retain(x));
    return tg_op_call(&tg_op_grad_tie, 1, &x, NULL, 0);
}

const tg_op_def *const tg_ops_grad_link[] = {&tg_op_grad_link, &tg_op_grad_tie, NULL};
