/* A pointwise convolution and the depthwise one after it as one pass
 * (conv_pwdw.h): per pair of blocks of a vector's worth of the pointwise
 * layer's output channels (the depthwise layer's input channels) of one
 * image, strip of output rows by strip (the channel-lane path's plan,
 * conv_dwc.c), the pointwise outputs the strip reads are computed
 * straight into the channel-lane layout the depthwise kernel reads
 * (conv_dwc_arch.h's pw_in: a vector of a block's channels per position,
 * as its transpose would have made it), then each block's depthwise
 * outputs are computed and written back to their planes (from_in). The
 * expanded activation, the largest tensor of a MobileNet block, is never
 * written to memory nor transposed. */
#include "kernels/cpu/conv_pwdw.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_dwc.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/scratch.h"

#include <stdatomic.h>
#include <string.h>

/* units are split over the pool's threads from this many multiply-adds */
#define PWDW_PAR_WORK ((int64_t)1 << 16)
/* a strip's lane layout and outputs within this many bytes (they stay in
 * L2 while the strip is computed); the strips' shared input rows are
 * computed once per strip, so taller strips recompute less */
#define PWDW_STRIP_BYTES ((int64_t)384 << 10)
/* the built-in GEMM's block of the inner dimension (KC in gemm_*.c) */
#define PWDW_MAX_K 256

/* channel blocks a unit computes together (their pointwise tiles share
 * each broadcast of an input value) */
#define PAIR 2
/* fewer units per thread than this: single blocks per unit instead */
#define UNITS_PER_THREAD 4

typedef struct pwdw_job {
    const tg__conv_geom *pw, *dw;
    const tg__dwc_arch *arch;
    tg__dwc_plan plan; /* the depthwise layer's blocks and strips */
    int64_t per_unit, pairs; /* channel blocks per unit (PAIR or 1), units per strip */
    int64_t n_units;
    atomic_llong next_unit;  /* units are claimed one at a time */
    const char *x, *w1, *b1, *w2, *b2;
    const tg__conv_act *act1;
    char *y;
    size_t el, wp_bytes;
    int f64;
    atomic_int status;
} pwdw_job;

/* the pointwise weights of channels [c0, c0 + nc) as [k][cols] (cols: the
 * unit's blocks' lanes), zeros past nc; their bias as [cols] */
static void pack_blocks(const pwdw_job *j, int64_t c0, int64_t nc, int64_t cols, char *wp,
                        char *bias)
{
    int64_t k = j->pw->c;
    memset(wp, 0, (size_t)(k * cols) * j->el);
    if (j->f64) {
        const double *w = (const double *)j->w1 + c0 * k;
        for (int64_t c = 0; c < nc; c++)
            for (int64_t i = 0; i < k; i++)
                ((double *)wp)[i * cols + c] = w[c * k + i];
    } else {
        const float *w = (const float *)j->w1 + c0 * k;
        for (int64_t c = 0; c < nc; c++)
            for (int64_t i = 0; i < k; i++)
                ((float *)wp)[i * cols + c] = w[c * k + i];
    }
    if (j->b1) {
        memset(bias, 0, (size_t)cols * j->el);
        memcpy(bias, j->b1 + (size_t)c0 * j->el, (size_t)nc * j->el);
    }
}

/* each thread claims units until none is left (a unit's cost varies: the
 * last pair may hold one block) */
static void units(void *ctx, int64_t begin, int64_t end)
{
    pwdw_job *j = ctx;
    (void)begin, (void)end;
    const tg__conv_geom *g = j->dw;
    const tg__dwc_plan *P = &j->plan;
    char *in0 = tg__scratch(TG_SCRATCH_KERNEL0,
                            PAIR * P->in_bytes + P->out_bytes + j->wp_bytes + 64 * PAIR);
    if (!in0) {
        atomic_store(&j->status, TG_ERR_NOMEM);
        return;
    }
    void *in[PAIR] = {in0, in0 + P->in_bytes};
    char *out = in0 + PAIR * P->in_bytes, *wp = out + P->out_bytes, *bias = wp + j->wp_bytes;
    int64_t taps = g->kh * g->kw, in_plane = g->h * g->w, out_plane = g->oh * g->ow;
    int64_t per_image = j->pairs * P->strips, packed = -1, L = P->lanes;
    const int64_t width = j->per_unit * L; /* a unit's channels */
    for (int64_t u; (u = atomic_fetch_add(&j->next_unit, 1)) < j->n_units;) {
        /* u = (image * pairs + pair) * strips + strip */
        int64_t n = u / per_image, pair = u % per_image / P->strips, c0 = pair * width, oy0;
        int64_t nc = g->c - c0 < width ? g->c - c0 : width;
        int nblk = (int)((nc + L - 1) / L);
        if (pair != packed) {
            pack_blocks(j, c0, nc, nblk * L, wp, bias);
            packed = pair;
        }
        tg__dwc_geom s = tg__dwc_strip(P, g, u % P->strips, &oy0);
        tg__pwdw_src p = {.x = j->x + (size_t)(n * j->pw->c * in_plane) * j->el,
                          .wp = wp, .bias = j->b1 ? bias : NULL, .k = j->pw->c,
                          .hw = in_plane, .blocks = nblk, .act = (int)j->act1->kind,
                          .lo = j->act1->lo, .hi = j->act1->hi};
        j->arch->pw_in[j->f64](&s, &p, in);
        for (int b = 0; b < nblk; b++) {
            int64_t cb = c0 + b * L, ncb = g->c - cb < L ? g->c - cb : L;
            j->arch->from_in[j->f64](&s, ncb, j->w2 + (size_t)(cb * taps) * j->el,
                                     j->b2 ? j->b2 + (size_t)cb * j->el : NULL, in[b], out,
                                     j->y + (size_t)((n * g->c + cb) * out_plane +
                                                     oy0 * g->ow) * j->el);
        }
    }
}

bool tg__conv_pwdw_fits(tg_dtype dt, const tg__conv_geom *pw, const tg__conv_geom *dw)
{
    bool pointwise = pw->kh == 1 && pw->kw == 1 && pw->sh == 1 && pw->sw == 1 &&
                     pw->ph == 0 && pw->pw == 0 && pw->groups == 1 && pw->oh == pw->h &&
                     pw->ow == pw->w;
    bool depthwise = dw->groups == dw->c && dw->o == dw->c && dw->groups > 1 &&
                     dw->kh * dw->kw <= TG__DW_MAX_TAPS && dw->oh > 0 && dw->ow > 0;
    /* the sums over the input channels in one GEMM block (KC), as the
     * built-in GEMM takes them */
    return (dt == TG_FLOAT32 || dt == TG_FLOAT64) && pointwise && depthwise &&
           pw->c <= PWDW_MAX_K &&
           pw->n == dw->n && pw->o == dw->c && pw->h == dw->h && pw->w == dw->w &&
           pw->c > 0 && tg__conv_pads_bounded(dw) && tg__conv_dwc_fits(dt, dw);
}

bool tg__conv_pwdw_pays(int64_t plane)
{
    /* bench/conv_pwdw.c, MobileNetV2's and V3-small's pairs against the
     * two layers: with AVX-512 0.70-0.93x their time on planes of 14 x 14
     * and up (one thread), 1.06-1.19x on 7 x 7 (each pair of blocks packs
     * its weights for one short strip; the pointwise GEMM is at its best
     * there); with AVX2 0.63-0.92x from 28 x 28 up, 1.03-1.13x on 14 x 14.
     * Below AVX2 the pointwise layer may take OpenBLAS, whose bits the
     * fused kernel does not have. */
    switch (tg__cpu_isa()) {
    case TG_ISA_AVX512: return plane > 8 * 8;
    case TG_ISA_AVX2: return plane > 20 * 20;
    default: return false;
    }
}

tg_status tg__conv_pwdw_forward(tg_dtype dt, const tg__conv_geom *pw, const tg__conv_geom *dw,
                                const void *x, const void *w1, const void *b1,
                                const tg__conv_act *act1, const void *w2, const void *b2,
                                const tg__conv_act *act2, void *y)
{
    const tg__conv_geom *g = dw;
    pwdw_job j = {.pw = pw, .dw = dw, .arch = tg__dwc_arch_now(), .x = x, .w1 = w1,
                  .b1 = b1, .w2 = w2, .b2 = b2, .act1 = act1, .y = y,
                  .el = tg_dtype_size(dt), .f64 = dt == TG_FLOAT64};
    tg__dwc_plan_strips(dt, g, act2, PWDW_STRIP_BYTES, &j.plan);
    int64_t work = g->n * g->c * (g->h * g->w * pw->c + g->oh * g->ow * g->kh * g->kw);
    int64_t threads = work >= PWDW_PAR_WORK && !tg_in_parallel_region() ? tg_get_num_threads() : 1;
    /* pairs of blocks share each broadcast input value; when they would
     * leave the threads fewer than UNITS_PER_THREAD units each, single
     * blocks (MobileNetV3-small's 72-288 channels at batch 1) */
    j.per_unit = g->n * ((j.plan.blocks + PAIR - 1) / PAIR) * j.plan.strips >=
                 UNITS_PER_THREAD * threads ? PAIR : 1;
    j.pairs = (j.plan.blocks + j.per_unit - 1) / j.per_unit;
    j.wp_bytes = ((size_t)(pw->c * PAIR * j.plan.lanes) * j.el + 63) / 64 * 64;
    atomic_init(&j.status, TG_OK);
    j.n_units = g->n * j.pairs * j.plan.strips;
    atomic_init(&j.next_unit, 0);
    if (threads > 1 && j.n_units > 1)
        tg_parallel_for(threads, 1, units, &j);
    else
        units(&j, 0, 1);
    return (tg_status)atomic_load(&j.status);
}
