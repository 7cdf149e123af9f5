/* onnx-data.proto's SequenceProto and OptionalProto (what onnx's test
 * cases and tools write for sequence and optional values): the tensors
 * they hold. The bytes are hostile: every field's wire type and length is
 * checked, the TensorProtos go through the model parser's checks, and the
 * elements of a sequence must share one dtype. */
#include "onnx/proto_fields.h"
#include "onnx/protobuf.h"
#include "onnx/ops.h"
#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SEQ_TENSOR = 1 };                         /* SequenceProto.DataType */
enum { OPT_UNDEFINED = 0, OPT_TENSOR = 1, OPT_SEQUENCE = 3 }; /* OptionalProto.DataType */

void onnx_value_data_clear(onnx_value_data *d)
{
    for (int i = 0; d && i < d->n; i++)
        tg_release(d->elem[i]);
    if (d) {
        free(d->elem);
        memset(d, 0, sizeof *d);
    }
}

/* one TensorProto's bytes as a new tensor */
static tg_tensor *tensor_of(const uint8_t *data, size_t len, const char *what)
{
    onnx_tensor tp;
    memset(&tp, 0, sizeof tp);
    tg_tensor *t = NULL;
    tg_scope_begin(); /* the caller owns the reference, in a scope or not */
    if (onnx_message_parse(&onnx_pb_tensor, data, len, &tp) == TG_OK)
        t = tg_retain(onnx_tensor_to_tg_wide(&tp));
    tg_scope_end();
    onnx_pb_clear(&onnx_pb_tensor, &tp);
    if (!t) {
        char msg[900];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        tg__error(tg_last_status() == TG_ERR_NOMEM ? TG_ERR_NOMEM : tg_last_status(),
                  "onnx: %s: %s", what, msg);
    }
    return t;
}

static tg_status add(onnx_value_data *d, int *cap, tg_tensor *t)
{
    if (d->n && tg_dtype_of(t) != tg_dtype_of(d->elem[0])) {
        tg_status s = tg__error(TG_ERR_IO, "onnx: sequence element %d is %s; element 0 is %s "
                                "(a sequence holds tensors of one dtype)", d->n,
                                tg_dtype_name(tg_dtype_of(t)), tg_dtype_name(tg_dtype_of(d->elem[0])));
        tg_release(t);
        return s;
    }
    if (d->n >= ONNX_MAX_SEQ) {
        tg_release(t);
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: a sequence may hold at most %d tensors",
                         ONNX_MAX_SEQ);
    }
    if (!TG_GROW(d->elem, *cap, d->n + 1)) {
        tg_release(t);
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    }
    d->elem[d->n++] = t;
    return TG_OK;
}

static tg_status field_error(const tg_pb_reader *r, const char *msg)
{
    return tg__error(TG_ERR_IO, "onnx: %s: %s (at byte %zu)", msg, r->err, r->err_at);
}

/* the elements of a SequenceProto of tensors */
static tg_status parse_sequence(const uint8_t *data, size_t len, onnx_value_data *d)
{
    tg_pb_reader r;
    tg_pb_field f;
    int st, cap = 0;
    int64_t elem_type = -1;
    tg_pb_reader_init(&r, data, data, len);
    while ((st = tg_pb_next(&r, &f)) > 0) {
        if (f.number == 2) {
            if (f.wire != TG_PB_VARINT)
                return tg__error(TG_ERR_IO, "onnx: SequenceProto.elem_type is not a varint");
            elem_type = (int64_t)f.u;
        } else if (f.number == 3) {
            if (f.wire != TG_PB_LEN)
                return tg__error(TG_ERR_IO, "onnx: SequenceProto.tensor_values is not a message");
            char what[64];
            snprintf(what, sizeof what, "SequenceProto.tensor_values[%d]", d->n);
            tg_tensor *t = tensor_of(f.data, f.len, what);
            tg_status s = t ? add(d, &cap, t) : tg_last_status();
            if (s != TG_OK)
                return s;
        } else if (f.number >= 4 && f.number <= 7) {
            return tg__error(TG_ERR_UNSUPPORTED, "onnx: a sequence of %s (tensorgraph reads "
                             "sequences of tensors)", f.number == 4 ? "sparse tensors"
                             : f.number == 5 ? "sequences" : f.number == 6 ? "maps"
                             : "optionals");
        }
    }
    if (st < 0)
        return field_error(&r, "SequenceProto is malformed");
    if (elem_type != -1 && elem_type != SEQ_TENSOR && (elem_type != 0 || d->n))
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: SequenceProto.elem_type %lld (tensorgraph "
                         "reads sequences of tensors, 1)", (long long)elem_type);
    d->is_seq = true;
    return TG_OK;
}

static tg_status parse_optional(const uint8_t *data, size_t len, onnx_value_data *d)
{
    tg_pb_reader r;
    tg_pb_field f;
    int st, cap = 0;
    int64_t elem_type = OPT_UNDEFINED;
    const uint8_t *tensor = NULL, *seq = NULL;
    size_t tensor_len = 0, seq_len = 0;
    tg_pb_reader_init(&r, data, data, len);
    while ((st = tg_pb_next(&r, &f)) > 0) {
        if (f.number == 2) {
            if (f.wire != TG_PB_VARINT)
                return tg__error(TG_ERR_IO, "onnx: OptionalProto.elem_type is not a varint");
            elem_type = (int64_t)f.u;
        } else if (f.number == 3 || f.number == 5) {
            if (f.wire != TG_PB_LEN)
                return tg__error(TG_ERR_IO, "onnx: OptionalProto.%s is not a message",
                                 f.number == 3 ? "tensor_value" : "sequence_value");
            if (f.number == 3) {
                tensor = f.data;
                tensor_len = f.len;
            } else {
                seq = f.data;
                seq_len = f.len;
            }
        } else if (f.number == 4 || f.number == 6 || f.number == 7) {
            return tg__error(TG_ERR_UNSUPPORTED, "onnx: an optional %s (tensorgraph reads "
                             "optional tensors and sequences of tensors)",
                             f.number == 4 ? "sparse tensor" : f.number == 6 ? "map"
                             : "optional");
        }
    }
    if (st < 0)
        return field_error(&r, "OptionalProto is malformed");
    if (elem_type == OPT_TENSOR && tensor) {
        tg_tensor *t = tensor_of(tensor, tensor_len, "OptionalProto.tensor_value");
        return t ? add(d, &cap, t) : tg_last_status();
    }
    if (elem_type == OPT_SEQUENCE && seq)
        return parse_sequence(seq, seq_len, d);
    if (elem_type == OPT_TENSOR || elem_type == OPT_SEQUENCE || tensor || seq)
        return tg__error(TG_ERR_IO, "onnx: OptionalProto.elem_type %lld does not match the "
                         "value it holds", (long long)elem_type);
    if (elem_type != OPT_UNDEFINED)
        return tg__error(TG_ERR_UNSUPPORTED, "onnx: OptionalProto.elem_type %lld (tensorgraph "
                         "reads optional tensors, 1, and sequences, 3)", (long long)elem_type);
    d->none = true;
    return TG_OK;
}

tg_status onnx_value_data_parse(const void *data, size_t len, bool optional,
                                onnx_value_data *out)
{
    if (!out || (!data && len))
        return tg__error(TG_ERR_ARG, "onnx_value_data_parse: NULL data or output");
    memset(out, 0, sizeof *out);
    const uint8_t *p = data ? data : (const uint8_t *)"";
    tg_status s = optional ? parse_optional(p, len, out) : parse_sequence(p, len, out);
    if (s != TG_OK)
        onnx_value_data_clear(out);
    return s;
}
