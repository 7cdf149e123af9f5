/* Pointwise convolution forward as panel GEMMs over NCHW (conv_pw.h). */
#include "kernels/cpu/conv_pw.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_dw_api.h"
#include "kernels/cpu/gemm.h"

#include <stdatomic.h>

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
    const char *x, *w, *b, *res; /* res: a shortcut added after the bias, or NULL */
    char *y;
    const tg__conv_act *act;
    bool f64;
    int64_t hw, panel, n_panels, oblock, n_oblocks;
    atomic_int status;
} pw_job;

/* rows [o0, o1) of a panel of len columns (row stride hw) at y, whose
 * shortcut rows are at res: + bias, then + res and relu, or the
 * activation, by the instruction set's vector pass */
static void epilogue(const pw_job *j, char *y, const char *res, int64_t o0, int64_t o1,
                     int64_t len)
{
    size_t el = j->f64 ? sizeof(double) : sizeof(float);
    const tg__dw_arch *arch = tg__dw_arch_now();
    if (!j->b && !res && j->act->kind == TG_CONV_ACT_NONE)
        return;
    for (int64_t o = o0; o < o1; o++) {
        size_t at = (size_t)((o - o0) * j->hw) * el;
        const char *bias = j->b ? j->b + (size_t)o * el : NULL;
        if (res)
            arch->row_res[j->f64](y + at, len, bias, res + at,
                                  j->act->kind == TG_CONV_ACT_RELU);
        else
            arch->row_act[j->f64](y + at, len, bias, (int)j->act->kind, j->act->lo,
                                  j->act->hi);
    }
}

static tg_status unit(const pw_job *j, int64_t u)
{
    const tg__conv_geom *g = j->g;
    int64_t per_image = j->n_panels * j->n_oblocks;
    int64_t n = u / per_image, rest = u % per_image;
    int64_t p0 = rest / j->n_oblocks * j->panel, ob = rest % j->n_oblocks;
    int64_t len = j->hw - p0 < j->panel ? j->hw - p0 : j->panel;
    int64_t o0 = ob * j->oblock, o1 = o0 + j->oblock < g->o ? o0 + j->oblock : g->o;
    size_t el = j->f64 ? sizeof(double) : sizeof(float);
    const char *xs = j->x + (size_t)(n * g->c * j->hw + p0) * el;
    const char *ws = j->w + (size_t)(o0 * g->c) * el;
    size_t at = (size_t)((n * g->o + o0) * j->hw + p0) * el;
    char *ys = j->y + at;
    tg_status s = j->f64 ? tg__dgemm(false, false, o1 - o0, len, g->c, 1, (const double *)ws,
                                     g->c, (const double *)xs, j->hw, 0, (double *)ys, j->hw)
                         : tg__sgemm(false, false, o1 - o0, len, g->c, 1, (const float *)ws,
                                     g->c, (const float *)xs, j->hw, 0, (float *)ys, j->hw);
    if (s == TG_OK)
        epilogue(j, ys, j->res ? j->res + at : NULL, o0, o1, len);
    return s;
}

static void units(void *ctx, int64_t begin, int64_t end)
{
    pw_job *j = ctx;
    for (int64_t u = begin; u < end; u++) {
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
    j->panel = (j->hw + np - 1) / np;
    j->n_panels = (j->hw + j->panel - 1) / j->panel;
    int64_t nb = (want + g->n * j->n_panels - 1) / (g->n * j->n_panels);
    int64_t blocks = (g->o + 15) / 16; /* of at least 16 channels */
    nb = nb > blocks ? blocks : nb < 1 ? 1 : nb;
    j->oblock = (g->o + nb - 1) / nb;
    j->n_oblocks = (g->o + j->oblock - 1) / j->oblock;
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
    pw_job j = {.g = g, .x = x, .w = w, .b = b, .res = res, .y = y, .act = act,
                .f64 = dt == TG_FLOAT64, .hw = g->h * g->w};
    int64_t work = g->n * g->o * g->c * j.hw, threads = tg_get_num_threads();
    bool par = work >= PW_PAR_WORK && threads > 1 && !tg_in_parallel_region();
    plan(&j, par ? threads : 1);
    atomic_init(&j.status, TG_OK);
    int64_t n_units = g->n * j.n_panels * j.n_oblocks;
    if (par && n_units > 1)
        tg_parallel_for(n_units, 1, units, &j);
    else
        units(&j, 0, n_units);
    *status = (tg_status)atomic_load(&j.status);
    return true;
}
