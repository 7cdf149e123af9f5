/* One application of a gradient rule (a vector-Jacobian product), shared
 * by the eager engine (engine.c, rule.c) and symbolic autodiff
 * (src/graph/gradients.c): the one algorithm, two sources of tensors. */
#ifndef TG_VJP_H
#define TG_VJP_H

#include "ops/op.h"

typedef struct tg_vjp {
    const tg_op_def *op;
    const char *name; /* the node, for messages */
    int n_in, n_out;
    tg_tensor *const *in;  /* saved inputs, NULL where not saved */
    tg_tensor *const *out; /* saved outputs, NULL where not saved */
    const tg_meta *in_meta, *out_meta;
    const bool *needs_grad;
    const void *attr; /* the op's decoded attribute struct */
    const tg_attr *attrs;
    int n_attrs;
} tg_vjp;

/* Runs v's rule in a scope of its own, so that everything it makes but
 * the input gradients is freed at once. dy[o] NULL means zeros. Writes
 * dx[i] as new references owned by the caller (NULL where no gradient),
 * each checked against in_meta[i]'s shape and cast to its dtype. */
tg_status tg__vjp_run(const tg_vjp *v, tg_tensor *const *dy, tg_tensor **dx);
/* checks a gradient g for input i against its metadata and casts it to
 * the input's dtype; consumes g. user_rule: a shape mismatch is the
 * user's error (custom functions), else it is tensorgraph's. */
tg_tensor *tg__grad_conform(const char *name, int i, const tg_meta *m,
                            tg_tensor *g, bool user_rule);
/* a + b for gradients that meet; consumes both (NULL on failure). The
 * engines call it with the caller's scopes suspended: they own the sum.
 * It is differentiable only when a graph is being built (create_graph,
 * or symbolic mode). */
tg_tensor *tg__grad_sum(tg_tensor *a, tg_tensor *b);

#endif
