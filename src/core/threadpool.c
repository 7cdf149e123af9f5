/* The thread pool: persistent workers woken per parallel_for, each taking
 * one contiguous chunk; the calling thread takes chunk 0. Size from
 * tg_set_num_threads, else TG_NUM_THREADS, else the number of cores. */
#include "core/threadpool.h"
#include "util/grow.h"
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

/* ---- task groups ----------------------------------------------------------------
 * A min-heap of task ids under one mutex; every thread of a parallel_for
 * over the pool's size loops taking the lowest id, waiting while the heap
 * is empty but tasks still run (they may push more), and leaving when
 * nothing is queued or running. */
struct tg_tasks {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t *heap;
    int64_t n_heap, cap;
    int64_t pending; /* queued + running */
    int failed;
    tg_task_fn fn;
    void *ctx;
};

static void heap_push(tg_tasks *q, int64_t x)
{
    int64_t i = q->n_heap++;
    while (i > 0 && q->heap[(i - 1) / 2] > x) {
        q->heap[i] = q->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->heap[i] = x;
}

static int64_t heap_pop(tg_tasks *q)
{
    int64_t top = q->heap[0], x = q->heap[--q->n_heap], i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= q->n_heap)
            break;
        if (c + 1 < q->n_heap && q->heap[c + 1] < q->heap[c])
            c++;
        if (q->heap[c] >= x)
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (q->n_heap > 0)
        q->heap[i] = x;
    return top;
}

/* called with q->mu held */
static void enqueue(tg_tasks *q, int64_t task)
{
    if (!TG_GROW(q->heap, q->cap, q->n_heap + 1)) {
        q->failed = 1;
        return;
    }
    heap_push(q, task);
    q->pending++;
}

void tg_tasks_push(tg_tasks *q, int64_t task)
{
    pthread_mutex_lock(&q->mu);
    enqueue(q, task);
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void tasks_loop(void *ctx, int64_t begin, int64_t end)
{
    (void)end;
    tg_tasks *q = ctx;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->n_heap == 0 && q->pending > 0)
            pthread_cond_wait(&q->cv, &q->mu);
        if (q->n_heap == 0)
            break; /* nothing queued or running: done */
        int64_t task = heap_pop(q);
        pthread_mutex_unlock(&q->mu);
        q->fn(q, q->ctx, task, (int)begin);
        pthread_mutex_lock(&q->mu);
        if (--q->pending == 0)
            pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
}

int tg_tasks_run(int n, const int64_t *tasks, tg_task_fn fn, void *ctx)
{
    tg_tasks q = {.fn = fn, .ctx = ctx};
    if (!TG_GROW(q.heap, q.cap, n))
        return -1;
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.cv, NULL);
    for (int i = 0; i < n; i++)
        enqueue(&q, tasks[i]);
    int threads = tg_get_num_threads();
    if (threads > 1 && !in_region)
        tg_parallel_for(threads, 1, tasks_loop, &q);
    else
        tasks_loop(&q, 0, 1);
    pthread_mutex_destroy(&q.mu);
    pthread_cond_destroy(&q.cv);
    free(q.heap);
    return q.failed ? -1 : 0;
}
