/* The weight gradient as one GEMM per chunk of images (conv_wgrad.h). */
#include "kernels/cpu/conv_wgrad.h"

#include "core/threadpool.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/im2col.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* from this many weights (o c kh kw) on: the direct kernels' per-thread
 * accumulators (a vector's worth of lanes per weight, 4 MB and more in
 * float32 at 16 lanes) no longer stay in cache. On ResNet's 3x3 layers
 * (AVX-512, 1 and 2 threads, batch 1 and 8) the direct kernels took
 * 3.1-3.3 ms at 64 channels against 4.7-5.8 here, and at 128-512
 * channels 5.6-430 ms against 2.6-34 here */
#define MIN_WEIGHTS ((int64_t)1 << 16)

static _Atomic int64_t chunk_bytes = (int64_t)8 << 20;

void tg__conv_wgrad_set_chunk_bytes(int64_t bytes) { atomic_store(&chunk_bytes, bytes); }

bool tg__conv_wgrad_gemm_wanted(const tg__conv_geom *g)
{
    return g->groups == 1 && g->o * g->c * g->kh * g->kw >= MIN_WEIGHTS &&
           g->oh * g->ow > 0 && tg__conv_get_mode() == TG_CONV_AUTO;
}

typedef struct wgrad_job {
    const tg__conv_geom *g;
    const char *x, *dy;
    char *cols, *dyc; /* [kg][m P] and [o][m P] */
    size_t el;
    int64_t kg, p, n0, m; /* patch rows, positions per image; the chunk's images */
} wgrad_job;

/* image n0 + i of the chunk: its patches into columns i P .. (i + 1) P of
 * cols, its output gradient into the same columns of dyc */
static void gather_images(void *ctx, int64_t i0, int64_t i1)
{
    wgrad_job *j = ctx;
    const tg__conv_geom *g = j->g;
    const int64_t P = j->p, row = j->m * P;
    for (int64_t i = i0; i < i1; i++) {
        int64_t n = j->n0 + i;
        const char *img = j->x + (size_t)(n * g->c * g->h * g->w) * j->el;
        char *cols = j->cols + (size_t)(i * P) * j->el;
        if (j->el == sizeof(float))
            tg__im2col_f32((const float *)img, g->c, g, (float *)cols, row);
        else
            tg__im2col_f64((const double *)img, g->c, g, (double *)cols, row);
        const char *d = j->dy + (size_t)(n * g->o * P) * j->el;
        for (int64_t o = 0; o < g->o; o++)
            memcpy(j->dyc + (size_t)(o * row + i * P) * j->el, d + (size_t)(o * P) * j->el,
                   (size_t)P * j->el);
    }
}

tg_status tg__conv_wgrad_gemm(tg_dtype dt, const tg__conv_geom *g, const void *dy,
                              const void *x, void *dw)
{
    if (g->groups != 1 || (dt != TG_FLOAT32 && dt != TG_FLOAT64))
        return TG_ERR_ARG;
    wgrad_job j = {.g = g, .x = x, .dy = dy, .el = tg_dtype_size(dt),
                   .kg = g->c * g->kh * g->kw, .p = g->oh * g->ow};
    int64_t per_image = (j.kg + g->o) * j.p * (int64_t)j.el;
    int64_t m = atomic_load(&chunk_bytes) / (per_image ? per_image : 1);
    m = m < 1 ? 1 : m > g->n ? g->n : m;
    j.cols = malloc((size_t)(j.kg * m * j.p) * j.el);
    j.dyc = malloc((size_t)(g->o * m * j.p) * j.el);
    tg_status st = j.cols && j.dyc ? TG_OK : TG_ERR_NOMEM;
    if (st == TG_OK && g->n == 0)
        memset(dw, 0, (size_t)(g->o * j.kg) * j.el);
    for (j.n0 = 0; st == TG_OK && j.n0 < g->n; j.n0 += m) {
        j.m = g->n - j.n0 < m ? g->n - j.n0 : m;
        tg_parallel_for(j.m, 1, gather_images, &j);
        int64_t k = j.m * j.p;
        if (dt == TG_FLOAT32)
            st = tg__sgemm(false, true, g->o, j.kg, k, 1.0f, (const float *)j.dyc, k,
                           (const float *)j.cols, k, j.n0 ? 1.0f : 0.0f, dw, j.kg);
        else
            st = tg__dgemm(false, true, g->o, j.kg, k, 1.0, (const double *)j.dyc, k,
                           (const double *)j.cols, k, j.n0 ? 1.0 : 0.0, dw, j.kg);
    }
    free(j.cols);
    free(j.dyc);
    return st;
}
