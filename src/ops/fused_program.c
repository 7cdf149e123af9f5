/* Fused elementwise programs as text: parsing (with the sub-ops' own
 * attribute schemas, so a program is checked like any op call),
 * formatting (what the fusion passes write), the scratch-slot assignment
 * the interpreter uses, and inference through the sub-ops' own infer. */
#include "ops/fused.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tg__fused_op_ok(const tg_op_def *op, const tg_attr *attrs, int n_attrs)
{
    if (!op || !(op->flags & TG_OP_PURE) || !(op->flags & TG_OP_ELEMENTWISE) ||
        op->n_out != 1 || op->make_view || !op->kernel[TG_CPU] || op->n_in < 1 ||
        op->n_in > 4) /* regions of 16 ops keep within 64 inputs */
        return false;
    for (int i = 0; i < n_attrs; i++)
        if (attrs[i].type != TG_ATTR_INT && attrs[i].type != TG_ATTR_FLOAT &&
            attrs[i].type != TG_ATTR_INTS)
            return false;
    return true;
}

static bool cat(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    if (*pos >= len)
        return false;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= len - *pos)
        return false;
    *pos += (size_t)k;
    return true;
}

bool tg__fused_format(char *buf, size_t len, size_t *pos, const tg_op_def *op,
                      const tg_attr *attrs, int n_attrs, int n_args, const int *args)
{
    bool ok = cat(buf, len, pos, "%s", op->name);
    for (int i = 0; ok && i < n_attrs; i++) {
        const tg_attr *a = &attrs[i];
        ok = cat(buf, len, pos, "%s%s=", i ? ", " : "[", a->name);
        if (a->type == TG_ATTR_INT)
            ok = ok && cat(buf, len, pos, "%lld", (long long)a->u.i);
        else if (a->type == TG_ATTR_FLOAT) /* 17 digits: the double exactly */
            ok = ok && cat(buf, len, pos, "%.17g", a->u.f);
        else if (a->type == TG_ATTR_INTS) {
            ok = ok && cat(buf, len, pos, "[");
            for (int k = 0; ok && k < a->u.ints.n; k++)
                ok = cat(buf, len, pos, k ? ", %lld" : "%lld", (long long)a->u.ints.v[k]);
            ok = ok && cat(buf, len, pos, "]");
        } else
            ok = false;
    }
    if (ok && n_attrs)
        ok = cat(buf, len, pos, "]");
    ok = ok && cat(buf, len, pos, "(");
    for (int i = 0; ok && i < n_args; i++)
        ok = args[i] >= 0 ? cat(buf, len, pos, "%s%%%d", i ? ", " : "", args[i])
                          : cat(buf, len, pos, "%s$%d", i ? ", " : "", -1 - args[i]);
    return ok && cat(buf, len, pos, ")");
}

void tg__fused_free(tg_fused_prog *p)
{
    for (int k = 0; k < p->n; k++) {
        tg_fused_instr *in = &p->ins[k];
        for (int i = 0; i < in->n_attrs; i++) {
            free((char *)in->attrs[i].name);
            if (in->attrs[i].type == TG_ATTR_INTS)
                free((int64_t *)in->attrs[i].u.ints.v);
        }
        free(in->attrs);
        free(in->attr);
    }
    p->n = 0;
}

/* ---- parsing ---------------------------------------------------------------------- */
typedef struct parser {
    const char *who, *text, *s;
} parser;

static void skip(parser *P)
{
    while (isspace((unsigned char)*P->s))
        P->s++;
}

static tg_status fail(const parser *P, const char *what)
{
    return tg__error(TG_ERR_ARG, "%s: program: %s at offset %d of \"%s\"", P->who, what,
                     (int)(P->s - P->text), P->text);
}

static bool eat(parser *P, char c)
{
    skip(P);
    if (*P->s != c)
        return false;
    P->s++;
    return true;
}

/* an identifier into buf */
static bool ident(parser *P, char *buf, size_t len)
{
    skip(P);
    size_t n = 0;
    while ((isalnum((unsigned char)P->s[n]) || P->s[n] == '_') && n + 1 < len)
        n++;
    if (n == 0 || isalnum((unsigned char)P->s[n]) || P->s[n] == '_')
        return false;
    memcpy(buf, P->s, n);
    buf[n] = 0;
    P->s += n;
    return true;
}

static const tg_attr_spec *spec_of(const tg_op_def *op, const char *name)
{
    for (const tg_attr_spec *sp = op->attrs.specs; sp && sp->name; sp++)
        if (!strcmp(sp->name, name))
            return sp;
    return NULL;
}

static tg_status parse_value(parser *P, const tg_attr_spec *sp, tg_attr *a)
{
    skip(P);
    char *end;
    a->type = sp->type;
    if (sp->type == TG_ATTR_INT) {
        a->u.i = strtoll(P->s, &end, 10);
    } else if (sp->type == TG_ATTR_FLOAT) {
        a->u.f = strtod(P->s, &end);
    } else if (sp->type == TG_ATTR_INTS) {
        if (!eat(P, '['))
            return fail(P, "expected '['");
        int64_t *v = malloc(TG_MAX_DIMS * 2 * sizeof *v);
        int n = 0;
        if (!v)
            return tg__error(TG_ERR_NOMEM, "%s: out of memory", P->who);
        a->u.ints.v = v;
        a->u.ints.n = 0;
        while (!eat(P, ']')) {
            if (n && !eat(P, ','))
                return fail(P, "expected ',' or ']'");
            skip(P);
            if (n == TG_MAX_DIMS * 2)
                return fail(P, "too many ints");
            v[n++] = strtoll(P->s, &end, 10);
            if (end == P->s)
                return fail(P, "expected an integer");
            P->s = end;
            a->u.ints.n = n;
        }
        return TG_OK;
    } else {
        return fail(P, "unsupported attribute type");
    }
    if (end == P->s)
        return fail(P, "expected a number");
    P->s = end;
    return TG_OK;
}

static tg_status parse_attrs(parser *P, tg_fused_instr *in)
{
    if (!eat(P, '['))
        return TG_OK;
    int cap = 0;
    for (const tg_attr_spec *sp = in->op->attrs.specs; sp && sp->name; sp++)
        cap++;
    if (!(in->attrs = calloc((size_t)cap + 1, sizeof *in->attrs)))
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", P->who);
    do {
        char name[64];
        if (!ident(P, name, sizeof name))
            return fail(P, "expected an attribute name");
        const tg_attr_spec *sp = spec_of(in->op, name);
        if (!sp)
            return fail(P, "unknown attribute");
        if (in->n_attrs == cap)
            return fail(P, "repeated attribute");
        tg_attr *a = &in->attrs[in->n_attrs];
        if (!(a->name = strdup(name)))
            return tg__error(TG_ERR_NOMEM, "%s: out of memory", P->who);
        in->n_attrs++;
        if (!eat(P, '='))
            return fail(P, "expected '='");
        tg_status s = parse_value(P, sp, a);
        if (s != TG_OK)
            return s;
    } while (eat(P, ','));
    return eat(P, ']') ? TG_OK : fail(P, "expected ']'");
}

/* a producer (the first instruction of fused_epilogue): any pure op with
 * one output and a CPU kernel */
static bool producer_ok(const tg_op_def *op, const tg_attr *attrs, int n_attrs)
{
    if (!op || !(op->flags & TG_OP_PURE) || op->n_out != 1 || op->make_view ||
        !op->kernel[TG_CPU])
        return false;
    for (int i = 0; i < n_attrs; i++)
        if (attrs[i].type != TG_ATTR_INT && attrs[i].type != TG_ATTR_FLOAT &&
            attrs[i].type != TG_ATTR_INTS)
            return false;
    return true;
}

static tg_status parse_instr(parser *P, int k, int n_in, bool any, tg_fused_instr *in)
{
    char name[64];
    if (!ident(P, name, sizeof name))
        return fail(P, "expected an op name");
    in->op = tg_op_find(name);
    if (!in->op)
        return fail(P, "unknown op");
    tg_status s = parse_attrs(P, in);
    if (s != TG_OK)
        return s;
    if (any ? !producer_ok(in->op, in->attrs, in->n_attrs)
            : !tg__fused_op_ok(in->op, in->attrs, in->n_attrs))
        return fail(P, any ? "not an op a producer may be"
                           : "not an elementwise op a program may use");
    if (!eat(P, '('))
        return fail(P, "expected '('");
    while (!eat(P, ')')) {
        if (in->n_args && !eat(P, ','))
            return fail(P, "expected ',' or ')'");
        skip(P);
        char kind = *P->s;
        if (kind != '%' && kind != '$')
            return fail(P, "expected %i (an input) or $k (a result)");
        char *end;
        long v = strtol(P->s + 1, &end, 10);
        if (end == P->s + 1 || v < 0 || (kind == '%' && v >= n_in) || (kind == '$' && v >= k))
            return fail(P, kind == '%' ? "no such input" : "no such earlier result");
        if (in->n_args == TG_FUSED_MAX_ARGS)
            return fail(P, "too many operands");
        in->args[in->n_args++] = kind == '%' ? (int)v : -1 - (int)v;
        P->s = end;
    }
    if (in->op->n_in >= 0 ? in->n_args != in->op->n_in : in->n_args < 1)
        return fail(P, "wrong number of operands");
    if (in->op->attrs.size) {
        if (!(in->attr = calloc(1, in->op->attrs.size)))
            return tg__error(TG_ERR_NOMEM, "%s: out of memory", P->who);
        if ((s = tg_attrs_decode(in->op, in->attrs, in->n_attrs, in->attr)) != TG_OK) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s", tg_last_error());
            return tg__error(s, "%s: program: %s", P->who, msg);
        }
    } else if (in->n_attrs) {
        return fail(P, "the op takes no attributes");
    }
    return TG_OK;
}

/* scratch slots: a result's slot is free again after its last reader, and
 * never shared with an operand of the instruction writing it */
void tg__fused_slots(tg_fused_prog *p, const int64_t *keep, int n_keep)
{
    int last[TG_FUSED_MAX_INSTRS], free_slots[TG_FUSED_MAX_INSTRS], n_free = 0;
    for (int k = 0; k < p->n; k++)
        last[k] = k;
    for (int k = 0; k < p->n; k++)
        for (int a = 0; a < p->ins[k].n_args; a++)
            if (p->ins[k].args[a] < 0)
                last[-1 - p->ins[k].args[a]] = k;
    for (int i = 0; i < n_keep; i++)
        if (keep[i] >= 0 && keep[i] < p->n)
            last[keep[i]] = p->n;
    p->n_slots = 0;
    for (int k = 0; k < p->n; k++) {
        tg_fused_instr *in = &p->ins[k];
        in->slot = n_free ? free_slots[--n_free] : p->n_slots++;
        for (int a = 0; a < in->n_args; a++) {
            int j = in->args[a] < 0 ? -1 - in->args[a] : -1;
            bool dup = false; /* an operand repeated: free its slot once */
            for (int b = 0; b < a; b++)
                dup |= in->args[b] == in->args[a];
            if (j >= 0 && last[j] == k && !dup)
                free_slots[n_free++] = p->ins[j].slot;
        }
        if (last[k] == k) /* read by nobody */
            free_slots[n_free++] = in->slot;
    }
}

tg_status tg__fused_parse(const char *who, const char *text, int n_in, const int64_t *keep,
                          int n_keep, bool producer, tg_fused_prog *p)
{
    memset(p, 0, sizeof *p);
    parser P = {who, text ? text : "", text ? text : ""};
    tg_status s = TG_OK;
    do {
        if (p->n == TG_FUSED_MAX_INSTRS) {
            s = fail(&P, "too many instructions");
            break;
        }
        p->n++;
        s = parse_instr(&P, p->n - 1, n_in, producer && p->n == 1, &p->ins[p->n - 1]);
    } while (s == TG_OK && eat(&P, ';'));
    skip(&P);
    if (s == TG_OK && *P.s)
        s = fail(&P, "unexpected text");
    for (int i = 0; s == TG_OK && i < n_keep; i++)
        if (keep[i] < 0 || keep[i] >= p->n)
            s = tg__error(TG_ERR_ARG, "%s: result %lld is not an instruction of the "
                          "program", who, (long long)keep[i]);
    if (s != TG_OK) {
        tg__fused_free(p);
        return s;
    }
    tg__fused_slots(p, keep, n_keep);
    return TG_OK;
}

/* ---- inference ---------------------------------------------------------------------- */
/* a result as the next instructions' infer sees it: metadata, no storage
 * (on the stack: this runs at every fused kernel call) */
static void meta_tensor(tg_tensor *t, const tg_meta *m)
{
    memset(t, 0, sizeof *t);
    t->refcount = 1;
    t->dtype = m->dtype;
    t->ndim = m->ndim;
    memcpy(t->shape, m->shape, (size_t)m->ndim * sizeof *m->shape);
    tg__contiguous_strides(t->ndim, t->shape, t->strides);
    t->numel = tg__shape_numel(t->ndim, t->shape);
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] < 0)
            t->numel = -1; /* unknown dims (-1), as tg__tensor_struct marks them */
}

tg_status tg__fused_infer(const char *who, const tg_fused_prog *p, int n_in,
                          tg_tensor *const *in, tg_meta *out)
{
    tg_tensor res[TG_FUSED_MAX_INSTRS];
    (void)n_in;
    for (int k = 0; k < p->n; k++) {
        const tg_fused_instr *I = &p->ins[k];
        tg_tensor *args[TG_FUSED_MAX_ARGS];
        for (int a = 0; a < I->n_args; a++)
            args[a] = I->args[a] >= 0 ? in[I->args[a]] : &res[-1 - I->args[a]];
        tg_op_ctx c = {.op = I->op, .n_in = I->n_args, .n_out = 1, .in = args,
                       .attr = I->attr, .attrs = I->attrs, .n_attrs = I->n_attrs};
        tg_status s = I->op->infer(&c);
        if (s != TG_OK) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s", tg_last_error());
            return tg__error(s, "%s: instruction %d: %s", who, k, msg);
        }
        out[k] = c.out_meta[0];
        meta_tensor(&res[k], &out[k]);
    }
    return TG_OK;
}
