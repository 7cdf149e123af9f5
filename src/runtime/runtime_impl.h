/* Runtime internals: a plan is what a session compiles once per feed /
 * fetch / target signature (the pruned node set in execution order and
 * its memory plan) and the executor runs with the ops' own kernels. */
#ifndef TG_RUNTIME_IMPL_H
#define TG_RUNTIME_IMPL_H

#include "graph/graph_impl.h"
#include "tg/runtime.h"

/* the signature a plan is cached under: sorted, duplicate-free ids */
typedef struct tg_plan_key {
    int n_feeds, n_fetches, n_targets;
    int *feeds;   /* value ids */
    int *fetches; /* value ids */
    int *targets; /* node ids */
} tg_plan_key;

/* Memory plan: when each value's buffer can go. Today the executor frees
 * a value after the step that uses it last (and allocates outputs with
 * tg__alloc); an arena with buffer reuse and in-place execution will
 * replace alloc_output/free lists without changing the plan's users. */
typedef struct tg_memplan {
    int *free_start; /* n_steps + 1 offsets into free_values */
    int *free_values; /* values to release after each step */
} tg_memplan;

typedef struct tg_plan {
    tg_plan_key key;
    uint64_t epoch;   /* graph epoch it was compiled at */
    int n_values;     /* graph values then: the size of a run's value table */
    int n_steps;
    int *steps;       /* node ids in execution order (ops and sources) */
    tg_memplan mem;
    /* per value: fetched and aliasing a variable or constant (itself or a
     * view of it), so copied when produced: later steps (assigns) and runs
     * must not change what the caller gets */
    bool *snapshot;
    struct tg_plan *next;
} tg_plan;

/* compiles the plan for key (copied) or fails naming what is missing;
 * fed[v] marks fed values (n_values entries) */
tg_plan *tg__plan_compile(const tg_graph *g, const tg_plan_key *key, const bool *fed);
void tg__plan_free(tg_plan *p);

/* runs plan p: vals[n_values] holds the fed tensors (owned references) on
 * entry and the fetched ones on success; everything else is released.
 * snaps[n_values] (NULLs on entry) receives the copies of fetched values
 * marked in p->snapshot, taken when they were produced. *n_ops counts the
 * op nodes executed. */
tg_status tg__plan_execute(const tg_graph *g, const tg_plan *p, tg_tensor **vals,
                           tg_tensor **snaps, int64_t *n_ops);

#endif
