/* Loading an ONNX model: parse, check the opset and every node (op known,
 * version, arity), link values by name, sort the nodes topologically
 * (Kahn), and note each value's last use; then the inspection accessors.
 * See docs/ONNX.md. */
#include "onnx/import.h"

#include "onnx/proto_fields.h"
#include "onnx/protobuf.h"
#include "util/grow.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *onnx_node_label(const onnx_node *n)
{
    if (n->name && n->name[0])
        return n->name;
    for (size_t i = 0; i < n->n_output; i++)
        if (n->output[i] && n->output[i][0])
            return n->output[i];
    return "?";
}

void tg_onnx_free(tg_onnx_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_inits; i++)
        tg_release(m->inits[i]);
    for (int i = 0; m->nodes && i < m->n_nodes; i++) {
        mnode *mn = &m->nodes[i];
        free(mn->in);
        free(mn->out);
        for (int k = 0; k < mn->n_subs; k++)
            tg_onnx_free(mn->subs[k]);
        free(mn->subs);
        free(mn->sub_names);
        free(mn->implicit);
    }
    free(m->outer_names);
    free(m->outer_vid);
    free(m->inputs);
    free(m->outputs);
    free(m->input_vi);
    free(m->init_names);
    free(m->inits);
    free(m->nodes);
    free(m->order);
    free(m->values);
    free(m->output_vid);
    free(m->last_use);
    tg__hmap_free(&m->names);
    for (int i = 0; i < m->n_types; i++) {
        onnx_pb_clear(&onnx_pb_type, m->types[i]);
        free(m->types[i]);
    }
    free(m->types);
    onnx_model_free(m->pm);
    free(m);
}

static void *load_fail(tg_onnx_model *m)
{
    tg_onnx_free(m);
    return NULL;
}

/* the element type of a sequence_type (4) or optional_type (9) kept in
 * t's unknown bytes: *field says which, *inner is the element's TypeProto
 * (parsed, owned by m). Maps and sparse tensors are TG_ERR_UNSUPPORTED. */
static tg_status nested_type(tg_onnx_model *m, const onnx_type *t, const char *what,
                             const char *name, int *field, const onnx_type **inner)
{
    *field = 0;
    *inner = NULL;
    const uint8_t *elem = NULL;
    size_t elem_len = 0;
    tg_pb_reader r;
    tg_pb_field f;
    int st = 0;
    if (t->unknown.data)
        tg_pb_reader_init(&r, t->unknown.data, t->unknown.data, t->unknown.len);
    while (t->unknown.data && (st = tg_pb_next(&r, &f)) > 0) {
        if (f.number == 5 || f.number == 8)
            return tg__error(TG_ERR_UNSUPPORTED, "onnx: %s '%s' is a %s (not supported)", what,
                             nz(name), f.number == 5 ? "map" : "sparse tensor");
        if (f.number != 4 && f.number != 9)
            continue;
        if (f.wire != TG_PB_LEN)
            return tg__error(TG_ERR_IO, "onnx: %s '%s': its %s type is not a message", what,
                             nz(name), f.number == 4 ? "sequence" : "optional");
        *field = (int)f.number; /* a oneof: the last member present counts */
        elem = NULL;
        tg_pb_reader r2;
        tg_pb_field f2;
        int st2;
        tg_pb_reader_init(&r2, f.data, f.data, f.len);
        while ((st2 = tg_pb_next(&r2, &f2)) > 0)
            if (f2.number == 1 && f2.wire == TG_PB_LEN) {
                elem = f2.data;
                elem_len = f2.len;
            }
        if (st2 < 0)
            return tg__error(TG_ERR_IO, "onnx: %s '%s': its %s type is malformed: %s", what,
                             nz(name), f.number == 4 ? "sequence" : "optional", r2.err);
    }
    if (st < 0)
        return tg__error(TG_ERR_IO, "onnx: %s '%s': its type is malformed: %s", what,
                         nz(name), r.err);
    if (!*field)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: %s '%s' has no tensor, sequence or "
                         "optional type", what, nz(name));
    if (!elem)
        return tg__error(TG_ERR_IO, "onnx: %s '%s': its %s type has no element type", what,
                         nz(name), *field == 4 ? "sequence" : "optional");
    onnx_type *e = calloc(1, sizeof *e);
    if (!e || !TG_GROW(m->types, m->cap_types, m->n_types + 1)) {
        free(e);
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    }
    m->types[m->n_types++] = e; /* freed with m, parsed or not */
    if (onnx_message_parse(&onnx_pb_type, elem, elem_len, e) != TG_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        return tg__error(TG_ERR_IO, "onnx: %s '%s': its element type: %s", what, nz(name), msg);
    }
    *inner = e;
    return TG_OK;
}

/* a value info's type as a tg_onnx_value_info (sequences and optionals
 * of tensors decoded into m->types); what names the entry */
static tg_status read_value_info(tg_onnx_model *m, const onnx_value_info *vi, const char *what,
                                 tg_onnx_value_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = vi->name;
    if (!vi->has_type)
        return tg__error(TG_ERR_IO, "onnx: %s '%s' has no type", what, nz(vi->name));
    const onnx_type *t = &vi->type;
    while (!t->has_tensor_type) {
        int field;
        const onnx_type *inner;
        tg_status s = nested_type(m, t, what, vi->name, &field, &inner);
        if (s != TG_OK)
            return s;
        if (out->kind != TG_ONNX_TENSOR && (field == 9 || out->kind != TG_ONNX_OPTIONAL))
            return tg__error(TG_ERR_UNSUPPORTED, "onnx: %s '%s' is %s of %s (tensorgraph "
                             "takes sequences and optionals of tensors, and optional "
                             "sequences)", what, nz(vi->name),
                             out->kind == TG_ONNX_OPTIONAL ? "an optional" : "a sequence",
                             field == 9 ? "optionals" : "sequences");
        out->kind = field == 9 ? TG_ONNX_OPTIONAL
                  : out->kind == TG_ONNX_OPTIONAL ? TG_ONNX_OPTIONAL_SEQUENCE
                  : TG_ONNX_SEQUENCE;
        t = inner;
    }
    out->onnx_type = t->elem_type;
    tg_status s = onnx_storage_dtype(t->elem_type, &out->dtype);
    if (s != TG_OK)
        return tg__error(s, "onnx: %s '%s' has data type %s (%d), which is not supported",
                         what, nz(vi->name), onnx_data_type_name(t->elem_type),
                         (int)t->elem_type);
    if (!t->has_shape) {
        out->ndim = -1;
        return TG_OK;
    }
    if (t->n_dims > TG_MAX_DIMS)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: %s '%s' has rank %zu (at most %d)",
                         what, nz(vi->name), t->n_dims, TG_MAX_DIMS);
    out->ndim = (int)t->n_dims;
    for (int i = 0; i < out->ndim; i++) {
        const onnx_dim *d = &t->dims[i];
        out->shape[i] = -1;
        if (d->kind == ONNX_DIM_VALUE) {
            if (d->value < 0)
                return tg__error(TG_ERR_IO, "onnx: %s '%s' has a negative dim %lld",
                                 what, nz(vi->name), (long long)d->value);
            out->shape[i] = d->value;
        } else if (d->kind == ONNX_DIM_PARAM && d->param && d->param[0]) {
            out->dim_param[i] = d->param;
        }
    }
    return TG_OK;
}

/* ---- the checks of tg_onnx_load ------------------------------------------------ */
static tg_status find_opset(tg_onnx_model *m)
{
    const onnx_model *pm = m->pm;
    m->opset = -1;
    for (size_t i = 0; i < pm->n_opset_import; i++) {
        const char *d = nz(pm->opset_import[i].domain);
        if (!d[0] || !strcmp(d, "ai.onnx"))
            m->opset = pm->opset_import[i].version;
        else if (!strcmp(d, ONNX_TRAINING_DOMAIN))
            m->training_opset = pm->opset_import[i].version > 0 ? pm->opset_import[i].version
                                                               : 0;
    }
    /* a model of only optimizer ops may import nothing else; its
     * default-domain nodes, if any, are refused by check_ops */
    if (m->opset < 0 && m->training_opset > 0)
        m->opset = 0;
    else if (m->opset < 0)
        return tg__error(TG_ERR_IO, "onnx: the model imports no version of the default "
                         "(ai.onnx) operator set");
    else if (m->opset > ONNX_MAX_OPSET)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: the model uses opset %lld; tensorgraph "
                         "imports opsets up to %d", (long long)m->opset, ONNX_MAX_OPSET);
    else if (m->opset < 1)
        return tg__error(TG_ERR_IO, "onnx: opset version %lld is not valid",
                         (long long)m->opset);
    return TG_OK;
}

tg_status onnx_add_value(tg_onnx_model *m, const char *name, mvalue v, const char *what)
{
    if (!name || !name[0])
        return tg__error(TG_ERR_IO, "onnx: %s has an empty name", what);
    int old = tg__hmap_get(&m->names, name);
    if (old >= 0)
        return tg__error(TG_ERR_IO, "onnx: the value '%s' is defined twice (%s)", name, what);
    if (m->n_values == m->cap_values) { /* outer values come after the reserved ones */
        int cap = m->cap_values * 2 + 8;
        mvalue *nv = realloc(m->values, ((size_t)cap + 1) * sizeof *nv);
        if (!nv)
            return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        m->values = nv;
        m->cap_values = cap;
    }
    v.name = name;
    m->values[m->n_values] = v;
    if (!tg__hmap_put(&m->names, name, m->n_values))
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    m->n_values++;
    return TG_OK;
}

static bool unsupported(const mnode *mn) { return !mn->entry || mn->version <= 0; }

/* the entry of check_ops' message for node i's op type (and domain):
 * "Op-v (why) (nodes 'a', 'b', ...)", marking the nodes it lists seen */
static void describe_unsupported(const tg_onnx_model *m, size_t i, bool *seen,
                                 tg_strbuf *b)
{
    const onnx_graph *g = m->graph;
    const onnx_node *n = &g->node[i];
    const onnx_op_entry *e = m->nodes[i].entry;
    const char *dom = nz(n->domain), *op = nz(n->op_type);
    int have = e ? onnx_op_version(e, m->opset) : 0;
    bool training = !strcmp(dom, ONNX_TRAINING_DOMAIN);
    if (training)
        tg__strbuf_printf(b, "%s.%s (%s)", dom, op, !e ? "not imported"
                          : m->training_opset ? "tensorgraph implements version 1 of the "
                          "domain" : "the model does not import the domain");
    else if (e && !m->opset)
        tg__strbuf_printf(b, "%s (the model imports no version of the default ai.onnx "
                          "operator set)", op);
    else if (e && have)
        tg__strbuf_printf(b, "%s-%d (the version in opset %lld; tensorgraph implements "
                          "%s from version %d)", op, have, (long long)m->opset, op,
                          onnx_op_min_version(e));
    else if (e)
        tg__strbuf_printf(b, "%s (not in opset %lld)", op, (long long)m->opset);
    else
        tg__strbuf_printf(b, "%s%s%s", dom, dom[0] ? "." : "", op);
    tg_strbuf nodes = {0};
    int count = 0;
    for (size_t j = i; j < g->n_node; j++) {
        const onnx_node *o = &g->node[j];
        if (seen[j] || !unsupported(&m->nodes[j]) || strcmp(nz(o->op_type), op) ||
            strcmp(nz(o->domain), dom))
            continue;
        seen[j] = true;
        if (count++ < 4)
            tg__strbuf_printf(&nodes, "%s'%s'", count > 1 ? ", " : "", onnx_node_label(o));
    }
    tg__strbuf_printf(b, " (node%s %s%s)", count > 1 ? "s" : "", nodes.data ? nodes.data : "",
                      count > 4 ? ", ..." : "");
    b->failed |= nodes.failed;
    tg__strbuf_free(&nodes);
}

/* one TG_ERR_UNSUPPORTED message listing every unsupported op type and the
 * nodes that use it (versions too old or too new are listed the same way) */
static tg_status check_ops(tg_onnx_model *m)
{
    const onnx_graph *g = m->graph;
    tg_strbuf msg = {0};
    int n_bad = 0;
    bool *seen = calloc(g->n_node + 1, 1);
    if (!seen)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (size_t i = 0; i < g->n_node; i++) {
        if (!unsupported(&m->nodes[i]) || seen[i])
            continue;
        if (n_bad++)
            tg__strbuf_puts(&msg, "; ");
        describe_unsupported(m, i, seen, &msg);
    }
    free(seen);
    tg_status s = TG_OK;
    if (msg.failed)
        s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    else if (n_bad)
        s = tg__error(TG_ERR_UNSUPPORTED, "onnx: unsupported op%s: %s", n_bad > 1 ? "s" : "",
                      msg.data);
    tg__strbuf_free(&msg);
    return s;
}

static tg_status check_nodes(tg_onnx_model *m)
{
    const onnx_graph *g = m->graph;
    for (size_t i = 0; i < g->n_node; i++) {
        const onnx_node *n = &g->node[i];
        mnode *mn = &m->nodes[i];
        mn->node = n;
        const char *dom = nz(n->domain);
        if (!n->op_type || !n->op_type[0])
            return tg__error(TG_ERR_IO, "onnx: node %zu ('%s') has no op_type", i,
                             onnx_node_label(n));
        if (!dom[0] || !strcmp(dom, "ai.onnx")) {
            mn->entry = onnx_op_lookup(n->op_type);
            if (mn->entry) {
                int v = onnx_op_version(mn->entry, m->opset);
                mn->version = v >= onnx_op_min_version(mn->entry) ? v : 0;
            }
        } else if (!strcmp(dom, ONNX_TRAINING_DOMAIN)) {
            /* the domain has one version; a model must import it */
            mn->entry = onnx_training_op_lookup(n->op_type);
            mn->version = mn->entry && m->training_opset == 1 ? 1 : 0;
        }
    }
    tg_status s = check_ops(m);
    if (s != TG_OK)
        return s;
    for (size_t i = 0; i < g->n_node; i++) {
        const onnx_node *n = &g->node[i];
        const onnx_op_entry *e = m->nodes[i].entry;
        /* trailing "" inputs/outputs are omitted optional ones */
        size_t ni = n->n_input, no = n->n_output;
        while (ni && !nz(n->input[ni - 1])[0])
            ni--;
        while (no && !nz(n->output[no - 1])[0])
            no--;
        int eff;
        if (onnx_check_version_inputs(n, m->nodes[i].version, (int)ni, &eff) != TG_OK)
            return tg_last_status();
        ni = (size_t)eff;
        if ((int)ni < e->min_in || (int)n->n_input > ONNX_MAX_IO ||
            (e->max_in >= 0 && (int)ni > e->max_in))
        {
            char want[48];
            if (e->max_in == e->min_in)
                snprintf(want, sizeof want, "%d", e->min_in);
            else
                snprintf(want, sizeof want, "%d to %d", e->min_in,
                         e->max_in < 0 ? ONNX_MAX_IO : e->max_in);
            return tg__error(TG_ERR_IO, "onnx: node '%s' (%s) has %zu inputs, expected %s",
                             onnx_node_label(n), n->op_type, ni, want);
        }
        if ((int)no < e->min_out || (int)no > e->max_out || n->n_output > ONNX_MAX_IO)
            return tg__error(TG_ERR_IO, "onnx: node '%s' (%s) has %zu outputs, expected "
                             "%d to %d", onnx_node_label(n), n->op_type, no, e->min_out,
                             e->max_out);
        for (size_t j = 0; j < n->n_attribute; j++)
            if (!n->attribute[j].name || !n->attribute[j].name[0])
                return tg__error(TG_ERR_IO, "onnx: node '%s' (%s) has an attribute "
                                 "without a name", onnx_node_label(n), n->op_type);
    }
    return TG_OK;
}

/* Kahn's algorithm over node -> consumer edges; a leftover node is on a
 * cycle (or depends on one) */
static tg_status sort_nodes(tg_onnx_model *m)
{
    int nn = m->n_nodes;
    int *pending = calloc((size_t)nn + 1, sizeof *pending);
    int *head = malloc(((size_t)nn + 1) * sizeof *head);
    int n_edges = 0;
    for (int i = 0; i < nn; i++)
        n_edges += (int)m->nodes[i].node->n_input + m->nodes[i].n_implicit;
    int *next = malloc(((size_t)n_edges + 1) * sizeof *next);
    int *dst = malloc(((size_t)n_edges + 1) * sizeof *dst);
    m->order = malloc(((size_t)nn + 1) * sizeof *m->order);
    if (!pending || !head || !next || !dst || !m->order) {
        free(pending); free(head); free(next); free(dst);
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    }
    for (int i = 0; i < nn; i++)
        head[i] = -1;
    int e = 0;
    for (int i = 0; i < nn; i++)
        for (int j = 0; j < mnode_n_reads(&m->nodes[i]); j++) {
            int v = mnode_read(&m->nodes[i], j);
            if (v < 0 || m->values[v].kind != SRC_NODE)
                continue;
            int p = m->values[v].index;
            dst[e] = i;
            next[e] = head[p];
            head[p] = e++;
            pending[i]++;
        }
    int n_done = 0;
    for (int i = 0; i < nn; i++)
        if (!pending[i])
            m->order[n_done++] = i;
    for (int k = 0; k < n_done; k++)
        for (int x = head[m->order[k]]; x >= 0; x = next[x])
            if (--pending[dst[x]] == 0)
                m->order[n_done++] = dst[x];
    tg_status s = TG_OK;
    if (n_done < nn)
        for (int i = 0; i < nn; i++)
            if (pending[i]) {
                s = tg__error(TG_ERR_IO, "onnx: the graph has a cycle through node '%s' "
                              "(%s)", onnx_node_label(m->nodes[i].node),
                              m->nodes[i].node->op_type);
                break;
            }
    free(pending); free(head); free(next); free(dst);
    return s;
}

static tg_status link_values(tg_onnx_model *m)
{
    const onnx_graph *g = m->graph;
    for (int i = 0; i < m->n_nodes; i++) {
        const onnx_node *n = &g->node[i];
        mnode *mn = &m->nodes[i];
        mn->in = malloc((n->n_input + 1) * sizeof *mn->in);
        mn->out = malloc((n->n_output + 1) * sizeof *mn->out);
        if (!mn->in || !mn->out)
            return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        for (size_t j = 0; j < n->n_output; j++) {
            mn->out[j] = -1;
            if (!nz(n->output[j])[0])
                continue;
            char what[200];
            snprintf(what, sizeof what, "output %zu of node '%s' (%s)", j,
                     onnx_node_label(n), n->op_type);
            tg_status s = onnx_add_value(m, n->output[j], (mvalue){0, SRC_NODE, i, (int)j}, what);
            if (s != TG_OK)
                return s;
            mn->out[j] = m->n_values - 1;
        }
    }
    for (int i = 0; i < m->n_nodes; i++) {
        const onnx_node *n = &g->node[i];
        for (size_t j = 0; j < n->n_input; j++) {
            m->nodes[i].in[j] = -1;
            if (!nz(n->input[j])[0])
                continue;
            int v = tg__hmap_get(&m->names, n->input[j]);
            if (v < 0 && m->parent) {
                v = onnx_outer_value(m, n->input[j]);
                if (v < 0 && tg_last_status() != TG_ERR_IO)
                    return tg_last_status();
                tg_clear_error();
            }
            if (v < 0)
                return tg__error(TG_ERR_IO, "onnx: input '%s' of node '%s' (%s) is not a "
                                 "graph input, an initializer or a node's output",
                                 n->input[j], onnx_node_label(n), n->op_type);
            m->nodes[i].in[j] = v;
        }
        tg_status s = onnx_load_subgraphs(m, i);
        if (s != TG_OK)
            return s;
    }
    return TG_OK;
}

static tg_status load_io(tg_onnx_model *m)
{
    const onnx_graph *g = m->graph;
    size_t n_names = g->n_input + g->n_initializer;
    for (size_t i = 0; i < g->n_node; i++)
        n_names += g->node[i].n_output;
    m->names = tg__hmap_strings();
    if (!tg__hmap_reserve(&m->names, n_names))
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    m->values = calloc(n_names + 1, sizeof *m->values);
    m->cap_values = (int)n_names;
    m->inits = calloc(g->n_initializer + 1, sizeof *m->inits);
    m->init_names = calloc(g->n_initializer + 1, sizeof *m->init_names);
    m->inputs = calloc(g->n_input + 1, sizeof *m->inputs);
    m->input_vi = calloc(g->n_input + 1, sizeof *m->input_vi);
    m->outputs = calloc(g->n_output + 1, sizeof *m->outputs);
    m->output_vid = calloc(g->n_output + 1, sizeof *m->output_vid);
    m->nodes = calloc(g->n_node + 1, sizeof *m->nodes);
    if (!m->values || !m->inits || !m->init_names || !m->inputs || !m->input_vi ||
        !m->outputs || !m->output_vid || !m->nodes)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    m->n_nodes = (int)g->n_node;
    /* initializers first: graph inputs that repeat one (IR < 4 style
     * defaults) are taken as the initializer */
    tg_scope_begin();
    for (size_t i = 0; i < g->n_initializer; i++) {
        const onnx_tensor *tp = &g->initializer[i];
        char what[64];
        snprintf(what, sizeof what, "initializer %zu", i);
        tg_status s = onnx_add_value(m, tp->name, (mvalue){0, SRC_INIT, m->n_inits, 0}, what);
        if (s != TG_OK) {
            tg_scope_end();
            return s;
        }
        tg_tensor *t = onnx_tensor_to_tg_wide(tp);
        if (!t) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", tg_last_error());
            tg_scope_end();
            return tg__error(tg_last_status(), "onnx: initializer '%s': %s", tp->name, msg);
        }
        if (!onnx_extent_ok(tg_ndim(t), tg_shape(t))) {
            tg_scope_end();
            return tg__error(TG_ERR_UNSUPPORTED, "onnx: initializer '%s' has dims over %lld "
                             "elements", tp->name, (long long)ONNX_IMPORT_MAX_ELEMENTS);
        }
        m->init_names[m->n_inits] = tp->name;
        m->inits[m->n_inits++] = tg_retain(t);
    }
    tg_scope_end();
    for (size_t i = 0; i < g->n_input; i++) {
        const onnx_value_info *vi = &g->input[i];
        if (vi->name && tg__hmap_get(&m->names, vi->name) >= 0 &&
            m->values[tg__hmap_get(&m->names, vi->name)].kind == SRC_INIT)
            continue;
        char what[64];
        snprintf(what, sizeof what, "graph input %zu", i);
        tg_status s = onnx_add_value(m, vi->name, (mvalue){0, SRC_INPUT, m->n_inputs, 0}, what);
        if (s == TG_OK && m->parent && !vi->has_type) /* a subgraph's: as given */
            m->inputs[m->n_inputs] = (tg_onnx_value_info){.name = vi->name, .ndim = -1};
        else if (s == TG_OK)
            s = read_value_info(m, vi, "graph input", &m->inputs[m->n_inputs]);
        if (s != TG_OK)
            return s;
        m->input_vi[m->n_inputs++] = vi;
    }
    return TG_OK;
}

static tg_status load_outputs(tg_onnx_model *m)
{
    const onnx_graph *g = m->graph;
    if (!g->n_output)
        return tg__error(TG_ERR_IO, "onnx: the graph has no outputs");
    for (size_t i = 0; i < g->n_output; i++) {
        const onnx_value_info *vi = &g->output[i];
        int v = tg__hmap_get(&m->names, nz(vi->name));
        if (v < 0 && m->parent && nz(vi->name)[0]) {
            v = onnx_outer_value(m, vi->name);
            if (v < 0 && tg_last_status() != TG_ERR_IO)
                return tg_last_status();
            tg_clear_error();
        }
        if (v < 0)
            return tg__error(TG_ERR_IO, "onnx: graph output '%s' is not produced by any "
                             "node, input or initializer", nz(vi->name));
        tg_status s = vi->has_type ? read_value_info(m, vi, "graph output", &m->outputs[i])
                                   : TG_OK;
        if (!vi->has_type) {
            m->outputs[i] = (tg_onnx_value_info){.name = vi->name, .ndim = -1,
                                                 .dtype = TG_FLOAT32};
        }
        if (s != TG_OK)
            return s;
        m->output_vid[i] = v;
        m->n_outputs++;
    }
    return TG_OK;
}

/* when each value is last read (graph outputs: never released) */
static tg_status compute_last_use(tg_onnx_model *m)
{
    m->last_use = malloc(((size_t)m->n_values + 1) * sizeof *m->last_use);
    if (!m->last_use)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (int v = 0; v < m->n_values; v++)
        m->last_use[v] = -1;
    for (int k = 0; k < m->n_nodes; k++) {
        const mnode *mn = &m->nodes[m->order[k]];
        for (int j = 0; j < mnode_n_reads(mn); j++)
            if (mnode_read(mn, j) >= 0)
                m->last_use[mnode_read(mn, j)] = k;
    }
    for (int i = 0; i < m->n_outputs; i++)
        m->last_use[m->output_vid[i]] = m->n_nodes;
    return TG_OK;
}

/* a model (pm, its graph) or a subgraph g of parent (pm NULL): every
 * check, the values linked, the nodes sorted */
tg_onnx_model *onnx_load_graph(onnx_model *pm, const onnx_graph *g,
                               const tg_onnx_model *parent)
{
    tg_onnx_model *m = calloc(1, sizeof *m);
    if (!m) {
        onnx_model_free(pm);
        return tg__error_null(TG_ERR_NOMEM, "onnx: out of memory");
    }
    m->pm = pm;
    m->graph = g;
    m->parent = parent;
    if (!g)
        return tg__error_null(TG_ERR_IO, "onnx: the model has no graph"), load_fail(m);
    if (parent) {
        m->opset = parent->opset;
        m->training_opset = parent->training_opset;
    }
    if ((!parent && find_opset(m) != TG_OK) || load_io(m) != TG_OK ||
        check_nodes(m) != TG_OK || link_values(m) != TG_OK || load_outputs(m) != TG_OK ||
        sort_nodes(m) != TG_OK || compute_last_use(m) != TG_OK)
        return load_fail(m);
    return m;
}

static tg_onnx_model *load_parsed(onnx_model *pm)
{
    return onnx_load_graph(pm, pm->graph, NULL);
}

tg_onnx_model *tg_onnx_load_bytes(const void *data, size_t len)
{
    onnx_model *pm = NULL;
    if (!data && len)
        return tg__error_null(TG_ERR_ARG, "tg_onnx_load_bytes: data is NULL");
    if (onnx_model_parse(data ? data : "", len, &pm) != TG_OK)
        return NULL;
    return load_parsed(pm);
}

tg_onnx_model *tg_onnx_load(const char *path)
{
    onnx_model *pm = NULL;
    if (!path)
        return tg__error_null(TG_ERR_ARG, "tg_onnx_load: path is NULL");
    tg_onnx_model *m = NULL;
    if (onnx_model_load_file(path, &pm) == TG_OK)
        m = load_parsed(pm);
    if (!m && !strstr(tg_last_error(), path)) { /* name the file */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        tg__error(tg_last_status(), "%s: %s", path, msg);
    }
    return m;
}

/* ---- inspection ------------------------------------------------------------------ */
int64_t tg_onnx_opset(const tg_onnx_model *m) { return m ? m->opset : -1; }
const char *tg_onnx_producer(const tg_onnx_model *m)
{
    return m ? nz(m->pm->producer_name) : "";
}
int tg_onnx_num_inputs(const tg_onnx_model *m) { return m ? m->n_inputs : 0; }
int tg_onnx_num_outputs(const tg_onnx_model *m) { return m ? m->n_outputs : 0; }
int tg_onnx_num_initializers(const tg_onnx_model *m) { return m ? m->n_inits : 0; }
int tg_onnx_num_nodes(const tg_onnx_model *m) { return m ? m->n_nodes : 0; }

tg_status tg_onnx_input_info(const tg_onnx_model *m, int i, tg_onnx_value_info *out)
{
    if (!m || !out || i < 0 || i >= m->n_inputs)
        return tg__error(TG_ERR_INDEX, "tg_onnx_input_info: no input %d", i);
    *out = m->inputs[i];
    return TG_OK;
}

tg_status tg_onnx_output_info(const tg_onnx_model *m, int i, tg_onnx_value_info *out)
{
    if (!m || !out || i < 0 || i >= m->n_outputs)
        return tg__error(TG_ERR_INDEX, "tg_onnx_output_info: no output %d", i);
    *out = m->outputs[i];
    return TG_OK;
}

const char *tg_onnx_initializer_name(const tg_onnx_model *m, int i)
{
    return m && i >= 0 && i < m->n_inits ? m->init_names[i] : NULL;
}

tg_tensor *tg_onnx_initializer(const tg_onnx_model *m, int i)
{
    return m && i >= 0 && i < m->n_inits ? m->inits[i] : NULL;
}

int64_t tg_onnx_num_parameters(const tg_onnx_model *m)
{
    int64_t n = 0;
    for (int i = 0; m && i < m->n_inits; i++)
        if (tg_dtype_is_float(tg_dtype_of(m->inits[i])))
            n += tg_numel(m->inits[i]);
    return n;
}

const char *tg_onnx_node_op(const tg_onnx_model *m, int i)
{
    return m && i >= 0 && i < m->n_nodes ? m->nodes[i].node->op_type : NULL;
}

const char *tg_onnx_node_name(const tg_onnx_model *m, int i)
{
    return m && i >= 0 && i < m->n_nodes ? nz(m->nodes[i].node->name) : NULL;
}

