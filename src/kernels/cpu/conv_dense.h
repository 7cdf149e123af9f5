/* Dense convolution forward (groups == 1, any kernel size, stride,
 * padding and dilation) as an implicit GEMM over NCHW, for layers with
 * enough channels that the product is compute-bound (ResNet's 3x3 and
 * 7x7 layers, strided 1x1 projections): each image is padded and split
 * into its stride phases once, after which every tap of the kernel reads
 * a contiguous run of it, and the per-ISA kernels (conv_dense_api.h)
 * keep a tile of outputs in registers over all taps, with the bias and
 * relu applied as the tile is stored. */
#ifndef TG_KERNELS_CONV_DENSE_H
#define TG_KERNELS_CONV_DENSE_H

#include "kernels/cpu/conv.h"

#include <stdbool.h>

/* whether the automatic choice sends g's forward product here: groups ==
 * 1 and enough output channels and taps (LeNet's and the MobileNets'
 * first layers keep their paths) */
bool tg__conv_dense_wanted(const tg__conv_geom *g);

/* benchmarks: false sends every shape to the paths before this one
 * (tg__conv_dense_wanted is then false); true by default */
void tg__conv_dense_set_enabled(bool on);

/* tests: the instruction set's tile shape `kind` (modulo their count,
 * the narrower vectors' shapes after the others)
 * for every shape from now on; -1 (the default) chooses per shape */
void tg__conv_dense_force_tile(int kind);

/* tests: false runs the last positions of each image in whole tiles
 * rather than in the narrower tails (true by default; the same bits) */
void tg__conv_dense_set_tails(bool on);

/* tests: the fewest multiply-adds a product has to be split over the
 * threads (2^19 by default; 0: every product when there are threads) */
void tg__conv_dense_set_par_work(int64_t macs);

/* what the plan of g's product runs (tests, benchmarks) */
typedef struct tg__dense_plan {
    const char *isa;   /* the tiles' table: "avx512", "avx512y" (ymm), ... */
    int mr, nv, lanes; /* a tile: mr output channels x nv vectors of lanes */
    int tail_nv;       /* the vectors of the last tile of each image, 0: a whole tile */
    int64_t positions; /* wide positions per image */
    bool over_out;     /* the lanes run over output channels (mr = nv x lanes) */
    int row_positions; /* then: a tile's positions along an output row */
} tg__dense_plan;
void tg__conv_dense_describe(tg_dtype dt, const tg__conv_geom *g, tg__dense_plan *out);

/* tests: the memory the prepared images of one call may take (32 MB by
 * default; at least one image is prepared at a time) */
void tg__conv_dense_set_chunk_bytes(int64_t bytes);

/* tests: the tiles over output channels take a panel of weights larger
 * than this a part of this many bytes at a time (256 KB by default; the
 * same bits) */
void tg__conv_dense_set_part_bytes(int64_t bytes);

/* y = x (*) w (+ b), through relu when relu is true (as the relu op), for
 * any geometry with groups == 1; TG_ERR_INVALID for groups > 1, else
 * TG_OK or TG_ERR_NOMEM */
tg_status tg__conv_dense_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                 const void *w, const void *b, bool relu, void *y);
/* the same with res (laid out as y, not aliasing it; NULL: none) added to
 * each output after the bias and before relu, as the add op adds it: the
 * bits of relu(add(conv2d(x, w, b), res)), ResNet's residual connection,
 * in the one pass that stores the product */
tg_status tg__conv_dense_forward_res(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                     const void *w, const void *b, const void *res,
                                     bool relu, void *y);

#endif
