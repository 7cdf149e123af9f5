/* A whole training step inside a tg.function trace: `opt.zero_grad()`,
 * `loss.backward()` and `opt.step()` called while a function is traced
 * become nodes of its graph, so that one call of the compiled function
 * is one session run that computes the loss, the gradients and the
 * update (as tf.function compiles a train step).
 *
 * The parameters' .grad keep eager mode's meaning. Each parameter the
 * trace touches has a slot: its gradient as the trace has it so far
 * (untouched: the tensor it had when the trace began; zeroed; dropped; or
 * a symbolic value, after backward). Reading p.grad in the trace gives
 * that; backward adds the graph's gradient to it, as eager backward
 * accumulates; the optimizer's update reads it (tg_graph_optim_apply).
 * When the trace ends, each gradient the trace changed is written into
 * the parameter's .grad tensor by an assign node (the trace makes zeros
 * for a parameter that had none), and the assigns and updates run at
 * every call. A call then checks that each slot's parameter still has
 * the .grad tensor the graph writes (else the function traces again). */
#include "tgpy.h"

#include <string.h>

typedef enum { SLOT_KEPT, SLOT_ZERO, SLOT_NONE, SLOT_VALUE } slot_state;

typedef struct {
    tg_tensor *param; /* concrete (a reference) */
    tg_tensor *grad;  /* its .grad tensor when the trace began, or one made for it */
    tg_tensor *var;   /* the variable of grad in the graph (made when first read) */
    tg_tensor *value; /* SLOT_VALUE: the gradient now (symbolic) */
    slot_state state;
    bool hyper;    /* not a parameter: a hyper-parameter's tensor (lr), var its variable */
    bool was_none; /* the parameter had no .grad when the trace began: grad was made */
    bool reads_old; /* and the graph adds to grad's old value (zeros at the first call) */
} grad_slot;

struct tgpy_step {
    tg_graph *g;
    grad_slot *slots;
    int n, cap;
    tg_tensor **targets; /* assigns and updates every call runs */
    int n_targets, cap_targets;
    bool args_require_grad;
};

static tgpy_step *current;

tgpy_step *tgpy_step_push(tg_graph *g, bool args_require_grad)
{
    tgpy_step *prev = current;
    current = PyMem_Calloc(1, sizeof *current);
    if (current) {
        current->g = g;
        current->args_require_grad = args_require_grad;
    }
    return prev;
}

tgpy_step *tgpy_step_pop(tgpy_step *prev)
{
    tgpy_step *mine = current;
    current = prev;
    return mine;
}

void tgpy_step_free(tgpy_step *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        grad_slot *e = &s->slots[i];
        tg_release(e->param);
        tg_release(e->grad);
        tg_release(e->var);
        tg_release(e->value);
    }
    for (int i = 0; i < s->n_targets; i++)
        tg_release(s->targets[i]);
    PyMem_Free(s->slots);
    PyMem_Free(s->targets);
    PyMem_Free(s);
}

static int add_target(tgpy_step *s, tg_tensor *t)
{
    if (s->n_targets == s->cap_targets) {
        int cap = s->cap_targets ? 2 * s->cap_targets : 16;
        tg_tensor **p = PyMem_Realloc(s->targets, sizeof *p * (size_t)cap);
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        s->targets = p;
        s->cap_targets = cap;
    }
    s->targets[s->n_targets++] = tg_retain(t);
    return 0;
}

/* p's slot in the trace, made (untouched) if new; NULL on no memory */
static grad_slot *slot_of(tgpy_step *s, tg_tensor *p)
{
    for (int i = 0; i < s->n; i++)
        if (s->slots[i].param == p)
            return &s->slots[i];
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        grad_slot *q = PyMem_Realloc(s->slots, sizeof *q * (size_t)cap);
        if (!q) {
            PyErr_NoMemory();
            return NULL;
        }
        s->slots = q;
        s->cap = cap;
    }
    grad_slot *e = &s->slots[s->n++];
    *e = (grad_slot){.param = tg_retain(p), .grad = tg_retain(tg_grad(p)), .state = SLOT_KEPT};
    return e;
}

/* the variable of the slot's .grad tensor (made now if it has none) */
static tg_tensor *grad_var(tgpy_step *s, grad_slot *e)
{
    if (e->var)
        return e->var;
    if (!e->grad) {
        e->grad = tg_zeros(tg_dtype_of(e->param), tg_ndim(e->param), tg_shape(e->param));
        if (!e->grad)
            return NULL;
        e->was_none = true;
    }
    e->var = tg_variable_ref(s->g, NULL, e->grad); /* the scope is hidden: ours */
    return e->var;
}

/* a graph value of zeros shaped like the slot's parameter */
static tg_tensor *zeros_value(tgpy_step *s, grad_slot *e)
{
    tg_tensor *z = tg_zeros(tg_dtype_of(e->param), tg_ndim(e->param), tg_shape(e->param));
    tg_tensor *c = z ? tg_constant(s->g, NULL, z) : NULL;
    tg_release(z);
    return c;
}

/* the gradient the slot holds now as a graph value: *out a new reference,
 * or NULL for none (no .grad, or dropped); -1 with a Python error */
static int slot_value(tgpy_step *s, grad_slot *e, tg_tensor **out)
{
    *out = NULL;
    switch (e->state) {
    case SLOT_VALUE:
        *out = tg_retain(e->value);
        return 0;
    case SLOT_NONE:
        return 0;
    case SLOT_ZERO:
        if (e->grad && !(*out = zeros_value(s, e)))
            break;
        return 0;
    case SLOT_KEPT:
        if (e->grad && !(*out = tg_retain(grad_var(s, e))))
            break;
        return 0;
    }
    tgpy_raise();
    return -1;
}

static void set_value(grad_slot *e, tg_tensor *v)
{
    tg_release(e->value);
    e->value = v;
    e->state = SLOT_VALUE;
}

/* p.grad while tracing: the slot's gradient (symbolic) for a parameter
 * the trace changed; 0 when the trace has nothing to say (the plain .grad
 * then), 1 with *out set (a new reference or None), -1 on error */
int tgpy_step_grad(tg_tensor *p, PyObject **out)
{
    if (!current)
        return 0;
    for (int i = 0; i < current->n; i++) {
        grad_slot *e = &current->slots[i];
        if (e->param != p || e->hyper || e->state == SLOT_KEPT)
            continue;
        tg_tensor *v;
        int token = tg_scope_hide();
        int rc = slot_value(current, e, &v);
        tg_scope_unhide(token);
        if (rc < 0)
            return -1;
        *out = v ? tgpy_wrap(v) : Py_NewRef(Py_None);
        return *out ? 1 : -1;
    }
    return 0;
}

bool tgpy_step_tracing(void) { return current != NULL; }

int tgpy_step_zero_grad(tg_tensor *param, bool set_to_none)
{
    grad_slot *e = slot_of(current, param);
    if (!e)
        return -1;
    tg_release(e->value);
    e->value = NULL;
    e->state = set_to_none ? SLOT_NONE : SLOT_ZERO;
    return 0;
}

/* the gradient of loss (fed gy, or ones for a scalar) with respect to
 * the tensors the trace captured, added into their slots */
static int accumulate(tgpy_step *s, tg_tensor *loss, tg_tensor *gy)
{
    tg_tensor *const *caps;
    int n = tgpy_trace_notes(&caps);
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "element 0 of tensors does not require grad and "
                        "does not have a grad_fn");
        return -1;
    }
    tg_tensor **dx = PyMem_Calloc((size_t)n, sizeof *dx);
    if (!dx) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = tg_graph_gradients(s->g, 1, &loss, gy ? &gy : NULL, n, caps, dx) == TG_OK ? 0 : -1;
    if (rc < 0)
        tgpy_raise();
    for (int i = 0; rc == 0 && i < n; i++) {
        if (!dx[i])
            continue; /* the loss does not depend on it */
        if (!tg_is_leaf(caps[i])) {
            PyErr_SetString(PyExc_NotImplementedError,
                            "backward() inside tg.function reaches a tensor computed outside "
                            "the function with autograd history; its gradient would flow on "
                            "into that history, which the compiled step cannot do. Compute it "
                            "inside the function, or pass it detached");
            rc = -1;
            break;
        }
        grad_slot *e = slot_of(s, caps[i]);
        tg_tensor *old;
        /* a parameter without .grad gets one (zeros) that later calls
         * accumulate into: eager backward makes it at the first call */
        bool made = e && e->state == SLOT_KEPT && !e->grad;
        if (made)
            e->reads_old = true;
        if (!e || (made && !grad_var(s, e) && tgpy_raise() == NULL) ||
            slot_value(s, e, &old) < 0) {
            rc = -1;
            break;
        }
        tg_tensor *v = old ? tg_add(old, dx[i]) : tg_retain(dx[i]);
        tg_release(old);
        if (!v) {
            tgpy_raise();
            rc = -1;
            break;
        }
        set_value(e, v);
    }
    for (int i = 0; i < n; i++)
        tg_release(dx[i]);
    PyMem_Free(dx);
    return rc;
}

/* _trace_backward(loss, gradient, create_graph): loss.backward() on a
 * value of the function being traced */
static PyObject *trace_backward(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *lo, *go;
    int create;
    if (!PyArg_ParseTuple(args, "O!Op", &Tensor_Type, &lo, &go, &create))
        return NULL;
    tg_tensor *loss = TENSOR(lo);
    if (!current || tg_tensor_graph(loss) != current->g)
        return PyErr_Format(PyExc_RuntimeError, "backward() of a symbolic tensor: it is not a "
                            "value of the tg.function being traced (a value of another "
                            "function's graph, or no trace is running)");
    if (create)
        return PyErr_Format(PyExc_NotImplementedError, "backward(create_graph=True) inside "
                            "tg.function is not supported: call it outside the function, or "
                            "use tensorgraph.autograd.grad inside it");
    if (current->args_require_grad)
        return PyErr_Format(PyExc_NotImplementedError, "backward() inside tg.function: an "
                            "argument of the function requires grad, and a compiled step "
                            "cannot write the .grad of the tensors it is called with; pass "
                            "them detached, or call backward() outside the function");
    if (!tg_dtype_is_float(tg_dtype_of(loss)))
        return PyErr_Format(PyExc_RuntimeError, "element 0 of tensors does not require grad "
                            "and does not have a grad_fn");
    if (go == Py_None && tg_numel(loss) != 1)
        return PyErr_Format(PyExc_RuntimeError, "grad can be implicitly created only for "
                            "scalar outputs");
    int token = tg_scope_hide();
    tg_tensor *gy = NULL;
    int rc = 0;
    if (go != Py_None) {
        if (!Tensor_Check(go)) {
            PyErr_Format(PyExc_TypeError, "backward(): gradient must be a Tensor or None, not "
                         "%.100s", Py_TYPE(go)->tp_name);
            rc = -1;
        } else if (tg_is_symbolic(TENSOR(go))) {
            gy = tg_retain(TENSOR(go));
        } else if (!(gy = tg_constant(current->g, NULL, TENSOR(go)))) {
            tgpy_raise();
            rc = -1;
        }
    }
    if (rc == 0)
        rc = accumulate(current, loss, gy);
    tg_release(gy);
    tg_scope_unhide(token);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* the symbolic variable of a hyper-parameter tensor (lr), made once */
static tg_tensor *lr_variable(tgpy_step *s, tg_tensor *lr)
{
    grad_slot *e = slot_of(s, lr);
    if (!e || e->var)
        return e ? e->var : NULL;
    e->hyper = true;
    tg_release(e->grad);
    e->grad = NULL;
    if (!(e->var = tg_variable_ref(s->g, NULL, lr)))
        tgpy_raise();
    return e->var;
}

/* an optimizer's step inside the trace: its update from the gradients
 * the slots hold (tg_graph_optim_apply), run at every call */
int tgpy_step_optim(tg_optimizer *o, tg_tensor *lr)
{
    if (!current) {
        PyErr_SetString(PyExc_RuntimeError, "_graph_step: no trace is running");
        return -1;
    }
    int token = tg_scope_hide(), n = tg_optim_num_params(o);
    tg_tensor **grads = PyMem_Calloc((size_t)n * 2 + 1, sizeof *grads), **updates = grads + n;
    int rc = grads ? 0 : -1;
    if (!grads)
        PyErr_NoMemory();
    for (int i = 0; rc == 0 && i < n; i++) {
        tg_tensor *p = tg_optim_param(o, i);
        grad_slot *e = slot_of(current, p);
        if (!e || slot_value(current, e, &grads[i]) < 0) {
            rc = -1;
            break;
        }
        /* a parameter the trace had not met becomes a variable of it (a
         * constant of it stays one, which the update refuses) */
        if (grads[i])
            tgpy_trace_capture(p);
    }
    tg_tensor *lr_var = rc == 0 ? lr_variable(current, lr) : NULL;
    if (rc == 0 && !lr_var)
        rc = -1;
    if (rc == 0 && tg_graph_optim_apply(o, grads, lr_var, updates) != TG_OK) {
        tgpy_raise();
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i++)
        if (updates[i] && add_target(current, updates[i]) < 0)
            rc = -1;
    for (int i = 0; grads && i < n; i++) {
        tg_release(grads[i]);
        tg_release(updates[i]);
    }
    PyMem_Free(grads);
    tg_scope_unhide(token);
    return rc;
}

/* at the end of the trace: the gradients the trace changed are written
 * into the parameters' .grad tensors (made now for those without) */
int tgpy_step_finish(tgpy_step *s)
{
    int token = tg_scope_hide(), rc = 0;
    for (int i = 0; rc == 0 && i < s->n; i++) {
        grad_slot *e = &s->slots[i];
        tg_tensor *w = NULL;
        if (e->hyper)
            continue;
        if (e->state == SLOT_NONE && e->grad) {
            PyErr_SetString(PyExc_NotImplementedError,
                            "zero_grad(set_to_none=True) inside tg.function leaves a parameter "
                            "without a gradient at the end of the step; a compiled step cannot "
                            "drop .grad tensors. Call backward() after it, or use "
                            "zero_grad(set_to_none=False)");
            rc = -1;
        } else if (e->state == SLOT_ZERO && e->grad) {
            tg_tensor *v = grad_var(s, e), *z = tg_scalar(tg_dtype_of(e->param), 0);
            w = v && z ? tg_assign(v, z) : NULL;
            tg_release(z);
        } else if (e->state == SLOT_VALUE) {
            tg_tensor *v = grad_var(s, e);
            w = v ? tg_assign(v, e->value) : NULL;
            if (w && tg_grad(e->param) != e->grad && tg_set_grad(e->param, e->grad) != TG_OK)
                w = NULL;
        } else {
            continue;
        }
        if (rc == 0 && !w) {
            tgpy_raise();
            rc = -1;
        } else if (rc == 0) {
            rc = add_target(s, w);
        }
        tg_release(w);
    }
    tg_scope_unhide(token);
    return rc;
}

int tgpy_step_targets(const tgpy_step *s, tg_tensor *const **out)
{
    *out = s->targets;
    return s->n_targets;
}

/* whether every parameter the step touches still has the .grad tensor
 * the graph reads and writes. A parameter that had none when the trace
 * began and has none again (zero_grad(set_to_none=True) between calls)
 * is given back the one the trace made, zeroed if the graph adds to it:
 * what the trace did then, so the compiled step still holds. */
bool tgpy_step_holds(const tgpy_step *s)
{
    for (int i = 0; i < s->n; i++) {
        const grad_slot *e = &s->slots[i];
        tg_tensor *now = e->hyper ? NULL : tg_grad(e->param);
        if (now == e->grad)
            continue;
        if (now || !e->was_none || tg_set_grad(e->param, e->grad) != TG_OK ||
            (e->reads_old && tg_fill_(e->grad, 0) != TG_OK)) {
            tg_clear_error();
            return false;
        }
    }
    return true;
}

static PyObject *tracing(PyObject *m, PyObject *u)
{
    (void)m;
    (void)u;
    return PyBool_FromLong(tgpy_step_tracing());
}

static PyMethodDef step_functions[] = {
    {"_trace_backward", trace_backward, METH_VARARGS, NULL},
    {"_tracing_step", tracing, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

int tgpy_init_graph_step(PyObject *m) { return PyModule_AddFunctions(m, step_functions); }
