/* The thread pool: persistent workers that take the chunks of each
 * parallel_for with the calling thread. Size from tg_set_num_threads, else
 * TG_NUM_THREADS, else the number of cores.
 *
 * Why it spins: a kernel of LeNet's step lasts 10-200 us, and waking a
 * worker that sleeps in the kernel costs 5-50 us on a virtual machine (an
 * interrupt to a halted virtual CPU), which ate the second core's whole
 * gain. So a worker that finished a job watches for the next one for a
 * while (TG_POOL_SPIN_US, default 500 us) before it sleeps, and the caller
 * watches for the last chunk instead of sleeping on it.
 *
 * Why chunks are claimed, not assigned: a worker that is late (asleep, or
 * its core busy with another process) must not hold the job up; the
 * caller claims and runs the chunks nobody took. A claim is one
 * compare-and-swap on a word holding the job's generation and the range
 * of chunks still unclaimed, so a late worker can never run a chunk of a
 * job that has ended, nor read a job while the next one is written.
 *
 * Why the caller runs chunk 0 and claims from the front while workers
 * claim from the back: so that with two threads the same half of every
 * op's range goes to the same core, op after op, whenever both are on
 * time. An op then finds in its own cache what the op before it wrote;
 * claimed in any order, each core half the time read the half the other
 * had just written (LeNet's level-0 graph, two threads: 1.6-3.1% less
 * time per epoch, median of paired runs).
 *
 * A child made by fork() has only the forking thread: the workers are not
 * copied, and a lock a worker held at the fork would stay held in the
 * child for ever (a worker going to sleep holds the pool's mutex for a
 * moment). So the child starts from a fresh pool (reset_in_child) and
 * makes its own workers when it first needs them. */
#include "core/threadpool.h"
#include "util/grow.h"
#include "core/status_impl.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 256
#define DEFAULT_SPIN_US 500

/* the claim word: generation (32 bits) | end of the unclaimed chunks (16)
 * | first unclaimed chunk (16) */
#define CLAIM(gen, end, first) (((uint64_t)(gen) << 32) | ((uint64_t)(end) << 16) | (first))
#define CLAIM_GEN(w) ((uint32_t)((w) >> 32))
#define CLAIM_END(w) ((int)(((w) >> 16) & 0xffff))
#define CLAIM_FIRST(w) ((int)((w) & 0xffff))

static struct {
    pthread_mutex_t mu; /* guards sleeping workers' waits and `stop` */
    pthread_cond_t wake;
    pthread_t threads[MAX_THREADS];
    int n_workers;  /* threads besides the caller */
    int wanted;     /* requested total threads, 0: default */
    int spin_ns;    /* how long an idle worker watches for a job */
    atomic_int stop;          /* set at exit: workers return */
    atomic_int sleeping;      /* workers waiting on `wake` */
    atomic_uint_fast64_t claim;
    atomic_int chunks_done;
    /* the current job; written by the caller before the claim word is
     * published, read by workers only while a chunk of it is unclaimed */
    _Atomic(tg_range_fn) fn;
    _Atomic(void *) ctx;
    atomic_llong n, chunk;
    uint32_t generation;      /* the caller's (under run_mu) */
    pthread_mutex_t run_mu;   /* one parallel_for at a time */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER,
          .run_mu = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int in_region;

int tg_in_parallel_region(void) { return in_region; }

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* read once, before the first worker starts */
static void read_spin(void)
{
    const char *env = getenv("TG_POOL_SPIN_US");
    long us = env ? atol(env) : DEFAULT_SPIN_US;
    pool.spin_ns = (int)(us < 0 ? 0 : us > 100000 ? 100000000 : us * 1000);
}

/* runs chunk `taken` of the current job, which this thread has claimed */
static void run_chunk(int taken)
{
    tg_range_fn fn = atomic_load_explicit(&pool.fn, memory_order_relaxed);
    void *ctx = atomic_load_explicit(&pool.ctx, memory_order_relaxed);
    int64_t n = atomic_load_explicit(&pool.n, memory_order_relaxed);
    int64_t chunk = atomic_load_explicit(&pool.chunk, memory_order_relaxed);
    int64_t b = taken * chunk, e = b + chunk;
    if (e > n)
        e = n;
    if (b < e)
        fn(ctx, b, e);
    atomic_fetch_add_explicit(&pool.chunks_done, 1, memory_order_release);
}

/* claims and runs chunks of the job whose claim word was `w` until none
 * is left (none, when the job ended before this thread came): the
 * caller the first unclaimed chunk each time, a worker the last. A
 * claimed chunk's job cannot end before the chunk is done. */
static void run_chunks(uint64_t w, bool from_back)
{
    while (CLAIM_FIRST(w) < CLAIM_END(w)) {
        int taken = from_back ? CLAIM_END(w) - 1 : CLAIM_FIRST(w);
        uint64_t rest = from_back ? CLAIM(CLAIM_GEN(w), taken, CLAIM_FIRST(w)) : w + 1;
        if (!atomic_compare_exchange_weak(&pool.claim, &w, rest))
            continue; /* w now holds the current word: look again */
        run_chunk(taken);
        w = atomic_load(&pool.claim);
    }
}

/* waits until the claim word's generation differs from `seen`: spinning
 * for a while, then asleep */
static uint64_t wait_for_job(uint32_t seen)
{
    uint64_t w;
    int64_t until = now_ns() + pool.spin_ns;
    for (int i = 0;; i++) {
        w = atomic_load(&pool.claim);
        if (CLAIM_GEN(w) != seen || atomic_load(&pool.stop))
            return w;
        if ((i & 63) == 63 && now_ns() > until)
            break;
        if (i < 256)
            cpu_relax();
        else
            sched_yield(); /* keeps watching, but lets a waiting thread have the core */
    }
    pthread_mutex_lock(&pool.mu);
    atomic_fetch_add(&pool.sleeping, 1);
    /* the caller publishes, then looks at `sleeping`; we count ourselves,
     * then look at the word: one of the two sees the other */
    while (CLAIM_GEN(w = atomic_load(&pool.claim)) == seen && !atomic_load(&pool.stop))
        pthread_cond_wait(&pool.wake, &pool.mu);
    atomic_fetch_sub(&pool.sleeping, 1);
    pthread_mutex_unlock(&pool.mu);
    return w;
}

static void *worker(void *arg)
{
    uint32_t seen = (uint32_t)(uintptr_t)arg;
    in_region = 1;
    for (;;) {
        uint64_t w = wait_for_job(seen);
        if (atomic_load(&pool.stop))
            return NULL;
        seen = CLAIM_GEN(w);
        run_chunks(w, true);
    }
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

/* after fork(), in the child: fresh locks, no workers */
static void reset_in_child(void)
{
    pthread_mutex_init(&pool.mu, NULL);
    pthread_mutex_init(&pool.run_mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    atomic_store(&pool.sleeping, 0);
    pool.n_workers = 0;
}

/* joins the workers at exit, so that tools such as valgrind see no
 * thread left behind */
static void shutdown_pool(void)
{
    pthread_mutex_lock(&pool.mu);
    atomic_store(&pool.stop, 1);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.n_workers; i++)
        pthread_join(pool.threads[i], NULL);
    pool.n_workers = 0;
}

/* workers are created on demand and live until exit; only the number of
 * chunks follows the requested count (idle workers find none to claim) */
static int ensure_workers(int want)
{
    static bool registered; /* once per process image, a forked child included */
    if (!registered && want > 0) {
        read_spin();
        atexit(shutdown_pool);
        pthread_atfork(NULL, NULL, reset_in_child);
        registered = true;
    }
    while (pool.n_workers < want) {
        if (pthread_create(&pool.threads[pool.n_workers], NULL, worker,
                           (void *)(uintptr_t)pool.generation) != 0)
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
    /* nested calls, and calls while another thread of the program uses
     * the pool, run on the calling thread rather than wait */
    if (threads <= 1 || in_region || pthread_mutex_trylock(&pool.run_mu) != 0) {
        fn(ctx, 0, n);
        return;
    }
    int chunks = ensure_workers(threads - 1) + 1;
    int64_t chunk = (n + chunks - 1) / chunks;
    chunks = (int)((n + chunk - 1) / chunk);
    atomic_store_explicit(&pool.fn, fn, memory_order_relaxed);
    atomic_store_explicit(&pool.ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&pool.n, n, memory_order_relaxed);
    atomic_store_explicit(&pool.chunk, chunk, memory_order_relaxed);
    atomic_store_explicit(&pool.chunks_done, 0, memory_order_relaxed);
    /* chunk 0 is the caller's from the start: it is never late */
    atomic_store(&pool.claim, CLAIM(++pool.generation, chunks, 1)); /* publishes the job (seq_cst) */
    if (atomic_load(&pool.sleeping) > 0) {
        pthread_mutex_lock(&pool.mu);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.mu);
    }
    in_region = 1;
    run_chunk(0);
    run_chunks(atomic_load(&pool.claim), false);
    in_region = 0;
    for (int i = 0; atomic_load_explicit(&pool.chunks_done, memory_order_acquire) < chunks; i++)
        if (i < 4096)
            cpu_relax(); /* a worker is running the last chunk */
        else
            sched_yield(); /* ... but its core may have been taken */
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
