/* The vectorizable float32 exp, erf and erfc of kernels/cpu/vmath.h
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
    static float x[N], e[N], f[N];
    for (int i = 0; i < N; i++)
        x[i] = -9.0f + 18.0f * (float)i / N;
    for (int i = 0; i < N; i++) {
        e[i] = tg__vexpf(x[i]);
        f[i] = tg__verfcf(x[i]);
    }
    int same = 1;
    for (int i = 0; i < N; i++) {
        volatile float xi = x[i]; /* one element at a time */
        same &= e[i] == tg__vexpf(xi) && f[i] == tg__verfcf(xi);
    }
    CHECK(same);
}

int main(void)
{
    RUN(test_exp_accuracy);
    RUN(test_erf_accuracy);
    RUN(test_loop_same_bits);
    return tt_finish();
}
