/* layer_norm's float32 row kernels (layer_norm.h), included by
 * layer_norm_avx512.c, layer_norm_avx2.c and layer_norm_generic.c after
 * they define TG_ARCH.
 *
 * Statistics. A row's sums see deviations from a shift s, not the values:
 * sd = sum(x - s), sq = sum((x - s)^2), c = sd / K, the mean s + c and
 * var = sq / K - c^2. s is the mean of the row's first 8 elements (of all
 * of them in shorter rows); where it lies more than a standard deviation
 * from the mean (c^2 > var), the difference would cancel more than a bit,
 * and the row is summed again about s + c, which leaves a c near 0. So a
 * row of mean 1e4 and std 1 sums numbers near 1, and var keeps float
 * precision (the naive E[x^2] - E[x]^2 loses everything there; PyTorch's
 * float Welford loses the mean's last bits, 3e-3 of y). y = ((x - s) - c)
 * invstd w + b. A row whose float sums are not finite (an inf or NaN in
 * it, or squares that overflow a float) gets its statistics in double, as
 * the float64 kernels take them.
 *
 * Every sum runs over LN_L lanes, element k of each whole block of LN_L
 * going to lane k mod LN_L, then blocks of 8 into lanes 0-7, the last
 * elements one after the other into a scalar, then the lanes fold in a
 * pairwise tree (lane j += lane j + half, halving) and add the scalar
 * (the blocks of LN_L are summed LN_BLOCK at a time, LN_SUM2).
 * The lanes are held as registers of the build's width (2 with AVX-512, 4
 * with AVX2, 8 with SSE), never as one wider vector (GCC keeps those in
 * memory), and every build does the same operations in the same order
 * with FP contraction off: the same bits at every level. 32 lanes give a
 * row of 128 floats 4 dependent adds per lane where AVX-512 has 2
 * registers, enough to hide their latency. */
#include "kernels/cpu/layer_norm.h"
#include "kernels/cpu/simd.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define LN_L 32
#define LN_BLOCK 8 /* whole blocks of LN_L per partial sum */
#define VF (TG_VEC_BYTES / 4) /* floats per register */
#define NV (LN_L / VF)         /* registers per set of lanes */

typedef float vf __attribute__((vector_size(TG_VEC_BYTES)));
typedef float vfu __attribute__((vector_size(TG_VEC_BYTES), aligned(4), may_alias));

#define LN_UNROLL _Pragma("GCC unroll 8")

static inline vf ldu(const float *p) { return *(const vfu *)p; }

/* Blocks of 8: B8 registers starting at lane 0, loaded by LD8, added by
 * ADD8. A 16-float register holds the 8 in its low half (the high half a
 * copy, computed and dropped: ADD8 keeps the lanes' own high half). */
#if VF == 16
typedef float v8u __attribute__((vector_size(32), aligned(4), may_alias));
#define B8 1
static inline vf ld8(const float *p)
{
    typedef float v8 __attribute__((vector_size(32)));
    v8 h = *(const v8u *)p;
    return __builtin_shufflevector(h, h, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
}
#define ADD8(acc, v)                                                                    \
    ((acc) = __builtin_shufflevector((acc) + (v), (acc), 0, 1, 2, 3, 4, 5, 6, 7, 24, 25, 26, \
                                     27, 28, 29, 30, 31))
#else
#define B8 (8 / VF)
#define ld8 ldu
#define ADD8(acc, v) ((acc) += (v))
#endif

/* the lanes a[0 .. NV) folded pairwise (a is overwritten), plus tail;
 * `all` false: a row shorter than LN_L, whose lanes 8 and up are zeros, so
 * the tree starts at lanes 0-7 (the same sums) */
static inline float ln_fold(vf *a, float tail, bool all)
{
    if (all) {
        LN_UNROLL
        for (int n = NV / 2; n >= 1; n /= 2)
            for (int i = 0; i < n; i++)
                a[i] += a[i + n];
    } else if (VF == 4) {
        a[0] += a[1];
    }
    vf v = a[0];
#if VF == 16
    if (all)
        v += __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14,
                                     15);
    v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7);
    v += __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
#elif VF == 8
    v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 4, 5, 6, 7);
    v += __builtin_shufflevector(v, v, 2, 3, 2, 3, 2, 3, 2, 3);
#else
    v += __builtin_shufflevector(v, v, 2, 3, 2, 3);
#endif
    return (v[0] + v[1]) + tail;
}

/* Two sums over a row of K, into sa and sq, whole blocks of LN_L summed
 * LN_BLOCK at a time before they join the row's lanes (a lane of a long row
 * then adds up K / 32 / LN_BLOCK partial sums, not K / 32 terms: a ramp
 * of 4096 floats kept 12 ulp of y, now as PyTorch's Welford): EXPR_V(LD, o, da, dq) sets the
 * terms da, dq of a register of elements at offset o (read by LD), EXPR_S(k,
 * da, dq) those of element k */
#define LN_SUM2(K, EXPR_V, EXPR_S, sa, sq)                                    \
    do {                                                                            \
        float ta = 0, tq = 0;                                                       \
        if ((K) < 8) { /* the tail is the row */                                  \
            for (int64_t k = 0; k < (K); k++) {                                     \
                float da, dq;                                                       \
                EXPR_S(k, da, dq);                                                  \
                ta += da;                                                           \
                tq += dq;                                                           \
            }                                                                       \
            sa = ta;                                                                \
            sq = tq;                                                                \
            break;                                                                  \
        }                                                                           \
        vf a[NV], q[NV];                                                            \
        for (int i = 0; i < NV; i++)                                                \
            a[i] = q[i] = (vf){0};                                                  \
        int64_t k = 0;                                                              \
        while (k + LN_L <= (K)) {                                                   \
            vf ba[NV], bq[NV];                                                      \
            for (int i = 0; i < NV; i++)                                            \
                ba[i] = bq[i] = (vf){0};                                            \
            for (int it = 0; it < LN_BLOCK && k + LN_L <= (K); it++, k += LN_L)     \
                LN_UNROLL for (int i = 0; i < NV; i++)                              \
                {                                                                   \
                    const int64_t o = k + i * VF;                                   \
                    vf da, dq;                                                      \
                    EXPR_V(ldu, o, da, dq);                                         \
                    ba[i] += da;                                                    \
                    bq[i] += dq;                                                    \
                }                                                                   \
            for (int i = 0; i < NV; i++) {                                          \
                a[i] += ba[i];                                                      \
                q[i] += bq[i];                                                      \
            }                                                                       \
        }                                                                           \
        for (; k + 8 <= (K); k += 8)                                                \
            LN_UNROLL for (int i = 0; i < B8; i++)                                  \
            {                                                                       \
                const int64_t o = k + i * VF;                                       \
                vf da, dq;                                                          \
                EXPR_V(ld8, o, da, dq);                                             \
                ADD8(a[i], da);                                                     \
                ADD8(q[i], dq);                                                     \
            }                                                                       \
        for (; k < (K); k++) {                                                      \
            float da, dq;                                                           \
            EXPR_S(k, da, dq);                                                      \
            ta += da;                                                               \
            tq += dq;                                                               \
        }                                                                           \
        sa = ln_fold(a, ta, (K) >= LN_L);                                           \
        sq = ln_fold(q, tq, (K) >= LN_L);                                           \
    } while (0)

/* sum(x - s), sum((x - s)^2) */
static inline void ln_dev_sums(const float *x, int64_t K, float s, float *sd, float *sq)
{
    const vf sv = (vf){0} + s;
#define DEV_V(LD, o, da, dq) (da = LD(x + (o)) - sv, dq = da * da)
#define DEV_S(k, da, dq) (da = x[k] - s, dq = da * da)
    LN_SUM2(K, DEV_V, DEV_S, *sd, *sq);
#undef DEV_V
#undef DEV_S
}

/* sum(dy w), sum(dy w (x - m)) */
static inline void ln_dots(const float *dy, const float *x, const float *w, int64_t K,
                           float m, float *sg, float *sgx)
{
    const vf mv = (vf){0} + m;
#define DOT_V(LD, o, da, dq) (da = LD(dy + (o)) * LD(w + (o)), dq = da * (LD(x + (o)) - mv))
#define DOT_S(k, da, dq) (da = dy[k] * w[k], dq = da * (x[k] - m))
    LN_SUM2(K, DOT_V, DOT_S, *sg, *sgx);
#undef DOT_V
#undef DOT_S
}

/* ---- forward -------------------------------------------------------------------- */

/* Rows are taken LN_RB at a time: first the sums of every row of the
 * block, then the scalars of all of them at once (divisions and square
 * roots in vectors, where row by row their latency was most of a short
 * row's time), then the outputs. */
#define LN_RB 8

/* a row's first shift: the mean of its first 8 elements (of all, in
 * shorter rows), within a standard deviation of the row's mean but for
 * rows unlike their start (those are summed again) */
static inline float ln_first_shift(const float *x, int64_t K, float inv_k)
{
    if (K < 8) {
        float s = x[0];
        for (int64_t k = 1; k < K; k++)
            s += x[k];
        return s * inv_k;
    }
    return (((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]))) * 0.125f;
}

/* the statistics from the sums about s: c = mean - s, the mean square
 * msq; false when the row must be summed again (c^2 > var: the
 * difference msq - c^2 would cancel a bit or more; or not finite) */
static inline bool ln_moments(float sd, float sq, double inv_k, double *c, double *var)
{
    const double cc = (double)sd * inv_k, msq = (double)sq * inv_k;
    *c = cc;
    *var = msq - cc * cc;
    return 2 * cc * cc <= msq && msq < INFINITY;
}

/* the float64 kernels' statistics of a row (two passes in double) */
static void ln_stats_double(const float *x, int64_t K, double *mean, double *var)
{
    double s = 0, q = 0;
    for (int64_t k = 0; k < K; k++)
        s += x[k];
    *mean = s / (double)K;
    for (int64_t k = 0; k < K; k++)
        q += (x[k] - *mean) * (x[k] - *mean);
    *var = q / (double)K;
}

/* a row ln_moments refused: summed again about s + c, or, when its sums
 * are not finite, in double (s = 0, c the mean) */
static void ln_stats_again(const float *x, int64_t K, double inv_k, float *s, double *c,
                           double *var)
{
    float sd, sq;
    if (isfinite(*c) && isfinite(*s + (float)*c)) {
        *s += (float)*c;
        ln_dev_sums(x, K, *s, &sd, &sq);
        ln_moments(sd, sq, inv_k, c, var);
        if (isfinite(*var))
            return;
    }
    *s = 0;
    ln_stats_double(x, K, c, var);
}

/* y = ((x - s) - c) r w + b */
static inline void ln_apply(float *restrict y, const float *restrict x,
                            const float *restrict w, const float *restrict b, int64_t K,
                            float s, float c, float r)
{
    for (int64_t k = 0; k < K; k++)
        y[k] = ((x[k] - s) - c) * r * w[k] + b[k];
}

/* rows r0 .. r0 + n - 1, n <= LN_RB */
static inline void ln_fwd_block(const tg__ln32_fwd *t, int64_t r0, int n)
{
    const int64_t K = t->K;
    const double inv_k = 1.0 / (double)K;
    float s[LN_RB], sd[LN_RB] = {0}, sq[LN_RB] = {0};
    double c[LN_RB], var[LN_RB], r[LN_RB];
    bool ok[LN_RB], all = true;
    for (int i = 0; i < n; i++) {
        const float *x = t->x + (r0 + i) * K;
        s[i] = ln_first_shift(x, K, (float)inv_k);
        ln_dev_sums(x, K, s[i], &sd[i], &sq[i]);
    }
    for (int i = 0; i < LN_RB; i++) {
        ok[i] = ln_moments(sd[i], sq[i], inv_k, &c[i], &var[i]);
        all &= ok[i];
    }
    if (!all)
        for (int i = 0; i < n; i++)
            if (!ok[i])
                ln_stats_again(t->x + (r0 + i) * K, K, inv_k, &s[i], &c[i], &var[i]);
    for (int i = 0; i < LN_RB; i++) {
        var[i] = var[i] < 0 ? 0 : var[i]; /* keeps a NaN */
        r[i] = 1.0 / sqrt(var[i] + t->eps);
    }
    for (int i = 0; i < n; i++) {
        const int64_t o = (r0 + i) * K;
        ln_apply(t->y + o, t->x + o, t->w, t->b, K, s[i], (float)c[i], (float)r[i]);
        t->mean[r0 + i] = (float)((double)s[i] + c[i]);
        t->var[r0 + i] = (float)var[i];
    }
}

void TG_ARCH_FN(tg__ln32_fwd_rows)(const tg__ln32_fwd *t, int64_t r0, int64_t r1)
{
    for (int64_t r = r0; r < r1; r += LN_RB)
        ln_fwd_block(t, r, r1 - r < LN_RB ? (int)(r1 - r) : LN_RB);
}

/* ---- backward ------------------------------------------------------------------- */

/* dx = r dy w + (x - m) k2 + k3 for a row, and its terms of dweight
 * (dy (x - m) r) and dbias (dy) added to pw and pb */
static inline void ln_dx_row(float *restrict dx, float *restrict pw, float *restrict pb,
                             const float *restrict x, const float *restrict dy,
                             const float *restrict w, int64_t K, float m, float r, float k2,
                             float k3)
{
    for (int64_t k = 0; k < K; k++) {
        const float xc = x[k] - m;
        dx[k] = (r * (dy[k] * w[k]) + xc * k2) + k3;
        pw[k] += dy[k] * (xc * r);
        pb[k] += dy[k];
    }
}

/* the same for two rows (a then b, each row's sums and constants at index
 * 0 and 1), adding to pw and pb in the order one row at a time would:
 * half the loads and stores of pw and pb */
static inline void ln_dx_rows2(float *restrict dxa, float *restrict dxb, float *restrict pw,
                               float *restrict pb, const float *restrict xa,
                               const float *restrict xb, const float *restrict dya,
                               const float *restrict dyb, const float *restrict w, int64_t K,
                               const float *m, const double *r, const double *k2,
                               const double *k3)
{
    const float ma = m[0], ra = (float)r[0], k2a = (float)k2[0], k3a = (float)k3[0];
    const float mb = m[1], rb = (float)r[1], k2b = (float)k2[1], k3b = (float)k3[1];
    for (int64_t k = 0; k < K; k++) {
        const float xca = xa[k] - ma, xcb = xb[k] - mb;
        dxa[k] = (ra * (dya[k] * w[k]) + xca * k2a) + k3a;
        dxb[k] = (rb * (dyb[k] * w[k]) + xcb * k2b) + k3b;
        pw[k] = (pw[k] + dya[k] * (xca * ra)) + dyb[k] * (xcb * rb);
        pb[k] = (pb[k] + dya[k]) + dyb[k];
    }
}

/* rows r0 .. r0 + n - 1 (n <= LN_RB) of a part whose sums are pw, pb */
static inline void ln_bwd_block(const tg__ln32_bwd *t, int64_t r0, int n, float *pw,
                                float *pb)
{
    const int64_t K = t->K;
    const double inv_k = 1.0 / (double)K;
    float sg[LN_RB] = {0}, sgx[LN_RB] = {0};
    double var[LN_RB] = {0}, dmean[LN_RB] = {0}, dvar[LN_RB] = {0};
    double r[LN_RB], k2[LN_RB], k3[LN_RB];
    for (int i = 0; i < n; i++) {
        const int64_t o = (r0 + i) * K;
        ln_dots(t->dy + o, t->x + o, t->w, K, t->mean[r0 + i], &sg[i], &sgx[i]);
        var[i] = t->var[r0 + i];
        dmean[i] = t->dmean[r0 + i];
        dvar[i] = t->dvar[r0 + i];
    }
    for (int i = 0; i < LN_RB; i++) {
        r[i] = 1.0 / sqrt(var[i] + t->eps);
        k2[i] = (2.0 * dvar[i] - r[i] * r[i] * r[i] * sgx[i]) * inv_k;
        k3[i] = (dmean[i] - r[i] * sg[i]) * inv_k;
    }
    int i = 0;
    for (; i + 2 <= n; i += 2) {
        const int64_t o = (r0 + i) * K;
        ln_dx_rows2(t->dx + o, t->dx + o + K, pw, pb, t->x + o, t->x + o + K, t->dy + o,
                    t->dy + o + K, t->w, K, t->mean + r0 + i, r + i, k2 + i, k3 + i);
    }
    for (; i < n; i++) {
        const int64_t o = (r0 + i) * K;
        ln_dx_row(t->dx + o, pw, pb, t->x + o, t->dy + o, t->w, K, t->mean[r0 + i],
                  (float)r[i], (float)k2[i], (float)k3[i]);
    }
}

void TG_ARCH_FN(tg__ln32_bwd_parts)(const tg__ln32_bwd *t, int64_t p0, int64_t p1)
{
    const int64_t K = t->K;
    for (int64_t p = p0; p < p1; p++) {
        float *pw = t->parts + 2 * K * p, *pb = pw + K;
        memset(pw, 0, (size_t)(2 * K) * sizeof(float));
        const int64_t end = (p + 1) * t->rows_per < t->R ? (p + 1) * t->rows_per : t->R;
        for (int64_t r = p * t->rows_per; r < end; r += LN_RB)
            ln_bwd_block(t, r, end - r < LN_RB ? (int)(end - r) : LN_RB, pw, pb);
    }
}
