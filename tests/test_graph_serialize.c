/* A graph's wire form (src/graph/serialize.c): a round trip runs to the
 * same bits and keeps names, devices and edges; variables resolve to the
 * receiver's storage; every truncation and every flipped byte of a blob
 * is an error or a graph (never a crash); control-flow bodies travel
 * nested and run the same. */
#include "harness.h"
#include "graph/serialize.h"
#include "tg/tg.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct built {
    tg_graph *g;
    tg_tensor *x, *out, *update, *w;
} built;

/* x [2,3] -> relu(x @ w + c) summed over axis 1 (keepdim), and an
 * update w <- w * 0.5 ordered after the read; a control edge besides */
static void build(built *b, tg_tensor *w_storage)
{
    b->g = tg_graph_new("wire");
    b->x = tg_placeholder(b->g, "x", TG_FLOAT32, 2, (int64_t[]){2, 3});
    tg_device_scope_begin("cpu:1");
    b->w = tg_variable_ref(b->g, "w", w_storage);
    tg_device_scope_end();
    tg_tensor *c = tg_constant(b->g, "c", tg_full(TG_FLOAT32, 1, (int64_t[]){4}, 0.25));
    tg_graph_begin(b->g);
    tg_tensor *h = tg_relu(tg_add(tg_matmul(b->x, b->w), c));
    b->out = tg_sum(h, 1, (int[]){1}, true);
    tg_graph_set_name(b->out, "total");
    b->update = tg_assign(b->w, tg_mul_scalar(b->w, 0.5));
    tg_graph_end();
}

static tg_tensor *run(tg_graph *g, const char *x_name, const char *out_name, tg_tensor *xv)
{
    tg_session *s = tg_session_new(g);
    tg_tensor *x = tg_graph_find(g, x_name), *out = tg_graph_find(g, out_name), *r = NULL;
    CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &out, &r, 0, NULL));
    tg_session_free(s);
    return r;
}

static char *blob_of(tg_graph *g, size_t *len)
{
    tg_strbuf b = {0};
    CHECK_OK(tg__graph_serialize(g, &b));
    *len = b.len;
    return tg__strbuf_take(&b);
}

static void test_round_trip(void)
{
    tg_scope_begin();
    tg_generator *gen = tg_generator_new(3);
    tg_tensor *w0 = tg_rand_normal(gen, TG_FLOAT32, 2, (int64_t[]){3, 4}, 0, 1);
    tg_tensor *w1 = tg_clone(w0);
    built b;
    build(&b, w0);
    size_t len;
    char *blob = blob_of(b.g, &len);
    tg_graph *r = tg__graph_deserialize(blob, len, "the test", NULL, NULL);
    CHECK(r != NULL);
    CHECK(tg_graph_num_nodes(r) == tg_graph_num_nodes(b.g));
    tg_tensor *xv = tg_rand_normal(gen, TG_FLOAT32, 2, (int64_t[]){2, 3}, 0, 1);
    tg_tensor *a = run(b.g, "x", "total", xv), *c = run(r, "x", "total", xv);
    CHECK(a && c && !memcmp(tg_data(a), tg_data(c), 2 * sizeof(float)));
    char dev[48];
    CHECK(!strcmp(tg_graph_device(tg_graph_find(r, "w"), dev, sizeof dev), "cpu:1"));
    /* the received variable holds a copy: updating it leaves the sender's */
    tg_session *s = tg_session_new(r);
    tg_tensor *upd = tg_graph_find(r, tg_graph_node_name(b.update));
    CHECK(upd != NULL);
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 0, NULL, NULL, 1, &upd));
    CHECK(!memcmp(tg_data(w0), tg_data(w1), 12 * sizeof(float)));
    tg_session_free(s);
    free(blob);
    tg_graph_free(r);
    tg_graph_free(b.g);
    tg_generator_free(gen);
    tg_scope_end();
}

/* the resolver gives the receiver's own tensor for the sender's variable */
static tg_tensor *resolve(void *ctx, const char *name, uint64_t key, tg_tensor *shipped)
{
    (void)key;
    (void)shipped;
    CHECK(!strcmp(name, "w"));
    return tg_retain((tg_tensor *)ctx);
}

static void test_variables_resolved(void)
{
    tg_scope_begin();
    tg_tensor *w = tg_ones(TG_FLOAT32, 2, (int64_t[]){3, 4});
    tg_tensor *mine = tg_full(TG_FLOAT32, 2, (int64_t[]){3, 4}, 4.0);
    built b;
    build(&b, w);
    size_t len;
    char *blob = blob_of(b.g, &len);
    tg_graph *r = tg__graph_deserialize(blob, len, "the test", resolve, mine);
    CHECK(r != NULL);
    tg_session *s = tg_session_new(r);
    tg_tensor *upd = tg_graph_find(r, tg_graph_node_name(b.update));
    CHECK_OK(tg_session_run(s, 0, NULL, NULL, 0, NULL, NULL, 1, &upd));
    CHECK(((float *)tg_data(mine))[0] == 2.0f && ((float *)tg_data(w))[0] == 1.0f);
    tg_session_free(s);
    free(blob);
    tg_graph_free(r);
    tg_graph_free(b.g);
    tg_scope_end();
}

/* every prefix and every byte flipped: an error or a graph, never a crash
 * (the sanitizer build checks the reads) */
static void test_hostile_bytes(void)
{
    tg_scope_begin();
    built b;
    build(&b, tg_ones(TG_FLOAT32, 2, (int64_t[]){3, 4}));
    size_t len;
    char *blob = blob_of(b.g, &len);
    int refused = 0;
    for (size_t n = 0; n < len; n++) {
        tg_graph *r = tg__graph_deserialize(blob, n, "a prefix", NULL, NULL);
        refused += r == NULL && tg_last_status() == TG_ERR_IO;
        tg_graph_free(r);
    }
    CHECK(refused == (int)len);
    CHECK(strstr(tg_last_error(), "a prefix") != NULL);
    char *bent = malloc(len);
    int loaded = 0;
    for (size_t i = 0; i < len; i++) {
        memcpy(bent, blob, len);
        bent[i] ^= (char)0x5a;
        tg_graph *r = tg__graph_deserialize(bent, len, "a bent blob", NULL, NULL);
        loaded += r != NULL;
        tg_graph_free(r);
    }
    CHECK(loaded < (int)len); /* most flips are caught; data bytes load as other values */
    /* counts and indices that are negative as ints (an output index of
     * 0xfffffffd once read out of bounds: found by fuzz/run.sh wire) */
    const uint32_t huge[] = {0xfffffffdu, 0x80000000u, 0x7fffffffu};
    for (size_t h = 0; h < sizeof huge / sizeof huge[0]; h++)
        for (size_t i = 0; i + 4 <= len; i++) {
            memcpy(bent, blob, len);
            memcpy(bent + i, &huge[h], 4);
            tg_graph *r = tg__graph_deserialize(bent, len, "a huge count", NULL, NULL);
            CHECK(r != NULL || strstr(tg_last_error(), "a huge count") != NULL);
            tg_graph_free(r);
        }
    memcpy(bent, blob, len);
    bent[0] = 'X';
    CHECK(tg__graph_deserialize(bent, len, "x", NULL, NULL) == NULL);
    CHECK(strstr(tg_last_error(), "bad magic") != NULL);
    char *longer = malloc(len + 1);
    memcpy(longer, blob, len);
    longer[len] = 0;
    CHECK(tg__graph_deserialize(longer, len + 1, "x", NULL, NULL) == NULL);
    CHECK(strstr(tg_last_error(), "bytes after the end") != NULL);
    CHECK(tg__graph_deserialize(NULL, 0, "nothing", NULL, NULL) == NULL);
    free(longer);
    free(bent);
    free(blob);
    tg_graph_free(b.g);
    tg_scope_end();
}

/* inputs the wire fuzzer (fuzz/run.sh wire) crashed the reader with,
 * kept in tests/data/wire_crashes/: each must be refused with a message */
static void test_fuzz_crashes(void)
{
    const char *dir = TG_SOURCE_DIR "/tests/data/wire_crashes";
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int count = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f)
            continue;
        char bytes[65536];
        size_t n = fread(bytes, 1, sizeof bytes, f);
        fclose(f);
        tg_graph *g = tg__graph_deserialize(bytes, n, e->d_name, NULL, NULL);
        CHECK(g == NULL && strstr(tg_last_error(), e->d_name) != NULL);
        /* dims each in range whose product overflowed int64 (UBSan, in
         * tg__shape_numel): refused when read, before any size is taken */
        if (!strcmp(e->d_name, "shape_overflow.bin"))
            CHECK(strstr(tg_last_error(), "more elements than a tensor can have") != NULL);
        tg_graph_free(g);
        count++;
    }
    if (d)
        closedir(d);
    CHECK(count >= 1);
}

/* an op name the receiver does not know is named in the error */
static void test_unknown_op(void)
{
    tg_scope_begin();
    built b;
    build(&b, tg_ones(TG_FLOAT32, 2, (int64_t[]){3, 4}));
    size_t len;
    char *blob = blob_of(b.g, &len);
    char *at = memmem(blob, len, "relu", 4); /* the node's name, then its op's */
    CHECK(at != NULL);
    at = memmem(at + 4, len - (size_t)(at + 4 - blob), "relu", 4);
    CHECK(at != NULL);
    memcpy(at, "relx", 4);
    CHECK(tg__graph_deserialize(blob, len, "x", NULL, NULL) == NULL);
    CHECK(strstr(tg_last_error(), "unknown op relx") != NULL);
    free(blob);
    tg_graph_free(b.g);
    tg_scope_end();
}

static tg_status double_it(void *user, tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_add(tg_mul_scalar(in[0], 2.0), (tg_tensor *)user); /* captures user */
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status halve(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_mul_scalar(in[0], 0.5);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status below_100(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_lt(tg_sum(in[0], 0, NULL, false), tg_scalar(TG_FLOAT64, 100));
    return out[0] ? TG_OK : tg_last_status();
}

/* x -> cond(sum x > 0: 2x + b, x / 2) -> while (sum < 100) twice-plus-b */
static tg_status loop_body(void *user, tg_tensor *const *in, tg_tensor **out)
{
    return double_it(user, in, out);
}

/* control flow: bodies (with a capture) travel nested and run the same */
static void test_control_flow(void)
{
    tg_scope_begin();
    tg_graph *g = tg_graph_new("cf");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT64, 1, (int64_t[]){3}), *y, *z;
    tg_graph_begin(g);
    tg_tensor *bias = tg_exp(tg_neg(x)); /* a value of g the bodies capture */
    tg_tensor *pred = tg_gt(tg_sum(x, 0, NULL, false), tg_scalar(TG_FLOAT64, 0));
    CHECK_OK(tg_cond(pred, double_it, halve, bias, 1, &x, 1, &y));
    CHECK_OK(tg_while_loop(below_100, loop_body, bias, 1, &y, &z, NULL));
    tg_graph_set_name(z, "z");
    tg_graph_end();
    size_t len;
    char *blob = blob_of(g, &len);
    tg_graph *r = tg__graph_deserialize(blob, len, "the test", NULL, NULL);
    CHECK(r != NULL);
    double in[2][3] = {{1, 2, 3}, {-1, -2, 0.5}};
    for (int k = 0; k < 2; k++) {
        tg_tensor *xv = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, in[k]);
        tg_tensor *a = run(g, "x", "z", xv), *c = r ? run(r, "x", "z", xv) : NULL;
        CHECK(a && c && !memcmp(tg_data(a), tg_data(c), 3 * sizeof(double)));
    }
    /* every prefix of a blob with bodies is refused cleanly too */
    int refused = 0;
    for (size_t n = 0; n < len; n += 7) {
        tg_graph *t = tg__graph_deserialize(blob, n, "a prefix", NULL, NULL);
        refused += t == NULL;
        tg_graph_free(t);
    }
    CHECK(refused == (int)((len + 6) / 7));
    free(blob);
    tg_graph_free(r);
    tg_graph_free(g);
    tg_scope_end();
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_variables_resolved);
    RUN(test_hostile_bytes);
    RUN(test_fuzz_crashes);
    RUN(test_unknown_op);
    RUN(test_control_flow);
    return tt_finish();
}
