/* tensorgraph._C's distributed functions (tg/dist.h) behind
 * tensorgraph.distributed and nn.parallel.DistributedDataParallel: the
 * world, collectives on tensors in place (the GIL released while they
 * wait), and the gradient reducer as a capsule. */
#include "tgpy.h"

#define REDUCER_CAPSULE "tensorgraph._C.dist_reducer"

static PyObject *status_none(tg_status s)
{
    if (s != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *d_built(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyBool_FromLong(tg_dist_built());
}

static PyObject *d_init(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_dist_init();
    Py_END_ALLOW_THREADS
    return status_none(s);
}

static PyObject *d_finalize(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_dist_finalize();
    Py_END_ALLOW_THREADS
    return status_none(s);
}

/* a worker's loop: runs what rank 0 ships until rank 0 finalizes */
static PyObject *d_serve(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_dist_serve();
    Py_END_ALLOW_THREADS
    return status_none(s);
}

static PyObject *d_is_initialized(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyBool_FromLong(tg_dist_is_initialized());
}

static PyObject *d_rank(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromLong(tg_dist_rank());
}

static PyObject *d_world_size(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromLong(tg_dist_world_size());
}

static PyObject *d_set_timeout(PyObject *self, PyObject *arg)
{
    (void)self;
    double secs = PyFloat_AsDouble(arg);
    if (secs == -1.0 && PyErr_Occurred())
        return NULL;
    return status_none(tg_dist_set_timeout(secs));
}

static tg_tensor *tensor_arg(PyObject *o, const char *fn)
{
    if (!Tensor_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a Tensor, got %s", fn, Py_TYPE(o)->tp_name);
        return NULL;
    }
    return TENSOR(o);
}

static PyObject *d_allreduce(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o;
    int op;
    if (!PyArg_ParseTuple(args, "Oi", &o, &op))
        return NULL;
    tg_tensor *t = tensor_arg(o, "all_reduce");
    if (!t)
        return NULL;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_dist_allreduce(t, (tg_reduce_op)op);
    Py_END_ALLOW_THREADS
    return status_none(s);
}

static PyObject *d_broadcast(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o;
    int root;
    if (!PyArg_ParseTuple(args, "Oi", &o, &root))
        return NULL;
    tg_tensor *t = tensor_arg(o, "broadcast");
    if (!t)
        return NULL;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_dist_broadcast(t, root);
    Py_END_ALLOW_THREADS
    return status_none(s);
}

static PyObject *d_barrier(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_dist_barrier();
    Py_END_ALLOW_THREADS
    return status_none(s);
}

/* ---- the reducer ------------------------------------------------------------- */
static void reducer_free(PyObject *cap)
{
    tg_dist_reducer_free(PyCapsule_GetPointer(cap, REDUCER_CAPSULE));
}

static PyObject *d_reducer_new(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq;
    Py_ssize_t bucket_bytes;
    int op;
    if (!PyArg_ParseTuple(args, "Oni", &seq, &bucket_bytes, &op))
        return NULL;
    PyObject *fast = PySequence_Fast(seq, "DistributedDataParallel: parameters must be a sequence");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    tg_tensor **ps = PyMem_Calloc((size_t)n + 1, sizeof *ps);
    PyObject *out = NULL;
    for (Py_ssize_t i = 0; ps && i < n; i++)
        if (!(ps[i] = tensor_arg(PySequence_Fast_GET_ITEM(fast, i), "DistributedDataParallel")))
            goto done;
    if (!ps) {
        PyErr_NoMemory();
        goto done;
    }
    tg_dist_reducer *r = tg_dist_reducer_new((int)n, ps, bucket_bytes < 1 ? 1 : (size_t)bucket_bytes,
                                             (tg_reduce_op)op);
    out = r ? PyCapsule_New(r, REDUCER_CAPSULE, reducer_free) : tgpy_raise();
    if (r && !out)
        tg_dist_reducer_free(r);
done:
    PyMem_Free(ps);
    Py_DECREF(fast);
    return out;
}

static tg_dist_reducer *reducer_arg(PyObject *cap)
{
    return PyCapsule_GetPointer(cap, REDUCER_CAPSULE);
}

static PyObject *d_reducer_arm(PyObject *self, PyObject *cap)
{
    (void)self;
    tg_dist_reducer *r = reducer_arg(cap);
    return r ? status_none(tg_dist_reducer_arm(r)) : NULL;
}

static PyObject *d_reducer_finish(PyObject *self, PyObject *cap)
{
    (void)self;
    tg_dist_reducer *r = reducer_arg(cap);
    if (!r)
        return NULL;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_dist_reducer_finish(r);
    Py_END_ALLOW_THREADS
    return status_none(s);
}

static PyObject *d_reducer_disarm(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    tg_set_backward_hooks(NULL);
    Py_RETURN_NONE;
}

static PyObject *d_reducer_buckets(PyObject *self, PyObject *cap)
{
    (void)self;
    tg_dist_reducer *r = reducer_arg(cap);
    int early = 0;
    int n = r ? tg_dist_reducer_buckets(r, &early) : -1;
    if (!r)
        return NULL;
    return n < 0 ? tgpy_raise() : Py_BuildValue("ii", n, early);
}

static PyMethodDef dist_functions[] = {
    {"_dist_built", d_built, METH_NOARGS, NULL},
    {"_dist_init", d_init, METH_NOARGS, NULL},
    {"_dist_finalize", d_finalize, METH_NOARGS, NULL},
    {"_dist_serve", d_serve, METH_NOARGS, NULL},
    {"_dist_is_initialized", d_is_initialized, METH_NOARGS, NULL},
    {"_dist_rank", d_rank, METH_NOARGS, NULL},
    {"_dist_world_size", d_world_size, METH_NOARGS, NULL},
    {"_dist_set_timeout", d_set_timeout, METH_O, NULL},
    {"_dist_allreduce", d_allreduce, METH_VARARGS, NULL},
    {"_dist_broadcast", d_broadcast, METH_VARARGS, NULL},
    {"_dist_barrier", d_barrier, METH_NOARGS, NULL},
    {"_dist_reducer_new", d_reducer_new, METH_VARARGS, NULL},
    {"_dist_reducer_arm", d_reducer_arm, METH_O, NULL},
    {"_dist_reducer_finish", d_reducer_finish, METH_O, NULL},
    {"_dist_reducer_disarm", d_reducer_disarm, METH_NOARGS, NULL},
    {"_dist_reducer_buckets", d_reducer_buckets, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_dist(PyObject *m)
{
    return PyModule_AddFunctions(m, dist_functions);
}
