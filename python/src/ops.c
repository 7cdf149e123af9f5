/* The op table and the one generic path every op call takes.
 *
 * Each row names an op as Python sees it (PyTorch's name and argument
 * names), its signature as a string of `name:kind[=default]` parameters,
 * and the public C function with its calling shape. At import the
 * signatures are parsed once; a call then goes through op_vectorcall
 * (vectorcall/METH_FASTCALL, no tuples): match positional and keyword
 * arguments to parameters, convert each by its kind (Python numbers
 * next to tensors become 0-d tensors typed as PyTorch types scalars),
 * call the C function through its shape (the switch in invoke), with
 * the GIL released for big inputs, and wrap the result. No op has a
 * hand-written wrapper; adding one is a row here.
 *
 * Kinds: T tensor (or number), O tensor or None, i int, j int or None (both a C int:
 * larger values are a RuntimeError, not truncated), l int (an int64), f float, b bool,
 * d float or None, A dims (None, int or sequence), S shape (a sequence,
 * or the remaining positional ints when last), W pad widths (a sequence
 * of up to 2 * TG_MAX_DIMS ints: before and after per dim), P int or pair, p pair or
 * None, Q / q int or triple (or None), U / u int or 1-tuple (or None), D dtype, R reduction ('mean', 'sum', 'none'), L list of tensors,
 * G generator or None, F float or sequence of floats or None, s string. */
#include "ops.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void find_checks(OpObject *op)
{
    op->checks = (op_checks){op->row->name, 0, 0};
    for (int i = 0; i < tgpy_n_op_checks; i++)
        if (!strcmp(tgpy_op_checks[i].name, op->row->name))
            op->checks = tgpy_op_checks[i];
    op->grad = NULL;
    for (int i = 0; i < tgpy_n_op_grad_names; i++)
        if (!strcmp(tgpy_op_grad_names[i].row, op->row->name))
            op->grad = &tgpy_op_grad_names[i];
}

const char *tgpy_matmul_grad_name(int a, int b)
{
    if (a == 1 && b == 1)
        return "DotBackward0";
    if (a == 2 && b == 1)
        return "MvBackward0";
    if (a == 2 && b == 2)
        return "MmBackward0";
    if (a == 1 && b == 2)
        return "SqueezeBackward3";
    return "UnsafeViewBackward0"; /* batched: a bmm's result viewed */
}

/* r (op's result) shown with PyTorch's grad_fn name for the op */
static int name_grad_fn(const OpObject *op, const argval *v, PyObject *const *slots,
                        tg_tensor *r)
{
    const op_grad_name *g = op->grad;
    if (!g || !tg_grad_fn_name(r))
        return 0;
    const char *name = g->name;
    if (g->rule == GRAD_DIM_GIVEN) {
        for (int i = 0; i < op->n_params; i++)
            if (!strcmp(op->params[i].name, "dim") && !v[i].none)
                name = g->other;
    } else if (g->rule == GRAD_COPIED) {
        if (!tg_shares_storage(r, v[0].t))
            name = g->other;
    } else if (g->rule == GRAD_MATMUL) {
        name = tgpy_matmul_grad_name(tg_ndim(v[0].t), tg_ndim(v[1].t));
    } else if (g->rule == GRAD_TENSOR_ARG) {
        if (slots[1] && Tensor_Check(slots[1]))
            name = g->other;
    } else if (g->rule == GRAD_LINEAR) { /* a bias is v[2] */
        int nd = tg_ndim(v[0].t);
        bool bias = !v[2].none;
        name = nd == 1 ? (bias ? "AddBackward0" : "SqueezeBackward3")
               : nd == 2 ? (bias ? "AddmmBackward0" : "MmBackward0")
                         : (bias ? "ViewBackward0" : "UnsafeViewBackward0");
    }
    if ((g->rule == GRAD_MATMUL || g->rule == GRAD_LINEAR || g->rule == GRAD_COPY) &&
        strcmp(name, "ViewBackward0"))
        tg_view_untrack_temporary(r); /* a copy in PyTorch: no view */
    return tgpy_set_grad_fn_name(r, name);
}

static int parse_signature(OpObject *op)
{
    find_checks(op);
    const char *s = op->row->sig;
    while (*s) {
        if (op->n_params == MAX_PARAMS)
            goto bad;
        param *p = &op->params[op->n_params++];
        size_t n = strcspn(s, ":");
        if (!s[n] || n >= sizeof p->name)
            goto bad;
        memcpy(p->name, s, n);
        p->name[n] = 0;
        p->kind = s[n + 1];
        s += n + 2;
        p->required = *s != '=';
        if (*s == '=') {
            size_t m = strcspn(++s, " ");
            char def[32];
            if (m >= sizeof def)
                goto bad;
            memcpy(def, s, m);
            def[m] = 0;
            s += m;
            p->none_default = !strcmp(def, "None");
            p->num = !strcmp(def, "True") ? 1 : !strcmp(def, "False") ? 0 : atof(def);
            p->red = !strcmp(def, "sum") ? TG_REDUCTION_SUM
                     : !strcmp(def, "none") ? TG_REDUCTION_NONE : TG_REDUCTION_MEAN;
        }
        while (*s == ' ')
            s++;
    }
    return 0;
bad:
    PyErr_Format(PyExc_SystemError, "op table: bad signature for %s", op->row->name);
    return -1;
}

typedef struct {
    tg_tensor *owned[MAX_PARAMS + 1];
    int n_owned;
} call_state;

static PyObject *arg_error(const OpObject *op, const param *p, const char *what,
                           PyObject *got)
{
    return PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be %s, not %.100s",
                        op->row->name, p->name, what, Py_TYPE(got)->tp_name);
}

/* PyTorch's argument parser takes a 0-d tensor that does not require
 * grad where a number is asked for (an integer tensor for an int): o's
 * tensor if it is one of those, else NULL */
static tg_tensor *number_tensor(PyObject *o, bool integral)
{
    if (!Tensor_Check(o))
        return NULL;
    tg_tensor *t = TENSOR(o);
    tg_dtype dt = tg_dtype_of(t);
    if (tg_ndim(t) != 0 || tg_requires_grad(t) || tg_is_symbolic(t) ||
        (integral && (tg_dtype_is_float(dt) || dt == TG_BOOL)))
        return NULL;
    return t;
}

static int as_int(const OpObject *op, const param *p, PyObject *o, long long *out)
{
    tg_tensor *t = p->kind == 'b' ? NULL : number_tensor(o, true);
    if (t) {
        int64_t v;
        if (tg_copy_to(t, TG_INT64, &v) != TG_OK)
            return tgpy_raise(), -1;
        *out = v;
        return 0;
    }
    if (!PyIndex_Check(o) || (PyBool_Check(o) && p->kind != 'b')) {
        arg_error(op, p, "int", o);
        return -1;
    }
    *out = PyLong_AsLongLong(o);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* v narrowed to a C int (dims, strides, groups, ...): a value the C side
 * cannot take is an error here, not a truncation to another value (dim
 * 2**32 reduced dim 0, stride 2**32 + 1 ran as 1) */
static int narrow(const OpObject *op, const param *p, long long v, int *out)
{
    if (v < INT_MIN || v > INT_MAX) {
        PyErr_Format(PyExc_RuntimeError, "%s(): argument '%s' is %lld, out of the range of "
                     "a C int", op->row->name, p->name, v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int as_double(const OpObject *op, const param *p, PyObject *o, double *out)
{
    tg_tensor *t = number_tensor(o, false);
    if (t) {
        if (tg_copy_to(t, TG_FLOAT64, out) != TG_OK)
            return tgpy_raise(), -1;
        return 0;
    }
    if (Tensor_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o) || tgpy_is_scalar(o))) {
        arg_error(op, p, "a number", o);
        return -1;
    }
    *out = PyFloat_AsDouble(o);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static int as_dims(const OpObject *op, const param *p, PyObject *o, argval *v)
{
    int64_t dims[TG_MAX_DIMS];
    int n = tgpy_ints(o, dims, TG_MAX_DIMS, " dims", p->name); /* a tensor is no dim list */
    if (n < 0)
        return -1;
    if (n == 0 && !PyIndex_Check(o)) { /* an empty list means no dims: PyTorch's all */
        v->n = 0;
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (narrow(op, p, dims[i], &v->ints[i]) < 0)
            return -1;
    v->n = n;
    return 0;
}

/* P / p: an int or a pair; Q / q: an int or a triple; U / u: an int or
 * a 1-tuple (the lowercase kinds may also be None) */
static int tuple_len(char kind)
{
    return kind == 'Q' || kind == 'q' ? 3 : kind == 'U' || kind == 'u' ? 1 : 2;
}

static int as_tuple(const OpObject *op, const param *p, PyObject *o, argval *v)
{
    int64_t d[TG_MAX_DIMS];
    int want = tuple_len(p->kind);
    int n = tgpy_shape(o, d, p->name);
    if (n < 0)
        return -1;
    if (n != 1 && n != want) {
        static const char *const what[] = {"", "an int or a 1-tuple", "an int or a pair of ints",
                                           "an int or a triple of ints"};
        PyErr_Format(PyExc_RuntimeError, "%s(): %s must be %s", op->row->name, p->name,
                     what[want]); /* PyTorch's ATen check: a RuntimeError */
        return -1;
    }
    for (int i = 0; i < want; i++)
        if (narrow(op, p, d[n == 1 ? 0 : i], &v->ints[i]) < 0)
            return -1;
    return 0;
}

static int as_list(const OpObject *op, const param *p, PyObject *o, argval *v)
{
    PyObject *seq = PySequence_Check(o) && !Tensor_Check(o)
                        ? PySequence_Fast(o, "tensors") : NULL;
    if (!seq) {
        PyErr_Clear();
        arg_error(op, p, "a sequence of tensors", o);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    v->list = PyMem_Calloc((size_t)(n ? n : 1), sizeof *v->list);
    v->n = (int)n;
    int rc = v->list ? 0 : -1;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i);
        if (!Tensor_Check(e)) {
            arg_error(op, p, "a sequence of tensors", e);
            rc = -1;
        } else {
            v->list[i] = tg_retain(TENSOR(e));
        }
    }
    Py_DECREF(seq);
    return rc;
}

/* F: one float, or a sequence of at most TG_MAX_DIMS */
static int as_floats(const OpObject *op, const param *p, PyObject *o, argval *v)
{
    if (PyNumber_Check(o) && !PySequence_Check(o)) {
        v->n = 1;
        return as_double(op, p, o, &v->floats[0]);
    }
    PyObject *seq = PySequence_Check(o) && !Tensor_Check(o)
                        ? PySequence_Fast(o, "floats") : NULL;
    if (!seq || PySequence_Fast_GET_SIZE(seq) > TG_MAX_DIMS) {
        PyErr_Clear();
        Py_XDECREF(seq);
        arg_error(op, p, "a float or a sequence of at most 8 floats", o);
        return -1;
    }
    v->n = (int)PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    for (int i = 0; rc == 0 && i < v->n; i++)
        rc = as_double(op, p, PySequence_Fast_GET_ITEM(seq, i), &v->floats[i]);
    Py_DECREF(seq);
    return rc;
}

static int as_reduction(const OpObject *op, PyObject *o, argval *v)
{
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (s && !strcmp(s, "mean")) v->red = TG_REDUCTION_MEAN;
    else if (s && !strcmp(s, "sum")) v->red = TG_REDUCTION_SUM;
    else if (s && !strcmp(s, "none")) v->red = TG_REDUCTION_NONE;
    else {
        PyErr_Format(PyExc_ValueError, "%s(): reduction must be 'mean', 'sum' or 'none'",
                     op->row->name);
        return -1;
    }
    return 0;
}

/* converts everything but numbers standing for tensors (done after, once
 * the reference dtype is known) */
static int convert(const OpObject *op, const param *p, PyObject *o, PyObject *const *rest,
                   Py_ssize_t n_rest, argval *v)
{
    long long i;
    if (o == Py_None && p->kind != 'T') {
        v->none = true;
        if (strchr("OdjpquGADF", p->kind))
            return p->kind == 'G' ? ((v->g = tgpy_generator(NULL)) ? 0 : -1) : 0;
        arg_error(op, p, "not None", o);
        return -1;
    }
    switch (p->kind) {
    case 'T':
    case 'O':
        if (Tensor_Check(o)) {
            v->t = TENSOR(o);
            return 0;
        }
        if (o == Py_None) {
            arg_error(op, p, "Tensor", o);
            return -1;
        }
        return 0; /* a number or data: converted later */
    case 'i':
    case 'j':
    case 'l': {
        int narrowed;
        if (as_int(op, p, o, &i) < 0 || (p->kind != 'l' && narrow(op, p, i, &narrowed) < 0))
            return -1;
        v->i = i;
        v->f = (double)i;
        return 0;
    }
    case 'b': {
        if (!PyBool_Check(o)) { /* PyTorch takes bools only, not 1 or "yes" */
            arg_error(op, p, "bool", o);
            return -1;
        }
        int t = PyObject_IsTrue(o);
        v->f = t;
        return t < 0 ? -1 : 0;
    }
    case 'f':
    case 'd':
        return as_double(op, p, o, &v->f);
    case 'A':
        return as_dims(op, p, o, v);
    case 'S':
        if (n_rest > 1) { /* view(2, 3): the remaining positional arguments */
            if (n_rest > TG_MAX_DIMS) {
                PyErr_Format(PyExc_ValueError, "%s(): at most %d dims", op->row->name,
                             TG_MAX_DIMS);
                return -1;
            }
            for (Py_ssize_t k = 0; k < n_rest; k++) {
                if (as_int(op, p, rest[k], &i) < 0)
                    return -1;
                v->shape[k] = i;
            }
            v->n = (int)n_rest;
            return 0;
        }
        return (v->n = tgpy_shape(o, v->shape, p->name)) < 0 ? -1 : 0;
    case 'W':
        return (v->n = tgpy_ints(o, v->shape, 2 * TG_MAX_DIMS, " (2 per dim)", p->name)) < 0 ? -1 : 0;
    case 'P':
    case 'p':
    case 'Q':
    case 'q':
    case 'U':
    case 'u':
        return as_tuple(op, p, o, v);
    case 'D':
        return tgpy_parse_dtype(o, &v->dt);
    case 'R':
        return as_reduction(op, o, v);
    case 'L':
        return as_list(op, p, o, v);
    case 'G':
        return (v->g = tgpy_generator(o)) ? 0 : -1;
    case 'F':
        return as_floats(op, p, o, v);
    case 's':
        if (!PyUnicode_Check(o) || !(v->str = PyUnicode_AsUTF8(o))) {
            PyErr_Clear();
            arg_error(op, p, "str", o);
            return -1;
        }
        return 0;
    }
    PyErr_SetString(PyExc_SystemError, "op table: unknown parameter kind");
    return -1;
}

static void set_default(const param *p, argval *v)
{
    v->none = p->none_default;
    v->f = p->num;
    v->i = (int64_t)p->num;
    v->red = (tg_reduction)p->red;
    v->n = 0;
    v->ints[0] = v->ints[1] = v->ints[2] = (int)p->num;
    if (p->kind == 'G')
        v->g = tgpy_generator(NULL);
}

/* numbers and data given for tensor parameters, typed after the tensors */
static int convert_numbers(const OpObject *op, PyObject **slots, argval *v, call_state *cs)
{
    tg_dtype ref = tg_default_float();
    bool has_ref = false;
    for (int k = 0; k < op->n_params; k++) /* the first non-bool tensor decides */
        if (v[k].t && (!has_ref || ref == TG_BOOL)) {
            ref = tg_dtype_of(v[k].t);
            has_ref = true;
        }
    ref = tgpy_number_ref(op->row->fn == (any_fn)tg_div, ref);
    for (int k = 0; k < op->n_params; k++) {
        char kind = op->params[k].kind;
        if ((kind == 'T' || kind == 'O') && !v[k].t && !v[k].none && slots[k]) {
            tg_tensor *t = tgpy_as_tensor(slots[k], ref, has_ref);
            if (!t) {
                /* data that is not a tensor's (a list of tensors of several
                 * elements, a string): PyTorch's parser's TypeError */
                if (PyErr_ExceptionMatches(PyExc_ValueError) ||
                    PyErr_ExceptionMatches(PyExc_TypeError)) {
                    PyErr_Clear();
                    arg_error(op, &op->params[k], "Tensor", slots[k]);
                }
                return -1;
            }
            v[k].t = cs->owned[cs->n_owned++] = t;
        }
    }
    return 0;
}

static int64_t work_size(const OpObject *op, const argval *v)
{
    int64_t n = 0;
    for (int k = 0; k < op->n_params; k++)
        if (v[k].t)
            n += tg_numel(v[k].t);
    call_shape k = op->row->call;
    return k == C_CONV || k == C_CONVT || k == C_CONV1 || k == C_CONVT1 || k == C_CONV3 ||
                   k == C_CONVT3
               ? n * 64
               : n;
}

static void note_inputs(const OpObject *op, const argval *v)
{
    tg_tensor *ts[MAX_PARAMS];
    int n = 0;
    for (int k = 0; k < op->n_params; k++)
        if (v[k].t)
            ts[n++] = v[k].t;
        else if (v[k].list)
            tgpy_note_inputs(v[k].list, v[k].n);
    tgpy_note_inputs(ts, n);
}

/* the parameter a numpy-style keyword stands for, as PyTorch's argument
 * parser reads them (numpy_compatibility_arg_names), or NULL */
static const char *numpy_alias(PyObject *key)
{
    static const char *const names[][2] = {{"axis", "dim"},  {"keepdims", "keepdim"},
                                           {"x", "input"},   {"a", "input"},
                                           {"x1", "input"},  {"x2", "other"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (PyUnicode_CompareWithASCIIString(key, names[i][0]) == 0)
            return names[i][1];
    return NULL;
}

static bool is_add_or_sub(const char *name)
{
    return !strcmp(name, "add") || !strcmp(name, "sub") || !strcmp(name, "subtract");
}

/* matches arguments to parameters; slots[k] borrowed, NULL when absent */
static int bind(const OpObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                PyObject **slots, Py_ssize_t *n_rest)
{
    const param *ps = op->params;
    int np = op->n_params;
    *n_rest = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (i >= np) {
            PyErr_Format(PyExc_TypeError, "%s() takes %d arguments (%zd given)", op->row->name,
                         np, nargs);
            return -1;
        }
        slots[i] = args[i];
        if (ps[i].kind == 'S' && i == np - 1) { /* view(2, 3): the rest are the shape */
            *n_rest = nargs - i;
            break;
        }
    }
    if (nargs == 3 && is_add_or_sub(op->row->name) &&
        tgpy_deprecated_alpha_first(op->row->name, &slots[1], &slots[2]) < 0)
        return -1;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, j);
        int k = 0;
        while (k < np && PyUnicode_CompareWithASCIIString(key, ps[k].name) != 0)
            k++;
        if (k == np) { /* PyTorch's numpy-compatible names: axis, keepdims, x, a, x1, x2 */
            const char *alias = numpy_alias(key);
            k = 0;
            while (alias && k < np && strcmp(alias, ps[k].name) != 0)
                k++;
            if (!alias)
                k = np;
        }
        if (k == np) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                         op->row->name, key);
            return -1;
        }
        if (slots[k]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
                         op->row->name, ps[k].name);
            return -1;
        }
        slots[k] = args[nargs + j];
        if (ps[k].kind == 'S')
            *n_rest = 1;
    }
    for (int k = 0; k < np; k++)
        if (!slots[k] && ps[k].required) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (position %d)",
                         op->row->name, ps[k].name, k + 1);
            return -1;
        }
    return 0;
}

static PyObject *op_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames);

/* the position of an out= keyword among kwnames, or -1 */
static Py_ssize_t out_keyword(PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, j), "out") == 0)
            return j;
    return -1;
}

/* op(..., out=t): the call without out, then the result written into t
 * by the package's hook (PyTorch's checks: no autograd, castable dtype,
 * resized shape) */
static PyObject *call_with_out(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames, Py_ssize_t at)
{
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    PyObject *out = args[nargs + at];
    PyObject **rest = PyMem_Malloc(sizeof(PyObject *) * (size_t)(nargs + nkw));
    PyObject *names = PyTuple_New(nkw - 1);
    PyObject *result = NULL, *written = NULL;
    if (!rest || !names) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        rest[i] = args[i];
    for (Py_ssize_t j = 0, k = 0; j < nkw; j++)
        if (j != at) {
            rest[nargs + k] = args[nargs + j];
            PyTuple_SET_ITEM(names, k++, Py_NewRef(PyTuple_GET_ITEM(kwnames, j)));
        }
    result = op_vectorcall(self, rest, (size_t)nargs, nkw > 1 ? names : NULL);
    if (result && out != Py_None) {
        PyObject *name = PyUnicode_FromString(((const OpObject *)self)->row->name);
        written = name ? PyObject_CallFunctionObjArgs(tgpy_out_hook(), name, out, result, NULL)
                       : NULL;
        Py_XDECREF(name);
        Py_SETREF(result, written);
    }
done:
    PyMem_Free(rest);
    Py_XDECREF(names);
    return result;
}

static PyObject *op_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames)
{
    const OpObject *op = (const OpObject *)self;
    Py_ssize_t at = tgpy_out_hook() ? out_keyword(kwnames) : -1;
    if (at >= 0)
        return call_with_out(self, args, PyVectorcall_NARGS(nargsf), kwnames, at);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), n_rest;
    PyObject *slots[MAX_PARAMS] = {NULL};
    argval v[MAX_PARAMS];
    call_state cs = {.n_owned = 0};
    PyObject *result = NULL;
    if (bind(op, args, nargs, kwnames, slots, &n_rest) < 0)
        return NULL;
    int k = 0;
    for (; k < op->n_params; k++) {
        memset(&v[k], 0, sizeof v[k]);
        if (!slots[k])
            set_default(&op->params[k], &v[k]);
        else if (convert(op, &op->params[k], slots[k], &args[k],
                         op->params[k].kind == 'S' ? n_rest : 0, &v[k]) < 0)
            goto done;
    }
    if (convert_numbers(op, slots, v, &cs) < 0)
        goto done;
    if (tgpy_tracing)
        note_inputs(op, v);
    if (tgpy_op_validate(op, v) < 0)
        goto done;
    tg_tensor *r;
    if (work_size(op, v) >= TGPY_GIL_FREE_NUMEL) {
        Py_BEGIN_ALLOW_THREADS
        r = tgpy_op_invoke(op, v);
        Py_END_ALLOW_THREADS
    } else {
        r = tgpy_op_invoke(op, v);
    }
    if (r && name_grad_fn(op, v, slots, r) < 0) {
        tg_release(r);
        goto done;
    }
    result = r ? tgpy_wrap(r)
               : tgpy_raise_remapped(TG_ERR_INDEX, op->checks.flags & ROW_INDEX_RUNTIME
                                                       ? PyExc_RuntimeError : NULL);
done:
    for (int i = 0; i < k && i < op->n_params; i++)
        if (v[i].list) {
            for (int j = 0; j < v[i].n; j++)
                tg_release(v[i].list[j]);
            PyMem_Free(v[i].list);
        }
    for (int i = 0; i < cs.n_owned; i++)
        tg_release(cs.owned[i]);
    return result;
}

/* ---- the op object: callable, and a method when found on a Tensor ---------------- */
static PyObject *op_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (!obj || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}
static PyObject *op_repr(PyObject *self)
{
    const OpObject *op = (const OpObject *)self;
    return PyUnicode_FromFormat("<tensorgraph op %s(%s)>", op->row->name, op->row->sig);
}
static PyObject *op_get_name(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(((OpObject *)self)->row->name);
}
static PyObject *op_get_sig(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(((OpObject *)self)->row->sig);
}
static PyGetSetDef op_getset[] = {
    {"__name__", op_get_name, NULL, NULL, NULL},
    {"signature", op_get_sig, NULL, "name:kind parameters (see python/src/ops.c)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject Op_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph._C.Op",
    .tp_basicsize = sizeof(OpObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(OpObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = op_descr_get,
    .tp_repr = op_repr,
    .tp_getset = op_getset,
    .tp_doc = "An operator of the op table: call it like its PyTorch namesake.",
};

static PyObject *op_table_list(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    PyObject *r = PyList_New(tgpy_n_ops);
    for (int i = 0; r && i < tgpy_n_ops; i++)
        PyList_SET_ITEM(r, i, Py_BuildValue("(ssO)", tgpy_op_rows[i].name, tgpy_op_rows[i].sig,
                                            tgpy_op_rows[i].method ? Py_True : Py_False));
    return r;
}

/* Tensor methods written in Python (tensorgraph/_tensor.py) join the type */
static PyObject *add_method(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n != 2 || !PyUnicode_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "_add_method(name, function)");
    if (PyDict_SetItem(Tensor_Type.tp_dict, args[0], args[1]) < 0)
        return NULL;
    PyType_Modified(&Tensor_Type);
    Py_RETURN_NONE;
}

static PyMethodDef ops_functions[] = {
    {"_op_table", op_table_list, METH_NOARGS, "(name, signature, is_method) of every op."},
    {"_add_method", (PyCFunction)(void (*)(void))add_method, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_ops(PyObject *m)
{
    if (PyType_Ready(&Op_Type) < 0)
        return -1;
    for (int i = 0; i < tgpy_n_ops; i++) {
        OpObject *op = PyObject_New(OpObject, &Op_Type);
        if (!op)
            return -1;
        op->vectorcall = op_vectorcall;
        op->row = &tgpy_op_rows[i];
        op->n_params = 0;
        if (parse_signature(op) < 0 || PyModule_AddObjectRef(m, op->row->name, (PyObject *)op) < 0 ||
            (op->row->method &&
             PyDict_SetItemString(Tensor_Type.tp_dict, op->row->name, (PyObject *)op) < 0)) {
            Py_DECREF(op);
            return -1;
        }
        Py_DECREF(op);
    }
    PyType_Modified(&Tensor_Type);
    return PyModule_AddFunctions(m, ops_functions);
}
