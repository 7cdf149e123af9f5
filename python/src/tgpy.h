/* tensorgraph._C: the CPython extension under the `tensorgraph` package.
 * Written against the Python C API and tensorgraph's public C API only
 * (include/tg): a Tensor type owning one tg_tensor reference, dtype and
 * Generator objects, the op table with its one generic calling path
 * (ops.c), autograd, static graphs (tg.function) and the training
 * objects (optimizers, data, checkpoints). */
#ifndef TGPY_H
#define TGPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <tg/tg.h>

/* ---- tensors ---------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    tg_tensor *t;       /* one owned reference, never NULL after creation */
    PyObject *dict;     /* user attributes (PyTorch allows them), lazily */
    PyObject *weaklist;
} TensorObject;

extern PyTypeObject Tensor_Type;
#define Tensor_Check(o) PyObject_TypeCheck(o, &Tensor_Type)
#define TENSOR(o) (((TensorObject *)(o))->t)

/* wraps t, taking its reference; NULL t raises the C error instead.
 * Python code never runs with a scope visible: every C result it gets
 * is its own reference (callbacks from inside C scopes hide them with
 * tg_scope_hide first). */
PyObject *tgpy_wrap(tg_tensor *t);
/* PyTorch's name for t's grad_fn (a literal: the node keeps the pointer)
 * when t has one; -1 with an exception */
int tgpy_set_grad_fn_name(tg_tensor *t, const char *name);
/* the same for t just written in place, unless t is a view (PyTorch's
 * node of a view written in place is another: not named) */
int tgpy_name_inplace(tg_tensor *t, const char *name);
/* PyTorch's name for matmul's grad_fn by the operands' ranks (dot, mv, mm,
 * or a batched product's view) */
const char *tgpy_matmul_grad_name(int a, int b);
/* PyTorch's refusal of a subtraction with a bool operand: -1 with it */
int tgpy_check_bool_sub(const tg_tensor *a, const tg_tensor *b);
/* PyTorch's deprecated overload add/sub(input, Number alpha, Tensor other):
 * when alpha_pos and other_pos hold a number and a tensor, swaps them into
 * (other, alpha) order and warns as PyTorch does; 1 swapped, 0 not, -1 error */
int tgpy_deprecated_alpha_first(const char *name, PyObject **alpha_pos, PyObject **other_pos);
/* the same into a given Tensor subclass (nn.Parameter) */
PyObject *tgpy_wrap_as(PyTypeObject *type, tg_tensor *t);
/* the buffer protocol (buffer.c): Tensor's exporter, and from_numpy(obj) */
extern PyBufferProcs tgpy_tensor_buffer;
PyObject *tgpy_from_buffer(PyObject *m, PyObject *obj);

/* ---- errors ---------------------------------------------------------------------
 * Raises the Python exception PyTorch would raise for the last C error,
 * with the C message; returns NULL (or -1 through tgpy_fail_status). */
PyObject *tgpy_raise(void);
PyObject *tgpy_out_hook(void); /* tensorgraph._out_arg.write_out, or NULL */
/* the same, with exc in place of the usual exception when the status is
 * `from` (an op whose PyTorch counterpart checks with TORCH_CHECK where
 * the C status is more specific) */
PyObject *tgpy_raise_remapped(tg_status from, PyObject *exc);
/* -1 with a ValueError naming `what` when t is symbolic (no value to read) */
int tgpy_concrete(tg_tensor *t, const char *what);
/* -1 with PyTorch's RuntimeError when an in-place result of dtype `result`
 * cannot be written into a tensor of dtype dst (an int tensor += a float) */
int tgpy_check_cast(tg_dtype result, tg_dtype dst);
/* -1 with PyTorch's RuntimeError for an integer tensor to the power of one
 * negative integer (PyTorch checks scalar exponents only) */
int tgpy_check_int_pow(tg_tensor *base, tg_tensor *exponent);
int tgpy_fail_status(tg_status s);

/* ---- dtypes and generators ------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    tg_dtype code;
} DtypeObject;
extern PyTypeObject Dtype_Type;
PyObject *tgpy_dtype(tg_dtype dt);             /* borrowed singleton */
int tgpy_parse_dtype(PyObject *o, tg_dtype *out); /* 0 ok, -1 TypeError */

typedef struct {
    PyObject_HEAD
    tg_generator *g;
    uint64_t seed;
} GeneratorObject;
extern PyTypeObject Generator_Type;
tg_generator *tgpy_generator(PyObject *o); /* None: the default one */

/* ---- converting arguments ----------------------------------------------------------
 * A Python number becomes a 0-d tensor typed as PyTorch types a scalar
 * next to a tensor of dtype `ref` (has_ref false: no tensor around):
 * bool -> bool; int -> ref unless ref is bool (then int64); float ->
 * ref when ref is floating point, else the default float. Lists and arrays go
 * through tensorgraph.tensor. Returns a new reference or NULL. */
tg_tensor *tgpy_as_tensor(PyObject *o, tg_dtype ref, bool has_ref);
/* the dtype a Python number next to a tensor of dtype ref takes: ref's,
 * but the default float for a true division of an integer or bool tensor
 * (the quotient is computed in float: uint8 / -3 is -84, not 252 / 253) */
static inline tg_dtype tgpy_number_ref(bool true_division, tg_dtype ref)
{
    return true_division && !tg_dtype_is_float(ref) ? tg_default_float() : ref;
}
int tgpy_is_scalar(PyObject *o);
/* fills shape from an int or a sequence of ints; -1 with an error */
int tgpy_shape(PyObject *o, int64_t *shape, const char *what);
/* the same for up to max ints (a shape's limit is TG_MAX_DIMS; unit
 * names what they count in the error, " dims" for a shape) */
int tgpy_ints(PyObject *o, int64_t *out, int max, const char *unit, const char *what);

/* big kernels run without the GIL (a DataLoader thread overlaps them) */
#define TGPY_GIL_FREE_NUMEL 32768

/* ---- the parts, each registering into the module ----------------------------------- */
int tgpy_init_tensor(PyObject *m);
int tgpy_init_creation(PyObject *m); /* creation.c */
int tgpy_init_ops(PyObject *m);
int tgpy_init_index(void);
int tgpy_init_autograd(PyObject *m); /* backward, grad, grad mode (autograd.c) */
int tgpy_init_autograd_history(PyObject *m); /* grad_fn names, views */
int tgpy_init_autograd_function(PyObject *m); /* autograd.Function */
int tgpy_init_autograd_graph(PyObject *m); /* grad_fn nodes, node hooks */
int tgpy_init_graph(PyObject *m);
/* tensorgraph.Graph over g, keeping owner (the traced function) alive
 * (graph_view.c) */
PyObject *tgpy_graph_view(tg_graph *g, PyObject *owner);
int tgpy_init_graph_view(PyObject *m);
/* _call_signature: a tg.function call's cache key (call_signature.c) */
int tgpy_init_call_signature(PyObject *m);
int tgpy_init_device(PyObject *m); /* tg.device: names and scopes (device.c) */
int tgpy_init_train(PyObject *m);
int tgpy_init_data(PyObject *m);
int tgpy_init_dlpack(PyObject *m); /* after tgpy_init_tensor */
int tgpy_init_sort(PyObject *m);
int tgpy_init_dist(PyObject *m); /* tensorgraph.distributed (dist.c) */
int tgpy_init_control(PyObject *m); /* _cond, _while_loop, _scan */
int tgpy_init_profiler(PyObject *m); /* the eager op profiler (profiler.c) */

/* self = fn(self, s) in place, recorded by autograd as PyTorch does
 * (number.c); returns a new reference to self or NULL */
typedef tg_tensor *(*binary_fn)(tg_tensor *, tg_tensor *);
PyObject *tgpy_update(PyObject *self, tg_tensor *s, binary_fn fn);
tg_tensor *tgpy_binary(binary_fn fn, tg_tensor *a, tg_tensor *b);

/* number protocol and comparisons of Tensor (number.c) */
extern PyNumberMethods tgpy_number_methods;
PyObject *tgpy_richcompare(PyObject *a, PyObject *b, int op);
/* indexing (index.c) */
extern PyMappingMethods tgpy_mapping_methods;

/* graph tracing: while a tg.function traces, concrete tensors that
 * require grad and are used by ops are recorded (graph.c) */
extern int tgpy_tracing;
void tgpy_trace_note(tg_tensor *const *ts, int n);
static inline void tgpy_note_inputs(tg_tensor *const *ts, int n)
{
    if (tgpy_tracing)
        tgpy_trace_note(ts, n);
}

/* the tensors the innermost trace captured that require grad (graph.c) */
int tgpy_trace_notes(tg_tensor *const **out);
/* t becomes a variable of the graph being traced, by reference, unless
 * the graph uses it already (graph.c) */
void tgpy_trace_capture(tg_tensor *t);

/* training steps inside a trace: zero_grad, backward and an optimizer's
 * step as graph nodes (graph_step.c) */
typedef struct tgpy_step tgpy_step;
tgpy_step *tgpy_step_push(tg_graph *g, bool args_require_grad); /* returns the outer one */
tgpy_step *tgpy_step_pop(tgpy_step *prev);                      /* returns the trace's */
int tgpy_step_finish(tgpy_step *s);
void tgpy_step_free(tgpy_step *s);
int tgpy_step_targets(const tgpy_step *s, tg_tensor *const **out);
bool tgpy_step_holds(const tgpy_step *s);
int tgpy_step_grad(tg_tensor *p, PyObject **out);
bool tgpy_step_tracing(void); /* a trace that compiles a step is running */
/* zero_grad of param inside that trace: its slot zeroed or dropped; -1
 * with an exception */
int tgpy_step_zero_grad(tg_tensor *param, bool set_to_none);
int tgpy_step_optim(tg_optimizer *o, tg_tensor *lr);
int tgpy_init_graph_step(PyObject *m);

/* calls a function of the pure-Python package (tensorgraph.<name>) */
PyObject *tgpy_package_attr(const char *name);

#endif
