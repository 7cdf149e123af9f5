/* The key a tg.function call looks its traced graphs up by, and the tensors
 * the call feeds them: one pass over the arguments in C, because it runs on
 * every call of a compiled function (a small model's step is a few tens of
 * microseconds; the same loop in Python cost a tenth of it).
 *
 * A tensor argument keys by its shape and dtype (the graph is traced for
 * them); any other value by itself, or by its repr when it cannot be hashed
 * (a list), since a trace bakes Python values in. */
#include "tgpy.h"

static PyObject *tensor_kind, *value_kind; /* the entries' second item, interned */

static PyObject *shape_tuple(const tg_tensor *t)
{
    int nd = tg_ndim(t);
    const int64_t *shape = tg_shape(t);
    PyObject *s = PyTuple_New(nd);
    for (int d = 0; s && d < nd; d++) {
        PyObject *n = PyLong_FromLongLong(shape[d]);
        if (!n)
            Py_CLEAR(s);
        else
            PyTuple_SET_ITEM(s, d, n);
    }
    return s;
}

static PyObject *tensor_entry(PyObject *name, PyObject *v)
{
    PyObject *shape = shape_tuple(TENSOR(v));
    if (!shape)
        return NULL;
    PyObject *e = PyTuple_Pack(4, name, tensor_kind, shape, tgpy_dtype(tg_dtype_of(TENSOR(v))));
    Py_DECREF(shape);
    return e;
}

static PyObject *value_entry(PyObject *name, PyObject *v)
{
    if (PyObject_Hash(v) != -1)
        return PyTuple_Pack(3, name, value_kind, v);
    if (!PyErr_ExceptionMatches(PyExc_TypeError))
        return NULL;
    PyErr_Clear();
    PyObject *r = PyObject_Repr(v), *e = r ? PyTuple_Pack(3, name, value_kind, r) : NULL;
    Py_XDECREF(r);
    return e;
}

/* _call_signature(values, names): (key, tensors) for the argument values
 * (a tuple), named by their positions or, when names is a tuple, by it */
static PyObject *call_signature(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2 || !PyTuple_Check(args[0]) ||
        (args[1] != Py_None && (!PyTuple_Check(args[1]) ||
                                PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[0]))))
        return PyErr_Format(PyExc_TypeError,
                            "_call_signature(values, names): a tuple and None or a tuple "
                            "as long");
    Py_ssize_t n = PyTuple_GET_SIZE(args[0]);
    PyObject *key = PyTuple_New(n), *tensors = PyList_New(0);
    for (Py_ssize_t i = 0; key && tensors && i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(args[0], i);
        PyObject *name = args[1] == Py_None ? PyLong_FromSsize_t(i)
                                            : Py_NewRef(PyTuple_GET_ITEM(args[1], i));
        bool tensor = Tensor_Check(v);
        PyObject *entry = !name ? NULL : tensor ? tensor_entry(name, v) : value_entry(name, v);
        Py_XDECREF(name);
        if (!entry || (tensor && PyList_Append(tensors, v) < 0)) {
            Py_XDECREF(entry);
            Py_CLEAR(key);
            break;
        }
        PyTuple_SET_ITEM(key, i, entry);
    }
    if (!key || !tensors) {
        Py_XDECREF(key);
        Py_XDECREF(tensors);
        return NULL;
    }
    PyObject *both = PyTuple_Pack(2, key, tensors);
    Py_DECREF(key);
    Py_DECREF(tensors);
    return both;
}

static PyMethodDef call_signature_functions[] = {
    {"_call_signature", (PyCFunction)(void (*)(void))call_signature, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_call_signature(PyObject *m)
{
    tensor_kind = PyUnicode_InternFromString("tensor");
    value_kind = PyUnicode_InternFromString("value");
    if (!tensor_kind || !value_kind)
        return -1;
    return PyModule_AddFunctions(m, call_signature_functions);
}
