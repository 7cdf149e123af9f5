/* Array ops: concat, stack, split, gather, index_select, pad, one_hot,
 * tile and embedding, forward against naive references for every dtype
 * and several axes (contiguous and strided inputs), gradients by
 * gradcheck, and every error path. */
#include "harness.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

static const tg_dtype ALL[6] = {TG_FLOAT32, TG_FLOAT64, TG_INT32,
                                TG_INT64,   TG_UINT8,   TG_BOOL};

/* ---- helpers -------------------------------------------------------------- */
/* like CHECK_ERROR, with a message that contains both fragments */
#define CHECK_ERROR2(expr, st, n1, n2)                                        \
    do {                                                                      \
        tg_clear_error();                                                     \
        bool tt_null = (expr) == NULL;                                        \
        CHECK(tt_null && tg_last_status() == (st) &&                          \
              strstr(tg_last_error(), n1) && strstr(tg_last_error(), n2));    \
        tg_clear_error();                                                     \
    } while (0)

static int64_t numel_of(int nd, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= shape[i];
    return n;
}

/* values (7i + seed) mod 11, plus a fraction for floats */
static tg_tensor *make(tg_dtype dt, int nd, const int64_t *shape, int seed)
{
    int64_t n = numel_of(nd, shape);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((i * 7 + seed) % 11) + (tg_dtype_is_float(dt) ? 0.25 : 0);
    tg_tensor *t = tt_tensor(dt, nd, shape, v);
    free(v);
    return t;
}

/* the same values, laid out as every other element of a wider buffer */
static tg_tensor *strided(tg_tensor *x)
{
    int nd = tg_ndim(x);
    if (nd == 0)
        return x;
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, tg_shape(x), (size_t)nd * sizeof *shape);
    shape[nd - 1] *= 2;
    tg_tensor *big = tg_zeros(tg_dtype_of(x), nd, shape);
    tg_tensor *v = tg_slice(big, nd - 1, 0, shape[nd - 1], 2);
    tg_copy_(v, x);
    return v;
}

static tg_tensor *ints(tg_dtype dt, int nd, const int64_t *shape, const double *v)
{
    return tt_tensor(dt, nd, shape, v);
}

static void unravel(int64_t f, int nd, const int64_t *shape, int64_t *idx)
{
    for (int i = nd - 1; i >= 0; i--) {
        idx[i] = f % shape[i];
        f /= shape[i];
    }
}

static int mismatch(const char *what, const tg_tensor *y, int64_t f, double got,
                    double want)
{
    fprintf(stderr, "  %s: element %lld of %s tensor is %g, expected %g\n", what,
            (long long)f, tg_dtype_name(tg_dtype_of(y)), got, want);
    return 1;
}

/* ---- concat ----------------------------------------------------------------- */
static int check_concat(int n, tg_tensor **xs, int axis, const tg_tensor *y)
{
    int nd = tg_ndim(y), a = axis < 0 ? axis + nd : axis;
    int64_t yi[TG_MAX_DIMS], xi[TG_MAX_DIMS];
    for (int64_t f = 0; f < tg_numel(y); f++) {
        unravel(f, nd, tg_shape(y), yi);
        memcpy(xi, yi, sizeof xi);
        int k = 0;
        while (k < n && xi[a] >= tg_shape(xs[k])[a])
            xi[a] -= tg_shape(xs[k++])[a];
        double got = tg_get(y, yi), want = tg_get(xs[k], xi);
        if (got != want)
            return mismatch("concat", y, f, got, want);
    }
    return 0;
}

static void test_concat_forward(void)
{
    for (int d = 0; d < 6; d++) {
        const int axes[5] = {0, 1, 2, -1, -3};
        for (int k = 0; k < 5; k++) {
            int a = axes[k] < 0 ? axes[k] + 3 : axes[k];
            tg_tensor *xs[3];
            int64_t len[3] = {1, 2, 3};
            for (int i = 0; i < 3; i++) {
                int64_t s[3] = {2, 3, 4};
                s[a] = len[i];
                xs[i] = make(ALL[d], 3, s, i);
            }
            xs[1] = strided(xs[1]); /* one non-contiguous input */
            CHECK(!tg_is_contiguous(xs[1]));
            tg_tensor *y = tg_concat(3, xs, axes[k]);
            CHECK(y && tg_dtype_of(y) == ALL[d]);
            if (!y)
                continue;
            int64_t want[3] = {2, 3, 4};
            want[a] = 6;
            CHECK_SHAPE(y, want[0], want[1], want[2]);
            CHECK(check_concat(3, xs, axes[k], y) == 0);
        }
    }
    /* a part of size 0 along the axis, and a single input */
    tg_tensor *p[2] = {make(TG_FLOAT32, 2, (int64_t[]){2, 0}, 0),
                       make(TG_FLOAT32, 2, (int64_t[]){2, 3}, 1)};
    tg_tensor *y = tg_concat(2, p, 1);
    CHECK_SHAPE(y, 2, 3);
    CHECK(check_concat(2, p, 1, y) == 0);
    y = tg_concat(1, p + 1, 0);
    CHECK(y && !tg_shares_storage(y, p[1]) && check_concat(1, p + 1, 0, y) == 0);
}

/* torch.cat promotes mixed dtypes; so does tg_concat */
static void test_concat_promotes(void)
{
    tg_tensor *a = tt_tensor(TG_INT32, 1, (int64_t[]){2}, (double[]){1, 2});
    tg_tensor *b = tt_tensor(TG_FLOAT32, 1, (int64_t[]){1}, (double[]){2.5});
    tg_tensor *c = tt_tensor(TG_BOOL, 1, (int64_t[]){2}, (double[]){1, 0});
    tg_tensor *y = tg_concat(3, (tg_tensor *[]){a, b, c}, 0);
    CHECK(y && tg_dtype_of(y) == TG_FLOAT32);
    CHECK_TENSOR(y, ((double[]){1, 2, 2.5, 1, 0}), 0);
    tg_tensor *d = tt_tensor(TG_INT64, 1, (int64_t[]){1}, (double[]){7});
    y = tg_concat(2, (tg_tensor *[]){c, d}, 0);
    CHECK(y && tg_dtype_of(y) == TG_INT64);
    CHECK_TENSOR(y, ((double[]){1, 0, 7}), 0);
    tg_tensor *u = tt_tensor(TG_UINT8, 1, (int64_t[]){1}, (double[]){200});
    y = tg_concat(2, (tg_tensor *[]){u, a}, 0);
    CHECK(y && tg_dtype_of(y) == TG_INT32);
    CHECK_TENSOR(y, ((double[]){200, 1, 2}), 0);
}

/* more inputs than one op call takes (64) are concatenated in groups */
static void test_concat_many(void)
{
    enum { N = 150 };
    tg_tensor *xs[N];
    double want[2 * N];
    for (int i = 0; i < N; i++) {
        xs[i] = tt_tensor(TG_INT64, 2, (int64_t[]){1, 2}, (double[]){i, -i});
        want[2 * i] = i;
        want[2 * i + 1] = -i;
    }
    tg_tensor *y = tg_concat(N, xs, 0);
    CHECK_SHAPE(y, N, 2);
    CHECK_TENSOR(y, want, 0);
    /* and stacking as many */
    y = tg_stack(N, xs, 1);
    CHECK_SHAPE(y, 1, N, 2);
    CHECK_TENSOR(y, want, 0);
}

static void test_concat_errors(void)
{
    tg_tensor *a = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *b = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 4});
    tg_tensor *c = tg_zeros(TG_FLOAT32, 3, (int64_t[]){2, 3, 1});
    tg_tensor *z = tg_scalar(TG_FLOAT32, 1);
    CHECK_ERROR2(tg_concat(2, (tg_tensor *[]){a, b}, 0), TG_ERR_SHAPE, "[2, 4]", "[2, 3]");
    CHECK_ERROR(tg_concat(2, (tg_tensor *[]){a, b}, 0), TG_ERR_SHAPE, "concat");
    CHECK(tg_concat(2, (tg_tensor *[]){a, b}, 1) != NULL); /* fine on axis 1 */
    CHECK_ERROR(tg_concat(2, (tg_tensor *[]){a, c}, 0), TG_ERR_SHAPE, "[2, 3, 1]");
    CHECK_ERROR(tg_concat(1, &z, 0), TG_ERR_SHAPE, "0-d");
    CHECK_ERROR(tg_concat(2, (tg_tensor *[]){a, a}, 2), TG_ERR_INDEX, "axis 2");
    CHECK_ERROR(tg_concat(0, NULL, 0), TG_ERR_ARG, "at least one");
    CHECK_ERROR(tg_concat(2, (tg_tensor *[]){a, NULL}, 0), TG_ERR_ARG, "NULL");
}

typedef struct axis_user {
    int axis;
    int n;
} axis_user;

static tg_tensor *f_concat(int n, tg_tensor *const *in, void *user)
{
    const axis_user *u = user;
    return tg_tanh(tg_concat(n, in, u->axis));
}

static void test_concat_grad(void)
{
    tg_tensor *in[3] = {tt_rand(2, (int64_t[]){2, 1}, -1, 1),
                        tt_rand(2, (int64_t[]){2, 2}, -1, 1),
                        tt_rand(2, (int64_t[]){2, 3}, -1, 1)};
    axis_user u = {1, 3};
    CHECK_GRADCHECK(f_concat, &u, 3, in);
    u.axis = -1;
    CHECK_GRADCHECK(f_concat, &u, 3, in);
    tg_tensor *in0[3] = {tt_rand(2, (int64_t[]){1, 3}, -1, 1),
                         tt_rand(2, (int64_t[]){3, 3}, -1, 1),
                         tt_rand(2, (int64_t[]){2, 3}, -1, 1)};
    u.axis = 0;
    CHECK_GRADCHECK(f_concat, &u, 3, in0);
    /* only some inputs require grad; a float32 one gets a float32 gradient */
    tg_tensor *k = tt_tensor(TG_INT32, 2, (int64_t[]){1, 3}, (double[]){1, 2, 3});
    tg_tensor *f = tt_tensor(TG_FLOAT32, 2, (int64_t[]){1, 3}, (double[]){1, 2, 3});
    tg_set_requires_grad(f, true);
    tg_tensor *w = tg_reshape(tg_arange(TG_FLOAT64, 0, 9, 1), 2, (int64_t[]){3, 3});
    tg_tensor *y = tg_sum(tg_mul(tg_concat(3, (tg_tensor *[]){k, f, in0[0]}, 0), w),
                          0, NULL, false);
    CHECK_OK(tg_backward(y, NULL, false));
    CHECK(tg_grad(f) && tg_dtype_of(tg_grad(f)) == TG_FLOAT32);
    CHECK_TENSOR(tg_grad(f), ((double[]){3, 4, 5}), 0);
    CHECK_TENSOR(tg_grad(in0[0]), ((double[]){6, 7, 8}), 0);
}

/* ---- stack ---------------------------------------------------------------------- */
static void test_stack_forward(void)
{
    const int axes[4] = {0, 1, 2, -1};
    for (int d = 0; d < 6; d++) {
        for (int k = 0; k < 4; k++) {
            int a = axes[k] < 0 ? axes[k] + 3 : axes[k];
            tg_tensor *xs[3];
            for (int i = 0; i < 3; i++)
                xs[i] = make(ALL[d], 2, (int64_t[]){2, 3}, 3 * i);
            xs[2] = strided(xs[2]);
            tg_tensor *y = tg_stack(3, xs, axes[k]);
            CHECK(y && tg_dtype_of(y) == ALL[d] && tg_ndim(y) == 3);
            if (!y)
                continue;
            CHECK(tg_shape(y)[a] == 3);
            int bad = 0;
            int64_t yi[3], xi[2];
            for (int64_t f = 0; f < tg_numel(y) && !bad; f++) {
                unravel(f, 3, tg_shape(y), yi);
                for (int j = 0, m = 0; j < 3; j++)
                    if (j != a)
                        xi[m++] = yi[j];
                double want = tg_get(xs[yi[a]], xi), got = tg_get(y, yi);
                if (got != want)
                    bad = mismatch("stack", y, f, got, want);
            }
            CHECK(bad == 0);
        }
    }
    /* 0-d inputs stack into a vector */
    tg_tensor *s[2] = {tg_scalar(TG_INT32, 4), tg_scalar(TG_INT32, 5)};
    tg_tensor *y = tg_stack(2, s, -1);
    CHECK_SHAPE(y, 2);
    CHECK_TENSOR(y, ((double[]){4, 5}), 0);
}

static void test_stack_errors(void)
{
    tg_tensor *a = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *b = tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 2});
    CHECK_ERROR2(tg_stack(2, (tg_tensor *[]){a, b}, 0), TG_ERR_SHAPE, "[3, 2]", "[2, 3]");
    CHECK_ERROR(tg_stack(2, (tg_tensor *[]){a, b}, 0), TG_ERR_SHAPE, "stack");
    CHECK_ERROR(tg_stack(2, (tg_tensor *[]){a, a}, 3), TG_ERR_INDEX, "axis 3");
    CHECK_ERROR(tg_stack(2, (tg_tensor *[]){a, a}, -4), TG_ERR_INDEX, "stack");
    CHECK_ERROR(tg_stack(0, (tg_tensor *[]){a}, 0), TG_ERR_ARG, "at least one");
    CHECK_ERROR(tg_stack(2, (tg_tensor *[]){a, NULL}, 0), TG_ERR_ARG, "input 1");
}

static tg_tensor *f_stack(int n, tg_tensor *const *in, void *user)
{
    const axis_user *u = user;
    return tg_mul(tg_stack(n, in, u->axis), tg_stack(n, in, u->axis));
}

static void test_stack_grad(void)
{
    tg_tensor *in[3] = {tt_rand(2, (int64_t[]){2, 3}, -1, 1),
                        tt_rand(2, (int64_t[]){2, 3}, -1, 1),
                        tt_rand(2, (int64_t[]){2, 3}, -1, 1)};
    axis_user u = {1, 3};
    CHECK_GRADCHECK(f_stack, &u, 3, in);
    u.axis = -1;
    CHECK_GRADCHECK(f_stack, &u, 3, in);
    u.axis = 0;
    CHECK_GRADCHECK(f_stack, &u, 3, in);
}

/* ---- split ------------------------------------------------------------------------ */
static void test_split_forward(void)
{
    for (int d = 0; d < 6; d++) {
        tg_tensor *x = strided(make(ALL[d], 3, (int64_t[]){2, 6, 3}, 1));
        tg_tensor *parts[4];
        CHECK_OK(tg_split(x, 1, 4, (int64_t[]){1, 3, 0, 2}, parts));
        CHECK_SHAPE(parts[0], 2, 1, 3);
        CHECK_SHAPE(parts[1], 2, 3, 3);
        CHECK_SHAPE(parts[2], 2, 0, 3);
        CHECK_SHAPE(parts[3], 2, 2, 3);
        for (int i = 0; i < 4; i++)
            CHECK(tg_shares_storage(parts[i], x) && tg_dtype_of(parts[i]) == ALL[d]);
        /* concatenating the parts gives x back */
        tg_tensor *y = tg_concat(4, parts, 1);
        CHECK(check_concat(4, parts, 1, y) == 0);
        CHECK(check_concat(1, &x, 0, y) == 0);
    }
    /* negative axis, hand-checked values */
    tg_tensor *x = tt_tensor(TG_INT32, 2, (int64_t[]){2, 3}, (double[]){0, 1, 2, 3, 4, 5});
    tg_tensor *p[2];
    CHECK_OK(tg_split(x, -1, 2, (int64_t[]){2, 1}, p));
    CHECK_TENSOR(p[0], ((double[]){0, 1, 3, 4}), 0);
    CHECK_TENSOR(p[1], ((double[]){2, 5}), 0);
    CHECK_OK(tg_split(x, 0, 2, (int64_t[]){1, 1}, p));
    CHECK_TENSOR(p[1], ((double[]){3, 4, 5}), 0);
}

static void test_split_owned(void)
{
    /* outside any scope the caller owns each part */
    tg_scope_end();
    tg_tensor *x = tg_arange(TG_FLOAT32, 0, 6, 1);
    tg_tensor *p[3];
    CHECK_OK(tg_split(x, 0, 3, (int64_t[]){1, 2, 3}, p));
    CHECK_NEAR(tg_get(p[2], (int64_t[]){2}), 5, 0);
    for (int i = 0; i < 3; i++)
        tg_release(p[i]);
    /* a failed split leaves nothing behind */
    CHECK_FAILS(tg_split(x, 0, 3, (int64_t[]){1, 2, 4}, p), TG_ERR_SHAPE, "sum to 7");
    CHECK(p[0] == NULL && p[2] == NULL);
    tg_release(x);
    tg_scope_begin();
}

static tg_tensor *f_split(int n, tg_tensor *const *in, void *user)
{
    (void)n, (void)user;
    tg_tensor *p[3];
    if (tg_split(in[0], 1, 3, (int64_t[]){2, 1, 3}, p) != TG_OK)
        return NULL;
    /* every part used differently */
    tg_tensor *q[3] = {tg_mul_scalar(p[2], 2), tg_tanh(p[0]), tg_mul(p[1], p[1])};
    return tg_concat(3, q, 1);
}

static void test_split_grad(void)
{
    tg_tensor *x = tt_rand(2, (int64_t[]){2, 6}, -1, 1);
    CHECK_GRADCHECK(f_split, NULL, 1, &x);
}

static void test_split_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 5});
    tg_tensor *p[3];
    CHECK_FAILS(tg_split(x, 1, 2, (int64_t[]){2, 2}, p), TG_ERR_SHAPE, "sum to 4");
    CHECK_FAILS(tg_split(x, 1, 2, (int64_t[]){2, 2}, p), TG_ERR_SHAPE, "[2, 5]");
    CHECK_FAILS(tg_split(x, 1, 2, (int64_t[]){6, -1}, p), TG_ERR_ARG, "negative");
    CHECK_FAILS(tg_split(x, 2, 1, (int64_t[]){5}, p), TG_ERR_INDEX, "axis 2");
    CHECK_FAILS(tg_split(tg_scalar(TG_FLOAT32, 1), 0, 1, (int64_t[]){1}, p),
                TG_ERR_SHAPE, "0-d");
    CHECK_FAILS(tg_split(x, 0, 0, NULL, p), TG_ERR_ARG, "at least one");
    CHECK_FAILS(tg_split(NULL, 0, 1, (int64_t[]){1}, p), TG_ERR_ARG, "NULL");
}

/* ---- gather ------------------------------------------------------------------------- */
static int check_gather(const tg_tensor *x, int axis, const tg_tensor *index,
                        const tg_tensor *y)
{
    int nd = tg_ndim(index), a = axis < 0 ? axis + nd : axis;
    int64_t yi[TG_MAX_DIMS], xi[TG_MAX_DIMS];
    for (int64_t f = 0; f < tg_numel(y); f++) {
        unravel(f, nd, tg_shape(y), yi);
        memcpy(xi, yi, sizeof xi);
        xi[a] = (int64_t)tg_get(index, yi);
        double got = tg_get(y, yi), want = tg_get(x, xi);
        if (got != want)
            return mismatch("gather", y, f, got, want);
    }
    return 0;
}

/* index values in 0..bound-1, shaped `shape` */
static tg_tensor *rand_index(tg_dtype dt, int nd, const int64_t *shape, int64_t bound,
                             int seed)
{
    int64_t n = numel_of(nd, shape);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((i * 5 + seed * 3 + i / 3) % bound);
    tg_tensor *t = ints(dt, nd, shape, v);
    free(v);
    return t;
}

static void test_gather_forward(void)
{
    const int axes[4] = {0, 1, 2, -1};
    for (int d = 0; d < 6; d++) {
        for (int k = 0; k < 4; k++) {
            int a = axes[k] < 0 ? axes[k] + 3 : axes[k];
            tg_tensor *x = make(ALL[d], 3, (int64_t[]){3, 4, 5}, d);
            int64_t is[3] = {2, 3, 4}; /* smaller than x off the axis */
            is[a] = 6;                 /* longer than x along it */
            int64_t bound = tg_shape(x)[a];
            tg_dtype it = k % 2 ? TG_INT32 : TG_INT64;
            tg_tensor *index = rand_index(it, 3, is, bound, k);
            tg_tensor *y = tg_gather(x, axes[k], index);
            CHECK(y && tg_dtype_of(y) == ALL[d]);
            if (!y)
                continue;
            CHECK_SHAPE(y, is[0], is[1], is[2]);
            CHECK(check_gather(x, axes[k], index, y) == 0);
            /* strided data and index */
            tg_tensor *xs = strided(x), *ixs = strided(index);
            y = tg_gather(xs, axes[k], ixs);
            CHECK(y && check_gather(x, axes[k], index, y) == 0);
            /* a transposed (permuted) x */
            tg_tensor *xt = tg_contiguous(tg_transpose(x, 0, 2));
            tg_tensor *xtt = tg_transpose(xt, 0, 2);
            CHECK(!tg_is_contiguous(xtt));
            y = tg_gather(xtt, axes[k], index);
            CHECK(y && check_gather(x, axes[k], index, y) == 0);
        }
    }
    /* hand-computed: torch.gather([[1,2],[3,4]], 1, [[0,0],[1,0]]) */
    tg_tensor *x = tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4});
    tg_tensor *i = ints(TG_INT64, 2, (int64_t[]){2, 2}, (double[]){0, 0, 1, 0});
    CHECK_TENSOR(tg_gather(x, 1, i), ((double[]){1, 1, 4, 3}), 0);
    CHECK_TENSOR(tg_gather(x, 0, i), ((double[]){1, 2, 3, 2}), 0);
    /* 0-d */
    tg_tensor *y = tg_gather(tg_scalar(TG_FLOAT64, 3.5), 0, tg_scalar(TG_INT32, 0));
    CHECK(y && tg_ndim(y) == 0 && tg_item(y) == 3.5);
    /* empty index */
    y = tg_gather(x, 1, tg_zeros(TG_INT64, 2, (int64_t[]){2, 0}));
    CHECK_SHAPE(y, 2, 0);
}

/* large enough to run on the thread pool (twice TG_ITER_GRAIN elements);
 * a bad value deep inside, in the second thread's half */
static void test_gather_parallel(void)
{
    int64_t s[2] = {512, 1024};
    tg_tensor *x = make(TG_FLOAT32, 2, s, 0);
    tg_tensor *index = rand_index(TG_INT32, 2, s, 512, 1);
    tg_tensor *y = tg_gather(x, 0, index);
    CHECK(y && check_gather(x, 0, index, y) == 0);
    tg_no_grad_begin();
    tg__store(TG_INT32, tg__elem_ptr(index, 400000), 999);
    tg_no_grad_end();
    CHECK_ERROR2(tg_gather(x, 0, index), TG_ERR_INDEX, "index 999", "size 512");
    /* index_select on the pool too */
    tg_tensor *sel = rand_index(TG_INT64, 1, (int64_t[]){1100}, 1024, 2);
    y = tg_index_select(x, 1, sel);
    CHECK_SHAPE(y, 512, 1100);
    int bad = 0;
    for (int64_t r = 0; r < 512 && !bad; r += 17)
        for (int64_t j = 0; j < 1100 && !bad; j += 7) {
            int64_t src = (int64_t)tg_get(sel, &j);
            if (tg_get(y, (int64_t[]){r, j}) != tg_get(x, (int64_t[]){r, src}))
                bad = 1;
        }
    CHECK(bad == 0);
}

static void test_gather_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *i = ints(TG_INT64, 2, (int64_t[]){2, 2}, (double[]){0, 1, 5, 2});
    CHECK_ERROR2(tg_gather(x, 1, i), TG_ERR_INDEX, "index 5", "size 3");
    CHECK_ERROR(tg_gather(x, 1, i), TG_ERR_INDEX, "gather:");
    tg_tensor *neg = ints(TG_INT32, 2, (int64_t[]){1, 1}, (double[]){-1});
    CHECK_ERROR(tg_gather(x, 0, neg), TG_ERR_INDEX, "index -1");
    CHECK_ERROR(tg_gather(x, 0, tg_zeros(TG_FLOAT32, 2, (int64_t[]){1, 1})),
                TG_ERR_DTYPE, "int32 or int64");
    CHECK_ERROR(tg_gather(x, 0, tg_zeros(TG_INT64, 1, (int64_t[]){2})), TG_ERR_SHAPE,
                "same rank");
    CHECK_ERROR(tg_gather(x, 0, tg_zeros(TG_INT64, 2, (int64_t[]){1, 4})), TG_ERR_SHAPE,
                "[1, 4]");
    CHECK_ERROR(tg_gather(x, 2, i), TG_ERR_INDEX, "axis 2");
    tg_tensor *e = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 0});
    CHECK_ERROR(tg_gather(e, 1, tg_zeros(TG_INT64, 2, (int64_t[]){2, 1})),
                TG_ERR_INDEX, "empty");
}

typedef struct idx_user {
    int axis;
    tg_tensor *index;
} idx_user;

static tg_tensor *f_gather(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const idx_user *u = user;
    return tg_gather(tg_mul(in[0], in[0]), u->axis, u->index);
}

static void test_gather_grad(void)
{
    tg_tensor *x = tt_rand(2, (int64_t[]){3, 4}, -1, 1);
    /* repeated indices: their gradients add up */
    idx_user u = {1, ints(TG_INT64, 2, (int64_t[]){2, 5},
                          (double[]){0, 0, 3, 1, 0, 2, 2, 2, 3, 1})};
    CHECK_GRADCHECK(f_gather, &u, 1, &x);
    u.axis = 0;
    u.index = ints(TG_INT32, 2, (int64_t[]){4, 3}, (double[]){0, 2, 1, 2, 2, 0, 1, 1, 1, 0, 0, 0});
    CHECK_GRADCHECK(f_gather, &u, 1, &x);
    u.axis = -1;
    u.index = ints(TG_INT32, 2, (int64_t[]){1, 2}, (double[]){3, 3});
    CHECK_GRADCHECK(f_gather, &u, 1, &x);
    /* accumulation by hand: x [4], index [1, 1, 3] */
    tg_tensor *v = tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    tg_set_requires_grad(v, true);
    tg_tensor *y = tg_gather(v, 0, ints(TG_INT64, 1, (int64_t[]){3}, (double[]){1, 1, 3}));
    CHECK_OK(tg_backward(tg_sum(y, 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(v), ((double[]){0, 2, 0, 1}), 0);
}

/* the registered gradient ops, called directly */
static tg_tensor *call_op(const char *name, tg_tensor *a, tg_tensor *b, int axis,
                          int nd, const int64_t *shape)
{
    const tg_op_def *op = tg_op_find(name);
    if (!op)
        return NULL;
    tg_tensor *in[2] = {a, b};
    tg_attr at[2] = {TG_AI("axis", axis), TG_AINTS("shape", shape, nd)};
    return tg_op_call(op, 2, in, at, 2);
}

static tg_tensor *f_scatter_add(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const idx_user *u = user;
    return tg_tanh(call_op("scatter_add", in[0], u->index, u->axis, 2, (int64_t[]){3, 4}));
}

/* scatter_add (gather's gradient) has gather as its gradient */
static void test_scatter_add(void)
{
    tg_tensor *src = tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    tg_tensor *i = ints(TG_INT64, 2, (int64_t[]){2, 3}, (double[]){0, 0, 3, 1, 1, 1});
    tg_tensor *y = call_op("scatter_add", src, i, 1, 2, (int64_t[]){2, 4});
    CHECK_TENSOR(y, ((double[]){3, 0, 0, 3, 0, 15, 0, 0}), 0);
    tg_tensor *yi = call_op("scatter_add", tg_cast(src, TG_INT32), i, -1, 2,
                            (int64_t[]){2, 4});
    CHECK(yi && tg_dtype_of(yi) == TG_INT32);
    CHECK_TENSOR(yi, ((double[]){3, 0, 0, 3, 0, 15, 0, 0}), 0);
    idx_user u = {1, ints(TG_INT32, 2, (int64_t[]){2, 3}, (double[]){0, 0, 3, 1, 2, 1})};
    tg_tensor *s = tt_rand(2, (int64_t[]){2, 3}, -1, 1);
    CHECK_GRADCHECK(f_scatter_add, &u, 1, &s);
    u.axis = 0;
    u.index = ints(TG_INT32, 2, (int64_t[]){2, 3}, (double[]){2, 0, 2, 1, 2, 2});
    CHECK_GRADCHECK(f_scatter_add, &u, 1, &s);
    CHECK_ERROR(call_op("scatter_add", src, i, 1, 2, (int64_t[]){2, 3}), TG_ERR_INDEX,
                "index 3");
    CHECK_ERROR(call_op("scatter_add", tg_cast(src, TG_BOOL), i, 1, 2, (int64_t[]){2, 4}),
                TG_ERR_DTYPE, "bool");
    CHECK_ERROR(call_op("scatter_add", src, tg_zeros(TG_INT64, 2, (int64_t[]){1, 3}), 1, 2,
                        (int64_t[]){2, 4}), TG_ERR_SHAPE, "same shape");
}

/* grad of grad through gather: d/dv of d(sum(gather(x) * v))/dx */
typedef struct gg_user {
    tg_tensor *x, *index;
} gg_user;

static tg_tensor *f_gather_double(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const gg_user *u = user;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *y = tg_gather(u->x, 1, u->index), *g = NULL;
    tg_status s = tg_autograd_grad(1, &y, &in[0], 1, &u->x, &g, false, true);
    tg_set_grad_enabled(was);
    if (s != TG_OK)
        return NULL;
    tg_tensor *r = tg_mul(g, g);
    tg_release(g);
    return r;
}

static void test_gather_grad_of_grad(void)
{
    gg_user u = {tt_rand(2, (int64_t[]){2, 3}, -1, 1),
                 ints(TG_INT64, 2, (int64_t[]){2, 4}, (double[]){0, 2, 2, 1, 1, 1, 0, 2})};
    tg_tensor *v = tt_rand(2, (int64_t[]){2, 4}, -1, 1);
    CHECK_GRADCHECK(f_gather_double, &u, 1, &v);
}

/* ---- index_select ------------------------------------------------------------------- */
static int check_index_select(const tg_tensor *x, int axis, const tg_tensor *index,
                              const tg_tensor *y)
{
    int nd = tg_ndim(x), a = axis < 0 ? axis + nd : axis;
    int64_t yi[TG_MAX_DIMS], xi[TG_MAX_DIMS];
    for (int64_t f = 0; f < tg_numel(y); f++) {
        unravel(f, nd, tg_shape(y), yi);
        memcpy(xi, yi, sizeof xi);
        int64_t j = yi[a];
        xi[a] = (int64_t)tg_get(index, tg_ndim(index) ? &j : NULL);
        double got = tg_get(y, yi), want = tg_get(x, xi);
        if (got != want)
            return mismatch("index_select", y, f, got, want);
    }
    return 0;
}

static void test_index_select_forward(void)
{
    const int axes[4] = {0, 1, 2, -2};
    for (int d = 0; d < 6; d++) {
        for (int k = 0; k < 4; k++) {
            int a = axes[k] < 0 ? axes[k] + 3 : axes[k];
            tg_tensor *x = make(ALL[d], 3, (int64_t[]){3, 4, 5}, d + k);
            tg_tensor *index = rand_index(k % 2 ? TG_INT32 : TG_INT64, 1, (int64_t[]){7},
                                          tg_shape(x)[a], k); /* repeats */
            tg_tensor *y = tg_index_select(x, axes[k], index);
            CHECK(y && tg_dtype_of(y) == ALL[d]);
            if (!y)
                continue;
            CHECK(tg_shape(y)[a] == 7);
            CHECK(check_index_select(x, axes[k], index, y) == 0);
            y = tg_index_select(strided(x), axes[k], strided(index));
            CHECK(y && check_index_select(x, axes[k], index, y) == 0);
        }
    }
    tg_tensor *x = tt_tensor(TG_INT64, 2, (int64_t[]){2, 3}, (double[]){0, 1, 2, 3, 4, 5});
    CHECK_TENSOR(tg_index_select(x, 1, ints(TG_INT32, 1, (int64_t[]){4},
                                             (double[]){2, 0, 2, 1})),
                 ((double[]){2, 0, 2, 1, 5, 3, 5, 4}), 0);
    tg_tensor *y = tg_index_select(x, 0, tg_zeros(TG_INT64, 1, (int64_t[]){0}));
    CHECK_SHAPE(y, 0, 3);
    y = tg_index_select(x, 0, tg_scalar(TG_INT64, 1)); /* 0-d index: one row */
    CHECK_SHAPE(y, 1, 3);
    CHECK_TENSOR(y, ((double[]){3, 4, 5}), 0);
}

static tg_tensor *f_index_select(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const idx_user *u = user;
    return tg_sin(tg_index_select(in[0], u->axis, u->index));
}

static void test_index_select_grad(void)
{
    tg_tensor *x = tt_rand(3, (int64_t[]){3, 4, 2}, -1, 1);
    idx_user u = {1, ints(TG_INT64, 1, (int64_t[]){5}, (double[]){3, 0, 3, 3, 1})};
    CHECK_GRADCHECK(f_index_select, &u, 1, &x);
    u.axis = 0;
    u.index = ints(TG_INT32, 1, (int64_t[]){4}, (double[]){2, 2, 0, 2});
    CHECK_GRADCHECK(f_index_select, &u, 1, &x);
    u.axis = -1;
    u.index = ints(TG_INT32, 1, (int64_t[]){3}, (double[]){1, 1, 1});
    CHECK_GRADCHECK(f_index_select, &u, 1, &x);
    /* repeated indices accumulate */
    tg_tensor *v = tt_tensor(TG_FLOAT32, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
    tg_set_requires_grad(v, true);
    tg_tensor *y = tg_index_select(v, 0, ints(TG_INT64, 1, (int64_t[]){3}, (double[]){1, 1, 3}));
    CHECK_OK(tg_backward(tg_sum(y, 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(v), ((double[]){0, 2, 0, 1}), 0);
}

static tg_tensor *f_index_add(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const idx_user *u = user;
    return tg_exp(call_op("index_add", in[0], u->index, u->axis, 2, (int64_t[]){3, 4}));
}

/* index_add (index_select's and embedding's gradient) */
static void test_index_add(void)
{
    tg_tensor *src = tt_tensor(TG_INT64, 2, (int64_t[]){3, 2}, (double[]){1, 2, 3, 4, 5, 6});
    tg_tensor *i = ints(TG_INT32, 1, (int64_t[]){2}, (double[]){3, 3});
    tg_tensor *y = call_op("index_add", src, i, 1, 2, (int64_t[]){3, 4});
    CHECK_TENSOR(y, ((double[]){0, 0, 0, 3, 0, 0, 0, 7, 0, 0, 0, 11}), 0);
    idx_user u = {1, i};
    tg_tensor *s = tt_rand(2, (int64_t[]){3, 2}, -1, 1);
    CHECK_GRADCHECK(f_index_add, &u, 1, &s);
    u.axis = 0;
    u.index = ints(TG_INT64, 1, (int64_t[]){3}, (double[]){0, 2, 0});
    s = tt_rand(2, (int64_t[]){3, 4}, -1, 1);
    CHECK_GRADCHECK(f_index_add, &u, 1, &s);
    CHECK_ERROR(call_op("index_add", src, ints(TG_INT32, 1, (int64_t[]){2}, (double[]){0, 4}),
                        1, 2, (int64_t[]){3, 4}), TG_ERR_INDEX, "index 4");
    CHECK_ERROR(call_op("index_add", src, i, 1, 2, (int64_t[]){2, 4}), TG_ERR_SHAPE,
                "[3, 2]");
}

static void test_index_select_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_ERROR(tg_index_select(x, 1, ints(TG_INT64, 1, (int64_t[]){2}, (double[]){0, 3})),
                TG_ERR_INDEX, "index_select: index 3");
    CHECK_ERROR(tg_index_select(x, 1, ints(TG_INT64, 1, (int64_t[]){2}, (double[]){0, 3})),
                TG_ERR_INDEX, "size 3");
    CHECK_ERROR(tg_index_select(x, 0, ints(TG_INT32, 1, (int64_t[]){1}, (double[]){-2})),
                TG_ERR_INDEX, "index -2");
    CHECK_ERROR(tg_index_select(x, 0, tg_zeros(TG_INT64, 2, (int64_t[]){1, 1})),
                TG_ERR_SHAPE, "1-D");
    CHECK_ERROR(tg_index_select(x, 0, tg_zeros(TG_FLOAT64, 1, (int64_t[]){1})),
                TG_ERR_DTYPE, "int32 or int64");
    CHECK_ERROR(tg_index_select(x, -3, tg_zeros(TG_INT64, 1, (int64_t[]){1})),
                TG_ERR_INDEX, "axis -3");
    CHECK_ERROR(tg_index_select(tg_scalar(TG_FLOAT32, 1), 0,
                                tg_zeros(TG_INT64, 1, (int64_t[]){1})),
                TG_ERR_SHAPE, "0-d");
}

/* ---- pad ---------------------------------------------------------------------------- */
static int check_pad(const tg_tensor *x, int n_pads, const int64_t *pads, double value,
                     const tg_tensor *y)
{
    int nd = tg_ndim(x);
    int64_t yi[TG_MAX_DIMS], xi[TG_MAX_DIMS];
    for (int64_t f = 0; f < tg_numel(y); f++) {
        unravel(f, nd, tg_shape(y), yi);
        bool inside = true;
        for (int i = 0; i < nd; i++) {
            xi[i] = yi[i] - (2 * i < n_pads ? pads[2 * i] : 0);
            inside &= xi[i] >= 0 && xi[i] < tg_shape(x)[i];
        }
        double got = tg_get(y, yi), want = inside ? tg_get(x, xi) : value;
        if (got != want)
            return mismatch("pad", y, f, got, want);
    }
    return 0;
}

static void test_pad_forward(void)
{
    const int64_t pads[3][6] = {{1, 2, 0, 0, 3, 1}, {0, 0, 2, 1, 0, 0}, {2, 0, 1, 3, 0, 0}};
    const int n_pads[3] = {6, 4, 2};
    for (int d = 0; d < 6; d++) {
        double value = ALL[d] == TG_BOOL ? 1 : tg_dtype_is_float(ALL[d]) ? 2.5 : 7;
        for (int k = 0; k < 3; k++) {
            tg_tensor *x = make(ALL[d], 3, (int64_t[]){2, 3, 2}, k);
            tg_tensor *y = tg_pad(x, n_pads[k], pads[k], value);
            CHECK(y && tg_dtype_of(y) == ALL[d]);
            if (!y)
                continue;
            CHECK(check_pad(x, n_pads[k], pads[k], value, y) == 0);
            y = tg_pad(strided(x), n_pads[k], pads[k], value);
            CHECK(y && check_pad(x, n_pads[k], pads[k], value, y) == 0);
        }
    }
    tg_tensor *x = tt_tensor(TG_FLOAT32, 2, (int64_t[]){1, 2}, (double[]){1, 2});
    tg_tensor *y = tg_pad(x, 4, (int64_t[]){1, 0, 1, 2}, 0);
    CHECK_SHAPE(y, 2, 5);
    CHECK_TENSOR(y, ((double[]){0, 0, 0, 0, 0, 0, 1, 2, 0, 0}), 0);
    y = tg_pad(x, 0, NULL, 9); /* no pads: a copy */
    CHECK(y && !tg_shares_storage(x, y));
    CHECK_TENSOR(y, ((double[]){1, 2}), 0);
    y = tg_pad(tg_zeros(TG_INT32, 1, (int64_t[]){0}), 2, (int64_t[]){1, 1}, -3);
    CHECK_TENSOR(y, ((double[]){-3, -3}), 0);
}

typedef struct pad_user {
    int n;
    const int64_t *pads;
} pad_user;

static tg_tensor *f_pad(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const pad_user *u = user;
    tg_tensor *y = tg_pad(in[0], u->n, u->pads, 0.5);
    return tg_mul(y, y);
}

static void test_pad_grad(void)
{
    tg_tensor *x = tt_rand(3, (int64_t[]){2, 3, 2}, -1, 1);
    pad_user u = {6, (const int64_t[]){1, 0, 2, 1, 0, 3}};
    CHECK_GRADCHECK(f_pad, &u, 1, &x);
    u = (pad_user){2, (const int64_t[]){0, 2}};
    CHECK_GRADCHECK(f_pad, &u, 1, &x);
}

static void test_pad_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_ERROR2(tg_pad(x, 2, (int64_t[]){1, -1}, 0), TG_ERR_ARG, "negative", "pad -1");
    CHECK_ERROR(tg_pad(x, 3, (int64_t[]){1, 1, 1}, 0), TG_ERR_ARG, "even");
    CHECK_ERROR(tg_pad(x, 6, (int64_t[]){1, 1, 1, 1, 1, 1}, 0), TG_ERR_ARG, "[2, 3]");
    CHECK_ERROR(tg_pad(tg_zeros(TG_UINT8, 1, (int64_t[]){2}), 2, (int64_t[]){1, 1}, 300),
                TG_ERR_ARG, "uint8");
    CHECK_ERROR(tg_pad(tg_zeros(TG_INT32, 1, (int64_t[]){2}), 2, (int64_t[]){1, 1}, NAN),
                TG_ERR_ARG, "int32");
    CHECK_ERROR(tg_pad(x, 2, NULL, 0), TG_ERR_ARG, "pads");
}

/* ---- one_hot ------------------------------------------------------------------------ */
static void test_one_hot(void)
{
    for (int k = 0; k < 2; k++) {
        tg_tensor *i = ints(k ? TG_INT32 : TG_INT64, 2, (int64_t[]){2, 3},
                            (double[]){0, 3, 1, 1, 2, 0});
        tg_tensor *y = tg_one_hot(strided(i), 4);
        CHECK(y && tg_dtype_of(y) == TG_INT64 && !tg_requires_grad(y));
        CHECK_SHAPE(y, 2, 3, 4);
        CHECK_TENSOR(y, ((double[]){1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0,
                                    0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0}), 0);
    }
    tg_tensor *y = tg_one_hot(tg_scalar(TG_INT32, 2), 3);
    CHECK_SHAPE(y, 3);
    CHECK_TENSOR(y, ((double[]){0, 0, 1}), 0);
    y = tg_one_hot(tg_zeros(TG_INT64, 1, (int64_t[]){0}), 0);
    CHECK_SHAPE(y, 0, 0);
    tg_tensor *bad = ints(TG_INT64, 1, (int64_t[]){3}, (double[]){0, 4, 1});
    CHECK_ERROR2(tg_one_hot(bad, 4), TG_ERR_INDEX, "class 4", "num_classes 4");
    CHECK_ERROR(tg_one_hot(ints(TG_INT32, 1, (int64_t[]){1}, (double[]){-1}), 4),
                TG_ERR_INDEX, "class -1");
    CHECK_ERROR(tg_one_hot(tg_zeros(TG_FLOAT32, 1, (int64_t[]){1}), 4), TG_ERR_DTYPE,
                "int32 or int64");
    CHECK_ERROR(tg_one_hot(bad, -1), TG_ERR_ARG, "num_classes");
}

/* ---- tile ---------------------------------------------------------------------------- */
static int check_tile(const tg_tensor *x, const tg_tensor *y)
{
    int nd = tg_ndim(y), xd = tg_ndim(x);
    int64_t yi[TG_MAX_DIMS], xi[TG_MAX_DIMS];
    for (int64_t f = 0; f < tg_numel(y); f++) {
        unravel(f, nd, tg_shape(y), yi);
        for (int i = 0; i < xd; i++)
            xi[i] = yi[i + nd - xd] % tg_shape(x)[i];
        double got = tg_get(y, yi), want = tg_get(x, xi);
        if (got != want)
            return mismatch("tile", y, f, got, want);
    }
    return 0;
}

static void test_tile_forward(void)
{
    const int64_t reps[4][4] = {{2, 3}, {3}, {2, 1, 2, 2}, {1, 0}};
    const int n_reps[4] = {2, 1, 4, 2};
    const int64_t want[4][4] = {{4, 9}, {2, 9}, {2, 1, 4, 6}, {2, 0}};
    const int want_nd[4] = {2, 2, 4, 2};
    for (int d = 0; d < 6; d++) {
        for (int k = 0; k < 4; k++) {
            tg_tensor *x = make(ALL[d], 2, (int64_t[]){2, 3}, k);
            tg_tensor *y = tg_tile(x, n_reps[k], reps[k]);
            CHECK(y && tg_dtype_of(y) == ALL[d] && tg_ndim(y) == want_nd[k]);
            if (!y)
                continue;
            for (int i = 0; i < want_nd[k]; i++)
                CHECK(tg_shape(y)[i] == want[k][i]);
            CHECK(check_tile(x, y) == 0);
            tg_tensor *xt = tg_transpose(tg_contiguous(tg_transpose(x, 0, 1)), 0, 1);
            CHECK(!tg_is_contiguous(xt));
            y = tg_tile(xt, n_reps[k], reps[k]);
            CHECK(y && check_tile(x, y) == 0);
        }
    }
    tg_tensor *x = tt_tensor(TG_INT32, 1, (int64_t[]){2}, (double[]){1, 2});
    CHECK_TENSOR(tg_tile(x, 2, (int64_t[]){2, 2}), ((double[]){1, 2, 1, 2, 1, 2, 1, 2}), 0);
    tg_tensor *y = tg_tile(tg_scalar(TG_FLOAT64, 5), 1, (int64_t[]){3});
    CHECK_SHAPE(y, 3);
    CHECK_TENSOR(y, ((double[]){5, 5, 5}), 0);
    y = tg_tile(x, 0, NULL);
    CHECK(y && !tg_shares_storage(x, y));
    CHECK_TENSOR(y, ((double[]){1, 2}), 0);
}

typedef struct tile_user {
    int n;
    const int64_t *reps;
} tile_user;

static tg_tensor *f_tile(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const tile_user *u = user;
    return tg_sin(tg_tile(in[0], u->n, u->reps));
}

static void test_tile_grad(void)
{
    tg_tensor *x = tt_rand(2, (int64_t[]){2, 3}, -1, 1);
    tile_user u = {2, (const int64_t[]){2, 3}};
    CHECK_GRADCHECK(f_tile, &u, 1, &x);
    u = (tile_user){1, (const int64_t[]){2}};
    CHECK_GRADCHECK(f_tile, &u, 1, &x);
    u = (tile_user){3, (const int64_t[]){2, 1, 3}};
    CHECK_GRADCHECK(f_tile, &u, 1, &x);
    u = (tile_user){2, (const int64_t[]){1, 1}};
    CHECK_GRADCHECK(f_tile, &u, 1, &x);
    /* five repeated axes do not fit one [r, d, ...] reshape (8 dims) */
    tg_tensor *x5 = tt_rand(5, (int64_t[]){1, 2, 1, 2, 1}, -1, 1);
    u = (tile_user){5, (const int64_t[]){2, 2, 2, 2, 1}};
    CHECK_GRADCHECK(f_tile, &u, 1, &x5);
}

static void test_tile_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_ERROR(tg_tile(x, 2, (int64_t[]){2, -1}), TG_ERR_ARG, "negative");
    CHECK_ERROR(tg_tile(x, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}), TG_ERR_SHAPE,
                "9 dims");
    CHECK_ERROR(tg_tile(x, 2, NULL), TG_ERR_ARG, "reps");
}

/* ---- embedding ----------------------------------------------------------------------- */
static void test_embedding_forward(void)
{
    const tg_dtype wdt[3] = {TG_FLOAT32, TG_FLOAT64, TG_INT64};
    for (int d = 0; d < 3; d++) {
        tg_tensor *w = make(wdt[d], 2, (int64_t[]){5, 3}, d);
        tg_tensor *i = ints(d % 2 ? TG_INT32 : TG_INT64, 2, (int64_t[]){2, 3},
                            (double[]){4, 0, 4, 2, 2, 1});
        tg_tensor *y = tg_embedding(strided(w), strided(i));
        CHECK(y && tg_dtype_of(y) == wdt[d]);
        CHECK_SHAPE(y, 2, 3, 3);
        int bad = 0;
        int64_t yi[3];
        for (int64_t f = 0; f < tg_numel(y) && !bad; f++) {
            unravel(f, 3, tg_shape(y), yi);
            int64_t row = (int64_t)tg_get(i, yi);
            double want = tg_get(w, (int64_t[]){row, yi[2]}), got = tg_get(y, yi);
            if (got != want)
                bad = mismatch("embedding", y, f, got, want);
        }
        CHECK(bad == 0);
    }
    tg_tensor *w = tt_tensor(TG_FLOAT32, 2, (int64_t[]){3, 2}, (double[]){0, 1, 2, 3, 4, 5});
    tg_tensor *y = tg_embedding(w, tg_scalar(TG_INT64, 2));
    CHECK_SHAPE(y, 2);
    CHECK_TENSOR(y, ((double[]){4, 5}), 0);
    y = tg_embedding(w, tg_zeros(TG_INT32, 2, (int64_t[]){0, 4}));
    CHECK_SHAPE(y, 0, 4, 2);
}

static tg_tensor *f_embedding(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const idx_user *u = user;
    tg_tensor *y = tg_embedding(in[0], u->index);
    return tg_mul(y, y);
}

static void test_embedding_grad(void)
{
    tg_tensor *w = tt_rand(2, (int64_t[]){4, 3}, -1, 1);
    idx_user u = {0, ints(TG_INT64, 2, (int64_t[]){2, 3}, (double[]){1, 3, 1, 1, 0, 3})};
    CHECK_GRADCHECK(f_embedding, &u, 1, &w);
    u.index = ints(TG_INT32, 1, (int64_t[]){4}, (double[]){2, 2, 2, 0});
    CHECK_GRADCHECK(f_embedding, &u, 1, &w);
    /* repeated rows accumulate */
    tg_tensor *v = tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 2});
    tg_set_requires_grad(v, true);
    tg_tensor *y = tg_embedding(v, ints(TG_INT32, 2, (int64_t[]){2, 2}, (double[]){2, 0, 2, 2}));
    CHECK_OK(tg_backward(tg_sum(y, 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(v), ((double[]){1, 1, 0, 0, 3, 3}), 0);
}

static void test_embedding_errors(void)
{
    tg_tensor *w = tg_zeros(TG_FLOAT32, 2, (int64_t[]){5, 3});
    CHECK_ERROR(tg_embedding(w, ints(TG_INT64, 1, (int64_t[]){2}, (double[]){1, 5})),
                TG_ERR_INDEX, "embedding: index 5");
    CHECK_ERROR(tg_embedding(w, ints(TG_INT64, 1, (int64_t[]){2}, (double[]){1, 5})),
                TG_ERR_INDEX, "size 5");
    CHECK_ERROR(tg_embedding(w, ints(TG_INT32, 1, (int64_t[]){1}, (double[]){-1})),
                TG_ERR_INDEX, "index -1");
    CHECK_ERROR(tg_embedding(tg_zeros(TG_FLOAT32, 1, (int64_t[]){5}),
                             tg_zeros(TG_INT64, 1, (int64_t[]){1})),
                TG_ERR_SHAPE, "2-D");
    CHECK_ERROR(tg_embedding(w, tg_zeros(TG_FLOAT32, 1, (int64_t[]){1})), TG_ERR_DTYPE,
                "int32 or int64");
}

/* ---- registry ------------------------------------------------------------------------- */
static void test_registry(void)
{
    const char *names[] = {"concat", "pad", "tile", "one_hot", "gather", "scatter_add",
                           "index_select", "index_add", "embedding"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        CHECK(tg_op_find(names[i]) != NULL);
}

int main(void)
{
    RUN(test_concat_forward);
    RUN(test_concat_promotes);
    RUN(test_concat_many);
    RUN(test_concat_errors);
    RUN(test_concat_grad);
    RUN(test_stack_forward);
    RUN(test_stack_errors);
    RUN(test_stack_grad);
    RUN(test_split_forward);
    RUN(test_split_owned);
    RUN(test_split_grad);
    RUN(test_split_errors);
    RUN(test_gather_forward);
    RUN(test_gather_parallel);
    RUN(test_gather_errors);
    RUN(test_gather_grad);
    RUN(test_scatter_add);
    RUN(test_gather_grad_of_grad);
    RUN(test_index_select_forward);
    RUN(test_index_select_grad);
    RUN(test_index_add);
    RUN(test_index_select_errors);
    RUN(test_pad_forward);
    RUN(test_pad_grad);
    RUN(test_pad_errors);
    RUN(test_one_hot);
    RUN(test_tile_forward);
    RUN(test_tile_grad);
    RUN(test_tile_errors);
    RUN(test_embedding_forward);
    RUN(test_embedding_grad);
    RUN(test_embedding_errors);
    RUN(test_registry);
    return tt_finish();
}
