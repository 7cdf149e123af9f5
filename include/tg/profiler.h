/* tensorgraph's eager op profiler (tensorgraph.profiler and
 * tensorgraph.autograd.profiler in Python are built on it).
 *
 * Between tg_profiler_start and tg_profiler_stop, every op that runs
 * eagerly through the op dispatcher (its shape inference, kernel or view,
 * and the recording for autograd), on any thread, is one event: the op's
 * name, its start and end on CLOCK_MONOTONIC in nanoseconds, a small
 * number for the thread, and its depth (an op run inside another op's
 * kernel or gradient is one deeper). Ops a graph records instead of
 * running (graph mode, tracing) are not events; a session's runs have
 * their own trace (tg_session_trace_begin). The events stay readable
 * after the stop, until the next start. Off, the dispatcher pays one
 * relaxed atomic load per op. */
#ifndef TG_PROFILER_H
#define TG_PROFILER_H

#include "tg/core.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct tg_profile_event {
    const char *name;     /* the op's or the range's name */
    int64_t start_ns;     /* CLOCK_MONOTONIC */
    int64_t end_ns;
    int thread;           /* 0, 1, ... in the order threads first ran an op */
    int depth;            /* 0 for an op called from outside any op */
    bool is_range;        /* a tg_profiler_range_push range, not an op */
    const char *shapes;   /* with record_shapes: the inputs' shapes as a
                           * JSON list of lists, "[[2, 3], [3], []]" ([]
                           * for a 0-d or an absent optional input);
                           * else "" */
} tg_profile_event;

/* starts recording (clearing earlier events); TG_ERR_ARG when already on.
 * At most max_events are kept (0: 4 million); later ones are counted in
 * tg_profiler_dropped */
tg_status tg_profiler_start(bool record_shapes, int64_t max_events);
/* stops recording; TG_ERR_ARG when it was not on */
tg_status tg_profiler_stop(void);
bool tg_profiler_enabled(void);
int64_t tg_profiler_count(void);   /* events kept since the last start */
int64_t tg_profiler_dropped(void); /* events past max_events */
/* a named range on the calling thread (Python's record_function): one
 * event from the push to the matching pop, with the ops run in between
 * one deeper. Ranges nest (up to 64 on a thread); name is copied. A range
 * pushed while the profiler is off, or whose profiler stopped before the
 * pop, is not an event. Pop without a push: TG_ERR_ARG */
tg_status tg_profiler_range_push(const char *name);
tg_status tg_profiler_range_pop(void);
/* event i (0 <= i < tg_profiler_count(), in the order they ended) into
 * *out; its strings stay valid until the next start. Not while recording:
 * TG_ERR_ARG */
tg_status tg_profiler_event(int64_t i, tg_profile_event *out);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
