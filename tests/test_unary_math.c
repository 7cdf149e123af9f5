/* The unary ops of unary_math.c and unary_act.c through their public
 * functions: values against libm formulas in float32 and float64, on
 * contiguous and strided inputs, across the domains (NaN and infinities
 * outside them, at the poles, and through every op); result dtypes of
 * integer inputs; the argument errors. Gradients: the op samples
 * (gradcheck, forward vs reverse mode, graph vs eager, ONNX), the kinks
 * in test_kinks.c, and PyTorch's values and gradients in
 * tests/python/test_unary_math.py. */
#include "harness.h"
#include "op_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef tg_tensor *(*unary_fn)(tg_tensor *x);

static tg_tensor *celu07(tg_tensor *x) { return tg_celu(x, 0.7); }
static tg_tensor *hardtanh_(tg_tensor *x) { return tg_hardtanh(x, -0.5, 2); }
static tg_tensor *softshrink_(tg_tensor *x) { return tg_softshrink(x, 0.5); }
static tg_tensor *hardshrink_(tg_tensor *x) { return tg_hardshrink(x, 0.5); }
static tg_tensor *threshold_(tg_tensor *x) { return tg_threshold(x, 1, -2); }

static double r_reciprocal(double x) { return 1 / x; }
static double r_square(double x) { return x * x; }
static double r_softsign(double x) { return x / (1 + fabs(x)); }
static double r_silu(double x) { return x / (1 + exp(-x)); }
static double r_softplus(double x) { return x > 30 ? x : log1p(exp(x)); }
static double r_mish(double x) { return x * tanh(r_softplus(x)); }
static double r_logsigmoid(double x) { return x < -30 ? x : -log1p(exp(-x)); }
static double r_celu07(double x) { return x > 0 ? x : 0.7 * expm1(x / 0.7); }
static double r_hardtanh(double x) { return isnan(x) ? x : x < -0.5 ? -0.5 : x > 2 ? 2 : x; }
static double r_relu6(double x) { return isnan(x) ? x : x < 0 ? 0 : x > 6 ? 6 : x; }
static double r_softshrink(double x)
{
    return isnan(x) ? x : x > 0.5 ? x - 0.5 : x < -0.5 ? x + 0.5 : 0;
}
static double r_hardshrink(double x) { return isnan(x) ? x : fabs(x) > 0.5 ? x : 0; }
static double r_threshold(double x) { return x <= 1 ? -2 : x; }

static const struct {
    const char *name;
    unary_fn fn;
    double (*ref)(double);
} ops[] = {
    {"tan", tg_tan, tan},          {"asin", tg_asin, asin},
    {"acos", tg_acos, acos},       {"atan", tg_atan, atan},
    {"sinh", tg_sinh, sinh},       {"cosh", tg_cosh, cosh},
    {"asinh", tg_asinh, asinh},    {"acosh", tg_acosh, acosh},
    {"atanh", tg_atanh, atanh},    {"expm1", tg_expm1, expm1},
    {"log1p", tg_log1p, log1p},    {"log2", tg_log2, log2},
    {"log10", tg_log10, log10},    {"reciprocal", tg_reciprocal, r_reciprocal},
    {"square", tg_square, r_square},
    {"softsign", tg_softsign, r_softsign},
    {"silu", tg_silu, r_silu},     {"mish", tg_mish, r_mish},
    {"logsigmoid", tg_logsigmoid, r_logsigmoid},
    {"celu", celu07, r_celu07},    {"hardtanh", hardtanh_, r_hardtanh},
    {"relu6", tg_relu6, r_relu6},  {"softshrink", softshrink_, r_softshrink},
    {"hardshrink", hardshrink_, r_hardshrink}, {"threshold", threshold_, r_threshold},
};
#define N_OPS ((int)(sizeof ops / sizeof ops[0]))

/* inside and outside the domains, the poles and kinks, the far tails */
static const double xs[24] = {-40, -7, -3, -1.5, -1, -0.9, -0.5, -0.2, -1e-9, 0, 1e-9, 0.3,
                              0.5, 0.9, 1, 1.7, 2, 2.5, 6, 7, 40, NAN, INFINITY, -INFINITY};

/* got equals want to rel (relative, absolute below 1e-3), NaN with NaN,
 * infinities exactly */
static bool close_to(double got, double want, double rel)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <= rel * fmax(1e-3, fabs(want));
}

static void test_values(void)
{
    const tg_dtype fdt[2] = {TG_FLOAT32, TG_FLOAT64};
    for (int op = 0; op < N_OPS; op++)
        for (int d = 0; d < 2; d++)
            for (int strided = 0; strided < 2; strided++) {
                tg_scope_begin();
                double in[24], got[24];
                for (int i = 0; i < 24; i++)
                    in[i] = fdt[d] == TG_FLOAT32 ? (double)(float)xs[i] : xs[i];
                tg_tensor *x = tt_tensor(fdt[d], 2, (int64_t[]){4, 6}, in);
                if (strided) /* the same values through a transposed view */
                    x = tg_transpose(tg_contiguous(tg_transpose(x, 0, 1)), 0, 1);
                tg_tensor *y = ops[op].fn(x);
                tt_checks++;
                if (!y || tg_dtype_of(y) != fdt[d]) {
                    tt_fail(__FILE__, __LINE__, "%s %s: %s", ops[op].name, tg_dtype_name(fdt[d]),
                            y ? "wrong dtype" : tg_last_error());
                    tg_scope_end();
                    continue;
                }
                tg_copy_to(y, TG_FLOAT64, got);
                /* float32: the float of the exact value, to a few ulps */
                double rel = fdt[d] == TG_FLOAT32 ? 4e-7 : 4e-16;
                for (int i = 0; i < 24; i++) {
                    double w = ops[op].ref(in[i]);
                    if (fdt[d] == TG_FLOAT32)
                        w = (double)(float)w;
                    if (!close_to(got[i], w, rel)) {
                        tt_fail(__FILE__, __LINE__, "%s %s%s: f(%.9g) = %.17g, expected %.17g",
                                ops[op].name, tg_dtype_name(fdt[d]), strided ? " strided" : "",
                                in[i], got[i], w);
                        break;
                    }
                }
                tg_scope_end();
            }
}

/* the points the domains are about, as PyTorch gives them */
static void test_domains(void)
{
    tg_scope_begin();
    double v[5] = {-1, 1, 2, -2, 0.5};
    tg_tensor *x = tt_tensor(TG_FLOAT64, 1, (int64_t[]){5}, v);
    CHECK_TENSOR(tg_asin(x), ((double[]){-M_PI / 2, M_PI / 2, NAN, NAN, asin(0.5)}), 1e-15);
    CHECK_TENSOR(tg_acos(x), ((double[]){M_PI, 0, NAN, NAN, acos(0.5)}), 1e-15);
    CHECK_TENSOR(tg_acosh(x), ((double[]){NAN, 0, acosh(2), NAN, NAN}), 1e-15);
    CHECK_TENSOR(tg_atanh(x), ((double[]){-INFINITY, INFINITY, NAN, NAN, atanh(0.5)}), 1e-15);
    CHECK_TENSOR(tg_log1p(x), ((double[]){-INFINITY, log(2), log(3), NAN, log(1.5)}), 1e-15);
    CHECK_TENSOR(tg_log2(x), ((double[]){NAN, 0, 1, NAN, -1}), 0);
    CHECK_TENSOR(tg_log10(tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0, 1000, -1})),
                 ((double[]){-INFINITY, 3, NAN}), 0);
    CHECK_TENSOR(tg_reciprocal(tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){0, -0.0})),
                 ((double[]){INFINITY, -INFINITY}), 0);
    /* accurate near 0, where exp(x) - 1 and log(1 + x) lose every digit */
    CHECK_TENSOR(tg_expm1(tt_tensor(TG_FLOAT64, 1, (int64_t[]){1}, (double[]){1e-20})),
                 ((double[]){1e-20}), 1e-36);
    CHECK_TENSOR(tg_log1p(tt_tensor(TG_FLOAT32, 1, (int64_t[]){1}, (double[]){1e-10})),
                 ((double[]){(float)1e-10}), 1e-18);
    /* logsigmoid stays finite far below 0; silu keeps -0 there */
    CHECK_TENSOR(tg_logsigmoid(tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){-800, 800})),
                 ((double[]){-800, 0}), 0);
    double s;
    CHECK_OK(tg_copy_to(tg_silu(tt_tensor(TG_FLOAT64, 1, (int64_t[]){1}, (double[]){-800})),
                        TG_FLOAT64, &s));
    CHECK(s == 0 && signbit(s));
    tg_scope_end();
}

/* float functions of integers and bools give float32; square, hardtanh
 * and threshold keep integer dtypes, as PyTorch's */
static void test_integer_inputs(void)
{
    tg_scope_begin();
    const tg_dtype idt[3] = {TG_INT32, TG_INT64, TG_UINT8};
    for (int d = 0; d < 3; d++) {
        tg_tensor *x = tt_tensor(idt[d], 1, (int64_t[]){4}, (double[]){0, 1, 2, 7});
        tg_tensor *r = tg_reciprocal(x), *t = tg_tan(x), *sq = tg_square(x);
        CHECK(r && tg_dtype_of(r) == TG_FLOAT32);
        CHECK(t && tg_dtype_of(t) == TG_FLOAT32);
        CHECK_TENSOR(r, ((double[]){INFINITY, 1, 0.5, (float)(1.0 / 7)}), 0);
        CHECK(sq && tg_dtype_of(sq) == idt[d]);
        CHECK_TENSOR(sq, ((double[]){0, 1, 4, 49}), 0);
        tg_tensor *th = tg_threshold(x, 1.5, 3.7), *r6 = tg_relu6(x);
        CHECK(th && tg_dtype_of(th) == idt[d] && r6 && tg_dtype_of(r6) == idt[d]);
        /* the numbers take x's dtype first: threshold 1, value 3 */
        CHECK_TENSOR(th, ((double[]){3, 3, 2, 7}), 0);
        CHECK_TENSOR(r6, ((double[]){0, 1, 2, 6}), 0);
    }
    /* bools: 0 and 1 in float32, for the math functions (and sin, exp...) */
    tg_tensor *b = tt_tensor(TG_BOOL, 1, (int64_t[]){2}, (double[]){1, 0});
    const unary_fn bool_ok[] = {tg_tan, tg_asinh, tg_log1p, tg_reciprocal, tg_sin, tg_exp};
    for (size_t i = 0; i < sizeof bool_ok / sizeof bool_ok[0]; i++) {
        tg_tensor *y = bool_ok[i](b), *want = bool_ok[i](tg_cast(b, TG_FLOAT32));
        CHECK(y && tg_dtype_of(y) == TG_FLOAT32 && tt_same(y, want));
    }
    /* integer squares wrap, as PyTorch's (no undefined overflow) */
    tg_tensor *big = tt_tensor(TG_INT32, 1, (int64_t[]){2}, (double[]){65536, -46341});
    CHECK_TENSOR(tg_square(big), ((double[]){0, -2147479015}), 0);
    CHECK_TENSOR(tg_square(tt_tensor(TG_UINT8, 1, (int64_t[]){1}, (double[]){16})),
                 ((double[]){0}), 0);
    CHECK_TENSOR(tg_hardtanh(tt_tensor(TG_INT64, 1, (int64_t[]){3}, (double[]){-5, 0, 5}), -1, 1),
                 ((double[]){-1, 0, 1}), 0);
    tg_scope_end();
}

static void test_errors(void)
{
    tg_scope_begin();
    tg_tensor *x = tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){1, 2});
    CHECK_ERROR(tg_hardtanh(x, 1, -1), TG_ERR_ARG,
                "hardtanh: min_val 1 cannot be greater than max_val -1");
    CHECK_ERROR(tg_celu(x, 0), TG_ERR_ARG, "celu: alpha must not be 0");
    CHECK_ERROR(tg_softshrink(x, -0.5), TG_ERR_ARG,
                "softshrink: lambda must be greater or equal to 0, but found to be -0.5");
    CHECK_ERROR(tg_hardtanh(tt_tensor(TG_UINT8, 1, (int64_t[]){1}, (double[]){3}), -1, 1),
                TG_ERR_DTYPE, "hardtanh: cannot do hardtanh on an unsigned type with negative");
    /* activations refuse bools, as PyTorch's (the math functions take
     * them: test_integer_inputs) */
    CHECK_ERROR(tg_silu(tt_tensor(TG_BOOL, 1, (int64_t[]){1}, (double[]){1})), TG_ERR_DTYPE,
                "silu: bool input is not supported");
    CHECK_ERROR(tg_square(tt_tensor(TG_BOOL, 1, (int64_t[]){1}, (double[]){1})), TG_ERR_DTYPE,
                "square: bool input is not supported");
    tg_scope_end();
}

/* the ops without an ONNX operator export as chains of ONNX nodes
 * (export_ops.c), the others as their operator; re-imported they give
 * the op's values (1e-6), float64 and float32, and integer inputs, which
 * float functions cast first */
typedef struct op_case {
    unary_fn fn;
    double lo, hi;
} op_case;

static tg_tensor *apply_op(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return ((const op_case *)user)->fn(in[0]);
}

static void test_onnx_roundtrips(void)
{
    op_case cases[] = {{tg_rsqrt, 0.5, 2},  {tg_silu, -4, 4},   {tg_mish, -4, 4},
                       {tg_logsigmoid, -4, 4}, {tg_square, -2, 2}, {tg_log1p, -0.5, 2},
                       {tg_expm1, -2, 2},  {tg_log2, 0.5, 2},  {tg_log10, 0.5, 2},
                       {tg_tan, -1.2, 1.2}, {tg_atan, -3, 3},   {tg_sinh, -2, 2},
                       {tg_softsign, -3, 3}, {celu07, -2, 2},   {softshrink_, -1.5, 1.5},
                       {threshold_, -1, 3}, {hardtanh_, -1, 3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg_scope_begin();
        tg_tensor *x = tg_detach(tt_rand(2, (int64_t[]){2, 3}, cases[i].lo, cases[i].hi));
        tg_tensor *in[3] = {x, tg_cast(x, TG_FLOAT32),
                            tg_cast(tg_add_scalar(tg_mul_scalar(x, 2), 0.5), TG_INT32)};
        for (int d = 0; d < 3; d++)
            oc_roundtrip(apply_op, &cases[i], 1, &in[d], "chain", __FILE__, __LINE__);
        tg_scope_end();
    }
}

/* the public functions that are one op with fixed attributes (relu6 is
 * hardtanh(0, 6), the shrinks one op): gradcheck, forward vs reverse mode,
 * graph vs eager, away from the kinks */
static void test_public_functions_checked(void)
{
    op_case cases[] = {{tg_relu6, -2, 8}, {softshrink_, -2, 2}, {hardshrink_, -2, 2},
                       {celu07, -2, 2}, {hardtanh_, -1, 3}, {threshold_, -1, 3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg_scope_begin();
        tg_tensor *x = tt_rand(2, (int64_t[]){3, 4}, cases[i].lo, cases[i].hi);
        oc_check(apply_op, &cases[i], 1, &x, "public function", __FILE__, __LINE__);
        tg_scope_end();
    }
}

/* a chain of the new ops in a graph at optimisation level 2, where they
 * fuse into one fused_elementwise node running their kernels block by
 * block: bitwise the eager values (float32) */
static tg_tensor *chain_fn(tg_tensor *x)
{
    tg_tensor *a = tg_silu(tg_asinh(x)), *b = tg_hardtanh(tg_mish(x), -0.5, 1.5);
    tg_tensor *c = tg_softshrink(tg_atan(tg_mul(a, b)), 0.1);
    return tg_threshold(tg_log1p(tg_square(tg_celu(c, 0.7))), 0.01, -1);
}

static void test_fused_graph_bitwise(void)
{
    tg_scope_begin();
    tg_tensor *x = tg_cast(tg_detach(tt_rand(2, (int64_t[]){64, 33}, -3, 3)), TG_FLOAT32);
    tg_tensor *want = chain_fn(x);
    tg_graph *g = tg_graph_new("chain");
    tg_tensor *p = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){64, 33});
    CHECK_OK(tg_graph_begin(g));
    tg_tensor *y = chain_fn(p);
    CHECK_OK(tg_graph_end());
    tg_session *s = tg_session_new(g);
    tg_session_options o = tg_session_default_options();
    o.opt_level = 2;
    CHECK_OK(tg_session_set_options(s, &o));
    tg_pass_record rec[32];
    int n_rec = 0, fused = 0, ops = 0;
    tg_graph_free(tg_session_optimized_graph(s, 1, &p, NULL, 1, &y, 0, NULL, 32, rec, &n_rec));
    for (int i = 0; i < n_rec; i++)
        for (int k = 0; !strcmp(rec[i].pass, "fuse_elementwise") && k < rec[i].n_counts; k++) {
            fused += !strcmp(rec[i].counts[k].what, "fused") ? rec[i].counts[k].n : 0;
            ops += !strcmp(rec[i].counts[k].what, "ops") ? rec[i].counts[k].n : 0;
        }
    /* the whole tree (x is a leaf read twice): one node of the 11 ops */
    CHECK(fused == 1 && ops == 11);
    printf("  fused %d nodes of %d ops\n", fused, ops);
    tg_tensor *got = NULL;
    CHECK_OK(tg_session_run(s, 1, &p, &x, 1, &y, &got, 0, NULL));
    CHECK(tt_same(got, want));
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

int main(void)
{
    RUN(test_values);
    RUN(test_domains);
    RUN(test_integer_inputs);
    RUN(test_errors);
    RUN(test_onnx_roundtrips);
    RUN(test_public_functions_checked);
    RUN(test_fused_graph_bitwise);
    return tt_finish();
}
