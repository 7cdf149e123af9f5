/* Graph storage: lifetime, nodes and values appended by id, unique names
 * (a hash table), symbolic tensors standing for values, and lookups of
 * values by name. */
#include "graph/graph_impl.h"
#include "tg/autograd.h"
#include "util/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* key must outlive the map entry (node names, captured tensors) */
static bool map_put(tg_hmap *m, const void *key, int id)
{
    if (tg__hmap_put(m, key, id))
        return true;
    tg__error(TG_ERR_NOMEM, "graph: out of memory");
    return false;
}

/* ---- lifetime ----------------------------------------------------------------- */
tg_graph *tg_graph_new(const char *name)
{
    tg_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->name = strdup(name ? name : "graph"))) {
        free(g);
        return tg__error_null(TG_ERR_NOMEM, "tg_graph_new: out of memory");
    }
    g->refcount = 1;
    g->names = tg__hmap_strings();
    g->name_next = tg__hmap_strings();
    return g;
}

void tg__graph_retain(tg_graph *g)
{
    if (g)
        g->refcount++;
}

/* attributes that hold references: tensors and subgraphs */
static void attrs_hold(tg_attr *a, int n, bool hold)
{
    for (int i = 0; i < n; i++) {
        if (a[i].type == TG_ATTR_TENSOR)
            hold ? (void)tg_retain(a[i].u.t) : tg_release(a[i].u.t);
        else if (a[i].type == TG_ATTR_GRAPH)
            hold ? tg__graph_retain(a[i].u.g) : tg__graph_release(a[i].u.g);
    }
}

tg_attr *tg__attrs_hold_copy(const tg_attr *a, int n)
{
    tg_attr *c = n ? tg_attrs_copy(a, n) : NULL;
    if (c)
        attrs_hold(c, n, true);
    return c;
}

void tg__attrs_free(tg_attr *a, int n)
{
    if (a)
        attrs_hold(a, n, false);
    free(a);
}

static void node_free(tg_gnode *n)
{
    tg__attrs_free(n->attrs, n->n_attrs);
    free(n->attr);
    free(n->name);
    free(n->loc);
    free(n->in);
    free(n->out);
    free(n->ctrl);
    free(n->order);
    tg_release(n->tensor);
}

void tg__graph_release(tg_graph *g)
{
    if (!g)
        return;
    if (--g->refcount > 0) {
        /* a body whose only holders are its own runner's plans: free them */
        if (g->fn && g->fn->session && g->refcount == g->fn->internal_refs)
            tg__fgraph_drop_session(g);
        return;
    }
    tg__fgraph_free(g);
    for (int i = 0; i < g->n_nodes; i++)
        node_free(&g->nodes[i]);
    free(g->nodes);
    free(g->values);
    tg__hmap_free(&g->names);
    tg__hmap_free(&g->name_next);
    for (int i = 0; i < g->n_bases; i++)
        free(g->bases[i]);
    free(g->bases);
    free(g->uses);
    tg__hmap_free(&g->captured);
    free(g->name);
    free(g);
}

void tg_graph_free(tg_graph *g) { tg__graph_release(g); }
const char *tg_graph_name(const tg_graph *g) { return g ? g->name : NULL; }
int tg_graph_num_nodes(const tg_graph *g) { return g ? g->n_nodes : 0; }
int tg_graph_num_values(const tg_graph *g) { return g ? g->n_values : 0; }

/* ---- names -------------------------------------------------------------------- */
static bool name_ok(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' ||
              c == '-'))
            return false;
    }
    return true;
}

static tg_status check_new_name(const tg_graph *g, const char *name,
                                const char *fn)
{
    if (!name_ok(name))
        return tg__error(TG_ERR_ARG,
                         "%s: invalid node name '%s' (use letters, digits, "
                         "'_', '.', '/', '-')", fn, name ? name : "(null)");
    int id = tg__hmap_get(&g->names, name);
    if (id >= 0)
        return tg__error(TG_ERR_ARG,
                         "%s: graph '%s' already has a node named '%s' (%s)",
                         fn, g->name, name, tg__gnode_op_name(&g->nodes[id]));
    return TG_OK;
}

/* remembers that base's suffixes below k are taken */
static bool set_next_suffix(tg_graph *g, const char *base, int k)
{
    /* a known base: replacing the value keeps the stored (owned) key */
    if (tg__hmap_get(&g->name_next, base) >= 0)
        return tg__hmap_put(&g->name_next, base, k);
    char *key = strdup(base);
    if (!key || !TG_GROW(g->bases, g->cap_bases, g->n_bases + 1) ||
        !tg__hmap_put(&g->name_next, key, k)) {
        free(key);
        return false;
    }
    g->bases[g->n_bases++] = key;
    return true;
}

/* "base", else "base_1", "base_2", ...: the first one that is free. Each
 * base remembers where its last search ended, so naming N nodes of one
 * kind costs O(N), not O(N^2) (a suffix taken since by an explicit name
 * is stepped over). */
static char *unique_name(tg_graph *g, const char *base)
{
    size_t len = strlen(base) + 24;
    char *s = malloc(len);
    if (!s)
        return tg__error_null(TG_ERR_NOMEM, "graph: out of memory");
    int k = tg__hmap_get(&g->name_next, base);
    if (k < 0)
        k = 0;
    for (;; k++) {
        if (k == 0)
            snprintf(s, len, "%s", base);
        else
            snprintf(s, len, "%s_%d", base, k);
        if (tg__hmap_get(&g->names, s) < 0)
            break;
    }
    if (!set_next_suffix(g, base, k + 1)) {
        free(s);
        return tg__error_null(TG_ERR_NOMEM, "graph: out of memory");
    }
    return s;
}

/* ---- nodes and values ------------------------------------------------------------ */
/* false (error set) when out of memory */
static bool room(bool grown)
{
    if (!grown)
        tg__error(TG_ERR_NOMEM, "graph: out of memory");
    return grown;
}

/* the thread's source-location hook (tg_graph_set_location_hook) */
static _Thread_local tg_graph_location_fn where_fn;
static _Thread_local void *where_user;
static _Thread_local bool marking_backward;

bool tg__graph_mark_backward(bool on)
{
    bool old = marking_backward;
    marking_backward = on;
    return old;
}

void tg_graph_set_location_hook(tg_graph_location_fn fn, void *user)
{
    where_fn = fn;
    where_user = fn ? user : NULL;
}

const char *tg_graph_node_location(const tg_tensor *t)
{
    if (!t || !t->graph)
        return tg__error_null(TG_ERR_ARG, "tg_graph_node_location: %s",
                              t ? "the tensor is not symbolic" : "tensor is NULL");
    return t->graph->nodes[t->graph->values[t->value].node].loc;
}

int tg__graph_add_node(tg_graph *g, tg_gnode_kind kind, const char *name,
                       const char *base, int n_in, int n_out)
{
    if (name && check_new_name(g, name, "graph") != TG_OK)
        return -1;
    /* room for the node and its values first: once the node exists, adding
     * its values cannot fail, so a failure never leaves half a node */
    if (!room(TG_GROW(g->nodes, g->cap_nodes, g->n_nodes + 1)) ||
        !room(TG_GROW(g->values, g->cap_values, g->n_values + n_out)))
        return -1;
    tg_gnode *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->device = tg__device_scope_current();
    n->backward = marking_backward;
    n->no_grad = kind == TG_GNODE_OP && !tg_grad_enabled();
    n->n_in = n_in;
    n->n_out = n_out;
    n->name = name ? strdup(name) : unique_name(g, base);
    n->in = calloc((size_t)(n_in > 0 ? n_in : 1), sizeof *n->in);
    n->out = calloc((size_t)(n_out > 0 ? n_out : 1), sizeof *n->out);
    const char *loc = where_fn ? where_fn(where_user) : NULL;
    n->loc = loc ? strdup(loc) : NULL;
    if (!n->name || !n->in || !n->out || (loc && !n->loc) ||
        !map_put(&g->names, n->name, g->n_nodes)) {
        node_free(n);
        tg__error(TG_ERR_NOMEM, "graph: out of memory");
        return -1;
    }
    return g->n_nodes++;
}

int tg__graph_add_value(tg_graph *g, int node, int index, const tg_meta *m)
{
    if (!room(TG_GROW(g->values, g->cap_values, g->n_values + 1)))
        return -1;
    tg_gvalue *v = &g->values[g->n_values];
    const tg_gnode *n = &g->nodes[node];
    v->meta = *m;
    v->node = node;
    v->index = index;
    /* a view's output aliases its first input */
    v->var = n->kind == TG_GNODE_VARIABLE                             ? node
             : n->kind == TG_GNODE_OP && n->op->make_view && n->n_in ? g->values[n->in[0]].var
                                                                      : -1;
    g->nodes[node].out[index] = g->n_values;
    return g->n_values++;
}

tg_status tg__graph_push_edge(tg_graph *g, int node, int dep, bool order_only)
{
    tg_gnode *n = &g->nodes[node];
    int **list = order_only ? &n->order : &n->ctrl;
    int *len = order_only ? &n->n_order : &n->n_ctrl;
    int *cap = order_only ? &n->cap_order : &n->cap_ctrl;
    if (!room(TG_GROW(*list, *cap, *len + 1)))
        return TG_ERR_NOMEM;
    (*list)[(*len)++] = dep;
    g->back_edges |= dep > node;
    return TG_OK;
}

tg_status tg__graph_add_ctrl(tg_graph *g, int node, int dep, bool order_only)
{
    const tg_gnode *n = &g->nodes[node];
    const int *list = order_only ? n->order : n->ctrl;
    int len = order_only ? n->n_order : n->n_ctrl;
    for (int i = 0; i < len; i++)
        if (list[i] == dep)
            return TG_OK;
    return tg__graph_push_edge(g, node, dep, order_only);
}

tg_status tg__graph_note_use(tg_graph *g, int var, int node, bool assign)
{
    int *head = assign ? &g->nodes[var].assigns : &g->nodes[var].readers;
    if (*head && g->uses[*head - 1].node == node)
        return TG_OK;
    if (!TG_GROW(g->uses, g->cap_uses, g->n_uses + 1))
        return TG_ERR_NOMEM;
    g->uses[g->n_uses] = (struct tg_guse){node, *head};
    *head = ++g->n_uses;
    return TG_OK;
}

int tg__gnode_pred(const tg_graph *g, const tg_gnode *n, int i)
{
    if (i < n->n_in)
        return g->values[n->in[i]].node;
    i -= n->n_in;
    return i < n->n_ctrl ? n->ctrl[i] : n->order[i - n->n_ctrl];
}

/* ---- symbolic tensors --------------------------------------------------------------- */
tg_tensor *tg__graph_symbolic(tg_graph *g, int v)
{
    const tg_meta *m = &g->values[v].meta;
    tg_tensor *t = tg__tensor_struct(m->dtype, m->ndim, m->shape);
    if (!t)
        return NULL;
    t->graph = g;
    t->value = v;
    tg__graph_retain(g);
    return t;
}

bool tg_is_symbolic(const tg_tensor *t) { return t && t->graph; }
tg_graph *tg_tensor_graph(const tg_tensor *t) { return t ? t->graph : NULL; }

const char *tg_graph_node_name(const tg_tensor *t)
{
    if (!t || !t->graph)
        return NULL;
    return t->graph->nodes[t->graph->values[t->value].node].name;
}

const char *tg__value_name(const tg_graph *g, int v, char *buf, size_t len)
{
    const tg_gvalue *x = &g->values[v];
    const tg_gnode *n = &g->nodes[x->node];
    if (n->n_out == 1)
        snprintf(buf, len, "%s", n->name);
    else
        snprintf(buf, len, "%s:%d", n->name, x->index);
    return buf;
}

int tg__graph_parse_value(const tg_graph *g, const char *name, const char *fn)
{
    if (!name) {
        tg__error(TG_ERR_ARG, "%s: name is NULL", fn);
        return -1;
    }
    char node[256];
    const char *colon = strrchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    long index = 0;
    if (colon) {
        char *end;
        index = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || index < 0) {
            tg__error(TG_ERR_ARG, "%s: bad value name '%s' (expected \"node\" or "
                      "\"node:index\")", fn, name);
            return -1;
        }
    }
    if (len >= sizeof node) {
        tg__error(TG_ERR_ARG, "%s: name '%s' is too long", fn, name);
        return -1;
    }
    memcpy(node, name, len);
    node[len] = 0;
    int id = tg__hmap_get(&g->names, node);
    if (id < 0) {
        tg__error(TG_ERR_ARG, "%s: graph '%s' has no node named '%s'", fn,
                  g->name, node);
        return -1;
    }
    const tg_gnode *n = &g->nodes[id];
    if (index >= n->n_out) {
        tg__error(TG_ERR_INDEX, "%s: node '%s' has %d output(s), no output %ld",
                  fn, node, n->n_out, index);
        return -1;
    }
    return n->out[index];
}

tg_tensor *tg_graph_find(tg_graph *g, const char *name)
{
    if (!g)
        return tg__error_null(TG_ERR_ARG, "tg_graph_find: graph is NULL");
    int v = tg__graph_parse_value(g, name, "tg_graph_find");
    return v < 0 ? NULL : tg__publish(tg__graph_symbolic(g, v));
}

int tg__graph_value_of(const tg_graph *g, const tg_tensor *t, const char *fn,
                       const char *what)
{
    if (!t) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "%s: %s is NULL", fn, what);
        return -1;
    }
    if (t->graph == g)
        return t->value;
    if (t->graph) {
        tg__error(TG_ERR_ARG, "%s: %s '%s' belongs to graph '%s', not to '%s'",
                  fn, what, tg_graph_node_name(t), t->graph->name, g->name);
        return -1;
    }
    int v = tg__hmap_get(&g->captured, t);
    if (v < 0)
        tg__error(TG_ERR_ARG, "%s: %s is a concrete tensor that graph '%s' does "
                  "not use; pass a symbolic tensor of the graph", fn, what, g->name);
    return v;
}

tg_status tg_graph_set_name(tg_tensor *t, const char *name)
{
    if (!t || !t->graph)
        return tg__error(TG_ERR_ARG, "tg_graph_set_name: expected a symbolic tensor");
    tg_graph *g = t->graph;
    int id = g->values[t->value].node;
    tg_gnode *n = &g->nodes[id];
    if (name && strcmp(n->name, name) == 0)
        return TG_OK;
    tg_status s = check_new_name(g, name, "tg_graph_set_name");
    if (s != TG_OK)
        return s;
    char *copy = strdup(name);
    if (!copy || !tg__hmap_reserve(&g->names, g->names.n + 1)) {
        free(copy);
        return tg__error(TG_ERR_NOMEM, "graph: out of memory"); /* nothing changed */
    }
    tg__hmap_del(&g->names, n->name);
    free(n->name);
    n->name = copy;
    tg__hmap_put(&g->names, copy, id); /* reserved: cannot fail */
    return TG_OK;
}

bool tg__graph_map_capture(tg_graph *g, const tg_tensor *t, int v)
{
    return map_put(&g->captured, t, v);
}

/* ---- descriptions ------------------------------------------------------------------ */
const char *tg__gnode_kind_name(tg_gnode_kind k)
{
    switch (k) {
    case TG_GNODE_OP: return "op";
    case TG_GNODE_PLACEHOLDER: return "placeholder";
    case TG_GNODE_VARIABLE: return "variable";
    case TG_GNODE_CONSTANT: return "constant";
    }
    return "?";
}

const char *tg__gnode_op_name(const tg_gnode *n)
{
    return n->kind == TG_GNODE_OP ? n->op->name : tg__gnode_kind_name(n->kind);
}

/* appends to buf at *pos, never past len */
static void cat(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    TG_PRINTF(4, 5);
static void cat(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    if (*pos >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (k > 0)
        *pos += (size_t)k;
}

#define MAX_LIST 6 /* elements of an ints/floats attribute shown */

const char *tg__attrs_summary(const tg_gnode *n, char *buf, size_t len)
{
    size_t p = 0;
    buf[0] = 0;
    for (int i = 0; i < n->n_attrs; i++) {
        const tg_attr *a = &n->attrs[i];
        cat(buf, len, &p, "%s%s=", i ? ", " : "", a->name);
        switch (a->type) {
        case TG_ATTR_INT: cat(buf, len, &p, "%lld", (long long)a->u.i); break;
        case TG_ATTR_FLOAT: cat(buf, len, &p, "%g", a->u.f); break;
        case TG_ATTR_STRING: cat(buf, len, &p, "\"%s\"", a->u.s); break;
        case TG_ATTR_INTS:
        case TG_ATTR_FLOATS:
            cat(buf, len, &p, "[");
            for (int k = 0; k < a->u.ints.n && k < MAX_LIST; k++) {
                if (a->type == TG_ATTR_INTS)
                    cat(buf, len, &p, k ? ", %lld" : "%lld", (long long)a->u.ints.v[k]);
                else
                    cat(buf, len, &p, k ? ", %g" : "%g", a->u.floats.v[k]);
            }
            cat(buf, len, &p, a->u.ints.n > MAX_LIST ? ", ...]" : "]");
            break;
        case TG_ATTR_TENSOR: {
            char s[160];
            const tg_tensor *t = a->u.t;
            cat(buf, len, &p, "<tensor %s%s>", t ? tg_dtype_name(t->dtype) : "NULL",
                t ? tg_shape_str(t->ndim, t->shape, s, sizeof s) : "");
            break;
        }
        case TG_ATTR_GRAPH:
            cat(buf, len, &p, "<graph %s>",
                a->u.g ? ((const tg_graph *)a->u.g)->name : "NULL");
            break;
        }
    }
    return buf;
}

tg_status tg__graph_infer_node(const tg_graph *g, const tg_gnode *n, tg_op_ctx *c)
{
    tg_tensor *in[TG_MAX_OP_INPUTS];
    tg_status s = TG_OK;
    int made = 0;
    for (; made < n->n_in; made++) {
        const tg_gnode *src = &g->nodes[g->values[n->in[made]].node];
        const tg_meta *m = &g->values[n->in[made]].meta;
        in[made] = src->kind == TG_GNODE_CONSTANT && src->tensor
                       ? tg_retain(src->tensor)
                       : tg__tensor_struct(m->dtype, m->ndim, m->shape);
        if (!in[made]) {
            s = tg__error(TG_ERR_NOMEM, "graph '%s': out of memory", g->name);
            break;
        }
    }
    *c = (tg_op_ctx){.op = n->op, .n_in = n->n_in, .n_out = n->n_out, .in = in,
                     .attr = n->attr, .attrs = n->attrs, .n_attrs = n->n_attrs};
    if (s == TG_OK)
        s = tg__infer_any(c);
    c->in = NULL; /* released here */
    for (int i = 0; i < made; i++)
        tg_release(in[i]);
    return s;
}
