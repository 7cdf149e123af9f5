/* The training loop of `tg train lenet` (see trainer.h). */
#include "trainer.h"
#include "dist_train.h"
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PROFILE_STEPS 50

/* the first PROFILE_STEPS runs of the graph go into the trace */
static tg_status profile_step(trainer *t, lenet_graph *lg, bool before)
{
    if (!t->profile)
        return TG_OK;
    if (before)
        return t->traced ? TG_OK : tg_session_trace_begin(t->traced = lg->session);
    if (lg->session != t->traced || ++t->traced_steps < PROFILE_STEPS)
        return TG_OK;
    tg_status s = tg_session_trace_end(t->traced, t->profile);
    t->profile = NULL;
    return s;
}

/* the session spreads each step over cpu:0 .. cpu:n-1, or over the ranks'
 * /rank:R/cpu:0 (placed by its cost model, partitioned, Send/Recv between
 * the devices; other ranks run their partitions as workers) */
static tg_status use_devices(tg_session *s, int n, bool ranks)
{
    char names[64][32];
    const char *list[64];
    for (int i = 0; i < n && i < 64; i++) {
        snprintf(names[i], sizeof names[i], ranks ? "/rank:%d/cpu:0" : "cpu:%d", i);
        list[i] = names[i];
    }
    return tg_session_set_devices(s, n < 64 ? n : 64, list);
}

/* the one graph of every batch size (an unknown batch dim, -1: the
 * session specialises a plan to each size it is fed, the last smaller
 * batch of an epoch included), built at the first step, after a
 * checkpoint has set the optimizer's hyper-parameters */
static lenet_graph *the_graph(trainer *t)
{
    if (t->built)
        return &t->graph;
    if (lenet_graph_build(&t->graph, t->model, t->opt, -1, true) != TG_OK)
        return NULL;
    t->built = true;
    if (t->devices > 1 && use_devices(t->graph.session, t->devices, t->ranks) != TG_OK)
        return NULL;
    return &t->graph;
}

/* one step on (x, y); *loss is the loss before the update */
static tg_status trainer_step(trainer *t, tg_tensor *x, tg_tensor *y, double *loss)
{
    if (t->reducer)
        return dist_step(t, x, y, loss);
    if (t->graph_mode) {
        lenet_graph *lg = the_graph(t);
        tg_status s = lg ? profile_step(t, lg, true) : tg_last_status();
        if (s == TG_OK)
            s = lenet_graph_step(lg, x, y, loss);
        return s == TG_OK ? profile_step(t, lg, false) : s;
    }
    tg_tensor *l = tg_cross_entropy(tg_module_forward(t->model, x), y, TG_REDUCTION_MEAN);
    if (!l)
        return tg_last_status();
    *loss = tg_item(l);
    if (!isfinite(*loss))
        return TG_OK; /* the caller stops before an update makes it worse */
    tg_status s = tg_backward(l, NULL, false);
    if (s == TG_OK)
        s = tg_optim_step(t->opt);
    tg_optim_zero_grad(t->opt);
    return s;
}

tg_status trainer_init(trainer *t, const train_opts *o, tg_module *model)
{
    memset(t, 0, sizeof *t);
    t->model = model;
    t->graph_mode = !strcmp(o->mode, "graph");
    t->devices = o->ranks ? tg_dist_world_size() : o->devices;
    t->ranks = o->ranks;
    t->profile = o->profile;
    t->opt = lenet_optimizer(o->optimizer, model, o->lr, o->momentum);
    if (t->opt && o->distributed && !(t->reducer = dist_reducer(model, o->bucket_kb)))
        return tg_last_status();
    return t->opt ? TG_OK : tg_last_status();
}

void trainer_free(trainer *t)
{
    if (t->profile && t->traced && tg_session_trace_end(t->traced, t->profile) != TG_OK)
        fprintf(stderr, "tg: writing the profile: %s\n", tg_last_error());
    if (t->built)
        lenet_graph_free(&t->graph);
    tg_optim_free(t->opt);
    tg_dist_reducer_free(t->reducer);
    if (t->loss_log)
        fclose(t->loss_log);
}

static const char *nonfinite_name(double v)
{
    return isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf";
}

double trainer_epoch(trainer *t, tg_loader *loader, int epoch, const train_opts *o)
{
    progress pr;
    progress_begin(&pr, epoch, o->epochs, tg_loader_num_batches(loader), o->quiet);
    tg_module_train(t->model, true);
    tg_tensor *x, *y;
    int r;
    double loss = 0;
    int64_t step = 0;
    tg_status s = TG_OK;
    for (;;) {
        tg_scope_begin();
        r = tg_loader_next(loader, &x, &y);
        if (r == 1)
            s = trainer_step(t, x, y, &loss);
        int64_t images = r == 1 ? tg_size(x, 0) : 0;
        tg_scope_end();
        if (r != 1 || s != TG_OK || !isfinite(loss))
            break;
        step++;
        progress_step(&pr, images, loss);
        if (t->loss_log)
            fprintf(t->loss_log, "%.9g\n", loss);
    }
    double mean = progress_end(&pr);
    if (r < 0 || s != TG_OK) {
        fprintf(stderr, "tg: training failed at epoch %d step %lld: %s\n", epoch,
                (long long)step + 1, tg_last_error());
        return NAN;
    }
    /* the parameters and optimizer state the workers updated, for the
     * evaluation, checkpoint and export made here */
    if (r == 0 && t->ranks && t->built && tg_session_pull_variables(t->graph.session) != TG_OK) {
        fprintf(stderr, "tg: epoch %d: reading the workers' variables: %s\n", epoch,
                tg_last_error());
        return NAN;
    }
    if (r == 1) {
        fprintf(stderr, "tg: loss is %s at epoch %d step %lld; try a smaller --lr "
                        "(training stopped: nothing was saved or exported)\n",
                nonfinite_name(loss), epoch, (long long)step + 1);
        return NAN;
    }
    return mean;
}
