/* The ONNX importer's op mappings: the per-node context, attribute and
 * constant-input readers that check types, and the per-family tables. */
#ifndef TG_ONNX_OPS_H
#define TG_ONNX_OPS_H

#include "core/status_impl.h"
#include "onnx/proto.h"
#include "onnx/values.h"
#include "tg/onnx.h"
#include "tg/tg.h"

#define ONNX_MIN_OPSET 7 /* the oldest opset whose op versions are imported */
#define ONNX_MAX_OPSET 17
/* inputs or outputs of one node (Concat, Sum, ...): detection heads concatenate
 * one tensor per anchor level and box (torchvision's SSD: 90) */
#define ONNX_MAX_IO 256
/* the most elements one imported value may have (1 GiB of float32): a
 * hostile model must not make the importer allocate without bound */
#define ONNX_IMPORT_MAX_ELEMENTS ((int64_t)1 << 28)
/* the most windows positions the composite pooling expands into slices */
#define ONNX_MAX_POOL_WINDOW 4096

struct mnode;

#define ONNX_RUN_TIME_DIM INT64_MIN /* in onnx_ictx.dims */
struct onnx_ictx;
/* input i's dims serve as its value where the import has none (a target
 * shape computed from a run-time shape): true then, and the value read
 * holds ONNX_RUN_TIME_DIM where a dim is known only when the graph runs */
bool onnx_use_dims(struct onnx_ictx *c, int i);
static inline int64_t onnx_clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

typedef struct onnx_ictx {
    const onnx_node *node;
    /* the node as loaded (its subgraphs), and the enclosing build's values
     * by value id (what the node's subgraphs read from outside) */
    const struct mnode *mnode;
    tg_tensor *const *scope_vals;
    const bool *scope_known;
    int version;          /* the op's version in effect (since_version) */
    bool graph_mode;      /* building into a graph (else eager) */
    bool folding;         /* all inputs known: running eagerly, no grad */
    bool sizing;          /* the dry run in a scratch graph that checks output
                           * sizes before an eager run (build.c) */
    int n_in;             /* node->n_input */
    tg_tensor *in[ONNX_MAX_IO]; /* NULL for omitted ("") inputs */
    bool known[ONNX_MAX_IO];    /* value fixed at import time (concrete) */
    /* concrete values where the import knows them: known values, and with
     * tg_onnx_opts.specialize the given graph inputs (for inputs that must
     * be constants, like Reshape's shape); NULL otherwise */
    tg_tensor *val[ONNX_MAX_IO];
    /* the ONNX element type an input is declared with (graph inputs,
     * initializers: FLOAT16 and BFLOAT16 are held as float32), 0 when the
     * importer does not know it (node outputs) */
    int32_t in_type[ONNX_MAX_IO];
    /* an int64 input computed from a shape with dims unknown until the
     * graph runs: its value with ONNX_RUN_TIME_DIM standing for each such
     * dim, which a Reshape target reads (tg_reshape's -1 there keeps the
     * input's unknown dim in place); NULL otherwise. A mapping may set
     * dims_out (Shape). */
    tg_tensor *dims[ONNX_MAX_IO];
    tg_tensor *dims_out[ONNX_MAX_IO];
    int n_out;                  /* node->n_output */
    /* set by the mapping: scope-owned results or inputs passed through */
    tg_tensor *out[ONNX_MAX_IO];
    bool out_known[ONNX_MAX_IO]; /* the mapping may mark outputs known */
    /* sequences and optionals (values.h; ops flagged ONNX_OP_SEQ): an
     * input that is a sequence (in[j] is NULL then) or an optional without
     * a value; a mapping may set a result to a sequence (the walk takes
     * it) or to none instead of out[j]. scope: the enclosing build's values
     * (the sequences a subgraph reads from outside). */
    const onnx_seq *seq_in[ONNX_MAX_IO];
    bool none_in[ONNX_MAX_IO];
    onnx_seq *seq_out[ONNX_MAX_IO];
    bool none_out[ONNX_MAX_IO];
    const onnx_values *scope;
    void *tmp[8];               /* freed after the mapping ran */
    int n_tmp;
    tg_generator *gen;          /* for training-mode Dropout */
} onnx_ictx;

typedef tg_status (*onnx_import_fn)(onnx_ictx *c);

/* the generator a random node draws from: c->gen, or for a node with a
 * seed attribute a new one seeded so (*own, which the caller frees after
 * drawing: a graph keeps the state its nodes draw from) */
tg_status onnx_node_gen(onnx_ictx *c, tg_generator **gen, tg_generator **own);

enum {
    ONNX_OP_NO_FOLD = 1, /* never evaluate at import time (random) */
    ONNX_OP_SEQ = 2,     /* takes sequences and optionals (seq_in, none_in) */
};

typedef struct onnx_op_entry {
    const char *op_type;
    /* since_version of every version up to opset 17, ascending, 0-ended */
    int8_t versions[8];
    int min_in, max_in, min_out, max_out;
    onnx_import_fn import;
    unsigned flags;
} onnx_op_entry;

/* NULL-op_type-terminated tables */
extern const onnx_op_entry onnx_ops_math[];
extern const onnx_op_entry onnx_ops_nn[];
extern const onnx_op_entry onnx_ops_shape[];
extern const onnx_op_entry onnx_ops_reduce[];
extern const onnx_op_entry onnx_ops_loss[];
extern const onnx_op_entry onnx_ops_composite[];
extern const onnx_op_entry onnx_ops_conv[];
extern const onnx_op_entry onnx_ops_mask[]; /* ops_mask.c: Trilu, IsNaN, IsInf */
extern const onnx_op_entry onnx_ops_layout[]; /* ops_layout.c: CastLike, Size, EyeLike, ... */
extern const onnx_op_entry onnx_ops_index[]; /* ops_index.c: ScatterElements, GatherND, OneHot */
extern const onnx_op_entry onnx_ops_control[]; /* ops_control.c: If, Loop, Scan */
extern const onnx_op_entry onnx_ops_rnn[];     /* ops_rnn.c: LSTM, GRU, RNN */
extern const onnx_op_entry onnx_ops_quant[];   /* ops_quant.c: (De)QuantizeLinear, QLinear*, *Integer */
extern const onnx_op_entry onnx_ops_misc[];    /* ops_misc.c: BitShift, Compress, NonZero, ... */
extern const onnx_op_entry onnx_ops_tfidf[];   /* ops_tfidf.c: TfIdfVectorizer */
extern const onnx_op_entry onnx_ops_seq[];     /* ops_seq.c: Sequence*, Optional* */

const onnx_op_entry *onnx_op_lookup(const char *op_type);
/* the op version in effect at `opset` (0 when the op does not exist yet) */
int onnx_op_version(const onnx_op_entry *e, int64_t opset);
/* the oldest version tensorgraph implements (the one in effect at opset 7) */
int onnx_op_min_version(const onnx_op_entry *e);
/* versions.c: node n at `version` with n_inputs inputs; older versions
 * take some inputs as attributes: *effective counts those given, for the
 * arity check. TG_ERR_IO when the node has inputs its version lacks. */
tg_status onnx_check_version_inputs(const onnx_node *n, int version, int n_inputs,
                                    int *effective);
/* the attributes older versions take in place of inputs, made known
 * constant inputs of c (scope-owned) before the mapping runs */
tg_status onnx_lift_attributes(onnx_ictx *c);
const onnx_attribute *onnx_attr_in(const onnx_node *n, const char *name);
/* the versions of an op mapped one to one onto an op definition whose
 * ONNX operator is at version `newest` */
void onnx_direct_versions(const char *op_type, int newest, int8_t versions[8]);

/* ---- errors: "ONNX node 'name' (Op): ..." ------------------------------------ */
tg_status onnx_err(const onnx_ictx *c, tg_status s, const char *fmt, ...)
    TG_PRINTF(3, 4);
const char *onnx_node_label(const onnx_node *n); /* name or "#output" */

/* ---- attributes: absent -> default; wrong type -> TG_ERR_IO ------------------- */
const onnx_attribute *onnx_attr(const onnx_ictx *c, const char *name);
tg_status oa_int(const onnx_ictx *c, const char *name, int64_t dflt, int64_t *out);
/* LpPool's and GlobalLpPool's p (ops_nn.c): a positive int */
tg_status onnx_lp_order(onnx_ictx *c, double *p);
tg_status oa_float(const onnx_ictx *c, const char *name, double dflt, double *out);
/* *v points into the node (not copied); *n = -1 when absent */
tg_status oa_ints(const onnx_ictx *c, const char *name, const int64_t **v, int *n);
tg_status oa_floats(const onnx_ictx *c, const char *name, const float **v, int *n);
/* NUL-terminated string or dflt */
tg_status oa_string(const onnx_ictx *c, const char *name, const char *dflt,
                    const char **out);
/* a tensor attribute converted (new reference, scope-owned), or NULL */
tg_status oa_tensor(const onnx_ictx *c, const char *name, tg_tensor **out);

/* ---- inputs ---------------------------------------------------------------------- */
/* input i, which must be present (TG_ERR_IO naming it otherwise) */
tg_tensor *oi_req(onnx_ictx *c, int i, const char *what);
/* the values of a known integer input as int64: *v malloc'd into c->tmp
 * (freed after the mapping); *n elements. Unknown at import time:
 * TG_ERR_UNSUPPORTED saying it must be a constant. */
tg_status oi_ints(onnx_ictx *c, int i, const char *what, int64_t **v, int64_t *n);
/* input i is absent, or its value is known when the model is imported */
bool onnx_known(const onnx_ictx *c, int i);
/* ONNX Slice (ops_slice.c), in ops_shape.c's table */
tg_status onnx_map_slice(onnx_ictx *c);
/* the same for a known floating-point input, as double */
tg_status oi_floats(onnx_ictx *c, int i, const char *what, double **v, int64_t *n);
/* a known one-element input as double */
tg_status oi_scalar(onnx_ictx *c, int i, const char *what, double *out);
void *onnx_tmp_alloc(onnx_ictx *c, size_t bytes);

/* ---- subgraphs (If, Loop, Scan) --------------------------------------------------------
 * Builds the subgraph of graph attribute `attr` on the formal inputs
 * (in eager mode: runs it), its outer-scope reads bound to the values of
 * the enclosing build. Writes its outputs (references in the current
 * scope) to out[0..*n_out), at most max_out. Inside a tg_cond/tg_while_loop
 * callback in graph mode this traces the body. */
tg_status onnx_build_body(const onnx_ictx *c, const char *attr, int n_formal,
                          tg_tensor *const *formal, int max_out, tg_tensor **out,
                          int *n_out);
/* the same, where formal inputs may be sequences (formal_seq[k], copied)
 * or none (formal_none[k]) (both NULL: all tensors) or constants the body
 * may fold (formal_known[k]: an unrolled loop's iteration number; may be
 * NULL), and results may be
 * sequences (seq_out[k], owned by the caller) or none (none_out[k]); out[k]
 * is NULL for those */
tg_status onnx_build_body_any(const onnx_ictx *c, const char *attr, int n_formal,
                              tg_tensor *const *formal, const onnx_seq *const *formal_seq,
                              const bool *formal_none, const bool *formal_known,
                              int max_out, tg_tensor **out,
                              onnx_seq **seq_out, bool *none_out, int *n_out);
/* whether subgraph `attr` declares an output that is a sequence or optional */
bool onnx_body_gives_seq(const onnx_ictx *c, const char *attr);
/* the number of inputs and outputs subgraph `attr` declares; -1 if absent */
int onnx_body_inputs(const onnx_ictx *c, const char *attr);
int onnx_body_outputs(const onnx_ictx *c, const char *attr);

/* Identity of a sequence or an optional (ops_seq.c): the value as it is */
tg_status onnx_identity_any(onnx_ictx *c);
/* a Loop whose loop-carried values include sequences or optionals,
 * unrolled while the model is built (ops_seq_loop.c) */
tg_status onnx_loop_unrolled(onnx_ictx *c, int n_carried, int n_scan);
/* TG_ERR_IO unless t is a bool tensor of one element, naming it `what`
 * (ops_control.c: If's and Loop's conditions) */
tg_status onnx_one_flag(const tg_tensor *t, const char *what);

/* ---- shared helpers ----------------------------------------------------------------- */
/* TG_ERR_UNSUPPORTED when a value of this shape would exceed
 * ONNX_IMPORT_MAX_ELEMENTS (shape values must be non-negative) */
tg_status onnx_check_numel(const onnx_ictx *c, int ndim, const int64_t *shape,
                           const char *what);
/* axis in [-r, r) normalised, else TG_ERR_IO naming the attribute */
tg_status onnx_axis(const onnx_ictx *c, int64_t axis, int rank, const char *what,
                    int *out);
/* computing helper constants (index lists, masks) inside a mapping:
 * runs ops eagerly without grad even in graph mode, until _end */
int onnx_eager_begin(void);
void onnx_eager_end(int token);
/* y itself when of dtype dt, else y cast to dt (scope-owned) */
tg_tensor *onnx_as(tg_tensor *y, tg_dtype dt);
/* ONNX data type -> dtype that holds it (widened), TG_ERR_UNSUPPORTED */
tg_status onnx_storage_dtype(int32_t onnx_type, tg_dtype *out);
/* TensorProto -> tensor, widening types tensorgraph lacks (see tg/onnx.h) */
tg_tensor *onnx_tensor_to_tg_wide(const onnx_tensor *tp);
/* rounds float values to the precision of FLOAT16 / BFLOAT16 (Cast) */
tg_tensor *onnx_round_to_half(tg_tensor *x, bool bfloat);

#endif
