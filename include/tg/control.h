/* tensorgraph control flow: cond, while_loop and scan, functional style
 * as TF2 and ONNX (If, Loop, Scan) rather than TF1's Switch/Merge.
 *
 * A branch or body is a callback with the shape of tg_trace_fn: it gets
 * tensors and writes its results (see tg/graph.h), with one user pointer
 * shared by the callbacks of a call.
 *
 * Eager mode (no graph scope open, no symbolic input): the callbacks run
 * on the host, once per branch taken or iteration, and their ops go on
 * the autograd tape like any others, so tg_backward, tg_autograd_grad and
 * tg_jvp work through them.
 * Graph mode (inside tg_graph_begin/end, or a symbolic input): each
 * callback is traced once into a graph of its own (its inputs are
 * placeholders) and ONE node is appended whose attributes hold those
 * graphs ("then_branch"/"else_branch", "cond"/"body", as ONNX names
 * them). Values of the enclosing graph a callback uses without being
 * given them (closures) become explicit inputs of the node (captures);
 * nesting works (a cond inside a loop body). Bodies must be pure: state
 * updates (tg_assign), random ops and variables inside them are refused.
 * tg_graph_gradients and tg_graph_jvp differentiate through the nodes
 * (docs/CONTROL_FLOW.md explains how). */
#ifndef TG_CONTROL_H
#define TG_CONTROL_H

#include "tg/graph.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* the most results a branch or body gives, and loop variables */
#define TG_CONTROL_MAX_RESULTS 32

/* if (pred) outputs = then_fn(inputs) else outputs = else_fn(inputs).
 * pred is a bool tensor of one element. In graph mode both branches are
 * traced and must give n_out results of the same dtypes and shapes (an
 * error names both branches and the output). n_out may be -1: the branch
 * (in graph mode the then branch) decides, writing its k results to
 * out[0..k) and leaving the rest NULL (outputs then has room for
 * TG_CONTROL_MAX_RESULTS; the entries after the results are NULL).
 * Outputs are new references (in the current scope). */
tg_status tg_cond(tg_tensor *pred, tg_trace_fn then_fn, tg_trace_fn else_fn, void *user,
                  int n_in, tg_tensor *const *inputs, int n_out, tg_tensor **outputs);

/* the shapes a loop variable may take across iterations: its rank and
 * dims, -1 for a dim that may change (eager mode only so far); ndim -1:
 * the variable's own shape */
typedef struct tg_shape_spec {
    int ndim;
    int64_t shape[TG_MAX_DIMS];
} tg_shape_spec;

typedef struct tg_loop_options {
    /* more iterations than this is an error naming the loop (0: no limit) */
    int64_t max_iterations;
    const char *name; /* for errors and the node's name; NULL: "while_loop" */
    /* n_vars entries, or NULL: each variable keeps its dtype and shape */
    const tg_shape_spec *shape_invariants;
} tg_loop_options;

/* vars = init; while (cond_fn(vars)) vars = body_fn(vars); outputs = vars.
 * cond_fn writes one bool tensor of one element; body_fn writes n_vars
 * tensors, each of its variable's dtype and shape (or its invariant): an
 * error names the variable otherwise. opt may be NULL. */
tg_status tg_while_loop(tg_trace_fn cond_fn, tg_trace_fn body_fn, void *user, int n_vars,
                        tg_tensor *const *init, tg_tensor **outputs,
                        const tg_loop_options *opt);

/* carry = init; for t in 0..L-1: (carry, y_t) = body_fn(carry, x_t);
 * carry_out = carry, ys[k] = the y_t stacked on a new first axis. The xs
 * (n_xs >= 1) share their first dim L, which must be known; x_t is row t
 * of each (that dim dropped). body_fn gets (carry..., x_t...) and writes
 * (carry'..., y_t...): n_carry carried values keeping dtype and shape,
 * then n_ys ys (n_ys -1: as many as it writes, the rest NULL; ys has room
 * for TG_CONTROL_MAX_RESULTS). In eager mode a host loop; in a graph a
 * while_loop node (whose gradients and tangents give scan's). */
tg_status tg_scan(tg_trace_fn body_fn, void *user, int n_carry, tg_tensor *const *init,
                  int n_xs, tg_tensor *const *xs, int n_ys, tg_tensor **carry_out,
                  tg_tensor **ys);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
