/* as_strided: a view of x's memory with any sizes and strides (PyTorch's
 * torch.as_strided), the offset counted in elements from x's first
 * element. Every element the view reaches must lie within the memory x
 * spans (from its lowest to its highest element), so a view never reads
 * past what x's own storage holds; PyTorch checks against the whole
 * storage, which may reach further. Strides must not be negative, as in
 * PyTorch; they may be 0 or make elements overlap.
 *
 * as_strided_grad carries values between two geometries over the same
 * memory: the input's (x's sizes and strides, relative to its first
 * element) and the view's. Forward (adjoint 0), the gradient of the view:
 * dy is added at the view's positions of a zeroed buffer and x's elements
 * read there, each divided by how many of x's elements share its position
 * (PyTorch's as_strided_backward for an input that overlaps itself).
 * Adjoint 1 is its transpose: x-shaped values divided by those counts,
 * added at x's positions, read at the view's. Each is the other's
 * gradient, so gradients of any order follow. */
#include "autodiff/jvp.h"
#include "ops/elementwise.h"

#include <stdlib.h>
#include <string.h>

extern const tg_op_def tg_op_as_strided_grad;

/* input_stride: the input's strides the view was defined on (none: its
 * contiguous strides, as a graph's values have) */
typedef struct as_strided_attrs {
    tg_ints size, stride;
    int64_t offset;
    tg_ints input_stride;
} as_strided_attrs;
static const tg_attr_spec as_strided_specs[] = {
    TG_SPEC_INTS(as_strided_attrs, size), TG_SPEC_INTS(as_strided_attrs, stride),
    TG_SPEC_INT(as_strided_attrs, offset, 0), TG_SPEC_INTS(as_strided_attrs, input_stride),
    {0}};

typedef struct as_strided_grad_attrs {
    tg_ints size, stride;
    int64_t offset;
    tg_ints input_shape, input_stride;
    bool adjoint;
} as_strided_grad_attrs;
static const tg_attr_spec as_strided_grad_specs[] = {
    TG_SPEC_INTS(as_strided_grad_attrs, size), TG_SPEC_INTS(as_strided_grad_attrs, stride),
    TG_SPEC_INT(as_strided_grad_attrs, offset, 0),
    TG_SPEC_INTS(as_strided_grad_attrs, input_shape),
    TG_SPEC_INTS(as_strided_grad_attrs, input_stride),
    TG_SPEC_BOOL(as_strided_grad_attrs, adjoint, 0), {0}};

static const tg_arg_spec any_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};
static const tg_arg_spec float_in[] = {{"x", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec float_out[] = {{"y", TG_DTS_FLOAT}, {0}};

/* sizes and strides of one geometry; offset relative to x's first element */
typedef struct geom {
    int nd;
    const int64_t *size, *stride;
    int64_t offset;
} geom;

static int64_t geom_numel(const geom *g)
{
    int64_t n = 1;
    for (int k = 0; k < g->nd; k++)
        n *= g->size[k];
    return n;
}

/* the lowest and highest position a non-empty geometry reaches; false
 * when a position does not fit int64 */
static bool geom_span(const geom *g, int64_t *lo, int64_t *hi)
{
    *lo = *hi = g->offset;
    for (int k = 0; k < g->nd; k++) {
        int64_t reach;
        if (__builtin_mul_overflow(g->size[k] - 1, g->stride[k], &reach))
            return false;
        if (__builtin_add_overflow(reach < 0 ? *lo : *hi, reach, reach < 0 ? lo : hi))
            return false;
    }
    return true;
}

/* the view's sizes and strides: as many of each, none negative, at most
 * TG_MAX_DIMS, a count of elements that fits int64 */
static tg_status check_view(const char *op, const tg_ints *size, const tg_ints *stride)
{
    if (size->n != stride->n)
        return tg__error(TG_ERR_ARG, "%s: mismatch in length of strides and shape (%d sizes, "
                         "%d strides)", op, size->n, stride->n);
    if (size->n > TG_MAX_DIMS)
        return tg__error(TG_ERR_ARG, "%s: %d dims, at most %d", op, size->n, TG_MAX_DIMS);
    int64_t n = 1;
    for (int k = 0; k < size->n; k++) {
        if (size->v[k] < 0)
            return tg__error(TG_ERR_ARG, "%s: negative size %lld in dim %d", op,
                             (long long)size->v[k], k);
        if (stride->v[k] < 0)
            return tg__error(TG_ERR_ARG, "%s: negative strides are not supported, got "
                             "stride %lld in dim %d", op, (long long)stride->v[k], k);
        if (__builtin_mul_overflow(n, size->v[k], &n))
            return tg__error(TG_ERR_ARG, "%s: the view's element count overflows", op);
    }
    return TG_OK;
}

/* every element of the view v within the memory x (geometry xg) spans */
static tg_status check_bounds(const char *op, const geom *xg, const geom *v)
{
    if (geom_numel(v) == 0)
        return TG_OK;
    int64_t xlo = 0, xhi = -1, lo, hi;
    if (geom_numel(xg) > 0 && !geom_span(xg, &xlo, &xhi))
        return tg__error(TG_ERR_ARG, "%s: the input's positions overflow", op);
    if (!geom_span(v, &lo, &hi) || lo < xlo || hi > xhi)
        return tg__error(TG_ERR_ARG, "%s: the view reaches elements %s%lld to %lld from the "
                         "input's first element, outside the input's memory (%lld to %lld)",
                         op, geom_span(v, &lo, &hi) ? "" : "beyond ", (long long)lo,
                         (long long)hi, (long long)xlo, (long long)xhi);
    return TG_OK;
}

static tg_status as_strided_infer(tg_op_ctx *c)
{
    const as_strided_attrs *a = c->attr;
    const tg_tensor *x = c->in[0];
    tg_status s = check_view(c->op->name, &a->size, &a->stride);
    if (s != TG_OK)
        return s;
    if (a->input_stride.n && a->input_stride.n != x->ndim)
        return tg__error(TG_ERR_ARG, "%s: %d input strides for a %d-d input", c->op->name,
                         a->input_stride.n, x->ndim);
    return tg_infer_set(c, 0, x->dtype, a->size.n, a->size.v);
}

/* the input strides the view was defined on (contiguous when none given) */
static const int64_t *defined_strides(const as_strided_attrs *a, int nd, const int64_t *shape,
                                      int64_t *buf)
{
    if (a->input_stride.n)
        return a->input_stride.v;
    tg__contiguous_strides(nd, shape, buf);
    return buf;
}

static tg_status as_strided_make(tg_op_ctx *c)
{
    const as_strided_attrs *a = c->attr;
    const tg_tensor *x = c->in[0];
    int64_t buf[TG_MAX_DIMS];
    const int64_t *want = defined_strides(a, x->ndim, x->shape, buf);
    for (int k = 0; k < x->ndim; k++)
        if (x->shape[k] > 1 && x->strides[k] != want[k]) {
            char b1[160], b2[160];
            return tg__error(TG_ERR_UNSUPPORTED, "%s: the view was defined on an input with "
                             "strides %s, and the input has strides %s here",
                             c->op->name, tg_shape_str(x->ndim, want, b1, sizeof b1),
                             tg_shape_str(x->ndim, x->strides, b2, sizeof b2));
        }
    geom xg = {x->ndim, x->shape, x->strides, 0};
    geom v = {a->size.n, a->size.v, a->stride.v, a->offset};
    tg_status s = check_bounds(c->op->name, &xg, &v);
    if (s != TG_OK)
        return s;
    /* an empty view keeps its offset as PyTorch's while it lies within
     * the storage (so that its data pointer does); otherwise x's */
    int64_t offset, in_storage = (int64_t)(x->storage->nbytes / tg_dtype_size(x->dtype));
    if (__builtin_add_overflow(x->offset, a->offset, &offset) || offset < 0 ||
        offset > in_storage)
        offset = x->offset; /* only when empty: check_bounds placed the rest */
    c->out[0] = tg__alias(x, v.nd, v.size, v.stride, offset);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

/* the positions of g's elements in row-major order, minus base */
static void fill_positions(const geom *g, int64_t base, int64_t *pos)
{
    int64_t idx[TG_MAX_DIMS] = {0}, n = geom_numel(g), p = g->offset - base;
    for (int64_t e = 0; e < n; e++) {
        pos[e] = p;
        for (int k = g->nd - 1; k >= 0; k--) {
            if (++idx[k] < g->size[k]) {
                p += g->stride[k];
                break;
            }
            p -= (g->size[k] - 1) * g->stride[k];
            idx[k] = 0;
        }
    }
}

static void grad_geoms(const as_strided_grad_attrs *g, geom *xg, geom *v)
{
    *xg = (geom){g->input_shape.n, g->input_shape.v, g->input_stride.v, 0};
    *v = (geom){g->size.n, g->size.v, g->stride.v, g->offset};
}

static tg_status as_strided_grad_infer(tg_op_ctx *c)
{
    const as_strided_grad_attrs *g = c->attr;
    const char *op = c->op->name;
    geom xg, v;
    grad_geoms(g, &xg, &v);
    tg_status s = check_view(op, &g->size, &g->stride);
    if (s == TG_OK)
        s = check_view(op, &g->input_shape, &g->input_stride);
    if (s == TG_OK)
        s = check_bounds(op, &xg, &v);
    if (s != TG_OK)
        return s;
    const geom *from = g->adjoint ? &xg : &v, *to = g->adjoint ? &v : &xg;
    const tg_tensor *dy = c->in[0];
    if (!tg__shape_eq(dy->ndim, dy->shape, from->nd, from->size)) {
        char b1[160], b2[160];
        return tg__error(TG_ERR_SHAPE, "%s: values of shape %s where the %s's shape %s is "
                         "needed", op, tg_shape_str(dy->ndim, dy->shape, b1, sizeof b1),
                         g->adjoint ? "input" : "view",
                         tg_shape_str(from->nd, from->size, b2, sizeof b2));
    }
    return tg_infer_set(c, 0, dy->dtype, to->nd, to->size);
}

/* counts[p]: how many of x's elements lie at position p (of span) */
static void count_positions(const int64_t *xpos, int64_t nx, int64_t *counts)
{
    for (int64_t i = 0; i < nx; i++)
        counts[xpos[i]]++;
}

static tg_status as_strided_grad_kernel(tg_op_ctx *c)
{
    const as_strided_grad_attrs *g = c->attr;
    geom xg, v;
    grad_geoms(g, &xg, &v);
    int64_t nx = geom_numel(&xg), nv = geom_numel(&v), lo = 0, hi = -1;
    if (nx > 0)
        geom_span(&xg, &lo, &hi); /* the view lies within (infer checked) */
    int64_t span = hi - lo + 1;
    const tg_tensor *in = c->in[0];
    tg_tensor *out = c->out[0];
    /* the input as contiguous float64 (any strides, either float type),
     * and the result computed in float64 */
    tg_tensor *src = tg__contig_as(in, TG_FLOAT64);
    tg_tensor *res = tg__alloc(TG_FLOAT64, out->ndim, out->shape);
    double *buf = calloc((size_t)(span > 0 ? span : 1), sizeof *buf);
    int64_t *counts = calloc((size_t)(span > 0 ? span : 1), sizeof *counts);
    int64_t *xpos = malloc((size_t)(nx > 0 ? nx : 1) * sizeof *xpos);
    int64_t *vpos = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *vpos);
    tg_status s = TG_OK;
    if (!src || !res || !buf || !counts || !xpos || !vpos) {
        s = tg__error(TG_ERR_NOMEM, "%s: no memory for a span of %lld elements", c->op->name,
                      (long long)span);
        goto done;
    }
    fill_positions(&xg, lo, xpos);
    fill_positions(&v, lo, vpos);
    count_positions(xpos, nx, counts);
    const double *a = (const double *)tg__base(src);
    double *r = (double *)tg__base(res);
    if (!g->adjoint) {
        for (int64_t e = 0; e < nv; e++)
            buf[vpos[e]] += a[e];
        for (int64_t i = 0; i < nx; i++)
            r[i] = buf[xpos[i]] / (double)counts[xpos[i]];
    } else {
        for (int64_t i = 0; i < nx; i++)
            buf[xpos[i]] += a[i] / (double)counts[xpos[i]];
        for (int64_t e = 0; e < nv; e++)
            r[e] = buf[vpos[e]];
    }
    tg__convert_into(out, res);
done:
    tg_release(src);
    tg_release(res);
    free(buf), free(counts), free(xpos), free(vpos);
    return s;
}

static tg_status as_strided_grad_call(tg_tensor *dy, const as_strided_grad_attrs *g,
                                      bool adjoint, tg_tensor **dx)
{
    tg_attr a[6] = {TG_AINTS("size", g->size.v, g->size.n),
                    TG_AINTS("stride", g->stride.v, g->stride.n), TG_AI("offset", g->offset),
                    TG_AINTS("input_shape", g->input_shape.v, g->input_shape.n),
                    TG_AINTS("input_stride", g->input_stride.v, g->input_stride.n),
                    TG_AI("adjoint", adjoint)};
    *dx = tg_op_call(&tg_op_as_strided_grad, 1, &dy, a, 6);
    return TG_OK;
}

/* linear in its input: the gradient is the other direction */
static tg_status as_strided_grad_grad(tg_grad_ctx *gc)
{
    const as_strided_grad_attrs *g = gc->attr;
    return as_strided_grad_call(gc->dy[0], g, !g->adjoint, &gc->dx[0]);
}

const tg_op_def tg_op_as_strided_grad = {
    .name = "as_strided_grad", .n_in = 1, .n_out = 1, .inputs = float_in,
    .outputs = float_out, .attrs = {as_strided_grad_specs, sizeof(as_strided_grad_attrs)},
    .flags = TG_OP_PURE, .infer = as_strided_grad_infer,
    .kernel = {[TG_CPU] = as_strided_grad_kernel}, .grad = as_strided_grad_grad,
    .jvp = tg__jvp_linear};

static tg_status as_strided_vjp(tg_grad_ctx *gc)
{
    const as_strided_attrs *a = gc->attr;
    const tg_meta *m = &gc->in_meta[0];
    int64_t buf[TG_MAX_DIMS];
    const int64_t *strides = defined_strides(a, m->ndim, m->shape, buf);
    as_strided_grad_attrs g = {a->size, a->stride, a->offset, {m->shape, m->ndim},
                               {strides, m->ndim}, false};
    return as_strided_grad_call(gc->dy[0], &g, false, &gc->dx[0]);
}

const tg_op_def tg_op_as_strided = {
    .name = "as_strided", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {as_strided_specs, sizeof(as_strided_attrs)}, .flags = TG_OP_PURE | TG_OP_VIEW,
    .infer = as_strided_infer, .make_view = as_strided_make, .grad = as_strided_vjp,
    .jvp = tg__jvp_linear};

tg_tensor *tg_as_strided(tg_tensor *x, int ndim, const int64_t *size, const int64_t *stride,
                         int64_t offset)
{
    if (!x || (ndim > 0 && (!size || !stride))) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "as_strided: %s is NULL", !x ? "input" : "size or stride");
        return NULL;
    }
    if (ndim < 0 || ndim > TG_MAX_DIMS)
        return tg__error_null(TG_ERR_ARG, "as_strided: %d dims, 0 to %d allowed", ndim,
                              TG_MAX_DIMS);
    /* A graph's values have no strides (an eager tensor of the same values
     * may be transposed, a slice, laid out as its input by an elementwise
     * op or clone), so positions in memory mean nothing there: refused
     * rather than read another way than eager mode reads them */
    if (x->graph)
        return tg__error_null(TG_ERR_UNSUPPORTED, "as_strided: it reads positions in memory, "
                              "which a graph's values do not have (their layout is not the "
                              "eager tensor's): it runs in eager mode only");
    tg_attr a[4] = {TG_AINTS("size", size, ndim), TG_AINTS("stride", stride, ndim),
                    TG_AI("offset", offset), TG_AINTS("input_stride", x->strides, x->ndim)};
    return tg_op_call(&tg_op_as_strided, 1, &x, a, x->ndim ? 4 : 3);
}

const tg_op_def *const tg_ops_as_strided[] = {&tg_op_as_strided, &tg_op_as_strided_grad, NULL};
