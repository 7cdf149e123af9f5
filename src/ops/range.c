/* range: start, start + delta, ... up to (not including) limit, as a
 * pure op without inputs (ONNX Range, torch.arange), so that in a graph
 * it is a node the passes can fold, and ONNX export writes it back.
 * tg_arange (core/creation.c) makes the same values as a plain tensor. */
#include "ops/op.h"

#include <math.h>

/* the bounds as doubles: integer bounds beyond 2^53 are not exact */
typedef struct range_attrs {
    double start, limit, delta;
    int64_t dtype;
} range_attrs;
static const tg_attr_spec range_specs[] = {
    TG_SPEC_FLOAT(range_attrs, start, 0, TG_REQUIRED),
    TG_SPEC_FLOAT(range_attrs, limit, 0, TG_REQUIRED),
    TG_SPEC_FLOAT(range_attrs, delta, 1),
    TG_SPEC_INT(range_attrs, dtype, TG_FLOAT32, TG_RANGE(0, TG_NUM_DTYPES - 1)),
    {0}};

/* ONNX's count: max(ceil((limit - start) / delta), 0) */
static tg_status range_infer(tg_op_ctx *c)
{
    const range_attrs *a = c->attr;
    tg_dtype dt = (tg_dtype)a->dtype;
    if (dt == TG_BOOL)
        return tg__error(TG_ERR_DTYPE, "range: bool is not a numeric dtype");
    if (a->delta == 0 || !isfinite(a->start) || !isfinite(a->limit) || !isfinite(a->delta))
        return tg__error(TG_ERR_ARG, "range: needs finite start and limit and a non-zero "
                         "delta, got start %g limit %g delta %g", a->start, a->limit,
                         a->delta);
    double n = ceil((a->limit - a->start) / a->delta);
    if (!(n < (double)((int64_t)1 << 40))) /* NaN too */
        return tg__error(TG_ERR_SHAPE, "range: %g elements is too many", n);
    int64_t len = n > 0 ? (int64_t)n : 0;
    return tg_infer_set(c, 0, dt, 1, &len);
}

/* each element computed from its index (no accumulated rounding) as one
 * fused multiply-add in double, then stored in the output dtype: PyTorch's
 * CPU kernel computes start + step * i contracted to an FMA, and this
 * gives its bits (arange(-1., 1., .3)[3] is -0.10000000000000003, not
 * the -0.10000000000000009 of a separate multiply and add) */
static tg_status range_kernel(tg_op_ctx *c)
{
    const range_attrs *a = c->attr;
    tg_tensor *y = c->out[0];
    char *p = tg__base(y);
    size_t es = tg_dtype_size(y->dtype);
    for (int64_t i = 0; i < y->numel; i++)
        tg__store(y->dtype, p + i * (int64_t)es, fma((double)i, a->delta, a->start));
    return TG_OK;
}

static const tg_arg_spec range_in[] = {{0}};
static const tg_arg_spec range_out[] = {{"y", TG_DTS_NUMBER}, {0}};

const tg_op_def tg_op_range = {
    .name = "range", .n_in = 0, .n_out = 1, .inputs = range_in, .outputs = range_out,
    .attrs = {range_specs, sizeof(range_attrs)}, .flags = TG_OP_PURE, .nondiff = true,
    .infer = range_infer, .kernel = {[TG_CPU] = range_kernel}, .onnx = {"Range", 11}};

tg_tensor *tg_range(tg_dtype dt, double start, double limit, double delta)
{
    tg_attr a[4] = {TG_AF("start", start), TG_AF("limit", limit), TG_AF("delta", delta),
                    TG_AI("dtype", (int64_t)dt)};
    return tg_op_call(&tg_op_range, 0, NULL, a, 4);
}

const tg_op_def *const tg_ops_range[] = {&tg_op_range, NULL};
