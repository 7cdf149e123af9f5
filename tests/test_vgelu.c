/* The float32 GELU of kernels/cpu/vgelu.h against double precision: the
 * exact form x Phi(x) and its slope Phi(x) + x phi(x) over float32 inputs
 * sampled by their bits (every 257th float from -13.2 to 6.5, denser near
 * the clamp, the slope's zero and 0), the tanh form and its slope; the
 * edges (signed zeros, infinities, NaN, underflow); and that a loop over
 * them vectorizes to the bits of one element at a time (no contraction). */
#include "harness.h"
#include "kernels/cpu/vgelu.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static double gelu_ref(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double phi_ref(double x) { return exp(-0.5 * x * x) / sqrt(2.0 * M_PI); }
static double slope_ref(double x) { return 0.5 * erfc(-x / sqrt(2.0)) + x * phi_ref(x); }

/* the tanh form as x sigmoid(2u) (1 + tanh u cancels in double too) */
static double tanh_u(double x) { return 0.79788456080286535588 * (x + 0.044715 * x * x * x); }
static double tanh_ref(double x) { return x / (1 + exp(-2 * tanh_u(x))); }

/* its slope, and the size of the slope's two terms */
static double tanh_slope_ref(double x, double *scale)
{
    double b = 0.79788456080286535588, k = 0.044715, e = exp(-2 * tanh_u(x));
    double sg = 1 / (1 + e); /* 0.5 (1 + tanh u) */
    double right = x * sg * (e * sg) * 2 * b * (1 + 3 * k * x * x); /* 1 - tanh^2 = 4 s (1 - s) */
    *scale = sg + fabs(right);
    return sg + right;
}

/* |got - want| in float32 ulps of `scale` */
static double ulps(float got, double want, double scale)
{
    float s = (float)fabs(scale);
    return fabs((double)got - want) / (double)(nextafterf(s, INFINITY) - s);
}

typedef struct worst {
    double ulp;
    float at;
} worst;

static void note(worst *w, double u, float x)
{
    if (u > w->ulp)
        w->ulp = u, w->at = x;
}

/* the float `steps` floats above x (by its bits: toward +inf, the
 * magnitude of a negative float falls), going from -0 to +0 */
static float step_up(float x, int steps)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    if (b & 0x80000000u) {
        uint32_t m = b & 0x7FFFFFFFu;
        b = m > (uint32_t)steps ? b - (uint32_t)steps : (uint32_t)steps - m;
    } else {
        b += (uint32_t)steps;
    }
    memcpy(&x, &b, sizeof x);
    return x;
}

static void sweep(float from, float to, int steps, worst *g, worst *d, worst *t, worst *td)
{
    for (float x = from; x < to; x = step_up(x, steps)) {
        double want = gelu_ref(x);
        if (fabs(want) >= FLT_MIN) /* relative to the value, however small */
            note(g, ulps(tg__vgeluf(x), want, want), x);
        /* the slope crosses 0 near -0.75, where its two terms cancel: its
         * error is measured against their size */
        double scale = 0.5 * erfc(-x / sqrt(2.0)) + fabs(x) * phi_ref(x);
        if (scale >= 1e-36) /* near the clamp it flushes to 0 a little early */
            note(d, ulps(tg__vgelu_slopef(x), slope_ref(x), scale), x);
        double tw = tanh_ref(x);
        if (x > -9.0f) { /* beyond, both are below 1e-30 */
            /* u's rounding (3 ulp of u) is amplified by exp: the error is
             * measured in ulps per unit of the form's condition number
             * |x f'(x) / f(x)| (1 above -1, about 200 at -9) */
            double tsc, tdw = tanh_slope_ref(x, &tsc);
            double cond = 1 + fabs((double)x * tdw / tw), ucond = 1 + 6 * fabs(tanh_u(x));
            note(t, ulps(tg__vgelu_tanhf(x), tw, tw) / cond, x);
            note(td, ulps(tg__vgelu_tanh_slopef(x), tdw, tsc) / ucond, x);
        }
    }
}

static void test_accuracy(void)
{
    worst g = {0, 0}, d = {0, 0}, t = {0, 0}, td = {0, 0};
    sweep(-13.2f, 6.5f, 257, &g, &d, &t, &td);
    sweep(-13.3f, -13.0f, 4, &g, &d, &t, &td); /* the clamp, subnormal products */
    sweep(-1e-3f, 1e-3f, 512, &g, &d, &t, &td);
    sweep(-0.9f, -0.6f, 7, &g, &d, &t, &td); /* the slope's zero */
    printf("gelu %.2f ulp (x = %.9g), slope %.2f (x = %.9g), tanh form %.2f ulp per unit "
           "of condition (x = %.9g), its slope %.2f (x = %.9g)\n", g.ulp, g.at, d.ulp, d.at, t.ulp, t.at, td.ulp, td.at);
    CHECK(g.ulp <= 8.0);
    CHECK(d.ulp <= 4.0);
    CHECK(t.ulp <= 4.0);
    CHECK(td.ulp <= 4.0);
}

static void test_edges(void)
{
    float nz = -0.0f;
    CHECK(tg__vgeluf(0.0f) == 0.0f && signbit(tg__vgeluf(nz)));
    CHECK(tg__vgelu_slopef(0.0f) == 0.5f && tg__vgelu_slopef(nz) == 0.5f);
    CHECK(tg__vgeluf(INFINITY) == INFINITY && tg__vgeluf(100.0f) == 100.0f);
    /* -inf Phi(-inf) and 1 + inf * 0 are NaN, as in PyTorch */
    CHECK(isnan(tg__vgeluf(-INFINITY)));
    CHECK(isnan(tg__vgelu_slopef(INFINITY)) && isnan(tg__vgelu_slopef(-INFINITY)));
    CHECK(isnan(tg__vgeluf(NAN)) && isnan(tg__vgelu_slopef(NAN)));
    CHECK(tg__vgeluf(-14.0f) == 0.0f && tg__vgeluf(-1e30f) == 0.0f);
    CHECK(tg__vgelu_slopef(-20.0f) == 0.0f && !signbit(tg__vgelu_slopef(-20.0f)));
    CHECK(tg__vgelu_slopef(20.0f) == 1.0f && tg__vgelu_slopef(3e38f) == 1.0f);
    CHECK(tg__vgelu_tanhf(INFINITY) == INFINITY && tg__vgelu_tanhf(50.0f) == 50.0f);
    CHECK(isnan(tg__vgelu_tanhf(-INFINITY)) && isnan(tg__vgelu_tanhf(NAN)));
    CHECK(tg__vgelu_tanhf(-50.0f) == 0.0f && signbit(tg__vgelu_tanhf(nz)));
    CHECK(tg__vgelu_tanh_slopef(0.0f) == 0.5f && tg__vgelu_tanh_slopef(50.0f) == 1.0f);
    CHECK(tg__vgelu_tanh_slopef(-50.0f) == 0.0f);
    CHECK(isnan(tg__vgelu_tanh_slopef(INFINITY)) && isnan(tg__vgelu_tanh_slopef(-INFINITY)));
}

/* a loop the compiler vectorizes gives the bits of the scalar calls */
static void test_loop_same_bits(void)
{
    enum { N = 1037 };
    static float x[N], g[N], d[N], t[N], td[N];
    for (int i = 0; i < N; i++)
        x[i] = -14.0f + 21.0f * (float)i / N;
    for (int i = 0; i < N; i++) {
        g[i] = tg__vgeluf(x[i]);
        d[i] = tg__vgelu_slopef(x[i]);
        t[i] = tg__vgelu_tanhf(x[i]);
        td[i] = tg__vgelu_tanh_slopef(x[i]);
    }
    int same = 1;
    for (int i = 0; i < N; i++) {
        volatile float xi = x[i]; /* one element at a time */
        same &= g[i] == tg__vgeluf(xi) && d[i] == tg__vgelu_slopef(xi) &&
                t[i] == tg__vgelu_tanhf(xi) && td[i] == tg__vgelu_tanh_slopef(xi);
    }
    CHECK(same);
}

int main(void)
{
    RUN(test_accuracy);
    RUN(test_edges);
    RUN(test_loop_same_bits);
    return tt_finish();
}
