/* Forward-mode autodiff (Jacobian-vector products): for every op with a
 * JVP rule, in float64, J.v from tg_graph_jvp (tangents fed as
 * placeholders) and from eager tg_jvp (concrete tangents) against the full
 * Jacobian from reverse mode (tg_autograd_grad rows) times v, and against
 * central finite differences of fn along v; broadcasting, batched matmul,
 * composites, Hessian-vector products (forward over reverse, through the
 * backward ops), the pass's semantics, and errors. */
#include "autodiff/jvp.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define MAX_IO 8
#define REV_RTOL 1e-10
#define FD_EPS 1e-6
#define FD_TOL 1e-6

/* ---- helpers --------------------------------------------------------------------- */
/* a random tangent shaped like x (plain, no grad) */
static tg_tensor *vec(tg_tensor *x)
{
    tg_tensor *r = tt_rand(tg_ndim(x), tg_shape(x), -1, 1);
    return tg_detach(r);
}

static double *values(const tg_tensor *t)
{
    int64_t n = tg_numel(t);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    return v;
}

static double max_abs(const double *a, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fabs(a[i]) > m ? fabs(a[i]) : m;
    return m;
}

/* every |a - b| <= rtol * max(max|b|, floor): relative to the vector's size */
static void close_rel(const char *what, const char *against, int k, const double *a,
                      const double *b, int64_t n, double rtol, double floor,
                      const char *file, int line)
{
    double scale = max_abs(b, n);
    scale = scale > floor ? scale : floor;
    tt_checks++;
    for (int64_t e = 0; e < n; e++)
        if (!(fabs(a[e] - b[e]) <= rtol * scale)) {
            tt_fail(file, line, "%s: output %d element %lld: forward mode %.15g, %s %.15g",
                    what, k, (long long)e, a[e], against, b[e]);
            return;
        }
}

/* every |a - b| <= tol * max(1, |b|) */
static void close_fd(const char *what, int k, const double *a, const double *b,
                     int64_t n, double tol, const char *file, int line)
{
    tt_checks++;
    for (int64_t e = 0; e < n; e++)
        if (!(fabs(a[e] - b[e]) <= tol * (fabs(b[e]) > 1 ? fabs(b[e]) : 1))) {
            tt_fail(file, line, "%s: output %d element %lld: forward mode %.15g, "
                    "finite differences %.15g", what, k, (long long)e, a[e], b[e]);
            return;
        }
}

/* J.v of output k by reverse mode: one row of J per output element (a
 * one-hot seed through tg_autograd_grad), dotted with v */
static double *jv_reverse(tg_jvp_fn fn, void *user, int n_in, tg_tensor **x,
                          tg_tensor **v, int k, int64_t *n_el)
{
    tg_scope_begin();
    tg_tensor *ys[MAX_IO] = {0};
    fn(user, x, ys);
    tg_tensor *y = ys[k];
    int64_t n = tg_numel(y);
    *n_el = n;
    double *jv = calloc((size_t)(n ? n : 1), sizeof *jv);
    tg_tensor *wrt[MAX_IO];
    double *vv[MAX_IO];
    int which[MAX_IO], n_wrt = 0;
    for (int i = 0; i < n_in; i++)
        if (v[i] && tg_requires_grad(x[i])) {
            which[n_wrt] = i;
            vv[n_wrt] = values(v[i]);
            wrt[n_wrt++] = x[i];
        }
    double *onehot = calloc((size_t)(n ? n : 1), sizeof *onehot);
    for (int64_t e = 0; e < n && tg_requires_grad(y); e++) {
        tg_scope_begin();
        onehot[e] = 1;
        tg_tensor *seed = tt_tensor(tg_dtype_of(y), tg_ndim(y), tg_shape(y), onehot);
        onehot[e] = 0;
        tg_tensor *res[MAX_IO];
        CHECK_OK(tg_autograd_grad(1, &y, &seed, n_wrt, wrt, res, true, false));
        for (int w = 0; w < n_wrt; w++) {
            if (!res[w])
                continue;
            double *r = values(res[w]);
            for (int64_t j = 0; j < tg_numel(x[which[w]]); j++)
                jv[e] += r[j] * vv[w][j];
            free(r);
            tg_release(res[w]);
        }
        tg_scope_end();
    }
    for (int w = 0; w < n_wrt; w++)
        free(vv[w]);
    free(onehot);
    tg_scope_end();
    return jv;
}

/* output k of fn at x + s * v (eagerly, no tape) */
static double *eval_shifted(tg_jvp_fn fn, void *user, int n_in, tg_tensor **x,
                            tg_tensor **v, double s, int k)
{
    tg_scope_begin();
    tg_tensor *xs[MAX_IO], *ys[MAX_IO] = {0};
    tg_no_grad_begin();
    for (int i = 0; i < n_in; i++)
        xs[i] = v[i] ? tg_add(x[i], tg_mul_scalar(v[i], s)) : x[i];
    tg_no_grad_end();
    /* leaves again, for functions that differentiate (gradients as outputs) */
    for (int i = 0; i < n_in; i++)
        if (v[i] && tg_requires_grad(x[i]))
            tg_set_requires_grad(xs[i], true);
    fn(user, xs, ys);
    double *r = ys[k] ? values(ys[k]) : NULL;
    tg_scope_end();
    return r;
}

/* output k's tangent with dual tensors (eager forward mode,
 * tg_make_dual): fn run op by op on inputs that carry the tangents v;
 * NULL when it failed (reported). A missing tangent is zero. */
static double *eval_dual(tg_jvp_fn fn, void *user, int n_in, tg_tensor **x, tg_tensor **v,
                         int k, int64_t n, const char *what, const char *file, int line)
{
    tg_scope_begin();
    tg_tensor *xd[MAX_IO], *ys[MAX_IO] = {0};
    double *r = NULL;
    tt_checks++;
    if (tg_dual_level_enter() < 0) {
        tt_fail(file, line, "%s: dual level: %s", what, tg_last_error());
        tg_scope_end();
        return NULL;
    }
    bool ok = true;
    for (int i = 0; i < n_in && ok; i++)
        ok = (xd[i] = v[i] ? tg_make_dual(x[i], v[i]) : x[i]) != NULL;
    if (ok && fn(user, xd, ys) == TG_OK && ys[k]) {
        tg_tensor *t = tg_dual_tangent(ys[k]);
        r = t ? values(t) : calloc((size_t)(n ? n : 1), sizeof *r);
    } else
        tt_fail(file, line, "%s: with dual tensors: %s", what, tg_last_error());
    CHECK_OK(tg_dual_level_exit());
    tg_scope_end();
    return r;
}

/* forward mode four ways (graph with placeholder tangents, eager tg_jvp,
 * dual tensors) against reverse mode and finite differences; rev_rtol /
 * fd_tol 0 skip */
static void check_jvp_tol(const char *what, tg_jvp_fn fn, void *user, int n_in,
                          tg_tensor **x, tg_tensor **v, int n_out, double rev_rtol,
                          double fd_tol, const char *file, int line)
{
    tg_graph *g = tg_graph_new("jvp_test");
    tg_tensor *ph[MAX_IO], *ys[MAX_IO], *vt[MAX_IO] = {0}, *ty[MAX_IO];
    tg_tensor *feed_v[2 * MAX_IO], *feed_t[2 * MAX_IO], *fetch[2 * MAX_IO], *res[2 * MAX_IO];
    tt_checks++;
    if (tg_graph_trace(g, fn, user, n_in, x, NULL, ph, n_out, ys) != TG_OK) {
        tt_fail(file, line, "%s: trace failed: %s", what, tg_last_error());
        tg_graph_free(g);
        return;
    }
    int nf = 0;
    for (int i = 0; i < n_in; i++) {
        feed_v[nf] = ph[i];
        feed_t[nf++] = x[i];
    }
    for (int i = 0; i < n_in; i++)
        if (v[i]) {
            char name[32];
            snprintf(name, sizeof name, "tangent_%d", i);
            vt[i] = tg_placeholder(g, name, tg_dtype_of(v[i]), tg_ndim(v[i]), tg_shape(v[i]));
            feed_v[nf] = vt[i];
            feed_t[nf++] = v[i];
        }
    int before = tg_graph_num_nodes(g);
    tg_status s = tg_graph_jvp(g, n_in, ph, vt, n_out, ys, ty);
    tt_checks++;
    if (s != TG_OK) {
        tt_fail(file, line, "%s: tg_graph_jvp: %s", what, tg_last_error());
        tg_graph_free(g);
        return;
    }
    CHECK(tg_graph_num_nodes(g) >= before);
    CHECK_OK(tg_graph_verify(g));
    for (int k = 0; k < n_out; k++) {
        fetch[k] = ys[k];
        fetch[n_out + k] = ty[k];
        CHECK(tg_dtype_of(ty[k]) == tg_dtype_of(ys[k]));
        CHECK(tg_ndim(ty[k]) == tg_ndim(ys[k]) &&
              !memcmp(tg_shape(ty[k]), tg_shape(ys[k]), (size_t)tg_ndim(ys[k]) * 8));
    }
    tg_session *sess = tg_session_new(g);
    s = tg_session_run(sess, nf, feed_v, feed_t, 2 * n_out, fetch, res, 0, NULL);
    tt_checks++;
    if (s != TG_OK) {
        tt_fail(file, line, "%s: session run: %s", what, tg_last_error());
        tg_session_free(sess);
        tg_graph_free(g);
        return;
    }
    /* eager tg_jvp: the same graph built again, tangents as constants */
    tg_tensor *eo[MAX_IO], *et[MAX_IO];
    s = tg_jvp(fn, user, n_in, x, v, n_out, eo, et);
    tt_checks++;
    if (s != TG_OK)
        tt_fail(file, line, "%s: tg_jvp: %s", what, tg_last_error());
    for (int k = 0; k < n_out; k++) {
        int64_t n = tg_numel(res[k]), n_rev = 0;
        double *fw = values(res[n_out + k]);
        if (s == TG_OK) {
            double *eo_v = values(eo[k]), *et_v = values(et[k]), *go = values(res[k]);
            close_rel(what, "graph output (tg_jvp)", k, eo_v, go, n, 1e-14, 1e-300, file, line);
            close_rel(what, "graph tangent (tg_jvp)", k, et_v, fw, n, 1e-14, 1e-300, file, line);
            free(eo_v);
            free(et_v);
            free(go);
        }
        double *dual = eval_dual(fn, user, n_in, x, v, k, n, what, file, line);
        if (dual)
            close_rel(what, "graph tangent (dual tensors)", k, dual, fw, n, 1e-12, 1e-300,
                      file, line);
        free(dual);
        if (rev_rtol > 0) {
            double *rv = jv_reverse(fn, user, n_in, x, v, k, &n_rev);
            CHECK(n_rev == n);
            close_rel(what, "reverse mode", k, fw, rv, n, rev_rtol, 1e-12, file, line);
            free(rv);
        }
        if (fd_tol > 0) {
            double *p = eval_shifted(fn, user, n_in, x, v, FD_EPS, k);
            double *m = eval_shifted(fn, user, n_in, x, v, -FD_EPS, k);
            for (int64_t e = 0; e < n; e++)
                p[e] = (p[e] - m[e]) / (2 * FD_EPS);
            close_fd(what, k, fw, p, n, fd_tol, file, line);
            free(p);
            free(m);
        }
        free(fw);
    }
    tg_session_free(sess);
    tg_graph_free(g);
}
#define CHECK_JVP(what, fn, user, n_in, x, v, n_out) \
    check_jvp_tol(what, fn, user, n_in, x, v, n_out, REV_RTOL, FD_TOL, __FILE__, __LINE__)

/* ---- functions of several inputs, one output ----------------------------------------- */
typedef tg_tensor *(*fn_n)(tg_tensor *const *x);
static tg_status apply_n(void *user, tg_tensor *const *x, tg_tensor **y)
{
    y[0] = (*(fn_n *)user)(x);
    return y[0] ? TG_OK : tg_last_status();
}

/* checks f at random inputs of the given shapes with random tangents */
static void check_fn(const char *what, fn_n f, int n_in, tg_tensor **x)
{
    tg_tensor *v[MAX_IO];
    for (int i = 0; i < n_in; i++)
        v[i] = tg_dtype_of(x[i]) == TG_FLOAT64 ? vec(x[i]) : NULL;
    check_jvp_tol(what, apply_n, &f, n_in, x, v, 1, REV_RTOL, FD_TOL, __FILE__, __LINE__);
}

#define R(lo, hi, ...) \
    tt_rand((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
            (int64_t[]){__VA_ARGS__}, lo, hi)

/* ---- unary elementwise ---------------------------------------------------------------- */
typedef tg_tensor *(*op1)(tg_tensor *);
static tg_tensor *leaky(tg_tensor *x) { return tg_leaky_relu(x, 0.1); }
static tg_tensor *elu13(tg_tensor *x) { return tg_elu(x, 1.3); }
static tg_tensor *clamp_(tg_tensor *x) { return tg_clamp(x, -0.5, 0.4); }
static tg_tensor *celu07(tg_tensor *x) { return tg_celu(x, 0.7); }
static tg_tensor *hardtanh_(tg_tensor *x) { return tg_hardtanh(x, -0.5, 0.4); }
static tg_tensor *softshrink_(tg_tensor *x) { return tg_softshrink(x, 0.5); }
/* cast between float dtypes, and through an integer (a zero tangent) */
static tg_tensor *casts(tg_tensor *x)
{
    return tg_add(tg_mul_scalar(tg_cast(x, TG_FLOAT64), 2.0),
                  tg_cast(tg_cast(tg_mul_scalar(x, 3.0), TG_INT32), TG_FLOAT64));
}
/* zero-tangent ops next to a smooth one, so the output depends on x */
static tg_tensor *steps(tg_tensor *x)
{
    tg_tensor *s = tg_add(tg_add(tg_floor(x), tg_ceil(x)), tg_add(tg_round(x), tg_sign(x)));
    return tg_add(s, tg_mul(x, x));
}

static struct {
    const char *name;
    op1 f;
    double lo, hi;
} unary_cases[] = {
    {"neg", tg_neg, -1, 1},         {"abs", tg_abs, -1, 1},
    {"exp", tg_exp, -1, 1},         {"log", tg_log, 0.5, 2},
    {"sqrt", tg_sqrt, 0.5, 2},      {"rsqrt", tg_rsqrt, 0.5, 2},
    {"sin", tg_sin, -2, 2},         {"cos", tg_cos, -2, 2},
    {"tanh", tg_tanh, -2, 2},       {"sigmoid", tg_sigmoid, -3, 3},
    {"relu", tg_relu, -1, 1},       {"leaky_relu", leaky, -1, 1},
    {"elu", elu13, -1, 1},          {"gelu", tg_gelu, -2, 2},
    {"gelu tanh", tg_gelu_tanh, -2, 2},
    {"erf", tg_erf, -1.5, 1.5},     {"softplus", tg_softplus, -3, 3},
    {"clamp", clamp_, -1, 1},       {"floor ceil round sign", steps, -2, 2},
    {"hardswish", tg_hardswish, -5, 5},
    {"cast", casts, -2, 2},
    /* unary_math.c, unary_act.c */
    {"tan", tg_tan, -1.2, 1.2},     {"asin", tg_asin, -0.9, 0.9},
    {"acos", tg_acos, -0.9, 0.9},   {"atan", tg_atan, -3, 3},
    {"sinh", tg_sinh, -2, 2},       {"cosh", tg_cosh, -2, 2},
    {"asinh", tg_asinh, -3, 3},     {"acosh", tg_acosh, 1.2, 3},
    {"atanh", tg_atanh, -0.9, 0.9}, {"expm1", tg_expm1, -2, 2},
    {"log1p", tg_log1p, -0.5, 2},   {"log2", tg_log2, 0.5, 2},
    {"log10", tg_log10, 0.5, 2},    {"reciprocal", tg_reciprocal, 0.5, 2},
    {"square", tg_square, -2, 2},   {"softsign", tg_softsign, -3, 3},
    {"silu", tg_silu, -4, 4},       {"mish", tg_mish, -4, 4},
    {"logsigmoid", tg_logsigmoid, -4, 4}, {"celu", celu07, -2, 2},
    {"hardtanh", hardtanh_, -1, 1}, {"softshrink", softshrink_, -1.5, 1.5},
};

static tg_tensor *unary_apply(tg_tensor *const *x);
static op1 current_op1;
static tg_tensor *unary_apply(tg_tensor *const *x) { return current_op1(x[0]); }

static void test_unary(void)
{
    for (size_t i = 0; i < sizeof unary_cases / sizeof unary_cases[0]; i++) {
        current_op1 = unary_cases[i].f;
        tg_tensor *x[1] = {R(unary_cases[i].lo, unary_cases[i].hi, 3, 4)};
        check_fn(unary_cases[i].name, unary_apply, 1, x);
    }
}

/* ---- binary elementwise, broadcasting [3,1] with [4] ---------------------------------- */
typedef tg_tensor *(*op2)(tg_tensor *, tg_tensor *);
static op2 current_op2;
static tg_tensor *binary_apply(tg_tensor *const *x) { return current_op2(x[0], x[1]); }

static void test_binary(void)
{
    static const struct {
        const char *name;
        op2 f;
        double lo0, hi0, lo1, hi1;
    } cases[] = {
        {"add", tg_add, -1, 1, -1, 1},          {"sub", tg_sub, -1, 1, -1, 1},
        {"mul", tg_mul, -1, 1, -1, 1},          {"div", tg_div, -1, 1, 0.5, 2},
        {"pow", tg_pow, 0.5, 2, -1, 2},         {"maximum", tg_maximum, -1, 1, -1, 1},
        {"minimum", tg_minimum, -1, 1, -1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        current_op2 = cases[i].f;
        tg_tensor *x[2] = {R(cases[i].lo0, cases[i].hi0, 3, 1),
                           R(cases[i].lo1, cases[i].hi1, 4)};
        check_fn(cases[i].name, binary_apply, 2, x);
        /* the same shapes, and the other operand broadcast */
        tg_tensor *y[2] = {R(cases[i].lo0, cases[i].hi0, 4),
                           R(cases[i].lo1, cases[i].hi1, 2, 3, 4)};
        check_fn(cases[i].name, binary_apply, 2, y);
        /* a tangent on one side only: the lone term is expanded */
        for (int side = 0; side < 2; side++) {
            tg_tensor *v[2] = {vec(x[0]), vec(x[1])};
            v[side] = NULL;
            CHECK_JVP(cases[i].name, apply_n, &(fn_n){binary_apply}, 2, x, v, 1);
        }
    }
    /* maximum at ties: the mean of both tangents, as reverse mode splits */
    current_op2 = tg_maximum;
    tg_tensor *a = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, 3});
    tg_tensor *b = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 5, 0});
    tg_tensor *va = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 1, 1});
    tg_tensor *vb = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){3, 3, 3});
    tg_set_requires_grad(a, true);
    tg_set_requires_grad(b, true);
    tg_tensor *x[2] = {a, b}, *v[2] = {va, vb}, *out, *t;
    CHECK_OK(tg_jvp(apply_n, &(fn_n){binary_apply}, 2, x, v, 1, &out, &t));
    CHECK_TENSOR(t, ((double[]){2, 3, 1}), 0);
    check_jvp_tol("maximum ties", apply_n, &(fn_n){binary_apply}, 2, x, v, 1, REV_RTOL, 0,
                  __FILE__, __LINE__);
    /* pow with exponent 0 at base 0: the base's term is 0, not 0 * inf */
    current_op2 = tg_pow;
    tg_tensor *p0[2] = {tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){0, 2}),
                        tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){0, 0})};
    tg_tensor *pv[2] = {va, NULL};
    pv[0] = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 1});
    CHECK_OK(tg_jvp(apply_n, &(fn_n){binary_apply}, 2, p0, pv, 1, &out, &t));
    CHECK_TENSOR(t, ((double[]){0, 0}), 0);
}

static tg_tensor *where_fn(tg_tensor *const *x)
{
    return tg_where(tg_gt(x[2], tg_scalar(TG_FLOAT64, 0)), x[0], x[1]);
}

static void test_where(void)
{
    tg_tensor *x[3] = {R(-1, 1, 3, 1), R(-1, 1, 4), R(-1, 1, 3, 4)};
    check_fn("where", where_fn, 3, x); /* the condition's tangent goes nowhere */
    tg_tensor *v[3] = {NULL, vec(x[1]), NULL};
    CHECK_JVP("where (one branch)", apply_n, &(fn_n){where_fn}, 3, x, v, 1);
}

/* ---- views and copies ------------------------------------------------------------------ */
static tg_tensor *views(tg_tensor *const *x) /* x [2,3,4] */
{
    tg_tensor *t = tg_transpose(x[0], 0, 2);                     /* [4,3,2] */
    tg_tensor *r = tg_reshape(t, 2, (int64_t[]){6, 4});          /* a copy */
    tg_tensor *p = tg_permute(x[0], (int[]){1, 0, 2});           /* [3,2,4] */
    tg_tensor *s = tg_slice(tg_flatten(p, 0, 1), 0, 1, 6, 2);    /* [3,4] */
    tg_tensor *u = tg_squeeze(tg_unsqueeze(s, 1), 1);
    tg_tensor *e = tg_expand(tg_slice(u, 1, 0, 1, 1), 2, (int64_t[]){3, 4});
    tg_tensor *c = tg_clone(tg_transpose(r, 0, 1));              /* [4,6] */
    tg_tensor *q = tg_view(tg_contiguous(c), 2, (int64_t[]){6, 4});
    tg_tensor *z = tg_add(tg_slice(q, 0, 0, 3, 1), tg_mul(u, e));
    return tg_mul(z, tg_sin(z));
}

static void test_views(void)
{
    tg_tensor *x[1] = {R(-1, 1, 2, 3, 4)};
    check_fn("views", views, 1, x);
}

/* ---- reductions ------------------------------------------------------------------------ */
static tg_tensor *sums(tg_tensor *const *x) /* [3,4] */
{
    tg_tensor *a = tg_sum(tg_mul(x[0], x[0]), 1, (int[]){1}, false);       /* [3] */
    tg_tensor *b = tg_mean(tg_exp(x[0]), 1, (int[]){0}, true);             /* [1,4] */
    tg_tensor *c = tg_sum_to(tg_sin(x[0]), 2, (int64_t[]){1, 4});          /* [1,4] */
    tg_tensor *d = tg_mean(x[0], 0, NULL, false);                          /* [] */
    return tg_add(tg_add(tg_unsqueeze(a, 1), tg_mul(b, c)), d);
}

static tg_tensor *extremes(tg_tensor *const *x) /* [3,4] */
{
    tg_tensor *a = tg_max(x[0], 1, (int[]){0}, true);   /* [1,4] */
    tg_tensor *b = tg_min(x[0], 1, (int[]){1}, false);  /* [3] */
    tg_tensor *c = tg_max(x[0], 0, NULL, false);        /* [] */
    return tg_add(tg_mul(a, tg_unsqueeze(b, 1)), c);
}

static tg_tensor *stats(tg_tensor *const *x) /* [3,4] */
{
    tg_tensor *a = tg_var(x[0], 1, (int[]){1}, 1, true);          /* [3,1] */
    tg_tensor *b = tg_std(x[0], 1, (int[]){0}, 0, false);         /* [4] */
    tg_tensor *c = tg_logsumexp(x[0], 1, (int[]){-1}, true);      /* [3,1] */
    tg_tensor *d = tg_std(x[0], 0, NULL, 1, false);               /* [] */
    return tg_add(tg_add(tg_mul(a, b), c), d);
}

static void test_reductions(void)
{
    tg_tensor *x[1] = {R(-1, 1, 3, 4)};
    check_fn("sum mean sum_to", sums, 1, x);
    check_fn("max min", extremes, 1, x);
    check_fn("var std logsumexp", stats, 1, x);
}

/* ---- linear algebra ---------------------------------------------------------------------- */
static tg_tensor *mm(tg_tensor *const *x) { return tg_matmul(x[0], x[1]); }
static tg_tensor *gemm_ab(tg_tensor *const *x) /* a [4,3]^T b [5,4]^T c [5] */
{
    return tg_gemm(x[0], x[1], x[2], 0.7, 1.3, true, true);
}
static tg_tensor *gemm_plain(tg_tensor *const *x) /* a [3,4] b [4,5] */
{
    return tg_gemm(x[0], x[1], NULL, 1.0, 0.0, false, false);
}
static tg_tensor *linear3(tg_tensor *const *x) { return tg_linear(x[0], x[1], x[2]); }

static void test_matmul(void)
{
    tg_tensor *a[2] = {R(-1, 1, 2, 3), R(-1, 1, 3, 4)};
    check_fn("matmul 2-D", mm, 2, a);
    tg_tensor *b[2] = {R(-1, 1, 2, 1, 3, 4), R(-1, 1, 5, 4, 2)};
    check_fn("matmul batched, broadcast", mm, 2, b);
    tg_tensor *c[2] = {R(-1, 1, 3), R(-1, 1, 2, 3, 4)};
    check_fn("matmul 1-D @ batched", mm, 2, c);
    tg_tensor *d[2] = {R(-1, 1, 2, 3, 4), R(-1, 1, 4)};
    check_fn("matmul batched @ 1-D", mm, 2, d);
    tg_tensor *e[2] = {R(-1, 1, 4), R(-1, 1, 4)};
    check_fn("matmul dot", mm, 2, e);
    tg_tensor *v[2] = {NULL, vec(b[1])};
    CHECK_JVP("matmul, b's tangent only", apply_n, &(fn_n){mm}, 2, b, v, 1);
}

static void test_gemm_linear(void)
{
    tg_tensor *a[3] = {R(-1, 1, 4, 3), R(-1, 1, 5, 4), R(-1, 1, 5)};
    check_fn("gemm transposed with c", gemm_ab, 3, a);
    tg_tensor *v[3] = {NULL, NULL, vec(a[2])};
    CHECK_JVP("gemm, c's tangent only", apply_n, &(fn_n){gemm_ab}, 3, a, v, 1);
    tg_tensor *b[2] = {R(-1, 1, 3, 4), R(-1, 1, 4, 5)};
    check_fn("gemm", gemm_plain, 2, b);
    tg_tensor *c[3] = {R(-1, 1, 2, 3, 4), R(-1, 1, 5, 4), R(-1, 1, 5)};
    check_fn("linear 3-D", linear3, 3, c);
}

/* ---- a composite: an MLP (matmul + tanh + sum), two outputs ------------------------------- */
static tg_status mlp(void *user, tg_tensor *const *p, tg_tensor **out)
{
    (void)user; /* x [4,3] w1 [3,5] b1 [5] w2 [5,2] */
    tg_tensor *h = tg_tanh(tg_add(tg_matmul(p[0], p[1]), p[2]));
    out[0] = h;
    out[1] = tg_sum(tg_matmul(h, p[3]), 0, NULL, false);
    return out[1] ? TG_OK : tg_last_status();
}

static void test_mlp(void)
{
    tg_tensor *p[4] = {R(-1, 1, 4, 3), R(-1, 1, 3, 5), R(-1, 1, 5), R(-1, 1, 5, 2)};
    tg_tensor *v[4] = {vec(p[0]), vec(p[1]), vec(p[2]), vec(p[3])};
    CHECK_JVP("mlp", mlp, NULL, 4, p, v, 2);
    tg_tensor *w[4] = {NULL, vec(p[1]), NULL, NULL};
    CHECK_JVP("mlp, one weight", mlp, NULL, 4, p, w, 2);
}

/* ---- nn ops ----------------------------------------------------------------------------------- */
static tg_tensor *softmaxes(tg_tensor *const *x) /* [3,4] */
{
    return tg_add(tg_mul(tg_softmax(x[0], 1), x[0]), tg_log_softmax(x[0], 0));
}
static tg_tensor *ce(tg_tensor *const *x) /* logits [4,5], labels int64 [4] */
{
    return tg_cross_entropy(x[0], x[1], TG_REDUCTION_MEAN);
}
static tg_tensor *ce_none(tg_tensor *const *x) /* logits [2,3,2], labels [2,2] */
{
    return tg_cross_entropy(x[0], x[1], TG_REDUCTION_NONE);
}
static tg_tensor *losses(tg_tensor *const *x) /* p [3,4] t [3,4] */
{
    return tg_add(tg_bce_with_logits(x[0], x[1], TG_REDUCTION_SUM),
                  tg_mse_loss(x[0], x[1], TG_REDUCTION_MEAN));
}
static tg_tensor *conv(tg_tensor *const *x) /* x [2,2,5,5] w [3,2,3,3] b [3] */
{
    tg_conv2d_opts o = {.stride = {2, 1}, .padding = {1, 1}, .dilation = {1, 1}, .groups = 1};
    return tg_conv2d(x[0], x[1], x[2], &o);
}
static tg_tensor *conv_grouped(tg_tensor *const *x) /* x [1,4,4,4] w [2,2,2,2] */
{
    tg_conv2d_opts o = {.stride = {1, 1}, .padding = {0, 0}, .dilation = {2, 1}, .groups = 2};
    return tg_conv2d(x[0], x[1], NULL, &o);
}
static tg_tensor *pools(tg_tensor *const *x) /* [2,2,4,4] */
{
    tg_pool2d_opts mp = {.kernel = {2, 2}};
    tg_pool2d_opts ap = {.kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1}};
    tg_tensor *a = tg_max_pool2d(x[0], &mp);                  /* [2,2,2,2] */
    tg_tensor *b = tg_avg_pool2d(tg_mul(x[0], x[0]), &ap);    /* [2,2,4,4] */
    return tg_add(tg_sum(b, 2, (int[]){2, 3}, true), a);
}

static void test_nn_ops(void)
{
    tg_tensor *x[1] = {R(-2, 2, 3, 4)};
    check_fn("softmax log_softmax", softmaxes, 1, x);
    tg_tensor *c[2] = {R(-2, 2, 4, 5), tt_tensor(TG_INT64, 1, (int64_t[]){4},
                                                 (double[]){1, 0, 4, 2})};
    check_fn("cross_entropy (log_softmax, nll_loss)", ce, 2, c);
    tg_tensor *c3[2] = {R(-2, 2, 2, 3, 2), tt_tensor(TG_INT64, 2, (int64_t[]){2, 2},
                                                     (double[]){2, 0, 1, 1})};
    check_fn("cross_entropy spatial", ce_none, 2, c3);
    tg_tensor *l[2] = {R(-2, 2, 3, 4), R(0, 1, 3, 4)};
    check_fn("bce_with_logits mse_loss", losses, 2, l);
    tg_tensor *k[3] = {R(-1, 1, 2, 2, 5, 5), R(-1, 1, 3, 2, 3, 3), R(-1, 1, 3)};
    check_fn("conv2d", conv, 3, k);
    tg_tensor *v[3] = {NULL, NULL, vec(k[2])};
    CHECK_JVP("conv2d, bias tangent only", apply_n, &(fn_n){conv}, 3, k, v, 1);
    tg_tensor *kg[2] = {R(-1, 1, 1, 4, 4, 4), R(-1, 1, 2, 2, 2, 2)};
    check_fn("conv2d grouped dilated", conv_grouped, 2, kg);
    tg_tensor *p[1] = {R(-1, 1, 2, 2, 4, 4)};
    check_fn("max_pool2d avg_pool2d", pools, 1, p);
}

/* ---- array ops --------------------------------------------------------------------------------- */
static tg_tensor *joins(tg_tensor *const *x) /* a [2,3] b [2,2] c [2,3] */
{
    tg_tensor *cat = tg_concat(3, (tg_tensor *[]){x[0], x[1], x[2]}, 1);      /* [2,8] */
    tg_tensor *st = tg_stack(2, (tg_tensor *[]){x[0], x[2]}, 0);              /* [2,2,3] */
    tg_tensor *parts[2];
    if (tg_split(cat, 1, 2, (int64_t[]){4, 4}, parts) != TG_OK)
        return NULL;
    tg_tensor *p = tg_pad(parts[1], 2, (int64_t[]){1, 0}, 1.5);               /* [3,4] */
    tg_tensor *t = tg_tile(x[1], 2, (int64_t[]){1, 2});                       /* [2,4] */
    return tg_add(tg_sum(tg_mul(st, st), 0, NULL, false),
                  tg_add(tg_sum(tg_mul(p, p), 0, NULL, false),
                         tg_sum(tg_mul(t, parts[0]), 0, NULL, false)));
}
static tg_tensor *indexing(tg_tensor *const *x) /* w [5,3], idx int64 [2,2], g int64 [2,3] */
{
    tg_tensor *e = tg_embedding(x[0], x[1]);                          /* [2,2,3] */
    tg_tensor *s = tg_index_select(x[0], 0, tg_reshape(x[1], 1, (int64_t[]){4}));
    tg_tensor *g = tg_gather(x[0], 0, x[2]);                          /* [2,3] */
    return tg_add(tg_sum(tg_mul(e, e), 1, (int[]){0}, false),
                  tg_mul(tg_sum(s, 1, (int[]){0}, true), g));
}

static void test_array_ops(void)
{
    tg_tensor *x[3] = {R(-1, 1, 2, 3), R(-1, 1, 2, 2), R(-1, 1, 2, 3)};
    check_fn("concat stack split pad tile", joins, 3, x);
    tg_tensor *v[3] = {vec(x[0]), NULL, NULL};
    CHECK_JVP("concat, one tangent", apply_n, &(fn_n){joins}, 3, x, v, 1);
    tg_tensor *i[3] = {R(-1, 1, 5, 3), tt_tensor(TG_INT64, 2, (int64_t[]){2, 2},
                                                 (double[]){4, 1, 1, 0}),
                       tt_tensor(TG_INT64, 2, (int64_t[]){2, 3}, (double[]){0, 4, 2, 3, 3, 1})};
    check_fn("embedding index_select gather", indexing, 3, i);
}

/* ---- mixed dtypes: tangents follow each value's dtype ------------------------------------------ */
static tg_tensor *mixed(tg_tensor *const *x) /* x float32 [3], y float64 [3] */
{
    return tg_mul(tg_exp(x[0]), tg_cast(tg_sin(tg_mul(x[0], x[1])), TG_FLOAT32));
}

static void test_float32(void)
{
    tg_tensor *x32 = tg_cast(tg_detach(R(-1, 1, 3)), TG_FLOAT32);
    tg_set_requires_grad(x32, true);
    tg_tensor *x[2] = {x32, R(-1, 1, 3)};
    tg_tensor *v[2] = {tg_cast(vec(x[1]), TG_FLOAT32), vec(x[1])};
    check_jvp_tol("float32/float64", apply_n, &(fn_n){mixed}, 2, x, v, 1, 1e-5, 0,
                  __FILE__, __LINE__);
    tg_tensor *out, *t;
    CHECK_OK(tg_jvp(apply_n, &(fn_n){mixed}, 2, x, v, 1, &out, &t));
    CHECK(tg_dtype_of(t) == TG_FLOAT32);
}

/* ---- Hessian-vector products: forward over reverse ------------------------------------------------ */
/* Functions whose outputs are gradients: symbolic in a graph
 * (tg_graph_gradients), eager and differentiable again otherwise
 * (tg_autograd_grad with create_graph). So CHECK_JVP compares the JVP of
 * the backward nodes (H v) with reverse over reverse and with finite
 * differences of the gradient, and the backward ops' rules run. */
typedef tg_tensor *(*loss_fn)(tg_tensor *const *p);
typedef struct gspec {
    loss_fn f;
    int n_diff; /* gradients with respect to the first n_diff inputs */
} gspec;

static tg_status grads_of(const gspec *gs, tg_tensor *const *x, tg_tensor **out)
{
    tg_tensor *l = gs->f(x), *r[MAX_IO];
    if (!l)
        return tg_last_status();
    if (tg_is_symbolic(l))
        return tg_graph_gradients(tg_tensor_graph(l), 1, &l, NULL, gs->n_diff, x, out);
    tg_status s = tg_autograd_grad(1, &l, NULL, gs->n_diff, x, r, true, true);
    for (int i = 0; i < gs->n_diff; i++) {
        out[i] = s == TG_OK ? tg_clone(r[i]) : NULL; /* into the current scope */
        if (s == TG_OK)
            tg_release(r[i]);
    }
    return s;
}

static tg_status grad_apply(void *user, tg_tensor *const *x, tg_tensor **out)
{
    return grads_of(user, x, out);
}

static tg_tensor *mlp_relu_loss(tg_tensor *const *p) /* x [4,3] w1 [5,3] b1 [5] w2 [2,5] t [4,2] */
{
    tg_tensor *h = tg_relu(tg_linear(p[0], p[1], p[2]));
    tg_tensor *y = tg_tanh(tg_linear(h, p[3], NULL));
    return tg_add(tg_mse_loss(y, p[4], TG_REDUCTION_MEAN),
                  tg_sum(tg_mul(tg_sigmoid(tg_slice(h, 1, 0, 5, 2)), tg_slice(h, 1, 1, 4, 1)),
                         0, NULL, false));
}

/* both GELU forms: their gradients are gelu_grad and gelu_tanh_grad */
static tg_tensor *gelu_loss(tg_tensor *const *p) /* x [3,4] t [3,4] */
{
    tg_tensor *y = tg_add(tg_gelu(p[0]), tg_mul(tg_gelu_tanh(p[0]), p[0]));
    return tg_sum(tg_mul(y, p[1]), 0, NULL, false);
}

static tg_tensor *cnn_loss(tg_tensor *const *p) /* x [2,1,6,6] w [2,1,3,3] b [2] fc [3,8] labels */
{
    tg_pool2d_opts po = {.kernel = {2, 2}};
    tg_conv2d_opts co = {.stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1}, .groups = 1};
    tg_tensor *h = tg_max_pool2d(tg_elu(tg_conv2d(p[0], p[1], p[2], &co), 1.0), &po);
    h = tg_avg_pool2d(h, &po);                                        /* [2,2,1,1] */
    h = tg_flatten(tg_tile(h, 4, (int64_t[]){1, 1, 2, 2}), 1, 3);     /* [2,8] */
    return tg_cross_entropy(tg_linear(h, p[3], NULL), p[4], TG_REDUCTION_MEAN);
}

/* backward: index_add (embedding, index_select), scatter_add (gather) */
static tg_tensor *index_loss(tg_tensor *const *p) /* w [5,3] idx [2,2] g [2,3] */
{
    tg_tensor *e = tg_tanh(tg_embedding(p[0], p[1]));
    tg_tensor *s = tg_index_select(p[0], 0, tg_reshape(p[1], 1, (int64_t[]){4}));
    tg_tensor *g = tg_gather(p[0], 0, p[2]);
    return tg_add(tg_sum(tg_mul(e, e), 0, NULL, false),
                  tg_add(tg_sum(tg_mul(g, tg_mul(g, g)), 0, NULL, false),
                         tg_sum(tg_exp(s), 0, NULL, false)));
}

/* nll_loss_grad's incoming gradient depends on b */
static tg_tensor *weighted_nll(tg_tensor *const *p) /* x [3,4] b [3] labels [3] */
{
    tg_tensor *l = tg_cross_entropy(p[0], p[2], TG_REDUCTION_NONE);
    return tg_sum(tg_mul(l, tg_sigmoid(p[1])), 0, NULL, false);
}

/* the gradient of a gradient: max_pool2d_grad's own gradient is
 * max_pool2d_select, here with a tangent */
static tg_tensor *pool_loss(tg_tensor *const *p) /* x [1,2,4,4] */
{
    tg_pool2d_opts po = {.kernel = {2, 2}};
    tg_tensor *m = tg_max_pool2d(p[0], &po);
    return tg_sum(tg_mul(m, tg_mul(m, m)), 0, NULL, false);
}
static tg_tensor *pool_grad_dot(tg_tensor *const *p)
{
    gspec inner = {pool_loss, 1};
    tg_tensor *g;
    if (grads_of(&inner, p, &g) != TG_OK)
        return NULL;
    return tg_sum(tg_mul(g, tg_sin(p[0])), 0, NULL, false);
}

static void check_grads(const char *what, loss_fn f, int n_diff, int n, tg_tensor **p)
{
    gspec gs = {f, n_diff};
    tg_tensor *v[MAX_IO];
    for (int i = 0; i < n; i++)
        v[i] = tg_dtype_of(p[i]) == TG_FLOAT64 ? vec(p[i]) : NULL;
    CHECK_JVP(what, grad_apply, &gs, n, p, v, n_diff);
}

static void test_hvp(void)
{
    tg_tensor *p[5] = {R(-1, 1, 4, 3), R(-1, 1, 5, 3), R(-1, 1, 5), R(-1, 1, 2, 5),
                       R(-1, 1, 4, 2)};
    check_grads("hvp mlp (relu_grad, gemm, slice_grad)", mlp_relu_loss, 4, 5, p);
    tg_tensor *c[5] = {R(-1, 1, 2, 1, 6, 6), R(-0.5, 0.5, 2, 1, 3, 3), R(-0.1, 0.1, 2),
                       R(-0.5, 0.5, 3, 8),
                       tt_tensor(TG_INT64, 1, (int64_t[]){2}, (double[]){2, 0})};
    check_grads("hvp cnn (conv2d_grad_*, max_pool2d_grad, avg_pool2d_grad)", cnn_loss, 4, 5, c);
    tg_tensor *i[3] = {R(-1, 1, 5, 3), tt_tensor(TG_INT64, 2, (int64_t[]){2, 2},
                                                 (double[]){4, 1, 1, 0}),
                       tt_tensor(TG_INT64, 2, (int64_t[]){2, 3}, (double[]){0, 4, 2, 3, 3, 1})};
    check_grads("hvp index ops (index_add, scatter_add)", index_loss, 1, 3, i);
    tg_tensor *w[3] = {R(-2, 2, 3, 4), R(-1, 1, 3),
                       tt_tensor(TG_INT64, 1, (int64_t[]){3}, (double[]){3, 0, 1})};
    check_grads("hvp weighted nll (nll_loss_grad)", weighted_nll, 2, 3, w);
    tg_tensor *gl[2] = {R(-3, 3, 3, 4), R(-1, 1, 3, 4)};
    check_grads("hvp gelu (gelu_grad, gelu_tanh_grad)", gelu_loss, 2, 2, gl);
    tg_tensor *x[1] = {R(-1, 1, 1, 2, 4, 4)};
    check_grads("third order (max_pool2d_select)", pool_grad_dot, 1, 1, x);
}

/* ---- semantics of the graph pass ---------------------------------------------------------------- */
static void test_graph_semantics(void)
{
    tg_graph *g = tg_graph_new("sem");
    tg_tensor *a = tg_placeholder(g, "a", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *b = tg_placeholder(g, "b", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *k = tg_placeholder(g, "k", TG_INT64, 1, (int64_t[]){3});
    tg_graph_begin(g);
    tg_tensor *h = tg_mul(a, a);
    tg_tensor *y = tg_add(tg_sin(h), a);
    tg_tensor *z = tg_exp(b);              /* does not depend on a */
    tg_tensor *ki = tg_add(k, k);          /* integer */
    tg_tensor *m = tg_argmax(y, 0, false); /* nondiff, int64 */
    tg_graph_end();
    tg_tensor *av = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0.1, -0.4, 0.8});
    tg_tensor *va = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){1, 2, -1});
    tg_tensor *vh = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0.5, 0, 3});
    tg_tensor *bv = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *kv = tg_ones(TG_INT64, 1, (int64_t[]){3});
    /* xs = {a, h}: h gets its own tangent plus a's, as reverse mode adds paths */
    tg_tensor *xs[3] = {a, h, k}, *tv[3] = {va, vh, NULL}, *ys[6] = {y, z, ki, m, a, h};
    tg_tensor *t[6];
    int before = tg_graph_num_nodes(g);
    CHECK_OK(tg_graph_jvp(g, 3, xs, tv, 6, ys, t));
    int appended = tg_graph_num_nodes(g) - before;
    CHECK(appended > 0 && appended < 20);
    CHECK(tg_dtype_of(t[2]) == TG_INT64 && tg_dtype_of(t[3]) == TG_INT64);
    tg_session *s = tg_session_new(g);
    tg_tensor *r[6];
    CHECK_OK(tg_session_run(s, 3, (tg_tensor *[]){a, b, k}, (tg_tensor *[]){av, bv, kv}, 6,
                            t, r, 0, NULL));
    double ex[3];
    const double A[3] = {0.1, -0.4, 0.8}, VA[3] = {1, 2, -1}, VH[3] = {0.5, 0, 3};
    for (int i = 0; i < 3; i++)
        ex[i] = cos(A[i] * A[i]) * (2 * A[i] * VA[i] + VH[i]) + VA[i];
    CHECK_TENSOR(r[0], ex, 1e-15);
    CHECK_TENSOR(r[1], ((double[]){0, 0, 0}), 0); /* z: zeros */
    CHECK_TENSOR(r[2], ((double[]){0, 0, 0}), 0); /* integer y: zeros */
    CHECK_TENSOR(r[3], ((double[]){0}), 0);       /* argmax: zero, 0-d */
    CHECK_TENSOR(r[4], VA, 0);                    /* y == x: its tangent */
    for (int i = 0; i < 3; i++)
        ex[i] = 2 * A[i] * VA[i] + VH[i];
    CHECK_TENSOR(r[5], ex, 1e-15);
    /* reverse mode agrees: d(y . 1)/da and d(y . 1)/dh are its rows summed */
    tg_tensor *ones = tg_ones(TG_FLOAT64, 1, (int64_t[]){3}), *d[2];
    CHECK_OK(tg_graph_gradients(g, 1, &y, &ones, 2, (tg_tensor *[]){a, h}, d));
    tg_tensor *rd[2];
    CHECK_OK(tg_session_run(s, 3, (tg_tensor *[]){a, b, k}, (tg_tensor *[]){av, bv, kv}, 2,
                            d, rd, 0, NULL));
    /* y is elementwise: J is diagonal, J v = rows . v */
    tg_tensor *jv = tg_add(tg_mul(rd[0], va), tg_mul(rd[1], vh));
    double *p = values(jv), *q = values(r[0]);
    close_rel("semantics", "reverse mode", 0, q, p, 3, 1e-15, 1e-12, __FILE__, __LINE__);
    free(p);
    free(q);
    tg_session_free(s);

    /* NULL tangents: all zero; one sweep adds nothing off the x -> y paths */
    int n0 = tg_graph_num_nodes(g);
    tg_tensor *t0;
    CHECK_OK(tg_graph_jvp(g, 1, &a, NULL, 1, &y, &t0));
    CHECK(tg_is_symbolic(t0));
    CHECK(tg_graph_num_nodes(g) - n0 <= 1); /* the zeros constant */
    tg_graph_free(g);
}

/* xs and tangents that are concrete tensors the graph captured */
static void test_graph_captured(void)
{
    tg_tensor *w = tt_rand(1, (int64_t[]){3}, -1, 1);
    tg_tensor *x = tt_rand(1, (int64_t[]){3}, -1, 1);
    tg_graph *g = tg_graph_new("cap");
    tg_graph_begin(g);
    tg_tensor *l = tg_sum(tg_mul(tg_exp(w), x), 0, NULL, false);
    tg_graph_end();
    tg_tensor *v = vec(w), *t;
    CHECK_OK(tg_graph_jvp(g, 1, &w, &v, 1, &l, &t));
    tg_session *s = tg_session_new(g);
    tg_tensor *r;
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 1, &t, &r, 0, NULL));
    tg_tensor *ref = tg_sum(tg_mul(tg_mul(tg_exp(w), x), v), 0, NULL, false);
    CHECK_NEAR(tg_item(r), tg_item(ref), 1e-15);
    /* the tangent is captured by reference: later changes are seen */
    CHECK_OK(tg_mul_scalar_(v, 2.0));
    tg_tensor *r2;
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 1, &t, &r2, 0, NULL));
    CHECK_NEAR(tg_item(r2), 2 * tg_item(ref), 1e-14);
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- eager tg_jvp ----------------------------------------------------------------------------------- */
static tg_status passthrough(void *user, tg_tensor *const *x, tg_tensor **y)
{
    (void)user;
    y[0] = x[0];                       /* an input as is */
    y[1] = tg_mul(x[0], x[1]);
    y[2] = tg_cast(tg_argmax(x[1], 0, false), TG_FLOAT64); /* no tangent */
    return y[1] ? TG_OK : tg_last_status();
}

static void test_eager(void)
{
    tg_tensor *x[2] = {R(-1, 1, 3), R(-1, 1, 3)};
    tg_tensor *v[2] = {vec(x[0]), NULL};
    tg_tensor *out[3], *t[3];
    int depth = tg_scope_depth();
    bool grad_on = tg_grad_enabled();
    CHECK_OK(tg_jvp(passthrough, NULL, 2, x, v, 3, out, t));
    CHECK(tg_scope_depth() == depth && tg_grad_enabled() == grad_on);
    CHECK(out[0] == x[0]);
    double *vx = values(v[0]), *x1 = values(x[1]), ex[3];
    CHECK_TENSOR(t[0], vx, 0);
    for (int i = 0; i < 3; i++)
        ex[i] = vx[i] * x1[i];
    CHECK_TENSOR(t[1], ex, 0);
    CHECK_TENSOR(t[2], ((double[]){0}), 0);
    CHECK(!tg_is_symbolic(out[1]) && !tg_is_symbolic(t[1]));
    free(vx);
    free(x1);
    /* NULL tangents: zeros; outputs may be NULL */
    CHECK_OK(tg_jvp(passthrough, NULL, 2, x, NULL, 3, NULL, t));
    CHECK_TENSOR(t[1], ((double[]){0, 0, 0}), 0);
    /* non-contiguous inputs and tangents */
    tg_tensor *xs[2] = {tt_strided(x[0]), tt_strided(x[1])};
    tg_tensor *vs[2] = {tt_strided(v[0]), tt_strided(vec(x[1]))};
    CHECK(!tg_is_contiguous(xs[0]) && !tg_is_contiguous(vs[0]));
    tg_tensor *vc[2] = {v[0], tg_contiguous(vs[1])};
    tg_tensor *ts[3], *tc[3];
    CHECK_OK(tg_jvp(passthrough, NULL, 2, xs, vs, 3, NULL, ts));
    CHECK_OK(tg_jvp(passthrough, NULL, 2, x, vc, 3, NULL, tc));
    double *a = values(ts[1]), *b = values(tc[1]);
    close_rel("strided", "contiguous", 1, a, b, 3, 0, 1e-300, __FILE__, __LINE__);
    free(a);
    free(b);
    /* results belong to the caller's scope */
    tg_scope_begin();
    tg_tensor *o2[3], *t2[3];
    CHECK_OK(tg_jvp(passthrough, NULL, 2, x, v, 3, o2, t2));
    tg_keep(t2[1]);
    tg_scope_end();
    CHECK(tg_numel(t2[1]) == 3);
}

/* ---- the rules are part of the op definitions ---------------------------------------------- */
static void test_rule_table(void)
{
    int with_rule = 0;
    for (int i = 0; i < tg_op_count(); i++)
        with_rule += tg_op_has_jvp(tg_op_at(i));
    CHECK(with_rule > 50);
    CHECK(tg_op_has_jvp(tg_op_find("layer_norm")) && tg_op_has_jvp(tg_op_find("prod")));
    CHECK(!tg_op_has_jvp(tg_op_find("batch_norm_grad")));
    CHECK(tg_op_find("batch_norm_grad")->flags & TG_OP_NO_JVP);
    CHECK(tg_op_has_jvp(tg_op_find("layer_norm_grad"))); /* norm_ln_grad.c */
    CHECK(tg_op_has_jvp(tg_op_find("exp")) && !tg_op_find("exp")->jvp); /* from deriv */
}

/* ---- the rules run eagerly too (concrete tensors, strided tangents) -------------------------------- */
/* output tangent of op `name` applied to x (and w) by its rule, eagerly */
static tg_tensor *rule_eager(const char *name, int n_in, tg_tensor **x, tg_tensor **t,
                             const tg_attr *attrs, int n_attrs)
{
    const tg_op_def *op = tg_op_find(name);
    tg_tensor *y = tg_op_call(op, n_in, x, attrs, n_attrs), *dy;
    tg_meta in_meta[2], out_meta;
    for (int i = 0; i < n_in; i++)
        tg_meta_of(x[i], &in_meta[i]);
    tg_meta_of(y, &out_meta);
    _Alignas(16) unsigned char attr[TG_MAX_ATTR_SIZE];
    CHECK_OK(tg_attrs_decode(op, attrs, n_attrs, attr));
    tg_jvp_ctx c = {.op = op, .name = name, .n_in = n_in, .n_out = 1, .in = x, .out = &y,
                    .in_meta = in_meta, .out_meta = &out_meta, .attr = attr, .attrs = attrs,
                    .n_attrs = n_attrs};
    CHECK_OK(tg__jvp_run(&c, t, &dy));
    return tg__publish(dy); /* the test's scope owns it */
}

static tg_tensor *reshape43(tg_tensor *const *x) { return tg_reshape(x[0], 2, (int64_t[]){4, 3}); }

static void test_rules_eager(void)
{
    tg_tensor *x = R(-1, 1, 3, 4), *w = R(-1, 1, 4, 2), *b = R(-1, 1, 4);
    tg_tensor *tx = tt_strided(vec(x)), *tw = tt_strided(vec(w)), *tb = tt_strided(vec(b));
    CHECK(!tg_is_contiguous(tx));
    tg_tensor *txc = tg_contiguous(tx), *twc = tg_contiguous(tw), *tbc = tg_contiguous(tb);
    static const struct { const char *op; op1 f; } un[] = {
        {"exp", tg_exp}, {"relu", tg_relu}, {"tanh", tg_tanh}, {"sin", tg_sin}, {"abs", tg_abs}};
    for (size_t i = 0; i < sizeof un / sizeof un[0]; i++) {
        current_op1 = un[i].f;
        tg_tensor *o, *ref;
        CHECK_OK(tg_jvp(apply_n, &(fn_n){unary_apply}, 1, &x, &txc, 1, &o, &ref));
        tg_tensor *d = rule_eager(un[i].op, 1, &x, &tx, NULL, 0);
        CHECK(d && !tg_is_symbolic(d));
        double *a = values(d), *r = values(ref);
        close_rel(un[i].op, "tg_jvp", 0, a, r, 12, 1e-15, 1e-300, __FILE__, __LINE__);
        free(a);
        free(r);
    }
    /* broadcasting add with one tangent, matmul, a view of a strided tangent */
    tg_tensor *xb[2] = {x, b}, *tadd[2] = {NULL, tb}, *tadd_c[2] = {NULL, tbc}, *o, *ref;
    tg_tensor *d = rule_eager("add", 2, xb, tadd, NULL, 0);
    current_op2 = tg_add;
    CHECK_OK(tg_jvp(apply_n, &(fn_n){binary_apply}, 2, xb, tadd_c, 1, &o, &ref));
    CHECK_SHAPE(d, 3, 4);
    double *a = values(d), *r = values(ref);
    close_rel("add", "tg_jvp", 0, a, r, 12, 1e-15, 1e-300, __FILE__, __LINE__);
    free(a);
    free(r);
    tg_tensor *xw[2] = {x, w}, *tm[2] = {tx, tw}, *tmc[2] = {txc, twc};
    d = rule_eager("matmul", 2, xw, tm, NULL, 0);
    CHECK_OK(tg_jvp(apply_n, &(fn_n){mm}, 2, xw, tmc, 1, &o, &ref));
    a = values(d);
    r = values(ref);
    close_rel("matmul", "tg_jvp", 0, a, r, 6, 1e-14, 1e-300, __FILE__, __LINE__);
    free(a);
    free(r);
    tg_attr shape = TG_AINTS("shape", ((int64_t[]){4, 3}), 2);
    d = rule_eager("view", 1, &x, &tx, &shape, 1);
    CHECK_OK(tg_jvp(apply_n, &(fn_n){reshape43}, 1, &x, &txc, 1, &o, &ref));
    a = values(d);
    r = values(ref);
    close_rel("view", "tg_jvp", 0, a, r, 12, 0, 1e-300, __FILE__, __LINE__);
    free(a);
    free(r);
}

/* ---- errors ------------------------------------------------------------------------------------------------ */
/* an op with no forward rule: the fused first-order batch_norm_grad (of
 * x [N, C], per-channel made-up statistics) */
static tg_tensor *bn(tg_tensor *const *x)
{
    tg_tensor *st = tg_mean(x[0], 1, (int[]){0}, false), *out[3];
    tg_tensor *w = tg_ones(TG_FLOAT64, 1, &tg_shape(x[0])[1]);
    tg_tensor *in[7] = {x[0], x[0], st, tg_exp(st), w, st, st};
    return tg_op_run(tg_op_find("batch_norm_grad"), 7, in, NULL, 0, out) == TG_OK ? out[0]
                                                                                  : NULL;
}
static tg_tensor *bad_shape(tg_tensor *const *x) { return tg_matmul(x[0], x[0]); }

static void test_errors(void)
{
    tg_graph *g = tg_graph_new("err");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 2, (int64_t[]){2, 3});
    tg_tensor *k = tg_placeholder(g, "k", TG_INT64, 1, (int64_t[]){3});
    tg_graph_begin(g);
    tg_tensor *y = bn((tg_tensor *[]){tg_exp(x)});
    tg_tensor *p = bn((tg_tensor *[]){x});
    tg_tensor *ok = tg_sin(x);
    tg_graph_end();
    tg_tensor *v = tg_ones(TG_FLOAT64, 2, (int64_t[]){2, 3}), *t[2] = {NULL, NULL};
    CHECK_FAILS(tg_graph_jvp(g, 1, &x, &v, 1, &y, t), TG_ERR_UNSUPPORTED,
                "op 'batch_norm_grad' has no JVP rule (node 'batch_norm_grad')");
    CHECK(t[0] == NULL);
    CHECK_FAILS(tg_graph_jvp(g, 1, &x, &v, 1, &p, t), TG_ERR_UNSUPPORTED, "'batch_norm_grad'");
    /* an op without a rule off the path is not a problem */
    CHECK_OK(tg_graph_jvp(g, 1, &x, &v, 1, &ok, t));
    /* tangents that do not fit their x */
    tg_tensor *v2 = tg_ones(TG_FLOAT64, 1, (int64_t[]){2});
    CHECK_FAILS(tg_graph_jvp(g, 1, &x, &v2, 1, &ok, t), TG_ERR_SHAPE,
                "tangents[0] has shape [2] but its x 'x' has shape [2, 3]");
    tg_tensor *v32 = tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_FAILS(tg_graph_jvp(g, 1, &x, &v32, 1, &ok, t), TG_ERR_DTYPE,
                "tangents[0] is float32 but its x 'x' is float64");
    tg_tensor *vk = tg_ones(TG_INT64, 1, (int64_t[]){3});
    tg_tensor *xs[2] = {x, k}, *tv[2] = {v, vk};
    CHECK_FAILS(tg_graph_jvp(g, 2, xs, tv, 1, &ok, t), TG_ERR_DTYPE,
                "tangents[1] is given for 'k', which is int64");
    tg_graph *h = tg_graph_new("other");
    tg_tensor *vo = tg_placeholder(h, "vo", TG_FLOAT64, 2, (int64_t[]){2, 3});
    CHECK_FAILS(tg_graph_jvp(g, 1, &x, &vo, 1, &ok, t), TG_ERR_ARG,
                "tangents[0] belongs to graph 'other'");
    CHECK_FAILS(tg_graph_jvp(g, 1, &vo, NULL, 1, &ok, t), TG_ERR_ARG,
                "belongs to graph 'other'");
    tg_tensor *eager = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_FAILS(tg_graph_jvp(g, 1, &eager, NULL, 1, &ok, t), TG_ERR_ARG, "does not use");
    CHECK_FAILS(tg_graph_jvp(g, 0, &x, NULL, 1, &ok, t), TG_ERR_ARG, "at least one x");
    CHECK_FAILS(tg_graph_jvp(NULL, 1, &x, NULL, 1, &ok, t), TG_ERR_ARG, "need a graph");
    CHECK_FAILS(tg_graph_jvp(g, 1, &x, NULL, 1, &ok, NULL), TG_ERR_ARG, "out_tangents");
    CHECK_OK(tg_graph_verify(g)); /* failed passes leave a valid graph */
    tg_graph_free(h);
    tg_graph_free(g);

    /* eager */
    tg_tensor *xe[1] = {R(-1, 1, 2, 3)}, *ve[1] = {vec(xe[0])}, *o[1], *te[1];
    CHECK_FAILS(tg_jvp(apply_n, &(fn_n){bn}, 1, xe, ve, 1, o, te), TG_ERR_UNSUPPORTED,
                "'batch_norm_grad'");
    CHECK(o[0] == NULL && te[0] == NULL);
    tg_tensor *vb[1] = {tg_ones(TG_FLOAT64, 1, (int64_t[]){6})};
    CHECK_FAILS(tg_jvp(apply_n, &(fn_n){bn}, 1, xe, vb, 1, o, te), TG_ERR_SHAPE,
                "tg_jvp: tangents[0] has shape [6] but its x 'inputs[0]' has shape [2, 3]");
    CHECK_FAILS(tg_jvp(apply_n, &(fn_n){bad_shape}, 1, xe, ve, 1, o, te), TG_ERR_SHAPE,
                "matmul");
    tg_graph *s = tg_graph_new("sym");
    tg_tensor *sx[1] = {tg_placeholder(s, "sx", TG_FLOAT64, 1, (int64_t[]){3})};
    CHECK_FAILS(tg_jvp(apply_n, &(fn_n){bn}, 1, sx, NULL, 1, o, te), TG_ERR_ARG, "symbolic");
    tg_graph_free(s);
    CHECK_FAILS(tg_jvp(NULL, NULL, 1, xe, ve, 1, o, te), TG_ERR_ARG, "need a function");
    CHECK_FAILS(tg_jvp(apply_n, &(fn_n){bn}, 1, xe, ve, 0, o, te), TG_ERR_ARG, "0 outputs");
}

int main(void)
{
    RUN(test_unary);
    RUN(test_binary);
    RUN(test_where);
    RUN(test_views);
    RUN(test_reductions);
    RUN(test_matmul);
    RUN(test_gemm_linear);
    RUN(test_mlp);
    RUN(test_nn_ops);
    RUN(test_array_ops);
    RUN(test_float32);
    RUN(test_hvp);
    RUN(test_graph_semantics);
    RUN(test_graph_captured);
    RUN(test_eager);
    RUN(test_rule_table);
    RUN(test_rules_eager);
    RUN(test_errors);
    return tt_finish();
}
