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
static tg_status range_count(const char *op, double start, double limit, double delta,
                             int64_t *len)
{
    if (delta == 0 || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
        return tg__error(TG_ERR_ARG, "%s: needs finite start and limit and a non-zero "
                         "delta, got start %g limit %g delta %g", op, start, limit, delta);
    double n = ceil((limit - start) / delta);
    if (!(n < (double)((int64_t)1 << 40))) /* NaN too */
        return tg__error(TG_ERR_SHAPE, "%s: %g elements is too many", op, n);
    *len = n > 0 ? (int64_t)n : 0;
    return TG_OK;
}

static tg_status range_infer(tg_op_ctx *c)
{
    const range_attrs *a = c->attr;
    tg_dtype dt = (tg_dtype)a->dtype;
    int64_t len;
    if (dt == TG_BOOL)
        return tg__error(TG_ERR_DTYPE, "range: bool is not a numeric dtype");
    tg_status s = range_count(c->op->name, a->start, a->limit, a->delta, &len);
    return s != TG_OK ? s : tg_infer_set(c, 0, dt, 1, &len);
}

/* each element computed from its index (no accumulated rounding) as one
 * fused multiply-add in double, then stored in the output dtype: PyTorch's
 * CPU kernel computes start + step * i contracted to an FMA, and this
 * gives its bits (arange(-1., 1., .3)[3] is -0.10000000000000003, not
 * the -0.10000000000000009 of a separate multiply and add) */
static void range_fill(tg_tensor *y, double start, double delta)
{
    char *p = tg__base(y);
    size_t es = tg_dtype_size(y->dtype);
    for (int64_t i = 0; i < y->numel; i++)
        tg__store(y->dtype, p + i * (int64_t)es, fma((double)i, delta, start));
}

static tg_status range_kernel(tg_op_ctx *c)
{
    const range_attrs *a = c->attr;
    range_fill(c->out[0], a->start, a->delta);
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

/* ---- range_by: the bounds as 0-d tensors (ONNX Range on computed values) ----
 * The length depends on the values: inference computes it wherever the
 * bounds have data, and leaves it unknown (-1) on a graph's values, for
 * the executor to infer when the graph runs. The output has start's
 * dtype; the three must agree. */
static const tg_arg_spec range_by_in[] = {
    {"start", TG_DTS_NUMBER}, {"limit", TG_DTS_NUMBER}, {"delta", TG_DTS_NUMBER}, {0}};

static tg_status range_by_infer(tg_op_ctx *c)
{
    static const char *const what[3] = {"start", "limit", "delta"};
    double v[3];
    bool known = true;
    for (int i = 0; i < 3; i++) {
        const tg_tensor *t = c->in[i];
        if (t->ndim != 0 || t->dtype != c->in[0]->dtype)
            return tg__error(TG_ERR_SHAPE, "%s: %s must be a 0-d tensor of start's dtype "
                             "(%s), got %d dims of %s", c->op->name, what[i],
                             tg_dtype_name(c->in[0]->dtype), t->ndim, tg_dtype_name(t->dtype));
        if (t->dtype == TG_BOOL)
            return tg__error(TG_ERR_DTYPE, "%s: bool is not a numeric dtype", c->op->name);
        known = known && t->storage;
        v[i] = known ? tg__load(t->dtype, tg__base(t)) : 0;
    }
    int64_t len = -1; /* a graph's values: known when it runs */
    tg_status s = known ? range_count(c->op->name, v[0], v[1], v[2], &len) : TG_OK;
    if (s != TG_OK || len >= 0)
        return s != TG_OK ? s : tg_infer_set(c, 0, c->in[0]->dtype, 1, &len);
    c->out_meta[0] = (tg_meta){.dtype = c->in[0]->dtype, .ndim = 1, .shape = {-1}};
    return TG_OK;
}

static tg_status range_by_kernel(tg_op_ctx *c)
{
    const tg_tensor *start = c->in[0], *delta = c->in[2];
    range_fill(c->out[0], tg__load(start->dtype, tg__base(start)),
               tg__load(delta->dtype, tg__base(delta)));
    return TG_OK;
}

const tg_op_def tg_op_range_by = {
    .name = "range_by", .n_in = 3, .n_out = 1, .inputs = range_by_in, .outputs = range_out,
    .flags = TG_OP_PURE, .nondiff = true, .infer = range_by_infer,
    .kernel = {[TG_CPU] = range_by_kernel}, .onnx = {"Range", 11}};

tg_tensor *tg_range_by(tg_tensor *start, tg_tensor *limit, tg_tensor *delta)
{
    tg_tensor *in[3] = {start, limit, delta};
    for (int i = 0; i < 3; i++)
        if (!in[i]) {
            if (!tg__error_is_set())
                tg__error(TG_ERR_ARG, "range_by: input %d is NULL", i);
            return NULL;
        }
    return tg_op_call(&tg_op_range_by, 3, in, NULL, 0);
}

const tg_op_def *const tg_ops_range[] = {&tg_op_range, &tg_op_range_by, NULL};
