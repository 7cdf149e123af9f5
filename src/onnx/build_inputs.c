/* Binding an ONNX model's graph inputs and initializers at the start of a
 * build (tg_onnx_build, and subgraph bodies): given tensors checked
 * against the declared dtypes and shapes, symbolic dims resolved,
 * placeholders in graph mode. See docs/ONNX.md. */
#include "onnx/build.h"

#include "core/tensor_impl.h"
#include "graph/graph_impl.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* graph node names allow letters, digits and _ . / -: others become _ */
void onnx_graph_name(const char *src, char *dst, size_t cap)
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

/* the shape of model input i: concrete, or in graph mode -1 for symbolic
 * dims that nothing fixes */
tg_status onnx_resolve_input(build_state *b, int i, int64_t *shape, int *ndim)
{
    const tg_onnx_value_info *vi = &b->m->inputs[i];
    tg_tensor *given = b->given[i];
    if (given && vi->onnx_type && tg_dtype_of(given) != vi->dtype)
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
        /* graph mode: an unresolved dim stays unknown (-1) in the placeholder */
        if (v < 0 && !b->g)
            return tg__error(TG_ERR_ARG, "onnx: input '%s' dim %d (%s) is not fixed by the "
                             "model: give the input or bind the dim", vi->name, d,
                             vi->dim_param[d] ? vi->dim_param[d] : "unknown");
        shape[d] = v < 0 ? -1 : v;
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

/* input i is bound to one tensor: a tensor input, or an optional one
 * that is given (sequences are bound element by element, and their
 * elements' symbolic dims may differ from one element to the next) */
static bool tensor_bound(const build_state *b, int i)
{
    tg_onnx_kind k = b->m->inputs[i].kind;
    return k == TG_ONNX_TENSOR || (k == TG_ONNX_OPTIONAL && b->given[i]);
}

/* the same symbol must get the same value in every input */
static tg_status check_dim_params(build_state *b)
{
    const tg_onnx_model *m = b->m;
    for (int i = 0; i < m->n_inputs; i++)
        for (int d = 0; tensor_bound(b, i) && d < m->inputs[i].ndim; d++) {
            const char *p = m->inputs[i].dim_param[d];
            if (!p)
                continue;
            for (int j = 0; j <= i; j++)
                for (int e = 0; tensor_bound(b, j) && e < m->inputs[j].ndim; e++) {
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

static tg_status not_an_input(const tg_onnx_model *m, const char *name)
{
    tg_strbuf list = {0};
    for (int i = 0; i < m->n_inputs; i++)
        tg__strbuf_printf(&list, "%s'%s'", i ? ", " : "", m->inputs[i].name);
    tg_status s = list.failed ? tg__error(TG_ERR_NOMEM, "onnx: out of memory")
                              : tg__error(TG_ERR_ARG, "onnx: '%s' is not an input of the model "
                                          "(its inputs: %s)", name,
                                          m->n_inputs ? list.data : "none");
    tg__strbuf_free(&list);
    return s;
}

static bool is_seq_kind(tg_onnx_kind k)
{
    return k == TG_ONNX_SEQUENCE || k == TG_ONNX_OPTIONAL_SEQUENCE;
}

/* a name "S[k]" of element k of sequence input S: the input's index, or
 * -1 when the name is not of that form or S is no sequence input */
static int seq_element(const tg_onnx_model *m, const char *name, int *k)
{
    size_t len = strlen(name);
    const char *open = strrchr(name, '[');
    if (!open || open == name || len < 4 || name[len - 1] != ']' || open + 2 > name + len - 1 ||
        (size_t)(open - name) >= 256)
        return -1;
    long idx = 0;
    for (const char *p = open + 1; p < name + len - 1; p++) {
        if (*p < '0' || *p > '9' || idx > ONNX_MAX_SEQ)
            return -1;
        idx = idx * 10 + (*p - '0');
    }
    char prefix[256];
    memcpy(prefix, name, (size_t)(open - name));
    prefix[open - name] = '\0';
    int v = tg__hmap_get(&m->names, prefix);
    if (v < 0 || m->values[v].kind != SRC_INPUT || !is_seq_kind(m->inputs[m->values[v].index].kind))
        return -1;
    *k = (int)idx;
    return m->values[v].index;
}

/* element k of sequence input vi: its dtype, rank and fixed dims */
static tg_status check_element(const tg_onnx_value_info *vi, int k, const tg_tensor *t)
{
    char s1[160], s2[160];
    if (vi->onnx_type && tg_dtype_of(t) != vi->dtype)
        return tg__error(TG_ERR_ARG, "onnx: element '%s[%d]' has dtype %s; the sequence's "
                         "elements are %s (%s)", vi->name, k, tg_dtype_name(tg_dtype_of(t)),
                         tg_dtype_name(vi->dtype), onnx_data_type_name(vi->onnx_type));
    bool ok = vi->ndim < 0 || vi->ndim == tg_ndim(t);
    for (int d = 0; ok && vi->ndim >= 0 && d < vi->ndim; d++)
        ok = vi->shape[d] < 0 || vi->shape[d] == tg_shape(t)[d];
    if (!ok)
        return tg__error(TG_ERR_ARG, "onnx: element '%s[%d]' has shape %s; the model "
                         "declares %s (-1: any)", vi->name, k,
                         tg_shape_str(tg_ndim(t), tg_shape(t), s1, sizeof s1),
                         tg_shape_str(vi->ndim, vi->shape, s2, sizeof s2));
    return TG_OK;
}

/* sequence input i from the given elements (el_in[k] == i, at el_at[k]):
 * positions 0..n-1 each given once; none given: the empty sequence, or
 * for an optional sequence none. In graph mode, placeholders shaped as
 * the given elements. */
static tg_status bind_sequence(build_state *b, tg_onnx_net *net, int i, int n,
                               tg_tensor *const *inputs, const int *el_in, const int *el_at)
{
    const tg_onnx_value_info *vi = &b->m->inputs[i];
    int vid = tg__hmap_get(&b->m->names, vi->name), len = 0;
    for (int k = 0; k < n; k++)
        if (el_in[k] == i && el_at[k] + 1 > len)
            len = el_at[k] + 1;
    if (!len && vi->kind == TG_ONNX_OPTIONAL_SEQUENCE) {
        onnx_values_set_none(&b->vs, vid);
        return TG_OK;
    }
    if (len > ONNX_MAX_SEQ)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: input '%s' has more than %d elements",
                         vi->name, ONNX_MAX_SEQ);
    onnx_seq *q = onnx_seq_new(vi->onnx_type ? vi->dtype : TG_FLOAT32);
    if (!q)
        return tg_last_status();
    q->known = false;
    tg_status s = TG_OK;
    for (int p = 0; s == TG_OK && p < len; p++) {
        int found = -1;
        for (int k = 0; s == TG_OK && k < n; k++)
            if (el_in[k] == i && el_at[k] == p) {
                if (found >= 0)
                    s = tg__error(TG_ERR_ARG, "onnx: element '%s[%d]' is given twice",
                                  vi->name, p);
                found = k;
            }
        if (s == TG_OK && found < 0)
            s = tg__error(TG_ERR_ARG, "onnx: element '%s[%d]' of sequence input '%s' is "
                          "missing (%d elements given up to '%s[%d]')", vi->name, p,
                          vi->name, len, vi->name, len - 1);
        if (s != TG_OK)
            break;
        tg_tensor *t = inputs[found];
        if (!vi->onnx_type && p == 0)
            q->dtype = tg_dtype_of(t);
        s = check_element(vi, p, t);
        if (s == TG_OK && !onnx_extent_ok(tg_ndim(t), tg_shape(t)))
            s = tg__error(TG_ERR_UNSUPPORTED, "onnx: element '%s[%d]' has dims over %lld "
                          "elements", vi->name, p, (long long)ONNX_IMPORT_MAX_ELEMENTS);
        if (s == TG_OK && b->g && !tg_is_symbolic(t)) {
            char nm[300], gn[300];
            snprintf(nm, sizeof nm, "%s[%d]", vi->name, p);
            onnx_graph_name(nm, gn, sizeof gn);
            t = tg_placeholder(b->g, tg__hmap_get(&b->g->names, gn) >= 0 ? NULL : gn,
                               tg_dtype_of(t), tg_ndim(t), tg_shape(t));
            s = t ? TG_OK : tg_last_status();
        }
        if (s == TG_OK)
            s = onnx_seq_push(q, t);
        if (s == TG_OK && net)
            s = onnx_net_add(&net->inputs, &net->input_names, &net->n_inputs,
                             &net->cap_inputs, vi->name, p, t);
    }
    if (s != TG_OK) {
        onnx_seq_free(q);
        return s == TG_ERR_IO ? tg__error(TG_ERR_ARG, "%s", tg_last_error()) : s;
    }
    onnx_values_set_seq(&b->vs, vid, q);
    return TG_OK;
}

tg_status onnx_bind_inputs(build_state *b, tg_onnx_net *net, int n, const char *const *names,
                           tg_tensor *const *inputs)
{
    const tg_onnx_model *m = b->m;
    int *el_in = calloc((size_t)n + 1, sizeof *el_in), *el_at = calloc((size_t)n + 1, sizeof *el_at);
    tg_status s = el_in && el_at ? TG_OK : tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (int k = 0; s == TG_OK && k < n; k++) {
        el_in[k] = -1;
        if (!names || !names[k] || !inputs || !inputs[k]) {
            s = tg__error(TG_ERR_ARG, "tg_onnx_build: input %d has no name or tensor", k);
            break;
        }
        int v = tg__hmap_get(&m->names, names[k]);
        if (v < 0 || m->values[v].kind != SRC_INPUT) {
            el_in[k] = seq_element(m, names[k], &el_at[k]);
            s = el_in[k] >= 0 ? TG_OK : not_an_input(m, names[k]);
            continue;
        }
        int i = m->values[v].index;
        if (is_seq_kind(m->inputs[i].kind))
            s = tg__error(TG_ERR_ARG, "onnx: input '%s' is a sequence: give its elements as "
                          "'%s[0]', '%s[1]', ...", names[k], names[k], names[k]);
        else if (b->given[i])
            s = tg__error(TG_ERR_ARG, "onnx: input '%s' is given twice", names[k]);
        else
            b->given[i] = inputs[k];
    }
    for (int i = 0; s == TG_OK && i < m->n_inputs; i++) {
        if (!tensor_bound(b, i))
            continue;
        if (!b->g && !b->given[i]) {
            s = tg__error(TG_ERR_ARG, "onnx: missing input '%s' (%s%s)",
                          m->inputs[i].name, tg_dtype_name(m->inputs[i].dtype),
                          m->inputs[i].ndim < 0 ? ", any shape" : "");
            break;
        }
        int ndim;
        s = onnx_resolve_input(b, i, b->dims + i * TG_MAX_DIMS, &ndim);
    }
    if (s == TG_OK)
        s = check_dim_params(b);
    for (int i = 0; s == TG_OK && i < m->n_inputs; i++) {
        int nd = m->inputs[i].ndim >= 0 || !b->given[i] ? m->inputs[i].ndim : tg_ndim(b->given[i]);
        if (tensor_bound(b, i) && !onnx_extent_ok(nd, b->dims + i * TG_MAX_DIMS))
            s = tg__error(TG_ERR_UNSUPPORTED, "onnx: input '%s' has dims over %lld "
                          "elements", m->inputs[i].name, (long long)ONNX_IMPORT_MAX_ELEMENTS);
    }
    for (int i = 0; s == TG_OK && i < m->n_inputs; i++) {
        int vid = tg__hmap_get(&m->names, m->inputs[i].name);
        if (is_seq_kind(m->inputs[i].kind)) {
            s = bind_sequence(b, net, i, n, inputs, el_in, el_at);
            continue;
        }
        if (!tensor_bound(b, i)) { /* an optional not given */
            onnx_values_set_none(&b->vs, vid);
            continue;
        }
        tg_tensor *t;
        /* a symbolic input is a value of the graph being built: the
         * model's nodes join that graph (a model called inside a trace);
         * a subgraph's inputs are the tensors its node gives it */
        if (b->g && !b->body && !(b->given[i] && tg_is_symbolic(b->given[i]))) {
            char nm[256];
            onnx_graph_name(m->inputs[i].name, nm, sizeof nm);
            if (tg__hmap_get(&b->g->names, nm) >= 0)
                snprintf(nm, sizeof nm, "input_%d", i);
            int ndim;
            onnx_resolve_input(b, i, b->dims + i * TG_MAX_DIMS, &ndim);
            t = tg_placeholder(b->g, tg__hmap_get(&b->g->names, nm) >= 0 ? NULL : nm,
                               m->inputs[i].dtype, ndim, b->dims + i * TG_MAX_DIMS);
            if (!t) {
                s = tg_last_status();
                break;
            }
        } else {
            t = b->given[i];
        }
        if (net)
            s = onnx_net_add(&net->inputs, &net->input_names, &net->n_inputs, &net->cap_inputs,
                             m->inputs[i].name, -1, t);
        onnx_values_set_tensor(&b->vs, vid, t, false);
    }
    free(el_in);
    free(el_at);
    return s;
}

/* a tensor given for initializer i has its dtype and shape */
static tg_status check_given_init(const tg_onnx_model *m, int i, const tg_tensor *t)
{
    const tg_tensor *own = m->inits[i];
    char s1[160], s2[160];
    if (tg_dtype_of(t) != tg_dtype_of(own) || tg_ndim(t) != tg_ndim(own) ||
        memcmp(tg_shape(t), tg_shape(own), (size_t)tg_ndim(own) * sizeof(int64_t)))
        return tg__error(TG_ERR_ARG, "tg_onnx_build: the tensor given for initializer '%s' is "
                         "%s %s; the model's is %s %s", m->init_names[i],
                         tg_dtype_name(tg_dtype_of(t)), tg_shape_str(tg_ndim(t), tg_shape(t), s1, sizeof s1),
                         tg_dtype_name(tg_dtype_of(own)),
                         tg_shape_str(tg_ndim(own), tg_shape(own), s2, sizeof s2));
    return TG_OK;
}

tg_status onnx_bind_initializers(build_state *b, tg_onnx_net *net)
{
    const tg_onnx_model *m = b->m;
    bool trainable = b->opts && b->opts->trainable;
    for (int i = 0; i < m->n_inits; i++) {
        tg_tensor *src = m->inits[i], *t;
        int v = tg__hmap_get(&m->names, m->init_names[i]);
        bool param = trainable && tg_dtype_is_float(tg_dtype_of(src));
        tg_tensor *given = b->opts && b->opts->initializers ? b->opts->initializers[i] : NULL;
        if (given) {
            tg_status s = check_given_init(m, i, given);
            if (s != TG_OK)
                return s;
            net->inits[i] = tg_retain(given);
            onnx_values_set_tensor(&b->vs, v, given, false); /* never folded: gradients reach it */
            continue;
        }
        if (param && b->g) {
            char nm[256];
            onnx_graph_name(m->init_names[i], nm, sizeof nm);
            t = tg_variable(b->g, tg__hmap_get(&b->g->names, nm) >= 0 ? NULL : nm, src);
        } else if (param) { /* a copy: training must not change the model */
            t = tg_clone(src);
            if (t && tg_set_requires_grad(t, true) != TG_OK)
                t = NULL;
        } else {
            t = src; /* a constant: kernels may keep forms of it (tg_storage) */
            tg__storage_freeze(t);
        }
        if (!t)
            return tg_last_status();
        if (net)
            net->inits[i] = tg_retain(t);
        onnx_values_set_tensor(&b->vs, v, t, !param);
    }
    return TG_OK;
}

