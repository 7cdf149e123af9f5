/* Index-driven array ops: gather and its gradient scatter_add,
 * index_select and its gradient index_add, and embedding (row lookup whose
 * gradient is index_add). Out-of-range indices are found by the kernels
 * and reported as TG_ERR_INDEX naming the value and the bound. */
#include "autodiff/jvp.h"
#include "core/threadpool.h"
#include "kernels/cpu/iter.h"
#include "ops/array.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* the checks every index op's infer starts with: its axis attribute
 * against nd dims, then the index (in[1]): int32/int64, and 1-D when
 * one_d; *axis is the normalised axis */
static tg_status check_axis_index(const tg_op_ctx *c, int nd, bool one_d, int *axis)
{
    const char *op = c->op->name;
    const tg_tensor *index = c->in[1];
    if (!tg__norm_axis(op, (int)((const tg_axis_attrs *)c->attr)->axis, nd, axis))
        return tg_last_status();
    tg_status s = tg__require_index(op, index);
    if (s == TG_OK && one_d && index->ndim > 1)
        return tg__error(TG_ERR_SHAPE, "%s: index must be 1-D, got %d dims", op,
                         index->ndim);
    return s;
}

static tg_status index_error(const char *op, int64_t v, int axis, int64_t bound)
{
    if (bound == 0)
        return tg__error(TG_ERR_INDEX, "%s: index %lld is out of range for axis %d "
                         "of size 0 (the axis is empty)", op, (long long)v, axis);
    return tg__error(TG_ERR_INDEX, "%s: index %lld is out of range for axis %d of "
                     "size %lld (expected 0 to %lld)", op, (long long)v, axis,
                     (long long)bound, (long long)bound - 1);
}

/* ---- the schema the index ops share ------------------------------------------ */
static const tg_attr_spec axis_specs[] = {TG_SPEC_INT(tg_axis_attrs, axis, 0), {0}};
static const tg_attr_spec axis_shape_specs[] = {
    TG_SPEC_INT(tg_axis_attrs, axis, 0), TG_SPEC_INTS(tg_axis_attrs, shape), {0}};
static const tg_arg_spec data_index_in[] = {{"x", TG_DTS_ANY}, {"index", TG_DTS_INDEX}, {0}};
static const tg_arg_spec src_index_in[] = {
    {"src", TG_DTS_NUMBER}, {"index", TG_DTS_INDEX}, {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};
static const tg_arg_spec number_out[] = {{"y", TG_DTS_NUMBER}, {0}};

/* ---- gather, scatter_add, index_select, index_add: op(x, index) along an
 * axis, each the gradient of another; the two that make zeros of a given
 * shape (scatter_add, index_add) are also given m's shape */
static tg_tensor *axis_call(const tg_op_def *op, tg_tensor *x, tg_tensor *index,
                            int axis, const tg_meta *m)
{
    tg_tensor *in[2] = {x, index};
    tg_attr a[2] = {TG_AI("axis", axis),
                    TG_AINTS("shape", m ? m->shape : NULL, m ? m->ndim : 0)};
    return tg_op_call(op, 2, in, a, m ? 2 : 1);
}

/* dx = back(dy, index) along the same axis, with x's shape when `shaped`
 * (the ranks of x and dy are equal for all four ops) */
static tg_status axis_rule(tg_grad_ctx *g, const tg_op_def *back, bool shaped)
{
    const tg_meta *m = &g->in_meta[0];
    int axis = tg__attr_axis(g->attr, m->ndim);
    if (g->needs_grad[0] &&
        !(g->dx[0] = axis_call(back, g->dy[0], g->in[1], axis, shaped ? m : NULL)))
        return tg_last_status();
    return TG_OK;
}

/* ---- strided index rows (gather, scatter_add) -------------------------------
 * The iteration runs over the index's shape; the data operand is a view
 * whose stride along the axis is 0, so an element sits at
 * p + index * axis_stride. A bad index is recorded once and stops the row. */
typedef struct idx_ctx {
    int64_t bound;       /* valid indices: 0 .. bound - 1 */
    int64_t axis_stride; /* bytes */
    atomic_int bad;
    int64_t bad_value;
} idx_ctx;

static void report_bad(idx_ctx *c, int64_t v)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&c->bad, &expected, 1))
        c->bad_value = v;
}

/* operands: out, index, x view */
#define GATHER_ROW(NAME, ES, IT)                                            \
    static void NAME(char **p, const int64_t *s, int64_t n, void *vctx)     \
    {                                                                       \
        idx_ctx *c = vctx;                                                  \
        for (int64_t i = 0; i < n; i++) {                                   \
            int64_t v = *(const IT *)(p[1] + i * s[1]);                     \
            if (v < 0 || v >= c->bound) {                                   \
                report_bad(c, v);                                           \
                return;                                                     \
            }                                                               \
            memcpy(p[0] + i * s[0], p[2] + i * s[2] + v * c->axis_stride, (ES)); \
        }                                                                   \
    }
GATHER_ROW(gather_1_i32, 1, int32_t)
GATHER_ROW(gather_4_i32, 4, int32_t)
GATHER_ROW(gather_8_i32, 8, int32_t)
GATHER_ROW(gather_1_i64, 1, int64_t)
GATHER_ROW(gather_4_i64, 4, int64_t)
GATHER_ROW(gather_8_i64, 8, int64_t)

/* operands: index, src, out view (serial: indices may repeat) */
#define SCATTER_ADD_ROW(NAME, T, IT)                                        \
    static void NAME(char **p, const int64_t *s, int64_t n, void *vctx)     \
    {                                                                       \
        idx_ctx *c = vctx;                                                  \
        for (int64_t i = 0; i < n; i++) {                                   \
            int64_t v = *(const IT *)(p[0] + i * s[0]);                     \
            if (v < 0 || v >= c->bound) {                                   \
                report_bad(c, v);                                           \
                return;                                                     \
            }                                                               \
            *(T *)(p[2] + i * s[2] + v * c->axis_stride) += *(const T *)(p[1] + i * s[1]); \
        }                                                                   \
    }
#define SCATTER_ADD_ALL(IT, SUF)                                \
    SCATTER_ADD_ROW(scatter_add_f32_##SUF, float, IT)           \
    SCATTER_ADD_ROW(scatter_add_f64_##SUF, double, IT)          \
    SCATTER_ADD_ROW(scatter_add_i32_##SUF, int32_t, IT)         \
    SCATTER_ADD_ROW(scatter_add_i64_##SUF, int64_t, IT)         \
    SCATTER_ADD_ROW(scatter_add_u8_##SUF, uint8_t, IT)
SCATTER_ADD_ALL(int32_t, i32)
SCATTER_ADD_ALL(int64_t, i64)
static const tg_iter_row_fn scatter_add_rows[2][TG_NUM_DTYPES] = {
    {scatter_add_f32_i32, scatter_add_f64_i32, scatter_add_i32_i32,
     scatter_add_i64_i32, scatter_add_u8_i32, NULL},
    {scatter_add_f32_i64, scatter_add_f64_i64, scatter_add_i32_i64,
     scatter_add_i64_i64, scatter_add_u8_i64, NULL}};

/* a view of t with the index's shape whose axis stride is 0 */
static tg_tensor *axis_view(const tg_tensor *t, const tg_tensor *index, int axis)
{
    int64_t strides[TG_MAX_DIMS];
    for (int d = 0; d < index->ndim; d++)
        strides[d] = d == axis ? 0 : t->strides[d];
    return tg__alias(t, index->ndim, index->shape, strides, t->offset);
}

/* runs row over the operands ops (one of them an axis_view of t), serially
 * when indices may repeat; the bad index recorded first is the error */
static tg_status run_index_rows(const char *op, const tg_tensor *const ops[3],
                                tg_iter_row_fn row, bool serial, const tg_tensor *t,
                                int axis)
{
    idx_ctx ctx;
    ctx.bound = t->ndim ? t->shape[axis] : 1;
    ctx.axis_stride = t->ndim ? t->strides[axis] * (int64_t)tg_dtype_size(t->dtype) : 0;
    atomic_init(&ctx.bad, 0);
    ctx.bad_value = 0;
    tg_iter it;
    tg_iter_init(&it, 3, ops);
    if (serial)
        tg_iter_run_serial(&it, row, &ctx);
    else
        tg_iter_run(&it, row, &ctx);
    if (atomic_load(&ctx.bad))
        return index_error(op, ctx.bad_value, axis, ctx.bound);
    return TG_OK;
}

/* index of the same rank as the indexed tensor (`what`: the gather's data,
 * the scatter_add's output) of shape [nd] shape; index.shape[d] <= shape[d]
 * except on axis */
static tg_status check_index_fits(const char *op, const tg_tensor *index, int nd,
                                  const int64_t *shape, const char *what, int axis)
{
    char a[160], b[160];
    bool ok = index->ndim == nd;
    for (int d = 0; ok && d < nd; d++)
        ok = d == axis || index->shape[d] <= shape[d];
    if (ok)
        return TG_OK;
    return tg__error(TG_ERR_SHAPE, "%s: index of shape %s does not fit %s of shape %s "
                     "(expected the same rank and index.shape[d] <= shape[d] for "
                     "every d except axis %d)", op,
                     tg_shape_str(index->ndim, index->shape, a, sizeof a), what,
                     tg_shape_str(nd, shape, b, sizeof b), axis);
}

/* ---- gather -------------------------------------------------------------------- */

static tg_status gather_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0], *index = c->in[1];
    int axis;
    tg_status s = check_axis_index(c, x->ndim, false, &axis);
    if (s == TG_OK)
        s = check_index_fits(c->op->name, index, x->ndim, x->shape, "data", axis);
    return s == TG_OK ? tg_infer_set(c, 0, x->dtype, index->ndim, index->shape) : s;
}

static tg_status gather_kernel(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0], *index = c->in[1];
    int axis = tg__attr_axis(c->attr, x->ndim);
    tg_tensor *xv = axis_view(x, index, axis);
    if (!xv)
        return TG_ERR_NOMEM;
    static const tg_iter_row_fn rows[2][3] = {
        {gather_1_i32, gather_4_i32, gather_8_i32},
        {gather_1_i64, gather_4_i64, gather_8_i64}};
    size_t es = tg_dtype_size(x->dtype);
    tg_iter_row_fn row = rows[index->dtype == TG_INT64][es == 1 ? 0 : es == 4 ? 1 : 2];
    const tg_tensor *ops[3] = {c->out[0], index, xv};
    tg_status s = run_index_rows(c->op->name, ops, row, false, x, axis);
    tg_release(xv);
    return s;
}

static tg_status gather_grad(tg_grad_ctx *g)
{
    return axis_rule(g, &tg_op_scatter_add, true);
}

const tg_op_def tg_op_gather = {
    .name = "gather", .n_in = 2, .n_out = 1, .inputs = data_index_in, .outputs = any_out,
    .attrs = {axis_specs, sizeof(tg_axis_attrs)}, .flags = TG_OP_PURE,
    .save_inputs = 1u << 1, .infer = gather_infer, .kernel = {[TG_CPU] = gather_kernel},
    .grad = gather_grad, .jvp = tg__jvp_linear, .onnx = {"GatherElements", 13}};

tg_tensor *tg_gather(tg_tensor *x, int axis, tg_tensor *index)
{
    return axis_call(&tg_op_gather, x, index, axis, NULL);
}

/* ---- scatter_add: zeros of `shape` with src added at index along axis ----
 * (torch.zeros(shape).scatter_add_(axis, index, src), src shaped like
 * index); gather's gradient, whose own gradient is gather again */
static tg_status scatter_add_infer(tg_op_ctx *c)
{
    const tg_tensor *src = c->in[0], *index = c->in[1];
    const char *op = c->op->name;
    const int64_t *shape = ((const tg_axis_attrs *)c->attr)->shape.v;
    int nd = ((const tg_axis_attrs *)c->attr)->shape.n;
    if (!tg__check_shape(op, nd, shape))
        return tg_last_status();
    int axis;
    tg_status s = check_axis_index(c, nd, false, &axis);
    if (s != TG_OK)
        return s;
    if (!scatter_add_rows[0][src->dtype])
        return tg__error(TG_ERR_DTYPE, "%s: not supported for %s", op,
                         tg_dtype_name(src->dtype));
    char a[160], b[160];
    if (!tg__shape_eq(src->ndim, src->shape, index->ndim, index->shape))
        return tg__error(TG_ERR_SHAPE, "%s: src of shape %s and index of shape %s "
                         "must have the same shape", op,
                         tg_shape_str(src->ndim, src->shape, a, sizeof a),
                         tg_shape_str(index->ndim, index->shape, b, sizeof b));
    s = check_index_fits(op, index, nd, shape, "output", axis);
    return s == TG_OK ? tg_infer_set(c, 0, src->dtype, nd, shape) : s;
}

static tg_status scatter_add_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    const tg_tensor *src = c->in[0], *index = c->in[1];
    int axis = tg__attr_axis(c->attr, out->ndim);
    memset(tg__base(out), 0, (size_t)out->numel * tg_dtype_size(out->dtype));
    tg_tensor *ov = axis_view(out, index, axis);
    if (!ov)
        return TG_ERR_NOMEM;
    const tg_tensor *ops[3] = {index, src, ov};
    tg_status s = run_index_rows(c->op->name, ops,
                                 scatter_add_rows[index->dtype == TG_INT64][out->dtype],
                                 true, out, axis);
    tg_release(ov);
    return s;
}

static tg_status scatter_add_grad(tg_grad_ctx *g)
{
    return axis_rule(g, &tg_op_gather, false);
}

const tg_op_def tg_op_scatter_add = {
    .name = "scatter_add", .n_in = 2, .n_out = 1, .inputs = src_index_in,
    .outputs = number_out, .attrs = {axis_shape_specs, sizeof(tg_axis_attrs)},
    .flags = TG_OP_PURE, .save_inputs = 1u << 1, .infer = scatter_add_infer,
    .kernel = {[TG_CPU] = scatter_add_kernel}, .grad = scatter_add_grad,
    .jvp = tg__jvp_linear, .onnx = {"ScatterElements", 16}};

/* ---- contiguous row selection (index_select, embedding) ---------------------- */
/* the index values as int64, each checked against [0, bound); NULL with an
 * error naming op, the value and the bound */
static int64_t *read_indices(const char *op, tg_tensor *index, int axis,
                             int64_t bound)
{
    tg_tensor *ic = tg__contig(index);
    int64_t n = index->numel;
    int64_t *v = ic ? malloc((size_t)(n > 0 ? n : 1) * sizeof *v) : NULL;
    if (!v) {
        tg_release(ic);
        return tg__error_null(TG_ERR_NOMEM, "%s: out of memory", op);
    }
    const void *p = tg__base(ic);
    bool i32 = ic->dtype == TG_INT32;
    for (int64_t i = 0; i < n; i++) {
        v[i] = i32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
        if (v[i] < 0 || v[i] >= bound) {
            index_error(op, v[i], axis, bound);
            free(v);
            v = NULL;
            break;
        }
    }
    tg_release(ic);
    return v;
}

/* x seen as [outer, dim, inner]; out is [outer, n_idx, inner] contiguous */
typedef struct select_job {
    char *out;
    const char *x;
    const int64_t *idx;
    int64_t n_idx, dim;
    size_t row; /* bytes of one inner run */
    bool one;   /* one element per run (naturally aligned for its size) */
} select_job;

/* one element per row (selection along the last axis: resizing, gathers
 * of columns): a typed loop per outer row instead of a copy per element,
 * about 5x faster */
#define SELECT_ELEMS(NAME, T)                                                  \
    static void NAME(const select_job *j, int64_t begin, int64_t end)          \
    {                                                                          \
        int64_t o = begin / j->n_idx, k = begin % j->n_idx;                    \
        T *dst = (T *)j->out + begin;                                          \
        const T *src = (const T *)j->x + o * j->dim;                           \
        for (int64_t r = begin; r < end; k = 0, src += j->dim) {               \
            int64_t n = j->n_idx - k < end - r ? j->n_idx - k : end - r;       \
            const int64_t *idx = j->idx + k;                                   \
            for (int64_t t = 0; t < n; t++)                                    \
                dst[t] = src[idx[t]];                                          \
            dst += n;                                                          \
            r += n;                                                            \
        }                                                                      \
    }
SELECT_ELEMS(select_elems4, uint32_t)
SELECT_ELEMS(select_elems8, uint64_t)

static void select_range(void *arg, int64_t begin, int64_t end)
{
    const select_job *j = arg;
    if (j->one && (j->row == 4 || j->row == 8)) {
        (j->row == 4 ? select_elems4 : select_elems8)(j, begin, end);
        return;
    }
    int64_t o = begin / j->n_idx, k = begin % j->n_idx;
    char *dst = j->out + (size_t)begin * j->row;
    for (int64_t r = begin; r < end; r++, dst += j->row) {
        const char *src = j->x + (size_t)(o * j->dim + j->idx[k]) * j->row;
        switch (j->row) { /* constant sizes become plain moves */
        case 1: memcpy(dst, src, 1); break;
        case 4: memcpy(dst, src, 4); break;
        case 8: memcpy(dst, src, 8); break;
        default: memcpy(dst, src, j->row); break;
        }
        if (++k == j->n_idx) {
            k = 0;
            o++;
        }
    }
}

static tg_status select_rows(const char *op, tg_tensor *out, tg_tensor *x, int axis,
                             tg_tensor *index)
{
    int64_t n_idx = index->numel, dim = x->shape[axis];
    int64_t outer = tg__span(x->shape, 0, axis);
    int64_t inner = tg__span(x->shape, axis + 1, x->ndim);
    int64_t *idx = read_indices(op, index, axis, dim);
    if (!idx)
        return tg_last_status();
    tg_tensor *xc = out->numel > 0 ? tg__contig(x) : tg_retain(x);
    if (!xc) {
        free(idx);
        return TG_ERR_NOMEM;
    }
    select_job j = {tg__base(out), tg__base(xc), idx, n_idx, dim,
                    (size_t)inner * tg_dtype_size(x->dtype), inner == 1};
    int64_t rows = outer * n_idx;
    if (out->numel >= 2 * TG_ITER_GRAIN && rows > 1)
        tg_parallel_for(rows, inner >= TG_ITER_GRAIN ? 1 : TG_ITER_GRAIN / inner,
                        select_range, &j);
    else if (out->numel > 0)
        select_range(&j, 0, rows);
    tg_release(xc);
    free(idx);
    return TG_OK;
}

/* ---- index_add: zeros of `shape`, src rows added at index along axis ---- */
typedef struct add_job {
    char *out;
    const char *src;
    const int64_t *idx;
    int64_t n_idx, dim, inner;
    tg_dtype dt;
} add_job;

#define INDEX_ADD(NAME, T)                                                  \
    static void NAME(const add_job *j, int64_t o0, int64_t o1)              \
    {                                                                       \
        for (int64_t o = o0; o < o1; o++)                                   \
            for (int64_t k = 0; k < j->n_idx; k++) {                        \
                T *d = (T *)j->out + (o * j->dim + j->idx[k]) * j->inner;   \
                const T *s = (const T *)j->src + (o * j->n_idx + k) * j->inner; \
                for (int64_t e = 0; e < j->inner; e++)                      \
                    d[e] += s[e];                                           \
            }                                                               \
    }
INDEX_ADD(index_add_f32, float)
INDEX_ADD(index_add_f64, double)
INDEX_ADD(index_add_i32, int32_t)
INDEX_ADD(index_add_i64, int64_t)
INDEX_ADD(index_add_u8, uint8_t)
typedef void (*index_add_fn)(const add_job *, int64_t, int64_t);
static const index_add_fn index_add_fns[TG_NUM_DTYPES] = {
    index_add_f32, index_add_f64, index_add_i32, index_add_i64, index_add_u8, NULL};

/* distinct outer rows never collide, so they may run in parallel */
static void add_range(void *arg, int64_t begin, int64_t end)
{
    const add_job *j = arg;
    index_add_fns[j->dt](j, begin, end);
}

static tg_status index_add_infer(tg_op_ctx *c)
{
    const tg_tensor *src = c->in[0], *index = c->in[1];
    const char *op = c->op->name;
    const int64_t *shape = ((const tg_axis_attrs *)c->attr)->shape.v;
    int nd = ((const tg_axis_attrs *)c->attr)->shape.n;
    if (!tg__check_shape(op, nd, shape))
        return tg_last_status();
    int axis;
    if (nd == 0)
        return tg__error(TG_ERR_SHAPE, "%s: the output must have at least one dim", op);
    tg_status s = check_axis_index(c, nd, true, &axis);
    if (s != TG_OK)
        return s;
    if (!index_add_fns[src->dtype])
        return tg__error(TG_ERR_DTYPE, "%s: not supported for %s", op,
                         tg_dtype_name(src->dtype));
    int64_t want[TG_MAX_DIMS];
    memcpy(want, shape, (size_t)nd * sizeof *shape);
    want[axis] = index->numel;
    if (!tg__shape_eq(src->ndim, src->shape, nd, want)) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE, "%s: src has shape %s, expected %s (the output "
                         "shape with axis %d sized as the index)", op,
                         tg_shape_str(src->ndim, src->shape, a, sizeof a),
                         tg_shape_str(nd, want, b, sizeof b), axis);
    }
    return tg_infer_set(c, 0, src->dtype, nd, shape);
}

static tg_status index_add_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    int axis = tg__attr_axis(c->attr, out->ndim);
    memset(tg__base(out), 0, (size_t)out->numel * tg_dtype_size(out->dtype));
    int64_t *idx = read_indices(c->op->name, c->in[1], axis, out->shape[axis]);
    if (!idx)
        return tg_last_status();
    tg_tensor *src = tg__contig(c->in[0]);
    if (!src) {
        free(idx);
        return TG_ERR_NOMEM;
    }
    add_job j = {tg__base(out), tg__base(src), idx, c->in[1]->numel, out->shape[axis],
                 tg__span(out->shape, axis + 1, out->ndim), out->dtype};
    int64_t outer = tg__span(out->shape, 0, axis), per = j.n_idx * j.inner;
    if (outer > 1 && outer * per >= 2 * TG_ITER_GRAIN)
        tg_parallel_for(outer, per >= TG_ITER_GRAIN ? 1 : TG_ITER_GRAIN / per, add_range, &j);
    else
        add_range(&j, 0, outer);
    tg_release(src);
    free(idx);
    return TG_OK;
}

static tg_status index_add_grad(tg_grad_ctx *g)
{
    return axis_rule(g, &tg_op_index_select, false);
}

const tg_op_def tg_op_index_add = {
    .name = "index_add", .n_in = 2, .n_out = 1, .inputs = src_index_in,
    .outputs = number_out, .attrs = {axis_shape_specs, sizeof(tg_axis_attrs)},
    .flags = TG_OP_PURE, .save_inputs = 1u << 1, .infer = index_add_infer,
    .kernel = {[TG_CPU] = index_add_kernel}, .grad = index_add_grad,
    .jvp = tg__jvp_linear};

/* ---- index_select ---------------------------------------------------------------- */
static tg_status index_select_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0], *index = c->in[1];
    const char *op = c->op->name;
    if (x->ndim == 0)
        return tg__error(TG_ERR_SHAPE, "%s: x is 0-d; it needs an axis to select on", op);
    int axis;
    tg_status s = check_axis_index(c, x->ndim, true, &axis);
    if (s != TG_OK)
        return s;
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = index->numel;
    return tg_infer_set(c, 0, x->dtype, x->ndim, shape);
}

static tg_status index_select_kernel(tg_op_ctx *c)
{
    int axis = tg__attr_axis(c->attr, c->in[0]->ndim);
    return select_rows(c->op->name, c->out[0], c->in[0], axis, c->in[1]);
}

static tg_status index_select_grad(tg_grad_ctx *g)
{
    return axis_rule(g, &tg_op_index_add, true);
}

const tg_op_def tg_op_index_select = {
    .name = "index_select", .n_in = 2, .n_out = 1, .inputs = data_index_in,
    .outputs = any_out, .attrs = {axis_specs, sizeof(tg_axis_attrs)},
    .flags = TG_OP_PURE, .save_inputs = 1u << 1, .infer = index_select_infer,
    .kernel = {[TG_CPU] = index_select_kernel}, .grad = index_select_grad,
    .jvp = tg__jvp_linear, .onnx = {"Gather", 13}};

tg_tensor *tg_index_select(tg_tensor *x, int axis, tg_tensor *index)
{
    return axis_call(&tg_op_index_select, x, index, axis, NULL);
}

/* ---- embedding: rows of weight [V, D] picked by indices of any shape ---- */
static tg_status embedding_infer(tg_op_ctx *c)
{
    const tg_tensor *w = c->in[0], *idx = c->in[1];
    const char *op = c->op->name;
    char buf[160];
    if (w->ndim != 2)
        return tg__error(TG_ERR_SHAPE, "%s: weight must be 2-D [V, D], got shape %s",
                         op, tg_shape_str(w->ndim, w->shape, buf, sizeof buf));
    tg_status s = tg__require_index(op, idx);
    if (s != TG_OK)
        return s;
    if (idx->ndim >= TG_MAX_DIMS)
        return tg__error(TG_ERR_SHAPE, "%s: indices have %d dims; the result would "
                         "exceed %d", op, idx->ndim, TG_MAX_DIMS);
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, idx->shape, sizeof shape);
    shape[idx->ndim] = w->shape[1];
    return tg_infer_set(c, 0, w->dtype, idx->ndim + 1, shape);
}

static tg_status embedding_kernel(tg_op_ctx *c)
{
    return select_rows(c->op->name, c->out[0], c->in[0], 0, c->in[1]);
}

/* dW: the rows of dy added into zeros [V, D] at the indices */
static tg_status embedding_grad(tg_grad_ctx *g)
{
    if (!g->needs_grad[0])
        return TG_OK;
    tg_tensor *idx = g->in[1];
    int64_t n = idx->numel, rows[2] = {n, g->in_meta[0].shape[1]};
    g->dx[0] = axis_call(&tg_op_index_add, tg_reshape(g->dy[0], 2, rows),
                         tg_reshape(idx, 1, &n), 0, &g->in_meta[0]);
    return g->dx[0] ? TG_OK : tg_last_status();
}

static const tg_arg_spec embedding_in[] = {
    {"weight", TG_DTS_ANY}, {"indices", TG_DTS_INDEX}, {0}};

/* ONNX: Gather(weight, indices) along axis 0 */
const tg_op_def tg_op_embedding = {
    .name = "embedding", .n_in = 2, .n_out = 1, .inputs = embedding_in,
    .outputs = any_out, .flags = TG_OP_PURE, .save_inputs = 1u << 1,
    .infer = embedding_infer, .kernel = {[TG_CPU] = embedding_kernel},
    .grad = embedding_grad, .jvp = tg__jvp_linear, .onnx = {"Gather", 13}};

tg_tensor *tg_embedding(tg_tensor *weight, tg_tensor *indices)
{
    tg_tensor *in[2] = {weight, indices};
    return tg_op_call(&tg_op_embedding, 2, in, NULL, 0);
}
