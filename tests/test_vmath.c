/* The vectorizable float32 exp (both ranges), erf, erfc, sigmoid and tanh
 * of kernels/cpu/vmath.h
 * against double-precision libm over dense grids: the ulp bounds its
 * header promises, the edges (0, signs, the region boundary at 0.9, the
 * clamps, infinities, NaN), and that a loop over them vectorizes to the
 * same bits as one element at a time (no FP contraction). */
#include "harness.h"
#include "kernels/cpu/vmath.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

/* distance in float32 ulps between got and the double reference */
static double ulps(float got, double want)
{
    double u = nextafterf((float)fabs(want), INFINITY) - (float)fabs(want);
    return fabs((double)got - want) / u;
}

static void test_exp_accuracy(void)
{
    double worst = 0;
    for (float x = -87.0f; x <= 88.3f; x += 0.000731f) {
        double e = ulps(tg__vexpf(x), exp((double)x));
        worst = e > worst ? e : worst;
    }
    CHECK(worst <= 2.0);
    if (worst > 2.0)
        printf("exp: worst %.2f ulp\n", worst);
    CHECK(tg__vexpf(0.0f) == 1.0f);
    CHECK(tg__vexpf(-100.0f) == 0.0f);
    CHECK(tg__vexpf(-INFINITY) == 0.0f);
    CHECK(isinf(tg__vexpf(89.0f)) && isinf(tg__vexpf(INFINITY)));
    CHECK(isnan(tg__vexpf(NAN)));
}

/* the whole-range exp (the exp op's): denormal results counted in units
 * of the least denormal, as libm rounds them */
static double ulps_or_denormal(float got, double want)
{
    return want < FLT_MIN ? fabs((double)got - want) / 0x1p-149 : ulps(got, want);
}

static void test_exp_sigmoid_tanh_whole_range(void)
{
    double we = 0, ws = 0, wt = 0;
    for (float x = -104.0f; x <= 88.72f; x += 0.000377f)
        we = fmax(we, ulps_or_denormal(tg__vexpf_full(x), exp((double)x)));
    for (float x = -110.0f; x <= 30.0f; x += 0.000311f)
        ws = fmax(ws, ulps_or_denormal(tg__vsigmoidf(x), 1 / (1 + exp(-(double)x))));
    for (float x = -12.0f; x <= 12.0f; x += 0.0000713f)
        wt = fmax(wt, ulps(tg__vtanhf(x), tanh((double)x)));
    for (float x = 1e-30f; x < 0.6f; x *= 1.001f) { /* tanh's relative accuracy near 0 */
        wt = fmax(wt, ulps(tg__vtanhf(x), tanh((double)x)));
        wt = fmax(wt, ulps(tg__vtanhf(-x), tanh(-(double)x)));
    }
    CHECK(we <= 1.5 && ws <= 3.0 && wt <= 2.0);
    if (we > 1.5 || ws > 3.0 || wt > 2.0)
        printf("exp %.2f, sigmoid %.2f, tanh %.2f ulp\n", we, ws, wt);
    CHECK(tg__vexpf_full(88.72f) < INFINITY && isinf(tg__vexpf_full(88.73f)));
    CHECK(tg__vexpf_full(-103.0f) > 0 && tg__vexpf_full(-104.5f) == 0);
    CHECK(tg__vexpf_full(-INFINITY) == 0 && isinf(tg__vexpf_full(INFINITY)));
    CHECK(tg__vsigmoidf(-INFINITY) == 0 && tg__vsigmoidf(INFINITY) == 1 &&
          tg__vsigmoidf(0) == 0.5f);
    CHECK(tg__vtanhf(INFINITY) == 1 && tg__vtanhf(-INFINITY) == -1);
    CHECK(signbit(tg__vtanhf(-0.0f)) && tg__vtanhf(0.0f) == 0);
    CHECK(isnan(tg__vexpf_full(NAN)) && isnan(tg__vsigmoidf(NAN)) && isnan(tg__vtanhf(NAN)));
}

static void test_erf_accuracy(void)
{
    double worst_erf = 0, worst_erfc = 0;
    for (float x = -10.5f; x <= 10.5f; x += 0.0001237f) {
        double e = ulps(tg__verff(x), erf((double)x));
        worst_erf = e > worst_erf ? e : worst_erf;
        double ref = erfc((double)x);
        if (ref > FLT_MIN) {
            double c = ulps(tg__verfcf(x), ref);
            worst_erfc = c > worst_erfc ? c : worst_erfc;
        }
    }
    /* small arguments: erf(x) ~ 2x / sqrt(pi), relative accuracy kept */
    for (float x = 1e-30f; x < 0.9f; x *= 1.01f) {
        double e = ulps(tg__verff(x), erf((double)x));
        worst_erf = e > worst_erf ? e : worst_erf;
    }
    CHECK(worst_erf <= 4.0);
    CHECK(worst_erfc <= 6.0);
    if (worst_erf > 4.0 || worst_erfc > 6.0)
        printf("erf: worst %.2f ulp, erfc %.2f ulp\n", worst_erf, worst_erfc);
    CHECK(tg__verff(0.0f) == 0.0f && tg__verfcf(0.0f) == 1.0f);
    CHECK(tg__verff(INFINITY) == 1.0f && tg__verff(-INFINITY) == -1.0f);
    CHECK(tg__verfcf(INFINITY) == 0.0f && tg__verfcf(-INFINITY) == 2.0f);
    CHECK(tg__verfcf(30.0f) == 0.0f && tg__verfcf(-30.0f) == 2.0f);
    CHECK(isnan(tg__verff(NAN)) && isnan(tg__verfcf(NAN)));
    /* both sides of the boundaries between the two forms */
    for (float x = 0.44f; x < 0.91f; x += 1e-4f) {
        CHECK(ulps(tg__verfcf(x), erfc((double)x)) <= 6.0);
        CHECK(ulps(tg__verff(x), erf((double)x)) <= 4.0);
        CHECK(ulps(tg__verfcf(-x), erfc(-(double)x)) <= 6.0);
    }
}

/* a loop the compiler vectorizes gives the bits of the scalar calls */
static void test_loop_same_bits(void)
{
    enum { N = 1037 };
    static float x[N], e[N], f[N], g[N], h[N];
    for (int i = 0; i < N; i++)
        x[i] = -9.0f + 18.0f * (float)i / N;
    for (int i = 0; i < N; i++) {
        e[i] = tg__vexpf(x[i]);
        f[i] = tg__verfcf(x[i]);
        g[i] = tg__vsigmoidf(x[i]) + tg__vexpf_full(x[i]);
        h[i] = tg__vtanhf(x[i]);
    }
    int same = 1;
    for (int i = 0; i < N; i++) {
        volatile float xi = x[i]; /* one element at a time */
        same &= e[i] == tg__vexpf(xi) && f[i] == tg__verfcf(xi) &&
                g[i] == tg__vsigmoidf(xi) + tg__vexpf_full(xi) && h[i] == tg__vtanhf(xi);
    }
    CHECK(same);
}

int main(void)
{
    RUN(test_exp_accuracy);
    RUN(test_exp_sigmoid_tanh_whole_range);
    RUN(test_erf_accuracy);
    RUN(test_loop_same_bits);
    return tt_finish();
}
