/* Function graphs: the bodies of control flow (cond branches, loop bodies),
 * as TF2's FuncGraph. A body is traced from a callback into a graph of its
 * own whose placeholders are the body's parameters; a value of an
 * enclosing graph the callback uses (a closure) becomes one more
 * placeholder plus a recorded capture, which the control node takes as an
 * explicit input. Bodies are replayed with the op functions (gradients and
 * forward mode build on that) and run on concrete tensors through a
 * session cached on the body (planned once). */
#include "graph/graph_impl.h"
#include "tg/autograd.h"
#include "runtime/runtime_impl.h"
#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tg__graph_encloses(const tg_graph *a, const tg_graph *b)
{
    for (const tg_graph *p = b->fn ? b->fn->parent : NULL; p;
         p = p->fn ? p->fn->parent : NULL)
        if (p == a)
            return true;
    return false;
}

static bool add_input(tg_graph *g, int v)
{
    tg_fgraph *f = g->fn;
    if (!TG_GROW(f->inputs, f->cap_inputs, f->n_params + f->n_caps + 1)) {
        tg__error(TG_ERR_NOMEM, "graph '%s': out of memory", g->name);
        return false;
    }
    f->inputs[f->n_params + f->n_caps] = v;
    return true;
}

/* a placeholder of body g standing for value x of an enclosing graph */
static int capture(tg_graph *g, tg_tensor *x)
{
    tg_fgraph *f = g->fn;
    tg_tensor *outer = NULL;
    if (x->graph == f->parent) {
        outer = tg_retain(x);
    } else { /* captured by the parent first (nested bodies) */
        int pv = capture(f->parent, x);
        if (pv < 0 || !(outer = tg__graph_symbolic(f->parent, pv)))
            return -1;
    }
    for (int k = 0; k < f->n_caps; k++)
        if (f->outer[k]->value == outer->value) {
            tg_release(outer);
            return f->inputs[f->n_params + k];
        }
    char name[48];
    snprintf(name, sizeof name, "capture_%d", f->n_caps);
    tg_tensor *ph = tg_placeholder(g, name, outer->dtype, outer->ndim, outer->shape);
    int cap = f->n_caps + 1;
    tg_tensor **grown = ph ? realloc(f->outer, (size_t)cap * sizeof *grown) : NULL;
    if (!grown || !add_input(g, ph->value)) {
        if (ph && !grown)
            tg__error(TG_ERR_NOMEM, "graph '%s': out of memory", g->name);
        if (grown)
            f->outer = grown;
        tg_release(outer);
        return -1;
    }
    f->outer = grown;
    f->outer[f->n_caps++] = outer;
    return ph->value; /* ph stays in the open scope of the trace */
}

/* Concrete t used in body g: the value an enclosing graph already made of
 * it (a variable of tg_variable_ref, a constant), or, when t requires grad,
 * a constant of the outermost graph; captured down to g, so that gradients
 * with respect to it flow through the control node. -1 without an error:
 * none (t becomes a constant of g); -2: failure. */
static int outer_value(tg_graph *g, tg_tensor *t)
{
    tg_graph *root = g;
    for (tg_graph *p = g->fn ? g->fn->parent : NULL; p; p = p->fn ? p->fn->parent : NULL) {
        root = p;
        int v = tg__hmap_get(&p->captured, t);
        if (v < 0)
            continue;
        tg_tensor *x = tg__graph_symbolic(p, v);
        int r = x ? capture(g, x) : -2;
        tg_release(x);
        return r < 0 ? -2 : r;
    }
    if (!t->requires_grad || root == g)
        return -1;
    int v = tg__graph_capture(root, t);
    tg_tensor *x = v < 0 ? NULL : tg__graph_symbolic(root, v);
    int r = x ? capture(g, x) : -2;
    tg_release(x);
    return r < 0 ? -2 : r;
}

int tg__graph_input_value(tg_graph *g, tg_tensor *t)
{
    if (t->graph == g)
        return t->value;
    if (t->graph) {
        if (g->fn && g->fn->parent && tg__graph_encloses(t->graph, g))
            return capture(g, t);
        tg__error(TG_ERR_ARG, "value '%s' belongs to graph '%s', not to '%s'",
                  tg_graph_node_name(t), t->graph->name, g->name);
        return -1;
    }
    int v = g->fn && g->fn->parent ? outer_value(g, t) : -1;
    if (v == -2)
        return -1;
    return v >= 0 ? v : tg__graph_capture(g, t);
}

/* bodies are pure functions of their inputs: state updates, random draws
 * and variables inside them are refused, naming the node */
static tg_status check_pure(const tg_graph *g, const char *what)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const tg_gnode *n = &g->nodes[i];
        if (n->kind == TG_GNODE_VARIABLE ||
            (n->kind == TG_GNODE_OP && !(n->op->flags & TG_OP_PURE)))
            return tg__error(TG_ERR_UNSUPPORTED, "%s: node '%s' (%s) %s; a body of "
                             "control flow must be a pure function of its inputs",
                             what, n->name, tg__gnode_op_name(n),
                             n->kind == TG_GNODE_VARIABLE ? "is a variable"
                             : n->op->flags & TG_OP_RANDOM ? "draws random numbers"
                                                          : "updates state");
    }
    return TG_OK;
}

static tg_status add_params(tg_graph *b, int n, const tg_meta *m)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "in_%d", i);
        tg_tensor *p = tg_placeholder(b, name, m[i].dtype, m[i].ndim, m[i].shape);
        if (!p || !add_input(b, p->value))
            return tg_last_status();
        b->fn->n_params++;
    }
    return TG_OK;
}

/* n_results < 0: fn decides (the non-NULL prefix of what it writes) */
static tg_status run_body(tg_graph *b, const char *what, tg_trace_fn fn, void *user,
                          int *n_results, tg_tensor **out)
{
    tg_fgraph *f = b->fn;
    tg_tensor *in[TG_MAX_OP_INPUTS];
    /* in the trace's scope: fn may hand an input back as a result, which
     * must live until the results are read */
    for (int i = 0; i < f->n_params; i++)
        in[i] = tg__publish(tg__graph_symbolic(b, f->inputs[i]));
    bool counted = *n_results < 0;
    for (int i = 0; i < (counted ? TG_MAX_OP_OUTPUTS : *n_results); i++)
        out[i] = NULL;
    /* a body serves callers in either grad mode (it may be traced while a
     * kernel runs, under the executor's no_grad): it records with grad mode
     * on, so that only the callback's own no_grad regions stop gradients */
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_status s = tg_graph_begin(b);
    if (s == TG_OK) {
        s = fn(user, in, out);
        tg_graph_end();
    }
    tg_set_grad_enabled(was);
    if (counted)
        for (*n_results = 0; *n_results < TG_MAX_OP_OUTPUTS && out[*n_results];)
            ++*n_results;
    if (s != TG_OK)
        return tg__error_is_set() ? tg_last_status()
                                  : tg__error(s, "%s failed (status %d)", what, (int)s);
    if (s == TG_OK && *n_results == 0)
        return tg__error(TG_ERR_ARG, "%s gave no results", what);
    for (int i = 0; i < *n_results; i++)
        if (!out[i])
            return tg__error_is_set() ? tg_last_status()
                                      : tg__error(TG_ERR_ARG, "%s left result %d NULL",
                                                  what, i);
    return TG_OK;
}

tg_graph *tg__fgraph_trace(tg_graph *parent, const char *name, const char *what,
                           tg_trace_fn fn, void *user, int n_params,
                           const tg_meta *params, int n_results)
{
    if (n_params > TG_MAX_OP_INPUTS || n_results > TG_MAX_OP_OUTPUTS)
        return tg__error_null(TG_ERR_ARG, "%s: %d inputs and %d results, at most %d and "
                              "%d are supported", what, n_params, n_results,
                              TG_MAX_OP_INPUTS, TG_MAX_OP_OUTPUTS);
    tg_graph *b = tg_graph_new(name);
    tg_fgraph *f = b ? calloc(1, sizeof *f) : NULL;
    int *results = f ? malloc((size_t)TG_MAX_OP_OUTPUTS * sizeof *results) : NULL;
    if (!results) {
        free(f);
        tg_graph_free(b);
        return tg__error_null(TG_ERR_NOMEM, "%s: out of memory", what);
    }
    b->fn = f;
    f->parent = parent;
    f->results = results;
    tg_scope_begin(); /* the body's intermediates and placeholders */
    tg_tensor *out[TG_MAX_OP_OUTPUTS];
    tg_status s = add_params(b, n_params, params);
    if (s == TG_OK)
        s = run_body(b, what, fn, user, &n_results, out);
    for (int i = 0; i < n_results && s == TG_OK; i++) {
        int v = tg__graph_input_value(b, out[i]);
        if (v < 0)
            s = tg_last_status();
        f->results[i] = v;
    }
    f->n_results = n_results < 0 ? 0 : n_results;
    if (s == TG_OK)
        s = check_pure(b, what);
    tg_scope_end();
    if (s != TG_OK) {
        char msg[900];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        tg_status st = tg_last_status() != TG_OK ? tg_last_status() : s;
        tg_graph_free(b);
        if (strncmp(msg, what, strlen(what)) == 0)
            return tg__error_null(st, "%s", msg);
        return tg__error_null(st, "%s: %s", what, msg);
    }
    return b;
}

void tg__fgraph_seal(tg_graph *b)
{
    tg_fgraph *f = b->fn;
    for (int k = 0; k < f->n_caps; k++)
        tg_release(f->outer[k]);
    free(f->outer);
    f->outer = NULL;
    f->parent = NULL;
}

void tg__fgraph_free(tg_graph *g)
{
    tg_fgraph *f = g->fn;
    if (!f)
        return;
    g->fn = NULL;
    for (int k = 0; f->outer && k < f->n_caps; k++)
        tg_release(f->outer[k]);
    free(f->outer);
    free(f->inputs);
    free(f->results);
    for (int k = 0; k < f->n_grads; k++)
        tg_graph_free(f->grads[k]);
    free(f->grads);
    free(f->grad_keys);
    free(f); /* the session went before (drop_session) */
}

void tg__fgraph_drop_session(tg_graph *g)
{
    tg_session *s = g->fn->session;
    g->fn->session = NULL;
    g->fn->internal_refs = 0;
    g->refcount++; /* ours: the session's releases do not reach zero */
    tg_session_free(s);
    tg__graph_release(g);
}

tg_graph *tg__attrs_graph(const tg_attr *a, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (a[i].type == TG_ATTR_GRAPH && strcmp(a[i].name, name) == 0)
            return a[i].u.g;
    return NULL;
}

/* ---- replaying a body with the op functions -------------------------------------- */
tg_status tg__fgraph_call(const tg_graph *b, tg_tensor *const *in, tg_tensor **out)
{
    const tg_fgraph *f = b->fn;
    tg_tensor **val = calloc((size_t)b->n_values + 1, sizeof *val);
    if (!val)
        return tg__error(TG_ERR_NOMEM, "body '%s': out of memory", b->name);
    for (int i = 0; i < f->n_params + f->n_caps; i++)
        if (!val[f->inputs[i]])
            val[f->inputs[i]] = tg_retain(in[i]);
    tg_status s = TG_OK;
    for (int id = 0; id < b->n_nodes && s == TG_OK; id++)
        s = tg__graph_replay_node((tg_graph *)b, id, val);
    for (int r = 0; r < f->n_results; r++)
        out[r] = s == TG_OK ? tg__publish(tg_retain(val[f->results[r]])) : NULL;
    for (int v = 0; v < b->n_values; v++)
        tg_release(val[v]);
    free(val);
    return s;
}

/* ---- running a body on concrete tensors ----------------------------------------- */
static bool is_input(const tg_fgraph *f, int v, int *at)
{
    for (int i = 0; i < f->n_params + f->n_caps; i++)
        if (f->inputs[i] == v) {
            *at = i;
            return true;
        }
    return false;
}

tg_status tg__fgraph_run(tg_graph *b, tg_tensor *const *in, tg_tensor **out)
{
    tg_fgraph *f = b->fn;
    int fetch[TG_MAX_OP_OUTPUTS], where[TG_MAX_OP_OUTPUTS], n_fetch = 0, at;
    for (int r = 0; r < f->n_results; r++) {
        out[r] = NULL;
        if (is_input(f, f->results[r], &at)) {
            where[r] = -1 - at; /* a result that is an input: handed through */
        } else {
            where[r] = n_fetch;
            fetch[n_fetch++] = f->results[r];
        }
    }
    tg_tensor *res[TG_MAX_OP_OUTPUTS];
    tg_status s = TG_OK;
    int floor = tg__scope_suspend();
    int before = b->refcount;
    if (n_fetch > 0 && !f->session && !(f->session = tg_session_new(b)))
        s = tg_last_status();
    int64_t t0 = tg__now_ns();
    if (s == TG_OK && n_fetch > 0)
        s = tg__session_run_ids(f->session, f->n_params + f->n_caps, f->inputs, in,
                                n_fetch, fetch, res);
    tg__trace_body_span(b->name, t0, tg__now_ns());
    f->internal_refs += b->refcount - before;
    tg__scope_resume(floor);
    if (s != TG_OK)
        return s;
    for (int r = 0; r < f->n_results; r++)
        out[r] = where[r] >= 0 ? res[where[r]] : tg_retain(in[-1 - where[r]]);
    return TG_OK;
}
