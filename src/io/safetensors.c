/* safetensors files (see tg/io.h): an atomic writer (atomic_file.c:
 * temporary file, fsync, rename) and a loader that checks every number in the header
 * against the file before using it. */
#include "core/tensor_impl.h"
#include "io/atomic_file.h"
#include "io/io_impl.h"
#include "io/json.h"
#include "io/regular_file.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c writes host-order data and assumes a little-endian host"
#endif

/* the largest header accepted (the reference implementation's limit) */
#define MAX_HEADER ((uint64_t)100 << 20)

_Thread_local int64_t tg__io_fail_after_bytes = -1;

static const char *const dtype_names[TG_NUM_DTYPES] = {"F32", "F64", "I32",
                                                       "I64", "U8", "BOOL"};

static int dtype_from_name(const char *s)
{
    for (int i = 0; i < TG_NUM_DTYPES; i++)
        if (strcmp(s, dtype_names[i]) == 0)
            return i;
    return -1;
}

/* ==== saving ================================================================== */

typedef struct out_entry {
    const char *name;
    tg_tensor *t;
    uint64_t begin, end;
} out_entry;

static tg_status check_save_inputs(int n, const char *const *names,
                                   tg_tensor *const *tensors, int n_meta,
                                   const tg_kv *meta)
{
    if (n < 0 || n_meta < 0 || (n > 0 && (!names || !tensors)) ||
        (n_meta > 0 && !meta))
        return tg__error(TG_ERR_ARG, "tg_safetensors_save: bad counts or NULL "
                         "arrays (n = %d, n_meta = %d)", n, n_meta);
    for (int i = 0; i < n; i++) {
        if (!names[i] || !names[i][0] || strcmp(names[i], "__metadata__") == 0)
            return tg__error(TG_ERR_ARG, "tg_safetensors_save: tensor %d has a "
                             "NULL, empty or reserved name", i);
        if (!tensors[i])
            return tg__error(TG_ERR_ARG, "tg_safetensors_save: tensor '%s' is NULL",
                             names[i]);
        if (!tg__check_concrete("tg_safetensors_save", tensors[i]))
            return tg_last_status(); /* symbolic (graph mode): no data */
        for (int j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return tg__error(TG_ERR_ARG, "tg_safetensors_save: the name '%s' "
                                 "appears twice", names[i]);
    }
    for (int i = 0; i < n_meta; i++) {
        if (!meta[i].key || !meta[i].value)
            return tg__error(TG_ERR_ARG, "tg_safetensors_save: metadata entry %d "
                             "has a NULL key or value", i);
        for (int j = 0; j < i; j++)
            if (strcmp(meta[i].key, meta[j].key) == 0)
                return tg__error(TG_ERR_ARG, "tg_safetensors_save: the metadata "
                                 "key '%s' appears twice", meta[i].key);
    }
    return TG_OK;
}

/* data is laid out by decreasing element size (stable), so with the
 * 8-byte aligned header every tensor is aligned to its element size in
 * the file (as the reference writer does, for memory-mapping readers) */
static void assign_offsets(int n, out_entry *e)
{
    uint64_t off = 0;
    for (size_t es = 8; es >= 1; es /= 2) {
        for (int i = 0; i < n; i++) {
            if (tg_dtype_size(e[i].t->dtype) != es)
                continue;
            e[i].begin = off;
            off += (uint64_t)e[i].t->numel * es;
            e[i].end = off;
        }
    }
}

static void header_json(tg_strbuf *b, int n, const out_entry *e, int n_meta,
                        const tg_kv *meta)
{
    tg__strbuf_puts(b, "{");
    bool first = true;
    if (n_meta > 0) {
        tg__strbuf_puts(b, "\"__metadata__\":{");
        for (int i = 0; i < n_meta; i++) {
            if (i)
                tg__strbuf_puts(b, ",");
            tg_json_put_string(b, meta[i].key);
            tg__strbuf_puts(b, ":");
            tg_json_put_string(b, meta[i].value);
        }
        tg__strbuf_puts(b, "}");
        first = false;
    }
    for (int i = 0; i < n; i++) {
        if (!first)
            tg__strbuf_puts(b, ",");
        first = false;
        tg_json_put_string(b, e[i].name);
        tg__strbuf_printf(b, ":{\"dtype\":\"%s\",\"shape\":[",
                         dtype_names[e[i].t->dtype]);
        for (int d = 0; d < e[i].t->ndim; d++)
            tg__strbuf_printf(b, "%s%lld", d ? "," : "", (long long)e[i].t->shape[d]);
        tg__strbuf_printf(b, "],\"data_offsets\":[%llu,%llu]}",
                         (unsigned long long)e[i].begin, (unsigned long long)e[i].end);
    }
    tg__strbuf_puts(b, "}");
    while ((8 + b->len) % 8 != 0) /* spaces are allowed after the JSON */
        tg__strbuf_puts(b, " ");
}

typedef struct writer {
    FILE *f;
    int64_t written;
} writer;

static bool write_bytes(writer *w, const void *p, size_t n)
{
    if (tg__io_fail_after_bytes >= 0 &&
        w->written + (int64_t)n > tg__io_fail_after_bytes) {
        size_t part = (size_t)(tg__io_fail_after_bytes - w->written);
        fwrite(p, 1, part, w->f); /* a partial write, then "disk full" */
        w->written += (int64_t)part;
        errno = ENOSPC;
        return false;
    }
    if (n && fwrite(p, 1, n, w->f) != n)
        return false;
    w->written += (int64_t)n;
    return true;
}

static bool write_tensor(writer *w, tg_tensor *t)
{
    size_t nbytes = (size_t)t->numel * tg_dtype_size(t->dtype);
    if (nbytes == 0)
        return true;
    if (tg_is_contiguous(t))
        return write_bytes(w, tg__base(t), nbytes);
    void *buf = malloc(nbytes);
    if (!buf) {
        errno = ENOMEM;
        return false;
    }
    bool ok = tg_copy_to(t, t->dtype, buf) == TG_OK && write_bytes(w, buf, nbytes);
    free(buf);
    return ok;
}

static tg_status write_file(const char *path, const tg_strbuf *hdr, int n,
                            const out_entry *e)
{
    tg__atomic_file af;
    tg_status s = tg__atomic_begin(&af, path, "tg_safetensors_save");
    if (s != TG_OK)
        return s;
    writer w = {af.f, 0};
    unsigned char len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (unsigned char)((uint64_t)hdr->len >> (8 * i));
    bool ok = write_bytes(&w, len8, 8) && write_bytes(&w, hdr->data, hdr->len);
    /* the data in file order (increasing offsets) */
    for (size_t es = 8; ok && es >= 1; es /= 2)
        for (int i = 0; ok && i < n; i++)
            if (tg_dtype_size(e[i].t->dtype) == es)
                ok = write_tensor(&w, e[i].t);
    return tg__atomic_end(&af, ok, errno, "tg_safetensors_save");
}

tg_status tg_safetensors_save(const char *path, int n, const char *const *names,
                              tg_tensor *const *tensors, int n_meta,
                              const tg_kv *meta)
{
    if (!path || !path[0])
        return tg__error(TG_ERR_ARG, "tg_safetensors_save: the path is NULL or empty");
    tg_status s = check_save_inputs(n, names, tensors, n_meta, meta);
    if (s != TG_OK)
        return s;
    out_entry *e = calloc(n > 0 ? (size_t)n : 1, sizeof *e);
    if (!e)
        return tg__error(TG_ERR_NOMEM, "tg_safetensors_save: out of memory");
    for (int i = 0; i < n; i++) {
        e[i].name = names[i];
        e[i].t = tensors[i];
    }
    assign_offsets(n, e);
    tg_strbuf hdr = {0};
    header_json(&hdr, n, e, n_meta, meta);
    if (hdr.failed)
        s = tg__error(TG_ERR_NOMEM, "tg_safetensors_save: out of memory");
    else
        s = write_file(path, &hdr, n, e);
    tg__strbuf_free(&hdr);
    free(e);
    return s;
}

tg_status tg_safetensors_save_dict(const char *path, const tg_state_dict *sd)
{
    if (!sd)
        return tg__error(TG_ERR_ARG, "tg_safetensors_save_dict: the dict is NULL");
    int n = tg_state_dict_size(sd), nm = tg_state_dict_meta_size(sd);
    const char **names = malloc((size_t)(n + 1) * sizeof *names);
    tg_tensor **ts = malloc((size_t)(n + 1) * sizeof *ts);
    tg_kv *meta = malloc((size_t)(nm + 1) * sizeof *meta);
    tg_status s;
    if (!names || !ts || !meta) {
        s = tg__error(TG_ERR_NOMEM, "tg_safetensors_save_dict: out of memory");
    } else {
        for (int i = 0; i < n; i++) {
            names[i] = tg_state_dict_name(sd, i);
            ts[i] = tg__state_dict_find(sd, names[i]);
        }
        for (int i = 0; i < nm; i++)
            meta[i] = (tg_kv){tg_state_dict_meta_key(sd, i),
                              tg_state_dict_meta_value(sd, i)};
        s = tg_safetensors_save(path, n, names, ts, nm, meta);
    }
    free(names);
    free(ts);
    free(meta);
    return s;
}

/* ==== loading ================================================================== */

/* where the bytes come from: a file or memory */
typedef struct source {
    const char *what; /* the path, for messages */
    FILE *f;
    const unsigned char *mem;
    uint64_t size;
} source;

static bool src_read(const source *s, uint64_t off, void *dst, size_t n)
{
    if (off > s->size || n > s->size - off)
        return false;
    if (s->mem) {
        memcpy(dst, s->mem + off, n);
        return true;
    }
    if (fseeko(s->f, (off_t)off, SEEK_SET) != 0)
        return false;
    return fread(dst, 1, n, s->f) == n;
}

typedef struct in_entry {
    const char *name;
    int dtype;
    int ndim;
    int64_t shape[TG_MAX_DIMS];
    uint64_t begin, end;
} in_entry;

#define BAD(src, ...) bad_file(src, __VA_ARGS__)

static tg_status bad_file(const source *src, const char *fmt, ...) TG_PRINTF(2, 3);
static tg_status bad_file(const source *src, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tg__error(TG_ERR_IO, "safetensors '%s': %s", src->what, msg);
}

static tg_status parse_entry(const source *src, const char *name,
                             const tg_json *v, uint64_t data_len, in_entry *e)
{
    if (v->type != TG_JSON_OBJECT)
        return BAD(src, "the entry of tensor '%s' is not an object", name);
    const tg_json *dt = tg_json_get(v, "dtype"), *sh = tg_json_get(v, "shape"),
                  *off = tg_json_get(v, "data_offsets");
    if (!dt || !sh || !off)
        return BAD(src, "tensor '%s' lacks \"%s\"", name,
                   !dt ? "dtype" : !sh ? "shape" : "data_offsets");
    e->name = name;
    e->dtype = dt->type == TG_JSON_STRING ? dtype_from_name(dt->str) : -1;
    if (e->dtype < 0)
        return BAD(src, "tensor '%s' has unsupported dtype %s%s%s (supported: F32 "
                   "F64 I32 I64 U8 BOOL)", name, dt->type == TG_JSON_STRING ? "\"" : "",
                   dt->type == TG_JSON_STRING ? dt->str : "(not a string)",
                   dt->type == TG_JSON_STRING ? "\"" : "");
    if (sh->type != TG_JSON_ARRAY || sh->n > TG_MAX_DIMS)
        return BAD(src, "tensor '%s': \"shape\" must be an array of at most %d "
                   "sizes", name, TG_MAX_DIMS);
    e->ndim = sh->n;
    uint64_t numel = 1;
    bool overflow = false;
    for (int d = 0; d < sh->n; d++) {
        const tg_json *x = &sh->items[d];
        if (x->type != TG_JSON_NUMBER || !x->is_uint || x->u > (uint64_t)INT64_MAX)
            return BAD(src, "tensor '%s': shape entry %d is not a non-negative "
                       "integer", name, d);
        e->shape[d] = (int64_t)x->u;
        if (x->u && numel > (uint64_t)INT64_MAX / x->u)
            overflow = true;
        numel *= x->u;
    }
    size_t es = tg_dtype_size((tg_dtype)e->dtype);
    if (overflow || numel > (uint64_t)INT64_MAX / es)
        return BAD(src, "tensor '%s': the shape's element count overflows", name);
    if (off->type != TG_JSON_ARRAY || off->n != 2 ||
        off->items[0].type != TG_JSON_NUMBER || !off->items[0].is_uint ||
        off->items[1].type != TG_JSON_NUMBER || !off->items[1].is_uint)
        return BAD(src, "tensor '%s': \"data_offsets\" must be two non-negative "
                   "integers [begin, end]", name);
    e->begin = off->items[0].u;
    e->end = off->items[1].u;
    if (e->begin > e->end)
        return BAD(src, "tensor '%s': data_offsets [%llu, %llu] has begin > end",
                   name, (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end > data_len)
        return BAD(src, "tensor '%s': data_offsets [%llu, %llu] run past the end "
                   "of the data (%llu bytes; the file may be truncated)", name,
                   (unsigned long long)e->begin, (unsigned long long)e->end,
                   (unsigned long long)data_len);
    if (e->end - e->begin != numel * es)
        return BAD(src, "tensor '%s': data_offsets [%llu, %llu] span %llu bytes "
                   "but %s of %llu elements needs %llu", name,
                   (unsigned long long)e->begin, (unsigned long long)e->end,
                   (unsigned long long)(e->end - e->begin), dtype_names[e->dtype],
                   (unsigned long long)numel, (unsigned long long)(numel * es));
    return TG_OK;
}

static int cmp_by_name(const void *a, const void *b)
{
    return strcmp((*(const in_entry *const *)a)->name, (*(const in_entry *const *)b)->name);
}

static int cmp_by_offset(const void *a, const void *b)
{
    const in_entry *x = *(const in_entry *const *)a, *y = *(const in_entry *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* names unique; the ranges tile [0, data_len) exactly: no overlap, no
 * hole, nothing after the last (the format forbids unindexed bytes) */
static tg_status check_layout(const source *src, int n, in_entry *e,
                              uint64_t data_len)
{
    in_entry **ix = malloc((size_t)(n > 0 ? n : 1) * sizeof *ix);
    if (!ix)
        return tg__error(TG_ERR_NOMEM, "safetensors: out of memory");
    for (int i = 0; i < n; i++)
        ix[i] = &e[i];
    tg_status s = TG_OK;
    qsort(ix, (size_t)n, sizeof *ix, cmp_by_name);
    for (int i = 1; i < n && s == TG_OK; i++)
        if (strcmp(ix[i]->name, ix[i - 1]->name) == 0)
            s = BAD(src, "the tensor name '%s' appears twice", ix[i]->name);
    qsort(ix, (size_t)n, sizeof *ix, cmp_by_offset);
    uint64_t at = 0;
    for (int i = 0; i < n && s == TG_OK; i++) {
        if (ix[i]->begin < at)
            s = BAD(src, "tensor '%s' (bytes %llu..%llu) overlaps the previous "
                    "tensor, which ends at %llu", ix[i]->name,
                    (unsigned long long)ix[i]->begin, (unsigned long long)ix[i]->end,
                    (unsigned long long)at);
        else if (ix[i]->begin > at)
            s = BAD(src, "bytes %llu..%llu of the data belong to no tensor",
                    (unsigned long long)at, (unsigned long long)ix[i]->begin);
        at = ix[i]->end;
    }
    if (s == TG_OK && at != data_len)
        s = BAD(src, "the tensors end at byte %llu of the data but the file has "
                "%llu data bytes", (unsigned long long)at, (unsigned long long)data_len);
    free(ix);
    return s;
}

static tg_status parse_metadata(const source *src, const tg_json *v,
                                tg_state_dict *sd)
{
    if (v->type != TG_JSON_OBJECT)
        return BAD(src, "\"__metadata__\" is not an object");
    for (int i = 0; i < v->n; i++) {
        if (v->items[i].type != TG_JSON_STRING)
            return BAD(src, "metadata value of '%s' is not a string", v->keys[i]);
        if (tg_state_dict_meta(sd, v->keys[i]))
            return BAD(src, "the metadata key '%s' appears twice", v->keys[i]);
        tg_status s = tg_state_dict_set_meta(sd, v->keys[i], v->items[i].str);
        if (s != TG_OK)
            return s;
    }
    return TG_OK;
}

static tg_status read_tensor(const source *src, uint64_t data_start,
                             const in_entry *e, tg_state_dict *sd)
{
    tg_tensor *t = tg__alloc((tg_dtype)e->dtype, e->ndim, e->shape);
    if (!t)
        return tg_last_status();
    size_t nbytes = (size_t)(e->end - e->begin);
    if (nbytes && !src_read(src, data_start + e->begin, tg__base(t), nbytes)) {
        tg_release(t);
        return BAD(src, "cannot read the data of tensor '%s' (%zu bytes at offset "
                   "%llu): the file is truncated or unreadable", e->name, nbytes,
                   (unsigned long long)(data_start + e->begin));
    }
    if (e->dtype == TG_BOOL) { /* only 0 and 1 are bools */
        const unsigned char *p = (const unsigned char *)tg__base(t);
        for (size_t i = 0; i < nbytes; i++) {
            if (p[i] > 1) {
                unsigned byte = p[i];
                tg_release(t);
                return BAD(src, "BOOL tensor '%s' holds the byte %u at element %zu "
                           "(only 0 and 1 are valid)", e->name, byte, i);
            }
        }
    }
    return tg__state_dict_add_owned(sd, e->name, t);
}

static tg_state_dict *parse_source(const source *src)
{
    unsigned char len8[8];
    if (src->size < 8 || !src_read(src, 0, len8, 8))
        return BAD(src, "the file has %llu bytes, too few for the 8-byte header "
                   "length", (unsigned long long)src->size), NULL;
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)len8[i] << (8 * i);
    if (hlen > src->size - 8)
        return BAD(src, "the header length %llu is larger than the rest of the file "
                   "(%llu bytes)", (unsigned long long)hlen,
                   (unsigned long long)(src->size - 8)), NULL;
    if (hlen > MAX_HEADER)
        return BAD(src, "the header length %llu exceeds the limit of %llu bytes",
                   (unsigned long long)hlen, (unsigned long long)MAX_HEADER), NULL;
    if (hlen < 2)
        return BAD(src, "the header length %llu is too small for a JSON object",
                   (unsigned long long)hlen), NULL;
    char *text = malloc((size_t)hlen);
    if (!text)
        return tg__error_null(TG_ERR_NOMEM, "safetensors: out of memory for a "
                              "%llu-byte header", (unsigned long long)hlen);
    tg_json *root = NULL;
    in_entry *e = NULL;
    tg_state_dict *sd = NULL;
    tg_status s = TG_OK;
    char jerr[160];
    if (!src_read(src, 8, text, (size_t)hlen))
        s = BAD(src, "cannot read the %llu-byte header", (unsigned long long)hlen);
    else if (text[0] != '{')
        s = BAD(src, "the header does not start with '{' (not a safetensors file?)");
    else if (!(root = tg_json_parse(text, (size_t)hlen, jerr, sizeof jerr)))
        s = BAD(src, "the header is not valid JSON: %s", jerr);
    else if (root->type != TG_JSON_OBJECT)
        s = BAD(src, "the header is not a JSON object");
    uint64_t data_start = 8 + hlen, data_len = src->size - data_start;
    int n = 0;
    if (s == TG_OK) {
        e = calloc((size_t)root->n + 1, sizeof *e);
        sd = tg_state_dict_new();
        if (!e || !sd)
            s = tg__error(TG_ERR_NOMEM, "safetensors: out of memory");
    }
    bool seen_meta = false;
    for (int i = 0; s == TG_OK && i < root->n; i++) {
        if (strcmp(root->keys[i], "__metadata__") == 0) {
            s = seen_meta ? BAD(src, "\"__metadata__\" appears twice")
                          : parse_metadata(src, &root->items[i], sd);
            seen_meta = true;
        } else {
            s = parse_entry(src, root->keys[i], &root->items[i], data_len, &e[n++]);
        }
    }
    if (s == TG_OK)
        s = check_layout(src, n, e, data_len);
    for (int i = 0; s == TG_OK && i < n; i++)
        s = read_tensor(src, data_start, &e[i], sd);
    free(e);
    tg_json_free(root);
    free(text);
    if (s != TG_OK) {
        tg_state_dict_free(sd);
        return NULL;
    }
    return sd;
}

tg_state_dict *tg_safetensors_load(const char *path)
{
    if (!path)
        return tg__error_null(TG_ERR_ARG, "tg_safetensors_load: the path is NULL");
    int64_t size;
    bool not_regular;
    FILE *f = tg__open_regular(path, &size, &not_regular);
    if (!f)
        return not_regular ? tg__error_null(TG_ERR_IO, "safetensors '%s': not a regular file",
                                            path)
                           : tg__error_null(TG_ERR_IO, "safetensors '%s': cannot open: %s",
                                            path, strerror(errno));
    source src = {path, f, NULL, (uint64_t)size};
    tg_state_dict *sd = parse_source(&src);
    fclose(f);
    return sd;
}

tg_state_dict *tg_safetensors_parse(const void *data, size_t len)
{
    if (!data && len)
        return tg__error_null(TG_ERR_ARG, "tg_safetensors_parse: data is NULL");
    source src = {"<memory>", NULL, data ? data : (const void *)"", len};
    return parse_source(&src);
}
