/* The eager op profiler (tg/profiler.h): ops and ranges as events with
 * their names, threads, nesting and shapes; graph-mode ops not recorded;
 * the limit on events; every misuse an error. */
#include "harness.h"

#include <pthread.h>
#include <string.h>

static tg_tensor *ones(int64_t n)
{
    int64_t shape[2] = {n, 3};
    return tg_full(TG_FLOAT32, 2, shape, 1.0);
}

static int find(const char *name, tg_profile_event *out)
{
    int found = 0;
    for (int64_t i = 0; i < tg_profiler_count(); i++) {
        tg_profile_event e;
        if (tg_profiler_event(i, &e) == TG_OK && strcmp(e.name, name) == 0) {
            if (!found)
                *out = e;
            found++;
        }
    }
    return found;
}

static void test_ops_and_ranges_are_events(void)
{
    tg_tensor *x = ones(2);
    CHECK_OK(tg_profiler_start(true, 0));
    CHECK(tg_profiler_enabled());
    CHECK_OK(tg_profiler_range_push("block"));
    tg_tensor *y = tg_add(x, x);
    CHECK(tg_mul(y, x));
    CHECK_OK(tg_profiler_range_pop());
    CHECK_OK(tg_profiler_stop());
    CHECK(!tg_profiler_enabled());
    tg_profile_event add = {0}, mul = {0}, block = {0};
    CHECK(find("add", &add) == 1 && find("mul", &mul) == 1 && find("block", &block) == 1);
    CHECK(block.is_range && !add.is_range && block.depth == 0 && add.depth == 1);
    CHECK(block.start_ns <= add.start_ns && add.end_ns <= mul.start_ns &&
          mul.end_ns <= block.end_ns);
    CHECK(strcmp(add.shapes, "[[2, 3], [2, 3]]") == 0 && strcmp(block.shapes, "") == 0);
    CHECK(add.thread == block.thread);
    /* the events stay until the next start, which clears them */
    CHECK(tg_profiler_count() == 3);
    CHECK_OK(tg_profiler_start(false, 0));
    CHECK(tg_neg(x));
    CHECK_OK(tg_profiler_stop());
    tg_profile_event neg = {0};
    CHECK(tg_profiler_count() == 1 && find("neg", &neg) == 1 && strcmp(neg.shapes, "") == 0);
}

static void *run_op(void *arg)
{
    tg_release(tg_neg((tg_tensor *)arg)); /* this thread has no scope */
    return NULL;
}

static void test_threads_numbered(void)
{
    tg_tensor *x = ones(4);
    CHECK_OK(tg_profiler_start(false, 0));
    CHECK(tg_abs(x));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, run_op, x) == 0);
    pthread_join(th, NULL);
    CHECK_OK(tg_profiler_stop());
    tg_profile_event a = {0}, n = {0};
    CHECK(find("abs", &a) == 1 && find("neg", &n) == 1 && a.thread != n.thread);
}

static tg_status double_it(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_add(in[0], in[0]);
    return out[0] ? TG_OK : tg_last_status();
}

static void test_graph_ops_are_not_events(void)
{
    tg_graph *g = tg_graph_new(NULL);
    int64_t shape[2] = {2, 3};
    tg_tensor *in_t = tg_full(TG_FLOAT32, 2, shape, 1.0);
    tg_tensor *ins[1] = {NULL}, *outs[1] = {NULL};
    CHECK_OK(tg_profiler_start(false, 0));
    tg_status s = tg_graph_trace(g, double_it, NULL, 1, &in_t, NULL, ins, 1, outs);
    CHECK_OK(tg_profiler_stop());
    CHECK(s == TG_OK);
    tg_profile_event e = {0};
    CHECK(find("add", &e) == 0);
    tg_graph_free(g);
}

static void test_limit_drops_later_events(void)
{
    tg_tensor *x = ones(1);
    CHECK_OK(tg_profiler_start(false, 2));
    for (int i = 0; i < 5; i++)
        CHECK(tg_neg(x));
    CHECK_OK(tg_profiler_stop());
    CHECK(tg_profiler_count() == 2 && tg_profiler_dropped() == 3);
}

static void test_misuse_is_an_error(void)
{
    tg_profile_event e = {0};
    CHECK_FAILS(tg_profiler_stop(), TG_ERR_ARG, "not on");
    CHECK_FAILS(tg_profiler_start(false, -1), TG_ERR_ARG, "negative");
    CHECK_OK(tg_profiler_start(false, 0));
    CHECK_FAILS(tg_profiler_start(false, 0), TG_ERR_ARG, "already on");
    CHECK_FAILS(tg_profiler_event(0, &e), TG_ERR_ARG, "stop the profiler");
    CHECK_OK(tg_profiler_stop());
    CHECK_FAILS(tg_profiler_event(tg_profiler_count(), &e), TG_ERR_INDEX, "event");
    CHECK_FAILS(tg_profiler_event(-1, &e), TG_ERR_INDEX, "event");
    CHECK_FAILS(tg_profiler_event(0, NULL), TG_ERR_ARG, "NULL");
    CHECK_FAILS(tg_profiler_range_pop(), TG_ERR_ARG, "no range");
    CHECK_FAILS(tg_profiler_range_push(NULL), TG_ERR_ARG, "NULL");
    /* a range pushed while off is no event, and its pop still balances */
    CHECK_OK(tg_profiler_range_push("off"));
    CHECK_OK(tg_profiler_range_pop());
    for (int i = 0; i < 64; i++)
        CHECK_OK(tg_profiler_range_push("deep"));
    CHECK_FAILS(tg_profiler_range_push("deep"), TG_ERR_ARG, "more than 64");
    for (int i = 0; i < 64; i++)
        CHECK_OK(tg_profiler_range_pop());
}

int main(void)
{
    RUN(test_ops_and_ranges_are_events);
    RUN(test_threads_numbered);
    RUN(test_graph_ops_are_not_events);
    RUN(test_limit_drops_later_events);
    RUN(test_misuse_is_an_error);
    return tt_finish();
}
