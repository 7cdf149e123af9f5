/* The protobuf wire format by hand (see protobuf.h): a field reader that
 * treats its input as hostile and a writer that can measure first.
 *
 * Why not protobuf-c? Debian's libprotobuf-c-dev + protobuf-c-compiler
 * (1.4.1) do work with the onnx.proto that python3-onnx / libonnx-dev ship:
 * protoc-c turns it into ~4,300 lines of C that parse ONNX files fine, and
 * it checks lengths against the buffer and keeps unknown fields. The
 * trade-off that decided it:
 *  - protobuf-c has no nesting limit: a 2.4 MB file of 200,000 nested
 *    subgraph attributes overflows the stack (SIGSEGV) in
 *    onnx__model_proto__unpack. ONNX nests graphs in attributes (If, Loop,
 *    Scan), so a hostile model reaches this; we would need a pre-pass
 *    that walks the bytes anyway, i.e. most of this decoder.
 *  - semantic checks (dims against the data present, element caps, dtype
 *    support) are ours in either case; the wire format itself is ~300 lines.
 *  - generated code tracks one onnx.proto version: vendored, it must be
 *    regenerated and re-reviewed when ONNX moves; generated at build time,
 *    it needs protoc-c and onnx.proto on every builder and the C library
 *    at run time. Here nothing is generated and nothing is linked.
 * What protobuf-c would give for free (reflection, every field of the
 * schema) we do not need: fields outside our subset are kept as raw bytes
 * and written back unchanged. */
#include "onnx/protobuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* records what went wrong and where; returns -1 */
__attribute__((format(printf, 3, 4)))
static int fail(tg_pb_reader *r, const uint8_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->err_at = (size_t)(at - r->base);
    return -1;
}

void tg_pb_reader_init(tg_pb_reader *r, const uint8_t *base,
                       const uint8_t *data, size_t len)
{
    r->base = base;
    r->p = data;
    r->end = data + len;
    r->err[0] = '\0';
    r->err_at = 0;
}

const char *tg_pb_wire_name(int wire)
{
    switch (wire) {
    case TG_PB_VARINT: return "varint";
    case TG_PB_I64: return "64-bit";
    case TG_PB_LEN: return "length-delimited";
    case TG_PB_SGROUP: return "start-group";
    case TG_PB_EGROUP: return "end-group";
    case TG_PB_I32: return "32-bit";
    default: return "invalid";
    }
}

bool tg_pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (q >= end)
            return false;
        uint8_t b = *q++;
        /* the 10th byte holds bit 63 only */
        if (i == 9 && b > 1)
            return false;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *p = q;
            *v = x;
            return true;
        }
    }
    return false;
}

int64_t tg_pb_count_varints(const uint8_t *data, size_t len)
{
    int64_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += !(data[i] & 0x80);
    if (len && (data[len - 1] & 0x80))
        return -1;
    return n;
}

/* reads a tag at *p: false (with r->err) when malformed */
static bool read_tag(tg_pb_reader *r, const uint8_t **p, uint32_t *number,
                     int *wire)
{
    const uint8_t *at = *p;
    uint64_t tag;
    if (!tg_pb_read_varint(p, r->end, &tag)) {
        fail(r, at, "truncated or overlong varint in a field tag");
        return false;
    }
    if (tag >> 3 == 0 || tag >> 3 > TG_PB_MAX_FIELD) {
        fail(r, at, "field number %llu is out of range (1 to 2^29-1)",
             (unsigned long long)(tag >> 3));
        return false;
    }
    *number = (uint32_t)(tag >> 3);
    *wire = (int)(tag & 7);
    if (*wire > TG_PB_I32) {
        fail(r, at, "field %u has invalid wire type %d", *number, *wire);
        return false;
    }
    return true;
}

/* the value of a non-group field whose tag (at `at`) has been read;
 * advances *p. Errors point at the tag. */
static bool read_value(tg_pb_reader *r, const uint8_t *at, const uint8_t **p,
                       uint32_t number, int wire, tg_pb_field *f)
{
    size_t left = (size_t)(r->end - *p);
    switch (wire) {
    case TG_PB_VARINT:
        if (!tg_pb_read_varint(p, r->end, &f->u)) {
            fail(r, at, "field %u: truncated varint or one longer than 10 "
                 "bytes", number);
            return false;
        }
        return true;
    case TG_PB_I64:
    case TG_PB_I32: {
        size_t n = wire == TG_PB_I64 ? 8 : 4;
        if (left < n) {
            fail(r, at, "field %u: %zu-byte value truncated (%zu bytes left)",
                 number, n, left);
            return false;
        }
        f->u = n == 8 ? tg_pb_le64(*p) : tg_pb_le32(*p);
        *p += n;
        return true;
    }
    case TG_PB_LEN: {
        uint64_t len;
        if (!tg_pb_read_varint(p, r->end, &len)) {
            fail(r, at, "field %u: truncated or overlong length varint", number);
            return false;
        }
        left = (size_t)(r->end - *p);
        if (len > left) {
            fail(r, at, "field %u: length %llu exceeds the %zu bytes left",
                 number, (unsigned long long)len, left);
            return false;
        }
        f->data = *p;
        f->len = (size_t)len;
        *p += len;
        return true;
    }
    default:
        fail(r, at, "field %u: unexpected wire type %d", number, wire);
        return false;
    }
}

/* skips a group whose start tag (field number) has been read, up to and
 * including its end tag; nested groups are matched with a small stack */
static bool skip_group(tg_pb_reader *r, const uint8_t **p, uint32_t number,
                       tg_pb_field *f)
{
    uint32_t stack[TG_PB_MAX_GROUP_DEPTH];
    int depth = 0;
    stack[depth++] = number;
    f->data = *p;
    while (depth > 0) {
        const uint8_t *at = *p;
        if (*p >= r->end) {
            fail(r, at, "group %u is not closed before the end of its message",
                 stack[depth - 1]);
            return false;
        }
        uint32_t num;
        int wire;
        if (!read_tag(r, p, &num, &wire))
            return false;
        if (wire == TG_PB_SGROUP) {
            if (depth == TG_PB_MAX_GROUP_DEPTH) {
                fail(r, at, "groups nested deeper than %d",
                     TG_PB_MAX_GROUP_DEPTH);
                return false;
            }
            stack[depth++] = num;
        } else if (wire == TG_PB_EGROUP) {
            if (num != stack[depth - 1]) {
                fail(r, at, "end-group tag %u does not match start-group %u",
                     num, stack[depth - 1]);
                return false;
            }
            if (--depth == 0)
                f->len = (size_t)(at - f->data);
        } else {
            tg_pb_field tmp;
            if (!read_value(r, at, p, num, wire, &tmp))
                return false;
        }
    }
    return true;
}

int tg_pb_next(tg_pb_reader *r, tg_pb_field *f)
{
    if (r->p >= r->end)
        return 0;
    const uint8_t *p = r->p;
    memset(f, 0, sizeof *f);
    f->start = p;
    if (!read_tag(r, &p, &f->number, &f->wire))
        return -1;
    if (f->wire == TG_PB_EGROUP)
        return fail(r, f->start, "end-group tag %u without a start-group",
                    f->number);
    if (f->wire == TG_PB_SGROUP) {
        if (!skip_group(r, &p, f->number, f))
            return -1;
    } else if (!read_value(r, f->start, &p, f->number, f->wire, f)) {
        return -1;
    }
    f->stop = p;
    r->p = p;
    return 1;
}

/* ==== writing ================================================================ */

size_t tg_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void tg_pb_put_raw(tg_pb_writer *w, const void *data, size_t len)
{
    if (w->err)
        return;
    if (!w->measure) {
        if (len > w->cap - w->len) {
            w->err = "internal error: the writer's measured size was too small";
            return;
        }
        if (len)
            memcpy(w->buf + w->len, data, len);
    }
    w->len += len;
}

void tg_pb_put_varint(tg_pb_writer *w, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    tg_pb_put_raw(w, b, n);
}

void tg_pb_put_tag(tg_pb_writer *w, uint32_t field, int wire)
{
    tg_pb_put_varint(w, (uint64_t)field << 3 | (uint64_t)wire);
}

void tg_pb_put_fixed32(tg_pb_writer *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                    (uint8_t)(v >> 24)};
    tg_pb_put_raw(w, b, 4);
}

void tg_pb_put_fixed64(tg_pb_writer *w, uint64_t v)
{
    tg_pb_put_fixed32(w, (uint32_t)v);
    tg_pb_put_fixed32(w, (uint32_t)(v >> 32));
}

void tg_pb_put_bytes(tg_pb_writer *w, uint32_t field, const void *data,
                     size_t len)
{
    tg_pb_put_tag(w, field, TG_PB_LEN);
    tg_pb_put_varint(w, len);
    tg_pb_put_raw(w, data, len);
}
