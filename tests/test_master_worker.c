/* Graphs over processes: rank 0 (the master) runs sessions whose nodes are
 * placed on "/rank:1/cpu:0"; rank 1 serves (tg_dist_serve). Run by ctest
 * twice: alone (a world of one: such runs are refused, saying what they
 * need) and under `mpirun -np 2` (dist_master_worker): an MLP and LeNet's
 * training step give the unpartitioned graph's bits, state on both
 * ranks with edges both ways for 300 steps, fetches of values and
 * variables that live on the worker, cond and while_loop (and their
 * gradients) on the worker, an error on the worker that fails the step
 * naming it (the next step runs), and what is refused. */
#include "device_graphs.h"
#include "harness.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *R0 = "/rank:0/cpu:0", *R1 = "/rank:1/cpu:0";

static void test_mlp_over_ranks(void)
{
    tg_scope_begin();
    tg_generator *gen = tg_generator_new(7);
    tg_tensor *w[4];
    mlp_weights(gen, w);
    tg_graph *g1 = tg_graph_new("plain"), *g2 = tg_graph_new("placed");
    tg_tensor *x1 = tg_placeholder(g1, "x", TG_FLOAT32, 2, (int64_t[]){16, 64});
    tg_tensor *x2 = tg_placeholder(g2, "x", TG_FLOAT32, 2, (int64_t[]){16, 64});
    /* layer 2 on the worker: its output is fetched from there */
    tg_tensor *y1 = mlp(g1, x1, w, NULL, NULL), *y2 = mlp(g2, x2, w, R0, R1);
    tg_session *s1 = tg_session_new(g1), *s2 = tg_session_new(g2);
    int bad = 0;
    for (int i = 0; i < 5; i++) {
        tg_scope_begin();
        tg_tensor *xv = tg_rand_normal(gen, TG_FLOAT32, 2, (int64_t[]){16, 64}, 0, 1), *r1, *r2;
        CHECK_OK(tg_session_run(s1, 1, &x1, &xv, 1, &y1, &r1, 0, NULL));
        CHECK_OK(tg_session_run(s2, 1, &x2, &xv, 1, &y2, &r2, 0, NULL));
        bad += !same_bits(r1, r2);
        tg_scope_end();
    }
    CHECK(bad == 0);
    tg_session_free(s1);
    tg_session_free(s2);
    tg_graph_free(g1);
    tg_graph_free(g2);
    tg_generator_free(gen);
    tg_scope_end();
}

/* convolutions on rank 0, the classifier and its parameters on rank 1 */
static void test_lenet_step_over_ranks(void)
{
    tg_scope_begin();
    step_graph a, b;
    lenet_step_graph(&a, NULL, NULL);
    lenet_step_graph(&b, R0, R1);
    tg_generator *gen = tg_generator_new(5);
    int bad = 0;
    for (int step = 0; step < 10; step++) {
        tg_scope_begin();
        tg_tensor *xv, *yv, *la, *lb;
        lenet_batch(gen, &xv, &yv);
        tg_tensor *fa[2] = {a.x, a.y}, *fb[2] = {b.x, b.y}, *fv[2] = {xv, yv};
        CHECK_OK(tg_session_run(a.s, 2, fa, fv, 1, &a.loss, &la, a.n, a.updates));
        CHECK_OK(tg_session_run(b.s, 2, fb, fv, 1, &b.loss, &lb, b.n, b.updates));
        bad += !same_bits(la, lb);
        tg_scope_end();
    }
    CHECK(bad == 0);
    /* the parameters: the classifier's live on rank 1, fetched from there */
    tg_tensor *pa[16], *pb[16];
    CHECK_OK(tg_session_run(a.s, 0, NULL, NULL, a.n, a.vars, pa, 0, NULL));
    CHECK_OK(tg_session_run(b.s, 0, NULL, NULL, b.n, b.vars, pb, 0, NULL));
    for (int i = 0; i < a.n; i++)
        bad += !same_bits(pa[i], pb[i]);
    CHECK(bad == 0);
    /* the module's own tensors: the classifier's are stale here until pulled */
    tg_named_tensor *na, *nb;
    int n = tg_module_parameters(a.net, &na), stale = 0;
    tg_module_parameters(b.net, &nb);
    for (int i = 0; i < n; i++)
        stale += !same_bits(na[i].tensor, nb[i].tensor);
    CHECK(stale > 0);
    CHECK_OK(tg_session_pull_variables(b.s));
    for (int i = 0; i < n; i++)
        bad += !same_bits(na[i].tensor, nb[i].tensor);
    CHECK(bad == 0);
    tg_named_tensors_free(na);
    tg_named_tensors_free(nb);
    tg_generator_free(gen);
    step_graph_free(&a);
    step_graph_free(&b);
    tg_scope_end();
}

/* counters on both ranks, values crossing both ways in one step */
static void test_both_ways(void) { CHECK(pingpong_wrong(R0, R1, 300) == 0); }

/* an index out of range on the worker fails the step, naming its device;
 * the next step runs */
static void test_worker_error(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("gather");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){4});
    tg_tensor *i = tg_placeholder(g, "i", TG_INT64, 1, (int64_t[]){2});
    tg_graph_begin(g);
    tg_tensor *h = tg_exp(x);
    tg_device_scope_begin(R1);
    tg_tensor *picked = tg_index_select(h, 0, i);
    tg_device_scope_end();
    tg_tensor *y = tg_neg(picked);
    tg_graph_end();
    tg_graph_set_device(h, R0);
    tg_graph_set_device(y, R0);
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT32, 1, (int64_t[]){4}), *r = NULL;
    tg_tensor *bad = tt_tensor(TG_INT64, 1, (int64_t[]){2}, (double[]){0, 9});
    tg_tensor *good = tt_tensor(TG_INT64, 1, (int64_t[]){2}, (double[]){3, 1});
    tg_tensor *feeds[2] = {x, i}, *fv[2] = {xv, bad};
    CHECK_FAILS(tg_session_run(s, 2, feeds, fv, 1, &y, &r, 0, NULL), TG_ERR_INDEX,
                "/rank:1/cpu:0");
    CHECK(r == NULL);
    fv[1] = good;
    CHECK_OK(tg_session_run(s, 2, feeds, fv, 1, &y, &r, 0, NULL));
    CHECK(r && ((const float *)tg_data(r))[0] < -2.7f);
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* control flow on the worker: its bodies travel nested in the partition */
static void test_control_flow_on_worker(void)
{
    int on1 = 0;
    CHECK(control_flow_mismatches(R0, R1, &on1) == 0);
    CHECK(on1 >= 3); /* cond, while_loop and their gradients' parts */
}

/* a traced run: the worker's spans come back on its device's track, in
 * the master's clock */
static void test_trace_has_worker_track(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("traced");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){8}), *r;
    tg_graph_begin(g);
    tg_device_scope_begin(R0);
    tg_tensor *a = tg_exp(x);
    tg_device_scope_begin(R1);
    tg_tensor *b = tg_neg(a);
    tg_device_scope_end();
    tg_tensor *c = tg_abs(b);
    tg_device_scope_end();
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT32, 1, (int64_t[]){8});
    char path[] = "/tmp/tg_worker_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &c, &r, 0, NULL)); /* untraced first */
    CHECK_OK(tg_session_trace_begin(s));
    for (int i = 0; i < 3; i++)
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &c, &r, 0, NULL));
    CHECK_OK(tg_session_trace_end(s, path));
    char *text = read_text(path);
    CHECK(text != NULL);
    if (text) {
        CHECK(strstr(text, "\"args\": {\"name\": \"/rank:1/cpu:0\"}") != NULL);
        CHECK(strstr(text, "\"name\": \"neg\", \"cat\": \"neg\", \"ph\": \"X\"") != NULL);
        CHECK(strstr(text, "\"cat\": \"recv\"") != NULL);
        CHECK(strstr(text, "\"ts\": -") == NULL); /* in the master's clock, after its start */
        int n_neg = 0;
        for (const char *p = text; (p = strstr(p, "\"name\": \"neg\"")); p++)
            n_neg++;
        CHECK(n_neg == 3); /* one per traced run, none from the untraced one */
    }
    free(text);
    unlink(path);
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* a variable on the worker changed on the master (an eager write, as an
 * optimizer step or a checkpoint load makes) is sent before the next run;
 * one changed by the graph there is pulled back; the worker's copy
 * outlives the session that made it */
static void test_variable_sync(void)
{
    tg_scope_begin();
    tg_tensor *w = tg_full(TG_FLOAT64, 1, (int64_t[]){3}, 2.0);
    tg_graph *g = tg_graph_new("sync");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3}), *r;
    tg_device_scope_begin(R1);
    tg_tensor *wv = tg_variable_ref(g, "w", w);
    tg_graph_begin(g);
    tg_tensor *y = tg_mul(x, wv);
    tg_tensor *upd = tg_assign(wv, tg_add_scalar(wv, 1.0));
    tg_device_scope_end();
    tg_device_scope_begin(R0);
    tg_tensor *z = tg_neg(y);
    tg_device_scope_end();
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &z, &r, 0, NULL));
    CHECK(((const double *)tg_data(r))[0] == -2.0);
    CHECK_OK(tg_fill_(w, 5.0)); /* here, between runs */
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &z, &r, 0, NULL));
    CHECK(((const double *)tg_data(r))[0] == -5.0);
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 0, NULL, NULL, 1, &upd)); /* 6 there */
    CHECK(((const double *)tg_data(w))[0] == 5.0);
    CHECK_OK(tg_session_pull_variables(s));
    CHECK(((const double *)tg_data(w))[0] == 6.0);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &z, &r, 0, NULL)); /* no stale push */
    CHECK(((const double *)tg_data(r))[0] == -6.0);
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 0, NULL, NULL, 1, &upd)); /* 7 there */
    tg_session_free(s);
    tg_graph_free(g);
    /* a new graph and session using w: the worker's copy (7), not this 6 */
    g = tg_graph_new("sync_again");
    x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3});
    tg_device_scope_begin(R1);
    wv = tg_variable_ref(g, "w", w);
    tg_graph_begin(g);
    y = tg_mul(x, wv);
    tg_device_scope_end();
    tg_device_scope_begin(R0);
    z = tg_neg(y);
    tg_device_scope_end();
    tg_graph_end();
    s = tg_session_new(g);
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &z, &r, 0, NULL));
    CHECK(((const double *)tg_data(r))[0] == -7.0);
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* two devices of the worker and one of the master: the worker's two
 * partitions of a step run at once there and meet in its rendezvous */
static tg_tensor *three_devices(tg_graph *g, tg_tensor *x, bool placed)
{
    tg_graph_begin(g);
    scope_begin(placed ? R1 : NULL);
    tg_tensor *p = tg_exp(tg_neg(x));
    scope_end(placed ? R1 : NULL);
    scope_begin(placed ? "/rank:1/cpu:1" : NULL);
    tg_tensor *q = tg_mul(p, tg_sin(x)); /* from rank 0 and from the worker's cpu:0 */
    scope_end(placed ? "/rank:1/cpu:1" : NULL);
    scope_begin(placed ? R1 : NULL);
    tg_tensor *u = tg_add(q, p); /* back from cpu:1 to cpu:0 on the worker */
    scope_end(placed ? R1 : NULL);
    scope_begin(placed ? R0 : NULL);
    tg_tensor *t = tg_sum(tg_abs(u), 0, NULL, false);
    scope_end(placed ? R0 : NULL);
    tg_graph_end();
    return t;
}

static void test_two_devices_on_a_worker(void)
{
    tg_scope_begin();
    tg_graph *g1 = tg_graph_new("plain"), *g2 = tg_graph_new("placed");
    tg_tensor *x1 = tg_placeholder(g1, "x", TG_FLOAT64, 1, (int64_t[]){5});
    tg_tensor *x2 = tg_placeholder(g2, "x", TG_FLOAT64, 1, (int64_t[]){5});
    tg_tensor *t1 = three_devices(g1, x1, false), *t2 = three_devices(g2, x2, true);
    tg_session *s1 = tg_session_new(g1), *s2 = tg_session_new(g2);
    tg_generator *gen = tg_generator_new(4);
    int bad = 0;
    for (int i = 0; i < 20; i++) {
        tg_scope_begin();
        tg_tensor *xv = tg_rand_normal(gen, TG_FLOAT64, 1, (int64_t[]){5}, 0, 1), *r1, *r2;
        CHECK_OK(tg_session_run(s1, 1, &x1, &xv, 1, &t1, &r1, 0, NULL));
        CHECK_OK(tg_session_run(s2, 1, &x2, &xv, 1, &t2, &r2, 0, NULL));
        bad += !same_bits(r1, r2);
        tg_scope_end();
    }
    CHECK(bad == 0);
    tg_generator_free(gen);
    tg_session_free(s1);
    tg_session_free(s2);
    tg_graph_free(g1);
    tg_graph_free(g2);
    tg_scope_end();
}

/* what a worker cannot run is refused with the reason */
static void test_refused(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("refused");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){2}), *r;
    tg_graph_begin(g);
    tg_device_scope_begin("/rank:1/cpu:30001");
    tg_tensor *p = tg_exp(x);
    tg_device_scope_end();
    tg_device_scope_begin("/rank:5/cpu:0");
    tg_tensor *q = tg_exp(x);
    tg_device_scope_end();
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, &p, &r, 0, NULL), TG_ERR_UNSUPPORTED,
                "device index is at most 30000");
    CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, &q, &r, 0, NULL), TG_ERR_ARG,
                "no rank 5 in a world of 2");
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* a world of one: a node on another rank's device is refused, saying what
 * it needs; rank 0 cannot serve */
static void test_alone(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("alone");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){2}), *r;
    tg_graph_begin(g);
    tg_device_scope_begin(R1);
    tg_tensor *y = tg_exp(x);
    tg_device_scope_end();
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    CHECK_FAILS(tg_session_run(s, 1, &x, &xv, 1, &y, &r, 0, NULL), TG_ERR_UNSUPPORTED,
                "tg_dist_serve");
    CHECK_OK(tg_session_pull_variables(s)); /* no variable lives elsewhere */
    CHECK_FAILS(tg_session_pull_variables(NULL), TG_ERR_ARG, "NULL");
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
    if (tg_dist_built())
        CHECK_FAILS(tg_dist_serve(), TG_ERR_ARG, "rank 0 is the master");
    else
        CHECK_FAILS(tg_dist_serve(), TG_ERR_UNSUPPORTED, "without MPI");
}

/* --die (tests/dist/test_faults.sh): the master kills its worker between
 * steps; the next step must fail naming the lost rank, not hang */
static int die(void)
{
    tg_tensor *pid = tg_full(TG_INT64, 1, (int64_t[]){1}, (double)getpid());
    if (tg_dist_rank() != 0) { /* tells the master its pid, then serves */
        if (tg_dist_send(pid, 0, 7) == TG_OK)
            tg_dist_serve();
        return 1;
    }
    tg_graph *g = tg_graph_new("victim");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){4}), *r;
    tg_graph_begin(g);
    tg_device_scope_begin(R1);
    tg_tensor *y = tg_exp(x);
    tg_device_scope_end();
    tg_tensor *z = tg_neg(y);
    tg_graph_end();
    tg_graph_set_device(z, R0);
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    if (tg_dist_recv(pid, 1, 7) != TG_OK ||
        tg_session_run(s, 1, &x, &xv, 1, &z, &r, 0, NULL) != TG_OK) {
        fprintf(stderr, "rank 0: before the kill: %s\n", tg_last_error());
        return 1;
    }
    kill((pid_t)tg_item(pid), SIGKILL);
    tg_status st = tg_session_run(s, 1, &x, &xv, 1, &z, &r, 0, NULL);
    fprintf(stderr, "rank 0: the step after the kill: %s\n",
            st == TG_OK ? "succeeded" : tg_last_error());
    return st == TG_OK ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (tg_dist_built() && tg_dist_init() != TG_OK) {
        fprintf(stderr, "tg_dist_init: %s\n", tg_last_error());
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "--die"))
        return die();
    if (tg_dist_rank() != 0) { /* a worker: serves until the master finalizes */
        tg_status st = tg_dist_serve();
        if (st != TG_OK)
            fprintf(stderr, "rank %d: tg_dist_serve: %s\n", tg_dist_rank(), tg_last_error());
        tg_dist_finalize();
        return st == TG_OK ? 0 : 1;
    }
    if (tg_dist_world_size() == 1) {
        RUN(test_alone);
    } else {
        RUN(test_mlp_over_ranks);
        RUN(test_lenet_step_over_ranks);
        RUN(test_both_ways);
        RUN(test_worker_error);
        RUN(test_control_flow_on_worker);
        RUN(test_two_devices_on_a_worker);
        RUN(test_variable_sync);
        RUN(test_trace_has_worker_track);
        RUN(test_refused);
    }
    int rc = tt_finish();
    tg_dist_finalize();
    return rc;
}
