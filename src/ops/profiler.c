/* The eager op profiler (tg/profiler.h): events appended under a mutex by
 * whichever thread ran the op; read back only while stopped, so the array
 * never moves under a reader. */
#include "tg/profiler.h"
#include "core/status_impl.h"
#include "ops/profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_MAX_EVENTS ((int64_t)4 << 20)

atomic_bool tg__profiling;

typedef struct event {
    const char *name;
    int64_t start_ns, end_ns;
    int thread, depth;
    char *shapes;    /* NULL without record_shapes */
    char *own_name;  /* a range's copy of its name (freed with the event) */
} event;

#define MAX_RANGES 64
typedef struct range {
    char *name; /* NULL: pushed while off (a placeholder for its pop) */
    int64_t start_ns;
    int depth;
} range;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static event *events;
static int64_t n_events, cap_events, max_events, dropped;
static bool with_shapes;
static atomic_int n_threads;
static _Thread_local int thread_number = -1;
static _Thread_local int depth;
static _Thread_local range ranges[MAX_RANGES];
static _Thread_local int n_ranges;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void clear_events(void)
{
    for (int64_t i = 0; i < n_events; i++) {
        free(events[i].shapes);
        free(events[i].own_name);
    }
    free(events);
    events = NULL;
    n_events = cap_events = dropped = 0;
}

tg_status tg_profiler_start(bool record_shapes, int64_t max)
{
    if (max < 0)
        return tg__error(TG_ERR_ARG, "tg_profiler_start: max_events %lld is negative",
                         (long long)max);
    pthread_mutex_lock(&lock);
    if (atomic_load(&tg__profiling)) {
        pthread_mutex_unlock(&lock);
        return tg__error(TG_ERR_ARG, "tg_profiler_start: the profiler is already on "
                         "(profilers do not nest)");
    }
    clear_events();
    with_shapes = record_shapes;
    max_events = max ? max : DEFAULT_MAX_EVENTS;
    atomic_store(&tg__profiling, true);
    pthread_mutex_unlock(&lock);
    return TG_OK;
}

tg_status tg_profiler_stop(void)
{
    pthread_mutex_lock(&lock);
    bool was_on = atomic_exchange(&tg__profiling, false);
    pthread_mutex_unlock(&lock);
    return was_on ? TG_OK
                  : tg__error(TG_ERR_ARG, "tg_profiler_stop: the profiler is not on");
}

bool tg_profiler_enabled(void) { return atomic_load(&tg__profiling); }

int64_t tg_profiler_count(void)
{
    pthread_mutex_lock(&lock);
    int64_t n = n_events;
    pthread_mutex_unlock(&lock);
    return n;
}

int64_t tg_profiler_dropped(void)
{
    pthread_mutex_lock(&lock);
    int64_t n = dropped;
    pthread_mutex_unlock(&lock);
    return n;
}

tg_status tg_profiler_event(int64_t i, tg_profile_event *out)
{
    if (!out)
        return tg__error(TG_ERR_ARG, "tg_profiler_event: out is NULL");
    if (atomic_load(&tg__profiling))
        return tg__error(TG_ERR_ARG, "tg_profiler_event: stop the profiler before reading "
                         "its events");
    if (i < 0 || i >= n_events)
        return tg__error(TG_ERR_INDEX, "tg_profiler_event: event %lld of %lld",
                         (long long)i, (long long)n_events);
    const event *e = &events[i];
    *out = (tg_profile_event){e->name, e->start_ns, e->end_ns, e->thread, e->depth,
                              e->own_name != NULL, e->shapes ? e->shapes : ""};
    return TG_OK;
}

void tg__profile_begin(tg__profile_span *sp)
{
    depth++;
    sp->start_ns = now_ns();
}

/* "[[2, 3], [3], []]"; NULL when out of memory (the event keeps "") */
static char *shapes_json(int n_in, tg_tensor *const *in)
{
    size_t cap = 16 + (size_t)n_in * (TG_MAX_DIMS * 22 + 4), len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[len++] = '[';
    for (int i = 0; i < n_in; i++) {
        len += (size_t)snprintf(s + len, cap - len, "%s[", i ? ", " : "");
        int nd = in[i] ? tg_ndim(in[i]) : 0;
        for (int d = 0; d < nd; d++)
            len += (size_t)snprintf(s + len, cap - len, "%s%lld", d ? ", " : "",
                                    (long long)tg_size(in[i], d));
        s[len++] = ']';
    }
    s[len++] = ']';
    s[len] = '\0';
    return s;
}

/* keeps one event (taking shapes and own_name) unless stopped or full */
static void append(event e)
{
    if (thread_number < 0)
        thread_number = atomic_fetch_add(&n_threads, 1);
    e.thread = thread_number;
    pthread_mutex_lock(&lock);
    bool kept = false;
    if (atomic_load(&tg__profiling)) { /* not stopped meanwhile */
        if (n_events == cap_events && n_events < max_events) {
            int64_t cap = cap_events ? 2 * cap_events : 4096;
            event *grown = realloc(events, (size_t)cap * sizeof *grown);
            if (grown) {
                events = grown;
                cap_events = cap;
            }
        }
        if (n_events < cap_events && n_events < max_events) {
            events[n_events++] = e;
            kept = true;
        } else {
            dropped++;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!kept) {
        free(e.shapes);
        free(e.own_name);
    }
}

void tg__profile_end(tg__profile_span *sp, const tg_op_def *op, int n_in,
                     tg_tensor *const *in)
{
    int64_t end = now_ns();
    depth--;
    append((event){op->name, sp->start_ns, end, 0, depth,
                   with_shapes ? shapes_json(n_in, in) : NULL, NULL});
}

tg_status tg_profiler_range_push(const char *name)
{
    if (!name)
        return tg__error(TG_ERR_ARG, "tg_profiler_range_push: name is NULL");
    if (n_ranges == MAX_RANGES)
        return tg__error(TG_ERR_ARG, "tg_profiler_range_push: more than %d ranges open on "
                         "this thread", MAX_RANGES);
    range *r = &ranges[n_ranges];
    r->name = NULL;
    if (atomic_load(&tg__profiling) && !(r->name = strdup(name)))
        return tg__error(TG_ERR_NOMEM, "tg_profiler_range_push: out of memory");
    n_ranges++;
    r->depth = depth++;
    r->start_ns = now_ns();
    return TG_OK;
}

tg_status tg_profiler_range_pop(void)
{
    if (n_ranges == 0)
        return tg__error(TG_ERR_ARG, "tg_profiler_range_pop: no range is open on this "
                         "thread");
    int64_t end = now_ns();
    range *r = &ranges[--n_ranges];
    depth = r->depth;
    if (r->name)
        append((event){r->name, r->start_ns, end, 0, r->depth, NULL, r->name});
    return TG_OK;
}
