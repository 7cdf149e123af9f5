/* What the op mappings (ops_*.c) share: node-named errors, typed attribute
 * and constant-input readers, size and axis checks, and the op tables'
 * lookup by type and opset version. */
#include "onnx/import.h"
#include "ops/op.h"

#include "graph/graph_impl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the product of the non-zero dims: what a tensor of this shape would
 * hold if its empty dims were not empty (reductions over them produce it) */
bool onnx_extent_ok(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        int64_t d = shape[i] > 0 ? shape[i] : 1; /* -1: an unknown dim (graph mode) */
        if (shape[i] < -1 || tg__size_mul_exceeds(n, d, ONNX_IMPORT_MAX_ELEMENTS))
            return false;
        n *= d; /* at most ONNX_IMPORT_MAX_ELEMENTS */
    }
    return true;
}

tg_status onnx_err(const onnx_ictx *c, tg_status s, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tg__error(s, "ONNX node '%s' (%s): %s", onnx_node_label(c->node),
                     c->node->op_type, msg);
}

const onnx_attribute *onnx_attr(const onnx_ictx *c, const char *name)
{
    return onnx_attr_in(c->node, name);
}

/* attribute a has type `want` (producers that omit the type field are
 * judged by which field is present) */
static tg_status attr_type(const onnx_ictx *c, const onnx_attribute *a, int want)
{
    int t = a->type;
    if (!a->has_type || t == ONNX_ATTR_UNDEFINED)
        t = a->has_f ? ONNX_ATTR_FLOAT : a->has_i ? ONNX_ATTR_INT
            : a->s.data ? ONNX_ATTR_STRING : a->t ? ONNX_ATTR_TENSOR
            : a->n_ints ? ONNX_ATTR_INTS : a->n_floats ? ONNX_ATTR_FLOATS : want;
    if (t == want)
        return TG_OK;
    return onnx_err(c, TG_ERR_IO, "attribute '%s' should be %s, got %s", a->name,
                    onnx_attribute_type_name(want), onnx_attribute_type_name(t));
}

/* the attribute `name`, checked to be of `type`; *a is NULL when absent */
static tg_status typed_attr(const onnx_ictx *c, const char *name, int type,
                            const onnx_attribute **a)
{
    *a = onnx_attr(c, name);
    return *a ? attr_type(c, *a, type) : TG_OK;
}

/* a list attribute's length: a hostile model's millions of values are refused */
static tg_status list_len(const onnx_ictx *c, const char *name, size_t n, int *out)
{
    if (n > 1000000)
        return onnx_err(c, TG_ERR_IO, "attribute '%s' has %zu values", name, n);
    *out = (int)n;
    return TG_OK;
}

tg_status oa_int(const onnx_ictx *c, const char *name, int64_t dflt, int64_t *out)
{
    const onnx_attribute *a;
    tg_status s = typed_attr(c, name, ONNX_ATTR_INT, &a);
    *out = s == TG_OK && a ? a->i : dflt;
    return s;
}

tg_status oa_float(const onnx_ictx *c, const char *name, double dflt, double *out)
{
    const onnx_attribute *a;
    tg_status s = typed_attr(c, name, ONNX_ATTR_FLOAT, &a);
    *out = s == TG_OK && a ? a->f : dflt;
    return s;
}

tg_status oa_ints(const onnx_ictx *c, const char *name, const int64_t **v, int *n)
{
    const onnx_attribute *a;
    tg_status s = typed_attr(c, name, ONNX_ATTR_INTS, &a);
    *v = NULL;
    *n = -1;
    if (s == TG_OK && a && (s = list_len(c, name, a->n_ints, n)) == TG_OK)
        *v = a->ints;
    return s;
}

tg_status oa_floats(const onnx_ictx *c, const char *name, const float **v, int *n)
{
    const onnx_attribute *a;
    tg_status s = typed_attr(c, name, ONNX_ATTR_FLOATS, &a);
    *v = NULL;
    *n = -1;
    if (s == TG_OK && a && (s = list_len(c, name, a->n_floats, n)) == TG_OK)
        *v = a->floats;
    return s;
}

tg_status oa_string(const onnx_ictx *c, const char *name, const char *dflt, const char **out)
{
    const onnx_attribute *a;
    tg_status s = typed_attr(c, name, ONNX_ATTR_STRING, &a);
    *out = s == TG_OK && a ? (a->s.data ? (const char *)a->s.data : "") : dflt;
    return s;
}

tg_status oa_tensor(const onnx_ictx *c, const char *name, tg_tensor **out)
{
    const onnx_attribute *a;
    tg_status s = typed_attr(c, name, ONNX_ATTR_TENSOR, &a);
    *out = NULL;
    if (s != TG_OK || !a)
        return s;
    if (!a->t)
        return onnx_err(c, TG_ERR_IO, "attribute '%s' has no tensor", name);
    *out = onnx_tensor_to_tg_wide(a->t);
    if (!*out)
        return tg_last_status();
    return onnx_check_numel(c, tg_ndim(*out), tg_shape(*out), "a tensor attribute");
}

tg_tensor *oi_req(onnx_ictx *c, int i, const char *what)
{
    if (i < c->n_in && c->in[i])
        return c->in[i];
    onnx_err(c, TG_ERR_IO, "input %d (%s) is required", i, what);
    return NULL;
}

void *onnx_tmp_alloc(onnx_ictx *c, size_t bytes)
{
    if (c->n_tmp == (int)(sizeof c->tmp / sizeof c->tmp[0])) {
        tg__error(TG_ERR_INTERNAL, "onnx: too many temporaries");
        return NULL;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        return NULL;
    }
    c->tmp[c->n_tmp++] = p;
    return p;
}

bool onnx_known(const onnx_ictx *c, int i)
{
    return i >= c->n_in || !c->in[i] || (c->val[i] && !tg_is_symbolic(c->val[i]));
}

bool onnx_use_dims(onnx_ictx *c, int i)
{
    if (i >= c->n_in || c->val[i] || !c->dims[i])
        return false;
    c->val[i] = c->dims[i];
    return true;
}

/* the value of input i, which must be present and known at import time
 * (NULL with the error set); `hint` ends the message */
static tg_tensor *known_input(onnx_ictx *c, int i, const char *what, const char *hint)
{
    if (!oi_req(c, i, what))
        return NULL;
    tg_tensor *t = c->val[i];
    if (!t || tg_is_symbolic(t)) {
        onnx_err(c, TG_ERR_UNSUPPORTED, "input %d (%s, '%s') must be known when the model "
                 "is imported%s", i, what, c->node->input[i], hint);
        return NULL;
    }
    return t;
}

tg_status oi_ints(onnx_ictx *c, int i, const char *what, int64_t **v, int64_t *n)
{
    tg_tensor *t = known_input(c, i, what, " (an initializer, a Constant, or computed "
                                           "from them)");
    if (!t)
        return tg_last_status();
    tg_dtype dt = tg_dtype_of(t);
    if (dt != TG_INT64 && dt != TG_INT32)
        return onnx_err(c, TG_ERR_IO, "input %d (%s) should be int64, got %s", i, what,
                        tg_dtype_name(dt));
    *n = tg_numel(t);
    *v = onnx_tmp_alloc(c, (size_t)*n * sizeof **v);
    if (!*v)
        return tg_last_status();
    return tg_copy_to(t, TG_INT64, *v);
}

tg_status oi_floats(onnx_ictx *c, int i, const char *what, double **v, int64_t *n)
{
    tg_tensor *t = known_input(c, i, what, " (an initializer, a Constant, or computed "
                                           "from them)");
    if (!t)
        return tg_last_status();
    if (!tg_dtype_is_float(tg_dtype_of(t)))
        return onnx_err(c, TG_ERR_IO, "input %d (%s) should be floating point, got %s", i,
                        what, tg_dtype_name(tg_dtype_of(t)));
    *n = tg_numel(t);
    *v = onnx_tmp_alloc(c, (size_t)*n * sizeof **v);
    if (!*v)
        return tg_last_status();
    return tg_copy_to(t, TG_FLOAT64, *v);
}

tg_status oi_scalar(onnx_ictx *c, int i, const char *what, double *out)
{
    tg_tensor *t = known_input(c, i, what, "");
    if (!t)
        return tg_last_status();
    if (tg_numel(t) != 1)
        return onnx_err(c, TG_ERR_IO, "input %d (%s) should have one element, has %lld",
                        i, what, (long long)tg_numel(t));
    return tg_copy_to(t, TG_FLOAT64, out);
}

tg_status onnx_check_numel(const onnx_ictx *c, int ndim, const int64_t *shape,
                           const char *what)
{
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return onnx_err(c, TG_ERR_IO, "%s has a negative dim %lld", what,
                            (long long)shape[i]);
    if (!onnx_extent_ok(ndim, shape))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "%s would have more than %lld elements "
                        "(counting empty dims as 1)", what, (long long)ONNX_IMPORT_MAX_ELEMENTS);
    return TG_OK;
}

tg_status onnx_axis(const onnx_ictx *c, int64_t axis, int rank, const char *what, int *out)
{
    if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
        return onnx_err(c, TG_ERR_IO, "%s %lld is out of range for rank %d", what,
                        (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return TG_OK;
}

int onnx_eager_begin(void)
{
    int old = tg__graph_suspend();
    tg_no_grad_begin();
    return old;
}

void onnx_eager_end(int token)
{
    tg_no_grad_end();
    tg__graph_resume(token);
}

tg_tensor *onnx_as(tg_tensor *y, tg_dtype dt)
{
    if (!y)
        return NULL;
    return tg_dtype_of(y) == dt ? y : tg_cast(y, dt);
}

/* ---- ops that name their ONNX operator ----------------------------------------------
 * An op whose definition names an ONNX operator (tg_op_def.onnx, of a
 * version up to ONNX_MAX_OPSET) and takes no attributes maps one to one:
 * the same inputs, the same outputs. It needs no entry of its own. */
static const tg_op_def *direct_op(const char *op_type)
{
    for (int i = 0; i < tg_op_count(); i++) {
        const tg_op_def *op = tg_op_at(i);
        if (op->onnx.op && !strcmp(op->onnx.op, op_type) && !op->attrs.specs &&
            op->n_in > 0 && op->onnx.opset <= ONNX_MAX_OPSET)
            return op;
    }
    return NULL;
}

static tg_status m_direct(onnx_ictx *c)
{
    const tg_op_def *op = direct_op(c->node->op_type);
    if (c->node->n_attribute > 0)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "attribute '%s' is not supported",
                        c->node->attribute[0].name ? c->node->attribute[0].name : "");
    for (int i = 0; i < c->n_in; i++)
        if (!oi_req(c, i, op->inputs[i].name))
            return tg_last_status();
    tg_tensor *out[TG_MAX_OP_OUTPUTS];
    if (tg_op_run(op, c->n_in, c->in, NULL, 0, out) != TG_OK)
        return tg_last_status();
    for (int o = 0; o < op->n_out; o++)
        c->out[o] = out[o];
    return TG_OK;
}

/* entries for the direct ops no table names, made once */
#define MAX_DIRECT 64
static onnx_op_entry direct[MAX_DIRECT + 1];
static pthread_once_t direct_once = PTHREAD_ONCE_INIT;

static const onnx_op_entry *table_lookup(const char *op_type)
{
    static const onnx_op_entry *const tables[] = {onnx_ops_math, onnx_ops_nn, onnx_ops_shape,
                                                  onnx_ops_reduce, onnx_ops_loss,
                                                  onnx_ops_composite, onnx_ops_conv,
                                                  onnx_ops_mask, onnx_ops_layout,
                                                  onnx_ops_index, onnx_ops_control,
                                                  onnx_ops_rnn, onnx_ops_quant, onnx_ops_misc,
                                                  onnx_ops_tfidf, onnx_ops_seq};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const onnx_op_entry *e = tables[t]; e->op_type; e++)
            if (!strcmp(e->op_type, op_type))
                return e;
    return NULL;
}

static void make_direct(void)
{
    int n = 0;
    for (int i = 0; i < tg_op_count() && n < MAX_DIRECT; i++) {
        const tg_op_def *op = tg_op_at(i);
        if (!op->onnx.op || table_lookup(op->onnx.op) || direct_op(op->onnx.op) != op)
            continue;
        direct[n] = (onnx_op_entry){.op_type = op->onnx.op,
                                    .min_in = op->n_in, .max_in = op->n_in,
                                    .min_out = op->n_out, .max_out = op->n_out,
                                    .import = m_direct};
        onnx_direct_versions(op->onnx.op, op->onnx.opset, direct[n++].versions);
    }
}

/* ---- the op tables ----------------------------------------------------------------- */
const onnx_op_entry *onnx_op_lookup(const char *op_type)
{
    const onnx_op_entry *e = table_lookup(op_type);
    if (e)
        return e;
    pthread_once(&direct_once, make_direct);
    for (e = direct; e->op_type; e++)
        if (!strcmp(e->op_type, op_type))
            return e;
    return NULL;
}
