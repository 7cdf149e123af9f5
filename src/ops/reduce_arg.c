/* argmax and argmin along one axis: int64 indices of the first extreme
 * (the first NaN counts as the extreme, as in PyTorch); not differentiable. */
#include "ops/reduce.h"

static tg_status arg_kernel(tg_op_ctx *c, tg_red_kind kind)
{
    bool mask[TG_MAX_DIMS];
    tg__red_mask(c, mask);
    tg_red_spec spec = {kind, TG_FIN_PLAIN, 1, NULL};
    return tg__reduce(c->in[0], mask, &spec, c->out[0]);
}

static tg_status argmax_kernel(tg_op_ctx *c) { return arg_kernel(c, TG_RED_ARGMAX); }
static tg_status argmin_kernel(tg_op_ctx *c) { return arg_kernel(c, TG_RED_ARGMIN); }

static const tg_attr_spec arg_specs[] = {
    TG_SPEC_INT(tg_red_attrs, axis, 0), TG_SPEC_BOOL(tg_red_attrs, keepdim, 0), {0}};
static const tg_arg_spec index_out[] = {{"indices", TG_DT(TG_INT64)}, {0}};
#define ARG_COMMON(OP)                                                      \
    .name = #OP, .n_in = 1, .n_out = 1, .inputs = tg_red_number_in,         \
    .outputs = index_out, .attrs = {arg_specs, sizeof(tg_red_attrs)},       \
    .flags = TG_OP_PURE, .nondiff = true, .infer = tg__red_infer,           \
    .kernel = {[TG_CPU] = OP##_kernel}

const tg_red_def tg_op_argmax = {{ARG_COMMON(argmax), .onnx = {"ArgMax", 13}},
                                 TG_RDT_INDEX, true};
const tg_red_def tg_op_argmin = {{ARG_COMMON(argmin), .onnx = {"ArgMin", 13}},
                                 TG_RDT_INDEX, true};

static tg_tensor *arg_call(const tg_red_def *op, tg_tensor *x, int axis, bool keepdim)
{
    tg_attr a[2] = {TG_AI("axis", axis), TG_AI("keepdim", keepdim)};
    return tg_op_call(&op->def, 1, &x, a, 2);
}

tg_tensor *tg_argmax(tg_tensor *x, int axis, bool keepdim)
{
    return arg_call(&tg_op_argmax, x, axis, keepdim);
}

tg_tensor *tg_argmin(tg_tensor *x, int axis, bool keepdim)
{
    return arg_call(&tg_op_argmin, x, axis, keepdim);
}
