/* Autograd from Python: grad_fn names (PyTorch's node names given to
 * nodes a front-end op made of other C ops) and view tracking (_base,
 * multi-output views, in-place checks on views). */
#include "tgpy.h"

static PyObject *grad_fn_name(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    const char *name = tg_grad_fn_name(TENSOR(t));
    if (!name)
        Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

/* the names given to grad_fns (tg_set_grad_fn_name keeps the pointer):
 * interned strings kept for the life of the process */
static PyObject *grad_fn_names;

/* PyTorch's name for t's grad_fn when the op was made of another C op */
int tgpy_set_grad_fn_name(tg_tensor *t, const char *name)
{
    if (!tg_grad_fn_name(t))
        return 0;
    return tg_set_grad_fn_name(t, name) == TG_OK ? 0 : (tgpy_raise(), -1);
}

int tgpy_name_inplace(tg_tensor *t, const char *name)
{
    return tg_view_base(t) ? 0 : tgpy_set_grad_fn_name(t, name);
}

/* _set_grad_fn_name(t, name): t's grad_fn shown as PyTorch's name; returns t */
static PyObject *set_grad_fn_name(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *t, *name;
    if (!PyArg_ParseTuple(args, "O!U", &Tensor_Type, &t, &name))
        return NULL;
    if (!grad_fn_names && !(grad_fn_names = PyDict_New()))
        return NULL;
    PyObject *kept = PyDict_SetDefault(grad_fn_names, name, name); /* borrowed */
    const char *s = kept ? PyUnicode_AsUTF8(kept) : NULL;
    if (!s || tgpy_set_grad_fn_name(TENSOR(t), s) < 0)
        return NULL;
    return Py_NewRef(t);
}

/* _name_inplace(t, name): the same after an in-place write, unless t is a view */
static PyObject *name_inplace(PyObject *m, PyObject *args)
{
    PyObject *t, *name;
    if (!PyArg_ParseTuple(args, "O!U", &Tensor_Type, &t, &name))
        return NULL;
    if (tg_view_base(TENSOR(t)))
        return Py_NewRef(t);
    return set_grad_fn_name(m, args);
}

/* _view_base(t): the tensor t views (PyTorch's _base: the root of a chain
 * of views), as the wrapper already holding it when there is one, or None */
static PyObject *view_base(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    tg_tensor *b = tg_view_base(TENSOR(t));
    if (!b)
        Py_RETURN_NONE;
    PyObject *w = tg_owner(b);
    return w ? Py_NewRef(w) : tgpy_wrap(tg_retain(b));
}

/* _untrack_view(t): t, a view of a temporary made for it, is no view
 * (results PyTorch makes as copies); returns t */
static PyObject *untrack_view(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    tg_view_untrack_temporary(TENSOR(t));
    return Py_NewRef(t);
}

static PyObject *is_view(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    return PyBool_FromLong(tg_view_base(TENSOR(t)) != NULL);
}

/* _mark_multi_output(parts, fn): parts (a tuple of views) are the
 * outputs of split / split_with_sizes / unbind (tg_mark_multi_output_view);
 * returns parts */
static PyObject *mark_multi_output(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *parts;
    const char *fn;
    if (!PyArg_ParseTuple(args, "O!s", &PyTuple_Type, &parts, &fn))
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(parts); i++) {
        PyObject *t = PyTuple_GET_ITEM(parts, i);
        if (!Tensor_Check(t))
            return PyErr_Format(PyExc_TypeError, "expected a tuple of Tensors");
        if (tg_mark_multi_output_view(TENSOR(t), fn, (int)i) != TG_OK)
            return tgpy_raise();
    }
    return Py_NewRef(parts);
}

/* _check_view_inplace(t): tg_check_view_inplace(t, False), before the
 * in-place view ops (unsqueeze_, t_, ...) */
static PyObject *check_view_inplace(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    if (tg_check_view_inplace(TENSOR(t), false) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

/* _saved_result_is(result, dst): tg_autograd_saved_result_is, after an
 * in-place op copied its result into dst */
static PyObject *saved_result_is(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *r, *d;
    if (!PyArg_ParseTuple(args, "O!O!", &Tensor_Type, &r, &Tensor_Type, &d))
        return NULL;
    if (tg_autograd_saved_result_is(TENSOR(r), TENSOR(d)) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

/* _overlapping_write(t): tg_autograd_mark_overlapping_write */
static PyObject *overlapping_write(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    if (tg_autograd_mark_overlapping_write(TENSOR(t)) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyMethodDef grad_fn_functions[] = {
    {"_grad_fn_name", grad_fn_name, METH_O, NULL},
    {"_mark_multi_output", mark_multi_output, METH_VARARGS, NULL},
    {"_set_grad_fn_name", set_grad_fn_name, METH_VARARGS, NULL},
    {"_name_inplace", name_inplace, METH_VARARGS, NULL},
    {"_view_base", view_base, METH_O, NULL},
    {"_is_view", is_view, METH_O, NULL},
    {"_untrack_view", untrack_view, METH_O, NULL},
    {"_check_view_inplace", check_view_inplace, METH_O, NULL},
    {"_saved_result_is", saved_result_is, METH_VARARGS, NULL},
    {"_overlapping_write", overlapping_write, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_autograd_history(PyObject *m)
{
    return PyModule_AddFunctions(m, grad_fn_functions);
}
