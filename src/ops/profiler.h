/* The dispatcher's side of the eager op profiler (tg/profiler.h): a span
 * begun before an op runs and ended after, kept as an event when the
 * profiler is on. */
#ifndef TG_OPS_PROFILER_H
#define TG_OPS_PROFILER_H

#include "ops/op.h"

#include <stdatomic.h>

extern atomic_bool tg__profiling;

typedef struct tg__profile_span {
    int64_t start_ns; /* 0: not profiled */
} tg__profile_span;

static inline bool tg__profiler_on(void)
{
    return atomic_load_explicit(&tg__profiling, memory_order_relaxed);
}

/* a span of op's run on this thread (nested ops count one deeper) */
void tg__profile_begin(tg__profile_span *sp);
/* its end: the event, with the inputs' shapes when they are recorded */
void tg__profile_end(tg__profile_span *sp, const tg_op_def *op, int n_in,
                     tg_tensor *const *in);

#endif
