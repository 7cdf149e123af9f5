/* The dispatcher behind every public op function: check, decode the
 * attributes, infer, allocate, run the kernel (or make the view), record
 * for autograd, give the outputs tangents (eager forward mode,
 * autodiff/forward_ad.h), publish.
 * This is the one place graph mode hooks in: there an op appends a node
 * instead of running the kernel (src/graph/build.c). */
#include "autodiff/forward_ad.h"
#include "autodiff/node.h"
#include "autodiff/view_history.h"
#include "graph/hook.h"
#include "ops/op.h"
#include "ops/profiler.h"

#include <string.h>

static tg_status check_inputs(const tg_op_def *op, int n_in,
                              tg_tensor *const *in)
{
    if (op->n_in >= 0 && n_in != op->n_in)
        return tg__error(TG_ERR_ARG, "%s: expected %d inputs, got %d", op->name,
                         op->n_in, n_in);
    if (n_in > TG_MAX_OP_INPUTS)
        return tg__error(TG_ERR_ARG, "%s: %d inputs, at most %d are supported",
                         op->name, n_in, TG_MAX_OP_INPUTS);
    for (int i = 0; i < n_in; i++) {
        if (in[i])
            continue;
        /* a NULL input is usually an earlier failure: keep its message */
        if (tg__error_is_set())
            return tg_last_status();
        return tg__error(TG_ERR_ARG, "%s: input %d is NULL", op->name, i);
    }
    return TG_OK;
}

const tg_arg_spec *tg_arg_at(const tg_arg_spec *list, int i)
{
    int k = 0;
    if (!list)
        return NULL;
    for (; list[k].name && k < i; k++)
        if (list[k].dtypes & TG_ARG_VARIADIC)
            return &list[k];
    return list[k].name ? &list[k] : NULL;
}

/* After infer accepted the call, the dtypes must be ones the op declares:
 * infer gives the precise message for what it rejects; this catches a
 * declaration that no longer matches what the op does. */
static tg_status check_declared(const tg_op_ctx *c)
{
    const tg_op_def *op = c->op;
    for (int i = 0; op->inputs && i < c->n_in; i++) {
        const tg_arg_spec *a = tg_arg_at(op->inputs, i);
        if (!a || !(a->dtypes & TG_DT(c->in[i]->dtype)))
            return tg__error(TG_ERR_INTERNAL, "%s: input %d (%s) is %s, which the op "
                             "does not declare", op->name, i, a ? a->name : "undeclared",
                             tg_dtype_name(c->in[i]->dtype));
    }
    for (int o = 0; op->outputs && o < c->n_out; o++) {
        const tg_arg_spec *a = tg_arg_at(op->outputs, o);
        if (!a || !(a->dtypes & TG_DT(c->out_meta[o].dtype)))
            return tg__error(TG_ERR_INTERNAL, "%s: output %d (%s) is %s, which the op "
                             "does not declare", op->name, o, a ? a->name : "undeclared",
                             tg_dtype_name(c->out_meta[o].dtype));
    }
    return TG_OK;
}

tg_status tg_op_kernel_run(tg_op_ctx *c)
{
    tg_device_type dev = c->n_out > 0 && c->out[0] ? c->out[0]->device.type : TG_CPU;
    tg_status (*kernel)(tg_op_ctx *) =
        (unsigned)dev < TG_NUM_DEVICE_TYPES ? c->op->kernel[dev] : NULL;
    if (!kernel)
        return tg__error(TG_ERR_UNSUPPORTED, "%s: no kernel for device type %d",
                         c->op->name, (int)dev);
    uint64_t errors = tg__error_count();
    return tg__said_why(c->op, kernel(c), errors);
}

tg_status tg__said_why(const tg_op_def *op, tg_status s, uint64_t errors)
{
    if (s == TG_OK || tg__error_count() != errors)
        return s;
    if (s == TG_ERR_NOMEM)
        return tg__error(s, "%s: out of memory (the kernel's scratch)", op->name);
    return tg__error(s, "%s: failed (%s)", op->name, tg_status_name(s));
}

static void release_outputs(tg_op_ctx *c)
{
    for (int i = 0; i < c->n_out; i++) {
        tg_release(c->out[i]);
        c->out[i] = NULL;
    }
}

static tg_status allocate_outputs(tg_op_ctx *c)
{
    for (int i = 0; i < c->n_out; i++) {
        const tg_meta *m = &c->out_meta[i];
        c->out[i] = tg__alloc(m->dtype, m->ndim, m->shape);
        if (!c->out[i]) {
            char shape[160];
            release_outputs(c);
            tg_shape_str(m->ndim, m->shape, shape, sizeof shape);
            return tg__error(TG_ERR_NOMEM, "%s: out of memory allocating output %d "
                             "(%s %s)", c->op->name, i, tg_dtype_name(m->dtype), shape);
        }
    }
    return TG_OK;
}

static tg_status run_eager(tg_op_ctx *c);

tg_status tg_op_run(const tg_op_def *op, int n_in, tg_tensor *const *in,
                    const tg_attr *attrs, int n_attrs, tg_tensor **out)
{
    tg_status s = check_inputs(op, n_in, in);
    if (s != TG_OK)
        return s;
    _Alignas(16) unsigned char attr[TG_MAX_ATTR_SIZE];
    if (op->attrs.size > sizeof attr)
        return tg__error(TG_ERR_INTERNAL, "%s: attribute struct of %zu bytes, at most "
                         "%d are supported", op->name, op->attrs.size, TG_MAX_ATTR_SIZE);
    if ((s = tg_attrs_decode(op, attrs, n_attrs, attr)) != TG_OK)
        return s;
    tg_op_ctx c;
    c.op = op;
    c.attr = attr;
    c.n_in = n_in;
    c.n_out = tg_op_n_out(op, attrs, n_attrs);
    if (c.n_out < 0 || c.n_out > TG_MAX_OP_OUTPUTS)
        return c.n_out < 0 ? tg_last_status()
                           : tg__error(TG_ERR_ARG, "%s: %d outputs, at most %d are "
                                       "supported", op->name, c.n_out, TG_MAX_OP_OUTPUTS);
    c.in = in;
    c.out = out;
    c.attrs = attrs;
    c.n_attrs = n_attrs;
    for (int i = 0; i < c.n_out; i++)
        out[i] = NULL;
    /* graph mode: inside tg_graph_begin/end, or on symbolic
     * inputs, the op becomes a node of the graph and its outputs symbolic
     * tensors; no kernel runs and nothing is recorded for autograd.
     * Symbolic inputs may have unknown dims (-1): see infer_unknown.c */
    bool graph = !(op->flags & TG_OP_INPLACE) && tg__graph_intercepts(n_in, in);
    s = graph ? tg__infer_any(&c) : op->infer(&c);
    if (s != TG_OK || (s = check_declared(&c)) != TG_OK)
        return s;
    if (graph) {
        if ((s = tg__graph_append(&c)) != TG_OK)
            return s;
        for (int i = 0; i < c.n_out; i++)
            tg__publish(out[i]);
        return TG_OK;
    }
    if (!tg__profiler_on())
        return run_eager(&c);
    tg__profile_span span;
    tg__profile_begin(&span);
    s = run_eager(&c);
    tg__profile_end(&span, op, n_in, in);
    return s;
}

/* the op run now: its view or kernel, its tangents, its autograd record */
static tg_status run_eager(tg_op_ctx *c)
{
    const tg_op_def *op = c->op;
    int n_in = c->n_in;
    tg_tensor *const *in = c->in;
    tg_tensor **out = c->out;
    tg_status s;
    if ((s = tg__view_refresh(n_in, in)) != TG_OK)
        return s;
    if (op->make_view) {
        uint64_t errors = tg__error_count();
        s = tg__said_why(op, op->make_view(c), errors);
        if (s == TG_OK && (op->flags & TG_OP_VIEW) && !(op->flags & TG_OP_INPLACE))
            tg__view_track(out[0], in[0]);
    } else {
        if ((s = allocate_outputs(c)) != TG_OK)
            return s;
        s = tg_op_kernel_run(c);
    }
    /* tangents first: the outputs autograd saves take theirs along */
    if (s == TG_OK && tg__dual_wanted(op, n_in, in))
        s = tg__dual_propagate(c);
    if (s == TG_OK && tg__should_record(n_in, in))
        s = tg__record(c);
    if (s != TG_OK) {
        release_outputs(c);
        return s;
    }
    for (int i = 0; i < c->n_out; i++)
        tg__publish(out[i]);
    return TG_OK;
}

tg_tensor *tg_op_call(const tg_op_def *op, int n_in, tg_tensor *const *in,
                      const tg_attr *attrs, int n_attrs)
{
    tg_tensor *out[TG_MAX_OP_OUTPUTS];
    return tg_op_run(op, n_in, in, attrs, n_attrs, out) == TG_OK ? out[0] : NULL;
}

/* ---- inference helpers ---------------------------------------------------- */
void tg_meta_of(const tg_tensor *t, tg_meta *m)
{
    m->dtype = t->dtype;
    m->ndim = t->ndim;
    memcpy(m->shape, t->shape, sizeof m->shape);
}

tg_status tg_infer_set(tg_op_ctx *c, int i, tg_dtype dt, int ndim,
                       const int64_t *shape)
{
    if (!tg__check_shape(c->op->name, ndim, shape))
        return tg_last_status();
    tg_meta *m = &c->out_meta[i];
    m->dtype = dt;
    m->ndim = ndim;
    memset(m->shape, 0, sizeof m->shape);
    if (ndim > 0)
        memcpy(m->shape, shape, (size_t)ndim * sizeof *shape);
    return TG_OK;
}

tg_status tg_broadcast_shapes(const char *op, int na, const int64_t *a,
                              int nb, const int64_t *b, int *ndim_out,
                              int64_t *out)
{
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int64_t da = i < n - na ? 1 : a[i - (n - na)];
        int64_t db = i < n - nb ? 1 : b[i - (n - nb)];
        if (da != db && da != 1 && db != 1) {
            char sa[160], sb[160];
            return tg__error(TG_ERR_SHAPE,
                             "%s: shapes %s and %s cannot be broadcast "
                             "(dim %d: %lld vs %lld; sizes must match or be 1)",
                             op, tg_shape_str(na, a, sa, sizeof sa),
                             tg_shape_str(nb, b, sb, sizeof sb), i,
                             (long long)da, (long long)db);
        }
        out[i] = da == 1 ? db : da;
    }
    *ndim_out = n;
    return TG_OK;
}

tg_status tg_require_float(const char *op, const tg_tensor *t, int index)
{
    if (tg_dtype_is_float(t->dtype))
        return TG_OK;
    return tg__error(TG_ERR_DTYPE,
                     "%s: input %d must be float32 or float64, got %s", op,
                     index, tg_dtype_name(t->dtype));
}
