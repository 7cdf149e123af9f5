/* tg.device's C side (python/tensorgraph/_device.py): device names parsed
 * by the library, and device scopes, inside which the nodes a tg.function
 * traces are placed on the device (its session then partitions the graph
 * over the devices, docs/DISTRIBUTED.md). */
#include "tgpy.h"

/* a device scope (tg.device as a context manager) */
static PyObject *device_scope_begin(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    if (tg_device_scope_begin(name) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *device_scope_end(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (tg_device_scope_end() != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *device_parse(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    tg_device d;
    if (!name)
        return NULL;
    if (tg_device_parse(name, &d) != TG_OK)
        return tgpy_raise();
    return Py_BuildValue("(sii)", "cpu", d.index, d.rank);
}

static PyMethodDef device_functions[] = {
    {"_device_scope_begin", device_scope_begin, METH_O, NULL},
    {"_device_scope_end", device_scope_end, METH_NOARGS, NULL},
    {"_device_parse", device_parse, METH_O, "(type, index, rank) of a device name"},
    {NULL, NULL, 0, NULL}};

int tgpy_init_device(PyObject *m)
{
    return PyModule_AddFunctions(m, device_functions);
}
