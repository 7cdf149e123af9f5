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
 * Kinds: T tensor (or number), O tensor or None, i int, f float, b bool,
 * d float or None, A dims (None, int or sequence), S shape (a sequence,
 * or the remaining positional ints when last), P int or pair, p pair or
 * None, D dtype, R reduction ('mean', 'sum', 'none'), L list of tensors,
 * G generator or None. */
#include "tgpy.h"

#include <math.h>
#include <string.h>

#define MAX_PARAMS 10

typedef enum {
    C_T, C_TT, C_TTT, C_TD, C_TDD, C_TI, C_TII, C_TAB, C_VAR, C_ARG, C_TS,
    C_TP, C_TTR, C_TTO, C_CAST, C_CONV, C_POOL, C_BN, C_LN, C_DROP, C_EMB,
    C_LIST, C_TIT, C_PAD, C_ONEHOT, C_SQUEEZE
} call_shape;

typedef void (*any_fn)(void);
typedef tg_tensor *(*fn_t)(tg_tensor *);
typedef tg_tensor *(*fn_tt)(tg_tensor *, tg_tensor *);
typedef tg_tensor *(*fn_ttt)(tg_tensor *, tg_tensor *, tg_tensor *);
typedef tg_tensor *(*fn_td)(tg_tensor *, double);
typedef tg_tensor *(*fn_tdd)(tg_tensor *, double, double);
typedef tg_tensor *(*fn_ti)(tg_tensor *, int);
typedef tg_tensor *(*fn_tii)(tg_tensor *, int, int);
typedef tg_tensor *(*fn_tab)(tg_tensor *, int, const int *, bool);
typedef tg_tensor *(*fn_var)(tg_tensor *, int, const int *, int, bool);
typedef tg_tensor *(*fn_arg)(tg_tensor *, int, bool);
typedef tg_tensor *(*fn_ts)(tg_tensor *, int, const int64_t *);
typedef tg_tensor *(*fn_tp)(tg_tensor *, const int *);
typedef tg_tensor *(*fn_ttr)(tg_tensor *, tg_tensor *, tg_reduction);
typedef tg_tensor *(*fn_cast)(tg_tensor *, tg_dtype);
typedef tg_tensor *(*fn_pool)(tg_tensor *, const tg_pool2d_opts *);
typedef tg_tensor *(*fn_list)(int, tg_tensor *const *, int);
typedef tg_tensor *(*fn_tit)(tg_tensor *, int, tg_tensor *);

typedef struct {
    const char *name, *sig;
    call_shape call;
    any_fn fn;
    bool method; /* also a Tensor method (self = first parameter) */
} op_row;

#define F(f) ((any_fn)(f))
static const op_row op_rows[] = {
    /* elementwise binary, broadcasting */
    {"add", "input:T other:T", C_TT, F(tg_add), true},
    {"sub", "input:T other:T", C_TT, F(tg_sub), true},
    {"subtract", "input:T other:T", C_TT, F(tg_sub), true},
    {"mul", "input:T other:T", C_TT, F(tg_mul), true},
    {"multiply", "input:T other:T", C_TT, F(tg_mul), true},
    {"div", "input:T other:T", C_TT, F(tg_div), true},
    {"divide", "input:T other:T", C_TT, F(tg_div), true},
    {"true_divide", "input:T other:T", C_TT, F(tg_div), true},
    {"pow", "input:T exponent:T", C_TT, F(tg_pow), true},
    {"maximum", "input:T other:T", C_TT, F(tg_maximum), true},
    {"minimum", "input:T other:T", C_TT, F(tg_minimum), true},
    {"eq", "input:T other:T", C_TT, F(tg_eq), true},
    {"ne", "input:T other:T", C_TT, F(tg_ne), true},
    {"lt", "input:T other:T", C_TT, F(tg_lt), true},
    {"le", "input:T other:T", C_TT, F(tg_le), true},
    {"gt", "input:T other:T", C_TT, F(tg_gt), true},
    {"ge", "input:T other:T", C_TT, F(tg_ge), true},
    {"logical_and", "input:T other:T", C_TT, F(tg_logical_and), true},
    {"logical_or", "input:T other:T", C_TT, F(tg_logical_or), true},
    {"logical_xor", "input:T other:T", C_TT, F(tg_logical_xor), true},
    {"where", "condition:T input:T other:T", C_TTT, F(tg_where), false},
    /* elementwise unary */
    {"neg", "input:T", C_T, F(tg_neg), true},
    {"negative", "input:T", C_T, F(tg_neg), true},
    {"abs", "input:T", C_T, F(tg_abs), true},
    {"exp", "input:T", C_T, F(tg_exp), true},
    {"log", "input:T", C_T, F(tg_log), true},
    {"sqrt", "input:T", C_T, F(tg_sqrt), true},
    {"rsqrt", "input:T", C_T, F(tg_rsqrt), true},
    {"sin", "input:T", C_T, F(tg_sin), true},
    {"cos", "input:T", C_T, F(tg_cos), true},
    {"tanh", "input:T", C_T, F(tg_tanh), true},
    {"sigmoid", "input:T", C_T, F(tg_sigmoid), true},
    {"relu", "input:T", C_T, F(tg_relu), true},
    {"gelu", "input:T", C_T, F(tg_gelu), false},
    {"erf", "input:T", C_T, F(tg_erf), true},
    {"softplus", "input:T", C_T, F(tg_softplus), false},
    {"floor", "input:T", C_T, F(tg_floor), true},
    {"ceil", "input:T", C_T, F(tg_ceil), true},
    {"round", "input:T", C_T, F(tg_round), true},
    {"sign", "input:T", C_T, F(tg_sign), true},
    {"logical_not", "input:T", C_T, F(tg_logical_not), true},
    {"leaky_relu", "input:T negative_slope:f=0.01", C_TD, F(tg_leaky_relu), false},
    {"elu", "input:T alpha:f=1.0", C_TD, F(tg_elu), false},
    {"clamp", "input:T min:d=None max:d=None", C_TDD, F(tg_clamp), true},
    {"clip", "input:T min:d=None max:d=None", C_TDD, F(tg_clamp), true},
    {"_cast", "input:T dtype:D", C_CAST, F(tg_cast), false},
    /* reductions */
    {"sum", "input:T dim:A=None keepdim:b=False", C_TAB, F(tg_sum), true},
    {"mean", "input:T dim:A=None keepdim:b=False", C_TAB, F(tg_mean), true},
    {"prod", "input:T dim:A=None keepdim:b=False", C_TAB, F(tg_prod), true},
    {"amax", "input:T dim:A=None keepdim:b=False", C_TAB, F(tg_max), true},
    {"amin", "input:T dim:A=None keepdim:b=False", C_TAB, F(tg_min), true},
    {"logsumexp", "input:T dim:A keepdim:b=False", C_TAB, F(tg_logsumexp), true},
    {"var", "input:T dim:A=None unbiased:b=True keepdim:b=False correction:d=None", C_VAR,
     F(tg_var), true},
    {"std", "input:T dim:A=None unbiased:b=True keepdim:b=False correction:d=None", C_VAR,
     F(tg_std), true},
    {"argmax", "input:T dim:d=None keepdim:b=False", C_ARG, F(tg_argmax), true},
    {"argmin", "input:T dim:d=None keepdim:b=False", C_ARG, F(tg_argmin), true},
    /* views and copies */
    {"view", "input:T shape:S", C_TS, F(tg_view), true},
    {"reshape", "input:T shape:S", C_TS, F(tg_reshape), true},
    {"expand", "input:T size:S", C_TS, F(tg_expand), true},
    {"tile", "input:T dims:S", C_TS, F(tg_tile), true},
    {"permute", "input:T dims:S", C_TP, F(tg_permute), true},
    {"transpose", "input:T dim0:i dim1:i", C_TII, F(tg_transpose), true},
    {"swapaxes", "input:T axis0:i axis1:i", C_TII, F(tg_transpose), true},
    {"flatten", "input:T start_dim:i=0 end_dim:i=-1", C_TII, F(tg_flatten), true},
    {"squeeze", "input:T dim:d=None", C_SQUEEZE, NULL, true},
    {"unsqueeze", "input:T dim:i", C_TI, F(tg_unsqueeze), true},
    {"contiguous", "input:T", C_T, F(tg_contiguous), true},
    {"clone", "input:T", C_T, F(tg_clone), true},
    /* linear algebra and networks */
    {"matmul", "input:T other:T", C_TT, F(tg_matmul), true},
    {"mm", "input:T mat2:T", C_TT, F(tg_matmul), true},
    {"bmm", "input:T mat2:T", C_TT, F(tg_matmul), true},
    {"linear", "input:T weight:T bias:O=None", C_TTO, F(tg_linear), false},
    {"conv2d", "input:T weight:T bias:O=None stride:P=1 padding:P=0 dilation:P=1 groups:i=1",
     C_CONV, F(tg_conv2d), false},
    {"max_pool2d", "input:T kernel_size:P stride:p=None padding:P=0 dilation:P=1 "
     "ceil_mode:b=False return_indices:b=False", C_POOL, F(tg_max_pool2d), false},
    {"avg_pool2d", "input:T kernel_size:P stride:p=None padding:P=0 ceil_mode:b=False "
     "count_include_pad:b=True divisor_override:d=None", C_POOL, F(tg_avg_pool2d), false},
    {"_global_avg_pool2d", "input:T", C_T, F(tg_global_avg_pool2d), false},
    {"batch_norm", "input:T running_mean:O running_var:O weight:O=None bias:O=None "
     "training:b=False momentum:f=0.1 eps:f=1e-05", C_BN, F(tg_batch_norm), false},
    {"layer_norm", "input:T normalized_shape:S weight:O=None bias:O=None eps:f=1e-05", C_LN,
     F(tg_layer_norm), false},
    {"dropout", "input:T p:f=0.5 training:b=True inplace:b=False generator:G=None", C_DROP,
     F(tg_dropout), false},
    {"softmax", "input:T dim:i", C_TI, F(tg_softmax), true},
    {"log_softmax", "input:T dim:i", C_TI, F(tg_log_softmax), true},
    {"embedding", "input:T weight:T", C_EMB, F(tg_embedding), false},
    /* losses */
    {"mse_loss", "input:T target:T reduction:R=mean", C_TTR, F(tg_mse_loss), false},
    {"cross_entropy", "input:T target:T reduction:R=mean", C_TTR, F(tg_cross_entropy), false},
    {"nll_loss", "input:T target:T reduction:R=mean", C_TTR, F(tg_nll_loss), false},
    {"binary_cross_entropy_with_logits", "input:T target:T reduction:R=mean", C_TTR,
     F(tg_bce_with_logits), false},
    /* array ops */
    {"cat", "tensors:L dim:i=0", C_LIST, F(tg_concat), false},
    {"concat", "tensors:L dim:i=0", C_LIST, F(tg_concat), false},
    {"stack", "tensors:L dim:i=0", C_LIST, F(tg_stack), false},
    {"gather", "input:T dim:i index:T", C_TIT, F(tg_gather), true},
    {"index_select", "input:T dim:i index:T", C_TIT, F(tg_index_select), true},
    {"_pad", "input:T pad:S value:f=0", C_PAD, F(tg_pad), false},
    {"_one_hot", "input:T num_classes:i", C_ONEHOT, F(tg_one_hot), false},
};
#define N_OPS ((int)(sizeof op_rows / sizeof op_rows[0]))

/* ---- parsed signatures -------------------------------------------------------- */
typedef struct {
    char name[32];
    char kind;
    bool required, none_default;
    double num;         /* numeric default (i, f, b, d, P) */
    int red;            /* R default */
} param;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    const op_row *row;
    int n_params;
    param params[MAX_PARAMS];
} OpObject;

static int parse_signature(OpObject *op)
{
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

/* ---- one converted argument --------------------------------------------------- */
typedef struct {
    bool none;
    tg_tensor *t;               /* T, O (borrowed or in `owned`) */
    double f;                   /* i, f, b, d */
    int n;                      /* A: count (0 = all); S: ndim; L: count */
    int64_t shape[TG_MAX_DIMS]; /* S */
    int ints[TG_MAX_DIMS];      /* A, P (2) */
    tg_dtype dt;
    tg_reduction red;
    tg_generator *g;
    tg_tensor **list; /* L: owned array of owned references */
} argval;

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

static int as_int(const OpObject *op, const param *p, PyObject *o, long long *out)
{
    if (!PyIndex_Check(o) || (PyBool_Check(o) && p->kind != 'b')) {
        arg_error(op, p, "int", o);
        return -1;
    }
    *out = PyLong_AsLongLong(o);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int as_double(const OpObject *op, const param *p, PyObject *o, double *out)
{
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
    int n = tgpy_shape(o, dims, p->name);
    if (n < 0)
        return -1;
    if (n == 0 && !PyIndex_Check(o)) { /* an empty list means no dims: PyTorch's all */
        v->n = 0;
        return 0;
    }
    for (int i = 0; i < n; i++)
        v->ints[i] = (int)dims[i];
    v->n = n;
    (void)op;
    return 0;
}

static int as_pair(const OpObject *op, const param *p, PyObject *o, argval *v)
{
    int64_t d[TG_MAX_DIMS];
    int n = tgpy_shape(o, d, p->name);
    if (n < 0)
        return -1;
    if (n != 1 && n != 2) {
        PyErr_Format(PyExc_ValueError, "%s(): %s must be an int or a pair of ints",
                     op->row->name, p->name);
        return -1;
    }
    v->ints[0] = (int)d[0];
    v->ints[1] = (int)d[n - 1];
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
        if (p->kind == 'O' || p->kind == 'd' || p->kind == 'p' || p->kind == 'G' ||
            p->kind == 'A')
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
        if (as_int(op, p, o, &i) < 0)
            return -1;
        v->f = (double)i;
        return 0;
    case 'b': {
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
    case 'P':
    case 'p':
        return as_pair(op, p, o, v);
    case 'D':
        return tgpy_parse_dtype(o, &v->dt);
    case 'R':
        return as_reduction(op, o, v);
    case 'L':
        return as_list(op, p, o, v);
    case 'G':
        return (v->g = tgpy_generator(o)) ? 0 : -1;
    }
    PyErr_SetString(PyExc_SystemError, "op table: unknown parameter kind");
    return -1;
}

static void set_default(const param *p, argval *v)
{
    v->none = p->none_default;
    v->f = p->num;
    v->red = (tg_reduction)p->red;
    v->n = 0;
    v->ints[0] = v->ints[1] = (int)p->num;
    if (p->kind == 'G')
        v->g = tgpy_generator(NULL);
}

/* numbers and data given for tensor parameters, typed after the tensors */
static int convert_numbers(const OpObject *op, PyObject **slots, argval *v, call_state *cs)
{
    tg_dtype ref = TG_FLOAT32;
    bool has_ref = false;
    for (int k = 0; k < op->n_params; k++) /* the first non-bool tensor decides */
        if (v[k].t && (!has_ref || ref == TG_BOOL)) {
            ref = tg_dtype_of(v[k].t);
            has_ref = true;
        }
    for (int k = 0; k < op->n_params; k++) {
        char kind = op->params[k].kind;
        if ((kind == 'T' || kind == 'O') && !v[k].t && !v[k].none && slots[k]) {
            tg_tensor *t = tgpy_as_tensor(slots[k], ref, has_ref);
            if (!t)
                return -1;
            v[k].t = cs->owned[cs->n_owned++] = t;
        }
    }
    return 0;
}

/* ---- calling through the C function's shape ------------------------------------- */
static tg_pool2d_opts pool_opts(const argval *v, bool avg)
{
    tg_pool2d_opts o = {{v[1].ints[0], v[1].ints[1]}, {0, 0}, {v[3].ints[0], v[3].ints[1]},
                        false, false};
    if (!v[2].none) {
        o.stride[0] = v[2].ints[0];
        o.stride[1] = v[2].ints[1];
    }
    o.ceil_mode = avg ? v[4].f != 0 : v[5].f != 0;
    o.count_include_pad = avg && v[5].f != 0;
    return o;
}

static tg_tensor *invoke(const OpObject *op, argval *v)
{
    any_fn f = op->row->fn;
    switch (op->row->call) {
    case C_T: return ((fn_t)f)(v[0].t);
    case C_TT: return ((fn_tt)f)(v[0].t, v[1].t);
    case C_TTT: return ((fn_ttt)f)(v[0].t, v[1].t, v[2].t);
    case C_TD: return ((fn_td)f)(v[0].t, v[1].f);
    case C_TDD:
        return ((fn_tdd)f)(v[0].t, v[1].none ? -INFINITY : v[1].f, v[2].none ? INFINITY : v[2].f);
    case C_TI: return ((fn_ti)f)(v[0].t, (int)v[1].f);
    case C_TII: return ((fn_tii)f)(v[0].t, (int)v[1].f, (int)v[2].f);
    case C_TAB: return ((fn_tab)f)(v[0].t, v[1].n, v[1].ints, v[2].f != 0);
    case C_VAR: {
        int corr = v[4].none ? (v[2].f != 0) : (int)v[4].f;
        return ((fn_var)f)(v[0].t, v[1].n, v[1].ints, corr, v[3].f != 0);
    }
    case C_ARG:
        if (v[1].none) { /* over all elements: of the flattened tensor */
            tg_tensor *flat = tg_reshape(v[0].t, 1, (int64_t[]){-1});
            tg_tensor *r = ((fn_arg)f)(flat, 0, false);
            tg_release(flat);
            if (r && v[2].f != 0) {
                int64_t ones[TG_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
                tg_tensor *k = tg_reshape(r, tg_ndim(v[0].t), ones);
                tg_release(r);
                r = k;
            }
            return r;
        }
        return ((fn_arg)f)(v[0].t, (int)v[1].f, v[2].f != 0);
    case C_TS: return ((fn_ts)f)(v[0].t, v[1].n, v[1].shape);
    case C_TP: {
        int perm[TG_MAX_DIMS];
        if (v[1].n != tg_ndim(v[0].t)) {
            tg_clear_error();
            PyErr_Format(PyExc_RuntimeError, "permute: number of dims don't match in permute "
                         "(%d given for a tensor of %d dims)", v[1].n, tg_ndim(v[0].t));
            return NULL;
        }
        for (int i = 0; i < v[1].n; i++)
            perm[i] = (int)v[1].shape[i];
        return ((fn_tp)f)(v[0].t, perm);
    }
    case C_TTR: return ((fn_ttr)f)(v[0].t, v[1].t, v[2].red);
    case C_TTO: return ((fn_ttt)f)(v[0].t, v[1].t, v[2].t);
    case C_CAST: return ((fn_cast)f)(v[0].t, v[1].dt);
    case C_CONV: {
        tg_conv2d_opts o = {{v[3].ints[0], v[3].ints[1]}, {v[4].ints[0], v[4].ints[1]},
                            {v[5].ints[0], v[5].ints[1]}, (int)v[6].f};
        return tg_conv2d(v[0].t, v[1].t, v[2].t, &o);
    }
    case C_POOL: {
        bool avg = (fn_pool)f == tg_avg_pool2d;
        if (!avg && (v[4].ints[0] != 1 || v[4].ints[1] != 1 || v[6].f != 0)) {
            PyErr_SetString(PyExc_NotImplementedError, "max_pool2d: dilation != 1 and "
                            "return_indices are not supported");
            return NULL;
        }
        if (avg && !v[6].none) {
            PyErr_SetString(PyExc_NotImplementedError, "avg_pool2d: divisor_override is not "
                            "supported");
            return NULL;
        }
        tg_pool2d_opts o = pool_opts(v, avg);
        return ((fn_pool)f)(v[0].t, &o);
    }
    case C_BN:
        return tg_batch_norm(v[0].t, v[1].t, v[2].t, v[3].t, v[4].t, v[5].f != 0, v[6].f,
                             v[7].f);
    case C_LN: {
        int nd = tg_ndim(v[0].t), n = v[1].n;
        bool ok = n >= 1 && n <= nd;
        for (int i = 0; ok && i < n; i++)
            ok = tg_shape(v[0].t)[nd - n + i] == v[1].shape[i];
        if (!ok) {
            PyErr_Format(PyExc_RuntimeError, "layer_norm: normalized_shape must match the "
                         "last %d dims of the input", n);
            return NULL;
        }
        return tg_layer_norm(v[0].t, n, v[2].t, v[3].t, v[4].f);
    }
    case C_DROP: return tg_dropout(v[0].t, v[1].f, v[2].f != 0, v[4].g);
    case C_EMB: return tg_embedding(v[1].t, v[0].t);
    case C_LIST: return ((fn_list)f)(v[0].n, v[0].list, (int)v[1].f);
    case C_TIT: return ((fn_tit)f)(v[0].t, (int)v[1].f, v[2].t);
    case C_PAD: return tg_pad(v[0].t, v[1].n, v[1].shape, v[2].f);
    case C_ONEHOT: return tg_one_hot(v[0].t, (int64_t)v[1].f);
    case C_SQUEEZE: return v[1].none ? tg_squeeze_all(v[0].t) : tg_squeeze(v[0].t, (int)v[1].f);
    }
    return NULL;
}

static int64_t work_size(const OpObject *op, const argval *v)
{
    int64_t n = 0;
    for (int k = 0; k < op->n_params; k++)
        if (v[k].t)
            n += tg_numel(v[k].t);
    return op->row->call == C_CONV ? n * 64 : n;
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
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, j);
        int k = 0;
        while (k < np && PyUnicode_CompareWithASCIIString(key, ps[k].name) != 0)
            k++;
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
                               PyObject *kwnames)
{
    const OpObject *op = (const OpObject *)self;
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
    tg_tensor *r;
    if (work_size(op, v) >= TGPY_GIL_FREE_NUMEL) {
        Py_BEGIN_ALLOW_THREADS
        r = invoke(op, v);
        Py_END_ALLOW_THREADS
    } else {
        r = invoke(op, v);
    }
    result = r ? tgpy_wrap(r) : PyErr_Occurred() ? NULL : tgpy_raise();
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
    PyObject *r = PyList_New(N_OPS);
    for (int i = 0; r && i < N_OPS; i++)
        PyList_SET_ITEM(r, i, Py_BuildValue("(ssO)", op_rows[i].name, op_rows[i].sig,
                                            op_rows[i].method ? Py_True : Py_False));
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
    for (int i = 0; i < N_OPS; i++) {
        OpObject *op = PyObject_New(OpObject, &Op_Type);
        if (!op)
            return -1;
        op->vectorcall = op_vectorcall;
        op->row = &op_rows[i];
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
