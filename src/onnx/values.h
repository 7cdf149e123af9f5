/* The values of one build of an ONNX model, by value id (values.c): a
 * tensor, a sequence of tensors whose length is known when the model is
 * built (every sequence op then maps onto tensor ops at known positions),
 * or none (an optional without a value). See docs/ONNX.md, "Sequences
 * and optionals". Internal to src/onnx. */
#ifndef TG_ONNX_VALUES_H
#define TG_ONNX_VALUES_H

#include "tg/tg.h"

/* the most elements of one sequence value */
#define ONNX_MAX_SEQ 4096

typedef struct onnx_seq {
    int n, cap;
    tg_tensor **elem; /* references */
    tg_dtype dtype;   /* the elements' (an empty sequence has one too) */
    bool known;       /* every element is a value known at import time */
} onnx_seq;

/* an empty sequence of dtype dt; NULL (TG_ERR_NOMEM) when out of memory */
onnx_seq *onnx_seq_new(tg_dtype dt);
/* appends t (retained); TG_ERR_IO when its dtype is not the sequence's,
 * TG_ERR_UNSUPPORTED past ONNX_MAX_SEQ elements */
tg_status onnx_seq_push(onnx_seq *s, tg_tensor *t);
/* inserts t (retained) at pos in [0, n] */
tg_status onnx_seq_insert(onnx_seq *s, int pos, tg_tensor *t);
/* a new sequence holding s's elements (retained) */
onnx_seq *onnx_seq_copy(const onnx_seq *s);
void onnx_seq_free(onnx_seq *s); /* NULL is ignored */

typedef struct onnx_values {
    int n;
    tg_tensor **t; /* tensor values (references), NULL otherwise */
    bool *known;   /* the value is fixed at import time (a constant) */
    onnx_seq **seq; /* sequence values (owned), NULL otherwise */
    bool *none;    /* an optional without a value */
    /* int64 values computed from a shape with dims unknown until the graph
     * runs: the value with -1 standing for each such dim (build.c,
     * carry_dims), NULL otherwise */
    tg_tensor **dims;
} onnx_values;

/* n slots, all empty; TG_ERR_NOMEM */
tg_status onnx_values_init(onnx_values *vs, int n);
void onnx_values_free(onnx_values *vs);
/* whether slot v holds a value (a tensor, a sequence or none) */
bool onnx_values_has(const onnx_values *vs, int v);
/* empties slot v, releasing what it holds */
void onnx_values_drop(onnx_values *vs, int v);
/* slot v takes a reference to t / takes ownership of s / holds none */
void onnx_values_set_tensor(onnx_values *vs, int v, tg_tensor *t, bool known);
void onnx_values_set_seq(onnx_values *vs, int v, onnx_seq *s);
void onnx_values_set_none(onnx_values *vs, int v);

/* the tensors of a serialized SequenceProto, or with `optional` an
 * OptionalProto (onnx-data.proto): none (an optional without a value), a
 * sequence (is_seq; n elements of one dtype, new references) or one
 * tensor. Hostile bytes give TG_ERR_IO naming the field; sequences of
 * anything but tensors are TG_ERR_UNSUPPORTED. */
typedef struct onnx_value_data {
    bool none, is_seq;
    int n;
    tg_tensor **elem;
} onnx_value_data;
tg_status onnx_value_data_parse(const void *data, size_t len, bool optional,
                                onnx_value_data *out);
void onnx_value_data_clear(onnx_value_data *d);

#endif
