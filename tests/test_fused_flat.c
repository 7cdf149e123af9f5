/* The fused-program interpreter's flat path (ops/fused_flat.c): programs
 * of float32 add, sub, mul, div and where over contiguous operands or
 * single elements give the bits of the ops run one by one, at every
 * instruction set, for sizes around its chunk and past the parallel grain,
 * with NaN and infinities; an update written over its variables in place;
 * and programs or operands it declines (strided, float64, other ops) still
 * right through the general interpreter. */
#include "harness.h"
#include "kernels/cpu/cpu.h"
#include "ops/op.h"

#include <math.h>
#include <stdlib.h>

static tg_tensor *values(tg_dtype dt, int64_t n, uint32_t seed)
{
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (double)((int)(seed >> 9) % 20001 - 10000) / 997.0;
        if (i % 101 == 7)
            v[i] = NAN;
        else if (i % 103 == 11)
            v[i] = i % 2 ? INFINITY : -INFINITY;
    }
    tg_tensor *t = tt_tensor(dt, 1, (int64_t[]){n}, v);
    free(v);
    return t;
}

static tg_tensor *scalar(double x)
{
    return tg_scalar(TG_FLOAT32, x);
}

static tg_attr program(const char *text)
{
    return (tg_attr){.name = "program", .type = TG_ATTR_STRING, .u.s = text};
}

/* SGD with momentum as fuse_updates writes it: buf <- where(first, g,
 * buf * mom + g), p <- p + neg_lr * buf, over the variables in place */
static void check_update(int64_t n, bool first)
{
    const tg_op_def *op = tg_op_find("fused_update");
    tg_tensor *buf = values(TG_FLOAT32, n, 1), *p = values(TG_FLOAT32, n, 2);
    tg_tensor *g = values(TG_FLOAT32, n, 3);
    tg_tensor *mom = scalar(0.9), *neg_lr = scalar(-0.0125);
    tg_tensor *flag = tg_full(TG_BOOL, 0, NULL, first);
    tg_tensor *want_buf = tg_where(flag, g, tg_add(tg_mul(buf, mom), g));
    tg_tensor *want_p = tg_add(p, tg_mul(neg_lr, want_buf));
    int64_t res[2] = {2, 4};
    tg_attr a[2] = {program("mul(%0, %2); add($0, %3); where(%4, %3, $1); mul(%5, $2); "
                            "add(%1, $3)"),
                    TG_AINTS("results", res, 2)};
    tg_tensor *in[6] = {buf, p, mom, g, flag, neg_lr};
    CHECK(tg_op_call(op, 6, in, a, 2) != NULL);
    if (!tt_same(buf, want_buf) || !tt_same(p, want_p))
        tt_fail(__FILE__, __LINE__, "%s: update of %lld (first %d) differs from the ops",
                tg__isa_name(tg__cpu_isa()), (long long)n, (int)first);
}

/* an elementwise program with every op, a broadcast single element and
 * div's attribute, against the ops */
static void check_elementwise(int64_t n)
{
    const tg_op_def *op = tg_op_find("fused_elementwise");
    tg_tensor *x = values(TG_FLOAT32, n, 4), *y = values(TG_FLOAT32, n, 5);
    tg_tensor *s = scalar(1.75), *c = tg_gt(y, tg_scalar(TG_FLOAT32, 0));
    tg_attr a = program("sub(%0, %1); div[true_div=1]($0, %2); mul($1, %0); "
                        "where(%3, $2, $0); add($3, %2); div(%2, $4)");
    tg_tensor *in[4] = {x, y, s, c};
    tg_tensor *got = tg_op_call(op, 4, in, &a, 1);
    tg_tensor *d = tg_sub(x, y), *q = tg_div(d, s);
    tg_tensor *w = tg_add(tg_where(c, tg_mul(q, x), d), s);
    tg_tensor *want = tg_div(s, w);
    if (!got || !tt_same(got, want))
        tt_fail(__FILE__, __LINE__, "%s: program over %lld differs from the ops",
                tg__isa_name(tg__cpu_isa()), (long long)n);
}

static void test_same_bits_every_isa(void)
{
    static const int64_t sizes[] = {0, 1, 5, 255, 256, 257, 1000, 70000};
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            check_update(sizes[k], false);
            check_update(sizes[k], true);
            check_elementwise(sizes[k]);
        }
    }
    tg__cpu_force(tg__cpu_detected());
}

/* operands the flat path declines: the general interpreter's results */
static void test_declined_operands(void)
{
    const tg_op_def *op = tg_op_find("fused_elementwise");
    tg_attr a = program("mul(%0, %1); add($0, %1)");
    /* a transposed (strided) input */
    tg_tensor *x = tt_rand(2, (int64_t[]){40, 30}, -2, 2), *y = tt_rand(2, (int64_t[]){30, 40}, -2, 2);
    tg_tensor *yt = tg_transpose(y, 0, 1);
    tg_tensor *got = tg_op_call(op, 2, (tg_tensor *[]){x, yt}, &a, 1);
    CHECK(got && tt_same(got, tg_add(tg_mul(x, yt), yt)));
    /* float64 */
    tg_tensor *xd = values(TG_FLOAT64, 300, 6), *yd = values(TG_FLOAT64, 300, 7);
    got = tg_op_call(op, 2, (tg_tensor *[]){xd, yd}, &a, 1);
    CHECK(got && tt_same(got, tg_add(tg_mul(xd, yd), yd)));
    /* a row broadcast over a matrix (neither full nor one element) */
    tg_tensor *row = tt_rand(1, (int64_t[]){30}, -2, 2), *m = tt_rand(2, (int64_t[]){40, 30}, -2, 2);
    got = tg_op_call(op, 2, (tg_tensor *[]){m, row}, &a, 1);
    CHECK(got && tt_same(got, tg_add(tg_mul(m, row), row)));
    /* an op it does not take */
    tg_attr e = program("mul(%0, %1); exp($0)");
    got = tg_op_call(op, 2, (tg_tensor *[]){xd, yd}, &e, 1);
    CHECK(got && tt_same(got, tg_exp(tg_mul(xd, yd))));
}

int main(void)
{
    RUN(test_same_bits_every_isa);
    RUN(test_declined_operands);
    return tt_finish();
}
