/* Element sizes for the library's hot paths: tg_dtype_size (tg/core.h)
 * inlined, over the same table (dtype.c). A call per tensor touched was
 * ~1.5% of an MLP training step's instructions. */
#ifndef TG_CORE_DTYPE_IMPL_H
#define TG_CORE_DTYPE_IMPL_H

#include "tg/core.h"

extern const size_t tg__dtype_sizes[TG_NUM_DTYPES];

/* tg_dtype_size: 0 for an invalid dtype */
static inline size_t tg__dtype_size(tg_dtype dt)
{
    return (unsigned)dt < TG_NUM_DTYPES ? tg__dtype_sizes[dt] : 0;
}

#endif
