/* Serializing ONNX files (see proto.h): one generic emitter driven by the
 * field tables of proto_fields.c, writing fields in table order and the
 * kept unknown bytes after them. Each nested message is run twice:
 * measuring (for its length prefix), then writing. */
#include "onnx/proto_fields.h"

#include "core/status_impl.h"
#include "io/atomic_file.h"
#include "onnx/protobuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void emit_message(tg_pb_writer *w, const pb_message *d, const void *msg,
                         int depth);

static void put_msg(tg_pb_writer *w, uint32_t field, const pb_message *d,
                    const void *msg, int depth)
{
    if (w->err)
        return;
    if (depth >= ONNX_MAX_DEPTH) {
        w->err = "messages nested deeper than the limit (ONNX_MAX_DEPTH)";
        return;
    }
    tg_pb_writer m = {.measure = true};
    emit_message(&m, d, msg, depth + 1);
    if (m.err) {
        w->err = m.err;
        return;
    }
    tg_pb_put_tag(w, field, TG_PB_LEN);
    tg_pb_put_varint(w, m.len);
    if (w->measure) {
        w->len += m.len;
        return;
    }
    size_t before = w->len;
    emit_message(w, d, msg, depth + 1);
    if (!w->err && w->len - before != m.len)
        w->err = "internal error: a message wrote other than its measured size";
}

static int wire_of(int kind)
{
    return kind == PB_FLOAT ? TG_PB_I32 : kind == PB_DOUBLE ? TG_PB_I64 : TG_PB_VARINT;
}

/* one scalar without its tag; int32 is written sign-extended, as protobuf does */
static void put_value(tg_pb_writer *w, int kind, const void *v)
{
    uint32_t u32;
    uint64_t u64;
    switch (kind) {
    case PB_INT64: tg_pb_put_varint(w, (uint64_t)*(const int64_t *)v); break;
    case PB_INT32: tg_pb_put_varint(w, (uint64_t)(int64_t)*(const int32_t *)v); break;
    case PB_FLOAT:
        memcpy(&u32, v, 4);
        tg_pb_put_fixed32(w, u32);
        break;
    default:
        memcpy(&u64, v, 8);
        tg_pb_put_fixed64(w, u64);
    }
}

static bool is_zero(int kind, const void *v)
{
    switch (kind) {
    case PB_INT64: return *(const int64_t *)v == 0;
    case PB_INT32: return *(const int32_t *)v == 0;
    case PB_FLOAT: return *(const float *)v == 0.0f;
    default: return *(const double *)v == 0.0;
    }
}

static void put_string(tg_pb_writer *w, uint32_t field, const char *s)
{
    tg_pb_put_bytes(w, field, s, strlen(s));
}

static void put_packed(tg_pb_writer *w, const pb_field *fd, const char *arr, size_t n)
{
    if (!n)
        return;
    size_t es = onnx_pb_elem_size(fd);
    tg_pb_writer m = {.measure = true};
    for (size_t i = 0; i < n; i++)
        put_value(&m, fd->kind, arr + i * es);
    tg_pb_put_tag(w, fd->number, TG_PB_LEN);
    tg_pb_put_varint(w, m.len);
    if (w->measure) {
        w->len += m.len;
        return;
    }
    for (size_t i = 0; i < n; i++)
        put_value(w, fd->kind, arr + i * es);
}

/* every element is written, absent strings and bytes as empty ones */
static void put_repeated(tg_pb_writer *w, const pb_field *fd, const void *msg, int depth)
{
    const char *arr = *(char *const *)PB_AT(msg, fd->off);
    size_t n = *(const size_t *)PB_AT(msg, fd->count);
    if (fd->flags & PB_PACKED) {
        put_packed(w, fd, arr, n);
        return;
    }
    size_t es = onnx_pb_elem_size(fd);
    for (size_t i = 0; i < n; i++) {
        const void *e = arr + i * es;
        if (fd->kind == PB_STRING) {
            const char *s = *(char *const *)e;
            put_string(w, fd->number, s ? s : "");
        } else if (fd->kind == PB_BYTES) {
            const onnx_bytes *b = e;
            tg_pb_put_bytes(w, fd->number, b->data ? b->data : (const uint8_t *)"", b->len);
        } else if (fd->kind == PB_MSG) {
            put_msg(w, fd->number, fd->msg, e, depth);
        } else {
            tg_pb_put_tag(w, fd->number, wire_of(fd->kind));
            put_value(w, fd->kind, e);
        }
    }
}

static void put_field(tg_pb_writer *w, const pb_message *d, const pb_field *fd,
                      const void *msg, int depth)
{
    if (fd->flags & PB_REPEATED) {
        put_repeated(w, fd, msg, depth);
        return;
    }
    const void *at = PB_AT(msg, fd->off);
    bool has = fd->has && *(const bool *)PB_AT(msg, fd->has - 1);
    bool forced = false; /* a oneof member that is set */
    if (fd->oneof_case) {
        if (*(const int *)PB_AT(msg, d->oneof - 1) != fd->oneof_case)
            return;
        forced = true;
    }
    switch (fd->kind) {
    case PB_STRING: {
        const char *s = *(char *const *)at;
        if (s || forced)
            put_string(w, fd->number, s ? s : "");
        break;
    }
    case PB_BYTES: {
        const onnx_bytes *b = at;
        if (b->data)
            tg_pb_put_bytes(w, fd->number, b->data, b->len);
        break;
    }
    case PB_MSG:
        if (*(void *const *)at)
            put_msg(w, fd->number, fd->msg, *(void *const *)at, depth);
        break;
    case PB_INLINE:
        if (!fd->has || has)
            put_msg(w, fd->number, fd->msg, at, depth);
        break;
    case PB_KEEP: break; /* in the unknown bytes */
    default:
        if (forced || has || !is_zero(fd->kind, at)) {
            tg_pb_put_tag(w, fd->number, wire_of(fd->kind));
            put_value(w, fd->kind, at);
        }
    }
}

static void put_unknown(tg_pb_writer *w, const pb_message *d, const void *msg)
{
    const onnx_bytes *u = PB_AT(msg, d->unknown);
    if (u->data)
        tg_pb_put_raw(w, u->data, u->len);
}

static void emit_message(tg_pb_writer *w, const pb_message *d, const void *msg,
                         int depth)
{
    if (d->unknown_first)
        put_unknown(w, d, msg);
    for (size_t i = 0; i < d->n_fields; i++)
        put_field(w, d, &d->fields[i], msg, depth);
    if (!d->unknown_first)
        put_unknown(w, d, msg);
}

tg_status onnx_model_serialize(const onnx_model *m, uint8_t **bytes,
                               size_t *len)
{
    if (!m || !bytes || !len)
        return tg__error(TG_ERR_ARG, "onnx_model_serialize: NULL argument");
    *bytes = NULL;
    *len = 0;
    tg_pb_writer w = {.measure = true};
    emit_message(&w, &onnx_pb_model, m, 0);
    if (w.err)
        return tg__error(TG_ERR_ARG, "onnx_model_serialize: %s", w.err);
    if (w.len > (size_t)INT32_MAX)
        return tg__error(TG_ERR_ARG, "onnx_model_serialize: the model takes "
                         "%zu bytes; a protobuf message holds at most 2 GiB",
                         w.len);
    size_t n = w.len;
    w = (tg_pb_writer){.buf = malloc(n ? n : 1), .cap = n};
    if (!w.buf)
        return tg__error(TG_ERR_NOMEM, "onnx_model_serialize: cannot allocate "
                         "%zu bytes", n);
    emit_message(&w, &onnx_pb_model, m, 0);
    if (!w.err && w.len != n)
        w.err = "internal error: the model wrote other than its measured size";
    if (w.err) {
        free(w.buf);
        return tg__error(TG_ERR_INTERNAL, "onnx_model_serialize: %s", w.err);
    }
    *bytes = w.buf;
    *len = n;
    return TG_OK;
}

/* written atomically (io/atomic_file.c): path is never left half written */
tg_status onnx_model_save_file(const onnx_model *m, const char *path)
{
    uint8_t *buf = NULL;
    size_t n;
    tg__atomic_file af;
    tg_status s = onnx_model_serialize(m, &buf, &n);
    if (s == TG_OK && (s = tg__atomic_begin(&af, path, "onnx")) == TG_OK)
        s = tg__atomic_end(&af, fwrite(buf, 1, n, af.f) == n, errno, "onnx");
    free(buf);
    return s;
}
