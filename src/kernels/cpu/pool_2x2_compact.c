/* The entry points of 2 x 2 max pooling with one-byte offsets (pool.h):
 * each is built per instruction set from pool_2x2_compact_arch.h
 * (pool_2x2_compact_avx512.c, ...) and chosen here at run time (cpu.h). */
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/pool.h"

#define POOL2X2C_DISPATCH(T, SUF)                                                    \
    TG_ISA_PROTOS(void, tg__maxpool2x2c_planes_##SUF,                                \
                  (const T *x, int64_t planes, int64_t H, int64_t W, int64_t OH,     \
                   int64_t OW, T *y, uint8_t *off))                                  \
    TG_ISA_PROTOS(bool, tg__maxpool2x2c_grad_planes_##SUF,                           \
                  (const T *dy, const uint8_t *off, int64_t planes, int64_t OH,      \
                   int64_t OW, T *dx))                                               \
    void tg__maxpool2x2c_planes_##SUF(const T *x, int64_t planes, int64_t H, int64_t W, \
                                      int64_t OH, int64_t OW, T *y, uint8_t *off)   \
    {                                                                                \
        TG_ISA_CALL(tg__maxpool2x2c_planes_##SUF, (x, planes, H, W, OH, OW, y, off)); \
    }                                                                                \
    bool tg__maxpool2x2c_grad_planes_##SUF(const T *dy, const uint8_t *off,         \
                                           int64_t planes, int64_t OH, int64_t OW,   \
                                           T *dx)                                    \
    {                                                                                \
        return TG_ISA_CALL(tg__maxpool2x2c_grad_planes_##SUF, (dy, off, planes, OH, OW, dx)); \
    }
POOL2X2C_DISPATCH(float, f32)
POOL2X2C_DISPATCH(double, f64)
