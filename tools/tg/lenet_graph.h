/* LeNet-5's training step as one static graph: forward, symbolic
 * backward and the optimizer's update (tg_graph_optim: SGD, Adam, AdamW,
 * Adadelta, on the optimizer's own state) as assign nodes, so a step is
 * one session run (`tg train lenet --mode graph`, `tg graph lenet`). */
#ifndef TG_TOOL_LENET_GRAPH_H
#define TG_TOOL_LENET_GRAPH_H

#include "tg/tg.h"

#define LENET_MAX_PARAMS 16

typedef struct lenet_graph {
    tg_graph *graph;
    tg_session *session;
    int64_t batch;        /* -1: any batch size (an unknown dim) */
    tg_tensor *x, *y;     /* placeholders [B,1,28,28] float32, [B] int64 */
    tg_tensor *logits;    /* forward output */
    tg_tensor *loss;      /* mean cross entropy */
    int n_params;
    tg_tensor *updates[LENET_MAX_PARAMS]; /* assign nodes: run them as targets */
} lenet_graph;

/* builds the graph for one batch size, or for all with batch -1 (the
 * batch dim unknown until fed): forward and loss; backward adds the
 * gradients, and with opt (over model's parameters, in their order) its
 * update, whose state (buffers, step counts) stays opt's: checkpoints
 * are opt's state dict in either mode */
tg_status lenet_graph_build(lenet_graph *lg, tg_module *model, tg_optimizer *opt,
                            int64_t batch, bool backward);
/* one training step on (x, y); *loss is the loss before the update */
tg_status lenet_graph_step(lenet_graph *lg, tg_tensor *x, tg_tensor *y, double *loss);
void lenet_graph_free(lenet_graph *lg);

#endif
