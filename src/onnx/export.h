/* ONNX export's shared state and message builders (export.c), used by the
 * per-operator writers (export_ops.c). Internal to src/onnx. */
#ifndef TG_ONNX_EXPORT_H
#define TG_ONNX_EXPORT_H

#include "graph/graph_impl.h"
#include "onnx/ops.h"

#define ONNX_EXPORT_OPSET 17

/* one export in progress */
typedef struct ex {
    const tg_graph *g;
    onnx_graph *og;
    size_t cap_node, cap_init, cap_in; /* of og's arrays */
    char **vname;          /* per value: its ONNX name (owned) */
    int n_aux;             /* counter for helper names */
    /* names for constant tensors (module parameters) */
    int n_hints;
    const tg_tensor *const *hint_tensor;
    const char *const *hint_name;
    tg_status err;
    const char *prefix; /* a body's: its values are named "prefix/value" */
} ex;

/* the graph node being written, its values' ONNX names and metadata */
typedef struct exnode {
    const tg_gnode *n;
    const char *in[TG_MAX_OP_INPUTS];
    const char *out[TG_MAX_OP_OUTPUTS];
    const tg_meta *in_meta[TG_MAX_OP_INPUTS];
    const tg_meta *out_meta;
} exnode;

/* the first failure (TG_ERR_*, "tg_onnx_export: ..."): later calls do nothing */
tg_status onnx_ex_fail(ex *e, tg_status s, const char *fmt, ...) TG_PRINTF(3, 4);
/* a fresh name for a helper value: "<base>__<n>" (caller frees) */
char *onnx_ex_aux_name(ex *e, const char *base);
/* a new ONNX node of type op named name, or NULL (failure recorded) */
onnx_node *onnx_ex_node(ex *e, const char *op, const char *name);
void onnx_ex_io(ex *e, onnx_node *n, int n_in, const char *const *in, int n_out,
                const char *const *out);
/* attributes on n (NULL n: nothing) */
void onnx_ex_attr_int(ex *e, onnx_node *n, const char *name, int64_t v);
void onnx_ex_attr_float(ex *e, onnx_node *n, const char *name, double v);
void onnx_ex_attr_ints(ex *e, onnx_node *n, const char *name, int k, const int64_t *v);
void onnx_ex_attr_string(ex *e, onnx_node *n, const char *name, const char *v);
/* initializers: an int64 vector (or scalar) / a scalar of dt; returns the
 * new name (caller frees) */
char *onnx_ex_init_ints(ex *e, const char *base, int n, const int64_t *v, bool scalar);
char *onnx_ex_init_scalar(ex *e, const char *base, tg_dtype dt, double v);

/* node x's attributes (tg_attr_int / tg_attr_float over its attrs) */
int64_t onnx_ex_aint(const exnode *x, const char *name, int64_t dflt);
double onnx_ex_afloat(const exnode *x, const char *name, double dflt);
/* x's input i, or a Cast of it to dt when of another dtype (ONNX wants
 * equal types): a new name then, which the caller frees */
const char *onnx_ex_input_as(ex *e, const exnode *x, int i, tg_dtype dt);
/* writes x when its op is one export_composite.c writes as several ONNX
 * nodes (the status in e->err); false when it is not */
bool onnx_ex_composite(ex *e, const exnode *x);

/* writes graph node x as ONNX nodes through the ONNX operator its op
 * definition names (tg_op_def.onnx); TG_ERR_UNSUPPORTED when it has none
 * the exporter writes */
tg_status onnx_ex_op(ex *e, const exnode *x);

/* a value info's type: dtype and shape (unknown dims as symbols) */
void onnx_ex_set_type(onnx_value_info *vi, const tg_meta *m);
/* per node of g: whether the fetches need it (caller frees) */
bool *onnx_ex_needed(const tg_graph *g, int n, const int *fetch_vals);
/* names node id's outputs and writes it into e->og; a placeholder whose
 * value is named already is a body's input (see export_control.c) */
void onnx_ex_write_node(ex *e, int id, const bool *need, int n_fetches, const int *fv);
/* a graph attribute (it takes g; frees it when it cannot) */
void onnx_ex_attr_graph(ex *e, onnx_node *n, const char *name, onnx_graph *g);

/* ---- control flow (export_control.c): cond as If, while_loop as Loop ---- */
bool onnx_ex_is_control(const tg_op_def *op);
void onnx_ex_control(ex *e, const exnode *x);

/* ---- random nodes (export_random.c): the ONNX random ops --------------- */
bool onnx_ex_is_random(const tg_op_def *op);
void onnx_ex_random(ex *e, const exnode *x);

#endif
