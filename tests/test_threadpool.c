/* The thread pool's parallel_for: every index runs exactly once for any
 * size, grain and thread count; nested calls run serially on the calling
 * thread; two program threads may call it at once; workers that went to
 * sleep (TG_POOL_SPIN_US=0) are woken for the next job; many short jobs in
 * a row (the claim protocol's generations) never run a chunk twice or of
 * a finished job; children forked while the parent's worker goes to
 * sleep (holding the pool's mutex for a moment) run parallel_for with
 * workers of their own; the caller takes chunks from the front and
 * workers from the back, so two threads keep the same halves op to op. */
#include "core/threadpool.h"
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct cover {
    atomic_int *hits;
    atomic_int calls;
    atomic_int nested_ok;
} cover;

static void mark(void *ctx, int64_t b, int64_t e)
{
    cover *c = ctx;
    atomic_fetch_add(&c->calls, 1);
    for (int64_t i = b; i < e; i++)
        atomic_fetch_add(&c->hits[i], 1);
}

/* runs parallel_for over n with the grain and counts each index's runs */
static int covered_once(int64_t n, int64_t grain)
{
    cover c = {.hits = calloc((size_t)(n > 0 ? n : 1), sizeof(atomic_int))};
    tg_parallel_for(n, grain, mark, &c);
    int ok = 1;
    for (int64_t i = 0; i < n; i++)
        ok &= atomic_load(&c.hits[i]) == 1;
    free(c.hits);
    return ok;
}

static void test_coverage(void)
{
    int old = tg_get_num_threads();
    static const int64_t sizes[] = {0, 1, 2, 3, 7, 64, 1000, 4097};
    static const int64_t grains[] = {0, 1, 3, 100, 5000};
    for (int t = 1; t <= 4; t++) {
        CHECK_OK(tg_set_num_threads(t));
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (size_t g = 0; g < sizeof grains / sizeof *grains; g++)
                CHECK(covered_once(sizes[s], grains[g]));
    }
    CHECK_OK(tg_set_num_threads(old));
}

/* the chunk count never exceeds n / grain: a grain of n is one call */
static void test_grain_bounds_chunks(void)
{
    int old = tg_get_num_threads();
    CHECK_OK(tg_set_num_threads(4));
    cover c = {.hits = calloc(100, sizeof(atomic_int))};
    tg_parallel_for(100, 100, mark, &c);
    CHECK(atomic_load(&c.calls) == 1);
    atomic_store(&c.calls, 0);
    tg_parallel_for(100, 50, mark, &c);
    CHECK(atomic_load(&c.calls) <= 2);
    free(c.hits);
    CHECK_OK(tg_set_num_threads(old));
}

static void nested_body(void *ctx, int64_t b, int64_t e)
{
    cover *c = ctx;
    CHECK(tg_in_parallel_region());
    for (int64_t i = b; i < e; i++) {
        cover inner = {.hits = calloc(10, sizeof(atomic_int))};
        tg_parallel_for(10, 1, mark, &inner);
        /* serial on this thread: one call over everything */
        if (atomic_load(&inner.calls) == 1 && atomic_load(&inner.hits[9]) == 1)
            atomic_fetch_add(&c->nested_ok, 1);
        free(inner.hits);
    }
}

static void test_nested_serial(void)
{
    int old = tg_get_num_threads();
    CHECK_OK(tg_set_num_threads(2));
    cover c = {0};
    CHECK(!tg_in_parallel_region());
    tg_parallel_for(8, 1, nested_body, &c);
    CHECK(atomic_load(&c.nested_ok) == 8);
    CHECK(!tg_in_parallel_region());
    CHECK_OK(tg_set_num_threads(old));
}

static void *hammer(void *arg)
{
    atomic_int *bad = arg;
    for (int r = 0; r < 2000; r++)
        if (!covered_once(1 + r % 37, 1))
            atomic_fetch_add(bad, 1);
    return NULL;
}

/* two program threads share the pool (one of them runs serially while
 * the other holds it); thousands of short jobs in a row */
static void test_concurrent_callers(void)
{
    int old = tg_get_num_threads();
    CHECK_OK(tg_set_num_threads(2));
    atomic_int bad = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, hammer, &bad) == 0);
    hammer(&bad);
    pthread_join(t, NULL);
    CHECK(atomic_load(&bad) == 0);
    CHECK_OK(tg_set_num_threads(old));
}

/* with no spinning, workers sleep between jobs and must be woken */
static void test_sleeping_workers_wake(void)
{
    int old = tg_get_num_threads();
    CHECK_OK(tg_set_num_threads(3));
    for (int r = 0; r < 50; r++) {
        if (r % 10 == 0) {
            struct timespec ts = {0, 2000000}; /* past any spin */
            nanosleep(&ts, NULL);
        }
        CHECK(covered_once(300, 1));
    }
    CHECK_OK(tg_set_num_threads(old));
}

/* fork() copies only the calling thread, and with it any lock a worker
 * held at that moment: a worker going to sleep (TG_POOL_SPIN_US=0 here)
 * holds the pool's mutex briefly, and a child that inherited it locked
 * hung in its first parallel_for (about 1 CI run in 100). Each round forks
 * right after a job, while the worker heads for sleep; alarm() turns a
 * hang into a failed child. */
static void test_fork_child(void)
{
    int old = tg_get_num_threads();
    CHECK_OK(tg_set_num_threads(2));
    int failed = 0, rounds = getenv("TG_TEST_UNDER_VALGRIND") ? 10 : 200;
    for (int round = 0; round < rounds && !failed; round++) {
        CHECK(covered_once(1000, 1)); /* the parent's worker is busy, then sleeps */
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10);
            int ok = 1;
            for (int r = 0; r < 20; r++)
                ok &= covered_once(1000, 1);
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        failed = !(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                   WEXITSTATUS(status) == 0);
    }
    CHECK(!failed);
    CHECK(covered_once(1000, 1)); /* and the parent's pool still works */
    CHECK_OK(tg_set_num_threads(old));
}

/* every chunk's first index in the order each thread ran them */
typedef struct claim_log {
    pthread_t caller;
    atomic_int n_caller, n_worker;
    int64_t caller_begins[8], worker_begins[8];
} claim_log;

static void log_claim(void *ctx, int64_t b, int64_t e)
{
    (void)e;
    claim_log *c = ctx;
    if (pthread_equal(pthread_self(), c->caller))
        c->caller_begins[atomic_fetch_add(&c->n_caller, 1)] = b;
    else
        c->worker_begins[atomic_fetch_add(&c->n_worker, 1)] = b;
}

/* with two threads the caller runs chunk 0 first, always, and takes the
 * rest from the front; a worker takes from the back: with both on time
 * each gets one (an asleep worker gets none: the caller runs both) */
static void test_claim_order(void)
{
    int old = tg_get_num_threads();
    CHECK_OK(tg_set_num_threads(2));
    for (int job = 0; job < 200; job++) {
        claim_log c = {.caller = pthread_self()};
        tg_parallel_for(8, 4, log_claim, &c);
        int nc = atomic_load(&c.n_caller), nw = atomic_load(&c.n_worker);
        CHECK(nc + nw == 2 && nc >= 1);
        CHECK(c.caller_begins[0] == 0);
        if (nc == 2)
            CHECK(c.caller_begins[1] == 4);
        if (nw == 1)
            CHECK(c.worker_begins[0] == 4);
    }
    CHECK_OK(tg_set_num_threads(old));
}

int main(void)
{
    /* read when the first worker starts: this program's workers sleep at
     * once, so the wake-up path is the one tested */
    if (!getenv("TG_POOL_SPIN_US"))
        setenv("TG_POOL_SPIN_US", "0", 1);
    RUN(test_coverage);
    RUN(test_grain_bounds_chunks);
    RUN(test_nested_serial);
    RUN(test_concurrent_callers);
    RUN(test_sleeping_workers_wake);
    RUN(test_fork_child);
    RUN(test_claim_order);
    return tt_finish();
}
