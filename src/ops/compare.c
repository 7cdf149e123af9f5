/* Comparisons (eq ne lt le gt ge) and logic (and or xor not) giving bool
 * tensors, and where(cond, a, b). Comparisons compute in the promoted
 * dtype of their inputs; logic treats any non-zero as true. */
#include "autodiff/jvp.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"

#include <string.h>

#define CMP_ROW(NAME, T, EXPR)                                              \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        (void)ctx;                                                          \
        for (int64_t i = 0; i < n; i++) {                                   \
            T x = *(const T *)(p[1] + i * s[1]);                            \
            T y = *(const T *)(p[2] + i * s[2]);                            \
            *(uint8_t *)(p[0] + i * s[0]) = (uint8_t)(EXPR);                \
        }                                                                   \
    }
#define CMP_ALL(OP, EXPR)                                                   \
    CMP_ROW(OP##_f32, float, EXPR)                                          \
    CMP_ROW(OP##_f64, double, EXPR)                                         \
    CMP_ROW(OP##_i32, int32_t, EXPR)                                        \
    CMP_ROW(OP##_i64, int64_t, EXPR)                                        \
    CMP_ROW(OP##_u8, uint8_t, EXPR)                                         \
    static const tg_iter_row_fn OP##_rows[TG_NUM_DTYPES] = {                \
        OP##_f32, OP##_f64, OP##_i32, OP##_i64, OP##_u8, OP##_u8};

CMP_ALL(eq, x == y)
CMP_ALL(ne, x != y)
CMP_ALL(lt, x < y)
CMP_ALL(le, x <= y)
CMP_ALL(gt, x > y)
CMP_ALL(ge, x >= y)
/* logic runs on bool copies of the inputs */
CMP_ROW(and_b, uint8_t, x && y)
CMP_ROW(or_b, uint8_t, x || y)
CMP_ROW(xor_b, uint8_t, (x != 0) != (y != 0))

typedef struct cmp_def {
    tg_op_def def;
    const tg_iter_row_fn *rows; /* per compute dtype, or NULL for logic */
    tg_iter_row_fn logic;
} cmp_def;

static tg_status cmp_infer(tg_op_ctx *c) { return tg_infer_broadcast(c, TG_BOOL); }

static tg_status cmp_kernel(tg_op_ctx *c)
{
    const cmp_def *d = (const cmp_def *)c->op;
    tg_dtype dt = d->rows ? tg_result_type(c->in[0], c->in[1]) : TG_BOOL;
    tg_tensor *a = tg__as_dtype(c->in[0], dt);
    tg_tensor *b = tg__as_dtype(c->in[1], dt);
    if (a && b) {
        const tg_tensor *ops[3] = {c->out[0], a, b};
        tg_iter it;
        tg_iter_init(&it, 3, ops);
        tg_iter_run(&it, d->rows ? d->rows[dt] : d->logic, NULL);
    }
    tg_release(a);
    tg_release(b);
    return a && b ? TG_OK : TG_ERR_NOMEM;
}

static const tg_arg_spec cmp_in[] = {{"a", TG_DTS_ANY}, {"b", TG_DTS_ANY}, {0}};
static const tg_arg_spec bool_out[] = {{"y", TG_DTS_BOOL}, {0}};
#define CMP_COMMON(OP)                                                      \
    .name = #OP, .n_in = 2, .n_out = 1, .inputs = cmp_in, .outputs = bool_out, \
    .nondiff = true, .infer = cmp_infer, .kernel = {[TG_CPU] = cmp_kernel}
#define CMP_FLAGS (TG_OP_PURE | TG_OP_ELEMENTWISE)

const cmp_def tg_op_eq = {{CMP_COMMON(eq), .flags = CMP_FLAGS | TG_OP_COMMUTATIVE,
                           .onnx = {"Equal", 13}}, eq_rows, NULL};
const cmp_def tg_op_ne = {{CMP_COMMON(ne), .flags = CMP_FLAGS | TG_OP_COMMUTATIVE},
                          ne_rows, NULL};
const cmp_def tg_op_lt = {{CMP_COMMON(lt), .flags = CMP_FLAGS, .onnx = {"Less", 13}},
                          lt_rows, NULL};
const cmp_def tg_op_le = {{CMP_COMMON(le), .flags = CMP_FLAGS,
                           .onnx = {"LessOrEqual", 16}}, le_rows, NULL};
const cmp_def tg_op_gt = {{CMP_COMMON(gt), .flags = CMP_FLAGS, .onnx = {"Greater", 13}},
                          gt_rows, NULL};
const cmp_def tg_op_ge = {{CMP_COMMON(ge), .flags = CMP_FLAGS,
                           .onnx = {"GreaterOrEqual", 16}}, ge_rows, NULL};
const cmp_def tg_op_logical_and = {{CMP_COMMON(logical_and),
                                    .flags = CMP_FLAGS | TG_OP_COMMUTATIVE,
                                    .onnx = {"And", 7}}, NULL, and_b};
const cmp_def tg_op_logical_or = {{CMP_COMMON(logical_or),
                                   .flags = CMP_FLAGS | TG_OP_COMMUTATIVE,
                                   .onnx = {"Or", 7}}, NULL, or_b};
const cmp_def tg_op_logical_xor = {{CMP_COMMON(logical_xor),
                                    .flags = CMP_FLAGS | TG_OP_COMMUTATIVE,
                                    .onnx = {"Xor", 7}}, NULL, xor_b};

static tg_tensor *cmp(const cmp_def *op, tg_tensor *a, tg_tensor *b)
{
    tg_tensor *in[2] = {a, b};
    return tg_op_call(&op->def, 2, in, NULL, 0);
}

tg_tensor *tg_eq(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_eq, a, b); }
tg_tensor *tg_ne(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_ne, a, b); }
tg_tensor *tg_lt(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_lt, a, b); }
tg_tensor *tg_le(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_le, a, b); }
tg_tensor *tg_gt(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_gt, a, b); }
tg_tensor *tg_ge(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_ge, a, b); }
tg_tensor *tg_logical_and(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_logical_and, a, b); }
tg_tensor *tg_logical_or(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_logical_or, a, b); }
tg_tensor *tg_logical_xor(tg_tensor *a, tg_tensor *b) { return cmp(&tg_op_logical_xor, a, b); }

/* ---- not ------------------------------------------------------------------- */
static void not_row(char **p, const int64_t *s, int64_t n, void *ctx)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++)
        *(uint8_t *)(p[0] + i * s[0]) = !*(const uint8_t *)(p[1] + i * s[1]);
}

static tg_status not_infer(tg_op_ctx *c)
{
    return tg_infer_set(c, 0, TG_BOOL, c->in[0]->ndim, c->in[0]->shape);
}

static tg_status not_kernel(tg_op_ctx *c)
{
    tg_tensor *x = tg__as_dtype(c->in[0], TG_BOOL);
    if (!x)
        return TG_ERR_NOMEM;
    const tg_tensor *ops[2] = {c->out[0], x};
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    tg_iter_run(&it, not_row, NULL);
    tg_release(x);
    return TG_OK;
}

static const tg_arg_spec not_in[] = {{"x", TG_DTS_ANY}, {0}};

const tg_op_def tg_op_logical_not = {
    .name = "logical_not", .n_in = 1, .n_out = 1, .inputs = not_in, .outputs = bool_out,
    .flags = TG_OP_PURE | TG_OP_ELEMENTWISE, .nondiff = true,
    .infer = not_infer, .kernel = {[TG_CPU] = not_kernel}, .onnx = {"Not", 1}};

tg_tensor *tg_logical_not(tg_tensor *x)
{
    return tg_op_call(&tg_op_logical_not, 1, &x, NULL, 0);
}

/* ---- where ----------------------------------------------------------------- */
/* A row whose condition is one element (stride 0: a scalar or broadcast
 * condition, as in the optimizers' first-step select) copies one side; a
 * contiguous row reads both sides before it selects, so the loop
 * vectorizes as a blend; any other row goes element by element. */
#define WHERE_ROW(NAME, T)                                                  \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        (void)ctx;                                                          \
        const int64_t es = (int64_t)sizeof(T);                              \
        if (s[1] == 0) {                                                    \
            bool take_a = *(const uint8_t *)p[1] != 0;                      \
            const char *src = take_a ? p[2] : p[3];                         \
            int64_t ss = take_a ? s[2] : s[3];                              \
            if (s[0] == es && ss == es)                                     \
                memmove(p[0], src, (size_t)(n * es));                       \
            else                                                            \
                for (int64_t i = 0; i < n; i++)                             \
                    *(T *)(p[0] + i * s[0]) = *(const T *)(src + i * ss);   \
            return;                                                         \
        }                                                                   \
        if (s[0] == es && s[1] == 1 && s[2] == es && s[3] == es) {          \
            T *o = (T *)p[0];                                               \
            const uint8_t *k = (const uint8_t *)p[1];                       \
            const T *a = (const T *)p[2], *b = (const T *)p[3];             \
            for (int64_t i = 0; i < n; i++) {                               \
                T x = a[i], y = b[i];                                       \
                o[i] = k[i] ? x : y;                                        \
            }                                                               \
            return;                                                         \
        }                                                                   \
        for (int64_t i = 0; i < n; i++)                                     \
            *(T *)(p[0] + i * s[0]) = *(const uint8_t *)(p[1] + i * s[1])   \
                                          ? *(const T *)(p[2] + i * s[2])   \
                                          : *(const T *)(p[3] + i * s[3]);  \
    }
WHERE_ROW(where_4, uint32_t)
WHERE_ROW(where_8, uint64_t)
WHERE_ROW(where_1, uint8_t)

static tg_status where_infer(tg_op_ctx *c)
{
    const tg_tensor *k = c->in[0], *a = c->in[1], *b = c->in[2];
    int n1, n2;
    int64_t s1[TG_MAX_DIMS], s2[TG_MAX_DIMS];
    tg_status s = tg_broadcast_shapes("where", a->ndim, a->shape, b->ndim, b->shape,
                                      &n1, s1);
    if (s == TG_OK)
        s = tg_broadcast_shapes("where", k->ndim, k->shape, n1, s1, &n2, s2);
    return s == TG_OK ? tg_infer_set(c, 0, tg_result_type(a, b), n2, s2) : s;
}

static tg_status where_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg_tensor *k = tg__as_dtype(c->in[0], TG_BOOL);
    tg_tensor *a = tg__as_dtype(c->in[1], out->dtype);
    tg_tensor *b = tg__as_dtype(c->in[2], out->dtype);
    if (k && a && b) {
        const tg_tensor *ops[4] = {out, k, a, b};
        size_t es = tg_dtype_size(out->dtype);
        tg_iter it;
        tg_iter_init(&it, 4, ops);
        tg_iter_run(&it, es == 8 ? where_8 : es == 4 ? where_4 : where_1, NULL);
    }
    tg_release(k);
    tg_release(a);
    tg_release(b);
    return k && a && b ? TG_OK : TG_ERR_NOMEM;
}

static tg_status where_grad(tg_grad_ctx *g)
{
    tg_tensor *k = g->in[0], *dy = g->dy[0], *zero = tg_zeros_like(dy);
    if (g->needs_grad[1])
        g->dx[1] = tg_sum_to(tg_where(k, dy, zero), g->in_meta[1].ndim, g->in_meta[1].shape);
    if (g->needs_grad[2])
        g->dx[2] = tg_sum_to(tg_where(k, zero, dy), g->in_meta[2].ndim, g->in_meta[2].shape);
    return TG_OK;
}

/* where(cond, ta, tb), zero for an absent tangent */
static tg_status where_jvp(tg_jvp_ctx *c)
{
    tg_tensor *const *t = c->dx;
    if (!t[1] && !t[2]) /* a float condition's tangent has no effect */
        return TG_OK;
    tg_tensor *ta = t[1] ? t[1] : tg__jvp_scalar(c, 0.0);
    tg_tensor *tb = t[2] ? t[2] : tg__jvp_scalar(c, 0.0);
    return tg__jvp_set(c, 0, tg_where(c->in[0], ta, tb));
}

static const tg_arg_spec where_in[] = {
    {"cond", TG_DTS_ANY | TG_ARG_NO_GRAD}, {"a", TG_DTS_ANY}, {"b", TG_DTS_ANY}, {0}};
static const tg_arg_spec where_out[] = {{"y", TG_DTS_ANY}, {0}};

const tg_op_def tg_op_where = {
    .name = "where", .n_in = 3, .n_out = 1, .inputs = where_in, .outputs = where_out,
    .flags = TG_OP_PURE | TG_OP_ELEMENTWISE, .save_inputs = 1u,
    .infer = where_infer, .kernel = {[TG_CPU] = where_kernel}, .grad = where_grad,
    .jvp = where_jvp, .onnx = {"Where", 16}};

tg_tensor *tg_where(tg_tensor *cond, tg_tensor *a, tg_tensor *b)
{
    tg_tensor *in[3] = {cond, a, b};
    return tg_op_call(&tg_op_where, 3, in, NULL, 0);
}

const tg_op_def *const tg_ops_compare[] = {
    &tg_op_eq.def, &tg_op_ne.def, &tg_op_lt.def, &tg_op_le.def, &tg_op_gt.def,
    &tg_op_ge.def, &tg_op_logical_and.def, &tg_op_logical_or.def,
    &tg_op_logical_xor.def, &tg_op_logical_not, &tg_op_where, NULL,
};
