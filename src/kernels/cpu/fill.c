/* Filling contiguous buffers of any dtype with one value. */
#include "kernels/cpu/fill.h"

#define FILL_CASE(DT, T)                          \
    case DT: {                                    \
        T v = (T)value, *d = dst;                 \
        for (int64_t i = 0; i < n; i++)           \
            d[i] = v;                             \
        break;                                    \
    }

void tg__fill_contiguous(tg_dtype dt, void *dst, int64_t n, double value)
{
    if (dt == TG_BOOL)
        value = value != 0;
    switch (dt) {
    FILL_CASE(TG_FLOAT32, float)
    FILL_CASE(TG_FLOAT64, double)
    FILL_CASE(TG_INT32, int32_t)
    FILL_CASE(TG_INT64, int64_t)
    FILL_CASE(TG_UINT8, uint8_t)
    FILL_CASE(TG_BOOL, uint8_t)
    default: break;
    }
}
