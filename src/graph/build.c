/* Building graphs with the ordinary op functions: the per-thread stack of
 * graph scopes, the dispatcher's hook that appends an op as a node, and
 * the source nodes (placeholders, variables, constants, captures). */
#include "graph/graph_impl.h"
#include "graph/hook.h"
#include "ops/elementwise.h"

#include <stdlib.h>
#include <string.h>

/* ---- graph scopes ------------------------------------------------------------- */
#define MAX_GRAPH_DEPTH 64

static _Thread_local tg_graph *stack[MAX_GRAPH_DEPTH];
static _Thread_local int depth;
/* scopes below the floor are hidden (the runtime runs kernels eagerly
 * even when called inside a graph scope) */
static _Thread_local int floor_depth;

tg_status tg_graph_begin(tg_graph *g)
{
    if (!g)
        return tg__error(TG_ERR_ARG, "tg_graph_begin: graph is NULL");
    if (depth == MAX_GRAPH_DEPTH)
        return tg__error(TG_ERR_ARG, "tg_graph_begin: more than %d nested graph "
                         "scopes", MAX_GRAPH_DEPTH);
    tg__graph_retain(g);
    stack[depth++] = g;
    return TG_OK;
}

tg_status tg_graph_end(void)
{
    if (depth == floor_depth)
        return tg__error(TG_ERR_ARG, "tg_graph_end: no graph scope is open");
    tg__graph_release(stack[--depth]);
    return TG_OK;
}

tg_graph *tg_graph_current(void)
{
    return depth > floor_depth ? stack[depth - 1] : NULL;
}

int tg__graph_suspend(void)
{
    int old = floor_depth;
    floor_depth = depth;
    return old;
}

void tg__graph_resume(int old) { floor_depth = old; }

/* ---- captures: concrete tensors used in a graph become constants ----------------- */
static int add_source(tg_graph *g, tg_gnode_kind kind, const char *name,
                      const char *base, tg_tensor *tensor, const tg_meta *m)
{
    int id = tg__graph_add_node(g, kind, name, base, 0, 1);
    if (id < 0) {
        tg_release(tensor);
        return -1;
    }
    g->nodes[id].tensor = tensor;
    return tg__graph_add_value(g, id, 0, m); /* reserved: cannot fail */
}

int tg__graph_capture(tg_graph *g, tg_tensor *t)
{
    int v = tg__hmap_get(&g->captured, t);
    if (v >= 0)
        return v;
    tg_meta m;
    tg_meta_of(t, &m);
    /* the node's reference keeps t's address from being reused while the
     * table maps it */
    v = add_source(g, TG_GNODE_CONSTANT, NULL, "const", tg_retain(t), &m);
    if (v < 0)
        return -1;
    if (!tg__graph_map_capture(g, t, v))
        return -1;
    return v;
}

/* ---- the dispatcher's hook -------------------------------------------------------- */
bool tg__graph_intercepts(int n_in, tg_tensor *const *in)
{
    if (depth > floor_depth)
        return true;
    for (int i = 0; i < n_in; i++)
        if (in[i]->graph)
            return true;
    return false;
}

/* the graph an op application goes to: the open scope's, else its
 * symbolic inputs' */
static tg_graph *target_graph(const tg_op_ctx *c)
{
    tg_graph *g = tg_graph_current();
    for (int i = 0; i < c->n_in && !g; i++)
        g = c->in[i]->graph;
    for (int i = 0; i < c->n_in; i++) {
        const tg_tensor *x = c->in[i];
        /* a value of a graph enclosing the body being built: a capture */
        if (x->graph && x->graph != g && !tg__graph_encloses(x->graph, g))
            return tg__error_null(TG_ERR_ARG,
                                  "%s: input %d is value '%s' of graph '%s', but "
                                  "the graph being built is '%s'",
                                  c->op->name, i, tg_graph_node_name(x),
                                  x->graph->name, g->name);
    }
    return g;
}

extern const tg_op_def tg_op_assign, tg_op_assign_sub;

static bool is_assign(const tg_gnode *n)
{
    return n->kind == TG_GNODE_OP && (n->op == &tg_op_assign || n->op == &tg_op_assign_sub);
}

/* the variable node a random op advances (its state input), or -1 */
static int random_state_var(const tg_graph *g, const tg_gnode *n)
{
    int i = n->kind == TG_GNODE_OP ? tg_op_state_input(n->op, n->n_in) : -1;
    return i < 0 ? -1 : g->values[n->in[i]].var;
}

/* a variable's lists run newest first: node id's ordering edges from
 * `from` on are reversed into creation order (as dumps show them) */
static void creation_order(tg_graph *g, int id, int from)
{
    int *e = g->nodes[id].order;
    for (int i = from, j = g->nodes[id].n_order - 1; i < j; i++, j--) {
        int t = e[i];
        e[i] = e[j];
        e[j] = t;
    }
}

/* A new node reading a variable (or a view of it) that assigns already
 * update runs after those assigns, as creation order has it: ordering-only
 * edges, so that the parallel executor reads what the serial one reads.
 * (Readers made before an assign are ordered before it by
 * tg__graph_order_assign.) The variable's list of assigns makes this cost
 * the edges it adds. */
static tg_status order_after_assigns(tg_graph *g, int id)
{
    if (is_assign(&g->nodes[id]))
        return TG_OK; /* ordered after earlier readers, assigns included */
    const tg_gnode *n = &g->nodes[id];
    int state = random_state_var(g, n); /* ordered as a writer: see below */
    for (int i = 0; i < n->n_in; i++) {
        int var = g->values[n->in[i]].var;
        if (var >= 0 && var == state)
            continue;
        bool seen = false; /* two inputs behind one variable: edges once */
        for (int j = 0; j < i && !seen; j++)
            seen = g->values[n->in[j]].var == var;
        int from = n->n_order;
        for (int a = var >= 0 && !seen ? g->nodes[var].assigns : 0; a;
             a = tg__graph_next_use(g, a))
            if (tg__graph_push_edge(g, id, tg__graph_use_node(g, a), true) != TG_OK)
                return tg__error(TG_ERR_NOMEM, "%s: out of memory", tg__gnode_op_name(n));
        creation_order(g, id, from);
    }
    return TG_OK;
}

/* puts node id on the lists of the variables it reads and assigns */
static tg_status note_uses(tg_graph *g, int id)
{
    const tg_gnode *n = &g->nodes[id];
    tg_status s = TG_OK;
    for (int i = 0; i < n->n_in && s == TG_OK; i++)
        if (g->values[n->in[i]].var >= 0)
            s = tg__graph_note_use(g, g->values[n->in[i]].var, id, false);
    if (s == TG_OK && is_assign(n))
        s = tg__graph_note_use(g, g->values[n->in[0]].node, id, true);
    if (s == TG_OK && random_state_var(g, n) >= 0)
        s = tg__graph_note_use(g, random_state_var(g, n), id, true);
    return s == TG_OK ? TG_OK : tg__error(TG_ERR_NOMEM, "%s: out of memory",
                                          tg__gnode_op_name(n));
}

static tg_status order_after_readers(tg_graph *g, int var, int assign);

tg_status tg__graph_append(tg_op_ctx *c)
{
    tg_graph *g = target_graph(c);
    if (!g)
        return tg_last_status();
    int in_ids[TG_MAX_OP_INPUTS];
    for (int i = 0; i < c->n_in; i++) {
        tg_tensor *x = c->in[i];
        in_ids[i] = tg__graph_input_value(g, x);
        if (in_ids[i] < 0)
            return tg_last_status();
    }
    tg_attr *attrs = tg__attrs_hold_copy(c->attrs, c->n_attrs);
    if (c->n_attrs && !attrs)
        return tg_last_status();
    tg_status s;
    void *attr = tg__attrs_decode_copy(c->op, attrs, c->n_attrs, &s);
    int id = s == TG_OK ? tg__graph_add_node(g, TG_GNODE_OP, NULL, c->op->name, c->n_in,
                                             c->n_out)
                        : -1;
    if (id < 0) {
        tg__attrs_free(attrs, c->n_attrs);
        free(attr);
        return tg_last_status();
    }
    tg_gnode *n = &g->nodes[id];
    n->op = c->op;
    n->attr = attr;
    n->attrs = attrs;
    n->n_attrs = c->n_attrs;
    memcpy(n->in, in_ids, (size_t)c->n_in * sizeof *in_ids);
    for (int o = 0; o < c->n_out; o++)
        tg__graph_add_value(g, id, o, &c->out_meta[o]); /* reserved: cannot fail */
    if (order_after_assigns(g, id) != TG_OK || note_uses(g, id) != TG_OK)
        return tg_last_status();
    /* a random node writes its generator's state: after its earlier
     * readers (earlier random nodes among them), as an assign */
    if (random_state_var(g, n) >= 0 &&
        order_after_readers(g, random_state_var(g, n), id) != TG_OK)
        return tg_last_status();
    for (int o = 0; o < c->n_out; o++) {
        c->out[o] = tg__graph_symbolic(g, n->out[o]);
        if (!c->out[o]) {
            for (int k = 0; k < o; k++) {
                tg_release(c->out[k]);
                c->out[k] = NULL;
            }
            return tg_last_status();
        }
    }
    return TG_OK;
}

/* ---- source nodes ----------------------------------------------------------------- */
tg_tensor *tg_placeholder(tg_graph *g, const char *name, tg_dtype dt, int ndim,
                          const int64_t *shape)
{
    if (!g)
        return tg__error_null(TG_ERR_ARG, "tg_placeholder: graph is NULL");
    if (!tg_dtype_is_valid((int)dt))
        return tg__error_null(TG_ERR_DTYPE, "tg_placeholder: invalid dtype %d", (int)dt);
    /* -1: an unknown dim (a symbolic batch), given its size when fed */
    int64_t known[TG_MAX_DIMS];
    for (int i = 0; ndim > 0 && shape && i < ndim && i < TG_MAX_DIMS; i++)
        known[i] = shape[i] == -1 ? 1 : shape[i];
    if (!tg__check_shape("tg_placeholder", ndim, ndim > 0 && shape ? known : shape))
        return NULL;
    tg_meta m = {.dtype = dt, .ndim = ndim};
    if (ndim > 0)
        memcpy(m.shape, shape, (size_t)ndim * sizeof *shape);
    int v = add_source(g, TG_GNODE_PLACEHOLDER, name, "placeholder", NULL, &m);
    return v < 0 ? NULL : tg__publish(tg__graph_symbolic(g, v));
}

/* the checks of fn, which makes a source node of g from the concrete
 * tensor t (its argument `what`); a NULL t keeps an earlier error */
static bool check_source(const tg_graph *g, const char *fn, const tg_tensor *t,
                         const char *what)
{
    if (!g) {
        tg__error(TG_ERR_ARG, "%s: graph is NULL", fn);
        return false;
    }
    if (!t) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "%s: %s is NULL", fn, what);
        return false;
    }
    return tg__check_concrete(fn, t);
}

tg_tensor *tg_variable(tg_graph *g, const char *name, tg_tensor *init)
{
    if (!check_source(g, "tg_variable", init, "init"))
        return NULL;
    tg_tensor *copy = tg__alloc(init->dtype, init->ndim, init->shape);
    if (!copy)
        return NULL;
    tg__convert_into(copy, init);
    tg_meta m;
    tg_meta_of(copy, &m);
    int v = add_source(g, TG_GNODE_VARIABLE, name, "variable", copy, &m);
    return v < 0 ? NULL : tg__publish(tg__graph_symbolic(g, v));
}

tg_tensor *tg_variable_ref(tg_graph *g, const char *name, tg_tensor *t)
{
    if (!check_source(g, "tg_variable_ref", t, "tensor"))
        return NULL;
    /* bodies of control flow hold no state: a variable made while one is
     * being built belongs to the outermost graph, and the body captures it */
    while (g->fn && g->fn->parent)
        g = g->fn->parent;
    int old = tg__hmap_get(&g->captured, t);
    if (old >= 0)
        return tg__error_null(TG_ERR_ARG, "tg_variable_ref: graph '%s' already uses this "
                              "tensor as node '%s'; make it a variable before using it",
                              g->name, g->nodes[g->values[old].node].name);
    tg_meta m;
    tg_meta_of(t, &m);
    int v = add_source(g, TG_GNODE_VARIABLE, name, "variable", tg_retain(t), &m);
    if (v < 0 || !tg__graph_map_capture(g, t, v))
        return NULL;
    return tg__publish(tg__graph_symbolic(g, v));
}

tg_tensor *tg_constant(tg_graph *g, const char *name, tg_tensor *value)
{
    if (!check_source(g, "tg_constant", value, "value"))
        return NULL;
    tg_meta m;
    tg_meta_of(value, &m);
    int v = add_source(g, TG_GNODE_CONSTANT, name, "const", tg_retain(value), &m);
    if (v >= 0 && tg__hmap_get(&g->captured, value) < 0 &&
        !tg__graph_map_capture(g, value, v))
        return NULL;
    return v < 0 ? NULL : tg__publish(tg__graph_symbolic(g, v));
}

/* the variable node behind t, or -1 with an error naming fn */
static int variable_node(const tg_tensor *t, const char *fn)
{
    if (!t || !t->graph) {
        if (!t && tg__error_is_set())
            return -1;
        tg__error(TG_ERR_ARG, "%s: expected the symbolic value of a variable "
                  "(tg_variable), got %s", fn, t ? "a concrete tensor" : "NULL");
        return -1;
    }
    const tg_graph *g = t->graph;
    int id = g->values[t->value].node;
    if (g->nodes[id].kind != TG_GNODE_VARIABLE) {
        tg__error(TG_ERR_ARG, "%s: '%s' is not a variable but a %s node", fn,
                  g->nodes[id].name, tg__gnode_op_name(&g->nodes[id]));
        return -1;
    }
    return id;
}

tg_tensor *tg_variable_value(tg_tensor *var)
{
    int id = variable_node(var, "tg_variable_value");
    if (id < 0)
        return NULL;
    tg_tensor *t = var->graph->nodes[id].tensor;
    return tg__publish(tg__alias(t, t->ndim, t->shape, t->strides, t->offset));
}

/* ---- control dependencies ------------------------------------------------------------ */
/* is `target` an ancestor of node `from` (through inputs and control edges)? */
static bool reaches(const tg_graph *g, int from, int target)
{
    bool *seen = calloc((size_t)g->n_nodes, 1);
    int *work = malloc((size_t)g->n_nodes * sizeof *work);
    bool found = false;
    int n = 0;
    if (!seen || !work) {
        free(seen);
        free(work);
        return true; /* out of memory: refuse the edge */
    }
    work[n++] = from;
    seen[from] = true;
    while (n > 0 && !found) {
        const tg_gnode *x = &g->nodes[work[--n]];
        for (int i = 0; i < tg__gnode_n_preds(x); i++) {
            int p = tg__gnode_pred(g, x, i);
            if (p == target)
                found = true;
            if (!seen[p]) {
                seen[p] = true;
                work[n++] = p;
            }
        }
    }
    free(seen);
    free(work);
    return found;
}

tg_status tg_graph_add_control_dep(tg_tensor *t, tg_tensor *dep)
{
    if (!t || !dep || !t->graph || !dep->graph)
        return tg__error(TG_ERR_ARG, "tg_graph_add_control_dep: expected two "
                         "symbolic tensors");
    tg_graph *g = t->graph;
    if (dep->graph != g)
        return tg__error(TG_ERR_ARG, "tg_graph_add_control_dep: '%s' and '%s' are "
                         "in different graphs", tg_graph_node_name(t),
                         tg_graph_node_name(dep));
    int node = g->values[t->value].node, d = g->values[dep->value].node;
    /* while every edge runs from a smaller id to a larger one, a node
     * cannot be an ancestor of an earlier one: no search needed */
    bool may_cycle = node == d || g->back_edges || d > node;
    if (may_cycle && (node == d || reaches(g, d, node)))
        return tg__error(TG_ERR_ARG, "tg_graph_add_control_dep: '%s' after '%s' "
                         "would make a cycle", g->nodes[node].name, g->nodes[d].name);
    tg_status s = tg__graph_add_ctrl(g, node, d, false);
    if (s == TG_OK && node < g->n_nodes - 1)
        g->epoch++; /* an existing node changed: cached plans are stale */
    return s;
}

/* Orders an assign after every node that reads the variable, directly or
 * through views (which alias its storage), so that every executor, serial
 * or parallel, gives the reads the old value. Ordering-only edges: running
 * the assign alone does not run the readers. The readers come from the
 * variable's list (one entry per reading node), so this costs the edges
 * it adds. */
static tg_status order_after_readers(tg_graph *g, int var, int assign)
{
    int from = g->nodes[assign].n_order;
    for (int r = g->nodes[var].readers; r; r = tg__graph_next_use(g, r)) {
        int id = tg__graph_use_node(g, r);
        if (id < assign && tg__graph_push_edge(g, assign, id, true) != TG_OK)
            return tg__error(TG_ERR_NOMEM, "tg_assign: out of memory");
    }
    creation_order(g, assign, from);
    return TG_OK;
}

tg_status tg__graph_order_assign(tg_tensor *var, tg_tensor *assign_out)
{
    tg_graph *g = var->graph;
    return order_after_readers(g, g->values[var->value].node,
                               g->values[assign_out->value].node);
}
