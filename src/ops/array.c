/* Array ops that move whole blocks: concat, stack, split, tile and
 * one_hot (pad lives in pad.c, gather-style ops in array_index.c). Copies use memcpy
 * wherever a run is contiguous in both source and destination. */
#include "autodiff/jvp.h"
#include "kernels/cpu/fill.h"
#include "kernels/cpu/iter.h"
#include "ops/array.h"
#include "ops/elementwise.h"

#include <stdlib.h>
#include <string.h>

/* ---- shared helpers ------------------------------------------------------- */
/* a row of ES-byte elements: one memcpy when both sides are contiguous */
#define COPY_ROW(NAME, ES)                                                  \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)      \
    {                                                                       \
        (void)ctx;                                                          \
        if (s[0] == (ES) && s[1] == (ES)) {                                 \
            memcpy(p[0], p[1], (size_t)n * (ES));                           \
            return;                                                         \
        }                                                                   \
        for (int64_t i = 0; i < n; i++)                                     \
            memcpy(p[0] + i * s[0], p[1] + i * s[1], (ES));                 \
    }
COPY_ROW(copy_row_1, 1)
COPY_ROW(copy_row_4, 4)
COPY_ROW(copy_row_8, 8)

void tg__copy_into(tg_tensor *dst, const tg_tensor *src)
{
    if (dst->dtype != src->dtype) {
        tg__convert_into(dst, src);
        return;
    }
    size_t es = tg_dtype_size(dst->dtype);
    tg_iter_row_fn fn = es == 1 ? copy_row_1 : es == 4 ? copy_row_4 : copy_row_8;
    const tg_tensor *ops[2] = {dst, src};
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    tg_iter_run(&it, fn, NULL);
}

tg_tensor *tg__contig(tg_tensor *x)
{
    if (tg_is_contiguous(x))
        return tg_retain(x);
    tg_tensor *y = tg__alloc(x->dtype, x->ndim, x->shape);
    if (y)
        tg__copy_into(y, x);
    return y;
}

int64_t tg__span(const int64_t *shape, int from, int to)
{
    int64_t n = 1;
    for (int i = from; i < to; i++)
        n *= shape[i];
    return n;
}

tg_status tg__require_index(const char *op, const tg_tensor *t)
{
    if (t->dtype == TG_INT32 || t->dtype == TG_INT64)
        return TG_OK;
    return tg__error(TG_ERR_DTYPE, "%s: index must be int32 or int64, got %s", op,
                     tg_dtype_name(t->dtype));
}

/* copies x into the window of out (same strides) that starts at element
 * offset and has x's shape */
static tg_status copy_into_window(tg_tensor *out, const tg_tensor *x, int64_t offset)
{
    tg_tensor *win = tg__alias(out, x->ndim, x->shape, out->strides, offset);
    if (!win)
        return TG_ERR_NOMEM;
    tg__copy_into(win, x);
    tg_release(win);
    return TG_OK;
}

/* ---- concat ------------------------------------------------------------------
 * Mixed dtypes are promoted like torch.cat (tg_promote_types over all
 * inputs); the gradient is cast back to each input's dtype by the engine. */
static tg_status concat_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    if (c->n_in < 1)
        return tg__error(TG_ERR_ARG, "%s: needs at least one input", op);
    const tg_tensor *x0 = c->in[0];
    if (x0->ndim == 0)
        return tg__error(TG_ERR_SHAPE, "%s: input 0 is 0-d; zero-dimensional "
                         "tensors cannot be concatenated (use tg_stack)", op);
    int axis;
    if (!tg__norm_axis(op, (int)((const tg_axis_attrs *)c->attr)->axis, x0->ndim, &axis))
        return tg_last_status();
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[axis] = 0;
    tg_dtype dt = x0->dtype;
    for (int i = 0; i < c->n_in; i++) {
        const tg_tensor *x = c->in[i];
        bool ok = x->ndim == x0->ndim;
        for (int d = 0; ok && d < x->ndim; d++)
            ok = d == axis || x->shape[d] == x0->shape[d];
        if (!ok) {
            char a[160], b[160];
            return tg__error(TG_ERR_SHAPE, "%s: input %d has shape %s but input 0 has "
                             "shape %s; all dims except axis %d must match", op, i,
                             tg_shape_str(x->ndim, x->shape, a, sizeof a),
                             tg_shape_str(x0->ndim, x0->shape, b, sizeof b), axis);
        }
        if (!tg__size_add(op, "the concatenated axis", shape[axis], x->shape[axis],
                          &shape[axis]))
            return tg_last_status();
        dt = tg_promote_types(dt, x->dtype);
    }
    return tg_infer_set(c, 0, dt, x0->ndim, shape);
}

/* each input lands in its window of the output (a strided view) */
static tg_status concat_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    int axis = tg__attr_axis(c->attr, out->ndim);
    int64_t pos = 0;
    for (int i = 0; i < c->n_in; i++) {
        const tg_tensor *x = c->in[i];
        if (x->numel > 0 &&
            copy_into_window(out, x, out->offset + pos * out->strides[axis]) != TG_OK)
            return TG_ERR_NOMEM;
        pos += x->shape[axis];
    }
    return TG_OK;
}

static tg_status concat_grad(tg_grad_ctx *g)
{
    int axis = tg__attr_axis(g->attr, g->in_meta[0].ndim);
    int64_t pos = 0;
    for (int i = 0; i < g->n_in; i++) {
        int64_t len = g->in_meta[i].shape[axis];
        if (g->needs_grad[i] && !(g->dx[i] = tg_slice(g->dy[0], axis, pos, pos + len, 1)))
            return tg_last_status();
        pos += len;
    }
    return TG_OK;
}

static const tg_attr_spec axis_specs[] = {TG_SPEC_INT(tg_axis_attrs, axis, 0), {0}};
static const tg_arg_spec concat_in[] = {{"xs", TG_DTS_ANY | TG_ARG_VARIADIC}, {0}};
static const tg_arg_spec any_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

const tg_op_def tg_op_concat = {
    .name = "concat", .n_in = -1, .n_out = 1, .inputs = concat_in, .outputs = any_out,
    .attrs = {axis_specs, sizeof(tg_axis_attrs)}, .flags = TG_OP_PURE,
    .infer = concat_infer, .kernel = {[TG_CPU] = concat_kernel}, .grad = concat_grad,
    .jvp = tg__jvp_joint_linear, .onnx = {"Concat", 13}};

tg_tensor *tg_concat(int n, tg_tensor *const *xs, int axis)
{
    if (n < 1 || !xs)
        return tg__error_null(TG_ERR_ARG, "concat: needs at least one input (got %d)", n);
    tg_attr a = TG_AI("axis", axis);
    if (n <= TG_MAX_OP_INPUTS)
        return tg_op_call(&tg_op_concat, n, xs, &a, 1);
    /* more inputs than one op takes: concat groups, then the groups */
    int ng = (n + TG_MAX_OP_INPUTS - 1) / TG_MAX_OP_INPUTS;
    tg_tensor **parts = malloc((size_t)ng * sizeof *parts);
    if (!parts)
        return tg__error_null(TG_ERR_NOMEM, "concat: out of memory");
    TG_LOCAL_BEGIN();
    for (int k = 0; k < ng; k++) {
        int m = n - k * TG_MAX_OP_INPUTS;
        m = m > TG_MAX_OP_INPUTS ? TG_MAX_OP_INPUTS : m;
        parts[k] = tg_op_call(&tg_op_concat, m, xs + k * TG_MAX_OP_INPUTS, &a, 1);
    }
    tg_tensor *y = tg_concat(ng, parts, axis);
    free(parts);
    TG_LOCAL_RETURN(y);
}

/* ---- stack: unsqueeze every input, then concat -------------------------- */
tg_tensor *tg_stack(int n, tg_tensor *const *xs, int axis)
{
    if (n < 1 || !xs)
        return tg__error_null(TG_ERR_ARG, "stack: needs at least one input (got %d)", n);
    for (int i = 0; i < n; i++)
        if (!xs[i])
            return tg__error_is_set() ? NULL
                                      : tg__error_null(TG_ERR_ARG, "stack: input %d is NULL", i);
    const tg_tensor *x0 = xs[0];
    for (int i = 1; i < n; i++) {
        if (!tg__shape_eq(xs[i]->ndim, xs[i]->shape, x0->ndim, x0->shape)) {
            char a[160], b[160];
            return tg__error_null(TG_ERR_SHAPE, "stack: input %d has shape %s but input "
                                  "0 has shape %s; stacked tensors must have the same "
                                  "shape", i, tg_shape_str(xs[i]->ndim, xs[i]->shape, a, sizeof a),
                                  tg_shape_str(x0->ndim, x0->shape, b, sizeof b));
        }
    }
    int a;
    if (!tg__norm_axis("stack", axis, x0->ndim + 1, &a))
        return NULL;
    tg_tensor **u = malloc((size_t)n * sizeof *u);
    if (!u)
        return tg__error_null(TG_ERR_NOMEM, "stack: out of memory");
    TG_LOCAL_BEGIN();
    for (int i = 0; i < n; i++)
        u[i] = tg_unsqueeze(xs[i], a);
    tg_tensor *y = tg_concat(n, u, a);
    free(u);
    TG_LOCAL_RETURN(y);
}

/* ---- split: n slices (views) of x ------------------------------------------- */
tg_status tg_split(tg_tensor *x, int axis, int n, const int64_t *sizes,
                   tg_tensor **out)
{
    if (!out)
        return tg__error(TG_ERR_ARG, "split: out is NULL");
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    if (!x)
        return tg__error_is_set() ? tg_last_status()
                                  : tg__error(TG_ERR_ARG, "split: input is NULL");
    if (n < 1 || !sizes)
        return tg__error(TG_ERR_ARG, "split: needs at least one size (got %d)", n);
    if (x->ndim == 0)
        return tg__error(TG_ERR_SHAPE, "split: cannot split a 0-d tensor");
    int a;
    if (!tg__norm_axis("split", axis, x->ndim, &a))
        return tg_last_status();
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0)
            return tg__error(TG_ERR_ARG, "split: size %lld at position %d is negative",
                             (long long)sizes[i], i);
        if (!tg__size_add("split", "the sizes' sum", total, sizes[i], &total))
            return tg_last_status();
    }
    char buf[160];
    if (total != x->shape[a])
        return tg__error(TG_ERR_SHAPE, "split: sizes sum to %lld but axis %d of %s has "
                         "size %lld; they must be equal", (long long)total, axis,
                         tg_shape_str(x->ndim, x->shape, buf, sizeof buf),
                         (long long)x->shape[a]);
    /* all or nothing: on failure the local scope frees the parts made */
    tg_status s = TG_OK;
    TG_LOCAL_BEGIN();
    int64_t pos = 0;
    for (int i = 0; i < n && s == TG_OK; i++) {
        if (!(out[i] = tg_slice(x, a, pos, pos + sizes[i], 1)))
            s = tg_last_status();
        pos += sizes[i];
    }
    for (int i = 0; i < n && s == TG_OK; i++)
        tg_keep(out[i]);
    tg_scope_end();
    if (s != TG_OK)
        for (int i = 0; i < n; i++)
            out[i] = NULL;
    return s;
}

/* ---- tile ---------------------------------------------------------------------
 * Like torch.tile: reps and x's shape are aligned at the right, the shorter
 * one padded with leading 1s. */
typedef struct tile_geom {
    int nd;
    int64_t d[TG_MAX_DIMS], r[TG_MAX_DIMS]; /* padded input dims and reps */
    int64_t in_st[TG_MAX_DIMS], out_st[TG_MAX_DIMS]; /* contiguous, elements */
    size_t es;
} tile_geom;

static tg_status tile_geometry(const char *op, int ndim, const int64_t *shape,
                               int n_reps, const int64_t *reps, tile_geom *g)
{
    if (n_reps < 0 || (n_reps > 0 && !reps))
        return tg__error(TG_ERR_ARG, "%s: bad reps (%d)", op, n_reps);
    g->nd = ndim > n_reps ? ndim : n_reps;
    if (g->nd > TG_MAX_DIMS)
        return tg__error(TG_ERR_SHAPE, "%s: %d reps give %d dims, at most %d are "
                         "supported", op, n_reps, g->nd, TG_MAX_DIMS);
    for (int i = 0; i < g->nd; i++) {
        int xi = i - (g->nd - ndim), ri = i - (g->nd - n_reps);
        g->d[i] = xi >= 0 ? shape[xi] : 1;
        g->r[i] = ri >= 0 ? reps[ri] : 1;
        /* a negative rep of an empty dim: PyTorch sizes the result by the
         * product, 0 either way, and allows it */
        if (g->r[i] < 0 && g->d[i] == 0)
            g->r[i] = 0;
        if (g->r[i] < 0)
            return tg__error(TG_ERR_ARG, "%s: rep %lld at position %d is negative",
                             op, (long long)g->r[i], ri);
    }
    int64_t si = 1, so = 1, dim;
    for (int i = g->nd - 1; i >= 0; i--) {
        g->in_st[i] = si;
        g->out_st[i] = so;
        si *= g->d[i]; /* x's own element count: no overflow */
        if (!tg__size_mul(op, "a tiled dim", g->d[i], g->r[i], &dim) ||
            !tg__size_mul(op, "the element count", so, dim, &so))
            return tg_last_status();
    }
    return TG_OK;
}

typedef struct tile_attrs {
    tg_ints reps;
} tile_attrs;
static const tg_attr_spec tile_specs[] = {TG_SPEC_INTS(tile_attrs, reps), {0}};

static tg_status tile_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const int64_t *reps = ((const tile_attrs *)c->attr)->reps.v;
    int n = ((const tile_attrs *)c->attr)->reps.n;
    tile_geom g;
    tg_status s = tile_geometry(c->op->name, x->ndim, x->shape, n, reps, &g);
    if (s != TG_OK)
        return s;
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < g.nd; i++)
        shape[i] = g.d[i] * g.r[i]; /* checked by tile_geometry */
    return tg_infer_set(c, 0, x->dtype, g.nd, shape);
}

/* writes one copy of x's level-k block at o, then repeats it r[k] times:
 * a repeat of axis k is one contiguous run of d[k] * out_st[k] elements */
static void tile_fill(const tile_geom *g, int k, char *o, const char *x)
{
    size_t es = g->es;
    if (k == g->nd - 1) {
        memcpy(o, x, (size_t)g->d[k] * es);
    } else {
        for (int64_t j = 0; j < g->d[k]; j++)
            tile_fill(g, k + 1, o + (size_t)(j * g->out_st[k]) * es,
                      x + (size_t)(j * g->in_st[k]) * es);
    }
    size_t block = (size_t)(g->d[k] * g->out_st[k]) * es;
    for (int64_t m = 1; m < g->r[k]; m++)
        memcpy(o + (size_t)m * block, o, block);
}

static tg_status tile_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    const int64_t *reps = ((const tile_attrs *)c->attr)->reps.v;
    int n = ((const tile_attrs *)c->attr)->reps.n;
    tile_geom g;
    tile_geometry(c->op->name, c->in[0]->ndim, c->in[0]->shape, n, reps, &g);
    g.es = tg_dtype_size(out->dtype);
    if (out->numel == 0)
        return TG_OK;
    tg_tensor *x = tg__contig(c->in[0]);
    if (!x)
        return TG_ERR_NOMEM;
    if (g.nd == 0)
        memcpy(tg__base(out), tg__base(x), g.es);
    else
        tile_fill(&g, 0, tg__base(out), tg__base(x));
    tg_release(x);
    return TG_OK;
}

/* tiled axis i of size r*d viewed as [r, d] (repeat outer), summed over r */
static tg_status tile_grad(tg_grad_ctx *g)
{
    const tg_meta *m = &g->in_meta[0];
    const int64_t *reps = ((const tile_attrs *)g->attr)->reps.v;
    int n = ((const tile_attrs *)g->attr)->reps.n;
    tile_geom t;
    tg_status s = tile_geometry("tile", m->ndim, m->shape, n, reps, &t);
    if (s != TG_OK)
        return s;
    int64_t split[2 * TG_MAX_DIMS];
    int axes[TG_MAX_DIMS], ns = 0, na = 0;
    for (int i = 0; i < t.nd; i++) {
        if (t.r[i] != 1) {
            axes[na++] = ns;
            split[ns++] = t.r[i];
        }
        split[ns++] = t.d[i];
    }
    tg_tensor *d = g->dy[0];
    if (na > 0 && ns <= TG_MAX_DIMS) {
        d = tg_sum(tg_reshape(d, ns, split), na, axes, false);
    } else if (na > 0) {
        /* too many dims for one reshape: one repeated axis at a time */
        int64_t cur[TG_MAX_DIMS];
        for (int i = 0; i < t.nd; i++)
            cur[i] = t.d[i] * t.r[i];
        for (int i = 0; i < t.nd && d; i++) {
            if (t.r[i] == 1)
                continue;
            int64_t s3[3] = {tg__span(cur, 0, i), t.r[i], t.d[i] * tg__span(cur, i + 1, t.nd)};
            int one = 1;
            cur[i] = t.d[i];
            d = tg_reshape(tg_sum(tg_reshape(d, 3, s3), 1, &one, false), t.nd, cur);
        }
    }
    g->dx[0] = tg_reshape(d, m->ndim, m->shape);
    return g->dx[0] ? TG_OK : tg_last_status();
}

const tg_op_def tg_op_tile = {
    .name = "tile", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {tile_specs, sizeof(tile_attrs)}, .flags = TG_OP_PURE,
    .infer = tile_infer, .kernel = {[TG_CPU] = tile_kernel}, .grad = tile_grad,
    .jvp = tg__jvp_linear, .onnx = {"Tile", 13}};

tg_tensor *tg_tile(tg_tensor *x, int n_reps, const int64_t *reps)
{
    tg_attr a = TG_AINTS("reps", reps, n_reps);
    return tg_op_call(&tg_op_tile, 1, &x, &a, 1);
}

/* ---- one_hot ------------------------------------------------------------------ */
typedef struct one_hot_attrs {
    int64_t num_classes;
} one_hot_attrs;
static const tg_attr_spec one_hot_specs[] = {
    TG_SPEC_INT(one_hot_attrs, num_classes, -1), {0}};

static tg_status one_hot_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    int64_t nc = ((const one_hot_attrs *)c->attr)->num_classes;
    tg_status s = tg__require_index(c->op->name, x);
    if (s != TG_OK)
        return s;
    if (nc < 0)
        return tg__error(TG_ERR_ARG, "one_hot: num_classes must be >= 0, got %lld "
                         "(inferring it from the data is not supported)", (long long)nc);
    if (x->ndim >= TG_MAX_DIMS)
        return tg__error(TG_ERR_SHAPE, "one_hot: input has %d dims; the result "
                         "would exceed %d", x->ndim, TG_MAX_DIMS);
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim] = nc;
    return tg_infer_set(c, 0, TG_INT64, x->ndim + 1, shape);
}

static tg_status one_hot_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    int64_t nc = ((const one_hot_attrs *)c->attr)->num_classes;
    int64_t *o = (int64_t *)tg__base(out);
    memset(o, 0, (size_t)out->numel * sizeof *o);
    tg_tensor *x = tg__contig(c->in[0]);
    if (!x)
        return TG_ERR_NOMEM;
    const void *p = tg__base(x);
    tg_status s = TG_OK;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t v = x->dtype == TG_INT32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
        if (v < 0 || v >= nc) {
            s = tg__error(TG_ERR_INDEX, "one_hot: class %lld at position %lld is out "
                          "of range for num_classes %lld (expected 0 to %lld)",
                          (long long)v, (long long)i, (long long)nc, (long long)nc - 1);
            break;
        }
        o[i * nc + v] = 1;
    }
    tg_release(x);
    return s;
}

static const tg_arg_spec one_hot_in[] = {{"indices", TG_DTS_INDEX}, {0}};
static const tg_arg_spec one_hot_out[] = {{"y", TG_DT(TG_INT64)}, {0}};

const tg_op_def tg_op_one_hot = {
    .name = "one_hot", .n_in = 1, .n_out = 1, .inputs = one_hot_in, .outputs = one_hot_out,
    .attrs = {one_hot_specs, sizeof(one_hot_attrs)}, .flags = TG_OP_PURE, .nondiff = true,
    .infer = one_hot_infer, .kernel = {[TG_CPU] = one_hot_kernel}, .onnx = {"OneHot", 11}};

tg_tensor *tg_one_hot(tg_tensor *indices, int64_t num_classes)
{
    tg_attr a = TG_AI("num_classes", num_classes);
    return tg_op_call(&tg_op_one_hot, 1, &indices, &a, 1);
}

const tg_op_def *const tg_ops_array[] = {
    &tg_op_concat, &tg_op_pad, &tg_op_pad_grad,        &tg_op_tile,         &tg_op_one_hot,
    &tg_op_gather, &tg_op_scatter_add, &tg_op_index_select, &tg_op_index_add,
    &tg_op_embedding, NULL,
};
