/* View ops: reshape/view, permute/transpose, slice, expand, squeeze,
 * unsqueeze, flatten share their input's storage and never copy;
 * contiguous and clone copy. Each is differentiable. */
#include "autodiff/jvp.h"
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"
#include "ops/shape.h"
#include "tg/autograd.h"

#include <string.h>

/* a NULL input is usually an earlier failure: keep its message */
static tg_tensor *null_input(const char *op)
{
    if (!tg__error_is_set())
        tg__error(TG_ERR_ARG, "%s: input is NULL", op);
    return NULL;
}

/* ---- shapes with one -1 ---------------------------------------------------- */
static tg_status resolve_shape(const char *op, const tg_tensor *x, int ndim,
                               const int64_t *shape, int64_t *out)
{
    int infer_at = -1;
    int64_t known = 1;
    bool has_zero = false;
    if (ndim > 0 && !shape)
        return tg__error(TG_ERR_ARG, "%s: shape is NULL for %d dims", op, ndim);
    if (ndim < 0 || ndim > TG_MAX_DIMS)
        return tg__error(TG_ERR_SHAPE, "%s: %d dims requested, supported are 0 to %d",
                         op, ndim, TG_MAX_DIMS);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == -1 && infer_at < 0) {
            infer_at = i;
            continue;
        }
        if (shape[i] < 0)
            return tg__error(TG_ERR_SHAPE, "%s: invalid dim %lld at %d (only one -1 "
                             "is allowed)", op, (long long)shape[i], i);
        /* the other dims multiply within the bound even next to a 0 (as in
         * tg__size_numel): their strides must not overflow */
        if (shape[i] == 0)
            has_zero = true;
        else if (!tg__size_mul(op, "the element count", known, shape[i], &known))
            return tg_last_status();
        out[i] = shape[i];
    }
    if (has_zero)
        known = 0;
    char a[160], b[160];
    if (infer_at >= 0 && known == 0) /* PyTorch's rule and words */
        return tg__error(TG_ERR_SHAPE, "%s: cannot reshape %s (%lld elements) into %s "
                         "because the unspecified dimension size -1 can be any value and "
                         "is ambiguous", op, tg_shape_str(x->ndim, x->shape, a, sizeof a),
                         (long long)x->numel, tg_shape_str(ndim, shape, b, sizeof b));
    if (infer_at >= 0) {
        if (x->numel % known != 0)
            return tg__error(TG_ERR_SHAPE, "%s: cannot reshape %s (%lld elements) "
                             "into %s", op, tg_shape_str(x->ndim, x->shape, a, sizeof a),
                             (long long)x->numel, tg_shape_str(ndim, shape, b, sizeof b));
        out[infer_at] = x->numel / known;
    } else if (known != x->numel) {
        return tg__error(TG_ERR_SHAPE, "%s: cannot reshape %s (%lld elements) into "
                         "%s (%lld elements)", op,
                         tg_shape_str(x->ndim, x->shape, a, sizeof a), (long long)x->numel,
                         tg_shape_str(ndim, shape, b, sizeof b), (long long)known);
    }
    return TG_OK;
}

/* strides that make x's elements appear with shape `shape` without a copy,
 * or false when its layout does not allow it (PyTorch's view rule: each
 * run of new dims must fall inside a run of old dims contiguous among
 * themselves) */
static bool view_strides(const tg_tensor *x, int ndim, const int64_t *shape,
                         int64_t *strides)
{
    if (x->numel == 0 || ndim == 0 || x->ndim == 0) {
        tg__contiguous_strides(ndim, shape, strides);
        return true;
    }
    int64_t chunk_base_stride = x->strides[x->ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    int vd = ndim - 1;
    for (int td = x->ndim - 1; td >= 0; td--) {
        tensor_numel *= x->shape[td];
        bool chunk_end = td == 0 || (x->shape[td - 1] != 1 &&
                                     x->strides[td - 1] != tensor_numel * chunk_base_stride);
        if (!chunk_end)
            continue;
        while (vd >= 0 && (view_numel < tensor_numel || shape[vd] == 1)) {
            strides[vd] = view_numel * chunk_base_stride;
            view_numel *= shape[vd];
            vd--;
        }
        if (view_numel != tensor_numel)
            return false;
        if (td > 0) {
            chunk_base_stride = x->strides[td - 1];
            tensor_numel = 1;
            view_numel = 1;
        }
    }
    return vd == -1;
}

/* the inputs and outputs of the ops that take one tensor of any dtype */
static const tg_arg_spec any_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

/* ---- view -------------------------------------------------------------------- */
/* view and expand: the target shape */
typedef tg_shape_attrs shape_attrs;
static const tg_attr_spec shape_specs[] = {TG_SPEC_INTS(shape_attrs, shape), {0}};

static tg_status view_infer(tg_op_ctx *c)
{
    const shape_attrs *a = c->attr;
    int64_t out[TG_MAX_DIMS];
    tg_status s = resolve_shape(c->op->name, c->in[0], a->shape.n, a->shape.v, out);
    return s == TG_OK ? tg_infer_set(c, 0, c->in[0]->dtype, a->shape.n, out) : s;
}

static tg_status view_make(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const tg_meta *m = &c->out_meta[0];
    int64_t strides[TG_MAX_DIMS];
    if (!view_strides(x, m->ndim, m->shape, strides)) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE,
                         "view: a tensor of shape %s with these strides cannot be "
                         "viewed as %s without a copy; use tg_reshape (copies) or "
                         "tg_contiguous first",
                         tg_shape_str(x->ndim, x->shape, a, sizeof a),
                         tg_shape_str(m->ndim, m->shape, b, sizeof b));
    }
    c->out[0] = tg__alias(x, m->ndim, m->shape, strides, x->offset);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

static tg_status view_grad(tg_grad_ctx *g)
{
    g->dx[0] = tg_reshape(g->dy[0], g->in_meta[0].ndim, g->in_meta[0].shape);
    return TG_OK;
}

/* reshape, not view: an eager tangent need not have a viewable layout */
static tg_status view_jvp(tg_jvp_ctx *c)
{
    return tg__jvp_set(c, 0, tg_reshape(c->dx[0], c->out_meta[0].ndim, c->out_meta[0].shape));
}

const tg_op_def tg_op_view = {
    .name = "view", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {shape_specs, sizeof(shape_attrs)}, .flags = TG_OP_PURE | TG_OP_VIEW,
    .infer = view_infer, .make_view = view_make, .grad = view_grad, .jvp = view_jvp,
    .onnx = {"Reshape", 14}};

/* A target with several -1 for an input with unknown dims (graph mode):
 * code that reads a size with tg_size gets -1 for an unknown dim, so
 * {tg_size(x, 0), -1} has two. With exactly one unknown input dim i and
 * shape[i] == -1 that -1 is dim i kept in place, and the one other -1 is
 * inferred from the known sizes: *fixed gets the target with that size
 * written in, a single -1 left (which the plan resolves to dim i's size
 * for every fed shape). Returns 1 when fixed, 0 when shape has at most
 * one -1 (nothing to do), -1 with an error otherwise. */
static int unknown_dim_target(const char *op, const tg_tensor *x, int ndim,
                              const int64_t *shape, int64_t *fixed)
{
    int n_minus = 0, other = -1, unknown = -1, n_unknown = 0;
    for (int i = 0; shape && i < ndim; i++)
        n_minus += shape[i] == -1;
    if (n_minus < 2 || ndim > TG_MAX_DIMS)
        return 0; /* the op's own inference decides (and names what is wrong) */
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] < 0) {
            unknown = d;
            n_unknown++;
        }
    int64_t have = 1, want = 1; /* the known sizes, of the input and of the target */
    for (int d = 0; d < x->ndim; d++)
        if (d != unknown && !tg__size_mul(op, "the element count", have, x->shape[d], &have))
            return -1;
    bool ok = n_unknown == 1 && unknown < ndim && shape[unknown] == -1 && n_minus == 2;
    for (int i = 0; ok && i < ndim; i++) {
        if (i == unknown)
            continue;
        if (shape[i] == -1)
            other = i;
        else if (shape[i] < 0 || !tg__size_mul(op, "the element count", want, shape[i], &want))
            ok = false;
    }
    char a[160], b[160];
    tg_shape_str(x->ndim, x->shape, a, sizeof a);
    tg_shape_str(ndim, shape, b, sizeof b);
    if (!ok)
        return tg__error(TG_ERR_SHAPE, "%s: cannot reshape %s into %s: only one -1 can be "
                         "inferred. In a graph a size read from an unknown dim (tg_size of a "
                         "symbolic batch) is -1 too; it is understood only for an input with "
                         "one unknown dim, at that dim's position, with one other -1 "
                         "(x [-1, 3, 4] into {tg_size(x, 0), -1}); give the other sizes",
                         op, a, b), -1;
    if (want == 0 || have % want != 0)
        return tg__error(TG_ERR_SHAPE, "%s: cannot reshape %s into %s: the known sizes (%lld "
                         "elements per unknown-dim slice) do not divide into %lld", op, a, b,
                         (long long)have, (long long)want), -1;
    memcpy(fixed, shape, (size_t)ndim * sizeof *fixed);
    fixed[other] = have / want;
    return 1;
}

/* view's op call; in a graph, a target with -1 for the input's unknown dim
 * first (unknown_dim_target) */
static tg_tensor *view_call(const char *op, tg_tensor *x, int ndim, const int64_t *shape)
{
    int64_t fixed[TG_MAX_DIMS];
    int r = x && x->numel < 0 ? unknown_dim_target(op, x, ndim, shape, fixed) : 0;
    if (r < 0)
        return NULL;
    tg_attr a = TG_AINTS("shape", r ? fixed : shape, ndim);
    return tg_op_call(&tg_op_view, 1, &x, &a, 1);
}

tg_tensor *tg_view(tg_tensor *x, int ndim, const int64_t *shape)
{
    return view_call("view", x, ndim, shape);
}

tg_tensor *tg_reshape(tg_tensor *x, int ndim, const int64_t *shape)
{
    if (!x)
        return null_input("reshape");
    int64_t out[TG_MAX_DIMS], strides[TG_MAX_DIMS];
    if (x->numel < 0) /* unknown dims (graph mode): the view op's inference decides */
        return view_call("reshape", x, ndim, shape);
    if (resolve_shape("reshape", x, ndim, shape, out) != TG_OK)
        return NULL;
    if (view_strides(x, ndim, out, strides))
        return tg_view(x, ndim, shape);
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_keep(tg_view(tg_contiguous(x), ndim, shape));
    tg_scope_end();
    tg_view_untrack_temporary(y); /* a copy, as PyTorch's: no view of the temporary */
    return y;
}

tg_tensor *tg_flatten(tg_tensor *x, int start_axis, int end_axis)
{
    int s, e;
    if (!x)
        return null_input("flatten");
    if (!tg__norm_axis("flatten", start_axis, x->ndim, &s) ||
        !tg__norm_axis("flatten", end_axis, x->ndim, &e))
        return NULL;
    if (x->ndim == 0)
        return tg_reshape(x, 1, (const int64_t[]){1});
    if (s > e)
        return tg__error_null(TG_ERR_INDEX, "flatten: start axis %d is after end "
                              "axis %d", start_axis, end_axis);
    int64_t shape[TG_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < s; i++)
        shape[n++] = x->shape[i];
    shape[n] = 1;
    for (int i = s; i <= e; i++)
        shape[n] = x->shape[i] < 0 || shape[n] < 0 ? -1 : shape[n] * x->shape[i];
    n++;
    for (int i = e + 1; i < x->ndim; i++)
        shape[n++] = x->shape[i];
    return tg_reshape(x, n, shape);
}

tg_tensor *tg_squeeze(tg_tensor *x, int axis)
{
    int a;
    if (!x)
        return null_input("squeeze");
    if (!tg__norm_axis("squeeze", axis, x->ndim, &a))
        return NULL;
    if (x->ndim == 0)
        return tg_view(x, 0, NULL);
    if (x->shape[a] != 1)
        return tg__error_null(TG_ERR_SHAPE, "squeeze: axis %d has size %lld, "
                              "expected 1", axis, (long long)x->shape[a]);
    int64_t shape[TG_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != a)
            shape[n++] = x->shape[i];
    return tg_view(x, n, shape);
}

tg_tensor *tg_squeeze_all(tg_tensor *x)
{
    if (!x)
        return null_input("squeeze_all");
    int64_t shape[TG_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < x->ndim; i++)
        if (x->shape[i] != 1)
            shape[n++] = x->shape[i];
    return tg_view(x, n, shape);
}

tg_tensor *tg_unsqueeze(tg_tensor *x, int axis)
{
    if (!x)
        return null_input("unsqueeze");
    /* the new axis may go anywhere in the result's ndim + 1 positions */
    int n1 = x->ndim + 1, a = axis < 0 ? axis + n1 : axis;
    if (a < 0 || a >= n1)
        return tg__error_null(TG_ERR_INDEX,
                              "unsqueeze: axis %d is out of range for a tensor of %d "
                              "dims (expected %d to %d)", axis, x->ndim, -n1, n1 - 1);
    if (x->ndim == TG_MAX_DIMS)
        return tg__error_null(TG_ERR_SHAPE, "unsqueeze: already %d dims", TG_MAX_DIMS);
    int64_t shape[TG_MAX_DIMS];
    int n = 0;
    for (int i = 0; i <= x->ndim; i++) {
        if (i == a)
            shape[n++] = 1;
        if (i < x->ndim)
            shape[n++] = x->shape[i];
    }
    return tg_view(x, n, shape);
}

/* ---- permute --------------------------------------------------------------------- */
typedef tg_permute_attrs permute_attrs;
static const tg_attr_spec permute_specs[] = {TG_SPEC_INTS(permute_attrs, perm), {0}};

static tg_status permute_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const int64_t *perm = ((const permute_attrs *)c->attr)->perm.v;
    int n = ((const permute_attrs *)c->attr)->perm.n;
    bool seen[TG_MAX_DIMS] = {0};
    if (n != x->ndim)
        return tg__error(TG_ERR_SHAPE, "permute: %d axes given for a tensor of %d dims",
                         n, x->ndim);
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
            return tg__error(TG_ERR_INDEX, "permute: axis %lld at position %d is out "
                             "of range or repeated (expected a permutation of 0..%d)",
                             (long long)perm[i], i, n - 1);
        seen[perm[i]] = true;
        shape[i] = x->shape[perm[i]];
    }
    return tg_infer_set(c, 0, x->dtype, n, shape);
}

static tg_status permute_make(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const int64_t *perm = ((const permute_attrs *)c->attr)->perm.v;
    int n = ((const permute_attrs *)c->attr)->perm.n;
    int64_t shape[TG_MAX_DIMS], strides[TG_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        shape[i] = x->shape[perm[i]];
        strides[i] = x->strides[perm[i]];
    }
    c->out[0] = tg__alias(x, n, shape, strides, x->offset);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

static tg_tensor *permute64(tg_tensor *x, int n, const int64_t *perm);

static tg_status permute_grad(tg_grad_ctx *g)
{
    const int64_t *perm = ((const permute_attrs *)g->attr)->perm.v;
    int n = ((const permute_attrs *)g->attr)->perm.n;
    int64_t inv[TG_MAX_DIMS];
    for (int i = 0; i < n; i++)
        inv[perm[i]] = i;
    g->dx[0] = permute64(g->dy[0], n, inv);
    return TG_OK;
}

const tg_op_def tg_op_permute = {
    .name = "permute", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {permute_specs, sizeof(permute_attrs)}, .flags = TG_OP_PURE | TG_OP_VIEW,
    .infer = permute_infer, .make_view = permute_make, .grad = permute_grad,
    .jvp = tg__jvp_linear, .onnx = {"Transpose", 13}};

static tg_tensor *permute64(tg_tensor *x, int n, const int64_t *perm)
{
    tg_attr a = TG_AINTS("perm", perm, n);
    return tg_op_call(&tg_op_permute, 1, &x, &a, 1);
}

tg_tensor *tg_permute(tg_tensor *x, const int *perm)
{
    if (!x)
        return null_input("permute");
    if (!perm && x->ndim > 0)
        return tg__error_null(TG_ERR_ARG, "permute: perm is NULL");
    int64_t p[TG_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        p[i] = perm[i];
    return permute64(x, x->ndim, p);
}

tg_tensor *tg_transpose(tg_tensor *x, int axis0, int axis1)
{
    int a, b;
    if (!x)
        return null_input("transpose");
    if (!tg__norm_axis("transpose", axis0, x->ndim, &a) ||
        !tg__norm_axis("transpose", axis1, x->ndim, &b))
        return NULL;
    int64_t p[TG_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        p[i] = i;
    if (x->ndim > 0) {
        p[a] = b;
        p[b] = a;
    }
    return permute64(x, x->ndim, p);
}

/* ---- slice ------------------------------------------------------------------------ */
/* normalised by tg_slice; checked again because the op can also be
 * reached by name (graphs, ONNX import) */
typedef struct slice_attrs {
    int64_t axis, start, stop, step;
} slice_attrs;
static const tg_attr_spec slice_specs[] = {
    TG_SPEC_INT(slice_attrs, axis, 0), TG_SPEC_INT(slice_attrs, start, 0),
    TG_SPEC_INT(slice_attrs, stop, 0), TG_SPEC_INT(slice_attrs, step, 1), {0}};

/* the shape of slice a of x (op names the op in errors) */
static tg_status slice_shape(const char *op, const tg_tensor *x, const slice_attrs *a,
                             int64_t *shape)
{
    int64_t axis = a->axis, start = a->start, stop = a->stop, step = a->step;
    if (axis < 0 || axis >= x->ndim || step < 1 || start < 0 ||
        start > x->shape[axis] || stop < 0 || stop > x->shape[axis])
        return tg__error(TG_ERR_INDEX, "%s: axis %lld start %lld stop %lld step "
                         "%lld do not fit a tensor of %d dims", op,
                         (long long)axis, (long long)start, (long long)stop,
                         (long long)step, x->ndim);
    memcpy(shape, x->shape, sizeof(int64_t) * TG_MAX_DIMS);
    shape[axis] = stop > start ? (stop - start - 1) / step + 1 : 0; /* cannot wrap */
    return TG_OK;
}

/* the alias of x that is slice a, of shape `shape` */
static tg_tensor *slice_alias(const tg_tensor *x, const slice_attrs *a,
                              const int64_t *shape)
{
    int64_t strides[TG_MAX_DIMS];
    memcpy(strides, x->strides, sizeof strides);
    /* a slice of one element (or none) keeps the stride: step may be far
     * larger than the axis, and stride * step would overflow (a step of
     * 2^61 once did); with two or more, step < the axis's extent */
    if (shape[a->axis] > 1)
        strides[a->axis] *= a->step;
    int64_t offset = x->offset + (shape[a->axis] > 0 ? a->start * x->strides[a->axis] : 0);
    return tg__alias(x, x->ndim, shape, strides, offset);
}

static tg_status slice_infer(tg_op_ctx *c)
{
    int64_t shape[TG_MAX_DIMS];
    tg_status s = slice_shape(c->op->name, c->in[0], c->attr, shape);
    return s == TG_OK ? tg_infer_set(c, 0, c->in[0]->dtype, c->in[0]->ndim, shape) : s;
}

static tg_status slice_make(tg_op_ctx *c)
{
    c->out[0] = slice_alias(c->in[0], c->attr, c->out_meta[0].shape);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

static tg_tensor *slice_call(tg_tensor *x, const slice_attrs *a);

/* the slice's gradient: dy placed back into zeros of the input's shape */
typedef struct slice_grad_attrs {
    int64_t axis, start, stop, step;
    tg_ints input_shape;
} slice_grad_attrs;
static const tg_attr_spec slice_grad_specs[] = {
    TG_SPEC_INT(slice_grad_attrs, axis, 0), TG_SPEC_INT(slice_grad_attrs, start, 0),
    TG_SPEC_INT(slice_grad_attrs, stop, 0), TG_SPEC_INT(slice_grad_attrs, step, 1),
    TG_SPEC_INTS(slice_grad_attrs, input_shape), {0}};

static slice_attrs slice_of(const slice_grad_attrs *g)
{
    return (slice_attrs){g->axis, g->start, g->stop, g->step};
}

static tg_status slice_grad_infer(tg_op_ctx *c)
{
    const slice_grad_attrs *a = c->attr;
    int nd = a->input_shape.n;
    const int64_t *shape = a->input_shape.v;
    tg_status s = tg_infer_set(c, 0, c->in[0]->dtype, nd, shape);
    if (s != TG_OK)
        return s;
    /* the window the kernel writes dy into must be dy's shape: the slice
     * of a tensor of the input shape (its struct, no storage) */
    tg_tensor *probe = tg__tensor_struct(c->in[0]->dtype, nd, shape);
    if (!probe)
        return TG_ERR_NOMEM;
    slice_attrs sa = slice_of(a);
    int64_t win[TG_MAX_DIMS];
    s = slice_shape(c->op->name, probe, &sa, win);
    const tg_tensor *dy = c->in[0];
    if (s == TG_OK && !tg__shape_eq(nd, win, dy->ndim, dy->shape)) {
        char b1[160], b2[160];
        s = tg__error(TG_ERR_SHAPE, "slice_grad: gradient of shape %s does not "
                      "match the slice's shape %s",
                      tg_shape_str(dy->ndim, dy->shape, b1, sizeof b1),
                      tg_shape_str(nd, win, b2, sizeof b2));
    }
    tg_release(probe);
    return s;
}

static tg_status slice_grad_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    memset(tg__base(out), 0, (size_t)out->numel * tg_dtype_size(out->dtype));
    slice_attrs sa = slice_of(c->attr);
    int64_t shape[TG_MAX_DIMS];
    slice_shape(c->op->name, out, &sa, shape); /* infer has checked it */
    tg_tensor *window = slice_alias(out, &sa, shape);
    if (!window)
        return TG_ERR_NOMEM;
    tg__convert_into(window, c->in[0]);
    tg_release(window);
    return TG_OK;
}

/* linear in dy: its adjoint is the slice */
static tg_status slice_grad_grad(tg_grad_ctx *g)
{
    slice_attrs sa = slice_of(g->attr);
    g->dx[0] = slice_call(g->dy[0], &sa);
    return TG_OK;
}

const tg_op_def tg_op_slice_grad = {
    .name = "slice_grad", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {slice_grad_specs, sizeof(slice_grad_attrs)}, .flags = TG_OP_PURE,
    .infer = slice_grad_infer, .kernel = {[TG_CPU] = slice_grad_kernel},
    .grad = slice_grad_grad, .jvp = tg__jvp_linear};

static tg_status slice_grad(tg_grad_ctx *g)
{
    const slice_attrs *sa = g->attr;
    tg_attr a[5] = {TG_AI("axis", sa->axis), TG_AI("start", sa->start),
                    TG_AI("stop", sa->stop), TG_AI("step", sa->step),
                    TG_AINTS("input_shape", g->in_meta[0].shape, g->in_meta[0].ndim)};
    g->dx[0] = tg_op_call(&tg_op_slice_grad, 1, &g->dy[0], a, 5);
    return TG_OK;
}

const tg_op_def tg_op_slice = {
    .name = "slice", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {slice_specs, sizeof(slice_attrs)}, .flags = TG_OP_PURE | TG_OP_VIEW,
    .infer = slice_infer, .make_view = slice_make, .grad = slice_grad,
    .jvp = tg__jvp_linear, .onnx = {"Slice", 13}};

static tg_tensor *slice_call(tg_tensor *x, const slice_attrs *sa)
{
    tg_attr a[4] = {TG_AI("axis", sa->axis), TG_AI("start", sa->start),
                    TG_AI("stop", sa->stop), TG_AI("step", sa->step)};
    return tg_op_call(&tg_op_slice, 1, &x, a, 4);
}

tg_tensor *tg_slice(tg_tensor *x, int axis, int64_t start, int64_t stop,
                    int64_t step)
{
    int a;
    if (!x)
        return null_input("slice");
    if (!tg__norm_axis("slice", axis, x->ndim, &a))
        return NULL;
    if (x->ndim == 0)
        return tg__error_null(TG_ERR_SHAPE, "slice: cannot slice a 0-d tensor");
    if (step < 1)
        return tg__error_null(TG_ERR_ARG, "slice: step must be >= 1, got %lld",
                              (long long)step);
    int64_t n = x->shape[a];
    /* Python semantics: negative counts from the end, then clamp */
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    start = start < 0 ? 0 : start > n ? n : start;
    stop = stop < 0 ? 0 : stop > n ? n : stop;
    return slice_call(x, &(slice_attrs){a, start, stop, step});
}

/* ---- expand ----------------------------------------------------------------------- */
static tg_status expand_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const int64_t *shape = ((const shape_attrs *)c->attr)->shape.v;
    int nd = ((const shape_attrs *)c->attr)->shape.n;
    int64_t out[TG_MAX_DIMS];
    char a[160], b[160];
    if (nd > TG_MAX_DIMS)
        return tg__error(TG_ERR_SHAPE, "expand: %d dims requested, at most %d "
                         "are supported", nd, TG_MAX_DIMS);
    if (nd < x->ndim)
        return tg__error(TG_ERR_SHAPE, "expand: cannot expand %s to %s (fewer dims)",
                         tg_shape_str(x->ndim, x->shape, a, sizeof a),
                         tg_shape_str(nd, shape, b, sizeof b));
    for (int i = 0; i < nd; i++) {
        int j = i - (nd - x->ndim);
        int64_t have = j >= 0 ? x->shape[j] : 1;
        /* -1 keeps an existing size; a new leading dim has none to keep */
        if (shape[i] == -1 && j < 0)
            return tg__error(TG_ERR_SHAPE, "expand: cannot expand %s to %s (-1 is "
                             "not allowed for the new leading dim %d)",
                             tg_shape_str(x->ndim, x->shape, a, sizeof a),
                             tg_shape_str(nd, shape, b, sizeof b), i);
        out[i] = shape[i] == -1 ? have : shape[i];
        if (have != out[i] && have != 1)
            return tg__error(TG_ERR_SHAPE, "expand: cannot expand %s to %s (dim %d "
                             "is %lld, must be 1 or equal)",
                             tg_shape_str(x->ndim, x->shape, a, sizeof a),
                             tg_shape_str(nd, shape, b, sizeof b), i, (long long)have);
    }
    return tg_infer_set(c, 0, x->dtype, nd, out);
}

/* shared with expand_as (ops/dynamic.c), whose output has the same layout */
tg_status tg__expand_make(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    const tg_meta *m = &c->out_meta[0];
    int64_t strides[TG_MAX_DIMS];
    for (int i = 0; i < m->ndim; i++) {
        int j = i - (m->ndim - x->ndim);
        strides[i] = j >= 0 && x->shape[j] == m->shape[i] ? x->strides[j] : 0;
    }
    c->out[0] = tg__alias(x, m->ndim, m->shape, strides, x->offset);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

tg_status tg__expand_grad(tg_grad_ctx *g)
{
    g->dx[0] = tg_sum_to(g->dy[0], g->in_meta[0].ndim, g->in_meta[0].shape);
    return TG_OK;
}

const tg_op_def tg_op_expand = {
    .name = "expand", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {shape_specs, sizeof(shape_attrs)}, .flags = TG_OP_PURE | TG_OP_VIEW,
    .infer = expand_infer, .make_view = tg__expand_make, .grad = tg__expand_grad,
    .jvp = tg__jvp_linear, .onnx = {"Expand", 13}};

tg_tensor *tg_expand(tg_tensor *x, int ndim, const int64_t *shape)
{
    if (ndim > 0 && !shape)
        return tg__error_null(TG_ERR_ARG, "expand: shape is NULL for %d dims", ndim);
    tg_attr a = TG_AINTS("shape", shape, ndim);
    return tg_op_call(&tg_op_expand, 1, &x, &a, 1);
}

/* ---- copies: clone and contiguous ----------------------------------------------------- */
static tg_status clone_infer(tg_op_ctx *c)
{
    return tg_infer_set(c, 0, c->in[0]->dtype, c->in[0]->ndim, c->in[0]->shape);
}

static tg_status clone_kernel(tg_op_ctx *c)
{
    tg__convert_into(c->out[0], c->in[0]);
    return TG_OK;
}

static tg_status clone_grad(tg_grad_ctx *g)
{
    g->dx[0] = g->dy[0];
    return TG_OK;
}

const tg_op_def tg_op_clone = {
    .name = "clone", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .flags = TG_OP_PURE | TG_OP_ELEMENTWISE, .infer = clone_infer,
    .kernel = {[TG_CPU] = clone_kernel}, .grad = clone_grad, .jvp = tg__jvp_linear,
    .onnx = {"Identity", 16}};

tg_tensor *tg_clone(tg_tensor *x) { return tg_op_call(&tg_op_clone, 1, &x, NULL, 0); }

tg_tensor *tg_contiguous(tg_tensor *x)
{
    if (x && tg_is_contiguous(x))
        return tg__publish(tg_retain(x));
    return tg_clone(x);
}

/* ---- stop_gradient: tg_detach of a graph's value ------------------------------------
 * eagerly tg_detach aliases the data outside the tape; in a graph it is
 * this node: the value itself (a view), through which no gradient flows */
static tg_status same_make(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    c->out[0] = tg__alias(x, x->ndim, x->shape, x->strides, x->offset);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

const tg_op_def tg_op_stop_gradient = {
    .name = "stop_gradient", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .flags = TG_OP_PURE | TG_OP_VIEW, .nondiff = true, .infer = clone_infer,
    .make_view = same_make, .onnx = {"Identity", 16}};

/* ---- custom_function: a custom autograd function's output in a graph -------------
 * The forward's ops are the graph's nodes; this view of their result marks
 * where the function's own backward would apply. A graph's gradients are
 * built from its nodes and cannot call that backward, so differentiating
 * through the mark fails, naming it, instead of silently using the
 * gradient of the forward's ops (wrong for a straight-through estimator) */
static tg_status custom_function_grad(tg_grad_ctx *g)
{
    (void)g;
    return tg__error(TG_ERR_UNSUPPORTED, "custom_function: a custom autograd Function's "
                     "backward cannot run in graph mode (tg.function, a graph being built); "
                     "call the function eagerly, or where no gradient flows through it");
}

const tg_op_def tg_op_custom_function = {
    .name = "custom_function", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .flags = TG_OP_PURE | TG_OP_VIEW | TG_OP_NO_JVP, .infer = clone_infer,
    .make_view = same_make, .grad = custom_function_grad, .onnx = {"Identity", 16}};

const tg_op_def *const tg_ops_shape[] = {
    &tg_op_view, &tg_op_permute, &tg_op_slice, &tg_op_slice_grad,
    &tg_op_expand, &tg_op_clone, &tg_op_stop_gradient, &tg_op_custom_function, NULL,
};
