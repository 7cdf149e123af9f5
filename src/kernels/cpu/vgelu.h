/* Float32 GELU, exact (erf) and tanh forms, and their slopes,
 * written so that loops over them vectorize (as kernels/cpu/vmath.h: no
 * branches, selects by bits, no calls, no FP contraction, so every ISA copy
 * gives the same bits).
 *
 * The exact form needs Phi(x), the normal CDF, to a relative accuracy for
 * x << 0, where x Phi(x) is tiny. Every lane takes one path: with a = |x|,
 *   Q(a) = Phi(-a) = E(a) M(a),  E(a) = exp(-a^2 / 2),
 * and M (Mills' ratio times 1 / sqrt(2 pi): 0.5 at 0, ~ 1 / (a sqrt(2 pi))
 * beyond) a rational function of a, degree 4 over 5 (all coefficients
 * positive, so Horner's rule is stable; fitted for this file, weighted
 * least squares toward minimax in double precision: relative error 5e-9
 * on [0, 13.25]). Then Phi(x) = Q for x < 0 and 1 - Q for x >= 0, and
 * gelu'(x) = Phi(x) + x phi(x) with phi = E / sqrt(2 pi) shares E and M.
 * The former form computed erf's polynomial and erfc's tail (a division,
 * a 10-term polynomial, exp and a series) for every lane and selected one.
 *
 * a^2 / 2 is split as h^2 / 2 + d / 2, h = a cut to 12 significant bits
 * (h^2 exact), d = (a - h)(a + h); the small part joins exp's reduced
 * argument, so E carries no rounding of a^2 (one ulp of 87 is 60 ulps of
 * E there). a is clamped at 13.25, where E's exponent reaches -127 and the
 * scale is +0: E is 0 beyond, without a select. The work is throughput
 * bound (about 55 vector instructions an element, the division hidden),
 * so the selects are bit operations wherever one instruction does.
 *
 * The tanh form, 0.5 x (1 + tanh u) with u = sqrt(2/pi) (x + 0.044715 x^3),
 * is x sigmoid(2u) = x / (1 + exp(-2u)): one exp and a division, and no
 * cancellation in 1 + tanh u for x << 0 (libm's tanhf was a scalar call).
 *
 * tests/test_vgelu.c sweeps float32 inputs against double precision
 * (measured maxima in brackets): within 8 ulp for gelu down to -13.2,
 * where it leaves the normal floats (6.8; the former kernel 188 near
 * -12.8), 4 ulp of the terms' size for the slope (3.8), and for the tanh
 * form and its slope 4 ulp per unit of the form's condition number (2.5,
 * 2.9), since the float32 rounding of u is amplified by exp: 1 above -1,
 * about 200 at -9. The slope and gelu near the clamp (-13.25) flush to 0
 * where the double values are still normal floats below 1e-36. */
#ifndef TG_KERNELS_CPU_VGELU_H
#define TG_KERNELS_CPU_VGELU_H

#include "kernels/cpu/vmath.h"

#define TG__GELU_AMAX 13.25f
#define TG__INV_SQRT_2PI_F 0.3989422804f

/* exp(-(s + d) / 2) for s + d in [0, 176.6], s = h^2 and d as below:
 * with n = round(-(s + d) / (2 ln2)) and ln2 = C1 - C2 (Cody and Waite),
 * -2r = s + d + 2n ln2 = (s + 2n C1) + d - 2n C2, where s + 2n C1 is exact
 * (n = 0, or h >= 0.8 with 12 bits: both are multiples of 2^-24 less than
 * 1 apart); d joins the reduced argument */
static inline float tg__vexpf_half_neg(float s, float d)
{
    float k = (s + d) * -0.721347520444481703680f + 12582912.0f;
    float n = k - 12582912.0f;
    float t = s + n * 1.38671875f;
    t = t - n * 4.24388880e-4f;
    t = t + d;
    return tg__vexp_poly(-0.5f * t) * tg__vexp_scale(k);
}

/* E(a) = exp(-a^2 / 2) for a in [0, 13.25] (0 at 13.25; NaN passes):
 * a^2 = h^2 + d, h = a cut to 12 significant bits (h^2 exact) and
 * d = (a - h)(a + h) */
static inline float tg__vgauss(float ac)
{
    uint32_t b;
    memcpy(&b, &ac, sizeof b);
    b &= 0xFFFFF000u;
    float h;
    memcpy(&h, &b, sizeof h);
    return tg__vexpf_half_neg(h * h, (ac - h) * (ac + h));
}

/* M(a) = Phi(-a) / E(a) for a in [0, 13.25] (rational, see above); a beyond
 * meets E = 0, and overflow of the polynomials there gives inf / inf: the
 * callers pass a clamped a */
static inline float tg__vgauss_ratio(float a)
{
    float p = 4.0159332566e-03f;
    p = p * a + 3.9955295622e-02f;
    p = p * a + 1.8122074008e-01f;
    p = p * a + 4.3556955457e-01f;
    p = p * a + 5.0000000000e-01f;
    float q = 1.0066307150e-02f;
    q = q * a + 1.0016050190e-01f;
    q = q * a + 4.6415331960e-01f;
    q = q * a + 1.1941258907e+00f;
    q = q * a + 1.6690239906e+00f;
    q = q * a + 1.0f;
    return p / q;
}

/* |x| by its bits (one instruction, where a select takes three) */
static inline float tg__vabs(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    b &= 0x7FFFFFFFu;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* a >= 0 clamped to where tg__vgauss and tg__vgauss_ratio apply, by the
 * bits: an unsigned minimum, which vectorizes as one instruction (a
 * float comparison takes two); inf and NaN become 13.25 (the callers
 * keep NaN through x or the unclamped a) */
static inline float tg__vclamp_gauss(float a)
{
    uint32_t b, lim;
    float amax = TG__GELU_AMAX;
    memcpy(&b, &a, sizeof b);
    memcpy(&lim, &amax, sizeof lim);
    b = b < lim ? b : lim;
    memcpy(&a, &b, sizeof a);
    return a;
}

/* x Phi(x): x E M for x < 0, in that order (E M is subnormal before x
 * brings it back near -13), x (1 - E M) above */
static inline float tg__vgeluf(float x)
{
    float ac = tg__vclamp_gauss(tg__vabs(x));
    float e = tg__vgauss(ac), m = tg__vgauss_ratio(ac);
    return tg__vsel(x < 0, (x * e) * m, x * (1.0f - e * m));
}

/* gelu'(x) = Phi(x) + x phi(x): with g = E (a / sqrt(2 pi) - M), -g for
 * x < 0 and 1 + g above (NaN at +-inf, as a / sqrt(2 pi) is inf there and
 * E 0: PyTorch's 1 + inf * 0 and 0 + -inf * 0) */
static inline float tg__vgelu_slopef(float x)
{
    float a = tg__vabs(x), ac = tg__vclamp_gauss(a);
    float g = tg__vgauss(ac) * (a * TG__INV_SQRT_2PI_F - tg__vgauss_ratio(ac));
    return tg__vsel(x < 0, 0.0f - g, 1.0f + g);
}

#define TG__GELU_BETA_F 0.7978845608f /* sqrt(2 / pi) */
#define TG__GELU_KAPPA_F 0.044715f

/* -2u of the tanh form, in PyTorch's order: sqrt(2/pi) (x + k x^3) */
static inline float tg__vgelu_tanh_arg(float x)
{
    return -2.0f * (TG__GELU_BETA_F * (x + TG__GELU_KAPPA_F * (x * x * x)));
}

/* x sigmoid(2u) (-0 for x << 0, where exp(-2u) is inf; NaN at -inf) */
static inline float tg__vgelu_tanhf(float x)
{
    return x / (1.0f + tg__vexpf(tg__vgelu_tanh_arg(x)));
}

/* the tanh form's slope: with s = sigmoid(2u) and 1 - s (as e s while
 * e = exp(-2u) <= 1, where 1 - s would cancel),
 *   s (1 + x (1 - s) 2 sqrt(2/pi) (1 + 3 k x^2))
 * which is PyTorch's 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) u' */
static inline float tg__vgelu_tanh_slopef(float x)
{
    float e = tg__vexpf(tg__vgelu_tanh_arg(x));
    float s = 1.0f / (1.0f + e);
    float om = tg__vsel(e > 1.0f, 1.0f - s, e * s);
    float du = (2.0f * TG__GELU_BETA_F) * (1.0f + (3.0f * TG__GELU_KAPPA_F) * (x * x));
    return s * (1.0f + x * (om * du));
}

#endif
