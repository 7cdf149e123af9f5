/* tensorgraph static graphs (TensorFlow 1.x / MindSpore GRAPH_MODE): build
 * a graph with the same op functions as eager mode inside a graph scope,
 * inspect, verify and draw it, and append symbolic gradients. Running a
 * graph is tg/runtime.h's job (sessions). */
#ifndef TG_GRAPH_H
#define TG_GRAPH_H

#include "tg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

typedef struct tg_graph tg_graph;

/* ---- graphs ----------------------------------------------------------------
 * A graph holds nodes (op applications, placeholders, variables,
 * constants) and the values they produce. Graphs are reference counted:
 * tg_graph_free drops the caller's reference; symbolic tensors and
 * sessions keep the graph alive until they are released. A graph is not
 * thread-safe; build and run it from one thread at a time. */
tg_graph *tg_graph_new(const char *name); /* name may be NULL ("graph") */
void tg_graph_free(tg_graph *g);          /* NULL is ignored */
const char *tg_graph_name(const tg_graph *g);
int tg_graph_num_nodes(const tg_graph *g);
int tg_graph_num_values(const tg_graph *g);

/* ---- building ----------------------------------------------------------------
 * Between tg_graph_begin(g) and tg_graph_end() (per thread, nestable) every
 * public op function appends a node to g and returns a SYMBOLIC tensor:
 * it has a dtype and a shape but no data (tg_data, tg_item, tg_get,
 * tg_copy_to and in-place updates fail on it; printing describes it).
 * Nothing runs and no autograd tape is recorded. An ordinary (concrete)
 * tensor used as an input becomes a constant node of g, captured by
 * reference (no copy): the graph sees in-place changes made to it later;
 * use tg_variable for state the graph itself updates. Ops on symbolic
 * tensors outside any scope go to the tensors' graph. A placeholder's dim
 * may be -1: unknown until fed (a symbolic batch, as ONNX's dim_param).
 * Inference keeps an output dim unknown (-1) when it depends on an
 * unknown dim; a check that involves unknown dims runs again on the fed
 * shapes (a session specialises a plan to each feed-shape signature). */
tg_status tg_graph_begin(tg_graph *g);
tg_status tg_graph_end(void); /* fails when no graph scope is open */
tg_graph *tg_graph_current(void); /* the innermost open graph, or NULL */

/* a value fed at run time (tg_session_run); dims of -1 take the fed
 * tensor's size (its rank must match) */
tg_tensor *tg_placeholder(tg_graph *g, const char *name, tg_dtype dt,
                          int ndim, const int64_t *shape);
/* state that persists across runs (parameters): the graph keeps a private
 * contiguous copy of init; assign nodes (below) update it */
tg_tensor *tg_variable(tg_graph *g, const char *name, tg_tensor *init);
/* a variable holding t itself (by reference, no copy): assigns update t
 * in place, and t used as an input inside g means this variable (as if
 * tg_variable's result had been passed). For models whose parameters are
 * ordinary tensors: train them with a graph, use them eagerly. Fails if g
 * already captured t as a constant. Called with a body of control flow
 * being built (tg/control.h), the variable goes to the outermost graph
 * and the body captures it. */
tg_tensor *tg_variable_ref(tg_graph *g, const char *name, tg_tensor *t);
/* a constant node holding `value` (captured by reference, as above) */
tg_tensor *tg_constant(tg_graph *g, const char *name, tg_tensor *value);
/* the live tensor of a variable (var is the symbolic tensor returned by
 * tg_variable or tg_graph_find): a new reference sharing its storage,
 * so reading it sees the latest assignments */
tg_tensor *tg_variable_value(tg_tensor *var);

/* Assignments, for training steps made of graph ops: var must be the
 * value of a variable node (or, in eager mode, any tensor, updated in
 * place). value broadcasts to var's shape and is converted to its dtype.
 * The result is the variable after the update (it aliases the variable).
 * In a graph, an assign runs after every node that read the variable
 * before the assign was added (control dependencies are added for it);
 * run it by passing it as a target (or fetch) of tg_session_run. */
tg_tensor *tg_assign(tg_tensor *var, tg_tensor *value);
tg_tensor *tg_assign_sub(tg_tensor *var, tg_tensor *value, double alpha);

/* ---- tracing (dynamic to static) -----------------------------------------------
 * Runs fn, written with the eager API, once on placeholders shaped like
 * the example tensors (their data is not used) inside a graph scope of g,
 * and returns the placeholders ("input_0", ... or names[i]) and the
 * outputs fn wrote as symbolic tensors (new references in the current
 * scope). Concrete tensors fn uses become constants (by reference), or
 * the variables tg_variable_ref made of them. What runs is what fn did
 * this once: a branch fn takes on a concrete tensor's value is frozen
 * (tg_cond and tg_while_loop of tg/control.h keep both branches / the loop),
 * and reading a symbolic tensor's data (tg_item, tg_data) fails, which
 * fails the trace. fn returns TG_OK or an error status. */
typedef tg_status (*tg_trace_fn)(void *user, tg_tensor *const *inputs,
                                 tg_tensor **outputs);
tg_status tg_graph_trace(tg_graph *g, tg_trace_fn fn, void *user, int n_in,
                         tg_tensor *const *examples, const char *const *names,
                         tg_tensor **inputs, int n_out, tg_tensor **outputs);

/* ---- names and lookup ------------------------------------------------------------
 * Node names are unique in a graph: op nodes are named after their op
 * ("add", "add_1", ...), captured constants "const", "const_1", ...
 * A value is "node:i" for output i; "node" alone means output 0. */
bool tg_is_symbolic(const tg_tensor *t);
tg_graph *tg_tensor_graph(const tg_tensor *t); /* borrowed; NULL if concrete */
/* the name of the node that produces t, or NULL (borrowed, valid until the
 * node is renamed) */
const char *tg_graph_node_name(const tg_tensor *t);
/* renames the node producing t (letters, digits, '_', '.', '/', '-') */
tg_status tg_graph_set_name(tg_tensor *t, const char *name);
/* a symbolic tensor for "node" or "node:i", or NULL with an error */
tg_tensor *tg_graph_find(tg_graph *g, const char *name);
/* the node producing t will run after the node producing dep */
tg_status tg_graph_add_control_dep(tg_tensor *t, tg_tensor *dep);

/* Source locations: while a hook is set on this thread, every node added
 * to any graph asks it where it comes from (a text such as "model.py:12",
 * or NULL: unknown) and keeps a copy; optimization passes keep it on the
 * nodes they copy, and the explorer page shows it (tg_graph_to_html).
 * tg.function sets one while it traces (the caller's Python line). The
 * returned text need only live until the next call. fn NULL removes the
 * hook; user is passed to fn. */
typedef const char *(*tg_graph_location_fn)(void *user);
void tg_graph_set_location_hook(tg_graph_location_fn fn, void *user);
/* the source location of the node producing t, or NULL (borrowed) */
const char *tg_graph_node_location(const tg_tensor *t);

/* ---- checking and drawing ------------------------------------------------------------
 * The verifier checks that every input and control edge exists, that op
 * arities match their definitions, that the graph is acyclic, that names
 * are unique, and that each op's inference, re-run, gives the stored
 * dtypes and shapes. Errors name the node. */
tg_status tg_graph_verify(const tg_graph *g);
/* one line per node: %out = op(%inputs) {attrs} : dtype[shape] */
tg_status tg_graph_dump(const tg_graph *g, FILE *f);
/* Graphviz: ops as boxes labelled with op and attributes, values as
 * edges labelled with dtype and shape, placeholders, variables and
 * constants drawn differently, control edges dashed. The file is replaced
 * atomically: a failed write leaves the old one as it was. */
tg_status tg_graph_to_dot(const tg_graph *g, const char *path);

/* The graph explorer: ONE self-contained HTML page (scripts, styles and
 * data inside it; nothing is fetched when it is opened) drawing g with a
 * layered layout, pan, zoom and search; forward, backward and update
 * nodes coloured apart; fused regions and nested graphs as collapsible
 * clusters; a switch between optimization levels 0, 1 and 2 (the graph
 * each level's plan runs, and what each pass did); a side panel per node
 * (op, inputs and outputs with dtypes and shapes, attributes, its time in
 * the profile); the memory plan as buffers over time, with the naive and
 * planned peaks; and the profile as one timeline per thread.
 * The levels and the memory plan are those of a session over g for the
 * signature in opts, as tg_session_optimized_graph takes it; with no
 * feeds every placeholder is fed, with neither fetches nor targets every
 * value no node reads is fetched and every assign nobody reads is a
 * target. Unknown dims (-1) need feed_tensors for their sizes; without
 * them the page draws g as built and says why the levels are missing.
 * profile: a Chrome trace written by tg_session_trace_end (tg train
 * --profile), or NULL. The file is replaced atomically. opts may be NULL. */
typedef struct tg_html_options {
    const char *title; /* the page's heading; NULL: the graph's name */
    int n_feeds;
    tg_tensor *const *feeds;        /* placeholders (symbolic) */
    tg_tensor *const *feed_tensors; /* concrete tensors giving their shapes, or NULL */
    int n_fetches;
    tg_tensor *const *fetches;
    int n_targets;
    tg_tensor *const *targets;
    const char *profile;
    int level; /* the level shown first: 0, 1 or 2 */
} tg_html_options;
tg_status tg_graph_to_html(tg_graph *g, const char *path, const tg_html_options *opts);

/* ---- symbolic gradients ------------------------------------------------------------
 * Appends to g the backward nodes of sum_i(ys[i] . grad_ys[i]) with
 * respect to xs and writes symbolic tensors for the gradients to dxs
 * (NULL where an x does not influence the ys, as tg_autograd_grad).
 * grad_ys may be NULL (every y then needs one element; its seed is 1).
 * The gradient rules are the ones eager autograd runs. xs may be any
 * values of g (placeholders, variables, intermediates) or concrete
 * tensors g captured as constants. Results are new references (put in
 * the current scope, if one is open). */
tg_status tg_graph_gradients(tg_graph *g, int n_ys, tg_tensor *const *ys,
                             tg_tensor *const *grad_ys, int n_xs,
                             tg_tensor *const *xs, tg_tensor **dxs);

/* The values made by op nodes with ids below `split` that op nodes from
 * `split` on read (ids are creation order): what a part of g appended
 * later, such as the backward nodes tg_graph_gradients adds after a
 * forward graph of split nodes, needs of the part before it. A run of the
 * first part can fetch them and a run of the second be fed them instead of
 * computing the first part again. Views of placeholders, variables and
 * constants are left out (recomputing an alias costs nothing). *out is a
 * malloc'd array (free it) of *n new symbolic references (put in the
 * current scope, if one is open); split is 0..tg_graph_num_nodes(g). */
tg_status tg_graph_cut_values(tg_graph *g, int split, int *n, tg_tensor ***out);

/* Evaluates fetches of g eagerly: the nodes they need run one by one with
 * the op functions (a node built under no_grad, under no_grad), so that
 * with grad mode on the results carry autograd history back to the fed
 * tensors and to the variables' tensors, as if the code that built g had
 * run eagerly on them: gradients of gradients through a graph. A session
 * run is the fast way to the values; this is the differentiable one.
 * placeholders[i] (of g) takes values[i] (concrete, its dtype, the known
 * dims); a placeholder needed and not fed is an error; a node that writes
 * state or draws random numbers is TG_ERR_UNSUPPORTED (a replay would do
 * it again). out[i] receives a new reference per fetch (published to the
 * current scope); all NULL on failure. */
tg_status tg_graph_replay(tg_graph *g, int n_feeds, tg_tensor *const *placeholders,
                          tg_tensor *const *values, int n_fetches, tg_tensor *const *fetches,
                          tg_tensor **out);

/* ---- symbolic forward mode (Jacobian-vector products) --------------------------------
 * Appends to g the tangent nodes of the ys along the direction `tangents`
 * of the xs and writes symbolic tensors for them to out_tangents:
 *   out_tangents[i] = sum_j (d ys[i] / d xs[j]) . tangents[j]
 * (the J.v that tg_graph_gradients' rows would give, without forming J).
 * Each op's JVP rule runs once per node on the path from an x to a y, in
 * creation order, inside a graph scope (one forward sweep whatever the
 * number of ys; reverse mode needs one per output element). xs and ys are
 * values of g (placeholders, variables, intermediates) or concrete
 * tensors g captured as constants. tangents[j] has the shape and dtype of
 * xs[j] (TG_ERR_SHAPE / TG_ERR_DTYPE naming it otherwise); it is a value
 * of g (a placeholder fed at run time, say) or a concrete tensor (captured
 * as a constant by reference). tangents, or an entry, may be NULL: zero.
 * Only floating-point values have tangents. An x computed from another x
 * gets its own tangent plus the one propagated to it, as reverse mode
 * adds both paths. A y that does not depend on the xs gets zeros (of its
 * dtype). An op on the path without a JVP rule fails with
 * TG_ERR_UNSUPPORTED naming the op and the node (rules cover the
 * elementwise, view, reduction, linear-algebra, conv/pool, softmax, loss
 * and array ops; not yet batch_norm, layer_norm, prod). Results are new
 * references (put in the current scope, if one is open). */
tg_status tg_graph_jvp(tg_graph *g, int n_xs, tg_tensor *const *xs,
                       tg_tensor *const *tangents, int n_ys, tg_tensor *const *ys,
                       tg_tensor **out_tangents);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
