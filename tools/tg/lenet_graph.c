/* LeNet-5's training step as a static graph (see lenet_graph.h): the
 * update is tg_graph_sgd's (PyTorch's SGD with momentum) on momentum
 * buffers this file owns, so that graphs for two batch sizes share them. */
#include "lenet_graph.h"

#include <stdio.h>
#include <string.h>

tg_status sgd_state_init(sgd_state *s, tg_module *model, double lr, double momentum,
                         tg_named_tensor **names_out)
{
    memset(s, 0, sizeof *s);
    s->lr = lr;
    s->momentum_factor = momentum;
    int n = tg_module_parameters(model, names_out);
    if (n < 0)
        return tg_last_status();
    if (n > 16)
        return TG_ERR_ARG;
    s->n = n;
    for (int i = 0; i < n; i++) {
        s->params[i] = (*names_out)[i].tensor;
        s->names[i] = (*names_out)[i].name;
        s->momentum[i] = tg_zeros_like(s->params[i]);
        if (!s->momentum[i])
            return tg_last_status();
    }
    return TG_OK;
}

void sgd_state_free(sgd_state *s)
{
    for (int i = 0; i < s->n; i++)
        tg_release(s->momentum[i]);
    s->n = 0;
}

static tg_status build(lenet_graph *lg, tg_module *model, sgd_state *st,
                       int64_t batch, bool backward, bool update)
{
    lg->batch = batch;
    lg->graph = tg_graph_new("lenet_train_step");
    if (!lg->graph)
        return tg_last_status();
    tg_tensor *vars[16];
    char name[160];
    tg_status s = TG_OK;
    for (int i = 0; i < st->n && s == TG_OK; i++) {
        snprintf(name, sizeof name, "%s/momentum", st->names[i]);
        vars[i] = tg_variable_ref(lg->graph, st->names[i], st->params[i]);
        if (!vars[i] || (update && !tg_variable_ref(lg->graph, name, st->momentum[i])))
            s = tg_last_status();
    }
    if (s != TG_OK)
        return s;
    lg->x = tg_placeholder(lg->graph, "x", TG_FLOAT32, 4, (int64_t[]){batch, 1, 28, 28});
    lg->y = tg_placeholder(lg->graph, "y", TG_INT64, 1, &batch);
    if ((s = tg_graph_begin(lg->graph)) != TG_OK)
        return s;
    lg->logits = tg_module_forward(model, lg->x);
    lg->loss = tg_cross_entropy(lg->logits, lg->y, TG_REDUCTION_MEAN);
    s = lg->loss ? TG_OK : tg_last_status();
    tg_graph_end();
    if (s == TG_OK && backward && update) {
        tg_sgd_opts o = tg_sgd_defaults();
        o.lr = st->lr;
        o.momentum = st->momentum_factor;
        s = tg_graph_sgd(lg->loss, st->n, vars, &o, NULL, lg->updates);
        lg->n_params = s == TG_OK ? st->n : 0;
    } else if (s == TG_OK && backward) {
        tg_tensor *grads[16];
        s = tg_graph_gradients(lg->graph, 1, &lg->loss, NULL, st->n, vars, grads);
    }
    if (s == TG_OK && !(lg->session = tg_session_new(lg->graph)))
        s = tg_last_status();
    return s;
}

/* lg owns a reference to each symbolic tensor it keeps, whatever scope
 * the graph was built in (the build's own scope drops its references) */
static void own_handles(lenet_graph *lg)
{
    tg_retain(lg->x);
    tg_retain(lg->y);
    tg_retain(lg->logits);
    tg_retain(lg->loss);
    for (int i = 0; i < lg->n_params; i++)
        tg_retain(lg->updates[i]);
}

tg_status lenet_graph_build(lenet_graph *lg, tg_module *model, sgd_state *st,
                            int64_t batch, bool backward, bool update)
{
    memset(lg, 0, sizeof *lg);
    tg_scope_begin();
    tg_status s = build(lg, model, st, batch, backward, update);
    own_handles(lg);
    tg_scope_end();
    if (s != TG_OK)
        lenet_graph_free(lg);
    return s;
}

tg_status lenet_graph_step(lenet_graph *lg, tg_tensor *x, tg_tensor *y, double *loss)
{
    tg_tensor *feeds[2] = {lg->x, lg->y}, *batch[2] = {x, y}, *l;
    tg_status s = tg_session_run(lg->session, 2, feeds, batch, 1, &lg->loss, &l, lg->n_params,
                                 lg->updates);
    if (s == TG_OK)
        *loss = tg_item(l);
    return s;
}

void lenet_graph_free(lenet_graph *lg)
{
    tg_release(lg->x);
    tg_release(lg->y);
    tg_release(lg->logits);
    tg_release(lg->loss);
    for (int i = 0; i < lg->n_params; i++)
        tg_release(lg->updates[i]);
    tg_session_free(lg->session);
    tg_graph_free(lg->graph);
    memset(lg, 0, sizeof *lg);
}
