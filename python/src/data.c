/* Data and files from Python: datasets and the prefetching loader of
 * tg/data.h, MNIST fetching, safetensors files (tg/io.h). Waiting for a
 * batch, a download or a file runs without the GIL. */
#include "tgpy.h"

#include <string.h>

/* ---- datasets ----------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    tg_dataset *d;
} DatasetObject;

static void dataset_dealloc(PyObject *s)
{
    tg_dataset_free(((DatasetObject *)s)->d);
    Py_TYPE(s)->tp_free(s);
}

static PyObject *dataset_get(PyObject *s, PyObject *arg)
{
    /* the batch of samples at the given indices (a sequence of ints) */
    PyObject *seq = PySequence_Fast(arg, "indices");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int64_t *idx = PyMem_Malloc(sizeof *idx * (size_t)(n ? n : 1));
    for (Py_ssize_t i = 0; idx && i < n; i++)
        idx[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (!idx || PyErr_Occurred()) {
        PyMem_Free(idx);
        return idx ? NULL : PyErr_NoMemory();
    }
    tg_tensor *x = NULL, *y = NULL;
    tg_status st = tg_dataset_get(((DatasetObject *)s)->d, idx, n, &x, &y);
    PyMem_Free(idx);
    if (st != TG_OK)
        return tgpy_raise();
    PyObject *px = tgpy_wrap(x), *py = tgpy_wrap(y);
    PyObject *r = px && py ? PyTuple_Pack(2, px, py) : NULL;
    Py_XDECREF(px);
    Py_XDECREF(py);
    return r;
}

static Py_ssize_t dataset_len(PyObject *s) { return (Py_ssize_t)tg_dataset_size(((DatasetObject *)s)->d); }

static PyMethodDef dataset_methods[] = {
    {"get", dataset_get, METH_O, "get(indices) -> (x, y) batch"}, {NULL, NULL, 0, NULL}};
static PySequenceMethods dataset_seq = {.sq_length = dataset_len};
static PyTypeObject Dataset_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph._C.Dataset",
    .tp_basicsize = sizeof(DatasetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = dataset_dealloc,
    .tp_methods = dataset_methods,
    .tp_as_sequence = &dataset_seq,
};

static PyObject *wrap_dataset(tg_dataset *d)
{
    if (!d)
        return tgpy_raise();
    DatasetObject *o = PyObject_New(DatasetObject, &Dataset_Type);
    if (!o) {
        tg_dataset_free(d);
        return NULL;
    }
    o->d = d;
    return (PyObject *)o;
}

static PyObject *dataset_from_tensors(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *x, *y;
    if (!PyArg_ParseTuple(args, "O!O!", &Tensor_Type, &x, &Tensor_Type, &y))
        return NULL;
    return wrap_dataset(tg_dataset_from_tensors(TENSOR(x), TENSOR(y)));
}

static PyObject *mnist_dataset(PyObject *m, PyObject *args)
{
    (void)m;
    const char *dir;
    int train;
    if (!PyArg_ParseTuple(args, "sp", &dir, &train))
        return NULL;
    tg_dataset *d;
    Py_BEGIN_ALLOW_THREADS
    d = tg_mnist_dataset(dir, train);
    Py_END_ALLOW_THREADS
    return wrap_dataset(d);
}

static void print_line(void *user, const char *line)
{
    (void)user;
    PyGILState_STATE st = PyGILState_Ensure();
    PySys_FormatStderr("%s\n", line);
    PyGILState_Release(st);
}

static PyObject *mnist_ensure(PyObject *m, PyObject *args)
{
    (void)m;
    const char *dir;
    int verbose = 1;
    if (!PyArg_ParseTuple(args, "s|p", &dir, &verbose))
        return NULL;
    tg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tg_mnist_ensure(dir, verbose ? print_line : NULL, NULL);
    Py_END_ALLOW_THREADS
    if (st != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

/* ---- the loader ----------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    tg_loader *l;
    PyObject *dataset; /* the loader borrows its dataset: keep it alive */
} LoaderObject;

static PyObject *loader_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"dataset", "batch_size", "shuffle", "seed", "drop_last",
                            "prefetch", NULL};
    PyObject *ds;
    tg_loader_options o = tg_loader_defaults();
    long long bs = o.batch_size;
    unsigned long long seed = 0;
    int shuffle = 0, drop = 0, prefetch = o.prefetch;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|LpKpi", names, &Dataset_Type, &ds, &bs,
                                     &shuffle, &seed, &drop, &prefetch))
        return NULL;
    o.batch_size = bs;
    o.shuffle = shuffle;
    o.seed = seed;
    o.drop_last = drop;
    o.prefetch = prefetch;
    tg_loader *l = tg_loader_new(((DatasetObject *)ds)->d, &o);
    if (!l)
        return tgpy_raise();
    LoaderObject *self = (LoaderObject *)type->tp_alloc(type, 0);
    if (!self) {
        tg_loader_free(l);
        return NULL;
    }
    self->l = l;
    self->dataset = Py_NewRef(ds);
    return (PyObject *)self;
}

static void loader_dealloc(PyObject *s)
{
    LoaderObject *self = (LoaderObject *)s;
    Py_BEGIN_ALLOW_THREADS
    tg_loader_free(self->l); /* joins the prefetch thread */
    Py_END_ALLOW_THREADS
    Py_XDECREF(self->dataset);
    Py_TYPE(s)->tp_free(s);
}

static PyObject *loader_next(PyObject *s, PyObject *u)
{
    (void)u;
    tg_tensor *x = NULL, *y = NULL;
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = tg_loader_next(((LoaderObject *)s)->l, &x, &y);
    Py_END_ALLOW_THREADS
    if (r < 0)
        return tgpy_raise();
    if (r == 0)
        Py_RETURN_NONE; /* end of the epoch */
    PyObject *px = tgpy_wrap(x), *py = tgpy_wrap(y);
    PyObject *t = px && py ? PyTuple_Pack(2, px, py) : NULL;
    Py_XDECREF(px);
    Py_XDECREF(py);
    return t;
}

static PyObject *loader_set_epoch(PyObject *s, PyObject *v)
{
    unsigned long long e = PyLong_AsUnsignedLongLong(v);
    if (PyErr_Occurred())
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    tg_loader_set_epoch(((LoaderObject *)s)->l, e);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static Py_ssize_t loader_len(PyObject *s) { return (Py_ssize_t)tg_loader_num_batches(((LoaderObject *)s)->l); }

static PyMethodDef loader_methods[] = {
    {"next", loader_next, METH_NOARGS, "(x, y), or None at the end of the epoch"},
    {"set_epoch", loader_set_epoch, METH_O, NULL},
    {NULL, NULL, 0, NULL}};
static PySequenceMethods loader_seq = {.sq_length = loader_len};
static PyTypeObject Loader_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph._C.Loader",
    .tp_basicsize = sizeof(LoaderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = loader_new,
    .tp_dealloc = loader_dealloc,
    .tp_methods = loader_methods,
    .tp_as_sequence = &loader_seq,
};

/* ---- safetensors ------------------------------------------------------------------ */
/* k as a C string; a NUL inside would cut the name short in the file (it
 * would then not load back under its name) */
static const char *c_name(PyObject *k)
{
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(k, &n);
    if (s && strlen(s) != (size_t)n) {
        PyErr_Format(PyExc_ValueError, "save: the name %R contains a NUL character, which a "
                     "safetensors name cannot hold", k);
        return NULL;
    }
    return s;
}

static PyObject *save_safetensors(PyObject *m, PyObject *args)
{
    (void)m;
    const char *path;
    PyObject *tensors, *meta, *k, *v;
    if (!PyArg_ParseTuple(args, "sO!O!", &path, &PyDict_Type, &tensors, &PyDict_Type, &meta))
        return NULL;
    tg_state_dict *sd = tg_state_dict_new();
    Py_ssize_t pos = 0;
    int bad = !sd;
    while (!bad && PyDict_Next(tensors, &pos, &k, &v)) {
        const char *name = c_name(k);
        if (name && !Tensor_Check(v))
            PyErr_Format(PyExc_TypeError, "save: '%s' is a %.100s; only tensors can be saved "
                         "(safetensors)", name, Py_TYPE(v)->tp_name);
        bad = !name || !Tensor_Check(v) || tg_state_dict_add(sd, name, TENSOR(v)) != TG_OK;
    }
    pos = 0;
    while (!bad && PyDict_Next(meta, &pos, &k, &v)) {
        const char *key = c_name(k), *val = key ? c_name(v) : NULL;
        bad = !key || !val || tg_state_dict_set_meta(sd, key, val) != TG_OK;
    }
    tg_status st = TG_OK;
    if (!bad) {
        Py_BEGIN_ALLOW_THREADS
        st = tg_safetensors_save_dict(path, sd);
        Py_END_ALLOW_THREADS
    }
    tg_state_dict_free(sd);
    if (bad || st != TG_OK)
        return PyErr_Occurred() ? NULL : tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *load_safetensors(PyObject *m, PyObject *args)
{
    (void)m;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path))
        return NULL;
    tg_state_dict *sd;
    Py_BEGIN_ALLOW_THREADS
    sd = tg_safetensors_load(path);
    Py_END_ALLOW_THREADS
    if (!sd)
        return tgpy_raise();
    PyObject *names = PyList_New(0), *tensors = PyList_New(0), *meta = PyDict_New();
    for (int i = 0; names && tensors && i < tg_state_dict_size(sd); i++) {
        PyObject *n = PyUnicode_FromString(tg_state_dict_name(sd, i));
        PyObject *t = tgpy_wrap(tg_state_dict_tensor(sd, i));
        if (!n || !t || PyList_Append(names, n) < 0 || PyList_Append(tensors, t) < 0)
            Py_CLEAR(names);
        Py_XDECREF(n);
        Py_XDECREF(t);
    }
    for (int i = 0; meta && i < tg_state_dict_meta_size(sd); i++) {
        PyObject *val = PyUnicode_FromString(tg_state_dict_meta_value(sd, i));
        if (!val || PyDict_SetItemString(meta, tg_state_dict_meta_key(sd, i), val) < 0)
            Py_CLEAR(meta);
        Py_XDECREF(val);
    }
    tg_state_dict_free(sd);
    PyObject *r = names && tensors && meta ? PyTuple_Pack(3, names, tensors, meta) : NULL;
    Py_XDECREF(names);
    Py_XDECREF(tensors);
    Py_XDECREF(meta);
    return r;
}

/* ---- ONNX models ---------------------------------------------------------------- */
static void free_onnx(PyObject *cap)
{
    tg_onnx_free(PyCapsule_GetPointer(cap, "tg_onnx_model"));
}

/* _onnx_load(path) -> (capsule, input names, output names) */
static PyObject *onnx_load(PyObject *m, PyObject *args)
{
    (void)m;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path))
        return NULL;
    tg_onnx_model *om;
    Py_BEGIN_ALLOW_THREADS
    om = tg_onnx_load(path);
    Py_END_ALLOW_THREADS
    if (!om)
        return tgpy_raise();
    PyObject *cap = PyCapsule_New(om, "tg_onnx_model", free_onnx);
    PyObject *ins = PyList_New(0), *outs = PyList_New(0);
    tg_onnx_value_info vi;
    for (int i = 0; cap && ins && i < tg_onnx_num_inputs(om); i++)
        if (tg_onnx_input_info(om, i, &vi) == TG_OK) {
            PyObject *n = PyUnicode_FromString(vi.name);
            if (!n || PyList_Append(ins, n) < 0)
                Py_CLEAR(ins);
            Py_XDECREF(n);
        }
    for (int i = 0; cap && outs && i < tg_onnx_num_outputs(om); i++)
        if (tg_onnx_output_info(om, i, &vi) == TG_OK) {
            PyObject *n = PyUnicode_FromString(vi.name);
            if (!n || PyList_Append(outs, n) < 0)
                Py_CLEAR(outs);
            Py_XDECREF(n);
        }
    PyObject *r = cap && ins && outs ? PyTuple_Pack(3, cap, ins, outs) : NULL;
    Py_XDECREF(cap);
    Py_XDECREF(ins);
    Py_XDECREF(outs);
    return r;
}

/* _onnx_inits(capsule) -> [(name, tensor)], the initializers (shared) */
static PyObject *onnx_inits(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O", &cap))
        return NULL;
    tg_onnx_model *om = PyCapsule_GetPointer(cap, "tg_onnx_model");
    if (!om)
        return NULL;
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < tg_onnx_num_initializers(om); i++) {
        PyObject *t = tgpy_wrap(tg_retain(tg_onnx_initializer(om, i)));
        PyObject *item = t ? Py_BuildValue("(sO)", tg_onnx_initializer_name(om, i), t) : NULL;
        if (!item || PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_XDECREF(item);
        Py_XDECREF(t);
    }
    return list;
}

/* _onnx_call(capsule, names, tensors, inits) -> {output name: tensor}: the
 * model built on the given tensors in the current mode: eagerly (autograd
 * records it, so gradients reach the inputs and the given initializers)
 * or, inside a trace (tg.function), into the traced graph. inits: None or
 * one entry per initializer, a tensor to use in its place or None. */
static PyObject *onnx_call(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *cap, *names, *tensors, *inits;
    if (!PyArg_ParseTuple(args, "OO!O!O", &cap, &PyList_Type, &names, &PyList_Type, &tensors,
                          &inits))
        return NULL;
    tg_onnx_model *om = PyCapsule_GetPointer(cap, "tg_onnx_model");
    Py_ssize_t n = PyList_GET_SIZE(names), ni = om ? tg_onnx_num_initializers(om) : 0;
    if (!om || n != PyList_GET_SIZE(tensors) ||
        (inits != Py_None && (!PyList_Check(inits) || PyList_GET_SIZE(inits) != ni)))
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "_onnx_call: bad inputs");
    /* the inputs' names and tensors, then the initializers given (NULL: the model's) */
    const char **cn = calloc((size_t)n + 1, sizeof *cn);
    tg_tensor **ct = calloc((size_t)n + 1, sizeof *ct), **ci = NULL;
    if (!cn || !ct || (inits != Py_None && !(ci = calloc((size_t)ni + 1, sizeof *ci)))) {
        free(cn), free(ct);
        return PyErr_NoMemory();
    }
    bool ok = true; /* false: a Python error is set */
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        cn[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(names, i));
        ok = cn[i] != NULL;
        if (ok && !Tensor_Check(PyList_GET_ITEM(tensors, i))) {
            PyErr_SetString(PyExc_TypeError, "inputs must be tensors");
            ok = false;
        }
        ct[i] = ok ? TENSOR(PyList_GET_ITEM(tensors, i)) : NULL;
    }
    for (Py_ssize_t i = 0; ok && ci && i < ni; i++) {
        PyObject *it = PyList_GET_ITEM(inits, i);
        if (it != Py_None && !Tensor_Check(it)) {
            PyErr_Format(PyExc_TypeError, "initializer %zd: a tensor or None", i);
            ok = false;
        }
        ci[i] = ok && it != Py_None ? TENSOR(it) : NULL;
    }
    tg_onnx_net *net = NULL;
    if (ok) {
        /* inside tg.function, what requires grad becomes a variable of the trace */
        tgpy_note_inputs(ct, (int)n);
        if (ci)
            tgpy_note_inputs(ci, (int)ni);
        /* random ops draw from the default generator (tg.manual_seed), as
         * PyTorch's do: each call anew, reproducibly */
        tg_onnx_opts o = {.specialize = true, .initializers = ci,
                          .generator = tgpy_generator(NULL)};
        net = tg_onnx_build(om, (int)n, cn, ct, &o);
    }
    free(cn), free(ct), free(ci);
    if (!ok)
        return NULL;
    if (!net)
        return tgpy_raise();
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < tg_onnx_net_num_outputs(net); i++) {
        PyObject *t = tgpy_wrap(tg_retain(tg_onnx_net_output(net, i)));
        if (!t || PyDict_SetItemString(d, tg_onnx_net_output_name(net, i), t) < 0)
            Py_CLEAR(d);
        Py_XDECREF(t);
    }
    tg_onnx_net_free(net);
    return d;
}

static PyMethodDef data_functions[] = {
    {"_onnx_inits", onnx_inits, METH_VARARGS, NULL},
    {"_onnx_call", onnx_call, METH_VARARGS, NULL},
    {"_onnx_load", onnx_load, METH_VARARGS, NULL},
    {"_dataset_from_tensors", dataset_from_tensors, METH_VARARGS, NULL},
    {"_mnist_dataset", mnist_dataset, METH_VARARGS, NULL},
    {"_mnist_ensure", mnist_ensure, METH_VARARGS, NULL},
    {"_save_safetensors", save_safetensors, METH_VARARGS, NULL},
    {"_load_safetensors", load_safetensors, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_data(PyObject *m)
{
    if (PyType_Ready(&Dataset_Type) < 0 || PyType_Ready(&Loader_Type) < 0 ||
        PyModule_AddObjectRef(m, "Loader", (PyObject *)&Loader_Type) < 0)
        return -1;
    return PyModule_AddFunctions(m, data_functions);
}
