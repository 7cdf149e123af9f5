/* Op attributes: decoding a list against an op's schema into the op's
 * struct (the one place defaults and constraints are applied), deep
 * copies for nodes, and plain lookups for code that reads stored lists. */
#include "ops/op.h"

#include <stdio.h>
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

/* ---- decoding against the schema ------------------------------------------ */
static const char *type_name(tg_attr_type t)
{
    static const char *names[] = {"an int", "a float", "a string", "ints", "floats",
                                  "a tensor", "a graph"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

static tg_status unknown(const tg_op_def *op, const char *name)
{
    char list[256] = "";
    size_t len = 0;
    for (const tg_attr_spec *p = op->attrs.specs; p && p->name && len < sizeof list; p++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                                p->name);
    if (!len)
        return tg__error(TG_ERR_ARG, "%s: unknown attribute '%s' (the op takes none)",
                         op->name, name);
    return tg__error(TG_ERR_ARG, "%s: unknown attribute '%s' (it takes: %s)", op->name,
                     name, list);
}

/* the spec named `name`, or NULL */
static const tg_attr_spec *spec_of(const tg_op_def *op, const char *name)
{
    for (const tg_attr_spec *p = op->attrs.specs; p && p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

static tg_status check_range(const tg_op_def *op, const tg_attr_spec *p, int64_t v)
{
    if ((!p->has_min || v >= p->min) && (!p->has_max || v <= p->max))
        return TG_OK;
    if (p->has_max)
        return tg__error(TG_ERR_ARG, "%s: %s %lld is invalid (expected %lld to %lld)",
                         op->name, p->name, (long long)v, (long long)p->min,
                         (long long)p->max);
    return tg__error(TG_ERR_ARG, "%s: %s %lld is invalid (expected >= %lld)", op->name,
                     p->name, (long long)v, (long long)p->min);
}

static tg_status check_ints(const tg_op_def *op, const tg_attr_spec *p, const int64_t *v,
                            int n)
{
    tg_status s = TG_OK;
    for (int i = 0; i < n && s == TG_OK; i++)
        s = check_range(op, p, v[i]);
    return s;
}

/* writes spec p's field from a (NULL: the default) */
static tg_status set_field(const tg_op_def *op, const tg_attr_spec *p, const tg_attr *a,
                           char *dst)
{
    char *f = dst + p->offset;
    if (!a && p->required)
        return tg__error(TG_ERR_ARG, "%s: attribute '%s' is required", op->name, p->name);
    switch (p->field) {
    case TG_FIELD_INT: {
        int64_t v = a ? a->u.i : p->i;
        memcpy(f, &v, sizeof v);
        return a ? check_range(op, p, v) : TG_OK;
    }
    case TG_FIELD_BOOL:
        *(bool *)f = (a ? a->u.i : p->i) != 0;
        return TG_OK;
    case TG_FIELD_FLOAT: {
        double v = a ? a->u.f : p->f;
        memcpy(f, &v, sizeof v);
        return TG_OK;
    }
    case TG_FIELD_STRING: {
        const char *v = a ? a->u.s : p->s;
        memcpy(f, &v, sizeof v);
        return TG_OK;
    }
    case TG_FIELD_INTS: {
        tg_ints v = {a ? a->u.ints.v : NULL, a ? a->u.ints.n : 0};
        if (v.n < 0 || (v.n > 0 && !v.v))
            return tg__error(TG_ERR_ARG, "%s: %s is %s for %d values", op->name, p->name,
                             v.v ? "given" : "NULL", v.n);
        memcpy(f, &v, sizeof v);
        return check_ints(op, p, v.v, v.n);
    }
    case TG_FIELD_INT_ARRAY:
        if (a && (a->u.ints.n != p->count || !a->u.ints.v))
            return tg__error(TG_ERR_ARG, "%s: %s needs %d values, got %d", op->name,
                             p->name, p->count, a->u.ints.n);
        memcpy(f, a ? a->u.ints.v : p->ints, (size_t)p->count * sizeof(int64_t));
        return a ? check_ints(op, p, a->u.ints.v, p->count) : TG_OK;
    case TG_FIELD_TENSOR: {
        tg_tensor *v = a ? a->u.t : NULL;
        memcpy(f, &v, sizeof v);
        return TG_OK;
    }
    case TG_FIELD_GRAPH: {
        void *v = a ? a->u.g : NULL;
        memcpy(f, &v, sizeof v);
        return TG_OK;
    }
    }
    return tg__error(TG_ERR_INTERNAL, "%s: attribute '%s' has a bad spec", op->name,
                     p->name);
}

/* the most specs a decode matches in one pass (more: found by name) */
#define MAX_SPECS 64

/* spec index of name: the one after `hint` first (callers give the
 * attributes in the specs' order, so one strcmp each), else by search;
 * -1 when none */
static int spec_index(const tg_op_def *op, int n_specs, int hint, const char *name)
{
    if (hint < n_specs && strcmp(op->attrs.specs[hint].name, name) == 0)
        return hint;
    const tg_attr_spec *p = spec_of(op, name);
    return p ? (int)(p - op->attrs.specs) : -1;
}

tg_status tg_attrs_decode(const tg_op_def *op, const tg_attr *attrs, int n, void *dst)
{
    if (n > 0 && !attrs)
        return tg__error(TG_ERR_ARG, "%s: %d attributes given as NULL", op->name, n);
    int n_specs = 0;
    for (const tg_attr_spec *p = op->attrs.specs; p && p->name; p++)
        n_specs++;
    if (n_specs > MAX_SPECS)
        return tg__error(TG_ERR_INTERNAL, "%s: %d attribute specs, more than %d", op->name,
                         n_specs, MAX_SPECS);
    int given[MAX_SPECS]; /* the attribute given for each spec, or -1 */
    for (int j = 0; j < n_specs; j++)
        given[j] = -1;
    /* every given attribute is declared, once, with its declared type */
    for (int i = 0, hint = 0; i < n; i++) {
        int j = spec_index(op, n_specs, hint, attrs[i].name);
        if (j < 0)
            return unknown(op, attrs[i].name);
        const tg_attr_spec *p = &op->attrs.specs[j];
        if (given[j] >= 0)
            return tg__error(TG_ERR_ARG, "%s: attribute '%s' is given twice", op->name,
                             p->name);
        if (attrs[i].type != p->type)
            return tg__error(TG_ERR_ARG, "%s: attribute '%s' must be %s, got %s", op->name,
                             p->name, type_name(p->type), type_name(attrs[i].type));
        given[j] = i;
        hint = j + 1;
    }
    if (!op->attrs.specs)
        return TG_OK;
    memset(dst, 0, op->attrs.size);
    for (int j = 0; j < n_specs; j++) {
        tg_status s = set_field(op, &op->attrs.specs[j], given[j] >= 0 ? &attrs[given[j]] : NULL,
                                dst);
        if (s != TG_OK)
            return s;
    }
    return TG_OK;
}

void *tg__attrs_decode_copy(const tg_op_def *op, const tg_attr *copy, int n,
                            tg_status *s)
{
    *s = TG_OK;
    if (!op->attrs.specs)
        return NULL;
    void *d = malloc(op->attrs.size ? op->attrs.size : 1);
    if (!d) {
        *s = tg__error(TG_ERR_NOMEM, "%s: out of memory decoding attributes", op->name);
        return NULL;
    }
    if ((*s = tg_attrs_decode(op, copy, n, d)) != TG_OK) {
        free(d);
        return NULL;
    }
    return d;
}
