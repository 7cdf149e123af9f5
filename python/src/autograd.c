/* Autograd from Python: backward, autograd.grad, grad mode, grad_fn
 * names, and custom functions (tensorgraph.autograd.Function) whose
 * forward and backward are Python methods run by the C engine through
 * tg_function_apply_owned. */
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

/* ---- grad mode --------------------------------------------------------------- */
static PyObject *set_grad_enabled(PyObject *m, PyObject *arg)
{
    (void)m;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(on);
    return PyBool_FromLong(was);
}
static PyObject *is_grad_enabled(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyBool_FromLong(tg_grad_enabled());
}
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

/* ---- custom functions ---------------------------------------------------------
 * The context object Python code sees: save_for_backward / saved_tensors go
 * to the C context (version-checked), other attributes to its dict. */
typedef struct {
    PyObject_HEAD
    tg_function_ctx *c; /* set while forward or backward runs */
    PyObject *dict;
    PyObject *needs_input_grad;
} CtxObject;

static void ctx_dealloc(PyObject *o)
{
    CtxObject *self = (CtxObject *)o;
    PyObject_GC_UnTrack(o);
    Py_CLEAR(self->dict);
    Py_CLEAR(self->needs_input_grad);
    Py_TYPE(o)->tp_free(o);
}
static int ctx_traverse(PyObject *o, visitproc visit, void *arg)
{
    Py_VISIT(((CtxObject *)o)->dict);
    return 0;
}
static int ctx_clear(PyObject *o)
{
    Py_CLEAR(((CtxObject *)o)->dict);
    return 0;
}
static int ctx_live(CtxObject *self)
{
    if (self->c)
        return 0;
    PyErr_SetString(PyExc_RuntimeError, "the function context is only usable inside forward "
                    "and backward");
    return -1;
}
static PyObject *ctx_save(PyObject *o, PyObject *const *args, Py_ssize_t n)
{
    CtxObject *self = (CtxObject *)o;
    if (ctx_live(self) < 0)
        return NULL;
    tg_tensor *ts[64];
    int n_t = 0, had = tg_ctx_num_saved(self->c);
    if (n > 64)
        return PyErr_Format(PyExc_ValueError, "save_for_backward: at most 64 tensors");
    bool none = false;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (args[i] == Py_None) {
            none = true;
            continue;
        }
        if (!Tensor_Check(args[i]))
            return PyErr_Format(PyExc_TypeError, "save_for_backward can only save variables, "
                                "but argument %zd is of type %.100s", i, Py_TYPE(args[i])->tp_name);
        ts[n_t++] = TENSOR(args[i]);
    }
    /* Nones (PyTorch saves them too): the order of what is saved, kept as
     * _tg_saved_order, each entry the index of a saved tensor or None */
    PyObject *order = PyObject_GetAttrString(o, "_tg_saved_order");
    if (!order)
        PyErr_Clear();
    if (!order && none) { /* the first None: the tensors saved so far first */
        order = PyList_New(0);
        for (int i = 0; order && i < had; i++) {
            PyObject *k = PyLong_FromLong(i);
            if (!k || PyList_Append(order, k) < 0)
                Py_CLEAR(order);
            Py_XDECREF(k);
        }
        if (!order || PyObject_SetAttrString(o, "_tg_saved_order", order) < 0) {
            Py_XDECREF(order);
            return NULL;
        }
    }
    for (Py_ssize_t i = 0, k = had; order && i < n; i++) {
        PyObject *e = args[i] == Py_None ? Py_NewRef(Py_None) : PyLong_FromSsize_t(k++);
        int bad = !e || PyList_Append(order, e) < 0;
        Py_XDECREF(e);
        if (bad) {
            Py_DECREF(order);
            return NULL;
        }
    }
    Py_XDECREF(order);
    if (tg_ctx_save_for_backward(self->c, n_t, ts) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}
static PyObject *ctx_saved(PyObject *o, void *c)
{
    (void)c;
    CtxObject *self = (CtxObject *)o;
    if (ctx_live(self) < 0)
        return NULL;
    int n = tg_ctx_num_saved(self->c);
    PyObject *r = PyTuple_New(n);
    for (int i = 0; r && i < n; i++) {
        tg_tensor *t = tg_ctx_saved(self->c, i);
        if (!t) {
            Py_DECREF(r);
            return tgpy_raise();
        }
        PyTuple_SET_ITEM(r, i, tgpy_wrap(tg_retain(t)));
    }
    if (!r)
        return NULL;
    PyObject *order = PyObject_GetAttrString(o, "_tg_saved_order");
    if (!order) { /* no None saved: the tensors as they are */
        PyErr_Clear();
        return r;
    }
    PyObject *all = PyTuple_New(PyList_GET_SIZE(order));
    for (Py_ssize_t i = 0; all && i < PyList_GET_SIZE(order); i++) {
        PyObject *k = PyList_GET_ITEM(order, i);
        PyTuple_SET_ITEM(all, i, Py_NewRef(k == Py_None ? Py_None
                                           : PyTuple_GET_ITEM(r, PyLong_AsSsize_t(k))));
    }
    Py_DECREF(order);
    Py_DECREF(r);
    return all;
}
static PyObject *ctx_needs(PyObject *o, void *c)
{
    (void)c;
    PyObject *r = ((CtxObject *)o)->needs_input_grad;
    return Py_NewRef(r ? r : Py_None);
}
/* mark_non_differentiable(*outputs): an output marked so comes back from
 * apply without history (requires_grad False), as PyTorch's; the marks are
 * kept in the context's dict for function_apply to read */
static PyObject *ctx_mark_non_differentiable(PyObject *o, PyObject *const *args, Py_ssize_t n)
{
    if (ctx_live((CtxObject *)o) < 0)
        return NULL;
    PyObject *marked = PyTuple_New(n);
    for (Py_ssize_t i = 0; marked && i < n; i++) {
        if (!Tensor_Check(args[i])) {
            Py_DECREF(marked);
            return PyErr_Format(PyExc_RuntimeError, "mark_non_differentiable only accepts "
                                "variable arguments, but got %.100s", Py_TYPE(args[i])->tp_name);
        }
        PyTuple_SET_ITEM(marked, i, Py_NewRef(args[i]));
    }
    if (!marked || PyObject_SetAttrString(o, "_tg_non_differentiable", marked) < 0) {
        Py_XDECREF(marked);
        return NULL;
    }
    Py_DECREF(marked);
    Py_RETURN_NONE;
}
/* mark_dirty(*tensors): arguments forward wrote in place; kept in the
 * context's dict (_tg_dirty) for Function.apply, which rebinds each such
 * argument returned to its output, as PyTorch's */
static PyObject *ctx_mark_dirty(PyObject *o, PyObject *const *args, Py_ssize_t n)
{
    if (ctx_live((CtxObject *)o) < 0)
        return NULL;
    PyObject *dirty = PyTuple_New(n);
    for (Py_ssize_t i = 0; dirty && i < n; i++)
        PyTuple_SET_ITEM(dirty, i, Py_NewRef(args[i]));
    if (!dirty || PyObject_SetAttrString(o, "_tg_dirty", dirty) < 0) {
        Py_XDECREF(dirty);
        return NULL;
    }
    Py_DECREF(dirty);
    Py_RETURN_NONE;
}
/* set_materialize_grads(value): backward always gets a tensor here (one
 * output), so the setting is recorded and has no other effect */
static PyObject *ctx_set_materialize_grads(PyObject *o, PyObject *value)
{
    if (PyObject_SetAttrString(o, "materialize_grads", value) < 0)
        return NULL;
    Py_RETURN_NONE;
}
static PyMethodDef ctx_methods[] = {
    {"save_for_backward", (PyCFunction)(void (*)(void))ctx_save, METH_FASTCALL,
     "Saves tensors (or None) for backward (checked for in-place changes)."},
    {"mark_non_differentiable", (PyCFunction)(void (*)(void))ctx_mark_non_differentiable,
     METH_FASTCALL, "Marks outputs that get no gradient (returned without history)."},
    {"mark_dirty", (PyCFunction)(void (*)(void))ctx_mark_dirty, METH_FASTCALL,
     "Marks arguments written in place (apply hands them back as the outputs)."},
    {"set_materialize_grads", ctx_set_materialize_grads, METH_O,
     "Recorded; backward always receives a tensor here."},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef ctx_getset[] = {
    {"saved_tensors", ctx_saved, NULL, NULL, NULL},
    {"needs_input_grad", ctx_needs, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};
static PyTypeObject Ctx_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph.autograd.FunctionCtx",
    .tp_basicsize = sizeof(CtxObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = ctx_dealloc,
    .tp_traverse = ctx_traverse,
    .tp_clear = ctx_clear,
    .tp_methods = ctx_methods,
    .tp_getset = ctx_getset,
    .tp_dictoffset = offsetof(CtxObject, dict),
};

/* what the C node owns for a Python function: released with the node */
typedef struct {
    PyObject *cls, *ctx, *args; /* args: the forward's arguments, a tuple */
    int n_in;
    int pos[64];                /* argument position of each tensor input */
    PyObject *result;           /* forward's output, kept until apply returns */
} py_function;

static void py_function_free(void *user)
{
    if (!Py_IsInitialized())
        return;
    PyGILState_STATE st = PyGILState_Ensure();
    py_function *f = user;
    Py_XDECREF(f->cls);
    Py_XDECREF(f->ctx);
    Py_XDECREF(f->args);
    Py_XDECREF(f->result);
    PyMem_RawFree(f);
    PyGILState_Release(st);
}

/* a fresh alias of t published to the (visible again) C scope: what the
 * engine expects callbacks to hand back */
static tg_tensor *scoped_alias(tg_tensor *t)
{
    return tg_reshape(t, tg_ndim(t), tg_shape(t));
}

static tg_tensor *py_forward(tg_function_ctx *c, int n_in, tg_tensor *const *in, void *user)
{
    (void)n_in; (void)in;
    py_function *f = user;
    PyGILState_STATE st = PyGILState_Ensure();
    int token = tg_scope_hide();
    CtxObject *ctx = (CtxObject *)f->ctx;
    ctx->c = c;
    PyObject *fwd = PyObject_GetAttrString(f->cls, "forward");
    PyObject *callargs = fwd ? PyTuple_New(PyTuple_GET_SIZE(f->args) + 1) : NULL;
    if (callargs) {
        PyTuple_SET_ITEM(callargs, 0, Py_NewRef(f->ctx));
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(f->args); i++)
            PyTuple_SET_ITEM(callargs, i + 1, Py_NewRef(PyTuple_GET_ITEM(f->args, i)));
    }
    PyObject *r = callargs ? PyObject_Call(fwd, callargs, NULL) : NULL;
    Py_XDECREF(fwd);
    Py_XDECREF(callargs);
    ctx->c = NULL;
    tg_scope_unhide(token);
    tg_tensor *out = NULL;
    if (r && Tensor_Check(r)) { /* marked non-differentiable: apply detaches it */
        PyObject *marked = PyObject_GetAttrString(f->ctx, "_tg_non_differentiable");
        if (!marked)
            PyErr_Clear();
        for (Py_ssize_t i = 0; marked && i < PyTuple_GET_SIZE(marked); i++)
            if (PyTuple_GET_ITEM(marked, i) == r &&
                PyObject_SetAttrString(f->ctx, "_tg_output_non_differentiable", Py_True) < 0)
                PyErr_Clear();
        Py_XDECREF(marked);
    }
    if (r && !Tensor_Check(r))
        PyErr_Format(PyExc_TypeError, "%s.forward must return a single Tensor here, not %.100s",
                     ((PyTypeObject *)f->cls)->tp_name, Py_TYPE(r)->tp_name);
    else if (r)
        out = scoped_alias(TENSOR(r));
    Py_XDECREF(r);
    if (!out)
        tg_clear_error(); /* the Python exception is the error; apply reports it */
    PyGILState_Release(st);
    return out;
}

static tg_status py_backward(tg_function_ctx *c, tg_tensor *dy, int n_in, tg_tensor **dx,
                             void *user)
{
    py_function *f = user;
    PyGILState_STATE st = PyGILState_Ensure();
    int token = tg_scope_hide();
    CtxObject *ctx = (CtxObject *)f->ctx;
    ctx->c = c;
    PyObject *g = tgpy_wrap(tg_retain(dy));
    PyObject *r = g ? PyObject_CallMethod(f->cls, "backward", "OO", f->ctx, g) : NULL;
    Py_XDECREF(g);
    ctx->c = NULL;
    tg_scope_unhide(token);
    tg_status s = TG_OK;
    PyObject *seq = r && !Tensor_Check(r) ? PySequence_Fast(r, "backward's result") : NULL;
    if (r && Tensor_Check(r))
        seq = PyTuple_Pack(1, r);
    Py_ssize_t n_args = PyTuple_GET_SIZE(f->args);
    if (seq && PySequence_Fast_GET_SIZE(seq) != n_args) {
        PyErr_Format(PyExc_RuntimeError, "function %s.backward returned an incorrect number of "
                     "gradients (expected %zd, got %zd)", ((PyTypeObject *)f->cls)->tp_name,
                     n_args, PySequence_Fast_GET_SIZE(seq));
        Py_CLEAR(seq);
    }
    for (int i = 0; seq && i < n_in; i++) {
        PyObject *gi = PySequence_Fast_GET_ITEM(seq, f->pos[i]);
        if (gi == Py_None)
            continue;
        if (!Tensor_Check(gi)) {
            PyErr_Format(PyExc_TypeError, "backward returned a %.100s for input %d",
                         Py_TYPE(gi)->tp_name, f->pos[i]);
            Py_CLEAR(seq);
            break;
        }
        dx[i] = scoped_alias(TENSOR(gi));
    }
    if (!seq) {
        /* keep the Python error for the caller of backward; tell the engine */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *msg = value ? PyObject_Str(value) : NULL;
        const char *text = msg ? PyUnicode_AsUTF8(msg) : NULL;
        s = TG_ERR_AUTOGRAD;
        PyErr_Restore(type, value, tb);
        /* the engine records its own message; the Python exception wins */
        (void)text;
        Py_XDECREF(msg);
    }
    Py_XDECREF(seq);
    Py_XDECREF(r);
    PyGILState_Release(st);
    return s;
}

/* _function_apply(cls, args) -> the output tensor */
static PyObject *function_apply(PyObject *m, PyObject *const *a, Py_ssize_t n)
{
    (void)m;
    if (n != 2 || !PyType_Check(a[0]) || !PyTuple_Check(a[1]))
        return PyErr_Format(PyExc_TypeError, "_function_apply(cls, args)");
    PyObject *cap = PyObject_GetAttrString(a[0], "_tg_function");
    const tg_function *fn = cap ? PyCapsule_GetPointer(cap, "tg_function") : NULL;
    Py_XDECREF(cap); /* the class keeps the capsule, and the node keeps the class */
    if (!fn)
        return NULL;
    py_function *f = PyMem_RawCalloc(1, sizeof *f);
    if (!f)
        return PyErr_NoMemory();
    tg_tensor *in[64];
    PyObject *needs = PyTuple_New(PyTuple_GET_SIZE(a[1]));
    f->cls = Py_NewRef(a[0]);
    f->args = Py_NewRef(a[1]);
    f->ctx = PyObject_CallNoArgs((PyObject *)&Ctx_Type);
    for (Py_ssize_t i = 0; needs && i < PyTuple_GET_SIZE(a[1]); i++) {
        PyObject *e = PyTuple_GET_ITEM(a[1], i);
        bool t = Tensor_Check(e) && f->n_in < 64;
        if (t) {
            f->pos[f->n_in] = (int)i;
            in[f->n_in++] = TENSOR(e);
        }
        /* PyTorch's: whether the argument requires grad, in any grad mode */
        PyTuple_SET_ITEM(needs, i, PyBool_FromLong(t && tg_requires_grad(TENSOR(e))));
    }
    if (!f->ctx || !needs) {
        Py_XDECREF(needs);
        py_function_free(f);
        return NULL;
    }
    ((CtxObject *)f->ctx)->needs_input_grad = needs;
    tgpy_note_inputs(in, f->n_in);
    PyObject *ctx = Py_NewRef(f->ctx); /* f may be freed by apply */
    tg_tensor *out = tg_function_apply_owned(fn, f->n_in, in, f, py_function_free);
    if (out) {
        PyObject *flag = PyObject_GetAttrString(ctx, "_tg_output_non_differentiable");
        if (!flag)
            PyErr_Clear();
        else if (PyObject_IsTrue(flag) == 1) {
            tg_tensor *d = tg_detach(out);
            tg_release(out);
            out = d;
        }
        Py_XDECREF(flag);
    }
    Py_DECREF(ctx);
    if (!out)
        return tgpy_raise();
    return tgpy_wrap(out);
}

static void free_function_capsule(PyObject *cap)
{
    tg_function *fn = PyCapsule_GetPointer(cap, "tg_function");
    if (fn) {
        free((char *)fn->name);
        free(fn);
    }
}

/* _function_def(name) -> a capsule holding the C definition for one class */
static PyObject *function_def(PyObject *m, PyObject *name)
{
    (void)m;
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
        return NULL;
    tg_function *fn = calloc(1, sizeof *fn);
    if (!fn || !(fn->name = strdup(s))) {
        free(fn);
        return PyErr_NoMemory();
    }
    fn->forward = py_forward;
    fn->backward = py_backward;
    return PyCapsule_New(fn, "tg_function", free_function_capsule);
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

static PyMethodDef autograd_functions[] = {
    {"_grad", (PyCFunction)(void (*)(void))autograd_grad, METH_FASTCALL, NULL},
    {"_backward", (PyCFunction)(void (*)(void))autograd_backward, METH_FASTCALL, NULL},
    {"_set_grad_enabled", set_grad_enabled, METH_O, "Sets grad mode; returns the old one."},
    {"is_grad_enabled", is_grad_enabled, METH_NOARGS, NULL},
    {"_grad_fn_name", grad_fn_name, METH_O, NULL},
    {"_mark_multi_output", mark_multi_output, METH_VARARGS, NULL},
    {"_set_grad_fn_name", set_grad_fn_name, METH_VARARGS, NULL},
    {"_name_inplace", name_inplace, METH_VARARGS, NULL},
    {"_view_base", view_base, METH_O, NULL},
    {"_is_view", is_view, METH_O, NULL},
    {"_untrack_view", untrack_view, METH_O, NULL},
    {"_check_view_inplace", check_view_inplace, METH_O, NULL},
    {"_function_apply", (PyCFunction)(void (*)(void))function_apply, METH_FASTCALL, NULL},
    {"_function_def", function_def, METH_O, NULL},
    {"_dual_level_enter", dual_level_enter, METH_NOARGS, NULL},
    {"_dual_level_exit", dual_level_exit, METH_NOARGS, NULL},
    {"_make_dual", (PyCFunction)(void (*)(void))make_dual, METH_FASTCALL, NULL},
    {"_unpack_dual", unpack_dual, METH_O, NULL},
    {"_set_anomaly_check", set_anomaly_check, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

static PyMethodDef backward_def = {"backward", (PyCFunction)(void (*)(void))m_backward,
                                   METH_FASTCALL | METH_KEYWORDS,
                                   "backward(gradient=None, retain_graph=None)"};

int tgpy_init_autograd(PyObject *m)
{
    if (PyType_Ready(&Ctx_Type) < 0 ||
        PyModule_AddObjectRef(m, "FunctionCtx", (PyObject *)&Ctx_Type) < 0)
        return -1;
    PyObject *descr = PyDescr_NewMethod(&Tensor_Type, &backward_def);
    if (!descr || PyDict_SetItemString(Tensor_Type.tp_dict, "backward", descr) < 0) {
        Py_XDECREF(descr);
        return -1;
    }
    Py_DECREF(descr);
    PyType_Modified(&Tensor_Type);
    return PyModule_AddFunctions(m, autograd_functions);
}
