/* Parsing ONNX files (see proto.h): one generic parser driven by the field
 * tables of proto_fields.c. The input is hostile: every length is checked
 * against the bytes left (protobuf.c), nesting is bounded (ONNX_MAX_DEPTH),
 * every allocation is charged to a budget proportional to the input
 * (ONNX_PARSE_BUDGET), and every error names the field path and the byte
 * offset. */
#include "onnx/proto_fields.h"
#include "util/grow.h"

#include "core/status_impl.h"
#include "onnx/protobuf.h"
#include "io/regular_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== parsing: context, errors, growth ========================================= */

typedef struct pctx {
    const uint8_t *base;
    const char *root; /* "model", or the message parsed alone */
    size_t len;
    size_t budget; /* bytes the parser may still allocate */
    int depth;
    struct {
        const char *name;
        int64_t index; /* -1 for a singular field */
    } path[ONNX_MAX_DEPTH + 1];
} pctx;

static bool parse_message(pctx *c, const pb_message *d, const uint8_t *data,
                          size_t len, void *msg);

/* "model.graph.node[3].attribute[0]" */
static void path_str(const pctx *c, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "%s", c->root);
    for (int i = 0; i < c->depth && n < cap; i++) {
        n += (size_t)snprintf(buf + n, cap - n, ".%s", c->path[i].name);
        if (n < cap && c->path[i].index >= 0)
            n += (size_t)snprintf(buf + n, cap - n, "[%lld]",
                                  (long long)c->path[i].index);
    }
}

/* TG_ERR_IO naming the path, the field (may be NULL) and the byte offset */
__attribute__((format(printf, 4, 5)))
static bool perr(const pctx *c, const char *field, size_t at,
                 const char *fmt, ...)
{
    char path[512], msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    path_str(c, path, sizeof path);
    tg__error(TG_ERR_IO, "onnx: %s%s%s: %s (at byte %zu)", path,
              field ? "." : "", field ? field : "", msg, at);
    return false;
}

static bool pb_failed(const pctx *c, const tg_pb_reader *r)
{
    return perr(c, NULL, r->err_at, "%s", r->err);
}

static size_t at_of(const pctx *c, const tg_pb_field *f)
{
    return (size_t)(f->start - c->base);
}

static bool nomem(void)
{
    tg__error(TG_ERR_NOMEM, "onnx: out of memory while parsing");
    return false;
}

/* every allocation is charged to a budget proportional to the input: a
 * hostile file of tiny empty messages cannot make the parser allocate
 * much more than a real model of its size would (see ONNX_PARSE_BUDGET) */
static bool charge(pctx *c, size_t bytes)
{
    if (bytes <= c->budget) {
        c->budget -= bytes;
        return true;
    }
    tg__error(TG_ERR_IO, "onnx: parsing %zu bytes would take more than "
              "%zu bytes of memory; the input is not a plausible model",
              c->len, ONNX_PARSE_BUDGET(c->len));
    return false;
}

/* arrays store only their count: their capacity is the one the library's
 * growth policy gives that count (util/grow.h) */
static bool reserve(pctx *c, void **arr, size_t n, size_t add, size_t elem)
{
    size_t have = tg__grow_capacity(0, n, elem);
    if (add > SIZE_MAX - n)
        return nomem();
    size_t want = tg__grow_capacity(have, n + add, elem);
    if (want == have)
        return true;
    if (want > SIZE_MAX / elem)
        return nomem();
    if (!charge(c, (want - have) * elem))
        return false;
    return tg__grow_size(arr, &have, n + add, elem) ? true : nomem();
}

/* appends one zeroed element; returns it or NULL */
static void *push(pctx *c, void **arr, size_t *n, size_t elem)
{
    if (!reserve(c, arr, *n, 1, elem))
        return NULL;
    void *e = (char *)*arr + *n * elem;
    memset(e, 0, elem);
    (*n)++;
    return e;
}

static bool want(const pctx *c, const tg_pb_field *f, const char *field,
                 int wire)
{
    if (f->wire == wire)
        return true;
    return perr(c, field, at_of(c, f), "wire type %d (%s), expected %s",
                f->wire, tg_pb_wire_name(f->wire), tg_pb_wire_name(wire));
}

/* ==== parsing: field helpers ================================================== */

static bool keep_unknown(pctx *c, const tg_pb_field *f, onnx_bytes *u)
{
    size_t n = (size_t)(f->stop - f->start);
    if (!reserve(c, (void **)&u->data, u->len, n, 1))
        return false;
    memcpy(u->data + u->len, f->start, n);
    u->len += n;
    return true;
}

static bool get_varint(const pctx *c, const tg_pb_field *f, const char *field,
                       uint64_t *v)
{
    *v = f->u; /* 0 unless a varint was read: callers store it either way */
    return want(c, f, field, TG_PB_VARINT);
}

/* a copy of a LEN payload with a NUL after it */
static bool copy_bytes(pctx *c, const tg_pb_field *f, onnx_bytes *b)
{
    if (!charge(c, f->len + 1))
        return false;
    uint8_t *p = malloc(f->len + 1);
    if (!p)
        return nomem();
    if (f->len)
        memcpy(p, f->data, f->len);
    p[f->len] = 0;
    free(b->data);
    b->data = p;
    b->len = f->len;
    return true;
}

static bool set_bytes(pctx *c, const tg_pb_field *f, const char *field,
                      onnx_bytes *b)
{
    return want(c, f, field, TG_PB_LEN) && copy_bytes(c, f, b);
}

/* strings are names: a NUL inside would cut them short for C callers */
static bool copy_string(pctx *c, const tg_pb_field *f, const char *field,
                        char **s)
{
    if (!want(c, f, field, TG_PB_LEN))
        return false;
    if (f->len && memchr(f->data, 0, f->len))
        return perr(c, field, at_of(c, f), "string contains a NUL byte");
    onnx_bytes b = {0};
    if (!copy_bytes(c, f, &b))
        return false;
    free(*s);
    *s = (char *)b.data;
    return true;
}

static bool add_string(pctx *c, const tg_pb_field *f, const char *field,
                       char ***arr, size_t *n)
{
    char **slot = push(c, (void **)arr, n, sizeof **arr);
    return slot && copy_string(c, f, field, slot);
}

static bool add_bytes(pctx *c, const tg_pb_field *f, const char *field,
                      onnx_bytes **arr, size_t *n)
{
    onnx_bytes *slot = push(c, (void **)arr, n, sizeof **arr);
    return slot && set_bytes(c, f, field, slot);
}

/* repeated varint fields, packed or not; bits = 32 keeps the low 32 bits
 * (protobuf's int32), stored as int32_t */
static bool add_varints(pctx *c, const tg_pb_field *f, const char *field,
                        void **arr, size_t *n, int bits)
{
    size_t elem = bits == 32 ? sizeof(int32_t) : sizeof(int64_t);
    if (f->wire == TG_PB_VARINT) {
        void *slot = push(c, arr, n, elem);
        if (!slot)
            return false;
        if (bits == 32)
            *(int32_t *)slot = (int32_t)(uint32_t)f->u;
        else
            *(int64_t *)slot = (int64_t)f->u;
        return true;
    }
    if (!want(c, f, field, TG_PB_LEN))
        return false;
    int64_t count = tg_pb_count_varints(f->data, f->len);
    if (count < 0)
        return perr(c, field, at_of(c, f), "packed varints end in a "
                    "truncated varint");
    if (!reserve(c, arr, *n, (size_t)count, elem))
        return false;
    const uint8_t *p = f->data, *end = f->data + f->len;
    for (int64_t i = 0; i < count; i++) {
        uint64_t v;
        if (!tg_pb_read_varint(&p, end, &v))
            return perr(c, field, at_of(c, f), "packed varint %lld is longer "
                        "than 10 bytes", (long long)i);
        if (bits == 32)
            ((int32_t *)*arr)[*n] = (int32_t)(uint32_t)v;
        else
            ((int64_t *)*arr)[*n] = (int64_t)v;
        (*n)++;
    }
    return true;
}

/* repeated float (size 4) or double (size 8), packed or not */
static bool add_fixed(pctx *c, const tg_pb_field *f, const char *field,
                      void **arr, size_t *n, size_t size)
{
    int wire = size == 4 ? TG_PB_I32 : TG_PB_I64;
    const uint8_t *p;
    uint8_t one[8];
    size_t count;
    if (f->wire == wire) {
        for (size_t k = 0; k < size; k++)
            one[k] = (uint8_t)(f->u >> (8 * k));
        p = one;
        count = 1;
    } else {
        if (!want(c, f, field, TG_PB_LEN))
            return false;
        if (f->len % size)
            return perr(c, field, at_of(c, f), "packed length %zu is not a "
                        "multiple of %zu", f->len, size);
        p = f->data;
        count = f->len / size;
    }
    if (!reserve(c, arr, *n, count, size))
        return false;
    for (size_t i = 0; i < count; i++, p += size) {
        if (size == 4) {
            uint32_t u = tg_pb_le32(p);
            memcpy((float *)*arr + *n, &u, 4);
        } else {
            uint64_t u = tg_pb_le64(p);
            memcpy((double *)*arr + *n, &u, 8);
        }
        (*n)++;
    }
    return true;
}

/* parses a nested message into out, with the path and depth for errors */
static bool sub(pctx *c, const tg_pb_field *f, const char *field,
                int64_t index, const pb_message *d, void *out)
{
    if (!want(c, f, field, TG_PB_LEN))
        return false;
    if (c->depth >= ONNX_MAX_DEPTH)
        return perr(c, field, at_of(c, f), "messages nested deeper than %d "
                    "levels (subgraphs nested too deeply)", ONNX_MAX_DEPTH);
    c->path[c->depth].name = field;
    c->path[c->depth].index = index;
    c->depth++;
    bool ok = parse_message(c, d, f->data, f->len, out);
    c->depth--;
    return ok;
}

/* a singular message field: allocated on first sight, merged after */
static bool sub_one(pctx *c, const tg_pb_field *f, const char *field,
                    const pb_message *d, void **slot)
{
    if (!*slot && !charge(c, d->size))
        return false;
    if (!*slot && !(*slot = calloc(1, d->size)))
        return nomem();
    return sub(c, f, field, -1, d, *slot);
}

/* a repeated message field: appends one element (counted before parsing
 * so that a failure frees what was parsed) */
static bool sub_add(pctx *c, const tg_pb_field *f, const char *field,
                    const pb_message *d, void **arr, size_t *n)
{
    if (!want(c, f, field, TG_PB_LEN))
        return false;
    void *e = push(c, arr, n, d->size);
    return e && sub(c, f, field, (int64_t)*n - 1, d, e);
}

/* ==== parsing: any message, by its field table ================================= */

static bool parse_scalar(pctx *c, const pb_field *fd, const tg_pb_field *f, void *at)
{
    uint64_t v;
    bool ok;
    switch (fd->kind) {
    case PB_INT64:
        ok = get_varint(c, f, fd->name, &v);
        *(int64_t *)at = (int64_t)v;
        return ok;
    case PB_INT32:
        ok = get_varint(c, f, fd->name, &v);
        *(int32_t *)at = (int32_t)(uint32_t)v;
        return ok;
    case PB_FLOAT: {
        uint32_t u = (uint32_t)f->u;
        memcpy(at, &u, 4);
        return want(c, f, fd->name, TG_PB_I32);
    }
    default: /* PB_DOUBLE */
        memcpy(at, &f->u, 8);
        return want(c, f, fd->name, TG_PB_I64);
    }
}

static bool parse_repeated(pctx *c, const pb_field *fd, const tg_pb_field *f,
                           void *at, size_t *n)
{
    switch (fd->kind) {
    case PB_INT64: return add_varints(c, f, fd->name, at, n, 64);
    case PB_INT32: return add_varints(c, f, fd->name, at, n, 32);
    case PB_FLOAT: return add_fixed(c, f, fd->name, at, n, 4);
    case PB_DOUBLE: return add_fixed(c, f, fd->name, at, n, 8);
    case PB_STRING: return add_string(c, f, fd->name, at, n);
    case PB_BYTES: return add_bytes(c, f, fd->name, at, n);
    default: return sub_add(c, f, fd->name, fd->msg, at, n);
    }
}

static bool parse_field(pctx *c, const pb_message *d, void *msg,
                        const pb_field *fd, const tg_pb_field *f)
{
    void *at = PB_AT(msg, fd->off);
    if (fd->clears) /* a oneof: the member seen last wins */
        onnx_pb_clear_field(onnx_pb_field(d, fd->clears), msg);
    if (fd->oneof_case)
        *(int *)PB_AT(msg, d->oneof - 1) = fd->oneof_case;
    if (fd->has)
        *(bool *)PB_AT(msg, fd->has - 1) = true;
    if (fd->flags & PB_REPEATED)
        return parse_repeated(c, fd, f, at, PB_AT(msg, fd->count));
    switch (fd->kind) {
    case PB_STRING: return copy_string(c, f, fd->name, at);
    case PB_BYTES: return set_bytes(c, f, fd->name, at);
    case PB_MSG: return sub_one(c, f, fd->name, fd->msg, at);
    case PB_INLINE: return sub(c, f, fd->name, -1, fd->msg, at);
    case PB_KEEP: return keep_unknown(c, f, PB_AT(msg, d->unknown));
    default: return parse_scalar(c, fd, f, at);
    }
}

static bool parse_message(pctx *c, const pb_message *d, const uint8_t *data,
                          size_t len, void *msg)
{
    tg_pb_reader r;
    tg_pb_field f;
    int st;
    tg_pb_reader_init(&r, c->base, data, len);
    while ((st = tg_pb_next(&r, &f)) > 0) {
        const pb_field *fd = onnx_pb_field(d, f.number);
        bool ok = fd ? parse_field(c, d, msg, fd, &f)
                     : keep_unknown(c, &f, PB_AT(msg, d->unknown));
        if (!ok)
            return false;
    }
    return st == 0 || pb_failed(c, &r);
}

tg_status onnx_model_parse(const void *data, size_t len, onnx_model **out)
{
    if (!out || (!data && len))
        return tg__error(TG_ERR_ARG, "onnx_model_parse: NULL data or output");
    *out = NULL;
    onnx_model *m = calloc(1, sizeof *m);
    pctx *c = malloc(sizeof *c);
    if (!m || !c) {
        free(m);
        free(c);
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory while parsing");
    }
    c->base = data;
    c->root = "model";
    c->len = len;
    c->budget = ONNX_PARSE_BUDGET(len);
    c->depth = 0;
    if (!parse_message(c, &onnx_pb_model, data, len, m)) {
        free(c);
        onnx_model_free(m);
        return tg_last_status();
    }
    free(c);
    *out = m;
    return TG_OK;
}

tg_status onnx_message_parse(const pb_message *d, const void *data, size_t len, void *msg)
{
    if (!d || !msg || (!data && len))
        return tg__error(TG_ERR_ARG, "onnx_message_parse: NULL message or data");
    pctx *c = malloc(sizeof *c);
    if (!c)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory while parsing");
    c->base = data ? data : (const void *)"";
    c->root = d->name;
    c->len = len;
    c->budget = ONNX_PARSE_BUDGET(len);
    c->depth = 0;
    bool ok = parse_message(c, d, c->base, len, msg);
    free(c);
    return ok ? TG_OK : tg_last_status();
}

tg_status onnx_model_load_file(const char *path, onnx_model **out)
{
    if (!path || !out)
        return tg__error(TG_ERR_ARG, "onnx_model_load_file: NULL path or output");
    *out = NULL;
    int64_t size;
    bool not_regular;
    FILE *fp = tg__open_regular(path, &size, &not_regular);
    if (!fp)
        return not_regular ? tg__error(TG_ERR_IO, "onnx: '%s' is not a regular file", path)
                           : tg__error(TG_ERR_IO, "onnx: cannot open '%s': %s", path,
                                       strerror(errno));
    size_t n = (size_t)size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        fclose(fp);
        return tg__error(TG_ERR_NOMEM, "onnx: cannot hold '%s' (%zu bytes) in "
                         "memory", path, n);
    }
    size_t got = fread(buf, 1, n, fp);
    fclose(fp);
    if (got != n) {
        free(buf);
        return tg__error(TG_ERR_IO, "onnx: read %zu of %zu bytes of '%s'", got,
                         n, path);
    }
    tg_status s = onnx_model_parse(buf, n, out);
    free(buf);
    return s;
}
