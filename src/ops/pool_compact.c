/* Max pooling with compact argmax indices, made only by the level-2 pass
 * pool_indices (docs/PASSES.md) from max_pool2d and max_pool2d_grad when
 * nothing else reads the indices:
 *
 *   max_pool2d_compact(x) -> (y, offsets)   y as max_pool2d's; offsets
 *       (uint8) the argmax's place within its window, row-major from the
 *       window's padded corner (oh*sh - ph, ow*sw - pw);
 *   max_pool2d_compact_grad(dy, offsets) -> dx   as max_pool2d_grad.
 *
 * Why: max_pool2d's int64 indices are twice the pooled values' size (for
 * LeNet's first layer, 602 KB at batch 64, alive from the forward pass to
 * the end of the backward); one byte per window is an eighth of that.
 * Windows of at most 256 elements fit a byte; others keep int64 indices.
 *
 * Bitwise the same as the ops they replace, by construction: a chunk of
 * planes is pooled by the same kernel (kernels/cpu/pool.c: NaN wins, ties
 * keep the first element in window order) into a small int64 scratch,
 * which is then encoded; the gradient decodes a chunk's offsets back to
 * the same plane positions and scatters with max_pool2d_grad's kernel.
 * Planes are independent, so chunking changes nothing. Neither op is
 * differentiated (passes run after gradients were built): nondiff. */
#include "core/threadpool.h"
#include "ops/nn_util.h"
#include "ops/pool.h"

#include <stdatomic.h>
#include <stdlib.h>

typedef tg__pool_attrs pool_attrs;
typedef tg__pool_geom geom;

#define MAX_WINDOW 256           /* offsets in one byte */
#define CHUNK_INDICES 4096       /* int64 scratch per chunk: 32 KB */
/* elements touched: below, one thread (pooling streams a few elements per
 * ns; a parallel_for costs ~1-2 us) */
#define PAR_MIN ((int64_t)1 << 16)

/* ---- shared ------------------------------------------------------------------ */
static tg_status need_plane(const char *op, const tg_tensor *t, const char *what)
{
    char b[160];
    if (t->ndim != 4)
        return tg__error(TG_ERR_SHAPE, "%s: expected a 4-D %s [N, C, H, W], got %s", op,
                         what, tg_shape_str(t->ndim, t->shape, b, sizeof b));
    return TG_OK;
}

/* the window of a over an H x W plane, no more than MAX_WINDOW elements */
static tg_status window_geom(const char *op, const pool_attrs *a, int64_t H, int64_t W,
                             geom *g)
{
    tg_status s = tg__pool_read_geom(op, a, H, W, g);
    if (s == TG_OK && g->kh * g->kw > MAX_WINDOW)
        s = tg__error(TG_ERR_ARG, "%s: a %lldx%lld window has more than %d elements: its "
                      "offsets do not fit a byte", op, (long long)g->kh, (long long)g->kw,
                      MAX_WINDOW);
    return s;
}

typedef struct job {
    const geom *g;
    size_t es;          /* element size of x, y, dy, dx */
    tg_dtype dt;
    const char *src;    /* x (forward) or dy (gradient) */
    char *dst;          /* y or dx */
    uint8_t *off;       /* offsets: written (forward) or read */
    int64_t in_n, out_n; /* elements per plane: H * W, OH * OW */
    int64_t chunk;      /* planes per kernel call */
    atomic_int status;  /* TG_OK, TG_ERR_NOMEM, or TG_ERR_INDEX (bad offset) */
} job;

static void set_status(job *j, int s)
{
    int ok = TG_OK;
    atomic_compare_exchange_strong(&j->status, &ok, s);
}

typedef void chunk_fn(job *j, int64_t p0, int64_t np, int64_t *pos, const int64_t *corner);

/* runs fn(j, first plane, planes, scratch, corners) over [begin, end) in
 * chunks; corner[o] is the plane position of output o's window corner
 * (the same in every plane), so that the general path encodes and
 * decodes offsets over whole planes without a division per element */
static void chunks(job *j, int64_t begin, int64_t end, chunk_fn *fn)
{
    const geom *g = j->g;
    int64_t n = end - begin < j->chunk ? end - begin : j->chunk;
    int64_t *scratch = malloc((size_t)((n + 1) * j->out_n) * sizeof *scratch);
    if (!scratch) {
        set_status(j, TG_ERR_NOMEM);
        return;
    }
    int64_t *corner = scratch + n * j->out_n;
    for (int64_t oh = 0, o = 0; oh < g->OH; oh++)
        for (int64_t ow = 0; ow < g->OW; ow++, o++)
            corner[o] = (oh * g->sh - g->ph) * g->W + ow * g->sw - g->pw;
    for (int64_t p = begin; p < end; p += j->chunk)
        fn(j, p, end - p < j->chunk ? end - p : j->chunk, scratch, corner);
    free(scratch);
}

static void run(job *j, int64_t planes, tg_range_fn fn)
{
    j->chunk = CHUNK_INDICES / j->out_n;
    if (j->chunk < 1)
        j->chunk = 1;
    int64_t grain = planes * (j->in_n + j->out_n) < PAR_MIN ? planes : j->chunk;
    if (planes > 0)
        tg_parallel_for(planes, grain < 1 ? 1 : grain, fn, j);
}

/* ---- max_pool2d_compact ------------------------------------------------------------ */
static tg_status compact_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    const tg_tensor *x = c->in[0];
    geom g;
    tg_status s = need_plane(op, x, "input");
    if (s == TG_OK && (x->shape[2] < 1 || x->shape[3] < 1))
        s = tg__error(TG_ERR_SHAPE, "%s: empty %lldx%lld input plane", op,
                      (long long)x->shape[2], (long long)x->shape[3]);
    if (s == TG_OK)
        s = window_geom(op, c->attr, x->shape[2], x->shape[3], &g);
    if (s != TG_OK)
        return s;
    int64_t shape[4] = {x->shape[0], x->shape[1], g.OH, g.OW};
    s = tg_infer_set(c, 0, x->dtype, 4, shape);
    return s == TG_OK ? tg_infer_set(c, 1, TG_UINT8, 4, shape) : s;
}

/* 2 x 2, stride 2, no padding, every window inside the plane: the
 * kernels that write offsets themselves (kernels/cpu/pool.h) */
static bool is_2x2(const geom *g)
{
    return g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->ph == 0 &&
           g->pw == 0 && 2 * g->OH <= g->H && 2 * g->OW <= g->W;
}

/* one plane's positions q become window offsets. q - corner = dh * W +
 * dw with dw < kw: when kw <= W, dh counts the window's rows whose start
 * q - corner reaches (no division; the loop vectorizes) */
static void encode_plane(const geom *g, int64_t n, const int64_t *corner, const int64_t *q,
                         uint8_t *off)
{
    int64_t W = g->W;
    if (g->kw <= W) {
        for (int64_t o = 0; o < n; o++) {
            int64_t d = q[o] - corner[o], h = 0;
            for (int64_t t = 1; t < g->kh; t++)
                h += d >= t * W;
            off[o] = (uint8_t)(h * g->kw + d - h * W);
        }
        return;
    }
    for (int64_t oh = 0, o = 0; oh < g->OH; oh++) /* a window wider than the plane */
        for (int64_t ow = 0; ow < g->OW; ow++, o++)
            off[o] = (uint8_t)((q[o] / W - (oh * g->sh - g->ph)) * g->kw + q[o] % W -
                               (ow * g->sw - g->pw));
}

/* the kernel's plane positions in scratch become window offsets */
static void pool_chunk(job *j, int64_t p0, int64_t np, int64_t *pos, const int64_t *corner)
{
    const geom *g = j->g;
    if (is_2x2(g)) {
        const char *x = j->src + (size_t)(p0 * j->in_n) * j->es;
        char *y = j->dst + (size_t)(p0 * j->out_n) * j->es;
        if (j->dt == TG_FLOAT64)
            tg__maxpool2x2c_planes_f64((const double *)x, np, g->H, g->W, g->OH, g->OW,
                                       (double *)y, j->off + p0 * j->out_n);
        else
            tg__maxpool2x2c_planes_f32((const float *)x, np, g->H, g->W, g->OH, g->OW,
                                       (float *)y, j->off + p0 * j->out_n);
        return;
    }
    tg__pool_run(TG_POOL_MAX, g, j->dt, j->src + (size_t)(p0 * j->in_n) * j->es,
               j->dst + (size_t)(p0 * j->out_n) * j->es, pos, np, j->in_n, j->out_n);
    uint8_t *off = j->off + p0 * j->out_n;
    for (int64_t p = 0; p < np; p++)
        encode_plane(g, j->out_n, corner, pos + p * j->out_n, off + p * j->out_n);
}

static void pool_range(void *ctx, int64_t begin, int64_t end)
{
    chunks(ctx, begin, end, pool_chunk);
}

static tg_status compact_kernel(tg_op_ctx *c)
{
    tg_tensor *y = c->out[0], *off = c->out[1];
    geom g;
    tg_status s = window_geom(c->op->name, c->attr, c->in[0]->shape[2], c->in[0]->shape[3], &g);
    tg_tensor *x = s == TG_OK ? tg__nn_contig(c->in[0], y->dtype) : NULL;
    if (!x)
        return s == TG_OK ? TG_ERR_NOMEM : s;
    job j = {.g = &g, .es = tg_dtype_size(y->dtype), .dt = y->dtype, .src = tg__base(x),
             .dst = tg__base(y), .off = (uint8_t *)tg__base(off), .in_n = g.H * g.W,
             .out_n = g.OH * g.OW};
    atomic_init(&j.status, TG_OK);
    run(&j, y->shape[0] * y->shape[1], pool_range);
    tg_release(x);
    s = atomic_load(&j.status);
    return s == TG_OK ? TG_OK : tg__error(s, "%s: out of memory", c->op->name);
}

static const tg_attr_spec window_specs[] = {
    TG_SPEC_INT_ARRAY_N(pool_attrs, kernel, 2, NULL, TG_REQUIRED),
    TG_SPEC_INT_ARRAY_N(pool_attrs, stride, 2, NULL, TG_REQUIRED),
    TG_SPEC_INT_ARRAY_N(pool_attrs, padding, 2, NULL, TG_REQUIRED),
    TG_SPEC_BOOL(pool_attrs, ceil_mode, 0), {0}};
static const tg_attr_spec grad_specs[] = {
    TG_SPEC_INT_ARRAY_N(pool_attrs, kernel, 2, NULL, TG_REQUIRED),
    TG_SPEC_INT_ARRAY_N(pool_attrs, stride, 2, NULL, TG_REQUIRED),
    TG_SPEC_INT_ARRAY_N(pool_attrs, padding, 2, NULL, TG_REQUIRED),
    TG_SPEC_BOOL(pool_attrs, ceil_mode, 0),
    TG_SPEC_INT_ARRAY_N(pool_attrs, input_size, 2, NULL, TG_REQUIRED, TG_MIN(1)), {0}};
static const tg_arg_spec float_in[] = {{"x", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec compact_out[] = {
    {"y", TG_DTS_FLOAT}, {"offsets", TG_DT(TG_UINT8)}, {0}};
static const tg_arg_spec grad_in[] = {{"dy", TG_DTS_FLOAT}, {"offsets", TG_DT(TG_UINT8)}, {0}};
static const tg_arg_spec float_out[] = {{"dx", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_max_pool2d_compact = {
    .name = "max_pool2d_compact", .n_in = 1, .n_out = 2, .inputs = float_in,
    .outputs = compact_out, .attrs = {window_specs, sizeof(pool_attrs)},
    .flags = TG_OP_PURE, .nondiff = true, .infer = compact_infer,
    .kernel = {[TG_CPU] = compact_kernel}};

/* ---- max_pool2d_compact_grad -------------------------------------------------------- */
static tg_status grad_infer(tg_op_ctx *c)
{
    const char *op = c->op->name;
    const pool_attrs *a = c->attr;
    const tg_tensor *dy = c->in[0], *off = c->in[1];
    char b1[160], b2[160];
    geom g;
    tg_status s = need_plane(op, dy, "gradient");
    if (s == TG_OK && !tg__shape_eq(4, dy->shape, off->ndim, off->shape))
        s = tg__error(TG_ERR_SHAPE, "%s: offsets of shape %s do not match the gradient's %s",
                      op, tg_shape_str(off->ndim, off->shape, b1, sizeof b1),
                      tg_shape_str(dy->ndim, dy->shape, b2, sizeof b2));
    if (s == TG_OK)
        s = window_geom(op, a, a->input_size[0], a->input_size[1], &g);
    if (s == TG_OK && (g.OH != dy->shape[2] || g.OW != dy->shape[3]))
        s = tg__error(TG_ERR_SHAPE, "%s: pooling a %lldx%lld plane gives %lldx%lld, not the "
                      "gradient's %lldx%lld", op, (long long)g.H, (long long)g.W,
                      (long long)g.OH, (long long)g.OW, (long long)dy->shape[2],
                      (long long)dy->shape[3]);
    int64_t shape[4] = {dy->shape[0], dy->shape[1], a->input_size[0], a->input_size[1]};
    return s == TG_OK ? tg_infer_set(c, 0, dy->dtype, 4, shape) : s;
}

/* every offset of a plane names a position inside it (only a corrupted
 * one does not: the forward op writes them); needed only where windows
 * can leave the plane (padding, ceil_mode) */
static bool plane_offsets_inside(const geom *g, const uint8_t *off)
{
    if (g->ph == 0 && g->pw == 0 && (g->OH - 1) * g->sh + g->kh <= g->H &&
        (g->OW - 1) * g->sw + g->kw <= g->W)
        return true;
    for (int64_t oh = 0, o = 0; oh < g->OH; oh++)
        for (int64_t ow = 0; ow < g->OW; ow++, o++) {
            int64_t h = oh * g->sh - g->ph + off[o] / g->kw;
            int64_t w = ow * g->sw - g->pw + off[o] % g->kw;
            if (h < 0 || h >= g->H || w < 0 || w >= g->W)
                return false;
        }
    return true;
}

/* a chunk's offsets become plane positions again; max_pool2d_grad's
 * kernel scatters. An offset outside its window or the plane fails the
 * run. */
static void grad_chunk(job *j, int64_t p0, int64_t np, int64_t *pos, const int64_t *corner)
{
    const geom *g = j->g;
    if (is_2x2(g) && g->H == 2 * g->OH && g->W == 2 * g->OW) {
        const char *dy = j->src + (size_t)(p0 * j->out_n) * j->es;
        char *dx = j->dst + (size_t)(p0 * j->in_n) * j->es;
        const uint8_t *off = j->off + p0 * j->out_n;
        bool ok = j->dt == TG_FLOAT64
                      ? tg__maxpool2x2c_grad_planes_f64((const double *)dy, off, np, g->OH,
                                                        g->OW, (double *)dx)
                      : tg__maxpool2x2c_grad_planes_f32((const float *)dy, off, np, g->OH,
                                                        g->OW, (float *)dx);
        if (!ok)
            set_status(j, TG_ERR_INDEX);
        return;
    }
    int64_t kk = g->kh * g->kw, rel[MAX_WINDOW]; /* an offset's place from the corner */
    for (int64_t k = 0; k < kk; k++)
        rel[k] = k / g->kw * g->W + k % g->kw;
    for (int64_t p = 0; p < np; p++) {
        const uint8_t *off = j->off + (p0 + p) * j->out_n;
        int64_t *q = pos + p * j->out_n;
        uint8_t worst = 0;
        for (int64_t o = 0; o < j->out_n; o++)
            worst = off[o] > worst ? off[o] : worst;
        if (worst >= kk || !plane_offsets_inside(g, off)) {
            set_status(j, TG_ERR_INDEX);
            return;
        }
        for (int64_t o = 0; o < j->out_n; o++)
            q[o] = corner[o] + rel[off[o]];
    }
    tg__pool_run(TG_POOL_MAX_GRAD, g, j->dt, j->src + (size_t)(p0 * j->out_n) * j->es,
               j->dst + (size_t)(p0 * j->in_n) * j->es, pos, np, j->out_n, j->in_n);
}

static void grad_range(void *ctx, int64_t begin, int64_t end)
{
    chunks(ctx, begin, end, grad_chunk);
}

static tg_status grad_kernel(tg_op_ctx *c)
{
    tg_tensor *dx = c->out[0];
    const pool_attrs *a = c->attr;
    geom g;
    tg_status s = window_geom(c->op->name, a, a->input_size[0], a->input_size[1], &g);
    tg_tensor *dy = s == TG_OK ? tg__nn_contig(c->in[0], dx->dtype) : NULL;
    tg_tensor *off = dy ? tg__nn_contig(c->in[1], TG_UINT8) : NULL;
    if (!off) {
        tg_release(dy);
        return s == TG_OK ? TG_ERR_NOMEM : s;
    }
    job j = {.g = &g, .es = tg_dtype_size(dx->dtype), .dt = dx->dtype, .src = tg__base(dy),
             .dst = tg__base(dx), .off = (uint8_t *)tg__base(off), .in_n = g.H * g.W,
             .out_n = g.OH * g.OW};
    atomic_init(&j.status, TG_OK);
    run(&j, dx->shape[0] * dx->shape[1], grad_range);
    tg_release(dy);
    tg_release(off);
    s = atomic_load(&j.status);
    if (s == TG_ERR_INDEX)
        return tg__error(s, "%s: an offset lies outside its %lldx%lld window or the "
                         "%lldx%lld plane", c->op->name, (long long)g.kh, (long long)g.kw,
                         (long long)g.H, (long long)g.W);
    return s == TG_OK ? TG_OK : tg__error(s, "%s: out of memory", c->op->name);
}

const tg_op_def tg_op_max_pool2d_compact_grad = {
    .name = "max_pool2d_compact_grad", .n_in = 2, .n_out = 1, .inputs = grad_in,
    .outputs = float_out, .attrs = {grad_specs, sizeof(pool_attrs)},
    .flags = TG_OP_PURE, .nondiff = true, .infer = grad_infer,
    .kernel = {[TG_CPU] = grad_kernel}};

const tg_op_def *const tg_ops_pool_compact[] = {
    &tg_op_max_pool2d_compact, &tg_op_max_pool2d_compact_grad, NULL};
