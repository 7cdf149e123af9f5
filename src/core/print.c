/* Printing tensors as PyTorch does: nested brackets, right-aligned columns,
 * rows wrapped at 80 columns, elided with "..." past 1000 elements (three
 * items at each edge), the format chosen from the items shown. */
#include "core/tensor_impl.h"
#include "tg/autograd.h"
#include "tg/graph.h"
#include "util/strbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ELIDE_THRESHOLD 1000
#define EDGE 3
#define LINE_WIDTH 80
#define PREFIX "tensor("

/* the style chosen for the whole tensor (PyTorch's _Formatter) */
typedef struct fmt {
    bool is_float, is_bool;
    bool int_mode; /* every finite float is a whole number: "3." */
    bool sci;      /* "3.0000e+00" */
    int width;
    /* scratch while scanning */
    double nz_min, nz_max;
} fmt;

/* integers are printed from their exact value, not through double */
static long long load_int(tg_dtype dt, const void *p)
{
    switch (dt) {
    case TG_INT32: return *(const int32_t *)p;
    case TG_INT64: return *(const int64_t *)p;
    default: return *(const uint8_t *)p;
    }
}

static void format_value(char *out, size_t n, const fmt *f, tg_dtype dt,
                         const void *p)
{
    if (f->is_bool) {
        snprintf(out, n, "%s", *(const uint8_t *)p ? "True" : "False");
        return;
    }
    if (!f->is_float) {
        snprintf(out, n, "%lld", load_int(dt, p));
        return;
    }
    double v = tg__load(dt, p);
    if (isnan(v))
        snprintf(out, n, "nan");
    else if (isinf(v))
        snprintf(out, n, v > 0 ? "inf" : "-inf");
    else if (f->sci)
        snprintf(out, n, "%.4e", v);
    else if (f->int_mode)
        snprintf(out, n, "%.0f.", v);
    else
        snprintf(out, n, "%.4f", v);
}

static bool shown(const tg_tensor *t, int axis, int64_t i, bool elide)
{
    return !elide || t->shape[axis] <= 2 * EDGE || i < EDGE ||
           i >= t->shape[axis] - EDGE;
}

/* calls fn on every element that will be printed */
typedef void (*visit_fn)(fmt *f, const tg_tensor *t, const void *p);
static void visit(const tg_tensor *t, int axis, int64_t off, bool elide,
                  visit_fn fn, fmt *f)
{
    if (axis == t->ndim) {
        fn(f, t, tg__base(t) + off * (int64_t)tg_dtype_size(t->dtype));
        return;
    }
    for (int64_t i = 0; i < t->shape[axis]; i++)
        if (shown(t, axis, i, elide))
            visit(t, axis + 1, off + i * t->strides[axis], elide, fn, f);
}

static void scan_range(fmt *f, const tg_tensor *t, const void *p)
{
    double v = tg__load(t->dtype, p);
    if (!isfinite(v) || v == 0)
        return;
    if (v != floor(v))
        f->int_mode = false;
    f->nz_max = fmax(f->nz_max, fabs(v));
    f->nz_min = fmin(f->nz_min, fabs(v));
}

/* width over the finite values only: "nan" and "inf" are not padded for */
static void scan_width(fmt *f, const tg_tensor *t, const void *p)
{
    if (f->is_float && !isfinite(tg__load(t->dtype, p)))
        return;
    char tmp[64];
    format_value(tmp, sizeof tmp, f, t->dtype, p);
    int w = (int)strlen(tmp);
    if (w > f->width)
        f->width = w;
}

static void choose_format(const tg_tensor *t, bool elide, fmt *f)
{
    memset(f, 0, sizeof *f);
    f->is_float = tg_dtype_is_float(t->dtype);
    f->is_bool = t->dtype == TG_BOOL;
    f->int_mode = true;
    f->nz_min = INFINITY;
    f->width = 1;
    if (f->is_float) {
        visit(t, 0, 0, elide, scan_range, f);
        bool any = f->nz_max > 0;
        double ratio = any ? f->nz_max / f->nz_min : 0;
        /* PyTorch switches to scientific notation for a dynamic range over
         * 1000, values over 1e8, or (non-integers) values under 1e-4 */
        f->sci = any && (ratio > 1000 || f->nz_max > 1e8 ||
                         (!f->int_mode && f->nz_min < 1e-4));
    }
    visit(t, 0, 0, elide, scan_width, f);
}

static void print_item(tg_strbuf *b, const tg_tensor *t, int64_t off, const fmt *f)
{
    char tmp[64];
    format_value(tmp, sizeof tmp, f, t->dtype,
                 tg__base(t) + off * (int64_t)tg_dtype_size(t->dtype));
    tg__strbuf_printf(b, "%*s", f->width, tmp);
}

/* the last axis: items wrapped so that lines stay within LINE_WIDTH */
static void print_row(tg_strbuf *b, const tg_tensor *t, int axis, int64_t off,
                      const fmt *f, bool elide, int indent)
{
    int per_line = (LINE_WIDTH - indent) / (f->width + 2);
    if (per_line < 1)
        per_line = 1;
    int on_line = 0;
    bool dots = false;
    tg__strbuf_puts(b, "[");
    for (int64_t i = 0; i < t->shape[axis]; i++) {
        bool show = shown(t, axis, i, elide);
        if (!show && dots)
            continue;
        if (i > 0) {
            if (on_line == per_line) {
                tg__strbuf_printf(b, ",\n%*s", indent + 1, "");
                on_line = 0;
            } else {
                tg__strbuf_puts(b, ", ");
            }
        }
        if (show) {
            print_item(b, t, off + i * t->strides[axis], f);
        } else {
            tg__strbuf_puts(b, " ...");
            dots = true;
        }
        on_line++;
    }
    tg__strbuf_puts(b, "]");
}

static void print_rec(tg_strbuf *b, const tg_tensor *t, int axis, int64_t off,
                      const fmt *f, bool elide, int indent)
{
    if (axis == t->ndim) { /* 0-d */
        print_item(b, t, off, f);
        return;
    }
    if (axis == t->ndim - 1) {
        print_row(b, t, axis, off, f, elide, indent);
        return;
    }
    /* sub-blocks are separated by ndim - axis - 1 newlines */
    int newlines = t->ndim - axis - 1;
    bool dots = false;
    tg__strbuf_puts(b, "[");
    for (int64_t i = 0; i < t->shape[axis]; i++) {
        bool show = shown(t, axis, i, elide);
        if (!show && dots)
            continue;
        if (i > 0) {
            tg__strbuf_puts(b, ",");
            for (int k = 0; k < newlines; k++)
                tg__strbuf_puts(b, "\n");
            tg__strbuf_printf(b, "%*s", indent + 1, "");
        }
        if (show)
            print_rec(b, t, axis + 1, off + i * t->strides[axis], f, elide, indent + 1);
        else
            tg__strbuf_puts(b, "...");
        dots |= !show;
    }
    tg__strbuf_puts(b, "]");
}

char *tg_to_string(const tg_tensor *t)
{
    tg_strbuf b = {0};
    if (!t) {
        tg__strbuf_puts(&b, "tensor(NULL)");
        return tg__strbuf_take(&b);
    }
    if (t->graph) { /* symbolic: no data, describe it (as TF prints Tensors) */
        char shape[160];
        tg__strbuf_printf(&b, "tensor(<symbolic '%s' of graph '%s'>, shape=%s, dtype=%s)",
            tg_graph_node_name(t), tg_graph_name(t->graph),
            tg_shape_str(t->ndim, t->shape, shape, sizeof shape),
            tg_dtype_name(t->dtype));
        return tg__strbuf_take(&b);
    }
    bool show_dtype = t->dtype != TG_FLOAT32 && t->dtype != TG_INT64 &&
                      t->dtype != TG_BOOL;
    tg__strbuf_puts(&b, PREFIX);
    if (t->numel == 0) {
        /* nothing shows the shape or dtype of an empty tensor: say them */
        tg__strbuf_puts(&b, "[]");
        if (t->ndim != 1) {
            tg__strbuf_puts(&b, ", size=(");
            for (int i = 0; i < t->ndim; i++)
                tg__strbuf_printf(&b, i ? ", %lld" : "%lld", (long long)t->shape[i]);
            tg__strbuf_puts(&b, ")");
        }
        show_dtype = t->dtype != TG_FLOAT32;
    } else {
        bool elide = t->numel > ELIDE_THRESHOLD;
        fmt f;
        choose_format(t, elide, &f);
        print_rec(&b, t, 0, 0, &f, elide, (int)strlen(PREFIX));
    }
    if (show_dtype)
        tg__strbuf_printf(&b, ", dtype=%s", tg_dtype_name(t->dtype));
    if (t->grad_fn)
        tg__strbuf_printf(&b, ", grad_fn=<%s>", tg_grad_fn_name(t));
    else if (t->requires_grad)
        tg__strbuf_puts(&b, ", requires_grad=True");
    tg__strbuf_puts(&b, ")");
    char *s = tg__strbuf_take(&b);
    return s ? s : tg__error_null(TG_ERR_NOMEM, "tg_to_string: out of memory");
}

void tg_fprint(FILE *out, const tg_tensor *t)
{
    if (!out) {
        tg__error(TG_ERR_ARG, "tg_fprint: the FILE is NULL");
        return;
    }
    char *s = tg_to_string(t);
    if (s) {
        fprintf(out, "%s\n", s);
        free(s);
    }
}

void tg_print(const tg_tensor *t) { tg_fprint(stdout, t); }
