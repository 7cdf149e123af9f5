/* Direct stride-1 convolution (see conv_direct.h): planning (layout and
 * tile by estimated cost), the padded and transposed copies the kernels
 * read, and the split over the pool.
 *
 * Cost model, in vector multiply-adds: a tile step costs its accumulator
 * count (loads overlap), padding and rounding included; a transposed
 * element costs TRANSPOSE_COST. Work is cut into units, images (planes)
 * or blocks of L images (lanes), claimed by the threads as they come;
 * weight gradients sum a fixed number of parts, each over a fixed range
 * of units, in order: results do not depend on the threads. */
#include "kernels/cpu/conv_direct.h"
#include "core/size_math.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_arch_api.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/scratch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* vector multiply-adds one element of a layout change costs */
#define TRANSPOSE_COST 0.6
/* plane vectors read the image at every column offset, across cache
 * lines: measured at ~1.1 multiply-adds a cycle against ~1.9 for the
 * aligned batch-lane tiles (Zen 5, AVX-512) */
#define PLANES_FACTOR 1.7
/* products with fewer multiply-adds stay on one thread */
#define PAR_WORK ((int64_t)1 << 18)
/* weight-gradient parts, and the memory their accumulators may take */
#define WGT_PARTS 8
#define WGT_ACC_LIMIT ((int64_t)64 << 20)

const tg__conv_arch *tg__conv_arch_now(void)
{
#if defined(__x86_64__)
    switch (tg__cpu_isa()) {
    case TG_ISA_AVX512: return &tg__conv_arch_avx512;
    case TG_ISA_AVX2: return &tg__conv_arch_avx2;
    default: break;
    }
#endif
    return &tg__conv_arch_generic;
}

/* ---- the mode ---------------------------------------------------------------- */
static tg__conv_mode mode;
static pthread_once_t mode_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *e = getenv("TG_CONV");
    if (!e)
        return;
    if (strcmp(e, "gemm") == 0)
        mode = TG_CONV_GEMM;
    else if (strcmp(e, "lanes") == 0)
        mode = TG_CONV_LANES;
    else if (strcmp(e, "planes") == 0)
        mode = TG_CONV_PLANES;
}

void tg__conv_set_mode(tg__conv_mode m)
{
    pthread_once(&mode_once, read_env);
    mode = m;
}

tg__conv_mode tg__conv_get_mode(void)
{
    pthread_once(&mode_once, read_env);
    return mode;
}

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
static int64_t cdiv(int64_t x, int64_t y) { return (x + y - 1) / y; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

typedef enum family { FAM_LANES, FAM_PLANES } family;

/* zeroes what the image copy into c planes of ih x iw (elements of el
 * bytes) leaves: the rows above and below the h x w interior at (pt, pl),
 * and the columns either side of it */
static void zero_borders(char *buf, int64_t c, int64_t ih, int64_t iw, int64_t el,
                         int64_t pt, int64_t h, int64_t pl, int64_t w)
{
    bool sides = pl > 0 || iw - pl - w > 0; /* else no call per row */
    for (int64_t ch = 0; ch < c; ch++) {
        char *pl0 = buf + ch * ih * iw * el;
        memset(pl0, 0, (size_t)(pt * iw * el));
        memset(pl0 + (pt + h) * iw * el, 0, (size_t)((ih - pt - h) * iw * el));
        for (int64_t r = pt; sides && r < pt + h; r++) {
            memset(pl0 + r * iw * el, 0, (size_t)(pl * el));
            memset(pl0 + (r * iw + pl + w) * el, 0, (size_t)((iw - pl - w) * el));
        }
    }
}

/* ---- forward-like products ------------------------------------------------------
 * out[n][g][o] (oh x ow) = bias + sum over cin channels, kh x kw taps of
 * w * in[n][g][c] (h x w, seen through pt / pl rows / columns of zero
 * padding): the forward product, and the input gradient. */
typedef struct fplan {
    tg_dtype dt;
    int64_t z; /* element size */
    int64_t n, groups, cin, cout, h, w, oh, ow, kh, kw, dh, dw, pt, pl;
    const char *in, *wpk, *bias; /* wpk: [g][cin][kh][kw][opad]; bias [g][opad] */
    char *out;
    bool relu; /* forward: relu on the outputs as they are stored */
    /* forward: 2 x 2 max pooling as they are stored (batch lanes only):
     * the pooled planes and their offsets, or NULL (out is then unused) */
    char *pooled;
    uint8_t *off;
    int64_t opad;
    family fam;
    int tile;
    const tg__conv_kern *kn;
    tg__dconv d;
    /* lanes: each output row is cut into segments, segment s from column
     * seg_x0[s] by tile seg_tile[s] (one channel block size, widths as
     * the taps at the borders make cheapest) */
    int64_t n_seg, *seg_x0;
    int *seg_tile;
    int64_t units;
    atomic_llong next;
    atomic_int status;
} fplan;

/* input rows of output row oy that are not padding */
static int64_t valid_rows(const fplan *p, int64_t oy)
{
    int64_t n = 0;
    for (int64_t i = 0; i < p->kh; i++) {
        int64_t r = oy + i * p->dh;
        n += r >= p->pt && r < p->pt + p->h;
    }
    return n;
}

/* the taps [*jlo, *jhi) that read some real column for output columns
 * x0 .. x0 + nt - 1 */
static void tap_cols(const fplan *p, int64_t x0, int64_t nt, int64_t *jlo, int64_t *jhi)
{
    int64_t col0 = p->pl, col1 = p->pl + p->w, xl = x0 + nt - 1;
    int64_t lo = col0 - xl <= 0 ? 0 : cdiv(col0 - xl, p->dw);
    int64_t hi = col1 - 1 - x0 < 0 ? 0 : (col1 - 1 - x0) / p->dw + 1;
    *jlo = min64(lo, p->kw);
    *jhi = max64(min64(hi, p->kw), *jlo);
}

/* what a tile step (one tap, one input channel) costs: its multiply-adds,
 * but at least 8 (fewer accumulators than FMA latency x units leave the
 * units idle), plus the loop */
static double step_cost(tg__tile t) { return (double)max64(t.a * t.b, 8) + 2; }

/* the cheapest cut of an output row into segments of the tiles with a
 * output channels: cost per unit of (valid rows x input channels); fills
 * the segments when x0s is not NULL */
static double cut_row(const fplan *p, int a, int64_t *x0s, int *tiles, int64_t *n_seg)
{
    const tg__conv_kern *kn = p->kn;
    int64_t ow = p->ow;
    double *best = malloc(sizeof(double) * (size_t)(ow + 1));
    int *pick = malloc(sizeof(int) * (size_t)(ow + 1));
    if (!best || !pick) {
        free(best);
        free(pick);
        return -1;
    }
    best[ow] = 0;
    for (int64_t x = ow - 1; x >= 0; x--) {
        best[x] = -1;
        for (int k = 0; k < kn->n_fwd; k++) {
            tg__tile t = kn->fwd[k];
            if (t.a != a)
                continue;
            int64_t jlo, jhi;
            tap_cols(p, x, min64(t.b, ow - x), &jlo, &jhi);
            double c = (double)(jhi - jlo) * step_cost(t) + best[min64(x + t.b, ow)];
            if (best[x] < 0 || c < best[x]) {
                best[x] = c;
                pick[x] = k;
            }
        }
    }
    double total = best[0];
    int64_t n = 0;
    for (int64_t x = 0; x0s && x < ow; x += kn->fwd[pick[x]].b, n++) {
        x0s[n] = x;
        tiles[n] = pick[x];
    }
    if (n_seg)
        *n_seg = n;
    free(best);
    free(pick);
    return total;
}

static double cost_lanes_fwd(const fplan *p, int a)
{
    int64_t L = p->kn->lanes, rows = 0;
    for (int64_t oy = 0; oy < p->oh; oy++)
        rows += valid_rows(p, oy);
    double row = cut_row(p, a, NULL, NULL, NULL);
    if (row < 0)
        return -1;
    double fma = (double)rows * row * (double)(p->cin * cdiv(p->cout, a));
    double moved = (double)(p->cin * p->h * p->w + p->cout * p->oh * p->ow) * TRANSPOSE_COST;
    return (double)cdiv(p->n, L) * (double)p->groups * fma + (double)(p->n * p->groups) * moved;
}

static double cost_planes_fwd(const fplan *p, tg__tile t)
{
    int64_t L = p->kn->lanes, nch = cdiv(p->ow, L), slots = p->oh * nch;
    double steps = 0;
    for (int64_t s0 = 0; s0 < slots; s0 += t.b) { /* rows with a real input row */
        int64_t r_lo = s0 / nch, r_hi = min64(s0 + t.b, slots) / nch, n = 0;
        for (int64_t i = 0; i < p->kh; i++) {
            bool any = false;
            for (int64_t oy = r_lo; oy <= r_hi && oy < p->oh; oy++)
                any |= oy + i * p->dh >= p->pt && oy + i * p->dh < p->pt + p->h;
            n += any;
        }
        steps += (double)(n * p->kw);
    }
    double fma = steps * (double)(p->cin * cdiv(p->cout, t.a) * (t.a * t.b + 2));
    return (double)(p->n * p->groups) * fma * PLANES_FACTOR;
}

/* picks the family and tile of the lowest cost (the mode may force the
 * family) */
/* the batch lanes' padded input of one unit (L images side by side, the
 * lanes of missing images too) past this many bytes: the planes instead,
 * unless forced. A 1 x 1 kernel over an 11 x 2^21 plane (dilation and
 * padding 2^20) would otherwise ask for 16 lanes of it, 24 GB. */
#define LANES_MAX_BYTES ((int64_t)1 << 28)

static bool lanes_too_large(const fplan *p)
{
    int64_t ih = p->oh + (p->kh - 1) * p->dh;
    int64_t iw = max64(p->ow + 64 + (p->kw - 1) * p->dw, p->pl + p->w);
    return tg__size_mul_exceeds(ih, iw, LANES_MAX_BYTES) ||
           tg__size_mul_exceeds(p->cin * p->z * p->kn->lanes, ih * iw, LANES_MAX_BYTES);
}

static void choose_fwd(fplan *p, tg__conv_mode md)
{
    double best = -1;
    const tg__conv_kern *kn = p->kn;
    bool lanes_ok = md == TG_CONV_LANES || !lanes_too_large(p);
    for (int f = 0; f < 2; f++) {
        if ((f == FAM_LANES && (md == TG_CONV_PLANES || !lanes_ok)) ||
            (f == FAM_PLANES && md == TG_CONV_LANES))
            continue;
        int nt = f == FAM_LANES ? kn->n_fwd : kn->n_pvf;
        for (int k = 0; k < nt; k++) {
            bool first = true; /* lanes: each channel block size once */
            for (int e = 0; f == FAM_LANES && e < k; e++)
                first &= kn->fwd[e].a != kn->fwd[k].a;
            if (!first)
                continue;
            double c = f == FAM_LANES ? cost_lanes_fwd(p, kn->fwd[k].a)
                                      : cost_planes_fwd(p, kn->pvf[k]);
            if (c >= 0 && (best < 0 || c < best)) {
                best = c;
                p->fam = (family)f;
                p->tile = k;
            }
        }
    }
}

/* the lanes' row segments for the chosen channel block; false when out
 * of memory */
static bool plan_segments(fplan *p)
{
    if (p->fam != FAM_LANES)
        return true;
    p->seg_x0 = malloc(sizeof(int64_t) * (size_t)p->ow);
    p->seg_tile = malloc(sizeof(int) * (size_t)p->ow);
    return p->seg_x0 && p->seg_tile &&
           cut_row(p, p->kn->fwd[p->tile].a, p->seg_x0, p->seg_tile, &p->n_seg) >= 0;
}

static void set_dims(fplan *p)
{
    int64_t L = p->kn->lanes;
    tg__dconv *d = &p->d;
    *d = (tg__dconv){.cin = p->cin, .cout = p->cout, .oh = p->oh, .ow = p->ow,
                     .kh = p->kh, .kw = p->kw, .dh = p->dh, .dw = p->dw,
                     .row0 = p->pt, .row1 = p->pt + p->h, .col0 = p->pl,
                     .col1 = p->pl + p->w, .relu = p->relu};
    d->ih = p->oh + (p->kh - 1) * p->dh;
    /* plane vectors read whole vectors from every row's start; batch
     * lanes only the columns their segments' tiles cover */
    int64_t cols = p->fam == FAM_LANES ? p->ow : round_up(p->ow, L);
    for (int64_t s = 0; p->fam == FAM_LANES && s < p->n_seg; s++)
        cols = max64(cols, p->seg_x0[s] + p->kn->fwd[p->seg_tile[s]].b);
    d->iw = max64(cols + (p->kw - 1) * p->dw, p->pl + p->w);
}

static void unit_lanes_fwd(fplan *p, int64_t nb)
{
    const tg__conv_kern *kn = p->kn;
    const tg__dconv *d = &p->d;
    int64_t L = kn->lanes, z = p->z;
    int64_t in_img = p->groups * p->cin * p->h * p->w;
    int64_t out_img = p->groups * p->cout * p->oh * p->ow;
    int64_t plane = d->ih * d->iw * L, nimg = min64(L, p->n - nb * L);
    char *xin = tg__scratch(TG_SCRATCH_KERNEL0, (size_t)(p->cin * plane * z));
    char *yb = tg__scratch(TG_SCRATCH_KERNEL1, (size_t)(p->cout * p->oh * p->ow * L * z));
    int64_t pooled_plane = (p->oh / 2) * (p->ow / 2);
    char *kb = p->pooled ? tg__scratch(TG_SCRATCH_KERNEL2,
                                       (size_t)(p->cout * pooled_plane * L * z))
                         : NULL;
    if (!xin || !yb || (p->pooled && !kb)) {
        atomic_store(&p->status, TG_ERR_NOMEM);
        return;
    }
    zero_borders(xin, p->cin, d->ih, d->iw, L * z, p->pt, p->h, p->pl, p->w);
    for (int64_t g = 0; g < p->groups; g++) {
        kn->to_bl(p->in + (nb * L * in_img + g * p->cin * p->h * p->w) * z, in_img, nimg,
                  p->cin, p->h, p->w, xin, plane, d->iw, p->pt, p->pl);
        const char *wg = p->wpk + g * p->cin * p->kh * p->kw * p->opad * z;
        const char *bg = p->bias ? p->bias + g * p->opad * z : NULL;
        for (int64_t oy = 0; oy < p->oh; oy++)
            for (int64_t s = 0; s < p->n_seg; s++) {
                int k = p->seg_tile[s];
                int64_t x0 = p->seg_x0[s], jlo, jhi;
                tap_cols(p, x0, min64(kn->fwd[k].b, p->ow - x0), &jlo, &jhi);
                kn->bl_fwd[k](d, xin, wg, p->opad, bg, yb, oy, x0, jlo, jhi);
            }
        if (p->pooled) {
            int64_t pimg = p->groups * p->cout * pooled_plane;
            int64_t at = nb * L * pimg + g * p->cout * pooled_plane;
            kn->from_bl_pool(yb, nimg, p->cout, p->oh, p->ow, p->relu, kb,
                             p->pooled + at * z, pimg, p->off + at, pimg);
            continue;
        }
        kn->from_bl(yb, nimg, p->cout, p->oh, p->ow,
                    p->out + (nb * L * out_img + g * p->cout * p->oh * p->ow) * z, out_img,
                    p->relu);
    }
}

static void unit_planes_fwd(fplan *p, int64_t img)
{
    const tg__conv_kern *kn = p->kn;
    const tg__dconv *d = &p->d;
    int64_t L = kn->lanes, z = p->z, nch = cdiv(p->ow, L), slots = p->oh * nch;
    tg__tile t = kn->pvf[p->tile];
    int64_t plane = d->ih * d->iw;
    char *xin = tg__scratch(TG_SCRATCH_KERNEL0, (size_t)(p->cin * plane * z));
    if (!xin) {
        atomic_store(&p->status, TG_ERR_NOMEM);
        return;
    }
    int64_t row[32], x0[32];
    for (int64_t g = 0; g < p->groups; g++) {
        const char *src = p->in + ((img * p->groups + g) * p->cin * p->h * p->w) * z;
        zero_borders(xin, p->cin, d->ih, d->iw, z, p->pt, p->h, p->pl, p->w);
        for (int64_t c = 0; c < p->cin; c++)
            for (int64_t r = 0; r < p->h; r++)
                memcpy(xin + ((c * d->ih + p->pt + r) * d->iw + p->pl) * z,
                       src + ((c * p->h + r) * p->w) * z, (size_t)(p->w * z));
        const char *wg = p->wpk + g * p->cin * p->kh * p->kw * p->opad * z;
        const char *bg = p->bias ? p->bias + g * p->opad * z : NULL;
        char *dst = p->out + ((img * p->groups + g) * p->cout * p->oh * p->ow) * z;
        for (int64_t s0 = 0; s0 < slots; s0 += t.b) {
            for (int s = 0; s < t.b; s++) { /* past the end: the last again */
                int64_t k = min64(s0 + s, slots - 1);
                row[s] = k / nch;
                x0[s] = k % nch * L;
            }
            for (int64_t o0 = 0; o0 < p->cout; o0 += t.a)
                kn->pv_fwd[p->tile](d, xin, wg, p->opad, bg, dst, row, x0, o0);
        }
    }
}

static void fwd_body(void *ctx, int64_t begin, int64_t end)
{
    fplan *p = ctx;
    (void)begin, (void)end;
    for (int64_t u; (u = atomic_fetch_add(&p->next, 1)) < p->units;) {
        if (p->fam == FAM_LANES)
            unit_lanes_fwd(p, u);
        else
            unit_planes_fwd(p, u);
    }
}

static bool use_threads(int64_t work, int64_t units)
{
    return work >= PAR_WORK && units > 1 && !tg_in_parallel_region() &&
           tg_get_num_threads() > 1;
}

/* runs the plan; weights (and bias) already packed with p->opad */
static tg_status run_fwd(fplan *p, int64_t macs)
{
    set_dims(p);
    p->units = p->fam == FAM_LANES ? cdiv(p->n, p->kn->lanes) : p->n;
    atomic_init(&p->next, 0);
    atomic_init(&p->status, TG_OK);
    if (use_threads(macs, p->units)) {
        int64_t threads = min64(tg_get_num_threads(), p->units);
        tg_parallel_for(threads, 1, fwd_body, p);
    } else {
        fwd_body(p, 0, 1);
    }
    return (tg_status)atomic_load(&p->status);
}

/* the opad the chosen tile needs, and the packed weights' and bias's size */
static int64_t tile_opad(const fplan *p)
{
    int a = p->fam == FAM_LANES ? p->kn->fwd[p->tile].a : p->kn->pvf[p->tile].a;
    return round_up(p->cout, a);
}

#define PACK(T, SUF)                                                            \
    /* wpk[g][c][i][j][o] = w[g][o][c][i][j], or for the input gradient        \
     * (flip) w[g][c][o][kh-1-i][kw-1-j] with w's channels swapped */          \
    static void pack_##SUF(const fplan *p, const T *w, const T *b, bool flip,   \
                           T *wpk, T *bpk)                                      \
    {                                                                           \
        int64_t kk = p->kh * p->kw, opad = p->opad;                             \
        memset(wpk, 0, (size_t)(p->groups * p->cin * kk * opad) * sizeof(T));   \
        for (int64_t g = 0; g < p->groups; g++)                                 \
            for (int64_t o = 0; o < p->cout; o++)                               \
                for (int64_t c = 0; c < p->cin; c++)                            \
                    for (int64_t t = 0; t < kk; t++) {                          \
                        T v = flip ? w[((g * p->cin + c) * p->cout + o) * kk + kk - 1 - t] \
                                   : w[((g * p->cout + o) * p->cin + c) * kk + t]; \
                        wpk[((g * p->cin + c) * kk + t) * opad + o] = v;        \
                    }                                                           \
        for (int64_t g = 0; bpk && g < p->groups; g++)                          \
            for (int64_t o = 0; o < opad; o++)                                  \
                bpk[g * opad + o] = o < p->cout ? b[g * p->cout + o] : 0;       \
    }
PACK(float, f32)
PACK(double, f64)

/* plans, packs and runs a forward-like product (flip: the input gradient) */
static bool forward_like(fplan *p, const void *w, const void *b, bool flip,
                         tg_status *status)
{
    tg__conv_mode md = tg__conv_get_mode();
    if (md == TG_CONV_GEMM)
        return false;
    p->z = (int64_t)tg_dtype_size(p->dt);
    p->kn = &tg__conv_arch_now()->k[p->dt == TG_FLOAT64];
    choose_fwd(p, md);
    if (p->pooled && p->fam != FAM_LANES)
        return false; /* only batch lanes pool as they store */
    p->opad = tile_opad(p);
    size_t wbytes = (size_t)(p->groups * p->cin * p->kh * p->kw * p->opad * p->z);
    char *wpk = malloc(wbytes + (size_t)(p->groups * p->opad * p->z) + 64);
    if (!wpk) {
        *status = TG_ERR_NOMEM;
        return true;
    }
    char *bpk = b ? wpk + (wbytes + 63) / 64 * 64 : NULL;
    if (p->dt == TG_FLOAT32)
        pack_f32(p, w, b, flip, (float *)wpk, (float *)bpk);
    else
        pack_f64(p, w, b, flip, (double *)wpk, (double *)bpk);
    p->wpk = wpk;
    p->bias = bpk;
    int64_t macs = p->n * p->groups * p->cout * p->cin * p->kh * p->kw * p->oh * p->ow;
    *status = plan_segments(p) ? run_fwd(p, macs) : TG_ERR_NOMEM;
    free(p->seg_x0);
    free(p->seg_tile);
    free(wpk);
    return true;
}

static bool stride_one(const tg__conv_geom *g) { return g->sh == 1 && g->sw == 1; }

/* the forward product's plan for g over x (its outputs still to set) */
static fplan forward_plan(tg_dtype dt, const tg__conv_geom *g, const void *x, bool relu)
{
    return (fplan){.dt = dt, .n = g->n, .groups = g->groups, .cin = g->c / g->groups,
                   .cout = g->o / g->groups, .h = g->h, .w = g->w, .oh = g->oh,
                   .ow = g->ow, .kh = g->kh, .kw = g->kw, .dh = g->dh, .dw = g->dw,
                   .pt = g->ph, .pl = g->pw, .in = x, .relu = relu};
}

bool tg__conv_direct_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                             const void *w, const void *b, bool relu, void *y,
                             tg_status *status)
{
    if (!stride_one(g))
        return false;
    fplan p = forward_plan(dt, g, x, relu);
    p.out = y;
    return forward_like(&p, w, b, false, status);
}

bool tg__conv_direct_forward_pool(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                  const void *w, const void *b, bool relu, void *y,
                                  uint8_t *off, tg_status *status)
{
    if (!stride_one(g) || g->oh < 2 || g->ow < 2)
        return false;
    fplan p = forward_plan(dt, g, x, relu);
    p.pooled = y;
    p.off = off;
    return forward_like(&p, w, b, false, status);
}

/* dx = the forward product of dy, padded by (k - 1) d - p, with the
 * weights flipped and their channels swapped */
bool tg__conv_direct_grad_input(tg_dtype dt, const tg__conv_geom *g, const void *dy,
                                const void *w, void *dx, tg_status *status)
{
    int64_t pt = (g->kh - 1) * g->dh - g->ph, pl = (g->kw - 1) * g->dw - g->pw;
    if (!stride_one(g) || pt < 0 || pl < 0)
        return false;
    fplan p = {.dt = dt, .n = g->n, .groups = g->groups, .cin = g->o / g->groups,
               .cout = g->c / g->groups, .h = g->oh, .w = g->ow, .oh = g->h,
               .ow = g->w, .kh = g->kh, .kw = g->kw, .dh = g->dh, .dw = g->dw,
               .pt = pt, .pl = pl, .in = dy, .out = dx};
    return forward_like(&p, w, NULL, true, status);
}

/* ---- weight gradients ----------------------------------------------------------
 * dw[g][o][c][i][j] = sum over images and output positions of
 * dy[n][g][o][pos] * x[n][g][c][pos + tap]: each part sums its units into
 * accumulators [g][opad][kgpad][L], summed over parts and lanes at the end */
typedef struct wplan {
    tg_dtype dt;
    int64_t z, n, groups, cin, cout, h, w, oh, ow, kh, kw, dh, dw, ph, pw;
    const char *x, *dy;
    family fam;
    int tile;
    const tg__conv_kern *kn;
    tg__dconv d;
    int64_t kg, kgpad, opad, units, parts, acc_len;
    char *acc; /* parts x acc_len elements */
    atomic_llong next;
    atomic_int status;
} wplan;

static tg__tile wtile(const wplan *p)
{
    return p->fam == FAM_LANES ? p->kn->wgt[p->tile] : p->kn->pvw[p->tile];
}

static void choose_wgt(wplan *p, tg__conv_mode md)
{
    const tg__conv_kern *kn = p->kn;
    int64_t L = kn->lanes, kg = p->cin * p->kh * p->kw, nch = cdiv(p->ow, L);
    double best = -1;
    for (int f = 0; f < 2; f++) {
        if ((f == FAM_LANES && md == TG_CONV_PLANES) || (f == FAM_PLANES && md == TG_CONV_LANES))
            continue;
        int nt = f == FAM_LANES ? kn->n_wgt : kn->n_pvw;
        for (int k = 0; k < nt; k++) {
            tg__tile t = f == FAM_LANES ? kn->wgt[k] : kn->pvw[k];
            double tiles = (double)(cdiv(p->cout, t.a) * t.a * cdiv(kg, t.b) * t.b);
            double c;
            if (f == FAM_LANES)
                c = (double)cdiv(p->n, L) * tiles * (double)(p->oh * p->ow) +
                    (double)p->n * (double)(p->cin * p->h * p->w + p->cout * p->oh * p->ow) *
                        TRANSPOSE_COST;
            else
                c = (double)p->n * tiles * (double)(p->oh * nch) * PLANES_FACTOR;
            c *= (double)p->groups;
            if (best < 0 || c < best) {
                best = c;
                p->fam = (family)f;
                p->tile = k;
            }
        }
    }
}

/* element offsets of taps t0 .. t0 + tb in the input planes (taps past kg
 * repeat tap t0: their sums are never read) */
static void tap_offsets(const wplan *p, int64_t t0, int tb, int64_t lanes, int64_t *off)
{
    const tg__dconv *d = &p->d;
    for (int t = 0; t < tb; t++) {
        int64_t k = t0 + t < p->kg ? t0 + t : t0;
        int64_t c = k / (p->kh * p->kw), i = k / p->kw % p->kh, j = k % p->kw;
        off[t] = (c * d->ih * d->iw + i * p->dh * d->iw + j * p->dw) * lanes;
    }
}

static void unit_lanes_wgt(wplan *p, int64_t nb, char *acc)
{
    const tg__conv_kern *kn = p->kn;
    const tg__dconv *d = &p->d;
    int64_t L = kn->lanes, z = p->z, nimg = min64(L, p->n - nb * L);
    tg__tile t = kn->wgt[p->tile];
    int64_t plane = d->ih * d->iw * L, oplane = p->oh * p->ow * L;
    int64_t x_img = p->groups * p->cin * p->h * p->w;
    int64_t dy_img = p->groups * p->cout * p->oh * p->ow;
    char *xin = tg__scratch(TG_SCRATCH_KERNEL0, (size_t)(p->cin * plane * z));
    char *dyb = tg__scratch(TG_SCRATCH_KERNEL1, (size_t)(p->opad * oplane * z));
    if (!xin || !dyb) {
        atomic_store(&p->status, TG_ERR_NOMEM);
        return;
    }
    int64_t off[32];
    zero_borders(xin, p->cin, d->ih, d->iw, L * z, p->ph, p->h, p->pw, p->w);
    for (int64_t g = 0; g < p->groups; g++) {
        kn->to_bl(p->x + (nb * L * x_img + g * p->cin * p->h * p->w) * z, x_img, nimg,
                  p->cin, p->h, p->w, xin, plane, d->iw, p->ph, p->pw);
        memset(dyb + p->cout * oplane * z, 0, (size_t)((p->opad - p->cout) * oplane * z));
        kn->to_bl(p->dy + (nb * L * dy_img + g * p->cout * p->oh * p->ow) * z, dy_img,
                  nimg, p->cout, p->oh, p->ow, dyb, oplane, p->ow, 0, 0);
        for (int64_t t0 = 0; t0 < p->kg; t0 += t.b) {
            tap_offsets(p, t0, t.b, L, off);
            for (int64_t o0 = 0; o0 < p->cout; o0 += t.a)
                kn->bl_wgt[p->tile](d, xin, dyb, o0, off,
                                    acc + (((g * p->opad + o0) * p->kgpad + t0) * L) * z,
                                    p->kgpad);
        }
    }
}

static void unit_planes_wgt(wplan *p, int64_t img, char *acc)
{
    const tg__conv_kern *kn = p->kn;
    const tg__dconv *d = &p->d;
    int64_t L = kn->lanes, z = p->z, ldy = round_up(p->ow, L), dplane = p->oh * ldy;
    tg__tile t = kn->pvw[p->tile];
    int64_t plane = d->ih * d->iw;
    char *xin = tg__scratch(TG_SCRATCH_KERNEL0, (size_t)(p->cin * plane * z));
    char *dyp = tg__scratch(TG_SCRATCH_KERNEL1, (size_t)(p->opad * dplane * z));
    if (!xin || !dyp) {
        atomic_store(&p->status, TG_ERR_NOMEM);
        return;
    }
    int64_t off[32];
    for (int64_t g = 0; g < p->groups; g++) {
        const char *xs = p->x + ((img * p->groups + g) * p->cin * p->h * p->w) * z;
        const char *ds = p->dy + ((img * p->groups + g) * p->cout * p->oh * p->ow) * z;
        zero_borders(xin, p->cin, d->ih, d->iw, z, p->ph, p->h, p->pw, p->w);
        memset(dyp, 0, (size_t)(p->opad * dplane * z));
        for (int64_t c = 0; c < p->cin; c++)
            for (int64_t r = 0; r < p->h; r++)
                memcpy(xin + ((c * d->ih + p->ph + r) * d->iw + p->pw) * z,
                       xs + ((c * p->h + r) * p->w) * z, (size_t)(p->w * z));
        for (int64_t o = 0; o < p->cout; o++)
            for (int64_t r = 0; r < p->oh; r++)
                memcpy(dyp + (o * dplane + r * ldy) * z, ds + ((o * p->oh + r) * p->ow) * z,
                       (size_t)(p->ow * z));
        for (int64_t t0 = 0; t0 < p->kg; t0 += t.b) {
            tap_offsets(p, t0, t.b, 1, off);
            for (int64_t o0 = 0; o0 < p->cout; o0 += t.a)
                kn->pv_wgt[p->tile](d, xin, dyp, ldy, dplane, o0, off,
                                    acc + (((g * p->opad + o0) * p->kgpad + t0) * L) * z,
                                    p->kgpad);
        }
    }
}

static void wgt_body(void *ctx, int64_t begin, int64_t end)
{
    wplan *p = ctx;
    (void)begin, (void)end;
    for (int64_t part; (part = atomic_fetch_add(&p->next, 1)) < p->parts;) {
        char *acc = p->acc + part * p->acc_len * p->z;
        for (int64_t u = p->units * part / p->parts; u < p->units * (part + 1) / p->parts; u++) {
            if (p->fam == FAM_LANES)
                unit_lanes_wgt(p, u, acc);
            else
                unit_planes_wgt(p, u, acc);
        }
    }
}

#define REDUCE(T, SUF)                                                          \
    /* dw = the parts' accumulators summed in order (into part 0: each        \
     * element's own order, so a plain loop over whole arrays, which the      \
     * compiler vectorizes), then each weight's lanes in order */             \
    static void reduce_##SUF(const wplan *p, T *dw)                             \
    {                                                                           \
        T *acc = (T *)p->acc;                                                   \
        int64_t L = p->kn->lanes;                                               \
        for (int64_t part = 1; part < p->parts; part++) {                       \
            const T *a = acc + part * p->acc_len;                               \
            for (int64_t i = 0; i < p->acc_len; i++)                            \
                acc[i] += a[i];                                                 \
        }                                                                       \
        for (int64_t g = 0; g < p->groups; g++)                                 \
            for (int64_t o = 0; o < p->cout; o++)                               \
                for (int64_t k = 0; k < p->kg; k++) {                           \
                    const T *a = acc + ((g * p->opad + o) * p->kgpad + k) * L;  \
                    T s = 0;                                                    \
                    for (int64_t l = 0; l < L; l++)                             \
                        s += a[l];                                              \
                    dw[(g * p->cout + o) * p->kg + k] = s;                      \
                }                                                               \
    }
REDUCE(float, f32)
REDUCE(double, f64)

bool tg__conv_direct_grad_weight(tg_dtype dt, const tg__conv_geom *g, const void *dy,
                                 const void *x, void *dw, tg_status *status)
{
    tg__conv_mode md = tg__conv_get_mode();
    if (!stride_one(g) || md == TG_CONV_GEMM)
        return false;
    wplan p = {.dt = dt, .z = (int64_t)tg_dtype_size(dt), .n = g->n, .groups = g->groups,
               .cin = g->c / g->groups, .cout = g->o / g->groups, .h = g->h, .w = g->w,
               .oh = g->oh, .ow = g->ow, .kh = g->kh, .kw = g->kw, .dh = g->dh,
               .dw = g->dw, .ph = g->ph, .pw = g->pw, .x = x, .dy = dy};
    p.kn = &tg__conv_arch_now()->k[dt == TG_FLOAT64];
    p.kg = p.cin * p.kh * p.kw;
    choose_wgt(&p, md);
    tg__tile t = wtile(&p);
    int64_t L = p.kn->lanes;
    p.opad = round_up(p.cout, t.a);
    p.kgpad = round_up(p.kg, t.b);
    p.units = p.fam == FAM_LANES ? cdiv(p.n, L) : p.n;
    p.parts = min64(p.units, WGT_PARTS);
    p.acc_len = p.groups * p.opad * p.kgpad * L;
    if (p.units == 0 || p.parts * p.acc_len * p.z > WGT_ACC_LIMIT)
        return false;
    int64_t ih = p.oh + (p.kh - 1) * p.dh;
    int64_t cols = p.fam == FAM_LANES ? p.ow : round_up(p.ow, L);
    p.d = (tg__dconv){.cin = p.cin, .cout = p.cout, .ih = ih,
                      .iw = cols + (p.kw - 1) * p.dw, .oh = p.oh, .ow = p.ow,
                      .kh = p.kh, .kw = p.kw, .dh = p.dh, .dw = p.dw,
                      .row0 = p.ph, .row1 = p.ph + p.h, .col0 = p.pw, .col1 = p.pw + p.w};
    size_t acc_bytes = (size_t)(p.parts * p.acc_len * p.z);
    if (!(p.acc = tg__scratch(TG_SCRATCH_SHARED, acc_bytes))) {
        *status = TG_ERR_NOMEM;
        return true;
    }
    memset(p.acc, 0, acc_bytes);
    atomic_init(&p.next, 0);
    atomic_init(&p.status, TG_OK);
    int64_t macs = p.n * p.groups * p.cout * p.kg * p.oh * p.ow;
    if (use_threads(macs, p.parts))
        tg_parallel_for(min64(tg_get_num_threads(), p.parts), 1, wgt_body, &p);
    else
        wgt_body(&p, 0, 1);
    *status = (tg_status)atomic_load(&p.status);
    if (*status == TG_OK && dt == TG_FLOAT32)
        reduce_f32(&p, dw);
    else if (*status == TG_OK)
        reduce_f64(&p, dw);
    return true;
}
