/* Indexing: x[1:, ::2, None, ..., 0] as views (ints, slices with step
 * >= 1, None, Ellipsis) here in C; indices with tensors, lists or bools
 * (advanced indexing) go to tensorgraph/_indexing.py. Assignment writes
 * through the same view with copy_ (broadcast, converted) unless autograd
 * must record it (then _indexing.py writes the whole tensor). */
#include "tgpy.h"

static bool is_basic(PyObject *e)
{
    return e == Py_None || e == Py_Ellipsis || PySlice_Check(e) ||
           (PyLong_Check(e) && !PyBool_Check(e));
}

/* one index entry applied at dim *d of *r (replaced by the result) */
static int apply_entry(tg_tensor **r, int *d, PyObject *e)
{
    tg_tensor *x = *r, *y;
    if (e == Py_None) {
        y = tg_unsqueeze(x, *d);
        (*d)++;
    } else if (PySlice_Check(e)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(e, &start, &stop, &step) < 0)
            return -1;
        if (step <= 0) {
            PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
            return -1;
        }
        if (*d >= tg_ndim(x)) {
            PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d",
                         tg_ndim(x));
            return -1;
        }
        /* a whole unknown dim (a graph's value whose size comes at run
         * time, such as nonzero's count) is kept as it is */
        if (tg_shape(x)[*d] < 0 && start == 0 && stop == PY_SSIZE_T_MAX && step == 1)
            y = tg_retain(x);
        else
            y = tg_slice(x, *d, start, stop, step);
        (*d)++;
    } else {
        long long i = PyLong_AsLongLong(e);
        if (i == -1 && PyErr_Occurred())
            return -1;
        if (*d >= tg_ndim(x)) {
            PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d",
                         tg_ndim(x));
            return -1;
        }
        int64_t n = tg_shape(x)[*d];
        if (i < -n || i >= n) {
            PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with "
                         "size %lld", i, *d, (long long)n);
            return -1;
        }
        if (i < 0)
            i += n;
        tg_tensor *s = tg_slice(x, *d, i, i + 1, 1);
        y = s ? tg_squeeze(s, *d) : NULL;
        tg_release(s);
    }
    if (!y) {
        tgpy_raise();
        return -1;
    }
    tg_release(x);
    *r = y;
    /* PyTorch's names: an int index is a select, None an unsqueeze */
    return e == Py_None ? tgpy_set_grad_fn_name(y, "UnsqueezeBackward0")
           : !PySlice_Check(e) ? tgpy_set_grad_fn_name(y, "SelectBackward0") : 0;
}

/* the view x[idx] for basic indices; NULL with an exception */
static tg_tensor *basic_view(tg_tensor *t, PyObject *idx)
{
    PyObject *tup = PyTuple_Check(idx) ? Py_NewRef(idx) : PyTuple_Pack(1, idx);
    if (!tup)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    int consuming = 0, ellipses = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyTuple_GET_ITEM(tup, i);
        consuming += e != Py_None && e != Py_Ellipsis;
        ellipses += e == Py_Ellipsis;
    }
    tg_tensor *r = tg_retain(t);
    int d = 0;
    if (ellipses > 1) {
        PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
        goto fail;
    }
    if (consuming > tg_ndim(t)) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d",
                     tg_ndim(t));
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyTuple_GET_ITEM(tup, i);
        if (e == Py_Ellipsis)
            d += tg_ndim(t) - consuming;
        else if (apply_entry(&r, &d, e) < 0)
            goto fail;
    }
    Py_DECREF(tup);
    return r;
fail:
    tg_release(r);
    Py_DECREF(tup);
    return NULL;
}

static bool all_basic(PyObject *idx)
{
    if (!PyTuple_Check(idx))
        return is_basic(idx);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(idx); i++)
        if (!is_basic(PyTuple_GET_ITEM(idx, i)))
            return false;
    return true;
}

static PyObject *call_python(const char *fn, PyObject *x, PyObject *idx, PyObject *value)
{
    PyObject *f = tgpy_package_attr(fn);
    if (!f)
        return NULL;
    PyObject *r = value ? PyObject_CallFunctionObjArgs(f, x, idx, value, NULL)
                        : PyObject_CallFunctionObjArgs(f, x, idx, NULL);
    Py_DECREF(f);
    return r;
}

static PyObject *tensor_getitem(PyObject *x, PyObject *idx)
{
    if (!all_basic(idx))
        return call_python("_getitem", x, idx, NULL);
    tgpy_note_inputs(&TENSOR(x), 1);
    tg_tensor *r = basic_view(TENSOR(x), idx);
    return r ? tgpy_wrap(r) : NULL;
}

static int tensor_setitem(PyObject *x, PyObject *idx, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "tensors do not support item deletion");
        return -1;
    }
    /* writes that autograd must record go the general way: a view of a
     * tensor with history cannot be written (its base would not know) */
    bool recorded = tg_grad_enabled() &&
                    (tg_requires_grad(TENSOR(x)) ||
                     (Tensor_Check(value) && tg_requires_grad(TENSOR(value))));
    if (recorded || !all_basic(idx)) {
        PyObject *r = call_python("_setitem", x, idx, value);
        Py_XDECREF(r);
        return r ? 0 : -1;
    }
    tg_tensor *view = basic_view(TENSOR(x), idx);
    if (!view)
        return -1;
    tg_tensor *v = tgpy_as_tensor(value, tg_dtype_of(view), true);
    tg_status st = v ? tg_copy_(view, v) : TG_ERR_ARG;
    tg_release(v);
    tg_release(view);
    if (!v)
        return -1;
    return st == TG_OK ? 0 : tgpy_fail_status(st);
}

static Py_ssize_t tensor_length(PyObject *x)
{
    if (tg_ndim(TENSOR(x)) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)tg_shape(TENSOR(x))[0];
}

PyMappingMethods tgpy_mapping_methods = {tensor_length, tensor_getitem, tensor_setitem};

int tgpy_init_index(void) { return 0; }
