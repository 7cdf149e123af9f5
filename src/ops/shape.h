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

extern const tg_op_def tg_op_view, tg_op_permute, tg_op_expand, tg_op_clone;

#endif
