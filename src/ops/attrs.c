/* Typed op attributes (ONNX-like): lookups with defaults, deep copies. */
#include "ops/op.h"

#include <stdlib.h>
#include <string.h>

static const tg_attr *find(const tg_attr *a, int n, const char *name,
                           tg_attr_type type)
{
    for (int i = 0; i < n; i++)
        if (a[i].type == type && strcmp(a[i].name, name) == 0)
            return &a[i];
    return NULL;
}

int64_t tg_attr_int(const tg_attr *a, int n, const char *name, int64_t dflt)
{
    const tg_attr *x = find(a, n, name, TG_ATTR_INT);
    return x ? x->u.i : dflt;
}

double tg_attr_float(const tg_attr *a, int n, const char *name, double dflt)
{
    const tg_attr *x = find(a, n, name, TG_ATTR_FLOAT);
    return x ? x->u.f : dflt;
}

int tg_attr_ints(const tg_attr *a, int n, const char *name, const int64_t **v)
{
    const tg_attr *x = find(a, n, name, TG_ATTR_INTS);
    *v = x ? x->u.ints.v : NULL;
    return x ? x->u.ints.n : 0;
}

/* one block: the attr array, then the arrays and strings they point to */
tg_attr *tg_attrs_copy(const tg_attr *a, int n)
{
    if (n == 0)
        return NULL;
    size_t size = (size_t)n * sizeof(tg_attr);
    for (int i = 0; i < n; i++) {
        size += strlen(a[i].name) + 1;
        if (a[i].type == TG_ATTR_INTS)
            size += (size_t)a[i].u.ints.n * sizeof(int64_t) + 8;
        else if (a[i].type == TG_ATTR_FLOATS)
            size += (size_t)a[i].u.floats.n * sizeof(double) + 8;
        else if (a[i].type == TG_ATTR_STRING)
            size += strlen(a[i].u.s) + 1;
    }
    tg_attr *out = malloc(size);
    if (!out)
        return tg__error_null(TG_ERR_NOMEM, "out of memory copying attributes");
    memcpy(out, a, (size_t)n * sizeof(tg_attr));
    char *p = (char *)(out + n);
    for (int i = 0; i < n; i++) {
        if (out[i].type == TG_ATTR_INTS || out[i].type == TG_ATTR_FLOATS) {
            p = (char *)(((uintptr_t)p + 7) & ~(uintptr_t)7);
            size_t len = (size_t)a[i].u.ints.n * 8;
            if (len)
                memcpy(p, a[i].u.ints.v, len);
            out[i].u.ints.v = (const int64_t *)p; /* same layout for floats */
            p += len;
        }
    }
    for (int i = 0; i < n; i++) {
        size_t len = strlen(a[i].name) + 1;
        memcpy(p, a[i].name, len);
        out[i].name = p;
        p += len;
        if (a[i].type == TG_ATTR_STRING) {
            len = strlen(a[i].u.s) + 1;
            memcpy(p, a[i].u.s, len);
            out[i].u.s = p;
            p += len;
        }
    }
    return out;
}
