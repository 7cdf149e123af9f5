/* Forward-mode autodiff (Jacobian-vector products), the counterpart of
 * vjp.h: the interface of a JVP rule, the rule table (jvp_rules.c, keyed
 * by op name, so op files need not change), and running one rule
 * (jvp.c), which symbolic forward mode (src/graph/jvp.c) uses. */
#ifndef TG_JVP_H
#define TG_JVP_H

#include "ops/op.h"

/* Passed to a JVP rule. dx[i] is the tangent of input i (NULL: zero; at
 * least one is not NULL), of the input's shape and dtype. The rule sets
 * dy[o] (NULL: zero) with public tg ops only, so that it runs inside a
 * graph scope (appending the tangent nodes) or eagerly. All inputs and
 * outputs are given (symbolic in a graph). Tensors the rule makes are
 * released by the runner's scope, dy excepted; dy may be an input tangent
 * itself. A rule returns TG_OK or the status of a failed op. */
typedef struct tg_jvp_ctx {
    const tg_op_def *op;
    const char *name; /* the node, for messages */
    int n_in, n_out;
    tg_tensor *const *in;
    tg_tensor *const *out;
    const tg_meta *in_meta, *out_meta;
    tg_tensor *const *dx;
    tg_tensor **dy;
    const tg_attr *attrs;
    int n_attrs;
} tg_jvp_ctx;

typedef tg_status (*tg_jvp_rule)(tg_jvp_ctx *c);

/* the forward-mode rule of op, or NULL when it has none */
tg_jvp_rule tg__jvp_rule(const tg_op_def *op);
/* the ops that have rules, by name (for tests and docs) */
int tg__jvp_rule_count(void);
const char *tg__jvp_rule_name(int i);

/* Runs the rule of c->op (c's dx and dy are ignored) on the input tangents
 * dx in a scope of its own. Writes dy[o] as new references owned by the
 * caller: NULL where the tangent is zero and for outputs that are not
 * floating point; else of the output's shape (a tangent that broadcasts
 * to it is expanded) and dtype (cast). An op without a rule fails with
 * TG_ERR_UNSUPPORTED naming the op and the node. */
tg_status tg__jvp_run(const tg_jvp_ctx *c, tg_tensor *const *dx, tg_tensor **dy);

/* checks tangent t (may be NULL: zero) for x, whose metadata is m: same
 * shape and dtype, floating point. Errors name fn, "tangents[i]" and the
 * x as `xname`. */
tg_status tg__jvp_check_tangent(const char *fn, int i, const tg_tensor *t,
                                const tg_meta *m, const char *xname);

#endif
