/* The value store of an ONNX build (values.h): per value id a tensor, a
 * sequence of tensors or none; released at the value's last use. */
#include "onnx/values.h"

#include "core/status_impl.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

onnx_seq *onnx_seq_new(tg_dtype dt)
{
    onnx_seq *s = calloc(1, sizeof *s);
    if (!s)
        return tg__error_null(TG_ERR_NOMEM, "onnx: out of memory");
    s->dtype = dt;
    s->known = true;
    return s;
}

tg_status onnx_seq_insert(onnx_seq *s, int pos, tg_tensor *t)
{
    if (tg_dtype_of(t) != s->dtype)
        return tg__error(TG_ERR_IO, "a %s tensor cannot join a sequence of %s tensors",
                         tg_dtype_name(tg_dtype_of(t)), tg_dtype_name(s->dtype));
    if (s->n >= ONNX_MAX_SEQ)
        return tg__error(TG_ERR_UNSUPPORTED, "a sequence may hold at most %d tensors",
                         ONNX_MAX_SEQ);
    if (pos < 0 || pos > s->n)
        return tg__error(TG_ERR_INTERNAL, "onnx: sequence position %d of %d", pos, s->n);
    if (!TG_GROW(s->elem, s->cap, s->n + 1))
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    memmove(s->elem + pos + 1, s->elem + pos, (size_t)(s->n - pos) * sizeof *s->elem);
    s->elem[pos] = tg_retain(t);
    s->n++;
    return TG_OK;
}

tg_status onnx_seq_push(onnx_seq *s, tg_tensor *t) { return onnx_seq_insert(s, s->n, t); }

onnx_seq *onnx_seq_copy(const onnx_seq *s)
{
    onnx_seq *c = onnx_seq_new(s->dtype);
    for (int i = 0; c && i < s->n; i++)
        if (onnx_seq_push(c, s->elem[i]) != TG_OK) {
            onnx_seq_free(c);
            return NULL;
        }
    if (c)
        c->known = s->known;
    return c;
}

void onnx_seq_free(onnx_seq *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        tg_release(s->elem[i]);
    free(s->elem);
    free(s);
}

tg_status onnx_values_init(onnx_values *vs, int n)
{
    memset(vs, 0, sizeof *vs);
    vs->t = calloc((size_t)n + 1, sizeof *vs->t);
    vs->known = calloc((size_t)n + 1, sizeof *vs->known);
    vs->seq = calloc((size_t)n + 1, sizeof *vs->seq);
    vs->none = calloc((size_t)n + 1, sizeof *vs->none);
    vs->dims = calloc((size_t)n + 1, sizeof *vs->dims);
    vs->n = n;
    if (!vs->t || !vs->known || !vs->seq || !vs->none || !vs->dims) {
        onnx_values_free(vs);
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    }
    return TG_OK;
}

void onnx_values_free(onnx_values *vs)
{
    for (int v = 0; vs->t && vs->seq && v < vs->n; v++)
        onnx_values_drop(vs, v);
    free(vs->t);
    free(vs->known);
    free(vs->seq);
    free(vs->none);
    free(vs->dims);
    memset(vs, 0, sizeof *vs);
}

bool onnx_values_has(const onnx_values *vs, int v)
{
    return v >= 0 && v < vs->n && (vs->t[v] || vs->seq[v] || vs->none[v]);
}

void onnx_values_drop(onnx_values *vs, int v)
{
    tg_release(vs->t[v]);
    onnx_seq_free(vs->seq[v]);
    tg_release(vs->dims[v]);
    vs->t[v] = NULL;
    vs->seq[v] = NULL;
    vs->dims[v] = NULL;
    vs->none[v] = false;
}

void onnx_values_set_tensor(onnx_values *vs, int v, tg_tensor *t, bool known)
{
    tg_tensor *keep = tg_retain(t); /* t may be what the slot holds */
    onnx_values_drop(vs, v);
    vs->t[v] = keep;
    vs->known[v] = known;
}

void onnx_values_set_seq(onnx_values *vs, int v, onnx_seq *s)
{
    onnx_values_drop(vs, v);
    vs->seq[v] = s;
    vs->known[v] = s && s->known;
}

void onnx_values_set_none(onnx_values *vs, int v)
{
    onnx_values_drop(vs, v);
    vs->none[v] = true;
    vs->known[v] = true;
}
