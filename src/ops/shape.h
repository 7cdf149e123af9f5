/* The decoded attribute structs of the view ops, for code outside
 * shape.c that reads a node's attributes (the graph passes). */
#ifndef TG_OPS_SHAPE_H
#define TG_OPS_SHAPE_H

#include "ops/op.h"

typedef struct tg_shape_attrs { /* view and expand: the target shape */
    tg_ints shape;
} tg_shape_attrs;

typedef struct tg_permute_attrs {
    tg_ints perm;
} tg_permute_attrs;

/* expand's view (stride 0 on broadcast dims) and gradient (sum back to
 * the input's shape), also those of expand_as */
tg_status tg__expand_make(tg_op_ctx *c);
tg_status tg__expand_grad(tg_grad_ctx *g);

extern const tg_op_def tg_op_view, tg_op_permute, tg_op_expand, tg_op_clone;

#endif
