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

typedef struct pwdw_job {
    const tg__conv_geom *pw, *dw;
    const tg__dwc_arch *arch;
    tg__dwc_geom geom; /* a full strip's */
    int64_t lanes, blocks, strip, strips;
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

/* the pointwise weights of channels [c0, c0 + nc) as [k][L], zeros past
 * nc; their bias as [L] */
static void pack_block(const pwdw_job *j, int64_t c0, int64_t nc, char *wp, char *bias)
{
    int64_t k = j->pw->c, L = j->lanes;
    memset(wp, 0, j->wp_bytes);
    if (j->f64) {
        const double *w = (const double *)j->w1 + c0 * k;
        for (int64_t c = 0; c < nc; c++)
            for (int64_t i = 0; i < k; i++)
                ((double *)wp)[i * L + c] = w[c * k + i];
    } else {
        const float *w = (const float *)j->w1 + c0 * k;
        for (int64_t c = 0; c < nc; c++)
            for (int64_t i = 0; i < k; i++)
                ((float *)wp)[i * L + c] = w[c * k + i];
    }
    if (j->b1) {
        memset(bias, 0, (size_t)L * j->el);
        memcpy(bias, j->b1 + (size_t)c0 * j->el, (size_t)nc * j->el);
    }
}

static void blocks(void *ctx, int64_t begin, int64_t end)
{
    pwdw_job *j = ctx;
    const tg__conv_geom *g = j->dw;
    char *in = tg__scratch(TG_SCRATCH_KERNEL0, j->in_bytes + j->out_bytes + j->wp_bytes + 64);
    if (!in) {
        atomic_store(&j->status, TG_ERR_NOMEM);
        return;
    }
    char *out = in + j->in_bytes, *wp = out + j->out_bytes, *bias = wp + j->wp_bytes;
    int64_t taps = g->kh * g->kw, in_plane = g->h * g->w, out_plane = g->oh * g->ow;
    int64_t per_image = j->blocks * j->strips, packed = -1;
    for (int64_t u = begin; u < end; u++) { /* u = (image * blocks + block) * strips + strip */
        int64_t n = u / per_image, blk = u % per_image / j->strips, c0 = blk * j->lanes;
        int64_t oy0 = u % j->strips * j->strip;
        int64_t nc = g->c - c0 < j->lanes ? g->c - c0 : j->lanes;
        if (blk != packed) {
            pack_block(j, c0, nc, wp, bias);
            packed = blk;
        }
        tg__dwc_geom s = j->geom;
        s.oh = g->oh - oy0 < j->strip ? g->oh - oy0 : j->strip;
        s.rows = strip_rows(g, s.oh);
        s.pt = g->ph - oy0 * g->sh;
        tg__pwdw_src p = {.x = j->x + (size_t)(n * j->pw->c * in_plane) * j->el,
                          .wp = wp, .bias = j->b1 ? bias : NULL, .k = j->pw->c,
                          .hw = in_plane, .act = (int)j->act1->kind, .lo = j->act1->lo,
                          .hi = j->act1->hi};
        j->arch->pw_in[j->f64](&s, &p, in);
        j->arch->from_in[j->f64](&s, nc, j->w2 + (size_t)(c0 * taps) * j->el,
                                 j->b2 ? j->b2 + (size_t)c0 * j->el : NULL, in, out,
                                 j->y + (size_t)((n * g->c + c0) * out_plane + oy0 * g->ow) *
                                            j->el);
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

bool tg__conv_pwdw_pays(void)
{
    /* with AVX2 the pointwise tile (8 positions x 8 channels, a broadcast
     * per multiply-add) is bound by its loads: bench/conv_pwdw.c measured
     * MobileNetV2's pairs at 0.95-1.2x the two layers' time on one
     * thread (0.72-1.65x on two); with AVX-512 at 0.73-0.94x on one,
     * 0.58-0.91x on two. Below AVX2 the pointwise layer may take OpenBLAS,
     * whose bits the fused kernel does not have. */
    return tg__cpu_isa() == TG_ISA_AVX512;
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
    j.wp_bytes = ((size_t)(pw->c * j.lanes) * j.el + 63) / 64 * 64;
    atomic_init(&j.status, TG_OK);
    int64_t units = g->n * j.blocks * j.strips;
    int64_t work = g->n * g->c * (g->h * g->w * pw->c + g->oh * g->ow * g->kh * g->kw);
    if (work >= PWDW_PAR_WORK && units > 1 && tg_get_num_threads() > 1 &&
        !tg_in_parallel_region())
        tg_parallel_for(units, 1, blocks, &j);
    else
        blocks(&j, 0, units);
    return (tg_status)atomic_load(&j.status);
}
