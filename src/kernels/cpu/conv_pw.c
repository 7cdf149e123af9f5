/* Pointwise convolution forward as panel GEMMs over NCHW with the
 * epilogue in the GEMM's store (conv_pw.h). */
#include "kernels/cpu/conv_pw.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_dw_api.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_arch_api.h"
#include "kernels/cpu/pack_cache.h"
#include "kernels/cpu/scratch.h"

#include <sched.h>

#include <stdatomic.h>
#include <string.h>

/* a panel's input and output columns are sized to about this many
 * elements together (2 MB in float32, half the two cores' L2: at batch 8
 * bench/conv_mobile.c favoured it over a quarter of that, within the
 * shared machine's noise) */
#define PANEL_ELEMS ((int64_t)512 * 1024)
/* the smallest panel (columns), for the GEMM's vectors and packing */
#define MIN_PANEL 64
/* units per thread to aim for (late threads balanced by the others) */
#define UNITS_PER_THREAD 4
/* below this many multiply-adds everything runs on the calling thread */
#define PW_PAR_WORK ((int64_t)1 << 19)

typedef struct pw_job {
    const tg__conv_geom *g;
    const tg__gemm_kern *kn;
    const char *x, *w, *b, *res; /* res: a shortcut added after the bias, or NULL */
    char *y;
    char *pa; /* the weights packed once per call: block ob at ob * blk_elems */
    const tg__conv_act *act;
    bool f64;
    size_t el;
    int64_t hw, panel, n_panels, oblock, n_oblocks;
    int64_t oblock_pad, blk_elems; /* a block's rows rounded to MR; its packed size */
    int64_t pack_units, n_units;   /* MR-row panels of the weights; GEMM units */
    bool blas; /* CBLAS measured faster for the units' GEMM (gemm_select.c) */
    bool in_place; /* the GEMM reads the input where it is, unpacked */
    atomic_llong next_pack, packed, next_unit;
    atomic_int status;
} pw_job;

/* packs the weights' MR-row panel q of every block (u = ob * panels + q)
 * over every slab of kc input channels */
static void pack_panel(pw_job *j, int64_t u)
{
    const tg__gemm_kern *kn = j->kn;
    int64_t c = j->g->c, per_block = j->oblock_pad / kn->mr;
    int64_t ob = u / per_block, q = u % per_block, o0 = ob * j->oblock + q * kn->mr;
    int64_t o_end = (ob + 1) * j->oblock < j->g->o ? (ob + 1) * j->oblock : j->g->o;
    if (o0 >= o_end)
        return;
    int64_t rows = o_end - o0 < kn->mr ? o_end - o0 : kn->mr;
    char *blk = j->pa + (size_t)(ob * j->blk_elems) * j->el;
    for (int64_t pc = 0; pc < c; pc += kn->kc) {
        int64_t kc = c - pc < kn->kc ? c - pc : kn->kc;
        char *dst = blk + (size_t)(pc * j->oblock_pad + q * kn->mr * kc) * j->el;
        kn->pack_a(false, j->w + (size_t)(o0 * c + pc) * j->el, c, rows, kc, 1, dst);
    }
}

/* rows [o0, o1) of a panel of len columns (row stride hw) at y, whose
 * shortcut rows are at res: + bias, then + res and relu, or the
 * activation, by the instruction set's vector pass (the CBLAS route) */
static void epilogue_pass(const pw_job *j, char *y, const char *res, int64_t o0,
                          int64_t o1, int64_t len)
{
    const tg__dw_arch *arch = tg__dw_arch_now();
    if (!j->b && !res && j->act->kind == TG_CONV_ACT_NONE)
        return;
    for (int64_t o = o0; o < o1; o++) {
        size_t at = (size_t)((o - o0) * j->hw) * j->el;
        const char *bias = j->b ? j->b + (size_t)o * j->el : NULL;
        if (res)
            arch->row_res[j->f64](y + at, len, bias, res + at,
                                  j->act->kind == TG_CONV_ACT_RELU);
        else
            arch->row_act[j->f64](y + at, len, bias, (int)j->act->kind, j->act->lo,
                                  j->act->hi);
    }
}

/* a unit by CBLAS, then the epilogue in a pass over its output */
static tg_status unit_blas(const pw_job *j, int64_t n, int64_t p0, int64_t len, int64_t o0,
                           int64_t o1)
{
    const tg__conv_geom *g = j->g;
    const char *xs = j->x + (size_t)(n * g->c * j->hw + p0) * j->el;
    const char *ws = j->w + (size_t)(o0 * g->c) * j->el;
    size_t at = (size_t)((n * g->o + o0) * j->hw + p0) * j->el;
    tg_status s = j->f64 ? tg__gemm_blas_f64(false, false, o1 - o0, len, g->c, 1,
                                             (const double *)ws, g->c, (const double *)xs,
                                             j->hw, 0, (double *)(j->y + at), j->hw)
                         : tg__gemm_blas_f32(false, false, o1 - o0, len, g->c, 1,
                                             (const float *)ws, g->c, (const float *)xs,
                                             j->hw, 0, (float *)(j->y + at), j->hw);
    if (s == TG_OK)
        epilogue_pass(j, j->y + at, j->res ? j->res + at : NULL, o0, o1, len);
    return s;
}

/* y's rows [o0, o1) of image n, columns [p0, p0 + len): the input's
 * panel packed slab by slab, each slab's product with the block's packed
 * weights added into y, the last one through the epilogue (bias, shortcut,
 * activation) as its tiles are stored */
static tg_status unit(pw_job *j, int64_t u)
{
    const tg__conv_geom *g = j->g;
    const tg__gemm_kern *kn = j->kn;
    int64_t per_image = j->n_panels * j->n_oblocks;
    int64_t n = u / per_image, rest = u % per_image;
    int64_t p0 = rest / j->n_oblocks * j->panel, ob = rest % j->n_oblocks;
    int64_t len = j->hw - p0 < j->panel ? j->hw - p0 : j->panel;
    int64_t o0 = ob * j->oblock, o1 = o0 + j->oblock < g->o ? o0 + j->oblock : g->o;
    if (j->blas)
        return unit_blas(j, n, p0, len, o0, o1);
    size_t el = j->el;
    int64_t ncap = len < kn->nc ? len : kn->nc, kcap = g->c < kn->kc ? g->c : kn->kc;
    char *pb = j->in_place ? NULL
                           : tg__scratch(TG_SCRATCH_GEMM_B,
                                         (size_t)((ncap + kn->nr - 1) / kn->nr * kn->nr * kcap) * el);
    if (!pb && !j->in_place)
        return TG_ERR_NOMEM;
    const char *blk = j->pa + (size_t)(ob * j->blk_elems) * el;
    for (int64_t jc = 0; jc < len; jc += kn->nc) {
        int64_t nc = len - jc < kn->nc ? len - jc : kn->nc;
        size_t at = (size_t)((n * g->o + o0) * j->hw + p0 + jc) * el;
        tg__gemm_ep ep = {.bias = j->b ? j->b + (size_t)o0 * el : NULL,
                          .res = j->res ? j->res + at : NULL, .ldr = j->hw,
                          .act = (int)j->act->kind, .lo = j->act->lo, .hi = j->act->hi};
        for (int64_t pc = 0; pc < g->c; pc += kn->kc) {
            int64_t kc = g->c - pc < kn->kc ? g->c - pc : kn->kc;
            const char *xs = j->x + (size_t)((n * g->c + pc) * j->hw + p0 + jc) * el;
            if (!j->in_place)
                kn->pack_b(false, xs, j->hw, kc, nc, pb);
            const char *slab = blk + (size_t)(pc * j->oblock_pad) * el;
            for (int64_t ic = 0; ic < o1 - o0; ic += kn->mc) {
                int64_t mc = o1 - o0 - ic < kn->mc ? o1 - o0 - ic : kn->mc;
                tg__gemm_ep blk_ep = ep;
                if (ep.bias)
                    blk_ep.bias = (const char *)ep.bias + (size_t)ic * el;
                if (ep.res)
                    blk_ep.res = (const char *)ep.res + (size_t)(ic * j->hw) * el;
                const char *as = slab + (size_t)(ic * kc) * el;
                char *ys = j->y + at + (size_t)(ic * j->hw) * el;
                const tg__gemm_ep *last = pc + kc >= g->c ? &blk_ep : NULL;
                if (j->in_place)
                    kn->macro_ep_in_place(mc, nc, kc, as, xs, j->hw, ys, j->hw, pc > 0, last);
                else
                    kn->macro_ep(mc, nc, kc, as, pb, ys, j->hw, pc > 0, last);
            }
        }
    }
    return TG_OK;
}

/* each thread: weight panels until none is left, a wait until all are
 * packed (every one is claimed by a running thread by then, so the wait
 * ends even on one thread), then GEMM units as they come */
static void body(void *ctx, int64_t begin, int64_t end)
{
    pw_job *j = ctx;
    (void)begin, (void)end;
    for (int64_t u; (u = atomic_fetch_add(&j->next_pack, 1)) < j->pack_units;) {
        pack_panel(j, u);
        atomic_fetch_add(&j->packed, 1);
    }
    while (atomic_load(&j->packed) < j->pack_units)
        sched_yield();
    for (int64_t u; (u = atomic_fetch_add(&j->next_unit, 1)) < j->n_units;) {
        tg_status s = unit(j, u);
        if (s != TG_OK)
            atomic_store(&j->status, s);
    }
}

static bool is_pointwise(const tg__conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 &&
           g->pw == 0 && g->groups == 1 && g->oh == g->h && g->ow == g->w && g->c > 0 &&
           g->o > 0;
}

/* panels of columns that fit the cache, more of them (down to
 * MIN_PANEL columns) when the images' panels are too few to keep every
 * thread busy, then blocks of output channels; panels of equal width */
static void plan(pw_job *j, int64_t threads)
{
    const tg__conv_geom *g = j->g;
    int64_t want = threads > 1 ? UNITS_PER_THREAD * threads : 1;
    int64_t fit = PANEL_ELEMS / (g->c + g->o);
    fit = fit < MIN_PANEL ? MIN_PANEL : fit;
    int64_t np = (j->hw + fit - 1) / fit, per_image = (want + g->n - 1) / g->n;
    int64_t most = (j->hw + MIN_PANEL - 1) / MIN_PANEL;
    if (np < per_image)
        np = per_image < most ? per_image : most;
    /* whole cache lines: two threads' panels of one row never share a
     * line (at 56 x 56, 392-column panels made two threads' units 10-20%
     * slower than 400-column ones) */
    int64_t line = 64 / (int64_t)j->el;
    j->panel = ((j->hw + np - 1) / np + line - 1) / line * line;
    j->n_panels = (j->hw + j->panel - 1) / j->panel;
    /* one panel in all (7x7 planes at batch 1): each unit packs that
     * panel again, and blocks of a few channels leave most of their rows
     * to the GEMM's short row kernels, so one block per thread
     * (MobileNetV2's 960 -> 160 at 7x7 on two threads: 0.105 -> 0.077 ms,
     * 576 -> 160 0.063 -> 0.046) */
    if (g->n * j->n_panels == 1 && threads > 1)
        want = threads;
    int64_t nb = (want + g->n * j->n_panels - 1) / (g->n * j->n_panels);
    int64_t blocks = (g->o + 15) / 16; /* of at least 16 channels */
    nb = nb > blocks ? blocks : nb < 1 ? 1 : nb;
    j->oblock = (g->o + nb - 1) / nb;
    j->n_oblocks = (g->o + j->oblock - 1) / j->oblock;
}

/* whether the GEMM reads the input unpacked: when it has at least three
 * times as many channels as the output (the projections of inverted
 * residual blocks), packing its panels cost 15-30% of the layer, and
 * reading them in place took 5-42% less time at batch 1 and 8 on AVX-512
 * and AVX2 (MobileNetV2's 96 -> 24 at 56 x 56: 0.16 -> 0.13 ms); not for
 * expansions (reused by many row panels, 16 -> 96 at 112 x 112 ran 1.5x
 * longer unpacked at batch 8) nor planes under four column panels (7 x 7:
 * rows straddling cache lines, 5-13% slower on AVX2). Also when the
 * output has at most two row panels, which re-read the input from cache
 * for less than packing it costs (MobileNetV2's 32 -> 16 at 112 x 112 on
 * AVX-512: 0.172 -> 0.155 ms on one thread) */
static bool reads_in_place(const tg__conv_geom *g, const tg__gemm_kern *kn)
{
    return (g->c >= 3 * g->o || g->o <= 2 * kn->mr) && g->h * g->w >= 4 * kn->nr;
}

/* w's transpose [C, O], kept for frozen weights (NULL: not frozen, or
 * the cache declined; *kept: to release) */
static const char *transposed(const pw_job *j, tg__pack_entry **kept)
{
    const tg__conv_geom *g = j->g;
    if (!g->w_serial)
        return NULL;
    tg__pack_key key = {.serial = g->w_serial, .version = g->w_version, .data = j->w,
                        .kern = j->kn, .layout = {g->c, g->o, -1, 0, 0, 0}};
    bool ready = false;
    char *t = tg__pack_cache_get(&key, (size_t)(g->o * g->c) * j->el, &ready, kept);
    if (!t || ready)
        return t;
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t c = 0; c < g->c; c++)
            memcpy(t + (size_t)(c * g->o + o) * j->el, j->w + (size_t)(o * g->c + c) * j->el,
                   j->el);
    return t;
}

/* 1 x 1 planes (the squeeze-excite layers on pooled vectors): y's
 * [N, O] = x's [N, C] @ w's [O, C]^T, one product of N rows instead of
 * the panel path's N one-column ones, whose tiles compute NR columns to
 * keep one. Which product, by bench_conv_mobile --net mobilenet_v3_small
 * --only squeeze --frozen (its 14 layers at batch 1, weights in cache,
 * one thread, AVX-512 / AVX2: 48 / 39 us on the panel path, 25 / 28 us
 * here; AVX2 with OPENBLAS_CORETYPE=Haswell, what CBLAS gives an AVX2
 * machine, for changing weights: 576 -> 144 14.9 -> 4.5 us):
 *   - more than TG__GEMM_SKINNY_M images: the GEMM (frozen weights: their
 *     packed form kept);
 *   - C >= O (the squeezes): the skinny dot products, w being rows of C
 *     already (576 -> 144: 8.5 -> 4.0 us, 6.7 -> 4.5);
 *   - C < O with frozen weights, up to 4 images (what the skinny product
 *     of B as is takes): the skinny product over w's transpose, kept
 *     (144 -> 576: 7.1 -> 4.5, 5.6 -> 4.6; the dot products of a short C
 *     spend their time in the per-output sums: 9.0 on AVX2);
 *   - else (C < O, weights changing) the panel path: false.
 * Then the bias and the activation (or shortcut) row by row: the bias
 * added first, as the panel path's epilogue adds it (the same bits). */
static bool vectors(const pw_job *j, tg_status *status)
{
    const tg__conv_geom *g = j->g;
    tg__gemm_call call = {.tb = true, .f64 = j->f64, .m = g->n, .n = g->o, .k = g->c,
                          .lda = g->c, .ldb = g->c, .ldc = g->o, .alpha = 1, .beta = 0,
                          .a = j->x, .b = j->w, .c = j->y};
    tg__pack_entry *kept = NULL;
    const char *wt = NULL;
    if (g->n <= TG__GEMM_SKINNY_M && g->c < g->o) {
        wt = g->n <= TG__GEMM_SKINNY_M / 2 ? transposed(j, &kept) : NULL;
        if (!wt)
            return false;
        call.tb = false, call.b = wt, call.ldb = g->o;
    }
    tg_status s;
    if (g->n <= TG__GEMM_SKINNY_M)
        s = tg__gemm_skinny(&call, tg__gemm_skinny_threads(&call));
    else if (j->f64)
        s = tg__dgemm_frozen_b(false, true, g->n, g->o, g->c, 1, (const double *)j->x, g->c,
                               (const double *)j->w, g->c, 0, (double *)j->y, g->o,
                               g->w_serial, g->w_version);
    else
        s = tg__sgemm_frozen_b(false, true, g->n, g->o, g->c, 1, (const float *)j->x, g->c,
                               (const float *)j->w, g->c, 0, (float *)j->y, g->o,
                               g->w_serial, g->w_version);
    tg__pack_cache_release(kept, true);
    *status = s;
    if (s != TG_OK)
        return true;
    const tg__dw_arch *arch = tg__dw_arch_now();
    for (int64_t i = 0; i < g->n; i++) {
        size_t at = (size_t)(i * g->o) * j->el;
        if (j->b && j->f64)
            for (int64_t o = 0; o < g->o; o++)
                ((double *)(j->y + at))[o] += ((const double *)j->b)[o];
        else if (j->b)
            for (int64_t o = 0; o < g->o; o++)
                ((float *)(j->y + at))[o] += ((const float *)j->b)[o];
        if (j->res)
            arch->row_res[j->f64](j->y + at, g->o, NULL, j->res + at,
                                  j->act->kind == TG_CONV_ACT_RELU);
        else if (j->act->kind != TG_CONV_ACT_NONE)
            arch->row_act[j->f64](j->y + at, g->o, NULL, (int)j->act->kind, j->act->lo,
                                  j->act->hi);
    }
    return true;
}

bool tg__conv_pw_wanted(const tg__conv_geom *g)
{
    return is_pointwise(g) && tg__conv_get_mode() == TG_CONV_AUTO && g->n * g->h * g->w > 0;
}

bool tg__conv_pw_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                         const void *w, const void *b, const tg__conv_act *act, void *y,
                         tg_status *status)
{
    return tg__conv_pw_forward_res(dt, g, x, w, b, NULL, act, y, status);
}

bool tg__conv_pw_forward_res(tg_dtype dt, const tg__conv_geom *g, const void *x,
                             const void *w, const void *b, const void *res,
                             const tg__conv_act *act, void *y, tg_status *status)
{
    if (!tg__conv_pw_wanted(g) ||
        (res && act->kind != TG_CONV_ACT_NONE && act->kind != TG_CONV_ACT_RELU))
        return false;
    pw_job j = {.g = g, .kn = &tg__gemm_arch_now()->k[dt == TG_FLOAT64], .x = x, .w = w,
                .b = b, .res = res, .y = y, .act = act, .f64 = dt == TG_FLOAT64,
                .hw = g->h * g->w};
    j.el = j.f64 ? sizeof(double) : sizeof(float);
    int64_t work = g->n * g->o * g->c * j.hw, threads = tg_get_num_threads();
    bool par = work >= PW_PAR_WORK && threads > 1 && !tg_in_parallel_region();
    plan(&j, par ? threads : 1);
    int64_t mr = j.kn->mr;
    j.oblock_pad = (j.oblock + mr - 1) / mr * mr;
    j.blk_elems = j.oblock_pad * g->c;
    size_t pa_bytes = (size_t)(j.n_oblocks * j.blk_elems) * j.el;
    j.blas = tg__gemm_use_blas();
    /* at the baseline CBLAS (its own kernels for the CPU: OpenBLAS's
     * AVX-512 gemv here) beats the skinny products' SSE: 576 -> 144 4.8
     * against 5.9 us */
    if (j.hw == 1 && !(j.blas && tg__cpu_isa() == TG_ISA_GENERIC) && vectors(&j, status))
        return true;
    /* frozen weights: their packed form from an earlier call, or packed
     * into the cache by this one; the built-in GEMM then, which no longer
     * packs them, even where CBLAS (packing them) was measured faster:
     * within noise of each other with AVX2 and AVX-512 (MobileNetV2's 7x7
     * layers). Not at the baseline, whose SSE kernel is half as fast as
     * OpenBLAS (which keeps its own AVX-512 kernels whatever TG_CPU says) */
    tg__pack_entry *kept = NULL;
    bool ready = false;
    if (g->w_serial && (!j.blas || tg__cpu_isa() != TG_ISA_GENERIC)) {
        tg__pack_key key = {.serial = g->w_serial, .version = g->w_version, .data = w,
                            .kern = j.kn,
                            .layout = {g->c, g->o, j.oblock, j.n_oblocks, j.oblock_pad, 0}};
        j.pa = tg__pack_cache_get(&key, pa_bytes, &ready, &kept);
    }
    j.blas = j.blas && !j.pa;
    j.in_place = reads_in_place(g, j.kn);
    j.pack_units = j.blas || ready ? 0 : j.n_oblocks * (j.oblock_pad / mr);
    j.n_units = g->n * j.n_panels * j.n_oblocks;
    if (!j.pa && !j.blas)
        j.pa = tg__scratch(TG_SCRATCH_SHARED, pa_bytes);
    if (!j.blas && !j.pa) {
        *status = TG_ERR_NOMEM;
        return true;
    }
    atomic_init(&j.next_pack, 0);
    atomic_init(&j.packed, 0);
    atomic_init(&j.next_unit, 0);
    atomic_init(&j.status, TG_OK);
    if (par && j.n_units > 1)
        tg_parallel_for(threads, 1, body, &j);
    else
        body(&j, 0, 1);
    *status = (tg_status)atomic_load(&j.status);
    tg__pack_cache_release(kept, true); /* packing cannot fail once started */
    return true;
}
