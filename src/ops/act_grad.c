/* gelu_grad(dy, x) = dy * gelu'(x) = dy * (Phi(x) + x phi(x)), exact GELU
 * (erf form), and gelu_tanh_grad(dy, x), the tanh form's: the backwards of
 * gelu as one pass over memory each. Written as ops
 * it was eleven elementwise nodes (erf, exp, scalings, sums and products),
 * each a pass over a [tokens, 4 d_model] tensor in a transformer's
 * feed-forward block, and erf and exp scalar libm calls. The float32 row
 * uses kernels/cpu/vgelu.h (Phi and phi from one exp and one rational
 * function per lane, within 4 ulp of the terms' scale); float64 (what
 * gradcheck differentiates) libm. gelu's derivative calls it (unary.c), so
 * eager autograd, symbolic gradients and graphs run the same kernel.
 *
 * The tanh form's float32 row also takes vgelu.h's slope (from exp(-2u):
 * it was twelve passes and libm's scalar tanhf); float64 PyTorch's
 * expression: 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) u'.
 *
 * Their own derivatives, for higher orders, with public ops:
 *   d/d dy = gelu'(x),  d/dx = dy phi(x) (2 - x^2)  (gelu'' = phi (2 - x^2));
 *   tanh form: with s = sigmoid(2u), w = 2u' = 2 beta (1 + 3 kappa x^2),
 *   gelu'' = s (1 - s) (2w + x w^2 (1 - 2s) + 12 beta kappa x^2) */
#include "autodiff/jvp.h"
#include "kernels/cpu/vgelu.h"
#include "ops/elementwise.h"
#include "ops/unary.h"

#include <math.h>

#define INV_SQRT2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794
#define GELU_BETA 0.79788456080286535588 /* sqrt(2 / pi) */
#define GELU_KAPPA 0.044715

static inline float gelu_slope_f32(float x)
{
    return tg__vgelu_slopef(x);
}

static inline double gelu_slope_f64(double x)
{
    return 0.5 * erfc(-x * INV_SQRT2) + x * (exp(-0.5 * (x * x)) * INV_SQRT_2PI);
}

static inline double gelu_tanh_slope_f64(double x)
{
    double x2 = x * x;
    double t = tanh(GELU_BETA * (x + GELU_KAPPA * (x2 * x)));
    return 0.5 * (1 + t) + 0.5 * x * ((1 - t * t) * (GELU_BETA * (1 + 3 * GELU_KAPPA * x2)));
}

#define GELU_GRAD_ROW(NAME, T, SLOPE)                                       \
    TG_ISA_ROW(NAME)                                                        \
    {                                                                       \
        (void)ctx;                                                          \
        const int64_t z = sizeof(T);                                        \
        if (s[0] == z && s[1] == z && s[2] == z) {                          \
            T *o = (T *)p[0];                                               \
            const T *d = (const T *)p[1], *x = (const T *)p[2];             \
            for (int64_t i = 0; i < n; i++)                                 \
                o[i] = d[i] * SLOPE(x[i]);                                  \
        } else if (s[0] == z && s[1] == 0 && s[2] == z) {                   \
            /* dy broadcast (the backward of a sum): vectorized as above */ \
            T *o = (T *)p[0];                                               \
            const T d = *(const T *)p[1], *x = (const T *)p[2];             \
            for (int64_t i = 0; i < n; i++)                                 \
                o[i] = d * SLOPE(x[i]);                                     \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++)                                 \
                *(T *)(p[0] + i * s[0]) = *(const T *)(p[1] + i * s[1]) *   \
                                          SLOPE(*(const T *)(p[2] + i * s[2])); \
        }                                                                   \
    }
GELU_GRAD_ROW(gelu_grad_f32, float, gelu_slope_f32)
GELU_GRAD_ROW(gelu_grad_f64, double, gelu_slope_f64)
GELU_GRAD_ROW(gelu_tanh_grad_f32, float, tg__vgelu_tanh_slopef)
GELU_GRAD_ROW(gelu_tanh_grad_f64, double, gelu_tanh_slope_f64)

static tg_status gelu_grad_infer(tg_op_ctx *c)
{
    return tg__infer_grad_pair(c, "x");
}

static tg_status gelu_grad_kernel(tg_op_ctx *c)
{
    return tg__run_grad_pair(c, gelu_grad_f32, gelu_grad_f64);
}

/* phi(x) (2 - x^2) */
static tg_tensor *gelu_second(tg_tensor *x)
{
    tg_tensor *x2 = tg_mul(x, x);
    tg_tensor *phi = tg_mul_scalar(tg_exp(tg_mul_scalar(x2, -0.5)), INV_SQRT_2PI);
    return tg_mul(phi, tg_add_scalar(tg_neg(x2), 2.0));
}

static tg_status gelu_grad_rule(tg_grad_ctx *g)
{
    tg_tensor *dy = g->in[0], *x = g->in[1], *gr = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = tg__gelu_grad(gr, x);
    if (g->needs_grad[1])
        g->dx[1] = tg_mul(tg_mul(gr, dy), gelu_second(x));
    return TG_OK;
}

/* t_dy gelu'(x) + dy gelu''(x) t_x */
static tg_status gelu_grad_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL;
    if (c->dx[0])
        TG_JVP_TERM(c, acc, tg__gelu_grad(c->dx[0], c->in[1]));
    if (c->dx[1])
        TG_JVP_TERM(c, acc, tg_mul(tg_mul(c->in[0], c->dx[1]), gelu_second(c->in[1])));
    return tg__jvp_set(c, 0, acc);
}

static tg_status gelu_tanh_grad_kernel(tg_op_ctx *c)
{
    return tg__run_grad_pair(c, gelu_tanh_grad_f32, gelu_tanh_grad_f64);
}

/* the tanh form's gelu'' (above) */
static tg_tensor *gelu_tanh_second(tg_tensor *x)
{
    tg_tensor *x2 = tg_mul(x, x);
    tg_tensor *u = tg_mul_scalar(tg_add(x, tg_mul_scalar(tg_mul(x2, x), GELU_KAPPA)), GELU_BETA);
    tg_tensor *s = tg_sigmoid(tg_mul_scalar(u, 2.0));
    tg_tensor *w = tg_mul_scalar(tg_add_scalar(tg_mul_scalar(x2, 3 * GELU_KAPPA), 1.0), 2 * GELU_BETA);
    tg_tensor *ss = tg_mul(s, tg_add_scalar(tg_neg(s), 1.0));
    tg_tensor *mid = tg_mul(tg_mul(x, tg_mul(w, w)), tg_add_scalar(tg_mul_scalar(s, -2.0), 1.0));
    tg_tensor *sum = tg_add(tg_add(tg_mul_scalar(w, 2.0), mid),
                            tg_mul_scalar(x2, 12 * GELU_BETA * GELU_KAPPA));
    return tg_mul(ss, sum);
}

static tg_status gelu_tanh_grad_rule(tg_grad_ctx *g)
{
    tg_tensor *dy = g->in[0], *x = g->in[1], *gr = g->dy[0];
    if (g->needs_grad[0])
        g->dx[0] = tg__gelu_tanh_grad(gr, x);
    if (g->needs_grad[1])
        g->dx[1] = tg_mul(tg_mul(gr, dy), gelu_tanh_second(x));
    return TG_OK;
}

static tg_status gelu_tanh_grad_jvp(tg_jvp_ctx *c)
{
    tg_tensor *acc = NULL;
    if (c->dx[0])
        TG_JVP_TERM(c, acc, tg__gelu_tanh_grad(c->dx[0], c->in[1]));
    if (c->dx[1])
        TG_JVP_TERM(c, acc, tg_mul(tg_mul(c->in[0], c->dx[1]), gelu_tanh_second(c->in[1])));
    return tg__jvp_set(c, 0, acc);
}

static const tg_arg_spec gelu_grad_in[] = {{"dy", TG_DTS_FLOAT}, {"x", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec gelu_grad_out[] = {{"dx", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_gelu_grad = {
    .name = "gelu_grad", .n_in = 2, .n_out = 1, .inputs = gelu_grad_in,
    .outputs = gelu_grad_out,
    .flags = TG_OP_PURE | TG_OP_ELEMENTWISE | TG_INPLACE_OK(0) | TG_INPLACE_OK(1),
    .save_inputs = 3u, .infer = gelu_grad_infer, .kernel = {[TG_CPU] = gelu_grad_kernel},
    .grad = gelu_grad_rule, .jvp = gelu_grad_jvp};

const tg_op_def tg_op_gelu_tanh_grad = {
    .name = "gelu_tanh_grad", .n_in = 2, .n_out = 1, .inputs = gelu_grad_in,
    .outputs = gelu_grad_out,
    .flags = TG_OP_PURE | TG_OP_ELEMENTWISE | TG_INPLACE_OK(0) | TG_INPLACE_OK(1),
    .save_inputs = 3u, .infer = gelu_grad_infer, .kernel = {[TG_CPU] = gelu_tanh_grad_kernel},
    .grad = gelu_tanh_grad_rule, .jvp = gelu_tanh_grad_jvp};

tg_tensor *tg__gelu_grad(tg_tensor *dy, tg_tensor *x)
{
    tg_tensor *in[2] = {dy, x};
    return tg_op_call(&tg_op_gelu_grad, 2, in, NULL, 0);
}

tg_tensor *tg__gelu_tanh_grad(tg_tensor *dy, tg_tensor *x)
{
    tg_tensor *in[2] = {dy, x};
    return tg_op_call(&tg_op_gelu_tanh_grad, 2, in, NULL, 0);
}

const tg_op_def *const tg_ops_act_grad[] = {&tg_op_gelu_grad, &tg_op_gelu_tanh_grad, NULL};
