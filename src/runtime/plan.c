/* Compiling a plan (TensorFlow's Session::Run pruning): the nodes the
 * fetches and targets need, walking back through data and control edges
 * and stopping at fed values; an execution order (Kahn's algorithm taking
 * the lowest id first, so creation order whenever that is valid, except
 * that serial plans run updates as soon as they can: see order()); the
 * dependency graph among the steps (for the parallel executor); and the
 * memory plan (memplan.c). */
#include "runtime/runtime_impl.h"

#include <stdlib.h>
#include <string.h>

void tg__plan_free(tg_plan *p)
{
    if (!p)
        return;
    free(p->key.feeds);
    free(p->key.fetches);
    free(p->key.targets);
    free(p->key.dims);
    tg__graph_release(p->g);
    free(p->run_feeds);
    free(p->run_fetches);
    free(p->records);
    for (int i = 0; i < p->n_guards; i++)
        tg_release(p->guards[i].t);
    free(p->guards);
    free(p->steps);
    free(p->n_preds);
    free(p->succ_start);
    free(p->succ);
    free(p->fed);
    free(p->fetched);
    tg__memplan_free(&p->mem);
    free(p->snapshot);
    free(p);
}

bool tg__plan_stale(const tg_plan *p)
{
    for (int i = 0; i < p->n_guards; i++)
        if (p->guards[i].t->storage->version != p->guards[i].version)
            return true;
    return false;
}

static int *copy_ints(const int *a, int n)
{
    int *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (c && n > 0)
        memcpy(c, a, (size_t)n * sizeof *a);
    return c;
}

/* ---- pruning ------------------------------------------------------------------- */
typedef struct prune_ctx {
    const tg_graph *g;
    const bool *fed;
    bool *needed; /* per node */
    int *by;      /* per node: the node that needed it first (-1: a root) */
    int *work;
    int n_work;
} prune_ctx;

static tg_status unfed_error(const prune_ctx *p, int id)
{
    const tg_graph *g = p->g;
    int by = p->by[id];
    if (by < 0)
        return tg__error(TG_ERR_ARG, "tg_session_run: placeholder '%s' must be fed "
                         "(it is fetched or a target)", g->nodes[id].name);
    return tg__error(TG_ERR_ARG, "tg_session_run: placeholder '%s' must be fed: node "
                     "'%s' (%s) needs it", g->nodes[id].name, g->nodes[by].name,
                     tg__gnode_op_name(&g->nodes[by]));
}

static tg_status need(prune_ctx *p, int id, int by)
{
    if (p->needed[id])
        return TG_OK;
    const tg_gnode *n = &p->g->nodes[id];
    p->by[id] = by;
    if (n->kind == TG_GNODE_PLACEHOLDER) {
        if (p->fed[n->out[0]])
            return TG_OK; /* its value comes from the feed: nothing runs */
        return unfed_error(p, id);
    }
    p->needed[id] = true;
    p->work[p->n_work++] = id;
    return TG_OK;
}

static tg_status mark_needed(prune_ctx *p, const tg_plan_key *key)
{
    const tg_graph *g = p->g;
    tg_status s = TG_OK;
    for (int i = 0; i < key->n_fetches && s == TG_OK; i++)
        s = need(p, g->values[key->fetches[i]].node, -1);
    for (int i = 0; i < key->n_targets && s == TG_OK; i++)
        s = need(p, key->targets[i], -1);
    while (p->n_work > 0 && s == TG_OK) {
        int id = p->work[--p->n_work];
        const tg_gnode *n = &g->nodes[id];
        for (int i = 0; i < n->n_in && s == TG_OK; i++)
            if (!p->fed[n->in[i]])
                s = need(p, g->values[n->in[i]].node, id);
        for (int i = 0; i < n->n_ctrl && s == TG_OK; i++)
            s = need(p, n->ctrl[i], id);
    }
    return s;
}

/* ---- ordering: Kahn's algorithm with a min-heap of ready ids ----------------------- */
static void heap_push(int *h, int *n, int x)
{
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > x) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static int heap_pop(int *h, int *n)
{
    int top = h[0], x = h[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= x)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = x;
    return top;
}

/* the predecessors of node id that run in this plan, through fn */
static void for_preds(const tg_graph *g, const bool *needed, const bool *fed, int id,
                      void (*fn)(void *ctx, int pred), void *ctx)
{
    const tg_gnode *n = &g->nodes[id];
    for (int i = 0; i < n->n_in; i++) {
        int p = g->values[n->in[i]].node;
        if (!fed[n->in[i]] && needed[p])
            fn(ctx, p);
    }
    for (int i = n->n_in; i < tg__gnode_n_preds(n); i++) {
        int p = tg__gnode_pred(g, n, i); /* control and ordering-only edges */
        if (needed[p])
            fn(ctx, p);
    }
}

/* Successor lists in CSR form, built for the ordering (items are node ids)
 * and again for the steps' dependency graph (items are step indices):
 * n_preds[k] counts item k's predecessors in this plan, and the items that
 * follow item j are succ[start[j]] .. succ[start[j + 1] - 1]. */
typedef struct csr_ctx {
    const int *nodes; /* item -> node id, NULL when items are node ids */
    const int *pos;   /* node id -> item, NULL when items are node ids */
    int *n_preds, *start, *succ;
    int k; /* the item whose predecessors are being visited */
} csr_ctx;

static int item_of(const csr_ctx *c, int node) { return c->pos ? c->pos[node] : node; }

static void count_edge(void *ctx, int pred)
{
    csr_ctx *c = ctx;
    c->n_preds[c->k]++;
    c->start[item_of(c, pred) + 2]++;
}

static void fill_edge(void *ctx, int pred)
{
    csr_ctx *c = ctx;
    c->succ[c->start[item_of(c, pred) + 1]++] = c->k;
}

/* fn on every predecessor edge of the items that this plan runs */
static void visit_items(const tg_graph *g, const bool *needed, const bool *fed, int n,
                        csr_ctx *c, void (*fn)(void *ctx, int pred))
{
    for (c->k = 0; c->k < n; c->k++) {
        int id = c->nodes ? c->nodes[c->k] : c->k;
        if (needed[id])
            for_preds(g, needed, fed, id, fn, c);
    }
}

/* fills c's n_preds (n zeroed), start (n + 2 zeroed) and succ for n items */
static void build_csr(const tg_graph *g, const bool *needed, const bool *fed, int n,
                      csr_ctx *c)
{
    visit_items(g, needed, fed, n, c, count_edge);
    for (int k = 0; k < n; k++) /* counts to offsets */
        c->start[k + 2] += c->start[k + 1];
    visit_items(g, needed, fed, n, c, fill_edge);
}

/* Memory-aware order (serial plans). Kahn's algorithm takes the lowest
 * id first, except for urgent nodes, which go first as soon as they are
 * ready:
 * - nodes that write state (assign, fused_update: side effects),
 *   variables and constants (they take no memory; updates wait for them);
 * - feeders that were pulled: a feeder is an op whose successors are all
 *   one writer of state or feeders of that one writer, i.e. a node that
 *   only serves one update (a weight gradient, momentum * 0.9, the sum
 *   of both; not the backward pass's trunk, which serves all of them).
 *   When a real computation (an op that is not an unpulled feeder) is
 *   placed, the feeders among its successors are pulled, and with them
 *   the feeders they read from, transitively (momentum * 0.9 reads only
 *   variables: it waits until the gradient it will be added to needs it).
 * So a parameter's update runs right after its gradient, which dies
 * there instead of waiting for the end of the backward pass (in LeNet's
 * step the weight gradients, 245 KB, were all alive at the peak; at level
 * 0 the six-node update chains ran at the end). Any topological order
 * gives the same results: a variable's readers and writers are ordered
 * by edges (assign.c, build.c), which Kahn's algorithm follows.
 * Serial plans only: the parallel executor's memory plan cannot give a
 * dead gradient's memory to the rest of the backward pass (it does not
 * depend on the update), and its blocks, merged with the early freed
 * ones, became unusable too (LeNet at level 2: 3.50 MB planned with
 * creation order, 3.94 MB with updates first). The heap holds ids, urgent
 * ones shifted below 0; a node pulled while in the heap is pushed again
 * (the second copy is skipped). */
typedef struct orderer {
    const tg_graph *g;
    const bool *needed, *fed;
    bool serial;
    csr_ctx o;     /* successors by node id; n_preds counted down */
    int *heap, n_heap;
    int *feeder; /* per node: the writer of state it only serves, or -1 */
    bool *pulled, *placed;
    int *stack, n_stack; /* pull's work list (each node at most once) */
} orderer;

static bool writes_state(const tg_gnode *n)
{
    return n->kind == TG_GNODE_OP && (n->op->flags & TG_OP_SIDE_EFFECTS);
}

static void push_ready(orderer *r, int id)
{
    const tg_gnode *n = &r->g->nodes[id];
    bool urgent = n->kind != TG_GNODE_OP || writes_state(n) || r->pulled[id];
    heap_push(r->heap, &r->n_heap, r->serial && urgent ? id - r->g->n_nodes : id);
}

/* feeders from the last id down: successors come after their
 * predecessors in id order (a successor with a smaller id counts as a
 * non-feeder, which only pulls less). feeder[id] is the one writer of
 * state that node id serves, or -1. */
static void find_feeders(orderer *r)
{
    const tg_graph *g = r->g;
    for (int id = g->n_nodes - 1; id >= 0; id--) {
        const tg_gnode *n = &g->nodes[id];
        int w = -1;
        bool f = r->needed[id] && n->kind == TG_GNODE_OP && !writes_state(n);
        for (int k = r->o.start[id]; f && k < r->o.start[id + 1]; k++) {
            int sid = r->o.succ[k];
            int ws = sid <= id ? -1 : writes_state(&g->nodes[sid]) ? sid : r->feeder[sid];
            f = ws >= 0 && (w < 0 || ws == w);
            w = ws;
        }
        r->feeder[id] = f ? w : -1;
    }
}

/* marks node id pulled (and pushes it again when ready, now urgent) */
static void mark_pulled(orderer *r, int id)
{
    r->pulled[id] = true;
    r->stack[r->n_stack++] = id;
    if (r->o.n_preds[id] == 0)
        push_ready(r, id);
}

static void pull_pred(void *ctx, int pred)
{
    orderer *r = ctx;
    if (r->feeder[pred] >= 0 && !r->pulled[pred] && !r->placed[pred])
        mark_pulled(r, pred);
}

/* pulls feeder id and the unplaced feeders it reads from, transitively
 * (an explicit stack: feeder chains may be long) */
static void pull(orderer *r, int id)
{
    if (r->pulled[id] || r->placed[id])
        return;
    mark_pulled(r, id);
    while (r->n_stack > 0)
        for_preds(r->g, r->needed, r->fed, r->stack[--r->n_stack], pull_pred, r);
}

static void place_node(orderer *r, int id, tg_plan *plan)
{
    const tg_gnode *n = &r->g->nodes[id];
    r->placed[id] = true;
    plan->steps[plan->n_steps++] = id;
    for (int k = r->o.start[id]; k < r->o.start[id + 1]; k++)
        if (--r->o.n_preds[r->o.succ[k]] == 0)
            push_ready(r, r->o.succ[k]);
    bool computes = n->kind == TG_GNODE_OP && (r->feeder[id] < 0 || r->pulled[id]);
    for (int k = r->o.start[id]; r->serial && computes && k < r->o.start[id + 1]; k++)
        if (r->feeder[r->o.succ[k]] >= 0)
            pull(r, r->o.succ[k]);
}

static tg_status order(const tg_graph *g, const bool *needed, const bool *fed,
                       bool serial, tg_plan *plan)
{
    int n = g->n_nodes, n_edges = 0;
    for (int id = 0; id < n; id++)
        n_edges += tg__gnode_n_preds(&g->nodes[id]);
    orderer r = {g, needed, fed, serial,
                 {NULL, NULL, calloc((size_t)n + 1, sizeof(int)),
                  calloc((size_t)n + 2, sizeof(int)),
                  malloc(((size_t)n_edges + 1) * sizeof(int)), 0},
                 malloc((2 * (size_t)n + 1) * sizeof(int)), 0,
                 malloc(((size_t)n + 1) * sizeof(int)), calloc((size_t)n + 1, 1),
                 calloc((size_t)n + 1, 1), malloc(((size_t)n + 1) * sizeof(int)), 0};
    tg_status s = TG_OK;
    if (!r.o.n_preds || !r.o.start || !r.o.succ || !r.heap || !r.feeder || !r.pulled ||
        !r.placed || !r.stack) {
        s = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
        goto done;
    }
    build_csr(g, needed, fed, n, &r.o);
    find_feeders(&r);
    int want = 0;
    for (int id = 0; id < n; id++)
        if (needed[id]) {
            want++;
            if (r.o.n_preds[id] == 0)
                push_ready(&r, id);
        }
    while (r.n_heap > 0) {
        int key = heap_pop(r.heap, &r.n_heap), id = key < 0 ? key + n : key;
        if (!r.placed[id])
            place_node(&r, id, plan);
    }
    if (plan->n_steps != want)
        s = tg__error(TG_ERR_ARG, "tg_session_run: graph '%s' has a cycle among the "
                      "nodes this run needs (%d of %d can be ordered)", g->name,
                      plan->n_steps, want);
done:
    free(r.o.n_preds);
    free(r.o.start);
    free(r.o.succ);
    free(r.heap);
    free(r.feeder);
    free(r.pulled);
    free(r.placed);
    free(r.stack);
    return s;
}

/* ---- the steps' dependency graph --------------------------------------------------- */
static tg_status build_deps(const tg_graph *g, const bool *needed, const bool *fed,
                            tg_plan *plan)
{
    int n = plan->n_steps, n_edges = 0;
    int *pos = malloc(((size_t)g->n_nodes + 1) * sizeof *pos);
    plan->n_preds = calloc((size_t)n + 1, sizeof(int));
    plan->succ_start = calloc((size_t)n + 2, sizeof(int));
    for (int k = 0; k < n; k++)
        n_edges += tg__gnode_n_preds(&g->nodes[plan->steps[k]]);
    plan->succ = malloc(((size_t)n_edges + 1) * sizeof(int));
    if (!pos || !plan->n_preds || !plan->succ_start || !plan->succ) {
        free(pos);
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    }
    for (int k = 0; k < n; k++)
        pos[plan->steps[k]] = k;
    csr_ctx d = {plan->steps, pos, plan->n_preds, plan->succ_start, plan->succ, 0};
    build_csr(g, needed, fed, n, &d);
    free(pos);
    return TG_OK;
}

static tg_status plan_snapshots(const tg_graph *g, const bool *fed, tg_plan *plan)
{
    bool *state = calloc((size_t)plan->n_values + 1, 1);
    plan->snapshot = calloc((size_t)plan->n_values + 1, 1);
    if (!state || !plan->snapshot) {
        free(state);
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    }
    for (int k = 0; k < plan->n_steps; k++) {
        const tg_gnode *n = &g->nodes[plan->steps[k]];
        bool alias = n->kind == TG_GNODE_VARIABLE || n->kind == TG_GNODE_CONSTANT;
        for (int i = 0; n->kind == TG_GNODE_OP && n->op->make_view && i < n->n_in; i++)
            alias |= state[n->in[i]];
        for (int o = 0; o < n->n_out; o++)
            state[n->out[o]] = alias && !fed[n->out[o]];
    }
    for (int i = 0; i < plan->key.n_fetches; i++)
        plan->snapshot[plan->run_fetches[i]] = state[plan->run_fetches[i]];
    free(state);
    return TG_OK;
}

/* what the passes made of the user's graph: the graph to run and the
 * values and nodes standing for the signature's */
static tg_status optimise(const tg_graph *g, const tg_plan_key *key, const bool *fed,
                          const bool *needed, const tg_plan_opts *o, tg_plan *plan,
                          int *targets)
{
    tg_passes_in in = {g, needed, fed, o->feed_meta, key->n_feeds, key->n_fetches,
                       key->n_targets, key->feeds, key->fetches, key->targets,
                       o->level, o->n_disabled, o->disabled};
    tg_passes_out out;
    tg_status s = tg__passes_run(&in, &out);
    if (s != TG_OK)
        return s;
    plan->g = out.g;
    plan->run_feeds = out.feeds;
    plan->run_fetches = out.fetches;
    plan->records = out.records;
    plan->n_records = out.n_records;
    plan->guards = out.guards;
    plan->n_guards = out.n_guards;
    memcpy(targets, out.targets, (size_t)key->n_targets * sizeof *targets);
    free(out.targets);
    return TG_OK;
}

/* does any fed value come with a shape other than the declared one? */
static bool shapes_differ(const tg_graph *g, const tg_plan_key *key, const tg_meta *fm)
{
    for (int i = 0; fm && i < key->n_feeds; i++) {
        const tg_meta *a = &fm[key->feeds[i]], *b = &g->values[key->feeds[i]].meta;
        if (!tg__shape_eq(a->ndim, a->shape, b->ndim, b->shape))
            return true;
    }
    return false;
}

/* the graph to run: g itself at level 0, else the passes' copy */
static tg_status choose_graph(const tg_graph *g, const tg_plan_key *key, const bool *fed,
                              const bool *needed, const tg_plan_opts *o, tg_plan *plan,
                              int *targets)
{
    if (o->level > 0 || shapes_differ(g, key, o->feed_meta))
        return optimise(g, key, fed, needed, o, plan, targets);
    plan->g = (tg_graph *)g;
    tg__graph_retain(plan->g);
    plan->run_feeds = copy_ints(key->feeds, key->n_feeds);
    plan->run_fetches = copy_ints(key->fetches, key->n_fetches);
    memcpy(targets, key->targets, (size_t)key->n_targets * sizeof *targets);
    if (!plan->run_feeds || !plan->run_fetches)
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    return TG_OK;
}

/* the run's signature in the graph it runs: fed and fetched values,
 * target nodes (those whose work vanished dropped) */
static tg_status run_signature(tg_plan *plan, int *targets, tg_plan_key *rk)
{
    const tg_graph *g = plan->g;
    plan->n_values = g->n_values;
    plan->fed = calloc((size_t)g->n_values + 1, 1);
    plan->fetched = calloc((size_t)g->n_values + 1, 1);
    if (!plan->fed || !plan->fetched)
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    for (int i = 0; i < plan->key.n_feeds; i++)
        if (plan->run_feeds[i] >= 0)
            plan->fed[plan->run_feeds[i]] = true;
    for (int i = 0; i < plan->key.n_fetches; i++)
        plan->fetched[plan->run_fetches[i]] = true;
    *rk = (tg_plan_key){0, plan->key.n_fetches, 0, NULL, plan->run_fetches, targets, 0, NULL};
    for (int i = 0; i < plan->key.n_targets; i++)
        if (targets[i] >= 0)
            targets[rk->n_targets++] = targets[i];
    return TG_OK;
}

static tg_status prune(const tg_graph *g, const bool *fed, const tg_plan_key *key,
                       bool *needed)
{
    prune_ctx p = {g, fed, needed, malloc(((size_t)g->n_nodes + 1) * sizeof(int)),
                   malloc(((size_t)g->n_nodes + 1) * sizeof(int)), 0};
    tg_status s = p.by && p.work ? mark_needed(&p, key)
                                 : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    free(p.by);
    free(p.work);
    return s;
}

static tg_status compile(const tg_graph *g, const tg_plan_key *key, const bool *fed,
                         const tg_plan_opts *o, tg_plan *plan)
{
    bool *needed = calloc((size_t)g->n_nodes + 1, 1);
    int *targets = malloc(((size_t)key->n_targets + 1) * sizeof(int));
    tg_plan_key rk;
    tg_status s = needed && targets ? prune(g, fed, key, needed)
                                    : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    if (s == TG_OK)
        s = choose_graph(g, key, fed, needed, o, plan, targets);
    if (s == TG_OK)
        s = run_signature(plan, targets, &rk);
    free(needed);
    const tg_graph *pg = plan->g;
    needed = s == TG_OK ? calloc((size_t)pg->n_nodes + 1, 1) : NULL;
    plan->steps = s == TG_OK ? malloc(((size_t)pg->n_nodes + 1) * sizeof(int)) : NULL;
    if (s == TG_OK && (!needed || !plan->steps))
        s = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    if (s == TG_OK)
        s = prune(pg, plan->fed, &rk, needed);
    if (s == TG_OK)
        s = order(pg, needed, plan->fed, !o->parallel, plan);
    if (s == TG_OK)
        s = build_deps(pg, needed, plan->fed, plan);
    if (s == TG_OK)
        s = tg__memplan_build(pg, plan, o->memory_plan, o->parallel);
    if (s == TG_OK)
        s = plan_snapshots(pg, plan->fed, plan);
    free(needed);
    free(targets);
    return s;
}

tg_plan *tg__plan_compile(const tg_graph *g, const tg_plan_key *key, const bool *fed,
                          const tg_plan_opts *o)
{
    tg_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return tg__error_null(TG_ERR_NOMEM, "tg_session_run: out of memory");
    plan->epoch = g->epoch;
    plan->key = (tg_plan_key){key->n_feeds, key->n_fetches, key->n_targets,
                              copy_ints(key->feeds, key->n_feeds),
                              copy_ints(key->fetches, key->n_fetches),
                              copy_ints(key->targets, key->n_targets), key->n_dims,
                              malloc(((size_t)key->n_dims + 1) * sizeof(int64_t))};
    if (plan->key.dims && key->n_dims)
        memcpy(plan->key.dims, key->dims, (size_t)key->n_dims * sizeof(int64_t));
    tg_status s = plan->key.feeds && plan->key.fetches && plan->key.targets && plan->key.dims
                      ? compile(g, key, fed, o, plan)
                      : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    if (s != TG_OK) {
        tg__plan_free(plan);
        return NULL;
    }
    return plan;
}
