/* ONNX files as C structs: the subset of onnx.proto that tensorgraph reads
 * and writes (models, graphs, nodes, attributes, tensors, value infos), a
 * parser that treats its input as hostile, a serializer (both driven by
 * the field tables of proto_fields.c: a field added to a struct here is
 * one row there), and conversion between TensorProto and tg_tensor
 * (tensor.c). Knows nothing about ops or the IR.
 *
 * Ownership: everything reachable from an onnx_model is malloc'd and owned
 * by it; onnx_model_free releases it all. Code that builds or edits a
 * model by hand allocates with malloc too (arrays may be any size; the
 * parser's growth policy is not assumed anywhere else).
 *
 * Fields outside the subset (doc strings, metadata_props, functions,
 * sparse tensors, non-tensor types, ...) are kept per message as raw
 * protobuf bytes in `unknown` and written back unchanged after the known
 * fields, so parse -> serialize loses nothing.
 *
 * Optional scalars: the serializer writes a scalar when it is non-zero or
 * its has_ flag is set (the parser sets has_ for every scalar present in
 * the input, so an explicit 0 survives a round trip). Strings are NULL
 * when absent; bytes fields have data == NULL when absent. */
#ifndef TG_ONNX_PROTO_H
#define TG_ONNX_PROTO_H

#include "tg/tensor.h"

/* TensorProto.DataType */
enum {
    ONNX_UNDEFINED = 0,
    ONNX_FLOAT = 1,
    ONNX_UINT8 = 2,
    ONNX_INT8 = 3,
    ONNX_UINT16 = 4,
    ONNX_INT16 = 5,
    ONNX_INT32 = 6,
    ONNX_INT64 = 7,
    ONNX_STRING = 8,
    ONNX_BOOL = 9,
    ONNX_FLOAT16 = 10,
    ONNX_DOUBLE = 11,
    ONNX_UINT32 = 12,
    ONNX_UINT64 = 13,
    ONNX_COMPLEX64 = 14,
    ONNX_COMPLEX128 = 15,
    ONNX_BFLOAT16 = 16
};

/* AttributeProto.AttributeType */
enum {
    ONNX_ATTR_UNDEFINED = 0,
    ONNX_ATTR_FLOAT = 1,
    ONNX_ATTR_INT = 2,
    ONNX_ATTR_STRING = 3,
    ONNX_ATTR_TENSOR = 4,
    ONNX_ATTR_GRAPH = 5,
    ONNX_ATTR_FLOATS = 6,
    ONNX_ATTR_INTS = 7,
    ONNX_ATTR_STRINGS = 8,
    ONNX_ATTR_TENSORS = 9,
    ONNX_ATTR_GRAPHS = 10,
    ONNX_ATTR_SPARSE_TENSOR = 11,
    ONNX_ATTR_SPARSE_TENSORS = 12,
    ONNX_ATTR_TYPE_PROTO = 13,
    ONNX_ATTR_TYPE_PROTOS = 14
};

enum { ONNX_DATA_DEFAULT = 0, ONNX_DATA_EXTERNAL = 1 }; /* data_location */
enum { ONNX_DIM_NONE = 0, ONNX_DIM_VALUE = 1, ONNX_DIM_PARAM = 2 };

/* nested messages deeper than this are rejected (a subgraph costs three
 * levels: graph -> node -> attribute -> graph) */
#define ONNX_MAX_DEPTH 100
/* what the parser may allocate for len bytes of input: real models need
 * a few times their size at most (their bulk is tensor data, copied
 * once); 64x covers models made only of tiny nodes and attributes */
#define ONNX_PARSE_BUDGET(len) (((size_t)16 << 20) + (size_t)64 * (len))
/* the most elements a tensor may have (and what a protobuf can hold) */
#define ONNX_MAX_ELEMENTS ((int64_t)1 << 31)

/* bytes with a length; data is NULL when the field is absent. Parsed
 * bytes fields have an extra NUL after len bytes (not `unknown`). */
typedef struct onnx_bytes {
    uint8_t *data;
    size_t len;
} onnx_bytes;

typedef struct onnx_tensor {           /* TensorProto */
    char *name;                        /* 8 */
    int64_t *dims;                     /* 1 */
    size_t n_dims;
    int32_t data_type;                 /* 2: ONNX_FLOAT, ... */
    bool has_data_type;
    onnx_bytes raw_data;               /* 9: little-endian, C order */
    float *float_data;                 /* 4 */
    size_t n_float_data;
    int32_t *int32_data;               /* 5: also UINT8, BOOL, INT8, ... */
    size_t n_int32_data;
    int64_t *int64_data;               /* 7 */
    size_t n_int64_data;
    double *double_data;               /* 10 */
    size_t n_double_data;
    int32_t data_location;             /* 14 */
    bool has_data_location;
    onnx_bytes unknown;
} onnx_tensor;

typedef struct onnx_dim {              /* TensorShapeProto.Dimension */
    int kind;                          /* ONNX_DIM_NONE/VALUE/PARAM */
    int64_t value;                     /* 1: dim_value */
    char *param;                       /* 2: dim_param */
    onnx_bytes unknown;
} onnx_dim;

typedef struct onnx_type {             /* TypeProto */
    /* tensor_type (1); false for other kinds (sequence, map, ...), which
     * stay in `unknown` */
    bool has_tensor_type;
    int32_t elem_type;                 /* Tensor.elem_type (1) */
    bool has_elem_type;
    bool has_shape;                    /* Tensor.shape (2); false: any rank */
    onnx_dim *dims;                    /* TensorShapeProto.dim (1) */
    size_t n_dims;
    onnx_bytes unknown;                /* of TypeProto */
    onnx_bytes tensor_unknown;         /* of TypeProto.Tensor */
    onnx_bytes shape_unknown;          /* of TensorShapeProto */
} onnx_type;

typedef struct onnx_value_info {       /* ValueInfoProto */
    char *name;                        /* 1 */
    bool has_type;                     /* 2 */
    onnx_type type;
    onnx_bytes unknown;
} onnx_value_info;

struct onnx_graph;

typedef struct onnx_attribute {        /* AttributeProto */
    char *name;                        /* 1 */
    int32_t type;                      /* 20: ONNX_ATTR_* */
    bool has_type, has_f, has_i;
    float f;                           /* 2 */
    int64_t i;                         /* 3 */
    onnx_bytes s;                      /* 4 */
    onnx_tensor *t;                    /* 5 */
    struct onnx_graph *g;              /* 6 */
    float *floats;                     /* 7 */
    size_t n_floats;
    int64_t *ints;                     /* 8 */
    size_t n_ints;
    onnx_bytes *strings;               /* 9 */
    size_t n_strings;
    onnx_tensor *tensors;              /* 10 */
    size_t n_tensors;
    struct onnx_graph *graphs;         /* 11 */
    size_t n_graphs;
    onnx_bytes unknown;
} onnx_attribute;

typedef struct onnx_node {             /* NodeProto */
    char **input;                      /* 1: "" marks an omitted input */
    size_t n_input;
    char **output;                     /* 2 */
    size_t n_output;
    char *name;                        /* 3 */
    char *op_type;                     /* 4 */
    char *domain;                      /* 7: NULL or "" is ai.onnx */
    onnx_attribute *attribute;         /* 5 */
    size_t n_attribute;
    onnx_bytes unknown;
} onnx_node;

typedef struct onnx_graph {            /* GraphProto */
    char *name;                        /* 2 */
    onnx_node *node;                   /* 1 */
    size_t n_node;
    onnx_tensor *initializer;          /* 5 */
    size_t n_initializer;
    onnx_value_info *input;            /* 11 */
    size_t n_input;
    onnx_value_info *output;           /* 12 */
    size_t n_output;
    onnx_value_info *value_info;       /* 13 */
    size_t n_value_info;
    onnx_bytes unknown;
} onnx_graph;

typedef struct onnx_opset {            /* OperatorSetIdProto */
    char *domain;                      /* 1: NULL or "" is ai.onnx */
    int64_t version;                   /* 2 */
    bool has_version;
    onnx_bytes unknown;
} onnx_opset;

typedef struct onnx_model {            /* ModelProto */
    int64_t ir_version;                /* 1 */
    bool has_ir_version;
    onnx_opset *opset_import;          /* 8 */
    size_t n_opset_import;
    char *producer_name;               /* 2 */
    char *producer_version;            /* 3 */
    onnx_graph *graph;                 /* 7 */
    onnx_bytes unknown;
} onnx_model;

/* ---- parsing and serializing ---------------------------------------------
 * Malformed input is TG_ERR_IO naming the field path (e.g.
 * "graph.node[3].attribute[0].t.dims") and the byte offset. The parser
 * checks the wire format and the shape of the messages only; tensor
 * contents are checked when converted (onnx_tensor_to_tg). */
tg_status onnx_model_parse(const void *data, size_t len, onnx_model **out);
tg_status onnx_model_load_file(const char *path, onnx_model **out);
/* *bytes is malloc'd (caller frees); fails with TG_ERR_ARG on a model
 * that cannot be written (nesting too deep, over 2 GiB) */
tg_status onnx_model_serialize(const onnx_model *m, uint8_t **bytes,
                               size_t *len);
tg_status onnx_model_save_file(const onnx_model *m, const char *path);
void onnx_model_free(onnx_model *m); /* NULL is ignored */

/* release what the struct owns (not the struct) and zero it */
void onnx_tensor_clear(onnx_tensor *t);
void onnx_graph_clear(onnx_graph *g);

/* ---- tensors ---------------------------------------------------------------
 * Supported: FLOAT, DOUBLE, INT32, INT64, UINT8, BOOL, from raw_data
 * (little-endian) or the typed field (float_data, double_data, int32_data
 * for INT32/UINT8/BOOL, int64_data). Other types are TG_ERR_UNSUPPORTED
 * naming the type; dims that are negative, give more than
 * ONNX_MAX_ELEMENTS, or disagree with the data present are TG_ERR_IO. */
const char *onnx_data_type_name(int32_t data_type); /* "FLOAT", "?" */
const char *onnx_attribute_type_name(int32_t type); /* "INTS", "?" */
/* the tg dtype for an ONNX data type; TG_ERR_UNSUPPORTED naming it */
tg_status onnx_dtype_to_tg(int32_t data_type, tg_dtype *out);
int32_t onnx_dtype_from_tg(tg_dtype dt);
/* a new tensor (a new reference, see tg/tensor.h) with tp's values */
tg_tensor *onnx_tensor_to_tg(const onnx_tensor *tp);
/* fills *out (overwritten, not freed first) with t's values: raw_data
 * when raw, else the typed field; name may be NULL */
tg_status onnx_tensor_from_tg(const tg_tensor *t, const char *name, bool raw,
                              onnx_tensor *out);

#endif
