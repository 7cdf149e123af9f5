/* tensorgraph eager autograd: the dynamic graph (tape), backward, the
 * functional grad for higher-order derivatives, grad mode, custom
 * operators with C callbacks, and gradcheck. */
#ifndef TG_AUTOGRAD_H
#define TG_AUTOGRAD_H

#include "tg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* ---- leaves and gradients --------------------------------------------- */
/* marks a floating-point tensor as a leaf whose gradient is accumulated */
tg_status tg_set_requires_grad(tg_tensor *t, bool requires_grad);
bool tg_requires_grad(const tg_tensor *t);
bool tg_is_leaf(const tg_tensor *t);
/* the accumulated gradient (borrowed; owned by t), or NULL */
tg_tensor *tg_grad(const tg_tensor *t);
void tg_zero_grad(tg_tensor *t); /* drops the gradient */
/* replaces t's gradient by grad (same shape and dtype; retained, not
 * copied: later backward passes accumulate into it) or drops it (NULL) */
tg_status tg_set_grad(tg_tensor *t, tg_tensor *grad);
/* a new tensor sharing t's storage, cut off from the graph; of a graph's value
 * (symbolic t), a stop_gradient node: the same value, through which
 * gradients built over the graph do not flow */
tg_tensor *tg_detach(tg_tensor *t);
/* name of the op that produced t ("mul", ...), or NULL for a leaf */
const char *tg_grad_fn_name(const tg_tensor *t);
/* gives t's grad_fn the name `name` (kept by pointer: a string that
 * outlives the graph, such as a literal), for front ends whose op is made
 * of another C op and that show PyTorch's name for it ("TBackward0" for a
 * permute made by t()); a name holding "Backward" or starting with a
 * capital ("CopySlices") is shown as it is, a lower-case one in PyTorch's
 * spelling of an op name. Only a node t alone holds (no other output nor
 * later op holds it) is renamed; else, and for a tensor without grad_fn,
 * nothing changes (TG_OK). TG_ERR_ARG: NULL, an empty name. */
tg_status tg_set_grad_fn_name(tg_tensor *t, const char *name);

/* ---- the graph's nodes (PyTorch's grad_fn, next_functions, node hooks) ----
 * A node is one recorded op application (a custom function's too). It
 * lives while a tensor it made, a later node, or a reference taken here
 * holds it: a reference keeps the node and what its edges reach alive
 * (its saved tensors go as usual after backward without retain_graph).
 * References are not atomic: take and drop them on one thread at a time,
 * never while another thread runs backward through the node. */
typedef struct tg_node tg_grad_node;
/* t's grad_fn as a new reference, or NULL (a leaf, a tensor without
 * history, NULL t: no error) */
tg_grad_node *tg_grad_fn(const tg_tensor *t);
/* a new reference to n (returns n); NULL stays NULL */
tg_grad_node *tg_grad_node_retain(tg_grad_node *n);
/* drops a reference (NULL is ignored) */
void tg_grad_node_release(tg_grad_node *n);
/* the node's name, as tg_grad_fn_name gives it; NULL for NULL */
const char *tg_grad_node_name(const tg_grad_node *n);
/* the node's inputs, one edge each (PyTorch's len(next_functions)), and
 * its outputs; -1 (TG_ERR_ARG) for NULL */
int tg_grad_node_num_next(const tg_grad_node *n);
int tg_grad_node_num_outputs(const tg_grad_node *n);
/* where the gradient of input i goes: *node a new reference to the node
 * that made the input and *output_nr which of its outputs the input was
 * (*leaf NULL); or *leaf the leaf whose grad accumulates it (borrowed,
 * held by n; PyTorch's AccumulateGrad, *output_nr 0, *node NULL); or all
 * NULL / 0 when the input needs no gradient. TG_ERR_ARG: a NULL argument,
 * i outside [0, tg_grad_node_num_next(n)). */
tg_status tg_grad_node_next(const tg_grad_node *n, int i, tg_grad_node **node,
                            int *output_nr, tg_tensor **leaf);
/* A node hook runs when backward reaches the node, on the thread running
 * backward (tg_backward, tg_backward_ex, tg_autograd_grad), only when the
 * node's rule runs. grad_outputs[n_out] are the gradients of the node's
 * outputs (NULL: none reached that output); a pre hook (grad_inputs NULL)
 * runs before the rule, a post hook after it, with grad_inputs[n_in] the
 * gradients the rule gives its inputs (NULL where none). Entries are
 * references the engine owns: a hook may replace one (release it, store a
 * new reference, same shape; NULL for none), which is what the rule
 * receives (pre) or what flows on to the inputs (post). An error status
 * ends backward with it. */
typedef tg_status (*tg_grad_node_hook)(void *user, tg_grad_node *n, int n_in,
                                       tg_tensor **grad_inputs, int n_out,
                                       tg_tensor **grad_outputs);
/* adds hook to n, a pre hook (before the rule) or a post hook; the hooks
 * of each kind run in the order added. user_free(user) (may be NULL) is
 * called once when n is freed, on whichever thread frees it. TG_ERR_ARG:
 * NULL n or hook. */
tg_status tg_grad_node_add_hook(tg_grad_node *n, bool pre, tg_grad_node_hook hook, void *user,
                                void (*user_free)(void *user));
/* the user pointer of the first hook of that kind added to n with this
 * function, or NULL (no such hook, NULL arguments): a front end finds its
 * own hook's state again */
void *tg_grad_node_hook_user(const tg_grad_node *n, bool pre, tg_grad_node_hook hook);

/* ---- backward ----------------------------------------------------------
 * Gradients of `root` flow back to every leaf that requires grad and are
 * added to its grad. grad_output NULL is allowed only for a one-element
 * root (it means 1). Unless retain_graph, the tensors the graph saved are
 * freed: a second backward through it fails with an error naming
 * retain_graph. */
tg_status tg_backward(tg_tensor *root, tg_tensor *grad_output,
                      bool retain_graph);

/* ---- anomaly mode (PyTorch's detect_anomaly(check_nan=True)) --------------
 * While on (per thread), backward tests every gradient a node's rule
 * gives and stops at the first with a NaN: TG_ERR_AUTOGRAD, "Function
 * 'SqrtBackward0' returned nan values in its 0th output." (the op's name
 * in PyTorch's grad_fn spelling, the input index). Off by default: the
 * test reads every gradient. */
void tg_set_anomaly_check(bool on);
bool tg_anomaly_check(void);

/* ---- backward hooks (data-parallel training, tg/dist.h) ------------------
 * While set (per thread; NULL clears), every tg_backward / tg_backward_ex
 * on this thread calls grad_ready(user, leaf) once per leaf reached, as
 * soon as every gradient that pass owes the leaf has been added to its
 * grad (the rest of backward is still to run: what a data-parallel
 * reducer needs to start averaging early), and done(user) after the last
 * rule ran. An error either returns ends the backward with it.
 * tg_autograd_grad (which fills no grad) calls neither. */
typedef struct tg_backward_hooks {
    tg_status (*grad_ready)(void *user, tg_tensor *leaf);
    tg_status (*done)(void *user);
    void *user;
} tg_backward_hooks;
void tg_set_backward_hooks(const tg_backward_hooks *hooks);

/* tg_backward over several roots in one pass (grad_outputs may be NULL,
 * or hold NULL for one-element roots: 1). With create_graph the
 * gradients accumulated into leaves are recorded, so they can be
 * differentiated again (PyTorch's backward(create_graph=True)); it
 * implies retain_graph. */
tg_status tg_backward_ex(int n_roots, tg_tensor *const *roots,
                         tg_tensor *const *grad_outputs, bool retain_graph,
                         bool create_graph);

/* Functional gradients: writes d(sum of outputs . grad_outputs)/d inputs
 * into results[0..n_inputs-1] (new references that no scope owns: the
 * caller releases them, inside a scope too; NULL where an input is
 * unreachable). Leaves' grad fields are left untouched. Only the part of
 * the graph leading to the inputs runs (and, without retain_graph, is
 * freed). grad_outputs may be NULL (all one-element outputs). With
 * create_graph the results are themselves differentiable (grad of grad);
 * create_graph implies retain_graph. May be called from a custom
 * function's backward (e.g. to recompute a checkpointed forward). */
tg_status tg_autograd_grad(int n_outputs, tg_tensor *const *outputs,
                           tg_tensor *const *grad_outputs, int n_inputs,
                           tg_tensor *const *inputs, tg_tensor **results,
                           bool retain_graph, bool create_graph);

/* ---- grad mode ----------------------------------------------------------
 * Per thread, nestable. Inside no_grad, ops record nothing. */
void tg_no_grad_begin(void);
void tg_no_grad_end(void);
bool tg_grad_enabled(void);
void tg_set_grad_enabled(bool on);

/* ---- inference mode (PyTorch's torch.inference_mode) --------------------
 * Per thread. A tensor made while it is on, or a view of such a tensor,
 * is an inference tensor (tg_is_inference). Outside inference mode an
 * inference tensor cannot be written in place, set to require grad, or
 * saved by an op autograd records (each TG_ERR_AUTOGRAD, with PyTorch's
 * words; clone it to get a normal tensor). Turning it on does not turn
 * grad mode off: front ends do both, as PyTorch's does. */
void tg_set_inference_mode(bool on);
bool tg_inference_mode(void);
bool tg_is_inference(const tg_tensor *t);

/* ---- custom operators (PyTorch's autograd.Function) --------------------
 * forward runs with grad mode off inside a scope of its own and returns
 * its result made with tg ops (or one of its inputs); it may save tensors
 * for backward on ctx. backward runs inside a scope too: it receives the
 * output's gradient dy and sets dx[i] for the inputs that need one (made
 * with tg ops, or dy itself; leave NULL for none). Built with tg ops,
 * backward is differentiable again with create_graph. */
typedef struct tg_function_ctx tg_function_ctx;
typedef struct tg_function {
    const char *name;
    tg_tensor *(*forward)(tg_function_ctx *ctx, int n_in,
                          tg_tensor *const *in, void *user);
    tg_status (*backward)(tg_function_ctx *ctx, tg_tensor *dy, int n_in,
                          tg_tensor **dx, void *user);
} tg_function;
tg_tensor *tg_function_apply(const tg_function *fn, int n_in,
                             tg_tensor *const *in, void *user);
/* The same, handing user over: user_free(user) is called exactly once,
 * when the recorded node is freed, or before this returns when nothing
 * was recorded (grad mode off, no input requiring grad, an error).
 * Front ends use it to keep their own context object (a Python ctx, say)
 * alive exactly as long as the node. It runs on whichever thread drops
 * the node's last reference. */
tg_tensor *tg_function_apply_owned(const tg_function *fn, int n_in,
                                   tg_tensor *const *in, void *user,
                                   void (*user_free)(void *user));
tg_status tg_ctx_save_for_backward(tg_function_ctx *ctx, int n,
                                   tg_tensor *const *tensors);
/* the i-th saved tensor (borrowed) or NULL with an error when it was
 * modified in place since it was saved */
tg_tensor *tg_ctx_saved(tg_function_ctx *ctx, int i);
int tg_ctx_num_saved(const tg_function_ctx *ctx);
bool tg_ctx_needs_input_grad(const tg_function_ctx *ctx, int i);

/* ---- gradcheck ----------------------------------------------------------
 * Compares the analytic Jacobian (backward) of fn at `inputs` with central
 * finite differences. Inputs should be float64; those that require grad
 * are checked. Passes when |analytic - numeric| <= atol + rtol * |numeric|
 * for every entry. On failure returns TG_ERR_AUTOGRAD with the first
 * mismatch (input, element, both values) in tg_last_error(). */
typedef tg_tensor *(*tg_gradcheck_fn)(int n, tg_tensor *const *inputs,
                                      void *user);
typedef struct tg_gradcheck_opts {
    double eps, atol, rtol; /* zeros mean PyTorch's 1e-6, 1e-5, 1e-3 */
} tg_gradcheck_opts;
tg_status tg_gradcheck(tg_gradcheck_fn fn, void *user, int n,
                       tg_tensor *const *inputs,
                       const tg_gradcheck_opts *opts);

/* ---- forward mode (Jacobian-vector products) ------------------------------
 * Evaluates fn at `inputs` and, along `tangents` (one per input, shaped
 * and typed like it; NULL, or a NULL entry, means zero; integer inputs
 * take none), the directional derivatives of its outputs:
 *   outputs[k] = fn(inputs)[k],  out_tangents[k] = sum_i J_ki . tangents[i]
 * Both are new concrete tensors (in the current scope, if one is open);
 * outputs may be NULL when only the tangents are wanted. fn writes its
 * n_out outputs with the eager API and returns TG_OK or an error status
 * (the same shape as tg_graph_trace's function).
 * It is trace-based: fn runs once on placeholders in a temporary graph
 * (tg_graph_trace), tg_graph_jvp appends the tangent nodes, and one
 * session run computes outputs and tangents; nothing is recorded on the
 * autograd tape. So control flow that depends on tensor values must use
 * tg_cond / tg_while_loop (tg/control.h; reading a symbolic tensor's data
 * fails the trace), and
 * training-mode dropout / batch-norm statistics updates are refused (see
 * docs/GRAPHS.md, "Tracing"); ops without a JVP rule fail with
 * TG_ERR_UNSUPPORTED naming the op. */
typedef tg_status (*tg_jvp_fn)(void *user, tg_tensor *const *inputs,
                               tg_tensor **outputs);
tg_status tg_jvp(tg_jvp_fn fn, void *user, int n_in, tg_tensor *const *inputs,
                 tg_tensor *const *tangents, int n_out, tg_tensor **outputs,
                 tg_tensor **out_tangents);

/* ---- forward mode on eager tensors (dual tensors) ---------------------------
 * PyTorch's torch.autograd.forward_ad: while a dual level is open, a
 * tensor made by tg_make_dual carries a tangent, and every op run eagerly
 * on tensors that carry tangents gives its outputs theirs (J.v, from the
 * op's JVP rule, the one tg_graph_jvp uses), op by op, without a trace.
 * One level at a time, process-wide (nested levels are refused, as in
 * PyTorch 1.13); closing it drops every tangent. Ops without a JVP rule
 * fail on tangent-carrying inputs with TG_ERR_UNSUPPORTED naming the op.
 * The tangent computations are ordinary ops: recorded for reverse mode
 * when their inputs require grad. In graph mode (symbolic tensors)
 * tangents are not propagated: use tg_graph_jvp there. */
/* opens a level: its number (> 0), or -1 (TG_ERR_AUTOGRAD) when one is open */
int64_t tg_dual_level_enter(void);
/* closes the open level (TG_ERR_AUTOGRAD when none is) */
tg_status tg_dual_level_exit(void);
bool tg_dual_level_open(void);
/* a view of primal (floating point) carrying `tangent` (same shape; cast
 * to primal's dtype; retained, not copied); primal itself gets none */
tg_tensor *tg_make_dual(tg_tensor *primal, tg_tensor *tangent);
/* t's tangent under the open level (borrowed; owned by t), or NULL:
 * none, or no level open */
tg_tensor *tg_dual_tangent(const tg_tensor *t);
/* a view of t without its tangent */
tg_tensor *tg_dual_primal(tg_tensor *t);

/* ---- multi-output and no-grad views -------------------------------------
 * Marks view t as output `output_nr` of a function returning several
 * views of one tensor, `fn` one of "split", "split_with_sizes", "unbind"
 * (front ends compose them from narrow/select), as PyTorch's: while grad
 * mode is on, an in-place write to t (or to a view of t) with an operand
 * that requires grad fails (TG_ERR_AUTOGRAD), and so does reading t with
 * grad mode on after its base or another view of it was written in place
 * (when t's base requires grad); t's grad_fn takes fn's name. A tensor
 * that is not a view made with grad mode on is left as it is (TG_OK).
 * TG_ERR_ARG: another fn, output_nr < 0. */
tg_status tg_mark_multi_output_view(tg_tensor *t, const char *fn, int output_nr);
/* fails (TG_ERR_AUTOGRAD, PyTorch's words) where PyTorch refuses an
 * in-place change of t while grad mode is on: t a multi-output view or a
 * view made with grad mode off, when t, its base or (other_requires_grad)
 * another operand requires grad; TG_OK with grad mode off. For a front
 * end's in-place ops that change a tensor's shape rather than its values
 * (PyTorch's unsqueeze_, t_), made as a view and rebound; the library's
 * in-place ops check this themselves. */
tg_status tg_check_view_inplace(const tg_tensor *t, bool other_requires_grad);
/* `to` replaces `from` (a front end's in-place view op rebinding its
 * wrapper to a view of from): made from it with grad mode off, `to` takes
 * from's place in view tracking (a view of what from viewed, a no-grad
 * view only if from was one) instead of being a no-grad view of from.
 * Nothing changes otherwise. */
tg_status tg_view_rebind(tg_tensor *to, const tg_tensor *from);
/* after a front end's in-place op computed its result out of place as
 * `result` and copied it into `dst` (PyTorch's y.exp_() as
 * y.copy_(exp(y))): if result's node saved result for its gradient, it
 * now saves dst at dst's current version instead, so that changing dst
 * again before backward fails there, as PyTorch's in-place ops that keep
 * their result do (y.sigmoid_(); y.add_(1) has no sigmoid gradient).
 * Nothing changes when that node saved no output, or result and dst
 * differ in dtype or shape. TG_ERR_ARG: a NULL tensor. */
tg_status tg_autograd_saved_result_is(tg_tensor *result, tg_tensor *dst);
/* after a front end wrote view t in place on behalf of a view whose
 * elements share memory (PyTorch's masked_fill_ of an expanded tensor,
 * done once per memory location): a backward that reaches the write (the
 * node of t's base) fails, as PyTorch's does; tg's own writes through
 * such views (tg_fill_) mark themselves. TG_ERR_ARG: t is NULL. */
tg_status tg_autograd_mark_overlapping_write(tg_tensor *t);
/* the tensor view t was made of, the root of its chain of views (made
 * with grad mode on or off; PyTorch's _base), borrowed; NULL when t is no
 * view (a copy, an op's result, a detached tensor) */
tg_tensor *tg_view_base(const tg_tensor *t);
/* is t a view made with grad mode off (or a view of one)? */
bool tg_is_nograd_view(const tg_tensor *t);
/* t, just made as a view of a temporary (a copy made for it, held by
 * nothing but t), stops being a view: for results that PyTorch makes as
 * copies (reshape's copy, x[index tensor]). Nothing changes when the
 * tensor t views is held elsewhere, or t is a multi-output view. */
void tg_view_untrack_temporary(tg_tensor *t);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
