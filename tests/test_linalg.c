/* Linear algebra: the GEMM kernels (CBLAS/built-in, every transpose,
 * alpha/beta, block edges, the parallel split), matmul against naive
 * loops (1-D, batched with broadcast, strided, every dtype), gemm and
 * linear options, gradients (incl. grad of grad) and error paths. */
#include "harness.h"
#include "kernels/cpu/gemm.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

static tg_generator *rng;

static tg_tensor *rnd(tg_dtype dt, int ndim, const int64_t *shape)
{
    if (!rng)
        rng = tg_generator_new(42);
    if (tg_dtype_is_float(dt))
        return tg_rand_uniform(rng, dt, ndim, shape, -1, 1);
    /* small integers: products stay exact (uint8 sums stay below 256) */
    tg_tensor *f = tg_rand_uniform(rng, TG_FLOAT64, ndim, shape,
                                   dt == TG_UINT8 ? 0 : -4, dt == TG_UINT8 ? 3 : 5);
    return tg_cast(tg_floor(f), dt);
}

static double *values(const tg_tensor *t)
{
    double *v = malloc((size_t)(tg_numel(t) ? tg_numel(t) : 1) * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    return v;
}

/* numpy matmul in doubles: expected values of a @ b (C order) */
static double *ref_matmul(const tg_tensor *a, const tg_tensor *b)
{
    int na = tg_ndim(a), nb = tg_ndim(b);
    const int64_t *sa = tg_shape(a), *sb = tg_shape(b);
    int64_t m = na == 1 ? 1 : sa[na - 2], k = sa[na - 1];
    int64_t n = nb == 1 ? 1 : sb[nb - 1];
    int ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0;
    int nbt = ba > bb ? ba : bb;
    int64_t bshape[TG_MAX_DIMS], batch = 1;
    for (int d = 0; d < nbt; d++) {
        int64_t da = d < nbt - ba ? 1 : sa[d - (nbt - ba)];
        int64_t db = d < nbt - bb ? 1 : sb[d - (nbt - bb)];
        bshape[d] = da > db ? da : db;
        batch *= bshape[d];
    }
    double *av = values(a), *bv = values(b);
    double *out = calloc((size_t)(batch * m * n + 1), sizeof *out);
    for (int64_t bi = 0; bi < batch; bi++) {
        /* C-order offsets of this batch's matrices in a and b */
        int64_t oa = 0, ob = 0, ma = 1, mb = 1, rem = bi;
        int64_t idx[TG_MAX_DIMS];
        for (int d = nbt - 1; d >= 0; d--) {
            idx[d] = rem % bshape[d];
            rem /= bshape[d];
        }
        for (int d = nbt - 1; d >= 0; d--) {
            int xa = d - (nbt - ba), xb = d - (nbt - bb);
            if (xa >= 0) {
                oa += (sa[xa] == 1 ? 0 : idx[d]) * ma;
                ma *= sa[xa];
            }
            if (xb >= 0) {
                ob += (sb[xb] == 1 ? 0 : idx[d]) * mb;
                mb *= sb[xb];
            }
        }
        const double *pa = av + oa * m * k, *pb = bv + ob * k * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += pa[i * k + p] * pb[p * n + j];
                out[(bi * m + i) * n + j] = s;
            }
    }
    free(av);
    free(bv);
    return out;
}

/* a @ b against the reference, with the expected shape */
static void check_matmul(tg_tensor *a, tg_tensor *b, int ndim,
                         const int64_t *shape, double tol)
{
    tg_tensor *y = tg_matmul(a, b);
    CHECK(y != NULL);
    if (!y)
        return;
    tt_check_shape(y, shape, ndim, "matmul", __FILE__, __LINE__);
    CHECK(tg_dtype_of(y) == tg_promote_types(tg_dtype_of(a), tg_dtype_of(b)));
    double *e = ref_matmul(a, b);
    CHECK_TENSOR(y, e, tol);
    free(e);
}

static double tol_of(tg_dtype dt) { return dt == TG_FLOAT32 ? 1e-4 : dt == TG_FLOAT64 ? 1e-10 : 0; }

/* ---- kernels ---------------------------------------------------------------- */
typedef tg_status (*dgemm_fn)(bool, bool, int64_t, int64_t, int64_t, double,
                              const double *, int64_t, const double *, int64_t,
                              double, double *, int64_t);

/* one GEMM through fn against a naive loop; lda etc. padded by `pad` */
static void check_dgemm_kernel(dgemm_fn fn, bool ta, bool tb, int64_t m,
                               int64_t n, int64_t k, double alpha, double beta,
                               int64_t pad)
{
    int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    int64_t ra = ta ? k : m, rb = tb ? n : k;
    double *a = malloc((size_t)(ra * lda + 1) * sizeof *a);
    double *b = malloc((size_t)(rb * ldb + 1) * sizeof *b);
    double *c = malloc((size_t)(m * ldc + 1) * sizeof *c);
    double *e = malloc((size_t)(m * ldc + 1) * sizeof *e);
    for (int64_t i = 0; i < ra * lda; i++)
        a[i] = (double)((i * 37) % 19) / 7.0 - 1.2;
    for (int64_t i = 0; i < rb * ldb; i++)
        b[i] = (double)((i * 53) % 23) / 9.0 - 1.1;
    for (int64_t i = 0; i < m * ldc; i++)
        c[i] = e[i] = (double)((i * 11) % 5) - 2.0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++)
                s += (ta ? a[p * lda + i] : a[i * lda + p]) *
                     (tb ? b[j * ldb + p] : b[p * ldb + j]);
            e[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * e[i * ldc + j]);
        }
    CHECK_OK(fn(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
    double worst = 0;
    for (int64_t i = 0; i < m * ldc; i++) /* padding must stay untouched */
        worst = fmax(worst, fabs(c[i] - e[i]));
    CHECK_NEAR(worst, 0, 1e-9 * (double)(k + 1));
    free(a);
    free(b);
    free(c);
    free(e);
}

static void test_gemm_kernels(void)
{
    static const int64_t sizes[][3] = {
        {1, 1, 1}, {5, 7, 3}, {6, 16, 8}, {13, 33, 17}, {100, 20, 270},
        {97, 5, 260}, {3, 200, 40}, {0, 4, 4}, {4, 4, 0}};
    dgemm_fn fns[3] = {tg__gemm_builtin_f64, tg__gemm_blas_f64, tg__dgemm};
    for (int f = 0; f < 3; f++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int t = 0; t < 4; t++)
                check_dgemm_kernel(fns[f], t & 1, t & 2, sizes[s][0], sizes[s][1],
                                   sizes[s][2], t == 3 ? -0.5 : 1.0,
                                   t == 0 ? 0.0 : t == 1 ? 1.0 : 2.5, s % 3);
    /* big enough to be split over the pool, by rows and by columns */
    check_dgemm_kernel(tg__dgemm, false, true, 210, 160, 130, 1.0, 0.0, 1);
    check_dgemm_kernel(tg__dgemm, true, false, 16, 700, 400, 0.5, 1.0, 0);
}

static void test_sgemm_kernel_and_nan(void)
{
    /* float32 built-in and library kernels; beta == 0 ignores NaN in C */
    int64_t m = 37, n = 45, k = 29;
    float *a = malloc(sizeof(float) * (size_t)(m * k));
    float *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n));
    for (int64_t i = 0; i < m * k; i++)
        a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (int64_t i = 0; i < k * n; i++)
        b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    for (int impl = 0; impl < 2; impl++) {
        for (int64_t i = 0; i < m * n; i++)
            c[i] = NAN;
        if (impl == 0)
            CHECK_OK(tg__gemm_builtin_f32(false, false, m, n, k, 2.0f, a, k, b, n,
                                          0.0f, c, n));
        else
            CHECK_OK(tg__sgemm(false, false, m, n, k, 2.0f, a, k, b, n, 0.0f, c, n));
        double worst = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += (double)a[i * k + p] * b[p * n + j];
                worst = fmax(worst, fabs(2 * s - c[i * n + j]));
                if (isnan(c[i * n + j]))
                    worst = INFINITY;
            }
        CHECK_NEAR(worst, 0, 1e-4);
    }
    free(a);
    free(b);
    free(c);
    const char *be = tg__gemm_backend();
    CHECK(be && be[0]);
}

static void test_int_kernel_wraps(void)
{
    int32_t a[2] = {INT32_MAX, 2}, b[2] = {2, 3}, c[1];
    tg__gemm_i32(1, 1, 2, a, 2, 1, b, 1, 1, c, 1);
    CHECK(c[0] == (int32_t)((uint32_t)INT32_MAX * 2u + 6u));
}

/* ---- matmul forward -------------------------------------------------------- */
static void test_matmul_2d(void)
{
    tg_dtype dts[5] = {TG_FLOAT32, TG_FLOAT64, TG_INT32, TG_INT64, TG_UINT8};
    for (int d = 0; d < 5; d++) {
        tg_dtype dt = dts[d];
        check_matmul(rnd(dt, 2, (int64_t[]){3, 4}), rnd(dt, 2, (int64_t[]){4, 5}), 2,
                     (int64_t[]){3, 5}, tol_of(dt));
        check_matmul(rnd(dt, 2, (int64_t[]){1, 7}), rnd(dt, 2, (int64_t[]){7, 1}), 2,
                     (int64_t[]){1, 1}, tol_of(dt));
        check_matmul(rnd(dt, 2, (int64_t[]){17, 33}), rnd(dt, 2, (int64_t[]){33, 9}), 2,
                     (int64_t[]){17, 9}, tol_of(dt));
    }
    /* hand-computed */
    double av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {7, 8, 9, 10, 11, 12};
    double ev[4] = {58, 64, 139, 154};
    tg_tensor *a = tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 3}, av);
    tg_tensor *b = tt_tensor(TG_FLOAT32, 2, (int64_t[]){3, 2}, bv);
    CHECK_TENSOR(tg_matmul(a, b), ev, 1e-5);
    CHECK_TENSOR(tg_matmul(tg_cast(a, TG_INT32), tg_cast(b, TG_INT32)), ev, 0);
}

static void test_matmul_sizes(void)
{
    /* large enough for the packed kernel's block edges and the pool */
    check_matmul(rnd(TG_FLOAT32, 2, (int64_t[]){210, 160}),
                 rnd(TG_FLOAT32, 2, (int64_t[]){160, 130}), 2, (int64_t[]){210, 130}, 2e-4);
    check_matmul(rnd(TG_FLOAT64, 2, (int64_t[]){8, 40}),
                 rnd(TG_FLOAT64, 2, (int64_t[]){40, 2100}), 2, (int64_t[]){8, 2100}, 1e-10);
    /* empty dims */
    check_matmul(rnd(TG_FLOAT32, 2, (int64_t[]){0, 3}), rnd(TG_FLOAT32, 2, (int64_t[]){3, 4}),
                 2, (int64_t[]){0, 4}, 0);
    check_matmul(rnd(TG_FLOAT32, 2, (int64_t[]){2, 0}), rnd(TG_FLOAT32, 2, (int64_t[]){0, 4}),
                 2, (int64_t[]){2, 4}, 0);
    check_matmul(rnd(TG_INT32, 2, (int64_t[]){2, 0}), rnd(TG_INT32, 2, (int64_t[]){0, 4}),
                 2, (int64_t[]){2, 4}, 0);
}

static void test_matmul_1d(void)
{
    tg_dtype dts[3] = {TG_FLOAT32, TG_FLOAT64, TG_INT64};
    for (int d = 0; d < 3; d++) {
        tg_dtype dt = dts[d];
        double tol = tol_of(dt);
        tg_tensor *v = rnd(dt, 1, (int64_t[]){4}), *w = rnd(dt, 1, (int64_t[]){4});
        check_matmul(v, w, 0, NULL, tol);
        check_matmul(v, rnd(dt, 2, (int64_t[]){4, 3}), 1, (int64_t[]){3}, tol);
        check_matmul(rnd(dt, 2, (int64_t[]){5, 4}), w, 1, (int64_t[]){5}, tol);
        check_matmul(v, rnd(dt, 3, (int64_t[]){2, 4, 3}), 2, (int64_t[]){2, 3}, tol);
        check_matmul(rnd(dt, 3, (int64_t[]){2, 5, 4}), w, 2, (int64_t[]){2, 5}, tol);
        check_matmul(rnd(dt, 4, (int64_t[]){2, 3, 5, 4}), w, 3, (int64_t[]){2, 3, 5}, tol);
    }
}

static void test_matmul_batched(void)
{
    tg_dtype dts[3] = {TG_FLOAT32, TG_FLOAT64, TG_INT32};
    for (int d = 0; d < 3; d++) {
        tg_dtype dt = dts[d];
        double tol = tol_of(dt);
        check_matmul(rnd(dt, 3, (int64_t[]){3, 2, 4}), rnd(dt, 3, (int64_t[]){3, 4, 5}), 3,
                     (int64_t[]){3, 2, 5}, tol);
        check_matmul(rnd(dt, 4, (int64_t[]){2, 1, 3, 4}), rnd(dt, 3, (int64_t[]){5, 4, 2}),
                     4, (int64_t[]){2, 5, 3, 2}, tol);
        check_matmul(rnd(dt, 2, (int64_t[]){3, 4}), rnd(dt, 3, (int64_t[]){2, 4, 5}), 3,
                     (int64_t[]){2, 3, 5}, tol);
        /* b shared by every batch: folded into one GEMM for floats */
        check_matmul(rnd(dt, 3, (int64_t[]){6, 3, 4}), rnd(dt, 2, (int64_t[]){4, 5}), 3,
                     (int64_t[]){6, 3, 5}, tol);
        check_matmul(rnd(dt, 4, (int64_t[]){2, 3, 1, 4}), rnd(dt, 3, (int64_t[]){1, 4, 5}),
                     4, (int64_t[]){2, 3, 1, 5}, tol);
    }
    /* many matrices: split over the pool by batch (small ones stay serial) */
    check_matmul(rnd(TG_FLOAT64, 3, (int64_t[]){300, 9, 20}),
                 rnd(TG_FLOAT64, 3, (int64_t[]){300, 20, 11}), 3,
                 (int64_t[]){300, 9, 11}, 1e-10);
    check_matmul(rnd(TG_FLOAT32, 3, (int64_t[]){64, 64, 64}),
                 tg_transpose(rnd(TG_FLOAT32, 3, (int64_t[]){64, 64, 64}), 1, 2), 3,
                 (int64_t[]){64, 64, 64}, 1e-4);
}

static void test_matmul_strided(void)
{
    tg_dtype dts[3] = {TG_FLOAT32, TG_FLOAT64, TG_INT32};
    for (int d = 0; d < 3; d++) {
        tg_dtype dt = dts[d];
        double tol = tol_of(dt);
        /* transposed views (BLAS reads them in place) */
        tg_tensor *at = tg_transpose(rnd(dt, 2, (int64_t[]){4, 3}), 0, 1);
        tg_tensor *bt = tg_transpose(rnd(dt, 2, (int64_t[]){5, 4}), 0, 1);
        check_matmul(at, bt, 2, (int64_t[]){3, 5}, tol);
        check_matmul(rnd(dt, 2, (int64_t[]){3, 4}), bt, 2, (int64_t[]){3, 5}, tol);
        /* every other column / row: copied or read with ld */
        tg_tensor *as = tg_slice(rnd(dt, 2, (int64_t[]){3, 8}), 1, 0, 8, 2);
        tg_tensor *bs = tg_slice(rnd(dt, 2, (int64_t[]){8, 5}), 0, 0, 8, 2);
        check_matmul(as, bs, 2, (int64_t[]){3, 5}, tol);
        tg_tensor *bc = tg_slice(rnd(dt, 2, (int64_t[]){4, 10}), 1, 1, 10, 2);
        check_matmul(rnd(dt, 2, (int64_t[]){3, 4}), bc, 2, (int64_t[]){3, 5}, tol);
        /* expanded (stride 0) operands */
        tg_tensor *row = rnd(dt, 2, (int64_t[]){1, 4});
        tg_tensor *ex = tg_expand(row, 2, (int64_t[]){3, 4});
        check_matmul(ex, rnd(dt, 2, (int64_t[]){4, 2}), 2, (int64_t[]){3, 2}, tol);
        tg_tensor *eb = tg_expand(rnd(dt, 3, (int64_t[]){1, 4, 2}), 3, (int64_t[]){3, 4, 2});
        check_matmul(rnd(dt, 3, (int64_t[]){3, 2, 4}), eb, 3, (int64_t[]){3, 2, 2}, tol);
        /* batched transposes and strided 1-D operands */
        tg_tensor *pt = tg_permute(rnd(dt, 3, (int64_t[]){4, 2, 3}), (int[]){1, 2, 0});
        check_matmul(pt, rnd(dt, 2, (int64_t[]){4, 2}), 3, (int64_t[]){2, 3, 2}, tol);
        tg_tensor *vs = tg_slice(rnd(dt, 1, (int64_t[]){8}), 0, 0, 8, 2);
        check_matmul(vs, rnd(dt, 2, (int64_t[]){4, 3}), 1, (int64_t[]){3}, tol);
        check_matmul(rnd(dt, 2, (int64_t[]){3, 4}), vs, 1, (int64_t[]){3}, tol);
        check_matmul(vs, vs, 0, NULL, tol);
    }
}

/* x @ w and a contiguous copy of x @ w: the same values, bit for bit */
static void check_same_as_contiguous(tg_tensor *x, tg_tensor *w)
{
    tg_tensor *y = tg_matmul(x, w), *yc = tg_matmul(tg_contiguous(x), w);
    CHECK(y && yc && tg_numel(y) == tg_numel(yc));
    if (!y || !yc)
        return;
    double *a = values(y), *b = values(yc);
    CHECK(memcmp(a, b, (size_t)tg_numel(y) * sizeof *a) == 0);
    free(a), free(b);
}

/* a's batch and row dims permuted (attention's [L, N, E] view of a
 * batch-first [N, L, E] input) with b shared: the rows multiplied in
 * memory order as one GEMM and put in place (linalg.c, gather_rows);
 * views that are not a permutation of whole rows take a GEMM per batch */
static void test_matmul_rows_in_memory(void)
{
    tg_dtype dts[2] = {TG_FLOAT32, TG_FLOAT64};
    for (int d = 0; d < 2; d++) {
        tg_dtype dt = dts[d];
        double tol = tol_of(dt);
        tg_tensor *w = rnd(dt, 2, (int64_t[]){6, 7});
        tg_tensor *xt = tg_transpose(rnd(dt, 3, (int64_t[]){8, 5, 6}), 0, 1); /* [5, 8, 6] */
        check_matmul(xt, w, 3, (int64_t[]){5, 8, 7}, tol);
        check_same_as_contiguous(xt, w);
        /* two batch dims, all three dims permuted; b with a batch dim of 1 */
        tg_tensor *x4 = tg_permute(rnd(dt, 4, (int64_t[]){2, 3, 4, 6}), (int[]){1, 2, 0, 3});
        check_matmul(x4, w, 4, (int64_t[]){3, 4, 2, 7}, tol);
        check_same_as_contiguous(x4, w);
        tg_tensor *w3 = rnd(dt, 3, (int64_t[]){1, 6, 7});
        check_matmul(x4, w3, 4, (int64_t[]){3, 4, 2, 7}, tol);
        /* every other input row: not whole rows of one matrix */
        tg_tensor *gaps = tg_transpose(tg_slice(rnd(dt, 3, (int64_t[]){8, 10, 6}), 1, 0, 10, 2),
                                       0, 1);
        check_matmul(gaps, w, 3, (int64_t[]){5, 8, 7}, tol);
        /* a row dim broadcast (stride 0): rows repeat, no one matrix */
        tg_tensor *rep = tg_expand(rnd(dt, 3, (int64_t[]){1, 4, 6}), 3, (int64_t[]){3, 4, 6});
        check_matmul(tg_transpose(rep, 0, 1), w, 3, (int64_t[]){4, 3, 7}, tol);
        /* b not shared: a GEMM per batch */
        check_matmul(xt, rnd(dt, 3, (int64_t[]){5, 6, 7}), 3, (int64_t[]){5, 8, 7}, tol);
    }
}

static void test_matmul_mixed_dtypes(void)
{
    tg_tensor *a = rnd(TG_INT32, 2, (int64_t[]){2, 3});
    tg_tensor *b = rnd(TG_FLOAT32, 2, (int64_t[]){3, 2});
    check_matmul(a, b, 2, (int64_t[]){2, 2}, 1e-5);
    check_matmul(b, rnd(TG_FLOAT64, 2, (int64_t[]){2, 4}), 2, (int64_t[]){3, 4}, 1e-6);
    check_matmul(rnd(TG_UINT8, 2, (int64_t[]){2, 3}), rnd(TG_INT64, 2, (int64_t[]){3, 2}),
                 2, (int64_t[]){2, 2}, 0);
}

/* ---- gemm and linear forward ------------------------------------------------- */
static void check_gemm(tg_dtype dt, bool ta, bool tb, int cmode, double alpha,
                       double beta)
{
    int64_t m = 4, n = 3, k = 5;
    tg_tensor *a = rnd(dt, 2, ta ? (int64_t[]){k, m} : (int64_t[]){m, k});
    tg_tensor *b = rnd(dt, 2, tb ? (int64_t[]){n, k} : (int64_t[]){k, n});
    static const int64_t cshapes[5][2] = {{4, 3}, {3, 0}, {1, 3}, {4, 1}, {0, 0}};
    static const int cnd[5] = {2, 1, 2, 2, 0};
    tg_tensor *c = cmode < 0 ? NULL : rnd(dt, cnd[cmode], cshapes[cmode]);
    tg_tensor *y = tg_gemm(a, b, c, alpha, beta, ta, tb);
    CHECK_SHAPE(y, 4, 3);
    tg_tensor *opa = ta ? tg_transpose(a, 0, 1) : a, *opb = tb ? tg_transpose(b, 0, 1) : b;
    double *p = ref_matmul(opa, opb), *cv = c ? values(tg_expand(c, 2, (int64_t[]){4, 3})) : NULL;
    for (int i = 0; i < 12; i++)
        p[i] = alpha * p[i] + (c ? beta * cv[i] : 0);
    CHECK_TENSOR(y, p, tol_of(dt));
    free(p);
    free(cv);
}

static void test_gemm_options(void)
{
    for (int d = 0; d < 2; d++)
        for (int t = 0; t < 4; t++)
            for (int cm = -1; cm < 5; cm++)
                check_gemm(d ? TG_FLOAT64 : TG_FLOAT32, t & 1, t & 2, cm,
                           cm == 1 ? -2.0 : 1.0, cm == 2 ? 0.5 : cm == 3 ? 0.0 : 1.0);
    /* beta 0: c is not read (NaN does not propagate) */
    tg_tensor *a = rnd(TG_FLOAT32, 2, (int64_t[]){2, 2});
    tg_tensor *c = tg_full(TG_FLOAT32, 2, (int64_t[]){2, 2}, NAN);
    tg_tensor *y = tg_gemm(a, a, c, 1.0, 0.0, false, false);
    double *e = ref_matmul(a, a);
    CHECK_TENSOR(y, e, 1e-6);
    free(e);
    /* a transposed view with trans_a: the flags cancel */
    tg_tensor *base = rnd(TG_FLOAT64, 2, (int64_t[]){3, 4});
    tg_tensor *b = rnd(TG_FLOAT64, 2, (int64_t[]){4, 2});
    y = tg_gemm(tg_transpose(base, 0, 1), b, NULL, 1.0, 0.0, true, false);
    e = ref_matmul(base, b);
    CHECK_TENSOR(y, e, 1e-12);
    free(e);
}

static void test_linear(void)
{
    tg_dtype dts[2] = {TG_FLOAT32, TG_FLOAT64};
    for (int d = 0; d < 2; d++) {
        tg_dtype dt = dts[d];
        tg_tensor *w = rnd(dt, 2, (int64_t[]){3, 5}), *b = rnd(dt, 1, (int64_t[]){3});
        tg_tensor *xs[3] = {rnd(dt, 2, (int64_t[]){4, 5}), rnd(dt, 3, (int64_t[]){2, 3, 5}),
                            rnd(dt, 1, (int64_t[]){5})};
        for (int i = 0; i < 3; i++) {
            for (int with_b = 0; with_b < 2; with_b++) {
                tg_tensor *y = tg_linear(xs[i], w, with_b ? b : NULL);
                tg_tensor *r = tg_matmul(xs[i], tg_transpose(w, 0, 1));
                if (with_b)
                    r = tg_add(r, b);
                CHECK(y && r && tg_ndim(y) == tg_ndim(r));
                double *e = values(r);
                CHECK_TENSOR(y, e, tol_of(dt));
                free(e);
            }
        }
    }
}

/* ---- gradients ---------------------------------------------------------------- */
static tg_tensor *f_matmul(int n, tg_tensor *const *in, void *user)
{
    (void)n, (void)user;
    return tg_matmul(in[0], in[1]);
}

static void gc_matmul(int na, const int64_t *sa, int nb, const int64_t *sb)
{
    tg_tensor *in[2] = {tt_rand(na, sa, -1, 1), tt_rand(nb, sb, -1, 1)};
    CHECK_GRADCHECK(f_matmul, NULL, 2, in);
}

static void test_matmul_grad(void)
{
    gc_matmul(2, (int64_t[]){3, 4}, 2, (int64_t[]){4, 2});
    gc_matmul(1, (int64_t[]){4}, 1, (int64_t[]){4});
    gc_matmul(1, (int64_t[]){4}, 2, (int64_t[]){4, 3});
    gc_matmul(2, (int64_t[]){3, 4}, 1, (int64_t[]){4});
    gc_matmul(1, (int64_t[]){3}, 3, (int64_t[]){2, 3, 2});
    gc_matmul(3, (int64_t[]){2, 2, 3}, 1, (int64_t[]){3});
    gc_matmul(3, (int64_t[]){2, 2, 3}, 2, (int64_t[]){3, 2});
    gc_matmul(2, (int64_t[]){2, 3}, 3, (int64_t[]){2, 3, 2});
    gc_matmul(4, (int64_t[]){2, 1, 2, 3}, 3, (int64_t[]){3, 3, 2});
    gc_matmul(3, (int64_t[]){1, 2, 3}, 3, (int64_t[]){2, 3, 2});
    /* transposed inputs */
    tg_tensor *a = tg_transpose(tt_rand(2, (int64_t[]){4, 3}, -1, 1), 0, 1);
    tg_tensor *in[2] = {tg_detach(a), tt_rand(2, (int64_t[]){4, 2}, -1, 1)};
    tg_set_requires_grad(in[0], true);
    CHECK_GRADCHECK(f_matmul, NULL, 2, in);
    /* only one input requires grad */
    tg_tensor *in2[2] = {tt_rand(2, (int64_t[]){2, 3}, -1, 1),
                         tg_detach(tt_rand(2, (int64_t[]){3, 2}, -1, 1))};
    CHECK_GRADCHECK(f_matmul, NULL, 2, in2);
}

typedef struct gemm_opts {
    double alpha, beta;
    bool ta, tb;
} gemm_opts;

static tg_tensor *f_gemm(int n, tg_tensor *const *in, void *user)
{
    const gemm_opts *o = user;
    return tg_gemm(in[0], in[1], n > 2 ? in[2] : NULL, o->alpha, o->beta, o->ta, o->tb);
}

static void test_gemm_grad(void)
{
    int64_t m = 3, n = 2, k = 4;
    static const int64_t cs[3][2] = {{3, 2}, {2, 0}, {3, 1}};
    static const int cnd[3] = {2, 1, 2};
    for (int t = 0; t < 4; t++) {
        gemm_opts o = {t == 2 ? -1.5 : 0.7, t == 1 ? 2.0 : 1.0, t & 1, t & 2};
        for (int cm = -1; cm < 3; cm++) {
            tg_tensor *in[3] = {
                tt_rand(2, o.ta ? (int64_t[]){k, m} : (int64_t[]){m, k}, -1, 1),
                tt_rand(2, o.tb ? (int64_t[]){n, k} : (int64_t[]){k, n}, -1, 1),
                cm < 0 ? NULL : tt_rand(cnd[cm], cs[cm], -1, 1)};
            CHECK_GRADCHECK(f_gemm, &o, cm < 0 ? 2 : 3, in);
        }
    }
}

static tg_tensor *f_linear(int n, tg_tensor *const *in, void *user)
{
    (void)user;
    return tg_linear(in[0], in[1], n > 2 ? in[2] : NULL);
}

static void test_linear_grad(void)
{
    tg_tensor *in[3] = {tt_rand(3, (int64_t[]){2, 3, 4}, -1, 1),
                        tt_rand(2, (int64_t[]){5, 4}, -1, 1),
                        tt_rand(1, (int64_t[]){5}, -1, 1)};
    CHECK_GRADCHECK(f_linear, NULL, 3, in);
    CHECK_GRADCHECK(f_linear, NULL, 2, in);
    /* a bias that broadcasts to the output, as PyTorch's addmm takes it */
    in[2] = tt_rand(2, (int64_t[]){3, 1}, -1, 1);
    CHECK_GRADCHECK(f_linear, NULL, 3, in);
    in[2] = tt_rand(0, NULL, -1, 1);
    CHECK_GRADCHECK(f_linear, NULL, 3, in);
    tg_tensor *in1[3] = {tt_rand(1, (int64_t[]){4}, -1, 1), in[1], in[2]};
    CHECK_GRADCHECK(f_linear, NULL, 3, in1);
    /* the weights' gradient through backward, against hand-derived sums */
    tg_tensor *x = tt_rand(2, (int64_t[]){3, 4}, -1, 1);
    tg_tensor *w = tt_rand(2, (int64_t[]){5, 4}, -1, 1);
    CHECK_OK(tg_backward(tg_sum(tg_linear(x, w, NULL), 0, NULL, false), NULL, false));
    double *xv = values(x), gw[20];
    for (int o = 0; o < 5; o++)
        for (int i = 0; i < 4; i++)
            gw[o * 4 + i] = xv[i] + xv[4 + i] + xv[8 + i];
    CHECK_TENSOR(tg_grad(w), gw, 1e-12);
    free(xv);
}

/* first derivative of sum(f(a, b)^2) w.r.t. a and b, made differentiable:
 * gradcheck of this function checks the second derivative against finite
 * differences of the first. f is matmul (user: int *which) or, through
 * f_linear_grad, linear (a gemm with trans_b) */
static tg_tensor *first_grad(int n, tg_tensor *const *in, int which, bool linear)
{
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *y = linear ? tg_linear(in[0], in[1], NULL) : tg_matmul(in[0], in[1]);
    tg_tensor *loss = tg_sum(tg_mul(y, y), 0, NULL, false);
    tg_tensor *g[2] = {NULL, NULL};
    tg_status s = tg_autograd_grad(1, &loss, NULL, n, in, g, true, true);
    /* results are owned by the caller: a published copy goes to the scope */
    tg_tensor *r = s == TG_OK ? tg_mul_scalar(g[which], 1.0) : NULL;
    tg_set_grad_enabled(was);
    tg_release(g[0]);
    tg_release(g[1]);
    return r;
}

static tg_tensor *f_matmul_grad(int n, tg_tensor *const *in, void *user)
{
    return first_grad(n, in, *(const int *)user, false);
}

static tg_tensor *f_linear_grad(int n, tg_tensor *const *in, void *user)
{
    return first_grad(n, in, *(const int *)user, true);
}

static void test_matmul_double_backward(void)
{
    for (int which = 0; which < 2; which++) {
        tg_tensor *in[2] = {tt_rand(2, (int64_t[]){2, 3}, -1, 1),
                            tt_rand(2, (int64_t[]){3, 2}, -1, 1)};
        CHECK_GRADCHECK(f_matmul_grad, &which, 2, in);
        tg_tensor *bin[2] = {tt_rand(3, (int64_t[]){2, 2, 3}, -1, 1),
                             tt_rand(1, (int64_t[]){3}, -1, 1)};
        CHECK_GRADCHECK(f_matmul_grad, &which, 2, bin);
        tg_tensor *lin[2] = {tt_rand(2, (int64_t[]){3, 2}, -1, 1),
                             tt_rand(2, (int64_t[]){4, 2}, -1, 1)};
        CHECK_GRADCHECK(f_linear_grad, &which, 2, lin);
    }
    /* by hand: a = [x] (1x1), b = [y]: L = (xy)^2, dL/dx = 2xy^2,
     * d2L/dx2 = 2y^2, d2L/dxdy = 4xy */
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){1, 1}, (double[]){3});
    tg_tensor *y = tt_tensor(TG_FLOAT64, 2, (int64_t[]){1, 1}, (double[]){2});
    tg_set_requires_grad(x, true);
    tg_set_requires_grad(y, true);
    tg_tensor *p = tg_matmul(x, y), *loss = tg_sum(tg_mul(p, p), 0, NULL, false);
    tg_tensor *gx = NULL, *in[2] = {x, y}, *gg[2] = {NULL, NULL};
    CHECK_OK(tg_autograd_grad(1, &loss, NULL, 1, &x, &gx, true, true));
    CHECK_NEAR(tg_item(gx), 2 * 3 * 4, 1e-12);
    CHECK_OK(tg_autograd_grad(1, &gx, NULL, 2, in, gg, false, false));
    CHECK_NEAR(tg_item(gg[0]), 2 * 4, 1e-12);
    CHECK_NEAR(tg_item(gg[1]), 4 * 3 * 2, 1e-12);
    tg_release(gx);
    tg_release(gg[0]);
    tg_release(gg[1]);
}

/* ---- errors --------------------------------------------------------------------- */
static void test_errors(void)
{
    tg_tensor *a = rnd(TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *b = rnd(TG_FLOAT32, 2, (int64_t[]){4, 5});
    CHECK_ERROR(tg_matmul(a, b), TG_ERR_SHAPE, "[2, 3] and [4, 5]");
    CHECK_ERROR(tg_matmul(a, rnd(TG_FLOAT32, 1, (int64_t[]){4})), TG_ERR_SHAPE,
                "cannot be multiplied");
    CHECK_ERROR(tg_matmul(rnd(TG_FLOAT32, 3, (int64_t[]){2, 2, 3}),
                          rnd(TG_FLOAT32, 3, (int64_t[]){3, 3, 2})),
                TG_ERR_SHAPE, "batch dims");
    CHECK_ERROR(tg_matmul(tg_scalar(TG_FLOAT32, 1), a), TG_ERR_SHAPE, "0-d");
    CHECK_ERROR(tg_matmul(tg_cast(a, TG_BOOL), a), TG_ERR_DTYPE, "bool");
    CHECK_ERROR(tg_matmul(NULL, a), TG_ERR_ARG, "NULL");
    tg_tensor *sq = rnd(TG_FLOAT32, 2, (int64_t[]){3, 3});
    CHECK_ERROR(tg_gemm(a, rnd(TG_FLOAT32, 1, (int64_t[]){3}), NULL, 1, 0, false, false),
                TG_ERR_SHAPE, "2-D");
    CHECK_ERROR(tg_gemm(a, a, NULL, 1, 0, false, false), TG_ERR_SHAPE,
                "op(a) of [2, 3] has 3 columns");
    CHECK_ERROR(tg_gemm(a, sq, NULL, 1, 0, true, false), TG_ERR_SHAPE, "[2, 3]^T");
    CHECK_ERROR(tg_gemm(a, sq, rnd(TG_FLOAT32, 2, (int64_t[]){3, 3}), 1, 1, false, false),
                TG_ERR_SHAPE, "does not broadcast");
    CHECK_ERROR(tg_gemm(tg_cast(a, TG_INT32), sq, NULL, 1, 0, false, false),
                TG_ERR_DTYPE, "int32");
    CHECK_ERROR(tg_linear(a, rnd(TG_FLOAT32, 1, (int64_t[]){3}), NULL), TG_ERR_SHAPE,
                "2-D");
    CHECK_ERROR(tg_linear(a, rnd(TG_FLOAT32, 2, (int64_t[]){4, 5}), NULL), TG_ERR_SHAPE,
                "in_features");
    CHECK_ERROR(tg_linear(a, rnd(TG_FLOAT32, 2, (int64_t[]){4, 3}),
                          rnd(TG_FLOAT32, 1, (int64_t[]){3})),
                TG_ERR_SHAPE, "bias [3] does not broadcast to the output [2, 4]");
    CHECK_ERROR(tg_linear(a, rnd(TG_FLOAT32, 2, (int64_t[]){4, 3}),
                          rnd(TG_FLOAT32, 3, (int64_t[]){2, 2, 4})),
                TG_ERR_SHAPE, "bias [2, 2, 4]");
    CHECK_ERROR(tg_linear(NULL, a, NULL), TG_ERR_ARG, "NULL");
    CHECK(tg_op_find("matmul") && tg_op_find("gemm"));
}

int main(void)
{
    RUN(test_gemm_kernels);
    RUN(test_sgemm_kernel_and_nan);
    RUN(test_int_kernel_wraps);
    RUN(test_matmul_2d);
    RUN(test_matmul_sizes);
    RUN(test_matmul_1d);
    RUN(test_matmul_batched);
    RUN(test_matmul_strided);
    RUN(test_matmul_rows_in_memory);
    RUN(test_matmul_mixed_dtypes);
    RUN(test_gemm_options);
    RUN(test_linear);
    RUN(test_matmul_grad);
    RUN(test_gemm_grad);
    RUN(test_linear_grad);
    RUN(test_matmul_double_backward);
    RUN(test_errors);
    tg_generator_free(rng);
    return tt_finish();
}
