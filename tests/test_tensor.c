/* Tensors: creation for every dtype, random generators, printing,
 * reference counting and scopes, in-place updates, type promotion,
 * element access, and the error paths of all of these. */
#include "harness.h"
#include "core/tensor_impl.h" /* refcounts, to check ownership exactly */

#include <stdlib.h>
#include <string.h>

static const tg_dtype all_dtypes[TG_NUM_DTYPES] = {
    TG_FLOAT32, TG_FLOAT64, TG_INT32, TG_INT64, TG_UINT8, TG_BOOL};

/* compares a printed tensor with the expected text */
#define CHECK_STR(t, expected) check_str(t, expected, __FILE__, __LINE__)
static void check_str(const tg_tensor *t, const char *expected, const char *file,
                      int line)
{
    tt_checks++;
    char *s = tg_to_string(t);
    if (!s || strcmp(s, expected) != 0)
        tt_fail(file, line, "printed\n%s\nexpected\n%s", s ? s : "(NULL)", expected);
    free(s);
}

/* ---- creation ------------------------------------------------------------- */
static void test_fill_creation_every_dtype(void)
{
    int64_t s[2] = {2, 3};
    for (int k = 0; k < TG_NUM_DTYPES; k++) {
        tg_dtype dt = all_dtypes[k];
        double z[6] = {0}, o[6] = {1, 1, 1, 1, 1, 1}, f[6];
        double fv = dt == TG_BOOL ? 1 : 7;
        for (int i = 0; i < 6; i++)
            f[i] = fv;
        tg_tensor *a = tg_zeros(dt, 2, s), *b = tg_ones(dt, 2, s);
        tg_tensor *c = tg_full(dt, 2, s, 7);
        CHECK(tg_dtype_of(a) == dt && tg_dtype_of(b) == dt && tg_dtype_of(c) == dt);
        CHECK_SHAPE(a, 2, 3);
        CHECK(tg_is_contiguous(a) && tg_numel(a) == 6);
        CHECK(tg_strides(a)[0] == 3 && tg_strides(a)[1] == 1 && tg_offset(a) == 0);
        CHECK_TENSOR(a, z, 0);
        CHECK_TENSOR(b, o, 0);
        CHECK_TENSOR(c, f, 0);
        /* 64-byte aligned buffers (one AVX-512 line) */
        CHECK(((uintptr_t)tg_data(a) & 63) == 0);
        tg_tensor *sc = tg_scalar(dt, 1);
        CHECK(tg_ndim(sc) == 0 && tg_numel(sc) == 1);
        CHECK_NEAR(tg_item(sc), 1, 0);
        tg_tensor *zl = tg_zeros_like(c), *ol = tg_ones_like(c);
        tg_tensor *fl = tg_full_like(a, 7);
        CHECK(tg_dtype_of(zl) == dt && tg_dtype_of(ol) == dt && tg_dtype_of(fl) == dt);
        CHECK_SHAPE(zl, 2, 3);
        CHECK_SHAPE(fl, 2, 3);
        CHECK_TENSOR(zl, z, 0);
        CHECK_TENSOR(ol, o, 0);
        CHECK_TENSOR(fl, f, 0);
        tg_tensor *e = tg_empty(dt, 3, (int64_t[]){2, 0, 4});
        CHECK(e && tg_numel(e) == 0);
        CHECK_SHAPE(e, 2, 0, 4);
    }
    /* values that need care: fractions truncate, negatives wrap in uint8
     * like a C cast through int64, any non-zero is true */
    CHECK_NEAR(tg_item(tg_scalar(TG_INT32, -2.75)), -2, 0);
    CHECK_NEAR(tg_item(tg_scalar(TG_UINT8, -1)), 255, 0);
    CHECK_NEAR(tg_item(tg_scalar(TG_BOOL, 0.25)), 1, 0);
}

static void test_arange(void)
{
    double e1[5] = {0, 1, 2, 3, 4};
    CHECK_TENSOR(tg_arange(TG_INT64, 0, 5, 1), e1, 0);
    CHECK_SHAPE(tg_arange(TG_INT64, 0, 5, 1), 5);
    double e2[5] = {5, 4, 3, 2, 1};
    CHECK_TENSOR(tg_arange(TG_FLOAT32, 5, 0, -1), e2, 0);
    CHECK_SHAPE(tg_arange(TG_FLOAT32, 5, 0, -1), 5);
    double e3[4] = {1, 0.25, -0.5, -1.25};
    CHECK_TENSOR(tg_arange(TG_FLOAT64, 1, -2, -0.75), e3, 1e-15);
    CHECK_SHAPE(tg_arange(TG_FLOAT64, 1, -2, -0.75), 4);
    double e4[4] = {0, 0.3, 0.6, 0.9};
    CHECK_SHAPE(tg_arange(TG_FLOAT64, 0, 1, 0.3), 4);
    CHECK_TENSOR(tg_arange(TG_FLOAT64, 0, 1, 0.3), e4, 1e-15);
    double e5[3] = {-3, -1, 1};
    CHECK_TENSOR(tg_arange(TG_INT32, -3, 2, 2), e5, 0);
    /* empty: stop == start, or the step points away from stop */
    CHECK_SHAPE(tg_arange(TG_FLOAT32, 0, 0, 1), 0);
    CHECK_SHAPE(tg_arange(TG_FLOAT32, 3, 1, 1), 0);
    CHECK_SHAPE(tg_arange(TG_INT64, 1, 3, -1), 0);
    CHECK_ERROR(tg_arange(TG_FLOAT32, 0, 1, 0), TG_ERR_ARG, "step");
    CHECK_ERROR(tg_arange(TG_FLOAT32, 0, INFINITY, 1), TG_ERR_ARG, "finite");
    CHECK_ERROR(tg_arange(TG_FLOAT32, 0, 1e300, 1e-300), TG_ERR_SHAPE, "too large");
    CHECK_ERROR(tg_arange((tg_dtype)17, 0, 3, 1), TG_ERR_DTYPE, "dtype");
}

static void test_from_data_every_dtype(void)
{
    int64_t s[2] = {2, 2};
    float f32[4] = {1.5f, -2, 3, 4};
    double f64[4] = {1.25, -2, 1e300, 4};
    int32_t i32[4] = {-7, 2147483647, 0, 3};
    int64_t i64[4] = {-7, 9007199254740993LL, 0, 3};
    uint8_t u8[4] = {0, 255, 7, 1};
    uint8_t b[4] = {1, 0, 0, 1};
    const void *data[TG_NUM_DTYPES] = {f32, f64, i32, i64, u8, b};
    for (int k = 0; k < TG_NUM_DTYPES; k++) {
        tg_tensor *t = tg_from_data(all_dtypes[k], 2, s, data[k]);
        CHECK(t && tg_dtype_of(t) == all_dtypes[k]);
        CHECK_SHAPE(t, 2, 2);
        /* a copy: the tensor does not alias the caller's array */
        CHECK(tg_data(t) != data[k]);
        CHECK(memcmp(tg_data(t), data[k], 4 * tg_dtype_size(all_dtypes[k])) == 0);
    }
    /* bool bytes other than 0 and 1 are stored as true */
    uint8_t b2[3] = {0, 7, 255};
    tg_tensor *tb = tg_from_data(TG_BOOL, 1, (int64_t[]){3}, b2);
    CHECK(((uint8_t *)tg_data(tb))[1] == 1 && ((uint8_t *)tg_data(tb))[2] == 1);
    CHECK_TENSOR(tg_eq(tb, tg_ones(TG_BOOL, 0, NULL)), ((double[]){0, 1, 1}), 0);
    /* int64 values beyond 2^53 round-trip exactly through tg_copy_to */
    int64_t back[4];
    CHECK_OK(tg_copy_to(tg_from_data(TG_INT64, 2, s, i64), TG_INT64, back));
    CHECK(back[1] == 9007199254740993LL);
    /* a 0-d tensor and an empty one (NULL data is fine with no elements) */
    double v = 2.5;
    CHECK_NEAR(tg_item(tg_from_data(TG_FLOAT64, 0, NULL, &v)), 2.5, 0);
    CHECK_SHAPE(tg_from_data(TG_FLOAT32, 1, (int64_t[]){0}, NULL), 0);
}

static void test_creation_errors(void)
{
    int64_t neg[2] = {2, -1};
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    int64_t eight[8] = {1, 2, 1, 2, 1, 2, 1, 2};
    float data[4] = {0};
    CHECK_ERROR(tg_zeros(TG_FLOAT32, 2, neg), TG_ERR_SHAPE, "dim 1 is -1");
    CHECK_ERROR(tg_empty(TG_FLOAT32, 2, neg), TG_ERR_SHAPE, ">= 0");
    CHECK_ERROR(tg_full(TG_INT32, 2, neg, 1), TG_ERR_SHAPE, "tg_full");
    CHECK_ERROR(tg_zeros(TG_FLOAT32, 9, nine), TG_ERR_SHAPE, "9 dims");
    CHECK_ERROR(tg_ones(TG_FLOAT32, -1, nine), TG_ERR_SHAPE, "dims");
    CHECK(tg_zeros(TG_FLOAT32, 8, eight) != NULL); /* 8 dims is the limit */
    CHECK_ERROR(tg_zeros((tg_dtype)6, 1, eight), TG_ERR_DTYPE, "invalid dtype 6");
    CHECK_ERROR(tg_zeros((tg_dtype)-1, 1, eight), TG_ERR_DTYPE, "dtype");
    CHECK_ERROR(tg_from_data((tg_dtype)99, 1, eight, data), TG_ERR_DTYPE, "dtype");
    CHECK_ERROR(tg_from_data(TG_FLOAT32, 1, (int64_t[]){4}, NULL), TG_ERR_ARG,
                "data is NULL");
    CHECK_ERROR(tg_zeros(TG_FLOAT32, 2, NULL), TG_ERR_ARG, "shape is NULL");
    CHECK_ERROR(tg_zeros(TG_FLOAT32, 2, (int64_t[]){INT64_MAX / 2, 4}), TG_ERR_SHAPE,
                "too large");
    CHECK_ERROR(tg_zeros_like(NULL), TG_ERR_ARG, "NULL");
    /* a NULL from an earlier failure keeps the first error */
    tg_clear_error();
    CHECK(tg_zeros(TG_FLOAT32, 2, neg) == NULL);
    CHECK(tg_ones_like(NULL) == NULL && tg_last_status() == TG_ERR_SHAPE);
    CHECK(strstr(tg_last_error(), "-1") != NULL);
    tg_clear_error();
    CHECK(tg_last_status() == TG_OK && tg_last_error()[0] == '\0');
}

/* ---- random generators ----------------------------------------------------- */
static void test_generator_reproducible(void)
{
    int64_t s[2] = {4, 5};
    tg_generator *g1 = tg_generator_new(42), *g2 = tg_generator_new(42);
    tg_generator *g3 = tg_generator_new(43);
    tg_tensor *a = tg_rand_uniform(g1, TG_FLOAT64, 2, s, -1, 1);
    tg_tensor *b = tg_rand_uniform(g2, TG_FLOAT64, 2, s, -1, 1);
    tg_tensor *c = tg_rand_uniform(g3, TG_FLOAT64, 2, s, -1, 1);
    CHECK(memcmp(tg_data(a), tg_data(b), 20 * sizeof(double)) == 0);
    CHECK(memcmp(tg_data(a), tg_data(c), 20 * sizeof(double)) != 0);
    /* the stream continues: the next draw differs from the first */
    tg_tensor *a2 = tg_rand_uniform(g1, TG_FLOAT64, 2, s, -1, 1);
    CHECK(memcmp(tg_data(a), tg_data(a2), 20 * sizeof(double)) != 0);
    /* reseeding restarts it */
    tg_generator_seed(g1, 42);
    tg_tensor *a3 = tg_rand_uniform(g1, TG_FLOAT64, 2, s, -1, 1);
    CHECK(memcmp(tg_data(a), tg_data(a3), 20 * sizeof(double)) == 0);
    /* every constructor is reproducible */
    tg_generator_seed(g1, 7);
    tg_generator_seed(g2, 7);
    tg_tensor *n1 = tg_rand_normal(g1, TG_FLOAT32, 2, s, 0, 1);
    tg_tensor *n2 = tg_rand_normal(g2, TG_FLOAT32, 2, s, 0, 1);
    CHECK(memcmp(tg_data(n1), tg_data(n2), 20 * sizeof(float)) == 0);
    tg_tensor *b1 = tg_rand_bernoulli(g1, 2, s, 0.5), *b2 = tg_rand_bernoulli(g2, 2, s, 0.5);
    CHECK(memcmp(tg_data(b1), tg_data(b2), 20) == 0);
    tg_tensor *p1 = tg_randperm(g1, 50), *p2 = tg_randperm(g2, 50);
    CHECK(memcmp(tg_data(p1), tg_data(p2), 50 * sizeof(int64_t)) == 0);
    CHECK(tg_generator_next(g1) == tg_generator_next(g2));
    double u = tg_generator_uniform(g1);
    CHECK(u >= 0 && u < 1 && u == tg_generator_uniform(g2));
    tg_generator_free(g1);
    tg_generator_free(g2);
    tg_generator_free(g3);
    tg_generator_free(NULL);
    /* a NULL generator is an error, not a crash */
    tg_generator_seed(NULL, 1);
    tg_clear_error();
    CHECK(tg_generator_next(NULL) == 0 && tg_last_status() == TG_ERR_ARG);
}

static void test_uniform_range(void)
{
    tg_generator *g = tg_generator_new(1);
    int64_t n = 100000;
    for (int k = 0; k < 2; k++) {
        tg_dtype dt = k ? TG_FLOAT64 : TG_FLOAT32;
        tg_tensor *t = tg_rand_uniform(g, dt, 1, &n, -2, 3);
        double *v = malloc((size_t)n * sizeof *v);
        tg_copy_to(t, TG_FLOAT64, v);
        double lo = 1e9, hi = -1e9, sum = 0;
        for (int64_t i = 0; i < n; i++) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
            sum += v[i];
        }
        CHECK(lo >= -2 && hi < 3);
        CHECK(lo < -1.99 && hi > 2.99); /* the whole range is covered */
        CHECK_NEAR(sum / (double)n, 0.5, 0.03);
        free(v);
    }
    /* float32 never rounds up to hi, even for a tiny range */
    tg_tensor *t = tg_rand_uniform(g, TG_FLOAT32, 1, &n, 1, 1.0000001);
    float *f = tg_data(t);
    bool ok = true;
    for (int64_t i = 0; i < n; i++)
        ok &= f[i] >= 1.0f && f[i] < 1.0000001f;
    CHECK(ok);
    tg_generator_free(g);
}

static void test_normal_stats(void)
{
    tg_generator *g = tg_generator_new(2);
    int64_t n = 100001; /* odd: the last Box-Muller pair is half used */
    tg_tensor *t = tg_rand_normal(g, TG_FLOAT64, 1, &n, 3, 2);
    const double *v = tg_data(t);
    double sum = 0, sq = 0;
    int64_t within1 = 0;
    for (int64_t i = 0; i < n; i++) {
        sum += v[i];
        within1 += fabs(v[i] - 3) < 2;
    }
    double mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
    CHECK_NEAR(mean, 3, 0.03);
    CHECK_NEAR(sqrt(sq / (double)(n - 1)), 2, 0.03);
    CHECK_NEAR((double)within1 / (double)n, 0.6827, 0.01); /* one sigma */
    tg_generator_free(g);
}

static void test_bernoulli_randperm(void)
{
    tg_generator *g = tg_generator_new(3);
    int64_t n = 100000;
    tg_tensor *b = tg_rand_bernoulli(g, 1, &n, 0.3);
    CHECK(tg_dtype_of(b) == TG_BOOL);
    const uint8_t *d = tg_data(b);
    int64_t ones = 0;
    bool only01 = true;
    for (int64_t i = 0; i < n; i++) {
        ones += d[i];
        only01 &= d[i] <= 1;
    }
    CHECK(only01);
    CHECK_NEAR((double)ones / (double)n, 0.3, 0.01);
    int64_t s2[2] = {10, 10};
    CHECK_NEAR(tg_item(tg_sum(tg_cast(tg_rand_bernoulli(g, 2, s2, 0), TG_INT64), 0, NULL, false)), 0, 0);
    CHECK_NEAR(tg_item(tg_sum(tg_cast(tg_rand_bernoulli(g, 2, s2, 1), TG_INT64), 0, NULL, false)), 100, 0);
    /* randperm: every value exactly once, and actually shuffled */
    tg_tensor *p = tg_randperm(g, 1000);
    CHECK(tg_dtype_of(p) == TG_INT64);
    CHECK_SHAPE(p, 1000);
    const int64_t *pv = tg_data(p);
    char seen[1000] = {0};
    bool perm = true;
    int fixed = 0;
    for (int i = 0; i < 1000; i++) {
        perm &= pv[i] >= 0 && pv[i] < 1000 && !seen[pv[i]];
        if (pv[i] >= 0 && pv[i] < 1000)
            seen[pv[i]] = 1;
        fixed += pv[i] == i;
    }
    CHECK(perm);
    CHECK(fixed < 10);
    CHECK_SHAPE(tg_randperm(g, 0), 0);
    CHECK_NEAR(tg_item(tg_randperm(g, 1)), 0, 0);
    /* errors */
    CHECK_ERROR(tg_randperm(g, -1), TG_ERR_SHAPE, "tg_randperm");
    CHECK_ERROR(tg_rand_bernoulli(g, 1, &n, 1.5), TG_ERR_ARG, "[0, 1]");
    CHECK_ERROR(tg_rand_bernoulli(g, 1, &n, NAN), TG_ERR_ARG, "p must be");
    CHECK_ERROR(tg_rand_uniform(g, TG_INT32, 1, &n, 0, 1), TG_ERR_DTYPE, "int32");
    CHECK_ERROR(tg_rand_normal(g, TG_BOOL, 1, &n, 0, 1), TG_ERR_DTYPE, "float32 or float64");
    CHECK_ERROR(tg_rand_uniform(NULL, TG_FLOAT32, 1, &n, 0, 1), TG_ERR_ARG, "generator is NULL");
    CHECK_ERROR(tg_rand_normal(g, TG_FLOAT32, 1, (int64_t[]){-3}, 0, 1), TG_ERR_SHAPE, "-3");
    tg_generator_free(g);
}

/* ---- printing (PyTorch's format) --------------------------------------- */
static void test_print_small(void)
{
    double f[3] = {1.5, -2, 3.25};
    CHECK_STR(tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, f),
              "tensor([ 1.5000, -2.0000,  3.2500])");
    double g[4] = {1, 2, 3, 4};
    CHECK_STR(tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 2}, g),
              "tensor([[1., 2.],\n"
              "        [3., 4.]])");
    double h[2] = {0, 10};
    CHECK_STR(tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, h),
              "tensor([ 0., 10.], dtype=float64)");
    double i[3] = {1, -20, 300};
    CHECK_STR(tt_tensor(TG_INT64, 1, (int64_t[]){3}, i), "tensor([  1, -20, 300])");
    CHECK_STR(tt_tensor(TG_INT32, 1, (int64_t[]){3}, i),
              "tensor([  1, -20, 300], dtype=int32)");
    double u[2] = {0, 255};
    CHECK_STR(tt_tensor(TG_UINT8, 1, (int64_t[]){2}, u), "tensor([  0, 255], dtype=uint8)");
    double b[3] = {1, 0, 1};
    CHECK_STR(tt_tensor(TG_BOOL, 1, (int64_t[]){3}, b), "tensor([ True, False,  True])");
    CHECK_STR(tg_scalar(TG_FLOAT32, 3.5), "tensor(3.5000)");
    CHECK_STR(tg_scalar(TG_FLOAT32, 2), "tensor(2.)");
    CHECK_STR(tg_scalar(TG_INT64, -4), "tensor(-4)");
    CHECK_STR(tg_scalar(TG_BOOL, 1), "tensor(True)");
    CHECK_STR(tg_zeros(TG_FLOAT32, 1, (int64_t[]){3}), "tensor([0., 0., 0.])");
    /* int64 beyond 2^53 prints exactly */
    int64_t big = 9007199254740993LL;
    CHECK_STR(tg_from_data(TG_INT64, 1, (int64_t[]){1}, &big), "tensor([9007199254740993])");
}

static void test_print_special(void)
{
    double a[3] = {1, NAN, -INFINITY};
    CHECK_STR(tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, a), "tensor([1., nan, -inf])");
    double b[2] = {1.5, NAN};
    CHECK_STR(tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, b), "tensor([1.5000,    nan])");
    /* scientific notation: tiny values, huge values, or a range over 1000 */
    double c[2] = {1e-5, 1};
    CHECK_STR(tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, c), "tensor([1.0000e-05, 1.0000e+00])");
    double d[2] = {1e10, 1};
    CHECK_STR(tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, d),
              "tensor([1.0000e+10, 1.0000e+00], dtype=float64)");
    double e[2] = {0.5, 2000};
    CHECK_STR(tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, e), "tensor([5.0000e-01, 2.0000e+03])");
    double f[2] = {1e8, 1}; /* 1e8 itself is not past the threshold */
    CHECK_STR(tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, f),
              "tensor([1.0000e+08, 1.0000e+00])"); /* ratio > 1000 */
    double g[2] = {1e8, 1e6};
    CHECK_STR(tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, g),
              "tensor([100000000.,   1000000.], dtype=float64)");
    /* empty tensors */
    CHECK_STR(tg_zeros(TG_FLOAT32, 1, (int64_t[]){0}), "tensor([])");
    CHECK_STR(tg_zeros(TG_INT64, 1, (int64_t[]){0}), "tensor([], dtype=int64)");
    CHECK_STR(tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 0}), "tensor([], size=(2, 0))");
    CHECK_STR(tg_zeros(TG_FLOAT64, 3, (int64_t[]){0, 1, 3}),
              "tensor([], size=(0, 1, 3), dtype=float64)");
    /* autograd suffixes */
    tg_tensor *x = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    tg_set_requires_grad(x, true);
    CHECK_STR(x, "tensor([1., 1.], requires_grad=True)");
    CHECK_STR(tg_mul(x, x), "tensor([1., 1.], grad_fn=<mul>)");
    CHECK_STR(NULL, "tensor(NULL)");
}

static void test_print_3d_and_views(void)
{
    tg_tensor *t = tg_reshape(tg_arange(TG_FLOAT32, 0, 8, 1), 3, (int64_t[]){2, 2, 2});
    CHECK_STR(t, "tensor([[[0., 1.],\n"
                 "         [2., 3.]],\n"
                 "\n"
                 "        [[4., 5.],\n"
                 "         [6., 7.]]])");
    /* a non-contiguous view prints its logical order */
    CHECK_STR(tg_transpose(tg_reshape(tg_arange(TG_INT64, 0, 6, 1), 2, (int64_t[]){2, 3}), 0, 1),
              "tensor([[0, 3],\n"
              "        [1, 4],\n"
              "        [2, 5]])");
    /* 4-D: two blank lines between the outermost blocks, like PyTorch */
    tg_tensor *f = tg_reshape(tg_arange(TG_INT64, 0, 4, 1), 4, (int64_t[]){2, 1, 2, 1});
    CHECK_STR(f, "tensor([[[[0],\n"
                 "          [1]]],\n"
                 "\n"
                 "\n"
                 "        [[[2],\n"
                 "          [3]]]])");
    /* long rows wrap at 80 columns */
    CHECK_STR(tg_arange(TG_FLOAT32, 0, 20, 1),
              "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
              "        14., 15., 16., 17., 18., 19.])");
}

static void test_print_elided(void)
{
    CHECK_STR(tg_arange(TG_INT64, 0, 2000, 1),
              "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
    CHECK_STR(tg_arange(TG_FLOAT32, 0, 2000, 1),
              "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
              "        1.9990e+03])");
    CHECK_STR(tg_reshape(tg_arange(TG_INT64, 0, 2000, 1), 2, (int64_t[]){40, 50}),
              "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
              "        [  50,   51,   52,  ...,   97,   98,   99],\n"
              "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
              "        ...,\n"
              "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
              "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
              "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])");
    /* 1000 elements are not elided; the format only looks at shown items */
    char *s = tg_to_string(tg_arange(TG_INT64, 0, 1000, 1));
    CHECK(s && !strstr(s, "...") && strstr(s, " 999])"));
    free(s);
    tg_tensor *x = tg_zeros(TG_FLOAT32, 1, (int64_t[]){1001});
    ((float *)tg_data(x))[500] = 0.5f; /* hidden: does not change the format */
    CHECK_STR(x, "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
}

/* ---- reference counting and scopes ------------------------------------------ */
static void test_refcount_basic(void)
{
    tg_tensor *a = tg_ones(TG_FLOAT32, 1, (int64_t[]){3});
    CHECK(a->refcount == 1);
    CHECK(tg_retain(a) == a && a->refcount == 2);
    tg_release(a);
    CHECK(a->refcount == 1);
    tg_release(NULL);
    CHECK(tg_retain(NULL) == NULL);
    /* a view holds the storage and the tensor it views: made with grad
     * mode on, as view_base (whose history an in-place write through it
     * updates), with grad mode off as nograd_base (PyTorch's checks of
     * no-grad views) */
    tg_tensor *v = tg_slice(a, 0, 1, 3, 1);
    CHECK(a->storage->refcount == 2 && a->refcount == 2 && v->view_base == a);
    CHECK(tg_shares_storage(a, v));
    tg_no_grad_begin();
    tg_tensor *w = tg_slice(a, 0, 1, 3, 1);
    tg_no_grad_end();
    CHECK(a->storage->refcount == 3 && a->refcount == 3 && !w->view_base &&
          w->nograd_base == a);
}

static void test_scopes_nested(void)
{
    int d0 = tg_scope_depth();
    tg_tensor *outer = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    tg_tensor *kept, *inner_kept;
    tg_scope_begin();
    CHECK(tg_scope_depth() == d0 + 1);
    tg_tensor *a = tg_add(outer, outer);
    /* using a tensor from outside does not take its reference */
    CHECK(outer->refcount == 1 && a->refcount == 1);
    tg_scope_begin();
    tg_tensor *b = tg_mul(a, a);
    inner_kept = tg_keep(tg_add(b, b));
    CHECK(tg_keep(NULL) == NULL);
    tg_tensor *tmp = tg_neg(b);
    tg_retain(tmp); /* an extra reference outlives the scope */
    tg_scope_end();
    CHECK(tmp->refcount == 1);
    CHECK_NEAR(tg_get(tmp, (int64_t[]){0}), -4, 0);
    tg_release(tmp);
    /* the kept tensor now belongs to the outer scope */
    CHECK(inner_kept->refcount == 1);
    CHECK_NEAR(tg_get(inner_kept, (int64_t[]){1}), 8, 0);
    kept = tg_keep(tg_mul(inner_kept, a));
    CHECK(kept == tg_keep(kept)); /* keeping twice is harmless */
    tg_scope_end();
    CHECK(tg_scope_depth() == d0);
    /* kept out of the outer scope: into the test's scope (RUN opens one) */
    CHECK(kept->refcount == 1);
    CHECK_NEAR(tg_get(kept, (int64_t[]){0}), 16, 0);
}

static void test_scope_keep_to_caller(void)
{
    /* RUN wrapped this test in a scope: close it to act as a caller with
     * no scope open, and reopen it for the harness at the end */
    tg_scope_end();
    CHECK(tg_scope_depth() == 0);
    tg_tensor *param = tg_ones(TG_FLOAT64, 1, (int64_t[]){3}); /* caller owns */
    tg_tensor *y;
    tg_scope_begin();
    tg_tensor *t = tg_mul_scalar(param, 3);
    y = tg_keep(tg_add(t, param));
    tg_scope_end();
    /* the scope released t; the caller owns y and param */
    CHECK(y->refcount == 1 && param->refcount == 1);
    CHECK_NEAR(tg_get(y, (int64_t[]){2}), 4, 0);
    /* a tensor kept in a scope, then kept again in the caller's */
    tg_scope_begin();
    tg_tensor *z;
    tg_scope_begin();
    z = tg_keep(tg_add(y, y));
    tg_scope_end();
    tg_keep(z);
    tg_scope_end();
    CHECK(z->refcount == 1);
    CHECK_NEAR(tg_get(z, (int64_t[]){0}), 8, 0);
    /* tensors made with no scope are never touched by a later scope */
    tg_scope_begin();
    tg_scope_end();
    CHECK(param->refcount == 1 && y->refcount == 1);
    tg_release(z);
    tg_release(y);
    tg_release(param);
    /* an unbalanced end with no scope open is ignored */
    tg_scope_end();
    CHECK(tg_scope_depth() == 0);
    tg_scope_begin();
}

static void test_scope_many_and_deep(void)
{
    /* more entries than the initial capacity, and deeper than the limit */
    tg_tensor *x = tg_ones(TG_FLOAT32, 0, NULL);
    tg_scope_begin();
    for (int i = 0; i < 3000; i++)
        tg_add(x, x);
    tg_scope_end();
    int d0 = tg_scope_depth();
    for (int i = 0; i < 300; i++) {
        tg_scope_begin();
        tg_add(x, x);
    }
    CHECK(tg_scope_depth() == d0 + 300);
    tg_tensor *k = NULL;
    for (int i = 0; i < 300; i++) {
        k = tg_keep(tg_add(k ? k : x, x));
        tg_scope_end();
    }
    CHECK(tg_scope_depth() == d0);
    CHECK_NEAR(tg_item(k), 301, 0);
    CHECK(k->refcount == 1);
}

/* ---- in-place updates ----------------------------------------------------------- */
static void test_inplace_copy_fill(void)
{
    tg_tensor *d = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    double row[3] = {1, 2, 3};
    uint64_t v0 = tg_version(d);
    CHECK_OK(tg_copy_(d, tt_tensor(TG_INT32, 1, (int64_t[]){3}, row)));
    CHECK(tg_version(d) == v0 + 1);
    double e1[6] = {1, 2, 3, 1, 2, 3};
    CHECK_TENSOR(d, e1, 0);
    CHECK_OK(tg_copy_(d, tg_scalar(TG_FLOAT64, -1.5)));
    double e2[6] = {-1.5, -1.5, -1.5, -1.5, -1.5, -1.5};
    CHECK_TENSOR(d, e2, 0);
    /* into a strided view: only the viewed elements change */
    tg_tensor *col = tg_slice(d, 1, 0, 3, 2); /* columns 0 and 2 */
    CHECK_OK(tg_copy_(col, tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 1}, (double[]){7, 8})));
    double e3[6] = {7, -1.5, 7, 8, -1.5, 8};
    CHECK_TENSOR(d, e3, 0);
    CHECK(tg_version(col) == tg_version(d)); /* one counter per storage */
    /* fill_ on a non-contiguous view (a transposed column) */
    tg_tensor *t = tg_transpose(d, 0, 1); /* [3, 2] */
    tg_tensor *c = tg_slice(t, 0, 1, 2, 1); /* column 1 of d, as a row */
    CHECK(!tg_is_contiguous(c));
    uint64_t v1 = tg_version(d);
    CHECK_OK(tg_fill_(c, 4.25));
    CHECK(tg_version(d) == v1 + 1);
    double e4[6] = {7, 4.25, 7, 8, 4.25, 8};
    CHECK_TENSOR(d, e4, 0);
    CHECK_OK(tg_fill_(d, 2));
    double e5[6] = {2, 2, 2, 2, 2, 2};
    CHECK_TENSOR(d, e5, 0);
    tg_tensor *bt = tg_zeros(TG_BOOL, 1, (int64_t[]){2});
    CHECK_OK(tg_fill_(bt, 0.5)); /* non-zero is true */
    CHECK_TENSOR(bt, ((double[]){1, 1}), 0);
    /* source and destination overlapping: the source is read first */
    tg_tensor *r = tg_arange(TG_FLOAT32, 0, 5, 1);
    CHECK_OK(tg_copy_(tg_slice(r, 0, 1, 5, 1), tg_slice(r, 0, 0, 4, 1)));
    CHECK_TENSOR(r, ((double[]){0, 0, 1, 2, 3}), 0);
    CHECK_OK(tg_copy_(tg_slice(r, 0, 0, 4, 1), tg_slice(r, 0, 1, 5, 1)));
    CHECK_TENSOR(r, ((double[]){0, 1, 2, 3, 3}), 0);
    tg_tensor *sq = tg_reshape(tg_arange(TG_INT64, 0, 9, 1), 2, (int64_t[]){3, 3});
    CHECK_OK(tg_copy_(sq, tg_transpose(sq, 0, 1)));
    CHECK_TENSOR(sq, ((double[]){0, 3, 6, 1, 4, 7, 2, 5, 8}), 0);
    CHECK_OK(tg_copy_(sq, sq)); /* the very same elements: nothing to do */
    CHECK_TENSOR(sq, ((double[]){0, 3, 6, 1, 4, 7, 2, 5, 8}), 0);
    /* errors */
    CHECK_FAILS(tg_copy_(d, tg_zeros(TG_FLOAT32, 1, (int64_t[]){4})), TG_ERR_SHAPE, "copy_");
    CHECK_FAILS(tg_copy_(col, tg_zeros(TG_FLOAT32, 3, (int64_t[]){3, 2, 2})), TG_ERR_SHAPE,
                "source of shape [3, 2, 2] does not broadcast to the destination's "
                "shape [2, 2]");
    CHECK_FAILS(tg_copy_(d, NULL), TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_fill_(NULL, 1), TG_ERR_ARG, "NULL");
    /* writing into an expanded tensor would write one element many times */
    tg_tensor *ex = tg_expand(tg_zeros(TG_FLOAT32, 1, (int64_t[]){1}), 1, (int64_t[]){4});
    CHECK_FAILS(tg_add_(ex, tg_ones(TG_FLOAT32, 1, (int64_t[]){4}), 1), TG_ERR_ARG,
                "more than one element");
    CHECK_FAILS(tg_copy_(ex, tg_ones(TG_FLOAT32, 1, (int64_t[]){4})), TG_ERR_ARG, "copy_");
    CHECK(tg_version(ex) == 0);
}

static void test_inplace_add_mul(void)
{
    double a[4] = {1, 2, 3, 4}, b[2] = {10, 20};
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 2}, a);
    uint64_t v0 = tg_version(x);
    CHECK_OK(tg_add_(x, tt_tensor(TG_FLOAT32, 1, (int64_t[]){2}, b), -0.5));
    double e1[4] = {-4, -8, -2, -6};
    CHECK_TENSOR(x, e1, 1e-12);
    CHECK_OK(tg_mul_scalar_(x, -2));
    double e2[4] = {8, 16, 4, 12};
    CHECK_TENSOR(x, e2, 1e-12);
    CHECK(tg_version(x) == v0 + 2);
    /* on a strided view */
    tg_tensor *diag = tg_slice(tg_reshape(x, 1, (int64_t[]){4}), 0, 0, 4, 3);
    CHECK_OK(tg_mul_scalar_(diag, 0.5));
    CHECK_OK(tg_add_(diag, tg_ones(TG_FLOAT64, 0, NULL), 1));
    double e3[4] = {5, 16, 4, 7};
    CHECK_TENSOR(x, e3, 1e-12);
    /* integer dtypes */
    tg_tensor *i = tg_arange(TG_INT32, 0, 4, 1);
    CHECK_OK(tg_add_(i, tg_full(TG_INT32, 1, (int64_t[]){4}, 3), 2));
    CHECK_OK(tg_mul_scalar_(i, 3));
    CHECK_TENSOR(i, ((double[]){18, 21, 24, 27}), 0);
    /* uint8 with a negative alpha or scale wraps */
    tg_tensor *u = tg_full(TG_UINT8, 1, (int64_t[]){2}, 10);
    CHECK_OK(tg_add_(u, tg_ones(TG_UINT8, 1, (int64_t[]){2}), -3));
    CHECK_TENSOR(u, ((double[]){7, 7}), 0);
    CHECK_OK(tg_mul_scalar_(u, -1));
    CHECK_TENSOR(u, ((double[]){249, 249}), 0);
    /* x += x^T reads the transpose before overwriting it */
    tg_tensor *m = tg_reshape(tg_arange(TG_FLOAT64, 0, 4, 1), 2, (int64_t[]){2, 2});
    CHECK_OK(tg_add_(m, tg_transpose(m, 0, 1), 1));
    CHECK_TENSOR(m, ((double[]){0, 3, 3, 6}), 0);
    CHECK_OK(tg_add_(m, m, -0.5)); /* the same elements: fine in place */
    CHECK_TENSOR(m, ((double[]){0, 1.5, 1.5, 3}), 0);
    /* errors */
    CHECK_FAILS(tg_add_(x, tg_ones(TG_FLOAT32, 1, (int64_t[]){3}), 1), TG_ERR_SHAPE, "add_");
    CHECK_FAILS(tg_add_(tg_zeros(TG_BOOL, 0, NULL), tg_zeros(TG_BOOL, 0, NULL), 1),
                TG_ERR_DTYPE, "bool");
    CHECK_FAILS(tg_mul_scalar_(tg_zeros(TG_BOOL, 0, NULL), 2), TG_ERR_DTYPE, "bool");
    CHECK_FAILS(tg_add_(x, NULL, 1), TG_ERR_ARG, "NULL");
}

static void test_inplace_requires_grad(void)
{
    tg_tensor *w = tg_ones(TG_FLOAT32, 1, (int64_t[]){3});
    CHECK_OK(tg_set_requires_grad(w, true));
    uint64_t v = tg_version(w);
    CHECK_FAILS(tg_add_(w, tg_ones(TG_FLOAT32, 1, (int64_t[]){3}), 1), TG_ERR_AUTOGRAD,
                "requires grad");
    CHECK_FAILS(tg_fill_(w, 0), TG_ERR_AUTOGRAD, "no_grad");
    CHECK_FAILS(tg_copy_(w, tg_zeros(TG_FLOAT32, 0, NULL)), TG_ERR_AUTOGRAD, "copy_");
    CHECK_FAILS(tg_mul_scalar_(w, 2), TG_ERR_AUTOGRAD, "mul_scalar_");
    /* non-leaf results are updated and recorded (tests/test_autograd.c) */
    CHECK_OK(tg_fill_(tg_mul(w, w), 0));
    CHECK(tg_version(w) == v);
    tg_no_grad_begin();
    CHECK_OK(tg_add_(w, tg_ones(TG_FLOAT32, 1, (int64_t[]){3}), -0.25));
    CHECK_OK(tg_mul_scalar_(w, 4));
    tg_no_grad_end();
    CHECK_TENSOR(w, ((double[]){3, 3, 3}), 0);
    CHECK(tg_version(w) == v + 2);
    CHECK(tg_requires_grad(w) && tg_is_leaf(w));
}

/* ---- dtypes and promotion ---------------------------------------------------------- */
static void test_dtype_basics(void)
{
    const char *names[TG_NUM_DTYPES] = {"float32", "float64", "int32", "int64", "uint8", "bool"};
    const size_t sizes[TG_NUM_DTYPES] = {4, 8, 4, 8, 1, 1};
    for (int k = 0; k < TG_NUM_DTYPES; k++) {
        CHECK(strcmp(tg_dtype_name(all_dtypes[k]), names[k]) == 0);
        CHECK(tg_dtype_size(all_dtypes[k]) == sizes[k]);
        CHECK(tg_dtype_is_valid(all_dtypes[k]));
        CHECK(tg_dtype_is_float(all_dtypes[k]) == (k < 2));
    }
    CHECK(!tg_dtype_is_valid(-1) && !tg_dtype_is_valid(TG_NUM_DTYPES));
    CHECK(tg_dtype_size((tg_dtype)40) == 0);
    CHECK(strcmp(tg_dtype_name((tg_dtype)40), "invalid-dtype") == 0);
    CHECK(strcmp(tg_status_name(TG_ERR_SHAPE), "shape error") == 0);
}

static void test_promote_types_table(void)
{
    /* PyTorch's table over f32 f64 i32 i64 u8 bool */
    const tg_dtype F = TG_FLOAT32, D = TG_FLOAT64, I = TG_INT32, L = TG_INT64,
                   U = TG_UINT8, B = TG_BOOL;
    const tg_dtype want[TG_NUM_DTYPES][TG_NUM_DTYPES] = {
        /*        f32 f64 i32 i64 u8 bool */
        /* f32 */ {F, D, F, F, F, F},
        /* f64 */ {D, D, D, D, D, D},
        /* i32 */ {F, D, I, L, I, I},
        /* i64 */ {F, D, L, L, L, L},
        /* u8  */ {F, D, I, L, U, U},
        /* bool*/ {F, D, I, L, U, B},
    };
    for (int a = 0; a < TG_NUM_DTYPES; a++)
        for (int b = 0; b < TG_NUM_DTYPES; b++) {
            tg_dtype got = tg_promote_types(all_dtypes[a], all_dtypes[b]);
            if (got != want[a][b])
                tt_fail(__FILE__, __LINE__, "promote(%s, %s) = %s, expected %s",
                        tg_dtype_name(all_dtypes[a]), tg_dtype_name(all_dtypes[b]),
                        tg_dtype_name(got), tg_dtype_name(want[a][b]));
            tt_checks++;
        }
}

static tg_dtype add_type(tg_dtype da, int na, tg_dtype db, int nb)
{
    int64_t s[1] = {2};
    tg_tensor *y = tg_add(tg_ones(da, na, s), tg_ones(db, nb, s));
    return y ? tg_dtype_of(y) : (tg_dtype)-1;
}

static void test_result_types(void)
{
    /* a 0-d tensor only counts when its category is higher (then its
     * dtype does, as in PyTorch) */
    CHECK(add_type(TG_INT32, 1, TG_FLOAT64, 0) == TG_FLOAT64);
    CHECK(add_type(TG_FLOAT64, 0, TG_INT32, 1) == TG_FLOAT64);
    CHECK(add_type(TG_INT32, 1, TG_FLOAT32, 0) == TG_FLOAT32);
    CHECK(add_type(TG_INT32, 0, TG_FLOAT64, 0) == TG_FLOAT64);
    CHECK(add_type(TG_FLOAT32, 1, TG_FLOAT64, 0) == TG_FLOAT32);
    CHECK(add_type(TG_FLOAT32, 1, TG_FLOAT64, 1) == TG_FLOAT64);
    CHECK(add_type(TG_UINT8, 1, TG_INT64, 0) == TG_UINT8);
    CHECK(add_type(TG_INT32, 0, TG_INT64, 1) == TG_INT64);
    CHECK(add_type(TG_UINT8, 1, TG_INT32, 1) == TG_INT32);
    CHECK(add_type(TG_INT64, 1, TG_FLOAT32, 1) == TG_FLOAT32);
    CHECK(add_type(TG_INT32, 1, TG_INT64, 1) == TG_INT64);
    CHECK(add_type(TG_FLOAT64, 0, TG_FLOAT32, 0) == TG_FLOAT64);
    /* values of a mixed add */
    tg_tensor *y = tg_add(tt_tensor(TG_INT32, 1, (int64_t[]){2}, (double[]){1, 2}),
                          tg_scalar(TG_FLOAT32, 0.5));
    CHECK(tg_dtype_of(y) == TG_FLOAT32);
    CHECK_TENSOR(y, ((double[]){1.5, 2.5}), 0);
    /* scalar helpers: the scalar takes x's dtype, fractions go float */
    CHECK(tg_dtype_of(tg_add_scalar(tg_ones(TG_INT32, 1, (int64_t[]){2}), 2)) == TG_INT32);
    CHECK(tg_dtype_of(tg_add_scalar(tg_ones(TG_INT32, 1, (int64_t[]){2}), 0.5)) == TG_FLOAT32);
    CHECK(tg_dtype_of(tg_mul_scalar(tg_ones(TG_FLOAT64, 1, (int64_t[]){2}), 3)) == TG_FLOAT64);
    /* uint8 with a negative scalar wraps like PyTorch */
    CHECK_TENSOR(tg_add_scalar(tg_full(TG_UINT8, 1, (int64_t[]){1}, 3), -5), ((double[]){254}), 0);
    /* true division of integers */
    CHECK(tg_dtype_of(tg_div(tg_ones(TG_INT64, 1, (int64_t[]){2}),
                             tg_ones(TG_INT64, 1, (int64_t[]){2}))) == TG_FLOAT32);
}

/* the default float: what integers become in true division, math
 * functions and fractional scalars; only float dtypes are accepted */
static void test_default_float(void)
{
    tg_tensor *i = tg_ones(TG_INT64, 1, (int64_t[]){2});
    CHECK(tg_default_float() == TG_FLOAT32);
    CHECK(tg_set_default_float(TG_FLOAT64) == TG_OK && tg_default_float() == TG_FLOAT64);
    CHECK(tg_dtype_of(tg_div(i, i)) == TG_FLOAT64);
    CHECK(tg_dtype_of(tg_sqrt(i)) == TG_FLOAT64);
    CHECK(tg_dtype_of(tg_add_scalar(i, 0.5)) == TG_FLOAT64);
    CHECK(tg_dtype_of(tg_mean(tg_cast(i, TG_FLOAT32), 0, NULL, false)) == TG_FLOAT32);
    CHECK_FAILS(tg_set_default_float(TG_INT64), TG_ERR_DTYPE, "float dtype");
    CHECK_FAILS(tg_set_default_float((tg_dtype)99), TG_ERR_DTYPE, "float dtype");
    CHECK(tg_default_float() == TG_FLOAT64); /* a refusal changes nothing */
    CHECK(tg_set_default_float(TG_FLOAT32) == TG_OK);
    CHECK(tg_dtype_of(tg_div(i, i)) == TG_FLOAT32);
}

/* ---- element access ---------------------------------------------------------------- */
static void test_item_get_copy_to(void)
{
    tg_tensor *x = tg_reshape(tg_arange(TG_INT32, 0, 6, 1), 2, (int64_t[]){2, 3});
    tg_tensor *t = tg_transpose(x, 0, 1); /* [3, 2], strided */
    CHECK_NEAR(tg_get(t, (int64_t[]){2, 1}), 5, 0);
    CHECK_NEAR(tg_get(t, (int64_t[]){1, 0}), 1, 0);
    CHECK_NEAR(tg_item(tg_slice(tg_slice(t, 0, 2, 3, 1), 1, 1, 2, 1)), 5, 0);
    CHECK_NEAR(tg_item(tg_scalar(TG_BOOL, 1)), 1, 0);
    /* tg_copy_to: C order of the view, converted */
    double d[6];
    CHECK_OK(tg_copy_to(t, TG_FLOAT64, d));
    double e[6] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++)
        CHECK_NEAR(d[i], e[i], 0);
    uint8_t b[6];
    CHECK_OK(tg_copy_to(t, TG_BOOL, b));
    CHECK(b[0] == 0 && b[1] == 1 && b[5] == 1);
    int64_t l[6];
    CHECK_OK(tg_copy_to(x, TG_INT64, l));
    CHECK(l[4] == 4);
    float f[1];
    CHECK_OK(tg_copy_to(tg_zeros(TG_FLOAT32, 1, (int64_t[]){0}), TG_FLOAT32, f));
    /* inspection */
    CHECK(tg_size(t, -1) == 2 && tg_size(t, 0) == 3);
    CHECK(tg_size(tg_scalar(TG_FLOAT32, 1), 0) == 1);
    CHECK(tg_device_of(t).type == TG_CPU);
    CHECK(tg_strides(t)[0] == 1 && tg_strides(t)[1] == 3);
    /* errors */
    tg_clear_error();
    CHECK(isnan(tg_item(x)) && tg_last_status() == TG_ERR_SHAPE);
    CHECK(strstr(tg_last_error(), "6 elements") != NULL);
    tg_clear_error();
    CHECK(isnan(tg_get(t, (int64_t[]){3, 0})) && tg_last_status() == TG_ERR_INDEX);
    CHECK(strstr(tg_last_error(), "index 3 out of range for axis 0 of size 3") != NULL);
    tg_clear_error();
    CHECK(isnan(tg_get(t, (int64_t[]){0, -1})) && tg_last_status() == TG_ERR_INDEX);
    tg_clear_error();
    CHECK(isnan(tg_get(t, NULL)) && tg_last_status() == TG_ERR_ARG);
    tg_clear_error();
    CHECK(isnan(tg_item(NULL)) && tg_last_status() == TG_ERR_ARG);
    CHECK(tg_size(t, 2) == -1 && tg_last_status() == TG_ERR_INDEX);
    CHECK_FAILS(tg_copy_to(t, TG_FLOAT64, NULL), TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_copy_to(t, (tg_dtype)9, d), TG_ERR_ARG, "dtype");
    CHECK(!tg_is_contiguous(NULL) && tg_ndim(NULL) == -1 && tg_data(NULL) == NULL);
    char buf[8];
    CHECK(strcmp(tg_shape_str(3, (int64_t[]){10, 20, 30}, buf, sizeof buf), "[10, 20") == 0);
}

int main(void)
{
    RUN(test_fill_creation_every_dtype);
    RUN(test_arange);
    RUN(test_from_data_every_dtype);
    RUN(test_creation_errors);
    RUN(test_generator_reproducible);
    RUN(test_uniform_range);
    RUN(test_normal_stats);
    RUN(test_bernoulli_randperm);
    RUN(test_print_small);
    RUN(test_print_special);
    RUN(test_print_3d_and_views);
    RUN(test_print_elided);
    RUN(test_refcount_basic);
    RUN(test_scopes_nested);
    RUN(test_scope_keep_to_caller);
    RUN(test_scope_many_and_deep);
    RUN(test_inplace_copy_fill);
    RUN(test_inplace_add_mul);
    RUN(test_inplace_requires_grad);
    RUN(test_dtype_basics);
    RUN(test_promote_types_table);
    RUN(test_result_types);
    RUN(test_default_float);
    RUN(test_item_get_copy_to);
    return tt_finish();
}
