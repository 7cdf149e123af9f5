/* The reverse-mode engine: from the roots, find the reachable nodes, run
 * their gradient rules in dependency order (Kahn), sum gradients that meet,
 * and deliver them into leaves' grad (backward) or to the caller (grad).
 * The rules are written with public ops, so with create_graph the
 * backward pass itself is recorded and can be differentiated again.
 * All the bookkeeping of one run lives in the run, never in the nodes, so
 * runs nest: a custom backward may differentiate a graph of its own (as
 * activation checkpointing does), even one sharing nodes with this one. */
#include "autodiff/node.h"
#include "autodiff/view_history.h"
#include "autodiff/vjp.h"
#include "util/grow.h"
#include "util/hmap.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* one reachable node during one run */
typedef struct slot {
    tg_node *node;
    int deps;            /* reachable nodes whose gradients for it are due */
    bool needed;         /* its rule must run */
    tg_tensor **pending; /* n_out gradients summed so far, or NULL */
} slot;

typedef struct run {
    slot *slots; /* reachable nodes, roots first */
    int n_slots, cap_slots;
    tg_hmap index; /* node -> slot index */
    bool retain, create_graph;
    /* functional mode: inputs to capture, or NULL to accumulate in leaves */
    int n_inputs;
    tg_tensor *const *inputs;
    tg_tensor **results;
    /* backward hooks (tg_set_backward_hooks), in accumulating mode only:
     * edges still due per leaf, so a leaf's gradient is known final */
    const tg_backward_hooks *hooks;
    tg_hmap leaf_edges;
} run;

/* the hooks of this thread (data-parallel training sets them) */
static _Thread_local tg_backward_hooks thread_hooks;
static _Thread_local bool thread_hooked;

void tg_set_backward_hooks(const tg_backward_hooks *hooks)
{
    thread_hooked = hooks && (hooks->grad_ready || hooks->done);
    thread_hooks = thread_hooked ? *hooks : (tg_backward_hooks){0};
}

static tg_status nomem(void)
{
    return tg__error(TG_ERR_NOMEM, "backward: out of memory");
}

/* ---- node -> slot ---------------------------------------------------------- */
static int find_slot(const run *r, const tg_node *n)
{
    return tg__hmap_get(&r->index, n);
}

static tg_status grow(run *r)
{
    if (!tg__hmap_reserve(&r->index, (size_t)r->n_slots + 1))
        return nomem();
    if (!TG_GROW(r->slots, r->cap_slots, r->n_slots + 1))
        return nomem();
    return TG_OK;
}

/* the slot of n, added when new; -1 (error set) when out of memory */
static int slot_of(run *r, tg_node *n)
{
    int k = find_slot(r, n);
    if (k >= 0)
        return k;
    if (grow(r) != TG_OK)
        return -1;
    k = r->n_slots++;
    r->slots[k] = (slot){.node = n};
    tg__hmap_put(&r->index, n, k); /* reserved by grow: cannot fail */
    return k;
}

/* whether n holds saved tensors that backward frees (custom functions: always,
 * their context may hold any) */
static bool node_saves(const tg_node *n)
{
    if (n->fn_ctx)
        return true;
    for (int i = 0; i < n->n_in; i++)
        if (n->saved_in[i])
            return true;
    for (int o = 0; o < n->n_out; o++)
        if (n->saved_out[o])
            return true;
    return false;
}

/* ---- finding the graph ------------------------------------------------------ */
static tg_status released_error(const tg_node *n)
{
    return tg__error(TG_ERR_AUTOGRAD,
                     "backward: trying to backward through the graph a second "
                     "time (node '%s'): its saved tensors were freed by the "
                     "first backward. Pass retain_graph=true to the first "
                     "backward if you need to backward twice.",
                     n->name);
}

/* for the grad_ready hook: how many edges of reachable nodes lead to
 * each leaf (its gradient is final when the last one has delivered) */
static tg_status count_leaf_edges(run *r)
{
    for (int k = 0; k < r->n_slots; k++) {
        const tg_node *n = r->slots[k].node;
        for (int i = 0; i < n->n_in; i++) {
            const tg_tensor *leaf = n->edges[i].leaf;
            if (!leaf)
                continue;
            int c = tg__hmap_get(&r->leaf_edges, leaf);
            if (!tg__hmap_put(&r->leaf_edges, leaf, c < 0 ? 1 : c + 1))
                return nomem();
        }
    }
    return TG_OK;
}

/* one more edge into leaf has delivered: the hook hears of the leaf when
 * it was the last */
static tg_status leaf_delivered(run *r, tg_tensor *leaf)
{
    if (!r->hooks || !r->hooks->grad_ready)
        return TG_OK;
    int c = tg__hmap_get(&r->leaf_edges, leaf);
    if (c < 0)
        return TG_OK;
    if (c > 1) {
        tg__hmap_put(&r->leaf_edges, leaf, c - 1); /* present: cannot fail */
        return TG_OK;
    }
    tg__hmap_del(&r->leaf_edges, leaf);
    return r->hooks->grad_ready(r->hooks->user, leaf);
}

/* collects every node reachable from the roots and counts, per node, the
 * edges that point at it from other reachable nodes */
static tg_status collect(run *r, int n_roots, tg_tensor *const *roots)
{
    for (int i = 0; i < n_roots; i++)
        if (roots[i]->grad_fn && slot_of(r, roots[i]->grad_fn) < 0)
            return tg_last_status();
    for (int k = 0; k < r->n_slots; k++) {
        const tg_node *n = r->slots[k].node; /* slots may move; nodes do not */
        for (int i = 0; i < n->n_in; i++) {
            if (!n->edges[i].node)
                continue;
            int j = slot_of(r, n->edges[i].node);
            if (j < 0)
                return tg_last_status();
            r->slots[j].deps++;
        }
    }
    return r->hooks ? count_leaf_edges(r) : TG_OK;
}

static bool is_input(const run *r, const tg_tensor *t)
{
    for (int i = 0; i < r->n_inputs; i++)
        if (r->inputs[i] == t)
            return true;
    return false;
}

/* does a requested non-leaf input come out of node n? */
static bool feeds_input(const run *r, const tg_node *n)
{
    for (int i = 0; i < r->n_inputs; i++)
        if (r->inputs[i]->grad_fn == n)
            return true;
    return false;
}

/* does the gradient of edge i of n lead to a requested input? (backward
 * mode: every edge leads to a leaf that wants its gradient) */
static bool edge_wanted(const run *r, const tg_node *n, int i)
{
    const tg_edge *e = &n->edges[i];
    if (!r->inputs)
        return e->node || e->leaf;
    if (e->leaf)
        return is_input(r, e->leaf);
    if (!e->node)
        return false;
    return feeds_input(r, e->node) || r->slots[find_slot(r, e->node)].needed;
}

/* which rules must run: in functional mode only those on a path to a
 * requested input (PyTorch prunes the same way). Works through a
 * topological order backwards, so that an edge's target is decided first. */
static tg_status mark_needed(run *r)
{
    int n = r->n_slots;
    if (!r->inputs) {
        for (int k = 0; k < n; k++)
            r->slots[k].needed = true;
        return TG_OK;
    }
    int *order = malloc((size_t)(n + 1) * sizeof *order);
    int *deps = malloc((size_t)(n + 1) * sizeof *deps);
    if (!order || !deps) {
        free(order);
        free(deps);
        return nomem();
    }
    int tail = 0;
    for (int k = 0; k < n; k++)
        if ((deps[k] = r->slots[k].deps) == 0)
            order[tail++] = k;
    for (int head = 0; head < tail; head++) {
        const tg_node *node = r->slots[order[head]].node;
        for (int i = 0; i < node->n_in; i++) {
            if (!node->edges[i].node)
                continue;
            int j = find_slot(r, node->edges[i].node);
            if (--deps[j] == 0)
                order[tail++] = j;
        }
    }
    for (int q = tail - 1; q >= 0; q--) {
        slot *s = &r->slots[order[q]];
        for (int i = 0; i < s->node->n_in && !s->needed; i++)
            s->needed = edge_wanted(r, s->node, i);
    }
    free(order);
    free(deps);
    return TG_OK;
}

/* a saved tensor modified in place (or freed by an earlier backward) fails
 * the run before any rule runs, so that the failure consumes nothing */
static tg_status check_needed(const run *r)
{
    for (int k = 0; k < r->n_slots; k++) {
        const slot *s = &r->slots[k];
        if (!s->needed)
            continue;
        if (s->node->released)
            return released_error(s->node);
        if (s->node->backward_error)
            return tg__error(TG_ERR_AUTOGRAD, "%s", s->node->backward_error);
        tg_status st = tg__check_saved(s->node);
        if (st != TG_OK)
            return st;
    }
    return TG_OK;
}

/* ---- moving gradients -------------------------------------------------------- */
static tg_status add_pending(run *r, int k, int index, tg_tensor *g)
{
    slot *s = &r->slots[k];
    if (!s->pending) {
        s->pending = calloc((size_t)s->node->n_out, sizeof *s->pending);
        if (!s->pending) {
            tg_release(g);
            return nomem();
        }
    }
    if (!s->pending[index]) {
        s->pending[index] = g;
        return TG_OK;
    }
    s->pending[index] = tg__grad_sum(s->pending[index], g);
    return s->pending[index] ? TG_OK : tg_last_status();
}

static tg_status accumulate_leaf(run *r, tg_tensor *leaf, tg_tensor *g)
{
    if (r->inputs) { /* functional mode: capture, never touch leaf->grad */
        for (int i = 0; i < r->n_inputs; i++) {
            if (r->inputs[i] != leaf)
                continue;
            tg_tensor *old = r->results[i];
            r->results[i] = old ? tg__grad_sum(old, tg_retain(g)) : tg_retain(g);
            if (!r->results[i]) {
                tg_release(g);
                return tg_last_status();
            }
        }
        tg_release(g);
        return TG_OK;
    }
    if (!leaf->grad) {
        /* the leaf must own its gradient alone, so that in-place
         * accumulation later never writes into a tensor shared elsewhere:
         * take g when nothing else holds it or its storage, else copy */
        bool sole = g->refcount == 1 &&
                    g->storage->refcount == 1 + (int)g->storage->plan_kept && !g->requires_grad &&
                    tg_is_contiguous(g);
        leaf->grad = sole ? g : tg_clone(g);
        if (!sole)
            tg_release(g);
        return leaf->grad ? TG_OK : tg_last_status();
    }
    if (!leaf->grad->requires_grad) {
        /* accumulation, not a function to record (even with create_graph) */
        tg_no_grad_begin();
        tg_status s = tg_add_(leaf->grad, g, 1.0);
        tg_no_grad_end();
        tg_release(g);
        return s;
    }
    leaf->grad = tg__grad_sum(leaf->grad, g);
    return leaf->grad ? TG_OK : tg_last_status();
}

/* gradients asked for non-leaf inputs are the sums that reached them */
static void capture_nonleaf(run *r, const slot *s)
{
    for (int i = 0; r->inputs && i < r->n_inputs; i++) {
        tg_tensor *x = r->inputs[i];
        if (x->grad_fn == s->node && s->pending && s->pending[x->out_index]) {
            tg_release(r->results[i]);
            r->results[i] = tg_retain(s->pending[x->out_index]);
        }
    }
}

static tg_status route(run *r, const tg_node *n, int i, tg_tensor *g, int *ready,
                       int *n_ready)
{
    const tg_edge *e = &n->edges[i];
    int j = e->node ? find_slot(r, e->node) : -1;
    tg_status s = TG_OK;
    if (g && e->leaf)
        s = accumulate_leaf(r, e->leaf, g);
    else if (g && e->node)
        s = add_pending(r, j, e->index, g);
    else
        tg_release(g);
    if (e->leaf && s == TG_OK)
        s = leaf_delivered(r, e->leaf);
    if (j >= 0 && --r->slots[j].deps == 0)
        ready[(*n_ready)++] = j;
    return s;
}

/* ---- anomaly mode ------------------------------------------------------------------
 * With the check on (per thread, as the engine runs on the caller's
 * thread), every gradient a node's rule gives is tested for NaN, and the
 * first one stops backward with PyTorch's message naming the function
 * (the op in PyTorch's grad_fn spelling: sqrt -> SqrtBackward0). */
static _Thread_local bool anomaly_check;

void tg_set_anomaly_check(bool on) { anomaly_check = on; }
bool tg_anomaly_check(void) { return anomaly_check; }

static bool has_nan(const tg_tensor *g)
{
    int64_t n = tg_numel(g);
    if (!tg_dtype_is_float(tg_dtype_of(g)) || n <= 0)
        return false;
    double *v = malloc(sizeof *v * (size_t)n);
    bool nan = false;
    if (v && tg_copy_to(g, TG_FLOAT64, v) == TG_OK)
        for (int64_t e = 0; e < n && !nan; e++)
            nan = v[e] != v[e];
    free(v);
    return nan;
}

static tg_status nan_error(const tg_node *n, int i)
{
    char name[128];
    tg__node_display_name(n, name, sizeof name);
    return tg__error(TG_ERR_AUTOGRAD, "Function '%s' returned nan values in its %dth output.",
                     name, i);
}

/* runs slot k's rule (when needed) and routes what it gives */
static tg_status run_slot(run *r, int k, int *ready, int *n_ready)
{
    tg_node *n = r->slots[k].node;
    tg_tensor *dy[TG_MAX_OP_OUTPUTS] = {0};
    tg_tensor *dx_stack[16];
    bool needs_stack[16];
    tg_tensor **dx = dx_stack;
    bool *needs = needs_stack;
    if (n->n_in > 16) {
        dx = calloc((size_t)n->n_in, sizeof *dx);
        needs = calloc((size_t)n->n_in, sizeof *needs);
        if (!dx || !needs) {
            free(dx);
            free(needs);
            return nomem();
        }
    }
    capture_nonleaf(r, &r->slots[k]);
    slot *sl = &r->slots[k];
    tg_status s = TG_OK;
    if (sl->needed && n->hooks && !sl->pending &&
        !(sl->pending = calloc((size_t)n->n_out, sizeof *sl->pending)))
        s = nomem(); /* a pre hook may put gradients there */
    if (s == TG_OK && sl->needed && n->hooks) /* pre hooks (tg_grad_node_add_hook) */
        s = tg__node_run_hooks(n, true, NULL, sl->pending);
    if (s == TG_OK && sl->needed) {
        for (int o = 0; o < n->n_out; o++)
            dy[o] = sl->pending ? sl->pending[o] : NULL;
        for (int i = 0; i < n->n_in; i++)
            needs[i] = edge_wanted(r, n, i);
        s = tg__run_rule(n, dy, dx, needs, r->create_graph);
    } else {
        for (int i = 0; i < n->n_in; i++)
            dx[i] = NULL;
    }
    for (int i = 0; i < n->n_in; i++) {
        tg_tensor *g = NULL;
        if (s == TG_OK && dx[i] && needs[i] && sl->needed) {
            /* shape check and cast (vjp.c); a custom backward's mistake
             * is the user's, a built-in rule's is ours */
            if (!(g = tg__grad_conform(n->name, i, &n->in_meta[i], dx[i], n->fn != NULL)))
                s = tg_last_status();
            else if (anomaly_check && has_nan(g)) {
                tg_release(g);
                g = NULL;
                s = nan_error(n, i);
            }
        } else {
            tg_release(dx[i]);
        }
        dx[i] = g;
    }
    if (s == TG_OK && sl->needed && n->hooks) /* post hooks: they may replace dx */
        s = tg__node_run_hooks(n, false, dx, sl->pending);
    for (int i = 0; i < n->n_in; i++) {
        if (s != TG_OK) {
            tg_release(dx[i]);
            dx[i] = NULL;
        }
        tg_status s2 = route(r, n, i, dx[i], ready, n_ready);
        if (s == TG_OK)
            s = s2;
    }
    if (dx != dx_stack) {
        free(dx);
        free(needs);
    }
    return s;
}

static void clear_pending(slot *s)
{
    if (!s->pending)
        return;
    for (int o = 0; o < s->node->n_out; o++)
        tg_release(s->pending[o]);
    free(s->pending);
    s->pending = NULL;
}

static tg_status execute(run *r)
{
    int *ready = malloc((size_t)(r->n_slots + 1) * sizeof *ready);
    if (!ready)
        return nomem();
    int n_ready = 0, done = 0;
    for (int k = 0; k < r->n_slots; k++)
        if (r->slots[k].deps == 0)
            ready[n_ready++] = k;
    tg_status s = TG_OK;
    while (n_ready > 0 && s == TG_OK) {
        int k = ready[--n_ready];
        s = run_slot(r, k, ready, &n_ready);
        clear_pending(&r->slots[k]);
        if (!r->retain && r->slots[k].needed && node_saves(r->slots[k].node)) {
            /* a node that saved nothing (add, sum, a view) keeps working, so
             * a second backward through only such nodes runs, as PyTorch's */
            tg__node_free_saved(r->slots[k].node);
            r->slots[k].node->released = true;
        }
        done++;
    }
    free(ready);
    if (s == TG_OK && done != r->n_slots)
        s = tg__error(TG_ERR_INTERNAL, "backward: %d of %d nodes ran", done,
                      r->n_slots);
    if (s == TG_OK && r->hooks && r->hooks->done)
        s = r->hooks->done(r->hooks->user);
    return s;
}

/* ---- the two entry points ---------------------------------------------------- */
static tg_status check_root(const char *fn, tg_tensor *root, tg_tensor *seed)
{
    if (!root)
        return tg__error_is_set() ? tg_last_status()
                                  : tg__error(TG_ERR_ARG, "%s: tensor is NULL", fn);
    tg_status s = tg__view_refresh(1, &root); /* a view whose base was written since */
    if (s != TG_OK)
        return s;
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
                          ? add_pending(r, find_slot(r, roots[i]->grad_fn),
                                        roots[i]->out_index, g)
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
        s = mark_needed(r);
    if (s == TG_OK)
        s = check_needed(r);
    if (s == TG_OK)
        s = seed_roots(r, n_roots, roots, seeds);
    if (s == TG_OK)
        s = execute(r);
    for (int k = 0; k < r->n_slots; k++)
        clear_pending(&r->slots[k]);
    free(r->slots);
    tg__hmap_free(&r->index);
    tg__hmap_free(&r->leaf_edges);
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
    r.hooks = thread_hooked ? &thread_hooks : NULL;
    s = backward_run(&r, 1, &root, &grad_output);
    if (s == TG_OK)
        tg_clear_error(); /* what rules recovered from is not the caller's */
    return s;
}

tg_status tg_backward_ex(int n_roots, tg_tensor *const *roots,
                         tg_tensor *const *grad_outputs, bool retain_graph,
                         bool create_graph)
{
    if (n_roots < 1 || !roots)
        return tg__error(TG_ERR_ARG, "tg_backward_ex: need at least one root");
    for (int i = 0; i < n_roots; i++) {
        tg_status s = check_root("tg_backward_ex", roots[i],
                                 grad_outputs ? grad_outputs[i] : NULL);
        if (s != TG_OK)
            return s;
    }
    run r = {0};
    r.retain = retain_graph || create_graph;
    r.create_graph = create_graph;
    r.hooks = thread_hooked ? &thread_hooks : NULL;
    tg_status s = backward_run(&r, n_roots, roots, grad_outputs);
    if (s == TG_OK)
        tg_clear_error(); /* what rules recovered from is not the caller's */
    return s;
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
    else
        tg_clear_error(); /* what rules recovered from is not the caller's */
    return s;
}
