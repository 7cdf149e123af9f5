/* A small protobuf wire-format reader and writer (no schema, no generated
 * code): the reader walks the fields of one message, checking every length
 * against the bytes left; the writer appends fields to a growing buffer or
 * only counts their bytes (to size nested messages). The ONNX messages
 * are described by the field tables of onnx/proto.c. */
#ifndef TG_ONNX_PROTOBUF_H
#define TG_ONNX_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TG_PB_VARINT = 0,
    TG_PB_I64 = 1,    /* fixed 8 bytes: fixed64, sfixed64, double */
    TG_PB_LEN = 2,    /* length-delimited: strings, bytes, messages, packed */
    TG_PB_SGROUP = 3, /* start group (deprecated) */
    TG_PB_EGROUP = 4, /* end group (deprecated) */
    TG_PB_I32 = 5     /* fixed 4 bytes: fixed32, sfixed32, float */
};

#define TG_PB_MAX_FIELD 536870911u /* 2^29 - 1 */
#define TG_PB_MAX_GROUP_DEPTH 32   /* nested groups skipped at most */

/* ---- reading ------------------------------------------------------------ */

typedef struct tg_pb_reader {
    const uint8_t *p, *end;
    const uint8_t *base; /* start of the whole input: for byte offsets */
    char err[160];       /* what went wrong, when a call failed */
    size_t err_at;       /* byte offset of the failure */
} tg_pb_reader;

typedef struct tg_pb_field {
    uint32_t number;
    int wire;
    uint64_t u;          /* VARINT, I64 and I32 values */
    const uint8_t *data; /* LEN: the payload; SGROUP: the group's body */
    size_t len;
    const uint8_t *start, *stop; /* the whole field, tag included */
} tg_pb_field;

/* a reader over len bytes at data, part of a larger input starting at base
 * (base == data for the outermost message) */
void tg_pb_reader_init(tg_pb_reader *r, const uint8_t *base,
                       const uint8_t *data, size_t len);
/* the next field: 1 when one was read, 0 at the end of the message, -1 on
 * malformed input (r->err says why). A group is skipped whole and returned
 * as one field; an end-group tag without its start is an error. */
int tg_pb_next(tg_pb_reader *r, tg_pb_field *f);
/* reads one varint at *p (before end), advancing *p; false when it is
 * truncated or longer than 10 bytes / 64 bits */
bool tg_pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);
/* the number of varints in a packed payload; -1 when its last varint is
 * truncated */
int64_t tg_pb_count_varints(const uint8_t *data, size_t len);
const char *tg_pb_wire_name(int wire);

static inline uint32_t tg_pb_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static inline uint64_t tg_pb_le64(const uint8_t *p)
{
    return (uint64_t)tg_pb_le32(p) | (uint64_t)tg_pb_le32(p + 4) << 32;
}

/* ---- writing ------------------------------------------------------------
 * In measure mode nothing is stored and len counts the bytes that would
 * be written. In write mode buf holds cap bytes, sized by a measuring pass
 * first; writing past cap is an internal error (err is set, nothing more
 * is written). */
typedef struct tg_pb_writer {
    uint8_t *buf;
    size_t len, cap;
    bool measure;
    const char *err;
} tg_pb_writer;

size_t tg_pb_varint_size(uint64_t v);
void tg_pb_put_raw(tg_pb_writer *w, const void *data, size_t len);
void tg_pb_put_varint(tg_pb_writer *w, uint64_t v);
void tg_pb_put_tag(tg_pb_writer *w, uint32_t field, int wire);
void tg_pb_put_fixed32(tg_pb_writer *w, uint32_t v);
void tg_pb_put_fixed64(tg_pb_writer *w, uint64_t v);
/* tag, length and payload of a LEN field */
void tg_pb_put_bytes(tg_pb_writer *w, uint32_t field, const void *data,
                     size_t len);

#endif
