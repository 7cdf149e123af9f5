/* ONNX export (opset 17): the part of a static graph the fetches need,
 * node by node (each op through its writer in export_ops.c), with the
 * message builders the writers share; tg_onnx_export_module traces a
 * module first. */
#include "onnx/export.h"
#include "util/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


tg_status onnx_ex_fail(ex *e, tg_status s, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (e->err == TG_OK)
        e->err = tg__error(s, "tg_onnx_export: %s", msg);
    return e->err;
}

static char *dupstr(ex *e, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
    return d;
}

/* a fresh name for a helper value: "<base>__<n>" */
char *onnx_ex_aux_name(ex *e, const char *base)
{
    char buf[300];
    snprintf(buf, sizeof buf, "%s__%d", base, e->n_aux++);
    return dupstr(e, buf);
}

/* ---- building ONNX messages ------------------------------------------------------ */
onnx_node *onnx_ex_node(ex *e, const char *op, const char *name)
{
    onnx_graph *og = e->og;
    if (e->err || !TG_GROW(og->node, e->cap_node, og->n_node + 1)) {
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    onnx_node *n = &og->node[og->n_node++];
    memset(n, 0, sizeof *n);
    n->op_type = dupstr(e, op);
    n->name = dupstr(e, name);
    return n;
}

void onnx_ex_io(ex *e, onnx_node *n, int n_in, const char *const *in, int n_out,
                    const char *const *out)
{
    n->input = calloc((size_t)n_in + 1, sizeof *n->input);
    n->output = calloc((size_t)n_out + 1, sizeof *n->output);
    if (!n->input || !n->output) {
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    n->n_input = (size_t)n_in;
    n->n_output = (size_t)n_out;
    for (int i = 0; i < n_in; i++)
        n->input[i] = dupstr(e, in[i]);
    for (int i = 0; i < n_out; i++)
        n->output[i] = dupstr(e, out[i]);
}

static onnx_attribute *add_attr(ex *e, onnx_node *n, const char *name, int type)
{
    size_t cap = tg__grow_capacity(0, n->n_attribute, sizeof *n->attribute); /* messages keep no capacity */
    if (!TG_GROW(n->attribute, cap, n->n_attribute + 1)) {
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    onnx_attribute *a = &n->attribute[n->n_attribute++];
    memset(a, 0, sizeof *a);
    a->name = dupstr(e, name);
    a->type = type;
    a->has_type = true;
    return a;
}

void onnx_ex_attr_int(ex *e, onnx_node *n, const char *name, int64_t v)
{
    onnx_attribute *a = n ? add_attr(e, n, name, ONNX_ATTR_INT) : NULL;
    if (a) {
        a->i = v;
        a->has_i = true;
    }
}

void onnx_ex_attr_float(ex *e, onnx_node *n, const char *name, double v)
{
    onnx_attribute *a = n ? add_attr(e, n, name, ONNX_ATTR_FLOAT) : NULL;
    if (a) {
        a->f = (float)v;
        a->has_f = true;
    }
}

void onnx_ex_attr_ints(ex *e, onnx_node *n, const char *name, int k, const int64_t *v)
{
    onnx_attribute *a = n ? add_attr(e, n, name, ONNX_ATTR_INTS) : NULL;
    if (!a)
        return;
    a->ints = malloc(((size_t)k + 1) * sizeof *a->ints);
    if (!a->ints) {
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    memcpy(a->ints, v, (size_t)k * sizeof *v);
    a->n_ints = (size_t)k;
}

void onnx_ex_attr_string(ex *e, onnx_node *n, const char *name, const char *v)
{
    onnx_attribute *a = n ? add_attr(e, n, name, ONNX_ATTR_STRING) : NULL;
    if (a) {
        a->s.data = (uint8_t *)dupstr(e, v);
        a->s.len = a->s.data ? strlen(v) : 0;
    }
}

static void add_initializer(ex *e, const char *name, const tg_tensor *t)
{
    onnx_graph *og = e->og;
    if (e->err)
        return;
    if (!TG_GROW(og->initializer, e->cap_init, og->n_initializer + 1)) {
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    onnx_tensor *tp = &og->initializer[og->n_initializer];
    if (onnx_tensor_from_tg(t, name, true, tp) != TG_OK) {
        onnx_ex_fail(e, tg_last_status(), "initializer '%s': %s", name, tg_last_error());
        return;
    }
    og->n_initializer++;
}

/* t (scope-owned, NULL after a failure) as a new initializer named after
 * base; returns the name (caller frees) */
static char *add_init(ex *e, const char *base, const tg_tensor *t)
{
    char *name = onnx_ex_aux_name(e, base);
    if (!t)
        onnx_ex_fail(e, tg_last_status(), "%s", tg_last_error());
    else
        add_initializer(e, name, t);
    return name;
}

/* an int64 initializer (Reshape's shape, ...) */
char *onnx_ex_init_ints(ex *e, const char *base, int n, const int64_t *v, bool scalar)
{
    int64_t len = n;
    tg_scope_begin(); /* owns the tensor, scope or not */
    char *name = add_init(e, base, tg_from_data(TG_INT64, scalar ? 0 : 1, &len, v));
    tg_scope_end();
    return name;
}

char *onnx_ex_init_scalar(ex *e, const char *base, tg_dtype dt, double v)
{
    tg_scope_begin();
    char *name = add_init(e, base, tg_scalar(dt, v));
    tg_scope_end();
    return name;
}

void onnx_ex_set_type(onnx_value_info *vi, const tg_meta *m)
{
    vi->has_type = true;
    vi->type.has_tensor_type = true;
    vi->type.elem_type = onnx_dtype_from_tg(m->dtype);
    vi->type.has_elem_type = true;
    vi->type.has_shape = true;
    vi->type.n_dims = (size_t)m->ndim;
    vi->type.dims = calloc((size_t)m->ndim + 1, sizeof *vi->type.dims);
    for (int d = 0; vi->type.dims && d < m->ndim; d++) {
        vi->type.dims[d].kind = ONNX_DIM_VALUE;
        vi->type.dims[d].value = m->shape[d];
        if (m->shape[d] < 0) { /* unknown: a symbolic dim, "batch" when leading */
            char p[32];
            snprintf(p, sizeof p, d == 0 ? "batch" : "dim_%d", d);
            vi->type.dims[d].kind = ONNX_DIM_PARAM;
            vi->type.dims[d].param = strdup(p);
        }
    }
}

static void add_value_info(ex *e, onnx_value_info **arr, size_t *n, size_t *cap,
                           const char *name, const tg_meta *m)
{
    if (e->err)
        return;
    if (!TG_GROW(*arr, *cap, *n + 1)) {
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    onnx_value_info *vi = &(*arr)[(*n)++];
    memset(vi, 0, sizeof *vi);
    vi->name = dupstr(e, name);
    onnx_ex_set_type(vi, m);
}

/* ---- the walk ------------------------------------------------------------------------------ */
static const char *hint_for(const ex *e, const tg_tensor *t)
{
    for (int i = 0; i < e->n_hints; i++)
        if (e->hint_tensor[i] == t)
            return e->hint_name[i];
    return NULL;
}

/* marks the nodes the fetches need (data edges only) */
bool *onnx_ex_needed(const tg_graph *g, int n, const int *fetch_vals)
{
    bool *need = calloc((size_t)g->n_nodes + 1, 1);
    if (!need)
        return NULL;
    for (int i = 0; i < n; i++)
        need[g->values[fetch_vals[i]].node] = true;
    for (int id = g->n_nodes - 1; id >= 0; id--) {
        const tg_gnode *nd = &g->nodes[id];
        /* a random node's generator state has no ONNX counterpart */
        int state = nd->kind == TG_GNODE_OP ? tg_op_state_input(nd->op, nd->n_in) : -1;
        for (int j = 0; need[id] && j < nd->n_in; j++)
            if (j != state)
                need[g->values[nd->in[j]].node] = true;
    }
    return need;
}

void onnx_ex_write_node(ex *e, int id, const bool *need, int n_fetches, const int *fv)
{
    const tg_graph *g = e->g;
    const tg_gnode *n = &g->nodes[id];
    onnx_graph *og = e->og;
    if (n->kind == TG_GNODE_PLACEHOLDER && e->vname[n->out[0]])
        return; /* a body's input, named by the node that holds the body */
    for (int j = 0; j < n->n_out; j++) {
        char buf[300], full[400];
        const char *hint = n->kind != TG_GNODE_OP ? hint_for(e, n->tensor) : NULL;
        const char *base = hint ? hint : tg__value_name(g, n->out[j], buf, sizeof buf);
        if (e->prefix)
            snprintf(full, sizeof full, "%s/%s", e->prefix, base);
        e->vname[n->out[j]] = dupstr(e, e->prefix ? full : base);
    }
    if (n->kind == TG_GNODE_PLACEHOLDER) {
        add_value_info(e, &og->input, &og->n_input, &e->cap_in, e->vname[n->out[0]],
                       &g->values[n->out[0]].meta);
    } else if (n->kind == TG_GNODE_VARIABLE || n->kind == TG_GNODE_CONSTANT) {
        add_initializer(e, e->vname[n->out[0]], n->tensor);
    } else {
        exnode x = {.n = n, .out_meta = &g->values[n->out[0]].meta};
        for (int j = 0; j < n->n_in; j++) {
            x.in[j] = e->vname[n->in[j]];
            x.in_meta[j] = &g->values[n->in[j]].meta;
        }
        for (int j = 0; j < n->n_out; j++)
            x.out[j] = e->vname[n->out[j]];
        if (onnx_ex_is_random(n->op)) {
            onnx_ex_random(e, &x);
            return;
        }
        if (onnx_ex_is_control(n->op)) {
            onnx_ex_control(e, &x);
            return;
        }
        /* a second output (max_pool2d's indices) must be unused */
        for (int k = id + 1; k < g->n_nodes && n->n_out > 1; k++)
            for (int j = 0; need[k] && j < g->nodes[k].n_in; j++)
                for (int o = 1; o < n->n_out; o++)
                    if (g->nodes[k].in[j] == n->out[o])
                        onnx_ex_fail(e, TG_ERR_UNSUPPORTED, "output %d of node '%s' (%s) "
                                "has no ONNX counterpart", o, n->name, n->op->name);
        for (int o = 1; o < n->n_out; o++)
            for (int i = 0; i < n_fetches; i++)
                if (fv[i] == n->out[o])
                    onnx_ex_fail(e, TG_ERR_UNSUPPORTED, "output %d of node '%s' (%s) has "
                            "no ONNX counterpart", o, n->name, n->op->name);
        if (!e->err)
            onnx_ex_op(e, &x);
    }
}

void onnx_ex_attr_graph(ex *e, onnx_node *n, const char *name, onnx_graph *g)
{
    onnx_attribute *a = n && g ? add_attr(e, n, name, ONNX_ATTR_GRAPH) : NULL;
    if (a)
        a->g = g;
    else
        if (g) {
            onnx_graph_clear(g);
            free(g);
        }
}

static tg_status export_graph(tg_graph *g, int n_fetches, tg_tensor *const *fetches,
                              const char *path, int n_hints, const tg_tensor *const *ht,
                              const char *const *hn)
{
    if (!g || !path || n_fetches < 1 || !fetches)
        return tg__error(TG_ERR_ARG, "tg_onnx_export: needs a graph, fetches and a path");
    int *fv = calloc((size_t)n_fetches, sizeof *fv);
    if (!fv)
        return tg__error(TG_ERR_NOMEM, "tg_onnx_export: out of memory");
    for (int i = 0; i < n_fetches; i++)
        if ((fv[i] = tg__graph_value_of(g, fetches[i], "tg_onnx_export", "fetch")) < 0) {
            free(fv);
            return tg_last_status();
        }
    onnx_model *m = calloc(1, sizeof *m);
    ex e = {.g = g, .n_hints = n_hints, .hint_tensor = ht, .hint_name = hn};
    bool *need = onnx_ex_needed(g, n_fetches, fv);
    e.vname = calloc((size_t)g->n_values + 1, sizeof *e.vname);
    if (m) {
        m->graph = calloc(1, sizeof *m->graph);
        m->opset_import = calloc(1, sizeof *m->opset_import);
    }
    if (!m || !need || !e.vname || !m->graph || !m->opset_import) {
        onnx_ex_fail(&e, TG_ERR_NOMEM, "out of memory");
        goto out;
    }
    e.og = m->graph;
    m->ir_version = 8;
    m->has_ir_version = true;
    m->n_opset_import = 1;
    m->opset_import[0].domain = dupstr(&e, "");
    m->opset_import[0].version = ONNX_EXPORT_OPSET;
    m->opset_import[0].has_version = true;
    m->producer_name = dupstr(&e, "tensorgraph");
    m->producer_version = dupstr(&e, TG_VERSION);
    m->graph->name = dupstr(&e, g->name);
    size_t cap_out = 0;
    for (int id = 0; id < g->n_nodes && !e.err; id++)
        if (need[id])
            onnx_ex_write_node(&e, id, need, n_fetches, fv);
    for (int i = 0; i < n_fetches && !e.err; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup = dup || fv[j] == fv[i];
        if (!dup)
            add_value_info(&e, &m->graph->output, &m->graph->n_output, &cap_out,
                           e.vname[fv[i]], &g->values[fv[i]].meta);
    }
    if (!e.err && onnx_model_save_file(m, path) != TG_OK)
        e.err = tg_last_status();
out:
    if (e.vname)
        for (int v = 0; v < g->n_values; v++)
            free(e.vname[v]);
    free(e.vname);
    free(need);
    free(fv);
    onnx_model_free(m);
    return e.err;
}

tg_status tg_onnx_export(tg_graph *g, int n_fetches, tg_tensor *const *fetches,
                         const char *path)
{
    return export_graph(g, n_fetches, fetches, path, 0, NULL, NULL);
}

tg_status tg_onnx_export_module(tg_module *m, int ndim, const int64_t *shape,
                                const char *path)
{
    if (!m || !shape || ndim < 1 || ndim > TG_MAX_DIMS || !path)
        return tg__error(TG_ERR_ARG, "tg_onnx_export_module: needs a module, a shape "
                         "and a path");
    tg_named_tensor *state = NULL;
    int ns = tg_module_state(m, &state);
    if (ns < 0)
        return tg_last_status();
    const tg_tensor **ht = calloc((size_t)ns + 1, sizeof *ht);
    const char **hn = calloc((size_t)ns + 1, sizeof *hn);
    tg_graph *g = tg_graph_new("module");
    tg_status s = ht && hn && g ? TG_OK : tg__error(TG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ns && s == TG_OK; i++) {
        ht[i] = state[i].tensor;
        hn[i] = state[i].name;
    }
    bool training = tg_module_is_training(m);
    tg_scope_begin();
    if (s == TG_OK && (s = tg_graph_begin(g)) == TG_OK) {
        tg_module_train(m, false);
        tg_tensor *x = tg_placeholder(g, "input", TG_FLOAT32, ndim, shape);
        tg_tensor *y = tg_module_forward(m, x);
        tg_module_train(m, training);
        tg_graph_end();
        if (!y)
            s = tg_last_status();
        else if (tg_graph_set_name(y, "output") != TG_OK)
            s = tg_last_status();
        if (s == TG_OK)
            s = export_graph(g, 1, &y, path, ns, ht, hn);
    }
    tg_scope_end();
    tg_graph_free(g);
    free(ht);
    free(hn);
    tg_named_tensors_free(state);
    return s;
}

int64_t onnx_ex_aint(const exnode *x, const char *name, int64_t dflt)
{
    return tg_attr_int(x->n->attrs, x->n->n_attrs, name, dflt);
}

double onnx_ex_afloat(const exnode *x, const char *name, double dflt)
{
    return tg_attr_float(x->n->attrs, x->n->n_attrs, name, dflt);
}

const char *onnx_ex_input_as(ex *e, const exnode *x, int i, tg_dtype dt)
{
    if (x->in_meta[i]->dtype == dt)
        return x->in[i];
    char *name = onnx_ex_aux_name(e, x->n->name);
    onnx_node *c = onnx_ex_node(e, "Cast", name);
    if (c) {
        onnx_ex_io(e, c, 1, &x->in[i], 1, (const char *const *)&name);
        onnx_ex_attr_int(e, c, "to", onnx_dtype_from_tg(dt));
    }
    return name; /* kept alive by the node (copied) and freed by the caller */
}
