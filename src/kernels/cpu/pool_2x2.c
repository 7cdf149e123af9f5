/* The 2 x 2 max and average pooling entry points of pool.h: each is built per
 * instruction set from pool_2x2_arch.h (pool_2x2_avx512.c, pool_2x2_avx2.c,
 * pool_2x2_generic.c) and chosen here at run time (cpu.h). */
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/pool.h"

#define POOL2X2_DISPATCH(T, SUF)                                                     \
    TG_ISA_PROTOS(void, tg__maxpool2x2_planes_##SUF,                                 \
                  (const T *x, int64_t planes, int64_t H, int64_t W, int64_t OH,     \
                   int64_t OW, T *y, int64_t *idx))                                  \
    TG_ISA_PROTOS(bool, tg__maxpool2x2_grad_planes_##SUF,                            \
                  (const T *dy, const int64_t *idx, int64_t planes, int64_t OH,      \
                   int64_t OW, T *dx))                                               \
    void tg__maxpool2x2_planes_##SUF(const T *x, int64_t planes, int64_t H, int64_t W, \
                                     int64_t OH, int64_t OW, T *y, int64_t *idx)    \
    {                                                                                \
        TG_ISA_CALL(tg__maxpool2x2_planes_##SUF, (x, planes, H, W, OH, OW, y, idx)); \
    }                                                                                \
    bool tg__maxpool2x2_grad_planes_##SUF(const T *dy, const int64_t *idx,          \
                                          int64_t planes, int64_t OH, int64_t OW,    \
                                          T *dx)                                     \
    {                                                                                \
        return TG_ISA_CALL(tg__maxpool2x2_grad_planes_##SUF, (dy, idx, planes, OH, OW, dx)); \
    }
POOL2X2_DISPATCH(float, f32)
POOL2X2_DISPATCH(double, f64)

TG_ISA_PROTOS(void, tg__avgpool2x2_planes_f32,
              (const float *x, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW,
               float *y))
TG_ISA_PROTOS(void, tg__avgpool2x2_grad_planes_f32,
              (const float *dy, int64_t planes, int64_t OH, int64_t OW, float *dx))

void tg__avgpool2x2_planes_f32(const float *x, int64_t planes, int64_t H, int64_t W, int64_t OH,
                               int64_t OW, float *y)
{
    TG_ISA_CALL(tg__avgpool2x2_planes_f32, (x, planes, H, W, OH, OW, y));
}

void tg__avgpool2x2_grad_planes_f32(const float *dy, int64_t planes, int64_t OH, int64_t OW,
                                    float *dx)
{
    TG_ISA_CALL(tg__avgpool2x2_grad_planes_f32, (dy, planes, OH, OW, dx));
}
