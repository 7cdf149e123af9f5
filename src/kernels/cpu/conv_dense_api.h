/* What each instruction set's build of the dense implicit-GEMM
 * convolution kernels (conv_dense_arch.h) offers conv_dense.c, per dtype
 * ([0] float32, [1] float64). Pointers are to the dtype's elements.
 *
 * The product: y[o][t] = sum_p A[o][p] * img[off[p] + t] for the wide
 * positions t of one image (see conv_dense.c: the input padded and split
 * into stride phases, so that every tap p reads a contiguous run), A the
 * weights as they are ([o][k]). */
#ifndef TG_KERNELS_CONV_DENSE_API_H
#define TG_KERNELS_CONV_DENSE_API_H

#include <stdbool.h>
#include <stdint.h>

/* where a tile's wide columns go: wide position t is output row t / wq,
 * column t % wq, kept when that column is below ow and t below p */
typedef struct tg__dense_store {
    void *y;          /* the image's output, [o][oh * ow] */
    const void *bias; /* [o] or NULL */
    const void *res;  /* the image's residual, laid out as y, or NULL: added
                       * after the bias, before relu (ResNet's y = relu(conv(x)
                       * + b + shortcut) in one pass over the output) */
    int64_t ohw, wq, ow, p;
    /* the wide position where the block's last tile starts: a tile over
     * output channels that starts before it and ends before its row does
     * may store one position past its own (the next tile, run later by
     * the same thread, stores that position's values over it) */
    int64_t last_start;
    bool relu; /* as the relu op: NaN passes, the rest not above 0 is +0 */
} tg__dense_store;

typedef struct tg__dense_kern {
    int mr, nr; /* a tile: mr output channels x nr wide positions */
    int nv;     /* nr in vectors: the tile's mr * nv accumulators */
    /* the vectors run over output channels instead (mr in nv vectors),
     * and a tile's nr positions lie along one output row: tile t of an
     * image starts at output row t / cdiv(ow, nr), column t % cdiv(ow,
     * nr) * nr, and stores the positions up to ow (nv * nr accumulators);
     * tile_packed only (tile is NULL) */
    bool over_out;
    /* the tile of output channels o0 .. o0 + rows (rows <= mr; row i's
     * weights at a + i lda) at wide positions t .. t + nr, biased,
     * activated and stored */
    void (*tile)(int64_t k, const void *a, int64_t lda, const void *img,
                 const int64_t *off, int64_t t, int64_t o0, int64_t rows,
                 const tg__dense_store *st);
    /* the same over the panel's weights packed tap-major: tap p's mr
     * weights at a + p mr, rows past `rows` zero (lda unused); NULL where
     * the rows are read as they are (conv_dense_arch.h, DENSE_PACKED) */
    void (*tile_packed)(int64_t k, const void *a, int64_t lda, const void *img,
                        const int64_t *off, int64_t t, int64_t o0, int64_t rows,
                        const tg__dense_store *st);
    /* tiles over output channels: tile_packed over taps [0, k) only (a, off
     * from the first of them), their sums added to those in `sums` (the
     * tile's nr x mr, aligned to 64 bytes; set from zero when `first`);
     * stored as tile_packed stores when st is not NULL, else left there.
     * In that order the sums are the whole tile's, bit for bit, while a
     * panel larger than L2 is read once per block of tiles instead of
     * once per tile (conv_dense.c, run_block_split). With `ahead`, each
     * tap's weights that many bytes further on are prefetched into L2
     * (the next part, while this one's first tile runs). NULL for the
     * other tiles */
    void (*tile_part)(int64_t k, const void *a, const void *img, const int64_t *off,
                      int64_t t, int64_t o0, int64_t rows, void *sums, bool first,
                      int64_t ahead, const tg__dense_store *st);
} tg__dense_kern;

/* the tile shapes an instruction set offers, per dtype */
#define TG__DENSE_MAX_KINDS 3
/* the narrower tiles for the positions left at the end of an image:
 * each kind's height with fewer vectors (AVX-512's 12 x 1, 8 x 1, 8 x 2) */
#define TG__DENSE_MAX_TAILS 4
typedef struct tg__dense_arch {
    const char *name;
    int n_kinds, n_tails;
    tg__dense_kern k[2][TG__DENSE_MAX_KINDS];
    tg__dense_kern tails[2][TG__DENSE_MAX_TAILS];
    /* tiles of the same instruction set over half-width vectors, or NULL:
     * AVX-512's ymm tiles (32 registers), whose 8-position granularity
     * wastes less on small planes and which run as fast per flop as zmm
     * on a CPU that splits each zmm operation in two (conv_dense.c
     * weighs them by that) */
    const struct tg__dense_arch *narrower;
} tg__dense_arch;

extern const tg__dense_arch tg__dense_arch_generic;
#if defined(__x86_64__)
extern const tg__dense_arch tg__dense_arch_avx2, tg__dense_arch_avx512, tg__dense_arch_avx512y;
#endif

/* the build for the instruction set in use (cpu.h) */
const tg__dense_arch *tg__dense_arch_now(void);

#endif
