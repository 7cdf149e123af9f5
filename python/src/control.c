/* Control flow for Python: _C._cond, _C._while_loop and _C._scan over
 * tg_cond, tg_while_loop and tg_scan (tg/control.h). The Python callables get the tensors as
 * positional arguments and return a Tensor or a tuple of Tensors (the
 * loop condition a one-element bool Tensor, or a Python bool). In eager
 * mode they run once per branch taken or iteration; inside a traced
 * tg.function (graph mode) once per branch or body, traced into its
 * graph. A Python exception raised inside a callable propagates as that
 * exception. */
#include "tgpy.h"

/* one Python callable and its last results, kept alive until the C side
 * has taken its own references (which it does before the next call) */
typedef struct py_fn {
    PyObject *fn;
    PyObject *last; /* a tuple of Tensors */
    const char *what;
    bool flag;      /* the loop condition: a bool result */
} py_fn;

typedef struct py_pair {
    py_fn f[2];
    int n_in;
} py_pair;

/* r as a tuple of Tensors (numbers converted when `flag`), or NULL with
 * a TypeError naming the callable */
static PyObject *as_tensors(const py_fn *p, PyObject *r)
{
    if (p->flag && (PyBool_Check(r) || PyLong_Check(r))) {
        tg_tensor *t = tgpy_as_tensor(r, TG_BOOL, false);
        PyObject *w = t ? tgpy_wrap(t) : tgpy_raise();
        PyObject *tup = w ? PyTuple_Pack(1, w) : NULL;
        Py_XDECREF(w);
        return tup;
    }
    if (Tensor_Check(r))
        return PyTuple_Pack(1, r);
    PyObject *seq = PyTuple_Check(r) || PyList_Check(r) ? PySequence_Tuple(r) : NULL;
    Py_ssize_t n = seq ? PyTuple_GET_SIZE(seq) : 0;
    for (Py_ssize_t i = 0; seq && i < n; i++)
        if (!Tensor_Check(PyTuple_GET_ITEM(seq, i))) {
            PyErr_Format(PyExc_TypeError, "%s returned a %.100s as result %zd; expected "
                         "Tensors", p->what, Py_TYPE(PyTuple_GET_ITEM(seq, i))->tp_name, i);
            Py_DECREF(seq);
            return NULL;
        }
    if (!seq && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%s must return a Tensor or a tuple of Tensors, not "
                     "%.100s", p->what, Py_TYPE(r)->tp_name);
    if (seq && (n < 1 || n > TG_CONTROL_MAX_RESULTS)) {
        PyErr_Format(PyExc_ValueError, "%s returned %zd results; 1 to %d are supported",
                     p->what, n, TG_CONTROL_MAX_RESULTS);
        Py_CLEAR(seq);
    }
    return seq;
}

static tg_status call(py_fn *p, int n_in, tg_tensor *const *in, tg_tensor **out)
{
    Py_CLEAR(p->last);
    int token = tg_scope_hide();
    PyObject *args = PyTuple_New(n_in), *r = NULL;
    for (int i = 0; args && i < n_in; i++) {
        PyObject *w = tgpy_wrap(tg_retain(in[i]));
        if (!w) {
            Py_CLEAR(args);
            break;
        }
        PyTuple_SET_ITEM(args, i, w);
    }
    if (args)
        r = PyObject_Call(p->fn, args, NULL);
    Py_XDECREF(args);
    if (r) { /* converting a Python bool makes a tensor: still hidden */
        p->last = as_tensors(p, r);
        Py_DECREF(r);
    }
    tg_scope_unhide(token);
    if (!p->last) {
        tg_clear_error();
        return TG_ERR_ARG; /* the Python exception is the error */
    }
    Py_ssize_t n = PyTuple_GET_SIZE(p->last);
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = TENSOR(PyTuple_GET_ITEM(p->last, i));
    return TG_OK;
}

static tg_status first_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    py_pair *u = user;
    return call(&u->f[0], u->n_in, in, out);
}

static tg_status second_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    py_pair *u = user;
    return call(&u->f[1], u->n_in, in, out);
}

/* the tensors of a tuple into t (borrowed); -1 with a TypeError */
static int tensors_of(PyObject *tup, const char *fn, const char *what, tg_tensor **t, int max)
{
    if (!PyTuple_Check(tup))
        return PyErr_Format(PyExc_TypeError, "%s: %s must be a tuple of Tensors", fn, what),
               -1;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (n > max)
        return PyErr_Format(PyExc_ValueError, "%s: %zd %s, at most %d are supported", fn, n,
                            what, max),
               -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyTuple_GET_ITEM(tup, i);
        if (!Tensor_Check(e))
            return PyErr_Format(PyExc_TypeError, "%s: %s[%zd] is a %.100s, not a Tensor", fn,
                                what, i, Py_TYPE(e)->tp_name),
                   -1;
        t[i] = TENSOR(e);
    }
    return (int)n;
}

static PyObject *wrap_all(tg_tensor **t, int n)
{
    PyObject *tup = PyTuple_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *w = tup ? tgpy_wrap(t[i]) : NULL;
        if (!w) {
            for (int k = i + (tup ? 1 : 0); k < n; k++)
                tg_release(t[k]);
            Py_XDECREF(tup);
            return NULL;
        }
        PyTuple_SET_ITEM(tup, i, w);
    }
    return tup;
}

static void clear_pair(py_pair *u)
{
    Py_CLEAR(u->f[0].last);
    Py_CLEAR(u->f[1].last);
}

/* _cond(pred, then_fn, else_fn, operands) -> tuple */
static PyObject *py_cond(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n != 4 || !Tensor_Check(args[0]) || !PyCallable_Check(args[1]) ||
        !PyCallable_Check(args[2]))
        return PyErr_Format(PyExc_TypeError, "_cond(pred: Tensor, then_fn, else_fn, "
                            "operands: tuple)");
    tg_tensor *in[TG_CONTROL_MAX_RESULTS * 2], *out[TG_CONTROL_MAX_RESULTS];
    int n_in = tensors_of(args[3], "_cond", "operands", in, 63);
    if (n_in < 0)
        return NULL;
    py_pair u = {{{args[1], NULL, "cond's then branch", false},
                  {args[2], NULL, "cond's else branch", false}}, n_in};
    int token = tg_scope_hide();
    tg_status s = tg_cond(TENSOR(args[0]), first_fn, second_fn, &u, n_in, in, -1, out);
    tg_scope_unhide(token);
    clear_pair(&u);
    if (s != TG_OK)
        return tgpy_raise();
    int k = 0;
    while (k < TG_CONTROL_MAX_RESULTS && out[k])
        k++;
    return wrap_all(out, k);
}

/* shape_invariants: None, or per variable None or a sequence of ints */
static int parse_invariants(PyObject *o, int n, tg_shape_spec *inv)
{
    if (!PyList_Check(o) && !PyTuple_Check(o))
        return PyErr_Format(PyExc_TypeError, "_while_loop: shape_invariants must be a list"),
               -1;
    if (PySequence_Size(o) != n)
        return PyErr_Format(PyExc_ValueError, "_while_loop: %zd shape invariants for %d "
                            "loop variables", PySequence_Size(o), n),
               -1;
    for (int i = 0; i < n; i++) {
        PyObject *e = PySequence_GetItem(o, i);
        if (!e)
            return -1;
        inv[i].ndim = -1;
        int64_t dims[TG_MAX_DIMS];
        int k = e == Py_None ? 0 : tgpy_ints(e, dims, TG_MAX_DIMS, " dims", "shape invariant");
        Py_DECREF(e);
        if (k < 0)
            return -1;
        if (e != Py_None) {
            inv[i].ndim = k;
            for (int d = 0; d < k; d++)
                inv[i].shape[d] = dims[d];
        }
    }
    return 0;
}

/* _while_loop(cond_fn, body_fn, loop_vars, max_iterations, shape_invariants) */
static PyObject *py_while_loop(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n != 5 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1]))
        return PyErr_Format(PyExc_TypeError, "_while_loop(cond_fn, body_fn, loop_vars: tuple, "
                            "max_iterations: int | None, shape_invariants: list | None)");
    tg_tensor *init[TG_CONTROL_MAX_RESULTS], *out[TG_CONTROL_MAX_RESULTS];
    int nv = tensors_of(args[2], "_while_loop", "loop_vars", init, TG_CONTROL_MAX_RESULTS);
    if (nv < 0)
        return NULL;
    tg_loop_options o = {0};
    if (args[3] != Py_None) {
        o.max_iterations = PyLong_AsLongLong(args[3]);
        if (o.max_iterations == -1 && PyErr_Occurred())
            return NULL;
        if (o.max_iterations < 1)
            return PyErr_Format(PyExc_ValueError, "_while_loop: max_iterations must be "
                                "positive, got %lld", (long long)o.max_iterations);
    }
    tg_shape_spec inv[TG_CONTROL_MAX_RESULTS];
    if (args[4] != Py_None) {
        if (parse_invariants(args[4], nv, inv) < 0)
            return NULL;
        o.shape_invariants = inv;
    }
    py_pair u = {{{args[0], NULL, "while_loop's cond_fn", true},
                  {args[1], NULL, "while_loop's body_fn", false}}, nv};
    int token = tg_scope_hide();
    tg_status s = tg_while_loop(first_fn, second_fn, &u, nv, init, out, &o);
    tg_scope_unhide(token);
    clear_pair(&u);
    if (s != TG_OK)
        return tgpy_raise();
    return wrap_all(out, nv);
}

/* _scan(body_fn, init, xs) -> (carry, ys): body_fn(*carry, *x) returns
 * the new carry followed by the ys */
static PyObject *py_scan(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n != 3 || !PyCallable_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "_scan(body_fn, init: tuple, xs: tuple)");
    tg_tensor *in[TG_CONTROL_MAX_RESULTS * 2], *carry[TG_CONTROL_MAX_RESULTS];
    tg_tensor *ys[TG_CONTROL_MAX_RESULTS];
    int nc = tensors_of(args[1], "_scan", "init", in, TG_CONTROL_MAX_RESULTS - 2);
    int nx = nc < 0 ? -1 : tensors_of(args[2], "_scan", "xs", in + nc, TG_CONTROL_MAX_RESULTS);
    if (nx < 0)
        return NULL;
    if (nx == 0)
        return PyErr_Format(PyExc_ValueError, "_scan: xs must hold at least one Tensor");
    py_pair u = {{{args[0], NULL, "scan's body_fn", false}, {NULL, NULL, NULL, false}},
                 nc + nx};
    int token = tg_scope_hide();
    tg_status s = tg_scan(first_fn, &u, nc, in, nx, in + nc, -1, carry, ys);
    tg_scope_unhide(token);
    clear_pair(&u);
    if (s != TG_OK)
        return tgpy_raise();
    int ny = 0;
    while (ny < TG_CONTROL_MAX_RESULTS && ys[ny])
        ny++;
    PyObject *c = wrap_all(carry, nc), *y = c ? wrap_all(ys, ny) : NULL;
    if (!y) {
        if (!c)
            for (int k = 0; k < ny; k++)
                tg_release(ys[k]);
        Py_XDECREF(c);
        return NULL;
    }
    PyObject *r = PyTuple_Pack(2, c, y);
    Py_DECREF(c);
    Py_DECREF(y);
    return r;
}

static PyMethodDef control_functions[] = {
    {"_scan", (PyCFunction)(void (*)(void))py_scan, METH_FASTCALL,
     "_scan(body_fn, init, xs) -> (carry, ys)"},
    {"_cond", (PyCFunction)(void (*)(void))py_cond, METH_FASTCALL,
     "_cond(pred, then_fn, else_fn, operands) -> tuple"},
    {"_while_loop", (PyCFunction)(void (*)(void))py_while_loop, METH_FASTCALL,
     "_while_loop(cond_fn, body_fn, loop_vars, max_iterations, shape_invariants) -> tuple"},
    {NULL, NULL, 0, NULL}};

int tgpy_init_control(PyObject *m) { return PyModule_AddFunctions(m, control_functions); }
