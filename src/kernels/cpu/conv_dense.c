/* Dense convolution forward as an implicit GEMM (conv_dense.h): the plan
 * (the phase-split padded image, the taps' offsets, the blocks the
 * threads claim), the preparation of the images, and the
 * loops over the per-ISA tiles (conv_dense_arch.h).
 *
 * The input, padded, is split into its sh x sw stride phases (phase (a,
 * b) holds the padded rows a, a + sh, ... and columns b, b + sw, ...), so
 * that output (oy, ox) reads tap (i, j) of channel c at row oy + i dh /
 * sh, column ox + j dw / sw of one phase: a tap's inputs for consecutive
 * output columns are consecutive. The outputs are computed in "wide"
 * rows of the phase's width wq (>= ow); the columns past ow are computed
 * and dropped, which costs (wq - ow) / ow of the work (at stride 1 the
 * rows share their zero padding, see plan_phases: 2% at 56x56, 14% at 7x7
 * with 3x3 kernels, padding 1). */
#include "kernels/cpu/conv_dense.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_dense_api.h"
#include "kernels/cpu/conv_dense_tile.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/pack_cache.h"
#include "kernels/cpu/scratch.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* the weights an output-channel block keeps in L2 while its tiles stream
 * the image past them (bytes) */
#define A_BUDGET ((int64_t)192 * 1024)
/* at most this many tiles of positions per block */
#define MAX_BLOCK_TILES 16
/* a panel of weights read by several tiles, larger than this, is taken
 * this many bytes of taps at a time by all of a block's tiles
 * (run_block_split): kept in L2 (1 MB on Zen 4 and 5) beside the image,
 * instead of streamed from memory once per tile */
static _Atomic int64_t part_bytes = (int64_t)256 * 1024;
/* the largest tile over output channels (elements): AVX-512's 64 x 7 */
#define MAX_OUT_TILE (64 * 7)
/* the prepared images of a call take at most this much memory (or one
 * image): larger batches are prepared and multiplied in chunks */
static _Atomic int64_t chunk_bytes = (int64_t)32 << 20;
/* blocks per thread to aim for (late threads balanced by the others):
 * with AVX-512's tiles over output channels, at 4, ResNet-18's stride-2
 * 3x3 layers at batch 1 on two threads lost up to a block's time (~70 us
 * of ~600) waiting at the end; 8: 0.60 -> 0.56 ms at 56 -> 28
 * (bench_conv_resnet, best of 9, three rounds; batches that have many
 * blocks anyway plan the same). The wide tiles (AVX2's) keep 4: 8 was not
 * shown faster there (two-thread runs too noisy to tell) */
#define UNITS_PER_THREAD 4
#define UNITS_PER_THREAD_OVER_OUT 8
/* products with fewer multiply-adds stay on the calling thread */
static _Atomic int64_t par_work = (int64_t)1 << 19;
/* the automatic choice: at least this many output channels and taps */
#define MIN_OUT 32
#define MIN_TAPS 64

const tg__dense_arch *tg__dense_arch_now(void)
{
#if defined(__x86_64__)
    switch (tg__cpu_isa()) {
    case TG_ISA_AVX512: return &tg__dense_arch_avx512;
    case TG_ISA_AVX2: return &tg__dense_arch_avx2;
    default: break;
    }
#endif
    return &tg__dense_arch_generic;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

typedef struct dense_job {
    const tg__dense_arch *arch; /* the table kn is from */
    const tg__dense_kern *kn;
    const tg__dense_kern *tail; /* for the last tile of an image, or NULL: kn */
    tg__conv_geom g;
    size_t el;
    const char *x, *w, *b, *res; /* res: the shortcut added before relu, or NULL */
    const char *wp; /* the weights packed per panel (pack_weights), or NULL: w as it is */
    char *y;
    bool relu;
    int64_t k;               /* taps: c * kh * kw */
    int64_t hq, wq;          /* a phase's rows and columns */
    int64_t chan;            /* elements per channel: sh * sw phases */
    int64_t p;               /* wide positions per image */
    int64_t img_len;         /* elements per prepared image, slack included */
    int64_t panels, pan_len; /* tiles' rows of output channels, their weights */
    int64_t tiles;           /* tiles of positions per image */
    int64_t row_tiles;       /* over_out tiles: tiles per output row (else 0) */
    int64_t n_ob, n_cb; /* blocks of panels and of tiles (block_first) */
    int64_t *off;  /* [k] where each tap's run starts in a prepared image */
    int64_t reach; /* the furthest a tap reads inside its phase plane */
    bool *used;    /* [sh * sw] the phases some tap reads */
    char *imgs;    /* [nn][img_len]: images n0 .. n0 + nn (one thread), or the
                    * homes' regions (several) */
    int64_t n0, nn, chunk; /* the images prepared at once, at most chunk */
    struct dense_home *homes; /* [n_homes] with several threads */
    atomic_int *img_state;    /* [n_homes][chunk]: the homes' images' states */
    int64_t n_homes;
    pthread_t caller;          /* the thread that takes home 0 */
    _Atomic int64_t arrivals;  /* the other threads, in the order they came */
} dense_job;

/* ---- preparation: the images -------------------------------------------------- */

static bool phase_used(const dense_job *j, int64_t a, int64_t b) { return j->used[a * j->g.sw + b]; }

/* rows r0 .. r0 + rows of one phase plane (a, b) of channel c: columns
 * q < wq of the padded input's row r sh + a, column q sw + b (zero
 * outside the input, rows past the plane's included); the columns that
 * read the input, [qlo, qhi), are one branch-free run per row (a copy at
 * stride 1) */
#define PHASE_PLANE(T, SUF)                                                      \
    static void phase_plane_##SUF(const tg__conv_geom *g, int64_t r0, int64_t rows, \
                                  int64_t wq, int64_t a, int64_t b, const T *src, \
                                  T *dst)                                        \
    {                                                                            \
        const int64_t sw = g->sw, x0 = b - g->pw; /* column q reads x0 + q sw */ \
        int64_t qlo = x0 >= 0 ? 0 : (-x0 + sw - 1) / sw;                         \
        int64_t qhi = x0 >= g->w ? 0 : (g->w - x0 + sw - 1) / sw;                \
        qlo = qlo < wq ? qlo : wq;                                               \
        qhi = qhi < wq ? qhi : wq;                                               \
        qhi = qhi > qlo ? qhi : qlo;                                             \
        for (int64_t r = r0; r < r0 + rows; r++, dst += wq) {                    \
            int64_t y = r * g->sh + a - g->ph;                                   \
            if (y < 0 || y >= g->h) {                                            \
                memset(dst, 0, sizeof(T) * (size_t)wq);                          \
                continue;                                                        \
            }                                                                    \
            const T *in = src + y * g->w + x0;                                   \
            memset(dst, 0, sizeof(T) * (size_t)qlo);                             \
            if (sw == 1)                                                         \
                memcpy(dst + qlo, in + qlo, sizeof(T) * (size_t)(qhi - qlo));    \
            else if (sw == 2)                                                    \
                for (int64_t q = qlo; q < qhi; q++)                              \
                    dst[q] = in[2 * q];                                          \
            else                                                                 \
                for (int64_t q = qlo; q < qhi; q++)                              \
                    dst[q] = in[q * sw];                                         \
            memset(dst + qhi, 0, sizeof(T) * (size_t)(wq - qhi));                \
        }                                                                        \
    }
PHASE_PLANE(float, f32)
PHASE_PLANE(double, f64)

/* rows r0 .. r0 + rows of every phase plane the taps read of image n
 * (of the call), padded and split, into dst laid out as `chan` elements
 * per channel and `plane` per phase (the other phases are never read,
 * not even by the dropped columns: those read past the planes they start
 * in only into later planes of the image or its slack), the slack up to
 * `len` zeroed */
static void prepare_rows(const dense_job *j, int64_t n, char *dst, int64_t r0, int64_t rows,
                         int64_t chan, int64_t plane, int64_t len)
{
    const tg__conv_geom *g = &j->g;
    const size_t el = j->el;
    const int64_t hw = g->h * g->w;
    const char *src = j->x + (size_t)(n * g->c * hw) * el;
    for (int64_t c = 0; c < g->c; c++)
        for (int64_t a = 0; a < g->sh; a++)
            for (int64_t b = 0; b < g->sw; b++) {
                if (!phase_used(j, a, b))
                    continue;
                const char *in = src + (size_t)(c * hw) * el;
                char *out = dst + (size_t)(c * chan + (a * g->sw + b) * plane) * el;
                if (el == sizeof(double))
                    phase_plane_f64(g, r0, rows, j->wq, a, b, (const double *)in,
                                    (double *)out);
                else
                    phase_plane_f32(g, r0, rows, j->wq, a, b, (const float *)in,
                                    (float *)out);
            }
    memset(dst + (size_t)(g->c * chan) * el, 0, (size_t)(len - g->c * chan) * el);
}

/* ---- the product ------------------------------------------------------------------ */

/* the first tile of block cb of positions (cb == n_cb: the end): the
 * blocks' sizes differ by at most one tile, so that the threads' shares
 * do (ResNet's 56x56 layers at batch 1: 67 tiles in blocks of 12 left
 * one thread's home 36 tiles and the other's 31) */
static int64_t block_first(const dense_job *j, int64_t cb)
{
    return cb * j->tiles / j->n_cb;
}

/* the wide position tile t starts at: t nr, or for tiles along output
 * rows (over_out), its row's and its column's */
static int64_t tile_start(const dense_job *j, int64_t t)
{
    if (!j->row_tiles)
        return t * j->kn->nr;
    return t / j->row_tiles * j->wq + t % j->row_tiles * j->kn->nr;
}

/* run_block's tiles over output channels t0 .. t1 (at most
 * MAX_BLOCK_TILES) of panels p0 .. p1, each panel's taps a part at a
 * time (part_bytes), every tile's sums kept between the parts:
 * ResNet-18's 3x3 layers of layer 4 (7x7 planes, 1.2 MB panels, 7 tiles
 * each) read their 9.4 MB of weights from memory 7 times a call
 * otherwise */
static void run_block_split(const dense_job *j, int64_t p0, int64_t p1, int64_t t0,
                            int64_t t1, const char *img, const int64_t *off, int64_t row0,
                            const tg__dense_store *st)
{
    const tg__dense_kern *kn = j->kn;
    const int64_t mr = kn->mr, part = max64(1, atomic_load(&part_bytes) / (mr * (int64_t)j->el));
    const size_t tile_bytes = (size_t)(kn->nr * mr) * j->el;
    _Alignas(64) double sums[MAX_BLOCK_TILES * MAX_OUT_TILE];
    for (int64_t pi = p0; pi < p1; pi++) {
        const char *panel = j->wp + (size_t)(pi * mr * j->k) * j->el;
        for (int64_t k0 = 0; k0 < j->k; k0 += part) {
            int64_t n = min64(part, j->k - k0);
            /* the first tile asks for the next part (of this panel or the
             * next one of the block) while the others reuse this one */
            bool next = k0 + n < j->k || pi + 1 < p1;
            for (int64_t t = t0; t < t1; t++)
                kn->tile_part(n, panel + (size_t)(k0 * mr) * j->el, img, off + k0,
                              tile_start(j, t) - row0 * j->wq, pi * mr,
                              min64(mr, j->g.o - pi * mr), (char *)sums + (t - t0) * tile_bytes,
                              k0 == 0, t == t0 && next ? n * mr * (int64_t)j->el : 0,
                              k0 + n == j->k ? st : NULL);
        }
    }
}

/* the tiles of block ob of output channels x block cb of positions of
 * image n (of the chunk), from its prepared rows: img holds the image's
 * rows from row0 on, its taps at off */
static void run_block(const dense_job *j, int64_t ob, int64_t n, int64_t cb, const char *img,
                      const int64_t *off, int64_t row0)
{
    const tg__conv_geom *g = &j->g;
    const int64_t ohw = g->oh * g->ow, mr = j->kn->mr;
    const size_t image = (size_t)((j->n0 + n) * g->o * ohw) * j->el;
    const size_t skip = (size_t)(row0 * g->ow) * j->el; /* the rows before row0 */
    tg__dense_store st = {.y = j->y + image + skip, .bias = j->b,
                          .res = j->res ? j->res + image + skip : NULL, .ohw = ohw,
                          .wq = j->wq, .ow = g->ow, .p = j->p - row0 * j->wq,
                          .last_start = tile_start(j, block_first(j, cb + 1) - 1) - row0 * j->wq,
                          .relu = j->relu};
    /* blocks of panels of sizes that differ by at most one, as the tiles' */
    int64_t p0 = ob * j->panels / j->n_ob, p1 = (ob + 1) * j->panels / j->n_ob;
    int64_t t0 = block_first(j, cb), t1 = block_first(j, cb + 1);
    const char *a = j->wp ? j->wp : j->w;
    if (j->kn->tile_part && t1 - t0 > 1 && j->kn->nr * j->kn->mr <= MAX_OUT_TILE &&
        j->pan_len * (int64_t)j->el > atomic_load(&part_bytes)) {
        run_block_split(j, p0, p1, t0, t1, img, off, row0, &st);
        return;
    }
    for (int64_t t = t0; t < t1; t++) {
        const tg__dense_kern *kn = t == j->tiles - 1 && j->tail ? j->tail : j->kn;
        void (*tile)(int64_t, const void *, int64_t, const void *, const int64_t *, int64_t,
                     int64_t, int64_t, const tg__dense_store *) =
            j->wp ? kn->tile_packed : kn->tile;
        for (int64_t pi = p0; pi < p1; pi++)
            tile(j->k, a + (size_t)(pi * mr * j->k) * j->el, j->k, img, off,
                 tile_start(j, t) - row0 * j->wq, pi * mr, min64(mr, g->o - pi * mr), &st);
    }
}

/* one thread: the images of the chunk prepared whole, then every unit
 * (block of output channels, slowest, image, block of positions); with
 * one block of output channels, each image prepared just before its
 * units, while it is in cache (ResNet's 56x56 layers at batch 8: 8
 * prepared images of 0.85 MB had left L2 by the time their units ran) */
static void run_serial(dense_job *j)
{
    if (j->n_ob == 1) {
        for (int64_t n = 0; n < j->nn; n++) {
            char *img = j->imgs + (size_t)(n * j->img_len) * j->el;
            prepare_rows(j, j->n0 + n, img, 0, j->hq, j->chan, j->hq * j->wq, j->img_len);
            for (int64_t cb = 0; cb < j->n_cb; cb++)
                run_block(j, 0, n, cb, img, j->off, 0);
        }
        return;
    }
    for (int64_t n = 0; n < j->nn; n++)
        prepare_rows(j, j->n0 + n, j->imgs + (size_t)(n * j->img_len) * j->el, 0, j->hq,
                     j->chan, j->hq * j->wq, j->img_len);
    const int64_t per_block = j->nn * j->n_cb;
    for (int64_t u = 0; u < j->n_ob * per_block; u++) {
        int64_t ob = u / per_block, n = u % per_block / j->n_cb, cb = u % j->n_cb;
        run_block(j, ob, n, cb, j->imgs + (size_t)(n * j->img_len) * j->el, j->off, 0);
    }
}

/* ---- frozen weights, packed once ------------------------------------------------- */

/* the weights [o][k] as panels of mr output channels, tap-major: panel
 * pi's tap p at dst + (pi k + p) mr, the rows past o zero */
static void pack_weights(const dense_job *j, char *dst)
{
    const int64_t mr = j->kn->mr, k = j->k, o = j->g.o;
    const size_t el = j->el;
    for (int64_t pi = 0; pi < j->panels; pi++)
        for (int64_t i = 0; i < mr; i++) {
            int64_t row = pi * mr + i;
            char *d = dst + (size_t)(pi * k * mr + i) * el;
            if (row >= o) {
                for (int64_t p = 0; p < k; p++)
                    memset(d + (size_t)(p * mr) * el, 0, el);
                continue;
            }
            const char *src = j->w + (size_t)(row * k) * el;
            if (el == sizeof(float))
                for (int64_t p = 0; p < k; p++)
                    ((float *)d)[p * mr] = ((const float *)src)[p];
            else
                for (int64_t p = 0; p < k; p++)
                    ((double *)d)[p * mr] = ((const double *)src)[p];
        }
}

/* weights whose storage is frozen (an ONNX model's initializers): their
 * packed form, kept between calls (pack_cache.h), so that a tile's
 * weights are one stream rather than mr rows (packing on every call cost
 * more than it saved: ~10% at batch 1, when unfrozen weights were
 * packed). NULL: the weights as they are (not frozen, or no room) */
static const char *kept_weights(dense_job *j, tg__pack_entry **entry)
{
    *entry = NULL;
    if (!j->g.w_serial || !j->kn->tile_packed)
        return NULL;
    tg__pack_key key = {.serial = j->g.w_serial, .version = j->g.w_version, .data = j->w,
                        .kern = j->kn,
                        .layout = {j->g.o, j->k, j->kn->mr, (int64_t)j->el, 0, 0}};
    bool ready = false;
    size_t bytes = (size_t)(j->panels * j->kn->mr * j->k) * j->el;
    char *buf = tg__pack_cache_get(&key, bytes, &ready, entry);
    if (buf && !ready)
        pack_weights(j, buf);
    return buf;
}

/* ---- planning -------------------------------------------------------------------- */

/* where each tap's run starts in an image prepared with `rows` rows per
 * phase plane; the furthest a tap reads inside its plane */
static int64_t fill_offsets(const dense_job *j, int64_t rows, int64_t *off)
{
    const tg__conv_geom *g = &j->g;
    const int64_t plane = rows * j->wq, chan = g->sh * g->sw * plane, taps = g->kh * g->kw;
    int64_t reach = 0;
    /* channel 0's taps, then every other channel's as those plus c chan
     * (the divisions once per tap of the kernel, not per tap of the
     * product: ResNet's 512-channel layers spent 20 us a call here) */
    for (int64_t i = 0, p = 0; i < g->kh; i++)
        for (int64_t jj = 0; jj < g->kw; jj++, p++) {
            int64_t Y = i * g->dh, X = jj * g->dw, in = (Y / g->sh) * j->wq + X / g->sw;
            off[p] = ((Y % g->sh) * g->sw + X % g->sw) * plane + in;
            reach = max64(reach, in);
        }
    for (int64_t c = 1; c < g->c; c++)
        for (int64_t p = 0; p < taps; p++)
            off[c * taps + p] = c * chan + off[p];
    return reach;
}

static void tap_offsets(dense_job *j)
{
    const tg__conv_geom *g = &j->g;
    memset(j->used, 0, sizeof(bool) * (size_t)(g->sh * g->sw));
    for (int64_t i = 0; i < g->kh; i++)
        for (int64_t jj = 0; jj < g->kw; jj++)
            j->used[(i * g->dh % g->sh) * g->sw + jj * g->dw % g->sw] = true;
    j->reach = fill_offsets(j, j->hq, j->off);
}

/* the phases' size and the wide positions. At stride 1 the rows share
 * their padding: a row holds the left padding and the input's columns
 * (wq = w + pw when the right padding is no wider), and the taps that
 * read past its end, into the right padding, read the next row's left
 * padding instead (or the next plane's, or the image's zeroed slack),
 * which is as zero: the wide rows overhang ow by pw columns, not 2 pw
 * (ResNet's 7x7 planes: 8 wide positions a row instead of 9) */
static void plan_phases(dense_job *j)
{
    const tg__conv_geom *g = &j->g;
    int64_t hp = max64(g->h + g->ph, (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1);
    int64_t wp = max64(g->w + g->pw, (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1);
    j->hq = cdiv(hp, g->sh);
    j->wq = g->sw == 1 ? max64(g->w + g->pw, wp - g->pw) : cdiv(wp, g->sw);
    j->chan = g->sh * g->sw * j->hq * j->wq;
    j->p = (g->oh - 1) * j->wq + g->ow;
}

void tg__conv_dense_set_chunk_bytes(int64_t bytes) { atomic_store(&chunk_bytes, bytes); }

void tg__conv_dense_set_par_work(int64_t macs) { atomic_store(&par_work, macs); }

void tg__conv_dense_set_part_bytes(int64_t bytes) { atomic_store(&part_bytes, bytes); }

static void choose_tile(dense_job *j, const tg__dense_arch *arch, int f64)
{
    tg__dense_tile t = tg__dense_choose_tile(arch, f64, &j->g, j->k, j->p);
    j->arch = t.arch;
    j->kn = t.kn;
    j->tail = t.tail;
    j->row_tiles = j->kn->over_out ? cdiv(j->g.ow, j->kn->nr) : 0;
    j->tiles = j->row_tiles ? j->g.oh * j->row_tiles : cdiv(j->p, j->kn->nr);
}

/* the images' length: the last tile reads up to nr - 1 positions past p
 * from the furthest tap */
static void plan_image_len(dense_job *j)
{
    int64_t most = 0;
    for (int64_t p = 0; p < j->k; p++)
        most = max64(most, j->off[p]);
    int64_t len = max64(j->g.c * j->chan, most + tile_start(j, j->tiles - 1) + j->kn->nr);
    j->img_len = cdiv(len, 16) * 16; /* images 64-byte aligned */
}

/* the blocks of positions: the fewest (at most MAX_BLOCK_TILES tiles
 * each) that make at least `want` units with the blocks of output
 * channels, preferring a count of units the threads divide (ResNet's
 * 56x56 layers at batch 1 had 9 units for 2 threads: one thread ran 5
 * while the other waited after 4); 0 when no count reaches want */
static int64_t position_blocks(const dense_job *j, int64_t want, int64_t threads)
{
    int64_t first = 0, per = j->chunk * j->n_ob;
    for (int64_t n = cdiv(j->tiles, MAX_BLOCK_TILES); n <= j->tiles; n++) {
        int64_t blk = cdiv(j->tiles, n), units = per * cdiv(j->tiles, blk);
        if (units < want)
            continue;
        if (units % threads == 0)
            return blk;
        if (!first)
            first = blk;
        if (units >= 4 * want)
            break;
    }
    return first;
}

/* blocks of output channels whose weights fit A_BUDGET, blocks of
 * positions; the output channels cut finer until every thread has a few
 * blocks */
static void plan_blocks(dense_job *j, int64_t threads)
{
    const int64_t per = j->kn->over_out ? UNITS_PER_THREAD_OVER_OUT : UNITS_PER_THREAD;
    const int64_t want = threads > 1 ? per * threads : 1;
    j->panels = cdiv(j->g.o, j->kn->mr);
    j->pan_len = j->k * j->kn->mr;
    int64_t blk_panels = min64(j->panels, max64(1, A_BUDGET / (j->pan_len * (int64_t)j->el)));
    int64_t blk_tiles;
    for (;;) {
        j->n_ob = cdiv(j->panels, blk_panels);
        int64_t blk = position_blocks(j, want, threads);
        if (blk > 0 || blk_panels == 1) {
            blk_tiles = blk > 0 ? blk : 1;
            break;
        }
        blk_panels = cdiv(blk_panels, 2);
    }
    j->n_cb = cdiv(j->tiles, blk_tiles);
}

/* ---- several threads: homes ----------------------------------------------------------
 * Why (measured on ResNet-18's layers, 2 threads, per-thread CPU time):
 * when the threads prepared equal parts (channels) of one shared image
 * and then claimed its blocks one at a time, each thread's half of the
 * preparation took more CPU time than one thread took for all of it
 * (56x56 -> 28x28 at stride 2: 0.10 ms each against 0.068; 56x56 at
 * stride 1: 0.066 against 0.038), while the product ran as fast per tile
 * as on one thread: the lines a thread wrote had last been read by the
 * other core (the blocks it had claimed in the call before), and each
 * write waited for the other core's copy to be invalidated; the same for
 * the reads of the lines the other thread prepared. The preparation, 2%
 * of a layer on one thread, became 6-17% of it on two.
 * So each thread has a home: a share of the units (pairs of image and
 * block of positions, image-major, or blocks of output channels when
 * there are too few pairs), for which it prepares only the rows its
 * positions read, into a region of the buffer that only that home's
 * rows occupy from call to call (regions at fixed offsets), each image
 * just before its units, and whose units it runs first. The caller takes
 * home 0, the others the rest in the order they come. A thread that has
 * finished its home runs units of the others once their rows are ready,
 * and prepares an image of a home no thread has started (a thread that is
 * late, or a core taken by another process). */

enum { HOME_FREE, HOME_PREPARING, HOME_READY };

typedef struct dense_home {
    int64_t pair0, pairs;    /* pairs (image, block of positions) of the chunk */
    int64_t ob0, obs;        /* blocks of output channels */
    int64_t n_first, n_imgs; /* the images of the chunk the pairs are in */
    int64_t rows;            /* rows prepared of each phase plane, per image */
    int64_t len;             /* elements per prepared image */
    int64_t *off;            /* [k] the taps' runs in a prepared image */
    char *region;
    atomic_int *state;    /* [n_imgs] each image's rows: HOME_FREE, _PREPARING, _READY */
    _Atomic int64_t next; /* the next of its pairs * obs units */
} dense_home;

/* the rows of image n (of the chunk) the positions of home h read, from
 * lo to hi (past the plane's hq rows: rows of zeros, so that every read
 * of the last tile, dropped positions included, stays in its plane) */
static void home_rows(const dense_job *j, const dense_home *h, int64_t n, int64_t *lo,
                      int64_t *hi)
{
    int64_t q0 = max64(h->pair0, n * j->n_cb), q1 = min64(h->pair0 + h->pairs, (n + 1) * j->n_cb);
    int64_t t0 = tile_start(j, block_first(j, q0 - n * j->n_cb));
    int64_t t1 = tile_start(j, block_first(j, q1 - n * j->n_cb) - 1) + j->kn->nr;
    *lo = t0 / j->wq;
    *hi = (t1 - 1 + j->reach) / j->wq + 1;
}

/* the rows of image n_first + s of home h */
static void prepare_image(const dense_job *j, const dense_home *h, int64_t s)
{
    const int64_t plane = h->rows * j->wq, chan = j->g.sh * j->g.sw * plane;
    int64_t lo, hi, n = h->n_first + s;
    home_rows(j, h, n, &lo, &hi);
    prepare_rows(j, j->n0 + n, h->region + (size_t)(s * h->len) * j->el, lo, h->rows, chan,
                 plane, h->len);
}

static void home_unit(const dense_job *j, const dense_home *h, int64_t i)
{
    int64_t ob = h->ob0 + i / h->pairs, q = h->pair0 + i % h->pairs, lo, hi;
    int64_t n = q / j->n_cb, cb = q % j->n_cb;
    home_rows(j, h, n, &lo, &hi);
    run_block(j, ob, n, cb, h->region + (size_t)((n - h->n_first) * h->len) * j->el, h->off,
              lo);
}

/* home h's units this thread can claim, each after preparing its
 * image's rows if no thread has started them, or waiting while one
 * prepares them: an image just before its units, while its rows are in
 * cache, as run_serial does (a home's images prepared all at once, 3.4
 * MB for ResNet's 56x56 layers at batch 8 on two threads, had left L2 by
 * the time their units ran) */
static void help_home(dense_job *j, dense_home *h)
{
    const int64_t n_units = h->pairs * h->obs;
    for (int64_t i; (i = atomic_fetch_add(&h->next, 1)) < n_units;) {
        int64_t s = (h->pair0 + i % h->pairs) / j->n_cb - h->n_first;
        int expected = HOME_FREE;
        if (atomic_compare_exchange_strong(&h->state[s], &expected, HOME_PREPARING)) {
            prepare_image(j, h, s);
            atomic_store(&h->state[s], HOME_READY);
        }
        for (int spin = 0; atomic_load(&h->state[s]) != HOME_READY; spin++)
            if (spin > 1000)
                sched_yield(); /* the preparing thread's core may be taken */
        home_unit(j, h, i);
    }
}

/* each thread of the pool (its chunk index does not matter: a late
 * worker may find nothing left) */
static void home_work(void *ctx, int64_t begin, int64_t end)
{
    dense_job *j = ctx;
    (void)begin, (void)end;
    int64_t first = pthread_equal(pthread_self(), j->caller)
                        ? 0
                        : 1 + atomic_fetch_add(&j->arrivals, 1) % (j->n_homes - 1);
    for (int64_t i = 0; i < j->n_homes; i++)
        help_home(j, &j->homes[(first + i) % j->n_homes]);
}

/* the region stride: the largest a home's region has been, so that a
 * home's region starts at the same offset from layer to layer */
static _Atomic int64_t region_stride;

/* the homes of the chunk n0 .. n0 + nn: their shares, rows and offsets,
 * and the buffer of their regions (NULL when out of memory) */
static char *plan_homes(dense_job *j)
{
    const int64_t homes = j->n_homes, pairs = j->nn * j->n_cb;
    const bool by_pairs = pairs >= 2 * homes || j->n_ob < homes;
    int64_t most = 0;
    for (int64_t i = 0; i < homes; i++) {
        dense_home *h = &j->homes[i];
        h->pair0 = by_pairs ? pairs * i / homes : 0;
        h->pairs = by_pairs ? pairs * (i + 1) / homes - h->pair0 : pairs;
        h->ob0 = by_pairs ? 0 : j->n_ob * i / homes;
        h->obs = by_pairs ? j->n_ob : j->n_ob * (i + 1) / homes - h->ob0;
        h->n_first = h->pair0 / j->n_cb;
        h->n_imgs = h->pairs ? (h->pair0 + h->pairs - 1) / j->n_cb - h->n_first + 1 : 0;
        h->rows = 0;
        for (int64_t n = h->n_first; n < h->n_first + h->n_imgs; n++) {
            int64_t lo, hi;
            home_rows(j, h, n, &lo, &hi);
            h->rows = max64(h->rows, hi - lo);
        }
        fill_offsets(j, h->rows, h->off);
        h->len = cdiv(j->g.c * j->g.sh * j->g.sw * h->rows * j->wq, 16) * 16;
        most = max64(most, h->n_imgs * h->len * (int64_t)j->el);
        h->state = j->img_state + i * j->chunk; /* n_imgs <= nn <= chunk */
        for (int64_t s = 0; s < h->n_imgs; s++)
            atomic_store(&h->state[s], HOME_FREE);
        atomic_store(&h->next, 0);
    }
    int64_t stride = max64(cdiv(most, 4096) * 4096, atomic_load(&region_stride));
    atomic_store(&region_stride, stride);
    char *buf = tg__scratch(TG_SCRATCH_SHARED, (size_t)(homes * stride));
    for (int64_t i = 0; buf && i < homes; i++)
        j->homes[i].region = buf + (size_t)(i * stride);
    return buf;
}

static atomic_bool enabled = true;

void tg__conv_dense_set_enabled(bool on) { atomic_store(&enabled, on); }

bool tg__conv_dense_wanted(const tg__conv_geom *g)
{
    return atomic_load(&enabled) && tg__conv_get_mode() == TG_CONV_AUTO && g->groups == 1 && g->o >= MIN_OUT &&
           g->c * g->kh * g->kw >= MIN_TAPS;
}

void tg__conv_dense_describe(tg_dtype dt, const tg__conv_geom *g, tg__dense_plan *out)
{
    dense_job j = {.g = *g, .k = g->c * g->kh * g->kw};
    plan_phases(&j);
    choose_tile(&j, tg__dense_arch_now(), dt == TG_FLOAT64);
    *out = (tg__dense_plan){.isa = j.arch->name, .mr = j.kn->mr, .nv = j.kn->nv,
                            .lanes = j.kn->over_out ? j.kn->mr / j.kn->nv : j.kn->nr / j.kn->nv,
                            .tail_nv = j.tail ? j.tail->nv : 0, .positions = j.p,
                            .over_out = j.kn->over_out, .row_positions = j.kn->over_out ? j.kn->nr : 0};
}

tg_status tg__conv_dense_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                 const void *w, const void *b, bool relu, void *y)
{
    return tg__conv_dense_forward_res(dt, g, x, w, b, NULL, relu, y);
}

tg_status tg__conv_dense_forward_res(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                     const void *w, const void *b, const void *res,
                                     bool relu, void *y)
{
    if (g->groups != 1)
        return TG_ERR_ARG;
    if (g->n * g->o * g->oh * g->ow == 0)
        return TG_OK;
    dense_job j = {.g = *g,
                   .el = tg_dtype_size(dt), .x = x, .w = w, .b = b, .res = res, .y = y,
                   .relu = relu,
                   .k = g->c * g->kh * g->kw};
    int64_t work = g->n * g->o * j.k * g->oh * g->ow, threads = tg_get_num_threads();
    bool par = work >= atomic_load(&par_work) && threads > 1 && !tg_in_parallel_region();
    j.n_homes = par ? threads : 0;
    j.off = malloc(sizeof(int64_t) * (size_t)(max64(j.k, 1) * (1 + j.n_homes)));
    j.used = malloc(sizeof(bool) * (size_t)(g->sh * g->sw));
    j.homes = par ? malloc(sizeof(dense_home) * (size_t)j.n_homes) : NULL;
    tg_status st = TG_OK;
    tg__pack_entry *kept = NULL;
    char *own = NULL; /* weights packed for this call alone */
    if (!j.off || !j.used || (par && !j.homes)) {
        st = TG_ERR_NOMEM;
        goto out;
    }
    for (int64_t i = 0; i < j.n_homes; i++)
        j.homes[i].off = j.off + (size_t)(max64(j.k, 1) * (1 + i));
    plan_phases(&j);
    choose_tile(&j, tg__dense_arch_now(), dt == TG_FLOAT64);
    tap_offsets(&j);
    plan_image_len(&j);
    j.chunk = min64(g->n, max64(1, atomic_load(&chunk_bytes) / (j.img_len * (int64_t)j.el)));
    plan_blocks(&j, par ? threads : 1);
    if (par && !(j.img_state = malloc(sizeof(atomic_int) * (size_t)(j.n_homes * j.chunk)))) {
        st = TG_ERR_NOMEM;
        goto out;
    }
    j.wp = kept_weights(&j, &kept);
    if (!j.wp && !j.kn->tile) { /* tiles that read packed weights only */
        own = malloc((size_t)(j.panels * j.pan_len) * j.el);
        if (!own) {
            st = TG_ERR_NOMEM;
            goto out;
        }
        pack_weights(&j, own);
        j.wp = own;
    }
    j.caller = pthread_self();
    for (j.n0 = 0; j.n0 < g->n; j.n0 += j.nn) {
        j.nn = min64(j.chunk, g->n - j.n0);
        if (par) {
            if (!(j.imgs = plan_homes(&j))) {
                st = TG_ERR_NOMEM;
                goto out;
            }
            atomic_store(&j.arrivals, 0);
            tg_parallel_for(threads, 1, home_work, &j);
        } else {
            j.imgs = tg__scratch(TG_SCRATCH_SHARED, (size_t)(j.chunk * j.img_len) * j.el);
            if (!j.imgs) {
                st = TG_ERR_NOMEM;
                goto out;
            }
            run_serial(&j);
        }
    }
out:
    tg__pack_cache_release(kept, true);
    free(own);
    free(j.homes);
    free(j.img_state);
    free(j.off);
    free(j.used);
    return st;
}
