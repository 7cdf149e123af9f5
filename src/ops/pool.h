/* What the 2-D pooling ops share (pool.c) with the compact-index max
 * pooling that the level-2 passes make (pool_compact.c): the attribute
 * struct, the window checks and the attribute list; and what the 2-D and
 * 3-D public pooling functions share (pool.c, pool3d.c): their opening
 * checks and attribute lists over an N-d window. */
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

/* A window over nd spatial dims, seen through pointers into an op's
 * attribute struct (tg__pool_attrs, pool3d.c's pool3_attrs): the fields
 * kernel, stride, padding, input_size (nd each), ceil_mode and
 * count_include_pad */
typedef struct tg__pool_nd {
    int nd;
    int64_t *kernel, *stride, *padding, *input_size;
    bool *ceil_mode, *count_include_pad;
} tg__pool_nd;
#define TG_POOL_ND(N, a)                                                        \
    ((tg__pool_nd){(N), (a)->kernel, (a)->stride, (a)->padding, (a)->input_size, \
                   &(a)->ceil_mode, &(a)->count_include_pad})
/* a public function's options (tg_pool2d_opts, tg_pool3d_opts): int
 * arrays of nd, a stride of 0 meaning the kernel */
typedef struct tg__pool_opts_nd {
    const int *kernel, *stride, *padding;
    bool ceil_mode, count_include_pad;
} tg__pool_opts_nd;
#define TG_POOL_OPTS_ND(o) \
    ((tg__pool_opts_nd){(o)->kernel, (o)->stride, (o)->padding, (o)->ceil_mode, (o)->count_include_pad})

/* w as an attribute list: kernel, stride, padding, ceil_mode, then
 * count_include_pad when avg and input_size when input_size; the count */
int tg__pool_nd_attrs(const tg__pool_nd *w, bool avg, bool input_size, tg_attr *out);
/* the opening of the public pooling functions: x and the options o
 * (NULL: the caller's opts was NULL) must be given; w's fields are set
 * from o and listed in a (avg: count_include_pad too). Returns the
 * count, or -1 with an error naming op. */
int tg__pool_prepare(const char *op, const tg_tensor *x, const tg__pool_opts_nd *o, bool avg,
                     const tg__pool_nd *w, tg_attr *a);
/* runs a max pooling op (values and indices) and returns the values: the
 * indices go with a local scope (a recorded node keeps its own) */
tg_tensor *tg__pool_max_values(const tg_op_def *op, tg_tensor *x, const tg_attr *a, int n);

#endif
