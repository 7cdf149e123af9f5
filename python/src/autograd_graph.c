/* Autograd from Python: the recorded graph's nodes (grad_fn,
 * next_functions, node hooks) over tg/autograd.h's tg_grad_node. A node
 * reaches Python as a capsule holding a reference (released with the
 * capsule); tensorgraph/_grad_node.py wraps it in PyTorch's node classes
 * and keeps one Python object per live node. Node hooks: the node holds a
 * C pre hook and a C post hook whose user is a Python pair (pre hooks,
 * post hooks) of dicts, id -> callable, which the Python layer fills. */
#include "tgpy.h"

#include <string.h>

#define NODE_CAPSULE "tg_grad_node"

static void node_capsule_free(PyObject *cap)
{
    tg_grad_node_release(PyCapsule_GetPointer(cap, NODE_CAPSULE));
}

/* a capsule owning the reference n (released when it cannot be made) */
static PyObject *node_capsule(tg_grad_node *n)
{
    PyObject *cap = PyCapsule_New(n, NODE_CAPSULE, node_capsule_free);
    if (!cap)
        tg_grad_node_release(n);
    return cap;
}

static tg_grad_node *node_of(PyObject *cap)
{
    if (!PyCapsule_IsValid(cap, NODE_CAPSULE)) {
        PyErr_SetString(PyExc_TypeError, "expected a grad_fn node handle");
        return NULL;
    }
    return PyCapsule_GetPointer(cap, NODE_CAPSULE);
}

/* _grad_node(t): t's grad_fn as a handle, or None */
static PyObject *grad_node(PyObject *m, PyObject *t)
{
    (void)m;
    if (!Tensor_Check(t))
        return PyErr_Format(PyExc_TypeError, "expected a Tensor");
    tg_grad_node *n = tg_grad_fn(TENSOR(t));
    if (!n)
        Py_RETURN_NONE;
    return node_capsule(n);
}

/* _grad_node_info(handle) -> (name, key): key the same for every handle of one node */
static PyObject *grad_node_info(PyObject *m, PyObject *cap)
{
    (void)m;
    tg_grad_node *n = node_of(cap);
    if (!n)
        return NULL;
    return Py_BuildValue("(sn)", tg_grad_node_name(n), (Py_ssize_t)(uintptr_t)n);
}

/* the Python tensor for a leaf the engine holds: its wrapper when it has one */
static PyObject *leaf_object(tg_tensor *leaf)
{
    PyObject *w = tg_owner(leaf);
    return w ? Py_NewRef(w) : tgpy_wrap(tg_retain(leaf));
}

/* _grad_node_next(handle) -> tuple of (handle, output_nr), (leaf tensor,
 * 0) or (None, 0), one per input of the node */
static PyObject *grad_node_next(PyObject *m, PyObject *cap)
{
    (void)m;
    tg_grad_node *n = node_of(cap);
    if (!n)
        return NULL;
    int k = tg_grad_node_num_next(n);
    if (k < 0)
        return tgpy_raise();
    PyObject *r = PyTuple_New(k);
    for (int i = 0; r && i < k; i++) {
        tg_grad_node *next;
        tg_tensor *leaf;
        int nr;
        if (tg_grad_node_next(n, i, &next, &nr, &leaf) != TG_OK) {
            Py_DECREF(r);
            return tgpy_raise();
        }
        PyObject *o = next ? node_capsule(next) : leaf ? leaf_object(leaf) : Py_NewRef(Py_None);
        PyObject *e = o ? Py_BuildValue("(Oi)", o, nr) : NULL;
        Py_XDECREF(o);
        if (!e) {
            Py_DECREF(r);
            return NULL;
        }
        PyTuple_SET_ITEM(r, i, e);
    }
    return r;
}

/* ---- node hooks ---------------------------------------------------------------- */
/* gradients as a tuple of tensors and Nones */
static PyObject *grads_tuple(int n, tg_tensor *const *g)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *o = g[i] ? tgpy_wrap(tg_retain(g[i])) : Py_NewRef(Py_None);
        if (!o) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, o);
    }
    return t;
}

/* what a hook returned, as the tuple to go on with: its own tuple (a new
 * reference to `grads`) for None; NULL with PyTorch's errors */
static PyObject *hook_result(PyObject *hook, PyObject *r, PyObject *grads)
{
    if (r == Py_None)
        return Py_NewRef(grads);
    PyObject *seq = PyTuple_Check(r) ? Py_NewRef(r) : NULL; /* PyTorch takes no list */
    PyObject *hname = PyObject_GetAttrString(hook, "__name__");
    if (!hname) {
        PyErr_Clear();
        hname = PyObject_Repr(hook);
    }
    if (!seq && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "expected tuple, but hook returned '%.100s'",
                     Py_TYPE(r)->tp_name);
    else if (seq && PyTuple_GET_SIZE(seq) != PyTuple_GET_SIZE(grads)) {
        PyErr_Format(PyExc_RuntimeError, "hook '%S' has returned an incorrect number of "
                     "values (got %zd, but expected %zd)", hname, PyTuple_GET_SIZE(seq),
                     PyTuple_GET_SIZE(grads));
        Py_CLEAR(seq);
    }
    for (Py_ssize_t i = 0; seq && i < PyTuple_GET_SIZE(seq); i++) {
        PyObject *e = PyTuple_GET_ITEM(seq, i), *was = PyTuple_GET_ITEM(grads, i);
        if (e != Py_None && !Tensor_Check(e)) {
            PyErr_Format(PyExc_TypeError, "expected Variable, but hook returned '%.100s'",
                         Py_TYPE(e)->tp_name);
            Py_CLEAR(seq);
        } else if (e != Py_None && was != Py_None &&
                   (tg_ndim(TENSOR(e)) != tg_ndim(TENSOR(was)) ||
                    memcmp(tg_shape(TENSOR(e)), tg_shape(TENSOR(was)),
                           sizeof(int64_t) * (size_t)tg_ndim(TENSOR(e))))) {
            PyErr_Format(PyExc_RuntimeError, "hook '%S' has changed the size of value", hname);
            Py_CLEAR(seq);
        }
    }
    Py_XDECREF(hname);
    return seq;
}

/* runs the Python hooks of one kind; the last result replaces gs[0..n) */
static tg_status run_py_hooks(PyObject *hooks, bool pre, int n_in, tg_tensor **grad_inputs,
                              int n_out, tg_tensor **grad_outputs)
{
    PyGILState_STATE st = PyGILState_Ensure();
    int token = tg_scope_hide();
    PyObject *fns = PyDict_Values(hooks); /* hooks may add or remove hooks */
    PyObject *outs = fns ? grads_tuple(n_out, grad_outputs) : NULL;
    PyObject *cur = outs ? (pre ? Py_NewRef(outs) : grads_tuple(n_in, grad_inputs)) : NULL;
    for (Py_ssize_t k = 0; cur && k < PyList_GET_SIZE(fns); k++) {
        PyObject *fn = PyList_GET_ITEM(fns, k);
        PyObject *r = pre ? PyObject_CallOneArg(fn, cur)
                          : PyObject_CallFunctionObjArgs(fn, cur, outs, NULL);
        PyObject *next = r ? hook_result(fn, r, cur) : NULL;
        Py_XDECREF(r);
        Py_SETREF(cur, next);
    }
    tg_scope_unhide(token);
    tg_status s = cur ? TG_OK : TG_ERR_AUTOGRAD; /* the Python exception is the error */
    tg_tensor **gs = pre ? grad_outputs : grad_inputs;
    for (int i = 0; cur && i < (pre ? n_out : n_in); i++) {
        PyObject *e = PyTuple_GET_ITEM(cur, i);
        tg_tensor *g = e == Py_None ? NULL : TENSOR(e);
        if (g != gs[i]) {
            tg_release(gs[i]);
            gs[i] = tg_retain(g);
        }
    }
    Py_XDECREF(cur);
    Py_XDECREF(outs);
    Py_XDECREF(fns);
    PyGILState_Release(st);
    return s;
}

static tg_status pre_hook(void *user, tg_grad_node *n, int n_in, tg_tensor **grad_inputs,
                          int n_out, tg_tensor **grad_outputs)
{
    (void)n;
    return run_py_hooks(PyTuple_GET_ITEM((PyObject *)user, 0), true, n_in, grad_inputs, n_out,
                        grad_outputs);
}

static tg_status post_hook(void *user, tg_grad_node *n, int n_in, tg_tensor **grad_inputs,
                           int n_out, tg_tensor **grad_outputs)
{
    (void)n;
    return run_py_hooks(PyTuple_GET_ITEM((PyObject *)user, 1), false, n_in, grad_inputs, n_out,
                        grad_outputs);
}

static void hooks_free(void *user)
{
    if (!Py_IsInitialized())
        return;
    PyGILState_STATE st = PyGILState_Ensure();
    Py_DECREF((PyObject *)user);
    PyGILState_Release(st);
}

/* _grad_node_hooks(handle, pair): the node's (pre hooks, post hooks) pair,
 * `pair` (two dicts) installed when the node has none yet */
static PyObject *grad_node_hooks(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *cap, *pair;
    if (!PyArg_ParseTuple(args, "OO!", &cap, &PyTuple_Type, &pair))
        return NULL;
    tg_grad_node *n = node_of(cap);
    if (!n)
        return NULL;
    PyObject *have = tg_grad_node_hook_user(n, true, pre_hook);
    if (have)
        return Py_NewRef(have);
    if (PyTuple_GET_SIZE(pair) != 2 || !PyDict_Check(PyTuple_GET_ITEM(pair, 0)) ||
        !PyDict_Check(PyTuple_GET_ITEM(pair, 1)))
        return PyErr_Format(PyExc_TypeError, "_grad_node_hooks: a pair of dicts");
    Py_INCREF(pair);
    if (tg_grad_node_add_hook(n, true, pre_hook, pair, hooks_free) != TG_OK) {
        Py_DECREF(pair);
        return tgpy_raise();
    }
    Py_INCREF(pair); /* the post hook's reference */
    if (tg_grad_node_add_hook(n, false, post_hook, pair, hooks_free) != TG_OK) {
        Py_DECREF(pair);
        return tgpy_raise();
    }
    return Py_NewRef(pair);
}

static PyMethodDef graph_functions[] = {
    {"_grad_node", grad_node, METH_O, "t's grad_fn as a node handle, or None."},
    {"_grad_node_info", grad_node_info, METH_O, "(name, key) of a node handle."},
    {"_grad_node_next", grad_node_next, METH_O,
     "One (handle or leaf or None, output_nr) per input of the node."},
    {"_grad_node_hooks", grad_node_hooks, METH_VARARGS,
     "The node's (pre hooks, post hooks) dicts, installing the given pair first."},
    {NULL, NULL, 0, NULL}};

int tgpy_init_autograd_graph(PyObject *m)
{
    return PyModule_AddFunctions(m, graph_functions);
}
