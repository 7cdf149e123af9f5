/* The frame both symbolic autodiff passes run in (tg_graph_gradients,
 * tg_graph_jvp): resolve and check their two lists of values, give the
 * pass a mark and an owned tensor per value, run it inside the graph's
 * scope with the caller's tensor scopes hidden, then hand the results out
 * (published) or drop them (on failure). */
#include "autodiff/vjp.h"
#include "graph/graph_impl.h"
#include "tg/autograd.h"

#include <stdlib.h>
#include <string.h>

tg_tensor *tg__gpass_symbolic(tg_graph *g, tg_tensor *t)
{
    if (!t || t->graph)
        return t;
    int v = tg__graph_capture(g, t);
    tg_release(t);
    return v < 0 ? NULL : tg__graph_symbolic(g, v);
}

bool tg__gpass_op(const tg_graph *g, int id, tg_gop *n)
{
    const tg_gnode *x = &g->nodes[id];
    if (x->kind != TG_GNODE_OP)
        return false;
    *n = (tg_gop){.op = x->op, .name = x->name, .attrs = x->attrs, .attr = x->attr,
                  .n_attrs = x->n_attrs, .n_in = x->n_in, .n_out = x->n_out,
                  .no_grad = x->no_grad};
    memcpy(n->in, x->in, (size_t)x->n_in * sizeof *x->in);
    memcpy(n->out, x->out, (size_t)x->n_out * sizeof *x->out);
    return true;
}

tg_status tg__gpass_accumulate(tg_gpass *p, int v, tg_tensor *t)
{
    if (!(t = tg__gpass_symbolic(p->g, t)))
        return tg_last_status();
    p->val[v] = p->val[v] ? tg__grad_sum(p->val[v], t) : t;
    return p->val[v] ? TG_OK : tg_last_status();
}

static tg_status resolve(const tg_gpass_spec *sp, tg_graph *g, int *ids)
{
    int n = sp->n_first + sp->n_second;
    for (int i = 0; i < n; i++) {
        bool first = i < sp->n_first;
        ids[i] = tg__graph_value_of(g, first ? sp->first[i] : sp->second[i - sp->n_first],
                                    sp->fn, first ? sp->first_what : sp->second_what);
        if (ids[i] < 0)
            return tg_last_status();
        if (first && sp->check_first) {
            tg_status s = sp->check_first(g, i, ids[i], sp->user);
            if (s != TG_OK)
                return s;
        }
    }
    return TG_OK;
}

/* results are published on success and released (and NULL) on failure */
static void hand_out(tg_status s, int n, tg_tensor **out)
{
    for (int i = 0; i < n; i++) {
        if (s != TG_OK) {
            tg_release(out[i]);
            out[i] = NULL;
        } else {
            tg__publish(out[i]);
        }
    }
}

tg_status tg__graph_pass(tg_graph *g, const tg_gpass_spec *sp, int n_out, tg_tensor **out)
{
    for (int i = 0; i < n_out; i++)
        out[i] = NULL;
    int *ids = malloc((size_t)(sp->n_first + sp->n_second) * sizeof *ids);
    if (!ids)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", sp->fn);
    tg_status s = resolve(sp, g, ids);
    tg_gpass p = {g, g->n_nodes, g->n_values, calloc((size_t)g->n_values, sizeof(bool)),
                  calloc((size_t)g->n_values, sizeof(tg_tensor *))};
    if (s == TG_OK && (!p.mark || !p.val))
        s = tg__error(TG_ERR_NOMEM, "%s: out of memory", sp->fn);
    if (s == TG_OK) {
        /* we own every reference we make: hide the caller's tensor scopes */
        int floor = tg__scope_suspend();
        /* the nodes a pass adds (gradients, tangents) are differentiable
         * again whatever the caller's grad mode (a backward run under the
         * engine's no_grad builds them too): no_grad marks user code only */
        bool was = tg_grad_enabled();
        tg_set_grad_enabled(true);
        tg_graph_begin(g);
        s = sp->run(&p, ids, ids + sp->n_first, out, sp->user);
        tg_graph_end();
        tg_set_grad_enabled(was);
        tg__scope_resume(floor);
    }
    for (int v = 0; p.val && v < p.n_values; v++)
        tg_release(p.val[v]);
    free(p.val);
    free(p.mark);
    free(ids);
    hand_out(s, n_out, out);
    if (s == TG_OK)
        tg_clear_error(); /* what rules recovered from is not the caller's */
    return s;
}
