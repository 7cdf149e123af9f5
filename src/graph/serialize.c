/* A graph to bytes and back (the format is described in serialize.h). */
#include "graph/serialize.h"
#include "io/wire.h"
#include "tg/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char MAGIC[8] = {'T', 'G', 'G', 'R', 'A', 'P', 'H', '1'};

/* ---- writing ---------------------------------------------------------------------- */
static tg_status put_attr(tg_strbuf *b, const tg_gnode *n, const tg_attr *a)
{
    tg__wire_str(b, a->name);
    tg__wire_u8(b, (unsigned)a->type);
    switch (a->type) {
    case TG_ATTR_INT: tg__wire_u64(b, (uint64_t)a->u.i); break;
    case TG_ATTR_FLOAT: tg__wire_f64(b, a->u.f); break;
    case TG_ATTR_STRING: tg__wire_str(b, a->u.s); break;
    case TG_ATTR_INTS:
        tg__wire_u32(b, (uint32_t)a->u.ints.n);
        for (int i = 0; i < a->u.ints.n; i++)
            tg__wire_u64(b, (uint64_t)a->u.ints.v[i]);
        break;
    case TG_ATTR_FLOATS:
        tg__wire_u32(b, (uint32_t)a->u.floats.n);
        for (int i = 0; i < a->u.floats.n; i++)
            tg__wire_f64(b, a->u.floats.v[i]);
        break;
    case TG_ATTR_TENSOR: return tg__wire_tensor(b, a->u.t);
    case TG_ATTR_GRAPH: { /* a control-flow body: its own blob, nested */
        tg_strbuf body = {0};
        tg_status s = tg__graph_serialize(a->u.g, &body);
        if (s == TG_OK) {
            tg__wire_u64(b, body.len);
            tg__wire_put(b, body.data, body.len);
        }
        tg__strbuf_free(&body);
        if (s != TG_OK) {
            char msg[900];
            snprintf(msg, sizeof msg, "%s", tg_last_error());
            return tg__error(s, "node '%s' (%s), attribute '%s': %s", n->name,
                             tg__gnode_op_name(n), a->name, msg);
        }
        break;
    }
    }
    return TG_OK;
}

static void put_value(tg_strbuf *b, const tg_graph *g, int v)
{
    tg__wire_u32(b, (uint32_t)g->values[v].node);
    tg__wire_u32(b, (uint32_t)g->values[v].index);
}

/* a body's parameters, captures and results (u8 0 for other graphs) */
static void put_function(tg_strbuf *b, const tg_graph *g)
{
    const tg_fgraph *f = g->fn;
    tg__wire_u8(b, f ? 1 : 0);
    if (!f)
        return;
    tg__wire_u32(b, (uint32_t)f->n_params);
    tg__wire_u32(b, (uint32_t)f->n_caps);
    for (int i = 0; i < f->n_params + f->n_caps; i++)
        put_value(b, g, f->inputs[i]);
    tg__wire_u32(b, (uint32_t)f->n_results);
    for (int i = 0; i < f->n_results; i++)
        put_value(b, g, f->results[i]);
}

static void put_ids(tg_strbuf *b, const int *ids, int n)
{
    tg__wire_u32(b, (uint32_t)n);
    for (int i = 0; i < n; i++)
        tg__wire_u32(b, (uint32_t)ids[i]);
}

static tg_status put_node(tg_strbuf *b, const tg_graph *g, const tg_gnode *n)
{
    char dev[48] = "";
    if (n->device.index >= 0)
        tg_device_str(n->device, dev, sizeof dev);
    tg__wire_u8(b, (unsigned)n->kind);
    tg__wire_str(b, n->name);
    tg__wire_str(b, dev);
    tg_status s = TG_OK;
    switch (n->kind) {
    case TG_GNODE_OP:
        tg__wire_str(b, n->op->name);
        tg__wire_u32(b, (uint32_t)n->n_attrs);
        for (int i = 0; i < n->n_attrs && s == TG_OK; i++)
            s = put_attr(b, n, &n->attrs[i]);
        tg__wire_u32(b, (uint32_t)n->n_in);
        for (int i = 0; i < n->n_in; i++)
            put_value(b, g, n->in[i]);
        break;
    case TG_GNODE_PLACEHOLDER: {
        const tg_meta *m = &g->values[n->out[0]].meta;
        tg__wire_meta(b, m->dtype, m->ndim, m->shape);
        break;
    }
    case TG_GNODE_VARIABLE:
        tg__wire_u64(b, (uint64_t)(uintptr_t)n->tensor);
        s = tg__wire_tensor(b, n->tensor);
        break;
    case TG_GNODE_CONSTANT: s = tg__wire_tensor(b, n->tensor); break;
    }
    put_ids(b, n->ctrl, n->n_ctrl);
    put_ids(b, n->order, n->n_order);
    return s;
}

tg_status tg__graph_serialize(const tg_graph *g, tg_strbuf *b)
{
    tg__wire_put(b, MAGIC, sizeof MAGIC);
    tg__wire_str(b, g->name);
    tg__wire_u32(b, (uint32_t)g->n_nodes);
    for (int i = 0; i < g->n_nodes; i++)
        if (put_node(b, g, &g->nodes[i]) != TG_OK)
            return tg_last_status();
    put_function(b, g);
    return b->failed ? tg__error(TG_ERR_NOMEM, "graph serialization: out of memory") : TG_OK;
}

/* ---- reading ---------------------------------------------------------------------- */
static void free_attrs(tg_attr *a, int n)
{
    for (int i = 0; a && i < n; i++) {
        free((char *)a[i].name);
        if (a[i].type == TG_ATTR_STRING)
            free((char *)a[i].u.s);
        else if (a[i].type == TG_ATTR_INTS)
            free((int64_t *)a[i].u.ints.v);
        else if (a[i].type == TG_ATTR_FLOATS)
            free((double *)a[i].u.floats.v);
        else if (a[i].type == TG_ATTR_TENSOR)
            tg_release(a[i].u.t);
        else if (a[i].type == TG_ATTR_GRAPH)
            tg_graph_free(a[i].u.g);
    }
    free(a);
}

/* what a node's edges are until every node exists */
typedef struct edges {
    int n_ctrl, n_order;
    int *ctrl, *order; /* serialized ids */
} edges;

typedef struct loader {
    tg_wire_reader r;
    tg_graph *g;
    int n;       /* nodes in the bytes */
    int *id;     /* per serialized node: its id in g */
    edges *e;
    tg_var_resolver resolve;
    void *ctx;
    int depth; /* of nested bodies: hostile nesting cannot exhaust the stack */
} loader;

#define MAX_DEPTH 32

static tg_graph *load_graph(const void *data, size_t len, const char *what,
                            tg_var_resolver resolve, void *ctx, int depth);

/* a control-flow body: a nested blob, read with the same checks */
static tg_graph *get_body(loader *L)
{
    tg_wire_reader *r = &L->r;
    uint64_t n = tg__wire_get_u64(r);
    if (!r->failed && n > r->len - r->off)
        tg__wire_fail(r, "a body longer than the bytes left", NULL);
    else if (!r->failed && L->depth >= MAX_DEPTH)
        tg__wire_fail(r, "bodies nested too deep", NULL);
    if (r->failed)
        return NULL;
    char what[300];
    snprintf(what, sizeof what, "%s, a body at byte %zu", r->what, r->off);
    tg_graph *g = load_graph(r->p + r->off, (size_t)n, what, L->resolve, L->ctx, L->depth + 1);
    if (!g)
        r->failed = true;
    else if (!g->fn)
        tg__wire_fail(r, "a graph attribute that is not a body", NULL);
    r->off += (size_t)n;
    if (r->failed) {
        tg_graph_free(g);
        return NULL;
    }
    return g;
}

static bool get_attr(loader *L, tg_attr *a)
{
    tg_wire_reader *r = &L->r;
    a->name = tg__wire_get_str(r);
    a->type = TG_ATTR_INT;
    unsigned type = tg__wire_get_u8(r);
    if (r->failed)
        return false;
    switch (type) {
    case TG_ATTR_INT: a->u.i = (int64_t)tg__wire_get_u64(r); break;
    case TG_ATTR_FLOAT: a->type = TG_ATTR_FLOAT; a->u.f = tg__wire_get_f64(r); break;
    case TG_ATTR_STRING: a->type = TG_ATTR_STRING; a->u.s = tg__wire_get_str(r); break;
    case TG_ATTR_INTS: {
        uint32_t n = tg__wire_get_count(r, 8);
        int64_t *v = malloc(((size_t)n + 1) * sizeof *v);
        a->type = TG_ATTR_INTS;
        a->u.ints.v = v;
        a->u.ints.n = (int)n;
        for (uint32_t i = 0; v && i < n; i++)
            v[i] = (int64_t)tg__wire_get_u64(r);
        break;
    }
    case TG_ATTR_FLOATS: {
        uint32_t n = tg__wire_get_count(r, 8);
        double *v = malloc(((size_t)n + 1) * sizeof *v);
        a->type = TG_ATTR_FLOATS;
        a->u.floats.v = v;
        a->u.floats.n = (int)n;
        for (uint32_t i = 0; v && i < n; i++)
            v[i] = tg__wire_get_f64(r);
        break;
    }
    case TG_ATTR_TENSOR: a->type = TG_ATTR_TENSOR; a->u.t = tg__wire_get_tensor(r); break;
    case TG_ATTR_GRAPH: a->type = TG_ATTR_GRAPH; a->u.g = get_body(L); break;
    default: return tg__wire_fail(r, "an attribute of an unknown type", NULL);
    }
    if (!r->failed && (a->type == TG_ATTR_INTS || a->type == TG_ATTR_FLOATS) &&
        !(a->type == TG_ATTR_INTS ? (const void *)a->u.ints.v : (const void *)a->u.floats.v)) {
        tg__error(TG_ERR_NOMEM, "%s: out of memory", r->what);
        r->failed = true;
    }
    return !r->failed;
}

/* the symbolic tensor of output o of serialized node k (in the scope) */
static tg_tensor *input_of(loader *L, int self, uint32_t k, uint32_t o)
{
    if ((int64_t)k >= self) {
        tg__wire_fail(&L->r, "an input from a node not read yet", NULL);
        return NULL;
    }
    const tg_gnode *p = &L->g->nodes[L->id[k]];
    if (o >= (uint32_t)p->n_out) { /* unsigned: a huge o is not negative */
        tg__wire_fail(&L->r, "an input from an output its node does not have", NULL);
        return NULL;
    }
    tg_tensor *t = tg__graph_symbolic(L->g, p->out[o]);
    if (!t)
        L->r.failed = true;
    return t;
}

static tg_tensor *load_op(loader *L, int self, const char *name)
{
    tg_wire_reader *r = &L->r;
    char *opname = tg__wire_get_str(r);
    const tg_op_def *op = opname ? tg_op_find(opname) : NULL;
    if (opname && !op) {
        tg__wire_fail(r, "unknown op ", opname);
    }
    free(opname);
    uint32_t n_attrs = tg__wire_get_count(r, 5);
    tg_attr *attrs = calloc((size_t)n_attrs + 1, sizeof *attrs);
    if (!attrs && !r->failed) {
        tg__error(TG_ERR_NOMEM, "%s: out of memory", r->what);
        r->failed = true;
    }
    for (uint32_t i = 0; i < n_attrs && !r->failed; i++)
        get_attr(L, &attrs[i]);
    uint32_t n_in = tg__wire_get_count(r, 8);
    if (!r->failed && n_in > TG_MAX_OP_INPUTS)
        tg__wire_fail(r, "more inputs than an op takes", NULL);
    tg_tensor *in[TG_MAX_OP_INPUTS] = {0}, *out[TG_MAX_OP_OUTPUTS] = {0};
    for (uint32_t i = 0; i < n_in && !r->failed; i++) {
        uint32_t k = tg__wire_get_u32(r), o = tg__wire_get_u32(r);
        if (!r->failed)
            in[i] = input_of(L, self, k, o);
    }
    tg_tensor *made = NULL;
    if (!r->failed) {
        tg_graph_begin(L->g);
        tg_status s = tg_op_run(op, (int)n_in, in, attrs, (int)n_attrs, out);
        tg_graph_end();
        if (s != TG_OK) {
            tg__error(s, "%s: node '%s' (%s): %s", r->what, name, op->name,
                      tg_last_error());
            r->failed = true;
        } else if (!out[0] || L->g->nodes[L->g->n_nodes - 1].op != op) {
            tg__wire_fail(r, "an op that did not make one node: ", name);
        } else {
            made = out[0];
        }
    }
    for (uint32_t i = 0; i < n_in && i < TG_MAX_OP_INPUTS; i++) /* n_in: as read */
        tg_release(in[i]);
    free_attrs(attrs, (int)n_attrs);
    return made;
}

/* a library call refused node `name` of the blob: its error, said to come
 * from the blob (a peer's bytes: the reader's `what`) */
static void refused(loader *L, const char *name)
{
    tg__error(tg_last_status(), "%s: node '%s': %s", L->r.what, name, tg_last_error());
    L->r.failed = true;
}

static tg_tensor *load_variable(loader *L, const char *name)
{
    uint64_t key = tg__wire_get_u64(&L->r);
    tg_tensor *shipped = tg__wire_get_tensor(&L->r);
    if (!shipped)
        return NULL;
    tg_tensor *own = L->resolve ? L->resolve(L->ctx, name, key, shipped) : tg_retain(shipped);
    tg_release(shipped);
    tg_tensor *v = own ? tg_variable_ref(L->g, name, own) : NULL;
    tg_release(own);
    if (!v)
        refused(L, name);
    return v;
}

static bool load_ids(loader *L, int **ids, int *n)
{
    *n = (int)tg__wire_get_count(&L->r, 4);
    if (!(*ids = malloc(((size_t)*n + 1) * sizeof **ids))) {
        tg__error(TG_ERR_NOMEM, "%s: out of memory", L->r.what);
        return !(L->r.failed = true);
    }
    for (int i = 0; i < *n; i++) {
        uint32_t k = tg__wire_get_u32(&L->r);
        if (!L->r.failed && (int64_t)k >= L->n)
            return tg__wire_fail(&L->r, "an edge from a node that does not exist", NULL);
        (*ids)[i] = (int)k;
    }
    return !L->r.failed;
}

static bool load_node(loader *L, int self)
{
    tg_wire_reader *r = &L->r;
    unsigned kind = tg__wire_get_u8(r);
    char *name = tg__wire_get_str(r), *dev = tg__wire_get_str(r);
    tg_device d = {TG_CPU, -1, 0};
    tg_tensor *t = NULL;
    if (!r->failed && dev[0] && tg_device_parse(dev, &d) != TG_OK)
        tg__wire_fail(r, "a bad device name: ", dev);
    if (!r->failed && tg__hmap_get(&L->g->names, name) >= 0)
        tg__wire_fail(r, "a node name used twice: ", name);
    if (!r->failed) {
        tg_meta m;
        switch (kind) {
        case TG_GNODE_OP: t = load_op(L, self, name); break;
        case TG_GNODE_PLACEHOLDER:
            if (tg__wire_get_meta(r, &m, true) && !(t = tg_placeholder(L->g, name, m.dtype, m.ndim, m.shape)))
                refused(L, name);
            break;
        case TG_GNODE_VARIABLE: t = load_variable(L, name); break;
        case TG_GNODE_CONSTANT: {
            tg_tensor *c = tg__wire_get_tensor(r);
            if (c && !(t = tg_constant(L->g, name, c)))
                refused(L, name);
            tg_release(c);
            break;
        }
        default: tg__wire_fail(r, "an unknown node kind", NULL);
        }
    }
    if (t && kind == TG_GNODE_OP && tg_graph_set_name(t, name) != TG_OK)
        refused(L, name);
    if (t) {
        L->id[self] = L->g->values[t->value].node;
        L->g->nodes[L->id[self]].device = d;
    }
    free(name);
    free(dev);
    if (!r->failed)
        load_ids(L, &L->e[self].ctrl, &L->e[self].n_ctrl);
    if (!r->failed)
        load_ids(L, &L->e[self].order, &L->e[self].n_order);
    return !r->failed;
}

static bool add_edges(loader *L)
{
    for (int k = 0; k < L->n; k++)
        for (int i = 0; i < L->e[k].n_ctrl + L->e[k].n_order; i++) {
            bool order = i >= L->e[k].n_ctrl;
            int dep = order ? L->e[k].order[i - L->e[k].n_ctrl] : L->e[k].ctrl[i];
            if (dep == k)
                return tg__wire_fail(&L->r, "a node that waits for itself", NULL);
            if (tg__graph_add_ctrl(L->g, L->id[k], L->id[dep], order) != TG_OK)
                return !(L->r.failed = true);
        }
    return true;
}

/* a value reference (node, output) of the loaded graph; -1 on failure */
static int get_value(loader *L)
{
    uint32_t k = tg__wire_get_u32(&L->r), o = tg__wire_get_u32(&L->r);
    if (L->r.failed)
        return -1;
    if ((int64_t)k >= L->n || o >= (uint32_t)L->g->nodes[L->id[k]].n_out) {
        tg__wire_fail(&L->r, "a body's input or result that does not exist", NULL);
        return -1;
    }
    return L->g->nodes[L->id[k]].out[o];
}

/* a body's parameters, captures (placeholders) and results */
static bool get_function(loader *L)
{
    tg_wire_reader *r = &L->r;
    unsigned is_fn = tg__wire_get_u8(r);
    if (r->failed || !is_fn)
        return !r->failed;
    uint32_t n_params = tg__wire_get_u32(r), n_caps = tg__wire_get_u32(r);
    if (!r->failed && (n_params > TG_MAX_OP_INPUTS || n_caps > TG_MAX_OP_INPUTS))
        return tg__wire_fail(r, "a body with more inputs than an op takes", NULL);
    tg_fgraph *f = r->failed ? NULL : calloc(1, sizeof *f);
    int n_in = (int)(n_params + n_caps);
    if (f && !(f->inputs = malloc(((size_t)n_in + 1) * sizeof(int))))
        free(f), f = NULL;
    if (!f)
        return r->failed ? false : tg__wire_fail(r, "out of memory", NULL);
    L->g->fn = f; /* freed with the graph from here on */
    f->n_params = (int)n_params;
    f->n_caps = (int)n_caps;
    f->cap_inputs = n_in;
    for (int i = 0; i < n_in && !r->failed; i++)
        if ((f->inputs[i] = get_value(L)) >= 0 &&
            L->g->nodes[L->g->values[f->inputs[i]].node].kind != TG_GNODE_PLACEHOLDER)
            tg__wire_fail(r, "a body input that is not a placeholder", NULL);
    uint32_t n_res = tg__wire_get_u32(r);
    if (!r->failed && (n_res == 0 || n_res > TG_MAX_OP_OUTPUTS))
        return tg__wire_fail(r, "a body without results or with more than an op gives", NULL);
    if (!r->failed && !(f->results = malloc((size_t)TG_MAX_OP_OUTPUTS * sizeof(int))))
        return tg__wire_fail(r, "out of memory", NULL);
    for (uint32_t i = 0; i < n_res && !r->failed; i++)
        f->results[f->n_results++] = get_value(L);
    return !r->failed;
}

static tg_graph *load_graph(const void *data, size_t len, const char *what,
                            tg_var_resolver resolve, void *ctx, int depth)
{
    loader L = {{data, data ? len : 0, 0, what, false}, NULL, 0, NULL, NULL, resolve, ctx,
                depth};
    char magic[8] = {0};
    if (tg__wire_take(&L.r, magic, 8) && memcmp(magic, MAGIC, 8))
        tg__wire_fail(&L.r, "not a tensorgraph graph (bad magic)", NULL);
    char *name = tg__wire_get_str(&L.r);
    L.n = (int)tg__wire_get_count(&L.r, 11);
    if (!L.r.failed) {
        L.g = tg_graph_new(name[0] ? name : NULL);
        L.id = calloc((size_t)L.n + 1, sizeof *L.id);
        L.e = calloc((size_t)L.n + 1, sizeof *L.e);
        if (!L.g || !L.id || !L.e) {
            tg__error(TG_ERR_NOMEM, "%s: out of memory", L.r.what);
            L.r.failed = true;
        }
    }
    free(name);
    tg_scope_begin(); /* the symbolic tensors made while loading */
    for (int k = 0; k < L.n && !L.r.failed; k++)
        load_node(&L, k);
    tg_scope_end();
    if (!L.r.failed && get_function(&L) && tg__wire_end(&L.r))
        add_edges(&L);
    for (int k = 0; L.e && k < L.n; k++) {
        free(L.e[k].ctrl);
        free(L.e[k].order);
    }
    free(L.e);
    free(L.id);
    if (L.r.failed) {
        tg_graph_free(L.g);
        return NULL;
    }
    return L.g;
}

tg_graph *tg__graph_deserialize(const void *data, size_t len, const char *what,
                                tg_var_resolver resolve, void *ctx)
{
    char label[256];
    snprintf(label, sizeof label, "graph from %s", what ? what : "bytes");
    return load_graph(data, len, label, resolve, ctx, 0);
}
