/* The autograd history of views and the tensors they view (eager mode).
 * A view shares its base's memory, so an in-place write through either
 * changes both; PyTorch's rules, which these follow:
 * - writing through a view of a tensor with history (v = b[0]; v.mul_(2))
 *   gives the base the history "b with v's elements replaced by the new
 *   v" (rebase), so later uses of b see the write;
 * - a view whose base was written since the view's history was made
 *   (b.mul_(2) after v = b[0]) gets a fresh history, "v's elements of the
 *   current b", the next time an op reads it (refresh).
 * Both are built from recorded ops (reshape, scatter, index_select over
 * the view's element positions in the base), so gradients of any order
 * come from their rules. */
#ifndef TG_VIEW_HISTORY_H
#define TG_VIEW_HISTORY_H

#include "core/tensor_impl.h"

/* y, just made by view op `op` from x, remembers its root base (as
 * nograd_base when made with grad mode off or from such a view) */
void tg__view_track(tg_tensor *y, tg_tensor *x);
/* refreshes the history of the inputs that are stale views; fails, as
 * PyTorch, for a stale multi-output view or no-grad view of a tensor
 * that requires grad */
tg_status tg__view_refresh(int n, tg_tensor *const *in);
/* may in-place op `op` write view t while grad mode records? (errors say
 * why not; src_requires_grad: does another input of the op require grad,
 * which PyTorch's refusal of writes to multi-output views looks at;
 * one_value: the op stores one value everywhere, which a view whose
 * elements share memory may take) */
tg_status tg__view_check_write(const char *op, const tg_tensor *t, bool src_requires_grad,
                               bool one_value);
/* the first axis of t with stride 0 and more than one element, or -1 (none,
 * or t is empty): the overlap PyTorch detects (has_internal_overlap's YES),
 * where in-place ops that read refuse to write and a gradient through a
 * write is refused; other overlaps (unfold's windows) it cannot tell */
int tg__expanded_axis(const tg_tensor *t);
/* after a recorded in-place write to view t: t's base takes the history
 * of the write */
tg_status tg__view_rebase(tg_tensor *t);

#endif
