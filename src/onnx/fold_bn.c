/* Batch normalization folded into the convolution before it, for
 * inference: y = (conv(x, W) + B - mean) * scale / sqrt(var + eps) + beta
 * is conv(x, W * s) + (B - mean) * s + beta with s = scale / sqrt(var +
 * eps) per output channel, so the BN node disappears and its elementwise
 * pass over the activation with it. The build walk (build.c) asks which
 * Conv nodes have a foldable BN after them (only the structure: one
 * reader, inference semantics) and, when it reaches the Conv, whether the
 * weights and statistics are constants (initializers the caller did not
 * give and that are not trainable, or folded values): parameters that
 * gradients must reach are never folded. See docs/ONNX.md. */
#include "onnx/import.h"
#include "onnx/ops.h"

#include "graph/graph_impl.h"

#include <stdlib.h>
#include <string.h>

static bool is_op(const onnx_node *n, const char *type)
{
    return !strcmp(n->op_type, type) && (!n->domain || !n->domain[0] ||
                                         !strcmp(n->domain, "ai.onnx"));
}

/* an integer attribute that is absent (dflt) or an int; false when mistyped */
static bool attr_int(const onnx_node *n, const char *name, int64_t dflt, int64_t *v)
{
    const onnx_attribute *a = onnx_attr_in(n, name);
    if (!a) {
        *v = dflt;
        return true;
    }
    *v = a->i;
    return a->has_i && (!a->has_type || a->type == ONNX_ATTR_INT);
}

/* whether BN node bn (at `version`) normalises with its running
 * statistics and gives only Y: the form that folds */
static bool bn_is_inference(const mnode *bn)
{
    const onnx_node *n = bn->node;
    if (n->n_input != 5 || bn->version < 7)
        return false; /* versions 1 and 6: is_test and consumed_inputs */
    for (size_t j = 1; j < n->n_output; j++)
        if (n->output[j] && n->output[j][0])
            return false; /* the statistics are asked for: training */
    int64_t training = 0, spatial = 1;
    if (bn->version >= 14 && !attr_int(n, "training_mode", 0, &training))
        return false;
    if (bn->version == 7 && !attr_int(n, "spatial", 1, &spatial))
        return false;
    const onnx_attribute *eps = onnx_attr_in(n, "epsilon");
    if (eps && (!eps->has_f || (eps->has_type && eps->type != ONNX_ATTR_FLOAT)))
        return false;
    return training == 0 && spatial == 1;
}

int *onnx_bn_fold_plan(const tg_onnx_model *m)
{
    int *readers = calloc((size_t)m->n_values + 1, sizeof *readers);
    int *reader = calloc((size_t)m->n_values + 1, sizeof *reader);
    int *plan = malloc(((size_t)m->n_nodes + 1) * sizeof *plan);
    if (!readers || !reader || !plan) {
        free(readers);
        free(reader);
        free(plan);
        return NULL;
    }
    for (int k = 0; k < m->n_nodes; k++) {
        plan[k] = -1;
        for (int j = 0; j < mnode_n_reads(&m->nodes[k]); j++) {
            int v = mnode_read(&m->nodes[k], j);
            if (v >= 0) {
                readers[v]++;
                reader[v] = k;
            }
        }
    }
    for (int i = 0; i < m->n_outputs; i++)
        readers[m->output_vid[i]] += 2; /* an output is seen: not folded away */
    for (int k = 0; k < m->n_nodes; k++) {
        const mnode *cv = &m->nodes[k];
        if (!is_op(cv->node, "Conv") || cv->node->n_output != 1 || cv->out[0] < 0)
            continue;
        int v = cv->out[0], r = reader[v];
        const mnode *bn = &m->nodes[r];
        if (readers[v] == 1 && is_op(bn->node, "BatchNormalization") && bn->in[0] == v &&
            bn->out[0] >= 0 && bn_is_inference(bn))
            plan[k] = r;
    }
    free(readers);
    free(reader);
    return plan;
}

/* t (known, of dtype dt, [o] elements) as float64 [o], or NULL */
static tg_tensor *channel_param(tg_tensor *t, tg_dtype dt, int64_t o)
{
    if (!t || tg_dtype_of(t) != dt || tg_numel(t) != o)
        return NULL;
    return tg_cast(tg_reshape(t, 1, &o), TG_FLOAT64);
}

static tg_status fold(const onnx_node *bn, tg_tensor *const in[6], tg_tensor **w_out,
                      tg_tensor **b_out)
{
    tg_tensor *w = in[0];
    tg_dtype dt = tg_dtype_of(w);
    int64_t o = tg_ndim(w) >= 3 ? tg_shape(w)[0] : -1;
    if (o < 0 || !tg_dtype_is_float(dt))
        return TG_ERR_UNSUPPORTED;
    tg_tensor *bias = in[1] ? channel_param(in[1], dt, o) : tg_zeros(TG_FLOAT64, 1, &o);
    tg_tensor *scale = channel_param(in[2], dt, o), *beta = channel_param(in[3], dt, o);
    tg_tensor *mean = channel_param(in[4], dt, o), *var = channel_param(in[5], dt, o);
    if (!bias || !scale || !beta || !mean || !var) {
        tg_clear_error();
        return TG_ERR_UNSUPPORTED;
    }
    const onnx_attribute *a = onnx_attr_in(bn, "epsilon");
    double eps = a ? (double)a->f : 1e-5;
    /* in float64, rounded once at the end */
    tg_tensor *s = tg_mul(scale, tg_rsqrt(tg_add_scalar(var, eps)));
    int64_t shape[TG_MAX_DIMS];
    shape[0] = o;
    for (int d = 1; d < tg_ndim(w); d++)
        shape[d] = 1;
    *w_out = tg_cast(tg_mul(tg_cast(w, TG_FLOAT64), tg_reshape(s, tg_ndim(w), shape)), dt);
    *b_out = tg_cast(tg_add(tg_mul(tg_sub(bias, mean), s), beta), dt);
    return *w_out && *b_out ? TG_OK : tg_last_status();
}

tg_status onnx_bn_fold(const onnx_node *bn, tg_tensor *const in[6], tg_tensor **w_out,
                       tg_tensor **b_out)
{
    *w_out = *b_out = NULL;
    int old_floor = tg__graph_suspend(); /* constants, not graph nodes */
    tg_no_grad_begin();
    tg_scope_begin();
    tg_status s = fold(bn, in, w_out, b_out);
    if (s == TG_OK) {
        tg_retain(*w_out);
        tg_retain(*b_out);
    }
    tg_scope_end();
    tg_no_grad_end();
    tg__graph_resume(old_floor);
    if (s != TG_OK) {
        *w_out = *b_out = NULL;
        tg_clear_error();
    }
    return s;
}
