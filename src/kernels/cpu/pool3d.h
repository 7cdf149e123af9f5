/* 3-D pooling kernels over the volumes of contiguous [N, C, D, H, W]
 * float32 or float64 buffers with PyTorch's semantics (ops/pool3d.c checks
 * shapes and attributes and computes the output size). The max pool's
 * gradient and its adjoint are the 2-D ops' (positions in a plane). */
#ifndef TG_KERNELS_POOL3D_H
#define TG_KERNELS_POOL3D_H

#include "tg/core.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tg__pool3_geom {
    int64_t in[3], out[3], k[3], s[3], p[3]; /* (d, h, w) */
    bool include_pad;
} tg__pool3_geom;

typedef enum tg__pool3_kind {
    TG_POOL3_MAX,     /* a: x, b: y, idx: argmax out (position in the volume) */
    TG_POOL3_AVG,     /* a: x, b: y */
    TG_POOL3_AVG_GRAD /* a: dy, b: dx */
} tg__pool3_kind;

/* kind k over `planes` volumes (N * C) */
void tg__pool3d(tg__pool3_kind k, const tg__pool3_geom *g, tg_dtype dt, const void *a,
                void *b, int64_t *idx, int64_t planes);

#endif
