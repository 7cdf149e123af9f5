/* 1-D convolution and pooling (conv1d, conv_transpose1d, max_pool1d,
 * avg_pool1d): forward against direct loops over a grid of stride,
 * padding, dilation, groups (and ceil_mode / count_include_pad) in
 * float32 and float64, gradients against the loops' adjoints, gradcheck,
 * graph mode against eager, and errors. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tg_generator *rng;

static tg_tensor *rnd(tg_dtype dt, int ndim, const int64_t *shape)
{
    if (!rng)
        rng = tg_generator_new(5);
    return tg_rand_uniform(rng, dt, ndim, shape, -1, 1);
}

static double *values(const tg_tensor *t)
{
    double *v = malloc((size_t)(tg_numel(t) ? tg_numel(t) : 1) * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    return v;
}

/* ---- conv1d and conv_transpose1d ------------------------------------------------ */
/* y[n, o, t] = b[o] + sum x[n, c, t*s - p + j*d] w[o, c', j] (transposed:
 * x[n, c, t] scatters into y[n, o, t*s - p + j*d]); dx, dw for dy */
static void naive_conv(bool transposed, const double *x, const double *w, const double *b,
                       const double *dy, int64_t N, int64_t C, int64_t L, int64_t O,
                       int64_t K, int64_t LO, const tg_conv_transpose1d_opts *o, double *y,
                       double *dx, double *dw)
{
    int64_t G = o->groups, cg = C / G, og = O / G;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t t = 0; t < LO; t++)
                y[(n * O + oc) * LO + t] = b ? b[oc] : 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t ci = 0; ci < cg; ci++)
                for (int64_t j = 0; j < K; j++) {
                    int64_t c = oc / og * cg + ci;
                    /* conv: w[oc, ci, j]; transposed: w[c, oc % og, j] */
                    int64_t wi = transposed ? (c * og + oc % og) * K + j : (oc * cg + ci) * K + j;
                    int64_t la = transposed ? L : LO; /* the loop runs over the smaller side */
                    for (int64_t t = 0; t < la; t++) {
                        int64_t u = t * o->stride - o->padding + j * o->dilation;
                        int64_t lb = transposed ? LO : L;
                        if (u < 0 || u >= lb)
                            continue;
                        int64_t xi = (n * C + c) * L + (transposed ? t : u);
                        int64_t yi = (n * O + oc) * LO + (transposed ? u : t);
                        y[yi] += x[xi] * w[wi];
                        dx[xi] += w[wi] * dy[yi];
                        dw[wi] += x[xi] * dy[yi];
                    }
                }
}

static void check_conv(tg_dtype dt, bool transposed, int64_t C, int64_t O, int64_t K,
                       const tg_conv_transpose1d_opts *o, bool with_bias, const char *what)
{
    double tol = dt == TG_FLOAT32 ? 2e-4 : 1e-10;
    int64_t N = 2, L = 9;
    tg_tensor *x = rnd(dt, 3, (int64_t[]){N, C, L});
    tg_tensor *w = transposed ? rnd(dt, 3, (int64_t[]){C, O / o->groups, K})
                              : rnd(dt, 3, (int64_t[]){O, C / o->groups, K});
    tg_tensor *b = with_bias ? rnd(dt, 1, &O) : NULL;
    tg_set_requires_grad(x, true);
    tg_set_requires_grad(w, true);
    tg_tensor *y;
    if (transposed) {
        y = tg_conv_transpose1d(x, w, b, o);
    } else {
        tg_conv1d_opts c1 = {o->stride, o->padding, o->dilation, o->groups};
        y = tg_conv1d(x, w, b, &c1);
    }
    if (!y) {
        tt_fail(__FILE__, __LINE__, "%s: failed: %s", what, tg_last_error());
        return;
    }
    int64_t span = o->dilation * (K - 1) + 1;
    int64_t LO = transposed ? (L - 1) * o->stride - 2 * o->padding + span + o->output_padding
                            : (L + 2 * o->padding - span) / o->stride + 1;
    tt_check_shape(y, (int64_t[]){N, O, LO}, 3, what, __FILE__, __LINE__);
    tg_tensor *dy = rnd(dt, 3, tg_shape(y));
    double *xv = values(x), *wv = values(w), *bv = b ? values(b) : NULL, *dyv = values(dy);
    double *yr = calloc((size_t)(N * O * LO), sizeof *yr);
    double *dxr = calloc((size_t)tg_numel(x), sizeof *dxr);
    double *dwr = calloc((size_t)tg_numel(w), sizeof *dwr);
    naive_conv(transposed, xv, wv, bv, dyv, N, C, L, O, K, LO, o, yr, dxr, dwr);
    tt_check_tensor(y, yr, tol, what, __FILE__, __LINE__);
    tg_tensor *in[2] = {x, w}, *g[2] = {NULL, NULL};
    CHECK_OK(tg_autograd_grad(1, &y, &dy, 2, in, g, false, false));
    tt_check_tensor(g[0], dxr, tol, what, __FILE__, __LINE__);
    tt_check_tensor(g[1], dwr, tol * 10, what, __FILE__, __LINE__);
    tg_release(g[0]);
    tg_release(g[1]);
    free(xv);
    free(wv);
    free(bv);
    free(dyv);
    free(yr);
    free(dxr);
    free(dwr);
}

static void test_conv_grid(void)
{
    static const int combos[][5] = {
        /* stride padding output_padding dilation groups */
        {1, 0, 0, 1, 1}, {2, 0, 1, 1, 1}, {1, 2, 0, 1, 1}, {3, 1, 2, 2, 1},
        {1, 0, 0, 2, 2}, {2, 1, 0, 1, 2}, {2, 2, 1, 3, 4}};
    char what[96];
    for (int d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++)
            for (int k = 1; k <= 3; k++)
                for (int t = 0; t < 2; t++) {
                    const int *v = combos[c];
                    tg_conv_transpose1d_opts o = {v[0], v[1], t ? v[2] : 0, v[3], v[4]};
                    tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
                    snprintf(what, sizeof what, "%s%s combo %zu k %d", t ? "transposed " : "",
                             tg_dtype_name(dt), c, k);
                    check_conv(dt, t, 4, 8, k, &o, (c + (size_t)k) % 2 == 0, what);
                }
}

/* ---- pooling ----------------------------------------------------------------------- */
/* PyTorch's output length (ceil_mode drops a window starting in the padding) */
static int64_t pool_len(int64_t L, const tg_pool1d_opts *o)
{
    int64_t s = o->stride ? o->stride : o->kernel, num = L + 2 * o->padding - o->kernel;
    int64_t n = (o->ceil_mode ? (num + s - 1) / s : num / s) + 1;
    if (o->ceil_mode && (n - 1) * s >= L + o->padding)
        n--;
    return n;
}

static void naive_pool(bool max, const double *x, int64_t planes, int64_t L, int64_t LO,
                       const tg_pool1d_opts *o, double *y)
{
    int64_t s = o->stride ? o->stride : o->kernel;
    for (int64_t p = 0; p < planes; p++)
        for (int64_t t = 0; t < LO; t++) {
            int64_t a = t * s - o->padding, e = a + o->kernel;
            /* the divisor: window cells inside input and padding (not past it) */
            int64_t div = (e < L + o->padding ? e : L + o->padding) - a;
            double acc = max ? -INFINITY : 0;
            int64_t cells = 0;
            for (int64_t u = a < 0 ? 0 : a; u < e && u < L; u++, cells++)
                acc = max ? fmax(acc, x[p * L + u]) : acc + x[p * L + u];
            y[p * LO + t] = max ? acc : acc / (double)(o->count_include_pad ? div : cells);
        }
}

typedef struct pool_case {
    tg_pool1d_opts o;
    bool max;
} pool_case;

static tg_tensor *f_pool(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const pool_case *p = user;
    return p->max ? tg_max_pool1d(in[0], &p->o) : tg_avg_pool1d(in[0], &p->o);
}

static void test_pool_grid(void)
{
    static const int combos[][5] = {
        /* kernel stride padding ceil include_pad */
        {2, 0, 0, 0, 1}, {3, 1, 1, 0, 1}, {3, 2, 1, 1, 0}, {4, 3, 2, 1, 1}, {3, 2, 0, 1, 0},
        {5, 2, 2, 0, 0}};
    char what[96];
    for (int d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++)
            for (int max = 0; max < 2; max++) {
                const int *v = combos[c];
                tg_pool1d_opts o = {v[0], v[1], v[2], v[3] != 0, v[4] != 0};
                tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
                int64_t L = 10;
                tg_tensor *x = rnd(dt, 3, (int64_t[]){2, 3, L});
                tg_tensor *y = max ? tg_max_pool1d(x, &o) : tg_avg_pool1d(x, &o);
                snprintf(what, sizeof what, "%s %s combo %zu", max ? "max" : "avg",
                         tg_dtype_name(dt), c);
                int64_t LO = pool_len(L, &o);
                tt_check_shape(y, (int64_t[]){2, 3, LO}, 3, what, __FILE__, __LINE__);
                double *xv = values(x), *yr = calloc((size_t)(6 * LO), sizeof *yr);
                naive_pool(max, xv, 6, L, LO, &o, yr);
                tt_check_tensor(y, yr, dt == TG_FLOAT32 ? 1e-6 : 1e-14, what, __FILE__,
                                __LINE__);
                free(xv);
                free(yr);
                if (d) { /* gradients (random values: no ties) */
                    pool_case oc = {o, max != 0};
                    tg_tensor *in = tt_rand(3, (int64_t[]){1, 2, 8}, -1, 1);
                    CHECK_GRADCHECK(f_pool, &oc, 1, &in);
                }
            }
}

static tg_tensor *f_conv1d(int n, tg_tensor *const *in, void *user)
{
    return tg_conv1d(in[0], in[1], n > 2 ? in[2] : NULL, user);
}

static tg_tensor *f_convt1d(int n, tg_tensor *const *in, void *user)
{
    return tg_conv_transpose1d(in[0], in[1], n > 2 ? in[2] : NULL, user);
}

static void test_gradcheck(void)
{
    tg_conv1d_opts o = {2, 1, 2, 2};
    tg_tensor *in[3] = {tt_rand(3, (int64_t[]){2, 4, 7}, -1, 1),
                        tt_rand(3, (int64_t[]){4, 2, 2}, -1, 1), tt_rand(1, (int64_t[]){4}, -1, 1)};
    CHECK_GRADCHECK(f_conv1d, &o, 3, in);
    tg_conv_transpose1d_opts ot = {2, 1, 1, 1, 2};
    tg_tensor *it[3] = {tt_rand(3, (int64_t[]){2, 4, 4}, -1, 1),
                        tt_rand(3, (int64_t[]){4, 3, 3}, -1, 1), tt_rand(1, (int64_t[]){6}, -1, 1)};
    CHECK_GRADCHECK(f_convt1d, &ot, 3, it);
}

/* a graph of the four ops gives eager's numbers */
static tg_tensor *chain(tg_tensor *const *in)
{
    tg_conv1d_opts o = {1, 1, 1, 1};
    tg_pool1d_opts p = {2, 0, 0, false, true};
    tg_tensor *h = tg_max_pool1d(tg_conv1d(in[0], in[1], NULL, &o), &p);
    tg_tensor *t = tg_conv_transpose1d(h, in[2], NULL, &(tg_conv_transpose1d_opts){2, 0, 1, 1, 1});
    return tg_avg_pool1d(t, &(tg_pool1d_opts){3, 1, 1, true, false});
}

static tg_status traced(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = chain(in);
    return out[0] ? TG_OK : tg_last_status();
}

static void test_graph_mode(void)
{
    tg_tensor *in[3] = {rnd(TG_FLOAT64, 3, (int64_t[]){2, 3, 10}),
                        rnd(TG_FLOAT64, 3, (int64_t[]){4, 3, 3}),
                        rnd(TG_FLOAT64, 3, (int64_t[]){4, 2, 2})};
    tg_tensor *eager = chain(in);
    CHECK(eager != NULL);
    tg_graph *g = tg_graph_new(NULL);
    tg_tensor *ph[3] = {NULL, NULL, NULL}, *out = NULL, *got = NULL;
    CHECK_OK(tg_graph_trace(g, traced, NULL, 3, in, NULL, ph, 1, &out));
    tg_session *s = tg_session_new(g);
    CHECK_OK(tg_session_run(s, 3, ph, in, 1, &out, &got, 0, NULL));
    double *v = values(eager);
    CHECK_TENSOR(got, v, 1e-14);
    free(v);
    tg_session_free(s);
    tg_graph_free(g);
}

static void test_errors(void)
{
    tg_tensor *x = rnd(TG_FLOAT32, 3, (int64_t[]){1, 4, 6});
    tg_tensor *w = rnd(TG_FLOAT32, 3, (int64_t[]){2, 4, 3});
    CHECK_ERROR(tg_conv1d(rnd(TG_FLOAT32, 4, (int64_t[]){1, 4, 6, 1}), w, NULL, NULL),
                TG_ERR_SHAPE, "conv1d: input must be 3-D [N, C, L]");
    CHECK_ERROR(tg_conv1d(x, rnd(TG_FLOAT32, 2, (int64_t[]){2, 4}), NULL, NULL), TG_ERR_SHAPE,
                "weight must be 3-D");
    CHECK_ERROR(tg_conv1d(x, rnd(TG_FLOAT32, 3, (int64_t[]){2, 3, 3}), NULL, NULL),
                TG_ERR_SHAPE, "channels");
    CHECK_ERROR(tg_conv1d(NULL, w, NULL, NULL), TG_ERR_ARG, "NULL");
    CHECK_ERROR(tg_conv_transpose1d(x, rnd(TG_FLOAT32, 2, (int64_t[]){4, 2}), NULL, NULL),
                TG_ERR_SHAPE, "conv_transpose1d: weight must be 3-D");
    CHECK_ERROR(tg_max_pool1d(x, NULL), TG_ERR_ARG, "opts is NULL");
    CHECK_ERROR(tg_avg_pool1d(rnd(TG_FLOAT32, 2, (int64_t[]){4, 6}), &(tg_pool1d_opts){2, 0, 0, false, false}),
                TG_ERR_SHAPE, "avg_pool1d: input must be 3-D");
    CHECK_ERROR(tg_max_pool1d(x, &(tg_pool1d_opts){8, 0, 0, false, false}), TG_ERR_SHAPE, "larger");
}

int main(void)
{
    RUN(test_conv_grid);
    RUN(test_pool_grid);
    RUN(test_gradcheck);
    RUN(test_graph_mode);
    RUN(test_errors);
    tg_generator_free(rng);
    return tt_finish();
}
