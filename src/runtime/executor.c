/* The serial executor: runs a plan's steps in order with the ops' own
 * kernels (the ones eager mode runs), binding variables and constants,
 * allocating outputs from the inferred metadata (or making views), and
 * releasing each value after its last use. */
#include "ops/elementwise.h"
#include "runtime/runtime_impl.h"

#include <stdio.h>
#include <string.h>

/* the memory plan's allocation hook (an arena will live here) */
static tg_tensor *alloc_output(const tg_meta *m)
{
    return tg__alloc(m->dtype, m->ndim, m->shape);
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

static tg_status run_op(const tg_graph *g, const tg_gnode *n, tg_tensor **vals,
                        tg_tensor **out)
{
    tg_tensor *in[TG_MAX_OP_INPUTS];
    for (int i = 0; i < n->n_in; i++)
        in[i] = vals[n->in[i]];
    tg_op_ctx c = {.op = n->op, .n_in = n->n_in, .n_out = n->n_out, .in = in,
                   .out = out, .attrs = n->attrs, .n_attrs = n->n_attrs};
    for (int o = 0; o < n->n_out; o++) {
        c.out_meta[o] = g->values[n->out[o]].meta;
        out[o] = NULL;
    }
    tg_status s;
    if (n->op->make_view) {
        if ((s = n->op->make_view(&c)) != TG_OK)
            s = retry_view_contiguous(&c);
        return s;
    }
    for (int o = 0; o < n->n_out; o++)
        if (!(out[o] = alloc_output(&c.out_meta[o])))
            return TG_ERR_NOMEM;
    return n->op->kernel(&c);
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

static tg_status run_step(const tg_graph *g, int id, tg_tensor **vals, int64_t *n_ops)
{
    const tg_gnode *n = &g->nodes[id];
    if (n->kind != TG_GNODE_OP) { /* variables and constants: bind the tensor */
        if (!vals[n->out[0]])
            vals[n->out[0]] = tg_retain(n->tensor);
        return TG_OK;
    }
    tg_tensor *out[TG_MAX_OP_OUTPUTS];
    tg_status s = run_op(g, n, vals, out);
    for (int o = 0; o < n->n_out; o++) {
        if (s != TG_OK || vals[n->out[o]]) /* failed, or the value is fed */
            tg_release(out[o]);
        else
            vals[n->out[o]] = out[o];
    }
    (*n_ops)++;
    return s == TG_OK ? TG_OK : node_error(g, n);
}

tg_status tg__plan_execute(const tg_graph *g, const tg_plan *p, tg_tensor **vals,
                           tg_tensor **snaps, int64_t *n_ops)
{
    /* kernels run eagerly even when the caller is inside a graph scope */
    int old = tg__graph_suspend();
    tg_status s = TG_OK;
    *n_ops = 0;
    for (int k = 0; k < p->n_steps && s == TG_OK; k++) {
        s = run_step(g, p->steps[k], vals, n_ops);
        if (s == TG_OK)
            s = snapshot(p, &g->nodes[p->steps[k]], vals, snaps);
        for (int f = p->mem.free_start[k]; f < p->mem.free_start[k + 1]; f++) {
            int v = p->mem.free_values[f];
            tg_release(vals[v]);
            vals[v] = NULL;
        }
    }
    tg__graph_resume(old);
    return s;
}
