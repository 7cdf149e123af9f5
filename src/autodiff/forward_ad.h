/* Eager forward mode (dual tensors, PyTorch's torch.autograd.forward_ad):
 * while a dual level is open, a tensor may carry a tangent, and every op
 * run eagerly on inputs that carry tangents gives its outputs theirs from
 * the op's JVP rule (the same rule tg_graph_jvp appends as nodes), so
 * J.v comes out with the values, op by op, without a trace.
 * The public entry points are in tg/autograd.h (tg_dual_level_enter ...);
 * the dispatcher calls the two below. */
#ifndef TG_AUTODIFF_FORWARD_AD_H
#define TG_AUTODIFF_FORWARD_AD_H

#include "ops/op.h"

/* does any of op's inputs carry a live tangent that its outputs take
 * (cheap: false unless a level is open and no rule of this thread is
 * running; false for ops whose outputs are never differentiable) */
bool tg__dual_wanted(const tg_op_def *op, int n_in, tg_tensor *const *in);
/* after c's kernel ran: the outputs' tangents from the op's JVP rule
 * (an error when the op has none); in-place ops replace their
 * destination's tangent */
tg_status tg__dual_propagate(const tg_op_ctx *c);

/* does t carry a tangent of the open level (an op that picks a faster
 * form when nothing differentiates its result asks this too) */
bool tg__dual_carries(const tg_tensor *t);
/* t, being freed, leaves the open level's list of tangent carriers */
void tg__dual_forget(tg_tensor *t);
/* dst (an alias of src that autograd saves or unpacks for a gradient
 * rule) takes src's tangent along, so that a backward run inside a dual
 * level is differentiated forward too (forward over reverse) */
void tg__dual_share(tg_tensor *dst, const tg_tensor *src);

#endif
