/* The rewriter: a pass builds its output graph by walking the input in id
 * order and copying, replacing or dropping each node, so the output's ids
 * are again a topological order of its data edges and a node keeps its
 * place relative to the others (which is what orders reads of variables
 * against assigns). At commit, control edges are mapped, the ordering-only
 * edges between variable readers and writers are derived again from the
 * new order, and the pass context's lists follow the map. */
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tg_status tg__rw_begin(tg_rw *r, const tg_graph *src)
{
    memset(r, 0, sizeof *r);
    r->src = src;
    r->dst = tg_graph_new(src->name);
    r->vmap = malloc(((size_t)src->n_values + 1) * sizeof *r->vmap);
    r->nmap = malloc(((size_t)src->n_nodes + 1) * sizeof *r->nmap);
    /* the copy has about as many names: no rehashing while copying */
    if (!r->dst || !r->vmap || !r->nmap ||
        !tg__hmap_reserve(&r->dst->names, (size_t)src->n_nodes + 16)) {
        tg__rw_abort(r);
        return tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
    }
    for (int v = 0; v < src->n_values; v++)
        r->vmap[v] = -1;
    for (int id = 0; id < src->n_nodes; id++)
        r->nmap[id] = -1;
    return TG_OK;
}

void tg__rw_abort(tg_rw *r)
{
    tg__graph_release(r->dst);
    free(r->vmap);
    free(r->nmap);
    memset(r, 0, sizeof *r);
}

tg_status tg__rw_finish(tg_rw *r, tg_pass_ctx *c, tg_status s, bool changed)
{
    if (s == TG_OK && changed)
        return tg__rw_commit(r, c);
    tg__rw_abort(r);
    return s;
}

tg_status tg__rw_replace_chains(tg_pass_ctx *c, tg_status s, const int *plan, int n_chains,
                                int (*emit)(tg_rw *rw, int id, void *ctx), void *ctx)
{
    const tg_graph *g = c->g;
    tg_rw rw = {0};
    if (s == TG_OK && n_chains > 0)
        s = tg__rw_begin(&rw, g);
    for (int id = 0; s == TG_OK && n_chains > 0 && id < g->n_nodes; id++) {
        if (plan[id] == TG_RW_FOLDED)
            continue;
        if ((plan[id] == TG_RW_KEEP ? tg__rw_copy(&rw, id) : emit(&rw, id, ctx)) < 0)
            s = tg_last_status();
    }
    s = tg__rw_finish(&rw, c, s, n_chains > 0);
    tg__pass_count(c, "fused", s == TG_OK ? n_chains : 0);
    return s;
}

tg_status tg__infer_node(const tg_graph *g, const tg_gnode *n, tg_meta *out)
{
    tg_op_ctx c;
    tg_status s = tg__graph_infer_node(g, n, &c);
    if (s != TG_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        s = tg__error(s, "graph '%s': node '%s' (%s): %s", g->name, n->name, n->op->name,
                      msg);
    }
    for (int o = 0; s == TG_OK && o < n->n_out; o++)
        out[o] = c.out_meta[o];
    return s;
}

/* a name free in both graphs: base, base_1, ... (new nodes must not take
 * a name that a later copied node of src has) */
static char *fresh_name(const tg_rw *r, const char *base)
{
    size_t len = strlen(base) + 24;
    char *s = malloc(len);
    if (!s)
        return NULL;
    snprintf(s, len, "%s", base);
    for (long k = 1; tg__hmap_get(&r->dst->names, s) >= 0 ||
                     tg__hmap_get(&r->src->names, s) >= 0; k++)
        snprintf(s, len, "%s_%ld", base, k);
    return s;
}

/* a node of dst: kind, name (exact when `exact`), inputs (dst values) */
static int add_node(tg_rw *r, tg_gnode_kind kind, const char *name, bool exact, int n_in,
                    const int *in, int n_out)
{
    char *fresh = exact ? NULL : fresh_name(r, name);
    if (!exact && !fresh) {
        tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
        return -1;
    }
    int id = tg__graph_add_node(r->dst, kind, exact ? name : fresh, NULL, n_in, n_out);
    free(fresh);
    if (id >= 0 && n_in > 0)
        memcpy(r->dst->nodes[id].in, in, (size_t)n_in * sizeof *in);
    return id;
}

/* gives node id of dst its op and attributes, then its output values:
 * `metas`, or inferred when NULL. An inference that fails on inputs with
 * dims known only when the graph runs (a length nonzero or expand_by
 * decides, met by a fed size the probes cannot check) keeps `fallback`,
 * the metas the graph was built with: the executor infers that node from
 * the actual inputs when it runs, and checks them then. */
static int finish_op(tg_rw *r, int id, const tg_op_def *op, const tg_attr *attrs,
                     int n_attrs, const tg_meta *metas, const tg_meta *fallback)
{
    tg_gnode *n = &r->dst->nodes[id];
    tg_status s = TG_OK;
    n->op = op;
    n->n_attrs = n_attrs;
    n->attrs = tg__attrs_hold_copy(attrs, n_attrs);
    if (n_attrs && !n->attrs)
        return -1;
    n->attr = tg__attrs_decode_copy(op, n->attrs, n_attrs, &s);
    if (s != TG_OK)
        return -1;
    tg_meta m[TG_MAX_OP_OUTPUTS];
    if (!metas) {
        if (tg__infer_node(r->dst, n, m) == TG_OK)
            metas = m;
        else if (fallback && tg__node_inputs_unknown(r->dst, n))
            metas = fallback, tg_clear_error();
        else
            return -1;
    }
    for (int o = 0; o < n->n_out; o++)
        tg__graph_add_value(r->dst, id, o, &metas[o]); /* reserved: cannot fail */
    return id;
}

int tg__rw_op(tg_rw *r, const tg_op_def *op, const char *base, const tg_attr *attrs,
              int n_attrs, int n_in, const int *in)
{
    int n_out = tg_op_n_out(op, attrs, n_attrs);
    int id = n_out < 0 ? -1 : add_node(r, TG_GNODE_OP, base, false, n_in, in, n_out);
    return id < 0 ? -1 : finish_op(r, id, op, attrs, n_attrs, NULL, NULL);
}

static int add_source(tg_rw *r, tg_gnode_kind kind, const char *name, bool exact,
                      tg_tensor *t, const tg_meta *m)
{
    int id = add_node(r, kind, name, exact, 0, NULL, 1);
    if (id < 0) {
        tg_release(t);
        return -1;
    }
    r->dst->nodes[id].tensor = t;
    return tg__graph_add_value(r->dst, id, 0, m); /* reserved: cannot fail */
}

int tg__rw_constant(tg_rw *r, const char *base, tg_tensor *t)
{
    tg_meta m;
    tg_meta_of(t, &m);
    return add_source(r, TG_GNODE_CONSTANT, base, false, t, &m);
}

int tg__rw_placeholder(tg_rw *r, const char *base, const tg_meta *m)
{
    return add_source(r, TG_GNODE_PLACEHOLDER, base, false, NULL, m);
}

int tg__rw_copy(tg_rw *r, int sid)
{
    const tg_gnode *n = &r->src->nodes[sid];
    int in[TG_MAX_OP_INPUTS];
    for (int i = 0; i < n->n_in; i++)
        if ((in[i] = r->vmap[n->in[i]]) < 0) {
            tg__error(TG_ERR_INTERNAL, "graph passes: node '%s' copied before its "
                      "input %d", n->name, i);
            return -1;
        }
    int id;
    if (n->kind != TG_GNODE_OP) {
        int v = add_source(r, n->kind, n->name, true, tg_retain(n->tensor),
                           &r->src->values[n->out[0]].meta);
        id = v < 0 ? -1 : r->dst->values[v].node;
    } else {
        id = add_node(r, TG_GNODE_OP, n->name, true, n->n_in, in, n->n_out);
        tg_meta m[TG_MAX_OP_OUTPUTS];
        for (int o = 0; o < n->n_out; o++)
            m[o] = r->src->values[n->out[o]].meta;
        if (id >= 0)
            id = finish_op(r, id, n->op, n->attrs, n->n_attrs, r->reinfer ? NULL : m, m);
    }
    if (id < 0)
        return -1;
    tg_gnode *d = &r->dst->nodes[id]; /* the copy comes from where the node came from */
    free(d->loc);
    if (n->loc && !(d->loc = strdup(n->loc))) {
        tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
        return -1;
    }
    if (!n->loc)
        d->loc = NULL;
    d->backward = n->backward;
    r->nmap[sid] = id;
    for (int o = 0; o < n->n_out; o++)
        r->vmap[n->out[o]] = r->dst->nodes[id].out[o];
    return id;
}

void tg__rw_forward(tg_rw *r, int sv, int dv)
{
    r->vmap[sv] = dv;
}

/* ---- commit -------------------------------------------------------------------- */
/* the user's control edges of copied nodes, mapped (an edge to a node
 * that was dropped goes: passes drop only nodes without control edges) */
static tg_status map_ctrl(tg_rw *r)
{
    for (int sid = 0; sid < r->src->n_nodes; sid++) {
        const tg_gnode *n = &r->src->nodes[sid];
        int d = r->nmap[sid];
        if (d < 0)
            continue; /* dropped or replaced */
        for (int i = 0; i < n->n_ctrl; i++) {
            int dep = r->nmap[n->ctrl[i]];
            if (dep >= 0 && dep != d && tg__graph_add_ctrl(r->dst, d, dep, false) != TG_OK)
                return tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
        }
    }
    return TG_OK;
}

/* Ordering-only edges, as the builder makes them (graph/build.c,
 * assign.c), from the new order: a node that writes a variable runs after
 * every earlier reader of it (through views too) and before every later
 * one. Passes keep each read on the same side of each write. */
static tg_status order_writes(tg_graph *g)
{
    tg_state st;
    tg_status s = tg__state_init(&st, g);
    for (int id = 0; id < g->n_nodes && s == TG_OK; id++) {
        const tg_gnode *n = &g->nodes[id];
        for (int i = 0; i < n->n_in && s == TG_OK; i++) {
            int var = st.var_of[n->in[i]];
            for (int k = var < 0 ? 0 : st.wstart[var]; var >= 0 && k < st.wstart[var + 1];
                 k++) {
                int w = st.writers[k];
                if (w == id)
                    continue;
                if (tg__graph_add_ctrl(g, w < id ? id : w, w < id ? w : id, true) != TG_OK) {
                    s = tg__error(TG_ERR_NOMEM, "graph passes: out of memory");
                    break;
                }
            }
        }
    }
    tg__state_free(&st);
    return s;
}

static int map_value(const tg_rw *r, int v) { return v < 0 ? -1 : r->vmap[v]; }

tg_status tg__rw_commit(tg_rw *r, tg_pass_ctx *c)
{
    tg_status s = map_ctrl(r);
    if (s == TG_OK)
        s = order_writes(r->dst);
    if (s != TG_OK) {
        tg__rw_abort(r);
        return s;
    }
    for (int i = 0; i < c->n_feeds; i++)
        c->feeds[i] = map_value(r, c->feeds[i]);
    for (int i = 0; i < c->n_fetches; i++)
        c->fetches[i] = map_value(r, c->fetches[i]);
    for (int i = 0; i < c->n_targets; i++) {
        int t = c->targets[i], d = t < 0 ? -1 : r->nmap[t];
        if (t >= 0 && d < 0 && r->src->nodes[t].n_out > 0) {
            int v = r->vmap[r->src->nodes[t].out[0]];
            d = v < 0 ? -1 : r->dst->values[v].node; /* a replaced pure node */
        }
        c->targets[i] = d;
    }
    tg__graph_release(c->g);
    c->g = r->dst;
    r->dst = NULL;
    tg__rw_abort(r);
    return TG_OK;
}
