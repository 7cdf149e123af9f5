/* Forward-mode autodiff (Jacobian-vector products), the counterpart of
 * vjp.h: running one op's JVP rule (jvp.c), which symbolic forward mode
 * (src/graph/jvp.c) uses, and the helpers and generic rules op
 * definitions write their rules with (jvp_helpers.c). The rule interface,
 * tg_jvp_ctx, is in ops/op.h; each op's rule is its definition's `jvp`
 * (or comes from its `deriv`). */
#ifndef TG_JVP_H
#define TG_JVP_H

#include "ops/op.h"

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

/* ---- writing rules ---------------------------------------------------------- */
/* the status of an op that returned NULL inside rule c */
tg_status tg__jvp_fail(const tg_jvp_ctx *c);
/* dy[o] = t, where t NULL means an op failed */
tg_status tg__jvp_set(tg_jvp_ctx *c, int o, tg_tensor *t);
/* acc + term, either of which may be absent (acc NULL: none yet); NULL
 * only when an op failed (term NULL is a failure, not a zero) */
tg_tensor *tg__jvp_add_term(tg_tensor *acc, tg_tensor *term);
/* acc += expr inside a rule with context c; returns from the rule when
 * an op failed */
#define TG_JVP_TERM(c, acc, expr)                                           \
    do {                                                                    \
        if (!((acc) = tg__jvp_add_term((acc), (expr))))                     \
            return tg__jvp_fail(c);                                         \
    } while (0)
/* a 0-d tensor of output 0's dtype */
tg_tensor *tg__jvp_scalar(const tg_jvp_ctx *c, double v);
/* the op itself on its first n inputs with input i replaced by its
 * tangent: the tangent of an op linear in input i (the others fixed) */
tg_tensor *tg__jvp_with_tangent(const tg_jvp_ctx *c, int i, int n);
/* the sum over the first n inputs of tg__jvp_with_tangent (an op linear
 * in each separately: matmul); NULL with *s TG_OK when no tangent */
tg_tensor *tg__jvp_multilinear_terms(tg_jvp_ctx *c, int n, tg_status *s);

/* ---- generic rules, for an op definition's `jvp` ---------------------------- */
/* linear in input 0; the other inputs (indices, labels, relu_grad's y)
 * have no effect on the tangent */
tg_status tg__jvp_linear(tg_jvp_ctx *c);
/* linear in each input separately (matmul) */
tg_status tg__jvp_multilinear(tg_jvp_ctx *c);
/* linear in all inputs together (concat): zeros for absent tangents */
tg_status tg__jvp_joint_linear(tg_jvp_ctx *c);

#endif
