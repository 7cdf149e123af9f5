/* Eager forward mode, tg_jvp: fn traced into a temporary graph, its
 * tangent nodes appended by tg_graph_jvp, and outputs and tangents
 * computed by one session run at the given point. */
#include "autodiff/jvp.h"
#include "graph/graph_impl.h"
#include "tg/autograd.h"
#include "tg/runtime.h"

#include <stdio.h>
#include <stdlib.h>

static tg_status check_args(tg_jvp_fn fn, int n_in, tg_tensor *const *inputs,
                            tg_tensor *const *tangents, int n_out,
                            tg_tensor **out_tangents)
{
    if (!fn || n_in < 1 || !inputs || n_out < 1 || !out_tangents)
        return tg__error(TG_ERR_ARG, "tg_jvp: need a function, at least one input "
                         "and one output, and an out_tangents array (got %d inputs, "
                         "%d outputs)", n_in, n_out);
    for (int i = 0; i < n_in; i++) {
        const tg_tensor *x = inputs[i], *t = tangents ? tangents[i] : NULL;
        char name[32];
        snprintf(name, sizeof name, "inputs[%d]", i);
        if (!x)
            return tg__error(TG_ERR_ARG, "tg_jvp: inputs[%d] is NULL", i);
        if (x->graph || (t && t->graph))
            return tg__error(TG_ERR_ARG, "tg_jvp: %s[%d] is symbolic; tg_jvp takes "
                             "concrete tensors (use tg_graph_jvp in a graph)",
                             x->graph ? "inputs" : "tangents", i);
        tg_meta m;
        tg_meta_of(x, &m);
        tg_status s = tg__jvp_check_tangent("tg_jvp", i, t, &m, name);
        if (s != TG_OK)
            return s;
    }
    return TG_OK;
}

/* the input whose placeholder v is, or -1 (fn returned an input as is:
 * a fed value cannot be fetched, and it is that input anyway) */
static int fed_input(tg_tensor *v, int n_in, tg_tensor *const *ph)
{
    for (int k = 0; k < n_in; k++)
        if (v->value == ph[k]->value)
            return k;
    return -1;
}

/* runs the traced graph: results[0..n_out) outputs, then the tangents */
static tg_status evaluate(tg_graph *g, int n_in, tg_tensor *const *inputs,
                          tg_tensor *const *ph, int n, tg_tensor *const *values,
                          tg_tensor **results)
{
    tg_tensor **fetch = malloc((size_t)n * sizeof *fetch);
    tg_tensor **got = malloc((size_t)n * sizeof *got);
    int *slot = malloc((size_t)n * sizeof *slot);
    tg_session *sess = tg_session_new(g);
    tg_status s = fetch && got && slot && sess
                      ? TG_OK : tg__error(TG_ERR_NOMEM, "tg_jvp: out of memory");
    int n_fetch = 0;
    for (int i = 0; i < n && s == TG_OK; i++) {
        int k = fed_input(values[i], n_in, ph);
        if (k >= 0) {
            results[i] = tg_retain(inputs[k]);
        } else {
            slot[n_fetch] = i;
            fetch[n_fetch++] = values[i];
        }
    }
    if (s == TG_OK && n_fetch > 0)
        s = tg_session_run(sess, n_in, ph, inputs, n_fetch, fetch, got, 0, NULL);
    for (int j = 0; j < n_fetch && s == TG_OK; j++)
        results[slot[j]] = tg_retain(got[j]); /* got[j] is in the caller's scope */
    tg_session_free(sess);
    free(fetch);
    free(got);
    free(slot);
    return s;
}

tg_status tg_jvp(tg_jvp_fn fn, void *user, int n_in, tg_tensor *const *inputs,
                 tg_tensor *const *tangents, int n_out, tg_tensor **outputs,
                 tg_tensor **out_tangents)
{
    for (int k = 0; out_tangents && k < n_out; k++) {
        out_tangents[k] = NULL;
        if (outputs)
            outputs[k] = NULL;
    }
    tg_status s = check_args(fn, n_in, inputs, tangents, n_out, out_tangents);
    if (s != TG_OK)
        return s;
    int n = 2 * n_out;
    tg_tensor **ph = calloc((size_t)n_in, sizeof *ph);
    tg_tensor **values = calloc((size_t)n, sizeof *values);
    tg_tensor **results = calloc((size_t)n, sizeof *results);
    tg_graph *g = tg_graph_new("jvp");
    if (!ph || !values || !results || !g)
        s = tg__error(TG_ERR_NOMEM, "tg_jvp: out of memory");
    /* we own every reference we make: hide the caller's scopes, and let
     * one scope of ours take the graph's symbolic tensors */
    int floor = tg__scope_suspend();
    tg_scope_begin();
    if (s == TG_OK)
        s = tg_graph_trace(g, fn, user, n_in, inputs, NULL, ph, n_out, values);
    if (s == TG_OK)
        s = tg_graph_jvp(g, n_in, ph, tangents, n_out, values, values + n_out);
    if (s == TG_OK)
        s = evaluate(g, n_in, inputs, ph, n, values, results);
    tg_scope_end();
    tg__scope_resume(floor);
    tg_graph_free(g);
    for (int i = 0; i < n && results; i++) {
        tg_tensor **dst = i < n_out ? (outputs ? &outputs[i] : NULL) : &out_tangents[i - n_out];
        if (s == TG_OK && dst)
            *dst = tg__publish(results[i]);
        else
            tg_release(results[i]);
    }
    free(ph);
    free(values);
    free(results);
    return s;
}
