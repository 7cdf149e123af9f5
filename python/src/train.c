/* The C optimizers behind tensorgraph.optim: _C.Optimizer(kind, params,
 * options) holds one tg_optimizer over the parameters' tensors (their
 * Python objects are kept alive with it); step() runs the fused update
 * loops without the GIL. */
#include "tgpy.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    tg_optimizer *o;
    PyObject *params; /* tuple of the Parameter objects */
} OptimizerObject;

static int opt_float(PyObject *opts, const char *key, double *out)
{
    PyObject *v = PyDict_GetItemString(opts, key); /* borrowed */
    if (!v)
        return 0;
    double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred())
        return -1;
    *out = d;
    return 0;
}

static int opt_bool(PyObject *opts, const char *key, bool *out)
{
    PyObject *v = PyDict_GetItemString(opts, key);
    if (!v)
        return 0;
    int b = PyObject_IsTrue(v);
    if (b < 0)
        return -1;
    *out = b;
    return 0;
}

static int opt_betas(PyObject *opts, tg_adam_opts *a)
{
    PyObject *v = PyDict_GetItemString(opts, "betas");
    if (!v)
        return 0;
    return PyArg_ParseTuple(v, "dd", &a->beta1, &a->beta2) ? 0 : -1;
}

static tg_optimizer *make(const char *kind, int n, tg_tensor **ts, PyObject *opts)
{
    int bad = 0;
    if (!strcmp(kind, "sgd")) {
        tg_sgd_opts o = tg_sgd_defaults();
        bad = opt_float(opts, "lr", &o.lr) | opt_float(opts, "momentum", &o.momentum) |
              opt_float(opts, "dampening", &o.dampening) |
              opt_float(opts, "weight_decay", &o.weight_decay) |
              opt_bool(opts, "nesterov", &o.nesterov) | opt_bool(opts, "maximize", &o.maximize);
        return bad ? NULL : tg_optim_sgd(n, ts, &o);
    }
    if (!strcmp(kind, "adam") || !strcmp(kind, "adamw")) {
        tg_adam_opts o = kind[4] ? tg_adamw_defaults() : tg_adam_defaults();
        bad = opt_float(opts, "lr", &o.lr) | opt_betas(opts, &o) | opt_float(opts, "eps", &o.eps) |
              opt_float(opts, "weight_decay", &o.weight_decay) |
              opt_bool(opts, "amsgrad", &o.amsgrad) | opt_bool(opts, "maximize", &o.maximize);
        return bad ? NULL : kind[4] ? tg_optim_adamw(n, ts, &o) : tg_optim_adam(n, ts, &o);
    }
    if (!strcmp(kind, "adadelta")) {
        tg_adadelta_opts o = tg_adadelta_defaults();
        bad = opt_float(opts, "lr", &o.lr) | opt_float(opts, "rho", &o.rho) |
              opt_float(opts, "eps", &o.eps) | opt_float(opts, "weight_decay", &o.weight_decay) |
              opt_bool(opts, "maximize", &o.maximize);
        return bad ? NULL : tg_optim_adadelta(n, ts, &o);
    }
    if (!strcmp(kind, "rmsprop")) {
        tg_rmsprop_opts o = tg_rmsprop_defaults();
        bad = opt_float(opts, "lr", &o.lr) | opt_float(opts, "alpha", &o.alpha) |
              opt_float(opts, "eps", &o.eps) | opt_float(opts, "momentum", &o.momentum) |
              opt_float(opts, "weight_decay", &o.weight_decay) |
              opt_bool(opts, "centered", &o.centered) | opt_bool(opts, "maximize", &o.maximize);
        return bad ? NULL : tg_optim_rmsprop(n, ts, &o);
    }
    PyErr_Format(PyExc_ValueError, "unknown optimizer '%s'", kind);
    return NULL;
}

static PyObject *optimizer_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    const char *kind;
    PyObject *params, *opts;
    if (kw && PyDict_Size(kw))
        return PyErr_Format(PyExc_TypeError, "Optimizer(kind, params, options)");
    if (!PyArg_ParseTuple(args, "sOO!", &kind, &params, &PyDict_Type, &opts))
        return NULL;
    PyObject *tup = PySequence_Tuple(params);
    if (!tup)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    tg_tensor **ts = PyMem_Calloc((size_t)(n ? n : 1), sizeof *ts);
    for (Py_ssize_t i = 0; ts && i < n; i++) {
        PyObject *p = PyTuple_GET_ITEM(tup, i);
        if (!Tensor_Check(p)) {
            PyErr_Format(PyExc_TypeError, "optimizer can only optimize Tensors, but one of the "
                         "params is %.100s", Py_TYPE(p)->tp_name);
            PyMem_Free(ts);
            Py_DECREF(tup);
            return NULL;
        }
        ts[i] = TENSOR(p);
    }
    tg_optimizer *o = ts ? make(kind, (int)n, ts, opts) : NULL;
    PyMem_Free(ts);
    if (!o) {
        Py_DECREF(tup);
        return PyErr_Occurred() ? NULL : tgpy_raise();
    }
    OptimizerObject *self = (OptimizerObject *)type->tp_alloc(type, 0);
    if (!self) {
        tg_optim_free(o);
        Py_DECREF(tup);
        return NULL;
    }
    self->o = o;
    self->params = tup;
    return (PyObject *)self;
}

static void optimizer_dealloc(PyObject *s)
{
    OptimizerObject *self = (OptimizerObject *)s;
    tg_optim_free(self->o);
    Py_XDECREF(self->params);
    Py_TYPE(s)->tp_free(s);
}

static PyObject *o_step(PyObject *s, PyObject *u)
{
    (void)u;
    tg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tg_optim_step(((OptimizerObject *)s)->o);
    Py_END_ALLOW_THREADS
    if (st != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}
static PyObject *o_zero_grad(PyObject *s, PyObject *u)
{
    (void)u;
    tg_optim_zero_grad(((OptimizerObject *)s)->o);
    Py_RETURN_NONE;
}
static PyObject *o_set_lr(PyObject *s, PyObject *v)
{
    double lr = PyFloat_AsDouble(v);
    if (lr == -1.0 && PyErr_Occurred())
        return NULL;
    if (tg_optim_set_lr(((OptimizerObject *)s)->o, lr) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}
static PyObject *o_get_lr(PyObject *s, PyObject *u)
{
    (void)u;
    return PyFloat_FromDouble(tg_optim_get_lr(((OptimizerObject *)s)->o));
}

/* state as (names, tensors, metadata dict); loading takes the same */
static PyObject *o_state(PyObject *s, PyObject *u)
{
    (void)u;
    tg_state_dict *sd = tg_state_dict_new();
    if (!sd || tg_optim_state_dict(((OptimizerObject *)s)->o, sd) != TG_OK) {
        tg_state_dict_free(sd);
        return tgpy_raise();
    }
    int n = tg_state_dict_size(sd), nm = tg_state_dict_meta_size(sd);
    PyObject *tensors = PyDict_New(), *meta = PyDict_New();
    for (int i = 0; tensors && i < n; i++) {
        PyObject *t = tgpy_wrap(tg_state_dict_tensor(sd, i));
        if (!t || PyDict_SetItemString(tensors, tg_state_dict_name(sd, i), t) < 0)
            Py_CLEAR(tensors);
        Py_XDECREF(t);
    }
    for (int i = 0; meta && i < nm; i++) {
        PyObject *v = PyUnicode_FromString(tg_state_dict_meta_value(sd, i));
        if (!v || PyDict_SetItemString(meta, tg_state_dict_meta_key(sd, i), v) < 0)
            Py_CLEAR(meta);
        Py_XDECREF(v);
    }
    tg_state_dict_free(sd);
    PyObject *r = tensors && meta ? PyTuple_Pack(2, tensors, meta) : NULL;
    Py_XDECREF(tensors);
    Py_XDECREF(meta);
    return r;
}

static PyObject *o_load_state(PyObject *s, PyObject *args)
{
    PyObject *tensors, *meta, *k, *v;
    Py_ssize_t pos = 0;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &tensors, &PyDict_Type, &meta))
        return NULL;
    tg_state_dict *sd = tg_state_dict_new();
    if (!sd)
        return tgpy_raise();
    int bad = 0;
    while (!bad && PyDict_Next(tensors, &pos, &k, &v)) {
        const char *name = PyUnicode_AsUTF8(k);
        bad = !name || !Tensor_Check(v) || tg_state_dict_add(sd, name, TENSOR(v)) != TG_OK;
    }
    pos = 0;
    while (!bad && PyDict_Next(meta, &pos, &k, &v)) {
        const char *key = PyUnicode_AsUTF8(k), *val = PyUnicode_AsUTF8(v);
        bad = !key || !val || tg_state_dict_set_meta(sd, key, val) != TG_OK;
    }
    tg_status st = bad ? TG_ERR_ARG : tg_optim_load_state_dict(((OptimizerObject *)s)->o, sd);
    tg_state_dict_free(sd);
    if (bad && !PyErr_Occurred() && tg_last_status() == TG_OK)
        PyErr_SetString(PyExc_TypeError, "optimizer state: names must be str and values tensors");
    if (st != TG_OK || bad)
        return PyErr_Occurred() ? NULL : tgpy_raise();
    Py_RETURN_NONE;
}

/* _graph_step(lr) -> lr_tensor: the update as nodes of the tg.function
 * being traced, from the gradients the trace holds (graph_step.c); it
 * reads its learning rate from lr_tensor, a new 0-d float64 tensor
 * holding lr, which the caller sets to the group's lr before each call */
static PyObject *o_graph_step(PyObject *s, PyObject *arg)
{
    double lr = PyFloat_AsDouble(arg);
    if (lr == -1.0 && PyErr_Occurred())
        return NULL;
    int token = tg_scope_hide();
    tg_tensor *lr_t = tg_scalar(TG_FLOAT64, lr); /* concrete: the graph reads it */
    tg_scope_unhide(token);
    int rc = lr_t ? tgpy_step_optim(((OptimizerObject *)s)->o, lr_t) : -1;
    if (rc < 0) {
        tg_release(lr_t);
        return PyErr_Occurred() ? NULL : tgpy_raise();
    }
    return tgpy_wrap(lr_t);
}

static PyMethodDef optimizer_methods[] = {
    {"_graph_step", o_graph_step, METH_O, NULL},
    {"step", o_step, METH_NOARGS, NULL},
    {"zero_grad", o_zero_grad, METH_NOARGS, NULL},
    {"set_lr", o_set_lr, METH_O, NULL},
    {"get_lr", o_get_lr, METH_NOARGS, NULL},
    {"state", o_state, METH_NOARGS, NULL},
    {"load_state", o_load_state, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyTypeObject Optimizer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph._C.Optimizer",
    .tp_basicsize = sizeof(OptimizerObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = optimizer_new,
    .tp_dealloc = optimizer_dealloc,
    .tp_methods = optimizer_methods,
    .tp_doc = "Optimizer(kind, params, options): one of the C optimizers.",
};

int tgpy_init_train(PyObject *m)
{
    if (PyType_Ready(&Optimizer_Type) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "Optimizer", (PyObject *)&Optimizer_Type);
}
