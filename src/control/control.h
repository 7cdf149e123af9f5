/* Control flow internals shared by the ops (ops.c), their rules (rules.c,
 * while_grad.c) and the public functions (api.c). */
#ifndef TG_CONTROL_IMPL_H
#define TG_CONTROL_IMPL_H

#include "graph/graph_impl.h"
#include "tg/control.h"

typedef struct tg_cond_attrs {
    struct tg_graph *then_branch, *else_branch;
} tg_cond_attrs;

/* while_loop's attributes, and while_grad's (which adds body_grad) */
typedef struct tg_while_attrs {
    struct tg_graph *cond, *body;
    int64_t max_iterations; /* 0: no limit */
    const char *name;
    /* while_grad only: the body's gradient graph, traced when the rule
     * ran; absent when the variables' shapes are known only at run time,
     * then made per shape signature by the kernel (grad_caps: the body
     * captures differentiated) */
    struct tg_graph *body_grad;
    tg_ints grad_caps;
} tg_while_attrs;

/* how a loop node's inputs split: nv variables, nc captures of the
 * condition, nb of the body; while_grad adds nd output gradients (one per
 * float variable) and ng captures of body_grad */
typedef struct tg_loop_layout {
    int nv, nc, nb, nd, ng;
} tg_loop_layout;

extern const tg_op_def tg_op_cond, tg_op_while_loop, tg_op_while_grad;

tg_status tg__loop_layout(const char *op, const tg_while_attrs *a, int n_in,
                          tg_loop_layout *l);
/* runs the condition on vars (iteration it): *go; an error past
 * max_iterations */
tg_status tg__loop_test(const tg_while_attrs *a, const tg_loop_layout *l,
                        tg_tensor *const *vars, tg_tensor *const *caps, int64_t it,
                        bool *go);
/* vars = body(vars, caps), releasing the old ones */
tg_status tg__loop_step(const tg_while_attrs *a, const tg_loop_layout *l, tg_tensor **vars,
                        tg_tensor *const *caps);
bool tg__flag_value(const tg_tensor *t);
/* the results a callback wrote when it decides their number: the non-NULL
 * prefix of out[0..TG_MAX_OP_OUTPUTS) */
int tg__count_results(tg_tensor *const *out);
const char *tg__meta_str(const tg_meta *m, char *buf, size_t len);

/* rules (rules.c) and the backward loop's kernel (while_grad.c) */
tg_status tg__cond_grad(tg_grad_ctx *g);
tg_status tg__cond_jvp(tg_jvp_ctx *c);
tg_status tg__while_grad(tg_grad_ctx *g);
tg_status tg__while_jvp(tg_jvp_ctx *c);
tg_status tg__while_grad_kernel(tg_op_ctx *c);
/* traces the body's gradient graph for inputs of the given metadata
 * (variables, body captures, gradients of the float variables): results
 * are the gradients of the float variables, then of the captures listed
 * in caps (n_caps); parent is the enclosing graph, or NULL at run time */
tg_graph *tg__while_body_grad(tg_graph *parent, const tg_while_attrs *a, const tg_meta *m,
                              int n_caps, const int64_t *caps);

/* the graph a control op goes to: the open scope's, else a symbolic
 * input's; NULL in eager mode */
tg_graph *tg__control_graph(int n, tg_tensor *const *in);
/* appends a control node of op with the given inputs (parameters first),
 * the bodies' captures after them in the order of `bodies`, and the
 * attributes; seals the bodies; outputs are published */
tg_status tg__control_node(const tg_op_def *op, int n_in, tg_tensor *const *in,
                           int n_bodies, tg_graph *const *bodies, const tg_attr *attrs,
                           int n_attrs, tg_tensor **out);

#endif
