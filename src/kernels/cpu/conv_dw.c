/* Depthwise convolution forward (conv_dw.h): blocks of a vector's worth
 * of channels transposed into channel lanes (conv_dwc.c), or, for planes
 * beyond its offsets, each (image, channel) plane laid out in a thread's
 * scratch as column phases of the zero-padded plane (conv_dw_api.h), then
 * the instruction set's plane kernel computes the output plane with
 * whole-vector loads only. */
#include "kernels/cpu/conv_dw.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_dw_api.h"
#include "kernels/cpu/conv_dwc.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/scratch.h"

#include <stdatomic.h>

/* planes are split over the pool's threads from this many multiply-adds */
#define DW_PAR_WORK ((int64_t)1 << 16)

const tg__dw_arch *tg__dw_arch_now(void)
{
#if defined(__x86_64__)
    switch (tg__cpu_isa()) {
    case TG_ISA_AVX512: return &tg__dw_arch_avx512;
    case TG_ISA_AVX2: return &tg__dw_arch_avx2;
    default: break;
    }
#endif
    return &tg__dw_arch_generic;
}

typedef struct dw_job {
    const tg__conv_geom *g;
    const tg__dw_arch *arch;
    tg__dw_plane p;
    int64_t off[TG__DW_MAX_TAPS];
    const char *x, *w, *b;
    char *y;
    size_t el;
    int f64;
    atomic_int status;
} dw_job;

static void planes(void *ctx, int64_t begin, int64_t end)
{
    dw_job *j = ctx;
    const tg__conv_geom *g = j->g;
    const tg__dw_plane *p = &j->p;
    void *ph = tg__scratch(TG_SCRATCH_KERNEL0,
                           (size_t)(p->sw * p->rows * p->ld) * j->el + TG__DW_SLACK);
    if (!ph) {
        atomic_store(&j->status, TG_ERR_NOMEM);
        return;
    }
    int64_t taps = g->kh * g->kw, in_plane = g->h * g->w, out_plane = g->oh * g->ow;
    for (int64_t u = begin; u < end; u++) { /* u = image * channels + channel */
        int64_t c = u % g->c;
        const char *src = j->x + (size_t)(u * in_plane) * j->el;
        j->arch->layout[j->f64](p, src, ph);
        j->arch->plane[j->f64](p, ph, j->w + (size_t)(c * taps) * j->el,
                               j->b ? j->b + (size_t)c * j->el : NULL,
                               j->y + (size_t)(u * out_plane) * j->el);
    }
}

static bool is_depthwise(const tg__conv_geom *g)
{
    return g->groups == g->c && g->o == g->c && g->groups > 1 &&
           g->kh * g->kw <= TG__DW_MAX_TAPS && g->oh > 0 && g->ow > 0;
}

bool tg__conv_dw_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                         const void *w, const void *b, const tg__conv_act *act, void *y,
                         tg_status *status)
{
    if (!is_depthwise(g) || tg__conv_get_mode() != TG_CONV_AUTO)
        return false;
    dw_job j = {.g = g, .arch = tg__dw_arch_now(), .x = x, .w = w, .b = b, .y = y,
                .el = tg_dtype_size(dt), .f64 = dt == TG_FLOAT64};
    int64_t L = j.arch->lanes[j.f64], owv = (g->ow + L - 1) / L * L;
    /* small output planes of many images at stride 1 with vectors of 8
     * lanes or fewer: the batch lanes of conv_direct.c (L images side by
     * side) fill them without the channel lanes' transposes (batch 8, one
     * thread: 7 x 7 planes 5-25% faster with AVX2 and the baseline, not
     * with AVX-512, bench/conv_mobile.c) */
    int64_t plane = g->oh * g->ow;
    if (g->sh == 1 && g->sw == 1 && plane <= 64 && L <= 8 && g->n >= L / 2)
        return false;
    /* everything else over channel lanes (conv_dwc.c): 1.0-3.5x faster
     * than the planes below at every level and size of MobileNetV2's and
     * V3's layers (bench/conv_mobile.c); the planes stay for planes too
     * large for its offsets */
    if (tg__conv_dwc_fits(dt, g)) {
        *status = tg__conv_dwc_forward(dt, g, x, w, b, act, y);
        return true;
    }
    tg__dw_plane *p = &j.p;
    *p = (tg__dw_plane){.h = g->h, .w = g->w, .pt = g->ph, .pl = g->pw,
                        .oh = g->oh, .ow = g->ow, .sh = g->sh, .sw = g->sw,
                        .rows = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1,
                        .ld = owv + (g->kw - 1) * g->dw / g->sw + 1,
                        .taps = (int)(g->kh * g->kw), .off = j.off, .act = (int)act->kind,
                        .lo = act->lo, .hi = act->hi};
    for (int64_t i = 0, t = 0; i < g->kh; i++)
        for (int64_t k = 0; k < g->kw; k++, t++) {
            int64_t col = k * g->dw; /* tap's column in the padded plane */
            j.off[t] = (col % g->sw * p->rows + i * g->dh) * p->ld + col / g->sw;
        }
    atomic_init(&j.status, TG_OK);
    int64_t units = g->n * g->c, work = units * g->oh * g->ow * p->taps;
    int64_t threads = tg_get_num_threads();
    if (work >= DW_PAR_WORK && units > 1 && threads > 1 && !tg_in_parallel_region())
        tg_parallel_for(units, 1, planes, &j);
    else
        planes(&j, 0, units);
    *status = (tg_status)atomic_load(&j.status);
    return true;
}
