/* In-place updates as ops: copy_, fill_, add_ (dst += alpha * src) and
 * mul_scalar_. Each writes its input 0 and returns that same tensor as its
 * output, through the dispatcher like every op, and bumps the storage's
 * version counter. With grad mode on and an input that requires grad the
 * update is recorded, as PyTorch does: the destination's history goes on
 * through the update's node (y = sin(x); y *= 2 gives dy/dx = 2 cos x),
 * while a tensor that a rule saved and that is then changed is still the
 * version-counter error at backward (exp saves its result, so
 * y = exp(x); y *= 2 fails there, as in PyTorch). Refused while grad mode
 * is on: leaves that require grad (update parameters under no-grad) and
 * their views. A write through a view of a tensor gives that tensor the
 * write's history, as PyTorch's (autodiff/view_history.h).
 * In-place ops never become graph nodes (graphs update state with assign):
 * inside a graph scope they run now, on concrete tensors. */
#include "autodiff/jvp.h"
#include "autodiff/node.h"
#include "autodiff/view_history.h"
#include "kernels/cpu/fill.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"

#include <string.h>

/* ---- checks --------------------------------------------------------------- */
/* may t (input 0 of in-place op `op`; src: its other input, or NULL) be
 * written? `one_value`: the op stores one value everywhere (fill_), which
 * an expanded destination may take, as in PyTorch */
static tg_status check_dst(const char *op, const tg_tensor *t, const tg_tensor *src,
                           bool one_value)
{
    if (!tg__check_concrete(op, t))
        return tg_last_status();
    if (t->inference && !tg_inference_mode())
        return tg__error(TG_ERR_AUTOGRAD, "Inplace update to inference tensor outside "
                         "InferenceMode is not allowed.You can make a clone to get a normal "
                         "tensor before doing inplace update.See "
                         "https://github.com/pytorch/rfcs/pull/17 for more details.");
    if (t->requires_grad && tg_grad_enabled() && !t->grad_fn)
        return tg__error(TG_ERR_AUTOGRAD, "%s: in-place update of a leaf tensor that "
                         "requires grad; do it inside tg_no_grad_begin/end (as for "
                         "parameter updates)", op);
    /* an expanded (stride-0) destination would write one element many
     * times: accumulating ops would add repeatedly, threads would race */
    int axis = one_value ? -1 : tg__expanded_axis(t);
    if (axis >= 0)
        return tg__error(TG_ERR_ARG, "%s: more than one element of the destination "
                         "refers to the same memory location (axis %d is expanded); "
                         "clone it before writing to it", op, axis);
    return tg_grad_enabled() ? tg__view_check_write(op, t, src && src->requires_grad, one_value)
                             : TG_OK;
}

/* the output is the destination itself */
static tg_status same_as_dst(tg_op_ctx *c)
{
    const tg_tensor *d = c->in[0];
    return tg_infer_set(c, 0, d->dtype, d->ndim, d->shape);
}

/* dst, then a source that broadcasts to it */
static tg_status check_dst_src(tg_op_ctx *c)
{
    const char *op = c->op->name;
    const tg_tensor *dst = c->in[0], *src = c->in[1];
    tg_status s = check_dst(op, dst, src, false);
    if (s != TG_OK)
        return s;
    if (!tg__check_concrete(op, src))
        return tg_last_status();
    int nd;
    int64_t shape[TG_MAX_DIMS];
    if ((s = tg_broadcast_shapes(op, dst->ndim, dst->shape, src->ndim, src->shape, &nd,
                                 shape)) != TG_OK)
        return s;
    if (!tg__shape_eq(nd, shape, dst->ndim, dst->shape)) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE, "%s: source of shape %s does not broadcast to the "
                         "destination's shape %s", op,
                         tg_shape_str(src->ndim, src->shape, a, sizeof a),
                         tg_shape_str(dst->ndim, dst->shape, b, sizeof b));
    }
    return TG_OK;
}

/* does src read exactly the element of dst being written, everywhere?
 * (then an in-place elementwise update through both is safe) */
static bool same_elements(const tg_tensor *dst, const tg_tensor *src)
{
    if (src->offset != dst->offset || src->dtype != dst->dtype)
        return false;
    int lead = dst->ndim - src->ndim;
    for (int i = 0; i < dst->ndim; i++) {
        if (dst->shape[i] == 1)
            continue;
        int j = i - lead;
        if (j < 0 || src->shape[j] == 1 || src->strides[j] != dst->strides[i])
            return false;
    }
    return true;
}

/* src in dtype dt, ready to read while dst is written: a private copy
 * when the two overlap in memory other than element for element (as in
 * x[1:] = x[:-1]), where reading after writing would give wrong values.
 * Internal reference; the caller releases it. */
static tg_tensor *readable_source(const tg_tensor *dst, const tg_tensor *src, tg_dtype dt)
{
    if (src->storage != dst->storage || same_elements(dst, src))
        return tg__as_dtype((tg_tensor *)src, dt);
    tg_tensor *c = tg__alloc(dt, src->ndim, src->shape);
    if (c)
        tg__convert_into(c, src);
    return c;
}

/* the write is done: the output is the destination, one version on */
static tg_status written(tg_op_ctx *c)
{
    tg__bump_version(c->in[0]);
    c->out[0] = tg_retain(c->in[0]);
    return TG_OK;
}

/* a gradient that is zero: the overwritten destination's */
static tg_tensor *zeros_for(const tg_grad_ctx *g, int i)
{
    const tg_meta *m = &g->in_meta[i];
    return tg_zeros(m->dtype, m->ndim, m->shape);
}

/* ---- copy_ ------------------------------------------------------------------ */
static tg_status copy_infer(tg_op_ctx *c)
{
    tg_status s = check_dst_src(c);
    return s == TG_OK ? same_as_dst(c) : s;
}

static tg_status copy_write(tg_op_ctx *c)
{
    tg_tensor *dst = c->in[0];
    tg_tensor *x = readable_source(dst, c->in[1], c->in[1]->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    tg__convert_into(dst, x);
    tg_release(x);
    return written(c);
}

/* dst's old values are gone (zero gradient); src's broadcast is summed */
static tg_status copy_grad(tg_grad_ctx *g)
{
    if (g->needs_grad[0])
        g->dx[0] = zeros_for(g, 0);
    if (g->needs_grad[1])
        g->dx[1] = tg_sum_to(g->dy[0], g->in_meta[1].ndim, g->in_meta[1].shape);
    return TG_OK;
}

/* ---- fill_ ------------------------------------------------------------------ */
typedef struct fill_attrs {
    double value;
} fill_attrs;
static const tg_attr_spec fill_specs[] = {TG_SPEC_FLOAT(fill_attrs, value, 0), {0}};

static tg_status fill_infer(tg_op_ctx *c)
{
    tg_status s = check_dst(c->op->name, c->in[0], NULL, true);
    return s == TG_OK ? same_as_dst(c) : s;
}

/* dst's distinct elements: its expanded (stride-0) axes cut to one, so
 * that each element is written once. Internal reference */
static tg_tensor *distinct_elements(const tg_tensor *dst)
{
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < dst->ndim; i++)
        shape[i] = dst->strides[i] == 0 && dst->numel ? 1 : dst->shape[i];
    return tg__alias(dst, dst->ndim, shape, dst->strides, dst->offset);
}

static tg_status fill_write(tg_op_ctx *c)
{
    tg_tensor *dst = c->in[0];
    double value = ((const fill_attrs *)c->attr)->value;
    if (tg_is_contiguous(dst)) {
        tg__fill_contiguous(dst->dtype, tg__base(dst), dst->numel, value);
        return written(c);
    }
    tg_tensor *each = distinct_elements(dst), *v = tg__alloc(dst->dtype, 0, NULL);
    if (each && v) {
        tg__store(v->dtype, tg__base(v), value);
        tg__convert_into(each, v);
    }
    tg_release(each);
    tg_release(v);
    return each && v ? written(c) : TG_ERR_NOMEM;
}

static tg_status fill_grad(tg_grad_ctx *g)
{
    g->dx[0] = zeros_for(g, 0);
    return TG_OK;
}

/* ---- add_: dst += alpha * src, in dst's dtype ------------------------------------ */
typedef struct add_attrs {
    double alpha;
} add_attrs;
static const tg_attr_spec add_specs[] = {TG_SPEC_FLOAT(add_attrs, alpha, 1.0), {0}};

/* an integer alpha converts through int64 (CONV) so that negative values
 * wrap into uint8 */
#define AXPY_ROW(NAME, T, CONV)                                             \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        const T alpha = (T)(CONV) * (const double *)ctx;                    \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                       \
            T *d = (T *)p[0];                                               \
            const T *x = (const T *)p[1];                                   \
            for (int64_t i = 0; i < n; i++)                                 \
                d[i] += alpha * x[i];                                       \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++)                                 \
                *(T *)(p[0] + i * s[0]) += alpha * *(const T *)(p[1] + i * s[1]); \
        }                                                                   \
    }
AXPY_ROW(axpy_f32, float, double)
AXPY_ROW(axpy_f64, double, double)
AXPY_ROW(axpy_i32, int32_t, int64_t)
AXPY_ROW(axpy_i64, int64_t, int64_t)
AXPY_ROW(axpy_u8, uint8_t, int64_t)
static const tg_iter_row_fn axpy_rows[TG_NUM_DTYPES] = {axpy_f32, axpy_f64, axpy_i32,
                                                       axpy_i64, axpy_u8, NULL};

static tg_status add_infer(tg_op_ctx *c)
{
    tg_status s = check_dst_src(c);
    if (s == TG_OK && c->in[0]->dtype == TG_BOOL)
        s = tg__error(TG_ERR_DTYPE, "add_: bool destination is not supported");
    return s == TG_OK ? same_as_dst(c) : s;
}

/* dst += alpha * x, x readable at dst's shape and dtype */
static void axpy_into(tg_tensor *dst, const tg_tensor *x, double alpha)
{
    const tg_tensor *ops[2] = {dst, x};
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    tg_iter_run(&it, axpy_rows[dst->dtype], &alpha);
}

static tg_status add_write(tg_op_ctx *c)
{
    tg_tensor *dst = c->in[0];
    tg_tensor *x = readable_source(dst, c->in[1], dst->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    axpy_into(dst, x, ((const add_attrs *)c->attr)->alpha);
    tg_release(x);
    return written(c);
}

static tg_status add_grad(tg_grad_ctx *g)
{
    double alpha = ((const add_attrs *)g->attr)->alpha;
    tg_tensor *dy = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = dy;
    if (g->needs_grad[1])
        g->dx[1] = tg_sum_to(alpha == 1 ? dy : tg_mul_scalar(dy, alpha), g->in_meta[1].ndim,
                             g->in_meta[1].shape);
    return TG_OK;
}

/* ---- mul_scalar_: dst *= s ---------------------------------------------------------- */
typedef struct scale_attrs {
    double s;
} scale_attrs;
static const tg_attr_spec scale_specs[] = {TG_SPEC_FLOAT(scale_attrs, s, 1.0), {0}};

#define SCALE_ROW(NAME, T, CONV)                                            \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        const T k = (T)(CONV) * (const double *)ctx;                        \
        for (int64_t i = 0; i < n; i++)                                     \
            *(T *)(p[0] + i * s[0]) *= k;                                   \
    }
SCALE_ROW(scale_f32, float, double)
SCALE_ROW(scale_f64, double, double)
SCALE_ROW(scale_i32, int32_t, int64_t)
SCALE_ROW(scale_i64, int64_t, int64_t)
SCALE_ROW(scale_u8, uint8_t, int64_t)
static const tg_iter_row_fn scale_rows[TG_NUM_DTYPES] = {scale_f32, scale_f64, scale_i32,
                                                        scale_i64, scale_u8, NULL};

static tg_status scale_infer(tg_op_ctx *c)
{
    tg_status s = check_dst(c->op->name, c->in[0], NULL, false);
    if (s == TG_OK && c->in[0]->dtype == TG_BOOL)
        s = tg__error(TG_ERR_DTYPE, "mul_scalar_: bool tensor is not supported");
    return s == TG_OK ? same_as_dst(c) : s;
}

static tg_status scale_write(tg_op_ctx *c)
{
    tg_tensor *dst = c->in[0];
    double k = ((const scale_attrs *)c->attr)->s;
    const tg_tensor *ops[1] = {dst};
    tg_iter it;
    tg_iter_init(&it, 1, ops);
    tg_iter_run(&it, scale_rows[dst->dtype], &k);
    return written(c);
}

static tg_status scale_grad(tg_grad_ctx *g)
{
    g->dx[0] = tg_mul_scalar(g->dy[0], ((const scale_attrs *)g->attr)->s);
    return TG_OK;
}

/* ---- forward mode ------------------------------------------------------------------
 * Graphs update state with assign, so these rules serve eager forward mode
 * only (dual tensors, autodiff/forward_ad.h): the destination's new
 * tangent, from tangents alone (the kernel has overwritten the
 * destination by the time they run, and none of them needs its value) */
static tg_status copy_jvp(tg_jvp_ctx *c)
{
    return c->dx[1] ? tg__jvp_set(c, 0, c->dx[1]) : TG_OK;
}

static tg_status fill_jvp(tg_jvp_ctx *c)
{
    (void)c;
    return TG_OK; /* constant: zero */
}

static tg_status add_jvp(tg_jvp_ctx *c)
{
    double alpha = ((const add_attrs *)c->attr)->alpha;
    tg_tensor *t = NULL;
    if (c->dx[0])
        TG_JVP_TERM(c, t, c->dx[0]);
    if (c->dx[1])
        TG_JVP_TERM(c, t, alpha == 1 ? c->dx[1] : tg_mul_scalar(c->dx[1], alpha));
    return t ? tg__jvp_set(c, 0, t) : TG_OK;
}

static tg_status scale_jvp(tg_jvp_ctx *c)
{
    return tg__jvp_set(c, 0, tg_mul_scalar(c->dx[0], ((const scale_attrs *)c->attr)->s));
}

/* ---- definitions -------------------------------------------------------------------- */
static const tg_arg_spec any_dst[] = {{"dst", TG_DTS_ANY}, {0}};
static const tg_arg_spec number_dst[] = {{"dst", TG_DTS_NUMBER}, {0}};
static const tg_arg_spec any_dst_src[] = {{"dst", TG_DTS_ANY}, {"src", TG_DTS_ANY}, {0}};
static const tg_arg_spec number_dst_src[] = {
    {"dst", TG_DTS_NUMBER}, {"src", TG_DTS_ANY}, {0}};
/* eager only (graphs use assign) */
#define INPLACE_FLAGS (TG_OP_SIDE_EFFECTS | TG_OP_VIEW | TG_OP_INPLACE)

const tg_op_def tg_op_copy_ = {
    .name = "copy_", .n_in = 2, .n_out = 1, .inputs = any_dst_src, .outputs = any_dst,
    .flags = INPLACE_FLAGS, .infer = copy_infer, .make_view = copy_write,
    .grad = copy_grad, .jvp = copy_jvp};
const tg_op_def tg_op_fill_ = {
    .name = "fill_", .n_in = 1, .n_out = 1, .inputs = any_dst, .outputs = any_dst,
    .attrs = {fill_specs, sizeof(fill_attrs)}, .flags = INPLACE_FLAGS,
    .infer = fill_infer, .make_view = fill_write, .grad = fill_grad, .jvp = fill_jvp};
const tg_op_def tg_op_add_ = {
    .name = "add_", .n_in = 2, .n_out = 1, .inputs = number_dst_src, .outputs = number_dst,
    .attrs = {add_specs, sizeof(add_attrs)}, .flags = INPLACE_FLAGS,
    .infer = add_infer, .make_view = add_write, .grad = add_grad, .jvp = add_jvp};
const tg_op_def tg_op_mul_scalar_ = {
    .name = "mul_scalar_", .n_in = 1, .n_out = 1, .inputs = number_dst, .outputs = number_dst,
    .attrs = {scale_specs, sizeof(scale_attrs)}, .flags = INPLACE_FLAGS,
    .infer = scale_infer, .make_view = scale_write, .grad = scale_grad, .jvp = scale_jvp};

const tg_op_def *const tg_ops_inplace[] = {&tg_op_copy_, &tg_op_fill_, &tg_op_add_,
                                           &tg_op_mul_scalar_, NULL};

/* ---- public functions ---------------------------------------------------------------- */
/* runs an in-place op; its output (the destination) goes with a scope */
static tg_status run(const tg_op_def *op, int n, tg_tensor *const *in, const tg_attr *a,
                     int n_attrs)
{
    tg_tensor *out[1];
    tg_scope_begin();
    tg_status s = tg_op_run(op, n, in, a, n_attrs, out);
    if (s == TG_OK)
        s = tg__view_rebase(in[0]); /* a view's base takes the write's history */
    tg_scope_end();
    return s;
}

/* a destination the in-place ops' dispatch would only write and version:
 * contiguous, concrete, with no autograd, view, inference or forward-mode
 * state */
static bool plain_dst(const tg_tensor *dst)
{
    return dst && dst->storage && !dst->requires_grad && !dst->grad_fn && !dst->view_base &&
           !dst->nograd_base && !dst->tangent && !dst->inference && tg_is_contiguous(dst);
}

/* fill_'s effect on a plain destination (its values and version bump)
 * without the op's dispatch, ~1.6k instructions; zero_grad fills every
 * gradient of every step */
static bool fill_plain(tg_tensor *dst, double value)
{
    if (!plain_dst(dst))
        return false;
    tg__fill_contiguous(dst->dtype, tg__base(dst), dst->numel, value);
    tg__bump_version(dst);
    return true;
}

/* a plain destination and a contiguous source of its dtype and shape, in
 * another storage, with nothing to record: the two-operand ops' plain case */
static bool plain_pair(const tg_tensor *dst, const tg_tensor *src)
{
    return plain_dst(dst) && src && src->storage && src->storage != dst->storage &&
           src->dtype == dst->dtype && !src->tangent &&
           !(src->requires_grad && tg_grad_enabled()) && tg_is_contiguous(src) &&
           tg__shape_eq(dst->ndim, dst->shape, src->ndim, src->shape);
}

/* add_'s effect (its rows, its version bump) without the op's dispatch,
 * ~1.9k instructions: a plain destination, a contiguous source of its
 * shape and dtype in another storage with nothing to record; backward
 * accumulates every parameter's gradient so, every step */
static bool add_plain(tg_tensor *dst, const tg_tensor *src, double alpha)
{
    if (!plain_pair(dst, src) || dst->dtype == TG_BOOL)
        return false;
    axpy_into(dst, src, alpha);
    tg__bump_version(dst);
    return true;
}

/* copy_'s effect without the op's dispatch: a plain destination, a
 * contiguous source of its dtype and shape in another storage with
 * nothing to record, up to COPY_PLAIN_BYTES (larger copies take the op,
 * which splits them over threads); a graph's assign writes a gradient or
 * a state so every run */
#define COPY_PLAIN_BYTES ((int64_t)1 << 20)
static bool copy_plain(tg_tensor *dst, const tg_tensor *src)
{
    if (!plain_pair(dst, src))
        return false;
    int64_t bytes = dst->numel * (int64_t)tg__dtype_size(dst->dtype);
    if (bytes > COPY_PLAIN_BYTES)
        return false;
    memcpy(tg__base(dst), tg__base(src), (size_t)bytes);
    tg__bump_version(dst);
    return true;
}

tg_status tg_copy_(tg_tensor *dst, const tg_tensor *src)
{
    if (copy_plain(dst, src))
        return TG_OK;
    tg_tensor *in[2] = {dst, (tg_tensor *)src};
    return run(&tg_op_copy_, 2, in, NULL, 0);
}

tg_status tg_fill_(tg_tensor *dst, double value)
{
    if (fill_plain(dst, value))
        return TG_OK;
    tg_attr a = TG_AF("value", value);
    return run(&tg_op_fill_, 1, &dst, &a, 1);
}

tg_status tg_add_(tg_tensor *dst, const tg_tensor *src, double alpha)
{
    if (add_plain(dst, src, alpha))
        return TG_OK;
    tg_tensor *in[2] = {dst, (tg_tensor *)src};
    tg_attr a = TG_AF("alpha", alpha);
    return run(&tg_op_add_, 2, in, &a, 1);
}

tg_status tg_mul_scalar_(tg_tensor *dst, double s)
{
    tg_attr a = TG_AF("s", s);
    return run(&tg_op_mul_scalar_, 1, &dst, &a, 1);
}
