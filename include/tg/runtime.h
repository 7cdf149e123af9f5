/* tensorgraph runtime: sessions run static graphs (TensorFlow 1.x's
 * Session::Run). A run executes only the nodes its fetches and targets
 * need, with the same kernels as eager mode, from a plan (order, kernels,
 * memory plan) compiled once per feed/fetch/target signature and cached. */
#ifndef TG_RUNTIME_H
#define TG_RUNTIME_H

#include "tg/graph.h"
#include "tg/optim.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

typedef struct tg_session tg_session;

/* a session holds a reference on g; nodes appended to g later can be run
 * by the same session. One run at a time per session: runs started from
 * several threads take turns (tg_session_run waits for the one in
 * progress); editing g or the session's options meanwhile is not safe. */
tg_session *tg_session_new(tg_graph *g);
void tg_session_free(tg_session *s); /* NULL is ignored */

/* Runs the minimal subgraph that computes the fetches and runs the target
 * nodes, given the feeds.
 *  - feed_values[i]: a symbolic value of the graph (usually a placeholder;
 *    any non-variable value may be fed, its producer then does not run),
 *    fed with the concrete feed_tensors[i] of exactly the same dtype and
 *    shape (no conversion);
 *  - fetch_values[i]: symbolic values to compute; results[i] receives a
 *    new concrete tensor (put in the current scope, if one is open).
 *    Fetching a variable gives a copy of its current value;
 *  - targets[i]: symbolic tensors whose producing nodes must run although
 *    nothing is fetched from them (assign nodes, say).
 * Fails, naming the value, on: an unfed placeholder the run needs, a value
 * both fed and fetched, a value fed twice, a feed of the wrong dtype or
 * shape, a value of another graph, a variable fed. On failure results
 * are all NULL. */
tg_status tg_session_run(tg_session *s, int n_feeds,
                         tg_tensor *const *feed_values,
                         tg_tensor *const *feed_tensors, int n_fetches,
                         tg_tensor *const *fetch_values, tg_tensor **results,
                         int n_targets, tg_tensor *const *targets);
/* the same with values named "node" or "node:i" (see tg_graph_find) */
tg_status tg_session_run_named(tg_session *s, int n_feeds,
                               const char *const *feed_names,
                               tg_tensor *const *feed_tensors, int n_fetches,
                               const char *const *fetch_names,
                               tg_tensor **results, int n_targets,
                               const char *const *target_names);

/* ---- options ----------------------------------------------------------------
 * Executors: SERIAL runs the plan's steps one after another on the
 * calling thread (kernels use the thread pool inside); PARALLEL runs
 * independent nodes at the same time on the thread pool, each kernel on
 * one thread. Both give bitwise the same results whenever the kernels do
 * not depend on the thread count (see docs/GRAPHS.md).
 * The memory plan (on by default) places every value a kernel computes
 * in one arena per plan, reusing the memory of dead values and writing
 * elementwise results over inputs that die there; off, every value gets
 * its own buffer, freed after its last use. Changing either option drops
 * the session's cached plans. */
typedef enum tg_executor_kind {
    TG_EXECUTOR_SERIAL = 0,
    TG_EXECUTOR_PARALLEL = 1
} tg_executor_kind;
tg_status tg_session_set_executor(tg_session *s, tg_executor_kind kind);
tg_status tg_session_set_memory_plan(tg_session *s, bool on);

/* ---- graph optimization -----------------------------------------------------------
 * Before compiling the plan of a signature, a session copies the part of
 * the graph the run needs (fed values become placeholders of the fed
 * shapes) and rewrites the copy with the optimization passes of its level;
 * the graph you built never changes, and the results are those of the
 * graph as built (see docs/PASSES.md for each pass and its guarantees):
 *  - level 0: the graph as built (no copy unless fed shapes differ from
 *    the declared ones);
 *  - level 1: cleanups that give bitwise the same results: algebraic
 *    simplification (x*1, x+0, double permutes, view chains, casts to the
 *    same dtype, reductions over nothing...), constant folding (outputs up
 *    to 64 KiB), common subexpression elimination (pure ops only), dead
 *    code elimination;
 *  - level 2 (the default): also fusion.
 * The default level is the environment's TG_OPT_LEVEL when set (0, 1 or
 * 2). disabled_passes names passes not to run (tg_pass_info lists them;
 * an unknown name is an error); the session copies the names. Setting
 * options drops the session's cached plans. */
typedef struct tg_session_options {
    int opt_level;
    int n_disabled;
    const char *const *disabled_passes;
} tg_session_options;
/* level 2 (or TG_OPT_LEVEL) and the passes TG_DISABLE_PASSES names
 * (comma-separated; unknown names are reported on stderr and skipped),
 * what new sessions start with; the list stays valid until the calling
 * thread's next call */
tg_session_options tg_session_default_options(void);
tg_status tg_session_set_options(tg_session *s, const tg_session_options *o);

/* the registered passes, i = 0 .. tg_pass_count() - 1: name and the lowest
 * level that runs it; NULL past the end */
int tg_pass_count(void);
const char *tg_pass_info(int i, int *level);

/* What one pass did to a plan's graph: node counts before and after, and
 * named counts of its changes ("removed", "folded", "merged", ...). */
#define TG_PASS_MAX_COUNTS 4
typedef struct tg_pass_count_entry {
    const char *what; /* a static string */
    int n;
} tg_pass_count_entry;
typedef struct tg_pass_record {
    const char *pass; /* a static string */
    int nodes_before, nodes_after;
    int n_counts;
    tg_pass_count_entry counts[TG_PASS_MAX_COUNTS];
} tg_pass_record;

/* Compiles (and caches, as a run would) the plan of a signature without
 * running it, and returns a new reference to the graph that plan executes
 * (the session's own graph at level 0; free it with tg_graph_free). When
 * the graph has unknown dims, feed_tensors gives the shapes (NULL: the
 * declared shapes). records (cap entries, may be NULL) receives what each
 * pass did, *n_records how many ran. */
tg_graph *tg_session_optimized_graph(tg_session *s, int n_feeds,
                                     tg_tensor *const *feed_values,
                                     tg_tensor *const *feed_tensors, int n_fetches,
                                     tg_tensor *const *fetch_values, int n_targets,
                                     tg_tensor *const *targets, int cap,
                                     tg_pass_record *records, int *n_records);

/* ---- memory plan statistics ------------------------------------------------------
 * Plans (compiling and caching, as a run would) the feed/fetch/target
 * signature without running it, and reports its memory:
 *  - naive_bytes: every value computed by a kernel in a buffer of its own
 *    (64-byte aligned sizes), as if nothing were ever freed or reused;
 *  - planned_bytes: what the plan needs at most: arena_bytes (the arena
 *    holding the values the plan places) plus own_bytes (values kept out
 *    of the arena: fetched values, and values a fetched view aliases).
 * With the memory plan off, planned_bytes is naive_bytes. Values bound to
 * feeds, variables and constants are not counted: they are not allocated
 * by the run. Feeds are given as values only (shapes are static). */
typedef struct tg_memory_stats {
    int64_t naive_bytes;
    int64_t planned_bytes;
    int64_t arena_bytes;
    int64_t own_bytes;
    int n_values;  /* values computed by kernels in the plan */
    int n_reused;  /* placed (at least partly) in memory a dead value used */
    int n_inplace; /* written over an input that dies at that node */
} tg_memory_stats;
tg_status tg_session_memory_stats(tg_session *s, int n_feeds,
                                  tg_tensor *const *feed_values, int n_fetches,
                                  tg_tensor *const *fetch_values, int n_targets,
                                  tg_tensor *const *targets, tg_memory_stats *out);

/* ---- profiler ------------------------------------------------------------------
 * Between tg_session_trace_begin and tg_session_trace_end every run
 * records one span per op node it executes (start, duration, thread).
 * trace_end writes them to `path` as a Chrome trace (chrome://tracing,
 * Perfetto): {"traceEvents": [{"name": node, "cat": op, "ph": "X",
 * "ts": us, "dur": us, "pid": 1, "tid": thread, "args": {"run": i}}]},
 * times in microseconds from trace_begin, thread 0 the calling thread.
 * path NULL discards the spans. The file is replaced atomically. */
tg_status tg_session_trace_begin(tg_session *s);
tg_status tg_session_trace_end(tg_session *s, const char *path);

/* ---- training steps -------------------------------------------------------------
 * tg_graph_optim appends to loss's graph the gradients of loss with
 * respect to opt's parameters (tg_graph_gradients) and opt's update (its
 * algorithm and hyper-parameters: SGD, Adam, AdamW, Adadelta, RMSprop, as
 * tg_optim_step runs them) made of op and assign nodes. The update is
 * written with the same formula as the eager step (same float operations,
 * order and dtype), so given the same gradients both give the same bits.
 * The state is opt's own: its buffers (made zeros now where missing) and
 * step counts become variables of the graph by reference, named
 * "<param>/<buffer>" (PyTorch's names: "conv1.weight/exp_avg",
 * "fc1.bias/momentum_buffer") and "<optimizer>/step" (int64 [n]). So graph
 * runs, eager steps, tg_optim_state_dict and tg_optim_load_state_dict
 * (which copies into the buffers in place) all see one state: a
 * checkpoint of either mode resumes in the other. opt's parameters must be
 * variables of the graph (tg_variable_ref of them). lr NULL: opt's lr at
 * this call, fixed in the graph (tg_optim_set_lr later does not change
 * it); else a 0-d floating-point value of the graph (a variable, or a
 * placeholder fed at every step) for schedules, used in double as the
 * eager step uses its lr (feed float64 for the same bits). updates[i]
 * (opt's parameter count of them) receives the assign node of parameter
 * i, which runs the parameter's whole update (the variable itself if the
 * loss does not depend on it; such a parameter's step count stays). A
 * training step is then one run:
 *   tg_session_run(s, n_feeds, placeholders, batch, 1, &loss, &loss_value,
 *                  n, updates);
 * Forward values fetched with the updates (the loss) are those before the
 * update. An update running in several graphs at once is not supported.
 *
 * tg_graph_sgd is PyTorch's SGD (torch.optim.SGD, tg_optim_sgd's formula)
 * over n variables without an optimizer object:
 *   g = grad (+ weight_decay * p), negated when maximize
 *   buf = g on the first step, else momentum * buf + (1 - dampening) * g
 *   p = p + (-lr) * (nesterov ? g + momentum * buf : buf)   (buf = g without momentum)
 * The momentum buffers are the variables "<param>/momentum": the caller's
 * when it made them (tg_variable_ref of zeros, to share one buffer between
 * graphs for several batch sizes), else new ones of zeros; with momentum
 * an int64 [n] variable "sgd/step" counts the steps (the first is told
 * from it). params: variables of the graph (tg_variable or
 * tg_variable_ref; the concrete tensor given to tg_variable_ref works
 * too). opts NULL: defaults. lr and updates as above. */
tg_status tg_graph_optim(tg_optimizer *opt, tg_tensor *loss, tg_tensor *lr, tg_tensor **updates);
/* tg_graph_optim with the gradients given instead of computed from a
 * loss: grads[i] (opt's parameter count of them) is parameter i's
 * gradient, a value of the graph with the parameter's dtype and shape, or
 * NULL: the parameter is not updated (as an eager step skips a parameter
 * without a gradient). The graph is the gradients' (or, with none given,
 * the one being built). For gradients that a graph computed some other
 * way, or accumulated: tg.function's compiled training steps. */
tg_status tg_graph_optim_apply(tg_optimizer *opt, tg_tensor *const *grads, tg_tensor *lr,
                               tg_tensor **updates);
tg_status tg_graph_sgd(tg_tensor *loss, int n, tg_tensor *const *params,
                       const tg_sgd_opts *opts, tg_tensor *lr, tg_tensor **updates);

/* counters, for tests and profiling */
typedef struct tg_session_stats {
    int64_t runs;            /* successful runs */
    int64_t plan_hits;       /* runs that reused a cached plan */
    int64_t plan_misses;     /* plans compiled */
    int64_t nodes_last_run;  /* op nodes executed by the last run */
    int64_t nodes_total;     /* op nodes executed by all runs */
    int n_plans;             /* plans in the cache */
} tg_session_stats;
void tg_session_get_stats(const tg_session *s, tg_session_stats *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
