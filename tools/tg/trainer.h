/* The training loop of `tg train lenet`: one step or one epoch in either
 * mode (eager autograd + an optimizer, or one static graph per step with
 * the optimizer's update inside), with the divergence check. */
#ifndef TG_TOOL_TRAINER_H
#define TG_TOOL_TRAINER_H

#include "lenet_graph.h"
#include "lenet_task.h"

#include <stdio.h>

typedef struct train_opts {
    const char *model; /* "lenet" or "lenet-bn" */
    const char *data, *optimizer, *save, *load, *mode, *profile, *export_path;
    const char *losses; /* every step's loss, one per line, to this file */
    int epochs, batch, threads, seed, prefetch, limit;
    int devices; /* graph mode: virtual CPU devices each step is spread over */
    int bucket_kb;      /* --distributed: gradient buckets of this many KiB */
    double lr, momentum;
    bool json, quiet, distributed, model_parallel;
    bool ranks; /* graph mode under mpirun: one device per process, rank 0 the master */
} train_opts;

/* What a training step needs in either mode. Eager: the optimizer runs
 * after backward. Graph: one session run per step of a graph holding the
 * forward, the backward and the optimizer's update (on its own state, so
 * checkpoints are the same in both modes); one graph for all batch sizes
 * (an unknown batch dim: the last batch of an epoch is smaller). */
typedef struct trainer {
    tg_module *model;
    /* draws the model's dropout masks (NULL: none); reseeded from the seed
     * and the epoch at each epoch, so a resumed run draws what a straight
     * run would */
    tg_generator *dropout;
    tg_optimizer *opt; /* its state is updated by eager steps or by the graph */
    bool graph_mode;
    int devices; /* > 1: the session partitions each step over cpu:0.. */
    bool ranks;  /* the devices are /rank:R/cpu:0, one per process (master/worker) */
    lenet_graph graph;
    bool built;
    const char *profile;  /* graph mode: Chrome trace of the first steps */
    tg_session *traced;
    int traced_steps;
    /* --distributed (dist_train.c): averages gradients across ranks */
    tg_dist_reducer *reducer;
    FILE *loss_log; /* --losses */
} trainer;

tg_status trainer_init(trainer *t, const train_opts *o, tg_module *model);
void trainer_free(trainer *t);
/* one epoch (number `epoch` of o->epochs) over the loader: returns the
 * mean loss, or NaN after printing why it failed. A loss that is not
 * finite stops training: "loss is NaN at epoch E step S; try a smaller
 * --lr" (nothing is saved afterwards). */
double trainer_epoch(trainer *t, tg_loader *loader, int epoch, const train_opts *o);

#endif
