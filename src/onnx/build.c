/* Building a loaded ONNX model into a graph or running it eagerly (one
 * walk over the sorted nodes, each through its mapping in ops_*.c), with
 * folding of values known at import time and size checks before any
 * kernel allocates. See docs/ONNX.md. */
#include "onnx/build.h"

#include "core/tensor_impl.h"
#include "graph/graph_impl.h"
#include "util/grow.h"
#include "util/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    for (int i = 0; net->input_names && i < net->n_inputs; i++)
        free(net->input_names[i]);
    for (int i = 0; net->output_names && i < net->n_outputs; i++)
        free(net->output_names[i]);
    free(net->inputs);
    free(net->inits);
    free(net->outputs);
    free(net->input_names);
    free(net->output_names);
    free(net);
}

tg_status onnx_net_add(tg_tensor ***arr, char ***names, int *n, int *cap, const char *name,
                       int index, tg_tensor *t)
{
    char buf[300];
    if (index >= 0)
        snprintf(buf, sizeof buf, "%s[%d]", name, index);
    /* the two arrays share *cap: the smaller of their capacities */
    int cap_a = *cap, cap_n = *cap;
    char *copy = strdup(index >= 0 ? buf : name);
    bool ok = copy && TG_GROW(*arr, cap_a, *n + 1) && TG_GROW(*names, cap_n, *n + 1);
    *cap = cap_a < cap_n ? cap_a : cap_n;
    if (!ok) {
        free(copy);
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    }
    (*arr)[*n] = tg_retain(t);
    (*names)[(*n)++] = copy;
    return TG_OK;
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

/* names the graph node that produced the output t of an ONNX node after
 * the ONNX value (when the node is new and the name free), for dumps */
static void name_node(tg_tensor *t, int first_node, const char *onnx_name)
{
    if (!t || !t->graph || t->graph->values[t->value].node < first_node)
        return;
    char buf[256];
    onnx_graph_name(onnx_name, buf, sizeof buf);
    if (tg__hmap_get(&t->graph->names, buf) >= 0)
        return;
    if (tg_graph_set_name(t, buf) != TG_OK)
        tg_clear_error();
}

/* an output's size; a symbolic output's unknown dims (-1, graph mode)
 * count as 1 */
static tg_status check_out_size(const onnx_ictx *c, const tg_tensor *t)
{
    int64_t shape[TG_MAX_DIMS];
    int nd = tg_ndim(t);
    for (int d = 0; d < nd; d++)
        shape[d] = tg_is_symbolic(t) && tg_shape(t)[d] == -1 ? 1 : tg_shape(t)[d];
    return onnx_check_numel(c, nd, shape, "an output");
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
    c.sizing = true;
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
            s = check_out_size(&c, c.out[j]);
    tg_scope_end();
    tg_graph_free(g);
    for (int k = 0; k < c.n_tmp; k++)
        free(c.tmp[k]);
    return s;
}

/* the element type value v is declared with, where the model says it */
static int32_t declared_type(const tg_onnx_model *m, int v)
{
    if (v >= m->n_values) /* a spare slot: a folded Conv's weights or bias */
        return 0;
    const mvalue *mv = &m->values[v];
    if (mv->kind == SRC_INPUT)
        return m->inputs[mv->index].onnx_type;
    if (mv->kind == SRC_INIT && (size_t)mv->index < m->graph->n_initializer)
        return m->graph->initializer[mv->index].data_type;
    return 0;
}

/* result j of node c into its value slot (a sequence is taken from c);
 * values computed from known ones are constants from here on */
static void store_result(build_state *b, onnx_ictx *c, int j, bool all_known, int first_node)
{
    int v = c->mnode->out[j];
    const char *name = c->node->output[j];
    if (c->none_out[j]) {
        onnx_values_set_none(&b->vs, v);
        return;
    }
    if (c->seq_out[j]) {
        onnx_seq *q = c->seq_out[j];
        c->seq_out[j] = NULL;
        q->known = all_known || c->out_known[j];
        for (int k = 0; k < q->n; k++)
            q->known = q->known && !tg_is_symbolic(q->elem[k]);
        for (int k = 0; k < q->n; k++) {
            if (q->known)
                tg__storage_freeze(q->elem[k]);
            char nm[300];
            snprintf(nm, sizeof nm, "%s[%d]", name, k);
            if (b->g)
                name_node(q->elem[k], first_node, nm);
        }
        onnx_values_set_seq(&b->vs, v, q);
        return;
    }
    bool known = (all_known || c->out_known[j]) && !tg_is_symbolic(c->out[j]);
    onnx_values_set_tensor(&b->vs, v, c->out[j], known);
    if (known) /* folded: a constant from here on */
        tg__storage_freeze(c->out[j]);
    if (b->g)
        name_node(c->out[j], first_node, name);
}

static tg_status build_node(build_state *b, const mnode *mn)
{
    const onnx_node *n = mn->node;
    onnx_ictx c;
    memset(&c, 0, sizeof c);
    c.node = n;
    c.mnode = mn;
    c.scope_vals = b->vs.t;
    c.scope_known = b->vs.known;
    c.scope = &b->vs;
    c.version = mn->version;
    c.graph_mode = b->g != NULL;
    c.n_in = (int)n->n_input;
    c.n_out = (int)n->n_output;
    c.gen = b->gen;
    bool all_known = !(mn->entry->flags & ONNX_OP_NO_FOLD);
    for (int j = 0; j < c.n_in; j++) {
        int v = mn->in[j];
        c.in[j] = v >= 0 ? b->vs.t[v] : NULL;
        c.known[j] = v >= 0 && b->vs.known[v];
        c.val[j] = c.known[j] ? c.in[j] : NULL;
        c.in_type[j] = v >= 0 ? declared_type(b->m, v) : 0;
        c.dims[j] = v >= 0 ? b->vs.dims[v] : NULL;
        if (v >= 0 && !c.val[j] && b->opts && b->opts->specialize &&
            b->m->values[v].kind == SRC_INPUT)
            c.val[j] = b->given[b->m->values[v].index];
        /* a subgraph run eagerly (a branch taken, one iteration) sees the
         * values of this run: a Slice may start at the iteration number */
        if (v >= 0 && !c.val[j] && b->body && c.in[j] && !tg_is_symbolic(c.in[j]))
            c.val[j] = c.in[j];
        if (v >= 0 && !onnx_values_has(&b->vs, v))
            return tg__error(TG_ERR_INTERNAL, "onnx: value '%s' was released early",
                             n->input[j]);
        c.seq_in[j] = v >= 0 ? b->vs.seq[v] : NULL;
        c.none_in[j] = v >= 0 && b->vs.none[v];
        if ((c.seq_in[j] || c.none_in[j]) && !(mn->entry->flags & ONNX_OP_SEQ))
            return node_error(n, tg__error(TG_ERR_IO, "input %d ('%s') is %s; %s takes "
                                           "tensors", j, n->input[j], c.seq_in[j]
                                           ? "a sequence" : "an optional without a value",
                                           n->op_type));
        if (v >= 0 && !c.known[j])
            all_known = false;
    }
    /* a subgraph reading an unknown outer value is not folded */
    for (int j = 0; j < mn->n_implicit; j++)
        if (!b->vs.known[mn->implicit[j]])
            all_known = false;
    c.folding = all_known;
    tg_scope_begin(); /* owns the attributes of older versions made inputs */
    tg_status s = onnx_lift_attributes(&c);
    /* the sequence ops give views of their inputs or slices of them, and
     * SequenceMap's body checks its own nodes */
    if (s == TG_OK && (all_known || !b->g) && !(mn->entry->flags & ONNX_OP_SEQ))
        s = sizes_ok(mn, &c);
    if (s != TG_OK) {
        tg_scope_end();
        return node_error(n, s);
    }
    int first_node = b->g ? b->g->n_nodes : 0;
    int old_floor = 0;
    if (all_known) {
        old_floor = tg__graph_suspend();
        tg_no_grad_begin();
    }
    s = mn->entry->import(&c);
    for (int j = 0; s == TG_OK && j < c.n_out; j++)
        if (mn->out[j] >= 0 && !c.out[j] && !c.seq_out[j] && !c.none_out[j])
            s = tg__error_is_set() ? tg_last_status()
                                   : tg__error(TG_ERR_UNSUPPORTED, "output %d (%s) is not "
                                               "supported", j, n->output[j]);
    /* in graph mode nothing was allocated yet: a huge value stops here */
    for (int j = 0; s == TG_OK && j < c.n_out; j++)
        if (c.out[j])
            s = check_out_size(&c, c.out[j]);
    for (int j = 0; s == TG_OK && j < c.n_out; j++)
        for (int k = 0; c.seq_out[j] && s == TG_OK && k < c.seq_out[j]->n; k++)
            s = check_out_size(&c, c.seq_out[j]->elem[k]);
    for (int j = 0; s == TG_OK && j < c.n_out; j++)
        if (mn->out[j] >= 0)
            store_result(b, &c, j, all_known, first_node);
    if (s == TG_OK && b->g && !all_known)
        onnx_carry_dims(b, mn, &c);
    for (int j = 0; j < c.n_out; j++)
        onnx_seq_free(c.seq_out[j]); /* those not taken */
    if (all_known) {
        tg_no_grad_end();
        tg__graph_resume(old_floor);
    }
    tg_scope_end();
    for (int k = 0; k < c.n_tmp; k++)
        free(c.tmp[k]);
    return s == TG_OK ? TG_OK : node_error(n, s);
}

/* the declared dtype and shape of a graph output (or a sequence's element
 * named `name`), when the model gives them */
static tg_status check_output(const tg_onnx_value_info *vi, const char *name,
                              const tg_tensor *t)
{
    char s1[160], s2[160];
    if (vi->ndim < 0 && !vi->onnx_type)
        return TG_OK;
    if (vi->onnx_type && tg_dtype_of(t) != vi->dtype)
        return tg__error(TG_ERR_IO, "onnx: output '%s' is %s but the model "
                         "declares %s (%s)", name, tg_dtype_name(tg_dtype_of(t)),
                         tg_dtype_name(vi->dtype), onnx_data_type_name(vi->onnx_type));
    if (vi->ndim < 0)
        return TG_OK;
    bool ok = vi->ndim == tg_ndim(t);
    for (int d = 0; ok && d < vi->ndim; d++) /* -1 in a graph: known when it runs */
        ok = vi->shape[d] < 0 || tg_shape(t)[d] < 0 || vi->shape[d] == tg_shape(t)[d];
    if (!ok)
        return tg__error(TG_ERR_IO, "onnx: output '%s' has shape %s but the model "
                         "declares %s (-1: any)", name,
                         tg_shape_str(tg_ndim(t), tg_shape(t), s1, sizeof s1),
                         tg_shape_str(vi->ndim, vi->shape, s2, sizeof s2));
    return TG_OK;
}

/* the Conv mn built with the BN node bn folded into its weights and
 * bias, when they are all known: the Conv then writes the BN's output.
 * *folded says whether it was; false and TG_OK: build both as they are */
static tg_status build_folded_conv(build_state *b, const mnode *mn, const mnode *bn,
                                   bool *folded)
{
    const tg_onnx_model *m = b->m;
    int ids[6] = {mn->in[1], mn->node->n_input > 2 ? mn->in[2] : -1, bn->in[1],
                  bn->in[2], bn->in[3], bn->in[4]};
    tg_tensor *in[6];
    *folded = false;
    for (int j = 0; j < 6; j++) {
        if (ids[j] < 0 && j == 1) {
            in[j] = NULL;
            continue;
        }
        if (ids[j] < 0 || !b->vs.known[ids[j]] || !b->vs.t[ids[j]])
            return TG_OK;
        in[j] = b->vs.t[ids[j]];
    }
    tg_tensor *w, *bias;
    if (onnx_bn_fold(bn->node, in, &w, &bias) != TG_OK)
        return TG_OK;
    /* the Conv with inputs {X, W', B'} (two spare value slots) and the
     * BN's output */
    const int wv = m->n_values, bv = m->n_values + 1;
    static char bias_name[] = "folded_bias";
    char *names[3] = {mn->node->input[0], mn->node->input[1], bias_name};
    int in_ids[3] = {mn->in[0], wv, bv};
    onnx_node node = *mn->node;
    node.input = names;
    node.n_input = 3;
    node.output = bn->node->output;
    mnode conv = *mn;
    conv.node = &node;
    conv.in = in_ids;
    conv.out = bn->out;
    b->vs.t[wv] = w;
    b->vs.t[bv] = bias;
    b->vs.known[wv] = b->vs.known[bv] = true;
    tg__storage_freeze(w);
    tg__storage_freeze(bias);
    tg_status s = build_node(b, &conv);
    tg_release(w);
    tg_release(bias);
    b->vs.t[wv] = b->vs.t[bv] = NULL;
    *folded = s == TG_OK;
    return s;
}

/* whether known value v is a float scalar within tol of want */
static bool scalar_near(const build_state *b, int v, double want, double tol)
{
    const tg_tensor *t = v >= 0 && b->vs.known[v] ? b->vs.t[v] : NULL;
    return t && tg_numel(t) == 1 && tg_dtype_is_float(tg_dtype_of(t)) &&
           fabs(tg_item(t) - want) <= tol;
}

/* the last Mul of an exact GELU chain (fuse_gelu.c), in graph mode, as
 * tg_gelu(x) when the constants are sqrt(2), 1 and 0.5 (as float32 holds
 * them) and broadcast nothing, and x is not a constant (those chains were
 * folded); *done false: build the Mul as it is */
static tg_status build_gelu(build_state *b, const mnode *mn, const onnx_gelu_tail *t,
                            bool *done)
{
    *done = false;
    tg_tensor *x = b->vs.t[t->x];
    if (!b->g || !x || b->vs.known[t->x] || !tg_dtype_is_float(tg_dtype_of(x)) ||
        !scalar_near(b, t->c_div, 1.41421356237309505, 1e-6) ||
        !scalar_near(b, t->c_add, 1.0, 0.0) || !scalar_near(b, t->c_half, 0.5, 0.0))
        return TG_OK;
    const int cs[3] = {t->c_div, t->c_add, t->c_half};
    for (int i = 0; i < 3; i++)
        if (tg_ndim(b->vs.t[cs[i]]) > tg_ndim(x) || tg_dtype_of(b->vs.t[cs[i]]) != tg_dtype_of(x))
            return TG_OK;
    int first_node = b->g->n_nodes, v = mn->out[0];
    tg_scope_begin();
    tg_tensor *y = tg_gelu(x);
    if (y) {
        b->vs.t[v] = tg_retain(y);
        b->vs.known[v] = false;
        name_node(y, first_node, mn->node->output[0]);
    }
    tg_scope_end();
    if (!y)
        return node_error(mn->node, tg_last_status());
    *done = true;
    return TG_OK;
}

/* one node, or the Conv with the BN after it folded in (folded[] marks
 * the BN then), or an exact GELU's last Mul as one gelu */
static tg_status build_or_fold(build_state *b, int idx, const int *plan, bool *folded,
                               const onnx_gelu_tail *gelu)
{
    const mnode *mn = &b->m->nodes[idx];
    if (folded[idx])
        return TG_OK;
    if (gelu && gelu[idx].x >= 0) {
        bool done = false;
        tg_status s = build_gelu(b, mn, &gelu[idx], &done);
        if (s != TG_OK || done)
            return s;
    }
    if (plan && plan[idx] >= 0) {
        bool done = false;
        tg_status s = build_folded_conv(b, mn, &b->m->nodes[plan[idx]], &done);
        if (s != TG_OK || done) {
            folded[plan[idx]] = done;
            return s;
        }
    }
    return build_node(b, mn);
}

/* builds (or runs) every node in order, dropping each value after the
 * node that reads it last (eager memory) */
static tg_status walk_nodes(build_state *b)
{
    const tg_onnx_model *m = b->m;
    bool fold_bn = !(b->opts && b->opts->keep_batch_norm);
    int *plan = fold_bn ? onnx_bn_fold_plan(m) : NULL;
    bool *folded = calloc((size_t)m->n_nodes + 1, sizeof *folded);
    bool *keep = calloc((size_t)m->n_values + 1, sizeof *keep);
    onnx_gelu_tail *gelu = b->g && keep ? onnx_gelu_plan(m, keep) : NULL;
    if ((fold_bn && !plan) || !folded || !keep || (b->g && !gelu)) {
        free(plan);
        free(folded);
        free(keep);
        free(gelu);
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    }
    tg_status s = TG_OK;
    for (int k = 0; k < m->n_nodes && s == TG_OK; k++) {
        const mnode *mn = &m->nodes[m->order[k]];
        s = build_or_fold(b, m->order[k], plan, folded, gelu);
        for (int j = 0; s == TG_OK && j < mnode_n_reads(mn); j++) {
            int v = mnode_read(mn, j);
            if (v >= 0 && m->last_use[v] == k && !keep[v])
                onnx_values_drop(&b->vs, v);
        }
    }
    free(plan);
    free(folded);
    free(keep);
    free(gelu);
    return s;
}

static const char *kind_name(tg_onnx_kind k)
{
    switch (k) {
    case TG_ONNX_SEQUENCE: return "a sequence";
    case TG_ONNX_OPTIONAL: return "an optional tensor";
    case TG_ONNX_OPTIONAL_SEQUENCE: return "an optional sequence";
    default: return "a tensor";
    }
}

/* output i after the walk, checked against its declaration: *t (borrowed),
 * *seq (borrowed) or *none */
static tg_status walk_output(build_state *b, int i, tg_tensor **t, const onnx_seq **seq,
                             bool *none)
{
    const tg_onnx_value_info *vi = &b->m->outputs[i];
    int v = b->m->output_vid[i];
    *t = b->vs.t[v];
    *seq = b->vs.seq[v];
    *none = b->vs.none[v];
    if (!onnx_values_has(&b->vs, v))
        return tg__error(TG_ERR_INTERNAL, "onnx: output '%s' was not computed", vi->name);
    /* an output without a type (a subgraph's) takes any value */
    bool typed = vi->kind != TG_ONNX_TENSOR || vi->onnx_type || vi->ndim >= 0;
    bool seq_ok = vi->kind == TG_ONNX_SEQUENCE || vi->kind == TG_ONNX_OPTIONAL_SEQUENCE;
    bool none_ok = vi->kind == TG_ONNX_OPTIONAL || vi->kind == TG_ONNX_OPTIONAL_SEQUENCE;
    bool tensor_ok = vi->kind == TG_ONNX_TENSOR || vi->kind == TG_ONNX_OPTIONAL;
    if (typed && ((*t && !tensor_ok) || (*seq && !seq_ok) || (*none && !none_ok)))
        return tg__error(TG_ERR_IO, "onnx: output '%s' is %s but the model declares %s",
                         vi->name, *t ? "a tensor" : *seq ? "a sequence"
                         : "an optional without a value", kind_name(vi->kind));
    if (*t)
        return check_output(vi, vi->name, *t);
    /* a sequence's elements may differ in shape (models declare one loosely,
     * say [] for slices that grow): their dtype is checked */
    for (int k = 0; *seq && k < (*seq)->n; k++) {
        tg_onnx_value_info elem = *vi;
        elem.ndim = -1;
        char nm[300];
        snprintf(nm, sizeof nm, "%s[%d]", vi->name, k);
        tg_status s = check_output(&elem, nm, (*seq)->elem[k]);
        if (s != TG_OK)
            return s;
    }
    return TG_OK;
}

static void state_free(build_state *b)
{
    onnx_values_free(&b->vs);
    free(b->given);
    free(b->dims);
    tg_generator_free(b->own_gen);
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
    /* two spare slots: a folded Conv's weights and bias (walk_nodes) */
    tg_status vs_ok = onnx_values_init(&b.vs, m->n_values + 2);
    b.given = calloc((size_t)m->n_inputs + 1, sizeof *b.given);
    b.dims = calloc(((size_t)m->n_inputs + 1) * TG_MAX_DIMS, sizeof *b.dims);
    b.gen = opts && opts->generator ? opts->generator : (b.own_gen = tg_generator_new(0));
    if (net) {
        net->graph_mode = b.g != NULL;
        net->inits = calloc((size_t)m->n_inits + 1, sizeof *net->inits);
        net->n_inits = m->n_inits;
    }
    if (!net || vs_ok != TG_OK || !b.given || !b.dims || !b.gen || !net->inits) {
        tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        goto fail;
    }
    tg_scope_begin(); /* placeholders, variables, leaves: the net retains them */
    tg_status s = onnx_bind_inputs(&b, net, n_inputs, names, inputs);
    if (s == TG_OK)
        s = onnx_bind_initializers(&b, net);
    tg_scope_end();
    if (s != TG_OK)
        goto fail;
    if (walk_nodes(&b) != TG_OK)
        goto fail;
    /* a sequence's elements as NAME[k]; none: no entry */
    for (int i = 0; i < m->n_outputs; i++) {
        tg_tensor *t;
        const onnx_seq *q;
        bool none;
        s = walk_output(&b, i, &t, &q, &none);
        if (s == TG_OK && t)
            s = onnx_net_add(&net->outputs, &net->output_names, &net->n_outputs,
                             &net->cap_outputs, m->outputs[i].name, -1, t);
        for (int k = 0; s == TG_OK && q && k < q->n; k++)
            s = onnx_net_add(&net->outputs, &net->output_names, &net->n_outputs,
                             &net->cap_outputs, m->outputs[i].name, k, q->elem[k]);
        if (s != TG_OK)
            goto fail;
    }
    state_free(&b);
    return net;
fail:
    state_free(&b);
    tg_onnx_net_free(net);
    return NULL;
}


/* ---- subgraphs --------------------------------------------------------------------- */
static const tg_onnx_model *find_body(const onnx_ictx *c, const char *attr)
{
    for (int k = 0; c->mnode && k < c->mnode->n_subs; k++)
        if (!strcmp(c->mnode->sub_names[k], attr))
            return c->mnode->subs[k];
    return NULL;
}

int onnx_body_inputs(const onnx_ictx *c, const char *attr)
{
    const tg_onnx_model *sub = find_body(c, attr);
    return sub ? sub->n_inputs : -1;
}

int onnx_body_outputs(const onnx_ictx *c, const char *attr)
{
    const tg_onnx_model *sub = find_body(c, attr);
    return sub ? sub->n_outputs : -1;
}

/* binds the body's formal inputs and the outer values it reads */
static tg_status bind_body(build_state *b, const onnx_ictx *c, tg_tensor *const *formal,
                           const onnx_seq *const *formal_seq, const bool *formal_none,
                           const bool *formal_known)
{
    const tg_onnx_model *sub = b->m;
    for (int i = 0; i < sub->n_inputs; i++) {
        int v = tg__hmap_get(&sub->names, sub->inputs[i].name);
        if ((formal_seq && formal_seq[i]) || (formal_none && formal_none[i])) {
            onnx_seq *copy = formal_seq && formal_seq[i] ? onnx_seq_copy(formal_seq[i]) : NULL;
            if (formal_seq && formal_seq[i] && !copy)
                return tg_last_status();
            if (copy)
                onnx_values_set_seq(&b->vs, v, copy);
            else
                onnx_values_set_none(&b->vs, v);
            continue;
        }
        if (sub->inputs[i].kind != TG_ONNX_TENSOR && sub->inputs[i].kind != TG_ONNX_OPTIONAL)
            return tg__error(TG_ERR_IO, "onnx: input '%s' of the subgraph is %s; the op gives "
                             "it a tensor", sub->inputs[i].name, kind_name(sub->inputs[i].kind));
        b->given[i] = formal[i];
        int nd;
        tg_status s = onnx_resolve_input(b, i, b->dims + i * TG_MAX_DIMS, &nd);
        if (s != TG_OK)
            return s;
        onnx_values_set_tensor(&b->vs, v, formal[i], formal_known && formal_known[i] &&
                               !tg_is_symbolic(formal[i]));
    }
    for (int k = 0; k < sub->n_outer; k++) {
        int v = tg__hmap_get(&sub->names, sub->outer_names[k]), ov = sub->outer_vid[k];
        tg_tensor *t = c->scope_vals[ov];
        const onnx_seq *q = c->scope ? c->scope->seq[ov] : NULL;
        if (q) {
            onnx_seq *copy = onnx_seq_copy(q);
            if (!copy)
                return tg_last_status();
            onnx_values_set_seq(&b->vs, v, copy);
            continue;
        }
        if (c->scope && c->scope->none[ov]) {
            onnx_values_set_none(&b->vs, v);
            continue;
        }
        if (!t)
            return tg__error(TG_ERR_INTERNAL, "onnx: outer value '%s' was released early",
                             sub->outer_names[k]);
        onnx_values_set_tensor(&b->vs, v, t, c->scope_known[ov]);
    }
    return onnx_bind_initializers(b, NULL);
}

bool onnx_body_gives_seq(const onnx_ictx *c, const char *attr)
{
    const tg_onnx_model *sub = find_body(c, attr);
    for (int i = 0; sub && i < sub->n_outputs; i++)
        if (sub->outputs[i].kind != TG_ONNX_TENSOR)
            return true;
    return false;
}

tg_status onnx_build_body(const onnx_ictx *c, const char *attr, int n_formal,
                          tg_tensor *const *formal, int max_out, tg_tensor **out,
                          int *n_out)
{
    return onnx_build_body_any(c, attr, n_formal, formal, NULL, NULL, NULL, max_out, out, NULL,
                               NULL, n_out);
}

tg_status onnx_build_body_any(const onnx_ictx *c, const char *attr, int n_formal,
                              tg_tensor *const *formal, const onnx_seq *const *formal_seq,
                              const bool *formal_none, const bool *formal_known,
                              int max_out, tg_tensor **out,
                              onnx_seq **seq_out, bool *none_out, int *n_out)
{
    const tg_onnx_model *sub = find_body(c, attr);
    if (!sub)
        return onnx_err(c, TG_ERR_IO, "the graph attribute '%s' is missing", attr);
    if (n_formal != sub->n_inputs)
        return onnx_err(c, TG_ERR_IO, "subgraph '%s' declares %d inputs; the op gives it %d",
                        attr, sub->n_inputs, n_formal);
    if (sub->n_outputs > max_out)
        return onnx_err(c, TG_ERR_IO, "subgraph '%s' has %d outputs, at most %d expected",
                        attr, sub->n_outputs, max_out);
    build_state b = {.m = sub, .g = tg_graph_current(), .body = true};
    tg_status vs_ok = onnx_values_init(&b.vs, sub->n_values + 2);
    b.given = calloc((size_t)sub->n_inputs + 1, sizeof *b.given);
    b.dims = calloc(((size_t)sub->n_inputs + 1) * TG_MAX_DIMS, sizeof *b.dims);
    b.gen = c->gen; /* a body draws from the enclosing build's generator */
    tg_status s = TG_OK;
    if (vs_ok != TG_OK || !b.given || !b.dims || !b.gen)
        s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    if (s == TG_OK)
        s = bind_body(&b, c, formal, formal_seq, formal_none, formal_known);
    if (s == TG_OK)
        s = walk_nodes(&b);
    int n_done = 0;
    for (int i = 0; s == TG_OK && i < sub->n_outputs; i++) {
        tg_tensor *t;
        const onnx_seq *q;
        bool none;
        s = walk_output(&b, i, &t, &q, &none);
        if (s == TG_OK && !t && !seq_out)
            s = tg__error(TG_ERR_UNSUPPORTED, "output '%s' is %s: the op takes tensors from "
                          "its subgraphs", sub->outputs[i].name,
                          q ? "a sequence" : "an optional without a value");
        if (s != TG_OK)
            break;
        out[i] = t ? tg__publish(tg_retain(t)) : NULL;
        if (seq_out) {
            seq_out[i] = q ? onnx_seq_copy(q) : NULL;
            none_out[i] = none;
            if (q && !seq_out[i])
                s = tg_last_status();
        }
        n_done = i + 1;
    }
    if (s != TG_OK && seq_out)
        for (int i = 0; i < n_done; i++) {
            onnx_seq_free(seq_out[i]);
            seq_out[i] = NULL;
        }
    *n_out = s == TG_OK ? sub->n_outputs : 0;
    state_free(&b);
    if (s != TG_OK) { /* the caller's error names the node */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        return tg__error(s, "subgraph '%s': %s", attr, msg);
    }
    return s;
}
