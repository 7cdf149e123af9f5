/* The marked dims of values computed from shapes that a graph knows only
 * when it runs (values.h, onnx_ictx.dims): which ops carry them and how,
 * and when such a value is in fact known. Called by build_node after a
 * node's mapping ran in graph mode. */
#include "onnx/build.h"

#include "core/tensor_impl.h"
#include "graph/graph_impl.h"

#include <stdlib.h>
#include <string.h>

/* Shape of a dim unknown until the graph runs gives shape_of's values.
 * Beside them the value keeps its dims (values.h): the shape with
 * ONNX_RUN_TIME_DIM marking that dim. A Reshape or Expand whose target is
 * computed from shapes reads them (a marked dim keeps the input's own
 * unknown dim, tg_reshape's -1 rule), so a flatten to [batch, -1] stays
 * [-1, known] when the graph is built, and a value whose marked dims all
 * drop out (Shape(x)[1] of x [-1, 3]) is a known constant. The ops below
 * carry dims by running on them as on constants, dims on their data
 * inputs only (a marked Slice start or Gather index would be read as a
 * number): those that move values without changing them (a Cast would
 * not keep the mark), Where on a known condition, and Equal against
 * negative values, which no size equals (torch.onnx's expand writes
 * Where(Equal(shape, -1), 1, shape)). */
static const struct {
    const char *op;
    unsigned data_inputs; /* bit j: input j may hold dims */
} carrying_ops[] = {{"Gather", 1}, {"Slice", 1}, {"Concat", ~0u}, {"Unsqueeze", 1},
                    {"Squeeze", 1}, {"Identity", 1}, {"Reshape", 1}, {"Where", 6},
                    {"Equal", 3}};

/* the inputs of c that may hold dims, or 0 when c's op does not carry them */
static unsigned carrying_inputs(const onnx_ictx *c)
{
    for (size_t i = 0; i < sizeof carrying_ops / sizeof carrying_ops[0]; i++)
        if (!strcmp(c->node->op_type, carrying_ops[i].op))
            return carrying_ops[i].data_inputs;
    return 0;
}

/* Equal compares dims only with known values all below 0 */
static bool carry_is_sound(const onnx_ictx *c)
{
    if (strcmp(c->node->op_type, "Equal"))
        return true;
    for (int j = 0; j < c->n_in; j++) {
        const tg_tensor *k = c->dims[j] ? NULL : c->val[j];
        if (c->dims[j])
            continue;
        int64_t n = k ? tg_numel(k) : 0, v[64];
        if (!k || n > 64 || tg_dtype_is_float(tg_dtype_of(k)) || tg_copy_to(k, TG_INT64, v))
            return tg_clear_error(), false;
        for (int64_t e = 0; e < n; e++)
            if (v[e] >= 0)
                return false;
    }
    return c->n_in == 2 && (!c->dims[0] || !c->dims[1]);
}

/* output j's dims t; when t marks no dim (Shape(x)[1] of x [-1, 3] is
 * 3), the value is known: t itself, a constant from here on */
static void keep_dims(build_state *b, const mnode *mn, int j, tg_tensor *t)
{
    int v = mn->out[j];
    if (v < 0 || !t || tg_is_symbolic(t))
        return;
    if (tg_dtype_of(t) == TG_BOOL) { /* Equal's: no dim to mark */
        onnx_values_set_tensor(&b->vs, v, t, true);
        tg__storage_freeze(t);
        return;
    }
    if (tg_dtype_of(t) != TG_INT64)
        return;
    tg_tensor *flat = tg_contiguous(t); /* the build's scope owns it */
    const int64_t *d = flat ? tg_data(flat) : NULL;
    bool marked = !d; /* no memory: keep it as dims */
    for (int64_t i = 0; d && i < tg_numel(t); i++)
        marked |= d[i] == ONNX_RUN_TIME_DIM;
    if (!marked) {
        onnx_values_set_tensor(&b->vs, v, t, true);
        tg__storage_freeze(t);
        return;
    }
    tg_release(b->vs.dims[v]);
    b->vs.dims[v] = tg_retain(t);
}

void onnx_carry_dims(build_state *b, const mnode *mn, onnx_ictx *c)
{
    bool any = false;
    for (int j = 0; j < c->n_out; j++)
        if (c->dims_out[j]) {
            keep_dims(b, mn, j, c->dims_out[j]);
            any = true;
        }
    unsigned data = carrying_inputs(c);
    if (any || !data || !carry_is_sound(c))
        return;
    onnx_ictx d = *c;
    for (int j = 0; j < c->n_in; j++) {
        if (c->dims[j] && !(data & (1u << j)))
            return; /* a marked dim read as a number */
        if (c->dims[j]) {
            d.in[j] = d.val[j] = c->dims[j];
            d.known[j] = any = true;
        } else if (c->in[j] && !c->val[j]) {
            return; /* another value the graph computes */
        }
    }
    if (!any)
        return;
    memset(d.out, 0, sizeof d.out);
    d.folding = true;
    d.n_tmp = 0;
    int old = tg__graph_suspend();
    tg_no_grad_begin();
    tg_status s = mn->entry->import(&d);
    tg_no_grad_end();
    tg__graph_resume(old);
    for (int j = 0; s == TG_OK && j < d.n_out; j++)
        keep_dims(b, mn, j, d.out[j]);
    if (s != TG_OK)
        tg_clear_error(); /* no dims: a Reshape reading them says it needs a constant */
    for (int k = 0; k < d.n_tmp; k++)
        free(d.tmp[k]);
}
