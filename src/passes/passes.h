/* Graph optimization passes (see docs/PASSES.md): graph -> graph functions
 * in one registered list, each with a name and a level, run by the
 * session on the graph a plan executes (a pruned, shape-specialised copy
 * of the user's graph, never the user's graph itself). This header is the
 * passes' shared frame: the pass context, the rewriter every pass builds
 * its output graph with, and the facts about state (variables written by
 * assigns) that passes must respect. */
#ifndef TG_PASSES_H
#define TG_PASSES_H

#include "graph/graph_impl.h"
#include "tg/runtime.h"

/* ---- the context a pass runs in --------------------------------------------- */
/* A captured constant that a folded value was computed from: the plan is
 * stale once the tensor is written in place (its storage's version moves),
 * since constants are captured by reference. */
typedef struct tg_fold_guard {
    tg_tensor *t; /* a reference */
    uint64_t version;
} tg_fold_guard;

typedef struct tg_pass_ctx {
    tg_graph *g; /* the graph being optimised; a rewriting pass replaces it */
    /* what the run needs, as ids of g (kept up to date by tg__rw_commit):
     * fed placeholders (-1 when no longer read), fetched values, and target
     * nodes (-1 when the target's work vanished, e.g. a pure node merged) */
    int n_feeds, n_fetches, n_targets;
    int *feeds, *fetches, *targets;
    tg_pass_record *rec; /* the running pass's record: its counters */
    tg_fold_guard *guards;
    int n_guards, cap_guards;
    tg_hmap guarded; /* storage -> index in guards (pointer keys) */
    bool shapes_changed; /* the copy re-inferred shapes (dynamic dims fed) */
} tg_pass_ctx;

typedef struct tg_pass_def {
    const char *name;
    int level; /* the lowest optimization level that runs it */
    tg_status (*run)(tg_pass_ctx *c);
} tg_pass_def;

/* the registered list (manager.c), in the order passes run; a name may
 * appear more than once (dce runs after the passes that leave dead code) */
extern const tg_pass_def tg__pass_list[];
extern const int tg__pass_list_len;
/* is name a registered pass? */
bool tg__pass_known(const char *name);

/* adds n to the running pass's counter `what` ("removed", "folded", ...) */
void tg__pass_count(tg_pass_ctx *c, const char *what, int n);
tg_status tg__pass_add_guard(tg_pass_ctx *c, tg_tensor *t);

/* the passes */
tg_status tg__pass_dce(tg_pass_ctx *c);
tg_status tg__pass_fold(tg_pass_ctx *c);
tg_status tg__pass_cse(tg_pass_ctx *c);
tg_status tg__pass_simplify(tg_pass_ctx *c);
tg_status tg__pass_pool_grad(tg_pass_ctx *c);
tg_status tg__pass_pool_indices(tg_pass_ctx *c);
tg_status tg__pass_pool_values(tg_pass_ctx *c);
tg_status tg__pass_fuse_conv_pool(tg_pass_ctx *c);
tg_status tg__pass_fuse_pw_dw(tg_pass_ctx *c);
tg_status tg__pass_fuse_elementwise(tg_pass_ctx *c);
tg_status tg__pass_fuse_updates(tg_pass_ctx *c);
tg_status tg__pass_fuse_epilogue(tg_pass_ctx *c);

/* ---- running them (manager.c) -------------------------------------------------- */
typedef struct tg_passes_in {
    const tg_graph *g;       /* the user's graph */
    const bool *needed;      /* per node of g: the run needs it (pruned) */
    const bool *fed;         /* per value of g */
    const tg_meta *feed_meta; /* per value of g: the fed tensor's (fed values) */
    int n_feeds, n_fetches, n_targets;
    const int *feeds, *fetches, *targets; /* the plan key's (value, value, node ids) */
    int level;
    int n_disabled;
    char *const *disabled;
} tg_passes_in;

typedef struct tg_passes_out {
    tg_graph *g; /* a new reference */
    int *feeds, *fetches, *targets; /* malloc'd, parallel to the key's lists */
    tg_pass_record *records;        /* malloc'd */
    int n_records;
    tg_fold_guard *guards; /* malloc'd: references */
    int n_guards;
} tg_passes_out;

/* copies the needed part of in->g (fed values become placeholders of the
 * fed shapes, inference re-run) and runs the passes of in->level that are
 * not disabled, verifying the graph after each when tg__passes_verify() */
tg_status tg__passes_run(const tg_passes_in *in, tg_passes_out *out);
void tg__passes_out_free(tg_passes_out *o);
/* debug builds, and TG_VERIFY_PASSES=1 (the tests set it) */
bool tg__passes_verify(void);

/* ---- the rewriter: passes build their output graph node by node ---------------- */
typedef struct tg_rw {
    const tg_graph *src;
    tg_graph *dst;
    int *vmap; /* per src value: the dst value standing for it, or -1 */
    int *nmap; /* per src node: its copy, or -1 (dropped or replaced) */
    bool reinfer; /* copies re-run inference instead of copying metadata */
} tg_rw;

tg_status tg__rw_begin(tg_rw *r, const tg_graph *src);
/* copies node id of src (its inputs must be mapped); returns the dst id or
 * -1. Its control edges are added at commit. */
int tg__rw_copy(tg_rw *r, int id);
/* a new op node over dst values in[]; inference sets its outputs; the name
 * is made from base, unique in both graphs; returns the dst id or -1 */
int tg__rw_op(tg_rw *r, const tg_op_def *op, const char *base, const tg_attr *attrs,
              int n_attrs, int n_in, const int *in);
/* a new constant node holding t (consumes the reference); returns its value */
int tg__rw_constant(tg_rw *r, const char *base, tg_tensor *t);
/* a new placeholder (name made unique); returns its value */
int tg__rw_placeholder(tg_rw *r, const char *base, const tg_meta *m);
/* src value sv is now dst value dv; the node of sv, when dropped, maps to
 * dv's producer (for targets) */
void tg__rw_forward(tg_rw *r, int sv, int dv);
/* finishes dst (control edges mapped, assign ordering re-derived), maps
 * c's lists through the rewriter and replaces c->g; frees r */
tg_status tg__rw_commit(tg_rw *r, tg_pass_ctx *c);
void tg__rw_abort(tg_rw *r);
/* the end of every pass's rewrite: commits r when the pass succeeded (s)
 * and changed something, else drops the copy (r begun, or all zero);
 * returns the pass's status */
tg_status tg__rw_finish(tg_rw *r, tg_pass_ctx *c, tg_status s, bool changed);

/* a pass that replaces matched chains of nodes by one node each, after
 * planning them: plan[id] is TG_RW_KEEP for a node copied as it is,
 * TG_RW_FOLDED for one that a later node's replacement takes in, and any
 * other value for the last node of a chain, for which emit(rw, id, ctx)
 * adds the replacement (its inputs through rw->vmap), forwards the chain's
 * outputs to it (tg__rw_forward) and returns its dst id, or -1 on error.
 * Rewrites c's graph when n_chains > 0 and s is TG_OK, counts "fused";
 * returns the pass's status (s when it is not TG_OK) */
enum { TG_RW_KEEP = -1, TG_RW_FOLDED = -2 };
tg_status tg__rw_replace_chains(tg_pass_ctx *c, tg_status s, const int *plan, int n_chains,
                                int (*emit)(tg_rw *rw, int id, void *ctx), void *ctx);

/* the op's inference on g's stored input metadata; out gets n_out metas */
tg_status tg__infer_node(const tg_graph *g, const tg_gnode *n, tg_meta *out);

/* ---- state: what passes must not move across ------------------------------------ */
/* does node n write its input i in place (assign, assign_sub, fused updates)? */
bool tg__node_writes_input(const tg_gnode *n, int i);
/* Variable versions: for value v of g read by node `at`, the variable it
 * aliases (itself or through views) when some node of g writes that
 * variable, and how many writers come before `at` in g's order; -1 when v
 * aliases no written variable. Two reads see the same data only if they
 * have the same version. */
typedef struct tg_state {
    const tg_graph *g;
    int *var_of;  /* per value: the written variable node it aliases, or -1 */
    int *writers; /* per node (CSR by variable): ids of nodes writing it, sorted */
    int *wstart;  /* n_nodes + 1 */
} tg_state;
tg_status tg__state_init(tg_state *s, const tg_graph *g);
void tg__state_free(tg_state *s);
int tg__state_version(const tg_state *s, int v, int at);
/* the variable node value v aliases (itself, or through view ops' input
 * 0), or -1 */
int tg__variable_behind(const tg_graph *g, int v);

/* ---- small helpers ----------------------------------------------------------- */
/* is n a node of op? */
static inline bool tg__is_op(const tg_gnode *n, const tg_op_def *op)
{
    return n->kind == TG_GNODE_OP && n->op == op;
}
/* a node passes may replace or drop: a pure op with no control edges in
 * or out (control edges are the user's; ordering edges are re-derived) */
bool tg__pass_rewritable(const tg_graph *g, const int *ctrl_in, int id);
/* per node: how many other nodes have a control edge to it (malloc'd) */
int *tg__ctrl_in_counts(const tg_graph *g);
/* value v is a constant node's, small enough to read; its tensor or NULL */
tg_tensor *tg__const_tensor(const tg_graph *g, int v);
/* every element of constant t equals x (t is concrete) */
bool tg__tensor_all_equal(const tg_tensor *t, double x);

/* every variable node p (id pid) reads has, at pid, the version it would
 * have at node `at`: moving p's work to `at` changes nothing it sees */
bool tg__state_same_versions(const tg_state *st, const tg_gnode *p, int pid, int at);

/* ---- a fused node's program, for the fusion passes (fuse_program.c) --------------
 * The program's text ("op[attrs](%i, $k); ...", ops/fused.h) in buf, and
 * its leaves: the values it reads from outside, which become the fused
 * node's inputs, in the order of first use. */
typedef struct tg_fprog {
    char *text;
    size_t len, cap;
    int n_instr;
    int leaves[TG_MAX_OP_INPUTS];
    int n_leaves;
    bool backward; /* an instruction came from a backward node: so is the fused node */
} tg_fprog;
void tg__fprog_init(tg_fprog *p, char *buf, size_t cap);
/* the operand for value v read from outside: its leaf index (made a leaf
 * when it is not one yet), or -1 when the node's inputs are full */
int tg__fprog_leaf(tg_fprog *p, int v);
/* appends node n as the next instruction, args[i] the operand of its
 * input i (a leaf index, or -1 - k for instruction k's result); false
 * when the text is full */
bool tg__fprog_add(tg_fprog *p, const tg_gnode *n, const int *args);
/* the fused node: op over the leaves (mapped by r), attributes the
 * program and up to 3 extra ones, named "<base>/fused"; its dst id or -1 */
int tg__fprog_emit(tg_rw *r, const tg_fprog *p, const tg_op_def *op, const char *base,
                   const tg_attr *extra, int n_extra);

/* who uses what (uses.c), for the fusion passes */
typedef struct tg_uses {
    int *readers;  /* per value: data edges reading it (a node reading twice counts 2) */
    bool *fetched; /* per value */
    bool *target;  /* per node */
    int *ctrl_in;  /* per node: control edges to it */
} tg_uses;
tg_status tg__uses_init(tg_uses *u, const tg_pass_ctx *c);
void tg__uses_free(tg_uses *u);
/* value v is read by exactly one data edge, not fetched, and its node is
 * not a target: folding its producer into that reader hides nothing */
bool tg__uses_private(const tg_uses *u, const tg_graph *g, int v);

#endif
