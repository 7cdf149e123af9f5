/* Partitioning a placed graph into one graph per device (see partition.h).
 * Nodes are copied in a topological order of the graph as built (the
 * lowest id first), through the op dispatcher inside each partition's
 * graph scope, so every copy is inferred and checked again; edges that
 * cross devices get their Send/Recv pair when the first reader on the
 * other device is copied. */
#include "runtime/partition.h"
#include "tg/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const tg_op_def tg_op_send, tg_op_recv;

/* ---- pruning ---------------------------------------------------------------------- */
tg_status tg__partition_needed(const tg_graph *g, const tg_run_sig *sig, const bool *fed,
                               bool *needed)
{
    int *work = malloc(((size_t)g->n_nodes + 1) * sizeof *work), n = 0;
    if (!work)
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    for (int i = 0; i < sig->n_fetches + sig->n_targets; i++) {
        int u = i < sig->n_fetches ? g->values[sig->fetches[i]].node
                                   : sig->targets[i - sig->n_fetches];
        if (!needed[u]) {
            needed[u] = true;
            work[n++] = u;
        }
    }
    tg_status s = TG_OK;
    while (n > 0 && s == TG_OK) {
        const tg_gnode *u = &g->nodes[work[--n]];
        if (u->kind == TG_GNODE_PLACEHOLDER && !fed[u->out[0]])
            s = tg__error(TG_ERR_ARG, "tg_session_run: placeholder '%s' must be fed",
                          u->name);
        for (int i = 0; i < u->n_in + u->n_ctrl; i++) {
            int p = i < u->n_in ? g->values[u->in[i]].node : u->ctrl[i - u->n_in];
            if ((i < u->n_in && fed[u->in[i]]) || needed[p])
                continue;
            needed[p] = true;
            work[n++] = p;
        }
    }
    free(work);
    return s;
}

/* ---- a topological order of the needed nodes (lowest id first) -------------------- */
typedef struct heap {
    int *a, n;
} heap;

static void hpush(heap *h, int x)
{
    int i = h->n++;
    for (; i > 0 && h->a[(i - 1) / 2] > x; i = (i - 1) / 2)
        h->a[i] = h->a[(i - 1) / 2];
    h->a[i] = x;
}

static int hpop(heap *h)
{
    int top = h->a[0], last = h->a[--h->n], i = 0;
    for (int c; (c = 2 * i + 1) < h->n; i = c) {
        if (c + 1 < h->n && h->a[c + 1] < h->a[c])
            c++;
        if (h->a[c] >= last)
            break;
        h->a[i] = h->a[c];
    }
    if (h->n)
        h->a[i] = last;
    return top;
}

/* the needed predecessors of node u (fed inputs excluded) through fn */
static void each_pred(const tg_graph *g, const bool *needed, const bool *fed, int u,
                      void (*fn)(void *, int), void *ctx)
{
    const tg_gnode *n = &g->nodes[u];
    for (int i = 0; i < tg__gnode_n_preds(n); i++) {
        if (i < n->n_in && fed[n->in[i]])
            continue;
        int p = tg__gnode_pred(g, n, i);
        if (needed[p])
            fn(ctx, p);
    }
}

static void count_pred(void *ctx, int p) { (void)p; (*(int *)ctx)++; }

/* successor lists (CSR); `node` is the node whose predecessors are visited */
typedef struct csr {
    int *start, *fill, *items;
    int node;
} csr;
static void count_succ(void *ctx, int p) { ((csr *)ctx)->start[p + 1]++; }
static void add_succ(void *ctx, int p)
{
    csr *c = ctx;
    c->items[c->start[p] + c->fill[p]++] = c->node;
}

static tg_status topo_order(const tg_graph *g, const bool *needed, const bool *fed,
                            int *order, int *n_order)
{
    int N = g->n_nodes;
    int *npred = calloc((size_t)N + 1, sizeof *npred);
    csr c = {calloc((size_t)N + 2, sizeof(int)), calloc((size_t)N + 1, sizeof(int)), NULL, 0};
    heap h = {malloc(((size_t)N + 1) * sizeof(int)), 0};
    tg_status s = TG_OK;
    if (!npred || !c.start || !c.fill || !h.a) {
        s = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
        goto done;
    }
    for (int u = 0; u < N; u++)
        if (needed[u]) {
            each_pred(g, needed, fed, u, count_pred, &npred[u]);
            each_pred(g, needed, fed, u, count_succ, &c);
        }
    for (int u = 0; u < N; u++)
        c.start[u + 1] += c.start[u];
    if (!(c.items = malloc(((size_t)c.start[N] + 1) * sizeof(int)))) {
        s = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
        goto done;
    }
    for (int u = 0; u < N; u++)
        if (needed[u]) {
            c.node = u;
            each_pred(g, needed, fed, u, add_succ, &c);
        }
    for (int u = 0; u < N; u++)
        if (needed[u] && npred[u] == 0)
            hpush(&h, u);
    *n_order = 0;
    while (h.n) {
        int u = hpop(&h);
        order[(*n_order)++] = u;
        for (int i = c.start[u]; i < c.start[u + 1]; i++)
            if (--npred[c.items[i]] == 0)
                hpush(&h, c.items[i]);
    }
done:
    free(npred);
    free(c.start);
    free(c.fill);
    free(c.items);
    free(h.a);
    return s;
}

/* ---- building the partitions ---------------------------------------------------------- */
typedef struct builder {
    const tg_graph *g;
    const bool *fed;
    const tg_meta *feed_meta; /* per value: the fed shape (NULL: declared) */
    tg_partitioning *P;
    tg_tensor ***val;  /* per partition, per original value: its tensor there */
    int **token;       /* per partition, per original node: its token's Recv node, or -1 */
    int *node_map;     /* per original node: the copy's node id in its partition */
    int last_send;     /* the node id of the Send send_recv made last */
} builder;

static tg_status grow_list(void **a, int n, size_t size)
{
    void *p = realloc(*a, ((size_t)n + 1) * size);
    if (!p)
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory partitioning");
    *a = p;
    return TG_OK;
}

/* runs op in partition d's graph; out: its outputs (in the build scope) */
static tg_status append(builder *b, int d, const tg_op_def *op, int n_in, tg_tensor **in,
                        const tg_attr *attrs, int n_attrs, tg_tensor **out)
{
    tg_graph *pg = b->P->parts[d].g;
    if (tg_graph_begin(pg) != TG_OK)
        return tg_last_status();
    tg_status s = tg_op_run(op, n_in, in, attrs, n_attrs, out);
    tg_graph_end();
    return s;
}

static const char *dev_name(const builder *b, int d, char *buf, size_t len)
{
    return tg_device_str(b->P->parts[d].device, buf, len);
}

/* a name for a node of a partition: `want`, or want_k when a node of
 * that name is there already (a fed value named after its producer) */
static void rename_node(tg_tensor *t, const char *want)
{
    char buf[320];
    if (tg_graph_set_name(t, want) == TG_OK)
        return;
    for (int k = 1; k < 1000; k++) {
        snprintf(buf, sizeof buf, "%s_%d", want, k);
        if (tg_graph_set_name(t, buf) == TG_OK)
            break;
    }
    tg_clear_error();
}

/* nm made a valid node name in place (':' -> '_'), "_ctrl" appended for
 * tokens; returns nm */
static const char *node_name(char *nm, bool token)
{
    for (char *c = nm; *c; c++)
        if (*c == ':' || *c == '^')
            *c = '_';
    if (token && strlen(nm) + 6 < 400)
        strcat(nm, "_ctrl");
    return nm;
}

/* a Send of x (NULL: a token) from partition e to d and its Recv in d,
 * named by `name`; *recv_out gets the Recv's output */
static tg_status send_recv(builder *b, int e, int d, const char *name, tg_tensor *x,
                           tg_tensor **recv_out)
{
    tg_meta mx = {TG_BOOL, 0, {0}}, *m = &mx; /* a token, or x's (re-inferred) metadata */
    if (x)
        tg_meta_of(x, &mx);
    if (tg__shape_has_unknown(m->ndim, m->shape))
        return tg__error(TG_ERR_SHAPE, "partitioning: value '%s' has unknown dims (-1) "
                         "when it crosses devices; a partitioned run needs the fed "
                         "shapes (pass the feed tensors)", name);
    char src[48], dst[48];
    dev_name(b, e, src, sizeof src);
    dev_name(b, d, dst, sizeof dst);
    tg_attr sa[3] = {{.name = "tensor_name", .type = TG_ATTR_STRING, .u.s = name},
                     {.name = "src", .type = TG_ATTR_STRING, .u.s = src},
                     {.name = "dst", .type = TG_ATTR_STRING, .u.s = dst}};
    tg_partition *pe = &b->P->parts[e], *pd = &b->P->parts[d];
    tg_tensor *sent = NULL;
    if (append(b, e, &tg_op_send, x ? 1 : 0, &x, sa, 3, &sent) != TG_OK)
        return tg_last_status();
    b->last_send = pe->g->n_nodes - 1;
    if (grow_list((void **)&pe->targets, pe->n_targets, sizeof(tg_tensor *)) != TG_OK)
        return tg_last_status();
    pe->targets[pe->n_targets++] = tg_retain(sent);
    pe->n_send++;
    tg_attr ra[5] = {sa[0], sa[1], sa[2], TG_AI("dtype", m->dtype),
                     TG_AINTS("shape", m->shape, m->ndim)};
    if (append(b, d, &tg_op_recv, 0, NULL, ra, 5, recv_out) != TG_OK)
        return tg_last_status();
    pd->n_recv++;
    /* names that say what crosses where: "conv2d_1/to/cpu_1", ".../from/cpu_0" */
    char nm[400];
    snprintf(nm, sizeof nm, "%s/to/%s", name[0] == '^' ? name + 1 : name, dst);
    rename_node(sent, node_name(nm, name[0] == '^'));
    snprintf(nm, sizeof nm, "%s/from/%s", name[0] == '^' ? name + 1 : name, src);
    rename_node(*recv_out, node_name(nm, name[0] == '^'));
    if (x)
        b->P->cut_bytes += tg__shape_numel(m->ndim, m->shape) * (int64_t)tg_dtype_size(m->dtype);
    return TG_OK;
}

/* the tensor of original value v in partition d: copied already, or a
 * placeholder (fed), a constant (by reference), or a Recv from the
 * producer's partition */
static tg_status value_on(builder *b, int d, int v, tg_tensor **out)
{
    const tg_graph *g = b->g;
    if ((*out = b->val[d][v]))
        return TG_OK;
    const tg_gvalue *x = &g->values[v];
    const tg_gnode *n = &g->nodes[x->node];
    tg_partition *p = &b->P->parts[d];
    char name[300];
    tg__value_name(g, v, name, sizeof name);
    tg_tensor *t = NULL;
    if (b->fed[v]) {
        const tg_meta *fm = b->feed_meta ? &b->feed_meta[v] : &x->meta;
        if (!(t = tg_placeholder(p->g, NULL, fm->dtype, fm->ndim, fm->shape)))
            return tg_last_status();
        rename_node(t, n->name);
        if (grow_list((void **)&p->feed_vals, p->n_feeds, sizeof(tg_tensor *)) != TG_OK ||
            grow_list((void **)&p->feed_of, p->n_feeds, sizeof(int)) != TG_OK)
            return tg_last_status();
        p->feed_vals[p->n_feeds] = tg_retain(t);
        p->feed_of[p->n_feeds++] = v;
    } else if (n->kind == TG_GNODE_CONSTANT) {
        if (!(t = tg_constant(p->g, NULL, n->tensor)))
            return tg_last_status();
        rename_node(t, n->name);
    } else {
        int e = b->P->part[x->node];
        tg_tensor *src;
        if (e < 0 || e == d || !(src = b->val[e][v]))
            return tg__error(TG_ERR_INTERNAL, "partitioning: value '%s' is read before "
                             "it is made", name);
        if (send_recv(b, e, d, name, src, &t) != TG_OK)
            return tg_last_status();
    }
    b->val[d][v] = t;
    *out = t;
    return TG_OK;
}

/* the Recv node, in partition d, of the token saying node c has run */
static tg_status token_on(builder *b, int d, int c, int *recv_node)
{
    if ((*recv_node = b->token[d][c]) >= 0)
        return TG_OK;
    int e = b->P->part[c];
    char name[300];
    snprintf(name, sizeof name, "^%s", b->g->nodes[c].name);
    tg_tensor *t;
    if (send_recv(b, e, d, name, NULL, &t) != TG_OK)
        return tg_last_status();
    tg_graph *ge = b->P->parts[e].g;
    if (tg__graph_add_ctrl(ge, b->last_send, b->node_map[c], false) != TG_OK)
        return tg_last_status();
    *recv_node = b->token[d][c] = b->P->parts[d].g->values[t->value].node;
    return TG_OK;
}

/* control and ordering edges of original node u (copied as node `copy`
 * of partition d): within d as they are, across devices as tokens */
static tg_status copy_edges(builder *b, int u, int d, int copy)
{
    const tg_gnode *n = &b->g->nodes[u];
    tg_graph *pg = b->P->parts[d].g;
    for (int i = 0; i < n->n_ctrl + n->n_order; i++) {
        bool order = i >= n->n_ctrl;
        int c = order ? n->order[i - n->n_ctrl] : n->ctrl[i];
        int dc = b->P->part[c];
        if (dc < 0) /* an ordering edge from a node this run does not need */
            continue;
        int dep = b->node_map[c];
        if (dc != d && token_on(b, d, c, &dep) != TG_OK)
            return tg_last_status();
        if (tg__graph_add_ctrl(pg, copy, dep, order && dc == d) != TG_OK)
            return tg_last_status();
    }
    return TG_OK;
}

static tg_status copy_node(builder *b, int u)
{
    const tg_graph *g = b->g;
    const tg_gnode *n = &g->nodes[u];
    int d = b->P->part[u];
    tg_partition *p = &b->P->parts[d];
    tg_tensor *out[TG_MAX_OP_OUTPUTS] = {0};
    switch (n->kind) {
    case TG_GNODE_PLACEHOLDER: /* fed: a placeholder where it is read */
    case TG_GNODE_CONSTANT:    /* copied to each device that reads it */
        return TG_OK;
    case TG_GNODE_VARIABLE:
        if (!(out[0] = tg_variable_ref(p->g, n->name, n->tensor)))
            return tg_last_status();
        break;
    case TG_GNODE_OP: {
        tg_tensor *in[TG_MAX_OP_INPUTS];
        for (int i = 0; i < n->n_in; i++)
            if (value_on(b, d, n->in[i], &in[i]) != TG_OK)
                return tg_last_status();
        if (append(b, d, n->op, n->n_in, in, n->attrs, n->n_attrs, out) != TG_OK)
            return tg_last_status();
        rename_node(out[0], n->name);
        break;
    }
    }
    b->node_map[u] = p->g->n_nodes - 1;
    for (int o = 0; o < n->n_out; o++)
        if (!b->fed[n->out[o]])
            b->val[d][n->out[o]] = out[o];
    return copy_edges(b, u, d, b->node_map[u]);
}

static tg_status add_fetches_targets(builder *b, const tg_run_sig *sig)
{
    const tg_graph *g = b->g;
    for (int i = 0; i < sig->n_fetches; i++) {
        int v = sig->fetches[i], d = b->P->part[g->values[v].node];
        tg_partition *p = &b->P->parts[d];
        tg_tensor *t;
        if (value_on(b, d, v, &t) != TG_OK ||
            grow_list((void **)&p->fetch_vals, p->n_fetches, sizeof(tg_tensor *)) != TG_OK ||
            grow_list((void **)&p->fetch_of, p->n_fetches, sizeof(int)) != TG_OK)
            return tg_last_status();
        p->fetch_vals[p->n_fetches] = tg_retain(t);
        p->fetch_of[p->n_fetches++] = i;
    }
    for (int i = 0; i < sig->n_targets; i++) {
        int u = sig->targets[i], d = b->P->part[u];
        tg_partition *p = &b->P->parts[d];
        const tg_gnode *n = &g->nodes[u];
        tg_tensor *t;
        if (n->kind == TG_GNODE_CONSTANT || n->kind == TG_GNODE_PLACEHOLDER)
            continue; /* nothing runs */
        if (!(t = tg__graph_symbolic(p->g, p->g->nodes[b->node_map[u]].out[0])))
            return tg_last_status();
        if (grow_list((void **)&p->targets, p->n_targets, sizeof(tg_tensor *)) != TG_OK) {
            tg_release(t);
            return tg_last_status();
        }
        p->targets[p->n_targets++] = t;
    }
    return TG_OK;
}

static tg_status new_parts(const tg_graph *g, int n, const tg_device *devices,
                           tg_partitioning *P)
{
    if (!(P->parts = calloc((size_t)n, sizeof *P->parts)))
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    P->n = n;
    for (int d = 0; d < n; d++) {
        char name[400], dev[48];
        snprintf(name, sizeof name, "%s@%s", g->name, tg_device_str(devices[d], dev, sizeof dev));
        P->parts[d].device = devices[d];
        if (!(P->parts[d].g = tg_graph_new(name)))
            return tg_last_status();
    }
    return TG_OK;
}

static tg_status build(builder *b, const tg_run_sig *sig, const int *order, int n_order)
{
    tg_status s = TG_OK;
    for (int i = 0; i < n_order && s == TG_OK; i++)
        s = copy_node(b, order[i]);
    if (s == TG_OK)
        s = add_fetches_targets(b, sig);
    for (int d = 0; d < b->P->n && s == TG_OK; d++) /* what a picture shows */
        for (int k = 0; k < b->P->parts[d].g->n_nodes; k++)
            b->P->parts[d].g->nodes[k].device = b->P->parts[d].device;
    return s;
}

tg_status tg__partition(const tg_graph *g, const tg_run_sig *sig, const bool *fed,
                        const tg_meta *feed_meta, int n_devices, const tg_device *devices,
                        tg_partitioning *P)
{
    memset(P, 0, sizeof *P);
    size_t N = (size_t)g->n_nodes + 1;
    bool *needed = calloc(N, 1);
    int *order = malloc(N * sizeof *order), n_order = 0, n_dev = 0;
    tg_device *devs = NULL;
    P->n_nodes = g->n_nodes;
    P->part = malloc(N * sizeof *P->part);
    tg_status s = needed && order && P->part ? TG_OK
                  : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    if (s == TG_OK)
        s = tg__partition_needed(g, sig, fed, needed);
    if (s == TG_OK)
        s = tg__place(g, needed, n_devices, devices, &devs, &n_dev, P->part);
    if (s == TG_OK)
        s = topo_order(g, needed, fed, order, &n_order);
    if (s == TG_OK)
        s = new_parts(g, n_dev, devs, P);
    builder b = {g, fed, feed_meta, P, calloc((size_t)n_dev + 1, sizeof(tg_tensor **)),
                 calloc((size_t)n_dev + 1, sizeof(int *)), malloc(N * sizeof(int)), -1};
    if (s == TG_OK && (!b.val || !b.token || !b.node_map))
        s = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    for (int d = 0; d < n_dev && s == TG_OK; d++) {
        b.val[d] = calloc((size_t)g->n_values + 1, sizeof(tg_tensor *));
        b.token[d] = malloc(N * sizeof(int));
        if (!b.val[d] || !b.token[d])
            s = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
        else
            memset(b.token[d], -1, N * sizeof(int));
    }
    if (s == TG_OK) {
        tg_scope_begin(); /* the builder's symbolic tensors */
        s = build(&b, sig, order, n_order);
        tg_scope_end();
    }
    for (int d = 0; d < n_dev; d++) {
        free(b.val ? b.val[d] : NULL);
        free(b.token ? b.token[d] : NULL);
    }
    free(b.val);
    free(b.token);
    free(b.node_map);
    free(needed);
    free(order);
    free(devs);
    if (s != TG_OK)
        tg__partitioning_free(P);
    return s;
}

static void release_all(tg_tensor **t, int n)
{
    for (int i = 0; t && i < n; i++)
        tg_release(t[i]);
    free(t);
}

void tg__partitioning_free(tg_partitioning *P)
{
    for (int d = 0; P->parts && d < P->n; d++) {
        tg_partition *p = &P->parts[d];
        release_all(p->feed_vals, p->n_feeds);
        release_all(p->fetch_vals, p->n_fetches);
        release_all(p->targets, p->n_targets);
        free(p->feed_of);
        free(p->fetch_of);
        tg_graph_free(p->g);
    }
    free(P->parts);
    free(P->part);
    memset(P, 0, sizeof *P);
}
