/* conv2d, relu and 2 x 2 max pooling in one call (conv.h:
 * tg__conv2d_relu_pool): the batch-lane direct convolution pools as it
 * stores (conv_pool_arch.h); any other path computes the whole output
 * into scratch and pools it after, as the separate ops would. Either way
 * the bits of conv2d; relu; max_pool2d_compact. */
#include "core/threadpool.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_dense.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_pw.h"
#include "kernels/cpu/pool.h"
#include "kernels/cpu/scratch.h"

/* elements a thread pools at least (a parallel_for costs ~1-2 us) */
#define POOL_GRAIN ((int64_t)1 << 15)

typedef struct pool_job {
    tg_dtype dt;
    const char *x;
    char *y;
    uint8_t *off;
    int64_t h, w, oh, ow;
} pool_job;

static void pool_planes(void *ctx, int64_t begin, int64_t end)
{
    const pool_job *j = ctx;
    size_t z = tg_dtype_size(j->dt);
    const char *x = j->x + (size_t)(begin * j->h * j->w) * z;
    char *y = j->y + (size_t)(begin * j->oh * j->ow) * z;
    uint8_t *off = j->off + begin * j->oh * j->ow;
    if (j->dt == TG_FLOAT64)
        tg__maxpool2x2c_planes_f64((const double *)x, end - begin, j->h, j->w, j->oh, j->ow,
                                   (double *)y, off);
    else
        tg__maxpool2x2c_planes_f32((const float *)x, end - begin, j->h, j->w, j->oh, j->ow,
                                   (float *)y, off);
}

/* would tg__conv2d_forward_act reach the direct kernels for g? (the
 * pointwise, depthwise and few-channel paths need a 1x1 kernel, groups
 * above 1 or a stride; the dense one says so itself) */
static bool direct_path(const tg__conv_geom *g)
{
    return tg__conv_pads_bounded(g) && g->groups == 1 && g->sh == 1 && g->sw == 1 && !tg__conv_pw_wanted(g) &&
           !tg__conv_dense_wanted(g);
}

tg_status tg__conv2d_relu_pool(tg_dtype dt, const tg__conv_geom *g, const void *x,
                               const void *w, const void *b, void *y, uint8_t *off)
{
    tg_status st;
    if (direct_path(g) && tg__conv_direct_forward_pool(dt, g, x, w, b, true, y, off, &st))
        return st;
    size_t z = tg_dtype_size(dt);
    int64_t planes = g->n * g->o;
    char *full = tg__scratch(TG_SCRATCH_KERNEL2, (size_t)(planes * g->oh * g->ow) * z);
    if (!full)
        return TG_ERR_NOMEM;
    st = tg__conv2d_forward_relu(dt, g, x, w, b, true, full);
    if (st != TG_OK)
        return st;
    pool_job j = {.dt = dt, .x = full, .y = y, .off = off, .h = g->oh, .w = g->ow,
                  .oh = g->oh / 2, .ow = g->ow / 2};
    int64_t grain = POOL_GRAIN / (g->oh * g->ow) + 1;
    tg_parallel_for(planes, grain, pool_planes, &j);
    return TG_OK;
}
