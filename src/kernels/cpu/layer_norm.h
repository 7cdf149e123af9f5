/* layer_norm's float32 row kernels (layer_norm_arch.h), built per
 * instruction set as layer_norm_avx512.c, layer_norm_avx2.c and
 * layer_norm_generic.c; ops/norm_ln_f32.c picks one (TG_ISA_CALL) and
 * splits the rows over the thread pool. Every build gives the same bits. */
#ifndef TG_KERNELS_LAYER_NORM_H
#define TG_KERNELS_LAYER_NORM_H

#include "kernels/cpu/isa_clone.h"

#include <stdint.h>

/* y = (x - mean) / sqrt(var + eps) * w + b over R rows of K >= 1 floats;
 * mean and var (biased) per row */
typedef struct tg__ln32_fwd {
    const float *x, *w, *b;
    float *y, *mean, *var;
    int64_t R, K;
    double eps;
} tg__ln32_fwd;

/* layer_norm_grad: dx [R, K] from x, dy [R, K], the forward's mean and
 * var and their gradients dmean, dvar [R] and w [K]; the dweight and dbias
 * terms of each part of rows_per rows summed into parts[p] (dweight's K,
 * then dbias's K) */
typedef struct tg__ln32_bwd {
    const float *x, *dy, *mean, *var, *w, *dmean, *dvar;
    float *dx, *dw, *db, *parts;
    int64_t R, K, rows_per;
    double eps;
} tg__ln32_bwd;

/* rows [r0, r1) of the forward; parts [p0, p1) of the backward */
TG_ISA_PROTOS(void, tg__ln32_fwd_rows, (const tg__ln32_fwd *t, int64_t r0, int64_t r1))
TG_ISA_PROTOS(void, tg__ln32_bwd_parts, (const tg__ln32_bwd *t, int64_t p0, int64_t p1))

#endif
