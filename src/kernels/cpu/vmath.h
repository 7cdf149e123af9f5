/* Float32 exp, erf, erfc, sigmoid and tanh written so that loops over
 * them vectorize:
 * no branches (both regions are computed and one is selected, by bits:
 * tg__vsel), no calls,
 * integer work on the float's bits only. libm's expf/erff/erfcf are scalar
 * calls; in a GELU or softmax over a million elements they were most of
 * the op's time (and 12% of a transformer layer's training step). GELU
 * now has kernels/cpu/vgelu.h, built on the exp pieces below.
 *
 * Accuracy (tests/test_vmath.c checks it against double libm over dense
 * grids): exp within 2 ulp on [-87, 88.3]; erf within 4 ulp and erfc within 6 where
 * the result is a normal float.
 * Below exp's range the result is 0 (libm gives denormals), above 88.37
 * it is inf (libm: finite up to 88.72); NaN passes through. These serve
 * arguments <= 0 (softmax, erfc's tail), where those edges never matter.
 *
 * The polynomial coefficients were fitted for this file (weighted least
 * squares toward minimax over Chebyshev nodes in double precision):
 *   erf(x) = x P(x^2) on |x| < 0.9 (relative error 1.2e-8),
 *   erfc(t) = exp(-t^2) R(1 / (1 + t/2)) on [0.45, 10] (1.3e-9; erfc
 *   takes it from 0.45 on, where 1 - erf would lose bits to cancellation),
 *   exp(r) = E(r) on [-ln2/2, ln2/2] (1.9e-9).
 * Built without FP contraction, so every ISA copy gives the same bits. */
#ifndef TG_KERNELS_CPU_VMATH_H
#define TG_KERNELS_CPU_VMATH_H

#include <stdint.h>
#include <string.h>

/* c ? a : b by the bits: GCC turns a conditional on a float comparison
 * into a branch under -ftrapping-math (the default), and a loop with one
 * does not vectorize; a mask from the comparison's truth value does */
static inline float tg__vsel(int c, float a, float b)
{
    uint32_t m = -(uint32_t)c, x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x = (x & m) | (y & ~m);
    memcpy(&a, &x, sizeof a);
    return a;
}

/* |a| with the sign of b, by the bits */
static inline float tg__vcopysign(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x = (x & 0x7FFFFFFFu) | (y & 0x80000000u);
    memcpy(&a, &x, sizeof a);
    return a;
}

/* the same for doubles */
static inline double tg__vseld(int c, double a, double b)
{
    uint64_t m = -(uint64_t)c, x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x = (x & m) | (y & ~m);
    memcpy(&a, &x, sizeof a);
    return a;
}

#define TG__VEXP_HI 88.3762626647949f  /* ln(2^127.5): n stays <= 127 */
#define TG__VEXP_LO -87.3365447505531f /* ln(FLT_MIN): n stays >= -126 */

/* e^r on [-ln2/2, ln2/2] (slightly beyond: the reduced arguments of
 * tg__vexpf_sum) */
static inline float tg__vexp_poly(float r)
{
    float p = 1.383684060e-03f;
    p = p * r + 8.374815775e-03f;
    p = p * r + 4.166822567e-02f;
    p = p * r + 1.666642017e-01f;
    p = p * r + 4.999999208e-01f;
    p = p * r + 1.000000036e+00f;
    return p * r + 1.0f;
}

/* 2^n for k = n + 1.5 * 2^23 (n in the low bits), n in [-127, 127]:
 * n = -127 gives +0 */
static inline float tg__vexp_scale(float k)
{
    uint32_t kb, sb;
    memcpy(&kb, &k, sizeof kb);
    sb = (kb - 0x4B400000u + 127u) << 23;
    float scale;
    memcpy(&scale, &sb, sizeof scale);
    return scale;
}

/* x = n ln2 + r: returns r, n in *n and n + 1.5 * 2^23 in *k (n in k's
 * low bits, what tg__vexp_scale reads) */
static inline float tg__vexp_reduce(float xc, float *n, float *k)
{
    /* n = round(x / ln2) in the low bits of k (1.5 * 2^23 shifts them there) */
    *k = xc * 1.44269504088896341f + 12582912.0f;
    *n = *k - 12582912.0f;
    /* r = x - n ln2 in two steps (Cody and Waite): n * 0.693359375 is exact */
    float r = xc - *n * 0.693359375f;
    return r + *n * 2.12194440e-4f;
}

static inline float tg__vexpf(float x)
{
    float xc = tg__vsel(x > TG__VEXP_HI, TG__VEXP_HI, x); /* NaN: comparisons false */
    xc = tg__vsel(xc < TG__VEXP_LO, TG__VEXP_LO, xc);
    float n, k, r = tg__vexp_reduce(xc, &n, &k);
    float y = tg__vexp_poly(r) * tg__vexp_scale(k);
    y = tg__vsel(x > TG__VEXP_HI, __builtin_inff(), y);
    return tg__vsel(x < TG__VEXP_LO, 0.0f, y);
}

/* e^x over float32's whole range, as libm's expf: denormal results down
 * to e^-103.97 (0 below), finite up to 88.72 (inf above); 2^n applied as
 * two factors 2^(n/2) 2^(n - n/2), each a normal float, so the product
 * rounds once where it is denormal. Within 2 ulp where the result is
 * normal. The exp op's float32 kernel. */
#define TG__VEXPF_FULL_HI 88.7228391116729996f  /* ln(FLT_MAX) */
#define TG__VEXPF_FULL_LO -103.972077083991796f /* ln of the least denormal / 2 */
static inline float tg__vexpf_full(float x)
{
    float xc = tg__vsel(x > TG__VEXPF_FULL_HI, TG__VEXPF_FULL_HI, x);
    xc = tg__vsel(xc < TG__VEXPF_FULL_LO, TG__VEXPF_FULL_LO, xc);
    float n, k, r = tg__vexp_reduce(xc, &n, &k); /* n in -150 .. 128 */
    int32_t ni = (int32_t)n, n1 = ni >> 1, n2 = ni - n1;
    uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float y = tg__vexp_poly(r) * s1 * s2;
    y = tg__vsel(x > TG__VEXPF_FULL_HI, __builtin_inff(), y);
    return tg__vsel(x < TG__VEXPF_FULL_LO, 0.0f, y);
}

/* 1 / (1 + e^-x) from e = e^-|x| (never overflows): 1 / (1 + e) for
 * x >= 0, e / (1 + e) below, as libm-based code computes it; within 3
 * ulp, denormal tails included. NaN passes through. */
static inline float tg__vsigmoidf(float x)
{
    float a = tg__vsel(x < 0, -x, x);
    float e = tg__vexpf_full(-a);
    float r = 1.0f / (1.0f + e);
    return tg__vsel(x < 0, e * r, r);
}

/* tanh: x + x^3 P(x^2) below 0.55 (P fitted for this file: within 0.8
 * ulp there), else sign(x) (1 - 2 / (e^2|x| + 1)), +-1 from |x| 9.1 on
 * (where the float rounds to 1); within 3 ulp. NaN passes through. */
static inline float tg__vtanhf(float x)
{
    float a = tg__vsel(x < 0, -x, x);
    float s = x * x;
    float p = -6.287662778e-03f;
    p = p * s + 2.108205855e-02f;
    p = p * s + -5.385512114e-02f;
    p = p * s + 1.333261728e-01f;
    p = p * s + -3.333331943e-01f;
    float small = tg__vcopysign(x + x * s * p, x); /* tanh(-0) = -0 */
    float ac = tg__vsel(a > 9.1f, 9.1f, a);
    float big = 1.0f - 2.0f / (tg__vexpf_full(2.0f * ac) + 1.0f);
    big = tg__vsel(a > 9.1f, 1.0f, big);
    big = tg__vsel(x < 0, -big, big);
    return tg__vsel(a < 0.55f, small, big); /* NaN: a < 0.55 false, big NaN */
}

/* x P(x^2): erf on |x| < 0.9 */
static inline float tg__verf_small(float x)
{
    float s = x * x;
    float p = -6.090525439e-04f;
    p = p * s + 5.011999934e-03f;
    p = p * s + -2.677893924e-02f;
    p = p * s + 1.128214190e-01f;
    p = p * s + -3.761252344e-01f;
    p = p * s + 1.128379154e+00f;
    return x * p;
}

/* erfc(|x|) for |x| >= 0.45: exp(-t^2) R(u), 0 beyond t = 10 */
static inline float tg__verfc_tail(float a)
{
    float t = tg__vsel(a > 10.0f, 10.0f, a);
    float u = 1.0f / (1.0f + 0.5f * t);
    float r = -7.465573527e-02f;
    r = r * u + 3.522743019e-01f;
    r = r * u + -6.128818621e-01f;
    r = r * u + 4.084238971e-01f;
    r = r * u + -1.095121647e-01f;
    r = r * u + 2.360462019e-01f;
    r = r * u + 2.346408015e-01f;
    r = r * u + 2.836755429e-01f;
    r = r * u + 2.819769488e-01f;
    r = r * u + 3.840528296e-06f;
    /* t^2 = h^2 + d, d = (t - h)(t + h), with h = t cut to 12 significant
     * bits, so h^2 is exact: exp(-t^2) = exp(-h^2) exp(-d) carries no
     * rounding of t^2 (one ulp of 81 is 32 ulps of erfc(9)); 0 <= d < t^2
     * 2^-10 <= 0.1, where five terms of exp's series are within 1e-7 */
    uint32_t tb;
    memcpy(&tb, &t, sizeof tb);
    tb &= 0xFFFFF000u;
    float h;
    memcpy(&h, &tb, sizeof h);
    float d = (t - h) * (t + h);
    float ed = 1.0f - d * (1.0f - d * (0.5f - d * (1.0f / 6.0f - d * (1.0f / 24.0f))));
    float c = tg__vexpf(-(h * h)) * ed * r;
    return tg__vsel(a > 10.0f, 0.0f, c);
}

static inline float tg__verff(float x)
{
    float a = tg__vsel(x < 0, -x, x);
    float c = tg__verfc_tail(a);
    float large = tg__vsel(x < 0, c - 1.0f, 1.0f - c);
    return tg__vsel(a < 0.9f, tg__verf_small(x), large); /* NaN: a < 0.9 false, c NaN */
}

static inline float tg__verfcf(float x)
{
    float a = tg__vsel(x < 0, -x, x);
    float c = tg__verfc_tail(a);
    float large = tg__vsel(x < 0, 2.0f - c, c);
    return tg__vsel(a < 0.45f, 1.0f - tg__verf_small(x), large);
}

#endif
