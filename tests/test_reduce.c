/* Reductions: sum mean prod max min var std logsumexp argmax argmin sum_to,
 * forward against naive double loops (all axis sets, keepdim, dtypes and
 * strided layouts, large sizes for the threaded paths), gradients by
 * gradcheck, ties, zeros, NaN, empty axes and the error paths. */
#include "harness.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

typedef enum kind {
    K_SUM, K_MEAN, K_PROD, K_MAX, K_MIN, K_VAR, K_STD, K_LSE, K_ARGMAX, K_ARGMIN
} kind;
static const char *kind_name[] = {"sum", "mean", "prod", "max", "min",
                                  "var", "std", "logsumexp", "argmax", "argmin"};

typedef struct rcase {
    kind k;
    int n_axes; /* argmax/argmin: axes[0] is the axis */
    int axes[TG_MAX_DIMS];
    bool keepdim;
    int corr;
} rcase;

static tg_tensor *apply(const rcase *c, tg_tensor *x)
{
    const int *ax = c->axes;
    switch (c->k) {
    case K_SUM: return tg_sum(x, c->n_axes, ax, c->keepdim);
    case K_MEAN: return tg_mean(x, c->n_axes, ax, c->keepdim);
    case K_PROD: return tg_prod(x, c->n_axes, ax, c->keepdim);
    case K_MAX: return tg_max(x, c->n_axes, ax, c->keepdim);
    case K_MIN: return tg_min(x, c->n_axes, ax, c->keepdim);
    case K_VAR: return tg_var(x, c->n_axes, ax, c->corr, c->keepdim);
    case K_STD: return tg_std(x, c->n_axes, ax, c->corr, c->keepdim);
    case K_LSE: return tg_logsumexp(x, c->n_axes, ax, c->keepdim);
    case K_ARGMAX: return tg_argmax(x, ax[0], c->keepdim);
    case K_ARGMIN: return tg_argmin(x, ax[0], c->keepdim);
    }
    return NULL;
}

static tg_tensor *gc_fn(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return apply(user, in[0]);
}

static bool is_arg(kind k) { return k == K_ARGMAX || k == K_ARGMIN; }

static void case_mask(const rcase *c, int nd, bool *mask)
{
    memset(mask, 0, TG_MAX_DIMS * sizeof *mask);
    int n = is_arg(c->k) ? 1 : c->n_axes;
    for (int i = 0; i < nd; i++)
        mask[i] = n == 0;
    for (int i = 0; i < n; i++)
        mask[c->axes[i] < 0 ? c->axes[i] + (nd ? nd : 1) : c->axes[i]] = true;
}

/* ---- the naive reference ---------------------------------------------------------
 * out[o] for each output in C order, from every element of x */
static int64_t ref_reduce(const rcase *c, tg_tensor *x, double *out)
{
    int nd = tg_ndim(x);
    const int64_t *shape = tg_shape(x);
    bool mask[TG_MAX_DIMS];
    case_mask(c, nd, mask);
    int64_t ostride[TG_MAX_DIMS], n_out = 1;
    for (int i = nd - 1; i >= 0; i--) {
        ostride[i] = mask[i] ? 0 : n_out;
        n_out *= mask[i] ? 1 : shape[i];
    }
    double *a = calloc((size_t)n_out + 1, sizeof *a), *b = calloc((size_t)n_out + 1, sizeof *b);
    double *cnt = calloc((size_t)n_out + 1, sizeof *cnt);
    int64_t n = tg_numel(x);
    double *xv = malloc((size_t)(n + 1) * sizeof *xv); /* x's values in C order */
    tg_copy_to(x, TG_FLOAT64, xv);
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t e = 0; e < n; e++) {
            int64_t idx[TG_MAX_DIMS], rem = e, o = 0;
            for (int i = nd - 1; i >= 0; i--) {
                idx[i] = rem % shape[i];
                rem /= shape[i];
                o += idx[i] * ostride[i];
            }
            double v = xv[e];
            bool first = cnt[o] == 0;
            if (pass == 0) {
                cnt[o]++;
                switch (c->k) {
                case K_SUM: case K_MEAN: case K_VAR: case K_STD: a[o] += v; break;
                case K_PROD: a[o] = first ? v : a[o] * v; break;
                case K_MAX: case K_LSE: case K_MIN: { /* NaN wins */
                    bool better = c->k == K_MIN ? v < a[o] : v > a[o];
                    if (first || (!isnan(a[o]) && (better || isnan(v))))
                        a[o] = v;
                    break;
                }
                case K_ARGMAX: case K_ARGMIN: { /* the first extreme or NaN */
                    int ax = c->axes[0] < 0 ? c->axes[0] + (nd ? nd : 1) : c->axes[0];
                    bool better = c->k == K_ARGMAX ? v > b[o] : v < b[o];
                    if (first || (!isnan(b[o]) && (better || isnan(v)))) {
                        b[o] = v;
                        a[o] = nd ? (double)idx[ax] : 0;
                    }
                    break;
                }
                }
            } else if (c->k == K_VAR || c->k == K_STD) {
                double m = a[o] / cnt[o];
                b[o] += (v - m) * (v - m);
            } else if (c->k == K_LSE) {
                double m = isinf(a[o]) ? 0 : a[o];
                b[o] += exp(v - m);
            }
        }
    }
    for (int64_t o = 0; o < n_out; o++) {
        double dof = cnt[o] - c->corr > 0 ? cnt[o] - c->corr : 0;
        switch (c->k) {
        case K_MEAN: out[o] = a[o] / cnt[o]; break;
        case K_VAR: out[o] = b[o] / dof; break;
        case K_STD: out[o] = sqrt(b[o] / dof); break;
        case K_LSE: out[o] = cnt[o] ? log(b[o]) + (isinf(a[o]) ? 0 : a[o]) : -INFINITY; break;
        case K_SUM: case K_PROD: out[o] = cnt[o] ? a[o] : (c->k == K_PROD); break;
        default: out[o] = a[o];
        }
    }
    free(a);
    free(b);
    free(cnt);
    free(xv);
    return n_out;
}

static tg_dtype expected_dtype(kind k, tg_dtype dt)
{
    bool is_int = !tg_dtype_is_float(dt);
    if (is_arg(k) || (is_int && (k == K_SUM || k == K_PROD)))
        return TG_INT64;
    if (is_int && k == K_LSE)
        return TG_FLOAT32;
    return dt;
}

/* y = op(x) against the reference: shape, dtype and values */
static void check_against_ref(const rcase *c, tg_tensor *x, const char *layout,
                              int line)
{
    char what[200];
    snprintf(what, sizeof what, "%s(%s %s, axes %d:[%d,%d,%d] keepdim %d corr %d)",
             kind_name[c->k], tg_dtype_name(tg_dtype_of(x)), layout, c->n_axes,
             c->axes[0], c->axes[1], c->axes[2], c->keepdim, c->corr);
    tt_checks++;
    tg_tensor *y = apply(c, x);
    if (!y) {
        tt_fail(__FILE__, line, "%s failed: %s", what, tg_last_error());
        return;
    }
    int nd = tg_ndim(x), ny = 0;
    bool mask[TG_MAX_DIMS];
    case_mask(c, nd, mask);
    int64_t shape[TG_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        if (!mask[i] || c->keepdim)
            shape[ny++] = mask[i] ? 1 : tg_shape(x)[i];
    bool same = tg_ndim(y) == ny;
    for (int i = 0; same && i < ny; i++)
        same = tg_shape(y)[i] == shape[i];
    if (!same || tg_dtype_of(y) != expected_dtype(c->k, tg_dtype_of(x))) {
        char s1[100], s2[100];
        tt_fail(__FILE__, line, "%s: got %s %s, expected %s %s", what,
                tg_dtype_name(tg_dtype_of(y)), tg_shape_str(tg_ndim(y), tg_shape(y), s1, 100),
                tg_dtype_name(expected_dtype(c->k, tg_dtype_of(x))), tg_shape_str(ny, shape, s2, 100));
        return;
    }
    int64_t n = tg_numel(y);
    double *want = malloc((size_t)(n + 1) * sizeof *want), *got = malloc((size_t)(n + 1) * sizeof *got);
    ref_reduce(c, x, want);
    tg_copy_to(y, TG_FLOAT64, got);
    double tol = tg_dtype_of(y) == TG_FLOAT32 ? 2e-5 : tg_dtype_of(y) == TG_FLOAT64 ? 1e-11 : 0;
    for (int64_t i = 0; i < n; i++) {
        bool ok = (isnan(got[i]) && isnan(want[i])) || got[i] == want[i] ||
                  fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i]));
        if (!ok) {
            tt_fail(__FILE__, line, "%s: [%lld] = %.10g, expected %.10g", what,
                    (long long)i, got[i], want[i]);
            break;
        }
    }
    free(want);
    free(got);
}

/* ---- inputs --------------------------------------------------------------------- */
static tg_generator *gen;

/* values in [lo, hi) (integers: rounded) of dtype dt */
static tg_tensor *rand_of(tg_dtype dt, int nd, const int64_t *shape, double lo, double hi)
{
    if (!gen)
        gen = tg_generator_new(42);
    tg_tensor *u = tg_rand_uniform(gen, TG_FLOAT64, nd, shape, lo, hi);
    return tg_dtype_is_float(dt) ? tg_cast(u, dt) : tg_cast(tg_round(u), dt);
}

/* the same logical shape laid out four ways: contiguous, transposed (all
 * dims reversed in memory), sliced (step 2 and an offset), expanded */
enum { L_CONTIG, L_TRANSPOSED, L_SLICED, L_EXPANDED, L_COUNT };
static const char *layout_name[] = {"contiguous", "transposed", "sliced", "expanded"};

static tg_tensor *make_input(int layout, tg_dtype dt, int nd, const int64_t *shape,
                             double lo, double hi)
{
    int64_t s[TG_MAX_DIMS];
    int perm[TG_MAX_DIMS];
    switch (layout) {
    case L_TRANSPOSED:
        for (int i = 0; i < nd; i++) {
            s[i] = shape[nd - 1 - i];
            perm[i] = nd - 1 - i;
        }
        return tg_permute(rand_of(dt, nd, s, lo, hi), perm);
    case L_SLICED: {
        if (nd == 1) {
            s[0] = 2 * shape[0] + 1;
            return tg_slice(rand_of(dt, 1, s, lo, hi), 0, 1, s[0], 2);
        }
        memcpy(s, shape, (size_t)nd * sizeof *s);
        s[0] += 1;
        s[nd - 1] = 2 * s[nd - 1];
        tg_tensor *b = rand_of(dt, nd, s, lo, hi);
        b = tg_slice(b, 0, 1, s[0], 1);
        return tg_slice(b, nd - 1, 0, s[nd - 1], 2);
    }
    case L_EXPANDED:
        memcpy(s, shape, (size_t)nd * sizeof *s);
        s[0] = 1;
        return tg_expand(rand_of(dt, nd, s, lo, hi), nd, shape);
    default:
        return rand_of(dt, nd, shape, lo, hi);
    }
}

/* every axis set of a tensor of nd dims: all, each single (positive and
 * negative), pairs, and all-but-one */
static int axis_sets(int nd, int sets[][TG_MAX_DIMS], int *counts)
{
    int n = 0;
    counts[n++] = 0;
    for (int a = 0; a < nd; a++) {
        counts[n] = 1, sets[n][0] = a, n++;
        counts[n] = 1, sets[n][0] = a - nd, n++;
        for (int b = a + 1; b < nd; b++)
            counts[n] = 2, sets[n][0] = b, sets[n][1] = a - nd, n++;
        if (nd > 2) {
            counts[n] = 0;
            for (int b = 0; b < nd; b++)
                if (b != a)
                    sets[n][counts[n]++] = b;
            n++;
        }
    }
    return n;
}

static void sweep(kind k, tg_dtype dt, double lo, double hi, int max_numel)
{
    static const int64_t shapes[][4] = {{7}, {3, 5}, {2, 3, 4}, {2, 3, 2, 5}, {4, 1, 6}};
    static const int ndims[] = {1, 2, 3, 4, 3};
    for (int si = 0; si < 5; si++) {
        int nd = ndims[si];
        int64_t numel = 1;
        for (int i = 0; i < nd; i++)
            numel *= shapes[si][i];
        if (numel > max_numel)
            continue;
        int sets[64][TG_MAX_DIMS] = {{0}}, counts[64];
        int ns = axis_sets(nd, sets, counts);
        for (int layout = 0; layout < L_COUNT; layout++) {
            tg_scope_begin();
            tg_tensor *x = make_input(layout, dt, nd, shapes[si], lo, hi);
            for (int a = 0; a < ns; a++) {
                if (is_arg(k) && counts[a] != 1)
                    continue;
                for (int keep = 0; keep < 2; keep++) {
                    if (layout != L_CONTIG && keep != a % 2)
                        continue; /* strided layouts: one keepdim each, for speed */
                    rcase c = {k, counts[a], {0}, keep, k == K_VAR || k == K_STD ? 1 + a % 2 - (a % 3 == 0) : 0};
                    memcpy(c.axes, sets[a], sizeof c.axes);
                    check_against_ref(&c, x, layout_name[layout], __LINE__);
                }
            }
            tg_scope_end();
        }
    }
}

static void test_forward_float(void)
{
    for (int d = 0; d < 2; d++) {
        tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
        sweep(K_SUM, dt, -2, 2, 1000);
        sweep(K_MEAN, dt, -2, 2, 1000);
        sweep(K_PROD, dt, 0.6, 1.4, 1000);
        sweep(K_MAX, dt, -2, 2, 1000);
        sweep(K_MIN, dt, -2, 2, 1000);
        sweep(K_VAR, dt, -2, 2, 1000);
        sweep(K_STD, dt, -2, 2, 1000);
        sweep(K_LSE, dt, -20, 20, 1000);
        sweep(K_ARGMAX, dt, -2, 2, 1000);
        sweep(K_ARGMIN, dt, -2, 2, 1000);
    }
}

static void test_forward_int(void)
{
    const tg_dtype dts[3] = {TG_INT32, TG_INT64, TG_UINT8};
    for (int d = 0; d < 3; d++) {
        double lo = dts[d] == TG_UINT8 ? 0 : -5;
        sweep(K_SUM, dts[d], lo, 9, 1000);
        sweep(K_PROD, dts[d], dts[d] == TG_UINT8 ? 0 : -2, 2.4, 24); /* no overflow */
        sweep(K_MAX, dts[d], lo, 9, 1000);
        sweep(K_MIN, dts[d], lo, 9, 1000);
        sweep(K_ARGMAX, dts[d], lo, 3, 1000); /* many ties */
        sweep(K_ARGMIN, dts[d], lo, 3, 1000);
        sweep(K_LSE, dts[d], lo, 5, 100);     /* computed in float32 */
    }
}

static void test_scalar_input(void)
{
    tg_tensor *x = tg_scalar(TG_FLOAT64, 2.5);
    int ax0[1] = {0}, axm[1] = {-1};
    CHECK_NEAR(tg_item(tg_sum(x, 0, NULL, false)), 2.5, 0);
    CHECK_NEAR(tg_item(tg_max(x, 1, ax0, false)), 2.5, 0);
    CHECK_NEAR(tg_item(tg_mean(x, 1, axm, true)), 2.5, 0);
    CHECK_NEAR(tg_item(tg_logsumexp(x, 0, NULL, false)), 2.5, 1e-15);
    CHECK(isnan(tg_item(tg_var(x, 0, NULL, 1, false))));
    CHECK_NEAR(tg_item(tg_var(x, 0, NULL, 0, false)), 0, 0);
    CHECK_NEAR(tg_item(tg_argmax(x, 0, false)), 0, 0);
    CHECK(tg_ndim(tg_sum(x, 0, NULL, true)) == 0);
}

/* ---- large inputs: threaded row, column and split-reduction paths ---------------- */
static void test_large(void)
{
    /* [730, 727] float32 (just above the threading threshold, twice
     * TG_ITER_GRAIN elements): every kind over everything (the split
     * reduction and its combining), and rows and columns of it and of its
     * transpose (the row and column paths) */
    int64_t s[2] = {730, 727};
    tg_tensor *x = make_input(L_CONTIG, TG_FLOAT32, 2, s, -1, 1);
    tg_tensor *xt = tg_transpose(x, 0, 1);
    const kind ks[] = {K_SUM, K_MAX, K_VAR, K_LSE};
    for (int i = 0; i < 4; i++) {
        rcase c = {ks[i], 0, {0}, false, 1};
        check_against_ref(&c, x, "large", __LINE__);
    }
    const kind kr[] = {K_SUM, K_ARGMAX};
    for (int i = 0; i < 2; i++)
        for (int a = 0; a < 2; a++) {
            rcase c = {kr[i], 1, {a}, false, 1};
            check_against_ref(&c, x, "large", __LINE__);
            check_against_ref(&c, xt, "large transposed", __LINE__);
        }
    /* [N, C, H, W] over N, H, W (batch norm's statistics, bias gradients) */
    int64_t s4[4] = {16, 3, 110, 110};
    tg_tensor *x4 = make_input(L_CONTIG, TG_FLOAT32, 4, s4, -1, 1);
    rcase c4 = {K_SUM, 3, {0, 2, 3}, true, 0};
    check_against_ref(&c4, x4, "nchw", __LINE__);
    c4.k = K_VAR;
    check_against_ref(&c4, x4, "nchw", __LINE__);
    /* tall and thin: a column sum with few outputs splits the rows */
    int64_t st[2] = {270000, 2};
    tg_tensor *tall = make_input(L_CONTIG, TG_FLOAT64, 2, st, -1, 1);
    const kind kt[] = {K_SUM, K_MIN, K_STD, K_ARGMIN};
    for (int i = 0; i < 4; i++) {
        rcase c = {kt[i], 1, {0}, false, 1};
        check_against_ref(&c, tall, "tall", __LINE__);
    }
    rcase cp = {K_PROD, 1, {0}, false, 0};
    tg_tensor *ones = tg_add_scalar(tg_mul_scalar(tall, 1e-4), 1.0);
    check_against_ref(&cp, ones, "tall", __LINE__);
}

/* float32 sums accumulate in double */
static void test_sum_accuracy(void)
{
    int64_t n = 100000;
    tg_tensor *x = tg_full(TG_FLOAT32, 1, &n, 0.1);
    double want = (double)n * (double)0.1f;
    CHECK_NEAR(tg_item(tg_sum(x, 0, NULL, false)), want, want * 1e-7);
    CHECK_NEAR(tg_item(tg_mean(x, 0, NULL, false)), (double)0.1f, 1e-8);
    int64_t s2[2] = {n, 1};
    CHECK_NEAR(tg_item(tg_sum(tg_reshape(x, 2, s2), 0, NULL, false)), want, want * 1e-7);
    /* float64 variance of data with a large offset (two passes) */
    double v[4] = {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4};
    tg_tensor *d = tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, v);
    CHECK_NEAR(tg_item(tg_var(d, 0, NULL, 1, false)), 5.0 / 3.0, 1e-6);
    /* logsumexp does not overflow */
    double big[3] = {1000, 1000, -INFINITY};
    tg_tensor *b = tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, big);
    CHECK_NEAR(tg_item(tg_logsumexp(b, 0, NULL, false)), 1000 + log(2.0), 1e-3);
}

/* ---- ties, NaN, extremes ---------------------------------------------------------------- */
static void test_ties_and_nan(void)
{
    double v[6] = {1, 3, 3, 2, 3, 0};
    tg_tensor *x = tt_tensor(TG_FLOAT32, 1, (int64_t[]){6}, v);
    CHECK_NEAR(tg_item(tg_argmax(x, 0, false)), 1, 0);
    CHECK_NEAR(tg_item(tg_argmin(x, -1, false)), 5, 0);
    double nv[5] = {1, NAN, 5, NAN, -1};
    tg_tensor *xn = tt_tensor(TG_FLOAT64, 1, (int64_t[]){5}, nv);
    CHECK(isnan(tg_item(tg_max(xn, 0, NULL, false))));
    CHECK(isnan(tg_item(tg_min(xn, 0, NULL, false))));
    CHECK(isnan(tg_item(tg_sum(xn, 0, NULL, false))));
    CHECK_NEAR(tg_item(tg_argmax(xn, 0, false)), 1, 0);
    CHECK_NEAR(tg_item(tg_argmin(xn, 0, false)), 1, 0);
    /* NaN in column mode */
    double cv[4] = {1, 2, NAN, 0};
    tg_tensor *xc = tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 2}, cv);
    double want_max[2] = {NAN, 2}, want_arg[2] = {1, 0};
    int ax0[1] = {0};
    CHECK_TENSOR(tg_max(xc, 1, ax0, false), want_max, 0);
    CHECK_TENSOR(tg_argmax(xc, 0, false), want_arg, 0);
    /* all -inf: the first index; extremes of integers */
    double inf[3] = {-INFINITY, -INFINITY, -INFINITY};
    CHECK_NEAR(tg_item(tg_argmax(tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, inf), 0, false)), 0, 0);
    double iv[3] = {-2147483648.0, -2147483648.0, 7};
    tg_tensor *xi = tt_tensor(TG_INT32, 1, (int64_t[]){3}, iv);
    CHECK_NEAR(tg_item(tg_argmin(xi, 0, false)), 0, 0);
    CHECK_NEAR(tg_item(tg_min(xi, 0, NULL, false)), -2147483648.0, 0);
    CHECK_NEAR(tg_item(tg_sum(xi, 0, NULL, false)), -4294967289.0, 0);
    /* ties across the pieces of a split reduction (100000 elements) */
    int64_t n = 100000;
    tg_tensor *z = tg_zeros(TG_FLOAT32, 1, &n);
    CHECK_NEAR(tg_item(tg_argmax(z, 0, false)), 0, 0);
    CHECK_NEAR(tg_item(tg_argmin(z, 0, false)), 0, 0);
    float *p = tg_data(z);
    p[70000] = p[90000] = 5;
    p[20000] = p[95000] = -5;
    CHECK_NEAR(tg_item(tg_argmax(z, 0, false)), 70000, 0);
    CHECK_NEAR(tg_item(tg_argmin(z, 0, false)), 20000, 0);
    p[80000] = p[99999] = NAN;
    CHECK_NEAR(tg_item(tg_argmax(z, 0, false)), 80000, 0);
    CHECK_NEAR(tg_item(tg_argmin(z, 0, false)), 80000, 0);
    CHECK(isnan(tg_item(tg_max(z, 0, NULL, false))));
}

/* ---- short rows over the last dim: the documented order, bit for bit ------------------
 * Float sums, max and min of a contiguous row fold it into 8 lanes (lane k
 * takes elements k mod 8 of the vector part), the tail into lane 0, then a
 * pairwise tree; the kernels take rows one, several or a register's width
 * at a time, and must give this order's bits at every level (ctest runs
 * this file at each): sums in double, signs of zero and the first of tied
 * maxima as this order picks them, NaN where any NaN is; argmax and argmin
 * the first index of the extreme. */
static double lane_op(int op, double a, double v)
{
    if (op == 0)
        return a + v;
    bool take = op == 1 ? v > a : v < a;
    return take || v != v ? v : a;
}

static double lane_ref(int op, const double *x, int64_t n)
{
    double id = op == 0 ? 0.0 : op == 1 ? -INFINITY : INFINITY, l[8];
    for (int k = 0; k < 8; k++)
        l[k] = id;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            l[k] = lane_op(op, l[k], x[i + k]);
    for (; i < n; i++)
        l[0] = lane_op(op, l[0], x[i]);
    for (int w = 4; w >= 1; w /= 2)
        for (int k = 0; k < w; k++)
            l[k] = lane_op(op, l[2 * k], l[2 * k + 1]);
    return lane_op(op, id, l[0]);
}

static bool same_or_nan(double a, double b)
{
    return (a != a && b != b) || memcmp(&a, &b, sizeof a) == 0;
}

static void test_short_rows(void)
{
    unsigned seed = 5;
    for (int d = 0; d < 2; d++)
        for (int64_t n = 1; n <= 300; n += n < 40 ? 1 : 37)
            for (int64_t m = 1; m <= 21; m += 4) {
                tg_scope_begin();
                double *v = malloc((size_t)(m * n) * sizeof *v);
                for (int64_t i = 0; i < m * n; i++) {
                    seed = seed * 1103515245u + 12345u;
                    unsigned r = (seed >> 8) % 41, mode = (unsigned)(n + m) % 4;
                    /* ties, signed zeros, now and then NaN or an infinity;
                     * by mode: zeros the maximum or the minimum (which zero
                     * wins is the order's), or magnitudes whose sum's bits
                     * depend on the order */
                    v[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY
                         : r < 8 ? (r % 2 ? -0.0 : 0.0) : (double)(r % 9) - 4.25;
                    if (mode == 1 || mode == 2)
                        v[i] = r < 20 ? (r % 2 ? -0.0 : 0.0) : (mode == 1 ? -1.5 : 1.5) * r;
                    else if (mode == 3)
                        v[i] = ldexp((r % 2 ? -1.0 : 1.0) * (r + 1), (int)(r % 7) * 9 - 27);
                    if (d == 0)
                        v[i] = (float)v[i];
                }
                tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
                tg_tensor *x = tt_tensor(dt, 2, (int64_t[]){m, n}, v);
                int ax[1] = {1};
                tg_tensor *got[3] = {tg_sum(x, 1, ax, false), tg_max(x, 1, ax, false),
                                     tg_min(x, 1, ax, false)};
                for (int op = 0; op < 3; op++) {
                    double *g = tt_values(got[op]);
                    int64_t bad = 0;
                    for (int64_t r = 0; g && r < m; r++) {
                        double want = lane_ref(op, v + r * n, n);
                        if (d == 0)
                            want = (float)want;
                        bad += !same_or_nan(g[r], want);
                    }
                    if (!g || bad)
                        tt_fail(__FILE__, __LINE__, "%s of [%lld, %lld] %s: %lld rows differ "
                                "from the lane order", op == 0 ? "sum" : op == 1 ? "max" : "min",
                                (long long)m, (long long)n, tg_dtype_name(dt), (long long)bad);
                    tt_checks++;
                    free(g);
                }
                /* var and logsumexp (a parameter per row: the mean, the
                 * maximum): rows at once as one row alone, bit for bit */
                if (n > 1) {
                    tg_tensor *all[2] = {tg_var(x, 1, ax, 1, false),
                                         tg_logsumexp(x, 1, ax, false)};
                    for (int k = 0; k < 2; k++) {
                        double *g = tt_values(all[k]);
                        int64_t bad = 0;
                        for (int64_t r = 0; g && r < m; r++) {
                            tg_tensor *row = tg_slice(x, 0, r, r + 1, 1);
                            tg_tensor *one = k ? tg_logsumexp(row, 1, ax, false)
                                               : tg_var(row, 1, ax, 1, false);
                            bad += !one || !same_or_nan(g[r], tg_item(one));
                        }
                        if (!g || bad)
                            tt_fail(__FILE__, __LINE__, "%s of [%lld, %lld] %s: %lld rows differ "
                                    "from the row alone", k ? "logsumexp" : "var", (long long)m,
                                    (long long)n, tg_dtype_name(dt), (long long)bad);
                        tt_checks++;
                        free(g);
                    }
                }
                /* argmax/argmin: the first element equal to the extreme
                 * (NaN: the first NaN), as PyTorch */
                for (int op = 1; op < 3; op++) {
                    double *g = tt_values(op == 1 ? tg_argmax(x, 1, false) : tg_argmin(x, 1, false));
                    int64_t bad = 0;
                    for (int64_t r = 0; g && r < m; r++) {
                        const double *row = v + r * n;
                        double ext = lane_ref(op, row, n);
                        int64_t want = 0;
                        while (want < n - 1 && !(row[want] == ext || (row[want] != row[want] &&
                                                                      ext != ext)))
                            want++;
                        bad += g[r] != (double)want;
                    }
                    if (!g || bad)
                        tt_fail(__FILE__, __LINE__, "%s of [%lld, %lld] %s: %lld rows differ",
                                op == 1 ? "argmax" : "argmin", (long long)m, (long long)n,
                                tg_dtype_name(dt), (long long)bad);
                    tt_checks++;
                    free(g);
                }
                free(v);
                tg_scope_end();
            }
}

/* ---- empty axes ------------------------------------------------------------------------ */
static void test_empty(void)
{
    int64_t s[2] = {0, 3};
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, s);
    int ax0[1] = {0}, ax1[1] = {1};
    double zeros[3] = {0, 0, 0}, ones[3] = {1, 1, 1}, nans[3] = {NAN, NAN, NAN};
    double ninf[3] = {-INFINITY, -INFINITY, -INFINITY};
    CHECK_TENSOR(tg_sum(x, 1, ax0, false), zeros, 0);
    CHECK_NEAR(tg_item(tg_sum(x, 0, NULL, false)), 0, 0);
    CHECK_TENSOR(tg_prod(x, 1, ax0, false), ones, 0);
    CHECK_TENSOR(tg_mean(x, 1, ax0, false), nans, 0);
    CHECK_TENSOR(tg_var(x, 1, ax0, 1, false), nans, 0);
    CHECK_TENSOR(tg_logsumexp(x, 1, ax0, false), ninf, 0);
    CHECK_SHAPE(tg_sum(x, 1, ax1, false), 0);
    CHECK_SHAPE(tg_max(x, 1, ax1, true), 0, 1);
    CHECK_SHAPE(tg_argmax(x, 1, false), 0);
    tg_tensor *xi = tg_zeros(TG_INT32, 2, s);
    CHECK_TENSOR(tg_sum(xi, 1, ax0, false), zeros, 0);
    CHECK_ERROR(tg_max(x, 1, ax0, false), TG_ERR_SHAPE, "max: cannot reduce over axis 0 of size 0");
    CHECK_ERROR(tg_min(x, 0, NULL, false), TG_ERR_SHAPE, "min: cannot reduce over axis 0");
    CHECK_ERROR(tg_argmax(x, 0, false), TG_ERR_SHAPE, "argmax: cannot reduce over axis 0");
    CHECK_ERROR(tg_argmin(xi, -2, true), TG_ERR_SHAPE, "argmin");
}

/* ---- gradients ------------------------------------------------------------------------- */
static void gradcheck_sets(kind k, int corr, double lo, double hi)
{
    int64_t s[3] = {2, 3, 4};
    static const int sets[][3] = {{0}, {1}, {-1}, {0, 2}, {2, 0}, {-3, -2}, {0, 1, 2}};
    static const int counts[] = {0, 1, 1, 2, 2, 2, 3};
    for (int a = 0; a < 7; a++)
        for (int keep = 0; keep < 2; keep++) {
            rcase c = {k, counts[a], {0}, keep, corr};
            memcpy(c.axes, sets[a], sizeof sets[a]);
            tg_tensor *in[1] = {tt_rand(3, s, lo, hi)};
            CHECK_GRADCHECK(gc_fn, &c, 1, in);
        }
    /* a transposed input (column mode) */
    rcase c = {k, 1, {0}, false, corr};
    tg_tensor *in[1] = {tg_detach(tg_transpose(tt_rand(2, (int64_t[]){5, 3}, lo, hi), 0, 1))};
    tg_set_requires_grad(in[0], true);
    CHECK_GRADCHECK(gc_fn, &c, 1, in);
}

static void test_grad_sum_mean(void)
{
    gradcheck_sets(K_SUM, 0, -1, 1);
    gradcheck_sets(K_MEAN, 0, -1, 1);
}

static void test_grad_max_min(void)
{
    gradcheck_sets(K_MAX, 0, -1, 1);
    gradcheck_sets(K_MIN, 0, -1, 1);
    /* ties share the gradient evenly (amax) */
    double v[6] = {1, 3, 3, 2, 0, 0};
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 3}, v);
    tg_set_requires_grad(x, true);
    int ax1[1] = {1};
    tg_tensor *y = tg_sum(tg_mul(tg_max(x, 1, ax1, false), tg_arange(TG_FLOAT64, 1, 3, 1)),
                          0, NULL, false);
    CHECK_OK(tg_backward(y, NULL, false));
    double want[6] = {0, 0.5, 0.5, 2, 0, 0};
    CHECK_TENSOR(tg_grad(x), want, 1e-12);
    tg_zero_grad(x);
    CHECK_OK(tg_backward(tg_min(x, 0, NULL, false), NULL, false));
    double want_min[6] = {0, 0, 0, 0, 0.5, 0.5};
    CHECK_TENSOR(tg_grad(x), want_min, 1e-12);
}

static void test_grad_prod(void)
{
    gradcheck_sets(K_PROD, 0, 0.5, 1.5);
    /* zeros: one in a row, two in a row, none; finite differences are exact
     * since prod is linear in each element */
    double v[12] = {2, 0, 3, 4, /* one zero */ 0, 5, 0, 1, /* two */ 1, 2, 3, 4};
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){3, 4}, v);
    tg_set_requires_grad(x, true);
    int ax1[1] = {1};
    tg_tensor *y = tg_sum(tg_prod(x, 1, ax1, false), 0, NULL, false);
    CHECK_OK(tg_backward(y, NULL, false));
    double want[12] = {0, 24, 0, 0, 0, 0, 0, 0, 24, 12, 8, 6};
    CHECK_TENSOR(tg_grad(x), want, 1e-12);
    rcase rows = {K_PROD, 1, {1}, false, 0}, cols = {K_PROD, 1, {0}, true, 0};
    rcase all = {K_PROD, 0, {0}, false, 0};
    tg_tensor *in[1] = {x};
    CHECK_GRADCHECK(gc_fn, &rows, 1, in);
    CHECK_GRADCHECK(gc_fn, &cols, 1, in);
    CHECK_GRADCHECK(gc_fn, &all, 1, in);
    double one_zero[4] = {2, -3, 0, 0.5};
    tg_tensor *in2[1] = {tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, one_zero)};
    tg_set_requires_grad(in2[0], true);
    CHECK_GRADCHECK(gc_fn, &all, 1, in2);
}

static void test_grad_var_std(void)
{
    for (int corr = 0; corr < 3; corr++) {
        gradcheck_sets(K_VAR, corr, -1, 1);
        gradcheck_sets(K_STD, corr, -1, 1);
    }
    /* std of constant rows: gradient 0, not NaN (as in PyTorch) */
    double v[4] = {2, 2, 1, 3};
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 2}, v);
    tg_set_requires_grad(x, true);
    int ax1[1] = {1};
    CHECK_OK(tg_backward(tg_sum(tg_std(x, 1, ax1, 1, false), 0, NULL, false), NULL, false));
    double want[4] = {0, 0, -sqrt(0.5), sqrt(0.5)};
    CHECK_TENSOR(tg_grad(x), want, 1e-12);
}

static void test_grad_logsumexp(void)
{
    gradcheck_sets(K_LSE, 0, -3, 3);
    rcase c = {K_LSE, 1, {1}, false, 0};
    double v[6] = {800, 801, 799, -800, -801, -799};
    tg_tensor *in[1] = {tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 3}, v)};
    tg_set_requires_grad(in[0], true);
    CHECK_GRADCHECK(gc_fn, &c, 1, in);
}

/* gradients of gradients: the rules are made of differentiable ops */
static tg_tensor *grad_of(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    bool was = tg_grad_enabled(); /* the numeric pass runs without grad */
    tg_set_grad_enabled(true);
    tg_tensor *y = apply(user, in[0]);
    tg_tensor *w = tg_sin(tg_mul_scalar(in[0], 3.0)); /* a non-uniform weight */
    tg_tensor *g = NULL;
    tg_tensor *out = tg_sum(y, 0, NULL, false);
    tg_status st = tg_autograd_grad(1, &out, NULL, 1, in, &g, true, true);
    tg_set_grad_enabled(was);
    tg_tensor *r = st == TG_OK ? tg_sum(tg_mul(g, w), 0, NULL, false) : NULL;
    tg_release(g); /* tg_autograd_grad's results belong to the caller */
    return r;
}

static void test_double_backward(void)
{
    int64_t s[2] = {3, 4};
    const kind ks[] = {K_MEAN, K_VAR, K_STD, K_LSE, K_PROD, K_MAX};
    for (int i = 0; i < 6; i++) {
        rcase c = {ks[i], 1, {1}, false, 1};
        tg_tensor *in[1] = {tt_rand(2, s, 0.5, 1.5)};
        CHECK_GRADCHECK(grad_of, &c, 1, in);
    }
}

static void test_nondiff(void)
{
    tg_tensor *x = tt_rand(2, (int64_t[]){2, 3}, -1, 1);
    tg_tensor *i = tg_argmax(x, 1, true);
    CHECK_SHAPE(i, 2, 1);
    CHECK(tg_dtype_of(i) == TG_INT64);
    CHECK(!tg_requires_grad(i));
    CHECK(tg_requires_grad(tg_max(x, 0, NULL, false)));
}

/* ---- sum_to ------------------------------------------------------------------------------ */
static void test_sum_to(void)
{
    int64_t s[3] = {2, 3, 4};
    tg_tensor *x = tg_reshape(tg_arange(TG_FLOAT64, 0, 24, 1), 3, s);
    tg_tensor *y = tg_sum_to(x, 2, (int64_t[]){3, 1});
    CHECK_SHAPE(y, 3, 1);
    double want[3] = {0, 0, 0};
    for (int i = 0; i < 24; i++)
        want[(i / 4) % 3] += i;
    CHECK_TENSOR(y, want, 1e-12);
    CHECK(tg_sum_to(x, 3, s) == x);
    CHECK_ERROR(tg_sum_to(x, 2, (int64_t[]){2, 4}), TG_ERR_SHAPE, "sum_to: cannot sum");
    CHECK_ERROR(tg_sum_to(x, 4, (int64_t[]){1, 2, 3, 4}), TG_ERR_SHAPE, "sum_to");
}

/* ---- errors -------------------------------------------------------------------------------- */
static void test_errors(void)
{
    tg_tensor *x = tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 3});
    int a2[1] = {2}, am3[1] = {-3}, dup[2] = {1, -1}, ok[1] = {1};
    CHECK_ERROR(tg_sum(x, 1, a2, false), TG_ERR_INDEX, "sum: axis 2 is out of range");
    CHECK_ERROR(tg_mean(x, 1, am3, false), TG_ERR_INDEX, "mean: axis -3");
    CHECK_ERROR(tg_max(x, 1, a2, true), TG_ERR_INDEX, "max: axis 2");
    CHECK_ERROR(tg_var(x, 1, a2, 1, true), TG_ERR_INDEX, "var: axis 2");
    CHECK_ERROR(tg_logsumexp(x, 1, am3, true), TG_ERR_INDEX, "logsumexp: axis -3");
    CHECK_ERROR(tg_argmax(x, 2, false), TG_ERR_INDEX, "argmax: axis 2");
    CHECK_ERROR(tg_argmin(x, -3, false), TG_ERR_INDEX, "argmin: axis -3");
    CHECK_ERROR(tg_sum(x, 2, dup, false), TG_ERR_INDEX, "sum: axis 1 appears twice");
    CHECK_ERROR(tg_prod(x, 2, dup, false), TG_ERR_INDEX, "prod: axis 1 appears twice");
    CHECK_ERROR(tg_sum(x, -1, ok, false), TG_ERR_ARG, "sum: bad axes");
    CHECK_ERROR(tg_sum(x, 1, NULL, false), TG_ERR_ARG, "sum: bad axes");
    CHECK_ERROR(tg_var(x, 0, NULL, -1, false), TG_ERR_ARG, "var: correction -1");
    tg_tensor *b = tg_cast(x, TG_BOOL);
    CHECK_ERROR(tg_sum(b, 0, NULL, false), TG_ERR_DTYPE, "sum: bool");
    CHECK_ERROR(tg_max(b, 0, NULL, false), TG_ERR_DTYPE, "max: bool");
    CHECK_ERROR(tg_argmax(b, 0, false), TG_ERR_DTYPE, "argmax: bool");
    tg_tensor *xi = tg_cast(x, TG_INT32);
    CHECK_ERROR(tg_mean(xi, 0, NULL, false), TG_ERR_DTYPE, "mean: expected a float32 or float64 input, got int32");
    CHECK_ERROR(tg_var(xi, 0, NULL, 1, false), TG_ERR_DTYPE, "var: expected a float");
    CHECK_ERROR(tg_std(xi, 0, NULL, 1, false), TG_ERR_DTYPE, "std: expected a float");
    CHECK(tg_sum(xi, 1, ok, false) != NULL);
    /* a failed input passes its error through */
    CHECK_ERROR(tg_sum(tg_sum(x, 1, a2, false), 0, NULL, false), TG_ERR_INDEX, "sum: axis 2");
    CHECK_ERROR(tg_sum(NULL, 0, NULL, false), TG_ERR_ARG, "sum: input 0 is NULL");
}

static void test_registry(void)
{
    const char *names[] = {"sum", "mean", "prod", "max", "min", "var", "std",
                           "logsumexp", "argmax", "argmin"};
    for (int i = 0; i < 10; i++)
        CHECK(tg_op_find(names[i]) != NULL);
}

int main(void)
{
    RUN(test_forward_float);
    RUN(test_forward_int);
    RUN(test_scalar_input);
    RUN(test_large);
    RUN(test_sum_accuracy);
    RUN(test_ties_and_nan);
    RUN(test_short_rows);
    RUN(test_empty);
    RUN(test_grad_sum_mean);
    RUN(test_grad_max_min);
    RUN(test_grad_prod);
    RUN(test_grad_var_std);
    RUN(test_grad_logsumexp);
    RUN(test_double_backward);
    RUN(test_nondiff);
    RUN(test_sum_to);
    RUN(test_errors);
    RUN(test_registry);
    tg_generator_free(gen);
    return tt_finish();
}
