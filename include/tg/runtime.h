/* tensorgraph runtime: sessions run static graphs (TensorFlow 1.x's
 * Session::Run). A run executes only the nodes its fetches and targets
 * need, with the same kernels as eager mode, from a plan (order, kernels,
 * memory plan) compiled once per feed/fetch/target signature and cached. */
#ifndef TG_RUNTIME_H
#define TG_RUNTIME_H

#include "tg/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_session tg_session;

/* a session holds a reference on g; nodes appended to g later can be run
 * by the same session. One run at a time per session. */
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

#ifdef __cplusplus
}
#endif
#endif
