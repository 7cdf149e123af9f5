/* Depthwise convolution forward over channel lanes (conv_dwc.h): blocks of
 * a vector's worth of channels of one image over the pool's threads, each
 * transposed into a thread's scratch, computed and written back by the
 * instruction set's block kernel (conv_dwc_arch.h). */
#include "kernels/cpu/conv_dwc.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_dwc_api.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/scratch.h"

#include <stdatomic.h>

_Static_assert(TG__DWC_MAX_TAPS == TG__DW_MAX_TAPS, "the kernel's filter bound");

/* blocks are split over the pool's threads from this many multiply-adds */
#define DWC_PAR_WORK ((int64_t)1 << 16)
/* a strip's layout and outputs within this many bytes: they stay in L2
 * while the strip is computed (taller planes are cut into strips of
 * output rows, each reading its rows of the input with the filter's halo) */
#define DWC_STRIP_BYTES ((int64_t)192 << 10)
/* the most a strip of one output row may take */
#define DWC_MAX_ROW_BYTES ((int64_t)4 << 20)

const tg__dwc_arch *tg__dwc_arch_now(void)
{
#if defined(__x86_64__)
    switch (tg__cpu_isa()) {
    case TG_ISA_AVX512: return &tg__dwc_arch_avx512;
    case TG_ISA_AVX2: return &tg__dwc_arch_avx2;
    default: break;
    }
#endif
    return &tg__dwc_arch_generic;
}

typedef struct dwc_job {
    const tg__conv_geom *g;
    const tg__dwc_arch *arch;
    tg__dwc_plan plan;
    const char *x, *w, *b;
    char *y;
    size_t el;
    int f64;
    atomic_int status;
} dwc_job;

/* input rows a strip of oh output rows reads, and the bytes of its layout
 * and outputs for L lanes */
static int64_t strip_rows(const tg__conv_geom *g, int64_t oh)
{
    return (oh - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}
static int64_t strip_bytes(const tg__conv_geom *g, int64_t oh, int64_t L, int64_t el)
{
    int64_t cols = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    return (strip_rows(g, oh) * cols + oh * g->ow) * L * el;
}

static void blocks(void *ctx, int64_t begin, int64_t end)
{
    dwc_job *j = ctx;
    const tg__conv_geom *g = j->g;
    const tg__dwc_plan *P = &j->plan;
    char *in = tg__scratch(TG_SCRATCH_KERNEL0, P->in_bytes + P->out_bytes);
    if (!in) {
        atomic_store(&j->status, TG_ERR_NOMEM);
        return;
    }
    int64_t taps = g->kh * g->kw, in_plane = g->h * g->w, out_plane = g->oh * g->ow;
    int64_t per_image = P->blocks * P->strips;
    for (int64_t u = begin; u < end; u++) { /* u = (image * blocks + block) * strips + strip */
        int64_t n = u / per_image, c0 = u % per_image / P->strips * P->lanes, oy0;
        int64_t nc = g->c - c0 < P->lanes ? g->c - c0 : P->lanes;
        tg__dwc_geom s = tg__dwc_strip(P, g, u % P->strips, &oy0);
        j->arch->block[j->f64](&s, j->x + (size_t)((n * g->c + c0) * in_plane) * j->el,
                               nc, j->w + (size_t)(c0 * taps) * j->el,
                               j->b ? j->b + (size_t)c0 * j->el : NULL, in,
                               in + P->in_bytes,
                               j->y + (size_t)((n * g->c + c0) * out_plane + oy0 * g->ow) *
                                          j->el);
    }
}

bool tg__conv_dwc_fits(tg_dtype dt, const tg__conv_geom *g)
{
    /* rows so wide that a strip of one output row overflows L2 several
     * times over (tens of thousands of columns) stay with the planes */
    int64_t L = tg__dw_arch_now()->lanes[dt == TG_FLOAT64];
    return strip_bytes(g, 1, L, (int64_t)tg_dtype_size(dt)) <= DWC_MAX_ROW_BYTES;
}

void tg__dwc_plan_strips(tg_dtype dt, const tg__conv_geom *g, const tg__conv_act *act,
                         int64_t budget, tg__dwc_plan *p)
{
    int64_t el = (int64_t)tg_dtype_size(dt);
    p->lanes = tg__dw_arch_now()->lanes[dt == TG_FLOAT64];
    p->blocks = (g->c + p->lanes - 1) / p->lanes;
    /* strips: halve the rows until a strip fits, then even them out */
    int64_t rows = g->oh;
    while (rows > 1 && strip_bytes(g, rows, p->lanes, el) > budget)
        rows = (rows + 1) / 2;
    p->strips = (g->oh + rows - 1) / rows;
    p->strip = (g->oh + p->strips - 1) / p->strips;
    p->geom = (tg__dwc_geom){.h = g->h, .w = g->w, .pl = g->pw, .ow = g->ow,
                             .sh = g->sh, .sw = g->sw, .dh = g->dh, .dw = g->dw,
                             .kh = g->kh, .kw = g->kw,
                             .cols = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1,
                             .ys = g->oh * g->ow, .act = (int)act->kind, .lo = act->lo,
                             .hi = act->hi};
    p->in_bytes = (size_t)((strip_rows(g, p->strip) * p->geom.cols * p->lanes * el + 63) /
                           64 * 64);
    p->out_bytes = (size_t)((p->strip * g->ow * p->lanes * el + 63) / 64 * 64);
}

tg__dwc_geom tg__dwc_strip(const tg__dwc_plan *p, const tg__conv_geom *g, int64_t s,
                           int64_t *oy0)
{
    tg__dwc_geom r = p->geom;
    *oy0 = s * p->strip;
    r.oh = g->oh - *oy0 < p->strip ? g->oh - *oy0 : p->strip;
    r.rows = strip_rows(g, r.oh);
    r.pt = g->ph - *oy0 * g->sh;
    return r;
}

tg_status tg__conv_dwc_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                               const void *w, const void *b, const tg__conv_act *act,
                               void *y)
{
    dwc_job j = {.g = g, .arch = tg__dwc_arch_now(), .x = x, .w = w, .b = b, .y = y,
                 .el = tg_dtype_size(dt), .f64 = dt == TG_FLOAT64};
    tg__dwc_plan_strips(dt, g, act, DWC_STRIP_BYTES, &j.plan);
    atomic_init(&j.status, TG_OK);
    int64_t units = g->n * j.plan.blocks * j.plan.strips;
    int64_t work = g->n * g->c * g->oh * g->ow * g->kh * g->kw;
    if (work >= DWC_PAR_WORK && units > 1 && tg_get_num_threads() > 1 &&
        !tg_in_parallel_region())
        tg_parallel_for(units, 1, blocks, &j);
    else
        blocks(&j, 0, units);
    return (tg_status)atomic_load(&j.status);
}
