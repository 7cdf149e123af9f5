/* Custom functions from Python (tensorgraph.autograd.Function): the
 * context object (FunctionCtx) and the forward and backward Python methods
 * run by the C engine through tg_function_apply_owned. */
#include "tgpy.h"

#include <stdlib.h>
#include <string.h>

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

static PyMethodDef function_functions[] = {
    {"_function_apply", (PyCFunction)(void (*)(void))function_apply, METH_FASTCALL, NULL},
    {"_function_def", function_def, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_autograd_function(PyObject *m)
{
    if (PyType_Ready(&Ctx_Type) < 0 ||
        PyModule_AddObjectRef(m, "FunctionCtx", (PyObject *)&Ctx_Type) < 0)
        return -1;
    return PyModule_AddFunctions(m, function_functions);
}
