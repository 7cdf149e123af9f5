/* Tracing (dynamic to static, like torch.jit.trace): an eager function run
 * once on placeholders inside a graph scope leaves its ops in the graph. */
#include "graph/graph_impl.h"

#include <stdio.h>
#include <string.h>

tg_status tg_graph_trace(tg_graph *g, tg_trace_fn fn, void *user, int n_in,
                         tg_tensor *const *examples, const char *const *names,
                         tg_tensor **inputs, int n_out, tg_tensor **outputs)
{
    if (!g || !fn || n_in < 0 || n_out < 1 || (n_in && (!examples || !inputs)) || !outputs)
        return tg__error(TG_ERR_ARG, "tg_graph_trace: NULL graph or function, or bad "
                         "input/output counts (%d, %d)", n_in, n_out);
    for (int i = 0; i < n_in; i++)
        inputs[i] = NULL;
    for (int i = 0; i < n_out; i++)
        outputs[i] = NULL;
    tg_status s = TG_OK;
    tg_scope_begin(); /* fn's intermediates go; inputs and outputs are kept */
    for (int i = 0; i < n_in && s == TG_OK; i++) {
        const tg_tensor *x = examples[i];
        char name[48];
        snprintf(name, sizeof name, "input_%d", i);
        for (int k = 1; !(names && names[i]) && tg__hmap_get(&g->names, name) >= 0; k++)
            snprintf(name, sizeof name, "input_%d_%d", i, k); /* traced before */
        if (!x)
            s = tg__error(TG_ERR_ARG, "tg_graph_trace: example %d is NULL", i);
        else if (!(inputs[i] = tg_placeholder(g, names && names[i] ? names[i] : name,
                                              x->dtype, x->ndim, x->shape)))
            s = tg_last_status();
    }
    if (s == TG_OK && (s = tg_graph_begin(g)) == TG_OK) {
        s = fn(user, inputs, outputs);
        tg_graph_end();
    }
    for (int i = 0; i < n_out && s == TG_OK; i++) {
        if (!outputs[i])
            s = tg__error_is_set() ? tg_last_status()
                                   : tg__error(TG_ERR_ARG, "tg_graph_trace: the "
                                               "function left output %d NULL", i);
        else if (outputs[i]->graph != g)
            s = tg__error(TG_ERR_ARG, "tg_graph_trace: output %d is %s, not a value "
                          "computed in graph '%s'", i,
                          outputs[i]->graph ? "a value of another graph"
                                            : "a concrete tensor", g->name);
    }
    if (s != TG_OK) {
        char msg[900];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        tg_status st = tg_last_status() != TG_OK ? tg_last_status() : s;
        tg_scope_end();
        for (int i = 0; i < n_in; i++)
            inputs[i] = NULL;
        for (int i = 0; i < n_out; i++)
            outputs[i] = NULL;
        return tg__error(st, "tg_graph_trace: %s", msg);
    }
    /* fresh references, whoever owned what fn returned (an input, say) */
    for (int i = 0; i < n_in; i++)
        tg_retain(inputs[i]);
    for (int i = 0; i < n_out; i++)
        tg_retain(outputs[i]);
    tg_scope_end();
    for (int i = 0; i < n_in; i++)
        tg__publish(inputs[i]);
    for (int i = 0; i < n_out; i++)
        tg__publish(outputs[i]);
    return TG_OK;
}
