/* Runtime internals: a plan is what a session compiles once per feed /
 * fetch / target signature (the pruned node set in execution order, its
 * dependency graph and its memory plan) and the executors run with the
 * ops' own kernels. */
#ifndef TG_RUNTIME_IMPL_H
#define TG_RUNTIME_IMPL_H

#include "graph/graph_impl.h"
#include "passes/passes.h"
#include "tg/runtime.h"

/* the signature a plan is cached under: sorted, duplicate-free ids */
typedef struct tg_plan_key {
    int n_feeds, n_fetches, n_targets;
    int *feeds;   /* value ids */
    int *fetches; /* value ids */
    int *targets; /* node ids */
    /* the shape signature: the fed sizes of the feeds' unknown (-1) dims,
     * in feed order, so that a plan is specialised per feed shape */
    int n_dims;
    int64_t *dims;
} tg_plan_key;

/* where a value's tensor comes from at run time */
typedef enum tg_mem_kind {
    TG_MEM_NONE = 0, /* not produced in this plan */
    TG_MEM_EXTERNAL, /* a feed, variable or constant: bound, never allocated */
    TG_MEM_VIEW,     /* made by a view op: aliases its input (or a copy) */
    TG_MEM_OWN,      /* a buffer of its own (tg__alloc) */
    TG_MEM_ARENA     /* at offset[v] in the plan's arena */
} tg_mem_kind;

/* The memory plan (memplan.c). Serially, a value lives from its producer
 * to its last reader, readers of views of it included; arena values get
 * 64-byte aligned offsets, best fit among the blocks of dead values. For
 * the parallel executor a dead value's block is reused only by a node
 * that depends on every node that touched it (see memplan.c). */
typedef struct tg_memplan {
    bool enabled;  /* false: every computed value TG_MEM_OWN */
    bool parallel; /* reuse restricted for the parallel executor */
    uint8_t *kind;     /* per value: tg_mem_kind */
    int64_t *offset;   /* per value: arena byte offset (TG_MEM_ARENA) */
    int *inplace_of;   /* per value: the input whose buffer it took, or -1 */
    /* serial executor: values released after each step (tensor
     * references; the arena itself stays) */
    int *free_start;  /* n_steps + 1 offsets into free_values */
    int *free_values;
    int *n_reads;     /* per value: input slots reading it (parallel executor) */
    tg_memory_stats stats;
    tg_tensor *arena; /* uint8 storage of stats.arena_bytes, made at first run */
    /* per value of its own (TG_MEM_OWN): the storage of the last run's
     * tensor, kept by the plan (one reference) and reused by the next run
     * when no one else holds it any more. Values that escape a run (the
     * fetches: a training step's saved activations, its gradients) then
     * cost no allocation once the caller has let them go. */
    struct tg_storage **recycle;
    int n_values;
} tg_memplan;

/* how a session compiles plans: its options */
typedef struct tg_plan_opts {
    bool memory_plan, parallel;
    int level;         /* optimization level (passes) */
    int n_disabled;
    char *const *disabled; /* pass names */
    const tg_meta *feed_meta; /* per value of the session's graph: a fed tensor's */
} tg_plan_opts;

typedef struct tg_plan {
    tg_plan_key key;  /* the signature, as ids of the session's graph */
    uint64_t epoch;   /* graph epoch it was compiled at */
    /* the graph the plan runs (a reference): the session's own at level 0,
     * else the copy the passes optimised. Everything below is by its ids;
     * run_feeds[i] / run_fetches[i] are the values standing for
     * key.feeds[i] / key.fetches[i] (a feed nothing reads any more: -1) */
    tg_graph *g;
    int *run_feeds, *run_fetches;
    tg_pass_record *records; /* what each pass did */
    int n_records;
    /* constants the passes folded or merged: the plan is stale once one of
     * them was written in place */
    tg_fold_guard *guards;
    int n_guards;
    int n_values;     /* g's values: the size of a run's value table */
    int n_steps;
    int *steps;       /* node ids in execution order (ops and sources) */
    /* the dependency graph among steps (data, control and ordering edges
     * whose ends both run), by step index: how many predecessors each
     * step has, and its successors */
    int *n_preds;
    int *succ_start; /* n_steps + 1 */
    int *succ;
    bool *fed;       /* per value: fed in this signature */
    bool *fetched;   /* per value */
    tg_memplan mem;
    /* per value: fetched and aliasing a variable or constant (itself or a
     * view of it), so copied when produced: later steps (assigns) and runs
     * must not change what the caller gets */
    bool *snapshot;
    struct tg_plan *next;
} tg_plan;

/* compiles the plan for key (copied) or fails naming what is missing;
 * fed[v] marks fed values of g (n_values entries). */
tg_plan *tg__plan_compile(const tg_graph *g, const tg_plan_key *key, const bool *fed,
                          const tg_plan_opts *o);
/* is the plan stale (a folded constant written in place since)? */
bool tg__plan_stale(const tg_plan *p);
void tg__plan_free(tg_plan *p);

/* builds p->mem for the compiled steps (memplan.c) */
tg_status tg__memplan_build(const tg_graph *g, tg_plan *p, bool enabled, bool parallel);
void tg__memplan_free(tg_memplan *m);
/* the arena, allocated on first use; TG_OK when the plan needs none */
tg_status tg__memplan_prepare(tg_plan *p);
/* may op's output overwrite a same-shaped input (elementwise kernels)? */
bool tg__memplan_elementwise(const tg_op_def *op);
/* Offline placement of p's arena values (memplace.c; serial plans): the
 * in-place decisions are p->mem.inplace_of's; prod/last give each value's
 * life in steps, bytes its aligned size. Writes offset[] for arena values
 * and the count of values placed in memory a dead one used; returns the
 * arena's size, or -1 (out of memory, or too many buffers to try). */
int64_t tg__memplan_offline(const tg_plan *p, const int *prod, const int *last,
                            const int64_t *bytes, int64_t *offset, int *n_reused);
/* a tensor for value v computed by a kernel: in the arena or its own */
tg_tensor *tg__memplan_output(tg_plan *p, int v, const tg_meta *m);

/* one op execution, for the profiler */
typedef struct tg_trace_span {
    int node;       /* -1: the step was not an op (a variable or constant) */
    int tid;        /* 0: the calling thread */
    int64_t t0, t1; /* CLOCK_MONOTONIC nanoseconds */
} tg_trace_span;
int64_t tg__now_ns(void);

/* A run of plan p: vals[n_values] holds the fed tensors (owned
 * references) on entry and the fetched ones on success; everything else
 * is released. snaps[n_values] (NULLs on entry) receives the copies of
 * fetched values marked in p->snapshot, taken when they were produced.
 * spans (n_steps entries, or NULL) receives one span per step. */
typedef struct tg_exec {
    const tg_graph *g;
    tg_plan *p;
    tg_tensor **vals, **snaps;
    tg_trace_span *spans;
    int64_t n_ops; /* out: op nodes executed */
} tg_exec;

tg_status tg__plan_execute(tg_exec *x);          /* serial (executor.c) */
tg_status tg__plan_execute_parallel(tg_exec *x); /* exec_parallel.c */
/* runs step k (binding a source, or running an op into vals and taking
 * snapshots); *ran_op tells whether it was an op. On failure the error
 * names the node. Shared by both executors. */
tg_status tg__exec_step(const tg_exec *x, int k, bool *ran_op);

/* a run by value ids of the session's graph (control-flow bodies: no
 * names or tensors to resolve per iteration); results are published */
tg_status tg__session_run_ids(tg_session *s, int n_feeds, int *feeds,
                              tg_tensor *const *feed_tensors, int n_fetches, int *fetches,
                              tg_tensor **results);
/* a span of a body of control flow (a branch, one iteration's body) run by
 * a kernel of the traced run in progress on this thread, if any */
void tg__trace_body_span(const char *name, int64_t t0, int64_t t1);
/* the plan the session's last run (or memory_stats call) used; tests */
const tg_plan *tg__session_last_plan(const tg_session *s);

#endif
