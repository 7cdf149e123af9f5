/* The ONNX importer: loads and checks a model, then builds it (graph or eager
 * mode, one walk) by calling each node's mapping (onnx_ops_*.c); tg_onnx_run;
 * helpers the mappings share. See docs/ONNX.md. */
#include "io/onnx_ops.h"

#include "core/tensor_impl.h"
#include "graph/graph_impl.h"
#include "io/protobuf.h"
#include "util/hmap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the product of the non-zero dims: what a tensor of this shape would
 * hold if its empty dims were not empty (reductions over them produce it) */
static bool extent_ok(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] && n > ONNX_IMPORT_MAX_ELEMENTS / shape[i]))
            return false;
        n *= shape[i] ? shape[i] : 1;
    }
    return n <= ONNX_IMPORT_MAX_ELEMENTS;
}

/* ==== the loaded model ========================================================= */
typedef enum { SRC_INPUT, SRC_INIT, SRC_NODE } src_kind;

typedef struct mvalue { /* a named value of the ONNX graph */
    const char *name;
    src_kind kind;
    int index; /* input, initializer or node index */
    int out;   /* SRC_NODE: which output */
} mvalue;

typedef struct mnode {
    const onnx_node *node;
    const onnx_op_entry *entry;
    int version;
    int *in;  /* value ids, -1 for "" */
    int *out; /* value ids, -1 for "" */
} mnode;

struct tg_onnx_model {
    onnx_model *pm;
    int64_t opset;
    int n_inputs, n_outputs, n_inits, n_nodes, n_values;
    tg_onnx_value_info *inputs, *outputs;
    const onnx_value_info **input_vi;  /* the model's input entries */
    const char **init_names;
    tg_tensor **inits;
    mnode *nodes;  /* in model order */
    int *order;    /* a topological order of nodes */
    mvalue *values;
    int *output_vid;
    int *last_use; /* per value: position in order of its last consumer */
    tg_hmap names; /* value name -> value id */
};

static const char *nz(const char *s) { return s ? s : ""; }

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
    for (int i = 0; i < m->n_nodes; i++) {
        free(m->nodes[i].in);
        free(m->nodes[i].out);
    }
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
    onnx_model_free(m->pm);
    free(m);
}

static void *load_fail(tg_onnx_model *m)
{
    tg_onnx_free(m);
    return NULL;
}

/* ---- types ------------------------------------------------------------------ */
tg_status onnx_storage_dtype(int32_t t, tg_dtype *out)
{
    switch (t) {
    case ONNX_FLOAT: case ONNX_FLOAT16: case ONNX_BFLOAT16: *out = TG_FLOAT32; return TG_OK;
    case ONNX_DOUBLE: *out = TG_FLOAT64; return TG_OK;
    case ONNX_INT8: case ONNX_INT16: case ONNX_UINT16: case ONNX_INT32:
        *out = TG_INT32; return TG_OK;
    case ONNX_UINT32: case ONNX_UINT64: case ONNX_INT64: *out = TG_INT64; return TG_OK;
    case ONNX_UINT8: *out = TG_UINT8; return TG_OK;
    case ONNX_BOOL: *out = TG_BOOL; return TG_OK;
    default:
        return tg__error(TG_ERR_UNSUPPORTED, "ONNX data type %s (%d) is not supported",
                         onnx_data_type_name(t), (int)t);
    }
}

static float half_to_float(uint16_t h, bool bfloat)
{
    if (bfloat) {
        uint32_t bits = (uint32_t)h << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    int e = (h >> 10) & 31, mant = h & 1023;
    float v;
    if (e == 0)
        v = ldexpf((float)mant, -24);
    else if (e == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexpf((float)(mant | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* uint64_data (field 11) of a TensorProto, which the format layer keeps
 * in `unknown`: packed or not. Returns the count, -1 on malformed bytes. */
static int64_t unknown_uint64s(const onnx_tensor *tp, uint64_t *out, int64_t cap)
{
    tg_pb_reader r;
    tg_pb_field f;
    int64_t n = 0;
    int k;
    if (!tp->unknown.data)
        return 0;
    tg_pb_reader_init(&r, tp->unknown.data, tp->unknown.data, tp->unknown.len);
    while ((k = tg_pb_next(&r, &f)) == 1) {
        if (f.number != 11)
            continue;
        if (f.wire == TG_PB_VARINT) {
            if (out && n < cap)
                out[n] = f.u;
            n++;
        } else if (f.wire == TG_PB_LEN) {
            const uint8_t *p = f.data, *end = f.data + f.len;
            while (p < end) {
                uint64_t v;
                if (!tg_pb_read_varint(&p, end, &v))
                    return -1;
                if (out && n < cap)
                    out[n] = v;
                n++;
            }
        } else {
            return -1;
        }
    }
    return k < 0 ? -1 : n;
}

tg_tensor *onnx_tensor_to_tg_wide(const onnx_tensor *tp)
{
    int32_t t = tp->data_type;
    int esize;
    switch (t) {
    case ONNX_INT8: esize = 1; break;
    case ONNX_INT16: case ONNX_UINT16: case ONNX_FLOAT16: case ONNX_BFLOAT16: esize = 2; break;
    case ONNX_UINT32: esize = 4; break;
    case ONNX_UINT64: esize = 8; break;
    default: return onnx_tensor_to_tg(tp);
    }
    const char *nm = nz(tp->name);
    if (tp->data_location == ONNX_DATA_EXTERNAL)
        return tg__error_null(TG_ERR_UNSUPPORTED, "onnx: TensorProto '%s' keeps its "
                              "data in an external file, which is not supported", nm);
    if (tp->n_dims > TG_MAX_DIMS)
        return tg__error_null(TG_ERR_UNSUPPORTED, "onnx: TensorProto '%s' has %zu dims "
                              "(at most %d)", nm, tp->n_dims, TG_MAX_DIMS);
    int64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0 || (tp->dims[i] && numel > ONNX_MAX_ELEMENTS / tp->dims[i]))
            return tg__error_null(TG_ERR_IO, "onnx: TensorProto '%s' has bad dims "
                                  "(negative or over %lld elements)", nm,
                                  (long long)ONNX_MAX_ELEMENTS);
        numel *= tp->dims[i];
    }
    tg_dtype dt;
    onnx_storage_dtype(t, &dt);
    bool u64field = t == ONNX_UINT32 || t == ONNX_UINT64;
    int64_t n64 = u64field ? unknown_uint64s(tp, NULL, 0) : 0;
    if (n64 < 0)
        return tg__error_null(TG_ERR_IO, "onnx: TensorProto '%s': malformed uint64_data", nm);
    bool ok = tp->raw_data.data ? tp->raw_data.len == (size_t)numel * (size_t)esize
              : u64field        ? n64 == numel
                                : tp->n_int32_data == (size_t)numel;
    if (!ok)
        return tg__error_null(TG_ERR_IO, "onnx: TensorProto '%s' (%s) holds a wrong "
                              "amount of data for %lld elements", nm,
                              onnx_data_type_name(t), (long long)numel);
    int64_t shape[TG_MAX_DIMS];
    for (size_t i = 0; i < tp->n_dims; i++)
        shape[i] = tp->dims[i];
    tg_tensor *out = tg__alloc(dt, (int)tp->n_dims, shape);
    if (!out)
        return NULL;
    uint64_t *u64 = NULL;
    if (!tp->raw_data.data && u64field && numel) {
        u64 = malloc((size_t)numel * sizeof *u64);
        if (!u64) {
            tg_release(out);
            return tg__error_null(TG_ERR_NOMEM, "onnx: out of memory");
        }
        unknown_uint64s(tp, u64, numel);
    }
    const uint8_t *raw = tp->raw_data.data;
    for (int64_t i = 0; i < numel; i++) {
        uint64_t bits = 0;
        if (raw)
            for (int b = 0; b < esize; b++)
                bits |= (uint64_t)raw[i * esize + b] << (8 * b);
        else if (u64)
            bits = u64[i];
        else
            bits = (uint32_t)tp->int32_data[i];
        switch (t) {
        case ONNX_INT8: ((int32_t *)tg__base(out))[i] = (int8_t)(uint8_t)bits; break;
        case ONNX_INT16: ((int32_t *)tg__base(out))[i] = (int16_t)(uint16_t)bits; break;
        case ONNX_UINT16: ((int32_t *)tg__base(out))[i] = (uint16_t)bits; break;
        case ONNX_UINT32: ((int64_t *)tg__base(out))[i] = (uint32_t)bits; break;
        case ONNX_UINT64: ((int64_t *)tg__base(out))[i] = (int64_t)bits; break;
        default:
            ((float *)tg__base(out))[i] = half_to_float((uint16_t)bits, t == ONNX_BFLOAT16);
        }
    }
    free(u64);
    return tg__publish(out);
}

/* a value info's type as a tg_onnx_value_info; what names the entry */
static tg_status read_value_info(const onnx_value_info *vi, const char *what,
                                 tg_onnx_value_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = vi->name;
    if (!vi->has_type || !vi->type.has_tensor_type)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: %s '%s' is not a tensor (sequences, "
                         "maps and optionals are not supported)", what, nz(vi->name));
    out->onnx_type = vi->type.elem_type;
    tg_status s = onnx_storage_dtype(vi->type.elem_type, &out->dtype);
    if (s != TG_OK)
        return tg__error(s, "onnx: %s '%s' has data type %s (%d), which is not supported",
                         what, nz(vi->name), onnx_data_type_name(vi->type.elem_type),
                         (int)vi->type.elem_type);
    if (!vi->type.has_shape) {
        out->ndim = -1;
        return TG_OK;
    }
    if (vi->type.n_dims > TG_MAX_DIMS)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: %s '%s' has rank %zu (at most %d)",
                         what, nz(vi->name), vi->type.n_dims, TG_MAX_DIMS);
    out->ndim = (int)vi->type.n_dims;
    for (int i = 0; i < out->ndim; i++) {
        const onnx_dim *d = &vi->type.dims[i];
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
    }
    if (m->opset < 0)
        return tg__error(TG_ERR_IO, "onnx: the model imports no version of the default "
                         "(ai.onnx) operator set");
    if (m->opset > ONNX_MAX_OPSET)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: the model uses opset %lld; tensorgraph "
                         "imports opsets up to %d", (long long)m->opset, ONNX_MAX_OPSET);
    if (m->opset < 1)
        return tg__error(TG_ERR_IO, "onnx: opset version %lld is not valid",
                         (long long)m->opset);
    return TG_OK;
}

static tg_status add_name(tg_onnx_model *m, const char *name, mvalue v, const char *what)
{
    if (!name || !name[0])
        return tg__error(TG_ERR_IO, "onnx: %s has an empty name", what);
    int old = tg__hmap_get(&m->names, name);
    if (old >= 0)
        return tg__error(TG_ERR_IO, "onnx: the value '%s' is defined twice (%s)", name, what);
    v.name = name;
    m->values[m->n_values] = v;
    tg__hmap_put(&m->names, name, m->n_values++); /* reserved: cannot fail */
    return TG_OK;
}

/* one TG_ERR_UNSUPPORTED message listing every unsupported op type and the
 * nodes that use it (versions too old or too new are listed the same way) */
static tg_status check_ops(tg_onnx_model *m)
{
    const onnx_graph *g = m->pm->graph;
    char msg[900];
    size_t len = 0;
    int n_bad = 0;
    bool *seen = calloc(g->n_node + 1, 1);
    if (!seen)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (size_t i = 0; i < g->n_node; i++) {
        if ((m->nodes[i].entry && m->nodes[i].version > 0) || seen[i])
            continue;
        const onnx_node *n = &g->node[i];
        /* this op type (and domain): one entry listing all its nodes */
        char why[160];
        const char *dom = nz(n->domain);
        int have = m->nodes[i].entry ? onnx_op_version(m->nodes[i].entry, m->opset) : 0;
        if (m->nodes[i].entry && have)
            snprintf(why, sizeof why, "%s-%d (the version in opset %lld; tensorgraph "
                     "implements %s from version %d)", nz(n->op_type), have,
                     (long long)m->opset, nz(n->op_type),
                     onnx_op_min_version(m->nodes[i].entry));
        else if (m->nodes[i].entry)
            snprintf(why, sizeof why, "%s (not in opset %lld)", nz(n->op_type),
                     (long long)m->opset);
        else
            snprintf(why, sizeof why, "%s%s%s", dom, dom[0] ? "." : "", nz(n->op_type));
        char nodes[400];
        size_t nl = 0;
        int count = 0;
        for (size_t j = i; j < g->n_node; j++) {
            const onnx_node *o = &g->node[j];
            if (seen[j] || (m->nodes[j].entry && m->nodes[j].version > 0) ||
                strcmp(nz(o->op_type), nz(n->op_type)) || strcmp(nz(o->domain), dom))
                continue;
            seen[j] = true;
            if (count < 4 && nl < sizeof nodes) {
                int u = snprintf(nodes + nl, sizeof nodes - nl, "%s'%s'", count ? ", " : "",
                                 onnx_node_label(o));
                nl = u > 0 ? nl + (size_t)u : nl;
            }
            count++;
        }
        if (nl >= sizeof nodes)
            nl = sizeof nodes - 1;
        nodes[nl] = '\0';
        int used = snprintf(msg + len, sizeof msg - len, "%s%s (node%s %s%s)",
                            n_bad ? "; " : "", why, count > 1 ? "s" : "", nodes,
                            count > 4 ? ", ..." : "");
        if (used > 0)
            len = len + (size_t)used < sizeof msg ? len + (size_t)used : sizeof msg - 1;
        n_bad++;
    }
    free(seen);
    if (!n_bad)
        return TG_OK;
    return tg__error(TG_ERR_UNSUPPORTED, "onnx: unsupported op%s: %s", n_bad > 1 ? "s" : "",
                     msg);
}

static tg_status check_nodes(tg_onnx_model *m)
{
    const onnx_graph *g = m->pm->graph;
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
        for (size_t j = 0; j < m->nodes[i].node->n_input; j++)
            n_edges += m->nodes[i].in[j] >= 0;
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
        for (size_t j = 0; j < m->nodes[i].node->n_input; j++) {
            int v = m->nodes[i].in[j];
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
    const onnx_graph *g = m->pm->graph;
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
            tg_status s = add_name(m, n->output[j], (mvalue){0, SRC_NODE, i, (int)j}, what);
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
            if (v < 0)
                return tg__error(TG_ERR_IO, "onnx: input '%s' of node '%s' (%s) is not a "
                                 "graph input, an initializer or a node's output",
                                 n->input[j], onnx_node_label(n), n->op_type);
            m->nodes[i].in[j] = v;
        }
    }
    return TG_OK;
}

static tg_status load_io(tg_onnx_model *m)
{
    const onnx_graph *g = m->pm->graph;
    size_t n_names = g->n_input + g->n_initializer;
    for (size_t i = 0; i < g->n_node; i++)
        n_names += g->node[i].n_output;
    m->names = tg__hmap_strings();
    if (!tg__hmap_reserve(&m->names, n_names))
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    m->values = calloc(n_names + 1, sizeof *m->values);
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
        tg_status s = add_name(m, tp->name, (mvalue){0, SRC_INIT, m->n_inits, 0}, what);
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
        if (!extent_ok(tg_ndim(t), tg_shape(t))) {
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
        tg_status s = add_name(m, vi->name, (mvalue){0, SRC_INPUT, m->n_inputs, 0}, what);
        if (s == TG_OK)
            s = read_value_info(vi, "graph input", &m->inputs[m->n_inputs]);
        if (s != TG_OK)
            return s;
        m->input_vi[m->n_inputs++] = vi;
    }
    return TG_OK;
}

static tg_status load_outputs(tg_onnx_model *m)
{
    const onnx_graph *g = m->pm->graph;
    if (!g->n_output)
        return tg__error(TG_ERR_IO, "onnx: the graph has no outputs");
    for (size_t i = 0; i < g->n_output; i++) {
        const onnx_value_info *vi = &g->output[i];
        int v = tg__hmap_get(&m->names, nz(vi->name));
        if (v < 0)
            return tg__error(TG_ERR_IO, "onnx: graph output '%s' is not produced by any "
                             "node, input or initializer", nz(vi->name));
        tg_status s = vi->has_type ? read_value_info(vi, "graph output", &m->outputs[i])
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
        for (size_t j = 0; j < mn->node->n_input; j++)
            if (mn->in[j] >= 0)
                m->last_use[mn->in[j]] = k;
    }
    for (int i = 0; i < m->n_outputs; i++)
        m->last_use[m->output_vid[i]] = m->n_nodes;
    return TG_OK;
}

static tg_onnx_model *load_parsed(onnx_model *pm)
{
    tg_onnx_model *m = calloc(1, sizeof *m);
    if (!m) {
        onnx_model_free(pm);
        return tg__error_null(TG_ERR_NOMEM, "onnx: out of memory");
    }
    m->pm = pm;
    if (!pm->graph)
        return tg__error_null(TG_ERR_IO, "onnx: the model has no graph"), load_fail(m);
    if (find_opset(m) != TG_OK || load_io(m) != TG_OK || check_nodes(m) != TG_OK ||
        link_values(m) != TG_OK || load_outputs(m) != TG_OK || sort_nodes(m) != TG_OK ||
        compute_last_use(m) != TG_OK)
        return load_fail(m);
    return m;
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

/* ==== building ==================================================================== */
struct tg_onnx_net {
    bool graph_mode;
    int n_inputs, n_inits, n_outputs;
    tg_tensor **inputs, **inits, **outputs;
    const char **output_names;
};

void tg_onnx_net_free(tg_onnx_net *net)
{
    if (!net)
        return;
    for (int i = 0; i < net->n_inputs; i++)
        tg_release(net->inputs[i]);
    for (int i = 0; i < net->n_inits; i++)
        tg_release(net->inits[i]);
    for (int i = 0; i < net->n_outputs; i++)
        tg_release(net->outputs[i]);
    free(net->inputs);
    free(net->inits);
    free(net->outputs);
    free(net->output_names);
    free(net);
}

bool tg_onnx_net_is_graph(const tg_onnx_net *n) { return n && n->graph_mode; }
int tg_onnx_net_num_outputs(const tg_onnx_net *n) { return n ? n->n_outputs : 0; }
const char *tg_onnx_net_output_name(const tg_onnx_net *n, int i)
{
    return n && i >= 0 && i < n->n_outputs ? n->output_names[i] : NULL;
}
tg_tensor *tg_onnx_net_output(const tg_onnx_net *n, int i)
{
    return n && i >= 0 && i < n->n_outputs ? n->outputs[i] : NULL;
}
tg_tensor *tg_onnx_net_input(const tg_onnx_net *n, int i)
{
    return n && i >= 0 && i < n->n_inputs ? n->inputs[i] : NULL;
}
tg_tensor *tg_onnx_net_initializer(const tg_onnx_net *n, int i)
{
    return n && i >= 0 && i < n->n_inits ? n->inits[i] : NULL;
}

/* graph node names allow letters, digits and _ . / -: others become _ */
static void graph_name(const char *src, char *dst, size_t cap)
{
    size_t n = 0;
    for (; *src && n + 1 < cap; src++) {
        char ch = *src;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '/' ||
                  ch == '-';
        dst[n++] = ok ? ch : '_';
    }
    if (!n)
        dst[n++] = '_';
    dst[n] = '\0';
}

/* names the graph node that produced the output t of an ONNX node after
 * the ONNX value (when the node is new and the name free), for dumps */
static void name_node(tg_tensor *t, int first_node, const char *onnx_name)
{
    if (!t || !t->graph || t->graph->values[t->value].node < first_node ||
        t->graph->n_nodes > 20000)
        return;
    char buf[256];
    graph_name(onnx_name, buf, sizeof buf);
    if (tg__hmap_get(&t->graph->names, buf) >= 0)
        return;
    if (tg_graph_set_name(t, buf) != TG_OK)
        tg_clear_error();
}

typedef struct build_state {
    const tg_onnx_model *m;
    const tg_onnx_opts *opts;
    tg_graph *g;
    tg_tensor **vals;
    bool *known;
    tg_tensor **given; /* per model input, or NULL */
    int64_t *dims;           /* per model input: resolved shape */
    tg_generator *gen;
} build_state;

/* the concrete shape of model input i */
static tg_status resolve_input(build_state *b, int i, int64_t *shape, int *ndim)
{
    const tg_onnx_value_info *vi = &b->m->inputs[i];
    tg_tensor *given = b->given[i];
    if (given && tg_dtype_of(given) != vi->dtype)
        return tg__error(TG_ERR_ARG, "onnx: input '%s' has dtype %s, the model expects "
                         "%s (%s)", vi->name, tg_dtype_name(tg_dtype_of(given)),
                         tg_dtype_name(vi->dtype), onnx_data_type_name(vi->onnx_type));
    if (vi->ndim < 0) {
        if (!given)
            return tg__error(TG_ERR_ARG, "onnx: input '%s' has no shape in the model: "
                             "give a tensor for it", vi->name);
        *ndim = tg_ndim(given);
        memcpy(shape, tg_shape(given), (size_t)*ndim * sizeof *shape);
        return TG_OK;
    }
    *ndim = vi->ndim;
    char s1[160], s2[160];
    if (given && tg_ndim(given) != vi->ndim)
        goto bad_shape;
    for (int d = 0; d < vi->ndim; d++) {
        int64_t v = vi->shape[d];
        if (v < 0 && vi->dim_param[d] && b->opts)
            for (int k = 0; k < b->opts->n_dims; k++)
                if (b->opts->dim_names[k] && !strcmp(b->opts->dim_names[k], vi->dim_param[d]))
                    v = b->opts->dim_values[k];
        if (given) {
            if (v >= 0 && v != tg_shape(given)[d])
                goto bad_shape;
            v = tg_shape(given)[d];
        }
        if (v < 0)
            return tg__error(TG_ERR_ARG, "onnx: input '%s' dim %d (%s) is not fixed by the "
                             "model: give the input or bind the dim", vi->name, d,
                             vi->dim_param[d] ? vi->dim_param[d] : "unknown");
        shape[d] = v;
    }
    return TG_OK;
bad_shape:;
    int64_t want[TG_MAX_DIMS];
    for (int d = 0; d < vi->ndim; d++)
        want[d] = vi->shape[d];
    return tg__error(TG_ERR_ARG, "onnx: input '%s' has shape %s, the model expects %s "
                     "(-1: any)", vi->name,
                     tg_shape_str(tg_ndim(given), tg_shape(given), s1, sizeof s1),
                     tg_shape_str(vi->ndim, want, s2, sizeof s2));
}

/* the same symbol must get the same value in every input */
static tg_status check_dim_params(build_state *b)
{
    const tg_onnx_model *m = b->m;
    for (int i = 0; i < m->n_inputs; i++)
        for (int d = 0; d < m->inputs[i].ndim; d++) {
            const char *p = m->inputs[i].dim_param[d];
            if (!p)
                continue;
            for (int j = 0; j <= i; j++)
                for (int e = 0; e < m->inputs[j].ndim; e++) {
                    if ((j == i && e >= d) || !m->inputs[j].dim_param[e] ||
                        strcmp(m->inputs[j].dim_param[e], p))
                        continue;
                    int64_t a = b->dims[i * TG_MAX_DIMS + d], c = b->dims[j * TG_MAX_DIMS + e];
                    if (a != c)
                        return tg__error(TG_ERR_ARG, "onnx: dim '%s' is %lld in input '%s' "
                                         "but %lld in input '%s'", p, (long long)a,
                                         m->inputs[i].name, (long long)c, m->inputs[j].name);
                }
        }
    return TG_OK;
}

static tg_status bind_inputs(build_state *b, tg_onnx_net *net, int n, const char *const *names,
                             tg_tensor *const *inputs)
{
    const tg_onnx_model *m = b->m;
    for (int k = 0; k < n; k++) {
        if (!names || !names[k] || !inputs || !inputs[k])
            return tg__error(TG_ERR_ARG, "tg_onnx_build: input %d has no name or tensor", k);
        int v = tg__hmap_get(&m->names, names[k]);
        if (v < 0 || m->values[v].kind != SRC_INPUT) {
            char list[400];
            size_t len = 0;
            for (int i = 0; i < m->n_inputs && len < sizeof list - 60; i++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", i ? ", " : "",
                                        m->inputs[i].name);
            if (!m->n_inputs)
                snprintf(list, sizeof list, "none");
            return tg__error(TG_ERR_ARG, "onnx: '%s' is not an input of the model (its "
                             "inputs: %s)", names[k], list);
        }
        int i = m->values[v].index;
        if (b->given[i])
            return tg__error(TG_ERR_ARG, "onnx: input '%s' is given twice", names[k]);
        b->given[i] = inputs[k];
    }
    for (int i = 0; i < m->n_inputs; i++) {
        if (!b->g && !b->given[i])
            return tg__error(TG_ERR_ARG, "onnx: missing input '%s' (%s%s)",
                             m->inputs[i].name, tg_dtype_name(m->inputs[i].dtype),
                             m->inputs[i].ndim < 0 ? ", any shape" : "");
        int ndim;
        tg_status s = resolve_input(b, i, b->dims + i * TG_MAX_DIMS, &ndim);
        if (s != TG_OK)
            return s;
    }
    tg_status s = check_dim_params(b);
    if (s != TG_OK)
        return s;
    for (int i = 0; i < m->n_inputs; i++) {
        int nd = m->inputs[i].ndim >= 0 ? m->inputs[i].ndim : tg_ndim(b->given[i]);
        if (!extent_ok(nd, b->dims + i * TG_MAX_DIMS))
            return tg__error(TG_ERR_UNSUPPORTED, "onnx: input '%s' has dims over %lld "
                             "elements", m->inputs[i].name, (long long)ONNX_IMPORT_MAX_ELEMENTS);
    }
    for (int i = 0; i < m->n_inputs; i++) {
        tg_tensor *t;
        if (b->g) {
            char nm[256];
            graph_name(m->inputs[i].name, nm, sizeof nm);
            if (tg__hmap_get(&b->g->names, nm) >= 0)
                snprintf(nm, sizeof nm, "input_%d", i);
            int ndim;
            resolve_input(b, i, b->dims + i * TG_MAX_DIMS, &ndim);
            t = tg_placeholder(b->g, tg__hmap_get(&b->g->names, nm) >= 0 ? NULL : nm,
                               m->inputs[i].dtype, ndim, b->dims + i * TG_MAX_DIMS);
            if (!t)
                return tg_last_status();
        } else {
            t = b->given[i];
        }
        net->inputs[i] = tg_retain(t);
        b->vals[tg__hmap_get(&m->names, m->inputs[i].name)] = tg_retain(t);
    }
    return TG_OK;
}

static tg_status bind_initializers(build_state *b, tg_onnx_net *net)
{
    const tg_onnx_model *m = b->m;
    bool trainable = b->opts && b->opts->trainable;
    for (int i = 0; i < m->n_inits; i++) {
        tg_tensor *src = m->inits[i], *t;
        int v = tg__hmap_get(&m->names, m->init_names[i]);
        bool param = trainable && tg_dtype_is_float(tg_dtype_of(src));
        if (param && b->g) {
            char nm[256];
            graph_name(m->init_names[i], nm, sizeof nm);
            t = tg_variable(b->g, tg__hmap_get(&b->g->names, nm) >= 0 ? NULL : nm, src);
        } else if (param) { /* a copy: training must not change the model */
            t = tg_clone(src);
            if (t && tg_set_requires_grad(t, true) != TG_OK)
                t = NULL;
        } else {
            t = src;
        }
        if (!t)
            return tg_last_status();
        net->inits[i] = tg_retain(t);
        b->vals[v] = tg_retain(t);
        b->known[v] = !param;
    }
    return TG_OK;
}

/* prefixes the current error with the node, unless it already names one */
/* prefixes the current error with the node, unless it already names one;
 * an op rejecting what the model feeds it (shapes, dtypes, axes) means
 * the model is inconsistent: TG_ERR_IO */
static tg_status node_error(const onnx_node *n, tg_status s)
{
    if (tg_last_status() != TG_OK)
        s = tg_last_status();
    if (s == TG_OK)
        s = TG_ERR_INTERNAL;
    if (s == TG_ERR_ARG || s == TG_ERR_SHAPE || s == TG_ERR_DTYPE || s == TG_ERR_INDEX)
        s = TG_ERR_IO;
    char copy[1024]; /* tg_last_error's buffer is the one written below */
    snprintf(copy, sizeof copy, "%s", tg_last_error()[0] ? tg_last_error()
                                                         : "failed without a message");
    if (!strncmp(copy, "ONNX node", 9))
        return tg__error(s, "%s", copy);
    return tg__error(s, "ONNX node '%s' (%s): %s", onnx_node_label(n), n->op_type, copy);
}

/* Before a node runs eagerly (folding, or eager mode), the same mapping
 * is built into a scratch graph, which allocates nothing, and the output
 * sizes are checked there: a hostile model cannot make a kernel allocate
 * an absurd tensor (say, a reduction over an empty dim of a huge tensor) */
static tg_status sizes_ok(const mnode *mn, const onnx_ictx *c0)
{
    onnx_ictx c = *c0;
    memset(c.out, 0, sizeof c.out);
    memset(c.out_known, 0, sizeof c.out_known);
    c.n_tmp = 0;
    c.graph_mode = true;
    c.folding = false;
    tg_graph *g = tg_graph_new("size_check");
    if (!g)
        return tg_last_status();
    tg_status s = tg_graph_begin(g);
    tg_scope_begin();
    if (s == TG_OK) {
        s = mn->entry->import(&c);
        tg_graph_end();
    }
    for (int j = 0; s == TG_OK && j < c.n_out; j++)
        if (c.out[j])
            s = onnx_check_numel(&c, tg_ndim(c.out[j]), tg_shape(c.out[j]), "an output");
    tg_scope_end();
    tg_graph_free(g);
    for (int k = 0; k < c.n_tmp; k++)
        free(c.tmp[k]);
    return s;
}

static tg_status build_node(build_state *b, const mnode *mn)
{
    const onnx_node *n = mn->node;
    onnx_ictx c;
    memset(&c, 0, sizeof c);
    c.node = n;
    c.version = mn->version;
    c.graph_mode = b->g != NULL;
    c.n_in = (int)n->n_input;
    c.n_out = (int)n->n_output;
    c.gen = b->gen;
    bool all_known = !(mn->entry->flags & ONNX_OP_NO_FOLD);
    for (int j = 0; j < c.n_in; j++) {
        int v = mn->in[j];
        c.in[j] = v >= 0 ? b->vals[v] : NULL;
        c.known[j] = v >= 0 && b->known[v];
        c.val[j] = c.known[j] ? c.in[j] : NULL;
        if (v >= 0 && !c.val[j] && b->opts && b->opts->specialize &&
            b->m->values[v].kind == SRC_INPUT)
            c.val[j] = b->given[b->m->values[v].index];
        if (v >= 0 && !c.in[j])
            return tg__error(TG_ERR_INTERNAL, "onnx: value '%s' was released early",
                             n->input[j]);
        if (v >= 0 && !c.known[j])
            all_known = false;
    }
    c.folding = all_known;
    if ((all_known || !b->g) && sizes_ok(mn, &c) != TG_OK)
        return node_error(n, tg_last_status());
    int first_node = b->g ? b->g->n_nodes : 0;
    int old_floor = 0;
    tg_scope_begin();
    if (all_known) {
        old_floor = tg__graph_suspend();
        tg_no_grad_begin();
    }
    tg_status s = mn->entry->import(&c);
    for (int j = 0; s == TG_OK && j < c.n_out; j++)
        if (mn->out[j] >= 0 && !c.out[j])
            s = tg__error_is_set() ? tg_last_status()
                                   : tg__error(TG_ERR_UNSUPPORTED, "output %d (%s) is not "
                                               "supported", j, n->output[j]);
    /* in graph mode nothing was allocated yet: a huge value stops here */
    for (int j = 0; s == TG_OK && j < c.n_out; j++)
        if (c.out[j])
            s = onnx_check_numel(&c, tg_ndim(c.out[j]), tg_shape(c.out[j]), "an output");
    if (s == TG_OK)
        for (int j = 0; j < c.n_out; j++) {
            int v = mn->out[j];
            if (v < 0)
                continue;
            b->vals[v] = tg_retain(c.out[j]);
            b->known[v] = (all_known || c.out_known[j]) && !tg_is_symbolic(c.out[j]);
            if (b->g)
                name_node(c.out[j], first_node, n->output[j]);
        }
    if (all_known) {
        tg_no_grad_end();
        tg__graph_resume(old_floor);
    }
    tg_scope_end();
    for (int k = 0; k < c.n_tmp; k++)
        free(c.tmp[k]);
    return s == TG_OK ? TG_OK : node_error(n, s);
}

/* the declared dtype and shape of graph output i, when the model gives them */
static tg_status check_output(const tg_onnx_model *m, int i, const tg_tensor *t)
{
    const tg_onnx_value_info *vi = &m->outputs[i];
    char s1[160], s2[160];
    if (vi->ndim < 0 && !vi->onnx_type)
        return TG_OK;
    if (vi->onnx_type && tg_dtype_of(t) != vi->dtype)
        return tg__error(TG_ERR_IO, "onnx: output '%s' is %s but the model "
                         "declares %s (%s)", vi->name, tg_dtype_name(tg_dtype_of(t)),
                         tg_dtype_name(vi->dtype), onnx_data_type_name(vi->onnx_type));
    if (vi->ndim < 0)
        return TG_OK;
    bool ok = vi->ndim == tg_ndim(t);
    for (int d = 0; ok && d < vi->ndim; d++)
        ok = vi->shape[d] < 0 || vi->shape[d] == tg_shape(t)[d];
    if (!ok)
        return tg__error(TG_ERR_IO, "onnx: output '%s' has shape %s but the model "
                         "declares %s (-1: any)", vi->name,
                         tg_shape_str(tg_ndim(t), tg_shape(t), s1, sizeof s1),
                         tg_shape_str(vi->ndim, vi->shape, s2, sizeof s2));
    return TG_OK;
}

static void state_free(build_state *b)
{
    for (int v = 0; b->vals && v < b->m->n_values; v++)
        tg_release(b->vals[v]);
    free(b->vals);
    free(b->known);
    free(b->given);
    free(b->dims);
    tg_generator_free(b->gen);
}

tg_onnx_net *tg_onnx_build(const tg_onnx_model *m, int n_inputs, const char *const *names,
                           tg_tensor *const *inputs, const tg_onnx_opts *opts)
{
    if (!m)
        return tg__error_null(TG_ERR_ARG, "tg_onnx_build: model is NULL");
    if (n_inputs < 0)
        return tg__error_null(TG_ERR_ARG, "tg_onnx_build: n_inputs is negative");
    build_state b = {.m = m, .opts = opts, .g = tg_graph_current()};
    tg_onnx_net *net = calloc(1, sizeof *net);
    b.vals = calloc((size_t)m->n_values + 1, sizeof *b.vals);
    b.known = calloc((size_t)m->n_values + 1, sizeof *b.known);
    b.given = calloc((size_t)m->n_inputs + 1, sizeof *b.given);
    b.dims = calloc(((size_t)m->n_inputs + 1) * TG_MAX_DIMS, sizeof *b.dims);
    b.gen = tg_generator_new(0);
    if (net) {
        net->graph_mode = b.g != NULL;
        net->inputs = calloc((size_t)m->n_inputs + 1, sizeof *net->inputs);
        net->inits = calloc((size_t)m->n_inits + 1, sizeof *net->inits);
        net->outputs = calloc((size_t)m->n_outputs + 1, sizeof *net->outputs);
        net->output_names = calloc((size_t)m->n_outputs + 1, sizeof *net->output_names);
        net->n_inputs = m->n_inputs;
        net->n_inits = m->n_inits;
        net->n_outputs = m->n_outputs;
    }
    if (!net || !b.vals || !b.known || !b.given || !b.dims || !b.gen || !net->inputs ||
        !net->inits || !net->outputs || !net->output_names) {
        tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        goto fail;
    }
    tg_scope_begin(); /* placeholders, variables, leaves: the net retains them */
    tg_status s = bind_inputs(&b, net, n_inputs, names, inputs);
    if (s == TG_OK)
        s = bind_initializers(&b, net);
    tg_scope_end();
    if (s != TG_OK)
        goto fail;
    for (int k = 0; k < m->n_nodes; k++) {
        const mnode *mn = &m->nodes[m->order[k]];
        if (build_node(&b, mn) != TG_OK)
            goto fail;
        /* values no later node reads are dropped (eager memory) */
        for (size_t j = 0; j < mn->node->n_input; j++) {
            int v = mn->in[j];
            if (v >= 0 && m->last_use[v] == k && b.vals[v]) {
                tg_release(b.vals[v]);
                b.vals[v] = NULL;
            }
        }
    }
    for (int i = 0; i < m->n_outputs; i++) {
        tg_tensor *t = b.vals[m->output_vid[i]];
        if (!t) {
            tg__error(TG_ERR_INTERNAL, "onnx: output '%s' was not computed",
                      m->outputs[i].name);
            goto fail;
        }
        if (check_output(m, i, t) != TG_OK)
            goto fail;
        net->outputs[i] = tg_retain(t);
        net->output_names[i] = m->outputs[i].name;
    }
    state_free(&b);
    return net;
fail:
    state_free(&b);
    tg_onnx_net_free(net);
    return NULL;
}

/* ==== running ======================================================================= */
static tg_tensor *float_sum(tg_onnx_net *net)
{
    tg_tensor *total = NULL;
    for (int i = 0; i < net->n_outputs; i++) {
        tg_tensor *o = net->outputs[i];
        if (!tg_dtype_is_float(tg_dtype_of(o)))
            continue;
        tg_tensor *s = tg_sum(onnx_as(o, TG_FLOAT64), 0, NULL, false);
        total = total ? tg_add(total, s) : s;
    }
    return total;
}

/* a value may be listed as an output more than once (PyTorch exports
 * `return y, y` so): it counts once per listing in the sum that --grad
 * differentiates, as in PyTorch, but is written once */
static bool listed_earlier(const tg_onnx_model *m, int i)
{
    for (int j = 0; j < i; j++)
        if (!strcmp(m->outputs[j].name, m->outputs[i].name))
            return true;
    return false;
}

static tg_status add_zeros_or(tg_state_dict *sd, const char *name, tg_tensor *like,
                              tg_tensor *grad)
{
    /* grad: a new reference the caller releases; zeros: scope-owned */
    tg_tensor *z = grad ? grad : tg_zeros(tg_dtype_of(like), tg_ndim(like), tg_shape(like));
    return z ? tg_state_dict_add(sd, name, z) : tg_last_status();
}

/* the float inputs and initializers gradients are taken for */
static int grad_targets(const tg_onnx_model *m, tg_onnx_net *net, tg_tensor **xs,
                        const char **names)
{
    int n = 0;
    for (int i = 0; i < m->n_inputs; i++)
        if (tg_dtype_is_float(m->inputs[i].dtype)) {
            names[n] = m->inputs[i].name;
            xs[n++] = net->inputs[i];
        }
    for (int i = 0; i < m->n_inits; i++)
        if (tg_dtype_is_float(tg_dtype_of(m->inits[i]))) {
            names[n] = m->init_names[i];
            xs[n++] = net->inits[i];
        }
    return n;
}

static tg_status run_eager(const tg_onnx_model *m, int n, const char *const *names,
                           tg_tensor *const *inputs, tg_state_dict *outs,
                           tg_state_dict *grads)
{
    tg_tensor **ins = calloc((size_t)n + 1, sizeof *ins);
    if (!ins)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    tg_status s = TG_OK;
    for (int i = 0; i < n; i++) {
        ins[i] = inputs[i] ? tg_detach(inputs[i]) : NULL;
        if (grads && ins[i] && tg_dtype_is_float(tg_dtype_of(ins[i])))
            tg_set_requires_grad(ins[i], true);
    }
    tg_onnx_opts o = {.trainable = grads != NULL, .specialize = true};
    tg_onnx_net *net = tg_onnx_build(m, n, names, ins, &o);
    if (!net)
        s = tg_last_status();
    for (int i = 0; s == TG_OK && i < net->n_outputs; i++)
        if (!listed_earlier(m, i))
            s = tg_state_dict_add(outs, net->output_names[i], tg_detach(net->outputs[i]));
    if (s == TG_OK && grads) {
        int nx = m->n_inputs + m->n_inits;
        tg_tensor **xs = calloc((size_t)nx + 1, sizeof *xs);
        tg_tensor **res = calloc((size_t)nx + 1, sizeof *res);
        const char **xn = calloc((size_t)nx + 1, sizeof *xn);
        if (!xs || !res || !xn)
            s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        nx = s == TG_OK ? grad_targets(m, net, xs, xn) : 0;
        tg_tensor *loss = s == TG_OK ? float_sum(net) : NULL;
        if (s == TG_OK && !loss)
            s = tg__error(TG_ERR_ARG, "onnx: --grad needs a floating-point output");
        bool any = false;
        for (int i = 0; i < nx; i++)
            any = any || tg_requires_grad(xs[i]);
        if (s == TG_OK && any && tg_requires_grad(loss)) {
            /* only the xs requiring grad can be asked for */
            tg_tensor **req = calloc((size_t)nx + 1, sizeof *req);
            tg_tensor **rr = calloc((size_t)nx + 1, sizeof *rr);
            int nr = 0;
            for (int i = 0; req && i < nx; i++)
                if (tg_requires_grad(xs[i]))
                    req[nr++] = xs[i];
            s = req && rr ? tg_autograd_grad(1, &loss, NULL, nr, req, rr, false, false)
                          : tg__error(TG_ERR_NOMEM, "onnx: out of memory");
            for (int i = 0, k = 0; s == TG_OK && i < nx; i++)
                if (tg_requires_grad(xs[i]))
                    res[i] = rr[k++];
            free(req);
            free(rr);
        }
        for (int i = 0; s == TG_OK && i < nx; i++)
            s = add_zeros_or(grads, xn[i], xs[i], res[i]);
        for (int i = 0; res && i < nx; i++)
            tg_release(res[i]);
        free(xs);
        free(res);
        free(xn);
    }
    tg_onnx_net_free(net);
    free(ins); /* the detached inputs belong to tg_onnx_run's scope */
    return s;
}

static tg_status run_graph(const tg_onnx_model *m, int n, const char *const *names,
                           tg_tensor *const *inputs, tg_state_dict *outs,
                           tg_state_dict *grads)
{
    tg_graph *g = tg_graph_new("onnx");
    if (!g)
        return tg_last_status();
    if (tg_graph_begin(g) != TG_OK) {
        tg_graph_free(g);
        return tg_last_status();
    }
    tg_onnx_opts o = {.trainable = grads != NULL, .specialize = true};
    tg_onnx_net *net = tg_onnx_build(m, n, names, inputs, &o);
    tg_status s = net ? TG_OK : tg_last_status();
    int nx = m->n_inputs + m->n_inits, nf = 0;
    tg_tensor **xs = calloc((size_t)nx + 1, sizeof *xs);
    tg_tensor **dxs = calloc((size_t)nx + 1, sizeof *dxs);
    const char **xn = calloc((size_t)nx + 1, sizeof *xn);
    int nfetch_max = m->n_outputs + nx;
    tg_tensor **fetch = calloc((size_t)nfetch_max + 1, sizeof *fetch);
    tg_tensor **res = calloc((size_t)nfetch_max + 1, sizeof *res);
    tg_tensor **feed_v = calloc((size_t)m->n_inputs + 1, sizeof *feed_v);
    tg_tensor **feed_t = calloc((size_t)m->n_inputs + 1, sizeof *feed_t);
    if (s == TG_OK && (!xs || !dxs || !xn || !fetch || !res || !feed_v || !feed_t))
        s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    if (s == TG_OK && grads) {
        nx = grad_targets(m, net, xs, xn);
        tg_tensor *loss = float_sum(net);
        if (!loss)
            s = tg__error(TG_ERR_ARG, "onnx: --grad needs a floating-point output");
        else if (tg_is_symbolic(loss) && nx)
            s = tg_graph_gradients(g, 1, &loss, NULL, nx, xs, dxs);
    }
    tg_graph_end();
    /* feeds: the model's inputs, matched by name */
    int n_feeds = 0;
    for (int i = 0; s == TG_OK && i < m->n_inputs; i++)
        for (int k = 0; k < n; k++)
            if (!strcmp(names[k], m->inputs[i].name)) {
                feed_v[n_feeds] = net->inputs[i];
                feed_t[n_feeds++] = inputs[k];
            }
    /* fetches: symbolic results that are not fed */
    tg_tensor **want = calloc((size_t)nfetch_max + 1, sizeof *want);
    int n_want = 0;
    if (s == TG_OK && !want)
        s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (int i = 0; s == TG_OK && i < m->n_outputs; i++)
        want[n_want++] = net->outputs[i];
    for (int i = 0; s == TG_OK && grads && i < nx; i++)
        want[n_want++] = dxs[i];
    int *slot = calloc((size_t)nfetch_max + 1, sizeof *slot);
    if (s == TG_OK && !slot)
        s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (int i = 0; s == TG_OK && i < n_want; i++) {
        slot[i] = -1;
        tg_tensor *w = want[i];
        if (!w || !tg_is_symbolic(w))
            continue;
        bool fed = false;
        for (int k = 0; k < n_feeds; k++)
            if (feed_v[k] == w || (feed_v[k]->graph == w->graph && feed_v[k]->value == w->value))
                fed = true, want[i] = feed_t[k];
        if (fed)
            continue;
        int found = -1;
        for (int k = 0; k < nf; k++)
            if (fetch[k]->value == w->value)
                found = k;
        if (found < 0) {
            fetch[nf] = w;
            found = nf++;
        }
        slot[i] = found;
    }
    if (s == TG_OK && nf > 0) {
        tg_session *sess = tg_session_new(g);
        s = sess ? tg_session_run(sess, n_feeds, feed_v, feed_t, nf, fetch, res, 0, NULL)
                 : tg_last_status();
        tg_session_free(sess);
    }
    for (int i = 0; s == TG_OK && i < n_want; i++) {
        tg_tensor *v = slot[i] >= 0 ? res[slot[i]] : want[i];
        if (i < m->n_outputs && listed_earlier(m, i)) {
            continue;
        } else if (i < m->n_outputs) {
            tg_tensor *c = tg_clone(v);
            s = c ? tg_state_dict_add(outs, m->outputs[i].name, c) : tg_last_status();
        } else {
            s = add_zeros_or(grads, xn[i - m->n_outputs], xs[i - m->n_outputs], v);
        }
    }
    free(slot); /* results and gradients belong to tg_onnx_run's scope */
    free(want);
    free(xs);
    free(dxs);
    free(xn);
    free(fetch);
    free(res);
    free(feed_v);
    free(feed_t);
    tg_onnx_net_free(net);
    tg_graph_free(g);
    return s;
}

tg_status tg_onnx_run(const tg_onnx_model *m, tg_onnx_mode mode, int n_inputs,
                      const char *const *names, tg_tensor *const *inputs,
                      tg_state_dict **outputs, tg_state_dict **grads)
{
    if (!m || !outputs)
        return tg__error(TG_ERR_ARG, "tg_onnx_run: model or outputs is NULL");
    if (n_inputs < 0 || (n_inputs && (!names || !inputs)))
        return tg__error(TG_ERR_ARG, "tg_onnx_run: bad inputs");
    for (int i = 0; i < n_inputs; i++)
        if (!names[i] || !inputs[i])
            return tg__error(TG_ERR_ARG, "tg_onnx_run: input %d has no name or tensor", i);
    *outputs = tg_state_dict_new();
    if (grads)
        *grads = tg_state_dict_new();
    if (!*outputs || (grads && !*grads)) {
        tg_state_dict_free(*outputs);
        *outputs = NULL;
        if (grads) {
            tg_state_dict_free(*grads);
            *grads = NULL;
        }
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    }
    tg_scope_begin();
    tg_status s = mode == TG_ONNX_GRAPH
                      ? run_graph(m, n_inputs, names, inputs, *outputs, grads ? *grads : NULL)
                      : run_eager(m, n_inputs, names, inputs, *outputs, grads ? *grads : NULL);
    tg_scope_end();
    if (s != TG_OK) {
        tg_state_dict_free(*outputs);
        *outputs = NULL;
        if (grads) {
            tg_state_dict_free(*grads);
            *grads = NULL;
        }
    }
    return s;
}

/* ==== helpers for the mappings ========================================================= */
tg_status onnx_err(const onnx_ictx *c, tg_status s, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tg__error(s, "ONNX node '%s' (%s): %s", onnx_node_label(c->node),
                     c->node->op_type, msg);
}

const onnx_attribute *onnx_attr(const onnx_ictx *c, const char *name)
{
    for (size_t i = 0; i < c->node->n_attribute; i++)
        if (c->node->attribute[i].name && !strcmp(c->node->attribute[i].name, name))
            return &c->node->attribute[i];
    return NULL;
}

/* attribute a has type `want` (producers that omit the type field are
 * judged by which field is present) */
static tg_status attr_type(const onnx_ictx *c, const onnx_attribute *a, int want)
{
    int t = a->type;
    if (!a->has_type || t == ONNX_ATTR_UNDEFINED)
        t = a->has_f ? ONNX_ATTR_FLOAT : a->has_i ? ONNX_ATTR_INT
            : a->s.data ? ONNX_ATTR_STRING : a->t ? ONNX_ATTR_TENSOR
            : a->n_ints ? ONNX_ATTR_INTS : a->n_floats ? ONNX_ATTR_FLOATS : want;
    if (t == want)
        return TG_OK;
    return onnx_err(c, TG_ERR_IO, "attribute '%s' should be %s, got %s", a->name,
                    onnx_attribute_type_name(want), onnx_attribute_type_name(t));
}

tg_status oa_int(const onnx_ictx *c, const char *name, int64_t dflt, int64_t *out)
{
    const onnx_attribute *a = onnx_attr(c, name);
    *out = dflt;
    if (!a)
        return TG_OK;
    tg_status s = attr_type(c, a, ONNX_ATTR_INT);
    if (s == TG_OK)
        *out = a->i;
    return s;
}

tg_status oa_float(const onnx_ictx *c, const char *name, double dflt, double *out)
{
    const onnx_attribute *a = onnx_attr(c, name);
    *out = dflt;
    if (!a)
        return TG_OK;
    tg_status s = attr_type(c, a, ONNX_ATTR_FLOAT);
    if (s == TG_OK)
        *out = a->f;
    return s;
}

tg_status oa_ints(const onnx_ictx *c, const char *name, const int64_t **v, int *n)
{
    const onnx_attribute *a = onnx_attr(c, name);
    *v = NULL;
    *n = -1;
    if (!a)
        return TG_OK;
    tg_status s = attr_type(c, a, ONNX_ATTR_INTS);
    if (s != TG_OK)
        return s;
    if (a->n_ints > 1000000)
        return onnx_err(c, TG_ERR_IO, "attribute '%s' has %zu values", name, a->n_ints);
    *v = a->ints;
    *n = (int)a->n_ints;
    return TG_OK;
}

tg_status oa_floats(const onnx_ictx *c, const char *name, const float **v, int *n)
{
    const onnx_attribute *a = onnx_attr(c, name);
    *v = NULL;
    *n = -1;
    if (!a)
        return TG_OK;
    tg_status s = attr_type(c, a, ONNX_ATTR_FLOATS);
    if (s != TG_OK)
        return s;
    if (a->n_floats > 1000000)
        return onnx_err(c, TG_ERR_IO, "attribute '%s' has %zu values", name, a->n_floats);
    *v = a->floats;
    *n = (int)a->n_floats;
    return TG_OK;
}

tg_status oa_string(const onnx_ictx *c, const char *name, const char *dflt, const char **out)
{
    const onnx_attribute *a = onnx_attr(c, name);
    *out = dflt;
    if (!a)
        return TG_OK;
    tg_status s = attr_type(c, a, ONNX_ATTR_STRING);
    if (s == TG_OK)
        *out = a->s.data ? (const char *)a->s.data : "";
    return s;
}

tg_status oa_tensor(const onnx_ictx *c, const char *name, tg_tensor **out)
{
    const onnx_attribute *a = onnx_attr(c, name);
    *out = NULL;
    if (!a)
        return TG_OK;
    tg_status s = attr_type(c, a, ONNX_ATTR_TENSOR);
    if (s != TG_OK)
        return s;
    if (!a->t)
        return onnx_err(c, TG_ERR_IO, "attribute '%s' has no tensor", name);
    *out = onnx_tensor_to_tg_wide(a->t);
    if (!*out)
        return tg_last_status();
    return onnx_check_numel(c, tg_ndim(*out), tg_shape(*out), "a tensor attribute");
}

tg_tensor *oi_req(onnx_ictx *c, int i, const char *what)
{
    if (i < c->n_in && c->in[i])
        return c->in[i];
    onnx_err(c, TG_ERR_IO, "input %d (%s) is required", i, what);
    return NULL;
}

void *onnx_tmp_alloc(onnx_ictx *c, size_t bytes)
{
    if (c->n_tmp == (int)(sizeof c->tmp / sizeof c->tmp[0])) {
        tg__error(TG_ERR_INTERNAL, "onnx: too many temporaries");
        return NULL;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        return NULL;
    }
    c->tmp[c->n_tmp++] = p;
    return p;
}

tg_status oi_ints(onnx_ictx *c, int i, const char *what, int64_t **v, int64_t *n)
{
    tg_tensor *t = oi_req(c, i, what);
    if (!t)
        return tg_last_status();
    t = c->val[i];
    if (!t || tg_is_symbolic(t))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "input %d (%s, '%s') must be known when "
                        "the model is imported (an initializer, a Constant, or computed "
                        "from them)", i, what, c->node->input[i]);
    tg_dtype dt = tg_dtype_of(t);
    if (dt != TG_INT64 && dt != TG_INT32)
        return onnx_err(c, TG_ERR_IO, "input %d (%s) should be int64, got %s", i, what,
                        tg_dtype_name(dt));
    *n = tg_numel(t);
    *v = onnx_tmp_alloc(c, (size_t)*n * sizeof **v);
    if (!*v)
        return tg_last_status();
    return tg_copy_to(t, TG_INT64, *v);
}

tg_status oi_scalar(onnx_ictx *c, int i, const char *what, double *out)
{
    tg_tensor *t = oi_req(c, i, what);
    if (!t)
        return tg_last_status();
    t = c->val[i];
    if (!t || tg_is_symbolic(t))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "input %d (%s, '%s') must be known when "
                        "the model is imported", i, what, c->node->input[i]);
    if (tg_numel(t) != 1)
        return onnx_err(c, TG_ERR_IO, "input %d (%s) should have one element, has %lld",
                        i, what, (long long)tg_numel(t));
    return tg_copy_to(t, TG_FLOAT64, out);
}

tg_status onnx_check_numel(const onnx_ictx *c, int ndim, const int64_t *shape,
                           const char *what)
{
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return onnx_err(c, TG_ERR_IO, "%s has a negative dim %lld", what,
                            (long long)shape[i]);
    if (!extent_ok(ndim, shape))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "%s would have more than %lld elements "
                        "(counting empty dims as 1)", what, (long long)ONNX_IMPORT_MAX_ELEMENTS);
    return TG_OK;
}

tg_status onnx_axis(const onnx_ictx *c, int64_t axis, int rank, const char *what, int *out)
{
    if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
        return onnx_err(c, TG_ERR_IO, "%s %lld is out of range for rank %d", what,
                        (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return TG_OK;
}

int onnx_eager_begin(void)
{
    int old = tg__graph_suspend();
    tg_no_grad_begin();
    return old;
}

void onnx_eager_end(int token)
{
    tg_no_grad_end();
    tg__graph_resume(token);
}

tg_tensor *onnx_as(tg_tensor *y, tg_dtype dt)
{
    if (!y)
        return NULL;
    return tg_dtype_of(y) == dt ? y : tg_cast(y, dt);
}

/* ---- the op tables ----------------------------------------------------------------- */
const onnx_op_entry *onnx_op_lookup(const char *op_type)
{
    static const onnx_op_entry *const tables[] = {onnx_ops_math, onnx_ops_nn, onnx_ops_shape,
                                                  onnx_ops_reduce};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const onnx_op_entry *e = tables[t]; e->op_type; e++)
            if (!strcmp(e->op_type, op_type))
                return e;
    return NULL;
}

int onnx_op_version(const onnx_op_entry *e, int64_t opset)
{
    int v = 0;
    for (int i = 0; i < 8 && e->versions[i]; i++)
        if (e->versions[i] <= opset)
            v = e->versions[i];
    return v;
}

int onnx_op_min_version(const onnx_op_entry *e) { return onnx_op_version(e, ONNX_MIN_OPSET); }
