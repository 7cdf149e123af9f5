/* shape_of: x's shape as an int64 [ndim] tensor (ONNX Shape). Where the
 * shape is known when a graph is built, callers use a constant instead;
 * this op is for dims known only when the graph runs (a feed's -1, a
 * nonzero's count), so that arithmetic on a shape sees the run's sizes
 * rather than the -1 that stands for them. x is read for its shape only. */
#include "ops/op.h"

static const tg_arg_spec any_in[] = {{"x", TG_DTS_ANY | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec index_out[] = {{"shape", TG_DT(TG_INT64)}, {0}};

static tg_status shape_of_infer(tg_op_ctx *c)
{
    int64_t n = c->in[0]->ndim;
    return tg_infer_set(c, 0, TG_INT64, 1, &n);
}

static tg_status shape_of_kernel(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    int64_t *y = (int64_t *)tg__base(c->out[0]);
    for (int d = 0; d < x->ndim; d++)
        y[d] = x->shape[d];
    return TG_OK;
}

const tg_op_def tg_op_shape_of = {
    .name = "shape_of", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = index_out,
    .flags = TG_OP_PURE, .nondiff = true, .infer = shape_of_infer,
    .kernel = {[TG_CPU] = shape_of_kernel}, .onnx = {"Shape", 1}};

tg_tensor *tg_shape_of(tg_tensor *x)
{
    if (!x) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "shape_of: input is NULL");
        return NULL;
    }
    return tg_op_call(&tg_op_shape_of, 1, &x, NULL, 0);
}

const tg_op_def *const tg_ops_shape_of[] = {&tg_op_shape_of, NULL};
