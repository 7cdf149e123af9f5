/* The session's state, shared by session.c (runs, plans, options) and
 * session_trace.c (the profiler). Internal. */
#ifndef TG_RUNTIME_SESSION_IMPL_H
#define TG_RUNTIME_SESSION_IMPL_H

#include "runtime/runtime_impl.h"
#include "runtime/session_devices.h"

#include <pthread.h>

typedef struct trace_event {
    char *name;     /* the node (owned: the plan's graph may go first) */
    const char *op; /* static: the op's name or the source kind */
    int tid, run;
    int64_t t0, t1;
} trace_event;

/* a run's working arrays (run_request), kept by the session between runs
 * so that a run of a cached plan allocates none of them; a run that
 * starts while another of the same session is in progress (a kernel
 * running the session again) takes arrays of its own */
typedef struct tg_run_scratch {
    bool busy;
    int cap_graph, cap_plan, cap_ids, cap_dims;
    bool *fed;          /* per value of the session's graph */
    tg_meta *feed_meta; /* likewise */
    tg_tensor **vals;   /* per value of the plan's graph */
    tg_tensor **snaps;  /* likewise */
    int *ids;           /* the plan key's sorted lists */
    int64_t *dims;      /* its shape signature */
} tg_run_scratch;

struct tg_session {
    tg_graph *g;
    tg_plan *plans; /* the cache: a list, most recently compiled first */
    const tg_plan *last; /* used by the last run or memory_stats call */
    tg_session_stats stats;
    tg_executor_kind executor;
    bool no_memory_plan;
    int opt_level;
    int n_disabled;
    char **disabled; /* pass names, owned */
    /* profiler */
    bool tracing;
    int64_t trace_t0;
    trace_event *events;
    int64_t n_events, cap_events;
    int trace_runs;
    char **tracks; /* trace track names by tid (device names), owned */
    int n_tracks;
    /* runs over several devices (session_devices.c): devices, partitions */
    tg_dsession *dev;
    tg_run_scratch scratch;
    /* runs of one session take turns (two threads calling one
     * tg.function: the plan's arena, its kept buffers and the scratch are
     * the session's); recursive, for a run started inside a run */
    pthread_mutex_t run_lock;
};

/* the profiler (session_trace.c): drops the recorded events; records the
 * spans of one run of a plan of graph g (steps that never ran skipped) */
void tg__session_free_events(tg_session *s);
tg_status tg__session_record_spans(tg_session *s, const tg_graph *g, const tg_trace_span *spans,
                                   int n);

#endif
