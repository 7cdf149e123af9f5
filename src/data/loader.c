/* The data loader: batches of a dataset an epoch at a time, seeded
 * shuffling, and a background thread that prepares the next batches into
 * a ring while the caller computes (double buffering with pthreads). */
#include "core/tensor_impl.h"
#include "data/data_impl.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PREFETCH 64

/* a prepared batch, or the error that preparing it gave */
typedef struct slot {
    tg_tensor *x, *y;
    tg_status status;
    char *msg; /* malloc'd error message, moved to the caller's thread */
} slot;

struct tg_loader {
    tg_dataset *ds;
    tg_loader_options o;
    int64_t n, n_batches;
    uint64_t epoch;
    bool in_epoch;
    int64_t *order;    /* this epoch's sample order */
    int64_t consumed;  /* batches handed to the caller this epoch */
    /* prefetch: the worker fills ring[b % depth] for b = produced, ... */
    bool worker_running;
    pthread_t worker;
    pthread_mutex_t mu;
    pthread_cond_t filled, freed;
    slot *ring;
    int64_t produced; /* guarded by mu, as are stop and ring */
    bool stop;
};

tg_loader_options tg_loader_defaults(void)
{
    return (tg_loader_options){.batch_size = 64, .shuffle = false, .seed = 0,
                               .drop_last = false, .prefetch = 4};
}

static int64_t batch_start(const tg_loader *l, int64_t b) { return b * l->o.batch_size; }

static int64_t batch_len(const tg_loader *l, int64_t b)
{
    int64_t left = l->n - batch_start(l, b);
    return left < l->o.batch_size ? left : l->o.batch_size;
}

/* prepares batch b; on failure the slot carries the status and message */
static slot make_batch(const tg_loader *l, int64_t b)
{
    slot s = {NULL, NULL, TG_OK, NULL};
    s.status = tg__dataset_get_raw(l->ds, l->order + batch_start(l, b),
                                   batch_len(l, b), &s.x, &s.y);
    if (s.status != TG_OK) {
        s.msg = strdup(tg_last_error());
        tg_clear_error();
    }
    return s;
}

static void slot_clear(slot *s)
{
    tg_release(s->x);
    tg_release(s->y);
    free(s->msg);
    *s = (slot){NULL, NULL, TG_OK, NULL};
}

static void *worker_main(void *arg)
{
    tg_loader *l = arg;
#ifdef SCHED_BATCH
    /* no wake-up preemption: when the caller frees a slot and wakes us,
     * we must not take its CPU away in the middle of its step (on 2 cores
     * that cost the caller up to a whole batch's preparation) */
    struct sched_param sp = {0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
#endif
    int depth = l->o.prefetch;
    for (int64_t b = 0; b < l->n_batches; b++) {
        pthread_mutex_lock(&l->mu);
        /* wait for a free slot: at most `depth` batches ahead of the caller */
        while (!l->stop && l->produced - l->consumed >= depth)
            pthread_cond_wait(&l->freed, &l->mu);
        bool stop = l->stop;
        pthread_mutex_unlock(&l->mu);
        if (stop)
            break;
        slot s = make_batch(l, b); /* outside the lock: the slow part */
        pthread_mutex_lock(&l->mu);
        l->ring[b % depth] = s;
        l->produced = b + 1;
        pthread_cond_signal(&l->filled);
        pthread_mutex_unlock(&l->mu);
        if (s.status != TG_OK)
            break; /* the caller gets the error with this batch */
    }
    return NULL;
}

/* stops and joins the worker, drops prepared batches, ends the epoch */
static void end_epoch(tg_loader *l)
{
    if (l->worker_running) {
        pthread_mutex_lock(&l->mu);
        l->stop = true;
        pthread_cond_broadcast(&l->freed);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->worker, NULL);
        l->worker_running = false;
        for (int i = 0; i < l->o.prefetch; i++)
            slot_clear(&l->ring[i]);
    }
    l->in_epoch = false;
}

/* a well-mixed seed per (seed, epoch), so neighbouring epochs do not get
 * related generator states */
static uint64_t epoch_seed(uint64_t seed, uint64_t epoch)
{
    uint64_t z = seed ^ ((epoch + 1) * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
    z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
    return z ^ (z >> 33);
}

static tg_status fill_order(tg_loader *l)
{
    if (!l->o.shuffle) {
        for (int64_t i = 0; i < l->n; i++)
            l->order[i] = i;
        return TG_OK;
    }
    tg_generator *g = tg_generator_new(epoch_seed(l->o.seed, l->epoch));
    if (!g)
        return tg_last_status();
    int floor = tg__scope_suspend(); /* the permutation is ours to release */
    tg_tensor *p = tg_randperm(g, l->n);
    tg__scope_resume(floor);
    tg_generator_free(g);
    if (!p)
        return tg_last_status();
    memcpy(l->order, tg__base(p), (size_t)l->n * sizeof *l->order);
    tg_release(p);
    return TG_OK;
}

static tg_status start_epoch(tg_loader *l)
{
    tg_status s = fill_order(l);
    if (s != TG_OK)
        return s;
    l->consumed = 0;
    l->produced = 0;
    l->stop = false;
    if (l->o.prefetch > 0 && l->n_batches > 0) {
        if (pthread_create(&l->worker, NULL, worker_main, l) != 0)
            return tg__error(TG_ERR_INTERNAL, "tg_loader_next: cannot start the "
                             "prefetch thread");
        l->worker_running = true;
    }
    l->in_epoch = true;
    return TG_OK;
}

tg_loader *tg_loader_new(tg_dataset *d, const tg_loader_options *opts)
{
    tg_loader_options o = opts ? *opts : tg_loader_defaults();
    if (!d)
        return tg__error_null(TG_ERR_ARG, "tg_loader_new: dataset is NULL");
    if (o.batch_size < 1)
        return tg__error_null(TG_ERR_ARG, "tg_loader_new: batch_size is %lld, "
                              "expected >= 1", (long long)o.batch_size);
    if (o.prefetch < 0 || o.prefetch > MAX_PREFETCH)
        return tg__error_null(TG_ERR_ARG, "tg_loader_new: prefetch is %d, "
                              "expected 0 (off) to %d", o.prefetch, MAX_PREFETCH);
    tg_loader *l = calloc(1, sizeof *l);
    if (!l)
        return tg__error_null(TG_ERR_NOMEM, "tg_loader_new: out of memory");
    l->ds = d;
    l->o = o;
    l->n = tg_dataset_size(d);
    l->n_batches = o.drop_last ? l->n / o.batch_size
                               : (l->n + o.batch_size - 1) / o.batch_size;
    l->order = malloc((size_t)(l->n > 0 ? l->n : 1) * sizeof *l->order);
    l->ring = calloc((size_t)(o.prefetch > 0 ? o.prefetch : 1), sizeof *l->ring);
    if (!l->order || !l->ring) {
        free(l->order);
        free(l->ring);
        free(l);
        return tg__error_null(TG_ERR_NOMEM, "tg_loader_new: out of memory");
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->filled, NULL);
    pthread_cond_init(&l->freed, NULL);
    return l;
}

/* the next batch from the worker's ring, waiting until it is ready */
static slot take_prefetched(tg_loader *l)
{
    pthread_mutex_lock(&l->mu);
    while (l->produced <= l->consumed)
        pthread_cond_wait(&l->filled, &l->mu);
    slot *r = &l->ring[l->consumed % l->o.prefetch];
    slot s = *r;
    *r = (slot){NULL, NULL, TG_OK, NULL};
    l->consumed++;
    /* signalled under the lock: helgrind and drd stay clean (signalling
     * after the unlock measured no faster) */
    pthread_cond_signal(&l->freed);
    pthread_mutex_unlock(&l->mu);
    return s;
}

int tg_loader_next(tg_loader *l, tg_tensor **x, tg_tensor **y)
{
    if (!x || !y || !l) {
        if (x)
            *x = NULL;
        if (y)
            *y = NULL;
        tg__error(TG_ERR_ARG, "tg_loader_next: loader, x or y is NULL");
        return -1;
    }
    *x = *y = NULL;
    if (!l->in_epoch && start_epoch(l) != TG_OK)
        return -1;
    if (l->consumed == l->n_batches) {
        end_epoch(l);
        l->epoch++;
        return 0;
    }
    slot s;
    if (l->worker_running) {
        s = take_prefetched(l);
    } else {
        s = make_batch(l, l->consumed);
        l->consumed++;
    }
    if (s.status != TG_OK) {
        tg__error(s.status, "%s", s.msg ? s.msg : "tg_loader_next: batch failed");
        free(s.msg);
        end_epoch(l);
        return -1;
    }
    *x = tg__publish(s.x);
    if (!*x) { /* out of memory in the caller's scope */
        tg_release(s.y);
        return -1;
    }
    *y = tg__publish(s.y);
    return *y ? 1 : -1;
}

void tg_loader_set_epoch(tg_loader *l, uint64_t e)
{
    if (!l)
        return;
    end_epoch(l);
    l->epoch = e;
}

uint64_t tg_loader_epoch(const tg_loader *l) { return l ? l->epoch : 0; }

int64_t tg_loader_num_batches(const tg_loader *l) { return l ? l->n_batches : 0; }

void tg_loader_free(tg_loader *l)
{
    if (!l)
        return;
    end_epoch(l);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->filled);
    pthread_cond_destroy(&l->freed);
    free(l->order);
    free(l->ring);
    free(l);
}
