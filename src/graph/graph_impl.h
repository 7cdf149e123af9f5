/* The graph IR: nodes and values in arrays indexed by
 * id, names, and the helpers the builder, verifier, printers, symbolic
 * autodiff and the runtime share. Nodes are only appended, so ids are
 * stable, and a node's inputs always come from nodes with smaller ids. */
#ifndef TG_GRAPH_IMPL_H
#define TG_GRAPH_IMPL_H

#include "ops/op.h"
#include "tg/graph.h"
#include "util/hmap.h"

typedef enum tg_gnode_kind {
    TG_GNODE_OP,          /* an op application: op, attrs, inputs */
    TG_GNODE_PLACEHOLDER, /* fed at run time */
    TG_GNODE_VARIABLE,    /* a tensor that persists across runs */
    TG_GNODE_CONSTANT     /* a tensor fixed when the graph was built */
} tg_gnode_kind;

typedef struct tg_gnode {
    tg_gnode_kind kind;
    const tg_op_def *op; /* TG_GNODE_OP only; the registry's definition */
    char *name;          /* unique in the graph; owned */
    char *loc;           /* source location ("file.py:12"), or NULL; owned */
    bool backward;       /* made by tg_graph_gradients (drawn as backward) */
    bool no_grad;        /* built with grad mode off: gradients do not flow
                          * through it (as eager results of no_grad code) */
    tg_attr *attrs;      /* deep copy (tg_attrs_copy); tensor and graph
                          * attributes hold a reference */
    int n_attrs;
    void *attr;          /* the op's struct, decoded from attrs (owned) */
    int n_in, n_out, n_ctrl, cap_ctrl, n_order, cap_order;
    int *in;   /* value ids */
    int *out;  /* value ids */
    int *ctrl; /* node ids that must run (and run first) when this one runs */
    /* ordering-only edges: node ids that run first when both run in the
     * same plan, without making this node need them (an assign runs after
     * the variable's earlier readers, but does not force them to run) */
    int *order;
    tg_tensor *tensor; /* VARIABLE / CONSTANT: the concrete value (owned) */
    /* VARIABLE: the nodes that read it (directly or through views) and the
     * assigns to it, as lists in tg_graph.uses (index + 1; 0: none), so
     * that ordering edges cost what they add, not a scan of the graph */
    int readers, assigns;
    /* where it runs: set by a device scope or tg_graph_set_device; index
     * -1: unplaced (the session's placer chooses) */
    tg_device device;
} tg_gnode;

/* A dim may be -1, unknown until fed (a symbolic batch): plans are
 * specialised per feed-shape signature, where every dim is concrete. */
typedef struct tg_gvalue {
    tg_meta meta;
    int var;   /* the variable node this value is (or a view of), or -1 */
    int node;  /* producer */
    int index; /* which output of the producer */
} tg_gvalue;

struct tg_graph {
    int refcount;
    char *name;
    tg_gnode *nodes;
    int n_nodes, cap_nodes;
    tg_gvalue *values;
    int n_values, cap_values;
    tg_hmap names;    /* node name -> node id */
    tg_hmap name_next; /* base name -> the next "_k" suffix to try */
    char **bases;      /* name_next's keys (owned) */
    int n_bases, cap_bases;
    struct tg_guse { int node, next; } *uses; /* see tg_gnode.readers */
    int n_uses, cap_uses;
    /* some control or ordering edge runs from a later node to an earlier
     * one: ids are then no longer a topological order of all edges */
    bool back_edges;
    tg_hmap captured; /* concrete tensor -> constant value id */
    /* bumped by edits other than appending (control edges added to an
     * existing node, ...): cached plans compiled earlier are stale */
    uint64_t epoch;
    /* a control-flow body (a function graph): its inputs, captures and
     * results (funcgraph.c); NULL for ordinary graphs */
    struct tg_fgraph *fn;
};

/* a node's predecessors for ordering: its inputs' producers, then its
 * control edges, then its ordering-only edges */
static inline int tg__gnode_n_preds(const tg_gnode *n)
{
    return n->n_in + n->n_ctrl + n->n_order;
}
int tg__gnode_pred(const tg_graph *g, const tg_gnode *n, int i);

/* while on (per thread), new nodes are marked backward (tg_graph_gradients
 * turns it on around its pass); returns the previous setting */
bool tg__graph_mark_backward(bool on);

/* ---- lifetime and lookup ---------------------------------------------------- */
void tg__graph_retain(tg_graph *g);
void tg__graph_release(tg_graph *g); /* also declared in core/tensor_impl.h */

/* a new node (its arrays allocated, contents zero) named `name` or, when
 * name is NULL, a unique name made from `base`; returns its id or -1.
 * Room for its n_out values is reserved: adding them then cannot fail. */
int tg__graph_add_node(tg_graph *g, tg_gnode_kind kind, const char *name,
                       const char *base, int n_in, int n_out);
/* a value produced by output `index` of node `node`; returns id or -1 */
int tg__graph_add_value(tg_graph *g, int node, int index, const tg_meta *m);
/* node n's op inference again, on its inputs' stored metadata: constants
 * with their data (an op whose shapes depend on values reads them, as it
 * did when the node was made), other values without; c gets the decoded
 * attributes and out_meta. TG_ERR_NOMEM, or the inference's error. */
tg_status tg__graph_infer_node(const tg_graph *g, const tg_gnode *n, tg_op_ctx *c);
/* an input of n has a dim known only when the graph runs (-1): an
 * inference that fails on it may fail on the probes only (ops/op.h,
 * tg__infer_unknown), and the executor infers n when the graph runs
 * (src/graph/verify.c) */
bool tg__node_inputs_unknown(const tg_graph *g, const tg_gnode *n);
/* adds a control edge (order_only: an ordering-only edge) dep -> node,
 * unless it is there already (a scan of node's edges) */
tg_status tg__graph_add_ctrl(tg_graph *g, int node, int dep, bool order_only);
/* the same for an edge the caller knows is new: no scan */
tg_status tg__graph_push_edge(tg_graph *g, int node, int dep, bool order_only);
/* records that op node `node` reads variable node var (assign: assigns
 * it); a node recorded twice in a row as a reader counts once */
tg_status tg__graph_note_use(tg_graph *g, int var, int node, bool assign);
/* the nodes on a variable's list: first = g->nodes[var].readers (or
 * .assigns), then tg__graph_next_use, until 0 */
static inline int tg__graph_use_node(const tg_graph *g, int at) { return g->uses[at - 1].node; }
static inline int tg__graph_next_use(const tg_graph *g, int at) { return g->uses[at - 1].next; }
/* records that concrete tensor t is captured as constant value v */
bool tg__graph_map_capture(tg_graph *g, const tg_tensor *t, int v);
/* attribute copies for nodes: tensor and graph attributes hold references */
tg_attr *tg__attrs_hold_copy(const tg_attr *a, int n);
void tg__attrs_free(tg_attr *a, int n);

/* node id's outputs from its inputs' values val[] (a value already bound,
 * a fed one, is kept), with the op functions in the current grad mode, or
 * under no_grad for a node built so; constants and variables give their
 * tensor; an unbound placeholder, and nodes that write state or draw, are
 * errors (replay.c: tg_graph_replay, and control-flow bodies) */
tg_status tg__graph_replay_node(tg_graph *g, int id, tg_tensor **val);
/* a new symbolic tensor for value v (not published to any scope) */
tg_tensor *tg__graph_symbolic(tg_graph *g, int v);
/* "node" or "node:i" -> value id, or -1 with an error naming `fn` */
int tg__graph_parse_value(const tg_graph *g, const char *name, const char *fn);
/* the value id of t in g: t symbolic in g, or a concrete tensor g has
 * captured as a constant; -1 with an error naming fn and `what` */
int tg__graph_value_of(const tg_graph *g, const tg_tensor *t, const char *fn,
                       const char *what);
/* "node:i" (or "node" for single-output nodes) into buf; returns buf */
const char *tg__value_name(const tg_graph *g, int v, char *buf, size_t len);
const char *tg__gnode_kind_name(tg_gnode_kind k);
/* "op" name of a node: the op's name, or placeholder/variable/constant */
const char *tg__gnode_op_name(const tg_gnode *n);
/* a summary of the node's attributes ("axes=[0, 1], keepdim=1") */
const char *tg__attrs_summary(const tg_gnode *n, char *buf, size_t len);

/* ---- device scopes (graph/device_scope.c) -------------------------------------- */
/* the innermost open device scope's device (index -1: none / unplaced) */
tg_device tg__device_scope_current(void);

/* ---- graph scopes and captures (build.c) --------------------------------------- */
/* the value of the constant capturing concrete tensor t (made on first
 * use, by reference); -1 on failure */
int tg__graph_capture(tg_graph *g, tg_tensor *t);
/* hides open graph scopes (the runtime runs kernels eagerly) */
int tg__graph_suspend(void);
void tg__graph_resume(int old);
/* adds control edges so that the assign producing assign_out runs after
 * every earlier reader of variable value var (assign.c) */
tg_status tg__graph_order_assign(tg_tensor *var, tg_tensor *assign_out);

/* ---- function graphs: the bodies of control flow (funcgraph.c) ----------------
 * A body is a graph of its own (TF2's FuncGraph) held by the control node's
 * graph attributes. Its inputs are placeholders: first the body's
 * parameters, then one per captured value of the enclosing graph (a
 * closure's free variable, which the control node then takes as an
 * explicit input). Its results are value ids. */
typedef struct tg_fgraph {
    tg_graph *parent;  /* while being built: the enclosing graph (borrowed) */
    int n_params, n_caps;
    int *inputs;       /* n_params + n_caps placeholder value ids */
    int cap_inputs;
    tg_tensor **outer; /* while being built: per capture, the enclosing value */
    int n_results;
    int *results;
    /* the runner the control kernels use, made at the first run and kept
     * (plans compiled once); it holds references to the body, which are
     * counted in internal_refs so that the body can still be freed */
    struct tg_session *session;
    int internal_refs;
    /* a loop body whose variables change shape: its gradient graphs, made
     * at run time per signature of input metadata (n_key metas each) */
    tg_graph **grads;
    tg_meta *grad_keys;
    int n_grads, n_key;
} tg_fgraph;

/* Traces fn(user, params, results) into a new body graph whose parent is
 * `parent`: params are placeholders with the given metadata; the n_results
 * results fn writes may be values of the body, of an enclosing graph
 * (captured) or concrete tensors (constants); n_results -1: as many as fn
 * writes (a non-NULL prefix). The body's outer values stay
 * held until tg__fgraph_seal. what names the body in errors ("tg_cond: then
 * branch"). NULL on failure. */
tg_graph *tg__fgraph_trace(tg_graph *parent, const char *name, const char *what,
                           tg_trace_fn fn, void *user, int n_params,
                           const tg_meta *params, int n_results);
/* drops the building state (parent, outer values) once the control node
 * took the captures as inputs */
void tg__fgraph_seal(tg_graph *body);
/* the value of g standing for t: t itself when symbolic in g, a capture
 * when t is a value of an enclosing graph g is a body of, the variable an
 * enclosing graph made of concrete t, else a constant; -1 on failure */
int tg__graph_input_value(tg_graph *g, tg_tensor *t);
/* is a an enclosing graph of body b (while b is being built)? */
bool tg__graph_encloses(const tg_graph *a, const tg_graph *b);
/* Replays body's ops on in (params then captures) with the op functions,
 * appending to the current graph or running eagerly on the tape; writes
 * the body's results (new references, in the current scope) to out. */
tg_status tg__fgraph_call(const tg_graph *body, tg_tensor *const *in, tg_tensor **out);
/* Runs body on concrete in (params then captures) through its cached
 * session; out receives owned references (no scope) */
tg_status tg__fgraph_run(tg_graph *body, tg_tensor *const *in, tg_tensor **out);
/* the body graph of a control node's attribute list named `name`, or NULL */
tg_graph *tg__attrs_graph(const tg_attr *a, int n, const char *name);
void tg__fgraph_free(tg_graph *g);
/* called by tg__graph_release when only the body's own runner holds it */
void tg__fgraph_drop_session(tg_graph *g);

/* ---- state updated by ops (assign.c) -------------------------------------------- */
/* makes concrete t a variable of g by reference (named base, base_1, ...)
 * unless it is one; an error naming fn when g uses t as a constant */
tg_status tg__graph_state_variable(tg_graph *g, tg_tensor *t, const char *base,
                                   const char *fn);
/* y again (a view) with control edges on the update nodes: whatever
 * reads the result runs the updates, as eager code updates when it
 * computes y. NULL on failure. */
tg_tensor *tg__graph_after_updates(tg_tensor *y, int n, tg_tensor *const *updates);

/* ---- random ops (random.c) ------------------------------------------------------ */
/* the value of gen's state in g: a variable holding the generator's state
 * tensor by reference, made on first use; -1 with an error naming fn */
int tg__graph_random_state(tg_graph *g, tg_generator *gen, const char *fn);
/* a bool mask shaped like symbolic x, true with probability p, drawn from
 * gen when the graph runs (a bernoulli node) */
tg_tensor *tg__graph_bernoulli_like(tg_tensor *x, tg_generator *gen, double p);

/* ---- the frame of the symbolic autodiff passes (pass.c) -------------------- */
typedef struct tg_gpass {
    tg_graph *g;
    int n_nodes, n_values; /* the graph before the pass: what it visits */
    bool *mark;            /* per value: on the pass's path */
    tg_tensor **val;       /* per value: the pass's tensor (owned; released after) */
} tg_gpass;

typedef struct tg_gpass_spec {
    const char *fn;                         /* public name, for errors */
    int n_first;
    tg_tensor *const *first;
    const char *first_what;                 /* "a y", "an x" */
    int n_second;
    tg_tensor *const *second;
    const char *second_what;
    /* optional check of first[i] (value id v) */
    tg_status (*check_first)(const tg_graph *g, int i, int v, void *user);
    /* the pass: fills out[] (owned references) from the resolved ids */
    tg_status (*run)(tg_gpass *p, const int *first_ids, const int *second_ids,
                     tg_tensor **out, void *user);
    void *user;
} tg_gpass_spec;

/* What a pass reads of an op node, copied out of the graph. A rule run on
 * a node appends nodes and values, and g->nodes / g->values then move
 * (realloc): a pointer into them kept across a rule, or across adding a
 * gradient, reads freed memory. (The node's own in/out/name/attrs
 * allocations never move.) */
typedef struct tg_gop {
    const tg_op_def *op;
    const char *name;
    const tg_attr *attrs;
    const void *attr; /* the op's decoded struct */
    int n_attrs, n_in, n_out;
    int in[TG_MAX_OP_INPUTS];   /* value ids */
    int out[TG_MAX_OP_OUTPUTS]; /* value ids */
    bool no_grad;               /* tg_gnode.no_grad */
} tg_gop;
/* false for nodes that are not op applications (sources) */
bool tg__gpass_op(const tg_graph *g, int id, tg_gop *n);

/* resolves and checks the lists, runs the pass in g's scope with the
 * caller's scopes hidden; out[0..n_out) are published on success, NULL
 * on failure */
tg_status tg__graph_pass(tg_graph *g, const tg_gpass_spec *sp, int n_out, tg_tensor **out);
/* a tensor made inside the graph may still be concrete (a rule returning
 * zeros, a caller's seed or tangent): a constant of g then; consumes t */
tg_tensor *tg__gpass_symbolic(tg_graph *g, tg_tensor *t);
/* val[v] += t (symbolic; gradients or tangents that meet add up); consumes t */
tg_status tg__gpass_accumulate(tg_gpass *p, int v, tg_tensor *t);

#endif
