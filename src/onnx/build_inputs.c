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

tg_status onnx_bind_inputs(build_state *b, tg_onnx_net *net, int n, const char *const *names,
                             tg_tensor *const *inputs)
{
    const tg_onnx_model *m = b->m;
    for (int i = 0; i < m->n_inputs; i++)
        if (m->inputs[i].kind != TG_ONNX_TENSOR)
            return tg__error(TG_ERR_UNSUPPORTED, "onnx: input '%s' is a sequence or optional "
                             "(not supported yet)", m->inputs[i].name);
    for (int k = 0; k < n; k++) {
        if (!names || !names[k] || !inputs || !inputs[k])
            return tg__error(TG_ERR_ARG, "tg_onnx_build: input %d has no name or tensor", k);
        int v = tg__hmap_get(&m->names, names[k]);
        if (v < 0 || m->values[v].kind != SRC_INPUT)
            return not_an_input(m, names[k]);
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
        tg_status s = onnx_resolve_input(b, i, b->dims + i * TG_MAX_DIMS, &ndim);
        if (s != TG_OK)
            return s;
    }
    tg_status s = check_dim_params(b);
    if (s != TG_OK)
        return s;
    for (int i = 0; i < m->n_inputs; i++) {
        int nd = m->inputs[i].ndim >= 0 ? m->inputs[i].ndim : tg_ndim(b->given[i]);
        if (!onnx_extent_ok(nd, b->dims + i * TG_MAX_DIMS))
            return tg__error(TG_ERR_UNSUPPORTED, "onnx: input '%s' has dims over %lld "
                             "elements", m->inputs[i].name, (long long)ONNX_IMPORT_MAX_ELEMENTS);
    }
    for (int i = 0; i < m->n_inputs; i++) {
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
            if (!t)
                return tg_last_status();
        } else {
            t = b->given[i];
        }
        if (net)
            net->inputs[i] = tg_retain(t);
        onnx_values_set_tensor(&b->vs, tg__hmap_get(&m->names, m->inputs[i].name), t, false);
    }
    return TG_OK;
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

