/* The kernels built per instruction set (kernels/cpu/isa_clone.h: 2x2 max
 * pooling, reductions, elementwise rows) give the same bits at every level
 * the CPU has: the same C at each level, without FP contraction. Each op
 * below runs at the lowest level (generic), then at each higher one this
 * machine supports (tg__cpu_force), on float32 and float64 inputs with NaNs,
 * infinities and ties, sizes around the vector widths (tails), strided and
 * broadcast operands; every output must match generic's bit for bit (NaN
 * matches any NaN). GEMM and convolution are not here: their levels fuse
 * multiply-adds differently (their own tests check each level's values).
 * The rest of the suite runs at forced levels too (ctest *_isa_* tests). */
#include "harness.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/pool.h"

#include <stdlib.h>
#include <string.h>

enum { N_OUT = 96 };

typedef struct outputs {
    int n;
    double *v[N_OUT];
    int64_t numel[N_OUT];
    const char *what[N_OUT];
} outputs;

static void keep(outputs *o, const char *what, tg_tensor *t)
{
    CHECK(t != NULL);
    if (!t || o->n == N_OUT)
        return;
    o->what[o->n] = what;
    o->numel[o->n] = tg_numel(t);
    o->v[o->n++] = tt_values(t);
}

/* few distinct values (ties), NaN and +-inf now and then */
static tg_tensor *input(tg_dtype dt, int ndim, const int64_t *shape, unsigned seed)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    double *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = (seed >> 8) % 97;
        v[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : ((double)r - 48) / 7.0;
    }
    tg_tensor *t = tt_tensor(dt, ndim, shape, v);
    free(v);
    return t;
}

static void run_ops(tg_dtype dt, outputs *o)
{
    tg_scope_begin();
    /* odd widths: vector bodies and scalar tails at every level */
    const int64_t sx[] = {3, 4, 22, 37}, sb[] = {37}, sp[] = {2, 6, 24, 34};
    tg_tensor *x = input(dt, 4, sx, 1), *b = input(dt, 1, sb, 2);
    tg_tensor *xt = tg_transpose(x, 2, 3); /* strided operand */
    keep(o, "relu", tg_relu(x));
    keep(o, "sigmoid", tg_sigmoid(x));
    keep(o, "exp", tg_exp(x));
    keep(o, "tanh", tg_tanh(xt));
    keep(o, "abs", tg_abs(xt));
    keep(o, "gelu", tg_gelu(x));
    keep(o, "gelu strided", tg_gelu(xt));
    keep(o, "gelu tanh", tg_gelu_tanh(x));
    keep(o, "add broadcast", tg_add(x, b));
    keep(o, "mul", tg_mul(x, x));
    keep(o, "div broadcast", tg_div(b, x));
    keep(o, "maximum strided", tg_maximum(xt, tg_transpose(x, 2, 3)));
    keep(o, "gt", tg_gt(x, b));
    /* finite values (NaN and infinities made 0) for casts and sums */
    tg_tensor *xf = tg_where(tg_lt(tg_abs(x), tg_scalar(dt, 1e30)), x, tg_scalar(dt, 0));
    keep(o, "cast int32", tg_cast(tg_mul(xf, tg_scalar(dt, 100)), TG_INT32));
    keep(o, "cast float64", tg_cast(x, TG_FLOAT64));
    const int last[] = {3}, mid[] = {0, 2}, all[] = {0, 1, 2, 3};
    keep(o, "sum last", tg_sum(xf, 1, last, false));
    keep(o, "sum mid", tg_sum(xf, 2, mid, false));
    keep(o, "sum all", tg_sum(xf, 4, all, false));
    keep(o, "sum strided", tg_sum(tg_transpose(xf, 1, 3), 1, last, false));
    /* rows several at a time (inner_rows): per outer index (a bias
     * gradient's N, H, W) and in one pass (the last dim) */
    const int bias[] = {0, 2, 3};
    keep(o, "sum bias", tg_sum(xf, 3, bias, false));
    keep(o, "min last", tg_min(x, 1, last, false));
    keep(o, "mean", tg_mean(xf, 1, last, true));
    keep(o, "prod", tg_prod(tg_div(xf, tg_scalar(dt, 4)), 1, last, false));
    keep(o, "max", tg_max(x, 1, last, false));
    keep(o, "max mid", tg_max(x, 2, mid, false));
    keep(o, "var", tg_var(xf, 1, last, 1, false));
    keep(o, "logsumexp", tg_logsumexp(xf, 1, last, false));
    keep(o, "argmax", tg_argmax(x, 3, false));
    keep(o, "argmax mid", tg_argmax(x, 1, false));
    keep(o, "softmax", tg_softmax(xf, 3));
    /* 2 x 2 pooling: forward, and its gradient through autograd */
    tg_tensor *p = input(dt, 4, sp, 3);
    tg_set_requires_grad(p, true);
    tg_pool2d_opts po = {{2, 2}, {2, 2}, {0, 0}, false, false};
    tg_tensor *y = tg_max_pool2d(p, &po);
    keep(o, "max_pool2d", y);
    CHECK(tg_backward(tg_sum(tg_mul(y, y), 0, NULL, false), NULL, false) == TG_OK);
    keep(o, "max_pool2d grad", tg_grad(p));
    /* GELU's gradients (one pass each: gelu_grad) */
    tg_tensor *gx = input(dt, 4, sx, 4), *gt = input(dt, 4, sx, 4);
    tg_set_requires_grad(gx, true), tg_set_requires_grad(gt, true);
    CHECK(tg_backward(tg_sum(tg_mul(tg_gelu(gx), x), 0, NULL, false), NULL, false) == TG_OK);
    keep(o, "gelu grad", tg_grad(gx));
    CHECK(tg_backward(tg_sum(tg_mul(tg_gelu_tanh(gt), x), 0, NULL, false), NULL, false) == TG_OK);
    keep(o, "gelu tanh grad", tg_grad(gt));
    /* in-place update rows */
    tg_tensor *u = tg_clone(xf);
    CHECK(tg_add_(u, xf, 0.5) == TG_OK && tg_mul_scalar_(u, 3.0) == TG_OK);
    keep(o, "add_ mul_scalar_", u);
    tg_scope_end();
}

/* the compact kernel (one-byte offsets) directly: float32 wide and narrow rows */
static void run_compact(outputs *o)
{
    for (int64_t W = 16; W <= 40; W += 24) {
        const int64_t H = 10, planes = 3, OH = H / 2, OW = W / 2, shape[] = {planes, H, W};
        tg_scope_begin();
        tg_tensor *x = input(TG_FLOAT32, 3, shape, (unsigned)W);
        float *y = calloc((size_t)(planes * OH * OW), sizeof *y);
        float *dx = calloc((size_t)(planes * H * W), sizeof *dx);
        uint8_t *off = calloc((size_t)(planes * OH * OW), 1);
        tg__maxpool2x2c_planes_f32(tg_data(x), planes, H, W, OH, OW, y, off);
        CHECK(tg__maxpool2x2c_grad_planes_f32(y, off, planes, OH, OW, dx));
        const int64_t sy[] = {planes * OH * OW}, sdx[] = {planes * H * W};
        keep(o, "compact pool", tg_from_data(TG_FLOAT32, 1, sy, y));
        keep(o, "compact pool grad", tg_from_data(TG_FLOAT32, 1, sdx, dx));
        double *offs = malloc((size_t)sy[0] * sizeof *offs);
        for (int64_t i = 0; i < sy[0]; i++)
            offs[i] = off[i];
        keep(o, "compact pool offsets", tt_tensor(TG_FLOAT64, 1, sy, offs));
        free(offs), free(y), free(dx), free(off);
        tg_scope_end();
    }
}

/* the compact kernels of one dtype against the definition, at the level in
 * use: plane widths from a few windows (a vector per row, reading past it)
 * to several vectors with a tail, planes of even and odd height (one run
 * of row pairs, or plane by plane), NaNs (a NaN wins; of two, the later:
 * pool.c's choice), infinities and ties; an offset
 * above 3 makes the gradient refuse */
#define COMPACT_REF(T, SUF, DT)                                                      \
    static void check_compact_##SUF(void)                                           \
    {                                                                                \
        const int64_t widths[] = {4, 10, 14, 16, 22, 28, 40, 66}, planes = 3;        \
        for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)               \
            for (int64_t H = 10; H <= 11; H++) {                                     \
                const int64_t W = widths[wi], OH = H / 2, OW = W / 2, shape[] = {planes * H * W}; \
                tg_scope_begin();                                                    \
                const T *x = tg_data(input(DT, 1, shape, (unsigned)(W * H)));        \
                int64_t no = planes * OH * OW, bad = -1;                             \
                T *y = malloc((size_t)no * sizeof *y), *dy = malloc((size_t)no * sizeof *dy); \
                T *dx = malloc((size_t)(planes * 2 * OH * W) * sizeof *dx);          \
                uint8_t *off = malloc((size_t)no);                                   \
                tg__maxpool2x2c_planes_##SUF(x, planes, H, W, OH, OW, y, off);       \
                for (int64_t i = 0; i < no; i++)                                     \
                    dy[i] = (T)(i + 1);                                              \
                CHECK(tg__maxpool2x2c_grad_planes_##SUF(dy, off, planes, OH, OW, dx)); \
                for (int64_t i = 0; i < no && bad < 0; i++) {                        \
                    int64_t p = i / (OH * OW), oh = i / OW % OH, ow = i % OW;        \
                    const T *w0 = x + p * H * W + 2 * oh * W + 2 * ow;               \
                    const T c[4] = {w0[0], w0[1], w0[W], w0[W + 1]};                 \
                    int k = 0;                                                       \
                    for (int e = 1; e < 4; e++)                                      \
                        if (c[e] > c[k] || c[e] != c[e]) /* the last NaN */    \
                            k = e;                                                   \
                    T *d = dx + p * 2 * OH * W + 2 * oh * W + 2 * ow;                \
                    const T got[4] = {d[0], d[1], d[W], d[W + 1]};                   \
                    bool ok = off[i] == k && (y[i] == c[k] || (y[i] != y[i] && c[k] != c[k])); \
                    for (int e = 0; e < 4; e++)                                      \
                        ok = ok && got[e] == (e == k ? dy[i] : (T)0);                \
                    if (!ok)                                                         \
                        bad = i;                                                     \
                }                                                                    \
                if (bad >= 0)                                                        \
                    tt_fail(__FILE__, __LINE__, "compact " #SUF " W %lld H %lld at %s: output %lld wrong", \
                            (long long)W, (long long)H, tg__isa_name(tg__cpu_isa()), (long long)bad); \
                off[no - 1] = 4;                                                     \
                CHECK(!tg__maxpool2x2c_grad_planes_##SUF(dy, off, planes, OH, OW, dx)); \
                free(y), free(dy), free(dx), free(off);                              \
                tg_scope_end();                                                      \
            }                                                                        \
    }
COMPACT_REF(float, f32, TG_FLOAT32)
COMPACT_REF(double, f64, TG_FLOAT64)

static void collect(tg__isa isa, outputs *o)
{
    memset(o, 0, sizeof *o);
    tg__cpu_force(isa);
    CHECK(tg__cpu_isa() == isa);
    run_ops(TG_FLOAT32, o);
    run_ops(TG_FLOAT64, o);
    run_compact(o);
    check_compact_f32();
    check_compact_f64();
}

static void free_outputs(outputs *o)
{
    for (int i = 0; i < o->n; i++)
        free(o->v[i]);
}

static bool same_bits(double a, double b)
{
    return (a != a && b != b) || memcmp(&a, &b, sizeof a) == 0;
}

static void test_levels_agree(void)
{
    tg__isa top = tg__cpu_detected();
    outputs base, other;
    collect(TG_ISA_GENERIC, &base);
    CHECK(base.n == 76); /* every op ran (35 per dtype, 6 compact) */
    for (int isa = TG_ISA_GENERIC + 1; isa <= (int)top; isa++) {
        collect((tg__isa)isa, &other);
        CHECK(other.n == base.n);
        for (int i = 0; i < base.n && i < other.n; i++) {
            int64_t bad = -1;
            for (int64_t k = 0; k < base.numel[i] && bad < 0; k++)
                if (!same_bits(base.v[i][k], other.v[i][k]))
                    bad = k;
            if (bad >= 0)
                tt_fail(__FILE__, __LINE__, "%s at %s: element %lld is %.17g, generic %.17g",
                        base.what[i], tg__isa_name((tg__isa)isa), (long long)bad,
                        other.v[i][bad], base.v[i][bad]);
        }
        free_outputs(&other);
    }
    free_outputs(&base);
    printf("levels compared: generic .. %s\n", tg__isa_name(top));
    tg__cpu_force(top);
}

int main(void)
{
    tt_run("per-ISA kernels: the same bits at every level", test_levels_agree);
    return tt_finish();
}
