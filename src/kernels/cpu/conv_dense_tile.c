/* The dense convolution's tile choice (conv_dense_tile.h): each shape's
 * estimated time from its tiles, accumulator vectors, taps and store,
 * weighed by what was measured of the CPU (Zen 4 splits zmm operations
 * in two, Zen 5 does not); and the tests' switches that force a shape or
 * turn the narrower tails off. */
#include "kernels/cpu/conv_dense_tile.h"
#include "kernels/cpu/conv_dense.h"
#include "kernels/cpu/cpu.h"

#include <stdatomic.h>

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static atomic_int forced_tile = -1;

void tg__conv_dense_force_tile(int kind) { atomic_store(&forced_tile, kind); }

/* whether the CPU runs each zmm operation as two halves (AMD's Zen 4,
 * family 19h): there a ymm tile does as many flops per cycle as a zmm
 * one */
static bool zmm_split(void) { return tg__cpu_amd_family() == 0x19; }

/* a tile's cost beside its multiply-adds (spilling and storing the
 * accumulators, setting up), per accumulator vector, in the time of one
 * multiply-add of the widest vectors: what makes half-width tiles lose
 * on layers with few taps (ResNet's 7x7 stem, 147 taps: ~4% slower with
 * ymm tiles, though they compute 0.2% fewer padded outputs) */
#define STORE_COST 8.0
/* the same for the tiles over output channels, whose store transposes
 * the tile (each output channel's positions from its lane): fitted to
 * ResNet-18's layers on AVX-512 (Zen 4, one thread), where these tiles
 * lost 4% to the wide ones on the 7x7 stem (147 taps) and 16% on a 1x1
 * projection (64 taps), and won 1-3% on the 3x3 layers at 56 and 28 wide
 * and 12-25% at 14 and 7 wide, whose wide rows overhang by 1/15 and 1/8;
 * on Zen 5 the same once their tap loop broadcast each image value once
 * (conv_dense_avx512.c; docs/BENCHMARKS.md) */
#define OUT_STORE_COST 18.0

/* accumulators a multiply-add's latency times the FMA units keep busy:
 * a tile with fewer (AVX2's 4 x 1 tail) runs at that fraction of the
 * speed */
#define BUSY_ACCS 8

static atomic_bool tails_on = true;

void tg__conv_dense_set_tails(bool on) { atomic_store(&tails_on, on); }

/* the tail of `a` for kn's height with the vectors the last `left`
 * positions fill, when that is fewer than kn's; else NULL */
static const tg__dense_kern *tail_of(const tg__dense_arch *a, int f64,
                                     const tg__dense_kern *kn, int64_t left)
{
    int64_t nv = cdiv(left, kn->nr / kn->nv);
    if (nv >= kn->nv || !atomic_load(&tails_on))
        return NULL;
    for (int i = 0; i < a->n_tails; i++)
        if (a->tails[f64][i].mr == kn->mr && a->tails[f64][i].nv == nv)
            return &a->tails[f64][i];
    return NULL;
}

/* the accumulator vectors' time of a tile: as many multiply-adds as the
 * vectors, slower below BUSY_ACCS accumulators */
static double vector_time(const tg__dense_kern *kn)
{
    int accs = kn->mr * kn->nv;
    return (double)kn->nv * (accs < BUSY_ACCS ? (double)BUSY_ACCS / accs : 1.0);
}

/* kn's estimated time on the product (its tail, if any, at *tail), or -1 when kn
 * is not a candidate: the tiles over output channels read packed weights
 * only, kept for frozen ones; packing per call for the others costs more
 * than the tile can gain (tests force them) */
static double tile_cost(const tg__conv_geom *g, int64_t k, int64_t p, const tg__dense_arch *a,
                        int f64, const tg__dense_kern *kn, double fma, bool forced,
                        const tg__dense_kern **tail)
{
    *tail = NULL;
    if (kn->over_out) {
        if (!forced && !g->w_serial)
            return -1;
        return (double)cdiv(g->o, kn->mr) * (double)(g->oh * cdiv(g->ow, kn->nr)) * kn->nv *
               kn->nr * (fma * (double)k + OUT_STORE_COST);
    }
    int64_t tiles = cdiv(p, kn->nr);
    *tail = tail_of(a, f64, kn, p - (tiles - 1) * kn->nr);
    double vectors = (double)(tiles - 1) * vector_time(kn) + vector_time(*tail ? *tail : kn);
    return (double)cdiv(g->o, kn->mr) * kn->mr * vectors * (fma * (double)k + STORE_COST);
}

/* the tile shape with the least estimated time: its tiles (output
 * channels rounded up to its height, wide positions to its width, the
 * last tile's to the vectors of its tail) times the time of its
 * accumulator vectors times the taps' multiply-adds, each the time of a
 * widest one (the narrower vectors' half that on CPUs that split the
 * widest in two, as much elsewhere), plus STORE_COST; ties go to the
 * first (the widest) */
tg__dense_tile tg__dense_choose_tile(const tg__dense_arch *arch, int f64, const tg__conv_geom *g,
                                     int64_t k, int64_t p)
{
    tg__dense_tile best_tile = {0};
    double best = -1;
    int forced = atomic_load(&forced_tile), index = 0;
    int total = arch->n_kinds + (arch->narrower ? arch->narrower->n_kinds : 0);
    for (const tg__dense_arch *a = arch; a; a = a->narrower) {
        double fma = a == arch ? 1.0 : zmm_split() ? 0.5 : 1.0;
        for (int i = 0; i < a->n_kinds; i++, index++) {
            if (forced >= 0 && index != forced % total)
                continue;
            const tg__dense_kern *kn = &a->k[f64][i], *tail;
            double cost = tile_cost(g, k, p, a, f64, kn, fma, forced >= 0, &tail);
            if (cost >= 0 && (best < 0 || cost < best)) {
                best = cost;
                best_tile = (tg__dense_tile){a, kn, tail};
            }
        }
    }
    return best_tile;
}
