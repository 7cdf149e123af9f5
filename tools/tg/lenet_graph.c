/* LeNet-5's training step as a static graph (see lenet_graph.h): the
 * update is tg_graph_optim's, the optimizer's own formula on its own
 * state, so eager and graph steps give the same bits and share
 * checkpoints. */
#include "lenet_graph.h"

#include <string.h>

static tg_status build(lenet_graph *lg, tg_module *model, tg_optimizer *opt, int64_t batch,
                       bool backward)
{
    lg->batch = batch;
    lg->graph = tg_graph_new("lenet_train_step");
    if (!lg->graph)
        return tg_last_status();
    tg_named_tensor *names;
    int n = tg_module_parameters(model, &names);
    if (n < 0)
        return tg_last_status();
    tg_tensor *vars[LENET_MAX_PARAMS];
    tg_status s = n <= LENET_MAX_PARAMS ? TG_OK : TG_ERR_ARG;
    for (int i = 0; i < n && s == TG_OK; i++)
        if (!(vars[i] = tg_variable_ref(lg->graph, names[i].name, names[i].tensor)))
            s = tg_last_status();
    tg_named_tensors_free(names);
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
    if (s == TG_OK && backward && opt) {
        s = tg_graph_optim(opt, lg->loss, NULL, lg->updates);
        lg->n_params = s == TG_OK ? n : 0;
    } else if (s == TG_OK && backward) {
        tg_tensor *grads[LENET_MAX_PARAMS];
        s = tg_graph_gradients(lg->graph, 1, &lg->loss, NULL, n, vars, grads);
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

tg_status lenet_graph_build(lenet_graph *lg, tg_module *model, tg_optimizer *opt,
                            int64_t batch, bool backward)
{
    memset(lg, 0, sizeof *lg);
    tg_scope_begin();
    tg_status s = build(lg, model, opt, batch, backward);
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
