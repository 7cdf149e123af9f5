/* The Tensor type: lifetime, attributes, conversions (item, tolist) and
 * in-place updates. The buffer protocol both ways (numpy views,
 * from_numpy) is in buffer.c, the creation functions in creation.c; ops
 * are attached in ops.c. */
#include "tgpy.h"

#include <math.h>
#include <string.h>

PyObject *tgpy_wrap_as(PyTypeObject *type, tg_tensor *t)
{
    if (!t)
        return tgpy_raise();
    TensorObject *self = (TensorObject *)type->tp_alloc(type, 0);
    if (!self) {
        tg_release(t);
        return NULL;
    }
    self->t = t;
    if (!tg_owner(t)) /* the first wrapper is the one a view's _base gives back */
        tg_set_owner(t, self);
    return (PyObject *)self;
}

PyObject *tgpy_wrap(tg_tensor *t) { return tgpy_wrap_as(&Tensor_Type, t); }

static void tensor_dealloc(PyObject *o)
{
    TensorObject *self = (TensorObject *)o;
    if (self->weaklist)
        PyObject_ClearWeakRefs(o);
    Py_CLEAR(self->dict);
    if (tg_owner(self->t) == self)
        tg_set_owner(self->t, NULL);
    tg_release(self->t);
    Py_TYPE(o)->tp_free(o);
}

/* Tensor(2, 3) is uninitialised float32 in PyTorch (zeros here);
 * Tensor([1, 2]) converts data to float32 */
static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    if (kw && PyDict_Size(kw)) {
        PyErr_SetString(PyExc_TypeError, "Tensor() takes no keyword arguments");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int64_t shape[TG_MAX_DIMS];
    bool all_ints = n <= TG_MAX_DIMS;
    for (Py_ssize_t i = 0; i < n && all_ints; i++)
        all_ints = PyLong_Check(PyTuple_GET_ITEM(args, i));
    if (all_ints) {
        if (n == 0)
            shape[0] = 0;
        for (Py_ssize_t i = 0; i < n; i++)
            shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(args, i));
        return tgpy_wrap_as(type, tg_zeros(tg_default_float(), n ? (int)n : 1, shape));
    }
    if (n != 1) {
        PyErr_SetString(PyExc_TypeError, "Tensor(*sizes) or Tensor(data)");
        return NULL;
    }
    tg_tensor *t = tgpy_as_tensor(PyTuple_GET_ITEM(args, 0), tg_default_float(), true);
    if (!t)
        return NULL;
    tg_tensor *f = tg_cast(t, tg_default_float());
    tg_release(t);
    return tgpy_wrap_as(type, f);
}

/* the package's hooks, once it has registered them: the Python formatter
 * (tensorgraph._tensor_str, which follows the print options) for concrete
 * tensors' repr, and out= of the op table's functions: fn(name, out,
 * result) writes result into out (tensorgraph._out_arg) */
static PyObject *repr_hook, *out_hook;

static PyObject *set_hook(PyObject **slot, PyObject *fn, const char *name)
{
    if (!PyCallable_Check(fn))
        return PyErr_Format(PyExc_TypeError, "%s: a callable is needed", name);
    Py_XSETREF(*slot, Py_NewRef(fn));
    Py_RETURN_NONE;
}

static PyObject *set_repr_hook(PyObject *self, PyObject *fn)
{
    (void)self;
    return set_hook(&repr_hook, fn, "_set_repr_hook");
}

static PyObject *set_out_hook(PyObject *self, PyObject *fn)
{
    (void)self;
    return set_hook(&out_hook, fn, "_set_out_hook");
}

/* the C library's printing, which symbolic tensors always use */
static PyObject *c_repr(PyObject *self, PyObject *o)
{
    (void)self;
    if (!PyObject_TypeCheck(o, &Tensor_Type))
        return PyErr_Format(PyExc_TypeError, "_c_repr: a Tensor is needed");
    char *str = tg_to_string(TENSOR(o));
    if (!str)
        return tgpy_raise();
    PyObject *r = PyUnicode_FromString(str);
    free(str);
    return r;
}

PyObject *tgpy_out_hook(void) { return out_hook; }

static PyObject *tensor_repr(PyObject *o)
{
    if (repr_hook && !tg_is_symbolic(TENSOR(o)))
        return PyObject_CallOneArg(repr_hook, o);
    char *s = tg_to_string(TENSOR(o));
    if (!s)
        return tgpy_raise();
    PyObject *r = PyUnicode_FromString(s);
    free(s);
    return r;
}

/* ---- attributes ----------------------------------------------------------------- */
static PyObject *shape_tuple(const tg_tensor *t)
{
    int nd = tg_ndim(t);
    PyObject *r = PyTuple_New(nd);
    if (!r)
        return NULL;
    for (int i = 0; i < nd; i++)
        PyTuple_SET_ITEM(r, i, PyLong_FromLongLong(tg_shape(t)[i]));
    return r;
}

static PyObject *get_shape(PyObject *o, void *c) { (void)c; return shape_tuple(TENSOR(o)); }
static PyObject *get_dtype(PyObject *o, void *c)
{
    (void)c;
    return Py_NewRef(tgpy_dtype(tg_dtype_of(TENSOR(o))));
}
static PyObject *get_ndim(PyObject *o, void *c) { (void)c; return PyLong_FromLong(tg_ndim(TENSOR(o))); }
static PyObject *get_device(PyObject *o, void *c) { (void)c; (void)o; return PyUnicode_FromString("cpu"); }
static PyObject *get_requires_grad(PyObject *o, void *c)
{
    (void)c;
    tg_tensor *t = TENSOR(o);
    /* a traced floating-point value may carry gradients (the graph's
     * gradients are built later, over every node not made under no_grad):
     * code that takes a differentiable path only when its input requires
     * grad must take it while tracing, so it says so with grad mode on */
    if (tg_is_symbolic(t))
        return PyBool_FromLong(tg_dtype_is_float(tg_dtype_of(t)) && tg_grad_enabled());
    /* a view made with grad mode off says its base's, as PyTorch's (it
     * records nothing: PyTorch's gives no gradient through it either) */
    return PyBool_FromLong(tg_requires_grad(t) ||
                           (tg_is_nograd_view(t) && tg_requires_grad(tg_view_base(t))));
}
/* counts requires_grad changes of leaves: tg.function's guards re-read
 * the flags of the parameters a trace used only when it moved
 * (tensorgraph/_trace_guards.py) */
static unsigned long long requires_grad_epoch;

static PyObject *get_requires_grad_epoch(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    return PyLong_FromUnsignedLongLong(requires_grad_epoch);
}

static int set_requires_grad(PyObject *o, PyObject *v, void *c)
{
    (void)c;
    int on = v ? PyObject_IsTrue(v) : 0;
    if (on < 0)
        return -1;
    if (tg_is_leaf(TENSOR(o)) && on != tg_requires_grad(TENSOR(o)))
        requires_grad_epoch++; /* only a change: zero_grad sets it off every step */
    if (!tg_is_leaf(TENSOR(o)) && !on) {
        PyErr_SetString(PyExc_RuntimeError, "you can only change requires_grad flags of leaf "
                        "variables. If you want to use a computed variable in a subgraph that "
                        "doesn't require differentiation use var_no_grad = var.detach().");
        return -1;
    }
    if (!tg_is_leaf(TENSOR(o)))
        return 0;
    return tg_set_requires_grad(TENSOR(o), on) == TG_OK ? 0 : tgpy_fail_status(TG_ERR_ARG);
}
static PyObject *get_grad(PyObject *o, void *c)
{
    (void)c;
    PyObject *traced;
    int in_step = tgpy_tracing ? tgpy_step_grad(TENSOR(o), &traced) : 0;
    if (in_step)
        return in_step > 0 ? traced : NULL;
    tg_tensor *g = tg_grad(TENSOR(o));
    if (!g)
        Py_RETURN_NONE;
    return tgpy_wrap(tg_retain(g));
}
static int set_grad(PyObject *o, PyObject *v, void *c)
{
    (void)c;
    if (v && v != Py_None) { /* x.grad = g: g itself, as in PyTorch */
        if (!Tensor_Check(v)) {
            PyErr_Format(PyExc_TypeError, "assigned grad expected to be a Tensor or None but "
                         "got grad of type %s", Py_TYPE(v)->tp_name);
            return -1;
        }
        tg_status st = tg_set_grad(TENSOR(o), TENSOR(v));
        return st == TG_OK ? 0 : tgpy_fail_status(st);
    }
    tg_zero_grad(TENSOR(o));
    return 0;
}
static PyObject *get_is_leaf(PyObject *o, void *c) { (void)c; return PyBool_FromLong(tg_is_leaf(TENSOR(o))); }
static PyObject *get_version(PyObject *o, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(tg_version(TENSOR(o)));
}
static PyObject *get_data(PyObject *o, void *c)
{
    (void)c;
    return tgpy_wrap(tg_detach(TENSOR(o)));
}
/* x.data = y. PyTorch swaps the tensor's storage (the shape may change).
 * Here a tensor's tg_tensor is also held by the C optimizers and by
 * autograd nodes, so swapping the wrapper's tg_tensor would leave them
 * updating the old one: the values are copied in instead (grad mode off,
 * so parameters can be updated), which keeps identity, requires_grad and
 * .grad. A different shape or dtype is refused with NotImplementedError
 * rather than half-done. */
static int set_data(PyObject *o, PyObject *v, void *c)
{
    (void)c;
    if (!v) {
        PyErr_SetString(PyExc_TypeError, "cannot delete the data attribute");
        return -1;
    }
    if (!Tensor_Check(v)) {
        PyErr_Format(PyExc_TypeError, "data must be a Tensor, not %.100s", Py_TYPE(v)->tp_name);
        return -1;
    }
    tg_tensor *dst = TENSOR(o), *src = TENSOR(v);
    int nd = tg_ndim(dst);
    bool same = nd == tg_ndim(src) && tg_dtype_of(dst) == tg_dtype_of(src);
    for (int i = 0; same && i < nd; i++)
        same = tg_shape(dst)[i] == tg_shape(src)[i];
    if (!same) {
        char a[160], b[160];
        tg_shape_str(nd, tg_shape(dst), a, sizeof a);
        tg_shape_str(tg_ndim(src), tg_shape(src), b, sizeof b);
        PyErr_Format(PyExc_NotImplementedError,
                     "x.data = y copies y's values into x, so y must have x's shape and dtype "
                     "(x: %s %s, y: %s %s); replacing a tensor's storage with another shape "
                     "or dtype is not supported (create a new Parameter instead)",
                     a, tg_dtype_name(tg_dtype_of(dst)), b, tg_dtype_name(tg_dtype_of(src)));
        return -1;
    }
    if (dst == src)
        return 0;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(false);
    tg_status st = tg_copy_(dst, src);
    tg_set_grad_enabled(was);
    return st == TG_OK ? 0 : tgpy_fail_status(st);
}
static PyObject *get_T(PyObject *o, void *c)
{
    (void)c;
    int nd = tg_ndim(TENSOR(o)), perm[TG_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        perm[i] = nd - 1 - i;
    return tgpy_wrap(tg_permute(TENSOR(o), perm));
}
static PyObject *get_is_symbolic(PyObject *o, void *c)
{
    (void)c;
    return PyBool_FromLong(tg_is_symbolic(TENSOR(o)));
}
static PyObject *get_dict(PyObject *o, void *c)
{
    (void)c;
    TensorObject *self = (TensorObject *)o;
    if (!self->dict && !(self->dict = PyDict_New()))
        return NULL;
    return Py_NewRef(self->dict);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, NULL, "The shape as a tuple of ints.", NULL},
    {"dtype", get_dtype, NULL, NULL, NULL},
    {"ndim", get_ndim, NULL, NULL, NULL},
    {"device", get_device, NULL, "Always 'cpu' for now.", NULL},
    {"requires_grad", get_requires_grad, set_requires_grad, NULL, NULL},
    {"grad", get_grad, set_grad, "The accumulated gradient (a new wrapper each time).", NULL},
    {"is_leaf", get_is_leaf, NULL, NULL, NULL},
    {"_version", get_version, NULL, "The storage's in-place version counter.", NULL},
    {"data", get_data, set_data, "A detached tensor sharing the storage; assigning copies "
     "values of the same shape and dtype in.", NULL},
    {"T", get_T, NULL, "The dims reversed.", NULL},
    {"is_symbolic", get_is_symbolic, NULL, "True while tracing a tg.function.", NULL},
    {"__dict__", get_dict, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ---- methods -------------------------------------------------------------------- */
static PyObject *m_numel(PyObject *o, PyObject *u) { (void)u; return PyLong_FromLongLong(tg_numel(TENSOR(o))); }
static PyObject *m_dim(PyObject *o, PyObject *u) { (void)u; return PyLong_FromLong(tg_ndim(TENSOR(o))); }
static PyObject *m_element_size(PyObject *o, PyObject *u)
{
    (void)u;
    return PyLong_FromSize_t(tg_dtype_size(tg_dtype_of(TENSOR(o))));
}
static PyObject *m_is_contiguous(PyObject *o, PyObject *u) { (void)u; return PyBool_FromLong(tg_is_contiguous(TENSOR(o))); }
static PyObject *m_storage_offset(PyObject *o, PyObject *u) { (void)u; return PyLong_FromLongLong(tg_offset(TENSOR(o))); }
static PyObject *m_data_ptr(PyObject *o, PyObject *u)
{
    (void)u;
    void *p = tg_data(TENSOR(o));
    return p || tg_numel(TENSOR(o)) == 0 ? PyLong_FromVoidPtr(p) : tgpy_raise();
}
/* size()/stride()'s one optional argument, positional or dim=: the dim
 * wrapped into [0, ndim), -2 when none is given, -1 with an error set */
static long dim_arg(const char *fn, tg_tensor *t, PyObject *const *args, Py_ssize_t n,
                    PyObject *kwnames)
{
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (n + nk > 1 ||
        (nk == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "dim"))) {
        PyErr_Format(PyExc_TypeError, "%s() takes one optional argument, dim", fn);
        return -1;
    }
    if (n + nk == 0)
        return -2;
    long d = PyLong_AsLong(args[0]);
    if (d == -1 && PyErr_Occurred())
        return -1;
    int nd = tg_ndim(t);
    if (d < -nd || d >= nd || nd == 0) {
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of "
                     "[%d, %d], but got %ld)", -nd, nd - 1, d);
        return -1;
    }
    return d < 0 ? d + nd : d;
}

static PyObject *m_size(PyObject *o, PyObject *const *args, Py_ssize_t n, PyObject *kwnames)
{
    long d = dim_arg("size", TENSOR(o), args, n, kwnames);
    if (d == -2)
        return shape_tuple(TENSOR(o));
    return d < 0 ? NULL : PyLong_FromLongLong(tg_shape(TENSOR(o))[d]);
}
static PyObject *m_stride(PyObject *o, PyObject *const *args, Py_ssize_t n, PyObject *kwnames)
{
    tg_tensor *t = TENSOR(o);
    long d = dim_arg("stride", t, args, n, kwnames);
    if (d == -2) {
        PyObject *r = PyTuple_New(tg_ndim(t));
        for (int i = 0; r && i < tg_ndim(t); i++)
            PyTuple_SET_ITEM(r, i, PyLong_FromLongLong(tg_strides(t)[i]));
        return r;
    }
    return d < 0 ? NULL : PyLong_FromLongLong(tg_strides(t)[d]);
}

static PyObject *m_item(PyObject *o, PyObject *u)
{
    (void)u;
    tg_tensor *t = TENSOR(o);
    if (tgpy_concrete(t, "item()") < 0)
        return NULL;
    if (tg_numel(t) != 1)
        return PyErr_Format(PyExc_ValueError, "only one element tensors can be converted to "
                            "Python scalars"); /* PyTorch 1.13's words */
    tg_dtype dt = tg_dtype_of(t);
    if (dt == TG_FLOAT32 || dt == TG_FLOAT64) {
        double v;
        return tg_copy_to(t, TG_FLOAT64, &v) == TG_OK ? PyFloat_FromDouble(v) : tgpy_raise();
    }
    int64_t v;
    if (tg_copy_to(t, TG_INT64, &v) != TG_OK)
        return tgpy_raise();
    return dt == TG_BOOL ? PyBool_FromLong(v != 0) : PyLong_FromLongLong(v);
}

static PyObject *nested_list(const tg_tensor *t, int axis, const void *flat, int64_t *pos)
{
    int nd = tg_ndim(t);
    tg_dtype dt = tg_dtype_of(t);
    if (axis == nd) {
        int64_t i = (*pos)++;
        if (tg_dtype_is_float(dt))
            return PyFloat_FromDouble(((const double *)flat)[i]);
        int64_t v = ((const int64_t *)flat)[i];
        return dt == TG_BOOL ? PyBool_FromLong(v != 0) : PyLong_FromLongLong(v);
    }
    int64_t n = tg_shape(t)[axis];
    PyObject *r = PyList_New(n);
    for (int64_t i = 0; r && i < n; i++) {
        PyObject *e = nested_list(t, axis + 1, flat, pos);
        if (!e) {
            Py_CLEAR(r);
            break;
        }
        PyList_SET_ITEM(r, i, e);
    }
    return r;
}

static PyObject *m_tolist(PyObject *o, PyObject *u)
{
    (void)u;
    tg_tensor *t = TENSOR(o);
    if (tgpy_concrete(t, "tolist()") < 0)
        return NULL;
    int64_t n = tg_numel(t);
    void *flat = PyMem_Malloc((size_t)(n ? n : 1) * 8);
    if (!flat)
        return PyErr_NoMemory();
    tg_dtype as = tg_dtype_is_float(tg_dtype_of(t)) ? TG_FLOAT64 : TG_INT64;
    PyObject *r = NULL;
    if (tg_copy_to(t, as, flat) != TG_OK)
        tgpy_raise();
    else {
        int64_t pos = 0;
        r = nested_list(t, 0, flat, &pos);
    }
    PyMem_Free(flat);
    return r;
}

/* requires_grad_(requires_grad=True), positional or by keyword */
static PyObject *m_requires_grad_(PyObject *o, PyObject *const *args, Py_ssize_t n,
                                  PyObject *kwnames)
{
    Py_ssize_t n_kw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (n + n_kw > 1)
        return PyErr_Format(PyExc_TypeError, "requires_grad_() takes at most 1 argument "
                            "(%zd given)", n + n_kw);
    if (n_kw == 1 &&
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "requires_grad") != 0)
        return PyErr_Format(PyExc_TypeError, "requires_grad_() got an unexpected keyword "
                            "argument '%U'", PyTuple_GET_ITEM(kwnames, 0));
    PyObject *v = n + n_kw > 0 ? args[0] : Py_True;
    if (set_requires_grad(o, v, NULL) < 0)
        return NULL;
    return Py_NewRef(o);
}
static PyObject *m_detach(PyObject *o, PyObject *u) { (void)u; return tgpy_wrap(tg_detach(TENSOR(o))); }

/* ---- in-place updates (the C API refuses them on tensors that require
 * grad while grad mode is on, as PyTorch refuses them on leaves) ------------------- */
static PyObject *done_inplace(PyObject *o, tg_status s)
{
    return s == TG_OK ? Py_NewRef(o) : tgpy_raise();
}
/* the same, o's grad_fn named as PyTorch's for the in-place op */
static PyObject *done_named(PyObject *o, tg_status s, const char *name)
{
    if (s != TG_OK)
        return tgpy_raise();
    return tgpy_name_inplace(TENSOR(o), name) < 0 ? NULL : Py_NewRef(o);
}
static tg_tensor *operand_for(PyObject *o, PyObject *other)
{
    return tgpy_as_tensor(other, tg_dtype_of(TENSOR(o)), true);
}
static PyObject *m_zero_(PyObject *o, PyObject *u)
{
    (void)u;
    return done_named(o, tg_fill_(TENSOR(o), 0), "ZeroBackward0");
}
static PyObject *m_fill_(PyObject *o, PyObject *v)
{
    if (Tensor_Check(v)) { /* a 0-d tensor value: copied in, so its gradient flows */
        if (tg_ndim(TENSOR(v)) != 0)
            return PyErr_Format(PyExc_RuntimeError, "fill_ only supports 0-dimension value "
                                "tensor but got tensor with %d dimensions.", tg_ndim(TENSOR(v)));
        return done_named(o, tg_copy_(TENSOR(o), TENSOR(v)), "FillBackward3");
    }
    double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred())
        return NULL;
    return done_named(o, tg_fill_(TENSOR(o), d), "FillBackward2");
}
static PyObject *m_copy_(PyObject *o, PyObject *src)
{
    tg_tensor *s = operand_for(o, src);
    if (!s)
        return NULL;
    tg_status st = tg_copy_(TENSOR(o), s);
    tg_release(s);
    return done_named(o, st, "CopyBackwards");
}
/* add_(other, alpha=1) / sub_: self += alpha * other in one pass */
static PyObject *add_scaled(PyObject *o, PyObject *const *args, Py_ssize_t npos,
                            PyObject *kw, double sign)
{
    double alpha = 1.0;
    Py_ssize_t nkw = kw ? PyTuple_GET_SIZE(kw) : 0;
    PyObject *a = npos == 2 ? args[1] : NULL;
    if (npos < 1 || npos > 2 || nkw > 1 || (nkw == 1 && (a || PyUnicode_CompareWithASCIIString(
                                                               PyTuple_GET_ITEM(kw, 0), "alpha"))))
        return PyErr_Format(PyExc_TypeError, "expected (other, alpha=1)");
    if (nkw == 1)
        a = args[npos];
    PyObject *other = args[0];
    if (npos == 2 && tgpy_deprecated_alpha_first(sign > 0 ? "add_" : "sub_", &other, &a) < 0)
        return NULL;
    if (a && ((alpha = PyFloat_AsDouble(a)) == -1.0 && PyErr_Occurred()))
        return NULL;
    tg_dtype dt = tg_dtype_of(TENSOR(o));
    if (a && !tg_dtype_is_float(dt) && PyFloat_Check(a))
        return PyErr_Format(PyExc_RuntimeError, "For integral input tensors, argument alpha "
                            "must not be a floating point number.");
    tg_tensor *s = operand_for(o, other);
    if (!s)
        return NULL;
    if (sign < 0 && tgpy_check_bool_sub(TENSOR(o), s) < 0) {
        tg_release(s);
        return NULL;
    }
    if (tgpy_check_cast(tg_dtype_of(s), dt) < 0) {
        tg_release(s);
        return NULL;
    }
    if (tg_dtype_of(s) != dt) { /* a wider float (or int into float): in self's dtype */
        tg_tensor *c = tg_cast(s, dt);
        tg_release(s);
        if (!(s = c))
            return tgpy_raise();
    }
    if (dt == TG_BOOL) { /* PyTorch: bools add as a logical or (alpha 0: unchanged) */
        PyObject *r = alpha == 0 ? (Py_INCREF(o), o) : tgpy_update(o, s, tg_add);
        tg_release(s);
        return r;
    }
    tg_status st = tg_add_(TENSOR(o), s, sign * alpha);
    tg_release(s);
    return done_named(o, st, sign < 0 ? "SubBackward0" : "AddBackward0");
}
static PyObject *m_add_(PyObject *o, PyObject *const *args, size_t n, PyObject *kw)
{
    return add_scaled(o, args, PyVectorcall_NARGS(n), kw, 1.0);
}
static PyObject *m_sub_(PyObject *o, PyObject *const *args, size_t n, PyObject *kw)
{
    return add_scaled(o, args, PyVectorcall_NARGS(n), kw, -1.0);
}
/* mul_/div_ by a tensor: out of place, then written in (tgpy_update) */
static PyObject *combine_(PyObject *o, PyObject *other, binary_fn op)
{
    tg_tensor *s = operand_for(o, other);
    if (!s)
        return NULL;
    PyObject *r = tgpy_update(o, s, op);
    tg_release(s);
    return r;
}
static PyObject *m_mul_(PyObject *o, PyObject *other)
{
    if (PyFloat_Check(other) || PyLong_Check(other)) {
        double d = PyFloat_AsDouble(other);
        if (d == -1.0 && PyErr_Occurred())
            return NULL;
        if (tg_dtype_is_float(tg_dtype_of(TENSOR(o))))
            return done_named(o, tg_mul_scalar_(TENSOR(o), d), "MulBackward0");
    }
    return combine_(o, other, tg_mul);
}
static PyObject *m_div_(PyObject *o, PyObject *other) { return combine_(o, other, tg_div); }

static PyObject *m_random_(PyObject *o, PyObject *const *args, Py_ssize_t n, bool normal)
{
    double a = normal ? 0.0 : 0.0, b = 1.0;
    if (n > 0 && ((a = PyFloat_AsDouble(args[0])) == -1.0 && PyErr_Occurred()))
        return NULL;
    if (n > 1 && ((b = PyFloat_AsDouble(args[1])) == -1.0 && PyErr_Occurred()))
        return NULL;
    if (normal ? b < 0 : a > b) /* PyTorch's TORCH_CHECK */
        return PyErr_Format(PyExc_RuntimeError, normal ? "normal_: std must be >= 0, got %g"
                            : "uniform_: from (%g) must not be greater than to (%g)",
                            normal ? b : a, b);
    tg_generator *g = tgpy_generator(n > 2 ? args[2] : NULL);
    if (!g)
        return NULL;
    if (tg_graph_current()) /* a fill now would be a constant of the trace */
        return PyErr_Format(PyExc_RuntimeError, "%s inside tg.function: in-place random fills "
                            "are not traced; draw with tg.rand_like / tg.randn_like (graph "
                            "nodes that draw at every call)", normal ? "normal_" : "uniform_");
    tg_tensor *t = TENSOR(o);
    tg_dtype dt = tg_dtype_is_float(tg_dtype_of(t)) ? tg_dtype_of(t) : TG_FLOAT64;
    tg_tensor *r = normal ? tg_rand_normal(g, dt, tg_ndim(t), tg_shape(t), a, b)
                          : tg_rand_uniform(g, dt, tg_ndim(t), tg_shape(t), a, b);
    if (!r)
        return tgpy_raise();
    tg_status st = tg_copy_(t, r);
    tg_release(r);
    return done_inplace(o, st);
}
static PyObject *m_uniform_(PyObject *o, PyObject *const *args, Py_ssize_t n) { return m_random_(o, args, n, false); }
static PyObject *m_normal_(PyObject *o, PyObject *const *args, Py_ssize_t n) { return m_random_(o, args, n, true); }

/* Tensor._make_subclass(cls, data, requires_grad): nn.Parameter's base */
static PyObject *m_make_subclass(PyObject *unused, PyObject *args)
{
    (void)unused;
    PyObject *cls, *data;
    int rg = 0;
    if (!PyArg_ParseTuple(args, "OO!|p", &cls, &Tensor_Type, &data, &rg))
        return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &Tensor_Type))
        return PyErr_Format(PyExc_TypeError, "_make_subclass: cls must subclass Tensor");
    PyObject *r = tgpy_wrap_as((PyTypeObject *)cls, tg_detach(TENSOR(data)));
    if (r && rg && tg_set_requires_grad(TENSOR(r), true) != TG_OK) {
        Py_DECREF(r);
        return tgpy_raise();
    }
    return r;
}

/* self._rebind_(other): self now wraps other's tg_tensor, which must share
 * self's storage (PyTorch's squeeze_, t_, detach_ change the tensor
 * object itself; a numpy array exporting self's memory keeps pointing at
 * live storage because the storage is the same). An empty self may take
 * any storage (an out= tensor made by torch.empty(0)): an export of it
 * has no elements to read; and a traced value any other (neither holds
 * storage) */
static PyObject *m_rebind_(PyObject *o, PyObject *other)
{
    if (!Tensor_Check(other))
        return PyErr_Format(PyExc_TypeError, "_rebind_: expected a Tensor");
    /* two values of a trace hold no storage (x.detach_() in tg.function) */
    bool traced = tg_is_symbolic(TENSOR(o)) && tg_is_symbolic(TENSOR(other));
    if (!traced && tg_numel(TENSOR(o)) != 0 && !tg_shares_storage(TENSOR(o), TENSOR(other)))
        return PyErr_Format(PyExc_RuntimeError, "_rebind_: the tensors must share storage");
    tg_tensor *old = TENSOR(o);
    if (!traced && tg_view_rebind(TENSOR(other), old) != TG_OK) /* no view of self left */
        return tgpy_raise();
    ((TensorObject *)o)->t = tg_retain(TENSOR(other));
    if (tg_owner(old) == o)
        tg_set_owner(old, NULL);
    tg_set_owner(TENSOR(o), o); /* self is the tensor's wrapper now */
    tg_release(old);
    return Py_NewRef(o);
}

#define FAST(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, doc}
#define KWFAST(name, fn) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, NULL}
static PyMethodDef tensor_methods[] = {
    {"numel", m_numel, METH_NOARGS, NULL},
    {"nelement", m_numel, METH_NOARGS, NULL},
    {"dim", m_dim, METH_NOARGS, NULL},
    {"element_size", m_element_size, METH_NOARGS, NULL},
    {"is_contiguous", m_is_contiguous, METH_NOARGS, NULL},
    {"storage_offset", m_storage_offset, METH_NOARGS, NULL},
    {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"size", (PyCFunction)(void (*)(void))m_size, METH_FASTCALL | METH_KEYWORDS,
     "size() -> tuple, size(dim) -> int"},
    {"stride", (PyCFunction)(void (*)(void))m_stride, METH_FASTCALL | METH_KEYWORDS,
     "strides in elements"},
    {"item", m_item, METH_NOARGS, "The value of a one-element tensor as a Python number."},
    {"tolist", m_tolist, METH_NOARGS, "Nested lists of Python numbers."},
    KWFAST("requires_grad_", m_requires_grad_),
    {"detach", m_detach, METH_NOARGS, "A tensor sharing the storage, cut off from the graph."},
    {"zero_", m_zero_, METH_NOARGS, NULL},
    {"fill_", m_fill_, METH_O, NULL},
    {"copy_", m_copy_, METH_O, "Copies src (broadcast, converted) into self."},
    KWFAST("add_", m_add_),
    KWFAST("sub_", m_sub_),
    {"mul_", m_mul_, METH_O, NULL},
    {"div_", m_div_, METH_O, NULL},
    FAST("uniform_", m_uniform_, "uniform_(from=0, to=1, generator=None)"),
    FAST("normal_", m_normal_, "normal_(mean=0, std=1, generator=None)"),
    {"_make_subclass", m_make_subclass, METH_VARARGS | METH_STATIC, NULL},
    {"_rebind_", m_rebind_, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

static PyMethodDef create_functions[] = {
    {"_requires_grad_epoch", get_requires_grad_epoch, METH_NOARGS,
     "_requires_grad_epoch(): moves whenever a tensor's requires_grad is set"},
    {"from_numpy", tgpy_from_buffer, METH_O,
     "from_numpy(a): a tensor sharing a's memory (any buffer-protocol object)."},
    {"_set_repr_hook", set_repr_hook, METH_O, "_set_repr_hook(fn): repr of concrete tensors."},
    {"_c_repr", c_repr, METH_O, "_c_repr(t): the C library's printing of t."},
    {"_set_out_hook", set_out_hook, METH_O, "_set_out_hook(fn): out= of the ops."},
    {NULL, NULL, 0, NULL}};

/* `element in x`: Tensor.__contains__ (tensorgraph/_tensor.py, PyTorch's
 * (x == element).any()); without this slot Python would iterate the rows
 * and ask each comparison for its truth */
static int tensor_contains(PyObject *o, PyObject *element)
{
    PyObject *fn = PyDict_GetItemString(Tensor_Type.tp_dict, "__contains__"); /* borrowed */
    if (!fn || Py_IS_TYPE(fn, &PyWrapperDescr_Type)) {
        PyErr_SetString(PyExc_TypeError, "Tensor.__contains__ is not available");
        return -1;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(fn, o, element, NULL);
    if (!r)
        return -1;
    int b = PyObject_IsTrue(r);
    Py_DECREF(r);
    return b;
}
static PySequenceMethods tensor_sequence = {.sq_contains = tensor_contains};

/* iterating gives the views x[0], x[1], ... along the first dim */
static PyObject *tensor_iter(PyObject *o)
{
    tg_tensor *t = TENSOR(o);
    if (tg_ndim(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    int64_t n = tg_shape(t)[0];
    PyObject *rows = PyList_New(n);
    for (int64_t i = 0; rows && i < n; i++) {
        tg_tensor *s = tg_slice(t, 0, i, i + 1, 1);
        PyObject *row = tgpy_wrap(s ? tg_squeeze(s, 0) : NULL);
        tg_release(s);
        if (!row) {
            Py_CLEAR(rows);
            break;
        }
        PyList_SET_ITEM(rows, i, row);
    }
    PyObject *it = rows ? PyObject_GetIter(rows) : NULL;
    Py_XDECREF(rows);
    return it;
}

static Py_hash_t tensor_hash(PyObject *o) { return _Py_HashPointer(o); }

PyTypeObject Tensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph.Tensor",
    .tp_basicsize = sizeof(TensorObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = tensor_new,
    .tp_dealloc = tensor_dealloc,
    .tp_repr = tensor_repr,
    .tp_hash = tensor_hash,
    .tp_getset = tensor_getset,
    .tp_methods = tensor_methods,
    .tp_as_buffer = &tgpy_tensor_buffer,
    .tp_as_number = &tgpy_number_methods,
    .tp_as_mapping = &tgpy_mapping_methods,
    .tp_as_sequence = &tensor_sequence,
    .tp_richcompare = tgpy_richcompare,
    .tp_iter = tensor_iter,
    .tp_dictoffset = offsetof(TensorObject, dict),
    .tp_weaklistoffset = offsetof(TensorObject, weaklist),
    .tp_doc = "A multi-dimensional array with autograd (PyTorch's torch.Tensor).",
};

int tgpy_init_tensor(PyObject *m)
{
    if (PyType_Ready(&Tensor_Type) < 0 ||
        PyModule_AddObjectRef(m, "Tensor", (PyObject *)&Tensor_Type) < 0)
        return -1;
    return PyModule_AddFunctions(m, create_functions);
}
