/* expand_by and tile_by: ONNX's Expand and Tile with the target shape or
 * the repeats as an int64 (or int32) tensor, for targets a graph computes
 * (a batch read from another input's Shape, repeats from a loop).
 *
 *   y = expand_by(x, shape)     ONNX Expand-13: bidirectional broadcast,
 *                               y's dim the larger of x's and shape's
 *                               where one of them is 1
 *   y = tile_by(x, repeats)     ONNX Tile-13: x repeated repeats[d] times
 *                               along each dim d
 *
 * Where the shape or repeats have data (eagerly, constants) inference
 * computes the output's dims; on a graph's value a dim is the `hint` the
 * caller knows (the ONNX importer's marked dims, -1 where a value is known
 * only when the graph runs), else what x alone decides (an x dim other
 * than 1 is expand's output dim) or unknown (-1). The executor infers the
 * unknown dims from the actual inputs when the graph runs
 * (docs/GRAPHS.md, "Dims that depend on values"); the kernel checks the
 * shapes again (a negative or unbroadcastable value is an error there).
 *
 * Both outputs read x at their index modulo x's dims (aligned at the
 * right), so one kernel serves both, and one gradient: tile_sum(dy, x)
 * sums dy into x's shape by the same rule (expand's sum over broadcast
 * axes, tile's sum over the tiles). tile_sum is linear in dy; its adjoint
 * tile_like(dx, ref) repeats dx to ref's shape, whose adjoint is tile_sum
 * again, so gradients of any order stay in the family. */
#include "autodiff/jvp.h"
#include "core/size_math.h"
#include "ops/elementwise.h"

#include <stdlib.h>
#include <string.h>

typedef struct by_attrs {
    tg_ints hint;
} by_attrs;
static const tg_attr_spec by_specs[] = {TG_SPEC_INTS(by_attrs, hint), {0}};

static const tg_arg_spec expand_in[] = {
    {"x", TG_DTS_ANY}, {"shape", TG_DTS_INDEX | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec tile_in[] = {
    {"x", TG_DTS_ANY}, {"repeats", TG_DTS_INDEX | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec sum_in[] = {
    {"dy", TG_DTS_ANY}, {"x", TG_DTS_ANY | TG_ARG_NO_GRAD}, {0}}; /* x: its shape */
static const tg_arg_spec like_in[] = {
    {"x", TG_DTS_ANY}, {"ref", TG_DTS_ANY | TG_ARG_NO_GRAD}, {0}}; /* ref: its shape */
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

/* the values of a 1-D int64/int32 shape or repeats tensor: its data, else
 * the hint, else -1 each; the count in *n */
static tg_status read_values(const tg_op_ctx *c, const char *what, int64_t *v, int *n)
{
    const tg_tensor *t = c->in[1];
    const by_attrs *a = c->attr;
    if (t->ndim != 1 || t->shape[0] < 0 || t->shape[0] > TG_MAX_DIMS)
        return tg__error(TG_ERR_SHAPE, "%s: %s must be 1-D with a known count of at most "
                         "%d values", c->op->name, what, TG_MAX_DIMS);
    if (t->dtype != TG_INT64 && t->dtype != TG_INT32)
        return tg__error(TG_ERR_DTYPE, "%s: %s must be int64 or int32, got %s", c->op->name,
                         what, tg_dtype_name(t->dtype));
    *n = (int)t->shape[0];
    if (a && a->hint.n && a->hint.n != *n)
        return tg__error(TG_ERR_ARG, "%s: a hint of %d values for %s of %d", c->op->name,
                         a->hint.n, what, *n);
    for (int i = 0; i < *n; i++) {
        if (t->storage) {
            const void *p = tg__elem_ptr(t, i);
            v[i] = t->dtype == TG_INT64 ? *(const int64_t *)p : *(const int32_t *)p;
            if (v[i] < 0)
                return tg__error(TG_ERR_SHAPE, "%s: %s[%d] is %lld (negative)", c->op->name,
                                 what, i, (long long)v[i]);
        } else {
            v[i] = a && a->hint.n && a->hint.v[i] >= 0 ? a->hint.v[i] : -1;
        }
    }
    return TG_OK;
}

/* sets output 0 of dtype dt and shape (dims -1 where unknown), checking
 * that its known dims make a size that fits */
static tg_status set_out(tg_op_ctx *c, tg_dtype dt, int nd, const int64_t *shape)
{
    int64_t sized[TG_MAX_DIMS], n;
    for (int i = 0; i < nd; i++)
        sized[i] = shape[i] < 0 ? 1 : shape[i];
    if (!tg__size_numel(c->op->name, nd, sized, &n))
        return tg_last_status();
    return tg__infer_set_open(c, dt, nd, shape);
}

/* expand's output dims: ONNX's bidirectional broadcast of x's shape and
 * the values v[0..n), -1 where an unknown dim leaves it open */
static tg_status expand_shape(const tg_op_ctx *c, const tg_tensor *x, const int64_t *v, int n,
                              int *nd_out, int64_t *out)
{
    int r = x->ndim, nd = n > r ? n : r;
    for (int i = 0; i < nd; i++) {
        int xi = i - (nd - r), si = i - (nd - n);
        int64_t dx = xi >= 0 ? x->shape[xi] : 1, ds = si >= 0 ? v[si] : 1;
        if (dx >= 0 && ds >= 0 && dx != ds && dx != 1 && ds != 1) {
            char b[160];
            return tg__error(TG_ERR_SHAPE, "%s: input dim %d of %s is %lld, the shape's "
                             "value %lld: they do not broadcast", c->op->name, xi,
                             tg_shape_str(x->ndim, x->shape, b, sizeof b), (long long)dx,
                             (long long)ds);
        }
        /* a 1 takes the other side's dim, unknown or not; an unknown x
         * dim meeting a value other than 1 must be 1 or that value */
        out[i] = ds == 1 ? dx : dx == 1 ? ds : ds >= 0 ? ds : dx;
    }
    *nd_out = nd;
    return TG_OK;
}

static tg_status expand_by_infer(tg_op_ctx *c)
{
    int64_t v[TG_MAX_DIMS] = {0}, out[TG_MAX_DIMS];
    int n = 0, nd = 0;
    tg_status s = read_values(c, "shape", v, &n);
    if (s == TG_OK)
        s = expand_shape(c, c->in[0], v, n, &nd, out);
    return s != TG_OK ? s : set_out(c, c->in[0]->dtype, nd, out);
}

/* tile's output dims: x's times the repeats, -1 where either is unknown */
static tg_status tile_shape(const tg_op_ctx *c, const tg_tensor *x, const int64_t *v, int n,
                            int64_t *out)
{
    if (n != x->ndim)
        return tg__error(TG_ERR_SHAPE, "%s: %d repeats for an input of %d dims", c->op->name,
                         n, x->ndim);
    for (int i = 0; i < n; i++) {
        if (x->shape[i] == 0 || v[i] == 0)
            out[i] = 0;
        else if (x->shape[i] < 0 || v[i] < 0)
            out[i] = -1;
        else if (!tg__size_mul(c->op->name, "the output size", x->shape[i], v[i], &out[i]))
            return tg_last_status();
    }
    return TG_OK;
}

static tg_status tile_by_infer(tg_op_ctx *c)
{
    int64_t v[TG_MAX_DIMS] = {0}, out[TG_MAX_DIMS];
    int n = 0;
    tg_status s = read_values(c, "repeats", v, &n);
    if (s == TG_OK)
        s = tile_shape(c, c->in[0], v, n, out);
    return s != TG_OK ? s : set_out(c, c->in[0]->dtype, n, out);
}

/* small (rank <= big's) tiles big: each dim of small, aligned at the
 * right, divides big's (0 only into 0); unknown dims pass until the run */
static tg_status check_tiles(const tg_op_ctx *c, const tg_tensor *small, const tg_tensor *big)
{
    bool ok = small->ndim <= big->ndim;
    for (int i = 0; ok && i < small->ndim; i++) {
        int64_t s = small->shape[i], b = big->shape[i + big->ndim - small->ndim];
        ok = s < 0 || b < 0 || (s == 0 ? b == 0 : b % s == 0);
    }
    if (ok)
        return TG_OK;
    char a[160], b[160];
    return tg__error(TG_ERR_SHAPE, "%s: %s does not tile %s", c->op->name,
                     tg_shape_str(small->ndim, small->shape, a, sizeof a),
                     tg_shape_str(big->ndim, big->shape, b, sizeof b));
}

/* tile_like(x, ref): x repeated to ref's shape */
static tg_status tile_like_infer(tg_op_ctx *c)
{
    tg_status s = check_tiles(c, c->in[0], c->in[1]);
    return s != TG_OK ? s : set_out(c, c->in[0]->dtype, c->in[1]->ndim, c->in[1]->shape);
}

/* tile_sum(dy, x): dy summed into x's shape */
static tg_status tile_sum_infer(tg_op_ctx *c)
{
    tg_status s = check_tiles(c, c->in[1], c->in[0]);
    return s != TG_OK ? s : set_out(c, c->in[0]->dtype, c->in[1]->ndim, c->in[1]->shape);
}

/* ---- kernels ------------------------------------------------------------------------ */
/* The walk over big's elements in C order, giving for each the flat
 * index into small (contiguous) at the same index modulo small's dims
 * (aligned at the right) */
typedef struct walk {
    int nd; /* big's rank */
    int64_t shape[TG_MAX_DIMS], small[TG_MAX_DIMS], sstride[TG_MAX_DIMS];
    int64_t idx[TG_MAX_DIMS], sidx[TG_MAX_DIMS], off;
} walk;

static void walk_init(walk *w, const tg_tensor *big, const tg_tensor *small)
{
    memset(w, 0, sizeof *w);
    w->nd = big->ndim;
    memcpy(w->shape, big->shape, sizeof w->shape);
    int64_t st = 1;
    for (int d = big->ndim - 1; d >= 0; d--) {
        int j = d - (big->ndim - small->ndim);
        w->small[d] = j >= 0 ? small->shape[j] : 1;
        w->sstride[d] = st;
        st *= w->small[d];
    }
}

/* small's index of the current element; moves to the next */
static int64_t walk_next(walk *w)
{
    int64_t at = w->off;
    for (int d = w->nd - 1; d >= 0; d--) { /* the next index, as an odometer */
        w->off += w->sstride[d];
        if (++w->sidx[d] == w->small[d]) { /* small's dim wraps */
            w->off -= w->small[d] * w->sstride[d];
            w->sidx[d] = 0;
        }
        if (++w->idx[d] < w->shape[d])
            break;
        w->idx[d] = 0; /* big's dim wraps: a multiple of small's, so sidx[d] is 0 */
    }
    return at;
}

/* out (of big's shape) = x (small) read at each index modulo x's dims */
static tg_status repeat_into(const tg_op_ctx *c, tg_tensor *out, const tg_tensor *x)
{
    tg_tensor *xc = tg__contig_as(x, out->dtype);
    if (!xc)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    walk w;
    walk_init(&w, out, xc);
    size_t es = tg_dtype_size(out->dtype);
    const char *src = tg__base(xc);
    char *dst = tg__base(out);
    for (int64_t e = 0; e < out->numel; e++)
        memcpy(dst + (size_t)e * es, src + (size_t)walk_next(&w) * es, es);
    tg_release(xc);
    return TG_OK;
}

/* the shape the kernel's inputs give must be the output's (a graph may
 * have fixed dims at build that the fed values contradict) */
static tg_status check_out(const tg_op_ctx *c, int nd, const int64_t *shape)
{
    const tg_tensor *y = c->out[0];
    if (tg__shape_eq(nd, shape, y->ndim, y->shape))
        return TG_OK;
    char a[160], b[160];
    return tg__error(TG_ERR_SHAPE, "%s: the inputs give shape %s, the output has %s",
                     c->op->name, tg_shape_str(nd, shape, a, sizeof a),
                     tg_shape_str(y->ndim, y->shape, b, sizeof b));
}

static tg_status expand_by_kernel(tg_op_ctx *c)
{
    int64_t v[TG_MAX_DIMS] = {0}, out[TG_MAX_DIMS];
    int n = 0, nd = 0;
    tg_status s = read_values(c, "shape", v, &n);
    if (s == TG_OK)
        s = expand_shape(c, c->in[0], v, n, &nd, out);
    if (s == TG_OK)
        s = check_out(c, nd, out);
    return s != TG_OK ? s : repeat_into(c, c->out[0], c->in[0]);
}

static tg_status tile_by_kernel(tg_op_ctx *c)
{
    int64_t v[TG_MAX_DIMS] = {0}, out[TG_MAX_DIMS];
    int n = 0;
    tg_status s = read_values(c, "repeats", v, &n);
    if (s == TG_OK)
        s = tile_shape(c, c->in[0], v, n, out);
    if (s == TG_OK)
        s = check_out(c, n, out);
    return s != TG_OK ? s : repeat_into(c, c->out[0], c->in[0]);
}

static tg_status tile_like_kernel(tg_op_ctx *c)
{
    tg_status s = check_tiles(c, c->in[0], c->in[1]);
    if (s == TG_OK)
        s = check_out(c, c->in[1]->ndim, c->in[1]->shape);
    return s != TG_OK ? s : repeat_into(c, c->out[0], c->in[0]);
}

/* out (x's shape) = dy summed over the elements that read each of x's */
static tg_status tile_sum_kernel(tg_op_ctx *c)
{
    const tg_tensor *dy = c->in[0];
    tg_tensor *out = c->out[0];
    tg_status s = check_tiles(c, out, dy);
    if (s == TG_OK)
        s = check_out(c, c->in[1]->ndim, c->in[1]->shape);
    if (s != TG_OK)
        return s;
    tg_tensor *dc = tg__contig_as(dy, TG_FLOAT64);
    double *acc = calloc((size_t)(out->numel ? out->numel : 1), sizeof *acc);
    if (!dc || !acc) {
        tg_release(dc);
        free(acc);
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    }
    walk w;
    walk_init(&w, dy, out);
    const double *g = (const double *)tg__base(dc);
    for (int64_t e = 0; e < dy->numel; e++)
        acc[walk_next(&w)] += g[e];
    size_t es = tg_dtype_size(out->dtype);
    char *dst = tg__base(out);
    for (int64_t e = 0; e < out->numel; e++)
        tg__store(out->dtype, dst + (size_t)e * es, acc[e]);
    free(acc);
    tg_release(dc);
    return TG_OK;
}

/* ---- definitions ---------------------------------------------------------------------- */
static const tg_op_def tg_op_tile_sum, tg_op_tile_like;

/* expand_by, tile_by and tile_like: dx = tile_sum(dy, x) */
static tg_status repeat_vjp(tg_grad_ctx *g)
{
    tg_tensor *in[2] = {g->dy[0], g->in[0]};
    g->dx[0] = tg_op_call(&tg_op_tile_sum, 2, in, NULL, 0);
    return TG_OK;
}

/* tile_sum: d(dy) = tile_like(dx, dy) */
static tg_status tile_sum_vjp(tg_grad_ctx *g)
{
    tg_tensor *in[2] = {g->dy[0], g->in[0]};
    g->dx[0] = tg_op_call(&tg_op_tile_like, 2, in, NULL, 0);
    return TG_OK;
}

const tg_op_def tg_op_expand_by = {
    .name = "expand_by", .n_in = 2, .n_out = 1, .inputs = expand_in, .outputs = any_out,
    .attrs = {by_specs, sizeof(by_attrs)}, .flags = TG_OP_PURE | TG_OP_INFERS_UNKNOWN,
    .infer = expand_by_infer, .kernel = {[TG_CPU] = expand_by_kernel}, .grad = repeat_vjp,
    .save_inputs = 0x1, .jvp = tg__jvp_linear, .onnx = {"Expand", 13}};

const tg_op_def tg_op_tile_by = {
    .name = "tile_by", .n_in = 2, .n_out = 1, .inputs = tile_in, .outputs = any_out,
    .attrs = {by_specs, sizeof(by_attrs)}, .flags = TG_OP_PURE | TG_OP_INFERS_UNKNOWN,
    .infer = tile_by_infer, .kernel = {[TG_CPU] = tile_by_kernel}, .grad = repeat_vjp,
    .save_inputs = 0x1, .jvp = tg__jvp_linear, .onnx = {"Tile", 13}};

static const tg_op_def tg_op_tile_like = {
    .name = "tile_like", .n_in = 2, .n_out = 1, .inputs = like_in, .outputs = any_out,
    .flags = TG_OP_PURE | TG_OP_INFERS_UNKNOWN, .infer = tile_like_infer,
    .kernel = {[TG_CPU] = tile_like_kernel}, .grad = repeat_vjp, .save_inputs = 0x1,
    .jvp = tg__jvp_linear};

static const tg_op_def tg_op_tile_sum = {
    .name = "tile_sum", .n_in = 2, .n_out = 1, .inputs = sum_in, .outputs = any_out,
    .flags = TG_OP_PURE | TG_OP_INFERS_UNKNOWN, .infer = tile_sum_infer,
    .kernel = {[TG_CPU] = tile_sum_kernel}, .grad = tile_sum_vjp, .save_inputs = 0x1,
    .jvp = tg__jvp_linear};

static tg_tensor *call_by(const tg_op_def *op, tg_tensor *x, tg_tensor *v, int n_hint,
                          const int64_t *hint)
{
    if (!x || !v) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "%s: input %d is NULL", op->name, x ? 1 : 0);
        return NULL;
    }
    tg_tensor *in[2] = {x, v};
    tg_attr a = TG_AINTS("hint", hint, n_hint);
    return tg_op_call(op, 2, in, &a, n_hint ? 1 : 0);
}

tg_tensor *tg_expand_by(tg_tensor *x, tg_tensor *shape)
{
    return call_by(&tg_op_expand_by, x, shape, 0, NULL);
}

tg_tensor *tg_tile_by(tg_tensor *x, tg_tensor *repeats)
{
    return call_by(&tg_op_tile_by, x, repeats, 0, NULL);
}

tg_tensor *tg__expand_by(tg_tensor *x, tg_tensor *shape, int n_hint, const int64_t *hint)
{
    return call_by(&tg_op_expand_by, x, shape, n_hint, hint);
}

tg_tensor *tg__tile_by(tg_tensor *x, tg_tensor *repeats, int n_hint, const int64_t *hint)
{
    return call_by(&tg_op_tile_by, x, repeats, n_hint, hint);
}

const tg_op_def *const tg_ops_expand_by[] = {&tg_op_expand_by, &tg_op_tile_by,
                                             &tg_op_tile_like, &tg_op_tile_sum, NULL};
