/* Constant folding: a pure node whose inputs are all constants runs once,
 * now, with its own kernel, and becomes a constant (the values every run
 * would compute, bit for bit). Outputs above a size cap stay computed at
 * run time, so folding never bloats the plan's memory. Constants are
 * captured by reference, so each folded input is guarded: writing it in
 * place makes the session compile the plan again. */
#include "passes/passes.h"
#include "tg/autograd.h"

#include <stdlib.h>

#define FOLD_MAX_BYTES (64 * 1024) /* per node, all outputs */

static int64_t out_bytes(const tg_graph *g, const tg_gnode *n)
{
    int64_t b = 0;
    for (int o = 0; o < n->n_out; o++) {
        const tg_meta *m = &g->values[n->out[o]].meta;
        b += tg__shape_numel(m->ndim, m->shape) * (int64_t)tg_dtype_size(m->dtype);
    }
    return b;
}

/* the node's constant inputs (dst tensors) into in[], or false */
static bool constant_inputs(const tg_rw *r, const tg_gnode *n, tg_tensor **in)
{
    for (int i = 0; i < n->n_in; i++)
        if (!(in[i] = tg__const_tensor(r->dst, r->vmap[n->in[i]])))
            return false;
    return n->n_in > 0;
}

/* runs the op eagerly on concrete inputs: outputs owned, nothing recorded */
static tg_status evaluate(const tg_gnode *n, tg_tensor **in, tg_tensor **out)
{
    int floor = tg__scope_suspend();
    int old = tg__graph_suspend();
    tg_no_grad_begin();
    tg_status s = tg_op_run(n->op, n->n_in, in, n->attrs, n->n_attrs, out);
    tg_no_grad_end();
    tg__graph_resume(old);
    tg__scope_resume(floor);
    return s;
}

/* folds src node id into constants; *folded false when it cannot be */
static tg_status try_fold(tg_pass_ctx *c, tg_rw *r, const int *ctrl_in, int id,
                          bool *folded)
{
    const tg_gnode *n = &r->src->nodes[id];
    tg_tensor *in[TG_MAX_OP_INPUTS], *out[TG_MAX_OP_OUTPUTS];
    *folded = false;
    if (!tg__pass_rewritable(r->src, ctrl_in, id) || !constant_inputs(r, n, in) ||
        out_bytes(r->src, n) > FOLD_MAX_BYTES)
        return TG_OK;
    if (evaluate(n, in, out) != TG_OK) {
        tg_clear_error(); /* it fails at run time too, with the node named */
        return TG_OK;
    }
    tg_status s = TG_OK;
    for (int o = 0; o < n->n_out; o++) {
        int v = s == TG_OK ? tg__rw_constant(r, n->name, out[o]) : -1;
        if (s == TG_OK && v < 0)
            s = tg_last_status();
        else if (s != TG_OK)
            tg_release(out[o]);
        else
            tg__rw_forward(r, n->out[o], v);
    }
    for (int i = 0; i < n->n_in && s == TG_OK; i++)
        s = tg__pass_add_guard(c, in[i]);
    *folded = s == TG_OK;
    return s;
}

tg_status tg__pass_fold(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    int *ctrl_in = tg__ctrl_in_counts(g);
    if (!ctrl_in)
        return tg_last_status();
    tg_rw r = {0};
    tg_status s = tg__rw_begin(&r, g);
    int n_folded = 0;
    for (int id = 0; id < g->n_nodes && s == TG_OK; id++) {
        bool folded;
        s = try_fold(c, &r, ctrl_in, id, &folded);
        if (s == TG_OK && !folded && tg__rw_copy(&r, id) < 0)
            s = tg_last_status();
        n_folded += folded;
    }
    s = tg__rw_finish(&r, c, s, n_folded > 0);
    tg__pass_count(c, "folded", n_folded);
    free(ctrl_in);
    return s;
}
