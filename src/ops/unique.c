/* unique: the distinct slices of x along an axis (ONNX Unique-11; numpy's
 * unique with return_index, return_inverse and return_counts).
 *
 *   first, inverse, counts = unique(x, axis, sorted)     int64 each
 *
 * The slices along `axis` are the rows of an [outer, n, inner] view of
 * the values, ordered lexicographically by a stable merge sort: each run
 * of equal slices is one unique value, its first element the first
 * occurrence. first [u]: the index of each unique slice's first
 * occurrence; inverse [n]: each slice's unique's position; counts [u].
 * sorted 1 lists the uniques in ascending order, 0 in order of first
 * occurrence. NaN sorts above every number and equals NaN (numpy's unique
 * collapses them). The caller takes the values as index_select(x, axis,
 * first), so gradients reach x.
 *
 * u depends on the values: inference reads them wherever x has data
 * (eagerly), and on a graph's value u is unknown (-1) until the graph
 * runs, as nonzero's count (docs/GRAPHS.md, "Dims that depend on
 * values"). No gradient: the outputs are integer. */
#include "ops/elementwise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct unique_attrs {
    int64_t axis;
    bool sorted;
} unique_attrs;
static const tg_attr_spec unique_specs[] = {
    TG_SPEC_INT(unique_attrs, axis, 0), TG_SPEC_BOOL(unique_attrs, sorted, true), {0}};

static const tg_arg_spec any_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec unique_out[] = {{"first", TG_DT(TG_INT64)},
                                         {"inverse", TG_DT(TG_INT64)},
                                         {"counts", TG_DT(TG_INT64)},
                                         {0}};

typedef struct slices {
    const void *v; /* float64 or int64 values */
    bool is_float;
    int64_t n, outer, inner;
} slices;

/* NaN above every number and equal to NaN */
static int cmp_double(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

static int cmp_slices(const slices *S, int64_t a, int64_t b)
{
    for (int64_t o = 0; o < S->outer; o++)
        for (int64_t k = 0; k < S->inner; k++) {
            int64_t pa = (o * S->n + a) * S->inner + k, pb = (o * S->n + b) * S->inner + k;
            int r = S->is_float ? cmp_double(((const double *)S->v)[pa],
                                             ((const double *)S->v)[pb])
                                : (((const int64_t *)S->v)[pa] > ((const int64_t *)S->v)[pb]) -
                                      (((const int64_t *)S->v)[pa] < ((const int64_t *)S->v)[pb]);
            if (r)
                return r;
        }
    return 0;
}

/* stable bottom-up merge sort of ids[0..n) by cmp_slices, through tmp */
static void sort_slices(const slices *S, int64_t *ids, int64_t *tmp, int64_t n)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp_slices(S, ids[j], ids[i]) < 0 ? ids[j++] : ids[i++];
            while (i < mid)
                tmp[k++] = ids[i++];
            while (j < hi)
                tmp[k++] = ids[j++];
        }
        memcpy(ids, tmp, (size_t)n * sizeof *ids);
    }
}

/* the result of one unique: buf holds first [u], inverse [n], counts [u] */
typedef struct result {
    int64_t u, n;
    int64_t *buf, *first, *inverse, *count;
} result;

static tg_status check_axis(const tg_op_ctx *c, int *axis)
{
    const unique_attrs *a = c->attr;
    int r = c->in[0]->ndim;
    if (r == 0 || a->axis < -r || a->axis >= r)
        return tg__error(TG_ERR_INDEX, "%s: axis %lld is out of range for %d dims",
                         c->op->name, (long long)a->axis, r);
    *axis = (int)(a->axis < 0 ? a->axis + r : a->axis);
    return TG_OK;
}

/* runs unique over x's values; r->buf to free */
static tg_status run_unique(const tg_op_ctx *c, int axis, result *r)
{
    const tg_tensor *x = c->in[0];
    slices S = {.outer = 1, .inner = 1, .n = x->shape[axis]};
    for (int d = 0; d < x->ndim; d++)
        if (d != axis)
            *(d < axis ? &S.outer : &S.inner) *= x->shape[d];
    S.is_float = tg_dtype_is_float(x->dtype);
    tg_tensor *vals = tg__contig_as(x, S.is_float ? TG_FLOAT64 : TG_INT64);
    int64_t n = S.n;
    /* ids, merge buffer, first, count, inverse, spare for sorted = 0 */
    int64_t *buf = malloc((size_t)(6 * n + 1) * sizeof *buf);
    if (!vals || !buf) {
        tg_release(vals);
        free(buf);
        return tg__error(TG_ERR_NOMEM, "%s: out of memory for %lld slices", c->op->name,
                         (long long)n);
    }
    S.v = tg__base(vals);
    int64_t *ids = buf, *first = buf + 2 * n, *count = buf + 3 * n, *inverse = buf + 4 * n;
    for (int64_t i = 0; i < n; i++)
        ids[i] = i;
    sort_slices(&S, ids, buf + n, n);
    int64_t u = 0; /* the runs of equal slices, in sorted order */
    for (int64_t i = 0; i < n; i++) {
        if (!i || cmp_slices(&S, ids[i - 1], ids[i])) {
            first[u] = ids[i];
            count[u++] = 0;
        }
        count[u - 1]++;
        inverse[ids[i]] = u - 1;
    }
    tg_release(vals);
    if (!((const unique_attrs *)c->attr)->sorted) { /* order of first occurrence */
        int64_t *rank = buf + n, next = 0; /* the merge buffer is free again */
        for (int64_t j = 0; j < u; j++)
            rank[j] = -1;
        int64_t *f2 = buf, *c2 = buf + 5 * n; /* ids are done with, too */
        for (int64_t i = 0; i < n; i++)
            if (rank[inverse[i]] < 0)
                rank[inverse[i]] = next++;
        for (int64_t j = 0; j < u; j++) {
            f2[rank[j]] = first[j];
            c2[rank[j]] = count[j];
        }
        for (int64_t i = 0; i < n; i++)
            inverse[i] = rank[inverse[i]];
        memcpy(first, f2, (size_t)u * sizeof *first);
        memcpy(count, c2, (size_t)u * sizeof *count);
    }
    *r = (result){u, n, buf, first, inverse, count};
    return TG_OK;
}

static tg_status unique_infer(tg_op_ctx *c)
{
    int axis = 0;
    tg_status s = check_axis(c, &axis);
    if (s != TG_OK)
        return s;
    const tg_tensor *x = c->in[0];
    int64_t n = x->shape[axis], u = -1; /* a graph's value: known at run time */
    if (x->storage) {
        result r;
        if ((s = run_unique(c, axis, &r)) != TG_OK)
            return s;
        u = r.u;
        free(r.buf);
    } else if (n == 0) {
        u = 0;
    }
    /* tg_infer_set takes known dims only */
    int64_t dims[3] = {u, n, u};
    for (int o = 0; o < 3; o++)
        c->out_meta[o] = (tg_meta){.dtype = TG_INT64, .ndim = 1, .shape = {dims[o]}};
    return TG_OK;
}

static tg_status unique_kernel(tg_op_ctx *c)
{
    int axis = 0;
    result r;
    tg_status s = check_axis(c, &axis);
    if (s == TG_OK)
        s = run_unique(c, axis, &r);
    if (s != TG_OK)
        return s;
    if (c->out[0]->shape[0] != r.u || c->out[1]->shape[0] != r.n) { /* values changed */
        s = tg__error(TG_ERR_INTERNAL, "%s: %lld unique slices, the outputs have room for "
                      "%lld", c->op->name, (long long)r.u, (long long)c->out[0]->shape[0]);
    } else {
        memcpy(tg__base(c->out[0]), r.first, (size_t)r.u * sizeof *r.first);
        memcpy(tg__base(c->out[1]), r.inverse, (size_t)r.n * sizeof *r.inverse);
        memcpy(tg__base(c->out[2]), r.count, (size_t)r.u * sizeof *r.count);
    }
    free(r.buf);
    return s;
}

const tg_op_def tg_op_unique = {
    .name = "unique", .n_in = 1, .n_out = 3, .inputs = any_in, .outputs = unique_out,
    .attrs = {unique_specs, sizeof(unique_attrs)}, .flags = TG_OP_PURE, .nondiff = true,
    .infer = unique_infer, .kernel = {[TG_CPU] = unique_kernel}};

tg_status tg__unique(tg_tensor *x, int axis, bool sorted, tg_tensor **out)
{
    tg_attr a[2] = {TG_AI("axis", axis), TG_AI("sorted", sorted)};
    return tg_op_run(&tg_op_unique, 1, &x, a, 2, out);
}

const tg_op_def *const tg_ops_unique[] = {&tg_op_unique, NULL};
