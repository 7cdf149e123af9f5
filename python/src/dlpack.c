/* DLPack: tensors shared with other frameworks without copying, through
 * the capsule protocol (Tensor.__dlpack__ / __dlpack_device__,
 * tg.from_dlpack). The structs below are DLPack's ABI (v0.x, the one
 * numpy and PyTorch exchange as "dltensor" capsules), written out from
 * the specification. CPU memory only. */
#include "tgpy.h"

#include <stdlib.h>

typedef struct {
    int32_t device_type; /* 1: CPU */
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code; /* 0 int, 1 uint, 2 float, 6 bool */
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: C-contiguous */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

enum { DL_CPU = 1, DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BOOL = 6 };

/* ---- export ----------------------------------------------------------------------- */
typedef struct {
    DLManagedTensor m;
    tg_tensor *t; /* the reference that keeps the memory alive */
    int64_t shape[TG_MAX_DIMS], strides[TG_MAX_DIMS];
} exported;

static void exported_delete(DLManagedTensor *m)
{
    exported *e = m->manager_ctx;
    tg_release(e->t);
    free(e);
}

/* a capsule nobody consumed still owns the tensor */
static void capsule_destructor(PyObject *cap)
{
    if (!PyCapsule_IsValid(cap, "dltensor"))
        return; /* renamed "used_dltensor": the consumer calls the deleter */
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter)
        m->deleter(m);
}

static DLDataType dl_dtype(tg_dtype dt)
{
    static const DLDataType map[TG_NUM_DTYPES] = {
        [TG_FLOAT32] = {DL_FLOAT, 32, 1}, [TG_FLOAT64] = {DL_FLOAT, 64, 1},
        [TG_INT32] = {DL_INT, 32, 1},     [TG_INT64] = {DL_INT, 64, 1},
        [TG_UINT8] = {DL_UINT, 8, 1},     [TG_BOOL] = {DL_BOOL, 8, 1}};
    return map[dt];
}

/* Tensor.__dlpack__(stream=None): a capsule sharing this tensor's memory */
static PyObject *m_dlpack(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"stream", NULL};
    PyObject *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O", names, &stream))
        return NULL;
    if (stream != Py_None)
        return PyErr_Format(PyExc_BufferError, "__dlpack__: tensors are on the CPU, "
                            "stream must be None");
    tg_tensor *t = TENSOR(self);
    if (tg_requires_grad(t))
        return PyErr_Format(PyExc_RuntimeError, "Can't export tensors that require gradient, "
                            "use tensor.detach()");
    if (tg_is_symbolic(t))
        return PyErr_Format(PyExc_RuntimeError, "__dlpack__: a symbolic tensor (inside "
                            "tg.function) has no memory to share");
    exported *e = calloc(1, sizeof *e);
    if (!e)
        return PyErr_NoMemory();
    int nd = tg_ndim(t);
    for (int i = 0; i < nd; i++) {
        e->shape[i] = tg_shape(t)[i];
        e->strides[i] = tg_strides(t)[i];
    }
    e->t = tg_retain(t);
    e->m.dl_tensor = (DLTensor){tg_data(t), {DL_CPU, 0}, nd, dl_dtype(tg_dtype_of(t)),
                                e->shape, e->strides, 0};
    e->m.manager_ctx = e;
    e->m.deleter = exported_delete;
    PyObject *cap = PyCapsule_New(&e->m, "dltensor", capsule_destructor);
    if (!cap)
        exported_delete(&e->m);
    return cap;
}

static PyObject *m_dlpack_device(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    return Py_BuildValue("(ii)", DL_CPU, 0);
}

/* ---- import ----------------------------------------------------------------------- */
/* the producer's deleter, when the last tensor over its memory is gone;
 * producers such as numpy drop Python references in it: hold the GIL */
static void release_managed(void *ctx)
{
    DLManagedTensor *m = ctx;
    if (!m->deleter || !Py_IsInitialized())
        return;
    PyGILState_STATE st = PyGILState_Ensure();
    m->deleter(m);
    PyGILState_Release(st);
}

static int dtype_of_dl(DLDataType d, tg_dtype *out)
{
    if (d.lanes != 1)
        return -1;
    if (d.code == DL_FLOAT && (d.bits == 32 || d.bits == 64))
        *out = d.bits == 32 ? TG_FLOAT32 : TG_FLOAT64;
    else if (d.code == DL_INT && (d.bits == 32 || d.bits == 64))
        *out = d.bits == 32 ? TG_INT32 : TG_INT64;
    else if (d.code == DL_UINT && d.bits == 8)
        *out = TG_UINT8;
    else if (d.code == DL_BOOL && d.bits == 8)
        *out = TG_BOOL;
    else
        return -1;
    return 0;
}

/* _from_dlpack_capsule(capsule): a tensor over the producer's memory */
static PyObject *from_capsule(PyObject *m, PyObject *cap)
{
    (void)m;
    DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
    if (!mt)
        return NULL; /* not a capsule, or one already consumed */
    const DLTensor *d = &mt->dl_tensor;
    tg_dtype dt;
    const char *why = NULL;
    if (d->device.device_type != DL_CPU)
        why = "it is not on the CPU";
    else if (dtype_of_dl(d->dtype, &dt) < 0)
        why = "its dtype is not supported (float32, float64, int32, int64, uint8, bool are)";
    else if (d->ndim < 0 || d->ndim > TG_MAX_DIMS)
        why = "it has more than 8 dims";
    for (int i = 0; !why && d->strides && i < d->ndim; i++)
        if (d->strides[i] < 0)
            why = "a stride is negative";
    if (why)
        return PyErr_Format(PyExc_BufferError, "from_dlpack: cannot share this tensor: %s",
                            why);
    /* consumed: from now on the tensor calls the deleter, not the capsule */
    if (PyCapsule_SetName(cap, "used_dltensor") < 0)
        return NULL;
    tg_tensor *t = tg_from_blob(dt, d->ndim, d->shape, d->strides,
                                (char *)d->data + d->byte_offset, release_managed, mt);
    if (!t) {
        PyCapsule_SetName(cap, "dltensor"); /* still the capsule's to delete */
        return tgpy_raise();
    }
    return tgpy_wrap(t);
}

static PyMethodDef dlpack_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))m_dlpack, METH_VARARGS | METH_KEYWORDS,
     "A DLPack capsule sharing this tensor's memory."},
    {"__dlpack_device__", m_dlpack_device, METH_NOARGS, "(1, 0): the CPU."},
    {NULL, NULL, 0, NULL}};

static PyMethodDef dlpack_functions[] = {
    {"_from_dlpack_capsule", from_capsule, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_dlpack(PyObject *m)
{
    for (PyMethodDef *d = dlpack_methods; d->ml_name; d++) {
        PyObject *descr = PyDescr_NewMethod(&Tensor_Type, d);
        if (!descr || PyDict_SetItemString(Tensor_Type.tp_dict, d->ml_name, descr) < 0) {
            Py_XDECREF(descr);
            return -1;
        }
        Py_DECREF(descr);
    }
    PyType_Modified(&Tensor_Type);
    return PyModule_AddFunctions(m, dlpack_functions);
}
