/* Autograd from Python, the engine's entry points: Tensor.backward,
 * autograd.grad and autograd.backward, grad mode, forward mode with dual
 * tensors and anomaly checks. The grad_fn names and view tracking are in
 * autograd_history.c, custom functions (tensorgraph.autograd.Function) in
 * autograd_function.c, the graph's nodes (next_functions, node hooks) in
 * autograd_graph.c. */
#include "tgpy.h"

#include <stdio.h>
#include <string.h>

/* ---- backward and grad ------------------------------------------------------ */
/* "tensorgraph.Size([2, 3])" into buf */
static void size_text(const tg_tensor *t, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "tensorgraph.Size([");
    for (int d = 0; d < tg_ndim(t) && k < len; d++)
        k += (size_t)snprintf(buf + k, len - k, d ? ", %lld" : "%lld",
                              (long long)tg_shape(t)[d]);
    if (k < len)
        snprintf(buf + k, len - k, "])");
}

/* PyTorch's messages for a root that cannot start backward (0 or -1) */
static tg_status check_root(tg_tensor *t, tg_tensor *grad, int i)
{
    if (grad && (tg_ndim(grad) != tg_ndim(t) ||
                 memcmp(tg_shape(grad), tg_shape(t), sizeof(int64_t) * (size_t)tg_ndim(t)))) {
        char a[256], b[256];
        size_text(grad, a, sizeof a);
        size_text(t, b, sizeof b);
        PyErr_Format(PyExc_RuntimeError, "Mismatch in shape: grad_output[%d] has a shape of %s "
                     "and output[%d] has a shape of %s.", i, a, i, b);
        return TG_ERR_AUTOGRAD;
    }
    if (!tg_requires_grad(t)) {
        PyErr_Format(PyExc_RuntimeError, "element %d of tensors does not require grad and "
                     "does not have a grad_fn", i);
        return TG_ERR_AUTOGRAD;
    }
    if (!grad && tg_numel(t) != 1) {
        PyErr_SetString(PyExc_RuntimeError, "grad can be implicitly created only for scalar "
                        "outputs");
        return TG_ERR_AUTOGRAD;
    }
    return TG_OK;
}

static PyObject *m_backward(PyObject *self, PyObject *const *args, Py_ssize_t n,
                            PyObject *kwnames)
{
    static const char *names[] = {"gradient", "retain_graph", "create_graph", "inputs"};
    PyObject *vals[4] = {Py_None, Py_None, Py_False, Py_None};
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (n > 4)
        return PyErr_Format(PyExc_TypeError, "backward() takes at most 4 arguments");
    for (Py_ssize_t i = 0; i < n; i++)
        vals[i] = args[i];
    for (Py_ssize_t j = 0; j < nkw; j++) {
        int k = 0;
        while (k < 4 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, j), names[k]))
            k++;
        if (k == 4)
            return PyErr_Format(PyExc_TypeError, "backward() got an unexpected keyword "
                                "argument '%U'", PyTuple_GET_ITEM(kwnames, j));
        vals[k] = args[n + j];
    }
    if (vals[3] != Py_None)
        return PyErr_Format(PyExc_NotImplementedError, "backward(inputs=...) is not supported; "
                            "use tensorgraph.autograd.grad(outputs, inputs)");
    tg_tensor *grad = NULL;
    if (vals[0] != Py_None && !Tensor_Check(vals[0])) /* PyTorch takes no numbers here */
        return PyErr_Format(PyExc_TypeError, "backward(): gradient must be a Tensor or None, "
                            "not %.100s", Py_TYPE(vals[0])->tp_name);
    if (vals[0] != Py_None && !(grad = tgpy_as_tensor(vals[0], tg_dtype_of(TENSOR(self)), true)))
        return NULL;
    int create = PyObject_IsTrue(vals[2]);
    int retain = vals[1] == Py_None ? create : PyObject_IsTrue(vals[1]);
    tg_status s = create < 0 || retain < 0 ? TG_ERR_ARG : check_root(TENSOR(self), grad, 0);
    if (s == TG_OK) {
        tg_tensor *root = TENSOR(self);
        Py_BEGIN_ALLOW_THREADS
        s = create ? tg_backward_ex(1, &root, &grad, retain, true)
                   : tg_backward(root, grad, retain);
        Py_END_ALLOW_THREADS
        if (s != TG_OK)
            tgpy_raise();
    }
    tg_release(grad);
    if (s != TG_OK)
        return NULL;
    Py_RETURN_NONE;
}

/* a sequence of tensors (or one tensor) as a new array of borrowed pointers */
static tg_tensor **tensor_array(PyObject *o, const char *what, int *n)
{
    PyObject *seq = Tensor_Check(o) ? PyTuple_Pack(1, o) : PySequence_Fast(o, what);
    if (!seq)
        return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    tg_tensor **r = PyMem_Calloc((size_t)(len ? len : 1), sizeof *r);
    for (Py_ssize_t i = 0; r && i < len; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i);
        if (e == Py_None && !strcmp(what, "grad_outputs"))
            continue;
        if (!Tensor_Check(e)) {
            PyErr_Format(PyExc_TypeError, "%s must contain tensors, not %.100s", what,
                         Py_TYPE(e)->tp_name);
            PyMem_Free(r);
            r = NULL;
        } else {
            r[i] = TENSOR(e); /* the caller's sequence keeps it alive */
        }
    }
    Py_DECREF(seq);
    *n = (int)len;
    return r;
}

/* _grad(outputs, inputs, grad_outputs, retain_graph, create_graph) -> list */
static PyObject *autograd_grad(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 5)
        return PyErr_Format(PyExc_TypeError, "_grad takes 5 arguments");
    int n_out, n_in, n_go = 0;
    tg_tensor **outs = tensor_array(args[0], "outputs", &n_out);
    tg_tensor **ins = outs ? tensor_array(args[1], "inputs", &n_in) : NULL;
    tg_tensor **gos = NULL;
    PyObject *r = NULL;
    int retain = PyObject_IsTrue(args[3]), create = PyObject_IsTrue(args[4]);
    if (!ins || retain < 0 || create < 0)
        goto done;
    if (args[2] != Py_None) {
        if (!(gos = tensor_array(args[2], "grad_outputs", &n_go)))
            goto done;
        if (n_go != n_out) {
            PyErr_Format(PyExc_RuntimeError, "grad_outputs has %d entries for %d outputs", n_go,
                         n_out);
            goto done;
        }
        for (int i = 0; i < n_go; i++) /* None: ones, PyTorch's implicit seed */
            if (!gos[i] && !(gos[i] = tg_ones_like(outs[i])))
                goto done_raise;
    }
    for (int i = 0; i < n_out; i++)
        if (!tg_requires_grad(outs[i])) {
            PyErr_Format(PyExc_RuntimeError, "element %d of tensors does not require grad and "
                         "does not have a grad_fn", i);
            goto done;
        }
    tg_tensor **res = PyMem_Calloc((size_t)(n_in ? n_in : 1), sizeof *res);
    if (!res)
        goto done;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_autograd_grad(n_out, outs, gos, n_in, ins, res, retain || create, create);
    Py_END_ALLOW_THREADS
    if (s == TG_OK && (r = PyList_New(n_in)))
        for (int i = 0; i < n_in; i++)
            PyList_SET_ITEM(r, i, res[i] ? tgpy_wrap(res[i]) : Py_NewRef(Py_None));
    else if (s != TG_OK)
        tgpy_raise();
    PyMem_Free(res);
    goto done;
done_raise:
    tgpy_raise();
done:
    if (gos && args[2] != Py_None) {
        PyObject *seq = PySequence_Fast(args[2], "grad_outputs");
        for (int i = 0; seq && i < n_go; i++)
            if (PySequence_Fast_GET_ITEM(seq, i) == Py_None)
                tg_release(gos[i]); /* the ones made above */
        Py_XDECREF(seq);
    }
    PyMem_Free(outs);
    PyMem_Free(ins);
    PyMem_Free(gos);
    return r;
}

/* _backward(tensors, grad_tensors or None, retain_graph, create_graph):
 * tg.autograd.backward, every root in one pass */
static PyObject *autograd_backward(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 4)
        return PyErr_Format(PyExc_TypeError, "_backward takes 4 arguments");
    int n, n_go = 0;
    tg_tensor **roots = tensor_array(args[0], "tensors", &n), **gos = NULL;
    int retain = PyObject_IsTrue(args[2]), create = PyObject_IsTrue(args[3]);
    tg_status s = !roots || retain < 0 || create < 0 ? TG_ERR_ARG : TG_OK;
    if (s == TG_OK && args[1] != Py_None) {
        gos = tensor_array(args[1], "grad_outputs", &n_go);
        if (!gos)
            s = TG_ERR_ARG;
        else if (n_go != n) {
            PyErr_Format(PyExc_RuntimeError, "grad_tensors has %d entries for %d tensors", n_go,
                         n);
            s = TG_ERR_ARG;
        }
    }
    for (int i = 0; s == TG_OK && i < n; i++)
        s = check_root(roots[i], gos ? gos[i] : NULL, i);
    if (s == TG_OK && n > 0) {
        Py_BEGIN_ALLOW_THREADS
        s = tg_backward_ex(n, roots, gos, retain, create);
        Py_END_ALLOW_THREADS
        if (s != TG_OK)
            tgpy_raise();
    }
    PyMem_Free(roots);
    PyMem_Free(gos);
    if (s != TG_OK)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- grad mode, inference mode ------------------------------------------------ */
/* a per-thread mode set to arg's truth; returns the old one */
static PyObject *swap_mode(PyObject *arg, bool (*get)(void), void (*set)(bool))
{
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    bool was = get();
    set(on);
    return PyBool_FromLong(was);
}
static PyObject *set_grad_enabled(PyObject *m, PyObject *arg)
{
    (void)m;
    return swap_mode(arg, tg_grad_enabled, tg_set_grad_enabled);
}
static PyObject *set_inference_mode(PyObject *m, PyObject *arg)
{
    (void)m;
    return swap_mode(arg, tg_inference_mode, tg_set_inference_mode);
}
static PyObject *is_inference_mode(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyBool_FromLong(tg_inference_mode());
}
static PyObject *is_inference(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    return PyBool_FromLong(tg_is_inference(TENSOR(t)));
}
static PyObject *is_grad_enabled(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyBool_FromLong(tg_grad_enabled());
}

/* ---- forward mode with dual tensors (tg/autograd.h; forward_ad.py) ---- */
static PyObject *dual_level_enter(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    int64_t level = tg_dual_level_enter();
    return level < 0 ? tgpy_raise() : PyLong_FromLongLong(level);
}

static PyObject *dual_level_exit(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    if (tg_dual_level_exit() != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *make_dual(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n != 2 || !Tensor_Check(args[0]) || !Tensor_Check(args[1]))
        return PyErr_Format(PyExc_TypeError, "_make_dual(primal, tangent): two tensors");
    return tgpy_wrap(tg_make_dual(TENSOR(args[0]), TENSOR(args[1])));
}

/* (a view of t without its tangent, its tangent or None) */
static PyObject *unpack_dual(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "_unpack_dual: a tensor");
    tg_tensor *tangent = tg_dual_tangent(TENSOR(t));
    if (!tangent)
        return Py_BuildValue("(OO)", t, Py_None);
    PyObject *p = tgpy_wrap(tg_dual_primal(TENSOR(t)));
    PyObject *d = p ? tgpy_wrap(tg_retain(tangent)) : NULL;
    PyObject *r = d ? PyTuple_Pack(2, p, d) : NULL;
    Py_XDECREF(p);
    Py_XDECREF(d);
    return r;
}

/* _set_anomaly_check(on): the engine's NaN test of every gradient */
static PyObject *set_anomaly_check(PyObject *m, PyObject *on)
{
    (void)m;
    int v = PyObject_IsTrue(on);
    if (v < 0)
        return NULL;
    tg_set_anomaly_check(v);
    Py_RETURN_NONE;
}

/* one parameter's gradient zeroed in place (detached from any history
 * first) or dropped: optimizers' and Module's zero_grad outside a trace.
 * A leaf's gradient is its C slot; a non-leaf's (retain_grad) is Python's
 * .grad property. */
static int zero_grad_of(PyObject *p, tg_tensor *g, bool set_to_none)
{
    if (set_to_none)
        return PyObject_SetAttrString(p, "grad", Py_None);
    if (!tg_is_leaf(g)) { /* a gradient with history (create_graph=True) */
        PyObject *d = tgpy_wrap(tg_detach(g));
        int rc = d ? PyObject_SetAttrString(p, "grad", d) : -1;
        g = d && rc == 0 ? TENSOR(d) : NULL;
        Py_XDECREF(d); /* p.grad keeps it */
        if (!g)
            return -1;
    } else if (tg_requires_grad(g) && tg_set_requires_grad(g, false) != TG_OK) {
        tgpy_raise();
        return -1;
    }
    if (tg_fill_(g, 0) != TG_OK) {
        tgpy_raise();
        return -1;
    }
    return 0;
}

static int zero_one(PyObject *p, bool set_to_none)
{
    if (!tg_is_leaf(TENSOR(p))) { /* rare: through the property */
        PyObject *g = PyObject_GetAttrString(p, "grad");
        int rc = !g ? -1 : !Tensor_Check(g) ? 0 : zero_grad_of(p, TENSOR(g), set_to_none);
        Py_XDECREF(g);
        return rc;
    }
    tg_tensor *g = tg_grad(TENSOR(p));
    return g ? zero_grad_of(p, g, set_to_none) : 0;
}

/* _zero_grads(params, set_to_none); inside a tg.function trace, part of
 * the compiled step (graph_step.c) */
static PyObject *zero_grads(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *params;
    int set_to_none;
    if (!PyArg_ParseTuple(args, "Op", &params, &set_to_none))
        return NULL;
    PyObject *seq = PySequence_Fast(params, "zero_grad: parameters must be a sequence");
    for (Py_ssize_t i = 0; seq && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *p = PySequence_Fast_GET_ITEM(seq, i);
        if (!Tensor_Check(p)) {
            PyErr_SetString(PyExc_TypeError, "zero_grad: parameters must be Tensors");
            Py_CLEAR(seq);
        } else if ((tgpy_step_tracing() ? tgpy_step_zero_grad(TENSOR(p), set_to_none)
                                        : zero_one(p, set_to_none)) < 0) {
            Py_CLEAR(seq);
        }
    }
    if (!seq)
        return NULL;
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

static PyMethodDef autograd_functions[] = {
    {"_grad", (PyCFunction)(void (*)(void))autograd_grad, METH_FASTCALL, NULL},
    {"_backward", (PyCFunction)(void (*)(void))autograd_backward, METH_FASTCALL, NULL},
    {"_set_grad_enabled", set_grad_enabled, METH_O, "Sets grad mode; returns the old one."},
    {"_set_inference_mode", set_inference_mode, METH_O,
     "Sets inference mode; returns the old one."},
    {"_is_inference", is_inference, METH_O, "Whether a tensor is an inference tensor."},
    {"_is_inference_mode", is_inference_mode, METH_NOARGS, "Whether inference mode is on."},
    {"is_grad_enabled", is_grad_enabled, METH_NOARGS, NULL},
    {"_dual_level_enter", dual_level_enter, METH_NOARGS, NULL},
    {"_dual_level_exit", dual_level_exit, METH_NOARGS, NULL},
    {"_make_dual", (PyCFunction)(void (*)(void))make_dual, METH_FASTCALL, NULL},
    {"_unpack_dual", unpack_dual, METH_O, NULL},
    {"_set_anomaly_check", set_anomaly_check, METH_O, NULL},
    {"_zero_grads", zero_grads, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyMethodDef backward_def = {"backward", (PyCFunction)(void (*)(void))m_backward,
                                   METH_FASTCALL | METH_KEYWORDS,
                                   "backward(gradient=None, retain_graph=None)"};

int tgpy_init_autograd(PyObject *m)
{
    PyObject *descr = PyDescr_NewMethod(&Tensor_Type, &backward_def);
    if (!descr || PyDict_SetItemString(Tensor_Type.tp_dict, "backward", descr) < 0) {
        Py_XDECREF(descr);
        return -1;
    }
    Py_DECREF(descr);
    PyType_Modified(&Tensor_Type);
    if (tgpy_init_autograd_history(m) < 0 || tgpy_init_autograd_function(m) < 0 ||
        tgpy_init_autograd_graph(m) < 0)
        return -1;
    return PyModule_AddFunctions(m, autograd_functions);
}
