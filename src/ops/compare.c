/* Comparisons (eq ne lt le gt ge) and logic (and or xor not) giving bool
 * tensors, and where(cond, a, b). Comparisons compute in the promoted
 * dtype of their inputs; logic treats any non-zero as true. */
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"

#define CMP_ROW(NAME, T, EXPR)                                              \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)      \
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

#define CMP_OP(OP, NAME, ROWS, LOGIC)                                       \
    const cmp_def tg_op_##OP = {                                            \
        {.name = NAME, .n_in = 2, .n_out = 1, .nondiff = true,              \
         .infer = cmp_infer, .kernel = cmp_kernel},                         \
        ROWS, LOGIC};                                                       \
    tg_tensor *tg_##OP(tg_tensor *a, tg_tensor *b)                          \
    {                                                                       \
        tg_tensor *in[2] = {a, b};                                          \
        return tg_op_call(&tg_op_##OP.def, 2, in, NULL, 0);                 \
    }

CMP_OP(eq, "eq", eq_rows, NULL)
CMP_OP(ne, "ne", ne_rows, NULL)
CMP_OP(lt, "lt", lt_rows, NULL)
CMP_OP(le, "le", le_rows, NULL)
CMP_OP(gt, "gt", gt_rows, NULL)
CMP_OP(ge, "ge", ge_rows, NULL)
CMP_OP(logical_and, "logical_and", NULL, and_b)
CMP_OP(logical_or, "logical_or", NULL, or_b)
CMP_OP(logical_xor, "logical_xor", NULL, xor_b)

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

const tg_op_def tg_op_logical_not = {
    .name = "logical_not", .n_in = 1, .n_out = 1, .nondiff = true,
    .infer = not_infer, .kernel = not_kernel};

tg_tensor *tg_logical_not(tg_tensor *x)
{
    return tg_op_call(&tg_op_logical_not, 1, &x, NULL, 0);
}

/* ---- where ----------------------------------------------------------------- */
#define WHERE_ROW(NAME, T)                                                  \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)      \
    {                                                                       \
        (void)ctx;                                                          \
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

const tg_op_def tg_op_where = {
    .name = "where", .n_in = 3, .n_out = 1, .save_inputs = 1u,
    .infer = where_infer, .kernel = where_kernel, .grad = where_grad};

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
