/* The reverse-mode engine: from the roots, find the reachable nodes, run
 * their gradient rules in dependency order (Kahn), sum gradients that meet,
 * and deliver them into leaves' grad (backward) or to the caller (grad).
 * The rules are written with public ops, so with create_graph the
 * backward pass itself is recorded and can be differentiated again. */
#include "autodiff/node.h"

#include <stdlib.h>
#include <string.h>

typedef struct run {
    tg_node **nodes; /* reachable nodes */
    int n_nodes, cap_nodes;
    bool retain, create_graph;
    /* functional mode: inputs to capture, or NULL to accumulate in leaves */
    int n_inputs;
    tg_tensor *const *inputs;
    tg_tensor **results;
} run;

static _Thread_local int visit_epoch;

static tg_status push_node(run *r, tg_node *n)
{
    if (r->n_nodes == r->cap_nodes) {
        int cap = r->cap_nodes ? r->cap_nodes * 2 : 64;
        tg_node **p = realloc(r->nodes, (size_t)cap * sizeof *p);
        if (!p)
            return tg__error(TG_ERR_NOMEM, "backward: out of memory");
        r->nodes = p;
        r->cap_nodes = cap;
    }
    r->nodes[r->n_nodes++] = n;
    return TG_OK;
}

static tg_status released_error(const tg_node *n)
{
    return tg__error(TG_ERR_AUTOGRAD,
                     "backward: trying to backward through the graph a second "
                     "time (node '%s'): its saved tensors were freed by the "
                     "first backward. Pass retain_graph=true to the first "
                     "backward if you need to backward twice.",
                     n->name);
}

/* collects every node reachable from the roots and counts, per node, the
 * edges that point at it from other reachable nodes */
static tg_status collect(run *r, int n_roots, tg_tensor *const *roots)
{
    int epoch = ++visit_epoch;
    tg_status s = TG_OK;
    for (int i = 0; i < n_roots && s == TG_OK; i++) {
        tg_node *n = roots[i]->grad_fn;
        if (n && n->visit != epoch) {
            n->visit = epoch;
            n->deps = 0;
            s = push_node(r, n);
        }
    }
    for (int k = 0; k < r->n_nodes && s == TG_OK; k++) {
        tg_node *n = r->nodes[k];
        if (n->released)
            return released_error(n);
        for (int i = 0; i < n->n_in && s == TG_OK; i++) {
            tg_node *m = n->edges[i].node;
            if (!m)
                continue;
            if (m->visit != epoch) {
                m->visit = epoch;
                m->deps = 0;
                s = push_node(r, m);
            }
            m->deps++;
        }
    }
    return s;
}

/* a + b for gradient sums: differentiable only when building a graph */
static tg_tensor *sum_grads(tg_tensor *a, tg_tensor *b)
{
    tg_tensor *s = tg_add(a, b); /* no scope is open here: we own it */
    tg_release(a);
    tg_release(b);
    return s;
}

static tg_status add_pending(tg_node *n, int index, tg_tensor *g)
{
    if (!n->pending) {
        n->pending = calloc((size_t)n->n_out, sizeof *n->pending);
        if (!n->pending) {
            tg_release(g);
            return tg__error(TG_ERR_NOMEM, "backward: out of memory");
        }
    }
    if (!n->pending[index]) {
        n->pending[index] = g;
        return TG_OK;
    }
    n->pending[index] = sum_grads(n->pending[index], g);
    return n->pending[index] ? TG_OK : tg_last_status();
}

static tg_status accumulate_leaf(run *r, tg_tensor *leaf, tg_tensor *g)
{
    if (r->inputs) { /* functional mode: capture, never touch leaf->grad */
        for (int i = 0; i < r->n_inputs; i++) {
            if (r->inputs[i] != leaf)
                continue;
            tg_tensor *old = r->results[i];
            r->results[i] = old ? sum_grads(old, tg_retain(g)) : tg_retain(g);
            if (!r->results[i]) {
                tg_release(g);
                return tg_last_status();
            }
        }
        tg_release(g);
        return TG_OK;
    }
    if (!leaf->grad) {
        /* own a private copy unless building a graph, so that in-place
         * accumulation later never writes into a tensor shared elsewhere */
        leaf->grad = r->create_graph ? g : tg_clone(g);
        if (!r->create_graph)
            tg_release(g);
        return leaf->grad ? TG_OK : tg_last_status();
    }
    if (!r->create_graph && !leaf->grad->requires_grad) {
        tg_status s = tg_add_(leaf->grad, g, 1.0);
        tg_release(g);
        return s;
    }
    leaf->grad = sum_grads(leaf->grad, g);
    return leaf->grad ? TG_OK : tg_last_status();
}

/* gradients asked for non-leaf inputs are the sums that reached them */
static tg_status capture_nonleaf(run *r, tg_node *n)
{
    for (int i = 0; r->inputs && i < r->n_inputs; i++) {
        tg_tensor *x = r->inputs[i];
        if (x->grad_fn == n && n->pending && n->pending[x->out_index]) {
            tg_release(r->results[i]);
            r->results[i] = tg_retain(n->pending[x->out_index]);
        }
    }
    return TG_OK;
}

static tg_status route(run *r, tg_node *n, int i, tg_tensor *g, tg_node **ready,
                       int *n_ready)
{
    tg_edge *e = &n->edges[i];
    tg_status s = TG_OK;
    if (g && e->leaf)
        s = accumulate_leaf(r, e->leaf, g);
    else if (g && e->node)
        s = add_pending(e->node, e->index, g);
    else
        tg_release(g);
    if (e->node && --e->node->deps == 0)
        ready[(*n_ready)++] = e->node;
    return s;
}

/* casts and checks a rule's result against the input it is for */
static tg_tensor *conform(tg_node *n, int i, tg_tensor *g)
{
    const tg_meta *m = &n->in_meta[i];
    if (!tg__shape_eq(g->ndim, g->shape, m->ndim, m->shape)) {
        char a[160], b[160];
        tg_shape_str(g->ndim, g->shape, a, sizeof a); /* before g goes */
        tg_release(g);
        /* a built-in rule is our bug; a custom backward is the user's */
        if (n->fn)
            return tg__error_null(TG_ERR_AUTOGRAD,
                                  "backward: custom function '%s' returned a "
                                  "gradient of shape %s for input %d of shape %s",
                                  n->name, a, i,
                                  tg_shape_str(m->ndim, m->shape, b, sizeof b));
        return tg__error_null(TG_ERR_INTERNAL,
                              "backward: gradient rule of '%s' gave shape %s "
                              "for input %d of shape %s",
                              n->name, a, i,
                              tg_shape_str(m->ndim, m->shape, b, sizeof b));
    }
    if (g->dtype == m->dtype)
        return g;
    tg_tensor *c = tg_cast(g, m->dtype);
    tg_release(g);
    return c;
}

/* a saved tensor modified in place fails the backward before any node
 * runs, so that the failure consumes nothing of the graph */
static tg_status check_all_saved(const run *r)
{
    for (int k = 0; k < r->n_nodes; k++) {
        tg_status s = tg__check_saved(r->nodes[k]);
        if (s != TG_OK)
            return s;
    }
    return TG_OK;
}

static tg_status run_node(run *r, tg_node *n, tg_node **ready, int *n_ready)
{
    tg_tensor *dy[TG_MAX_OP_OUTPUTS] = {0};
    tg_tensor *dx_stack[16];
    tg_tensor **dx = n->n_in <= 16 ? dx_stack : calloc((size_t)n->n_in, sizeof *dx);
    if (!dx)
        return tg__error(TG_ERR_NOMEM, "backward: out of memory");
    capture_nonleaf(r, n);
    for (int o = 0; o < n->n_out; o++)
        dy[o] = n->pending ? n->pending[o] : NULL;
    tg_status s = tg__run_rule(n, dy, dx, r->create_graph);
    for (int i = 0; i < n->n_in; i++) {
        tg_tensor *g = (s == TG_OK && dx[i]) ? conform(n, i, dx[i]) : NULL;
        if (s == TG_OK && dx[i] && !g)
            s = tg_last_status();
        else if (s != TG_OK)
            tg_release(dx[i]);
        tg_status s2 = route(r, n, i, s == TG_OK ? g : NULL, ready, n_ready);
        if (s == TG_OK)
            s = s2;
    }
    if (dx != dx_stack)
        free(dx);
    return s;
}

static void clear_pending(tg_node *n)
{
    if (!n->pending)
        return;
    for (int o = 0; o < n->n_out; o++)
        tg_release(n->pending[o]);
    free(n->pending);
    n->pending = NULL;
}

static tg_status execute(run *r)
{
    tg_node **ready = malloc((size_t)(r->n_nodes + 1) * sizeof *ready);
    if (!ready)
        return tg__error(TG_ERR_NOMEM, "backward: out of memory");
    int n_ready = 0, done = 0;
    for (int k = 0; k < r->n_nodes; k++)
        if (r->nodes[k]->deps == 0)
            ready[n_ready++] = r->nodes[k];
    tg_status s = TG_OK;
    while (n_ready > 0 && s == TG_OK) {
        tg_node *n = ready[--n_ready];
        s = run_node(r, n, ready, &n_ready);
        clear_pending(n);
        if (!r->retain)
            tg__node_free_saved(n), n->released = true;
        done++;
    }
    free(ready);
    if (s == TG_OK && done != r->n_nodes)
        s = tg__error(TG_ERR_INTERNAL, "backward: %d of %d nodes ran", done,
                      r->n_nodes);
    return s;
}

static tg_status check_root(const char *fn, tg_tensor *root, tg_tensor *seed)
{
    if (!root)
        return tg__error_is_set() ? tg_last_status()
                                  : tg__error(TG_ERR_ARG, "%s: tensor is NULL", fn);
    if (!root->requires_grad)
        return tg__error(TG_ERR_AUTOGRAD,
                         "%s: the tensor does not require grad and has no "
                         "grad_fn (did you call tg_set_requires_grad on a leaf, "
                         "outside no_grad?)",
                         fn);
    if (!seed && root->numel != 1) {
        char b[160];
        return tg__error(TG_ERR_AUTOGRAD,
                         "%s: grad can be implicitly created only for a "
                         "one-element output, this one has shape %s: pass a "
                         "gradient of the same shape",
                         fn, tg_shape_str(root->ndim, root->shape, b, sizeof b));
    }
    if (seed && !tg__shape_eq(seed->ndim, seed->shape, root->ndim, root->shape)) {
        char a[160], b[160];
        return tg__error(TG_ERR_SHAPE,
                         "%s: gradient has shape %s, the output has shape %s", fn,
                         tg_shape_str(seed->ndim, seed->shape, a, sizeof a),
                         tg_shape_str(root->ndim, root->shape, b, sizeof b));
    }
    return TG_OK;
}

static tg_status seed_roots(run *r, int n, tg_tensor *const *roots,
                            tg_tensor *const *seeds)
{
    for (int i = 0; i < n; i++) {
        tg_tensor *g = seeds && seeds[i] ? tg_retain(seeds[i])
                                         : tg_ones_like(roots[i]);
        if (!g)
            return tg_last_status();
        if (g->dtype != roots[i]->dtype) {
            tg_tensor *c = tg_cast(g, roots[i]->dtype);
            tg_release(g);
            if (!(g = c))
                return tg_last_status();
        }
        tg_status s = roots[i]->grad_fn
                          ? add_pending(roots[i]->grad_fn, roots[i]->out_index, g)
                          : accumulate_leaf(r, roots[i], g);
        if (s != TG_OK)
            return s;
    }
    return TG_OK;
}

static tg_status backward_run(run *r, int n_roots, tg_tensor *const *roots,
                              tg_tensor *const *seeds)
{
    /* the engine owns every reference it makes: hide the caller's scopes */
    int floor = tg__scope_suspend();
    bool was_enabled = tg_grad_enabled();
    tg_set_grad_enabled(r->create_graph);
    tg_status s = collect(r, n_roots, roots);
    if (s == TG_OK)
        s = check_all_saved(r);
    if (s == TG_OK)
        s = seed_roots(r, n_roots, roots, seeds);
    if (s == TG_OK)
        s = execute(r);
    for (int k = 0; k < r->n_nodes; k++)
        clear_pending(r->nodes[k]);
    free(r->nodes);
    tg_set_grad_enabled(was_enabled);
    tg__scope_resume(floor);
    return s;
}

tg_status tg_backward(tg_tensor *root, tg_tensor *grad_output, bool retain_graph)
{
    tg_status s = check_root("tg_backward", root, grad_output);
    if (s != TG_OK)
        return s;
    run r = {0};
    r.retain = retain_graph;
    return backward_run(&r, 1, &root, &grad_output);
}

tg_status tg_autograd_grad(int n_outputs, tg_tensor *const *outputs,
                           tg_tensor *const *grad_outputs, int n_inputs,
                           tg_tensor *const *inputs, tg_tensor **results,
                           bool retain_graph, bool create_graph)
{
    if (n_outputs < 1 || n_inputs < 1 || !outputs || !inputs || !results)
        return tg__error(TG_ERR_ARG, "tg_autograd_grad: need at least one "
                                     "output and one input, and a results array");
    for (int i = 0; i < n_inputs; i++)
        results[i] = NULL;
    for (int i = 0; i < n_outputs; i++) {
        tg_status s = check_root("tg_autograd_grad", outputs[i],
                                 grad_outputs ? grad_outputs[i] : NULL);
        if (s != TG_OK)
            return s;
    }
    for (int i = 0; i < n_inputs; i++)
        if (!inputs[i] || !inputs[i]->requires_grad)
            return tg__error(TG_ERR_AUTOGRAD,
                             "tg_autograd_grad: input %d does not require grad", i);
    run r = {0};
    r.retain = retain_graph || create_graph;
    r.create_graph = create_graph;
    r.n_inputs = n_inputs;
    r.inputs = inputs;
    r.results = results;
    tg_status s = backward_run(&r, n_outputs, outputs, grad_outputs);
    if (s != TG_OK)
        for (int i = 0; i < n_inputs; i++) {
            tg_release(results[i]);
            results[i] = NULL;
        }
    return s;
}
