/* Dtype conversion: the cast op's kernel and the helpers that bring
 * inputs to an op's compute dtype. */
#include "autodiff/jvp.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"

static int category(tg_dtype d)
{
    return d == TG_BOOL ? 0 : tg_dtype_is_float(d) ? 2 : 1;
}

tg_dtype tg_result_type(const tg_tensor *a, const tg_tensor *b)
{
    bool a0 = a->ndim == 0, b0 = b->ndim == 0;
    if (a0 != b0) {
        const tg_tensor *dim = a0 ? b : a, *zero = a0 ? a : b;
        if (category(zero->dtype) <= category(dim->dtype))
            return dim->dtype;
        return tg_promote_types(dim->dtype, zero->dtype);
    }
    return tg_promote_types(a->dtype, b->dtype);
}

tg_status tg_infer_broadcast(tg_op_ctx *c, tg_dtype dt)
{
    int nd;
    int64_t shape[TG_MAX_DIMS];
    const tg_tensor *a = c->in[0], *b = c->in[1];
    tg_status s = tg_broadcast_shapes(c->op->name, a->ndim, a->shape, b->ndim,
                                      b->shape, &nd, shape);
    return s == TG_OK ? tg_infer_set(c, 0, dt, nd, shape) : s;
}

tg_status tg__infer_grad_pair(tg_op_ctx *c, const char *name)
{
    const tg_tensor *dy = c->in[0], *y = c->in[1];
    if (!tg__shape_eq(dy->ndim, dy->shape, y->ndim, y->shape) || dy->dtype != y->dtype ||
        !tg_dtype_is_float(dy->dtype)) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE, "%s: dy %s %s and %s %s %s must be floating point of "
                         "one shape and dtype", c->op->name,
                         tg_shape_str(dy->ndim, dy->shape, a, sizeof a), tg_dtype_name(dy->dtype),
                         name, tg_shape_str(y->ndim, y->shape, b, sizeof b),
                         tg_dtype_name(y->dtype));
    }
    return tg_infer_set(c, 0, dy->dtype, dy->ndim, dy->shape);
}

tg_status tg__run_grad_pair(tg_op_ctx *c, tg_iter_row_fn f32, tg_iter_row_fn f64)
{
    const tg_tensor *ops[3] = {c->out[0], c->in[0], c->in[1]};
    tg_iter it;
    tg_iter_init(&it, 3, ops);
    tg_iter_run(&it, c->out[0]->dtype == TG_FLOAT32 ? f32 : f64, NULL);
    return TG_OK;
}

/* one conversion loop per (from, to) pair, through a macro table */
#define CONV_ROW(FROM_T, TO_T, NAME)                                        \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        (void)ctx;                                                          \
        if (s[0] == sizeof(TO_T) && s[1] == sizeof(FROM_T)) {               \
            TO_T *o = (TO_T *)p[0];                                         \
            const FROM_T *x = (const FROM_T *)p[1];                         \
            for (int64_t i = 0; i < n; i++)                                 \
                o[i] = (TO_T)x[i];                                          \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++)                                 \
                *(TO_T *)(p[0] + i * s[0]) = (TO_T) * (const FROM_T *)(p[1] + i * s[1]); \
        }                                                                   \
    }

/* to bool: any non-zero is true */
#define CONV_BOOL_ROW(FROM_T, NAME)                                         \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        (void)ctx;                                                          \
        for (int64_t i = 0; i < n; i++)                                     \
            *(uint8_t *)(p[0] + i * s[0]) = *(const FROM_T *)(p[1] + i * s[1]) != 0; \
    }

#define CONV_FROM(FROM_T, SUF)                    \
    CONV_ROW(FROM_T, float, conv_##SUF##_f32)     \
    CONV_ROW(FROM_T, double, conv_##SUF##_f64)    \
    CONV_ROW(FROM_T, int32_t, conv_##SUF##_i32)   \
    CONV_ROW(FROM_T, int64_t, conv_##SUF##_i64)   \
    CONV_ROW(FROM_T, uint8_t, conv_##SUF##_u8)    \
    CONV_BOOL_ROW(FROM_T, conv_##SUF##_b)

CONV_FROM(float, f32)
CONV_FROM(double, f64)
CONV_FROM(int32_t, i32)
CONV_FROM(int64_t, i64)
CONV_FROM(uint8_t, u8)
CONV_FROM(uint8_t, b)

#define CONV_ENTRY(SUF) \
    {conv_##SUF##_f32, conv_##SUF##_f64, conv_##SUF##_i32, conv_##SUF##_i64, \
     conv_##SUF##_u8, conv_##SUF##_b}
static const tg_iter_row_fn conv_table[TG_NUM_DTYPES][TG_NUM_DTYPES] = {
    CONV_ENTRY(f32), CONV_ENTRY(f64), CONV_ENTRY(i32),
    CONV_ENTRY(i64), CONV_ENTRY(u8),  CONV_ENTRY(b)};

void tg__convert_into(tg_tensor *dst, const tg_tensor *src)
{
    const tg_tensor *ops[2] = {dst, src};
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    tg_iter_run(&it, conv_table[src->dtype][dst->dtype], NULL);
}

tg_tensor *tg__as_dtype(tg_tensor *x, tg_dtype dt)
{
    if (x->dtype == dt)
        return tg_retain(x);
    return tg__contig_as(x, dt);
}

tg_tensor *tg__contig_as(const tg_tensor *x, tg_dtype dt)
{
    if (x->dtype == dt && tg_is_contiguous(x))
        return tg_retain((tg_tensor *)x);
    tg_tensor *y = tg__alloc(dt, x->ndim, x->shape);
    if (y)
        tg__convert_into(y, x);
    return y;
}

/* ---- the cast op ---------------------------------------------------------- */
typedef struct cast_attrs {
    int64_t to; /* a tg_dtype */
} cast_attrs;
static const tg_attr_spec cast_specs[] = {TG_SPEC_INT(cast_attrs, to, -1), {0}};

static tg_status cast_infer(tg_op_ctx *c)
{
    int64_t dt = ((const cast_attrs *)c->attr)->to;
    if (!tg_dtype_is_valid((int)dt))
        return tg__error(TG_ERR_DTYPE, "cast: invalid target dtype %lld", (long long)dt);
    return tg_infer_set(c, 0, (tg_dtype)dt, c->in[0]->ndim, c->in[0]->shape);
}

static tg_status cast_kernel(tg_op_ctx *c)
{
    tg__convert_into(c->out[0], c->in[0]);
    return TG_OK;
}

static tg_status cast_grad(tg_grad_ctx *g)
{
    /* the engine casts the gradient back to the input's dtype */
    if (tg_dtype_is_float(g->in_meta[0].dtype))
        g->dx[0] = g->dy[0];
    return TG_OK;
}

/* between float dtypes: the runner casts the tangent */
static tg_status cast_jvp(tg_jvp_ctx *c) { return tg__jvp_set(c, 0, c->dx[0]); }

static const tg_arg_spec cast_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec cast_out[] = {{"y", TG_DTS_ANY}, {0}};

const tg_op_def tg_op_cast = {
    .name = "cast", .n_in = 1, .n_out = 1, .inputs = cast_in, .outputs = cast_out,
    .attrs = {cast_specs, sizeof(cast_attrs)}, .flags = TG_OP_PURE | TG_OP_ELEMENTWISE,
    .infer = cast_infer, .kernel = {[TG_CPU] = cast_kernel}, .grad = cast_grad,
    .jvp = cast_jvp, .onnx = {"Cast", 13}};

tg_tensor *tg_cast(tg_tensor *x, tg_dtype dt)
{
    tg_attr a = TG_AI("to", (int64_t)dt);
    return tg_op_call(&tg_op_cast, 1, &x, &a, 1);
}
