/* tensorgraph.Graph: a traced function's graph as Python sees it (dump,
 * DOT, the explorer page, verify), borrowed from the function holding it. */
#include "tgpy.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    tg_graph *g;     /* borrowed from owner */
    PyObject *owner; /* the traced function holding the graph */
} GraphObject;

static void graph_dealloc(PyObject *s)
{
    Py_XDECREF(((GraphObject *)s)->owner);
    Py_TYPE(s)->tp_free(s);
}

/* runs a writer of g into a temporary file and returns its text */
static PyObject *graph_text(tg_graph *g, bool dot)
{
    char path[] = "/tmp/tgpy-graph-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    FILE *f = fdopen(fd, "w+");
    tg_status st = !f ? TG_ERR_IO : dot ? tg_graph_to_dot(g, path) : tg_graph_dump(g, f);
    PyObject *r = NULL;
    if (f && st == TG_OK) {
        fflush(f);
        FILE *in = fopen(path, "r");
        if (in) {
            fseek(in, 0, SEEK_END);
            long n = ftell(in);
            fseek(in, 0, SEEK_SET);
            char *buf = PyMem_Malloc((size_t)n + 1);
            if (buf && fread(buf, 1, (size_t)n, in) == (size_t)n)
                r = PyUnicode_FromStringAndSize(buf, n);
            PyMem_Free(buf);
            fclose(in);
        }
    }
    if (f)
        fclose(f);
    remove(path);
    if (!r && !PyErr_Occurred())
        tgpy_raise();
    return r;
}

static PyObject *graph_to_dot(PyObject *s, PyObject *const *args, Py_ssize_t n)
{
    tg_graph *g = ((GraphObject *)s)->g;
    if (n > 0 && args[0] != Py_None) {
        PyObject *p = PyOS_FSPath(args[0]);
        const char *path = p ? PyUnicode_AsUTF8(p) : NULL;
        tg_status st = path ? tg_graph_to_dot(g, path) : TG_ERR_ARG;
        Py_XDECREF(p);
        if (!path)
            return NULL;
        if (st != TG_OK)
            return tgpy_raise();
        Py_RETURN_NONE;
    }
    return graph_text(g, true);
}
/* to_html(path, *, title=None, profile=None, level=0): the explorer page
 * (tg_graph_to_html) for the traced signature: every placeholder fed,
 * every value nothing reads fetched */
static PyObject *graph_to_html(PyObject *s, PyObject *args, PyObject *kw)
{
    static char *names[] = {"path", "title", "profile", "level", NULL};
    PyObject *path_obj, *profile_obj = Py_None, *path = NULL, *profile = NULL;
    const char *title = NULL;
    int level = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$zOi:to_html", names, &path_obj, &title,
                                     &profile_obj, &level))
        return NULL;
    if (!(path = PyOS_FSPath(path_obj)) || !PyUnicode_Check(path) ||
        (profile_obj != Py_None && (!(profile = PyOS_FSPath(profile_obj)) ||
                                    !PyUnicode_Check(profile)))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "to_html: path and profile must be str or "
                                             "os.PathLike of str");
        Py_XDECREF(path);
        Py_XDECREF(profile);
        return NULL;
    }
    if (level < 0 || level > 2) {
        Py_DECREF(path);
        Py_XDECREF(profile);
        return PyErr_Format(PyExc_ValueError, "to_html: level must be 0, 1 or 2, got %d",
                            level);
    }
    tg_html_options o = {.title = title, .level = level,
                         .profile = profile ? PyUnicode_AsUTF8(profile) : NULL};
    const char *p = PyUnicode_AsUTF8(path);
    tg_status st = p && (!profile || o.profile) ? tg_graph_to_html(((GraphObject *)s)->g, p, &o)
                                                : TG_ERR_ARG;
    Py_DECREF(path);
    Py_XDECREF(profile);
    if (PyErr_Occurred())
        return NULL;
    if (st != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *graph_dump(PyObject *s, PyObject *u) { (void)u; return graph_text(((GraphObject *)s)->g, false); }
static PyObject *graph_num_nodes(PyObject *s, void *c) { (void)c; return PyLong_FromLong(tg_graph_num_nodes(((GraphObject *)s)->g)); }
static PyObject *graph_verify(PyObject *s, PyObject *u)
{
    (void)u;
    if (tg_graph_verify(((GraphObject *)s)->g) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyMethodDef graph_methods[] = {
    {"to_dot", (PyCFunction)(void (*)(void))graph_to_dot, METH_FASTCALL,
     "to_dot(path=None): Graphviz text (written to path when given)"},
    {"to_html", (PyCFunction)(void (*)(void))graph_to_html, METH_VARARGS | METH_KEYWORDS,
     "to_html(path, *, title=None, profile=None, level=0): the graph explorer page"},
    {"dump", graph_dump, METH_NOARGS, "one line per node"},
    {"verify", graph_verify, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};
static PyGetSetDef graph_getset[] = {{"num_nodes", graph_num_nodes, NULL, NULL, NULL},
                                     {NULL, NULL, NULL, NULL, NULL}};
static PyTypeObject Graph_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph.Graph",
    .tp_basicsize = sizeof(GraphObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = graph_dealloc,
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
    .tp_doc = "A static graph traced by tg.function (see .dump() and .to_dot()).",
};

PyObject *tgpy_graph_view(tg_graph *g, PyObject *owner)
{
    GraphObject *v = PyObject_New(GraphObject, &Graph_Type);
    if (!v)
        return NULL;
    v->g = g;
    v->owner = Py_NewRef(owner);
    return (PyObject *)v;
}

int tgpy_init_graph_view(PyObject *m)
{
    if (PyType_Ready(&Graph_Type) < 0)
        return -1;
    return PyModule_AddObjectRef(m, "Graph", (PyObject *)&Graph_Type);
}
