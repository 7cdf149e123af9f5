/* tensorgraph ONNX support: load an ONNX model (opsets 11 to 17), build it
 * with the ordinary op functions either into a static graph (when a graph
 * scope is open) or eagerly (with autograd), run it, and export graphs and
 * modules back to ONNX (opset 17). See docs/ONNX.md for the op list and
 * the semantics of each mapping. */
#ifndef TG_ONNX_H
#define TG_ONNX_H

#include "tg/graph.h"
#include "tg/io.h"
#include "tg/nn.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* ---- loading ------------------------------------------------------------------
 * A loaded model is parsed and checked: the default-domain opset is in
 * 7..17 (older models load when every op they use has the semantics of
 * opset 7; ops of the ai.onnx.preview.training domain, version 1, are
 * Adagrad, Adam and Momentum), node inputs refer to graph inputs, initializers or outputs of
 * earlier nodes (nodes may be listed in any order; a cycle is an error),
 * every output is produced once, and every op is one tensorgraph imports.
 * A model with unsupported ops fails with ONE TG_ERR_UNSUPPORTED error
 * listing each unsupported op type and the nodes that use it. Malformed
 * files and nonsense (dangling names, wrong arity, attributes of the wrong
 * type) are TG_ERR_IO with a message naming the node; nothing crashes.
 * The model owns its initializers as tensors; free it with tg_onnx_free
 * (nets built from it stay valid: they hold their own references). */
typedef struct tg_onnx_model tg_onnx_model;

tg_onnx_model *tg_onnx_load(const char *path);
tg_onnx_model *tg_onnx_load_bytes(const void *data, size_t len);
void tg_onnx_free(tg_onnx_model *m); /* NULL is ignored */

/* ---- inspection ------------------------------------------------------------ */
/* Types without a tensorgraph dtype are held in a wider one: INT8, INT16
 * and UINT16 as int32, UINT32 and UINT64 as int64, FLOAT16 and BFLOAT16
 * as float32 (`dtype` below; `onnx_type` is what the model says). */
/* what a graph input or output holds. A sequence input S is given as
 * the tensors named "S[0]", "S[1]", ... (none: the empty sequence), an
 * optional one is absent when not given; outputs come back the same way
 * (an optional without a value has no entry). See docs/ONNX.md,
 * "Sequences and optionals". */
typedef enum tg_onnx_kind {
    TG_ONNX_TENSOR = 0,
    TG_ONNX_SEQUENCE = 1,          /* of tensors */
    TG_ONNX_OPTIONAL = 2,          /* an optional tensor */
    TG_ONNX_OPTIONAL_SEQUENCE = 3  /* an optional sequence of tensors */
} tg_onnx_kind;

/* For sequences and optionals, onnx_type, dtype and shape are the
 * (element) tensor's. */
typedef struct tg_onnx_value_info {
    const char *name;
    int onnx_type;      /* TensorProto.DataType (1 FLOAT, 7 INT64, ...) */
    tg_dtype dtype;     /* how tensorgraph holds it */
    int ndim;           /* -1: the model does not give the rank */
    int64_t shape[TG_MAX_DIMS]; /* -1: a symbolic (dim_param) or unknown dim */
    const char *dim_param[TG_MAX_DIMS]; /* the symbol, or NULL */
    tg_onnx_kind kind;
} tg_onnx_value_info;

/* the default domain's opset; 0 when the model imports only
 * ai.onnx.preview.training */
int64_t tg_onnx_opset(const tg_onnx_model *m);
const char *tg_onnx_producer(const tg_onnx_model *m); /* "" when absent */
/* graph inputs that are not initializers, in model order */
int tg_onnx_num_inputs(const tg_onnx_model *m);
tg_status tg_onnx_input_info(const tg_onnx_model *m, int i,
                             tg_onnx_value_info *out);
int tg_onnx_num_outputs(const tg_onnx_model *m);
tg_status tg_onnx_output_info(const tg_onnx_model *m, int i,
                              tg_onnx_value_info *out);
int tg_onnx_num_initializers(const tg_onnx_model *m);
const char *tg_onnx_initializer_name(const tg_onnx_model *m, int i);
tg_tensor *tg_onnx_initializer(const tg_onnx_model *m, int i); /* borrowed */
/* elements of the floating-point initializers (the parameters) */
int64_t tg_onnx_num_parameters(const tg_onnx_model *m);
int tg_onnx_num_nodes(const tg_onnx_model *m);
const char *tg_onnx_node_op(const tg_onnx_model *m, int i);   /* "Conv" */
const char *tg_onnx_node_name(const tg_onnx_model *m, int i); /* may be "" */

/* ---- building -----------------------------------------------------------------
 * tg_onnx_build walks the nodes in a topological order and calls the
 * public op functions for each (composites where ONNX has no single
 * counterpart). ONE importer serves both modes:
 *  - graph mode, when a graph scope is open (tg_graph_begin): each graph
 *    input becomes a placeholder of that graph named after it, outputs are
 *    symbolic. Given input tensors (optional) fix symbolic dims and are
 *    checked; their values are not used. Symbolic dims neither given nor
 *    bound stay unknown (-1) in the placeholder: the net runs on any size.
 *  - eager mode otherwise: every graph input must be given, the outputs
 *    are computed at once, and autograd records them as usual.
 * Values computable at import time (initializers, Constant, Shape, and
 * nodes whose inputs are all such) are folded to constants; inputs that
 * must be constants (Reshape's shape, Slice's starts, ...) must be such
 * (or given inputs, with specialize).
 * Inputs are matched by name: a missing or unknown name, a wrong dtype or
 * a wrong shape is TG_ERR_ARG naming the input. */
typedef struct tg_onnx_opts {
    /* floating-point initializers become variables (graph mode) or leaves
     * requiring grad (eager mode), so gradients w.r.t. them can be taken;
     * they are then never folded. Otherwise they are constants. */
    bool trainable;
    /* given graph inputs also serve where an op needs a value at import
     * time (Reshape's shape, Slice's starts, Dropout's ratio, ...): the net
     * is then specialized to those values, which later runs must not
     * change. tg_onnx_run (and so `tg run`) builds this way. */
    bool specialize;
    /* values for symbolic dims (dim_param), by name */
    int n_dims;
    const char *const *dim_names;
    const int64_t *dim_values;
    /* NULL, or one entry per initializer (tg_onnx_initializer's order):
     * a tensor to use in its place, of its dtype and shape (a module's
     * parameter, a variable of the current graph), or NULL for the
     * model's own. A given one is never folded, so gradients reach it. */
    tg_tensor *const *initializers;
    /* by default a BatchNormalization in inference form whose input only
     * a Conv reads, with the Conv's weights and bias and the BN's scale,
     * bias and statistics all constants (not trainable, not given), is
     * folded into the Conv's weights and bias (in float64, rounded once):
     * the same function up to rounding, one node and one pass over the
     * activation less. true builds the two nodes as the model has them. */
    bool keep_batch_norm;
    /* the generator the random ops (RandomUniform, RandomNormal, their Like
     * forms, Bernoulli, Multinomial, training-mode Dropout) draw from and
     * advance, eagerly or, in a graph, at every run; a node with a seed
     * attribute draws from a generator of its own seeded so. NULL: one
     * seeded 0 for this build (so every build draws the same numbers). */
    tg_generator *generator;
} tg_onnx_opts;

typedef struct tg_onnx_net tg_onnx_net;

/* opts may be NULL (defaults: not trainable, no dims) */
tg_onnx_net *tg_onnx_build(const tg_onnx_model *m, int n_inputs,
                           const char *const *names,
                           tg_tensor *const *inputs, const tg_onnx_opts *opts);
void tg_onnx_net_free(tg_onnx_net *net); /* NULL is ignored */
/* the net's tensors are borrowed (valid until tg_onnx_net_free) */
bool tg_onnx_net_is_graph(const tg_onnx_net *net);
int tg_onnx_net_num_outputs(const tg_onnx_net *net);
const char *tg_onnx_net_output_name(const tg_onnx_net *net, int i);
/* symbolic in graph mode, except outputs known at import time (concrete) */
tg_tensor *tg_onnx_net_output(const tg_onnx_net *net, int i);
/* by model input order: the placeholder (graph) or the given tensor */
tg_tensor *tg_onnx_net_input(const tg_onnx_net *net, int i);
/* by model initializer order: the variable, the concrete constant, or the
 * eager leaf */
tg_tensor *tg_onnx_net_initializer(const tg_onnx_net *net, int i);

/* ---- running -------------------------------------------------------------------
 * Builds and runs the model once on named inputs, in graph mode (a fresh
 * graph and session) or eagerly. *outputs receives a new state dict with
 * the graph outputs keyed by their ONNX names. When grads is not NULL,
 * *grads receives the gradient of the sum of all floating-point outputs
 * with respect to every floating-point graph input and initializer, keyed
 * by their ONNX names (zeros where one has no influence), computed by
 * autograd (eager) or tg_graph_gradients (graph). Free the dicts. */
typedef enum tg_onnx_mode { TG_ONNX_EAGER = 0, TG_ONNX_GRAPH } tg_onnx_mode;
tg_status tg_onnx_run(const tg_onnx_model *m, tg_onnx_mode mode, int n_inputs,
                      const char *const *names, tg_tensor *const *inputs,
                      tg_state_dict **outputs, tg_state_dict **grads);

/* ---- export ----------------------------------------------------------------------
 * Writes the part of graph g that computes the fetches as an ONNX model
 * (opset 17): placeholders become graph inputs, variables and constants
 * initializers (their current values), ops ONNX nodes; fetches become the
 * outputs, named after their nodes. Ops without an ONNX mapping fail with
 * TG_ERR_UNSUPPORTED naming them. Covered: conv2d, max/avg/global pools,
 * batch_norm (eval), layer_norm, gemm, matmul, views (Reshape,
 * Transpose), slice, concat, pad, elementwise arithmetic and activations,
 * softmax, log_softmax, reductions, cast, where, comparisons. Unknown
 * dims (-1) are written as symbolic dims (dim_param): "batch" for a
 * leading dim, "dim_<d>" for dim d otherwise. */
tg_status tg_onnx_export(tg_graph *g, int n_fetches,
                         tg_tensor *const *fetches, const char *path);
/* traces m's forward (in eval mode; the mode is restored) on a float32
 * placeholder "input" of the given shape (-1 dims: symbolic, e.g. a
 * batch of any size) into a new graph and exports it with output "output" */
tg_status tg_onnx_export_module(tg_module *m, int ndim, const int64_t *shape,
                                const char *path);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
