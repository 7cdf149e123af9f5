/* The buffer protocol both ways: a tensor's memory exported to numpy
 * (memoryview, np.asarray) and a tensor over an exporter's memory
 * (from_numpy), sharing it without copies. */
#include "tgpy.h"

/* ---- buffer protocol: numpy views the tensor's memory --------------------------- */
static const char *buffer_format(tg_dtype dt)
{
    static const char *f[TG_NUM_DTYPES] = {"f", "d", "i", "q", "B", "?"};
    return f[dt];
}

static int tensor_getbuffer(PyObject *o, Py_buffer *view, int flags)
{
    tg_tensor *t = TENSOR(o);
    if (tg_is_symbolic(t)) {
        PyErr_SetString(PyExc_BufferError, "a symbolic tensor (traced by tg.function) has no data");
        return -1;
    }
    if (tg_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError, "Can't call numpy() on Tensor that requires grad. "
                        "Use tensor.detach().numpy() instead.");
        return -1;
    }
    int nd = tg_ndim(t);
    Py_ssize_t *dims = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (size_t)(nd ? nd : 1));
    if (!dims) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t item = (Py_ssize_t)tg_dtype_size(tg_dtype_of(t));
    for (int i = 0; i < nd; i++) {
        dims[i] = (Py_ssize_t)tg_shape(t)[i];
        dims[nd + i] = (Py_ssize_t)tg_strides(t)[i] * item;
    }
    if (!tg_is_contiguous(t) && (flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
        PyMem_Free(dims);
        PyErr_SetString(PyExc_BufferError, "the tensor is not contiguous; the consumer "
                        "must accept strides");
        return -1;
    }
    view->buf = tg_numel(t) ? tg_data(t) : (void *)dims;
    view->obj = Py_NewRef(o);
    view->len = (Py_ssize_t)tg_numel(t) * item;
    view->readonly = 0;
    view->itemsize = item;
    view->format = (flags & PyBUF_FORMAT) ? (char *)buffer_format(tg_dtype_of(t)) : NULL;
    view->ndim = nd;
    view->shape = dims;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? dims + nd : NULL;
    view->suboffsets = NULL;
    view->internal = dims;
    return 0;
}
static void tensor_releasebuffer(PyObject *o, Py_buffer *view)
{
    (void)o;
    PyMem_Free(view->internal);
}
PyBufferProcs tgpy_tensor_buffer = {tensor_getbuffer, tensor_releasebuffer};

/* ---- from_numpy: a tensor over an exporter's memory ------------------------------ */
typedef struct {
    Py_buffer view;
} shared_buffer;

static void release_shared(void *ctx)
{
    if (!Py_IsInitialized()) /* interpreter gone: nothing left to release */
        return;
    PyGILState_STATE st = PyGILState_Ensure();
    shared_buffer *b = ctx;
    PyBuffer_Release(&b->view);
    PyMem_RawFree(b);
    PyGILState_Release(st);
}

static int dtype_of_format(const char *f, Py_ssize_t item, tg_dtype *out)
{
    if (f[0] == '<' || f[0] == '=' || f[0] == '@')
        f++;
    if (f[0] && f[1])
        return -1;
    switch (f[0]) {
    case 'f': *out = TG_FLOAT32; return item == 4 ? 0 : -1;
    case 'd': *out = TG_FLOAT64; return item == 8 ? 0 : -1;
    case 'i': case 'l': case 'q':
        if (item == 4) { *out = TG_INT32; return 0; }
        if (item == 8) { *out = TG_INT64; return 0; }
        return -1;
    case 'B': *out = TG_UINT8; return 0;
    case '?': *out = TG_BOOL; return 0;
    default: return -1;
    }
}

/* shares memory when the buffer's layout is expressible as strides in
 * elements (non-negative, multiples of the item size, aligned data);
 * raises otherwise (from_numpy's contract: it never silently copies) */
PyObject *tgpy_from_buffer(PyObject *m, PyObject *obj)
{
    (void)m;
    shared_buffer *b = PyMem_RawMalloc(sizeof *b);
    if (!b)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(obj, &b->view, PyBUF_RECORDS_RO) < 0) {
        PyMem_RawFree(b);
        return NULL;
    }
    Py_buffer *v = &b->view;
    tg_dtype dt;
    int64_t shape[TG_MAX_DIMS], strides[TG_MAX_DIMS];
    const char *why = NULL;
    if (dtype_of_format(v->format ? v->format : "B", v->itemsize, &dt) < 0)
        why = "its dtype is not supported (float32, float64, int32, int64, uint8, bool are)";
    else if (v->ndim > TG_MAX_DIMS)
        why = "it has more than 8 dims";
    else if ((uintptr_t)v->buf % (uintptr_t)v->itemsize)
        why = "its data is not aligned to its item size";
    for (int i = 0; !why && i < v->ndim; i++) {
        shape[i] = v->shape[i];
        Py_ssize_t s = v->strides ? v->strides[i] : 0;
        if (!v->strides) { /* C-contiguous */
            s = v->itemsize;
            for (int j = i + 1; j < v->ndim; j++)
                s *= v->shape[j];
        }
        if (s < 0)
            why = "at least one stride is negative (copy it first, e.g. with a.copy())";
        else if (s % v->itemsize)
            why = "a stride is not a multiple of the item size";
        strides[i] = s / v->itemsize;
    }
    if (why) {
        PyErr_Format(PyExc_ValueError, "from_numpy: cannot share the memory of this array: %s",
                     why);
        PyBuffer_Release(v);
        PyMem_RawFree(b);
        return NULL;
    }
    tg_tensor *t = tg_from_blob(dt, v->ndim, shape, strides, v->buf, release_shared, b);
    if (!t) {
        PyBuffer_Release(v);
        PyMem_RawFree(b);
        return tgpy_raise();
    }
    return tgpy_wrap(t);
}
