/* Printing tensors like numpy/PyTorch: nested brackets, aligned columns,
 * elided with "..." past 1000 elements (three items at each edge). */
#include "core/tensor_impl.h"
#include "tg/autograd.h"
#include "tg/graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ELIDE_THRESHOLD 1000
#define EDGE 3

typedef struct buf {
    char *s;
    size_t len, cap;
    bool failed;
} buf;

static void put(buf *b, const char *fmt, ...) TG_PRINTF(2, 3);
static void put(buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

typedef struct fmt {
    bool is_float, is_bool, all_int, sci;
    int width, prec;
} fmt;

/* formats one value according to the style chosen for the whole tensor */
static void format_value(char *out, size_t n, const fmt *f, double v)
{
    if (f->is_bool)
        snprintf(out, n, "%s", v != 0 ? "True" : "False");
    else if (!f->is_float)
        snprintf(out, n, "%.0f", v);
    else if (isnan(v))
        snprintf(out, n, "nan");
    else if (isinf(v))
        snprintf(out, n, v > 0 ? "inf" : "-inf");
    else if (f->sci)
        snprintf(out, n, "%.*e", f->prec, v);
    else if (f->all_int)
        snprintf(out, n, "%.0f.", v);
    else
        snprintf(out, n, "%.*f", f->prec, v);
}

static bool shown(const tg_tensor *t, int axis, int64_t i, bool elide)
{
    return !elide || t->shape[axis] <= 2 * EDGE || i < EDGE ||
           i >= t->shape[axis] - EDGE;
}

static void choose_format(const tg_tensor *t, bool elide, fmt *f)
{
    f->is_float = tg_dtype_is_float(t->dtype);
    f->is_bool = t->dtype == TG_BOOL;
    f->all_int = true;
    f->prec = 4;
    double amax = 0, amin = INFINITY;
    for (int64_t i = 0; i < t->numel; i++) {
        (void)elide;
        double v = tg__load(t->dtype, tg__elem_ptr(t, i));
        if (!isfinite(v))
            continue;
        if (v != floor(v))
            f->all_int = false;
        amax = fmax(amax, fabs(v));
        if (v != 0)
            amin = fmin(amin, fabs(v));
    }
    f->sci = f->is_float && (amax >= 1e8 || (amin < 1e-4 && amin > 0));
    f->width = 1;
    char tmp[64];
    for (int64_t i = 0; i < t->numel; i++) {
        format_value(tmp, sizeof tmp, f, tg__load(t->dtype, tg__elem_ptr(t, i)));
        int w = (int)strlen(tmp);
        if (w > f->width)
            f->width = w;
    }
}

static void print_rec(buf *b, const tg_tensor *t, int axis, int64_t off,
                      const fmt *f, bool elide, int indent)
{
    size_t es = tg_dtype_size(t->dtype);
    if (axis == t->ndim) {
        char tmp[64];
        format_value(tmp, sizeof tmp, f,
                     tg__load(t->dtype, tg__base(t) + off * (int64_t)es));
        put(b, "%*s", f->width, tmp);
        return;
    }
    put(b, "[");
    bool dots = false;
    for (int64_t i = 0; i < t->shape[axis]; i++) {
        if (!shown(t, axis, i, elide)) {
            if (!dots)
                put(b, axis == t->ndim - 1 ? ", ..." : ",\n%*s...", indent + 1, "");
            dots = true;
            continue;
        }
        if (i > 0) {
            if (axis == t->ndim - 1)
                put(b, ", ");
            else
                put(b, ",%s%*s", t->ndim - axis > 2 ? "\n\n" : "\n", indent + 1, "");
        }
        print_rec(b, t, axis + 1, off + i * t->strides[axis], f, elide, indent + 1);
    }
    put(b, "]");
}

char *tg_to_string(const tg_tensor *t)
{
    buf b = {0};
    if (!t) {
        put(&b, "tensor(NULL)");
        return b.s;
    }
    if (t->graph) { /* symbolic: no data, describe it (as TF prints Tensors) */
        char shape[160];
        put(&b, "tensor(<symbolic '%s' of graph '%s'>, shape=%s, dtype=%s)",
            tg_graph_node_name(t), tg_graph_name(t->graph),
            tg_shape_str(t->ndim, t->shape, shape, sizeof shape),
            tg_dtype_name(t->dtype));
        return b.s;
    }
    bool elide = t->numel > ELIDE_THRESHOLD;
    fmt f;
    choose_format(t, elide, &f);
    put(&b, "tensor(");
    print_rec(&b, t, 0, 0, &f, elide, 7);
    if (t->dtype != TG_FLOAT32 && t->dtype != TG_INT64 && t->dtype != TG_BOOL)
        put(&b, ", dtype=%s", tg_dtype_name(t->dtype));
    if (t->grad_fn)
        put(&b, ", grad_fn=<%s>", tg_grad_fn_name(t));
    else if (t->requires_grad)
        put(&b, ", requires_grad=True");
    put(&b, ")");
    if (b.failed) {
        free(b.s);
        return tg__error_null(TG_ERR_NOMEM, "tg_to_string: out of memory");
    }
    return b.s;
}

void tg_fprint(FILE *out, const tg_tensor *t)
{
    char *s = tg_to_string(t);
    if (s) {
        fprintf(out, "%s\n", s);
        free(s);
    }
}

void tg_print(const tg_tensor *t) { tg_fprint(stdout, t); }
