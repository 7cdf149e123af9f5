/* The fusion passes of level 2 (docs/PASSES.md), the fusion part of
 * tests/test_passes.c: each on graphs made to exercise it (what it fused,
 * counted in its record) with results bitwise equal to the graph as built
 * (level 0) in both executors; where fusion must stop (values read twice,
 * fetched, of another shape, variables written in between); the fused
 * ops run directly (programs checked like op calls, clear errors). Runs
 * with TG_VERIFY_PASSES=1: the verifier checks the graph after every pass. */
#include "harness.h"
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

static bool same(tg_tensor *a, tg_tensor *b)
{
    if (!a || !b || tg_numel(a) != tg_numel(b) || tg_dtype_of(a) != tg_dtype_of(b) ||
        tg_ndim(a) != tg_ndim(b))
        return false;
    int64_t n = tg_numel(a);
    double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
    bool ok = tg_copy_to(a, TG_FLOAT64, x) == TG_OK && tg_copy_to(b, TG_FLOAT64, y) == TG_OK &&
              memcmp(x, y, (size_t)n * sizeof *x) == 0;
    free(x);
    free(y);
    return ok;
}

static void set_level(tg_session *s, int level)
{
    tg_session_options o = tg_session_default_options();
    o.opt_level = level;
    CHECK_OK(tg_session_set_options(s, &o));
}

/* the count `what` of pass `pass` (summed over its runs; -1: it did not run) */
static int count_of(const tg_pass_record *rec, int n, const char *pass, const char *what)
{
    int total = -1;
    for (int i = 0; i < n; i++) {
        if (strcmp(rec[i].pass, pass))
            continue;
        total = total < 0 ? 0 : total;
        for (int k = 0; k < rec[i].n_counts; k++)
            if (!strcmp(rec[i].counts[k].what, what))
                total += rec[i].counts[k].n;
    }
    return total;
}

typedef struct sig {
    int n_feeds, n_fetches, n_targets;
    tg_tensor **feeds, **vals, **fetches, **targets;
} sig;

/* the level-2 records of a signature; the graph's dump into *dump when asked */
static int records(tg_session *s, const sig *q, tg_pass_record *rec, char **dump)
{
    set_level(s, 2);
    int n = 0;
    tg_graph *g = tg_session_optimized_graph(s, q->n_feeds, q->feeds, NULL, q->n_fetches,
                                             q->fetches, q->n_targets, q->targets, 32, rec,
                                             &n);
    CHECK(g != NULL);
    if (dump && g) {
        size_t len = 0;
        FILE *f = open_memstream(dump, &len);
        CHECK_OK(tg_graph_dump(g, f));
        fclose(f);
    }
    tg_graph_free(g);
    return n;
}

/* runs the signature `runs` times at level 0 (serial) and at level 2 in
 * both executors, each from the same state (n_state variables set to
 * their init first); every fetch and the final state bitwise equal */
static void check_equal(tg_session *s, const sig *q, int runs, int n_state,
                        tg_tensor *const *vars, tg_tensor *const *inits)
{
    tg_tensor *r[3][8], *state[3][8];
    for (int c = 0; c < 3; c++) {
        for (int v = 0; v < n_state; v++)
            CHECK_OK(tg_copy_(tg_variable_value(vars[v]), inits[v]));
        set_level(s, c == 0 ? 0 : 2);
        CHECK_OK(tg_session_set_executor(s, c == 2 ? TG_EXECUTOR_PARALLEL
                                                   : TG_EXECUTOR_SERIAL));
        for (int k = 0; k < runs; k++)
            CHECK_OK(tg_session_run(s, q->n_feeds, q->feeds, q->vals, q->n_fetches, q->fetches,
                                    r[c], q->n_targets, q->targets));
        for (int v = 0; v < n_state; v++)
            state[c][v] = tg_clone(tg_variable_value(vars[v]));
    }
    for (int c = 1; c < 3; c++) {
        for (int i = 0; i < q->n_fetches; i++)
            if (!same(r[c][i], r[0][i]))
                tt_fail(__FILE__, __LINE__, "fetch %d differs from level 0 (%s executor)",
                        i, c == 2 ? "parallel" : "serial");
        for (int v = 0; v < n_state; v++)
            if (!same(state[c][v], state[0][v]))
                tt_fail(__FILE__, __LINE__, "variable %d differs from level 0 (%s executor)",
                        v, c == 2 ? "parallel" : "serial");
    }
    CHECK_OK(tg_session_set_executor(s, TG_EXECUTOR_SERIAL));
}

/* ---- elementwise chains ------------------------------------------------------------- */
/* relu(tanh(x * b + c) - t) * 0.5 over shapes that cut blocks differently:
 * one block, a range of a middle dim, a range of the last dim, split over
 * the pool (over 512 Ki elements), 0-d, empty; b and c broadcast, and t is
 * a transposed (strided) value for 2-d shapes */
static void test_chain_shapes(void)
{
    static const struct {
        int nd;
        int64_t s[3];
    } shapes[] = {{2, {3, 4}}, {3, {5, 7, 3000}}, {2, {2, 20000}}, {2, {1100, 1000}},
                  {0, {0}},    {2, {0, 5}},       {3, {4, 1, 9000}}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int nd = shapes[k].nd;
        const int64_t *S = shapes[k].s;
        tg_dtype dt = k % 2 ? TG_FLOAT64 : TG_FLOAT32;
        tg_graph *g = tg_graph_new("chain");
        tg_tensor *x = tg_placeholder(g, "x", dt, nd, S);
        int64_t ts[3] = {nd == 2 ? S[1] : 0, nd == 2 ? S[0] : 0};
        tg_tensor *tp = tg_placeholder(g, "tp", dt, nd == 2 ? 2 : nd, nd == 2 ? ts : S);
        tg_tensor *b = tt_rand_dtype(dt, nd ? 1 : 0, nd ? &S[nd - 1] : NULL, -1, 1);
        int64_t cs[3] = {S[0], 1, 1};
        tg_tensor *c = tt_rand_dtype(dt, nd, cs, -1, 1);
        tg_graph_begin(g);
        tg_tensor *t = nd == 2 ? tg_transpose(tp, 0, 1) : tp;
        tg_tensor *y = tg_mul_scalar(tg_relu(tg_sub(tg_tanh(tg_add(tg_mul(x, b), c)), t)), 0.5);
        tg_graph_end();
        tg_tensor *feeds[2] = {x, tp};
        tg_tensor *vals[2] = {tt_rand_dtype(dt, nd, S, -2, 2),
                              tt_rand_dtype(dt, nd == 2 ? 2 : nd, nd == 2 ? ts : S, -1, 1)};
        sig q = {2, 1, 0, feeds, vals, &y, NULL};
        tg_session *s = tg_session_new(g);
        tg_pass_record rec[32];
        char *dump = NULL;
        int n = records(s, &q, rec, &dump);
        if (count_of(rec, n, "fuse_elementwise", "fused") != 1 ||
            count_of(rec, n, "fuse_elementwise", "ops") != 6)
            tt_fail(__FILE__, __LINE__, "shape %zu: fused %d nodes of %d ops", k,
                    count_of(rec, n, "fuse_elementwise", "fused"),
                    count_of(rec, n, "fuse_elementwise", "ops"));
        CHECK(dump && strstr(dump, "fused_elementwise") &&
              strstr(dump, "program=\"mul(%0, %1); add($0, %2); tanh($1); sub($2, %3); "
                           "relu($3); mul($4, %4)\""));
        free(dump);
        check_equal(s, &q, 1, 0, NULL, NULL);
        tg_session_free(s);
        tg_graph_free(g);
    }
}

/* where fusion stops: a value read twice, a fetched intermediate, an
 * intermediate of a smaller shape (it would be computed per output
 * element), ops that are not elementwise */
static void test_chain_boundaries(void)
{
    tg_graph *g = tg_graph_new("bounds");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){3, 4});
    tg_tensor *v = tg_placeholder(g, "v", TG_FLOAT32, 1, (int64_t[]){4});
    tg_graph_begin(g);
    tg_tensor *a = tg_exp(x);
    tg_tensor *y1 = tg_neg(tg_add_scalar(a, 1)); /* fused: add, neg (a read twice) */
    tg_tensor *y2 = tg_mul(a, a);                /* alone: no fusion */
    tg_tensor *t = tg_tanh(x);
    tg_tensor *y3 = tg_relu(t);                  /* t fetched: no fusion */
    tg_tensor *y4 = tg_mul(x, tg_sin(tg_cos(v))); /* [4] with [3, 4]: cos+sin fused alone */
    tg_tensor *y5 = tg_sigmoid(tg_sum(tg_abs(x), 1, (int[]){1}, false)); /* a reduction */
    tg_graph_end();
    tg_tensor *fetch[6] = {y1, y2, t, y3, y4, y5}, *feeds[2] = {x, v};
    tg_tensor *vals[2] = {tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){3, 4}, -1, 1),
                          tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){4}, -1, 1)};
    sig q = {2, 6, 0, feeds, vals, fetch, NULL};
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n = records(s, &q, rec, NULL);
    CHECK(count_of(rec, n, "fuse_elementwise", "fused") == 2);
    CHECK(count_of(rec, n, "fuse_elementwise", "ops") == 4);
    check_equal(s, &q, 1, 0, NULL, NULL);
    tg_session_free(s);
    tg_graph_free(g);
}

/* a read of a variable before an assign stays before it: r = w * 2 is not
 * moved into r + w, which reads the written w */
static void test_chain_around_assign(void)
{
    tg_graph *g = tg_graph_new("assign");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){5});
    tg_tensor *w0 = tt_rand(1, (int64_t[]){5}, -1, 1);
    tg_tensor *w = tg_variable(g, "w", tg_clone(w0));
    tg_graph_begin(g);
    tg_tensor *r = tg_mul_scalar(tg_exp(w), 2);
    tg_tensor *upd = tg_assign(w, tg_add(x, w));
    tg_tensor *y = tg_add(r, w); /* the new w */
    tg_graph_end();
    tg_tensor *vals[1] = {tt_rand(1, (int64_t[]){5}, -1, 1)};
    sig q = {1, 1, 1, &x, vals, &y, &upd};
    tg_session *s = tg_session_new(g);
    tg_pass_record rec[32];
    int n = records(s, &q, rec, NULL);
    /* mul joins the last add; exp reads w before the assign: it stays */
    CHECK(count_of(rec, n, "fuse_elementwise", "ops") == 2);
    check_equal(s, &q, 3, 1, &w, &w0); /* w moves on: three runs each */
    tg_session_free(s);
    tg_graph_free(g);
}

/* the op itself: a program against the same ops run one by one (bitwise),
 * and programs that are not valid */
static void test_fused_op(void)
{
    const tg_op_def *op = tg_op_find("fused_elementwise");
    CHECK(op != NULL);
    tg_tensor *a = tt_rand_dtype(TG_FLOAT32, 2, (int64_t[]){70, 300}, -2, 2);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){300}, 0.5, 2);
    tg_tensor *in[2] = {a, b};
    tg_attr p = {.name = "program", .type = TG_ATTR_STRING,
                 .u.s = "div[true_div=1](%0, %1); clamp[a=-0.5, b=0.75]($0); "
                        "leaky_relu[a=0.125](%0); gt($1, %1); where($3, $2, $1)"};
    tg_tensor *y = tg_op_call(op, 2, in, &p, 1);
    tg_tensor *q = tg_div(a, b);
    tg_tensor *want = tg_where(tg_gt(tg_clamp(q, -0.5, 0.75), b), tg_leaky_relu(a, 0.125),
                               tg_clamp(q, -0.5, 0.75));
    CHECK(y && same(y, want));
    static const struct {
        const char *prog, *msg;
    } bad[] = {
        {"bogus(%0)", "unknown op"},
        {"sum(%0)", "not an elementwise op"},
        {"add(%0, %2)", "no such input"},
        {"add(%0, $0)", "no such earlier result"},
        {"add(%0)", "wrong number of operands"},
        {"elu[a=x](%0)", "expected a number"},
        {"elu[beta=1](%0)", "unknown attribute"},
        {"elu[a=1, a=2](%0)", "repeated attribute"},
        {"relu(%0) junk", "unexpected text"},
        {"", "expected an op name"},
        {"relu(%0); add($0, %1); exp($0)", ""}, /* fine: an unread result */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tg_attr pk = {.name = "program", .type = TG_ATTR_STRING, .u.s = bad[k].prog};
        if (!*bad[k].msg)
            CHECK(tg_op_call(op, 2, in, &pk, 1) != NULL);
        else
            CHECK_ERROR(tg_op_call(op, 2, in, &pk, 1), TG_ERR_ARG, bad[k].msg);
    }
    CHECK_ERROR(tg_op_call(op, 2, in, NULL, 0), TG_ERR_ARG, "program");
}

int main(void)
{
    RUN(test_chain_shapes);
    RUN(test_chain_boundaries);
    RUN(test_chain_around_assign);
    RUN(test_fused_op);
    return tt_finish();
}
