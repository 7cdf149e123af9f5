/* Internal pieces shared by the array op files (array.c, array_index.c):
 * block copies with memcpy fast paths, and the index-based op defs; the
 * optimizers use tg__contig too. */
#ifndef TG_ARRAY_H
#define TG_ARRAY_H

#include "ops/op.h"

/* copies src into dst of the same shape (any layouts); contiguous runs
 * in both go through memcpy, other dtypes are converted */
void tg__copy_into(tg_tensor *dst, const tg_tensor *src);
/* x itself (retained) when C-contiguous, else a contiguous internal copy;
 * the caller releases it. NULL on allocation failure. */
tg_tensor *tg__contig(tg_tensor *x);
/* product of shape[from..to) (1 for an empty range) */
int64_t tg__span(const int64_t *shape, int from, int to);
/* error unless t is int32/int64 ("op: index must be int32 or int64") */
tg_status tg__require_index(const char *op, const tg_tensor *t);
/* the attributes of the axis-driven ops (concat, gather, scatter_add,
 * index_select, index_add): each declares the ones it takes */
typedef struct tg_axis_attrs {
    int64_t axis;
    tg_ints shape; /* scatter_add, index_add: the output's shape */
} tg_axis_attrs;

/* the axis of an op with tg_axis_attrs on ndim dims, normalised (0-d
 * tensors have one implicit axis); infer has checked it */
static inline int tg__attr_axis(const void *attr, int ndim)
{
    int axis = (int)((const tg_axis_attrs *)attr)->axis;
    return axis < 0 ? axis + (ndim > 0 ? ndim : 1) : axis;
}

extern const tg_op_def tg_op_gather;
extern const tg_op_def tg_op_scatter_add;
extern const tg_op_def tg_op_index_select;
extern const tg_op_def tg_op_index_add;
extern const tg_op_def tg_op_embedding;
extern const tg_op_def tg_op_pad, tg_op_pad_grad; /* pad.c */

#endif
