/* Control flow: tg_cond and tg_while_loop in eager and graph mode, captures
 * and nesting, errors, and gradients (reverse mode against the eager tape
 * of the unrolled computation in float64, forward mode against reverse
 * mode, second order through cond). */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define F64 TG_FLOAT64
static const int64_t S3[] = {3};

static tg_tensor *vec3(double a, double b, double c)
{
    return tt_tensor(F64, 1, S3, (const double[]){a, b, c});
}

static tg_tensor *sum_all(tg_tensor *x) { return tg_sum(x, 0, NULL, false); }

/* ---- the functions under test ---------------------------------------------------- */
/* user: the tensor w the branches use without being given it (a closure) */
static tg_status then_mul(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_mul(in[0], *(tg_tensor **)user);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status else_sin(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_add(tg_sin(in[0]), *(tg_tensor **)user);
    return out[0] ? TG_OK : tg_last_status();
}

/* loss = sum(y^2), y = sum(x) > 0 ? x * w : sin(x) + w */
static tg_tensor *cond_model(tg_tensor *x, tg_tensor *w)
{
    tg_tensor *zero = tg_scalar(F64, 0), *y = NULL;
    tg_tensor *p = tg_gt(sum_all(x), zero);
    tg_tensor *ww = w;
    if (tg_cond(p, then_mul, else_sin, &ww, 1, &x, 1, &y) != TG_OK)
        return NULL;
    return sum_all(tg_mul(y, y));
}

/* loop: while sum(x) < 10: x = x * w + 0.25; k += 1 */
static tg_status loop_cond(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_lt(sum_all(in[0]), tg_scalar(F64, 10));
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status loop_body(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_add_scalar(tg_mul(in[0], *(tg_tensor **)user), 0.25);
    out[1] = tg_add_scalar(in[1], 1);
    return out[0] && out[1] ? TG_OK : tg_last_status();
}

static tg_tensor *loop_model(tg_tensor *x, tg_tensor *w, tg_tensor **trips)
{
    tg_tensor *ww = w, *init[2] = {x, tg_scalar(TG_INT64, 0)}, *out[2];
    tg_loop_options o = {.max_iterations = 1000, .name = "grow"};
    if (tg_while_loop(loop_cond, loop_body, &ww, 2, init, out, &o) != TG_OK)
        return NULL;
    if (trips)
        *trips = out[1];
    return sum_all(tg_mul(out[0], out[0]));
}

typedef tg_tensor *(*model_fn)(tg_tensor *x, tg_tensor *w);
static tg_tensor *loop_model2(tg_tensor *x, tg_tensor *w) { return loop_model(x, w, NULL); }

/* ---- graph against eager ------------------------------------------------------------ */
typedef struct graph_run {
    tg_tensor *loss, *dx, *dw; /* concrete results */
} graph_run;

static graph_run run_graph(model_fn f, tg_tensor *xv, tg_tensor *wv)
{
    graph_run r = {0};
    tg_scope_begin();
    tg_graph *g = tg_graph_new("control");
    tg_tensor *x = tg_placeholder(g, "x", F64, 1, S3), *w = tg_placeholder(g, "w", F64, 1, S3);
    tg_graph_begin(g);
    tg_tensor *loss = f(x, w), *d[2] = {NULL, NULL};
    tg_graph_end();
    CHECK(loss != NULL);
    if (loss && tg_graph_gradients(g, 1, &loss, NULL, 2, (tg_tensor *[]){x, w}, d) == TG_OK) {
        CHECK_OK(tg_graph_verify(g));
        tg_session *s = tg_session_new(g);
        tg_tensor *res[3];
        CHECK_OK(tg_session_run(s, 2, (tg_tensor *[]){x, w}, (tg_tensor *[]){xv, wv}, 3,
                                (tg_tensor *[]){loss, d[0], d[1]}, res, 0, NULL));
        r = (graph_run){tg_keep(res[0]), tg_keep(res[1]), tg_keep(res[2])};
        /* a second run reuses the plan */
        tg_session_stats st;
        CHECK_OK(tg_session_run(s, 2, (tg_tensor *[]){x, w}, (tg_tensor *[]){xv, wv}, 1,
                                (tg_tensor *[]){loss}, res, 0, NULL));
        tg_session_get_stats(s, &st);
        tg_session_free(s);
    } else {
        tt_fail(__FILE__, __LINE__, "building failed: %s", tg_last_error());
    }
    tg_graph_free(g);
    tg_scope_end();
    return r;
}

static void check_against_eager(model_fn f, const double *xs, const double *ws)
{
    tg_scope_begin();
    tg_tensor *x = vec3(xs[0], xs[1], xs[2]), *w = vec3(ws[0], ws[1], ws[2]);
    tg_set_requires_grad(x, true);
    tg_set_requires_grad(w, true);
    tg_tensor *loss = f(x, w), *d[2] = {NULL, NULL};
    CHECK(loss != NULL);
    if (loss)
        CHECK_OK(tg_autograd_grad(1, &loss, NULL, 2, (tg_tensor *[]){x, w}, d, false, false));
    graph_run r = run_graph(f, x, w);
    CHECK(r.loss && loss && fabs(tg_item(r.loss) - tg_item(loss)) <= 1e-9 * fabs(tg_item(loss)));
    CHECK(tt_rel_diff(r.dx, d[0], 1e-6) <= 1e-9);
    /* a loop that never runs leaves w out of the eager tape (no gradient):
     * the graph's is zeros */
    CHECK(tt_rel_diff(r.dw, d[1] ? d[1] : tg_zeros_like(w), 1e-6) <= 1e-9);
    tg_release(d[0]);
    tg_release(d[1]);
    tg_scope_end();
}

static void test_cond_graph_vs_eager(void)
{
    check_against_eager(cond_model, (const double[]){0.5, -0.2, 0.9}, (const double[]){1.5, -2, 0.25});
    check_against_eager(cond_model, (const double[]){-0.5, -0.2, 0.3}, (const double[]){1.5, -2, 0.25});
}

static void test_while_graph_vs_eager(void)
{
    check_against_eager(loop_model2, (const double[]){0.5, 0.2, 0.9}, (const double[]){1.5, 1.2, 1.25});
    check_against_eager(loop_model2, (const double[]){3.5, 3.2, 3.9}, (const double[]){1.1, 1.2, 1.05});
    /* the condition false at once: zero trips, the gradient is the identity's */
    check_against_eager(loop_model2, (const double[]){5, 5, 5}, (const double[]){1.1, 1.2, 1.05});
}

/* trip counts found at run time: one graph, several inputs */
static void test_while_trip_counts(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("trips");
    tg_tensor *x = tg_placeholder(g, "x", F64, 1, S3), *w = tg_placeholder(g, "w", F64, 1, S3);
    tg_tensor *trips = NULL;
    tg_graph_begin(g);
    tg_tensor *loss = loop_model(x, w, &trips);
    tg_graph_end();
    CHECK(loss && trips && tg_is_symbolic(trips));
    tg_session *s = tg_session_new(g);
    double starts[3] = {0.1, 1.0, 4.0};
    for (int k = 0; k < 3 && trips; k++) {
        tg_tensor *xv = vec3(starts[k], starts[k], starts[k]), *wv = vec3(2, 2, 2), *res;
        CHECK_OK(tg_session_run(s, 2, (tg_tensor *[]){x, w}, (tg_tensor *[]){xv, wv}, 1,
                                &trips, &res, 0, NULL));
        int64_t n = 0;
        for (double v = starts[k]; 3 * v < 10; v = v * 2 + 0.25)
            n++;
        CHECK(res && (int64_t)tg_item(res) == n);
    }
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* ---- forward mode ---------------------------------------------------------------------- */
static void check_jvp(model_fn f)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("jvp");
    tg_tensor *x = tg_placeholder(g, "x", F64, 1, S3), *w = tg_placeholder(g, "w", F64, 1, S3);
    tg_graph_begin(g);
    tg_tensor *loss = f(x, w), *d[2] = {NULL, NULL}, *jv = NULL;
    tg_graph_end();
    tg_tensor *tx = vec3(0.3, -0.7, 0.2), *tw = vec3(-0.1, 0.4, 0.9);
    CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 2, (tg_tensor *[]){x, w}, d));
    CHECK_OK(tg_graph_jvp(g, 2, (tg_tensor *[]){x, w}, (tg_tensor *[]){tx, tw}, 1, &loss, &jv));
    CHECK_OK(tg_graph_verify(g));
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = vec3(0.5, 0.2, 0.9), *wv = vec3(1.5, 1.2, 1.25), *res[3];
    CHECK_OK(tg_session_run(s, 2, (tg_tensor *[]){x, w}, (tg_tensor *[]){xv, wv}, 3,
                            (tg_tensor *[]){jv, d[0], d[1]}, res, 0, NULL));
    double want = tg_item(sum_all(tg_mul(res[1], tx))) + tg_item(sum_all(tg_mul(res[2], tw)));
    CHECK_NEAR(tg_item(res[0]), want, 1e-9 * fabs(want));
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

static void test_jvp(void)
{
    check_jvp(cond_model);
    check_jvp(loop_model2);
}

static tg_status jvp_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = ((model_fn)user)(in[0], in[1]);
    return out[0] ? TG_OK : tg_last_status();
}

/* eager tg_jvp traces: data-dependent control flow works through tg_cond */
static void test_eager_jvp(void)
{
    tg_scope_begin();
    model_fn fs[2] = {cond_model, loop_model2};
    for (int k = 0; k < 2; k++) {
        tg_tensor *x = vec3(0.5, 0.2, 0.9), *w = vec3(1.5, 1.2, 1.25);
        tg_tensor *tx = vec3(0.3, -0.7, 0.2), *tw = vec3(-0.1, 0.4, 0.9), *y, *ty;
        CHECK_OK(tg_jvp(jvp_fn, (void *)fs[k], 2, (tg_tensor *[]){x, w},
                        (tg_tensor *[]){tx, tw}, 1, &y, &ty));
        /* central differences along the tangent */
        double h = 1e-6;
        tg_tensor *xp = tg_add(x, tg_mul_scalar(tx, h)), *wp = tg_add(w, tg_mul_scalar(tw, h));
        tg_tensor *xm = tg_sub(x, tg_mul_scalar(tx, h)), *wm = tg_sub(w, tg_mul_scalar(tw, h));
        double fd = (tg_item(fs[k](xp, wp)) - tg_item(fs[k](xm, wm))) / (2 * h);
        CHECK_NEAR(tg_item(ty), fd, 1e-5 * (1 + fabs(fd)));
        CHECK_NEAR(tg_item(y), tg_item(fs[k](x, w)), 1e-12);
    }
    tg_scope_end();
}

/* ---- second order through cond ------------------------------------------------------- */
static void test_cond_second_order(void)
{
    tg_scope_begin();
    double xs[2][3] = {{0.5, -0.2, 0.9}, {-0.5, -0.2, 0.3}};
    for (int k = 0; k < 2; k++) {
        /* eager: grad of (dloss/dx . v) by create_graph */
        tg_tensor *x = vec3(xs[k][0], xs[k][1], xs[k][2]), *w = vec3(1.5, -2, 0.25);
        tg_tensor *v = vec3(1, 2, 3), *dx = NULL, *hv = NULL;
        tg_set_requires_grad(x, true);
        tg_tensor *loss = cond_model(x, w);
        CHECK_OK(tg_autograd_grad(1, &loss, NULL, 1, &x, &dx, true, true));
        tg_tensor *dv = sum_all(tg_mul(dx, v));
        CHECK_OK(tg_autograd_grad(1, &dv, NULL, 1, &x, &hv, false, false));
        /* graph: gradients of the gradient (a cond over the branch gradients) */
        tg_graph *g = tg_graph_new("second");
        tg_tensor *xp = tg_placeholder(g, "x", F64, 1, S3), *d1 = NULL, *d2 = NULL;
        tg_graph_begin(g);
        tg_tensor *gl = cond_model(xp, w);
        tg_graph_end();
        CHECK_OK(tg_graph_gradients(g, 1, &gl, NULL, 1, &xp, &d1));
        tg_graph_begin(g);
        tg_tensor *gdv = sum_all(tg_mul(d1, v));
        tg_graph_end();
        CHECK_OK(tg_graph_gradients(g, 1, &gdv, NULL, 1, &xp, &d2));
        tg_session *s = tg_session_new(g);
        tg_tensor *res = NULL;
        tg_tensor *xv = vec3(xs[k][0], xs[k][1], xs[k][2]);
        CHECK_OK(tg_session_run(s, 1, &xp, &xv, 1, &d2, &res, 0, NULL));
        CHECK(tt_rel_diff(res, hv, 1e-6) <= 1e-9);
        tg_session_free(s);
        tg_graph_free(g);
        tg_release(dx);
        tg_release(hv);
    }
    tg_scope_end();
}

/* ---- finite differences through the graph ------------------------------------------- */
static tg_tensor *graph_loss(model_fn f, tg_tensor *xv, tg_tensor *wv)
{
    graph_run r = run_graph(f, xv, wv);
    return r.loss;
}

static void test_finite_differences(void)
{
    tg_scope_begin();
    model_fn fs[2] = {cond_model, loop_model2};
    for (int k = 0; k < 2; k++) {
        tg_tensor *x = vec3(0.5, 0.2, 0.9), *w = vec3(1.5, 1.2, 1.25);
        graph_run r = run_graph(fs[k], x, w);
        double *dx = tt_values(r.dx);
        for (int i = 0; i < 3; i++) {
            double h = 1e-6, e[3] = {0, 0, 0};
            e[i] = h;
            tg_tensor *ev = vec3(e[0], e[1], e[2]);
            double fp = tg_item(graph_loss(fs[k], tg_add(x, ev), w));
            double fm = tg_item(graph_loss(fs[k], tg_sub(x, ev), w));
            CHECK_NEAR(dx[i], (fp - fm) / (2 * h), 1e-5 * (1 + fabs(dx[i])));
        }
        free(dx);
    }
    tg_scope_end();
}

/* ---- nesting: a cond inside a loop body, capturing the outer graph ------------------- */
typedef struct nest { tg_tensor *w, *limit; } nest;

static tg_status nest_cond(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_lt(sum_all(in[0]), ((nest *)user)->limit);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status nest_then(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_mul(in[0], ((nest *)user)->w); /* w: two graphs out */
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status nest_else(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_add_scalar(in[0], 1.0);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status nest_body(void *user, tg_tensor *const *in, tg_tensor **out)
{
    tg_tensor *p = tg_gt(tg_max(in[0], 0, NULL, false), tg_scalar(F64, 1));
    return tg_cond(p, nest_then, nest_else, user, 1, in, 1, out);
}

static tg_tensor *nest_model(tg_tensor *x, tg_tensor *w)
{
    nest n = {w, tg_scalar(F64, 20)};
    tg_tensor *y = NULL;
    if (tg_while_loop(nest_cond, nest_body, &n, 1, &x, &y, NULL) != TG_OK)
        return NULL;
    return sum_all(tg_mul(y, y));
}

/* the DOT picture draws each body as a cluster, nested ones inside */
static void test_dot_clusters(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("dot");
    tg_tensor *x = tg_placeholder(g, "x", F64, 1, S3), *w = tg_placeholder(g, "w", F64, 1, S3);
    tg_graph_begin(g);
    tg_tensor *loss = nest_model(x, w);
    tg_graph_end();
    CHECK(loss != NULL);
    const char *path = "test_control.dot";
    CHECK_OK(tg_graph_to_dot(g, path));
    FILE *f = fopen(path, "r");
    char buf[65536];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    CHECK(strstr(buf, "subgraph cluster_n") != NULL);
    CHECK(strstr(buf, "label=\"while_loop: body\"") != NULL);
    /* the cond inside the body: a cluster inside the body's cluster */
    CHECK(strstr(buf, "label=\"cond: then_branch\"") != NULL);
    remove(path);
    tg_graph_free(g);
    tg_scope_end();
}

/* the Chrome trace has a span per body run besides the node's own */
static void test_trace_spans(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("trace");
    tg_tensor *x = tg_placeholder(g, "x", F64, 1, S3), *w = tg_placeholder(g, "w", F64, 1, S3);
    tg_graph_begin(g);
    tg_tensor *loss = loop_model(x, w, NULL), *res = NULL;
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    const char *path = "test_control_trace.json";
    CHECK_OK(tg_session_trace_begin(s));
    CHECK_OK(tg_session_run(s, 2, (tg_tensor *[]){x, w},
                            (tg_tensor *[]){vec3(0.5, 0.2, 0.9), vec3(1.5, 1.2, 1.25)}, 1,
                            &loss, &res, 0, NULL));
    CHECK_OK(tg_session_trace_end(s, path));
    FILE *f = fopen(path, "r");
    static char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    int bodies = 0, conds = 0;
    for (const char *p = buf; (p = strstr(p, "\"while_body\", \"cat\": \"body\"")); p++)
        bodies++;
    for (const char *p = buf; (p = strstr(p, "\"while_cond\", \"cat\": \"body\"")); p++)
        conds++;
    int trips = 0;
    for (double a = 0.5, b = 0.2, c = 0.9; a + b + c < 10; trips++)
        a = a * 1.5 + 0.25, b = b * 1.2 + 0.25, c = c * 1.25 + 0.25;
    CHECK(trips > 1 && bodies == trips && conds == trips + 1);
    CHECK(strstr(buf, "\"cat\": \"while_loop\"") != NULL);
    remove(path);
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

static void test_nested(void)
{
    check_against_eager(nest_model, (const double[]){0.5, 0.2, 0.9}, (const double[]){1.5, 1.2, 1.25});
    check_against_eager(nest_model, (const double[]){-0.5, 0.2, 0.1}, (const double[]){1.1, 1.3, 1.2});
}

/* ---- errors ---------------------------------------------------------------------------- */
static tg_status else_bad_shape(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_sum(in[0], 0, NULL, false);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status body_grows(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_concat(2, (tg_tensor *[]){in[0], in[0]}, 0);
    out[1] = in[1];
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status cond_true(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_ge(sum_all(in[0]), tg_scalar(F64, -1e300));
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status body_same(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_add_scalar(in[0], 1);
    out[1] = in[1];
    return out[0] ? TG_OK : tg_last_status();
}

static void test_errors(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("errors");
    tg_tensor *x = tg_placeholder(g, "x", F64, 1, S3), *y = NULL, *w = x;
    tg_tensor *p = tg_placeholder(g, "p", TG_BOOL, 0, NULL);
    CHECK_FAILS(tg_cond(p, then_mul, else_bad_shape, &w, 1, &x, 1, &y), TG_ERR_SHAPE,
                "in then branch 'cond_then' but float64[] in else branch 'cond_else'");
    CHECK_FAILS(tg_cond(x, then_mul, else_sin, &w, 1, &x, 1, &y), TG_ERR_DTYPE,
                "tg_cond: the predicate must be a bool tensor of one element");
    tg_tensor *init[2] = {x, x}, *out[2];
    tg_loop_options o = {.name = "grower"};
    CHECK_FAILS(tg_while_loop(cond_true, body_grows, NULL, 2, init, out, &o), TG_ERR_SHAPE,
                "while_loop 'grower': loop variable 0 enters the body as float64[3] and "
                "leaves it as float64[6]");
    /* eager: the same errors, and max_iterations */
    tg_tensor *xv = vec3(1, 2, 3), *ev[2] = {xv, xv};
    CHECK_FAILS(tg_while_loop(cond_true, body_grows, NULL, 2, ev, out, &o), TG_ERR_SHAPE,
                "tg_while_loop 'grower': the body made loop variable 0 float64[6]");
    tg_loop_options lim = {.name = "spin", .max_iterations = 50};
    CHECK_FAILS(tg_while_loop(cond_true, body_same, NULL, 2, ev, out, &lim), TG_ERR_ARG,
                "'spin': the condition still holds after max_iterations (50)");
    /* graph: the same at run time, naming the loop */
    CHECK_OK(tg_while_loop(cond_true, body_same, NULL, 2, init, out, &lim));
    tg_session *s = tg_session_new(g);
    tg_tensor *res;
    CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, out, &res, 0, NULL), TG_ERR_ARG,
                "while_loop 'spin': the condition still holds after max_iterations (50)");
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* eager shape invariants: a dim declared -1 may change */
static void test_shape_invariants(void)
{
    tg_scope_begin();
    tg_tensor *x = vec3(1, 2, 3), *init[2] = {x, x}, *out[2];
    tg_shape_spec inv[2] = {{1, {-1}}, {-1, {0}}};
    tg_loop_options o = {.name = "grow", .max_iterations = 3, .shape_invariants = inv};
    /* grows three times, then max_iterations stops it with an error */
    CHECK_FAILS(tg_while_loop(cond_true, body_grows, NULL, 2, init, out, &o), TG_ERR_ARG,
                "max_iterations (3)");
    tg_scope_end();
}

/* ---- a loop variable that grows (shape invariant [-1]) -------------------------------- */
static tg_status grow_cond(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_lt(in[1], tg_scalar(TG_INT64, 3));
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status grow_body(void *user, tg_tensor *const *in, tg_tensor **out)
{
    tg_tensor *head = tg_index_select(in[0], 0, tg_arange(TG_INT64, 0, 3, 1));
    tg_tensor *next = tg_reshape(sum_all(tg_mul(tg_sin(head), *(tg_tensor **)user)), 1,
                                 (int64_t[]){1});
    out[0] = tg_concat(2, (tg_tensor *[]){tg_mul_scalar(in[0], 0.5), next}, 0);
    out[1] = tg_add_scalar(in[1], 1);
    return out[0] && out[1] ? TG_OK : tg_last_status();
}

static tg_tensor *grow_model(tg_tensor *x, tg_tensor *w)
{
    tg_tensor *ww = w, *init[2] = {x, tg_scalar(TG_INT64, 0)}, *out[2];
    tg_shape_spec inv[2] = {{1, {-1}}, {-1, {0}}};
    tg_loop_options o = {.name = "grow", .shape_invariants = inv};
    if (tg_while_loop(grow_cond, grow_body, &ww, 2, init, out, &o) != TG_OK)
        return NULL;
    return sum_all(tg_mul(out[0], out[0]));
}

/* graph mode: the output's length is known only when the loop ran, and the
 * gradient's body graph is traced per length at run time */
static void test_growing_variable(void)
{
    check_against_eager(grow_model, (const double[]){0.5, -0.2, 0.9}, (const double[]){0.3, -1, 0.25});
}

/* ---- scan: against the host loop, graph gradients against the tape ---------------- */
/* carry c (3), x_t (3): c' = c * x_t + w (w a closure), y_t = sum(c') */
static tg_status scan_step(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_add(tg_mul(in[0], in[1]), *(tg_tensor **)user);
    out[1] = sum_all(out[0]);
    return out[0] && out[1] ? TG_OK : tg_last_status();
}

static tg_tensor *scan_model(tg_tensor *x, tg_tensor *w)
{
    /* xs: 4 rows built from x, so that gradients reach x through them */
    tg_tensor *xs = tg_stack(4, (tg_tensor *[]){x, tg_sin(x), tg_cos(x), tg_mul(x, x)}, 0);
    tg_tensor *ww = w, *c = NULL, *ys = NULL;
    if (tg_scan(scan_step, &ww, 1, &x, 1, &xs, 1, &c, &ys) != TG_OK)
        return NULL;
    return tg_add(sum_all(tg_mul(ys, ys)), sum_all(c));
}

static void test_scan(void)
{
    check_against_eager(scan_model, (const double[]){0.5, -0.2, 0.9}, (const double[]){0.3, -1, 0.25});
    /* the values against a plain loop */
    tg_scope_begin();
    tg_tensor *x = vec3(0.5, -0.2, 0.9), *w = vec3(0.3, -1, 0.25);
    double c[3] = {0.5, -0.2, 0.9}, xv[3] = {0.5, -0.2, 0.9}, wv[3] = {0.3, -1, 0.25}, want = 0;
    for (int t = 0; t < 4; t++) {
        double y = 0;
        for (int i = 0; i < 3; i++) {
            double r = t == 0 ? xv[i] : t == 1 ? sin(xv[i]) : t == 2 ? cos(xv[i]) : xv[i] * xv[i];
            c[i] = c[i] * r + wv[i];
            y += c[i];
        }
        want += y * y;
    }
    want += c[0] + c[1] + c[2];
    CHECK_NEAR(tg_item(scan_model(x, w)), want, 1e-12);
    graph_run r = run_graph(scan_model, x, w);
    CHECK(r.loss && fabs(tg_item(r.loss) - want) < 1e-9);
    tg_scope_end();
}

int main(void)
{
    RUN(test_cond_graph_vs_eager);
    RUN(test_while_graph_vs_eager);
    RUN(test_while_trip_counts);
    RUN(test_jvp);
    RUN(test_eager_jvp);
    RUN(test_cond_second_order);
    RUN(test_finite_differences);
    RUN(test_nested);
    RUN(test_dot_clusters);
    RUN(test_trace_spans);
    RUN(test_scan);
    RUN(test_growing_variable);
    RUN(test_errors);
    RUN(test_shape_invariants);
    return tt_finish();
}
