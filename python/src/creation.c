/* The creation functions the package's factories call (_full, _arange,
 * _random): a tensor of one value, a range, random draws; inside a trace
 * the range and the uniform and normal draws are graph nodes. */
#include "tgpy.h"

#include <string.h>

/* a factory's size and dtype arguments: the number of dims, or -1 with
 * the Python error set */
static int size_and_dtype(PyObject *size, PyObject *dtype, int64_t *shape, tg_dtype *dt)
{
    int nd = tgpy_shape(size, shape, "size");
    return nd < 0 || tgpy_parse_dtype(dtype, dt) < 0 ? -1 : nd;
}

/* _full(shape, dtype, value): a tensor of one value */
static PyObject *full(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    int64_t shape[TG_MAX_DIMS];
    tg_dtype dt;
    if (n != 3)
        return PyErr_Format(PyExc_TypeError, "_full(shape, dtype, value)");
    int nd = size_and_dtype(args[0], args[1], shape, &dt);
    if (nd < 0)
        return NULL;
    double v = PyFloat_AsDouble(args[2]);
    if (v == -1.0 && PyErr_Occurred())
        return NULL;
    return tgpy_wrap(tg_full(dt, nd, shape, v));
}

static PyObject *arange(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    tg_dtype dt;
    double a[3];
    if (n != 4 || tgpy_parse_dtype(args[3], &dt) < 0)
        return n != 4 ? PyErr_Format(PyExc_TypeError, "_arange(start, end, step, dtype)") : NULL;
    for (int i = 0; i < 3; i++)
        if ((a[i] = PyFloat_AsDouble(args[i])) == -1.0 && PyErr_Occurred())
            return NULL;
    return tgpy_wrap(tg_range(dt, a[0], a[1], a[2])); /* the op: a node when traced */
}

/* _random(kind, shape, dtype, a, b, generator): uniform, normal, bernoulli */
static PyObject *random_tensor(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    int64_t shape[TG_MAX_DIMS];
    tg_dtype dt;
    if (n != 6)
        return PyErr_Format(PyExc_TypeError, "_random(kind, shape, dtype, a, b, generator)");
    const char *kind = PyUnicode_AsUTF8(args[0]);
    int nd = kind ? size_and_dtype(args[1], args[2], shape, &dt) : -1;
    if (nd < 0)
        return NULL;
    double a = PyFloat_AsDouble(args[3]), b = PyFloat_AsDouble(args[4]);
    tg_generator *g = tgpy_generator(args[5]);
    if (PyErr_Occurred() || !g)
        return NULL;
    bool normal = !strcmp(kind, "normal");
    if ((normal || !strcmp(kind, "uniform")) && tg_graph_current()) {
        /* traced: a node that draws at every call, not a constant */
        tg_tensor *dims = tg_from_data(TG_INT64, 1, (int64_t[]){nd}, shape);
        tg_tensor *r = !dims ? NULL : normal ? tg_rand_normal_by(g, dims, dt, a, b)
                                             : tg_rand_uniform_by(g, dims, dt, a, b);
        tg_release(dims);
        return tgpy_wrap(r);
    }
    if (tg_graph_current())
        return PyErr_Format(PyExc_RuntimeError, "%s inside tg.function: not a graph op yet "
                            "(its draws would be constants of the trace); draw it outside",
                            kind);
    if (normal)
        return tgpy_wrap(tg_rand_normal(g, dt, nd, shape, a, b));
    if (!strcmp(kind, "uniform"))
        return tgpy_wrap(tg_rand_uniform(g, dt, nd, shape, a, b));
    if (!strcmp(kind, "bernoulli"))
        return tgpy_wrap(tg_rand_bernoulli(g, nd, shape, a));
    if (!strcmp(kind, "randperm"))
        return tgpy_wrap(tg_randperm(g, (int64_t)a));
    return PyErr_Format(PyExc_ValueError, "_random: unknown kind %s", kind);
}

#define FAST(name, fn) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, NULL}
static PyMethodDef creation_functions[] = {
    FAST("_full", full), FAST("_arange", arange), FAST("_random", random_tensor),
    {NULL, NULL, 0, NULL}};

int tgpy_init_creation(PyObject *m) { return PyModule_AddFunctions(m, creation_functions); }
