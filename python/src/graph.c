/* tg.function's C side: tracing a Python function into a static graph
 * (placeholders for the tensor arguments, every op appended by the same
 * op functions as eager mode), running it in a session whose plans are
 * cached, and gradients through a call: each floating-point output is a
 * custom function node of the eager tape whose backward runs the graph's
 * symbolic gradient (built on first use) in the same session.
 *
 * While a trace runs, the concrete tensors that require grad and meet an
 * op (parameters, usually) are noted: they become constants of the graph,
 * captured by reference, and inputs of the tape node so their gradients
 * flow. */
#include "tgpy.h"

#include <stdio.h>
#include <string.h>

#define MAX_IO 64

int tgpy_tracing;
static tg_tensor **noted;
static int n_noted, cap_noted;
static int note_base; /* the innermost trace's first note */

/* t, met for the first time by the innermost trace, becomes a variable of
 * its graph (by reference) rather than the constant a concrete input
 * would otherwise be: the plan reads it at run time like any state, so
 * an optimizer writing it in place between calls leaves the compiled
 * plans valid (a constant would be folded and guarded by version, and a
 * write would make the session compile them again). */
void tgpy_trace_capture(tg_tensor *t)
{
    tg_graph *g = tg_graph_current();
    if (!g)
        return;
    int token = tg_scope_hide(); /* the symbolic handle is ours: released */
    tg_tensor *v = tg_variable_ref(g, NULL, t);
    tg_scope_unhide(token);
    if (!v)
        tg_clear_error(); /* the graph has used t already (a constant of it, kept:
                           * correct, guarded by version) */
    tg_release(v);
}

void tgpy_trace_note(tg_tensor *const *ts, int n)
{
    for (int i = 0; i < n; i++) {
        tg_tensor *t = ts[i];
        if (!t || tg_is_symbolic(t) || !tg_requires_grad(t))
            continue;
        bool seen = false;
        for (int j = note_base; j < n_noted && !seen; j++)
            seen = noted[j] == t;
        if (seen)
            continue;
        tgpy_trace_capture(t);
        if (n_noted == cap_noted) {
            int cap = cap_noted ? cap_noted * 2 : 16;
            tg_tensor **p = PyMem_Realloc(noted, sizeof *p * (size_t)cap);
            if (!p)
                return;
            noted = p;
            cap_noted = cap;
        }
        noted[n_noted++] = tg_retain(t);
    }
}

int tgpy_trace_notes(tg_tensor *const **out)
{
    *out = noted + note_base;
    return n_noted - note_base;
}

/* ---- source locations of traced nodes ---------------------------------------- */
static char package_dir[1024]; /* ".../tensorgraph/": frames inside it are not the user's */
static char where_buf[1024];

static void find_package_dir(void)
{
    PyObject *m = PyImport_ImportModule("tensorgraph");
    PyObject *file = m ? PyObject_GetAttrString(m, "__file__") : NULL;
    const char *f = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : NULL;
    const char *slash = f ? strrchr(f, '/') : NULL;
    if (slash && (size_t)(slash - f) + 2 <= sizeof package_dir)
        snprintf(package_dir, sizeof package_dir, "%.*s", (int)(slash - f + 1), f);
    Py_XDECREF(file);
    Py_XDECREF(m);
    PyErr_Clear(); /* without it, locations name the package's frames too */
}

/* tg_graph_location_fn while tracing: "file.py:line" of the innermost
 * Python frame outside the tensorgraph package (the user's line that made
 * the node). Kernels may run without the GIL: take it. */
static const char *trace_location(void *user)
{
    (void)user;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *type, *value, *tb; /* an error being raised stays as it is */
    PyErr_Fetch(&type, &value, &tb);
    const char *where = NULL;
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f && !where) {
        PyCodeObject *code = PyFrame_GetCode(f);
        PyObject *name = code ? PyObject_GetAttrString((PyObject *)code, "co_filename") : NULL;
        const char *file = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (file && !(package_dir[0] && !strncmp(file, package_dir, strlen(package_dir)))) {
            snprintf(where_buf, sizeof where_buf, "%s:%d", file, PyFrame_GetLineNumber(f));
            where = where_buf;
        }
        Py_XDECREF(name);
        Py_XDECREF(code);
        PyFrameObject *back = where ? NULL : PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    PyGILState_Release(gil);
    return where;
}

/* ---- traced functions ------------------------------------------------------------ */
typedef struct {
    PyObject_HEAD
    tg_graph *g;
    tg_session *s;
    int n_in, n_out, n_cap;
    tg_tensor *in[MAX_IO], *out[MAX_IO]; /* symbolic */
    tg_tensor **cap;                      /* concrete, requiring grad (owned) */
    tg_tensor *gy[MAX_IO];                /* per output: gradient placeholder */
    tg_tensor **dx[MAX_IO];               /* per output: n_in + n_cap gradients */
    bool single;                          /* fn returned a tensor, not a tuple */
    int n_fwd;   /* nodes of the forward graph: the trace and its outputs */
    int grads;   /* all gradients built and the cut known: 1; failed: -1; not yet: 0 */
    int n_saved; /* forward values the gradients read (tg_graph_cut_values) */
    tg_tensor **saved;
    tgpy_step *step; /* a training step the trace made (graph_step.c), or NULL */
} TracedObject;

static void traced_dealloc(PyObject *o)
{
    TracedObject *self = (TracedObject *)o;
    for (int k = 0; k < self->n_out; k++) {
        for (int i = 0; self->dx[k] && i < self->n_in + self->n_cap; i++)
            tg_release(self->dx[k][i]);
        PyMem_Free(self->dx[k]);
        tg_release(self->gy[k]);
        tg_release(self->out[k]);
    }
    for (int i = 0; i < self->n_in; i++)
        tg_release(self->in[i]);
    for (int i = 0; i < self->n_cap; i++)
        tg_release(self->cap[i]);
    PyMem_Free(self->cap);
    for (int i = 0; i < self->n_saved; i++)
        tg_release(self->saved[i]);
    free(self->saved);
    tgpy_step_free(self->step);
    tg_session_free(self->s);
    tg_graph_free(self->g);
    Py_TYPE(o)->tp_free(o);
}

/* what the tape node of output k keeps */
typedef struct {
    PyObject *owner; /* the TracedObject */
    int k;
    tg_tensor *value;            /* the output computed by the call */
    tg_tensor *args[MAX_IO];     /* the call's inputs, fed again by backward */
    tg_tensor **saved;           /* the call's values of the owner's saved (or NULL) */
} call_record;

static void record_free(void *user)
{
    call_record *r = user;
    tg_release(r->value);
    TracedObject *t = (TracedObject *)r->owner;
    for (int i = 0; i < t->n_in; i++)
        tg_release(r->args[i]);
    for (int i = 0; r->saved && i < t->n_saved; i++)
        tg_release(r->saved[i]);
    free(r->saved);
    if (Py_IsInitialized()) {
        PyGILState_STATE st = PyGILState_Ensure();
        Py_DECREF(r->owner);
        PyGILState_Release(st);
    }
    free(r);
}

static tg_tensor *record_forward(tg_function_ctx *c, int n, tg_tensor *const *in, void *user)
{
    (void)c; (void)n; (void)in;
    call_record *r = user;
    return tg_reshape(r->value, tg_ndim(r->value), tg_shape(r->value));
}

static bool is_input(const TracedObject *t, const tg_tensor *v)
{
    for (int i = 0; i < t->n_in; i++)
        if (t->in[i] == v)
            return true;
    return false;
}

/* builds, once per output, the symbolic gradient of output k */
static tg_status ensure_gradient(TracedObject *t, int k)
{
    if (t->dx[k])
        return TG_OK;
    int nx = t->n_in + t->n_cap, token = tg_scope_hide();
    tg_tensor *xs[MAX_IO * 4];
    tg_status st = TG_ERR_UNSUPPORTED;
    if (nx > MAX_IO * 4)
        goto done;
    for (int i = 0; i < t->n_in; i++)
        xs[i] = t->in[i];
    for (int i = 0; i < t->n_cap; i++)
        xs[t->n_in + i] = t->cap[i];
    char name[32];
    snprintf(name, sizeof name, "grad_output_%d", k);
    if (!t->gy[k]) /* kept from an attempt that failed: its error is reported again */
        t->gy[k] = tg_placeholder(t->g, name, tg_dtype_of(t->out[k]), tg_ndim(t->out[k]),
                                  tg_shape(t->out[k]));
    t->dx[k] = calloc((size_t)nx, sizeof(tg_tensor *));
    st = t->gy[k] && t->dx[k] ? tg_graph_gradients(t->g, 1, &t->out[k], &t->gy[k], nx, xs, t->dx[k])
                              : tg_last_status();
    /* a gradient that is a fed tensor itself (output = input: dx = dy)
     * cannot be fetched from the same run: fetch a copy */
    for (int i = 0; st == TG_OK && i < nx; i++) {
        tg_tensor *d = t->dx[k][i];
        if (d && (d == t->gy[k] || is_input(t, d))) {
            tg_graph_begin(t->g);
            t->dx[k][i] = tg_clone(d);
            tg_graph_end();
            tg_release(d);
            st = t->dx[k][i] ? TG_OK : tg_last_status();
        }
    }
    if (st != TG_OK) {
        free(t->dx[k]);
        t->dx[k] = NULL;
    }
done:
    tg_scope_unhide(token);
    return st;
}

/* backward with create_graph: dx from the gradient graph replayed on the
 * call's inputs and dy (tg_graph_replay), differentiable again */
static tg_status replay_backward(tg_function_ctx *c, TracedObject *t, call_record *r,
                                 tg_tensor *dy, int n, tg_tensor **dx)
{
    tg_tensor *feeds[MAX_IO + 1], *vals[MAX_IO + 1], *fetch[MAX_IO * 4], *res[MAX_IO * 4];
    int idx[MAX_IO * 4], nf = 0;
    for (int i = 0; i < t->n_in; i++) {
        feeds[i] = t->in[i];
        vals[i] = r->args[i];
    }
    feeds[t->n_in] = t->gy[r->k];
    vals[t->n_in] = dy;
    for (int i = 0; i < n; i++)
        if (t->dx[r->k][i] && tg_ctx_needs_input_grad(c, i)) {
            idx[nf] = i;
            fetch[nf++] = t->dx[r->k][i];
        }
    tg_status st = tg_graph_replay(t->g, t->n_in + 1, feeds, vals, nf, fetch, res);
    for (int j = 0; st == TG_OK && j < nf; j++)
        dx[idx[j]] = res[j];
    return st;
}

static tg_status record_backward(tg_function_ctx *c, tg_tensor *dy, int n, tg_tensor **dx,
                                 void *user)
{
    (void)c;
    call_record *r = user;
    TracedObject *t = (TracedObject *)r->owner;
    /* the engine runs rules with grad mode on only for create_graph: the
     * session's gradients are values without a history, so a second
     * derivative would silently be zero or fail later on a misleading
     * message */
    tg_status st = ensure_gradient(t, r->k);
    if (st != TG_OK)
        return st;
    /* the engine runs rules with grad mode on only for create_graph: then
     * the gradient graph is replayed as eager ops from the call's inputs,
     * so its results have a history (gradients of gradients); a session
     * run's values would have none */
    if (tg_grad_enabled())
        return replay_backward(c, t, r, dy, n, dx);
    /* the inputs, the gradient of the output and, when the forward run
     * handed them out, the forward values the gradient reads: then only
     * the backward nodes run */
    int n_saved = r->saved ? t->n_saved : 0, n_feeds = t->n_in + n_saved + 1;
    tg_tensor **feeds = malloc(sizeof *feeds * (size_t)n_feeds * 2);
    if (!feeds)
        return TG_ERR_NOMEM;
    tg_tensor **vals = feeds + n_feeds, *fetch[MAX_IO * 4], *res[MAX_IO * 4];
    int idx[MAX_IO * 4], nf = 0;
    for (int i = 0; i < t->n_in; i++) {
        feeds[i] = t->in[i];
        vals[i] = r->args[i];
    }
    for (int i = 0; i < n_saved; i++) {
        feeds[t->n_in + i] = t->saved[i];
        vals[t->n_in + i] = r->saved[i];
    }
    feeds[n_feeds - 1] = t->gy[r->k];
    tg_tensor *g = tg_contiguous(dy);
    vals[n_feeds - 1] = g;
    for (int i = 0; i < n; i++)
        if (t->dx[r->k][i] && tg_ctx_needs_input_grad(c, i)) {
            idx[nf] = i;
            fetch[nf++] = t->dx[r->k][i];
        }
    st = tg_session_run(t->s, n_feeds, feeds, vals, nf, fetch, res, 0, NULL);
    free(feeds);
    if (st == TG_OK)
        for (int j = 0; j < nf; j++)
            dx[idx[j]] = res[j];
    return st;
}

/* builds the gradients of every floating-point output and finds the
 * forward values they read (t->saved), once: 1 done, -1 failed (the
 * gradients are then built again by backward, which reports the error) */
static int prepare_backward(TracedObject *t)
{
    if (t->grads)
        return t->grads;
    tg_status st = TG_OK;
    for (int k = 0; st == TG_OK && k < t->n_out; k++)
        if (tg_dtype_is_float(tg_dtype_of(t->out[k])))
            st = ensure_gradient(t, k);
    if (st == TG_OK) {
        int token = tg_scope_hide();
        st = tg_graph_cut_values(t->g, t->n_fwd, &t->n_saved, &t->saved);
        tg_scope_unhide(token);
    }
    if (st != TG_OK)
        tg_clear_error();
    t->grads = st == TG_OK ? 1 : -1;
    return t->grads;
}

static const tg_function traced_fn = {"function", record_forward, record_backward};

static PyObject *traced_call(PyObject *o, PyObject *argt, PyObject *kw)
{
    TracedObject *t = (TracedObject *)o;
    Py_ssize_t n = PyTuple_GET_SIZE(argt);
    PyObject *const *args = &PyTuple_GET_ITEM(argt, 0);
    if (kw && PyDict_Size(kw))
        return PyErr_Format(PyExc_TypeError, "a traced function takes tensors only");
    if (n != t->n_in)
        return PyErr_Format(PyExc_TypeError, "traced function takes %d tensors (%zd given)",
                            t->n_in, n);
    tg_tensor *vals[MAX_IO], *res[MAX_IO];
    bool want_grad = tg_grad_enabled();
    bool any_grad = false;
    for (int i = 0; i < t->n_in; i++) {
        if (!Tensor_Check(args[i]))
            return PyErr_Format(PyExc_TypeError, "argument %d must be a Tensor", i);
        vals[i] = TENSOR(args[i]);
        any_grad |= tg_requires_grad(vals[i]);
    }
    for (int i = 0; i < t->n_cap; i++)
        any_grad |= tg_requires_grad(t->cap[i]);
    /* a training step's outputs are values before its update: no history */
    tg_tensor *const *targets = NULL;
    int n_targets = t->step ? tgpy_step_targets(t->step, &targets) : 0;
    if (t->step)
        want_grad = false;
    /* a call that records for backward also fetches the forward values
     * the gradients read, so that backward does not run the forward again */
    bool saving = want_grad && any_grad && prepare_backward(t) == 1 && t->n_saved > 0;
    int n_fetch = t->n_out + (saving ? t->n_saved : 0);
    tg_tensor **fetch = t->out, **saved = NULL;
    if (saving) {
        fetch = malloc(sizeof *fetch * (size_t)n_fetch * 2);
        if (!fetch)
            return PyErr_NoMemory();
        saved = fetch + n_fetch;
        memcpy(fetch, t->out, sizeof *fetch * (size_t)t->n_out);
        memcpy(fetch + t->n_out, t->saved, sizeof *fetch * (size_t)t->n_saved);
    }
    tg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tg_session_run(t->s, t->n_in, t->in, vals, n_fetch, fetch, saving ? saved : res,
                        n_targets, (tg_tensor **)targets);
    Py_END_ALLOW_THREADS
    if (saving && st == TG_OK)
        memcpy(res, saved, sizeof *res * (size_t)t->n_out);
    if (st != TG_OK) {
        if (saving)
            free(fetch);
        return tgpy_raise();
    }
    tg_tensor **saved_vals = saving ? saved + t->n_out : NULL;
    PyObject *outs = PyTuple_New(t->n_out);
    for (int k = 0; outs && k < t->n_out; k++) {
        tg_tensor *y = res[k];
        if (want_grad && any_grad && tg_dtype_is_float(tg_dtype_of(y))) {
            call_record *r = calloc(1, sizeof *r);
            tg_tensor *inputs[MAX_IO * 4];
            if (!r) {
                tg_release(y);
                Py_CLEAR(outs);
                break;
            }
            r->owner = Py_NewRef(o);
            r->k = k;
            r->value = y;
            if (saved_vals && (r->saved = malloc(sizeof *r->saved * (size_t)t->n_saved)))
                for (int i = 0; i < t->n_saved; i++)
                    r->saved[i] = tg_retain(saved_vals[i]);
            for (int i = 0; i < t->n_in; i++)
                inputs[i] = r->args[i] = tg_retain(vals[i]);
            for (int i = 0; i < t->n_cap; i++)
                inputs[t->n_in + i] = t->cap[i];
            y = tg_function_apply_owned(&traced_fn, t->n_in + t->n_cap, inputs, r, record_free);
        }
        PyObject *w = tgpy_wrap(y);
        if (!w) {
            for (int j = k + 1; j < t->n_out; j++)
                tg_release(res[j]);
            Py_CLEAR(outs);
            break;
        }
        PyTuple_SET_ITEM(outs, k, w);
    }
    for (int i = 0; saved_vals && i < t->n_saved; i++)
        tg_release(saved_vals[i]);
    if (saving)
        free(fetch);
    if (outs && t->single) {
        PyObject *one = Py_NewRef(PyTuple_GET_ITEM(outs, 0));
        Py_DECREF(outs);
        return one;
    }
    return outs;
}

static PyObject *traced_graph(PyObject *o, void *c)
{
    (void)c;
    return tgpy_graph_view(((TracedObject *)o)->g, o);
}

static PyObject *traced_captures(PyObject *o, void *c)
{
    (void)c;
    return PyLong_FromLong(((TracedObject *)o)->n_cap);
}

static PyObject *traced_stats(PyObject *o, PyObject *u)
{
    (void)u;
    tg_session_stats s;
    tg_session_get_stats(((TracedObject *)o)->s, &s);
    return Py_BuildValue("{sLsLsLsLsLsi}", "runs", (long long)s.runs, "plan_hits",
                         (long long)s.plan_hits, "plan_misses", (long long)s.plan_misses,
                         "nodes_last_run", (long long)s.nodes_last_run, "nodes_total",
                         (long long)s.nodes_total, "n_plans", s.n_plans);
}

/* set_opt_level(level): the session's optimization level (0, 1, 2; see
 * docs/PASSES.md); drops the compiled plans */
static PyObject *traced_set_opt_level(PyObject *o, PyObject *arg)
{
    long level = PyLong_AsLong(arg);
    if (level == -1 && PyErr_Occurred())
        return NULL;
    if (level < 0 || level > 2)
        return PyErr_Format(PyExc_ValueError, "set_opt_level: level %ld (expected 0, 1 or 2)",
                            level);
    tg_session_options opts = tg_session_default_options();
    opts.opt_level = (int)level;
    if (tg_session_set_options(((TracedObject *)o)->s, &opts) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

/* step_holds(): whether the parameters a compiled training step writes
 * the gradients of still have the .grad tensors it writes (else the
 * function traces again) */
static PyObject *traced_step_holds(PyObject *o, PyObject *u)
{
    (void)u;
    TracedObject *t = (TracedObject *)o;
    return PyBool_FromLong(!t->step || tgpy_step_holds(t->step));
}

static PyObject *traced_has_step(PyObject *o, void *c)
{
    (void)c;
    return PyBool_FromLong(((TracedObject *)o)->step != NULL);
}

static PyObject *traced_saved(PyObject *o, void *c)
{
    (void)c;
    TracedObject *t = (TracedObject *)o;
    return PyLong_FromLong(t->grads == 1 ? t->n_saved : 0);
}

static PyGetSetDef traced_getset[] = {
    {"graph", traced_graph, NULL, "the traced graph", NULL},
    {"has_step", traced_has_step, NULL,
     "True if the function runs a training step (backward, zero_grad or an optimizer's step)",
     NULL},
    {"num_captured", traced_captures, NULL, "tensors requiring grad the graph captured", NULL},
    {"num_saved", traced_saved, NULL,
     "forward values a call recording for backward hands over to it", NULL},
    {NULL, NULL, NULL, NULL, NULL}};
/* export_onnx(path): the graph's outputs as an ONNX model (opset 17) */
static PyObject *traced_export(PyObject *o, PyObject *arg)
{
    TracedObject *t = (TracedObject *)o;
    PyObject *p = PyOS_FSPath(arg);
    const char *path = p ? PyUnicode_AsUTF8(p) : NULL;
    tg_status st = path ? tg_onnx_export(t->g, t->n_out, t->out, path) : TG_ERR_ARG;
    Py_XDECREF(p);
    if (!path)
        return NULL;
    if (st != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

/* pull_variables(): values of captured parameters and buffers that live
 * on other processes' devices copied back here (tg_session_pull_variables) */
static PyObject *traced_pull(PyObject *o, PyObject *u)
{
    (void)u;
    tg_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tg_session_pull_variables(((TracedObject *)o)->s);
    Py_END_ALLOW_THREADS
    if (st != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

/* trace_begin() / trace_end(path): record one span per op node the
 * function's runs execute, then write them as a Chrome trace (path None
 * discards them): tg_session_trace_begin / _end */
static PyObject *traced_trace_begin(PyObject *o, PyObject *u)
{
    (void)u;
    if (tg_session_trace_begin(((TracedObject *)o)->s) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyObject *traced_trace_end(PyObject *o, PyObject *arg)
{
    PyObject *p = arg == Py_None ? NULL : PyOS_FSPath(arg);
    const char *path = p ? PyUnicode_AsUTF8(p) : NULL;
    if (arg != Py_None && !path) {
        Py_XDECREF(p);
        return NULL;
    }
    tg_status st = tg_session_trace_end(((TracedObject *)o)->s, path);
    Py_XDECREF(p);
    if (st != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}

static PyMethodDef traced_methods[] = {
    {"pull_variables", traced_pull, METH_NOARGS,
     "copies variables that live on other processes' devices back here"},
    {"step_holds", traced_step_holds, METH_NOARGS,
     "whether the parameters still have the .grad tensors the step writes"},
    {"session_stats", traced_stats, METH_NOARGS,
     "runs, plan cache counters and op nodes executed"},
    {"set_opt_level", traced_set_opt_level, METH_O,
     "set_opt_level(level): 0 as built, 1 cleanups, 2 fusion (drops compiled plans)"},
    {"export_onnx", traced_export, METH_O, "writes the outputs' graph as ONNX (opset 17)"},
    {"trace_begin", traced_trace_begin, METH_NOARGS, "records one span per op node run from now"},
    {"trace_end", traced_trace_end, METH_O,
     "trace_end(path): writes the spans as a Chrome trace (None: discards them)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject Traced_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph.ConcreteFunction",
    .tp_basicsize = sizeof(TracedObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = traced_dealloc,
    .tp_call = traced_call,
    .tp_getset = traced_getset,
    .tp_methods = traced_methods,
    .tp_doc = "A function traced into a graph for one input signature (tg.function).",
};

/* the outputs of the trace: tensors of g (concrete ones become constants) */
static int collect_outputs(TracedObject *t, PyObject *r)
{
    PyObject *seq = Tensor_Check(r) ? PyTuple_Pack(1, r) : PySequence_Fast(r, "outputs");
    if (!seq) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "a tg.function must return a Tensor or a tuple of "
                     "Tensors, not %.100s", Py_TYPE(r)->tp_name);
        return -1;
    }
    t->single = Tensor_Check(r);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (n < 1 || n > MAX_IO) {
        PyErr_Format(PyExc_ValueError, "a tg.function returns 1 to %d tensors", MAX_IO);
        rc = -1;
    }
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i);
        if (!Tensor_Check(e)) {
            PyErr_Format(PyExc_TypeError, "output %zd of a tg.function is a %.100s, not a Tensor",
                         i, Py_TYPE(e)->tp_name);
            rc = -1;
            break;
        }
        tg_tensor *v = TENSOR(e);
        if (!tg_is_symbolic(v) || tg_tensor_graph(v) != t->g) {
            char name[32];
            snprintf(name, sizeof name, "output_%zd", i);
            v = tg_constant(t->g, name, v);
            if (!v) {
                tgpy_raise();
                rc = -1;
                break;
            }
        } else if (is_input(t, v)) {
            /* an input returned as it is: a session cannot fetch what it
             * is fed, so the output is a copy made by the graph */
            tg_graph_begin(t->g);
            v = tg_clone(v);
            tg_graph_end();
            if (!v) {
                tgpy_raise();
                rc = -1;
                break;
            }
        } else {
            tg_retain(v);
        }
        t->out[t->n_out++] = v;
    }
    Py_DECREF(seq);
    return rc;
}

/* _trace(fn, examples) -> ConcreteFunction: fn(*placeholders) once */
static PyObject *trace(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n != 2 || !PyTuple_Check(args[1]))
        return PyErr_Format(PyExc_TypeError, "_trace(fn, examples)");
    PyObject *ex = args[1];
    Py_ssize_t n_in = PyTuple_GET_SIZE(ex);
    if (n_in > MAX_IO)
        return PyErr_Format(PyExc_ValueError, "a tg.function takes at most %d tensors", MAX_IO);
    TracedObject *t = PyObject_New(TracedObject, &Traced_Type);
    if (!t)
        return NULL;
    memset((char *)t + sizeof(PyObject), 0, sizeof *t - sizeof(PyObject));
    t->g = tg_graph_new("function");
    PyObject *phs = PyTuple_New(n_in), *r = NULL;
    for (Py_ssize_t i = 0; t->g && phs && i < n_in; i++) {
        PyObject *e = PyTuple_GET_ITEM(ex, i);
        if (!Tensor_Check(e)) {
            PyErr_SetString(PyExc_TypeError, "_trace: examples must be tensors");
            goto fail;
        }
        char name[32];
        snprintf(name, sizeof name, "input_%zd", i);
        tg_tensor *p = tg_placeholder(t->g, name, tg_dtype_of(TENSOR(e)), tg_ndim(TENSOR(e)),
                                      tg_shape(TENSOR(e)));
        if (!p) {
            tgpy_raise();
            goto fail;
        }
        t->in[t->n_in++] = tg_retain(p);
        PyTuple_SET_ITEM(phs, i, tgpy_wrap(p));
    }
    if (!t->g || !phs)
        goto fail;
    int saved_n = n_noted, saved_base = note_base; /* traces may nest: notes stack up */
    note_base = n_noted;
    if (!package_dir[0])
        find_package_dir();
    if (tgpy_tracing++ == 0) /* nested traces share the outermost's hook */
        tg_graph_set_location_hook(trace_location, NULL);
    bool args_grad = false;
    for (Py_ssize_t i = 0; i < n_in; i++)
        args_grad |= tg_requires_grad(TENSOR(PyTuple_GET_ITEM(ex, i)));
    tgpy_step *outer = tgpy_step_push(t->g, args_grad);
    tg_graph_begin(t->g);
    r = PyObject_Call(args[0], phs, NULL);
    t->step = tgpy_step_pop(outer);
    if (r && t->step && tgpy_step_finish(t->step) < 0)
        Py_CLEAR(r);
    tg_graph_end();
    tg_tensor *const *targets;
    if (t->step && tgpy_step_targets(t->step, &targets) == 0) {
        tgpy_step_free(t->step); /* no step: a plain function */
        t->step = NULL;
    }
    if (--tgpy_tracing == 0)
        tg_graph_set_location_hook(NULL, NULL);
    note_base = saved_base;
    t->n_cap = n_noted - saved_n;
    t->cap = PyMem_Malloc(sizeof(tg_tensor *) * (size_t)(t->n_cap ? t->n_cap : 1));
    for (int i = 0; i < t->n_cap; i++)
        t->cap[i] = noted[saved_n + i]; /* the notes' references move here */
    n_noted = saved_n;
    if (!r || collect_outputs(t, r) < 0)
        goto fail;
    t->n_fwd = tg_graph_num_nodes(t->g);
    if (!(t->s = tg_session_new(t->g))) {
        tgpy_raise();
        goto fail;
    }
    Py_DECREF(r);
    Py_DECREF(phs);
    return (PyObject *)t;
fail:
    Py_XDECREF(r);
    Py_XDECREF(phs);
    Py_DECREF(t);
    return NULL;
}

/* _is_symbolic(t): a value of a graph being traced (no data) */
static PyObject *is_symbolic(PyObject *m, PyObject *t)
{
    (void)m;
    return PyBool_FromLong(Tensor_Check(t) && tg_is_symbolic(TENSOR(t)));
}

static PyMethodDef graph_functions[] = {
    {"_trace", (PyCFunction)(void (*)(void))trace, METH_FASTCALL, NULL},
    {"_is_symbolic", is_symbolic, METH_O, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_graph(PyObject *m)
{
    if (tgpy_init_graph_view(m) < 0 || tgpy_init_graph_step(m) < 0 ||
        tgpy_init_call_signature(m) < 0 ||
        PyType_Ready(&Traced_Type) < 0 ||
        PyModule_AddObjectRef(m, "ConcreteFunction", (PyObject *)&Traced_Type) < 0)
        return -1;
    return PyModule_AddFunctions(m, graph_functions);
}
