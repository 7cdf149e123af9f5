/* What the 2-D pooling ops share (pool.c) with the compact-index max
 * pooling that the level-2 passes make (pool_compact.c): the attribute
 * struct, the window checks and the attribute list. */
#ifndef TG_OPS_POOL_H
#define TG_OPS_POOL_H

#include "kernels/cpu/pool.h"
#include "ops/op.h"

typedef struct tg__pool_attrs {
    int64_t kernel[2], stride[2], padding[2];
    bool ceil_mode, count_include_pad;
    int64_t input_size[2];
} tg__pool_attrs;

/* the window of a, checked against an H x W plane (output size in g) */
tg_status tg__pool_read_geom(const char *op, const tg__pool_attrs *a, int64_t H, int64_t W,
                             tg__pool_geom *g);
/* a as an attribute list: the window (kernel, stride, padding, ceil_mode),
 * then count_include_pad when avg, then input_size when input_size;
 * returns the count (at most 6) */
int tg__pool_attr_list(const tg__pool_attrs *a, bool avg, bool input_size, tg_attr *out);

#endif
