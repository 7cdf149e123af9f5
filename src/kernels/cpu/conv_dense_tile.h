/* Which tile shape the dense convolution runs (conv_dense_tile.c): the
 * shape of an instruction set's tables (conv_dense_api.h) with the least
 * estimated time for a product, from a cost model that knows the CPU. */
#ifndef TG_KERNELS_CONV_DENSE_TILE_H
#define TG_KERNELS_CONV_DENSE_TILE_H

#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_dense_api.h"

typedef struct tg__dense_tile {
    const tg__dense_arch *arch; /* the table kn is from: arch or its narrower one */
    const tg__dense_kern *kn;
    const tg__dense_kern *tail; /* for the last tile of an image, or NULL: kn */
} tg__dense_tile;

/* the tile of arch (or of its narrower table) with the least estimated
 * time on g's product over k taps at p wide positions per image; the one
 * tg__conv_dense_force_tile names, if any */
tg__dense_tile tg__dense_choose_tile(const tg__dense_arch *arch, int f64, const tg__conv_geom *g,
                                     int64_t k, int64_t p);

#endif
