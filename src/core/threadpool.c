/* The thread pool: persistent workers woken per parallel_for, each taking
 * one contiguous chunk; the calling thread takes chunk 0. Size from
 * tg_set_num_threads, else TG_NUM_THREADS, else the number of cores. */
#include "core/threadpool.h"
#include "core/status_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 256

typedef struct job {
    tg_range_fn fn;
    void *ctx;
    int64_t n, chunk;
} job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t threads[MAX_THREADS];
    int n_workers;     /* threads besides the caller */
    int wanted;        /* requested total threads, 0: default */
    uint64_t generation;
    int remaining;     /* workers still running the current job */
    uint64_t start_gen[MAX_THREADS]; /* generation when each was created */
    int stop;          /* set at exit: workers return */
    job cur;
    pthread_mutex_t run_mu; /* one parallel_for at a time */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER,
          .run_mu = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int in_region;

int tg_in_parallel_region(void) { return in_region; }

static void run_chunk(const job *j, int64_t k)
{
    int64_t b = k * j->chunk, e = b + j->chunk;
    if (e > j->n)
        e = j->n;
    if (b < e)
        j->fn(j->ctx, b, e);
}

static void *worker(void *arg)
{
    int64_t id = (int64_t)(intptr_t)arg;
    uint64_t seen = pool.start_gen[id];
    in_region = 1;
    for (;;) {
        pthread_mutex_lock(&pool.mu);
        while (pool.generation == seen && !pool.stop)
            pthread_cond_wait(&pool.wake, &pool.mu);
        if (pool.stop) {
            pthread_mutex_unlock(&pool.mu);
            return NULL;
        }
        seen = pool.generation;
        job j = pool.cur;
        pthread_mutex_unlock(&pool.mu);
        run_chunk(&j, id + 1);
        pthread_mutex_lock(&pool.mu);
        if (--pool.remaining == 0)
            pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.mu);
    }
    return NULL;
}

static int default_threads(void)
{
    const char *env = getenv("TG_NUM_THREADS");
    if (env) {
        int n = atoi(env);
        if (n >= 1 && n <= MAX_THREADS)
            return n;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores >= 1 ? (cores > MAX_THREADS ? MAX_THREADS : (int)cores) : 1;
}

int tg_get_num_threads(void)
{
    return pool.wanted ? pool.wanted : default_threads();
}

tg_status tg_set_num_threads(int n)
{
    if (n < 1 || n > MAX_THREADS)
        return tg__error(TG_ERR_ARG, "tg_set_num_threads: %d threads requested, "
                         "expected 1 to %d", n, MAX_THREADS);
    pool.wanted = n;
    return TG_OK;
}

/* joins the workers at exit, so that tools such as valgrind see no
 * thread left behind */
static void shutdown_pool(void)
{
    pthread_mutex_lock(&pool.mu);
    pool.stop = 1;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.n_workers; i++)
        pthread_join(pool.threads[i], NULL);
    pool.n_workers = 0;
}

/* workers are created on demand and live until exit; only the number in
 * use follows the requested count */
static int ensure_workers(int want)
{
    if (pool.n_workers == 0 && want > 0)
        atexit(shutdown_pool);
    while (pool.n_workers < want) {
        pool.start_gen[pool.n_workers] = pool.generation;
        if (pthread_create(&pool.threads[pool.n_workers], NULL, worker,
                           (void *)(intptr_t)pool.n_workers) != 0)
            break;
        pool.n_workers++;
    }
    return pool.n_workers < want ? pool.n_workers : want;
}

void tg_parallel_for(int64_t n, int64_t grain, tg_range_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int threads = tg_get_num_threads();
    int64_t max_chunks = (n + grain - 1) / grain;
    if (max_chunks < threads)
        threads = (int)max_chunks;
    if (threads <= 1 || in_region) {
        fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&pool.run_mu);
    int workers = ensure_workers(threads - 1);
    job j = {fn, ctx, n, (n + workers) / (workers + 1)};
    pthread_mutex_lock(&pool.mu);
    /* workers beyond `workers` must not run: give them empty chunks by
     * waking exactly the ones we count. All wake; idle ones see k past n. */
    pool.cur = j;
    pool.remaining = pool.n_workers;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    in_region = 1;
    run_chunk(&j, 0);
    in_region = 0;
    pthread_mutex_lock(&pool.mu);
    while (pool.remaining > 0)
        pthread_cond_wait(&pool.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&pool.run_mu);
}
