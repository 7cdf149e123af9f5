/* ONNX ModelProto and friends (see proto.h): parsing with a field
 * path for every error, serializing with measured nested lengths,
 * freeing. Field numbers are onnx.proto's (IR v8). */
#include "onnx/proto.h"

#include "core/status_impl.h"
#include "io/atomic_file.h"
#include "onnx/protobuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ==== freeing ================================================================== */

static void bytes_clear(onnx_bytes *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

static void strings_free(char **s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

void onnx_tensor_clear(onnx_tensor *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->dims);
    bytes_clear(&t->raw_data);
    free(t->float_data);
    free(t->int32_data);
    free(t->int64_data);
    free(t->double_data);
    bytes_clear(&t->unknown);
    memset(t, 0, sizeof *t);
}

static void type_clear_tensor(onnx_type *ty)
{
    for (size_t i = 0; i < ty->n_dims; i++) {
        free(ty->dims[i].param);
        bytes_clear(&ty->dims[i].unknown);
    }
    free(ty->dims);
    ty->dims = NULL;
    ty->n_dims = 0;
    ty->has_tensor_type = ty->has_shape = ty->has_elem_type = false;
    ty->elem_type = 0;
    bytes_clear(&ty->tensor_unknown);
    bytes_clear(&ty->shape_unknown);
}

static void value_info_clear(onnx_value_info *v)
{
    free(v->name);
    type_clear_tensor(&v->type);
    bytes_clear(&v->type.unknown);
    bytes_clear(&v->unknown);
}

static void attribute_clear(onnx_attribute *a)
{
    free(a->name);
    bytes_clear(&a->s);
    if (a->t) {
        onnx_tensor_clear(a->t);
        free(a->t);
    }
    if (a->g) {
        onnx_graph_clear(a->g);
        free(a->g);
    }
    free(a->floats);
    free(a->ints);
    for (size_t i = 0; i < a->n_strings; i++)
        bytes_clear(&a->strings[i]);
    free(a->strings);
    for (size_t i = 0; i < a->n_tensors; i++)
        onnx_tensor_clear(&a->tensors[i]);
    free(a->tensors);
    for (size_t i = 0; i < a->n_graphs; i++)
        onnx_graph_clear(&a->graphs[i]);
    free(a->graphs);
    bytes_clear(&a->unknown);
}

static void node_clear(onnx_node *n)
{
    strings_free(n->input, n->n_input);
    strings_free(n->output, n->n_output);
    free(n->name);
    free(n->op_type);
    free(n->domain);
    for (size_t i = 0; i < n->n_attribute; i++)
        attribute_clear(&n->attribute[i]);
    free(n->attribute);
    bytes_clear(&n->unknown);
}

static void value_infos_free(onnx_value_info *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        value_info_clear(&v[i]);
    free(v);
}

void onnx_graph_clear(onnx_graph *g)
{
    if (!g)
        return;
    free(g->name);
    for (size_t i = 0; i < g->n_node; i++)
        node_clear(&g->node[i]);
    free(g->node);
    for (size_t i = 0; i < g->n_initializer; i++)
        onnx_tensor_clear(&g->initializer[i]);
    free(g->initializer);
    value_infos_free(g->input, g->n_input);
    value_infos_free(g->output, g->n_output);
    value_infos_free(g->value_info, g->n_value_info);
    bytes_clear(&g->unknown);
    memset(g, 0, sizeof *g);
}

void onnx_model_free(onnx_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        free(m->opset_import[i].domain);
        bytes_clear(&m->opset_import[i].unknown);
    }
    free(m->opset_import);
    free(m->producer_name);
    free(m->producer_version);
    if (m->graph) {
        onnx_graph_clear(m->graph);
        free(m->graph);
    }
    bytes_clear(&m->unknown);
    free(m);
}

/* ==== parsing: context, errors, growth ========================================= */

typedef struct pctx {
    const uint8_t *base;
    size_t len;
    size_t budget; /* bytes the parser may still allocate */
    int depth;
    struct {
        const char *name;
        int64_t index; /* -1 for a singular field */
    } path[ONNX_MAX_DEPTH + 1];
} pctx;

typedef bool (*parse_fn)(pctx *c, const uint8_t *data, size_t len, void *out);

/* "model.graph.node[3].attribute[0]" */
static void path_str(const pctx *c, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "model");
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

/* arrays grow to the next power of two of their count, so their capacity
 * follows from the count alone */
static size_t cap_for(size_t n)
{
    size_t c = n ? 1 : 0;
    while (c < n)
        c <<= 1;
    return c;
}

static bool reserve(pctx *c, void **arr, size_t n, size_t add, size_t elem)
{
    size_t need = cap_for(n + add), have = cap_for(n);
    if (need <= have && (*arr || need == 0))
        return true;
    if (need > SIZE_MAX / elem)
        return nomem();
    if (!charge(c, (need - (*arr ? have : 0)) * elem))
        return false;
    void *p = realloc(*arr, need * elem);
    if (!p)
        return nomem();
    *arr = p;
    return true;
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
                int64_t index, parse_fn fn, void *out)
{
    if (!want(c, f, field, TG_PB_LEN))
        return false;
    if (c->depth >= ONNX_MAX_DEPTH)
        return perr(c, field, at_of(c, f), "messages nested deeper than %d "
                    "levels (subgraphs nested too deeply)", ONNX_MAX_DEPTH);
    c->path[c->depth].name = field;
    c->path[c->depth].index = index;
    c->depth++;
    bool ok = fn(c, f->data, f->len, out);
    c->depth--;
    return ok;
}

/* a singular message field: allocated on first sight, merged after */
static bool sub_one(pctx *c, const tg_pb_field *f, const char *field,
                    parse_fn fn, void **slot, size_t size)
{
    if (!*slot && !charge(c, size))
        return false;
    if (!*slot && !(*slot = calloc(1, size)))
        return nomem();
    return sub(c, f, field, -1, fn, *slot);
}

/* a repeated message field: appends one element (counted before parsing
 * so that a failure frees what was parsed) */
static bool sub_add(pctx *c, const tg_pb_field *f, const char *field,
                    parse_fn fn, void **arr, size_t *n, size_t size)
{
    if (!want(c, f, field, TG_PB_LEN))
        return false;
    void *e = push(c, arr, n, size);
    return e && sub(c, f, field, (int64_t)*n - 1, fn, e);
}

#define FOR_FIELDS(c, data, len)                                        \
    tg_pb_reader r_;                                                    \
    tg_pb_field f_, *f = &f_;                                           \
    int st_;                                                            \
    tg_pb_reader_init(&r_, (c)->base, data, len);                       \
    while ((st_ = tg_pb_next(&r_, f)) > 0)
#define END_FIELDS(c) return st_ == 0 || pb_failed(c, &r_)

/* ==== parsing: messages ========================================================= */

static bool parse_tensor(pctx *c, const uint8_t *data, size_t len, void *out)
{
    onnx_tensor *t = out;
    uint64_t v;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1:
            ok = add_varints(c, f, "dims", (void **)&t->dims, &t->n_dims, 64);
            break;
        case 2:
            ok = get_varint(c, f, "data_type", &v);
            t->data_type = (int32_t)(uint32_t)v;
            t->has_data_type = true;
            break;
        case 4:
            ok = add_fixed(c, f, "float_data", (void **)&t->float_data,
                           &t->n_float_data, 4);
            break;
        case 5:
            ok = add_varints(c, f, "int32_data", (void **)&t->int32_data,
                             &t->n_int32_data, 32);
            break;
        case 7:
            ok = add_varints(c, f, "int64_data", (void **)&t->int64_data,
                             &t->n_int64_data, 64);
            break;
        case 8: ok = copy_string(c, f, "name", &t->name); break;
        case 9: ok = set_bytes(c, f, "raw_data", &t->raw_data); break;
        case 10:
            ok = add_fixed(c, f, "double_data", (void **)&t->double_data,
                           &t->n_double_data, 8);
            break;
        case 14:
            ok = get_varint(c, f, "data_location", &v);
            t->data_location = (int32_t)(uint32_t)v;
            t->has_data_location = true;
            break;
        default: ok = keep_unknown(c, f, &t->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_dim(pctx *c, const uint8_t *data, size_t len, void *out)
{
    onnx_dim *d = out;
    uint64_t v;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1: /* oneof value: the last one wins */
            ok = get_varint(c, f, "dim_value", &v);
            d->kind = ONNX_DIM_VALUE;
            d->value = (int64_t)v;
            free(d->param);
            d->param = NULL;
            break;
        case 2:
            ok = copy_string(c, f, "dim_param", &d->param);
            d->kind = ONNX_DIM_PARAM;
            d->value = 0;
            break;
        default: ok = keep_unknown(c, f, &d->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_shape(pctx *c, const uint8_t *data, size_t len, void *out)
{
    onnx_type *ty = out;
    ty->has_shape = true;
    FOR_FIELDS(c, data, len) {
        bool ok;
        if (f->number == 1)
            ok = sub_add(c, f, "dim", parse_dim, (void **)&ty->dims,
                         &ty->n_dims, sizeof *ty->dims);
        else
            ok = keep_unknown(c, f, &ty->shape_unknown);
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_tensor_type(pctx *c, const uint8_t *data, size_t len,
                              void *out)
{
    onnx_type *ty = out;
    uint64_t v;
    ty->has_tensor_type = true;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1:
            ok = get_varint(c, f, "elem_type", &v);
            ty->elem_type = (int32_t)(uint32_t)v;
            ty->has_elem_type = true;
            break;
        case 2: ok = sub(c, f, "shape", -1, parse_shape, ty); break;
        default: ok = keep_unknown(c, f, &ty->tensor_unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_type(pctx *c, const uint8_t *data, size_t len, void *out)
{
    onnx_type *ty = out;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1: ok = sub(c, f, "tensor_type", -1, parse_tensor_type, ty); break;
        case 4: case 5: case 8: case 9:
            /* another member of the `value` oneof replaces tensor_type */
            type_clear_tensor(ty);
            ok = keep_unknown(c, f, &ty->unknown);
            break;
        default: ok = keep_unknown(c, f, &ty->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_value_info(pctx *c, const uint8_t *data, size_t len,
                             void *out)
{
    onnx_value_info *vi = out;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1: ok = copy_string(c, f, "name", &vi->name); break;
        case 2:
            vi->has_type = true;
            ok = sub(c, f, "type", -1, parse_type, &vi->type);
            break;
        default: ok = keep_unknown(c, f, &vi->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_graph(pctx *c, const uint8_t *data, size_t len, void *out);

static bool parse_attribute(pctx *c, const uint8_t *data, size_t len,
                            void *out)
{
    onnx_attribute *a = out;
    uint64_t v;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1: ok = copy_string(c, f, "name", &a->name); break;
        case 20:
            ok = get_varint(c, f, "type", &v);
            a->type = (int32_t)(uint32_t)v;
            a->has_type = true;
            break;
        case 2:
            ok = want(c, f, "f", TG_PB_I32);
            {
                uint32_t u = (uint32_t)f->u;
                memcpy(&a->f, &u, 4);
            }
            a->has_f = true;
            break;
        case 3:
            ok = get_varint(c, f, "i", &v);
            a->i = (int64_t)v;
            a->has_i = true;
            break;
        case 4: ok = set_bytes(c, f, "s", &a->s); break;
        case 5:
            ok = sub_one(c, f, "t", parse_tensor, (void **)&a->t, sizeof *a->t);
            break;
        case 6:
            ok = sub_one(c, f, "g", parse_graph, (void **)&a->g, sizeof *a->g);
            break;
        case 7:
            ok = add_fixed(c, f, "floats", (void **)&a->floats, &a->n_floats, 4);
            break;
        case 8:
            ok = add_varints(c, f, "ints", (void **)&a->ints, &a->n_ints, 64);
            break;
        case 9:
            ok = add_bytes(c, f, "strings", &a->strings, &a->n_strings);
            break;
        case 10:
            ok = sub_add(c, f, "tensors", parse_tensor, (void **)&a->tensors,
                         &a->n_tensors, sizeof *a->tensors);
            break;
        case 11:
            ok = sub_add(c, f, "graphs", parse_graph, (void **)&a->graphs,
                         &a->n_graphs, sizeof *a->graphs);
            break;
        default: ok = keep_unknown(c, f, &a->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_node(pctx *c, const uint8_t *data, size_t len, void *out)
{
    onnx_node *n = out;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1: ok = add_string(c, f, "input", &n->input, &n->n_input); break;
        case 2: ok = add_string(c, f, "output", &n->output, &n->n_output); break;
        case 3: ok = copy_string(c, f, "name", &n->name); break;
        case 4: ok = copy_string(c, f, "op_type", &n->op_type); break;
        case 7: ok = copy_string(c, f, "domain", &n->domain); break;
        case 5:
            ok = sub_add(c, f, "attribute", parse_attribute,
                         (void **)&n->attribute, &n->n_attribute,
                         sizeof *n->attribute);
            break;
        default: ok = keep_unknown(c, f, &n->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_graph(pctx *c, const uint8_t *data, size_t len, void *out)
{
    onnx_graph *g = out;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1:
            ok = sub_add(c, f, "node", parse_node, (void **)&g->node,
                         &g->n_node, sizeof *g->node);
            break;
        case 2: ok = copy_string(c, f, "name", &g->name); break;
        case 5:
            ok = sub_add(c, f, "initializer", parse_tensor,
                         (void **)&g->initializer, &g->n_initializer,
                         sizeof *g->initializer);
            break;
        case 11:
            ok = sub_add(c, f, "input", parse_value_info, (void **)&g->input,
                         &g->n_input, sizeof *g->input);
            break;
        case 12:
            ok = sub_add(c, f, "output", parse_value_info, (void **)&g->output,
                         &g->n_output, sizeof *g->output);
            break;
        case 13:
            ok = sub_add(c, f, "value_info", parse_value_info,
                         (void **)&g->value_info, &g->n_value_info,
                         sizeof *g->value_info);
            break;
        default: ok = keep_unknown(c, f, &g->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_opset(pctx *c, const uint8_t *data, size_t len, void *out)
{
    onnx_opset *o = out;
    uint64_t v;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1: ok = copy_string(c, f, "domain", &o->domain); break;
        case 2:
            ok = get_varint(c, f, "version", &v);
            o->version = (int64_t)v;
            o->has_version = true;
            break;
        default: ok = keep_unknown(c, f, &o->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
}

static bool parse_model(pctx *c, const uint8_t *data, size_t len, void *out)
{
    onnx_model *m = out;
    uint64_t v;
    FOR_FIELDS(c, data, len) {
        bool ok;
        switch (f->number) {
        case 1:
            ok = get_varint(c, f, "ir_version", &v);
            m->ir_version = (int64_t)v;
            m->has_ir_version = true;
            break;
        case 2: ok = copy_string(c, f, "producer_name", &m->producer_name); break;
        case 3:
            ok = copy_string(c, f, "producer_version", &m->producer_version);
            break;
        case 7:
            ok = sub_one(c, f, "graph", parse_graph, (void **)&m->graph,
                         sizeof *m->graph);
            break;
        case 8:
            ok = sub_add(c, f, "opset_import", parse_opset,
                         (void **)&m->opset_import, &m->n_opset_import,
                         sizeof *m->opset_import);
            break;
        default: ok = keep_unknown(c, f, &m->unknown);
        }
        if (!ok)
            return false;
    }
    END_FIELDS(c);
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
    c->len = len;
    c->budget = ONNX_PARSE_BUDGET(len);
    c->depth = 0;
    if (!parse_model(c, data, len, m)) {
        free(c);
        onnx_model_free(m);
        return tg_last_status();
    }
    free(c);
    *out = m;
    return TG_OK;
}

tg_status onnx_model_load_file(const char *path, onnx_model **out)
{
    if (!path || !out)
        return tg__error(TG_ERR_ARG, "onnx_model_load_file: NULL path or output");
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return tg__error(TG_ERR_IO, "onnx: cannot open '%s': %s", path,
                         strerror(errno));
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(fp);
        return tg__error(TG_ERR_IO, "onnx: '%s' is not a regular file", path);
    }
    size_t n = (size_t)sb.st_size;
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

/* ==== serializing ================================================================
 * Every message is written by one emit function, run twice per nesting
 * level: measuring (to write the length prefix) and writing. */

typedef void (*emit_fn)(tg_pb_writer *w, const void *msg, int depth);

static void put_msg(tg_pb_writer *w, uint32_t field, emit_fn fn,
                    const void *msg, int depth)
{
    if (w->err)
        return;
    if (depth >= ONNX_MAX_DEPTH) {
        w->err = "messages nested deeper than the limit (ONNX_MAX_DEPTH)";
        return;
    }
    tg_pb_writer m = {.measure = true};
    fn(&m, msg, depth + 1);
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
    fn(w, msg, depth + 1);
    if (!w->err && w->len - before != m.len)
        w->err = "internal error: a message wrote other than its measured size";
}

static void put_string(tg_pb_writer *w, uint32_t field, const char *s)
{
    if (s)
        tg_pb_put_bytes(w, field, s, strlen(s));
}

static void put_int(tg_pb_writer *w, uint32_t field, int64_t v, bool has)
{
    if (v || has) {
        tg_pb_put_tag(w, field, TG_PB_VARINT);
        tg_pb_put_varint(w, (uint64_t)v); /* int32: sign-extended */
    }
}

static void put_unknown(tg_pb_writer *w, const onnx_bytes *u)
{
    if (u->data)
        tg_pb_put_raw(w, u->data, u->len);
}

static void put_packed_varints(tg_pb_writer *w, uint32_t field,
                               const int64_t *v64, const int32_t *v32, size_t n)
{
    if (!n)
        return;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += tg_pb_varint_size(v64 ? (uint64_t)v64[i] : (uint64_t)(int64_t)v32[i]);
    tg_pb_put_tag(w, field, TG_PB_LEN);
    tg_pb_put_varint(w, bytes);
    if (w->measure) {
        w->len += bytes;
        return;
    }
    for (size_t i = 0; i < n; i++)
        tg_pb_put_varint(w, v64 ? (uint64_t)v64[i] : (uint64_t)(int64_t)v32[i]);
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t double_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static void put_packed_fixed(tg_pb_writer *w, uint32_t field, const float *f,
                             const double *d, size_t n)
{
    if (!n)
        return;
    size_t size = f ? 4 : 8;
    tg_pb_put_tag(w, field, TG_PB_LEN);
    tg_pb_put_varint(w, n * size);
    if (w->measure) {
        w->len += n * size;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (f)
            tg_pb_put_fixed32(w, float_bits(f[i]));
        else
            tg_pb_put_fixed64(w, double_bits(d[i]));
    }
}

static void emit_tensor(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_tensor *t = msg;
    (void)depth;
    for (size_t i = 0; i < t->n_dims; i++) /* not packed in onnx.proto */
        put_int(w, 1, t->dims[i], true);
    put_int(w, 2, t->data_type, t->has_data_type);
    put_packed_fixed(w, 4, t->float_data, NULL, t->n_float_data);
    put_packed_varints(w, 5, NULL, t->int32_data, t->n_int32_data);
    put_packed_varints(w, 7, t->int64_data, NULL, t->n_int64_data);
    put_string(w, 8, t->name);
    if (t->raw_data.data)
        tg_pb_put_bytes(w, 9, t->raw_data.data, t->raw_data.len);
    put_packed_fixed(w, 10, NULL, t->double_data, t->n_double_data);
    put_int(w, 14, t->data_location, t->has_data_location);
    put_unknown(w, &t->unknown);
}

static void emit_dim(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_dim *d = msg;
    (void)depth;
    if (d->kind == ONNX_DIM_VALUE)
        put_int(w, 1, d->value, true);
    else if (d->kind == ONNX_DIM_PARAM)
        put_string(w, 2, d->param ? d->param : "");
    put_unknown(w, &d->unknown);
}

static void emit_shape(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_type *ty = msg;
    for (size_t i = 0; i < ty->n_dims; i++)
        put_msg(w, 1, emit_dim, &ty->dims[i], depth);
    put_unknown(w, &ty->shape_unknown);
}

static void emit_tensor_type(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_type *ty = msg;
    put_int(w, 1, ty->elem_type, ty->has_elem_type);
    if (ty->has_shape)
        put_msg(w, 2, emit_shape, ty, depth);
    put_unknown(w, &ty->tensor_unknown);
}

static void emit_type(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_type *ty = msg;
    /* unknown first: tensor_type, when set, must be the oneof's last word */
    put_unknown(w, &ty->unknown);
    if (ty->has_tensor_type)
        put_msg(w, 1, emit_tensor_type, ty, depth);
}

static void emit_value_info(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_value_info *v = msg;
    put_string(w, 1, v->name);
    if (v->has_type)
        put_msg(w, 2, emit_type, &v->type, depth);
    put_unknown(w, &v->unknown);
}

static void emit_graph(tg_pb_writer *w, const void *msg, int depth);

static void emit_attribute(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_attribute *a = msg;
    put_string(w, 1, a->name);
    if (a->f != 0.0f || a->has_f) {
        tg_pb_put_tag(w, 2, TG_PB_I32);
        tg_pb_put_fixed32(w, float_bits(a->f));
    }
    put_int(w, 3, a->i, a->has_i);
    if (a->s.data)
        tg_pb_put_bytes(w, 4, a->s.data, a->s.len);
    if (a->t)
        put_msg(w, 5, emit_tensor, a->t, depth);
    if (a->g)
        put_msg(w, 6, emit_graph, a->g, depth);
    for (size_t i = 0; i < a->n_floats; i++) { /* not packed in onnx.proto */
        tg_pb_put_tag(w, 7, TG_PB_I32);
        tg_pb_put_fixed32(w, float_bits(a->floats[i]));
    }
    for (size_t i = 0; i < a->n_ints; i++)
        put_int(w, 8, a->ints[i], true);
    for (size_t i = 0; i < a->n_strings; i++)
        tg_pb_put_bytes(w, 9, a->strings[i].data ? a->strings[i].data
                                                 : (const uint8_t *)"",
                        a->strings[i].len);
    for (size_t i = 0; i < a->n_tensors; i++)
        put_msg(w, 10, emit_tensor, &a->tensors[i], depth);
    for (size_t i = 0; i < a->n_graphs; i++)
        put_msg(w, 11, emit_graph, &a->graphs[i], depth);
    put_int(w, 20, a->type, a->has_type);
    put_unknown(w, &a->unknown);
}

static void emit_node(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_node *n = msg;
    for (size_t i = 0; i < n->n_input; i++)
        put_string(w, 1, n->input[i] ? n->input[i] : "");
    for (size_t i = 0; i < n->n_output; i++)
        put_string(w, 2, n->output[i] ? n->output[i] : "");
    put_string(w, 3, n->name);
    put_string(w, 4, n->op_type);
    for (size_t i = 0; i < n->n_attribute; i++)
        put_msg(w, 5, emit_attribute, &n->attribute[i], depth);
    put_string(w, 7, n->domain);
    put_unknown(w, &n->unknown);
}

static void emit_graph(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_graph *g = msg;
    for (size_t i = 0; i < g->n_node; i++)
        put_msg(w, 1, emit_node, &g->node[i], depth);
    put_string(w, 2, g->name);
    for (size_t i = 0; i < g->n_initializer; i++)
        put_msg(w, 5, emit_tensor, &g->initializer[i], depth);
    for (size_t i = 0; i < g->n_input; i++)
        put_msg(w, 11, emit_value_info, &g->input[i], depth);
    for (size_t i = 0; i < g->n_output; i++)
        put_msg(w, 12, emit_value_info, &g->output[i], depth);
    for (size_t i = 0; i < g->n_value_info; i++)
        put_msg(w, 13, emit_value_info, &g->value_info[i], depth);
    put_unknown(w, &g->unknown);
}

static void emit_opset(tg_pb_writer *w, const void *msg, int depth)
{
    const onnx_opset *o = msg;
    (void)depth;
    put_string(w, 1, o->domain);
    put_int(w, 2, o->version, o->has_version);
    put_unknown(w, &o->unknown);
}

static void emit_model(tg_pb_writer *w, const onnx_model *m)
{
    put_int(w, 1, m->ir_version, m->has_ir_version);
    put_string(w, 2, m->producer_name);
    put_string(w, 3, m->producer_version);
    if (m->graph)
        put_msg(w, 7, emit_graph, m->graph, 0);
    for (size_t i = 0; i < m->n_opset_import; i++)
        put_msg(w, 8, emit_opset, &m->opset_import[i], 0);
    put_unknown(w, &m->unknown);
}

tg_status onnx_model_serialize(const onnx_model *m, uint8_t **bytes,
                               size_t *len)
{
    if (!m || !bytes || !len)
        return tg__error(TG_ERR_ARG, "onnx_model_serialize: NULL argument");
    *bytes = NULL;
    *len = 0;
    tg_pb_writer w = {.measure = true};
    emit_model(&w, m);
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
    emit_model(&w, m);
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

/* written atomically (atomic_file.c): path is never left half written */
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
