/* What softmax (nn.c) and its one-op backward (softmax_grad.c) share: the
 * attribute struct and schema (the normalised axis), and the call. */
#ifndef TG_OPS_SOFTMAX_H
#define TG_OPS_SOFTMAX_H

#include "ops/op.h"

typedef struct tg_softmax_attrs {
    int64_t axis; /* normalised by the public functions */
} tg_softmax_attrs;

extern const tg_attr_spec tg_softmax_specs[];

/* y * (dy - sum(dy * y, axis)): softmax's gradient in one op; axis >= 0 */
tg_tensor *tg__softmax_grad(tg_tensor *dy, tg_tensor *y, int axis);

#endif
