/* Nodes of the eager autograd tape (the dynamic graph). A node is one
 * recorded op application: edges to where its inputs' gradients go, the
 * tensors its gradient rule needs, and the op's attributes. */
#ifndef TG_NODE_H
#define TG_NODE_H

#include "ops/op.h"
#include "tg/autograd.h"

/* where an input's gradient flows: into another node's output, or into a
 * leaf's grad. Both NULL: the input needs no gradient. */
typedef struct tg_edge {
    struct tg_node *node; /* owned reference */
    int index;            /* output index of node */
    tg_tensor *leaf;      /* owned reference */
} tg_edge;

/* a hook added by tg_grad_node_add_hook (a list in the order added) */
typedef struct tg_node_hook {
    tg_grad_node_hook fn;
    void *user;
    void (*user_free)(void *user);
    bool pre;
    struct tg_node_hook *next;
} tg_node_hook;

typedef struct tg_node {
    int refcount;
    const tg_op_def *op;          /* NULL for custom functions */
    const tg_function *fn;        /* custom function, or NULL */
    void *fn_user;
    struct tg_function_ctx *fn_ctx;
    const char *name;
    int n_in, n_out;
    tg_edge *edges;          /* n_in */
    tg_tensor **saved_in;    /* n_in, NULL where not saved */
    tg_tensor **saved_out;   /* n_out */
    uint64_t *ver_in, *ver_out;
    tg_meta *in_meta, *out_meta;
    tg_attr *attrs;
    int n_attrs;
    void *attr;              /* op's struct, decoded from attrs */
    bool released;           /* saved tensors freed by backward */
    tg_node_hook *hooks;     /* owned; NULL: none */
    /* set: a backward that needs this node fails with it before any rule
     * runs (what PyTorch refuses only at backward: a write through a view
     * whose elements share memory, view_history.c) */
    const char *backward_error;
} tg_node;

/* records the op application in c (outputs already made) when grad mode
 * is on and an input requires grad; marks outputs. */
tg_status tg__record(tg_op_ctx *c);
/* allocates a node with arrays for n_in/n_out (custom functions use it) */
tg_node *tg__node_new(int n_in, int n_out);
/* sets the edge for input i from the tensor that fed it */
void tg__node_set_edge(tg_node *n, int i, tg_tensor *in);
/* a new tensor struct over all of t's view, without grad_fn, carrying t's
 * tangent (forward mode): a saved output (no cycle through its node), one
 * unpacked for a rule, a custom function's output */
tg_tensor *tg__alias_whole(tg_tensor *t);
void tg__node_release(tg_node *n);
/* n's op in PyTorch's grad_fn spelling (sqrt -> SqrtBackward0, a custom
 * function's name + Backward) into buf */
void tg__node_display_name(const tg_node *n, char *buf, size_t len);
/* frees the saved tensors (after backward without retain_graph) */
void tg__node_free_saved(tg_node *n);
/* does any input require grad while grad mode is on? */
bool tg__should_record(int n_in, tg_tensor *const *in);
/* fails (TG_ERR_AUTOGRAD) when a tensor n saved was modified in place */
tg_status tg__check_saved(const tg_node *n);
/* runs n's gradient rule: dy[n_out] in (NULL: zeros), dx[n_in] out (new
 * references) for the inputs with needs[i] */
tg_status tg__run_rule(tg_node *n, tg_tensor **dy, tg_tensor **dx,
                       const bool *needs, bool create_graph);
/* runs n's hooks of one kind (grad_node.c); post hooks' replacements
 * are checked against the inputs' shapes and cast to their dtypes */
tg_status tg__node_run_hooks(tg_node *n, bool pre, tg_tensor **grad_inputs,
                             tg_tensor **grad_outputs);
void tg__node_free_hooks(tg_node *n);
/* custom functions (function.c) */
tg_status tg__function_backward(tg_node *n, tg_tensor *dy, tg_tensor **dx);
tg_status tg__function_check_saved(const struct tg_function_ctx *ctx);
void tg__function_ctx_free_saved(struct tg_function_ctx *ctx);
void tg__function_ctx_free(struct tg_function_ctx *ctx);

#endif
