/* Sorting along one axis: topk (ONNX TopK, torch.topk), and through it
 * tg_sort and tg_argsort. One stable merge sort per column: ties keep
 * the lower index first (ONNX's rule; PyTorch's stable sort), NaN counts
 * as larger than every number (PyTorch's order). */
#include "autodiff/jvp.h"
#include "ops/array.h"
#include "ops/nn_util.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct topk_attrs {
    int64_t k, axis;
    bool largest, sorted; /* sorted: the result is always sorted */
} topk_attrs;
static const tg_attr_spec topk_specs[] = {
    TG_SPEC_INT(topk_attrs, k, 0, TG_REQUIRED, TG_MIN(-1)), TG_SPEC_INT(topk_attrs, axis, -1),
    TG_SPEC_BOOL(topk_attrs, largest, 1), TG_SPEC_BOOL(topk_attrs, sorted, 1), {0}};

/* ---- kernel: x viewed as [outer, n, inner], one column (o, j) at a time ---- */
typedef struct topk_task {
    const char *x;
    char *values;
    int64_t *indices;
    int64_t n, inner, k;
    bool largest;
    atomic_int nomem;
} topk_task;

/* a goes before b: larger (smaller) first, NaN as the largest value; equal
 * values are neither, so the stable sort keeps them in index order */
#define BEFORE(a, b, largest)                                                   \
    ((largest) ? ((a) > (b) || ((a) != (a) && (b) == (b)))                     \
               : ((a) < (b) || ((a) == (a) && (b) != (b))))

#define TOPK_ROWS(SFX, T)                                                       \
    /* bottom-up merge sort of idx (positions along the column) */             \
    static void msort_##SFX(const T *x, int64_t in, int64_t *idx, int64_t *tmp, \
                            int64_t n, bool largest)                            \
    {                                                                           \
        int64_t *src = idx, *dst = tmp;                                         \
        for (int64_t w = 1; w < n; w *= 2) {                                    \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                         \
                int64_t mid = lo + w < n ? lo + w : n;                          \
                int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;                   \
                int64_t i = lo, j = mid, o = lo;                                \
                while (i < mid && j < hi) /* j first only when strictly before */ \
                    dst[o++] = BEFORE(x[src[j] * in], x[src[i] * in], largest)  \
                                   ? src[j++] : src[i++];                       \
                while (i < mid)                                                 \
                    dst[o++] = src[i++];                                        \
                while (j < hi)                                                  \
                    dst[o++] = src[j++];                                        \
            }                                                                   \
            int64_t *t = src;                                                   \
            src = dst;                                                          \
            dst = t;                                                            \
        }                                                                       \
        if (src != idx)                                                         \
            memcpy(idx, src, (size_t)n * sizeof *idx);                          \
    }                                                                           \
    static void topk_##SFX(void *ctx, int64_t begin, int64_t end)               \
    {                                                                           \
        topk_task *t = ctx;                                                     \
        const int64_t n = t->n, in = t->inner, k = t->k;                        \
        int64_t *idx = malloc((size_t)(2 * n) * sizeof *idx);                   \
        if (!idx) {                                                             \
            atomic_store(&t->nomem, 1);                                         \
            return;                                                             \
        }                                                                       \
        for (int64_t c = begin; c < end; c++) {                                 \
            int64_t o = c / in, j = c % in;                                     \
            const T *x = (const T *)t->x + o * n * in + j;                      \
            for (int64_t i = 0; i < n; i++)                                     \
                idx[i] = i;                                                     \
            msort_##SFX(x, in, idx, idx + n, n, t->largest);                    \
            T *v = (T *)t->values + o * k * in + j;                             \
            int64_t *ix = t->indices + o * k * in + j;                          \
            for (int64_t r = 0; r < k; r++) {                                   \
                v[r * in] = x[idx[r] * in];                                     \
                ix[r * in] = idx[r];                                            \
            }                                                                   \
        }                                                                       \
        free(idx);                                                              \
    }
TOPK_ROWS(f32, float)
TOPK_ROWS(f64, double)
TOPK_ROWS(i32, int32_t)
TOPK_ROWS(i64, int64_t)
TOPK_ROWS(u8, uint8_t)
static const tg_range_fn topk_rows[TG_NUM_DTYPES] = {topk_f32, topk_f64, topk_i32, topk_i64,
                                                     topk_u8, NULL};

/* the axis normalised (a 0-d tensor has one implicit axis of size 1) */
static int topk_axis(const topk_attrs *a, int ndim)
{
    return (int)(a->axis < 0 ? a->axis + (ndim ? ndim : 1) : a->axis);
}

static tg_status topk_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const topk_attrs *a = c->attr;
    int ax;
    if (x->dtype == TG_BOOL)
        return tg__error(TG_ERR_DTYPE, "%s: bool tensors are not supported; cast them first",
                         c->op->name);
    if (a->axis < -TG_MAX_DIMS - 1 || a->axis > TG_MAX_DIMS ||
        !tg__norm_axis(c->op->name, (int)a->axis, x->ndim ? x->ndim : 1, &ax))
        return tg__error(TG_ERR_INDEX, "%s: axis %lld is out of range for a tensor of %d "
                         "dims", c->op->name, (long long)a->axis, x->ndim);
    int64_t n = x->ndim ? x->shape[ax] : 1;
    if (a->k > n && n >= 0)
        return tg__error(TG_ERR_ARG, "%s: k (%lld) is larger than the size of axis %d (%lld)",
                         c->op->name, (long long)a->k, ax, (long long)n);
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    if (x->ndim) /* k -1: the whole axis (sort), whose length may be known only at run time */
        shape[ax] = a->k < 0 ? n : a->k;
    if (tg__shape_has_unknown(x->ndim, shape)) { /* tg_infer_set takes known dims only */
        c->out_meta[0] = (tg_meta){.dtype = x->dtype, .ndim = x->ndim};
        memcpy(c->out_meta[0].shape, shape, sizeof(int64_t) * (size_t)x->ndim);
        c->out_meta[1] = c->out_meta[0];
        c->out_meta[1].dtype = TG_INT64;
        return TG_OK;
    }
    tg_status s = tg_infer_set(c, 0, x->dtype, x->ndim, shape);
    return s == TG_OK ? tg_infer_set(c, 1, TG_INT64, x->ndim, shape) : s;
}

static tg_status topk_kernel(tg_op_ctx *c)
{
    const topk_attrs *a = c->attr;
    tg_tensor *x = tg__contig(c->in[0]);
    if (!x)
        return TG_ERR_NOMEM;
    int ax = topk_axis(a, x->ndim);
    topk_task t = {.x = tg__base(x), .values = tg__base(c->out[0]),
                   .indices = (int64_t *)tg__base(c->out[1]), .n = x->ndim ? x->shape[ax] : 1,
                   .inner = tg__span(x->shape, ax + 1, x->ndim),
                   /* a 0-d output holds the element whatever k (0 or 1), as
                    * PyTorch's */
                   .k = !x->ndim ? 1 : a->k < 0 ? x->shape[ax] : a->k,
                   .largest = a->largest};
    atomic_init(&t.nomem, 0);
    int64_t cols = t.n ? x->numel / t.n : 0;
    if (t.k > 0 && cols > 0)
        tg__nn_parallel(cols, t.n * 8, topk_rows[x->dtype], &t);
    tg_release(x);
    return atomic_load(&t.nomem) ? tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name)
                                 : TG_OK;
}

/* the values' gradient goes back to the positions they came from */
static tg_status topk_grad(tg_grad_ctx *g)
{
    const tg_meta *m = &g->in_meta[0];
    int ax = topk_axis(g->attr, m->ndim);
    tg_attr at[2] = {TG_AI("axis", ax), TG_AINTS("shape", m->shape, m->ndim)};
    tg_tensor *in[2] = {g->dy[0], g->out[1]};
    g->dx[0] = tg_op_call(&tg_op_scatter_add, 2, in, at, 2);
    return TG_OK;
}

/* the values' tangent: the input's tangent at the chosen positions */
static tg_status topk_jvp(tg_jvp_ctx *c)
{
    return tg__jvp_set(c, 0, tg_gather(c->dx[0], topk_axis(c->attr, c->in_meta[0].ndim),
                                       c->out[1]));
}

static const tg_arg_spec topk_in[] = {{"x", TG_DTS_NUMBER}, {0}};
static const tg_arg_spec topk_out[] = {{"values", TG_DTS_NUMBER},
                                       {"indices", TG_DT(TG_INT64)}, {0}};

const tg_op_def tg_op_topk = {
    .name = "topk", .n_in = 1, .n_out = 2, .inputs = topk_in, .outputs = topk_out,
    .attrs = {topk_specs, sizeof(topk_attrs)}, .flags = TG_OP_PURE, .save_outputs = 1u << 1,
    .infer = topk_infer, .kernel = {[TG_CPU] = topk_kernel}, .grad = topk_grad,
    .jvp = topk_jvp, .onnx = {"TopK", 11}};

/* ---- public functions ------------------------------------------------------------------ */
/* the op; k -1 is the whole axis */
static tg_status run_topk(tg_tensor *x, int64_t k, int axis, bool largest, bool sorted,
                          tg_tensor **values, tg_tensor **indices)
{
    tg_tensor *out[2];
    tg_attr a[4] = {TG_AI("k", k), TG_AI("axis", axis), TG_AI("largest", largest),
                    TG_AI("sorted", sorted)};
    tg_status s = tg_op_run(&tg_op_topk, 1, &x, a, 4, out);
    if (s != TG_OK)
        return s;
    *values = out[0];
    if (indices)
        *indices = out[1];
    return TG_OK;
}

tg_status tg_topk(tg_tensor *x, int64_t k, int axis, bool largest, bool sorted,
                  tg_tensor **values, tg_tensor **indices)
{
    if (!values)
        return tg__error(TG_ERR_ARG, "topk: values is NULL");
    *values = NULL;
    if (indices)
        *indices = NULL;
    if (k < 0)
        return tg__error(TG_ERR_ARG, "topk: k (%lld) must be >= 0", (long long)k);
    return run_topk(x, k, axis, largest, sorted, values, indices);
}

/* all of the axis, in order */
tg_status tg_sort(tg_tensor *x, int axis, bool descending, tg_tensor **values,
                  tg_tensor **indices)
{
    int ax;
    if (values)
        *values = NULL;
    if (indices)
        *indices = NULL;
    if (!x)
        return tg__error_is_set() ? tg_last_status()
                                  : tg__error(TG_ERR_ARG, "sort: input is NULL");
    if (!tg__norm_axis("sort", axis, x->ndim ? x->ndim : 1, &ax))
        return tg_last_status();
    if (!values)
        return tg__error(TG_ERR_ARG, "sort: values is NULL");
    /* the whole axis, also where a graph knows its length only at run time */
    return run_topk(x, -1, ax, descending, true, values, indices);
}

tg_tensor *tg_argsort(tg_tensor *x, int axis, bool descending)
{
    tg_tensor *v, *i;
    TG_LOCAL_BEGIN(); /* the values die with it */
    tg_sort(x, axis, descending, &v, &i);
    TG_LOCAL_RETURN(i);
}

const tg_op_def *const tg_ops_sort[] = {&tg_op_topk, NULL};
