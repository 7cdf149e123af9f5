/* A pointwise convolution and the depthwise one after it as one pass
 * (conv_pwdw.h): per block of a vector's worth of the pointwise layer's
 * output channels (the depthwise layer's input channels) of one image,
 * strip of output rows by strip, the pointwise outputs the strip reads
 * are computed straight into the channel-lane layout the depthwise
 * kernel reads (conv_dwc_arch.h's pw_in: a vector of the block's channels
 * per position, as its transpose would have made it), then the
 * depthwise outputs are computed and written back to their planes
 * (from_in). The expanded activation, the largest tensor of a MobileNet
 * block, is never written to memory nor transposed. */
#include "kernels/cpu/conv_pwdw.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_dwc.h"
#include "kernels/cpu/conv_dwc_api.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/scratch.h"

#include <stdatomic.h>
#include <string.h>

/* blocks are split over the pool's threads from this many multiply-adds */
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

typedef struct pwdw_job {
    const tg__conv_geom *pw, *dw;
    const tg__dwc_arch *arch;
    tg__dwc_geom geom; /* a full strip's */
    int64_t lanes, blocks, pairs, strip, strips;
    const char *x, *w1, *b1, *w2, *b2;
    const tg__conv_act *act1;
    char *y;
    size_t el, in_bytes, out_bytes, wp_bytes;
    int f64;
    atomic_int status;
} pwdw_job;

static int64_t strip_rows(const tg__conv_geom *g, int64_t oh)
{
    return (oh - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

static int64_t strip_bytes(const tg__conv_geom *g, int64_t oh, int64_t L, int64_t el)
{
    int64_t cols = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    return (strip_rows(g, oh) * cols + oh * g->ow) * L * el;
}

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

static void blocks(void *ctx, int64_t begin, int64_t end)
{
    pwdw_job *j = ctx;
    const tg__conv_geom *g = j->dw;
    char *in0 = tg__scratch(TG_SCRATCH_KERNEL0,
                            PAIR * j->in_bytes + j->out_bytes + j->wp_bytes + 64 * PAIR);
    if (!in0) {
        atomic_store(&j->status, TG_ERR_NOMEM);
        return;
    }
    void *in[PAIR] = {in0, in0 + j->in_bytes};
    char *out = in0 + PAIR * j->in_bytes, *wp = out + j->out_bytes, *bias = wp + j->wp_bytes;
    int64_t taps = g->kh * g->kw, in_plane = g->h * g->w, out_plane = g->oh * g->ow;
    int64_t per_image = j->pairs * j->strips, packed = -1, L = j->lanes;
    for (int64_t u = begin; u < end; u++) { /* u = (image * pairs + pair) * strips + strip */
        int64_t n = u / per_image, pair = u % per_image / j->strips, c0 = pair * PAIR * L;
        int64_t oy0 = u % j->strips * j->strip;
        int64_t nc = g->c - c0 < PAIR * L ? g->c - c0 : PAIR * L;
        int nblk = (int)((nc + L - 1) / L);
        if (pair != packed) {
            pack_blocks(j, c0, nc, nblk * L, wp, bias);
            packed = pair;
        }
        tg__dwc_geom s = j->geom;
        s.oh = g->oh - oy0 < j->strip ? g->oh - oy0 : j->strip;
        s.rows = strip_rows(g, s.oh);
        s.pt = g->ph - oy0 * g->sh;
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
           pw->c > 0 && tg__conv_dwc_fits(dt, dw);
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
    j.lanes = tg__dw_arch_now()->lanes[j.f64];
    j.blocks = (g->c + j.lanes - 1) / j.lanes;
    j.pairs = (j.blocks + PAIR - 1) / PAIR;
    int64_t rows = g->oh;
    while (rows > 1 && strip_bytes(g, rows, j.lanes, (int64_t)j.el) > PWDW_STRIP_BYTES)
        rows = (rows + 1) / 2;
    j.strips = (g->oh + rows - 1) / rows;
    j.strip = (g->oh + j.strips - 1) / j.strips;
    j.geom = (tg__dwc_geom){.h = g->h, .w = g->w, .pl = g->pw, .ow = g->ow,
                            .sh = g->sh, .sw = g->sw, .dh = g->dh, .dw = g->dw,
                            .kh = g->kh, .kw = g->kw,
                            .cols = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1,
                            .ys = g->oh * g->ow, .act = (int)act2->kind, .lo = act2->lo,
                            .hi = act2->hi};
    /* 64-byte aligned parts, sized for a full strip */
    j.in_bytes = ((size_t)(strip_rows(g, j.strip) * j.geom.cols * j.lanes) * j.el + 63) /
                 64 * 64;
    j.out_bytes = ((size_t)(j.strip * g->ow * j.lanes) * j.el + 63) / 64 * 64;
    j.wp_bytes = ((size_t)(pw->c * PAIR * j.lanes) * j.el + 63) / 64 * 64;
    atomic_init(&j.status, TG_OK);
    int64_t units = g->n * j.pairs * j.strips;
    int64_t work = g->n * g->c * (g->h * g->w * pw->c + g->oh * g->ow * g->kh * g->kw);
    if (work >= PWDW_PAR_WORK && units > 1 && tg_get_num_threads() > 1 &&
        !tg_in_parallel_region())
        tg_parallel_for(units, 1, blocks, &j);
    else
        blocks(&j, 0, units);
    return (tg_status)atomic_load(&j.status);
}
