/* tensorgraph.profiler's C side: start and stop the eager op profiler
 * (tg/profiler.h) and read its events as tuples
 * (name, start_ns, end_ns, thread, depth, is_range, shapes). */
#include "tgpy.h"

static PyObject *profiler_start(PyObject *self, PyObject *args)
{
    (void)self;
    int record_shapes = 0;
    long long max_events = 0;
    if (!PyArg_ParseTuple(args, "pL:_profiler_start", &record_shapes, &max_events))
        return NULL;
    if (tg_profiler_start(record_shapes, max_events) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *profiler_stop(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (tg_profiler_stop() != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *profiler_enabled(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(tg_profiler_enabled());
}

static PyObject *profiler_dropped(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromLongLong(tg_profiler_dropped());
}

static PyObject *profiler_events(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int64_t n = tg_profiler_count();
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; list && i < n; i++) {
        tg_profile_event e;
        if (tg_profiler_event(i, &e) != TG_OK) {
            Py_DECREF(list);
            return tgpy_raise();
        }
        PyObject *t = Py_BuildValue("(sLLiiNs)", e.name, (long long)e.start_ns,
                                    (long long)e.end_ns, e.thread, e.depth,
                                    PyBool_FromLong(e.is_range), e.shapes);
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

static PyObject *range_push(PyObject *self, PyObject *name)
{
    (void)self;
    const char *s = PyUnicode_AsUTF8(name);
    if (!s)
        return NULL;
    if (tg_profiler_range_push(s) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *range_pop(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (tg_profiler_range_pop() != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyMethodDef profiler_functions[] = {
    {"_profiler_range_push", range_push, METH_O, "Open a named range on this thread."},
    {"_profiler_range_pop", range_pop, METH_NOARGS, "Close the innermost range."},
    {"_profiler_start", profiler_start, METH_VARARGS,
     "_profiler_start(record_shapes, max_events): start recording eager ops."},
    {"_profiler_stop", profiler_stop, METH_NOARGS, "Stop recording."},
    {"_profiler_enabled", profiler_enabled, METH_NOARGS, "Whether the profiler records."},
    {"_profiler_dropped", profiler_dropped, METH_NOARGS, "Events past the limit."},
    {"_profiler_events", profiler_events, METH_NOARGS,
     "The events, (name, start_ns, end_ns, thread, depth, is_range, shapes_json) each."},
    {NULL, NULL, 0, NULL}};

int tgpy_init_profiler(PyObject *m) { return PyModule_AddFunctions(m, profiler_functions); }
