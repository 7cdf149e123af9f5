/* The parallel executor and the profiler: the task group under it (every
 * task once, pushed from any thread), a wide graph giving the serial bits,
 * two nodes that can only finish when both run at the same time, errors
 * raised on workers, and Chrome trace files read back as JSON. */
#include "core/threadpool.h"
#include "harness.h"
#include "io/json.h"
#include "ops/elementwise.h"
#include "runtime/runtime_impl.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* at most level 1: the test counts the nodes a run executes (or names
 * them), which fusion at level 2 changes */
static void without_fusion(tg_session *s)
{
    tg_session_options o = tg_session_default_options();
    if (o.opt_level > 1)
        o.opt_level = 1;
    CHECK_OK(tg_session_set_options(s, &o));
}
/* at least two threads for the tests that need overlap; restored after */
static int want_threads(void)
{
    int old = tg_get_num_threads();
    if (old < 2)
        tg_set_num_threads(2);
    return old;
}

/* ---- task groups ------------------------------------------------------------------------ */
enum { N_TASKS = 2000 };
static atomic_int runs[N_TASKS];
static atomic_int bad_worker;

static void tree_task(tg_tasks *q, void *ctx, int64_t task, int worker)
{
    (void)ctx;
    if (worker < 0 || worker >= tg_get_num_threads())
        atomic_fetch_add(&bad_worker, 1);
    atomic_fetch_add(&runs[task], 1);
    for (int64_t c = 2 * task + 1; c <= 2 * task + 2; c++)
        if (c < N_TASKS)
            tg_tasks_push(q, c);
}

static void check_tree(void)
{
    int wrong = 0;
    for (int i = 0; i < N_TASKS; i++)
        wrong += atomic_load(&runs[i]) != 1;
    CHECK(wrong == 0);
    CHECK(atomic_load(&bad_worker) == 0);
}

static void reset_tree(void)
{
    for (int i = 0; i < N_TASKS; i++)
        atomic_store(&runs[i], 0);
    atomic_store(&bad_worker, 0);
}

static void nested_tree(void *ctx, int64_t b, int64_t e)
{
    (void)ctx;
    if (b == 0 && e > 0) {
        int64_t root = 0;
        CHECK(tg_tasks_run(1, &root, tree_task, NULL) == 0); /* on this thread */
    }
}

static void test_tasks(void)
{
    int old = want_threads();
    reset_tree();
    int64_t root = 0;
    CHECK(tg_tasks_run(1, &root, tree_task, NULL) == 0);
    check_tree();
    /* several initial tasks: the tree from its second level (task 0 marked
     * as run by hand) */
    reset_tree();
    atomic_store(&runs[0], 1);
    int64_t two[2] = {2, 1};
    CHECK(tg_tasks_run(2, two, tree_task, NULL) == 0);
    check_tree();
    CHECK(tg_tasks_run(0, NULL, tree_task, NULL) == 0); /* nothing to do */
    /* from inside a parallel region: everything on the calling thread */
    reset_tree();
    tg_parallel_for(2, 1, nested_tree, NULL);
    check_tree();
    tg_set_num_threads(old);
}

/* ---- a wide graph ------------------------------------------------------------------------ */
enum { BRANCHES = 8, DIM = 48 };

static tg_tensor *wide(tg_tensor *x, tg_tensor *const *w)
{
    tg_tensor *acc = NULL;
    for (int i = 0; i < BRANCHES; i++) {
        tg_tensor *h = tg_tanh(tg_matmul(x, w[i]));
        acc = acc ? tg_add(acc, h) : h;
    }
    return acc;
}

typedef struct wide_graph {
    tg_graph *g;
    tg_tensor *x, *y;
} wide_graph;

static void build_wide(wide_graph *wg, tg_tensor *const *w)
{
    wg->g = tg_graph_new("wide");
    wg->x = tg_placeholder(wg->g, "x", TG_FLOAT32, 2, (int64_t[]){DIM, DIM});
    wg->y = wide(wg->x, w);
}

static tg_tensor *rand32(int ndim, const int64_t *shape)
{
    return tg_cast(tg_detach(tt_rand(ndim, shape, -1, 1)), TG_FLOAT32);
}

static void test_wide_graph(void)
{
    int old = want_threads();
    tg_tensor *w[BRANCHES];
    for (int i = 0; i < BRANCHES; i++)
        w[i] = rand32(2, (int64_t[]){DIM, DIM});
    tg_tensor *x = rand32(2, (int64_t[]){DIM, DIM});
    tg_tensor *ey = wide(x, w);
    wide_graph wg;
    build_wide(&wg, w);
    tg_session *s = tg_session_new(wg.g);
    without_fusion(s);
    tg_tensor *r[4];
    for (int c = 0; c < 4; c++) {
        CHECK_OK(tg_session_set_memory_plan(s, c % 2 == 1));
        CHECK_OK(tg_session_set_executor(s, c < 2 ? TG_EXECUTOR_SERIAL : TG_EXECUTOR_PARALLEL));
        CHECK_OK(tg_session_run(s, 1, &wg.x, &x, 1, &wg.y, &r[c], 0, NULL));
        CHECK(tt_same(r[c], ey));
        tg_session_stats st;
        tg_session_get_stats(s, &st);
        CHECK(st.nodes_last_run == 3 * BRANCHES - 1);
    }
    /* the parallel executor again and again: the same bits every time */
    for (int k = 0; k < 20; k++) {
        tg_tensor *rk;
        CHECK_OK(tg_session_run(s, 1, &wg.x, &x, 1, &wg.y, &rk, 0, NULL));
        CHECK(tt_same(rk, ey));
    }
    tg_session_free(s);
    tg_graph_free(wg.g);
    tg_set_num_threads(old);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

/* ---- overlap, proved without timing: each rendezvous node finishes only
 * when the other has started (or after 10 s, reported as a failure) ---------------- */
static atomic_int arrived, met;

static tg_status rv_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    return tg_infer_set(c, 0, x->dtype, x->ndim, x->shape);
}

static tg_status rv_kernel(tg_op_ctx *c)
{
    tg__convert_into(c->out[0], c->in[0]);
    atomic_fetch_add(&arrived, 1);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 10000 && atomic_load(&arrived) < 2; i++)
        nanosleep(&ms, NULL);
    if (atomic_load(&arrived) >= 2)
        atomic_fetch_add(&met, 1);
    return TG_OK;
}

static const tg_op_def rv_op = {.name = "rendezvous", .n_in = 1, .n_out = 1,
                                .infer = rv_infer, .kernel = {[TG_CPU] = rv_kernel}};

static void test_nodes_overlap(void)
{
    int old = want_threads();
    tg_graph *g = tg_graph_new("overlap");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){4});
    tg_tensor *a = tg_op_call(&rv_op, 1, &x, NULL, 0);
    tg_tensor *b = tg_op_call(&rv_op, 1, &x, NULL, 0);
    tg_tensor *y = tg_add(tg_exp(a), tg_sin(b));
    tg_session *s = tg_session_new(g);
    without_fusion(s);
    CHECK_OK(tg_session_set_executor(s, TG_EXECUTOR_PARALLEL));
    CHECK_OK(tg_session_trace_begin(s));
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){4}, (double[]){0, 1, 2, 3}), *r;
    atomic_store(&arrived, 0);
    atomic_store(&met, 0);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &y, &r, 0, NULL));
    CHECK(atomic_load(&met) == 2); /* both rendezvous nodes ran at the same time */
    CHECK_NEAR(tg_get(r, (int64_t[]){2}), exp(2.0) + sin(2.0), 1e-15);
    /* the spans say the same: two threads, overlapping (each started
     * before the other ended, by construction) */
    const char *path = "test_executor_overlap.json";
    CHECK_OK(tg_session_trace_end(s, path));
    size_t len = 0;
    char *text = read_file(path, &len), err[200];
    tg_json *root = text ? tg_json_parse(text, len, err, sizeof err) : NULL;
    const tg_json *ev = root ? tg_json_get(root, "traceEvents") : NULL;
    CHECK(ev && ev->type == TG_JSON_ARRAY && ev->n == 5);
    double t0[2] = {0}, t1[2] = {0}, tid[2] = {0};
    int n_rv = 0;
    for (int i = 0; ev && i < ev->n && n_rv < 2; i++)
        if (!strcmp(tg_json_get(&ev->items[i], "cat")->str, "rendezvous")) {
            t0[n_rv] = tg_json_get(&ev->items[i], "ts")->num;
            t1[n_rv] = t0[n_rv] + tg_json_get(&ev->items[i], "dur")->num;
            tid[n_rv++] = tg_json_get(&ev->items[i], "tid")->num;
        }
    CHECK(n_rv == 2 && tid[0] != tid[1]);
    CHECK(t0[0] <= t1[1] && t0[1] <= t1[0]);
    tg_json_free(root);
    free(text);
    remove(path);
    tg_session_free(s);
    tg_graph_free(g);
    tg_set_num_threads(old);
}

/* ---- errors raised on workers ------------------------------------------------------------- */
static tg_status boom_kernel(tg_op_ctx *c)
{
    (void)c;
    return tg__error(TG_ERR_ARG, "boom: refused on purpose");
}

static const tg_op_def boom_op = {.name = "boom", .n_in = 1, .n_out = 1,
                                  .infer = rv_infer, .kernel = {[TG_CPU] = boom_kernel}};

static void test_parallel_errors(void)
{
    int old = want_threads();
    tg_graph *g = tg_graph_new("errors");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_tensor *side = x;
    for (int i = 0; i < 10; i++)
        side = tg_sin(side);
    tg_tensor *bad = tg_op_call(&boom_op, 1, (tg_tensor *[]){tg_exp(x)}, NULL, 0);
    tg_tensor *y = tg_add(bad, side);
    tg_tensor *ok = tg_cos(side);
    tg_session *s = tg_session_new(g);
    CHECK_OK(tg_session_set_executor(s, TG_EXECUTOR_PARALLEL));
    tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0, 1, 2});
    tg_tensor *r = xv, *fetch[2] = {ok, y}, *rr[2] = {xv, xv};
    for (int k = 0; k < 3; k++) {
        CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, &y, &r, 0, NULL), TG_ERR_ARG,
                    "node 'boom' (boom) of graph 'errors' failed: boom: refused on purpose");
        CHECK(r == NULL);
        CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 2, fetch, rr, 0, NULL), TG_ERR_ARG,
                    "refused on purpose");
        CHECK(rr[0] == NULL && rr[1] == NULL);
    }
    /* the session still runs what does not fail */
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &ok, &r, 0, NULL));
    double e = 2;
    for (int i = 0; i < 10; i++)
        e = sin(e);
    CHECK_NEAR(tg_get(r, (int64_t[]){2}), cos(e), 1e-15);
    tg_session_free(s);
    tg_graph_free(g);
    tg_set_num_threads(old);
}

/* ---- reads around assigns --------------------------------------------------------------
 * readers made before an assign see the old value and readers made after
 * it the new one, in both executors (ordering-only edges both ways) */
static void test_assign_order(void)
{
    int old = want_threads();
    for (int par = 0; par < 2; par++) {
        tg_graph *g = tg_graph_new("order");
        tg_tensor *v = tg_variable(g, "v", tg_ones(TG_FLOAT64, 1, (int64_t[]){4096}));
        tg_graph_begin(g);
        tg_tensor *view = tg_reshape(v, 2, (int64_t[]){64, 64}); /* made before */
        tg_tensor *before = tg_mul_scalar(v, 2);
        tg_tensor *upd = tg_assign_sub(v, tg_ones(TG_FLOAT64, 1, (int64_t[]){1}), 1.0);
        tg_tensor *after = tg_add_scalar(v, 5);
        tg_tensor *after_view = tg_mul_scalar(view, 3); /* reads through the old view */
        tg_tensor *before_sum = tg_sum(before, 0, NULL, false);
        tg_graph_end();
        tg_session *s = tg_session_new(g);
        CHECK_OK(tg_session_set_executor(s, par ? TG_EXECUTOR_PARALLEL : TG_EXECUTOR_SERIAL));
        tg_tensor *fetch[3] = {before_sum, after, after_view}, *r[3];
        for (int k = 0; k < 10; k++) {
            CHECK_OK(tg_session_run(s, 0, NULL, NULL, 3, fetch, r, 1, &upd));
            CHECK_NEAR(tg_item(r[0]), 4096 * 2.0 * (1 - k), 0);
            CHECK_NEAR(tg_get(r[1], (int64_t[]){4095}), (double)(-k) + 5, 0);
            CHECK_NEAR(tg_get(r[2], (int64_t[]){63, 63}), 3.0 * (-k), 0);
        }
        tg_session_free(s);
        tg_graph_free(g);
    }
    tg_set_num_threads(old);
}

/* ---- the profiler ---------------------------------------------------------------------------- */
/* parses the trace and checks every event; returns the number of events
 * (-1 when the file is not a trace) */
static int check_trace(const char *path, const tg_graph *g, int *n_tids, int *n_overlaps)
{
    size_t len = 0;
    char *text = read_file(path, &len), err[200];
    tg_json *root = text ? tg_json_parse(text, len, err, sizeof err) : NULL;
    free(text);
    const tg_json *ev = root ? tg_json_get(root, "traceEvents") : NULL;
    if (!ev || ev->type != TG_JSON_ARRAY) {
        tg_json_free(root);
        return -1;
    }
    bool seen_tid[64] = {false};
    int bad = 0;
    *n_tids = *n_overlaps = 0;
    for (int i = 0; i < ev->n; i++) {
        const tg_json *e = &ev->items[i];
        const tg_json *name = tg_json_get(e, "name"), *cat = tg_json_get(e, "cat"),
                      *ph = tg_json_get(e, "ph"), *ts = tg_json_get(e, "ts"),
                      *dur = tg_json_get(e, "dur"), *tid = tg_json_get(e, "tid"),
                      *pid = tg_json_get(e, "pid");
        if (!name || name->type != TG_JSON_STRING || !cat || cat->type != TG_JSON_STRING ||
            !ph || ph->type != TG_JSON_STRING || strcmp(ph->str, "X") != 0 || !ts ||
            ts->type != TG_JSON_NUMBER || ts->num < 0 || !dur ||
            dur->type != TG_JSON_NUMBER || dur->num < 0 || !tid ||
            tid->type != TG_JSON_NUMBER || tid->num < 0 || tid->num >= 64 || !pid ||
            pid->type != TG_JSON_NUMBER) {
            bad++;
            continue;
        }
        /* name is an op node of the graph, cat its op */
        tg_tensor *t = tg_graph_find((tg_graph *)g, name->str);
        const tg_gnode *n = t ? &g->nodes[g->values[t->value].node] : NULL;
        if (!n || n->kind != TG_GNODE_OP || strcmp(cat->str, n->op->name) != 0)
            bad++;
        if (!seen_tid[(int)tid->num]) {
            seen_tid[(int)tid->num] = true;
            (*n_tids)++;
        }
        for (int j = 0; j < i; j++) { /* informational only */
            const tg_json *o = &ev->items[j];
            const tg_json *ots = tg_json_get(o, "ts"), *odur = tg_json_get(o, "dur"),
                          *otid = tg_json_get(o, "tid");
            if (ots && odur && otid && otid->num != tid->num && ots->num < ts->num + dur->num &&
                ts->num < ots->num + odur->num)
                (*n_overlaps)++;
        }
    }
    int n = bad ? -1 : ev->n;
    tg_json_free(root);
    return n;
}

static void test_profiler(void)
{
    int old = want_threads();
    tg_tensor *w[BRANCHES];
    for (int i = 0; i < BRANCHES; i++)
        w[i] = rand32(2, (int64_t[]){DIM, DIM});
    tg_tensor *x = rand32(2, (int64_t[]){DIM, DIM});
    wide_graph wg;
    build_wide(&wg, w);
    tg_session *s = tg_session_new(wg.g);
    without_fusion(s);
    const char *path = "test_executor_trace.json";
    for (int par = 0; par < 2; par++) {
        CHECK_OK(tg_session_set_executor(s, par ? TG_EXECUTOR_PARALLEL : TG_EXECUTOR_SERIAL));
        CHECK_OK(tg_session_trace_begin(s));
        tg_tensor *r;
        for (int k = 0; k < 3; k++)
            CHECK_OK(tg_session_run(s, 1, &wg.x, &x, 1, &wg.y, &r, 0, NULL));
        CHECK_OK(tg_session_trace_end(s, path));
        int tids = 0, overlaps = 0;
        int n = check_trace(path, wg.g, &tids, &overlaps);
        CHECK(n == 3 * (3 * BRANCHES - 1)); /* one span per op execution */
        if (par)
            printf("  parallel trace: %d spans on %d threads, %d overlapping pairs\n", n,
                   tids, overlaps);
        else
            CHECK(tids == 1 && overlaps == 0);
    }
    remove(path);
    /* runs outside a trace record nothing; errors */
    tg_tensor *r;
    CHECK_OK(tg_session_run(s, 1, &wg.x, &x, 1, &wg.y, &r, 0, NULL));
    CHECK_FAILS(tg_session_trace_end(s, path), TG_ERR_ARG, "no trace was begun");
    CHECK_OK(tg_session_trace_begin(s));
    CHECK_FAILS(tg_session_trace_end(s, "/nonexistent-dir/trace.json"), TG_ERR_IO,
                "cannot write '/nonexistent-dir/trace.json'");
    CHECK_OK(tg_session_trace_begin(s));
    CHECK_OK(tg_session_run(s, 1, &wg.x, &x, 1, &wg.y, &r, 0, NULL));
    CHECK_OK(tg_session_trace_end(s, NULL)); /* discarded */
    CHECK_FAILS(tg_session_trace_begin(NULL), TG_ERR_ARG, "session is NULL");
    CHECK_FAILS(tg_session_trace_end(NULL, path), TG_ERR_ARG, "session is NULL");
    tg_session_free(s);
    tg_graph_free(wg.g);
    tg_set_num_threads(old);
}

int main(void)
{
    RUN(test_tasks);
    RUN(test_wide_graph);
    RUN(test_nodes_overlap);
    RUN(test_parallel_errors);
    RUN(test_assign_order);
    RUN(test_profiler);
    return tt_finish();
}
