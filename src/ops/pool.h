/* Pooling as one op family over 1 to 3 spatial dims (pool.c): the one
 * attribute struct every rank's ops decode into, the window checks and
 * the attribute lists; shared with the compact-index max pooling that the
 * level-2 passes make (pool_compact.c, passes/pool_indices.c), which is
 * 2-D. The 1-D public functions are the 2-D ops on [N, C, 1, L] views
 * (conv1d.c). */
#ifndef TG_OPS_POOL_H
#define TG_OPS_POOL_H

#include "kernels/cpu/pool.h"
#include "ops/op.h"

#define TG_POOL_MAX_ND 3

/* The attributes of every pooling op, whatever its rank nd: the first nd
 * elements of each array are used (an op's spec takes exactly nd values);
 * input_size is the gradient ops' input plane (volume) size */
typedef struct tg__pool_attrs {
    int64_t kernel[TG_POOL_MAX_ND], stride[TG_POOL_MAX_ND], padding[TG_POOL_MAX_ND];
    bool ceil_mode, count_include_pad;
    int64_t input_size[TG_POOL_MAX_ND];
} tg__pool_attrs;

/* the window of a over nd spatial dims of sizes in[nd], checked, with
 * the output size, in g */
tg_status tg__pool_read_geom_nd(const char *op, int nd, const tg__pool_attrs *a,
                                const int64_t *in, tg__pool_geom *g);
/* the same over an H x W plane (nd 2) */
tg_status tg__pool_read_geom(const char *op, const tg__pool_attrs *a, int64_t H, int64_t W,
                             tg__pool_geom *g);
/* a as an attribute list of nd values per array: the window (kernel,
 * stride, padding, ceil_mode), then count_include_pad when avg, then
 * input_size when input_size; returns the count (at most 6) */
int tg__pool_attr_list_nd(int nd, const tg__pool_attrs *a, bool avg, bool input_size,
                          tg_attr *out);
/* the same for a 2-D op */
int tg__pool_attr_list(const tg__pool_attrs *a, bool avg, bool input_size, tg_attr *out);

#endif
