/* The field tables of the ONNX messages tensorgraph reads and writes
 * (onnx.proto, IR v8), in the order the emitter writes them, and the one
 * generic clear. See proto_fields.h. */
#include "onnx/proto_fields.h"

#include <stdlib.h>
#include <string.h>

/* a row: field number, name, kind, the struct member, then options */
#define ROW(T, num, nm, k, member, ...)                                      \
    {.number = num, .name = nm, .kind = k, .off = offsetof(T, member), __VA_ARGS__}
#define HAS(T, member) .has = offsetof(T, member) + 1
#define REP(T, n) .flags = PB_REPEATED, .count = offsetof(T, n)
#define PACKED(T, n) .flags = PB_REPEATED | PB_PACKED, .count = offsetof(T, n)
#define MESSAGE(T, nm, rows, ...)                                            \
    {.name = nm, .size = sizeof(T), .fields = rows,                          \
     .n_fields = sizeof rows / sizeof rows[0], .unknown = offsetof(T, unknown), \
     __VA_ARGS__}

static const pb_message dim_msg, shape_msg, tensor_type_msg,
    value_info_msg, attribute_msg, node_msg, opset_msg;

static const pb_field tensor_rows[] = {
    ROW(onnx_tensor, 1, "dims", PB_INT64, dims, REP(onnx_tensor, n_dims)),
    ROW(onnx_tensor, 2, "data_type", PB_INT32, data_type, HAS(onnx_tensor, has_data_type)),
    ROW(onnx_tensor, 4, "float_data", PB_FLOAT, float_data, PACKED(onnx_tensor, n_float_data)),
    ROW(onnx_tensor, 5, "int32_data", PB_INT32, int32_data, PACKED(onnx_tensor, n_int32_data)),
    ROW(onnx_tensor, 7, "int64_data", PB_INT64, int64_data, PACKED(onnx_tensor, n_int64_data)),
    ROW(onnx_tensor, 8, "name", PB_STRING, name),
    ROW(onnx_tensor, 9, "raw_data", PB_BYTES, raw_data),
    ROW(onnx_tensor, 10, "double_data", PB_DOUBLE, double_data,
        PACKED(onnx_tensor, n_double_data)),
    ROW(onnx_tensor, 14, "data_location", PB_INT32, data_location,
        HAS(onnx_tensor, has_data_location)),
};
const pb_message onnx_pb_tensor = MESSAGE(onnx_tensor, "TensorProto", tensor_rows);

/* TensorShapeProto.Dimension: the oneof value (dim_value | dim_param) */
static const pb_field dim_rows[] = {
    ROW(onnx_dim, 1, "dim_value", PB_INT64, value, .oneof_case = ONNX_DIM_VALUE, .clears = 2),
    ROW(onnx_dim, 2, "dim_param", PB_STRING, param, .oneof_case = ONNX_DIM_PARAM, .clears = 1),
};
static const pb_message dim_msg =
    MESSAGE(onnx_dim, "TensorShapeProto.Dimension", dim_rows,
            .oneof = offsetof(onnx_dim, kind) + 1);

/* TypeProto, TypeProto.Tensor and TensorShapeProto share struct onnx_type,
 * each with its own unknown bytes */
static const pb_field shape_rows[] = {
    ROW(onnx_type, 1, "dim", PB_MSG, dims, REP(onnx_type, n_dims), .msg = &dim_msg),
};
static const pb_message shape_msg = {
    .name = "TensorShapeProto", .size = sizeof(onnx_type), .fields = shape_rows,
    .n_fields = 1, .unknown = offsetof(onnx_type, shape_unknown)};

static const pb_field tensor_type_rows[] = {
    ROW(onnx_type, 1, "elem_type", PB_INT32, elem_type, HAS(onnx_type, has_elem_type)),
    {.number = 2, .name = "shape", .kind = PB_INLINE, .off = 0,
     HAS(onnx_type, has_shape), .msg = &shape_msg},
};
static const pb_message tensor_type_msg = {
    .name = "TypeProto.Tensor", .size = sizeof(onnx_type), .fields = tensor_type_rows,
    .n_fields = 2, .unknown = offsetof(onnx_type, tensor_unknown)};

/* the other members of TypeProto's oneof (sequence, map, optional,
 * sparse tensor) stay unknown bytes and replace tensor_type */
static const pb_field type_rows[] = {
    {.number = 1, .name = "tensor_type", .kind = PB_INLINE, .off = 0,
     HAS(onnx_type, has_tensor_type), .msg = &tensor_type_msg},
    {.number = 4, .kind = PB_KEEP, .clears = 1},
    {.number = 5, .kind = PB_KEEP, .clears = 1},
    {.number = 8, .kind = PB_KEEP, .clears = 1},
    {.number = 9, .kind = PB_KEEP, .clears = 1},
};
const pb_message onnx_pb_type = MESSAGE(onnx_type, "TypeProto", type_rows,
                                           .unknown_first = true);

static const pb_field value_info_rows[] = {
    ROW(onnx_value_info, 1, "name", PB_STRING, name),
    ROW(onnx_value_info, 2, "type", PB_INLINE, type, HAS(onnx_value_info, has_type),
        .msg = &onnx_pb_type),
};
static const pb_message value_info_msg =
    MESSAGE(onnx_value_info, "ValueInfoProto", value_info_rows);

static const pb_field attribute_rows[] = {
    ROW(onnx_attribute, 1, "name", PB_STRING, name),
    ROW(onnx_attribute, 2, "f", PB_FLOAT, f, HAS(onnx_attribute, has_f)),
    ROW(onnx_attribute, 3, "i", PB_INT64, i, HAS(onnx_attribute, has_i)),
    ROW(onnx_attribute, 4, "s", PB_BYTES, s),
    ROW(onnx_attribute, 5, "t", PB_MSG, t, .msg = &onnx_pb_tensor),
    ROW(onnx_attribute, 6, "g", PB_MSG, g, .msg = &onnx_pb_graph),
    ROW(onnx_attribute, 7, "floats", PB_FLOAT, floats, REP(onnx_attribute, n_floats)),
    ROW(onnx_attribute, 8, "ints", PB_INT64, ints, REP(onnx_attribute, n_ints)),
    ROW(onnx_attribute, 9, "strings", PB_BYTES, strings, REP(onnx_attribute, n_strings)),
    ROW(onnx_attribute, 10, "tensors", PB_MSG, tensors, REP(onnx_attribute, n_tensors),
        .msg = &onnx_pb_tensor),
    ROW(onnx_attribute, 11, "graphs", PB_MSG, graphs, REP(onnx_attribute, n_graphs),
        .msg = &onnx_pb_graph),
    ROW(onnx_attribute, 20, "type", PB_INT32, type, HAS(onnx_attribute, has_type)),
};
static const pb_message attribute_msg =
    MESSAGE(onnx_attribute, "AttributeProto", attribute_rows);

static const pb_field node_rows[] = {
    ROW(onnx_node, 1, "input", PB_STRING, input, REP(onnx_node, n_input)),
    ROW(onnx_node, 2, "output", PB_STRING, output, REP(onnx_node, n_output)),
    ROW(onnx_node, 3, "name", PB_STRING, name),
    ROW(onnx_node, 4, "op_type", PB_STRING, op_type),
    ROW(onnx_node, 5, "attribute", PB_MSG, attribute, REP(onnx_node, n_attribute),
        .msg = &attribute_msg),
    ROW(onnx_node, 7, "domain", PB_STRING, domain),
};
static const pb_message node_msg = MESSAGE(onnx_node, "NodeProto", node_rows);

static const pb_field graph_rows[] = {
    ROW(onnx_graph, 1, "node", PB_MSG, node, REP(onnx_graph, n_node), .msg = &node_msg),
    ROW(onnx_graph, 2, "name", PB_STRING, name),
    ROW(onnx_graph, 5, "initializer", PB_MSG, initializer, REP(onnx_graph, n_initializer),
        .msg = &onnx_pb_tensor),
    ROW(onnx_graph, 11, "input", PB_MSG, input, REP(onnx_graph, n_input),
        .msg = &value_info_msg),
    ROW(onnx_graph, 12, "output", PB_MSG, output, REP(onnx_graph, n_output),
        .msg = &value_info_msg),
    ROW(onnx_graph, 13, "value_info", PB_MSG, value_info, REP(onnx_graph, n_value_info),
        .msg = &value_info_msg),
};
const pb_message onnx_pb_graph = MESSAGE(onnx_graph, "GraphProto", graph_rows);

static const pb_field opset_rows[] = {
    ROW(onnx_opset, 1, "domain", PB_STRING, domain),
    ROW(onnx_opset, 2, "version", PB_INT64, version, HAS(onnx_opset, has_version)),
};
static const pb_message opset_msg = MESSAGE(onnx_opset, "OperatorSetIdProto", opset_rows);

static const pb_field model_rows[] = {
    ROW(onnx_model, 1, "ir_version", PB_INT64, ir_version, HAS(onnx_model, has_ir_version)),
    ROW(onnx_model, 2, "producer_name", PB_STRING, producer_name),
    ROW(onnx_model, 3, "producer_version", PB_STRING, producer_version),
    ROW(onnx_model, 7, "graph", PB_MSG, graph, .msg = &onnx_pb_graph),
    ROW(onnx_model, 8, "opset_import", PB_MSG, opset_import, REP(onnx_model, n_opset_import),
        .msg = &opset_msg),
};
const pb_message onnx_pb_model = MESSAGE(onnx_model, "ModelProto", model_rows);

/* ==== the generic clear ========================================================= */

const pb_field *onnx_pb_field(const pb_message *d, uint32_t number)
{
    for (size_t i = 0; i < d->n_fields; i++)
        if (d->fields[i].number == number)
            return &d->fields[i];
    return NULL;
}

size_t onnx_pb_elem_size(const pb_field *fd)
{
    switch (fd->kind) {
    case PB_INT64: return sizeof(int64_t);
    case PB_INT32: return sizeof(int32_t);
    case PB_FLOAT: return sizeof(float);
    case PB_DOUBLE: return sizeof(double);
    case PB_STRING: return sizeof(char *);
    case PB_BYTES: return sizeof(onnx_bytes);
    case PB_MSG: return fd->msg->size;
    default: return 0;
    }
}

static void bytes_clear(onnx_bytes *b)
{
    free(b->data);
    *b = (onnx_bytes){0};
}

/* element i of a repeated field's array, or the singular value itself */
static void clear_value(const pb_field *fd, void *v)
{
    switch (fd->kind) {
    case PB_STRING: free(*(char **)v); *(char **)v = NULL; break;
    case PB_BYTES: bytes_clear(v); break;
    case PB_MSG: onnx_pb_clear(fd->msg, v); break;
    default: break;
    }
}

void onnx_pb_clear_field(const pb_field *fd, void *msg)
{
    void *at = PB_AT(msg, fd->off);
    if (fd->has)
        *(bool *)PB_AT(msg, fd->has - 1) = false;
    if (fd->flags & PB_REPEATED) {
        size_t *n = PB_AT(msg, fd->count);
        size_t esize = onnx_pb_elem_size(fd);
        char *arr = *(void **)at;
        for (size_t i = 0; arr && i < *n; i++)
            clear_value(fd, arr + i * esize);
        free(arr);
        *(void **)at = NULL;
        *n = 0;
        return;
    }
    switch (fd->kind) {
    case PB_MSG:
        if (*(void **)at) {
            onnx_pb_clear(fd->msg, *(void **)at);
            free(*(void **)at);
            *(void **)at = NULL;
        }
        break;
    case PB_INLINE: onnx_pb_clear(fd->msg, at); break;
    case PB_STRING: case PB_BYTES: clear_value(fd, at); break;
    case PB_KEEP: break;
    default: memset(at, 0, onnx_pb_elem_size(fd));
    }
}

void onnx_pb_clear(const pb_message *d, void *msg)
{
    for (size_t i = 0; i < d->n_fields; i++)
        onnx_pb_clear_field(&d->fields[i], msg);
    bytes_clear(PB_AT(msg, d->unknown));
    if (d->oneof)
        *(int *)PB_AT(msg, d->oneof - 1) = 0;
}

/* ==== the public clears ============================================================ */

void onnx_tensor_clear(onnx_tensor *t)
{
    if (!t)
        return;
    onnx_pb_clear(&onnx_pb_tensor, t);
    memset(t, 0, sizeof *t);
}

void onnx_graph_clear(onnx_graph *g)
{
    if (!g)
        return;
    onnx_pb_clear(&onnx_pb_graph, g);
    memset(g, 0, sizeof *g);
}

void onnx_model_free(onnx_model *m)
{
    if (!m)
        return;
    onnx_pb_clear(&onnx_pb_model, m);
    free(m);
}
