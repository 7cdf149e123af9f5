/* The ONNX messages as data: one field table per protobuf message (field
 * number, name, kind, where it lives in the C struct of proto.h), read by
 * the one generic parser (proto_parse.c), emitter (proto_emit.c) and
 * clearer (proto_fields.c). Adding a field to the subset is one table row.
 * Internal to the file-format layer. */
#ifndef TG_ONNX_PROTO_FIELDS_H
#define TG_ONNX_PROTO_FIELDS_H

#include "onnx/proto.h"

#include <stddef.h>

typedef enum pb_kind {
    PB_INT64,  /* varint into int64_t */
    PB_INT32,  /* varint into int32_t (the low 32 bits; written sign-extended) */
    PB_FLOAT,  /* fixed32 into float */
    PB_DOUBLE, /* fixed64 into double */
    PB_STRING, /* LEN into a NUL-terminated char * (a NUL inside is an error) */
    PB_BYTES,  /* LEN into onnx_bytes */
    PB_MSG,    /* LEN: a nested message behind a pointer (allocated on first
                * sight, merged after); repeated: an array of structs */
    PB_INLINE, /* LEN: a nested message stored in this struct at `off`
                * (TypeProto's tensor_type shares the TypeProto's struct) */
    PB_KEEP,   /* a oneof member kept only as unknown bytes (see `clears`) */
} pb_kind;

enum {
    PB_REPEATED = 1, /* an array at off and a size_t count at `count` */
    PB_PACKED = 2,   /* repeated scalars are written packed (onnx.proto's
                      * [packed] fields; the parser takes both forms) */
};

struct pb_message;

typedef struct pb_field {
    uint32_t number;
    unsigned char kind, flags;
    const char *name; /* for error paths: "graph.node[3].attribute[0].t.dims" */
    size_t off;       /* the value or the array */
    size_t count;     /* PB_REPEATED: the size_t element count */
    /* offset + 1 of a bool set when the field is present (0: none). A
     * scalar is written when non-zero or present, an inline message when
     * present (or always, without a flag). */
    size_t has;
    const struct pb_message *msg; /* PB_MSG, PB_INLINE */
    /* a oneof member: parsing it stores this value in the message's case
     * field; it is written exactly when the case holds it (a NULL string
     * as "") */
    int oneof_case;
    uint32_t clears; /* a oneof sibling cleared when this field is parsed */
} pb_field;

typedef struct pb_message {
    const char *name; /* "TensorProto" */
    size_t size;      /* of the C struct: for PB_MSG allocation and arrays */
    const pb_field *fields;
    size_t n_fields;
    size_t unknown;     /* the onnx_bytes kept for other fields */
    bool unknown_first; /* written before the fields (TypeProto: its kept
                         * oneof members must come before tensor_type) */
    size_t oneof;       /* offset + 1 of the int holding the oneof case */
} pb_message;

extern const pb_message onnx_pb_model, onnx_pb_graph, onnx_pb_tensor, onnx_pb_type;

/* parses len bytes at data as one message of d into msg (zeroed by the
 * caller), with the model parser's checks (hostile input: lengths,
 * nesting, a memory budget); errors name the message. The caller clears
 * msg with onnx_pb_clear, on failure too. */
tg_status onnx_message_parse(const pb_message *d, const void *data, size_t len, void *msg);

/* the field numbered `number` of d, or NULL */
const pb_field *onnx_pb_field(const pb_message *d, uint32_t number);
/* the size of one element of fd's values (of its array when repeated) */
size_t onnx_pb_elem_size(const pb_field *fd);
/* releases what field fd of msg owns and zeroes it (and its presence) */
void onnx_pb_clear_field(const pb_field *fd, void *msg);
/* releases everything msg owns (its fields and kept unknown bytes) and
 * zeroes them; the struct itself is not freed */
void onnx_pb_clear(const pb_message *d, void *msg);

#define PB_AT(msg, off) ((void *)((char *)(msg) + (off)))


#endif
