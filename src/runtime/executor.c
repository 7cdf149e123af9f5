/* Running a step (shared by both executors) and the serial executor: the
 * plan's steps in order with the ops' own kernels (the ones eager mode
 * runs), binding variables and constants, placing outputs where the
 * memory plan says (or making views), and releasing each value's tensor
 * after its last use. */
#include "ops/elementwise.h"
#include "runtime/runtime_impl.h"
#include "tg/autograd.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t tg__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static tg_status node_error(const tg_graph *g, const tg_gnode *n)
{
    char msg[768];
    snprintf(msg, sizeof msg, "%s", tg_last_error());
    return tg__error(tg_last_status() == TG_OK ? TG_ERR_INTERNAL : tg_last_status(),
                     "tg_session_run: node '%s' (%s) of graph '%s' failed: %s",
                     n->name, tg__gnode_op_name(n), g->name, msg);
}

/* Values have no layout in the graph; at run time a view op may meet an
 * input whose strides it cannot alias (a view of a transposed value):
 * then, as tg_reshape does in eager mode, it works on contiguous copies
 * of the non-contiguous inputs. Contiguous inputs (variables among them,
 * which assign writes to) are passed as they are. */
static tg_status retry_view_contiguous(tg_op_ctx *c)
{
    tg_tensor *copies[TG_MAX_OP_INPUTS];
    bool any = false;
    for (int i = 0; i < c->n_in; i++) {
        copies[i] = NULL;
        if (tg_is_contiguous(c->in[i]))
            continue;
        any = true;
        if (!(copies[i] = tg__alloc(c->in[i]->dtype, c->in[i]->ndim, c->in[i]->shape))) {
            for (int k = 0; k < i; k++)
                tg_release(copies[k]);
            return TG_ERR_NOMEM;
        }
        tg__convert_into(copies[i], c->in[i]);
    }
    if (!any)
        return tg_last_status(); /* the failure was not about layout */
    tg_tensor *in[TG_MAX_OP_INPUTS];
    for (int i = 0; i < c->n_in; i++)
        in[i] = copies[i] ? copies[i] : c->in[i];
    tg_op_ctx r = *c;
    r.in = in;
    tg_clear_error();
    tg_status s = c->op->make_view(&r);
    for (int i = 0; i < c->n_in; i++)
        tg_release(copies[i]);
    return s;
}

static tg_status run_op(const tg_graph *g, tg_plan *p, const tg_gnode *n,
                        tg_tensor **vals, tg_tensor **out)
{
    tg_tensor *in[TG_MAX_OP_INPUTS];
    for (int i = 0; i < n->n_in; i++)
        in[i] = vals[n->in[i]];
    /* set field by field: an initializer would clear all of out_meta
     * (kilobytes) for every node of every run */
    tg_op_ctx c;
    c.op = n->op;
    c.n_in = n->n_in;
    c.n_out = n->n_out;
    c.in = in;
    c.out = out;
    c.attr = n->attr;
    c.attrs = n->attrs;
    c.n_attrs = n->n_attrs;
    for (int o = 0; o < n->n_out; o++) {
        c.out_meta[o] = g->values[n->out[o]].meta;
        out[o] = NULL;
    }
    bool dynamic = false;
    for (int o = 0; o < n->n_out; o++)
        dynamic |= tg__shape_has_unknown(c.out_meta[o].ndim, c.out_meta[o].shape);
    /* an input whose dims the plan knows only now (a nonzero's count) is
     * checked by the inference too, also where the output's are known (a
     * matmul contracting such a dim) */
    for (int i = 0; i < n->n_in && !dynamic; i++) {
        const tg_meta *m = &g->values[n->in[i]].meta;
        dynamic = tg__shape_has_unknown(m->ndim, m->shape);
    }
    tg_status s;
    /* shapes known only at run time (after a loop whose variables change
     * size): inference on the actual inputs gives them */
    if (dynamic && (s = n->op->infer(&c)) != TG_OK)
        return s;
    if (n->op->make_view) {
        if ((s = n->op->make_view(&c)) != TG_OK)
            s = retry_view_contiguous(&c);
        return s;
    }
    for (int o = 0; o < n->n_out; o++) {
        bool unknown = tg__shape_has_unknown(c.out_meta[o].ndim, c.out_meta[o].shape);
        if (unknown && !(n->op->flags & TG_OP_SHAPES_AT_RUN))
            return tg__error(TG_ERR_INTERNAL, "output %d of %s has an unknown shape at run "
                             "time", o, n->op->name);
        if (unknown)
            continue; /* the kernel makes it */
        out[o] = dynamic ? tg__alloc(c.out_meta[o].dtype, c.out_meta[o].ndim,
                                     c.out_meta[o].shape)
                         : tg__memplan_output(p, n->out[o], &c.out_meta[o]);
        if (!out[o])
            return TG_ERR_NOMEM;
    }
    return tg_op_kernel_run(&c);
}

/* fetched values that alias state are copied as soon as they exist */
static tg_status snapshot(const tg_plan *p, const tg_gnode *n, tg_tensor **vals,
                          tg_tensor **snaps)
{
    for (int o = 0; o < n->n_out; o++) {
        tg_tensor *t = vals[n->out[o]];
        if (!t || !p->snapshot[n->out[o]] || snaps[n->out[o]])
            continue;
        tg_tensor *c = tg__alloc(t->dtype, t->ndim, t->shape);
        if (!c)
            return TG_ERR_NOMEM;
        tg__convert_into(c, t);
        snaps[n->out[o]] = c;
    }
    return TG_OK;
}

tg_status tg__exec_step(const tg_exec *x, int k, bool *ran_op)
{
    const tg_graph *g = x->g;
    const tg_gnode *n = &g->nodes[x->p->steps[k]];
    tg_tensor **vals = x->vals;
    *ran_op = n->kind == TG_GNODE_OP;
    if (n->kind != TG_GNODE_OP) { /* variables and constants: bind the tensor */
        if (!vals[n->out[0]])
            vals[n->out[0]] = tg_retain(n->tensor);
        return snapshot(x->p, n, vals, x->snaps);
    }
    tg_tensor *out[TG_MAX_OP_OUTPUTS];
    tg_status s = run_op(g, x->p, n, vals, out);
    for (int o = 0; o < n->n_out; o++) {
        if (s != TG_OK || vals[n->out[o]]) /* failed, or the value is fed */
            tg_release(out[o]);
        else
            vals[n->out[o]] = out[o];
    }
    if (s == TG_OK)
        s = snapshot(x->p, n, vals, x->snaps);
    return s == TG_OK ? TG_OK : node_error(g, n);
}

tg_status tg__plan_execute(tg_exec *x)
{
    const tg_plan *p = x->p;
    tg_status s = tg__memplan_prepare(x->p);
    /* kernels run eagerly even when the caller is inside a graph scope,
     * and record nothing (assigns may write variables that require grad) */
    int old = tg__graph_suspend();
    tg_no_grad_begin();
    x->n_ops = 0;
    for (int k = 0; k < p->n_steps && s == TG_OK; k++) {
        bool op;
        int64_t t0 = x->spans ? tg__now_ns() : 0;
        s = tg__exec_step(x, k, &op);
        x->n_ops += op;
        if (x->spans)
            x->spans[k] = (tg_trace_span){op ? p->steps[k] : -1, 0, t0, tg__now_ns()};
        for (int f = p->mem.free_start[k]; f < p->mem.free_start[k + 1]; f++) {
            int v = p->mem.free_values[f];
            tg_release(x->vals[v]);
            x->vals[v] = NULL;
        }
    }
    tg_no_grad_end();
    tg__graph_resume(old);
    return s;
}
