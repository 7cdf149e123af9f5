/* 3-D convolution and pooling (conv3d, conv_transpose3d, max_pool3d,
 * avg_pool3d): forward and gradients against direct loops from the
 * definitions over a grid of stride, padding, dilation, groups (and
 * output_padding, ceil_mode, count_include_pad) in float32 and float64,
 * the vol2col blocking, gradcheck incl. grad of grad, graph mode, errors. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tg_generator *rng;

static tg_tensor *rnd(tg_dtype dt, int ndim, const int64_t *shape)
{
    if (!rng)
        rng = tg_generator_new(13);
    return tg_rand_uniform(rng, dt, ndim, shape, -1, 1);
}

static double *values(const tg_tensor *t)
{
    double *v = malloc((size_t)(tg_numel(t) ? tg_numel(t) : 1) * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    return v;
}

/* ---- convolution ---------------------------------------------------------------- */
typedef struct conv_case {
    int s[3], p[3], op[3], d[3], groups;
} conv_case;

/* the small side (conv: output, transposed: input) position t and tap k
 * meet the big side at t*s - p + k*d; y/x/w and the adjoints dx, dw */
static void naive(bool transposed, const tg_tensor *xt, const tg_tensor *wt, const double *b,
                  const double *dy, const conv_case *c, const int64_t *ys, double *y,
                  double *dx, double *dw)
{
    const int64_t *xs = tg_shape(xt), *ws = tg_shape(wt);
    double *x = values(xt), *w = values(wt);
    int64_t N = xs[0], C = xs[1], O = ys[1], G = c->groups, cg = C / G, og = O / G;
    const int64_t *small = transposed ? xs : ys, *big = transposed ? ys : xs;
    int64_t nys = N * O * ys[2] * ys[3] * ys[4];
    for (int64_t i = 0; i < nys; i++)
        y[i] = b ? b[(i / (ys[2] * ys[3] * ys[4])) % O] : 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t ci = 0; ci < cg; ci++) {
                int64_t ch = oc / og * cg + ci;
                for (int64_t t0 = 0; t0 < small[2]; t0++)
                    for (int64_t t1 = 0; t1 < small[3]; t1++)
                        for (int64_t t2 = 0; t2 < small[4]; t2++)
                            for (int64_t k0 = 0; k0 < ws[2]; k0++)
                                for (int64_t k1 = 0; k1 < ws[3]; k1++)
                                    for (int64_t k2 = 0; k2 < ws[4]; k2++) {
                                        int64_t u0 = t0 * c->s[0] - c->p[0] + k0 * c->d[0];
                                        int64_t u1 = t1 * c->s[1] - c->p[1] + k1 * c->d[1];
                                        int64_t u2 = t2 * c->s[2] - c->p[2] + k2 * c->d[2];
                                        if (u0 < 0 || u0 >= big[2] || u1 < 0 || u1 >= big[3] ||
                                            u2 < 0 || u2 >= big[4])
                                            continue;
                                        int64_t sp = (t0 * small[3] + t1) * small[4] + t2;
                                        int64_t bp = (u0 * big[3] + u1) * big[4] + u2;
                                        int64_t xi = (n * C + ch) * xs[2] * xs[3] * xs[4] +
                                                     (transposed ? sp : bp);
                                        int64_t yi = (n * O + oc) * ys[2] * ys[3] * ys[4] +
                                                     (transposed ? bp : sp);
                                        int64_t wi = ((transposed ? ch * og + oc % og
                                                                  : oc * cg + ci) *
                                                          ws[2] + k0) * ws[3] * ws[4] +
                                                     k1 * ws[4] + k2;
                                        y[yi] += x[xi] * w[wi];
                                        dx[xi] += w[wi] * dy[yi];
                                        dw[wi] += x[xi] * dy[yi];
                                    }
            }
    free(x);
    free(w);
}

static void check_conv(tg_dtype dt, bool transposed, const int64_t *xs, int64_t O,
                       const int64_t *k, const conv_case *c, bool with_bias, const char *what)
{
    double tol = dt == TG_FLOAT32 ? 5e-4 : 1e-10;
    int64_t C = xs[1], G = c->groups;
    tg_tensor *x = rnd(dt, 5, xs);
    tg_tensor *w = rnd(dt, 5, transposed ? (int64_t[]){C, O / G, k[0], k[1], k[2]}
                                         : (int64_t[]){O, C / G, k[0], k[1], k[2]});
    tg_tensor *b = with_bias ? rnd(dt, 1, &O) : NULL;
    tg_set_requires_grad(x, true);
    tg_set_requires_grad(w, true);
    tg_tensor *y;
    if (transposed) {
        tg_conv_transpose3d_opts o;
        memcpy(o.stride, c->s, sizeof o.stride);
        memcpy(o.padding, c->p, sizeof o.padding);
        memcpy(o.output_padding, c->op, sizeof o.output_padding);
        memcpy(o.dilation, c->d, sizeof o.dilation);
        o.groups = G;
        y = tg_conv_transpose3d(x, w, b, &o);
    } else {
        tg_conv3d_opts o;
        memcpy(o.stride, c->s, sizeof o.stride);
        memcpy(o.padding, c->p, sizeof o.padding);
        memcpy(o.dilation, c->d, sizeof o.dilation);
        o.groups = G;
        y = tg_conv3d(x, w, b, &o);
    }
    if (!y) {
        tt_fail(__FILE__, __LINE__, "%s: failed: %s", what, tg_last_error());
        return;
    }
    int64_t ys[5] = {xs[0], O, 0, 0, 0};
    for (int i = 0; i < 3; i++) {
        int64_t span = c->d[i] * (k[i] - 1) + 1;
        ys[2 + i] = transposed ? (xs[2 + i] - 1) * c->s[i] - 2 * c->p[i] + span + c->op[i]
                               : (xs[2 + i] + 2 * c->p[i] - span) / c->s[i] + 1;
    }
    tt_check_shape(y, ys, 5, what, __FILE__, __LINE__);
    tg_tensor *dy = rnd(dt, 5, tg_shape(y));
    double *bv = b ? values(b) : NULL, *dyv = values(dy);
    double *yr = calloc((size_t)tg_numel(y), sizeof *yr);
    double *dxr = calloc((size_t)tg_numel(x), sizeof *dxr);
    double *dwr = calloc((size_t)tg_numel(w), sizeof *dwr);
    naive(transposed, x, w, bv, dyv, c, ys, yr, dxr, dwr);
    tt_check_tensor(y, yr, tol, what, __FILE__, __LINE__);
    tg_tensor *in[2] = {x, w}, *g[2] = {NULL, NULL};
    CHECK_OK(tg_autograd_grad(1, &y, &dy, 2, in, g, false, false));
    tt_check_tensor(g[0], dxr, tol, what, __FILE__, __LINE__);
    tt_check_tensor(g[1], dwr, tol * 10, what, __FILE__, __LINE__);
    tg_release(g[0]);
    tg_release(g[1]);
    free(bv);
    free(dyv);
    free(yr);
    free(dxr);
    free(dwr);
}

static void test_conv_grid(void)
{
    static const conv_case cases[] = {
        {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 1},
        {{2, 2, 2}, {1, 1, 1}, {1, 0, 1}, {1, 1, 1}, 1},
        {{1, 2, 1}, {0, 1, 2}, {0, 1, 0}, {2, 1, 1}, 2},
        {{2, 1, 3}, {1, 0, 1}, {0, 0, 2}, {1, 2, 1}, 4},
        {{3, 3, 2}, {2, 1, 0}, {2, 1, 1}, {1, 1, 2}, 2},
    };
    static const int64_t kernels[][3] = {{2, 2, 2}, {3, 1, 2}, {1, 1, 1}};
    char what[96];
    for (int d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int k = 0; k < 3; k++)
                for (int t = 0; t < 2; t++) {
                    tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
                    conv_case cc = cases[c];
                    if (!t)
                        memset(cc.op, 0, sizeof cc.op);
                    snprintf(what, sizeof what, "%s%s case %zu kernel %d",
                             t ? "transposed " : "", tg_dtype_name(dt), c, k);
                    check_conv(dt, t, (int64_t[]){2, 4, 5, 4, 6}, 8, kernels[k], &cc,
                               (c + (size_t)k) % 2 == 0, what);
                }
}

/* more output depth slices than one vol2col block holds, and a batch */
static void test_blocks(void)
{
    conv_case c = {{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1};
    check_conv(TG_FLOAT32, false, (int64_t[]){2, 8, 10, 40, 40}, 4, (int64_t[]){3, 3, 3}, &c,
               true, "blocks");
    check_conv(TG_FLOAT64, true, (int64_t[]){1, 8, 10, 40, 40}, 4, (int64_t[]){3, 3, 3}, &c,
               false, "transposed blocks");
}

static tg_tensor *f_conv(int n, tg_tensor *const *in, void *user)
{
    return tg_conv3d(in[0], in[1], n > 2 ? in[2] : NULL, user);
}

static tg_tensor *f_convt(int n, tg_tensor *const *in, void *user)
{
    return tg_conv_transpose3d(in[0], in[1], n > 2 ? in[2] : NULL, user);
}

/* first derivatives of sum(conv3d(x, w)^2), differentiated again */
static tg_tensor *f_conv_grad(int n, tg_tensor *const *in, void *user)
{
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *y = tg_conv3d(in[0], in[1], NULL, user);
    tg_tensor *loss = tg_sum(tg_mul(y, y), 0, NULL, false);
    tg_tensor *g[2] = {NULL, NULL};
    tg_status s = tg_autograd_grad(1, &loss, NULL, n, in, g, true, true);
    tg_tensor *r = s == TG_OK ? tg_add(tg_sum(g[0], 0, NULL, false),
                                       tg_sum(tg_mul(g[1], g[1]), 0, NULL, false))
                              : NULL;
    tg_set_grad_enabled(was);
    tg_release(g[0]);
    tg_release(g[1]);
    return r;
}

static void test_gradcheck(void)
{
    tg_conv3d_opts o = {{2, 1, 1}, {1, 0, 1}, {1, 2, 1}, 2};
    tg_tensor *in[3] = {tt_rand(5, (int64_t[]){1, 2, 3, 4, 3}, -1, 1),
                        tt_rand(5, (int64_t[]){2, 1, 2, 2, 2}, -1, 1),
                        tt_rand(1, (int64_t[]){2}, -1, 1)};
    CHECK_GRADCHECK(f_conv, &o, 3, in);
    tg_conv_transpose3d_opts ot = {{2, 1, 2}, {1, 0, 0}, {1, 0, 1}, {1, 1, 2}, 2};
    tg_tensor *it[3] = {tt_rand(5, (int64_t[]){1, 2, 2, 3, 2}, -1, 1),
                        tt_rand(5, (int64_t[]){2, 1, 2, 2, 2}, -1, 1),
                        tt_rand(1, (int64_t[]){2}, -1, 1)};
    CHECK_GRADCHECK(f_convt, &ot, 3, it);
    tg_conv3d_opts og = {{1, 2, 1}, {0, 1, 0}, {1, 1, 1}, 1};
    tg_tensor *ig[2] = {tt_rand(5, (int64_t[]){1, 2, 3, 3, 3}, -1, 1),
                        tt_rand(5, (int64_t[]){2, 2, 2, 2, 2}, -1, 1)};
    CHECK_GRADCHECK(f_conv_grad, &og, 2, ig);
}

/* ---- pooling ------------------------------------------------------------------------- */
typedef struct pool_case {
    tg_pool3d_opts o;
    bool max;
} pool_case;

static int64_t pool_len(int64_t L, int k, int s, int p, bool ceil_mode)
{
    int64_t num = L + 2 * p - k, n = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
    if (ceil_mode && (n - 1) * s >= L + p)
        n--;
    return n;
}

static tg_tensor *f_pool(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const pool_case *p = user;
    return p->max ? tg_max_pool3d(in[0], &p->o) : tg_avg_pool3d(in[0], &p->o);
}

static void test_pool_grid(void)
{
    static const int cases[][11] = {
        /* kernel[3] stride[3] padding[3] ceil include_pad */
        {2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 1}, {3, 2, 3, 2, 1, 2, 1, 1, 1, 0, 1},
        {3, 3, 2, 2, 2, 1, 1, 0, 1, 1, 0}, {2, 3, 3, 1, 2, 3, 1, 1, 0, 1, 1},
        {1, 2, 2, 1, 1, 1, 0, 1, 1, 0, 0}};
    const int64_t in[3] = {5, 6, 7};
    char what[64];
    for (int d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int max = 0; max < 2; max++) {
                const int *v = cases[c];
                pool_case pc = {{{v[0], v[1], v[2]}, {v[3], v[4], v[5]}, {v[6], v[7], v[8]},
                                 v[9] != 0, v[10] != 0}, max != 0};
                tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
                tg_tensor *x = rnd(dt, 5, (int64_t[]){2, 3, in[0], in[1], in[2]});
                tg_set_requires_grad(x, true);
                tg_tensor *y = f_pool(1, &x, &pc);
                snprintf(what, sizeof what, "%s %s case %zu", max ? "max" : "avg",
                         tg_dtype_name(dt), c);
                int64_t os[3];
                for (int i = 0; i < 3; i++)
                    os[i] = pool_len(in[i], v[i], v[3 + i], v[6 + i], v[9]);
                tt_check_shape(y, (int64_t[]){2, 3, os[0], os[1], os[2]}, 5, what, __FILE__,
                               __LINE__);
                if (!y)
                    continue;
                /* the reference and its adjoint for a random dy */
                tg_tensor *dy = rnd(dt, 5, tg_shape(y));
                double *xv = values(x), *dyv = values(dy);
                int64_t vin = in[0] * in[1] * in[2], vout = os[0] * os[1] * os[2];
                double *yr = calloc((size_t)(6 * vout), sizeof *yr);
                double *dxr = calloc((size_t)(6 * vin), sizeof *dxr);
                for (int64_t p = 0; p < 6; p++)
                    for (int64_t o = 0; o < vout; o++) {
                        int64_t oz = o / (os[1] * os[2]), oy = o / os[2] % os[1], ox = o % os[2];
                        int64_t a[3], e[3], div = 1, cells = 1, t[3] = {oz, oy, ox};
                        for (int i = 0; i < 3; i++) {
                            a[i] = t[i] * v[3 + i] - v[6 + i];
                            e[i] = a[i] + v[i];
                            div *= (e[i] < in[i] + v[6 + i] ? e[i] : in[i] + v[6 + i]) - a[i];
                            a[i] = a[i] < 0 ? 0 : a[i];
                            e[i] = e[i] < in[i] ? e[i] : in[i];
                            cells *= e[i] - a[i];
                        }
                        double acc = max ? -INFINITY : 0;
                        int64_t best = -1;
                        for (int64_t z = a[0]; z < e[0]; z++)
                            for (int64_t yy = a[1]; yy < e[1]; yy++)
                                for (int64_t xx = a[2]; xx < e[2]; xx++) {
                                    int64_t i = p * vin + (z * in[1] + yy) * in[2] + xx;
                                    if (max && xv[i] > acc)
                                        best = i;
                                    acc = max ? fmax(acc, xv[i]) : acc + xv[i];
                                }
                        double dv = v[10] ? (double)div : (double)cells;
                        yr[p * vout + o] = max ? acc : acc / dv;
                        for (int64_t z = a[0]; !max && z < e[0]; z++)
                            for (int64_t yy = a[1]; yy < e[1]; yy++)
                                for (int64_t xx = a[2]; xx < e[2]; xx++)
                                    dxr[p * vin + (z * in[1] + yy) * in[2] + xx] +=
                                        dyv[p * vout + o] / dv;
                        if (max)
                            dxr[best] += dyv[p * vout + o];
                    }
                double tol = dt == TG_FLOAT32 ? 1e-6 : 1e-14;
                tt_check_tensor(y, yr, tol, what, __FILE__, __LINE__);
                tg_tensor *g = NULL;
                CHECK_OK(tg_autograd_grad(1, &y, &dy, 1, &x, &g, false, false));
                tt_check_tensor(g, dxr, tol, what, __FILE__, __LINE__);
                tg_release(g);
                free(xv);
                free(dyv);
                free(yr);
                free(dxr);
                if (d) {
                    tg_tensor *xs = tt_rand(5, (int64_t[]){1, 2, 4, 3, 4}, -1, 1);
                    CHECK_GRADCHECK(f_pool, &pc, 1, &xs);
                }
            }
}

/* ---- graph mode ---------------------------------------------------------------------- */
static tg_tensor *chain(tg_tensor *const *in)
{
    tg_tensor *h = tg_conv3d(in[0], in[1], NULL, &(tg_conv3d_opts){{1, 1, 1}, {1, 1, 1},
                                                                   {1, 1, 1}, 1});
    h = tg_max_pool3d(tg_tanh(h), &(tg_pool3d_opts){{2, 2, 2}, {0, 0, 0}, {0, 1, 0}, true, 0});
    h = tg_conv_transpose3d(h, in[2], NULL, &(tg_conv_transpose3d_opts){{2, 2, 2}, {0, 0, 0},
                                                                         {1, 0, 1}, {1, 1, 1}, 1});
    return tg_avg_pool3d(h, &(tg_pool3d_opts){{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, false, false});
}

static tg_status traced(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = chain(in);
    return out[0] ? TG_OK : tg_last_status();
}

static void test_graph_mode(void)
{
    tg_tensor *in[3] = {rnd(TG_FLOAT64, 5, (int64_t[]){2, 2, 5, 4, 5}),
                        rnd(TG_FLOAT64, 5, (int64_t[]){3, 2, 3, 3, 3}),
                        rnd(TG_FLOAT64, 5, (int64_t[]){3, 2, 2, 2, 2})};
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
    tg_tensor *x = rnd(TG_FLOAT32, 5, (int64_t[]){1, 4, 3, 3, 3});
    tg_tensor *w = rnd(TG_FLOAT32, 5, (int64_t[]){2, 4, 2, 2, 2});
    CHECK_ERROR(tg_conv3d(rnd(TG_FLOAT32, 4, (int64_t[]){1, 4, 3, 3}), w, NULL, NULL),
                TG_ERR_SHAPE, "input must be 5-D");
    CHECK_ERROR(tg_conv3d(x, rnd(TG_FLOAT32, 5, (int64_t[]){2, 3, 2, 2, 2}), NULL, NULL),
                TG_ERR_SHAPE, "has 4 channels but weight");
    CHECK_ERROR(tg_conv3d(x, rnd(TG_FLOAT32, 5, (int64_t[]){2, 4, 4, 2, 2}), NULL, NULL),
                TG_ERR_SHAPE, "larger than the padded input");
    CHECK_ERROR(tg_conv3d(x, w, rnd(TG_FLOAT32, 1, (int64_t[]){3}), NULL), TG_ERR_SHAPE, "bias");
    CHECK_ERROR(tg_conv3d(x, w, NULL, &(tg_conv3d_opts){{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 3}),
                TG_ERR_SHAPE, "groups = 3 must divide");
    CHECK_ERROR(tg_conv3d(x, w, NULL, &(tg_conv3d_opts){{1, 0, 1}, {0, 0, 0}, {1, 1, 1}, 1}),
                TG_ERR_ARG, "stride");
    CHECK_ERROR(tg_conv3d(tg_cast(x, TG_INT64), w, NULL, NULL), TG_ERR_DTYPE, "int64");
    CHECK_ERROR(tg_conv3d(NULL, w, NULL, NULL), TG_ERR_ARG, "NULL");
    tg_tensor *wt = rnd(TG_FLOAT32, 5, (int64_t[]){4, 2, 2, 2, 2});
    CHECK_ERROR(tg_conv_transpose3d(x, wt, NULL, &(tg_conv_transpose3d_opts){
                    {2, 2, 2}, {0, 0, 0}, {0, 2, 0}, {1, 1, 1}, 1}),
                TG_ERR_ARG, "output_padding 2");
    /* output_padding 1 at stride 1 is allowed below dilation 2: the output grows by one */
    tg_tensor *grown = tg_conv_transpose3d(x, wt, NULL, &(tg_conv_transpose3d_opts){
                    {1, 1, 1}, {0, 0, 0}, {0, 1, 0}, {1, 2, 1}, 1});
    tg_tensor *plain = tg_conv_transpose3d(x, wt, NULL, &(tg_conv_transpose3d_opts){
                    {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 2, 1}, 1});
    CHECK(grown && plain && tg_shape(grown)[3] == tg_shape(plain)[3] + 1);
    CHECK_ERROR(tg_conv_transpose3d(x, rnd(TG_FLOAT32, 5, (int64_t[]){3, 2, 2, 2, 2}), NULL,
                                    NULL),
                TG_ERR_SHAPE, "channels");
    tg_pool3d_opts big = {{4, 2, 2}, {0, 0, 0}, {0, 0, 0}, false, false};
    CHECK_ERROR(tg_max_pool3d(x, &big), TG_ERR_SHAPE, "larger than the padded input");
    tg_pool3d_opts pad = {{2, 2, 2}, {0, 0, 0}, {0, 2, 0}, false, false};
    CHECK_ERROR(tg_avg_pool3d(x, &pad), TG_ERR_ARG, "at most half the kernel");
    CHECK_ERROR(tg_avg_pool3d(x, NULL), TG_ERR_ARG, "opts is NULL");
    CHECK_ERROR(tg_max_pool3d(rnd(TG_FLOAT32, 4, (int64_t[]){1, 3, 3, 3}), &big), TG_ERR_SHAPE,
                "5-D");
}

int main(void)
{
    RUN(test_conv_grid);
    RUN(test_blocks);
    RUN(test_gradcheck);
    RUN(test_pool_grid);
    RUN(test_graph_mode);
    RUN(test_errors);
    tg_generator_free(rng);
    return tt_finish();
}
