/* The ONNX importer's shared state: the loaded model (values, nodes in a
 * topological order, when each value is last read) that load.c fills and
 * build.c and run.c read, and the built network. Internal to src/onnx. */
#ifndef TG_ONNX_IMPORT_H
#define TG_ONNX_IMPORT_H

#include "onnx/ops.h"
#include "util/hmap.h"

typedef enum { SRC_INPUT, SRC_INIT, SRC_NODE } src_kind;

typedef struct mvalue { /* a named value of the ONNX graph */
    const char *name;
    src_kind kind;
    int index; /* input, initializer or node index */
    int out;   /* SRC_NODE: which output */
} mvalue;

typedef struct mnode {
    const onnx_node *node;
    const onnx_op_entry *entry;
    int version;
    int *in;  /* value ids, -1 for "" */
    int *out; /* value ids, -1 for "" */
} mnode;

struct tg_onnx_model {
    onnx_model *pm;
    int64_t opset;
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
};

struct tg_onnx_net {
    bool graph_mode;
    int n_inputs, n_inits, n_outputs;
    tg_tensor **inputs, **inits, **outputs;
    const char **output_names;
};

static inline const char *nz(const char *s) { return s ? s : ""; }

/* the product of the non-zero dims is at most ONNX_IMPORT_MAX_ELEMENTS:
 * what a tensor of this shape would hold if its empty dims were not empty
 * (reductions over them produce it); negative dims fail */
bool onnx_extent_ok(int ndim, const int64_t *shape);

#endif
