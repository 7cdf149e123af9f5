/* Devices, placement and partitioned runs: device names, scopes, Send/Recv
 * across virtual CPU devices giving the unpartitioned graph's bits (an
 * MLP, a branching graph, LeNet's training step with SGD momentum),
 * edges both ways for 1000 steps, a failing partition aborting the step
 * on every device, and the trace's device tracks. */
#include "device_graphs.h"
#include "harness.h"
#include "io/json.h"
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_device_names(void)
{
    tg_device d;
    char buf[64];
    CHECK_OK(tg_device_parse("cpu:3", &d));
    CHECK(d.type == TG_CPU && d.index == 3 && d.rank == 0);
    CHECK(!strcmp(tg_device_str(d, buf, sizeof buf), "cpu:3"));
    CHECK_OK(tg_device_parse("/rank:2/cpu:1", &d));
    CHECK(d.index == 1 && d.rank == 2);
    CHECK(!strcmp(tg_device_str(d, buf, sizeof buf), "/rank:2/cpu:1"));
    CHECK_OK(tg_device_parse("cpu", &d));
    CHECK(d.index == 0);
    CHECK_FAILS(tg_device_parse("cpu:x", &d), TG_ERR_ARG, "index is not a number");
    CHECK_FAILS(tg_device_parse("tpu:0", &d), TG_ERR_ARG, "unknown device kind");
    CHECK_FAILS(tg_device_parse("/rank:1cpu:0", &d), TG_ERR_ARG, "'/' must follow");
    CHECK_FAILS(tg_device_parse("cpu:1 ", &d), TG_ERR_ARG, "unexpected text");
    CHECK_FAILS(tg_device_parse("cpu:99999999", &d), TG_ERR_ARG, "cpu:99999999");
    CHECK_FAILS(tg_device_parse("gpu:0", &d), TG_ERR_UNSUPPORTED, "GPU");
    CHECK_FAILS(tg_device_scope_end(), TG_ERR_ARG, "no device scope");
    CHECK_FAILS(tg_device_scope_begin("cpu:-1"), TG_ERR_ARG, "invalid device name");
}

static void test_scopes_record_devices(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("scopes");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){4});
    char buf[64];
    CHECK(!strcmp(tg_graph_device(x, buf, sizeof buf), ""));
    CHECK_OK(tg_graph_begin(g));
    CHECK_OK(tg_device_scope_begin("cpu:1"));
    tg_tensor *a = tg_relu(x);
    CHECK_OK(tg_device_scope_begin("/rank:1/cpu:0"));
    tg_tensor *b = tg_neg(a);
    CHECK_OK(tg_device_scope_begin(""));
    tg_tensor *c = tg_exp(b);
    CHECK_OK(tg_device_scope_end());
    CHECK_OK(tg_device_scope_end());
    tg_tensor *e = tg_abs(c);
    CHECK_OK(tg_device_scope_end());
    tg_tensor *f = tg_abs(e);
    tg_graph_end();
    CHECK(!strcmp(tg_graph_device(a, buf, sizeof buf), "cpu:1"));
    CHECK(!strcmp(tg_graph_device(b, buf, sizeof buf), "/rank:1/cpu:0"));
    CHECK(!strcmp(tg_graph_device(c, buf, sizeof buf), ""));
    CHECK(!strcmp(tg_graph_device(e, buf, sizeof buf), "cpu:1"));
    CHECK(!strcmp(tg_graph_device(f, buf, sizeof buf), ""));
    CHECK_OK(tg_graph_set_device(f, "cpu:2"));
    CHECK(!strcmp(tg_graph_device(f, buf, sizeof buf), "cpu:2"));
    tg_tensor *con = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    CHECK_FAILS(tg_graph_set_device(con, "cpu:0"), TG_ERR_ARG, "concrete");
    tg_graph_free(g);
    tg_scope_end();
}

/* ---- an MLP: layer 1 on cpu:0, layer 2 on cpu:1 ------------------------------------- */
static void test_mlp_equals_unpartitioned(void)
{
    tg_scope_begin();
    tg_generator *gen = tg_generator_new(7);
    tg_tensor *w[4];
    mlp_weights(gen, w);
    tg_tensor *xv = tg_rand_normal(gen, TG_FLOAT32, 2, (int64_t[]){16, 64}, 0, 1);
    tg_graph *g1 = tg_graph_new("plain"), *g2 = tg_graph_new("placed");
    tg_tensor *x1 = tg_placeholder(g1, "x", TG_FLOAT32, 2, (int64_t[]){16, 64});
    tg_tensor *x2 = tg_placeholder(g2, "x", TG_FLOAT32, 2, (int64_t[]){16, 64});
    tg_tensor *y1 = mlp(g1, x1, w, NULL, NULL), *y2 = mlp(g2, x2, w, "cpu:0", "cpu:1");
    tg_session *s1 = tg_session_new(g1), *s2 = tg_session_new(g2);
    tg_tensor *r1, *r2;
    CHECK_OK(tg_session_run(s1, 1, &x1, &xv, 1, &y1, &r1, 0, NULL));
    for (int i = 0; i < 3; i++) /* the cached partitioning again */
        CHECK_OK(tg_session_run(s2, 1, &x2, &xv, 1, &y2, &r2, 0, NULL));
    CHECK(same_bits(r1, r2));
    tg_session_stats st;
    tg_session_get_stats(s2, &st);
    CHECK(st.runs == 3);
    tg_device place[64];
    CHECK(tg_graph_num_nodes(g2) <= 64);
    CHECK_OK(tg_session_placement(s2, 1, &x2, 1, &y2, 0, NULL, tg_graph_num_nodes(g2), place));
    int on1 = 0;
    for (int i = 0; i < tg_graph_num_nodes(g2); i++)
        on1 += place[i].index == 1;
    CHECK(on1 >= 2); /* linear (or its parts) and tanh */
    /* an unknown batch dim: partitions are specialised to each fed shape */
    tg_graph *g3 = tg_graph_new("symbolic_batch");
    tg_tensor *x3 = tg_placeholder(g3, "x", TG_FLOAT32, 2, (int64_t[]){-1, 64});
    tg_tensor *y3 = mlp(g3, x3, w, "cpu:0", "cpu:1"), *r3;
    tg_session *s3 = tg_session_new(g3);
    CHECK_OK(tg_session_run(s3, 1, &x3, &xv, 1, &y3, &r3, 0, NULL));
    CHECK(same_bits(r1, r3));
    tg_tensor *x5 = tg_rand_normal(gen, TG_FLOAT32, 2, (int64_t[]){5, 64}, 0, 1);
    CHECK_OK(tg_session_run(s3, 1, &x3, &x5, 1, &y3, &r3, 0, NULL));
    CHECK(r3 && tg_size(r3, 0) == 5);
    tg_session_free(s3);
    tg_graph_free(g3);
    tg_session_free(s1);
    tg_session_free(s2);
    tg_graph_free(g1);
    tg_graph_free(g2);
    tg_generator_free(gen);
    tg_scope_end();
}

/* ---- a branching graph: a fan-out over three devices that meets again ---------------- */
static tg_tensor *branches(tg_graph *g, tg_tensor *x, bool placed, tg_tensor **side)
{
    static const char *dev[3] = {"cpu:0", "cpu:1", "cpu:2"};
    tg_graph_begin(g);
    tg_tensor *b[3];
    for (int i = 0; i < 3; i++) {
        if (placed)
            tg_device_scope_begin(dev[i]);
        b[i] = i == 0 ? tg_exp(tg_neg(x)) : i == 1 ? tg_sin(tg_mul(x, x)) : tg_relu(tg_sub(x, b[1]));
        if (placed)
            tg_device_scope_end();
    }
    if (placed)
        tg_device_scope_begin("cpu:1");
    tg_tensor *y = tg_sum(tg_add(tg_add(b[0], b[1]), b[2]), 0, NULL, false);
    *side = tg_mul(b[2], b[0]);
    if (placed)
        tg_device_scope_end();
    tg_graph_end();
    return y;
}

static void test_branching_equals_unpartitioned(void)
{
    tg_scope_begin();
    tg_generator *gen = tg_generator_new(3);
    tg_tensor *xv = tg_rand_normal(gen, TG_FLOAT64, 2, (int64_t[]){5, 7}, 0, 1);
    tg_graph *g1 = tg_graph_new("plain"), *g2 = tg_graph_new("placed");
    tg_tensor *x1 = tg_placeholder(g1, "x", TG_FLOAT64, 2, (int64_t[]){5, 7});
    tg_tensor *x2 = tg_placeholder(g2, "x", TG_FLOAT64, 2, (int64_t[]){5, 7});
    tg_tensor *s1v, *s2v;
    tg_tensor *y1 = branches(g1, x1, false, &s1v), *y2 = branches(g2, x2, true, &s2v);
    tg_session *s1 = tg_session_new(g1), *s2 = tg_session_new(g2);
    tg_tensor *f1[3] = {y1, s1v, y1}, *f2[3] = {y2, s2v, y2}, *r1[3], *r2[3];
    CHECK_OK(tg_session_run(s1, 1, &x1, &xv, 3, f1, r1, 0, NULL));
    CHECK_OK(tg_session_run(s2, 1, &x2, &xv, 3, f2, r2, 0, NULL));
    for (int i = 0; i < 3; i++)
        CHECK(same_bits(r1[i], r2[i]));
    CHECK(r2[0] != r2[2]); /* fetched twice: two tensors */
    tg_session_free(s1);
    tg_session_free(s2);
    tg_graph_free(g1);
    tg_graph_free(g2);
    tg_generator_free(gen);
    tg_scope_end();
}

/* ---- edges both ways, state on both devices, 1000 steps --------------------------------- */
static void test_both_ways_1000_steps(void)
{
    CHECK(pingpong_wrong("cpu:0", "cpu:1", 1000) == 0);
}

/* ---- the trace: a track per device, Send/Recv spans on them ------------------------------- */
static void test_trace_has_device_tracks(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("traced");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 1, (int64_t[]){8});
    tg_graph_begin(g);
    tg_device_scope_begin("cpu:0");
    tg_tensor *a = tg_exp(x);
    tg_device_scope_end();
    tg_device_scope_begin("cpu:1");
    tg_tensor *b = tg_neg(a);
    tg_device_scope_end();
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT32, 1, (int64_t[]){8}), *r;
    char path[] = "/tmp/tg_devices_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(tg_session_trace_begin(s));
    for (int i = 0; i < 2; i++)
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &b, &r, 0, NULL));
    CHECK_OK(tg_session_trace_end(s, path));
    char *text = read_text(path);
    CHECK(text != NULL);
    if (text) {
        char err[200];
        tg_json *j = tg_json_parse(text, strlen(text), err, sizeof err);
        CHECK(j != NULL); /* valid JSON */
        tg_json_free(j);
        CHECK(strstr(text, "\"args\": {\"name\": \"cpu:0\"}") != NULL);
        CHECK(strstr(text, "\"args\": {\"name\": \"cpu:1\"}") != NULL);
        CHECK(strstr(text, "\"cat\": \"send\"") != NULL);
        CHECK(strstr(text, "\"cat\": \"recv\"") != NULL);
        CHECK(strstr(text, "\"name\": \"neg\", \"cat\": \"neg\", \"ph\": \"X\"") != NULL);
    }
    free(text);
    unlink(path);
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* ---- a failing partition aborts the step everywhere -------------------------------------- */
static void test_failure_aborts_all_devices(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("fails");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *y = tg_placeholder(g, "y", TG_INT64, 1, (int64_t[]){2});
    CHECK_OK(tg_graph_begin(g));
    CHECK_OK(tg_device_scope_begin("cpu:1"));
    tg_tensor *loss = tg_cross_entropy(tg_relu(x), y, TG_REDUCTION_MEAN);
    CHECK_OK(tg_device_scope_end());
    CHECK_OK(tg_device_scope_begin("cpu:0"));
    tg_tensor *out = tg_add(tg_exp(x), loss); /* waits for cpu:1's loss */
    CHECK_OK(tg_device_scope_end());
    tg_graph_end();
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_tensor *bad = tt_tensor(TG_INT64, 1, (int64_t[]){2}, (double[]){0, 7});
    tg_tensor *good = tt_tensor(TG_INT64, 1, (int64_t[]){2}, (double[]){0, 2});
    tg_tensor *feeds[2] = {x, y}, *fv[2] = {xv, bad}, *r = NULL;
    CHECK_FAILS(tg_session_run(s, 2, feeds, fv, 1, &out, &r, 0, NULL), TG_ERR_INDEX, "cpu:1");
    CHECK(r == NULL);
    fv[1] = good; /* the next step runs */
    CHECK_OK(tg_session_run(s, 2, feeds, fv, 1, &out, &r, 0, NULL));
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
}

/* ---- LeNet's training step: convolutions on cpu:0, classifier on cpu:1 -------------------- */
/* placed: by scopes; auto: by the session's placer over two devices */
static void lenet_equal(bool auto_placed)
{
    tg_scope_begin();
    step_graph a, b;
    lenet_step_graph(&a, NULL, NULL);
    lenet_step_graph(&b, auto_placed ? NULL : "cpu:0", auto_placed ? NULL : "cpu:1");
    if (auto_placed) {
        const char *devs[2] = {"cpu:0", "cpu:1"};
        CHECK_OK(tg_session_set_devices(b.s, 2, devs));
        tg_tensor *feeds[2] = {b.x, b.y};
        int n = tg_graph_num_nodes(b.g), count[2] = {0, 0}, unplaced = 0;
        tg_device *place = malloc((size_t)n * sizeof *place);
        CHECK_OK(tg_session_placement(b.s, 2, feeds, 1, &b.loss, b.n, b.updates, n, place));
        for (int i = 0; i < n; i++)
            if (place[i].index >= 0 && place[i].index < 2)
                count[place[i].index]++;
            else
                unplaced++;
        /* both devices get work (the convolutions, few nodes but most of
         * the time, on one; most of the small nodes on the other) */
        CHECK(count[0] >= 10 && count[1] >= 10);
        CHECK(unplaced == n - count[0] - count[1]);
        free(place);
    }
    tg_generator *gen = tg_generator_new(5);
    int bad = 0;
    for (int step = 0; step < 4; step++) {
        tg_scope_begin();
        tg_tensor *xv, *yv;
        lenet_batch(gen, &xv, &yv);
        tg_tensor *fa[2] = {a.x, a.y}, *fb[2] = {b.x, b.y}, *fv[2] = {xv, yv}, *la, *lb;
        CHECK_OK(tg_session_run(a.s, 2, fa, fv, 1, &a.loss, &la, a.n, a.updates));
        CHECK_OK(tg_session_run(b.s, 2, fb, fv, 1, &b.loss, &lb, b.n, b.updates));
        bad += !same_bits(la, lb);
        tg_scope_end();
    }
    CHECK(bad == 0);
    tg_named_tensor *pa, *pb;
    int n = tg_module_parameters(a.net, &pa);
    tg_module_parameters(b.net, &pb);
    for (int i = 0; i < n; i++)
        bad += !same_bits(pa[i].tensor, pb[i].tensor);
    CHECK(bad == 0);
    tg_named_tensors_free(pa);
    tg_named_tensors_free(pb);
    tg_generator_free(gen);
    step_graph_free(&a);
    step_graph_free(&b);
    tg_scope_end();
}

/* cond and while_loop on cpu:1 (their bodies run there whole) with
 * their gradients: the unpartitioned graph's bits */
static void test_control_flow_equals_unpartitioned(void)
{
    CHECK(control_flow_mismatches("cpu:0", "cpu:1", NULL) == 0);
}

static void test_lenet_training_step_equals_unpartitioned(void) { lenet_equal(false); }
static void test_auto_placed_lenet_step_equals_unpartitioned(void) { lenet_equal(true); }

int main(void)
{
    RUN(test_device_names);
    RUN(test_scopes_record_devices);
    RUN(test_mlp_equals_unpartitioned);
    RUN(test_branching_equals_unpartitioned);
    RUN(test_both_ways_1000_steps);
    RUN(test_failure_aborts_all_devices);
    RUN(test_trace_has_device_tracks);
    RUN(test_control_flow_equals_unpartitioned);
    RUN(test_lenet_training_step_equals_unpartitioned);
    RUN(test_auto_placed_lenet_step_equals_unpartitioned);
    return tt_finish();
}
