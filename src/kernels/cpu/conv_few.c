/* Few-input-channel strided convolution forward (conv_few.h): strips of
 * output rows over the pool's threads, each strip's input rows laid out
 * in a thread's scratch by the depthwise kernel's layout, then the
 * instruction set's strip kernel (conv_few_arch.h). */
#include "kernels/cpu/conv_few.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_dense.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_few_api.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/scratch.h"

#include <stdatomic.h>

/* strips are split over the pool's threads from this many multiply-adds */
#define FEW_PAR_WORK ((int64_t)1 << 16)
/* strips of at most this many output rows (their input rows, for every
 * channel, stay in L1 while the output channels go by) */
#define FEW_MAX_ROWS 16
/* strips per thread to aim for */
#define STRIPS_PER_THREAD 4

const tg__few_arch *tg__few_arch_now(void)
{
#if defined(__x86_64__)
    switch (tg__cpu_isa()) {
    case TG_ISA_AVX512: return &tg__few_arch_avx512;
    case TG_ISA_AVX2: return &tg__few_arch_avx2;
    default: break;
    }
#endif
    return NULL;
}

typedef struct few_job {
    const tg__conv_geom *g;
    const tg__dw_arch *dw;
    const tg__few_arch *arch;
    tg__dw_plane p; /* a full strip's layout of one channel */
    int64_t off[TG__DW_MAX_TAPS];
    int64_t strip, n_strips; /* output rows per strip, strips per image */
    const char *x, *w, *b;
    char *y;
    size_t el;
    int f64;
    atomic_int status;
} few_job;

static void strips(void *ctx, int64_t begin, int64_t end)
{
    few_job *j = ctx;
    const tg__conv_geom *g = j->g;
    size_t cs = (size_t)(j->p.sw * j->p.rows * j->p.ld);
    char *ph = tg__scratch(TG_SCRATCH_KERNEL0, cs * (size_t)g->c * j->el + TG__DW_SLACK);
    if (!ph) {
        atomic_store(&j->status, TG_ERR_NOMEM);
        return;
    }
    int64_t in_plane = g->h * g->w, out_plane = g->oh * g->ow;
    for (int64_t u = begin; u < end; u++) { /* u = image * strips + strip */
        int64_t n = u / j->n_strips, oy0 = u % j->n_strips * j->strip;
        tg__dw_plane p = j->p;
        p.oh = g->oh - oy0 < j->strip ? g->oh - oy0 : j->strip;
        /* the strip's first input row is the layout's row 0; a short last
         * strip keeps the full strip's rows (zeros below the image), which
         * the tap offsets assume */
        p.pt = g->ph - oy0 * g->sh;
        for (int64_t c = 0; c < g->c; c++)
            j->dw->layout[j->f64](&p, j->x + (size_t)((n * g->c + c) * in_plane) * j->el,
                                  ph + (size_t)c * cs * j->el);
        tg__few_strip s = {.p = &p, .c = g->c, .cs = (int64_t)cs, .o = g->o,
                           .ys = out_plane};
        j->arch->strip[j->f64](&s, ph, j->w, j->b,
                               j->y + (size_t)(n * g->o * out_plane + oy0 * g->ow) * j->el);
    }
}

/* layers with many taps go to conv_dense.c, except on AVX-512, where this
 * kernel ran ResNet's 7x7 stride-2 stem (3 -> 64 at 224) 5-7% faster
 * (bench_conv_resnet --only stem7x7s2 --path dense|old, batch 1 and 8,
 * one and two threads: the dense tile's 147 taps of weights, 37 KB, do
 * not stay in L1 beside the image's rows); on AVX2 neither was faster */
static bool few_over_dense(const tg__conv_geom *g)
{
    return !tg__conv_dense_wanted(g) || tg__cpu_isa() == TG_ISA_AVX512;
}

static bool is_few(const tg__conv_geom *g)
{
    return g->groups == 1 && g->c >= 1 && g->c <= TG__FEW_MAX_C && g->o >= 1 &&
           (g->sh > 1 || g->sw > 1) && g->kh * g->kw <= TG__DW_MAX_TAPS && g->oh > 0 &&
           g->ow > 0 && few_over_dense(g);
}

bool tg__conv_few_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                          const void *w, const void *b, const tg__conv_act *act, void *y,
                          tg_status *status)
{
    if (!is_few(g) || tg__conv_get_mode() != TG_CONV_AUTO || g->n == 0 ||
        !tg__few_arch_now())
        return false;
    few_job j = {.g = g, .dw = tg__dw_arch_now(), .arch = tg__few_arch_now(), .x = x,
                 .w = w, .b = b, .y = y, .el = tg_dtype_size(dt), .f64 = dt == TG_FLOAT64};
    int64_t threads = tg_get_num_threads();
    int64_t work = g->n * g->o * g->c * g->kh * g->kw * g->oh * g->ow;
    bool par = work >= FEW_PAR_WORK && threads > 1 && !tg_in_parallel_region();
    /* enough strips for every thread, of an even number of rows (the
     * AVX-512 tile's two) up to FEW_MAX_ROWS */
    int64_t want = par ? STRIPS_PER_THREAD * threads : 1;
    int64_t rows = (g->n * g->oh + want - 1) / want;
    rows = rows > FEW_MAX_ROWS ? FEW_MAX_ROWS : rows < 2 ? 2 : (rows + 1) / 2 * 2;
    j.strip = rows < g->oh ? rows : g->oh;
    j.n_strips = (g->oh + j.strip - 1) / j.strip;
    int64_t L = j.dw->lanes[j.f64], owv = (g->ow + L - 1) / L * L;
    j.p = (tg__dw_plane){.h = g->h, .w = g->w, .pl = g->pw, .oh = j.strip, .ow = g->ow,
                         .sh = g->sh, .sw = g->sw,
                         .rows = (j.strip - 1) * g->sh + (g->kh - 1) * g->dh + 1,
                         .ld = owv + (g->kw - 1) * g->dw / g->sw + 1,
                         .taps = (int)(g->kh * g->kw), .off = j.off, .act = (int)act->kind,
                         .lo = act->lo, .hi = act->hi};
    for (int64_t i = 0, t = 0; i < g->kh; i++)
        for (int64_t k = 0; k < g->kw; k++, t++) {
            int64_t col = k * g->dw;
            j.off[t] = (col % g->sw * j.p.rows + i * g->dh) * j.p.ld + col / g->sw;
        }
    atomic_init(&j.status, TG_OK);
    int64_t units = g->n * j.n_strips;
    if (par && units > 1)
        tg_parallel_for(units, 1, strips, &j);
    else
        strips(&j, 0, units);
    *status = (tg_status)atomic_load(&j.status);
    return true;
}
