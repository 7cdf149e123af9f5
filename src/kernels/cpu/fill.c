/* Filling contiguous buffers of any dtype with one value. */
#include "kernels/cpu/fill.h"

/* integers convert through int64, so that negative values wrap into
 * uint8 (as in PyTorch) instead of being undefined behaviour */
#define FILL_CASE(DT, T, CONV)                    \
    case DT: {                                    \
        T v = (T)(CONV)value, *d = dst;           \
        for (int64_t i = 0; i < n; i++)           \
            d[i] = v;                             \
        break;                                    \
    }

void tg__fill_contiguous(tg_dtype dt, void *dst, int64_t n, double value)
{
    if (dt == TG_BOOL)
        value = value != 0;
    switch (dt) {
    FILL_CASE(TG_FLOAT32, float, double)
    FILL_CASE(TG_FLOAT64, double, double)
    FILL_CASE(TG_INT32, int32_t, int64_t)
    FILL_CASE(TG_INT64, int64_t, int64_t)
    FILL_CASE(TG_UINT8, uint8_t, int64_t)
    FILL_CASE(TG_BOOL, uint8_t, double)
    default: break;
    }
}
