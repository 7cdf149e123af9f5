/* Little-endian binary records (see wire.h). */
#include "io/wire.h"
#include "core/size_math.h"
#include "ops/elementwise.h"

#include <stdlib.h>
#include <string.h>

#define MAX_STRING (1u << 20)

/* ---- writing ---------------------------------------------------------------------- */
void tg__wire_put(tg_strbuf *b, const void *p, size_t n) { tg__strbuf_append(b, p, n); }

void tg__wire_u8(tg_strbuf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    tg__wire_put(b, &x, 1);
}

void tg__wire_u32(tg_strbuf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    tg__wire_put(b, x, 4);
}

void tg__wire_u64(tg_strbuf *b, uint64_t v)
{
    tg__wire_u32(b, (uint32_t)v);
    tg__wire_u32(b, (uint32_t)(v >> 32));
}

void tg__wire_f64(tg_strbuf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    tg__wire_u64(b, u);
}

void tg__wire_str(tg_strbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    tg__wire_u32(b, (uint32_t)n);
    tg__wire_put(b, s, n);
}

void tg__wire_meta(tg_strbuf *b, tg_dtype dt, int ndim, const int64_t *shape)
{
    tg__wire_u8(b, (unsigned)dt);
    tg__wire_u8(b, (unsigned)ndim);
    for (int i = 0; i < ndim; i++)
        tg__wire_u64(b, (uint64_t)shape[i]);
}

/* the library runs on little-endian machines only: elements go as they are */
tg_status tg__wire_tensor(tg_strbuf *b, const tg_tensor *t)
{
    tg_tensor *c = tg__alloc(t->dtype, t->ndim, t->shape);
    if (!c)
        return tg_last_status();
    tg__convert_into(c, t);
    size_t n = (size_t)tg__shape_numel(t->ndim, t->shape) * tg_dtype_size(t->dtype);
    tg__wire_meta(b, t->dtype, t->ndim, t->shape);
    tg__wire_u64(b, n);
    tg__wire_put(b, tg__base(c), n);
    tg_release(c);
    return TG_OK;
}

/* ---- reading ---------------------------------------------------------------------- */
bool tg__wire_fail(tg_wire_reader *r, const char *msg, const char *detail)
{
    if (!r->failed)
        tg__error(TG_ERR_IO, "%s: byte %zu: %s%s", r->what, r->off, msg, detail ? detail : "");
    r->failed = true;
    return false;
}

static bool out_of_memory(tg_wire_reader *r)
{
    if (!r->failed)
        tg__error(TG_ERR_NOMEM, "%s: out of memory", r->what);
    r->failed = true;
    return false;
}

bool tg__wire_take(tg_wire_reader *r, void *out, size_t n)
{
    if (r->failed || n > r->len - r->off) {
        tg__wire_fail(r, "truncated", NULL);
        memset(out, 0, n);
        return false;
    }
    memcpy(out, r->p + r->off, n);
    r->off += n;
    return true;
}

unsigned tg__wire_get_u8(tg_wire_reader *r)
{
    uint8_t x = 0;
    tg__wire_take(r, &x, 1);
    return x;
}

uint32_t tg__wire_get_u32(tg_wire_reader *r)
{
    uint8_t x[4] = {0};
    tg__wire_take(r, x, 4);
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

uint64_t tg__wire_get_u64(tg_wire_reader *r)
{
    uint64_t lo = tg__wire_get_u32(r);
    return lo | (uint64_t)tg__wire_get_u32(r) << 32;
}

double tg__wire_get_f64(tg_wire_reader *r)
{
    uint64_t u = tg__wire_get_u64(r);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

uint32_t tg__wire_get_count(tg_wire_reader *r, size_t min_size)
{
    uint32_t n = tg__wire_get_u32(r);
    if (!r->failed && (size_t)n * min_size > r->len - r->off)
        tg__wire_fail(r, "a count larger than the bytes left", NULL);
    return r->failed ? 0 : n;
}

char *tg__wire_get_str(tg_wire_reader *r)
{
    uint32_t n = tg__wire_get_u32(r);
    if (!r->failed && (n > MAX_STRING || n > r->len - r->off))
        tg__wire_fail(r, "a string longer than the bytes left", NULL);
    if (r->failed)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) {
        out_of_memory(r);
        return NULL;
    }
    tg__wire_take(r, s, n);
    s[n] = '\0';
    if (strlen(s) != n) {
        free(s);
        tg__wire_fail(r, "a string with a NUL byte", NULL);
        return NULL;
    }
    return s;
}

bool tg__wire_get_meta(tg_wire_reader *r, tg_meta *m, bool unknown_ok)
{
    unsigned dt = tg__wire_get_u8(r), nd = tg__wire_get_u8(r);
    if (!r->failed && dt >= TG_NUM_DTYPES)
        return tg__wire_fail(r, "an unknown dtype", NULL);
    if (!r->failed && nd > TG_MAX_DIMS)
        return tg__wire_fail(r, "more dims than a tensor has", NULL);
    m->dtype = (tg_dtype)dt;
    m->ndim = (int)nd;
    for (unsigned i = 0; i < nd && !r->failed; i++) {
        int64_t d = (int64_t)tg__wire_get_u64(r);
        if (!r->failed && (d < (unknown_ok ? -1 : 0) || d > ((int64_t)1 << 40)))
            return tg__wire_fail(r, "a dim out of range", NULL);
        m->shape[i] = d;
    }
    /* each dim is in range, but eight of them can multiply past int64:
     * the known dims other than 0 must multiply within the bound every
     * size is checked against (so tg__shape_numel cannot overflow) */
    int64_t n = 1;
    for (unsigned i = 0; i < nd && !r->failed; i++)
        if (m->shape[i] > 0) {
            if (tg__size_mul_exceeds(n, m->shape[i], TG_SIZE_MAX))
                return tg__wire_fail(r, "a shape of more elements than a tensor can have",
                                     NULL);
            n *= m->shape[i];
        }
    return !r->failed;
}

tg_tensor *tg__wire_get_tensor(tg_wire_reader *r)
{
    tg_meta m;
    if (!tg__wire_get_meta(r, &m, false))
        return NULL;
    uint64_t n = tg__wire_get_u64(r);
    double want = (double)tg__shape_numel(m.ndim, m.shape) * (double)tg_dtype_size(m.dtype);
    if (!r->failed && (double)n != want)
        tg__wire_fail(r, "a tensor whose byte count does not match its shape", NULL);
    else if (!r->failed && n > r->len - r->off)
        tg__wire_fail(r, "truncated tensor data", NULL);
    if (r->failed)
        return NULL;
    tg_tensor *t = tg__alloc(m.dtype, m.ndim, m.shape);
    if (!t) {
        r->failed = true;
        return NULL;
    }
    tg__wire_take(r, tg__base(t), (size_t)n);
    return t;
}

bool tg__wire_end(tg_wire_reader *r)
{
    if (!r->failed && r->off != r->len)
        tg__wire_fail(r, "bytes after the end", NULL);
    return !r->failed;
}
