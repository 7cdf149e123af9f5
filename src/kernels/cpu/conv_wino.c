/* Winograd F(2x2, 3x3) convolution (see conv_wino.h).
 *
 * With d a 4x4 input tile, g a 3x3 filter and the matrices
 *     B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *     G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
 *     A^T = [1 1 1 0; 0 1 -1 -1]
 * the 2x2 outputs over the tile are A^T [(G g G^T) .* (B^T d B)] A, and
 * summed over the input channels the elementwise product becomes, for
 * each of the 16 positions xi of the 4x4 transforms, a GEMM
 *     M[xi] (out channels x tiles) = U[xi] (out x in channels) V[xi] (in channels x tiles).
 * Tiles are numbered over (image, tile row, tile column) and taken a block
 * at a time, sized so that the block's V and M stay in cache between the
 * three stages, which one thread runs for its share of the tiles (or of
 * the output channels, when the tiles are few). The GEMMs are the GEMM's
 * own micro-kernel on U packed once (kept for frozen weights) and V
 * written in its packed layout by the input transform. The factors 1/2
 * are powers of two: exact in the weights' transform. */
#include "kernels/cpu/conv_wino.h"

#include "core/threadpool.h"
#include "kernels/cpu/conv_dense.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm_arch_api.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/pack_cache.h"
#include "kernels/cpu/scratch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define XI 16             /* positions of a 4x4 transform */
#define MIN_CHANNELS 16   /* fewer input or output channels: GEMMs too thin to pay */
#define MIN_TILES 32      /* fewer tiles: the transformed weights outweigh the savings */
#define BLOCK_BYTES ((int64_t)1 << 20) /* a block's V and M together: about L2 */
#define MIN_SHARE 64      /* tiles per thread before the output channels are shared */
#define MIN_BLOCK 128     /* tiles: fewer make the GEMMs re-read U for too few columns */
#define SEG_MAX 64        /* tiles of one tile row transformed together */

static atomic_bool enabled = true;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *e = getenv("TG_CONV_WINOGRAD");
    if (e && strcmp(e, "0") == 0)
        atomic_store(&enabled, false);
}

void tg__conv_wino_set_enabled(bool on)
{
    pthread_once(&env_once, read_env);
    atomic_store(&enabled, on);
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static bool fits(tg_dtype dt, const tg__conv_geom *g)
{
    return dt == TG_FLOAT32 && g->groups == 1 && g->kh == 3 && g->kw == 3 && g->sh == 1 &&
           g->sw == 1 && g->dh == 1 && g->dw == 1 && g->oh > 0 && g->ow > 0 && g->n > 0;
}

static int64_t tile_count(const tg__conv_geom *g) { return g->n * cdiv(g->oh, 2) * cdiv(g->ow, 2); }

/* the weights' transform (and its packing) costs about 16 o c stores; a
 * frozen storage's is kept between calls (transformed_weights), so then
 * MIN_TILES; otherwise as many tiles as o c / 64, the point where the
 * GEMMs' savings (20 of the 36 multiply-adds per tile, output and input
 * channel) pay for it: ResNet-18's layers on AVX-512 (bench/conv_resnet.c
 * --frozen 0) lost beyond it, up to 2.4x, and gained or tied within it */
static bool enough_tiles(const tg__conv_geom *g, bool against_dense)
{
    int64_t tiles = tile_count(g);
    return tiles >= MIN_TILES && (g->w_serial || !against_dense || tiles * 64 >= g->o * g->c);
}

/* against_dense: the alternative is the dense path (the forward product),
 * else the slower direct kernels (the input gradient), against which the
 * weights' transform pays from MIN_TILES on */
static bool takes(tg_dtype dt, const tg__conv_geom *g, bool against_dense)
{
    pthread_once(&env_once, read_env);
    return atomic_load(&enabled) && tg__conv_get_mode() == TG_CONV_AUTO && fits(dt, g) &&
           g->c >= MIN_CHANNELS && g->o >= MIN_CHANNELS && enough_tiles(g, against_dense);
}

/* On Zen 5 (AMD family 1Ah) with AVX-512 and more than one thread, the
 * dense path's tiles run the forward of the layers they take faster:
 * ResNet-18 through tg bench onnx, two threads, alternating runs, 12.3 ms
 * against 13.3 at batch 1, 101 against 113 at batch 8 (its 3x3 layers
 * read cold, with the transforms' extra bytes shared by both cores),
 * while on one thread Winograd's stays ahead (21.3 against 21.9 ms, 156
 * and 171 against 179 and 183 at batch 8), as it does at AVX2 on the
 * same CPU (20.4 against 23.2 ms on two threads) and on Zen 4 at AVX-512.
 * Decided by the threads asked for, not by whether this call runs inside
 * a parallel region: the graph's executors (serial, or nodes side by
 * side) then give the same bits; only the thread count set changes them
 * (Winograd's sums are formed differently) */
static bool dense_runs_faster(const tg__conv_geom *g)
{
    return tg__cpu_amd_family() == 0x1A && tg__cpu_isa() == TG_ISA_AVX512 &&
           tg_get_num_threads() > 1 && tg__conv_dense_wanted(g);
}

bool tg__conv_wino_wanted(tg_dtype dt, const tg__conv_geom *g)
{
    return takes(dt, g, true) && !dense_runs_faster(g);
}

/* ---- the three transforms (plain loops, one copy per instruction set) ---- */

/* G f G^T for n <= SEG_MAX filters side by side: tap k of filter i at
 * f[k * SEG_MAX + i], xi of its transform to r[xi * SEG_MAX + i] (strides
 * the compiler knows: the loop runs over the filters in vectors) */
TG_ISA_DISPATCH(static, void, weight_tiles, (const float *restrict f, int64_t n, float *restrict r),
                (f, n, r))
{
    for (int64_t i = 0; i < n; i++) {
#define TAP(k) f[(k) * SEG_MAX + i]
        /* G f: column J's four rows are S0 .. S3 */
#define COLUMN(S, J)                                                      \
    float S##0 = TAP(J), S##1 = 0.5f * (TAP(J) + TAP(3 + J) + TAP(6 + J)), \
          S##2 = 0.5f * (TAP(J) - TAP(3 + J) + TAP(6 + J)), S##3 = TAP(6 + J)
        COLUMN(a, 0);
        COLUMN(b, 1);
        COLUMN(c, 2);
#undef COLUMN
#undef TAP
        /* (G f) G^T: row k of it from a_k b_k c_k */
#define ROW(K, A, B, C)                                        \
    r[(4 * K) * SEG_MAX + i] = (A);                            \
    r[(4 * K + 1) * SEG_MAX + i] = 0.5f * ((A) + (B) + (C));   \
    r[(4 * K + 2) * SEG_MAX + i] = 0.5f * ((A) - (B) + (C));   \
    r[(4 * K + 3) * SEG_MAX + i] = (C)
        ROW(0, a0, b0, c0);
        ROW(1, a1, b1, c1);
        ROW(2, a2, b2, c2);
        ROW(3, a3, b3, c3);
#undef ROW
    }
}

/* V's columns for n <= SEG_MAX tiles side by side: row r of the tiles'
 * input split into its even columns ev[r * ld + i] and odd ones od[r * ld
 * + i], so that tile i reads ev[i], od[i], ev[i + 1], od[i + 1] of each row
 * (unit strides: the loop runs over the tiles in vectors); tile i writes
 * v[xi * SEG_MAX + i] (a stride the compiler knows: it vectorizes) */
TG_ISA_DISPATCH(static, void, input_tiles,
                (const float *restrict ev, const float *restrict od, int64_t ld, int64_t n,
                 float *restrict v),
                (ev, od, ld, n, v))
{
    const float *e0 = ev, *e1 = ev + ld, *e2 = ev + 2 * ld, *e3 = ev + 3 * ld;
    const float *o0 = od, *o1 = od + ld, *o2 = od + 2 * ld, *o3 = od + 3 * ld;
    for (int64_t i = 0; i < n; i++) {
        /* B^T d, one column at a time: S0 .. S3 from the column's rows A .. D */
#define COLUMN(S, A, B, C, D) \
    float S##0 = (A) - (C), S##1 = (B) + (C), S##2 = (C) - (B), S##3 = (B) - (D)
        COLUMN(p, e0[i], e1[i], e2[i], e3[i]);
        COLUMN(q, o0[i], o1[i], o2[i], o3[i]);
        COLUMN(r, e0[i + 1], e1[i + 1], e2[i + 1], e3[i + 1]);
        COLUMN(s, o0[i + 1], o1[i + 1], o2[i + 1], o3[i + 1]);
#undef COLUMN
        /* (B^T d) B: row k of it is p_k q_k r_k s_k */
#define ROW(K, P, Q, R, S)                       \
    v[(4 * K) * SEG_MAX + i] = (P) - (R);        \
    v[(4 * K + 1) * SEG_MAX + i] = (Q) + (R);    \
    v[(4 * K + 2) * SEG_MAX + i] = (R) - (Q);    \
    v[(4 * K + 3) * SEG_MAX + i] = (Q) - (S)
        ROW(0, p0, q0, r0, s0);
        ROW(1, p1, q1, r1, s1);
        ROW(2, p2, q2, r2, s2);
        ROW(3, p3, q3, r3, s3);
#undef ROW
    }
}

/* ev[i] = p[2i], od[i] = p[2i + 1] for i < n */
TG_ISA_DISPATCH(static, void, split_row,
                (const float *restrict p, int64_t n, float *restrict ev, float *restrict od),
                (p, n, ev, od))
{
    for (int64_t i = 0; i < n; i++) {
        ev[i] = p[2 * i];
        od[i] = p[2 * i + 1];
    }
}

/* the 2x2 outputs of n tiles from m[xi * ms + i]: out[r * ld + 2i + j] */
TG_ISA_DISPATCH(static, void, output_tiles,
                (const float *restrict m, int64_t ms, int64_t n, float *restrict out, int64_t ld),
                (m, ms, n, out, ld))
{
    for (int64_t i = 0; i < n; i++) {
        float s[2][4];
        for (int j = 0; j < 4; j++) { /* A^T m */
            float m0 = m[j * ms + i], m1 = m[(4 + j) * ms + i];
            float m2 = m[(8 + j) * ms + i], m3 = m[(12 + j) * ms + i];
            s[0][j] = m0 + m1 + m2;
            s[1][j] = m1 - m2 - m3;
        }
        for (int r = 0; r < 2; r++) { /* (A^T m) A */
            out[r * ld + 2 * i] = s[r][0] + s[r][1] + s[r][2];
            out[r * ld + 2 * i + 1] = s[r][1] - s[r][2] - s[r][3];
        }
    }
}

/* y[i] = relu?(o[i] + bias (+ res[i])), relu as the op: NaN passes */
TG_ISA_DISPATCH(static, void, store_row,
                (const float *restrict o, int64_t n, float bias, const float *restrict res, bool relu,
                 float *restrict y),
                (o, n, bias, res, relu, y))
{
    for (int64_t i = 0; i < n; i++) {
        float v = o[i] + bias;
        if (res)
            v = v + res[i];
        y[i] = !relu || v > 0 || v != v ? v : 0.0f;
    }
}

/* whether every |p[i]| is at most 2^100 (false for NaN and infinities): the
 * transforms add neighbouring values, so a NaN or an infinity would reach
 * outputs the direct product keeps finite, and values near the largest
 * float could overflow in them */
TG_ISA_DISPATCH(static, bool, moderate, (const float *restrict p, int64_t n), (p, n))
{
    const float big = 0x1p100f;
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad |= !(p[i] <= big && p[i] >= -big);
    return !bad;
}

/* ---- blocks of tiles ------------------------------------------------------ */

typedef struct wino_job {
    tg__conv_geom g;
    const tg__gemm_kern *kn; /* the GEMM's micro-kernel: its packed layouts */
    const float *x, *w, *b, *res;
    bool flipped;    /* w is [c][o][3][3], read flipped and transposed (the input gradient) */
    float *u;        /* U, while it is made: [XI][o][c] */
    const float *ua; /* U packed as the GEMM's A: see a_panels */
    float *y;
    bool relu;
    int64_t tw, per_image; /* tile columns per row, tiles per image */
    int64_t tiles, tb;     /* all tiles; the most in a block (M's row length) */
    int64_t t_parts, o_parts; /* shares of the tiles and of the output channels */
    int64_t tbp, kp;       /* tb up to whole B panels, o up to whole A panels */
    atomic_int status;
} wino_job;

/* a block: tiles t0 .. t0 + cnt; V packed as the GEMM's B (b_panels), M
 * [XI][o][tb] */
typedef struct wino_block {
    int64_t t0, cnt;
    int64_t o0, o1; /* the output channels this block computes */
    float *v, *m;
} wino_block;

/* The packed operands, per xi and per chunk q of kc input channels
 * (kcq = min(kc, c - q kc) of them): A, U[xi]'s rows for those channels,
 * kp / mr panels of [kcq][mr]; B, V[xi]'s rows for them, tbp / nr panels
 * of [kcq][nr]. Each xi's chunks follow one another. */
static const float *a_panels(const wino_job *j, int64_t xi, int64_t q)
{
    return j->ua + (xi * j->g.c + q * j->kn->kc) * j->kp;
}

static float *b_panels(const wino_job *j, const wino_block *k, int64_t xi, int64_t q)
{
    return k->v + (xi * j->g.c + q * j->kn->kc) * j->tbp;
}

/* a run of tiles along one tile row: image, tile row, first column, count */
typedef struct segment {
    int64_t img, ty, tx, len;
} segment;

static segment segment_at(const wino_job *j, int64_t t, int64_t end)
{
    int64_t r = t % j->per_image;
    segment s = {t / j->per_image, r / j->tw, r % j->tw, 0};
    s.len = min64(min64(j->tw - s.tx, end - t), SEG_MAX);
    return s;
}

/* the even and odd columns of one input row of a segment's tiles: ev[i]
 * = row[x0 + 2 i], od[i] = row[x0 + 2 i + 1] for i < n, zero outside
 * the w columns, or everywhere when row is NULL (a row of padding); the
 * columns inside split straight from the plane */
static void split_plane_row(const float *row, int64_t x0, int64_t w, int64_t n, float *ev,
                            float *od)
{
    if (!row) {
        memset(ev, 0, (size_t)n * sizeof(float));
        memset(od, 0, (size_t)n * sizeof(float));
        return;
    }
    /* [i0, i1): both columns inside the row */
    int64_t i0 = x0 < 0 ? min64(n, (1 - x0) / 2) : 0;
    int64_t i1 = w - x0 >= 0 ? min64(n, (w - x0) / 2) : 0;
    i1 = i1 > i0 ? i1 : i0;
    for (int64_t i = 0; i < n; i++) {
        if (i == i0 && i1 > i0) {
            split_row(row + x0 + 2 * i0, i1 - i0, ev + i0, od + i0);
            i = i1 - 1;
            continue;
        }
        int64_t e = x0 + 2 * i, o = e + 1;
        ev[i] = e >= 0 && e < w ? row[e] : 0.0f;
        od[i] = o >= 0 && o < w ? row[o] : 0.0f;
    }
}

/* tiles r0 .. r0 + len of the block (v[xi * SEG_MAX + i]) into channel
 * c's rows of the B panels */
static void to_panels(const wino_job *j, const wino_block *k, int64_t c, int64_t r0,
                      int64_t len, const float *v)
{
    const int64_t kc = j->kn->kc, nr = j->kn->nr, q = c / kc;
    const int64_t kcq = min64(kc, j->g.c - q * kc);
    for (int xi = 0; xi < XI; xi++) {
        float *row = b_panels(j, k, xi, q) + (c - q * kc) * nr;
        for (int64_t i = 0; i < len;) {
            int64_t col = r0 + i, run = min64(len - i, nr - col % nr);
            memcpy(row + col / nr * kcq * nr + col % nr, v + xi * SEG_MAX + i,
                   (size_t)run * sizeof(float));
            i += run;
        }
    }
}

/* the columns of the last B panel past the block's tiles: zeros (the
 * micro-kernel computes them, and nothing stores them) */
static void zero_pad_columns(const wino_job *j, const wino_block *k)
{
    const int64_t kc = j->kn->kc, nr = j->kn->nr, used = k->cnt % nr;
    if (!used)
        return;
    for (int xi = 0; xi < XI; xi++)
        for (int64_t q = 0; q * kc < j->g.c; q++) {
            int64_t kcq = min64(kc, j->g.c - q * kc);
            float *last = b_panels(j, k, xi, q) + k->cnt / nr * kcq * nr;
            for (int64_t r = 0; r < kcq; r++)
                memset(last + r * nr + used, 0, (size_t)(nr - used) * sizeof(float));
        }
}

static void input_block(const wino_job *j, const wino_block *k)
{
    const tg__conv_geom *g = &j->g;
    enum { LD = SEG_MAX + 1 };
    float ev[4 * LD], od[4 * LD], v[XI * SEG_MAX];
    const int64_t end = k->t0 + k->cnt;
    for (int64_t c = 0; c < g->c; c++)
        for (int64_t t = k->t0; t < end;) {
            segment s = segment_at(j, t, end);
            const float *plane = j->x + (s.img * g->c + c) * g->h * g->w;
            for (int r = 0; r < 4; r++) { /* the tiles' 4 input rows, padded */
                int64_t iy = 2 * s.ty - g->ph + r;
                split_plane_row(iy >= 0 && iy < g->h ? plane + iy * g->w : NULL,
                                2 * s.tx - g->pw, g->w, s.len + 1, ev + r * LD, od + r * LD);
            }
            input_tiles(ev, od, LD, s.len, v);
            to_panels(j, k, c, t - k->t0, s.len, v);
            t += s.len;
        }
    zero_pad_columns(j, k);
}

/* M[xi] = U[xi] V[xi] over the block's tiles, chunk by chunk of kc input
 * channels (the later ones accumulate), in the GEMM's blocks of rows */
static void gemm_block(const wino_job *j, const wino_block *k)
{
    const tg__gemm_kern *kn = j->kn;
    const int64_t o = j->g.o, kc = kn->kc;
    for (int64_t xi = 0; xi < XI; xi++)
        for (int64_t q = 0; q * kc < j->g.c; q++) {
            int64_t kcq = min64(kc, j->g.c - q * kc);
            const float *a = a_panels(j, xi, q), *b = b_panels(j, k, xi, q);
            for (int64_t i0 = k->o0; i0 < k->o1; i0 += kn->mc)
                kn->macro_ep(min64(kn->mc, k->o1 - i0), k->cnt, kcq, a + i0 * kcq, b,
                             k->m + (xi * o + i0) * j->tb, j->tb, q > 0, NULL);
        }
}

static void output_block(const wino_job *j, const wino_block *k)
{
    const tg__conv_geom *g = &j->g;
    float out[2 * 2 * SEG_MAX];
    const int64_t ld = 2 * SEG_MAX, end = k->t0 + k->cnt, plane = g->oh * g->ow;
    for (int64_t o = k->o0; o < k->o1; o++) {
        float bias = j->b ? j->b[o] : 0.0f;
        for (int64_t t = k->t0; t < end;) {
            segment s = segment_at(j, t, end);
            output_tiles(k->m + o * j->tb + (t - k->t0), g->o * j->tb, s.len, out, ld);
            int64_t ox = 2 * s.tx, cols = min64(2 * s.len, g->ow - ox);
            for (int r = 0; r < 2 && 2 * s.ty + r < g->oh; r++) {
                int64_t at = (s.img * g->o + o) * plane + (2 * s.ty + r) * g->ow + ox;
                store_row(out + r * ld, cols, bias, j->res ? j->res + at : NULL, j->relu,
                          j->y + at);
            }
            t += s.len;
        }
    }
}

/* parts p0 .. p1 of the work, one per thread: the tiles in equal shares
 * (whole vectors of them), and when there are too few tiles for that, the
 * output channels in equal shares (whole panels of the GEMM's rows), each
 * such part transforming the same input tiles. A part's tiles go in blocks
 * of at most tb, as even as whole vectors allow, each block through the
 * three stages on this thread (its V and M stay in this core's cache) */
static void parts_body(void *ctx, int64_t p0, int64_t p1)
{
    wino_job *j = ctx;
    const tg__conv_geom *g = &j->g;
    wino_block k = {
        .v = tg__scratch(TG_SCRATCH_KERNEL0, (size_t)(XI * g->c * j->tbp) * sizeof(float)),
        .m = tg__scratch(TG_SCRATCH_KERNEL1, (size_t)(XI * g->o * j->tb) * sizeof(float))};
    if (!k.v || !k.m) {
        atomic_store(&j->status, TG_ERR_NOMEM);
        return;
    }
    const int64_t mr = j->kn->mr, panels = cdiv(g->o, mr);
    for (int64_t p = p0; p < p1; p++) {
        int64_t tp = p / j->o_parts, op = p % j->o_parts;
        int64_t lo = min64(j->tiles, cdiv(tp * j->tiles / j->t_parts, 16) * 16);
        int64_t hi = tp + 1 == j->t_parts ? j->tiles
                                          : cdiv((tp + 1) * j->tiles / j->t_parts, 16) * 16;
        k.o0 = min64(g->o, op * panels / j->o_parts * mr);
        k.o1 = min64(g->o, (op + 1) * panels / j->o_parts * mr);
        if (hi <= lo || k.o1 <= k.o0)
            continue;
        int64_t size = min64(j->tb, cdiv(cdiv(hi - lo, cdiv(hi - lo, j->tb)), 16) * 16);
        for (k.t0 = lo; k.t0 < hi; k.t0 += size) {
            k.cnt = min64(size, hi - k.t0);
            input_block(j, &k);
            gemm_block(j, &k);
            output_block(j, &k);
        }
    }
}

/* U[xi] = G w G^T for the output channels o0 .. o1 */
/* U[xi][o][ci] = (G w[o][ci] G^T)[xi] for the output channels o0 .. o1,
 * SEG_MAX input channels at a time laid out tap-major first; a flipped w
 * is read as w'[o][ci][k] = w[ci][o][8 - k] */
static void weights_body(void *ctx, int64_t o0, int64_t o1)
{
    wino_job *j = ctx;
    const int64_t c = j->g.c, no = j->g.o;
    float f[9 * SEG_MAX], r[XI * SEG_MAX];
    for (int64_t o = o0; o < o1; o++)
        for (int64_t c0 = 0; c0 < c; c0 += SEG_MAX) {
            int64_t n = min64(SEG_MAX, c - c0);
            for (int64_t i = 0; i < n; i++)
                for (int k = 0; k < 9; k++)
                    f[k * SEG_MAX + i] = j->flipped ? j->w[((c0 + i) * no + o) * 9 + 8 - k]
                                                    : j->w[(o * c + c0 + i) * 9 + k];
            weight_tiles(f, n, r);
            for (int xi = 0; xi < XI; xi++)
                memcpy(j->u + xi * no * c + o * c + c0, r + xi * SEG_MAX,
                       (size_t)n * sizeof(float));
        }
}

/* U[xi] into the GEMM's A panels */
static void pack_body(void *ctx, int64_t xi0, int64_t xi1)
{
    wino_job *j = ctx;
    const int64_t c = j->g.c, kc = j->kn->kc;
    for (int64_t xi = xi0; xi < xi1; xi++)
        for (int64_t q = 0; q * kc < c; q++)
            j->kn->pack_a(false, j->u + xi * j->g.o * c + q * kc, c, j->g.o,
                          min64(kc, c - q * kc), 1.0, (float *)a_panels(j, xi, q));
}

/* U packed as the GEMM's A: kept between calls when the weights are
 * frozen (an ONNX model's initializers), else made in the caller's
 * scratch; NULL with *why TG_OK when the weights are not all moderate(),
 * else TG_ERR_NOMEM */
static const float *transformed_weights(const wino_job *job, tg__pack_entry **kept,
                                        tg_status *why)
{
    const tg__conv_geom *g = &job->g;
    size_t bytes = (size_t)XI * (size_t)(job->kp * g->c) * sizeof(float);
    bool ready = false;
    float *ua = NULL;
    *kept = NULL;
    *why = TG_OK;
    if (g->w_serial) {
        tg__pack_key key = {.serial = g->w_serial, .version = g->w_version, .data = job->w,
                            .kern = job->kn, .layout = {g->o, g->c, 3, 3, XI, job->flipped}};
        ua = tg__pack_cache_get(&key, bytes, &ready, kept);
    }
    if (ready)
        return ua;
    if (!moderate(job->w, g->o * g->c * 9)) {
        tg__pack_cache_release(*kept, false);
        return NULL;
    }
    if (!ua)
        ua = tg__scratch(TG_SCRATCH_SHARED, bytes);
    float *u = tg__scratch(TG_SCRATCH_KERNEL2, (size_t)(XI * g->o * g->c) * sizeof(float));
    if (!ua || !u) {
        tg__pack_cache_release(*kept, false);
        *why = TG_ERR_NOMEM;
        return NULL;
    }
    wino_job j = *job;
    j.u = u, j.ua = ua;
    tg_parallel_for(g->o, 1, weights_body, &j);
    tg_parallel_for(XI, 1, pack_body, &j);
    return ua;
}

/* the most tiles a block takes: V and M within BLOCK_BYTES, whole panels
 * of the GEMM's nr columns */
static int64_t block_tiles(const tg__conv_geom *g, int64_t nr)
{
    int64_t most = BLOCK_BYTES / ((int64_t)XI * (int64_t)sizeof(float) * (g->c + g->o));
    return most < MIN_BLOCK ? cdiv(MIN_BLOCK, nr) * nr : most / nr * nr;
}

/* the parts: a share of the tiles per thread while each gets MIN_SHARE,
 * else the output channels shared too (a panel of the GEMM's rows each
 * at least) */
static void split(wino_job *j)
{
    int64_t threads = tg_in_parallel_region() ? 1 : tg_get_num_threads();
    j->t_parts = min64(threads, j->tiles / MIN_SHARE);
    j->t_parts = j->t_parts < 1 ? 1 : j->t_parts;
    j->o_parts = min64(threads / j->t_parts, cdiv(j->g.o, j->kn->mr));
}

/* the product of x with w, or with w flipped and transposed */
static bool run(tg_dtype dt, const tg__conv_geom *g, const void *x, const void *w, bool flipped,
                const void *b, const void *res, bool relu, void *y, tg_status *st)
{
    int64_t tiles = tile_count(g);
    if (!fits(dt, g) || !moderate(x, g->n * g->c * g->h * g->w))
        return false;
    wino_job j = {.g = *g, .kn = &tg__gemm_arch_now()->k[0], .x = x, .w = w,
                  .flipped = flipped, .b = b, .res = res, .y = y, .relu = relu,
                  .tw = cdiv(g->ow, 2), .per_image = cdiv(g->oh, 2) * cdiv(g->ow, 2),
                  .tiles = tiles};
    j.tb = block_tiles(g, j.kn->nr);
    split(&j);
    j.tbp = cdiv(j.tb, j.kn->nr) * j.kn->nr;
    j.kp = cdiv(g->o, j.kn->mr) * j.kn->mr;
    atomic_init(&j.status, TG_OK);
    tg__pack_entry *kept;
    j.ua = transformed_weights(&j, &kept, st);
    if (!j.ua)
        return *st != TG_OK; /* out of memory: said; weights too large: not taken */
    tg_parallel_for(j.t_parts * j.o_parts, 1, parts_body, &j);
    tg__pack_cache_release(kept, true);
    *st = (tg_status)atomic_load(&j.status);
    return true;
}

bool tg__conv_wino_forward(tg_dtype dt, const tg__conv_geom *g, const void *x, const void *w,
                           const void *b, const void *res, bool relu, void *y, tg_status *st)
{
    return run(dt, g, x, w, false, b, res, relu, y, st);
}

/* dx = dy (*) w flipped and transposed: the input gradient of a 3x3
 * stride-1 convolution padded by p is the forward product of dy padded by
 * 2 - p with w'[c][o][i][j] = w[o][c][2 - i][2 - j], which the weights'
 * transform reads in place */
bool tg__conv_wino_grad_input(tg_dtype dt, const tg__conv_geom *g, const void *dy,
                              const void *w, void *dx, tg_status *st)
{
    if (!fits(dt, g) || g->ph > 2 || g->pw > 2)
        return false;
    tg__conv_geom t = {.n = g->n, .c = g->o, .h = g->oh, .w = g->ow, .o = g->c, .kh = 3,
                       .kw = 3, .oh = g->h, .ow = g->w, .sh = 1, .sw = 1, .ph = 2 - g->ph,
                       .pw = 2 - g->pw, .dh = 1, .dw = 1, .groups = 1};
    return takes(dt, &t, false) && run(dt, &t, dy, w, true, NULL, NULL, false, dx, st);
}
