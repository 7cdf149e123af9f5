/* Filling and converting contiguous buffers of any dtype. */
#ifndef TG_KERNELS_FILL_H
#define TG_KERNELS_FILL_H

#include "tg/core.h"

void tg__fill_contiguous(tg_dtype dt, void *dst, int64_t n, double value);

#endif
