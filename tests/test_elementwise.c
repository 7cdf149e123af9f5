/* Elementwise ops: every binary op per dtype against a C reference loop
 * (broadcasting, strided inputs, the parallel path), every unary op
 * against libm, comparisons and logic with NaN, where, cast between all
 * dtypes, gradcheck of every differentiable op, and the error paths. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define MAXN 4096

/* ---- helpers ------------------------------------------------------------ */
static int64_t numel_of(int nd, const int64_t *s)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= s[i];
    return n;
}

/* the same values laid out with a stride of 2 in the last dim */
static tg_tensor *strided(tg_tensor *t)
{
    int nd = tg_ndim(t);
    if (nd == 0)
        return t;
    int64_t s[TG_MAX_DIMS];
    memcpy(s, tg_shape(t), (size_t)nd * sizeof *s);
    s[nd - 1] *= 2;
    tg_tensor *v = tg_slice(tg_zeros(tg_dtype_of(t), nd, s), nd - 1, 1, s[nd - 1], 2);
    tg_copy_(v, t);
    return v;
}

/* the same 2-D values as a transposed view of a [cols, rows] tensor */
static tg_tensor *transposed(tg_tensor *t)
{
    if (tg_ndim(t) != 2)
        return t;
    return tg_transpose(tg_contiguous(tg_transpose(t, 0, 1)), 0, 1);
}

/* index into an input of shape (nd, s) broadcast to (ond, os) */
static int64_t bcast_index(int ond, const int64_t *os, const int64_t *oidx, int nd,
                           const int64_t *s)
{
    int64_t flat = 0;
    for (int i = 0; i < nd; i++) {
        int o = i + ond - nd;
        flat = flat * s[i] + (s[i] == 1 ? 0 : oidx[o]);
    }
    (void)os;
    return flat;
}

static void unflatten(int nd, const int64_t *s, int64_t flat, int64_t *idx)
{
    for (int i = nd - 1; i >= 0; i--) {
        idx[i] = flat % s[i];
        flat /= s[i];
    }
}

/* ---- binary ops against typed C reference arithmetic ------------------- */
typedef enum bop { ADD, SUB, MUL, DIV, POW, MAX, MIN, N_BOP } bop;
static tg_tensor *(*const bfn[N_BOP])(tg_tensor *, tg_tensor *) = {
    tg_add, tg_sub, tg_mul, tg_div, tg_pow, tg_maximum, tg_minimum};
static const char *const bname[N_BOP] = {"add", "sub", "mul", "div", "pow",
                                         "maximum", "minimum"};

static uint64_t upow(uint64_t b, int64_t e)
{
    uint64_t r = 1;
    for (int64_t i = 0; i < e; i++)
        r *= b;
    return r;
}

#define REF_INT(T, UT)                                                     \
    static double ref_##T(bop op, T a, T b)                                \
    {                                                                      \
        switch (op) {                                                      \
        case ADD: return (double)(T)((UT)a + (UT)b);                       \
        case SUB: return (double)(T)((UT)a - (UT)b);                       \
        case MUL: return (double)(T)((UT)a * (UT)b);                       \
        case DIV: return (double)((float)a / (float)b);                    \
        case POW: return (double)(T)(UT)upow((uint64_t)a, b);              \
        case MAX: return (double)(a > b ? a : b);                          \
        case MIN: return (double)(a < b ? a : b);                          \
        default: return 0;                                                 \
        }                                                                  \
    }
REF_INT(int32_t, uint32_t)
REF_INT(int64_t, uint64_t)
REF_INT(uint8_t, uint8_t)

static double ref_float(bop op, float a, float b)
{
    switch (op) {
    case ADD: return (double)(a + b);
    case SUB: return (double)(a - b);
    case MUL: return (double)(a * b);
    case DIV: return (double)(a / b);
    case POW: return (double)powf(a, b);
    case MAX: return (double)fmaxf(a, b);
    case MIN: return (double)fminf(a, b);
    default: return 0;
    }
}

static double ref_double(bop op, double a, double b)
{
    switch (op) {
    case ADD: return a + b;
    case SUB: return a - b;
    case MUL: return a * b;
    case DIV: return a / b;
    case POW: return pow(a, b);
    case MAX: return fmax(a, b);
    case MIN: return fmin(a, b);
    default: return 0;
    }
}

static double ref_binary(bop op, tg_dtype dt, double a, double b)
{
    switch (dt) {
    case TG_FLOAT32: return ref_float(op, (float)a, (float)b);
    case TG_FLOAT64: return ref_double(op, a, b);
    case TG_INT32: return ref_int32_t(op, (int32_t)a, (int32_t)b);
    case TG_INT64: return ref_int64_t(op, (int64_t)a, (int64_t)b);
    case TG_UINT8: return ref_uint8_t(op, (uint8_t)a, (uint8_t)b);
    default: return NAN;
    }
}

/* deterministic test values valid for op, dtype and operand (0 or 1) */
static double test_value(bop op, tg_dtype dt, int operand, int64_t i)
{
    int64_t k = (i * 7 + 3 + operand * 5) % 17; /* 0..16 */
    bool is_int = !tg_dtype_is_float(dt);
    if (op == POW) {
        if (operand == 0)
            return is_int ? (double)(k % 7) - (dt == TG_UINT8 ? 0 : 3)
                          : 0.5 + 0.15625 * (double)k;
        return is_int ? (double)(k % 4) : -2 + 0.25 * (double)k;
    }
    if (op == DIV && operand == 1) { /* never zero */
        double v = is_int ? (double)(k % 8 + 1) : 0.5 + 0.25 * (double)k;
        return (k & 1) && dt != TG_UINT8 ? -v : v;
    }
    if (dt == TG_UINT8)
        return (double)(k * 15 + operand * 3); /* 0..243: wraps in + and * */
    if (is_int) /* wide enough to wrap int32 in mul */
        return (double)((k - 8) * (dt == TG_INT32 ? 9000 : 1000000007LL));
    return (double)(k - 8) * 0.375;
}

static tg_tensor *make_input(bop op, tg_dtype dt, int operand, int nd, const int64_t *s,
                             double *vals)
{
    int64_t n = numel_of(nd, s);
    for (int64_t i = 0; i < n; i++)
        vals[i] = test_value(op, dt, operand, i);
    return tt_tensor(dt, nd, s, vals);
}

typedef struct bcase {
    int na, nb;
    int64_t sa[3], sb[3];
} bcase;

static const bcase cases[] = {
    {2, 1, {3, 1}, {4}},
    {3, 2, {2, 1, 3}, {5, 1}},
    {0, 2, {0}, {2, 3}},
    {2, 0, {2, 3}, {0}},
    {2, 2, {4, 5}, {4, 5}},
    {2, 2, {3, 4}, {1, 4}},
    {1, 3, {1}, {2, 3, 1}},
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

/* layout 0: contiguous, 1: strided last dim, 2: transposed 2-D views */
static int check_binary(bop op, tg_dtype dt, const bcase *c, int layout)
{
    static double va[MAXN], vb[MAXN];
    tg_tensor *a = make_input(op, dt, 0, c->na, c->sa, va);
    tg_tensor *b = make_input(op, dt, 1, c->nb, c->sb, vb);
    if (layout == 1) {
        a = strided(a);
        b = strided(b);
    } else if (layout == 2) {
        a = transposed(a);
        b = transposed(b);
    }
    tg_tensor *y = bfn[op](a, b);
    if (!y) {
        tt_fail(__FILE__, __LINE__, "%s %s case %d: %s", bname[op], tg_dtype_name(dt),
                (int)(c - cases), tg_last_error());
        return 1;
    }
    tg_dtype want_dt = op == DIV && !tg_dtype_is_float(dt) ? TG_FLOAT32 : dt;
    int ond = tg_ndim(y);
    const int64_t *os = tg_shape(y);
    int64_t n = tg_numel(y);
    static double got[MAXN];
    tg_copy_to(y, TG_FLOAT64, got);
    int64_t idx[TG_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        unflatten(ond, os, i, idx);
        double x0 = va[bcast_index(ond, os, idx, c->na, c->sa)];
        double x1 = vb[bcast_index(ond, os, idx, c->nb, c->sb)];
        double want = ref_binary(op, dt, x0, x1);
        double tol = tg_dtype_is_float(want_dt) ? 1e-6 * fmax(1, fabs(want)) : 0;
        if (tg_dtype_of(y) != want_dt || !(fabs(got[i] - want) <= tol)) {
            tt_fail(__FILE__, __LINE__, "%s %s case %d layout %d: [%lld] = %.10g (%s), "
                    "expected %.10g (%s) from %g, %g", bname[op], tg_dtype_name(dt),
                    (int)(c - cases), layout, (long long)i, got[i],
                    tg_dtype_name(tg_dtype_of(y)), want, tg_dtype_name(want_dt), x0, x1);
            return 1;
        }
    }
    return 0;
}

static void test_binary_forward(void)
{
    const tg_dtype dts[5] = {TG_FLOAT32, TG_FLOAT64, TG_INT32, TG_INT64, TG_UINT8};
    for (int op = 0; op < N_BOP; op++)
        for (int d = 0; d < 5; d++)
            for (int c = 0; c < N_CASES; c++)
                for (int l = 0; l < 3; l++) {
                    tt_checks++;
                    tg_scope_begin();
                    check_binary((bop)op, dts[d], &cases[c], l);
                    tg_scope_end();
                }
}

static void test_binary_special_values(void)
{
    /* integer wrap-around, as in PyTorch */
    int32_t imax = INT32_MAX;
    tg_tensor *i32 = tg_from_data(TG_INT32, 1, (int64_t[]){1}, &imax);
    CHECK_NEAR(tg_item(tg_add_scalar(i32, 1)), INT32_MIN, 0);
    int64_t lmax = INT64_MAX;
    tg_tensor *i64 = tg_from_data(TG_INT64, 1, (int64_t[]){1}, &lmax);
    int64_t out;
    CHECK_OK(tg_copy_to(tg_add_scalar(i64, 1), TG_INT64, &out));
    CHECK(out == INT64_MIN);
    CHECK_NEAR(tg_item(tg_mul_scalar(tg_full(TG_UINT8, 0, NULL, 20), 13)), 4, 0);
    /* integer powers, including negative exponents of +-1 */
    double base[5] = {2, -3, 1, -1, 0}, ex[5] = {10, 3, -5, -3, 0};
    CHECK_TENSOR(tg_pow(tt_tensor(TG_INT64, 1, (int64_t[]){5}, base),
                        tt_tensor(TG_INT64, 1, (int64_t[]){5}, ex)),
                 ((double[]){1024, -27, 1, -1, 1}), 0);
    /* float: NaN propagates through maximum/minimum, either side */
    double a[4] = {NAN, 1, 2, -INFINITY}, b[4] = {1, NAN, -1, 3};
    tg_tensor *ta = tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, a);
    tg_tensor *tb = tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, b);
    CHECK_TENSOR(tg_maximum(ta, tb), ((double[]){NAN, NAN, 2, 3}), 0);
    CHECK_TENSOR(tg_minimum(ta, tb), ((double[]){NAN, NAN, -1, -INFINITY}), 0);
    CHECK_TENSOR(tg_minimum(tb, ta), ((double[]){NAN, NAN, -1, -INFINITY}), 0);
    /* division by zero and pow edge cases follow IEEE */
    double z[3] = {1, -1, 0};
    CHECK_TENSOR(tg_div(tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, z), tg_zeros(TG_FLOAT64, 0, NULL)),
                 ((double[]){INFINITY, -INFINITY, NAN}), 0);
    CHECK_TENSOR(tg_pow_scalar(tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){-2, 0, 4}), 0.5),
                 ((double[]){NAN, 0, 2}), 1e-15);
    CHECK_TENSOR(tg_pow_scalar(tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, (double[]){-2, 3}), 3),
                 ((double[]){-8, 27}), 0);
    /* integer division is true division */
    CHECK_TENSOR(tg_div(tg_full(TG_INT32, 1, (int64_t[]){1}, 7), tg_full(TG_INT32, 0, NULL, -2)),
                 ((double[]){-3.5}), 0);
    /* mixed dtypes compute in the promoted type */
    tg_tensor *m = tg_mul(tg_full(TG_UINT8, 1, (int64_t[]){2}, 200), tg_full(TG_INT32, 1, (int64_t[]){2}, 2));
    CHECK(tg_dtype_of(m) == TG_INT32);
    CHECK_TENSOR(m, ((double[]){400, 400}), 0);
    tg_tensor *f = tg_add(tg_full(TG_FLOAT32, 1, (int64_t[]){1}, 0.1), tg_full(TG_FLOAT64, 1, (int64_t[]){1}, 0.2));
    CHECK(tg_dtype_of(f) == TG_FLOAT64);
    CHECK_NEAR(tg_item(f), (double)0.1f + 0.2, 0);
    /* empty operands give empty results */
    CHECK_SHAPE(tg_add(tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 3}), tg_ones(TG_FLOAT32, 1, (int64_t[]){3})), 0, 3);
    CHECK_SHAPE(tg_mul(tg_zeros(TG_INT32, 2, (int64_t[]){2, 0}), tg_ones(TG_INT32, 2, (int64_t[]){1, 1})), 2, 0);
}

static void test_scalar_ops(void)
{
    double v[4] = {-2, -0.5, 1, 3};
    const tg_dtype fdt[2] = {TG_FLOAT32, TG_FLOAT64};
    for (int d = 0; d < 2; d++) {
        tg_tensor *x = tt_tensor(fdt[d], 1, (int64_t[]){4}, v);
        CHECK_TENSOR(tg_add_scalar(x, 0.25), ((double[]){-1.75, -0.25, 1.25, 3.25}), 0);
        CHECK_TENSOR(tg_mul_scalar(x, -2), ((double[]){4, 1, -2, -6}), 0);
        CHECK_TENSOR(tg_pow_scalar(x, 2), ((double[]){4, 0.25, 1, 9}), 0);
        CHECK_TENSOR(tg_pow_scalar(x, -1), ((double[]){-0.5, -2, 1, 1.0 / 3}), 1e-7);
        CHECK(tg_dtype_of(tg_add_scalar(x, 1)) == fdt[d]);
    }
    double iv[4] = {-2, 0, 1, 3};
    tg_tensor *xi = tt_tensor(TG_INT64, 1, (int64_t[]){4}, iv);
    CHECK_TENSOR(tg_add_scalar(xi, 5), ((double[]){3, 5, 6, 8}), 0);
    CHECK(tg_dtype_of(tg_mul_scalar(xi, 3)) == TG_INT64);
    CHECK_TENSOR(tg_mul_scalar(xi, 0.5), ((double[]){-1, 0, 0.5, 1.5}), 0);
    CHECK(tg_dtype_of(tg_mul_scalar(xi, 0.5)) == TG_FLOAT32);
    CHECK_TENSOR(tg_pow_scalar(xi, 2), ((double[]){4, 0, 1, 9}), 0);
    /* a non-finite scalar with an integer tensor computes in float */
    tg_tensor *yi = tg_add_scalar(xi, INFINITY);
    CHECK(tg_dtype_of(yi) == TG_FLOAT32);
    CHECK_TENSOR(yi, ((double[]){INFINITY, INFINITY, INFINITY, INFINITY}), 0);
    CHECK_ERROR(tg_add_scalar(NULL, 1), TG_ERR_ARG, "NULL");
    CHECK_ERROR(tg_mul_scalar(tg_ones(TG_BOOL, 0, NULL), 2), TG_ERR_DTYPE, "bool");
}

/* a large broadcast over a transposed input: the parallel iterator path */
static void test_binary_parallel(void)
{
    int64_t n = 750; /* n * n above twice TG_ITER_GRAIN */
    tg_tensor *base = tg_reshape(tg_arange(TG_FLOAT32, 0, (double)(n * n), 1), 2, (int64_t[]){n, n});
    tg_tensor *t = tg_transpose(base, 0, 1);
    tg_tensor *row = tg_arange(TG_FLOAT32, 0, (double)n, 1);
    tg_tensor *y = tg_sub(t, row);
    CHECK_SHAPE(y, 750, 750);
    const float *d = tg_data(y);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++)
        for (int64_t j = 0; j < n && ok; j++)
            ok = d[i * n + j] == (float)(j * n + i) - (float)j;
    CHECK(ok);
    /* strided output-sized operands on both sides */
    tg_tensor *z = tg_mul(tg_slice(tg_ones(TG_FLOAT64, 2, (int64_t[]){n, 2 * n}), 1, 0, 2 * n, 2), t);
    CHECK_NEAR(tg_get(z, (int64_t[]){7, 11}), 11 * n + 7, 0);
    CHECK_NEAR(tg_item(tg_sum(z, 0, NULL, false)), (double)(n * n) * (n * n - 1) / 2, 1e-3);
}

/* 8-dim broadcasting, where coalescing cannot merge everything */
static void test_binary_many_dims(void)
{
    int64_t sa[8] = {2, 1, 2, 1, 2, 1, 2, 3}, sb[7] = {2, 1, 2, 1, 2, 1, 1};
    double va[96], vb[8];
    for (int i = 0; i < 48; i++)
        va[i] = i;
    for (int i = 0; i < 8; i++)
        vb[i] = 1000 * i;
    tg_tensor *a = tt_tensor(TG_INT64, 8, sa, va), *b = tt_tensor(TG_INT64, 7, sb, vb);
    tg_tensor *y = tg_add(a, b);
    CHECK_SHAPE(y, 2, 2, 2, 2, 2, 2, 2, 3);
    int64_t os[8] = {2, 2, 2, 2, 2, 2, 2, 3}, idx[8];
    double got[384];
    tg_copy_to(y, TG_FLOAT64, got);
    bool ok = true;
    for (int64_t i = 0; i < 384 && ok; i++) {
        unflatten(8, os, i, idx);
        double w = va[bcast_index(8, os, idx, 8, sa)] + vb[bcast_index(8, os, idx, 7, sb)];
        ok = got[i] == w;
    }
    CHECK(ok);
}

/* random broadcast shapes and random layouts (permuted, sliced, expanded),
 * checked element by element through tg_get: exercises the iterator's
 * coalescing and, for the large cases, its split across threads */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static int rnd(int n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (int)(rng_state % (uint64_t)n);
}

/* a tensor with `shape` whose memory layout is random */
static tg_tensor *random_layout(int nd, const int64_t *shape)
{
    int p[TG_MAX_DIMS], inv[TG_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        p[i] = i;
    for (int i = nd - 1; i > 0; i--) {
        int j = rnd(i + 1), t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    for (int i = 0; i < nd; i++)
        inv[p[i]] = i;
    int64_t ps[TG_MAX_DIMS];
    int step = 1 + rnd(2);
    for (int i = 0; i < nd; i++)
        ps[i] = shape[p[i]] * (i == nd - 1 ? step : 1);
    int64_t n = numel_of(nd, ps);
    tg_tensor *t = tg_reshape(tg_arange(TG_FLOAT64, 0, (double)n, 1), nd, ps);
    if (nd > 0 && step > 1)
        t = tg_slice(t, nd - 1, rnd(2), ps[nd - 1], step);
    return tg_permute(t, inv);
}

static void test_binary_random_layouts(void)
{
    for (int iter = 0; iter < 200; iter++) {
        tg_scope_begin();
        bool large = iter % 50 == 0;
        int nd = large ? 3 : rnd(6);
        int64_t os[TG_MAX_DIMS], as[TG_MAX_DIMS], bs[TG_MAX_DIMS];
        for (int i = 0; i < nd; i++)
            os[i] = large ? 82 + rnd(20) : 1 + rnd(4); /* large: > 2 grains */
        int na = nd - rnd(nd + 1), nb = nd - rnd(nd + 1);
        for (int i = 0; i < na; i++)
            as[i] = rnd(3) ? os[i + nd - na] : 1;
        for (int i = 0; i < nb; i++)
            bs[i] = rnd(3) ? os[i + nd - nb] : 1;
        tg_tensor *a = random_layout(na, as), *b = random_layout(nb, bs);
        if (rnd(3) == 0 && na > 0) /* a stride-0 view as well */
            a = tg_expand(tg_slice(a, 0, 0, 1, 1), na, as);
        tg_tensor *y = tg_sub(a, b);
        CHECK(y != NULL);
        if (!y) {
            tg_scope_end();
            continue;
        }
        int ynd = tg_ndim(y);
        int64_t n = tg_numel(y), idx[TG_MAX_DIMS], ia[TG_MAX_DIMS], ib[TG_MAX_DIMS];
        bool ok = true;
        for (int64_t f = 0; f < n && ok; f += large ? 61 : 1) {
            unflatten(ynd, tg_shape(y), f, idx);
            for (int i = 0; i < na; i++)
                ia[i] = tg_shape(a)[i] == 1 ? 0 : idx[i + ynd - na];
            for (int i = 0; i < nb; i++)
                ib[i] = tg_shape(b)[i] == 1 ? 0 : idx[i + ynd - nb];
            ok = tg_get(y, idx) == tg_get(a, ia) - tg_get(b, ib);
        }
        if (!ok)
            tt_fail(__FILE__, __LINE__, "iteration %d: wrong value", iter);
        tt_checks++;
        tg_scope_end();
    }
}

/* ---- unary ops against libm ------------------------------------------------ */
typedef enum uop {
    NEG, ABS, EXP, LOG, SQRT, RSQRT, SIN, COS, TANH, SIGMOID, RELU, LEAKY, ELU,
    GELU, ERF, SOFTPLUS, FLOOR, CEIL, ROUND, SIGN, CLAMP, HARDSWISH, N_UOP
} uop;
static const char *const uname[N_UOP] = {
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
    "relu", "leaky_relu", "elu", "gelu", "erf", "softplus", "floor", "ceil",
    "round", "sign", "clamp", "hardswish"};

static tg_tensor *apply_unary(uop op, tg_tensor *x)
{
    switch (op) {
    case NEG: return tg_neg(x);
    case ABS: return tg_abs(x);
    case EXP: return tg_exp(x);
    case LOG: return tg_log(x);
    case SQRT: return tg_sqrt(x);
    case RSQRT: return tg_rsqrt(x);
    case SIN: return tg_sin(x);
    case COS: return tg_cos(x);
    case TANH: return tg_tanh(x);
    case SIGMOID: return tg_sigmoid(x);
    case RELU: return tg_relu(x);
    case LEAKY: return tg_leaky_relu(x, 0.1);
    case ELU: return tg_elu(x, 1.3);
    case GELU: return tg_gelu(x);
    case ERF: return tg_erf(x);
    case SOFTPLUS: return tg_softplus(x);
    case FLOOR: return tg_floor(x);
    case CEIL: return tg_ceil(x);
    case ROUND: return tg_round(x);
    case SIGN: return tg_sign(x);
    case CLAMP: return tg_clamp(x, -0.5, 0.7);
    case HARDSWISH: return tg_hardswish(x);
    default: return NULL;
    }
}

static double ref_unary(uop op, double x)
{
    switch (op) {
    case NEG: return -x;
    case ABS: return fabs(x);
    case EXP: return exp(x);
    case LOG: return log(x);
    case SQRT: return sqrt(x);
    case RSQRT: return 1 / sqrt(x);
    case SIN: return sin(x);
    case COS: return cos(x);
    case TANH: return tanh(x);
    case SIGMOID: return 1 / (1 + exp(-x));
    case RELU: return isnan(x) ? x : x > 0 ? x : 0;
    case LEAKY: return x > 0 ? x : 0.1 * x;
    case ELU: return x > 0 ? x : 1.3 * expm1(x);
    case GELU: return 0.5 * x * erfc(-x / sqrt(2.0)); /* accurate for x << 0 */
    case ERF: return erf(x);
    case SOFTPLUS: return log1p(exp(x));
    case FLOOR: return floor(x);
    case CEIL: return ceil(x);
    case ROUND: return nearbyint(x);
    case SIGN: return (x > 0) - (x < 0);
    case CLAMP: return isnan(x) ? x : x < -0.5 ? -0.5 : x > 0.7 ? 0.7 : x;
    case HARDSWISH: return x <= -3 ? 0 : x >= 3 ? x : x * (x + 3) / 6;
    default: return NAN;
    }
}

static bool positive_domain(uop op) { return op == LOG || op == SQRT || op == RSQRT; }

static void test_unary_float(void)
{
    double xs[24];
    for (int i = 0; i < 20; i++)
        xs[i] = -4.5 + 0.47 * i; /* crosses 0, no exact zero */
    xs[20] = 0;
    xs[21] = 2.5;
    xs[22] = -1.5;
    xs[23] = 30;
    const tg_dtype fdt[2] = {TG_FLOAT32, TG_FLOAT64};
    for (int op = 0; op < N_UOP; op++)
        for (int d = 0; d < 2; d++)
            for (int layout = 0; layout < 2; layout++) {
                double in[24], want[24], got[24];
                for (int i = 0; i < 24; i++) {
                    in[i] = positive_domain((uop)op) ? fabs(xs[i]) + 0.01 : xs[i];
                    if (fdt[d] == TG_FLOAT32)
                        in[i] = (float)in[i];
                    want[i] = ref_unary((uop)op, in[i]);
                }
                tg_tensor *x = tt_tensor(fdt[d], 2, (int64_t[]){4, 6}, in);
                if (layout)
                    x = transposed(strided(x));
                tg_tensor *y = apply_unary((uop)op, x);
                tt_checks++;
                if (!y || tg_dtype_of(y) != fdt[d]) {
                    tt_fail(__FILE__, __LINE__, "%s %s: %s", uname[op],
                            tg_dtype_name(fdt[d]), y ? "wrong dtype" : tg_last_error());
                    continue;
                }
                CHECK_SHAPE(y, 4, 6);
                tg_copy_to(y, TG_FLOAT64, got);
                double rel = fdt[d] == TG_FLOAT32 ? 2e-6 : 1e-14;
                for (int i = 0; i < 24; i++) {
                    double w = fdt[d] == TG_FLOAT32 ? (double)(float)want[i] : want[i];
                    if (!(fabs(got[i] - w) <= rel * fmax(1e-3, fabs(w)))) {
                        tt_fail(__FILE__, __LINE__, "%s %s layout %d: f(%.9g) = %.12g, "
                                "expected %.12g", uname[op], tg_dtype_name(fdt[d]),
                                layout, in[i], got[i], w);
                        break;
                    }
                }
            }
}

static void test_unary_special(void)
{
    /* round: half to even */
    double h[8] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997};
    double he[8] = {-2, -2, -0.0, 0, 2, 2, 4, 0};
    CHECK_TENSOR(tg_round(tt_tensor(TG_FLOAT64, 1, (int64_t[]){8}, h)), he, 0);
    CHECK_TENSOR(tg_round(tt_tensor(TG_FLOAT32, 1, (int64_t[]){8}, h)), he, 0);
    /* NaN passes through, infinities saturate */
    double s[3] = {NAN, INFINITY, -INFINITY};
    tg_tensor *x = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, s);
    CHECK_TENSOR(tg_relu(x), ((double[]){NAN, INFINITY, 0}), 0);
    CHECK_TENSOR(tg_clamp(x, -1, 1), ((double[]){NAN, 1, -1}), 0);
    CHECK_TENSOR(tg_sigmoid(x), ((double[]){NAN, 1, 0}), 0);
    CHECK_TENSOR(tg_tanh(x), ((double[]){NAN, 1, -1}), 0);
    CHECK_TENSOR(tg_softplus(x), ((double[]){NAN, INFINITY, 0}), 0);
    CHECK_TENSOR(tg_abs(x), ((double[]){NAN, INFINITY, INFINITY}), 0);
    CHECK_TENSOR(tg_exp(x), ((double[]){NAN, INFINITY, 0}), 0);
    CHECK_TENSOR(tg_sign(x), ((double[]){0, 1, -1}), 0);
    /* stable sigmoid and softplus far from 0 */
    double far[2] = {-800, 800};
    tg_tensor *f = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, far);
    CHECK_TENSOR(tg_sigmoid(f), ((double[]){0, 1}), 0);
    CHECK_TENSOR(tg_softplus(f), ((double[]){0, 800}), 0);
    CHECK_TENSOR(tg_log(tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){0, -1})),
                 ((double[]){-INFINITY, NAN}), 0);
    /* hardswish: PyTorch's values and gradients (float32), -0 below -3 */
    double hx[9] = {-4, -3, -1.5, 0, 1, 2.9, 3, 4, NAN};
    tg_tensor *hv = tt_tensor(TG_FLOAT32, 1, (int64_t[]){9}, hx);
    CHECK_OK(tg_set_requires_grad(hv, true));
    tg_tensor *hy = tg_hardswish(hv);
    CHECK_TENSOR(hy, ((double[]){-0.0, -0.0, -0.375, 0, (float)(2.0 / 3),
                                 (float)2.8516666889190674, 3, 4, NAN}), 0);
    CHECK(signbit(tg_get(hy, (int64_t[]){0})) && signbit(tg_get(hy, (int64_t[]){1})));
    CHECK_OK(tg_backward(tg_sum(hy, 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(hv), ((double[]){0, -0.5, 0, 0.5, (float)0.8333333730697632,
                                          (float)1.4666666984558105, 1.5, 1, 1}), 1e-7);
    /* integers compute in float32 */
    tg_tensor *hi = tg_hardswish(tg_arange(TG_INT32, -4, 5, 1));
    CHECK(hi && tg_dtype_of(hi) == TG_FLOAT32);
    /* leaky_relu and elu parameters, clamp with lo == hi */
    double v[3] = {-2, 0, 3};
    tg_tensor *t = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, v);
    CHECK_TENSOR(tg_leaky_relu(t, 0.25), ((double[]){-0.5, 0, 3}), 0);
    CHECK_TENSOR(tg_elu(t, 2), ((double[]){2 * expm1(-2.0), 0, 3}), 1e-15);
    CHECK_TENSOR(tg_clamp(t, 1, 1), ((double[]){1, 1, 1}), 0);
    /* 0-d and empty */
    CHECK_NEAR(tg_item(tg_exp(tg_scalar(TG_FLOAT64, 1))), exp(1.0), 1e-15);
    CHECK_SHAPE(tg_sin(tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 0})), 3, 0);
}

static void test_unary_integer(void)
{
    double v[6] = {-7, -1, 0, 1, 2, 100};
    const tg_dtype idt[2] = {TG_INT32, TG_INT64};
    for (int d = 0; d < 2; d++) {
        tg_tensor *x = strided(tt_tensor(idt[d], 1, (int64_t[]){6}, v));
        struct { tg_tensor *y; double e[6]; } c[] = {
            {tg_neg(x), {7, 1, 0, -1, -2, -100}},
            {tg_abs(x), {7, 1, 0, 1, 2, 100}},
            {tg_relu(x), {0, 0, 0, 1, 2, 100}},
            {tg_sign(x), {-1, -1, 0, 1, 1, 1}},
            {tg_floor(x), {-7, -1, 0, 1, 2, 100}},
            {tg_ceil(x), {-7, -1, 0, 1, 2, 100}},
            {tg_round(x), {-7, -1, 0, 1, 2, 100}},
            {tg_clamp(x, -1, 2), {-1, -1, 0, 1, 2, 2}},
        };
        for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
            CHECK(c[k].y && tg_dtype_of(c[k].y) == idt[d]);
            CHECK_TENSOR(c[k].y, c[k].e, 0);
        }
        /* float-only ops compute integer inputs in float32 */
        tg_tensor *e = tg_exp(x);
        CHECK(tg_dtype_of(e) == TG_FLOAT32);
        CHECK_NEAR(tg_get(e, (int64_t[]){4}), (float)exp(2.0), 1e-5);
        CHECK(tg_dtype_of(tg_sigmoid(x)) == TG_FLOAT32);
        CHECK_NEAR(tg_get(tg_sqrt(x), (int64_t[]){5}), 10, 0);
    }
    /* the most negative integer negates to itself (wraps, no UB) */
    int32_t i32min = INT32_MIN;
    tg_tensor *m32 = tg_from_data(TG_INT32, 1, (int64_t[]){1}, &i32min);
    CHECK_NEAR(tg_item(tg_neg(m32)), INT32_MIN, 0);
    CHECK_NEAR(tg_item(tg_abs(m32)), INT32_MIN, 0);
    int64_t i64min = INT64_MIN, back = 0;
    tg_tensor *m64 = tg_from_data(TG_INT64, 1, (int64_t[]){1}, &i64min);
    CHECK_OK(tg_copy_to(tg_neg(m64), TG_INT64, &back));
    CHECK(back == INT64_MIN);
    CHECK_OK(tg_copy_to(tg_abs(m64), TG_INT64, &back));
    CHECK(back == INT64_MIN);
    double u[3] = {0, 5, 255};
    tg_tensor *xu = tt_tensor(TG_UINT8, 1, (int64_t[]){3}, u);
    CHECK_TENSOR(tg_abs(xu), u, 0);
    CHECK_TENSOR(tg_sign(xu), ((double[]){0, 1, 1}), 0);
    CHECK_TENSOR(tg_clamp(xu, 1, 200), ((double[]){1, 5, 200}), 0);
    CHECK(tg_dtype_of(tg_relu(xu)) == TG_UINT8);
}

/* ---- comparisons and logic ------------------------------------------------- */
static void test_compare(void)
{
    double a[5] = {1, 2, NAN, -1, 3}, b[5] = {1, 3, NAN, NAN, 2};
    const tg_dtype fdt[2] = {TG_FLOAT32, TG_FLOAT64};
    for (int d = 0; d < 2; d++) {
        tg_tensor *x = tt_tensor(fdt[d], 1, (int64_t[]){5}, a);
        tg_tensor *y = strided(tt_tensor(fdt[d], 1, (int64_t[]){5}, b));
        CHECK(tg_dtype_of(tg_eq(x, y)) == TG_BOOL);
        CHECK_TENSOR(tg_eq(x, y), ((double[]){1, 0, 0, 0, 0}), 0);
        CHECK_TENSOR(tg_ne(x, y), ((double[]){0, 1, 1, 1, 1}), 0);
        CHECK_TENSOR(tg_lt(x, y), ((double[]){0, 1, 0, 0, 0}), 0);
        CHECK_TENSOR(tg_le(x, y), ((double[]){1, 1, 0, 0, 0}), 0);
        CHECK_TENSOR(tg_gt(x, y), ((double[]){0, 0, 0, 0, 1}), 0);
        CHECK_TENSOR(tg_ge(x, y), ((double[]){1, 0, 0, 0, 1}), 0);
        /* logic: NaN is non-zero, hence true */
        CHECK_TENSOR(tg_logical_and(x, y), ((double[]){1, 1, 1, 1, 1}), 0);
        CHECK_TENSOR(tg_logical_not(x), ((double[]){0, 0, 0, 0, 0}), 0);
    }
    /* integers, broadcasting and mixed dtypes ([3,1] against [4]) */
    double c[3] = {0, 2, 5}, r[4] = {-1, 2, 2.5, 5};
    tg_tensor *ci = tt_tensor(TG_INT32, 2, (int64_t[]){3, 1}, c);
    tg_tensor *rf = tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, r);
    tg_tensor *lt = tg_lt(ci, rf);
    CHECK_SHAPE(lt, 3, 4);
    CHECK_TENSOR(lt, ((double[]){0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0}), 0);
    CHECK_TENSOR(tg_eq(ci, tg_scalar(TG_FLOAT64, 2)), ((double[]){0, 1, 0}), 0);
    /* uint8 against negative int32: compares as int32, not wrapped */
    tg_tensor *u = tt_tensor(TG_UINT8, 1, (int64_t[]){2}, (double[]){0, 200});
    CHECK_TENSOR(tg_gt(u, tg_full(TG_INT32, 1, (int64_t[]){2}, -1)), ((double[]){1, 1}), 0);
    /* int64 beyond float precision compares exactly */
    int64_t big[2] = {9007199254740993LL, 9007199254740992LL};
    tg_tensor *tb = tg_from_data(TG_INT64, 1, (int64_t[]){2}, big);
    CHECK_TENSOR(tg_eq(tb, tg_slice(tb, 0, 0, 1, 1)), ((double[]){1, 0}), 0);
    /* bool operands */
    double p[4] = {0, 0, 1, 1}, q[4] = {0, 1, 0, 1};
    tg_tensor *tp = tt_tensor(TG_BOOL, 1, (int64_t[]){4}, p);
    tg_tensor *tq = tt_tensor(TG_BOOL, 1, (int64_t[]){4}, q);
    CHECK_TENSOR(tg_logical_and(tp, tq), ((double[]){0, 0, 0, 1}), 0);
    CHECK_TENSOR(tg_logical_or(tp, tq), ((double[]){0, 1, 1, 1}), 0);
    CHECK_TENSOR(tg_logical_xor(tp, tq), ((double[]){0, 1, 1, 0}), 0);
    CHECK_TENSOR(tg_logical_not(tp), ((double[]){1, 1, 0, 0}), 0);
    CHECK_TENSOR(tg_eq(tp, tq), ((double[]){1, 0, 0, 1}), 0);
    CHECK_TENSOR(tg_lt(tp, tq), ((double[]){0, 1, 0, 0}), 0);
    /* logic on numbers: non-zero is true */
    tg_tensor *n1 = tt_tensor(TG_INT64, 1, (int64_t[]){4}, (double[]){0, 3, -2, 0});
    tg_tensor *n2 = tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, (double[]){0.5, 0, 1, 0});
    CHECK_TENSOR(tg_logical_or(n1, n2), ((double[]){1, 1, 1, 0}), 0);
    CHECK_TENSOR(tg_logical_xor(n1, n2), ((double[]){1, 1, 0, 0}), 0);
    /* comparisons are not differentiable: no grad_fn */
    tg_tensor *w = tt_rand(1, (int64_t[]){3}, -1, 1);
    tg_tensor *cmp = tg_gt(w, tg_zeros(TG_FLOAT64, 0, NULL));
    CHECK(!tg_requires_grad(cmp) && tg_grad_fn_name(cmp) == NULL);
    /* errors */
    CHECK_ERROR(tg_eq(tg_ones(TG_FLOAT32, 1, (int64_t[]){3}), tg_ones(TG_FLOAT32, 1, (int64_t[]){2})),
                TG_ERR_SHAPE, "eq: shapes [3] and [2] cannot be broadcast");
    CHECK_ERROR(tg_logical_and(tp, NULL), TG_ERR_ARG, "logical_and: input 1 is NULL");
}

static void test_where(void)
{
    double k[3] = {1, 0, 1}, a[4] = {1, 2, 3, 4};
    tg_tensor *cond = tt_tensor(TG_BOOL, 2, (int64_t[]){3, 1}, k);
    tg_tensor *ta = strided(tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, a));
    tg_tensor *y = tg_where(cond, ta, tg_scalar(TG_FLOAT32, -1));
    CHECK_SHAPE(y, 3, 4);
    CHECK(tg_dtype_of(y) == TG_FLOAT32);
    CHECK_TENSOR(y, ((double[]){1, 2, 3, 4, -1, -1, -1, -1, 1, 2, 3, 4}), 0);
    /* every element size, promotion, and a non-bool condition */
    const tg_dtype dts[6] = {TG_FLOAT32, TG_FLOAT64, TG_INT32, TG_INT64, TG_UINT8, TG_BOOL};
    tg_tensor *fc = tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, (double[]){0, 0.5, NAN, -2});
    for (int d = 0; d < 6; d++) {
        tg_tensor *w = tg_where(fc, tg_ones(dts[d], 1, (int64_t[]){4}), tg_zeros(dts[d], 0, NULL));
        CHECK(w && tg_dtype_of(w) == dts[d]);
        CHECK_TENSOR(w, ((double[]){0, 1, 1, 1}), 0);
    }
    tg_tensor *mixed = tg_where(cond, tg_ones(TG_INT32, 2, (int64_t[]){3, 2}), tg_full(TG_FLOAT64, 1, (int64_t[]){2}, 0.5));
    CHECK(tg_dtype_of(mixed) == TG_FLOAT64);
    CHECK_TENSOR(mixed, ((double[]){1, 1, 0.5, 0.5, 1, 1}), 0);
    /* the condition's shape broadcasts too */
    CHECK_SHAPE(tg_where(tg_ones(TG_BOOL, 3, (int64_t[]){2, 1, 1}), ta, ta), 2, 1, 4);
    CHECK_ERROR(tg_where(cond, tg_ones(TG_FLOAT32, 1, (int64_t[]){4}), tg_ones(TG_FLOAT32, 1, (int64_t[]){3})),
                TG_ERR_SHAPE, "where: shapes [4] and [3]");
    CHECK_ERROR(tg_where(tg_ones(TG_BOOL, 1, (int64_t[]){2}), ta, ta), TG_ERR_SHAPE, "where");
}

/* where's row forms: a one-element condition (a copy of one side,
 * contiguous or strided), contiguous rows (a blend), strided rows */
static void test_where_rows(void)
{
    enum { R = 37, C = 5, N = R * C };
    double av[N], bv[N], kv[N], want[N];
    for (int i = 0; i < N; i++) {
        av[i] = i;
        bv[i] = -1 - i;
        kv[i] = i % 3 == 0;
    }
    const tg_dtype dts[3] = {TG_FLOAT32, TG_FLOAT64, TG_UINT8};
    for (int d = 0; d < 3; d++) {
        tg_tensor *a = tt_tensor(dts[d], 2, (int64_t[]){R, C}, av);
        tg_tensor *b = tg_abs(tt_tensor(dts[d], 2, (int64_t[]){R, C}, bv));
        double *bvals = tt_values(b);
        for (int side = 0; side < 2; side++) { /* a scalar condition: one side */
            tg_tensor *k1 = tt_tensor(TG_BOOL, 1, (int64_t[]){1}, (double[]){side});
            tg_tensor *y = tg_where(k1, a, b);
            CHECK_TENSOR(y, side ? av : bvals, 0);
            /* a transposed (strided) side */
            tg_tensor *at = tg_transpose(a, 0, 1), *bt = tg_transpose(b, 0, 1);
            double *tv = tt_values(side ? at : bt);
            CHECK_TENSOR(tg_where(k1, at, bt), tv, 0);
            free(tv);
            /* a broadcast scalar side */
            tg_tensor *w = tg_where(k1, tg_scalar(dts[d], 7), b);
            for (int i = 0; i < N; i++)
                want[i] = side ? 7 : bvals[i];
            CHECK_TENSOR(w, want, 0);
        }
        tg_tensor *k = tt_tensor(TG_BOOL, 2, (int64_t[]){R, C}, kv);
        for (int i = 0; i < N; i++)
            want[i] = kv[i] ? av[i] : bvals[i];
        CHECK_TENSOR(tg_where(k, a, b), want, 0);
        /* strided: the transposed mask over transposed sides */
        tg_tensor *yt = tg_where(tg_transpose(k, 0, 1), tg_transpose(a, 0, 1), tg_transpose(b, 0, 1));
        CHECK_TENSOR(tg_transpose(yt, 0, 1), want, 0);
        free(bvals);
    }
    /* the copy keeps a NaN's payload bits */
    tg_tensor *nan = tg_full(TG_FLOAT32, 1, (int64_t[]){3}, NAN);
    tg_tensor *y = tg_where(tg_ones(TG_BOOL, 0, NULL), nan, tg_zeros(TG_FLOAT32, 1, (int64_t[]){3}));
    CHECK(memcmp(tg_data(y), tg_data(nan), 3 * sizeof(float)) == 0);
}

/* ---- cast -------------------------------------------------------------------- */
static void test_cast(void)
{
    const tg_dtype dts[6] = {TG_FLOAT32, TG_FLOAT64, TG_INT32, TG_INT64, TG_UINT8, TG_BOOL};
    double src[5] = {0, 1, 2.75, 100, 0.25};
    for (int f = 0; f < 6; f++) {
        tg_tensor *x = strided(tt_tensor(dts[f], 1, (int64_t[]){5}, src));
        double xv[5];
        tg_copy_to(x, TG_FLOAT64, xv); /* what x holds after its own conversion */
        for (int t = 0; t < 6; t++) {
            tg_tensor *y = tg_cast(x, dts[t]);
            CHECK(y && tg_dtype_of(y) == dts[t]);
            CHECK_SHAPE(y, 5);
            double e[5];
            for (int i = 0; i < 5; i++)
                e[i] = dts[t] == TG_BOOL ? xv[i] != 0
                       : tg_dtype_is_float(dts[t]) ? (dts[t] == TG_FLOAT32 ? (float)xv[i] : xv[i])
                                                   : trunc(xv[i]);
            CHECK_TENSOR(y, e, 0);
        }
    }
    /* float to bool: any non-zero, NaN included, is true */
    tg_tensor *fb = tg_cast(tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, (double[]){0, -0.0, 1e-30, NAN}), TG_BOOL);
    CHECK_TENSOR(fb, ((double[]){0, 0, 1, 1}), 0);
    /* float to int truncates toward zero */
    CHECK_TENSOR(tg_cast(tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, (double[]){-2.7, -0.5, 0.5, 2.7}), TG_INT32),
                 ((double[]){-2, 0, 0, 2}), 0);
    /* bool to float */
    CHECK_TENSOR(tg_cast(tt_tensor(TG_BOOL, 1, (int64_t[]){2}, (double[]){1, 0}), TG_FLOAT64),
                 ((double[]){1, 0}), 0);
    /* int64 to float64 keeps 2^53 exactly; cast to the same dtype copies */
    tg_tensor *x = tg_full(TG_INT64, 1, (int64_t[]){1}, 9007199254740992.0);
    CHECK_NEAR(tg_item(tg_cast(x, TG_FLOAT64)), 9007199254740992.0, 0);
    tg_tensor *same = tg_cast(x, TG_INT64);
    CHECK(same && !tg_shares_storage(same, x));
    CHECK_ERROR(tg_cast(x, (tg_dtype)7), TG_ERR_DTYPE, "cast: invalid target dtype 7");
    CHECK_ERROR(tg_cast(NULL, TG_FLOAT32), TG_ERR_ARG, "cast: input 0 is NULL");
}

/* ---- gradients ---------------------------------------------------------------- */
/* a random float64 leaf in [lo, hi) whose values keep at least `gap` from
 * every kink (so finite differences never straddle one) */
static tg_tensor *rand_away(int nd, const int64_t *s, double lo, double hi,
                            const double *kinks, int n_kinks)
{
    tg_tensor *t = tt_rand(nd, s, lo, hi);
    double *d = tg_data(t);
    for (int64_t i = 0; i < tg_numel(t); i++)
        for (int k = 0; k < n_kinks; k++)
            if (fabs(d[i] - kinks[k]) < 0.05)
                d[i] = kinks[k] + (d[i] < kinks[k] ? -0.05 : 0.05);
    return t;
}

static tg_tensor *f_binary(int n, tg_tensor *const *in, void *u)
{
    (void)n;
    return bfn[*(const bop *)u](in[0], in[1]);
}

static void test_binary_gradcheck(void)
{
    const bcase gc[4] = {
        {2, 1, {3, 1}, {4}}, {3, 2, {2, 1, 3}, {5, 1}}, {0, 2, {0}, {2, 3}}, {2, 0, {2, 3}, {0}},
    };
    for (int op = 0; op < N_BOP; op++)
        for (int c = 0; c < 4; c++) {
            double alo = -1, ahi = 1, blo = -1, bhi = 1;
            if (op == DIV)
                blo = 0.5, bhi = 1.5;
            if (op == POW)
                alo = 0.5, ahi = 1.5, blo = -1.5, bhi = 1.5;
            tg_tensor *in[2] = {tt_rand(gc[c].na, gc[c].sa, alo, ahi),
                                tt_rand(gc[c].nb, gc[c].sb, blo, bhi)};
            bop o = (bop)op;
            tt_current = bname[op];
            CHECK_GRADCHECK(f_binary, &o, 2, in);
        }
    tt_current = "test_binary_gradcheck";
}

static tg_tensor *f_mixed(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    /* a float64 leaf times an integer tensor and a fixed float32 one */
    tg_tensor *k = tg_arange(TG_INT32, 1, 4, 1);
    return tg_sub(tg_mul(in[0], k), tg_maximum(in[0], tg_full(TG_FLOAT32, 1, (int64_t[]){3}, 0.1)));
}

static tg_tensor *f_scalars(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    tg_tensor *x = in[0];
    return tg_add(tg_mul_scalar(tg_add_scalar(x, 0.7), -1.3),
                  tg_add(tg_pow_scalar(x, 2.5), tg_pow_scalar(x, -1)));
}

static tg_tensor *f_pow3(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return tg_pow_scalar(in[0], 3);
}

static void test_scalar_and_mixed_gradcheck(void)
{
    tg_tensor *x[1] = {tt_rand(2, (int64_t[]){2, 3}, 0.5, 1.5)};
    CHECK_GRADCHECK(f_scalars, NULL, 1, x);
    tg_tensor *y[1] = {rand_away(1, (int64_t[]){3}, -1, 1, (double[]){0.1}, 1)};
    CHECK_GRADCHECK(f_mixed, NULL, 1, y);
    /* pow with an integer exponent and a negative base */
    tg_tensor *z[1] = {tt_rand(1, (int64_t[]){4}, -2, -0.5)};
    CHECK_GRADCHECK(f_pow3, NULL, 1, z);
    /* a float32 leaf mixed with float64: its gradient comes back float32 */
    tg_tensor *w = tg_full(TG_FLOAT32, 1, (int64_t[]){2}, 3);
    tg_set_requires_grad(w, true);
    tg_tensor *l = tg_sum(tg_mul(w, tg_full(TG_FLOAT64, 1, (int64_t[]){2}, 0.5)), 0, NULL, false);
    CHECK(tg_dtype_of(l) == TG_FLOAT64);
    CHECK_OK(tg_backward(l, NULL, false));
    CHECK(tg_grad(w) && tg_dtype_of(tg_grad(w)) == TG_FLOAT32);
    CHECK_TENSOR(tg_grad(w), ((double[]){0.5, 0.5}), 0);
}

typedef struct ucase {
    uop op;
    double lo, hi;
    double kinks[3];
    int n_kinks;
} ucase;

static tg_tensor *f_unary(int n, tg_tensor *const *in, void *u)
{
    (void)n;
    return apply_unary(((const ucase *)u)->op, in[0]);
}

static void test_unary_gradcheck(void)
{
    const ucase uc[] = {
        {NEG, -2, 2, {0}, 0},        {ABS, -2, 2, {0}, 1},
        {EXP, -2, 2, {0}, 0},        {LOG, 0.2, 3, {0}, 0},
        {SQRT, 0.2, 3, {0}, 0},      {RSQRT, 0.2, 3, {0}, 0},
        {SIN, -3, 3, {0}, 0},        {COS, -3, 3, {0}, 0},
        {TANH, -2, 2, {0}, 0},       {SIGMOID, -4, 4, {0}, 0},
        {RELU, -2, 2, {0}, 1},       {LEAKY, -2, 2, {0}, 1},
        {ELU, -2, 2, {0}, 1},        {GELU, -3, 3, {0}, 0},
        {ERF, -2, 2, {0}, 0},        {SOFTPLUS, -4, 4, {0}, 0},
        {FLOOR, -2, 2, {-1, 0, 1}, 3}, {CEIL, -2, 2, {-1, 0, 1}, 3},
        {ROUND, -1.4, 1.4, {-0.5, 0.5}, 2}, {SIGN, -2, 2, {0}, 1},
        {CLAMP, -1, 1, {-0.5, 0.7}, 2}, {HARDSWISH, -5, 5, {-3, 3}, 2},
    };
    for (size_t k = 0; k < sizeof uc / sizeof uc[0]; k++) {
        tt_current = uname[uc[k].op];
        tg_tensor *in[1] = {rand_away(2, (int64_t[]){3, 4}, uc[k].lo, uc[k].hi, uc[k].kinks,
                                      uc[k].n_kinks)};
        CHECK_GRADCHECK(f_unary, (void *)&uc[k], 1, in);
        tg_tensor *in0[1] = {rand_away(0, NULL, uc[k].lo, uc[k].hi, uc[k].kinks, uc[k].n_kinks)};
        CHECK_GRADCHECK(f_unary, (void *)&uc[k], 1, in0);
    }
    tt_current = "test_unary_gradcheck";
}

static tg_tensor *f_where(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    tg_tensor *cond = tt_tensor(TG_BOOL, 2, (int64_t[]){3, 1}, (double[]){1, 0, 1});
    return tg_where(cond, in[0], in[1]);
}

static tg_tensor *f_cast(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return tg_mul(tg_cast(in[0], TG_FLOAT64), in[0]);
}

static void test_where_cast_gradcheck(void)
{
    tg_tensor *in[2] = {tt_rand(1, (int64_t[]){4}, -1, 1), tt_rand(0, NULL, -1, 1)};
    CHECK_GRADCHECK(f_where, NULL, 2, in);
    tg_tensor *in2[2] = {tt_rand(2, (int64_t[]){3, 4}, -1, 1), tt_rand(1, (int64_t[]){4}, -1, 1)};
    CHECK_GRADCHECK(f_where, NULL, 2, in2);
    tg_tensor *x[1] = {tt_rand(2, (int64_t[]){2, 3}, -1, 1)};
    CHECK_GRADCHECK(f_cast, NULL, 1, x);
    /* a float32 -> float64 cast sends a float32 gradient back */
    tg_tensor *w = tg_full(TG_FLOAT32, 1, (int64_t[]){3}, 2);
    tg_set_requires_grad(w, true);
    tg_tensor *c = tg_cast(w, TG_FLOAT64);
    CHECK(strcmp(tg_grad_fn_name(c), "cast") == 0);
    CHECK_OK(tg_backward(tg_sum(tg_mul(c, c), 0, NULL, false), NULL, false));
    CHECK(tg_dtype_of(tg_grad(w)) == TG_FLOAT32);
    CHECK_TENSOR(tg_grad(w), ((double[]){4, 4, 4}), 0);
    /* a cast to an integer dtype cuts the graph */
    tg_tensor *i = tg_cast(w, TG_INT32);
    CHECK(i && !tg_requires_grad(i) && tg_grad_fn_name(i) == NULL);
}

/* maximum/minimum split the gradient evenly on ties, as PyTorch does */
static void test_extremum_ties(void)
{
    tg_tensor *a = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_tensor *b = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){2, 2, 1});
    tg_set_requires_grad(a, true);
    tg_set_requires_grad(b, true);
    CHECK_OK(tg_backward(tg_sum(tg_maximum(a, b), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(a), ((double[]){0, 0.5, 1}), 0);
    CHECK_TENSOR(tg_grad(b), ((double[]){1, 0.5, 0}), 0);
    tg_zero_grad(a);
    tg_zero_grad(b);
    CHECK_OK(tg_backward(tg_sum(tg_minimum(a, b), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(a), ((double[]){1, 0.5, 0}), 0);
    CHECK_TENSOR(tg_grad(b), ((double[]){0, 0.5, 1}), 0);
    /* pow's exponent gradient is 0 where the base is 0 and the exponent
     * >= 0 (not NaN), and a^b log a = inf * -inf where it is < 0
     * (PyTorch's) */
    tg_tensor *base = tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, (double[]){0, 2, 0, 0});
    tg_tensor *ex = tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, (double[]){2, 3, 0, -0.5});
    tg_set_requires_grad(ex, true);
    CHECK_OK(tg_backward(tg_sum(tg_pow(base, ex), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(ex), ((double[]){0, 8 * log(2.0), 0, -INFINITY}), 1e-12);
}

/* ---- errors --------------------------------------------------------------------- */
static void test_errors(void)
{
    tg_tensor *a = tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *b = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    CHECK_ERROR(tg_add(a, b), TG_ERR_SHAPE, "[2, 3]");
    CHECK_ERROR(tg_add(a, b), TG_ERR_SHAPE, "[4]");
    CHECK_ERROR(tg_add(a, b), TG_ERR_SHAPE, "add: ");
    CHECK_ERROR(tg_maximum(b, a), TG_ERR_SHAPE, "maximum: shapes [4] and [2, 3]");
    CHECK_ERROR(tg_div(tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 1}), tg_ones(TG_FLOAT32, 2, (int64_t[]){3, 1})),
                TG_ERR_SHAPE, "div: shapes [2, 1] and [3, 1] cannot be broadcast (dim 0: 2 vs 3");
    tg_tensor *t = tg_ones(TG_BOOL, 1, (int64_t[]){4});
    for (int op = 0; op < N_BOP; op++) {
        CHECK_ERROR(bfn[op](t, t), TG_ERR_DTYPE, bname[op]);
        CHECK_ERROR(bfn[op](b, t), TG_ERR_DTYPE, "bool");
    }
    /* bools: the math functions compute in float32 as PyTorch's (0 and
     * 1); the other unary ops refuse them, as PyTorch's activations */
    for (int op = 0; op < N_UOP; op++) {
        bool math = op == EXP || op == LOG || op == SQRT || op == RSQRT || op == SIN ||
                    op == COS || op == TANH || op == SIGMOID || op == ERF;
        if (!math) {
            CHECK_ERROR(apply_unary((uop)op, t), TG_ERR_DTYPE, uname[op]);
            continue;
        }
        tg_tensor *y = apply_unary((uop)op, t);
        CHECK(y && tg_dtype_of(y) == TG_FLOAT32 &&
              tt_same(y, apply_unary((uop)op, tg_ones(TG_FLOAT32, 1, (int64_t[]){4}))));
    }
    { /* uint8 negation wraps modulo 256, as PyTorch's (-x is 256 - x) */
        const uint8_t u[4] = {0, 1, 200, 255};
        tg_tensor *n = tg_neg(tg_from_data(TG_UINT8, 1, (int64_t[]){4}, u));
        const uint8_t *v = n ? tg_data(n) : NULL;
        CHECK(v && tg_dtype_of(n) == TG_UINT8 && v[0] == 0 && v[1] == 255 && v[2] == 56 &&
              v[3] == 1);
    }
    { /* lo > hi: hi everywhere (NaN passes), and no gradient, at the bounds
       * too (PyTorch's clamp, NumPy's clip); integers as well */
        tg_tensor *c = tt_tensor(TG_FLOAT64, 1, (int64_t[]){5}, (double[]){-1, 0, 1, 2, NAN});
        CHECK_OK(tg_set_requires_grad(c, true));
        tg_tensor *cy = tg_clamp(c, 1, -1);
        CHECK_TENSOR(cy, ((double[]){-1, -1, -1, -1, NAN}), 0);
        CHECK_OK(tg_backward(tg_sum(cy, 0, NULL, false), NULL, false));
        CHECK_TENSOR(tg_grad(c), ((double[]){0, 0, 0, 0, 0}), 0);
        CHECK_TENSOR(tg_clamp(tg_arange(TG_INT64, 0, 4, 1), 3, 1), ((double[]){1, 1, 1, 1}), 0);
    }
    CHECK_ERROR(tg_add(NULL, a), TG_ERR_ARG, "add: input 0 is NULL");
    CHECK_ERROR(tg_exp(NULL), TG_ERR_ARG, "exp: input 0 is NULL");
    CHECK_ERROR(tg_leaky_relu(NULL, 0.1), TG_ERR_ARG, "leaky_relu");
    /* the first error of a chain survives */
    tg_clear_error();
    CHECK(tg_mul(tg_exp(tg_add(a, b)), a) == NULL);
    CHECK(tg_last_status() == TG_ERR_SHAPE && strstr(tg_last_error(), "add: "));
}

int main(void)
{
    RUN(test_binary_forward);
    RUN(test_binary_special_values);
    RUN(test_scalar_ops);
    RUN(test_binary_parallel);
    RUN(test_binary_many_dims);
    RUN(test_binary_random_layouts);
    RUN(test_unary_float);
    RUN(test_unary_special);
    RUN(test_unary_integer);
    RUN(test_compare);
    RUN(test_where);
    RUN(test_where_rows);
    RUN(test_cast);
    RUN(test_binary_gradcheck);
    RUN(test_scalar_and_mixed_gradcheck);
    RUN(test_unary_gradcheck);
    RUN(test_where_cast_gradcheck);
    RUN(test_extremum_ties);
    RUN(test_errors);
    return tt_finish();
}
