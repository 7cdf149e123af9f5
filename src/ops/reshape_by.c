/* reshape_by: ONNX Reshape-14 with its target shape as an int64 (or
 * int32) tensor, for targets a graph computes (Concat(Mul(Shape(x)[0],
 * Shape(x)[1]), [-1]) of a batch and a sequence length both known only
 * when the graph runs).
 *
 *   y = reshape_by(x, shape, allowzero)
 *
 * ONNX's rule: a 0 copies x's dim at that position (allowzero 0) or is a
 * 0 (allowzero 1), one -1 is inferred from x's size, other values are
 * the dims. Where the shape has data (eagerly, constants) inference
 * computes the output's dims; on a graph's value the dims are the `hint`
 * the caller knows (the ONNX importer's target with INT64_MIN where a
 * value is known only when the graph runs), else unknown (-1); the
 * executor infers them from the actual inputs when the graph runs
 * (docs/GRAPHS.md, "Dims that depend on values"), and the kernel checks
 * the shape again. The output is a copy.
 *
 * Gradient: reshape_like(dy, x), dy's elements in x's shape; it is its
 * own adjoint's kind (reshape_like(dx, dy)), so every order stays here. */
#include "autodiff/jvp.h"
#include "core/size_math.h"
#include "ops/elementwise.h"

#include <string.h>

typedef struct reshape_attrs {
    bool allowzero;
    tg_ints hint;
} reshape_attrs;
static const tg_attr_spec reshape_specs[] = {TG_SPEC_BOOL(reshape_attrs, allowzero, false),
                                             TG_SPEC_INTS(reshape_attrs, hint), {0}};

static const tg_arg_spec reshape_in[] = {
    {"x", TG_DTS_ANY}, {"shape", TG_DTS_INDEX | TG_ARG_NO_GRAD}, {0}};
static const tg_arg_spec like_in[] = {
    {"x", TG_DTS_ANY}, {"ref", TG_DTS_ANY | TG_ARG_NO_GRAD}, {0}}; /* ref: its shape */
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

#define UNKNOWN_VALUE INT64_MIN /* in the hint: a value the graph computes */

/* the output's dims by ONNX's rule from the values v[0..n) (UNKNOWN_VALUE
 * where unknown), -1 where they or x's unknown dims leave a dim open */
static tg_status target_shape(const tg_op_ctx *c, const int64_t *v, int n, int64_t *out)
{
    const tg_tensor *x = c->in[0];
    const reshape_attrs *a = c->attr;
    int infer = -1;
    bool open = false; /* a dim other than the inferred one is unknown */
    int64_t known = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = v[i];
        if (d == UNKNOWN_VALUE) {
            out[i] = -1;
            open = true;
            continue;
        }
        if (d == 0 && !a->allowzero) {
            if (i >= x->ndim)
                return tg__error(TG_ERR_SHAPE, "%s: shape[%d] = 0 copies a dim the input "
                                 "(%d dims) does not have", c->op->name, i, x->ndim);
            d = x->shape[i];
        } else if (d == -1) {
            if (infer >= 0)
                return tg__error(TG_ERR_SHAPE, "%s: the shape has more than one -1",
                                 c->op->name);
            infer = i;
            continue;
        } else if (d < 0) {
            return tg__error(TG_ERR_SHAPE, "%s: shape[%d] is %lld (negative)", c->op->name, i,
                             (long long)d);
        }
        out[i] = d;
        if (d < 0)
            open = true;
        else if (!tg__size_mul(c->op->name, "the output size", known, d, &known))
            return tg_last_status();
    }
    if (infer >= 0 && a->allowzero && known == 0 && !open)
        return tg__error(TG_ERR_SHAPE, "%s: a -1 beside a 0 with allowzero", c->op->name);
    bool x_known = !tg__shape_has_unknown(x->ndim, x->shape);
    if (infer >= 0) {
        if (open || !x_known) {
            out[infer] = -1;
        } else if (known == 0 || x->numel % known) {
            return tg__error(TG_ERR_SHAPE, "%s: cannot infer the -1: %lld elements, %lld in "
                             "the other dims", c->op->name, (long long)x->numel,
                             (long long)known);
        } else {
            out[infer] = x->numel / known;
        }
    } else if (!open && x_known && known != x->numel) {
        char b[160];
        return tg__error(TG_ERR_SHAPE, "%s: cannot reshape %lld elements to %s", c->op->name,
                         (long long)x->numel, tg_shape_str(n, out, b, sizeof b));
    }
    return TG_OK;
}

/* the target's values: its data, else the hint, else unknown each */
static tg_status read_target(const tg_op_ctx *c, int64_t *v, int *n)
{
    const tg_tensor *t = c->in[1];
    const reshape_attrs *a = c->attr;
    if (t->ndim != 1 || t->shape[0] < 0 || t->shape[0] > TG_MAX_DIMS)
        return tg__error(TG_ERR_SHAPE, "%s: shape must be 1-D with a known count of at most "
                         "%d values", c->op->name, TG_MAX_DIMS);
    if (t->dtype != TG_INT64 && t->dtype != TG_INT32)
        return tg__error(TG_ERR_DTYPE, "%s: shape must be int64 or int32, got %s",
                         c->op->name, tg_dtype_name(t->dtype));
    *n = (int)t->shape[0];
    if (a->hint.n && a->hint.n != *n)
        return tg__error(TG_ERR_ARG, "%s: a hint of %d values for a shape of %d", c->op->name,
                         a->hint.n, *n);
    for (int i = 0; i < *n; i++) {
        if (t->storage) {
            const void *p = tg__elem_ptr(t, i);
            v[i] = t->dtype == TG_INT64 ? *(const int64_t *)p : *(const int32_t *)p;
            if (v[i] == UNKNOWN_VALUE) /* no dim; not the hint's mark */
                return tg__error(TG_ERR_SHAPE, "%s: shape[%d] is %lld (negative)",
                                 c->op->name, i, (long long)v[i]);
        } else {
            v[i] = a->hint.n ? a->hint.v[i] : UNKNOWN_VALUE;
        }
    }
    return TG_OK;
}

static tg_status reshape_by_infer(tg_op_ctx *c)
{
    int64_t v[TG_MAX_DIMS], out[TG_MAX_DIMS];
    int n = 0;
    tg_status s = read_target(c, v, &n);
    if (s == TG_OK)
        s = target_shape(c, v, n, out);
    return s != TG_OK ? s : tg__infer_set_open(c, c->in[0]->dtype, n, out);
}

/* reshape_like(x, ref): x's elements in ref's shape */
static tg_status reshape_like_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0], *r = c->in[1];
    if (!tg__shape_has_unknown(x->ndim, x->shape) && !tg__shape_has_unknown(r->ndim, r->shape) &&
        x->numel != r->numel) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE, "%s: cannot reshape %s to %s", c->op->name,
                         tg_shape_str(x->ndim, x->shape, a, sizeof a),
                         tg_shape_str(r->ndim, r->shape, b, sizeof b));
    }
    return tg__infer_set_open(c, x->dtype, r->ndim, r->shape);
}

/* out = x's elements in C order */
static tg_status copy_elements(const tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg_tensor *xc = tg__contig_as(c->in[0], out->dtype);
    if (!xc)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    memcpy(tg__base(out), tg__base(xc), (size_t)out->numel * tg_dtype_size(out->dtype));
    tg_release(xc);
    return TG_OK;
}

static tg_status check_out(const tg_op_ctx *c, int nd, const int64_t *shape)
{
    const tg_tensor *y = c->out[0];
    if (tg__shape_eq(nd, shape, y->ndim, y->shape) && y->numel == c->in[0]->numel)
        return TG_OK;
    char a[160], b[160];
    return tg__error(TG_ERR_SHAPE, "%s: the inputs give shape %s, the output has %s",
                     c->op->name, tg_shape_str(nd, shape, a, sizeof a),
                     tg_shape_str(y->ndim, y->shape, b, sizeof b));
}

static tg_status reshape_by_kernel(tg_op_ctx *c)
{
    int64_t v[TG_MAX_DIMS], out[TG_MAX_DIMS];
    int n = 0;
    tg_status s = read_target(c, v, &n);
    if (s == TG_OK)
        s = target_shape(c, v, n, out);
    if (s == TG_OK)
        s = check_out(c, n, out);
    return s != TG_OK ? s : copy_elements(c);
}

static tg_status reshape_like_kernel(tg_op_ctx *c)
{
    tg_status s = check_out(c, c->in[1]->ndim, c->in[1]->shape);
    return s != TG_OK ? s : copy_elements(c);
}

static const tg_op_def tg_op_reshape_like;

/* both: dx = reshape_like(dy, x) */
static tg_status reshape_vjp(tg_grad_ctx *g)
{
    tg_tensor *in[2] = {g->dy[0], g->in[0]};
    g->dx[0] = tg_op_call(&tg_op_reshape_like, 2, in, NULL, 0);
    return TG_OK;
}

const tg_op_def tg_op_reshape_by = {
    .name = "reshape_by", .n_in = 2, .n_out = 1, .inputs = reshape_in, .outputs = any_out,
    .attrs = {reshape_specs, sizeof(reshape_attrs)},
    .flags = TG_OP_PURE | TG_OP_INFERS_UNKNOWN, .infer = reshape_by_infer,
    .kernel = {[TG_CPU] = reshape_by_kernel}, .grad = reshape_vjp, .save_inputs = 0x1,
    .jvp = tg__jvp_linear, .onnx = {"Reshape", 14}};

static const tg_op_def tg_op_reshape_like = {
    .name = "reshape_like", .n_in = 2, .n_out = 1, .inputs = like_in, .outputs = any_out,
    .flags = TG_OP_PURE | TG_OP_INFERS_UNKNOWN, .infer = reshape_like_infer,
    .kernel = {[TG_CPU] = reshape_like_kernel}, .grad = reshape_vjp, .save_inputs = 0x1,
    .jvp = tg__jvp_linear};

tg_tensor *tg__reshape_by(tg_tensor *x, tg_tensor *shape, bool allowzero, int n_hint,
                          const int64_t *hint)
{
    if (!x || !shape) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "reshape_by: input %d is NULL", x ? 1 : 0);
        return NULL;
    }
    tg_tensor *in[2] = {x, shape};
    tg_attr a[2] = {TG_AI("allowzero", allowzero), TG_AINTS("hint", hint, n_hint)};
    return tg_op_call(&tg_op_reshape_by, 2, in, a, n_hint ? 2 : 1);
}

const tg_op_def *const tg_ops_reshape_by[] = {&tg_op_reshape_by, &tg_op_reshape_like, NULL};
