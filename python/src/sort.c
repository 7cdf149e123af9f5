/* torch.topk and torch.sort: ops with two outputs (values, indices),
 * returned as a pair that tensorgraph.return_types names. */
#include "ops.h"
#include "tgpy.h"

/* wraps both outputs (taking their references) into a tuple */
static PyObject *pair(tg_status s, tg_tensor *v, tg_tensor *i)
{
    if (s != TG_OK)
        return tgpy_raise();
    PyObject *a = tgpy_wrap(v), *b = a ? tgpy_wrap(i) : (tg_release(i), NULL);
    if (!b) {
        Py_XDECREF(a);
        return NULL;
    }
    PyObject *t = PyTuple_Pack(2, a, b);
    Py_DECREF(a);
    Py_DECREF(b);
    return t;
}

static int args_ok(PyObject *const *args, Py_ssize_t n, Py_ssize_t want, const char *usage)
{
    if (n == want && Tensor_Check(args[0]))
        return 0;
    PyErr_Format(PyExc_TypeError, "%s", usage);
    return -1;
}

/* the dim argument: PyTorch's IndexError when out of range, checked on
 * the Python int (a cast to int made dim 2**32 dim 0) */
static int dim_arg(const char *fn, PyObject *o, const tg_tensor *x, int *out)
{
    long d = PyLong_AsLong(o);
    if (d == -1 && PyErr_Occurred())
        return -1;
    if (tgpy_check_dim(fn, d, tg_ndim(x)) < 0)
        return -1;
    *out = (int)d;
    return 0;
}

/* _topk(input, k, dim, largest, sorted) */
static PyObject *topk(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (args_ok(args, n, 5, "_topk(input, k, dim, largest, sorted)") < 0)
        return NULL;
    long long k = PyLong_AsLongLong(args[1]);
    int dim = 0;
    if ((k == -1 && PyErr_Occurred()) || dim_arg("topk", args[2], TENSOR(args[0]), &dim) < 0)
        return NULL;
    int largest = PyObject_IsTrue(args[3]), sorted = PyObject_IsTrue(args[4]);
    if (PyErr_Occurred() || largest < 0 || sorted < 0)
        return NULL;
    tg_tensor *x = TENSOR(args[0]), *v, *i;
    tgpy_note_inputs(&x, 1);
    tg_status s = tg_topk(x, k, dim, largest, sorted, &v, &i); /* before v, i are read */
    return pair(s, v, i);
}

/* _sort(input, dim, descending) */
static PyObject *sort(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    int dim = 0;
    if (args_ok(args, n, 3, "_sort(input, dim, descending)") < 0 ||
        dim_arg("sort", args[1], TENSOR(args[0]), &dim) < 0)
        return NULL;
    int desc = PyObject_IsTrue(args[2]);
    if (PyErr_Occurred() || desc < 0)
        return NULL;
    tg_tensor *x = TENSOR(args[0]), *v, *i;
    tgpy_note_inputs(&x, 1);
    tg_status s = tg_sort(x, dim, desc, &v, &i);
    return pair(s, v, i);
}

/* _argsort(input, dim, descending) */
static PyObject *argsort(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    int dim = 0;
    if (args_ok(args, n, 3, "_argsort(input, dim, descending)") < 0 ||
        dim_arg("argsort", args[1], TENSOR(args[0]), &dim) < 0)
        return NULL;
    int desc = PyObject_IsTrue(args[2]);
    if (PyErr_Occurred() || desc < 0)
        return NULL;
    tg_tensor *x = TENSOR(args[0]);
    tgpy_note_inputs(&x, 1);
    return tgpy_wrap(tg_argsort(x, dim, desc));
}

#define FAST(name, fn) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, NULL}
static PyMethodDef sort_functions[] = {
    FAST("_topk", topk), FAST("_sort", sort), FAST("_argsort", argsort), {NULL, NULL, 0, NULL}};

int tgpy_init_sort(PyObject *m) { return PyModule_AddFunctions(m, sort_functions); }
