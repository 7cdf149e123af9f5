/* The ONNX importer's shared state: the loaded model (values, nodes in a
 * topological order, when each value is last read) that load.c fills and
 * build.c and run.c read, and the built network. Internal to src/onnx. */
#ifndef TG_ONNX_IMPORT_H
#define TG_ONNX_IMPORT_H

#include "onnx/ops.h"
#include "util/hmap.h"

/* SRC_OUTER: a subgraph's value of an enclosing graph (outer scope) */
typedef enum { SRC_INPUT, SRC_INIT, SRC_NODE, SRC_OUTER } src_kind;

typedef struct mvalue { /* a named value of the ONNX graph */
    const char *name;
    src_kind kind;
    int index; /* input, initializer, node or outer index */
    int out;   /* SRC_NODE: which output */
} mvalue;

typedef struct mnode {
    const onnx_node *node;
    const onnx_op_entry *entry;
    int version;
    int *in;  /* value ids, -1 for "" */
    int *out; /* value ids, -1 for "" */
    /* control flow (If, Loop, Scan): the graphs of its graph attributes,
     * loaded as models of their own (subgraph.c), and the values of this
     * model they read from the enclosing scope: implicit inputs, which
     * order the node after their producers and keep them alive */
    struct tg_onnx_model **subs;
    const char **sub_names; /* the attributes' names */
    int n_subs;
    int *implicit;
    int n_implicit;
} mnode;

/* what a node reads: its inputs, then its implicit inputs */
static inline int mnode_n_reads(const mnode *mn)
{
    return (int)mn->node->n_input + mn->n_implicit;
}
static inline int mnode_read(const mnode *mn, int j)
{
    int n = (int)mn->node->n_input;
    return j < n ? mn->in[j] : mn->implicit[j - n];
}

struct tg_onnx_model {
    onnx_model *pm;         /* the parsed file; NULL for a subgraph */
    const onnx_graph *graph; /* pm's graph, or the subgraph */
    /* a subgraph's enclosing model and the names it reads from there
     * (values of kind SRC_OUTER), with their value ids in the parent */
    const struct tg_onnx_model *parent;
    const char **outer_names;
    int *outer_vid;
    int n_outer, cap_values;
    int64_t opset; /* the default domain's; 0 when only ai.onnx.preview.training is imported */
    int64_t training_opset; /* ai.onnx.preview.training's version, 0 when not imported */
    int n_inputs, n_outputs, n_inits, n_nodes, n_values;
    tg_onnx_value_info *inputs, *outputs;
    const onnx_value_info **input_vi;  /* the model's input entries */
    const char **init_names;
    tg_tensor **inits;
    mnode *nodes;  /* in model order */
    int *order;    /* a topological order of nodes */
    mvalue *values;
    int *output_vid;
    int *last_use; /* per value: position in order of its last consumer */
    tg_hmap names; /* value name -> value id */
    /* the element types of sequence and optional inputs and outputs,
     * decoded at load (their dim_param strings are read from there) */
    onnx_type **types;
    int n_types, cap_types;
};

/* inputs and outputs as the API sees them: a sequence S as S[0], S[1],
 * ..., an optional without a value not at all */
struct tg_onnx_net {
    bool graph_mode;
    int n_inputs, n_inits, n_outputs, cap_inputs, cap_outputs;
    tg_tensor **inputs, **inits, **outputs;
    char **input_names, **output_names; /* owned */
};

/* ---- subgraphs (subgraph.c) ---------------------------------------------------------- */
/* loads the graph attributes of node i of m (recursively) and links the
 * node's implicit inputs */
tg_status onnx_load_subgraphs(tg_onnx_model *m, int i);
/* the value id of `name` for a subgraph m reading it from its enclosing
 * scope: found in the parent (which may itself read it from further out),
 * added to m as an SRC_OUTER value; -1 with an error when no enclosing
 * graph defines it */
int onnx_outer_value(tg_onnx_model *m, const char *name);
/* the domain of ONNX's optimizer ops (Adagrad, Adam, Momentum: ops_training.c) */
#define ONNX_TRAINING_DOMAIN "ai.onnx.preview.training"
const onnx_op_entry *onnx_training_op_lookup(const char *op_type);
extern const onnx_op_entry onnx_ops_training[];

/* the checks of a model or subgraph after its values are known (load.c) */
tg_onnx_model *onnx_load_graph(onnx_model *pm, const onnx_graph *g,
                               const tg_onnx_model *parent);
/* adds a value named `name` (load.c): TG_ERR_IO when defined twice */
tg_status onnx_add_value(tg_onnx_model *m, const char *name, mvalue v, const char *what);

static inline const char *nz(const char *s) { return s ? s : ""; }

/* the product of the non-zero dims is at most ONNX_IMPORT_MAX_ELEMENTS:
 * what a tensor of this shape would hold if its empty dims were not empty
 * (reductions over them produce it); negative dims fail */
bool onnx_extent_ok(int ndim, const int64_t *shape);

/* fold_bn.c: per node (model order), the BatchNormalization node whose
 * running statistics can be folded into that Conv (the Conv's only
 * reader, inference form), else -1; NULL when out of memory */
int *onnx_bn_fold_plan(const tg_onnx_model *m);
/* W' and B' (new references) of the Conv with the BN bn folded in, from
 * in = {W, B or NULL, scale, beta, mean, var}, all known values;
 * TG_ERR_UNSUPPORTED (error cleared) when their dtypes or sizes do not
 * fit, and the two nodes are then built as they are */
tg_status onnx_bn_fold(const onnx_node *bn, tg_tensor *const in[6], tg_tensor **w_out,
                       tg_tensor **b_out);

/* fuse_gelu.c: per node (model order), for the last Mul of an exact GELU
 * written as Div(x, c_div), Erf, Add(c_add), Mul(x, .), Mul(., c_half)
 * (intermediates read once, none a model output), the value ids it
 * reads; x is -1 for every other node. keep[] is set for x, c_div and
 * c_add: they must stay alive until that Mul. The constants are checked when the walk gets
 * there. NULL when out of memory. */
typedef struct onnx_gelu_tail {
    int x, c_div, c_add, c_half;
} onnx_gelu_tail;
onnx_gelu_tail *onnx_gelu_plan(const tg_onnx_model *m, bool *keep);

#endif
