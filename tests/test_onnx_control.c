/* ONNX control flow (If, Loop, Scan): the fixtures of
 * tests/data/make_onnx_control_fixtures.py in eager and graph mode against
 * numpy's outputs, gradients through them equal in both modes and to
 * central differences, Loop's scan outputs, cond and while_loop exported as
 * If and Loop and read back, and malformed subgraphs refused at load or run
 * with the node and the subgraph named. */
#include "harness.h"
#include "tg/tg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char data_dir[1024];

static const char *path_of(const char *name, const char *suffix)
{
    static char buf[4][1400];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s%s", data_dir, name, suffix);
    return buf[k];
}

static double max_diff(tg_tensor *a, tg_tensor *b)
{
    if (!a || !b || tg_ndim(a) != tg_ndim(b) ||
        memcmp(tg_shape(a), tg_shape(b), (size_t)tg_ndim(a) * 8))
        return INFINITY;
    int64_t n = tg_numel(a);
    double *x = malloc((size_t)(n + 1) * 8), *y = malloc((size_t)(n + 1) * 8), d = 0;
    tg_copy_to(a, TG_FLOAT64, x);
    tg_copy_to(b, TG_FLOAT64, y);
    for (int64_t i = 0; i < n; i++)
        d = fmax(d, fabs(x[i] - y[i]));
    free(x);
    free(y);
    return d;
}

typedef struct fixture {
    tg_onnx_model *m;
    tg_state_dict *in, *want;
    const char *names[8];
    tg_tensor *ts[8];
    int n;
} fixture;

static bool open_fixture(fixture *f, const char *name)
{
    memset(f, 0, sizeof *f);
    f->m = tg_onnx_load(path_of(name, ".onnx"));
    f->in = tg_safetensors_load(path_of(name, "_in.safetensors"));
    f->want = tg_safetensors_load(path_of(name, "_out.safetensors"));
    if (!f->m || !f->in || !f->want) {
        tt_fail(__FILE__, __LINE__, "fixture %s: %s", name, tg_last_error());
        return false;
    }
    f->n = tg_state_dict_size(f->in);
    for (int i = 0; i < f->n; i++) {
        f->names[i] = tg_state_dict_name(f->in, i);
        f->ts[i] = tg_state_dict_tensor(f->in, i);
    }
    return true;
}

static void close_fixture(fixture *f)
{
    tg_onnx_free(f->m);
    tg_state_dict_free(f->in);
    tg_state_dict_free(f->want);
}

static const char *mode_name(tg_onnx_mode mode)
{
    return mode == TG_ONNX_GRAPH ? "graph" : "eager";
}

static void check_outputs(const char *name, tg_onnx_mode mode)
{
    fixture f;
    if (!open_fixture(&f, name))
        goto out;
    tg_state_dict *outs = NULL;
    if (tg_onnx_run(f.m, mode, f.n, f.names, f.ts, &outs, NULL) != TG_OK)
        tt_fail(__FILE__, __LINE__, "%s (%s): %s", name, mode_name(mode), tg_last_error());
    for (int i = 0; outs && i < tg_state_dict_size(f.want); i++) {
        const char *o = tg_state_dict_name(f.want, i);
        double d = max_diff(tg_state_dict_get(outs, o), tg_state_dict_tensor(f.want, i));
        if (!(d <= 1e-12))
            tt_fail(__FILE__, __LINE__, "%s (%s) output %s differs by %g", name,
                    mode_name(mode), o, d);
    }
    tg_state_dict_free(outs);
out:
    close_fixture(&f);
}

static void test_outputs(void)
{
    static const char *const names[] = {"cf_if_t", "cf_if_f", "cf_loop_5", "cf_loop_40",
                                        "cf_scan_fwd", "cf_scan_rev"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        check_outputs(names[i], TG_ONNX_EAGER);
        check_outputs(names[i], TG_ONNX_GRAPH);
    }
}

/* the sum of every output of an eager run */
static double out_sum(fixture *f)
{
    tg_state_dict *o = NULL;
    double s = NAN;
    if (tg_onnx_run(f->m, TG_ONNX_EAGER, f->n, f->names, f->ts, &o, NULL) == TG_OK) {
        s = 0;
        for (int i = 0; i < tg_state_dict_size(o); i++)
            s += tg_item(tg_sum(tg_state_dict_tensor(o, i), 0, NULL, false));
    }
    tg_state_dict_free(o);
    return s;
}

/* d(sum of outputs)/d(input `x`): eager and graph mode agree, and each
 * element matches central differences of eager runs */
static void check_gradient(const char *name, const char *x)
{
    fixture f;
    tg_state_dict *oe = NULL, *ge = NULL, *og = NULL, *gg = NULL;
    if (!open_fixture(&f, name))
        goto out;
    CHECK_OK(tg_onnx_run(f.m, TG_ONNX_EAGER, f.n, f.names, f.ts, &oe, &ge));
    CHECK_OK(tg_onnx_run(f.m, TG_ONNX_GRAPH, f.n, f.names, f.ts, &og, &gg));
    tg_tensor *g_eager = ge ? tg_state_dict_get(ge, x) : NULL;
    tg_tensor *g_graph = gg ? tg_state_dict_get(gg, x) : NULL;
    if (!g_eager || !g_graph) {
        tt_fail(__FILE__, __LINE__, "%s: no gradient for %s", name, x);
        goto out;
    }
    double d = max_diff(g_eager, g_graph);
    if (!(d < 1e-12))
        tt_fail(__FILE__, __LINE__, "%s: d/d%s differs by %g between modes", name, x, d);
    tg_tensor *xt = tg_state_dict_get(f.in, x);
    int64_t n = tg_numel(xt);
    double *v = malloc((size_t)n * 8), *g = malloc((size_t)n * 8);
    tg_copy_to(xt, TG_FLOAT64, v);
    tg_copy_to(g_eager, TG_FLOAT64, g);
    for (int64_t k = 0; k < n; k++) {
        double h = 1e-6, keep = v[k], fp, fm;
        for (int i = 0; i < f.n; i++)
            if (!strcmp(f.names[i], x)) {
                v[k] = keep + h;
                f.ts[i] = tt_tensor(TG_FLOAT64, tg_ndim(xt), tg_shape(xt), v);
                fp = out_sum(&f);
                v[k] = keep - h;
                f.ts[i] = tt_tensor(TG_FLOAT64, tg_ndim(xt), tg_shape(xt), v);
                fm = out_sum(&f);
                f.ts[i] = xt;
                v[k] = keep;
                if (!(fabs((fp - fm) / (2 * h) - g[k]) < 1e-6))
                    tt_fail(__FILE__, __LINE__, "%s: d/d%s[%lld] is %.12g, central "
                            "differences %.12g", name, x, (long long)k, g[k],
                            (fp - fm) / (2 * h));
            }
    }
    free(v);
    free(g);
out:
    tg_state_dict_free(oe);
    tg_state_dict_free(ge);
    tg_state_dict_free(og);
    tg_state_dict_free(gg);
    close_fixture(&f);
}

static void test_gradients(void)
{
    check_gradient("cf_if_t", "x");
    check_gradient("cf_if_f", "x");
    check_gradient("cf_loop_5", "x");
    check_gradient("cf_loop_40", "x");
    check_gradient("cf_scan_fwd", "xs");
    check_gradient("cf_scan_fwd", "h0");
    check_gradient("cf_scan_rev", "xs");
}

/* a Loop with a scan output: stacked on the host in eager mode, a loop
 * variable growing a row per iteration in graph mode */
static void test_loop_scan_outputs(void)
{
    check_outputs("cf_loop_scan", TG_ONNX_EAGER);
    check_outputs("cf_loop_scan", TG_ONNX_GRAPH);
    check_gradient("cf_loop_scan", "x");
}

static void expect_load_error(const char *name, const char *part1, const char *part2)
{
    tg_onnx_model *m = tg_onnx_load(path_of(name, ".onnx"));
    CHECK(m == NULL);
    if (!strstr(tg_last_error(), part1) || !strstr(tg_last_error(), part2))
        tt_fail(__FILE__, __LINE__, "%s: unexpected error: %s", name, tg_last_error());
    tg_onnx_free(m);
}

static void expect_run_error(const char *name, const char *part)
{
    tg_onnx_model *m = tg_onnx_load(path_of(name, ".onnx"));
    CHECK(m != NULL);
    double xv[3] = {1, 2, 3};
    tg_tensor *in[2] = {tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, xv), tg_scalar(TG_BOOL, 1)};
    const char *names[2] = {"x", "c"};
    for (int mode = 0; m && mode < 2; mode++) {
        tg_state_dict *o = NULL;
        CHECK(tg_onnx_run(m, mode, 2, names, in, &o, NULL) == TG_ERR_IO);
        if (!strstr(tg_last_error(), part))
            tt_fail(__FILE__, __LINE__, "%s: unexpected error: %s", name, tg_last_error());
        tg_state_dict_free(o);
    }
    tg_onnx_free(m);
}

static void test_malformed(void)
{
    expect_load_error("cf_unknown_outer", "subgraph 'then_branch' of node 'y' (If)",
                      "'nowhere'");
    expect_run_error("cf_bad_branches", "then_branch has 1 outputs and else_branch 2");
    expect_run_error("cf_no_else", "needs the graph attributes then_branch and else_branch");
    tg_onnx_model *m = tg_onnx_load(path_of("cf_bad_loop_body", ".onnx"));
    CHECK(m != NULL);
    double xv[3] = {1, 2, 3};
    tg_tensor *x = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, xv);
    const char *nm = "x";
    tg_state_dict *o = NULL;
    CHECK(m && tg_onnx_run(m, TG_ONNX_EAGER, 1, &nm, &x, &o, NULL) == TG_ERR_IO);
    CHECK(strstr(tg_last_error(), "the body takes 1 inputs") != NULL);
    tg_state_dict_free(o);
    tg_onnx_free(m);
}

/* ---- export: a graph with cond and while_loop, written and read back ---- */
static tg_tensor *g_w; /* the enclosing graph's value the branches capture */

static tg_status then_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_add(tg_mul_scalar(in[0], 2.0), g_w);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status else_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_sub(tg_sin(in[0]), g_w);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status test_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    tg_tensor *few = tg_lt(in[0], tg_scalar(TG_INT64, 6));
    tg_tensor *small = tg_lt(tg_sum(in[1], 0, NULL, false), tg_scalar(TG_FLOAT64, 40));
    out[0] = tg_logical_and(few, small);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status body_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    tg_tensor *x = user;
    out[0] = tg_add_scalar(in[0], 1.0);
    /* a cond inside the body, capturing x from two levels out */
    tg_tensor *c = tg_gt(tg_sum(in[1], 0, NULL, false), tg_scalar(TG_FLOAT64, 3));
    tg_tensor *v[1] = {in[1]};
    g_w = x;
    if (tg_cond(c, then_fn, else_fn, NULL, 1, v, 1, &out[1]) != TG_OK)
        return tg_last_status();
    out[1] = tg_add(out[1], tg_mul_scalar(x, 0.25));
    return out[1] ? TG_OK : tg_last_status();
}

static const char *out_path(void)
{
    static char buf[1200];
    const char *dir = getenv("TG_ONNX_OUT_DIR");
    if (dir)
        snprintf(buf, sizeof buf, "%s/tg_onnx_control.onnx", dir);
    else
        snprintf(buf, sizeof buf, "/tmp/tg_onnx_%ld_control.onnx", (long)getpid());
    return buf;
}

static void test_export(void)
{
    tg_graph *g = tg_graph_new("control");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_OK(tg_graph_begin(g));
    tg_tensor *w = tg_add_scalar(x, 1.0), *y = NULL, *vars[2], *init[2];
    g_w = w;
    CHECK_OK(tg_cond(tg_gt(tg_sum(x, 0, NULL, false), tg_scalar(TG_FLOAT64, 0)), then_fn,
                     else_fn, NULL, 1, &x, 1, &y));
    init[0] = tg_scalar(TG_INT64, 0);
    init[1] = y;
    CHECK_OK(tg_while_loop(test_fn, body_fn, x, 2, init, vars, NULL));
    tg_graph_end();
    tg_tensor *fetch[2] = {y, vars[1]};
    CHECK_OK(tg_onnx_export(g, 2, fetch, out_path()));
    tg_session *sess = tg_session_new(g);
    tg_onnx_model *m = tg_onnx_load(out_path());
    if (!m)
        tt_fail(__FILE__, __LINE__, "re-import: %s", tg_last_error());
    static const double xs[3][3] = {{0.3, -1.2, 0.8}, {-0.5, -0.1, -0.9}, {2.0, 1.0, 0.5}};
    for (int k = 0; m && sess && k < 3; k++) {
        tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, xs[k]), *want[2] = {0};
        CHECK_OK(tg_session_run(sess, 1, &x, &xv, 2, fetch, want, 0, NULL));
        const char *nm = "x";
        for (int mode = 0; mode < 2; mode++) {
            tg_state_dict *o = NULL;
            CHECK_OK(tg_onnx_run(m, mode, 1, &nm, &xv, &o, NULL));
            for (int i = 0; o && i < 2; i++) {
                double d = max_diff(tg_state_dict_tensor(o, i), want[i]);
                if (!(d <= 1e-12))
                    tt_fail(__FILE__, __LINE__, "input %d, output %d (%s): exported model "
                            "differs by %g", k, i, mode_name(mode), d);
            }
            tg_state_dict_free(o);
        }
    }
    tg_onnx_free(m);
    tg_session_free(sess);
    tg_graph_free(g);
    if (!getenv("TG_ONNX_OUT_DIR"))
        remove(out_path());
}

/* cf_random: a Loop whose body draws U(0, 1) [3] per iteration, then a
 * RandomNormal [4]. Drawn eagerly from tg_onnx_opts.generator in that
 * order, the body's draws included; without one every build draws the
 * same numbers */
static bool random_outputs(tg_onnx_model *m, tg_generator *gen, tg_tensor **rows,
                           tg_tensor **z)
{
    const char *names[1] = {"n"};
    tg_tensor *n = tg_full(TG_INT64, 0, NULL, 3);
    tg_onnx_opts o = {.generator = gen};
    tg_onnx_net *net = tg_onnx_build(m, 1, names, &n, &o);
    if (!net)
        return false;
    *rows = tg_retain(tg_onnx_net_output(net, 0));
    *z = tg_retain(tg_onnx_net_output(net, 1));
    tg_onnx_net_free(net);
    return true;
}

static void expect_draws(tg_generator *ref, tg_tensor *rows, tg_tensor *z)
{
    tg_tensor *r[3];
    for (int k = 0; k < 3; k++)
        r[k] = tg_rand_uniform(ref, TG_FLOAT32, 1, (int64_t[]){3}, 0, 1);
    CHECK(max_diff(rows, tg_stack(3, r, 0)) == 0);
    CHECK(max_diff(z, tg_rand_normal(ref, TG_FLOAT32, 1, (int64_t[]){4}, 0, 1)) == 0);
}

static void test_random_generator(void)
{
    tg_onnx_model *m = tg_onnx_load(path_of("cf_random", ".onnx"));
    CHECK(m != NULL);
    if (!m)
        return;
    tg_scope_begin();
    tg_tensor *r1, *z1, *r2, *z2;
    CHECK(random_outputs(m, NULL, &r1, &z1) && random_outputs(m, NULL, &r2, &z2));
    CHECK(max_diff(r1, r2) == 0 && max_diff(z1, z2) == 0); /* seeded 0 per build */
    tg_tensor *mine[4] = {r1, z1, r2, z2}; /* retained by random_outputs */
    for (int i = 0; i < 4; i++)
        tg_release(mine[i]);
    tg_generator *gen = tg_generator_new(5), *ref = tg_generator_new(5);
    for (int k = 0; k < 2; k++) { /* eagerly: the generator's numbers, in order */
        CHECK(random_outputs(m, gen, &r1, &z1));
        expect_draws(ref, r1, z1);
        tg_release(r1);
        tg_release(z1);
    }
    /* in a graph, a control-flow body must be a pure function: a body that
     * draws is refused with a message that says so (top-level random ops
     * are graph nodes: tests/python/test_onnx_random_graph.py) */
    tg_graph *g = tg_graph_new("random");
    tg_tensor *n = tg_placeholder(g, "n", TG_INT64, 0, NULL);
    tg_graph_begin(g);
    const char *names[1] = {"n"};
    tg_onnx_opts o = {.generator = gen};
    tg_onnx_net *net = tg_onnx_build(m, 1, names, &n, &o);
    tg_graph_end();
    CHECK(net == NULL && strstr(tg_last_error(), "draws random numbers"));
    tg_onnx_net_free(net);
    CHECK(tg_generator_next(gen) == tg_generator_next(ref));
    tg_graph_free(g);
    tg_generator_free(gen);
    tg_generator_free(ref);
    tg_scope_end();
    tg_onnx_free(m);
}

int main(void)
{
    const char *env = getenv("TG_TEST_DATA_DIR");
    if (env) {
        snprintf(data_dir, sizeof data_dir, "%s/onnx_import", env);
    } else { /* tests/data/onnx_import beside this source file */
        snprintf(data_dir, sizeof data_dir, "%s", __FILE__);
        char *slash = strrchr(data_dir, '/');
        snprintf(slash ? slash + 1 : data_dir,
                 sizeof data_dir - (size_t)(slash ? slash + 1 - data_dir : 0),
                 "data/onnx_import");
    }
    RUN(test_outputs);
    RUN(test_gradients);
    RUN(test_loop_scan_outputs);
    RUN(test_malformed);
    RUN(test_export);
    RUN(test_random_generator);
    return tt_finish();
}
