/* The memory plan of a compiled plan: liveness over the execution order,
 * then buffer assignment in one arena per plan, with reuse of dead
 * values' memory and in-place elementwise ops (ggml-alloc's idea).
 *
 * Why one arena: the whole plan needs one allocation, made at its first
 * run and kept with the plan, so a training step allocates nothing for
 * its intermediates; offsets are computed once, at compile time, and a
 * value's tensor is a view of the arena's storage (kernels cannot tell).
 * A pool of separate buffers would also work but reuses only whole
 * buffers; the arena splits and merges free blocks freely.
 *
 * Liveness. A value lives from its producer to its last reader. A view op
 * (make_view) returns an alias of its input, so its input lives as long
 * as the view does (liveness is extended backwards through views). Values
 * bound to feeds, variables and constants are not the plan's to place.
 * Fetched values, and the values a fetched view aliases, leave the run
 * with the caller: they get buffers of their own (TG_MEM_OWN).
 *
 * Assignment, step by step in execution order: each output of a kernel
 * is placed first (its inputs are still alive), then the values whose
 * last reader is this step are freed. Placement is best fit among the
 * free blocks (64-byte aligned sizes; the block is split), else at the
 * arena's top (growing the last free block when it ends there). Freed
 * blocks merge with free neighbours. The arena's size is the top's
 * highest point. The free blocks live in freelist.c, where best fit and
 * merging cost O(log n), so plans of 100 000 nodes compile in linear-ish
 * time.
 *
 * In place: an elementwise unary or binary op (listed below: kernels that
 * read each element before writing the same index) writes its output over input u when u is an arena value whose last
 * reader is this node (so no view of u is alive after it), of the same
 * dtype and shape (no broadcasting, no conversion), and no other input of
 * the node is a view of u (that would be read after being overwritten).
 * Fetched values are never arena values, so never overwritten.
 *
 * The parallel executor runs a node as soon as its dependencies are done,
 * so "dead after step k" is not enough there: a node placed in a dead
 * value's memory might run while a reader of that value still does. Rule:
 * memory freed by value v is reused by node X only if X depends
 * (transitively) on every node that touched v (its producer and every
 * reader, readers through views included); an in-place op needs every
 * other reader of its input to be among its ancestors. Each free block
 * records the nodes it waits for as an antichain (a node implied by
 * another one's ancestry is dropped), at most MAX_WAIT of them; a block
 * whose set would be larger is not reused (and blocks whose merged sets
 * would be are not merged). Ancestor sets are bitsets, n_steps^2 bits:
 * above MAX_ANC_STEPS steps a parallel plan does not reuse memory at all. */
#include "runtime/freelist.h"
#include "runtime/runtime_impl.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

#define MAX_WAIT TG_FREE_MAX_WAIT
#define MAX_ANC_STEPS 8192

typedef tg_fblock block;

typedef struct planner {
    const tg_graph *g;
    tg_plan *p;
    tg_memplan *m;
    int nv, ns;
    int *prod;   /* per value: producing step, or -1 */
    int *last;   /* per value: last step that reads it (through views too) */
    int *root;   /* per view value: the arena value it aliases; -1 none, -2 several */
    bool *pinned;
    bool *donated; /* an arena value whose buffer an in-place output took */
    int *rd_start, *rd; /* per value: the steps reading it directly */
    uint64_t *anc; /* parallel: per step, a bitset of its ancestors */
    int words;
    bool parallel, reuse;
    tg_freelist free; /* O(log n) best fit and merging (freelist.c) */
    int64_t top;
    int *stack; /* scratch for reader walks: values */
    int *seen, stamp; /* per value: the walk that reached it */
    int *list;  /* scratch: readers of a value (one entry per read slot) */
} planner;

static int64_t align_up(int64_t n) { return (n + TG_ALIGN - 1) / TG_ALIGN * TG_ALIGN; }

static int64_t value_bytes(const tg_graph *g, int v)
{
    const tg_meta *m = &g->values[v].meta;
    if (tg__shape_has_unknown(m->ndim, m->shape))
        return 0; /* a shape known only at run time: a buffer of its own */
    return tg__shape_numel(m->ndim, m->shape) * (int64_t)tg_dtype_size(m->dtype);
}

static bool is_view_node(const tg_gnode *n)
{
    return n->kind == TG_GNODE_OP && n->op->make_view;
}

static bool is_anc(const planner *P, int a, int of)
{
    return (P->anc[(size_t)of * P->words + a / 64] >> (a % 64)) & 1;
}

/* ---- liveness ------------------------------------------------------------------ */
static void classify(planner *P)
{
    const tg_graph *g = P->g;
    for (int v = 0; v < P->nv; v++) {
        P->prod[v] = P->last[v] = P->root[v] = -1;
        P->m->inplace_of[v] = -1;
        P->pinned[v] = P->p->fetched[v];
    }
    for (int k = 0; k < P->ns; k++) {
        const tg_gnode *n = &g->nodes[P->p->steps[k]];
        for (int o = 0; o < n->n_out; o++) {
            int v = n->out[o];
            P->prod[v] = P->last[v] = k;
            P->m->kind[v] = n->kind != TG_GNODE_OP ? TG_MEM_EXTERNAL
                            : n->op->make_view    ? TG_MEM_VIEW
                            : P->m->enabled && value_bytes(g, v) > 0 ? TG_MEM_ARENA
                                                                     : TG_MEM_OWN;
        }
        for (int i = 0; i < n->n_in; i++)
            P->last[n->in[i]] = k;
    }
    for (int v = 0; v < P->nv; v++)
        if (P->p->fed[v])
            P->m->kind[v] = TG_MEM_EXTERNAL;
    /* backwards: a view keeps its inputs alive, and a fetched view its
     * inputs' buffers out of the arena */
    for (int k = P->ns - 1; k >= 0; k--) {
        const tg_gnode *n = &g->nodes[P->p->steps[k]];
        if (!is_view_node(n))
            continue;
        for (int o = 0; o < n->n_out; o++)
            for (int i = 0; i < n->n_in; i++) {
                int u = n->in[i], w = n->out[o];
                if (P->last[w] > P->last[u])
                    P->last[u] = P->last[w];
                P->pinned[u] |= P->pinned[w];
            }
    }
    for (int v = 0; v < P->nv; v++)
        if (P->pinned[v] && P->m->kind[v] == TG_MEM_ARENA)
            P->m->kind[v] = TG_MEM_OWN;
    /* forwards: which arena value each view aliases */
    for (int k = 0; k < P->ns; k++) {
        const tg_gnode *n = &g->nodes[P->p->steps[k]];
        if (!is_view_node(n))
            continue;
        int r = -1;
        for (int i = 0; i < n->n_in; i++) {
            int u = n->in[i];
            int ru = P->m->kind[u] == TG_MEM_ARENA ? u
                     : P->m->kind[u] == TG_MEM_VIEW ? P->root[u] : -1;
            if (ru != -1)
                r = r == -1 || r == ru ? ru : -2;
        }
        for (int o = 0; o < n->n_out; o++)
            P->root[n->out[o]] = r;
    }
}

/* the serial executor's release lists and the parallel one's read counts */
static tg_status releases(planner *P)
{
    tg_memplan *m = P->m;
    m->free_start = calloc((size_t)P->ns + 2, sizeof(int));
    P->rd_start = calloc((size_t)P->nv + 2, sizeof(int));
    int n_free = 0, n_rd = 0;
    if (!m->free_start || !P->rd_start)
        return TG_ERR_NOMEM;
    for (int v = 0; v < P->nv; v++)
        if (P->last[v] >= 0 && !P->p->fetched[v]) {
            m->free_start[P->last[v] + 2]++;
            n_free++;
        }
    for (int k = 0; k < P->ns; k++) {
        m->free_start[k + 2] += m->free_start[k + 1];
        const tg_gnode *n = &P->g->nodes[P->p->steps[k]];
        for (int i = 0; i < n->n_in; i++) {
            m->n_reads[n->in[i]]++;
            P->rd_start[n->in[i] + 2]++;
            n_rd++;
        }
    }
    m->free_values = malloc((size_t)(n_free + 1) * sizeof(int));
    P->rd = malloc((size_t)(n_rd + 1) * sizeof(int));
    P->list = malloc((size_t)(n_rd + 2) * sizeof(int)); /* readers + producer */
    if (!m->free_values || !P->rd || !P->list)
        return TG_ERR_NOMEM;
    for (int v = 0; v < P->nv; v++)
        if (P->last[v] >= 0 && !P->p->fetched[v])
            m->free_values[m->free_start[P->last[v] + 1]++] = v;
    for (int v = 0; v < P->nv; v++)
        P->rd_start[v + 2] += P->rd_start[v + 1];
    for (int k = 0; k < P->ns; k++) {
        const tg_gnode *n = &P->g->nodes[P->p->steps[k]];
        for (int i = 0; i < n->n_in; i++)
            P->rd[P->rd_start[n->in[i] + 1]++] = k;
    }
    return TG_OK;
}

/* ---- ancestry (parallel plans) ---------------------------------------------------- */
static tg_status ancestors(planner *P)
{
    P->reuse = !P->parallel || P->ns <= MAX_ANC_STEPS;
    if (!P->parallel || !P->reuse)
        return TG_OK;
    P->words = (P->ns + 63) / 64;
    P->anc = calloc((size_t)P->ns * (size_t)P->words + 1, sizeof(uint64_t));
    if (!P->anc)
        return TG_ERR_NOMEM;
    /* steps are a topological order: a step's ancestors are complete
     * before it passes them on */
    for (int k = 0; k < P->ns; k++) {
        const uint64_t *a = P->anc + (size_t)k * P->words;
        for (int e = P->p->succ_start[k]; e < P->p->succ_start[k + 1]; e++) {
            uint64_t *b = P->anc + (size_t)P->p->succ[e] * P->words;
            for (int w = 0; w < P->words; w++)
                b[w] |= a[w];
            b[k / 64] |= (uint64_t)1 << (k % 64);
        }
    }
    return TG_OK;
}

/* every step reading v, through views too, into P->list; returns the count */
static int readers(planner *P, int v)
{
    int n = 0, sp = 0;
    P->stamp++;
    P->seen[v] = P->stamp;
    P->stack[sp++] = v;
    while (sp > 0) {
        int u = P->stack[--sp];
        for (int e = P->rd_start[u]; e < P->rd_start[u + 1]; e++) {
            int k = P->rd[e];
            P->list[n++] = k;
            const tg_gnode *r = &P->g->nodes[P->p->steps[k]];
            for (int o = 0; is_view_node(r) && o < r->n_out; o++)
                if (P->seen[r->out[o]] != P->stamp) {
                    P->seen[r->out[o]] = P->stamp;
                    P->stack[sp++] = r->out[o];
                }
        }
    }
    return n;
}

/* reduces w[0..n) to an antichain (drops a step some other one depends on,
 * and duplicates); returns the new count */
static int antichain(const planner *P, int *w, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        bool implied = false;
        for (int j = 0; j < n && !implied; j++)
            implied = (w[j] != w[i] && is_anc(P, w[i], w[j])) || (w[j] == w[i] && j < i);
        if (!implied)
            w[k++] = w[i];
    }
    return k;
}

/* ---- free blocks ------------------------------------------------------------------ */
typedef struct usable_ctx {
    const planner *P;
    int k;
} usable_ctx;

static bool usable(const void *ctx, const block *b)
{
    const usable_ctx *u = ctx;
    for (int i = 0; i < b->n_wait; i++)
        if (!is_anc(u->P, b->wait[i], u->k))
            return false;
    return true;
}

/* joins b into a (a before b in the arena) when their wait sets fit */
static bool merge(const planner *P, block *a, const block *b)
{
    int w[2 * MAX_WAIT], n = 0;
    for (int i = 0; i < a->n_wait; i++)
        w[n++] = a->wait[i];
    for (int i = 0; i < b->n_wait; i++)
        w[n++] = b->wait[i];
    n = P->parallel ? antichain(P, w, n) : 0;
    if (n > MAX_WAIT)
        return false;
    a->size += b->size;
    a->n_wait = n;
    memcpy(a->wait, w, (size_t)n * sizeof *w);
    return true;
}

/* best fit among the free blocks (the rest of the block stays free), else
 * the free block ending at the top grows, else the top moves */
static tg_status place(planner *P, int k, int64_t size, int64_t *out)
{
    usable_ctx u = {P, k};
    bool (*ok)(const void *, const block *) = P->parallel ? usable : NULL;
    int best = tg__freelist_best_fit(&P->free, size, ok, &u);
    int at_top = best >= 0 ? -1 : tg__freelist_ending_at(&P->free, P->top);
    int64_t off;
    if (best >= 0) {
        block rest = P->free.b[best];
        off = rest.off;
        rest.off += size;
        rest.size -= size;
        tg__freelist_remove(&P->free, best);
        if (rest.size > 0 && !tg__freelist_insert(&P->free, &rest))
            return TG_ERR_NOMEM;
    } else if (at_top >= 0 && (!ok || ok(&u, &P->free.b[at_top]))) {
        off = P->free.b[at_top].off;
        P->top = off + size;
        tg__freelist_remove(&P->free, at_top);
    } else {
        off = P->top;
        P->top += size;
    }
    if (off < P->m->stats.arena_bytes)
        P->m->stats.n_reused++; /* everything below the old top was used before */
    if (P->top > P->m->stats.arena_bytes)
        P->m->stats.arena_bytes = P->top;
    *out = off;
    return TG_OK;
}

static tg_status release_block(planner *P, int v)
{
    block nb = {.off = P->m->offset[v], .size = align_up(value_bytes(P->g, v))};
    if (P->parallel) {
        int n = readers(P, v);
        P->list[n++] = P->prod[v];
        n = antichain(P, P->list, n);
        if (n > MAX_WAIT)
            return TG_OK; /* too many independent readers to track: not reused */
        nb.n_wait = n;
        memcpy(nb.wait, P->list, (size_t)n * sizeof(int));
    }
    /* merge with the free neighbours: the one after, then the one before */
    int after = tg__freelist_starting_at(&P->free, nb.off + nb.size);
    if (after >= 0 && merge(P, &nb, &P->free.b[after]))
        tg__freelist_remove(&P->free, after);
    int before = tg__freelist_ending_at(&P->free, nb.off);
    if (before >= 0) {
        block joined = P->free.b[before];
        if (merge(P, &joined, &nb)) {
            tg__freelist_remove(&P->free, before);
            nb = joined;
        }
    }
    return tg__freelist_insert(&P->free, &nb) ? TG_OK : TG_ERR_NOMEM;
}

/* ---- in place ------------------------------------------------------------------------ */
/* Ops whose kernel may write its output over an input say so per input in
 * their definition (TG_INPLACE_OK(i): it reads each element before
 * writing the same index of the output and uses no scratch there). */
bool tg__memplan_elementwise(const tg_op_def *op)
{
    return op && op->n_out == 1 && !op->make_view && TG_INPLACE_INPUTS(op->flags) != 0;
}

/* can step k (node n) write output v over its input u? */
static bool can_overwrite(planner *P, int k, const tg_gnode *n, int u, int v)
{
    const tg_memplan *m = P->m;
    const tg_meta *a = &P->g->values[u].meta, *b = &P->g->values[v].meta;
    if (m->kind[u] != TG_MEM_ARENA || P->donated[u] || P->last[u] != k ||
        a->dtype != b->dtype || !tg__shape_eq(a->ndim, a->shape, b->ndim, b->shape))
        return false;
    for (int j = 0; j < n->n_in; j++) {
        int w = n->in[j];
        if (w != u && m->kind[w] == TG_MEM_VIEW && (P->root[w] == u || P->root[w] == -2))
            return false; /* a view of u read by the same node */
    }
    if (P->parallel) { /* every other reader of u must be done before k */
        int nr = readers(P, u);
        for (int i = 0; i < nr; i++)
            if (P->list[i] != k && !is_anc(P, P->list[i], k))
                return false;
    }
    return true;
}

static bool try_in_place(planner *P, int k, const tg_gnode *n, int v)
{
    if (!tg__memplan_elementwise(n->op) || !P->reuse)
        return false;
    for (int i = 0; i < n->n_in; i++) {
        int u = n->in[i];
        if (i >= 16 || !((TG_INPLACE_INPUTS(n->op->flags) >> i) & 1u) ||
            !can_overwrite(P, k, n, u, v))
            continue;
        P->m->offset[v] = P->m->offset[u];
        P->m->inplace_of[v] = u;
        P->donated[u] = true;
        P->m->stats.n_inplace++;
        return true;
    }
    return false;
}

/* ---- assignment ------------------------------------------------------------------------ */
static tg_status assign(planner *P)
{
    tg_memplan *m = P->m;
    for (int k = 0; k < P->ns; k++) {
        const tg_gnode *n = &P->g->nodes[P->p->steps[k]];
        for (int o = 0; n->kind == TG_GNODE_OP && o < n->n_out; o++) {
            int v = n->out[o];
            if (m->kind[v] == TG_MEM_ARENA && !try_in_place(P, k, n, v) &&
                place(P, k, align_up(value_bytes(P->g, v)), &m->offset[v]) != TG_OK)
                return TG_ERR_NOMEM;
        }
        for (int f = m->free_start[k]; f < m->free_start[k + 1] && P->reuse; f++) {
            int v = m->free_values[f];
            if (m->kind[v] == TG_MEM_ARENA && !P->donated[v] && release_block(P, v) != TG_OK)
                return TG_ERR_NOMEM;
        }
    }
    return TG_OK;
}

/* serial plans: the offline placement (memplace.c) when it packs tighter */
static tg_status try_offline(planner *P)
{
    int64_t *bytes = malloc(((size_t)P->nv + 1) * sizeof *bytes);
    int64_t *off = malloc(((size_t)P->nv + 1) * sizeof *off);
    if (!bytes || !off) {
        free(bytes);
        free(off);
        return TG_ERR_NOMEM;
    }
    for (int v = 0; v < P->nv; v++)
        bytes[v] = align_up(value_bytes(P->g, v));
    int n_reused = 0;
    int64_t top = tg__memplan_offline(P->p, P->prod, P->last, bytes, off, &n_reused);
    if (top >= 0 && top < P->m->stats.arena_bytes) {
        for (int v = 0; v < P->nv; v++)
            if (P->m->kind[v] == TG_MEM_ARENA)
                P->m->offset[v] = off[v];
        P->m->stats.arena_bytes = top;
        P->m->stats.n_reused = n_reused;
    }
    free(bytes);
    free(off);
    return TG_OK;
}

static void count_bytes(planner *P)
{
    tg_memory_stats *st = &P->m->stats;
    for (int v = 0; v < P->nv; v++) {
        int kind = P->m->kind[v];
        if (kind != TG_MEM_ARENA && kind != TG_MEM_OWN)
            continue;
        int64_t b = align_up(value_bytes(P->g, v));
        st->n_values++;
        st->naive_bytes += b;
        if (kind == TG_MEM_OWN)
            st->own_bytes += b;
    }
    st->planned_bytes = st->arena_bytes + st->own_bytes;
}

tg_status tg__memplan_build(const tg_graph *g, tg_plan *p, bool enabled, bool parallel)
{
    tg_memplan *m = &p->mem;
    size_t nv = (size_t)p->n_values + 1;
    m->enabled = enabled;
    m->parallel = parallel;
    m->kind = calloc(nv, 1);
    m->offset = calloc(nv, sizeof(int64_t));
    m->inplace_of = malloc(nv * sizeof(int));
    m->n_reads = calloc(nv, sizeof(int));
    m->recycle = calloc(nv, sizeof *m->recycle);
    m->n_values = p->n_values;
    planner P = {.g = g, .p = p, .m = m, .nv = p->n_values, .ns = p->n_steps,
                 .prod = malloc(nv * sizeof(int)), .last = malloc(nv * sizeof(int)),
                 .root = malloc(nv * sizeof(int)), .pinned = malloc(nv),
                 .donated = calloc(nv, 1), .parallel = parallel,
                 .stack = malloc(nv * sizeof(int)), .seen = calloc(nv, sizeof(int))};
    tg__freelist_init(&P.free);
    tg_status s = TG_OK;
    if (!m->kind || !m->offset || !m->inplace_of || !m->n_reads || !m->recycle || !P.prod || !P.last ||
        !P.root || !P.pinned || !P.donated || !P.stack || !P.seen)
        s = TG_ERR_NOMEM;
    if (s == TG_OK) {
        classify(&P);
        s = releases(&P);
    }
    if (s == TG_OK && enabled)
        s = ancestors(&P);
    if (s == TG_OK && enabled)
        s = assign(&P);
    if (s == TG_OK && enabled && !parallel)
        s = try_offline(&P);
    if (s == TG_OK)
        count_bytes(&P);
    if (!enabled)
        m->stats.planned_bytes = m->stats.naive_bytes;
    free(P.prod);
    free(P.last);
    free(P.root);
    free(P.pinned);
    free(P.donated);
    free(P.rd_start);
    free(P.rd);
    free(P.anc);
    tg__freelist_free(&P.free);
    free(P.stack);
    free(P.seen);
    free(P.list);
    return s == TG_OK ? TG_OK : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory "
                                          "planning memory");
}

/* the plan lets go of a storage it kept for reuse */
static void drop_kept(tg_storage *kept)
{
    if (kept)
        kept->plan_kept = false;
    tg__storage_drop(kept);
}

void tg__memplan_free(tg_memplan *m)
{
    free(m->kind);
    free(m->offset);
    free(m->inplace_of);
    free(m->free_start);
    free(m->free_values);
    free(m->n_reads);
    for (int v = 0; m->recycle && v < m->n_values; v++)
        drop_kept(m->recycle[v]);
    free(m->recycle);
    tg_release(m->arena);
    memset(m, 0, sizeof *m);
}

/* ---- at run time ------------------------------------------------------------------------ */
tg_status tg__memplan_prepare(tg_plan *p)
{
    tg_memplan *m = &p->mem;
    if (!m->enabled || m->arena || m->stats.arena_bytes == 0)
        return TG_OK;
    int64_t n = m->stats.arena_bytes;
    m->arena = tg__alloc(TG_UINT8, 1, &n);
    return m->arena ? TG_OK : tg_last_status();
}

/* value v's own tensor: over the storage the plan kept from the last run
 * when no one else holds it (see tg_memplan.recycle), else a new one */
static tg_tensor *own_output(tg_memplan *mp, int v, const tg_meta *m)
{
    tg_storage *kept = mp->recycle[v];
    if (kept && kept->refcount == 1) {
        tg_tensor *t = tg__tensor_struct(m->dtype, m->ndim, m->shape);
        if (t && kept->nbytes == (size_t)t->numel * tg_dtype_size(m->dtype)) {
            t->storage = kept;
            kept->refcount++;
            return t;
        }
        free(t); /* a size the plan never makes here: not reused */
    }
    tg_tensor *t = tg__alloc(m->dtype, m->ndim, m->shape);
    if (t) {
        drop_kept(kept);
        mp->recycle[v] = t->storage;
        t->storage->refcount++;
        t->storage->plan_kept = true;
    }
    return t;
}

tg_tensor *tg__memplan_output(tg_plan *p, int v, const tg_meta *m)
{
    tg_memplan *mp = &p->mem;
    if (mp->enabled && mp->kind[v] == TG_MEM_OWN)
        return own_output(mp, v, m);
    if (mp->kind[v] != TG_MEM_ARENA || !mp->arena)
        return tg__alloc(m->dtype, m->ndim, m->shape);
    tg_tensor *t = tg__tensor_struct(m->dtype, m->ndim, m->shape);
    if (!t)
        return NULL;
    t->storage = mp->arena->storage;
    t->storage->refcount++;
    t->offset = mp->offset[v] / (int64_t)tg_dtype_size(m->dtype);
    return t;
}
