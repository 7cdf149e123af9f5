/* full_by: a tensor of one value whose shape is given as int64 values
 * (ONNX ConstantOfShape on a shape computed when the graph runs). Where
 * the shape has data (eagerly, constants) the output's dims are its
 * values; on a graph's value they are the `hint` the caller knows (the
 * importer's marked dims: -1 where a dim is known only when the graph
 * runs), or all unknown. The executor infers them from the actual shape
 * when the graph runs. */
#include "ops/op.h"

#include <string.h>

typedef struct full_attrs {
    double value;
    int64_t dtype;
    tg_ints hint;
} full_attrs;
static const tg_attr_spec full_specs[] = {
    TG_SPEC_FLOAT(full_attrs, value, 0),
    TG_SPEC_INT(full_attrs, dtype, TG_FLOAT32, TG_RANGE(0, TG_NUM_DTYPES - 1)),
    TG_SPEC_INTS(full_attrs, hint), {0}};

static const tg_arg_spec shape_in[] = {{"shape", TG_DT(TG_INT64) | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

tg_status tg__infer_by_shape(tg_op_ctx *c, const tg_tensor *s, const tg_ints *hint,
                             tg_dtype dt)
{
    if (s->ndim != 1 || s->shape[0] < 0 || s->shape[0] > TG_MAX_DIMS)
        return tg__error(TG_ERR_SHAPE, "%s: the shape must be 1-D with at most %d values",
                         c->op->name, TG_MAX_DIMS);
    int nd = (int)s->shape[0];
    if (hint->n && hint->n != nd)
        return tg__error(TG_ERR_ARG, "%s: a hint of %d dims for a shape of %d", c->op->name,
                         hint->n, nd);
    int64_t shape[TG_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int64_t v = s->storage ? *(const int64_t *)tg__elem_ptr(s, d)
                               : hint->n ? hint->v[d] : -1;
        if (s->storage && v < 0)
            return tg__error(TG_ERR_SHAPE, "%s: shape value %d is %lld", c->op->name, d,
                             (long long)v);
        shape[d] = v < 0 ? -1 : v;
    }
    return tg__infer_set_open(c, dt, nd, shape);
}

tg_status tg__infer_set_open(tg_op_ctx *c, tg_dtype dt, int nd, const int64_t *shape)
{
    if (!tg__shape_has_unknown(nd, shape))
        return tg_infer_set(c, 0, dt, nd, shape);
    c->out_meta[0] = (tg_meta){.dtype = dt, .ndim = nd}; /* known at run time */
    memcpy(c->out_meta[0].shape, shape, (size_t)nd * sizeof *shape);
    return TG_OK;
}

static tg_status full_by_infer(tg_op_ctx *c)
{
    const full_attrs *a = c->attr;
    return tg__infer_by_shape(c, c->in[0], &a->hint, (tg_dtype)a->dtype);
}

static tg_status full_by_kernel(tg_op_ctx *c)
{
    const full_attrs *a = c->attr;
    tg_tensor *y = c->out[0];
    char *p = tg__base(y);
    size_t es = tg_dtype_size(y->dtype);
    if (y->numel > 0)
        tg__store(y->dtype, p, a->value);
    for (int64_t i = 1; i < y->numel; i++)
        memcpy(p + i * (int64_t)es, p, es);
    return TG_OK;
}

const tg_op_def tg_op_full_by = {
    .name = "full_by", .n_in = 1, .n_out = 1, .inputs = shape_in, .outputs = any_out,
    .attrs = {full_specs, sizeof(full_attrs)}, .flags = TG_OP_PURE, .nondiff = true,
    .infer = full_by_infer, .kernel = {[TG_CPU] = full_by_kernel}};

tg_tensor *tg__full_by(tg_tensor *shape, tg_dtype dt, double value, int n_hint,
                       const int64_t *hint)
{
    tg_attr a[3] = {TG_AF("value", value), TG_AI("dtype", (int64_t)dt),
                    TG_AINTS("hint", hint, n_hint)};
    return tg_op_call(&tg_op_full_by, 1, &shape, a, n_hint ? 3 : 2);
}

const tg_op_def *const tg_ops_full_by[] = {&tg_op_full_by, NULL};
