/* 2-D convolution kernels (NCHW, contiguous buffers of one float dtype):
 * forward, input gradient and weight gradient, for any stride, padding,
 * dilation and groups. The batch is split over the thread pool. */
#include "kernels/cpu/conv.h"
#include "core/threadpool.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_few.h"
#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_dw_api.h"
#include "kernels/cpu/conv_pw.h"
#include "kernels/cpu/conv_dense.h"
#include "kernels/cpu/conv_wgrad.h"
#include "kernels/cpu/conv_wino.h"
#include "kernels/cpu/conv_gemm.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/im2col.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* convolutions with fewer multiply-adds than this run on one thread
 * (a few microseconds of work: not worth a parallel_for) */
#define CONV_PAR_WORK ((int64_t)1 << 19)
/* batch slices per thread (more balance late threads better) and in all */
#define PARTS_PER_THREAD 4
#define MAX_PARTS 256

/* ---- kernels ---------------------------------------------------------------------
 * A job covers the batch in `parts` contiguous slices, run in parallel;
 * each slice has its own scratch and, for the weight gradient, its own
 * accumulator, summed at the end. How an image meets the weights:
 *  - direct (1x1 kernel, stride 1, no padding): the image is its own
 *    [C, H * W] patch matrix, and GEMM does the rest;
 *  - wide (stride 1, see im2col.h): the forward product is an implicit
 *    GEMM over the padded image (conv_gemm.h), no patch matrix built, and
 *    so is the weight gradient when a group has a vector's worth of output
 *    channels (else im2col and GEMM); the input gradient is a GEMM into
 *    wide patch rows that col2im adds back;
 *  - rows (any stride): im2col into a patch matrix, then GEMM. */
typedef enum layout { LAYOUT_DIRECT, LAYOUT_WIDE, LAYOUT_ROWS } layout;

typedef struct conv_job {
    tg__conv_geom g;
    layout lay;
    const char *x, *w, *b, *dy; /* contiguous, of the output's dtype */
    const char *wpack;          /* forward, wide: W packed per group */
    char *out;
    char **acc; /* grad_weight: one accumulator per part, [G, og, kg] or,
                   when wt, transposed per group: [G, kg, og] */
    bool wt;
    bool implicit_wgrad; /* grad_weight by tg__conv_wgrad (transposed) */
    bool relu;           /* forward: relu on each image's output, still in cache */
    int64_t parts;
    atomic_llong next_part; /* the first part no thread has claimed */
    tg_status status;
} conv_job;

/* the next part for the calling thread, or -1 when all are taken */
static int64_t claim_part(conv_job *j)
{
    int64_t t = atomic_fetch_add(&j->next_part, 1);
    return t < j->parts ? t : -1;
}

/* the images of part t */
static int64_t part_begin(const conv_job *j, int64_t t) { return j->g.n * t / j->parts; }

/* padded copies up to this many elements are taken whatever the call's
 * own size; beyond it, up to PAD_RATIO times its input and output
 * (tg__conv_pads_bounded). DeepLab's 3x3 layers of dilation 36 on 33 x 33
 * planes pad them to 10x their size. */
#define PAD_FREE ((int64_t)1 << 22)
#define PAD_RATIO 16

/* one output position: the window's start moves over span = the padded
 * size - the dilated kernel (ops/conv.c checked they fit), and any stride
 * above span gives that one position */
void tg__conv_geom_canon(tg__conv_geom *g)
{
    int64_t span_h = g->h + 2 * g->ph - (g->kh - 1) * g->dh - 1;
    int64_t span_w = g->w + 2 * g->pw - (g->kw - 1) * g->dw - 1;
    if (g->oh == 1 && g->sh > span_h + 1)
        g->sh = span_h + 1;
    if (g->ow == 1 && g->sw > span_w + 1)
        g->sw = span_w + 1;
}

/* sums and products of sizes >= 0, saturated at INT64_MAX */
static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t mul_sat(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

bool tg__conv_pads_bounded(const tg__conv_geom *g)
{
    int64_t data = add_sat(mul_sat(g->c, mul_sat(g->h, g->w)),
                           mul_sat(g->o, mul_sat(g->oh, g->ow)));
    int64_t limit = mul_sat(data, PAD_RATIO);
    if (limit < PAD_FREE)
        limit = PAD_FREE;
    int64_t hp = add_sat(g->h, mul_sat(g->ph, 2)), wp = add_sat(g->w, mul_sat(g->pw, 2));
    if (mul_sat(g->c, mul_sat(hp, wp)) > limit)
        return false;
    if (g->sh != 1 || g->sw != 1)
        return true;
    /* the stride-1 input gradient's output gradient, padded by (k - 1) d */
    int64_t dh = add_sat(g->oh, mul_sat(mul_sat(g->kh - 1, g->dh), 2));
    int64_t dw = add_sat(g->ow, mul_sat(mul_sat(g->kw - 1, g->dw), 2));
    return mul_sat(g->o, mul_sat(dh, dw)) <= limit;
}

static layout choose_layout(const tg__conv_geom *g)
{
    if (!tg__conv_pads_bounded(g))
        return LAYOUT_ROWS;
    if (g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 &&
        g->pw == 0)
        return LAYOUT_DIRECT;
    return tg__conv_wide_ok(g) ? LAYOUT_WIDE : LAYOUT_ROWS;
}

/* the sizes every kernel works with, for one image */
typedef struct dims {
    int64_t G, cg, og, kg; /* groups; channels in, out, patch rows per group */
    int64_t ohw, hw;
    int64_t P;    /* patch-matrix columns: wide length or OH * OW */
    int64_t chan; /* elements per channel of the image the patches come from */
    bool wide;
} dims;

static dims dims_of(const conv_job *j)
{
    const tg__conv_geom *g = &j->g;
    dims d;
    d.G = g->groups;
    d.cg = g->c / d.G;
    d.og = g->o / d.G;
    d.kg = d.cg * g->kh * g->kw;
    d.ohw = g->oh * g->ow;
    d.hw = g->h * g->w;
    d.wide = j->lay == LAYOUT_WIDE;
    d.P = d.wide ? tg__conv_wide_len(g) : d.ohw;
    d.chan = d.wide ? tg__conv_hp(g) * tg__conv_wp(g) : d.hw;
    return d;
}

/* the row stride of dy^T for the implicit weight gradient: og rounded up
 * to whole vectors of elements of size el */
static int64_t dyt_stride(const dims *d, size_t el)
{
    int64_t v = tg__conv_lanes((int64_t)el);
    return (d->og + v - 1) / v * v;
}

/* where each tap's run starts in a padded image of cg channels */
static void tap_offsets(const tg__conv_geom *g, const dims *d, int64_t *off)
{
    const int64_t wp = tg__conv_wp(g);
    for (int64_t c = 0, p = 0; c < d->cg; c++)
        for (int64_t i = 0; i < g->kh; i++)
            for (int64_t k = 0; k < g->kw; k++, p++)
                off[p] = c * d->chan + i * g->dh * wp + k * g->dw;
}

/* one slice's scratch, each part only where its kernel needs it: the
 * patch matrix (GEMM layouts), a padded image (with zero slack past its
 * end, which the implicit product reads) and a wide output or output
 * gradient; and, in the wide layout, where each tap's run starts */
typedef struct slice {
    char *buf; /* the one allocation, freed at the end */
    void *col, *img, *io;
    int64_t *taps; /* kg offsets of the taps' runs in img */
} slice;

static bool slice_alloc(conv_job *j, const dims *d, size_t el, int64_t ncol,
                        int64_t nimg, int64_t nio, slice *s)
{
    const int64_t slack = TG__CONV_SLACK * (int64_t)el;
    int64_t bytes[4] = {ncol * (int64_t)el, nimg ? nimg * (int64_t)el + slack : 0,
                        nio * (int64_t)el, d->wide ? d->kg * (int64_t)sizeof(int64_t) : 0};
    int64_t at[4], total = 0;
    for (int i = 0; i < 4; i++) {
        at[i] = total;
        total += (bytes[i] + 63) / 64 * 64;
    }
    if (!(s->buf = aligned_alloc(64, (size_t)(total ? total : 64)))) {
        j->status = TG_ERR_NOMEM;
        return false;
    }
    s->col = s->buf + at[0];
    s->img = s->buf + at[1];
    s->io = s->buf + at[2];
    s->taps = (int64_t *)(s->buf + at[3]);
    if (nimg)
        memset((char *)s->img + nimg * (int64_t)el, 0, (size_t)slack);
    if (d->wide)
        tap_offsets(&j->g, d, s->taps);
    return true;
}

/* fixed-length inner loops: the form any vectorizer takes */
#define FILL(T, SUF)                                                             \
    static void fill_##SUF(T *d, int64_t n, T v)                                 \
    {                                                                            \
        int64_t i = 0;                                                           \
        for (; i + 16 <= n; i += 16)                                             \
            for (int k = 0; k < 16; k++)                                         \
                d[i + k] = v;                                                    \
        for (; i < n; i++)                                                       \
            d[i] = v;                                                            \
    }

/* relu as the relu op computes it: NaN passes, everything else not above
 * zero becomes +0 */
#define RELU(T, SUF)                                                             \
    static void relu_##SUF(T *y, int64_t n)                                      \
    {                                                                            \
        for (int64_t i = 0; i < n; i++)                                          \
            y[i] = y[i] > 0 || y[i] != y[i] ? y[i] : (T)0;                       \
    }

#define CONV_KERNELS(T, SUF, GEMM)                                               \
    FILL(T, SUF)                                                                 \
    RELU(T, SUF)                                                                 \
                                                                                 \
    /* the patch matrix of group gi of image xn (padded in the wide layout) */   \
    static const T *patches_##SUF(const conv_job *j, const dims *d,              \
                                  const T *xn, int64_t gi, T *col)               \
    {                                                                            \
        const T *xg = xn + gi * d->cg * d->chan;                                 \
        if (j->lay == LAYOUT_WIDE)                                               \
            tg__im2col_wide_##SUF(xg, d->cg, &j->g, col);                        \
        else if (j->lay == LAYOUT_ROWS)                                          \
            tg__im2col_##SUF(xg, d->cg, &j->g, col, d->ohw);                     \
        return j->lay == LAYOUT_DIRECT ? xg : col;                               \
    }                                                                            \
                                                                                 \
    /* ---- forward: y = W @ patches (+ bias) per image and group ---- */        \
    static tg_status fwd_gemm_##SUF(const conv_job *j, const dims *d,            \
                                    const T *xn, T *y, T *col)                   \
    {                                                                            \
        const T *w = (const T *)j->w, *b = (const T *)j->b;                      \
        for (int64_t o = 0; b && o < j->g.o; o++)                                \
            fill_##SUF(y + o * d->ohw, d->ohw, b[o]);                            \
        for (int64_t gi = 0; gi < d->G; gi++) {                                  \
            const T *src = patches_##SUF(j, d, xn, gi, col);                     \
            tg_status s = GEMM(false, false, d->og, d->ohw, d->kg, 1,            \
                               w + gi * d->og * d->kg, d->kg, src, d->ohw,       \
                               b ? 1 : 0, y + gi * d->og * d->ohw, d->ohw);      \
            if (s != TG_OK)                                                      \
                return s;                                                        \
        }                                                                        \
        return TG_OK;                                                            \
    }                                                                            \
                                                                                 \
    /* the wide layout: implicit GEMM into wide rows, narrowed with the bias */  \
    static void fwd_wide_##SUF(const conv_job *j, const dims *d, const slice *s, \
                               T *y)                                             \
    {                                                                            \
        const T *wp = (const T *)j->wpack, *b = (const T *)j->b;                 \
        const T *img = (const T *)s->img;                                        \
        const int64_t plen = tg__conv_pack_len(d->og, d->kg);                    \
        T *yw = (T *)s->io;                                                      \
        for (int64_t gi = 0; gi < d->G; gi++) {                                  \
            tg__conv_fwd_##SUF(d->og, d->P, d->kg, wp + gi * plen,               \
                               img + gi * d->cg * d->chan, s->taps, yw, d->P);   \
            tg__narrow_##SUF(yw, d->og, &j->g, b ? b + gi * d->og : NULL,        \
                             y + gi * d->og * d->ohw);                           \
        }                                                                        \
    }                                                                            \
                                                                                 \
    static tg_status fwd_image_##SUF(const conv_job *j, const dims *d,           \
                                     const slice *s, int64_t n)                  \
    {                                                                            \
        const tg__conv_geom *g = &j->g;                                          \
        T *y = (T *)j->out + n * g->o * d->ohw;                                  \
        const T *xn = (const T *)j->x + n * g->c * d->hw;                        \
        tg_status st = TG_OK;                                                    \
        if (!d->wide) {                                                          \
            st = fwd_gemm_##SUF(j, d, xn, y, (T *)s->col);                       \
        } else {                                                                 \
            tg__pad_image_##SUF(xn, g->c, g, (T *)s->img);                       \
            fwd_wide_##SUF(j, d, s, y);                                          \
        }                                                                        \
        if (st == TG_OK && j->relu)                                              \
            relu_##SUF(y, g->o * d->ohw);                                        \
        return st;                                                               \
    }                                                                            \
                                                                                 \
    /* a thread's share: the parts it claims (the range is not used) */          \
    static void fwd_##SUF(void *ctx, int64_t t0, int64_t t1)                     \
    {                                                                            \
        conv_job *j = ctx;                                                       \
        const dims d = dims_of(j);                                               \
        slice s;                                                                 \
        (void)t0, (void)t1;                                                      \
        if (!slice_alloc(j, &d, sizeof(T), j->lay == LAYOUT_ROWS ? d.kg * d.P : 0, \
                         d.wide ? j->g.c * d.chan : 0, d.wide ? d.og * d.P : 0,  \
                         &s))                                                    \
            return;                                                              \
        for (int64_t t; (t = claim_part(j)) >= 0;)                               \
            for (int64_t n = part_begin(j, t); n < part_begin(j, t + 1); n++) {  \
                tg_status st = fwd_image_##SUF(j, &d, &s, n);                    \
                if (st != TG_OK)                                                 \
                    j->status = st;                                              \
            }                                                                    \
        free(s.buf);                                                             \
    }                                                                            \
                                                                                 \
    /* ---- input gradient: dx = col2im(W^T @ dy) per image and group ---- */    \
    /* by GEMM (w: W^T per group) into patch rows that col2im adds back into     \
     * the (padded) image, or straight into dx in the direct layout */           \
    static tg_status bwd_input_image_##SUF(const conv_job *j, const dims *d,     \
                                           const slice *s, const T *dyn, T *dx)  \
    {                                                                            \
        const tg__conv_geom *g = &j->g;                                          \
        const T *w = (const T *)j->w;                                            \
        const bool padded = d->wide && (g->ph > 0 || g->pw > 0);                 \
        T *col = (T *)s->col, *dst = padded ? (T *)s->img : dx;                  \
        if (d->wide) {                                                           \
            tg__widen_##SUF(dyn, g->o, g, (T *)s->io);                           \
            dyn = (const T *)s->io;                                              \
        }                                                                        \
        if (j->lay != LAYOUT_DIRECT)                                             \
            memset(dst, 0, (size_t)(g->c * d->chan) * sizeof(T));                \
        for (int64_t gi = 0; gi < d->G; gi++) {                                  \
            T *into = j->lay == LAYOUT_DIRECT ? dx + gi * d->cg * d->hw : col;   \
            tg_status st = GEMM(false, false, d->kg, d->P, d->og, 1,             \
                                w + gi * d->og * d->kg, d->og,                   \
                                dyn + gi * d->og * d->P, d->P, 0, into, d->P);   \
            if (st != TG_OK)                                                     \
                return st;                                                       \
            if (j->lay == LAYOUT_WIDE)                                           \
                tg__col2im_wide_##SUF(col, d->cg, g, dst + gi * d->cg * d->chan); \
            else if (j->lay == LAYOUT_ROWS)                                      \
                tg__col2im_##SUF(col, d->cg, g, dst + gi * d->cg * d->chan);     \
        }                                                                        \
        if (padded)                                                              \
            tg__crop_image_##SUF(dst, g->c, g, dx);                              \
        return TG_OK;                                                            \
    }                                                                            \
                                                                                 \
    static void bwd_input_##SUF(void *ctx, int64_t t0, int64_t t1)               \
    {                                                                            \
        conv_job *j = ctx;                                                       \
        const tg__conv_geom *g = &j->g;                                          \
        const dims d = dims_of(j);                                               \
        const bool padded = d.wide && (g->ph > 0 || g->pw > 0);                  \
        slice s;                                                                 \
        (void)t0, (void)t1;                                                      \
        if (!slice_alloc(j, &d, sizeof(T), j->lay == LAYOUT_DIRECT ? 0 : d.kg * d.P, \
                         padded ? g->c * d.chan : 0, d.wide ? g->o * d.P : 0, &s)) \
            return;                                                              \
        for (int64_t t; (t = claim_part(j)) >= 0;)                               \
            for (int64_t n = part_begin(j, t); n < part_begin(j, t + 1); n++) {  \
                tg_status st = bwd_input_image_##SUF(                            \
                    j, &d, &s, (const T *)j->dy + n * g->o * d.ohw,              \
                    (T *)j->out + n * g->c * d.hw);                              \
                if (st != TG_OK)                                                 \
                    j->status = st;                                              \
            }                                                                    \
        free(s.buf);                                                             \
    }                                                                            \
                                                                                 \
    /* ---- weight gradient: dW += dy @ patches^T over a slice's images ---- */  \
    /* by GEMM (dyn: wide rows in the wide layout); when wt, as patches @ dy^T   \
     * into a transposed accumulator */                                          \
    static tg_status wgrad_gemm_##SUF(const conv_job *j, const dims *d,          \
                                      const T *xn, const T *dyn, T *acc, T *col) \
    {                                                                            \
        for (int64_t gi = 0; gi < d->G; gi++) {                                  \
            const T *src = patches_##SUF(j, d, xn, gi, col);                     \
            const T *dyg = dyn + gi * d->og * d->P;                              \
            T *accg = acc + gi * d->og * d->kg;                                  \
            tg_status s = j->wt                                                  \
                ? GEMM(false, true, d->kg, d->og, d->P, 1, src, d->P, dyg, d->P, \
                       1, accg, d->og)                                           \
                : GEMM(false, true, d->og, d->kg, d->P, 1, dyg, d->P, src, d->P, \
                       1, accg, d->kg);                                          \
            if (s != TG_OK)                                                      \
                return s;                                                        \
        }                                                                        \
        return TG_OK;                                                            \
    }                                                                            \
                                                                                 \
    /* implicit, into the transposed accumulator: s->io holds one group's        \
     * dy^T in the wide layout, rows of ldt (og rounded up to a vector) */       \
    static void wgrad_wide_##SUF(const conv_job *j, const dims *d,               \
                                 const slice *s, const T *dyn, T *acc)           \
    {                                                                            \
        const int64_t ldt = dyt_stride(d, sizeof(T));                            \
        for (int64_t gi = 0; gi < d->G; gi++) {                                  \
            tg__widen_t_##SUF(dyn + gi * d->og * d->ohw, d->og, &j->g, ldt,      \
                              (T *)s->io);                                       \
            tg__conv_wgrad_##SUF(d->og, d->P, d->kg,                             \
                                 (const T *)s->img + gi * d->cg * d->chan,       \
                                 s->taps, (const T *)s->io, ldt,                 \
                                 acc + gi * d->kg * d->og, d->og);               \
        }                                                                        \
    }                                                                            \
                                                                                 \
    static tg_status wgrad_image_##SUF(const conv_job *j, const dims *d,         \
                                       const slice *s, const T *xn,              \
                                       const T *dyn, T *acc)                     \
    {                                                                            \
        const tg__conv_geom *g = &j->g;                                          \
        if (d->wide) {                                                           \
            tg__pad_image_##SUF(xn, g->c, g, (T *)s->img);                       \
            xn = (const T *)s->img;                                              \
        }                                                                        \
        if (j->implicit_wgrad) {                                                 \
            wgrad_wide_##SUF(j, d, s, dyn, acc);                                 \
            return TG_OK;                                                        \
        }                                                                        \
        if (d->wide) {                                                           \
            tg__widen_##SUF(dyn, g->o, g, (T *)s->io);                           \
            dyn = (const T *)s->io;                                              \
        }                                                                        \
        return wgrad_gemm_##SUF(j, d, xn, dyn, acc, (T *)s->col);                \
    }                                                                            \
                                                                                 \
    static void bwd_weight_##SUF(void *ctx, int64_t t0, int64_t t1)              \
    {                                                                            \
        conv_job *j = ctx;                                                       \
        const tg__conv_geom *g = &j->g;                                          \
        const dims d = dims_of(j);                                               \
        const bool gemm_col = !j->implicit_wgrad && j->lay != LAYOUT_DIRECT;     \
        const int64_t nio = !d.wide ? 0                                          \
                            : j->implicit_wgrad ? d.P * dyt_stride(&d, sizeof(T)) \
                                                : g->o * d.P;                    \
        slice s;                                                                 \
        (void)t0, (void)t1;                                                      \
        if (!slice_alloc(j, &d, sizeof(T), gemm_col ? d.kg * d.P : 0,            \
                         d.wide ? g->c * d.chan : 0, nio, &s))                   \
            return;                                                              \
        for (int64_t t; (t = claim_part(j)) >= 0;)                               \
            for (int64_t n = part_begin(j, t); n < part_begin(j, t + 1); n++) {  \
                tg_status st = wgrad_image_##SUF(                                \
                    j, &d, &s, (const T *)j->x + n * g->c * d.hw,                \
                    (const T *)j->dy + n * g->o * d.ohw, (T *)j->acc[t]);        \
                if (st != TG_OK)                                                 \
                    j->status = st;                                              \
            }                                                                    \
        free(s.buf);                                                             \
    }                                                                            \
                                                                                 \
    /* dst[g][c][r] = (or +=) src[g][r][c] for G blocks of rows x cols */        \
    static void transpose_##SUF(const T *src, int64_t G, int64_t rows,           \
                                int64_t cols, bool add, T *dst)                  \
    {                                                                            \
        for (int64_t gi = 0; gi < G; gi++, src += rows * cols, dst += rows * cols) \
            for (int64_t c = 0; c < cols; c++)                                   \
                for (int64_t r = 0; r < rows; r++)                               \
                    dst[c * rows + r] = (add ? dst[c * rows + r] : 0) +          \
                                        src[r * cols + c];                       \
    }                                                                            \
                                                                                 \
    /* out = the parts' accumulators summed in a fixed order (part 0 already     \
     * is out unless transposed) */                                              \
    static void combine_##SUF(const conv_job *j, int64_t numel, T *out)          \
    {                                                                            \
        const dims d = dims_of(j);                                               \
        for (int64_t t = j->wt ? 0 : 1; t < j->parts; t++) {                     \
            const T *a = (const T *)j->acc[t];                                   \
            if (j->wt)                                                           \
                transpose_##SUF(a, d.G, d.kg, d.og, t > 0, out);                 \
            else                                                                 \
                for (int64_t i = 0; i < numel; i++)                              \
                    out[i] += a[i];                                              \
        }                                                                        \
    }

CONV_KERNELS(float, f32, tg__sgemm)
CONV_KERNELS(double, f64, tg__dgemm)

/* W^T per group: [G, kg, og] from w's [G * og, kg] */
static void transpose_weights(tg_dtype dt, const void *w, const tg__conv_geom *g,
                              void *dst)
{
    int64_t G = g->groups, og = g->o / G, kg = g->c / G * g->kh * g->kw;
    if (dt == TG_FLOAT32)
        transpose_f32(w, G, og, kg, false, dst);
    else
        transpose_f64(w, G, og, kg, false, dst);
}

/* W packed per group for the implicit forward product; NULL when out of
 * memory */
static char *pack_weights(tg_dtype dt, const void *w, const tg__conv_geom *g)
{
    int64_t G = g->groups, og = g->o / G, kg = g->c / G * g->kh * g->kw;
    int64_t plen = tg__conv_pack_len(og, kg);
    char *dst = malloc((size_t)(G * plen) * tg_dtype_size(dt));
    for (int64_t gi = 0; dst && gi < G; gi++) {
        if (dt == TG_FLOAT32)
            tg__conv_pack_f32((const float *)w + gi * og * kg, og, kg,
                              (float *)dst + gi * plen);
        else
            tg__conv_pack_f64((const double *)w + gi * og * kg, og, kg,
                              (double *)dst + gi * plen);
    }
    return dst;
}


/* how many batch slices (parts) the job has: one on one thread, else a
 * few per thread, claimed by the threads as they come (run_parts) */
static int64_t plan_parts(const tg__conv_geom *g)
{
    int64_t work = g->n * g->o * (g->c / g->groups) * g->kh * g->kw * g->oh * g->ow;
    int64_t threads = tg_get_num_threads();
    if (work < CONV_PAR_WORK || g->n < 2 || threads < 2 || tg_in_parallel_region())
        return 1;
    int64_t parts = PARTS_PER_THREAD * threads;
    return g->n < parts ? g->n : parts > MAX_PARTS ? MAX_PARTS : parts;
}

/* fn on each thread, claiming parts until none is left: a thread that the
 * scheduler starts late (the cores are shared) leaves its share to the
 * others instead of holding the op up by a whole share; which thread ran
 * a part never changes the result */
static void run_parts(conv_job *j, tg_range_fn fn)
{
    int64_t threads = tg_get_num_threads();
    atomic_init(&j->next_part, 0);
    if (j->parts > 1 && threads > 1)
        tg_parallel_for(threads < j->parts ? threads : j->parts, 1, fn, j);
    else
        fn(j, 0, 1);
}


/* ---- entry points ------------------------------------------------------------ */
tg_status tg__conv2d_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                             const void *w, const void *b, void *y)
{
    return tg__conv2d_forward_relu(dt, g, x, w, b, false, y);
}

tg_status tg__conv2d_forward_relu(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                  const void *w, const void *b, bool relu, void *y)
{
    tg__conv_act act = {relu ? TG_CONV_ACT_RELU : TG_CONV_ACT_NONE, 0, 0};
    return tg__conv2d_forward_act(dt, g, x, w, b, &act, y);
}

/* the stride-1 direct kernels, or the GEMM paths; im2col alone when
 * special is false (the geometry's padded copies not bounded) */
static tg_status forward_general(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                 const void *w, const void *b, bool relu, bool special,
                                 void *y);

tg_status tg__conv2d_forward_act(tg_dtype dt, const tg__conv_geom *given, const void *x,
                                 const void *w, const void *b, const tg__conv_act *act,
                                 void *y)
{
    tg_status st;
    tg__conv_geom canon = *given, *g = &canon;
    tg__conv_geom_canon(g);
    bool special = tg__conv_pads_bounded(g);
    if (special && (tg__conv_pw_forward(dt, g, x, w, b, act, y, &st) ||
                    tg__conv_dw_forward(dt, g, x, w, b, act, y, &st) ||
                    tg__conv_few_forward(dt, g, x, w, b, act, y, &st)))
        return st;
    st = forward_general(dt, g, x, w, b, act->kind == TG_CONV_ACT_RELU, special, y);
    /* clamp and hardswish: the ops' bits, in a pass over y */
    if (st == TG_OK && act->kind != TG_CONV_ACT_NONE && act->kind != TG_CONV_ACT_RELU)
        tg__dw_arch_now()->row_act[dt == TG_FLOAT64](y, g->n * g->o * g->oh * g->ow, NULL,
                                                     (int)act->kind, act->lo, act->hi);
    return st;
}

/* y = y + res, then relu when asked (as the add and relu ops give it),
 * over n elements: the shortcut for the paths that do not add it as they
 * store */
#define ADD_RESIDUAL(T, SUF)                                                     \
    static void add_residual_##SUF(T *y, const T *res, bool relu, int64_t n)     \
    {                                                                            \
        for (int64_t i = 0; i < n; i++) {                                        \
            T v = y[i] + res[i];                                                 \
            y[i] = !relu || v > 0 || v != v ? v : (T)0;                          \
        }                                                                        \
    }
ADD_RESIDUAL(float, f32)
ADD_RESIDUAL(double, f64)

tg_status tg__conv2d_forward_residual(tg_dtype dt, const tg__conv_geom *given,
                                      const void *x, const void *w, const void *b,
                                      const void *res, bool relu, void *y)
{
    static const tg__conv_act none = {TG_CONV_ACT_NONE, 0, 0};
    const tg__conv_act act = {relu ? TG_CONV_ACT_RELU : TG_CONV_ACT_NONE, 0, 0};
    tg_status st;
    tg__conv_geom canon = *given, *g = &canon;
    tg__conv_geom_canon(g);
    bool special = tg__conv_pads_bounded(g);
    if (special && tg__conv_pw_forward_res(dt, g, x, w, b, res, &act, y, &st)) /* in its panels */
        return st;
    if (!special || (!tg__conv_pw_forward(dt, g, x, w, b, &none, y, &st) &&
                     !tg__conv_dw_forward(dt, g, x, w, b, &none, y, &st) &&
                     !tg__conv_few_forward(dt, g, x, w, b, &none, y, &st))) {
        if (special && tg__conv_wino_wanted(dt, g) && /* 3x3: in the output transform */
            tg__conv_wino_forward(dt, g, x, w, b, res, relu, y, &st))
            return st;
        if (special && tg__conv_dense_wanted(g)) /* in the tiles' store */
            return tg__conv_dense_forward_res(dt, g, x, w, b, res, relu, y);
        st = forward_general(dt, g, x, w, b, false, special, y);
    }
    int64_t n = g->n * g->o * g->oh * g->ow;
    if (st == TG_OK && dt == TG_FLOAT64)
        add_residual_f64(y, res, relu, n);
    else if (st == TG_OK)
        add_residual_f32(y, res, relu, n);
    return st;
}

static tg_status forward_general(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                 const void *w, const void *b, bool relu, bool special,
                                 void *y)
{
    tg_status st;
    if (special && tg__conv_wino_wanted(dt, g) && /* 3x3 at stride 1: Winograd's */
        tg__conv_wino_forward(dt, g, x, w, b, NULL, relu, y, &st))
        return st;
    if (special && tg__conv_dense_wanted(g)) /* many channels: the implicit GEMM */
        return tg__conv_dense_forward(dt, g, x, w, b, relu, y);
    if (special && tg__conv_direct_forward(dt, g, x, w, b, relu, y, &st))
        return st;
    conv_job j = {.g = *g, .relu = relu};
    j.lay = choose_layout(g);
    char *wpack = j.lay == LAYOUT_WIDE ? pack_weights(dt, w, g) : NULL;
    if (j.lay == LAYOUT_WIDE && !wpack)
        return TG_ERR_NOMEM;
    j.x = x;
    j.w = w;
    j.b = b;
    j.wpack = wpack;
    j.out = y;
    j.parts = plan_parts(g);
    run_parts(&j, dt == TG_FLOAT32 ? fwd_f32 : fwd_f64);
    free(wpack);
    return j.status;
}

tg_status tg__conv2d_grad_input(tg_dtype dt, const tg__conv_geom *given,
                                const void *dy, const void *w, void *dx)
{
    tg_status st;
    tg__conv_geom canon = *given, *g = &canon;
    tg__conv_geom_canon(g);
    if (tg__conv_pads_bounded(g) && (tg__conv_wino_grad_input(dt, g, dy, w, dx, &st) ||
                                     tg__conv_direct_grad_input(dt, g, dy, w, dx, &st)))
        return st;
    conv_job j = {.g = *g};
    /* W^T per group: W^T @ dy as a plain product runs ~10% faster in
     * OpenBLAS than with W read transposed */
    size_t wbytes = (size_t)(g->o * (g->c / g->groups) * g->kh * g->kw) *
                    tg_dtype_size(dt);
    char *wt = malloc(wbytes ? wbytes : 1);
    if (!wt)
        return TG_ERR_NOMEM;
    transpose_weights(dt, w, g, wt);
    j.dy = dy;
    j.w = wt;
    j.out = dx;
    j.lay = choose_layout(g);
    j.parts = plan_parts(g);
    run_parts(&j, dt == TG_FLOAT32 ? bwd_input_f32 : bwd_input_f64);
    free(wt);
    return j.status;
}

/* whether a GEMM layout accumulates the weight gradient transposed, as
 * patches @ dy^T: with the long side (patch rows) as the GEMM's rows
 * OpenBLAS ran LeNet's conv2 (150 x 16 x 136 per image) 1.3x faster than
 * as dy @ patches^T */
static bool weight_grad_transposed(const tg__conv_geom *g)
{
    return g->c / g->groups * g->kh * g->kw >= g->o / g->groups;
}

tg_status tg__conv2d_grad_weight(tg_dtype dt, const tg__conv_geom *given,
                                 const void *dy, const void *x, void *dw)
{
    tg_status st;
    tg__conv_geom canon = *given, *g = &canon;
    tg__conv_geom_canon(g);
    if (tg__conv_wgrad_gemm_wanted(g)) /* many channels: one GEMM per chunk of images */
        return tg__conv_wgrad_gemm(dt, g, dy, x, dw);
    if (tg__conv_pads_bounded(g) && tg__conv_direct_grad_weight(dt, g, dy, x, dw, &st))
        return st;
    conv_job j = {.g = *g};
    int64_t numel = g->o * (g->c / g->groups) * g->kh * g->kw;
    size_t bytes = (size_t)numel * tg_dtype_size(dt);
    j.lay = choose_layout(g);
    j.parts = plan_parts(g);
    j.implicit_wgrad = j.lay == LAYOUT_WIDE &&
                       g->o / g->groups >= tg__conv_lanes((int64_t)tg_dtype_size(dt));
    j.wt = j.implicit_wgrad || weight_grad_transposed(g);
    char *acc[MAX_PARTS] = {NULL};
    tg_status s = TG_ERR_NOMEM;
    memset(dw, 0, bytes);
    /* part 0 sums straight into dw when no transposition follows */
    acc[0] = j.wt ? NULL : dw;
    for (int64_t t = j.wt ? 0 : 1; t < j.parts; t++)
        if (!(acc[t] = calloc(1, bytes ? bytes : 1)))
            goto done;
    j.dy = dy;
    j.x = x;
    j.acc = acc;
    bool f32 = dt == TG_FLOAT32;
    run_parts(&j, f32 ? bwd_weight_f32 : bwd_weight_f64);
    s = j.status;
    if (s == TG_OK && f32)
        combine_f32(&j, numel, dw);
    else if (s == TG_OK)
        combine_f64(&j, numel, dw);
done:
    for (int64_t t = j.wt ? 0 : 1; t < j.parts; t++)
        free(acc[t]);
    return s;
}
