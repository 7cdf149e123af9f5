/* LeNet-5's training step as one static graph: forward, symbolic
 * backward and the SGD-with-momentum update as assign nodes, so a step is
 * one session run (`tg train lenet --mode graph`, `tg graph lenet`). */
#ifndef TG_TOOL_LENET_GRAPH_H
#define TG_TOOL_LENET_GRAPH_H

#include "tg/tg.h"

typedef struct lenet_graph {
    tg_graph *graph;
    tg_session *session;
    int64_t batch;        /* -1: any batch size (an unknown dim) */
    tg_tensor *x, *y;     /* placeholders [B,1,28,28] float32, [B] int64 */
    tg_tensor *logits;    /* forward output */
    tg_tensor *loss;      /* mean cross entropy */
    int n_params;
    tg_tensor *updates[16]; /* assign nodes: run them as targets */
} lenet_graph;

/* the momentum buffers live outside the graphs, so that graphs for
 * different batch sizes (the last, smaller batch) share them */
typedef struct sgd_state {
    int n;
    tg_tensor *params[16];   /* the module's parameters (borrowed) */
    const char *names[16];
    tg_tensor *momentum[16]; /* owned; zeros at the start */
    double lr, momentum_factor;
} sgd_state;

tg_status sgd_state_init(sgd_state *s, tg_module *model, double lr, double momentum,
                         tg_named_tensor **names_out);
void sgd_state_free(sgd_state *s);

/* builds the graph for one batch size, or for all with batch -1 (the
 * batch dim unknown until fed); update false: forward and loss only
 * (backward true adds the gradients without the update) */
tg_status lenet_graph_build(lenet_graph *lg, tg_module *model, sgd_state *st,
                            int64_t batch, bool backward, bool update);
/* one training step on (x, y); *loss is the loss before the update */
tg_status lenet_graph_step(lenet_graph *lg, tg_tensor *x, tg_tensor *y, double *loss);
void lenet_graph_free(lenet_graph *lg);

#endif
