/* tensorgraph._C: module init, errors, dtype and Generator objects, and
 * converting Python arguments (numbers, shapes) to the C API's. */
#include "tgpy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------
 * PyTorch's C++ core checks arguments with TORCH_CHECK, which raises
 * RuntimeError: a bad argument value, a shape, a dtype, autograd misuse.
 * Only index and dim range checks (TORCH_CHECK_INDEX) raise IndexError.
 * ValueError and TypeError come from PyTorch's Python layer and argument
 * parsing, as they do here (raised by the Python-side checks before any C
 * call, e.g. optimizer and module constructors). So TG_ERR_ARG is a
 * RuntimeError, not a ValueError. */
static PyObject *exception_for(tg_status s)
{
    switch (s) {
    case TG_ERR_INDEX: return PyExc_IndexError;
    case TG_ERR_NOMEM: return PyExc_MemoryError;
    case TG_ERR_IO: return PyExc_OSError;
    case TG_ERR_UNSUPPORTED: return PyExc_NotImplementedError;
    default: return PyExc_RuntimeError; /* arg, shape, dtype, autograd, internal */
    }
}

/* a shape as the C library prints it, "[2, 3]" at *p (advanced past it);
 * the number of dims, -1 when it is not one */
static int parse_shape(const char **p, int64_t *shape)
{
    const char *s = *p;
    int n = 0;
    if (*s++ != '[')
        return -1;
    while (*s != ']') {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || n == TG_MAX_DIMS)
            return -1;
        shape[n++] = v;
        s = end;
        if (*s == ',' && s[1] == ' ')
            s += 2;
        else if (*s != ']')
            return -1;
    }
    *p = s + 1;
    return n;
}

/* PyTorch's words for the C library's most common shape errors, which
 * code and tests match on: a dim out of range, shapes that do not
 * broadcast, matrices that do not multiply, a reshape to another number
 * of elements. NULL: msg is kept as it is. */
static const char *torch_words(const char *msg, char *buf, size_t len)
{
    const char *p = strchr(msg, ':');
    int64_t a[TG_MAX_DIMS], b[TG_MAX_DIMS];
    int axis, nd, lo, hi, na, nb;
    long long numel;
    if (!p || p[1] != ' ')
        return NULL;
    size_t op_len = (size_t)(p - msg);
    p += 2;
    char got[16];
    int end = 0; /* %n: the whole pattern matched */
    if ((sscanf(p, "expected a float32 or float64 input, got %15[a-z0-9];%n", got, &end) == 1 &&
         end) ||
        (sscanf(p, "%15[a-z0-9] input is not supported; cast it first%n", got, &end) == 1 &&
         end)) {
        /* integer inputs of the reductions that need floats */
        static const char *const names[][2] = {{"int64", "Long"}, {"int32", "Int"},
                                               {"uint8", "Byte"}, {"bool", "Bool"},
                                               {"int8", "Char"}, {"int16", "Short"}};
        const char *torch_name = NULL;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (!strcmp(got, names[i][0]))
                torch_name = names[i][1];
        if (!torch_name)
            return NULL;
        if (op_len == 4 && !strncmp(msg, "mean", 4)) {
            snprintf(buf, len, "mean(): could not infer output dtype. Input dtype must be "
                     "either a floating point or complex dtype. Got: %s", torch_name);
            return buf;
        }
        if (op_len == 3 && (!strncmp(msg, "std", 3) || !strncmp(msg, "var", 3)))
            return "std and var only support floating point and complex dtypes";
        if (op_len == 3 && !strncmp(msg, "neg", 3) && !strcmp(got, "bool"))
            return "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                   "trying to invert a mask, use the `~` or `logical_not()` operator instead.";
        return NULL;
    }
    int dup, dup_end = 0;
    if (sscanf(p, "axis %d appears twice in the axes%n", &dup, &dup_end) == 1 && dup_end) {
        snprintf(buf, len, "dim %d appears multiple times in the list of dims", dup);
        return buf; /* a RuntimeError in PyTorch (torch_words_class) */
    }
    if (op_len == 7 && !strncmp(msg, "flatten", 7) && !strncmp(p, "start axis ", 11))
        return "flatten() has invalid args: start_dim cannot come after end_dim";
    int dims_had;
    if (sscanf(p, "input tensor must have at least 2 dimensions, got %d", &dims_had) == 1 &&
        op_len == 4 && (!strncmp(msg, "tril", 4) || !strncmp(msg, "triu", 4)))
        return dims_had == 0 ? "Dimension specified as -2 but tensor has no dimensions"
                             : "Dimension out of range (expected to be in range of [-1, 0], but "
                               "got -2)";
    if (!strncmp(p, "integer division by zero (ZeroDivisionError in PyTorch)", 55))
        return "ZeroDivisionError";
    if (sscanf(p, "axis %d is out of range for a tensor of %d dims (expected %d to %d)", &axis,
               &nd, &lo, &hi) == 4) {
        snprintf(buf, len, "Dimension out of range (expected to be in range of [%d, %d], but "
                 "got %d)", lo, hi, axis);
        return buf;
    }
    if (!strncmp(p, "shapes ", 7)) { /* broadcast, matmul */
        const char *q = p + 7;
        if ((na = parse_shape(&q, a)) < 0 || strncmp(q, " and ", 5))
            return NULL;
        q += 5;
        if ((nb = parse_shape(&q, b)) < 0)
            return NULL;
        if (!strncmp(q, " cannot be broadcast", 20)) { /* the last mismatch, as PyTorch */
            int n = na > nb ? na : nb;
            for (int i = n - 1; i >= 0; i--) {
                int64_t da = i < n - na ? 1 : a[i - (n - na)];
                int64_t db = i < n - nb ? 1 : b[i - (n - nb)];
                if (da != db && da != 1 && db != 1) {
                    snprintf(buf, len, "The size of tensor a (%lld) must match the size of "
                             "tensor b (%lld) at non-singleton dimension %d", (long long)da,
                             (long long)db, i);
                    return buf;
                }
            }
        }
        if (!strncmp(q, " cannot be multiplied", 21) && na == 2 && nb == 2) {
            snprintf(buf, len, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                     "%lldx%lld)", (long long)a[0], (long long)a[1], (long long)b[0],
                     (long long)b[1]);
            return buf;
        }
        return NULL;
    }
    static const char leaf[] = "in-place update of a leaf tensor that requires grad;",
                      view_of_leaf[] = "a view of a leaf tensor that requires grad is being "
                                       "used in an in-place operation;";
    if (!strncmp(p, leaf, sizeof leaf - 1))
        return "a leaf Variable that requires grad is being used in an in-place operation.";
    if (!strncmp(p, view_of_leaf, sizeof view_of_leaf - 1))
        return "a view of a leaf Variable that requires grad is being used in an in-place "
               "operation.";
    if (!strncmp(msg, "view: a tensor of shape ", 24) && strstr(p, "with these strides cannot"))
        return "view size is not compatible with input tensor's size and stride (at least one "
               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.";
    const char *w = strstr(p, "saved for its gradient, was modified by an in-place operation "
                              "(it is at version ");
    const char *desc = w ? strstr(w, " The tensor: ") : NULL;
    if (desc && !strncmp(msg, "backward: ", 10)) { /* PyTorch's version counter error */
        unsigned long long now, want;
        char dt[16];
        int at = 0;
        if (sscanf(w, "saved for its gradient, was modified by an in-place operation (it is at "
                      "version %llu, expected %llu)", &now, &want) != 2 ||
            sscanf(desc, " The tensor: %15s %n", dt, &at) != 1 || !at)
            return NULL;
        static const char *const types[][2] = {
            {"float32", "Float"}, {"float64", "Double"}, {"int64", "Long"}, {"int32", "Int"},
            {"uint8", "Byte"}, {"bool", "Bool"}, {"int8", "Char"}, {"int16", "Short"}};
        const char *type = NULL;
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            if (!strcmp(dt, types[i][0]))
                type = types[i][1];
        const char *shape = desc + at, *e = shape;
        if (!type || parse_shape(&e, a) < 0)
            return NULL;
        char made[96] = "";
        const char *of = strstr(e, ", output ");
        if (of) /* ", output 0 of ExpBackward0." */
            snprintf(made, sizeof made, ", which is%.*s,", (int)(strlen(of) - 2), of + 1);
        snprintf(buf, len, "one of the variables needed for gradient computation has been "
                 "modified by an inplace operation: [torch.%sTensor %.*s]%s is at version "
                 "%llu; expected version %llu instead. Hint: enable anomaly detection to find "
                 "the operation that failed to compute its gradient, with "
                 "torch.autograd.set_detect_anomaly(True).", type, (int)(e - shape), shape,
                 made, now, want);
        return buf;
    }
    static const char twice[] = "trying to backward through the graph a second time";
    if (!strncmp(p, twice, sizeof twice - 1))
        return "Trying to backward through the graph a second time (or directly access saved "
               "tensors after they have already been freed). Saved intermediate values of the "
               "graph are freed when you call .backward() or autograd.grad(). Specify "
               "retain_graph=True if you need to backward through the graph a second time or "
               "if you need to access saved tensors after calling backward.";
    static const char not_float[] = "only floating-point tensors can require grad";
    if (!strncmp(p, not_float, sizeof not_float - 1))
        return "only Tensors of floating point dtype can require gradients";
    long long bad;
    int at_dim, input, axis2;
    if (sscanf(p, "invalid dim %lld at %d (only one -1 is allowed)", &bad, &at_dim) == 2) {
        if (bad == -1)
            return "only one dimension can be inferred";
        snprintf(buf, len, "invalid shape dimension %lld", bad);
        return buf;
    }
    if (!strncmp(p, "cannot reshape ", 15) && strstr(p, "only one -1"))
        return "only one dimension can be inferred";
    if (!strcmp(p, "needs at least one input (got 0)"))
        return op_len == 6 && !strncmp(msg, "concat", 6)
                   ? "torch.cat(): expected a non-empty list of Tensors"
               : op_len == 5 && !strncmp(msg, "stack", 5) ? "stack expects a non-empty TensorList"
                                                          : NULL;
    int n_read = 0;
    if (sscanf(p, "input %d has shape %n", &input, &n_read) == 1 && n_read) { /* concat, stack */
        const char *q = p + n_read, *sa = q;
        if ((na = parse_shape(&q, a)) < 0 || strncmp(q, " but input 0 has shape ", 23))
            return NULL;
        const char *sb = q + 23, *e = sb;
        if ((nb = parse_shape(&e, b)) < 0)
            return NULL;
        if (op_len == 5 && !strncmp(msg, "stack", 5)) {
            snprintf(buf, len, "stack expects each tensor to be equal size, but got %.*s at "
                     "entry 0 and %.*s at entry %d", (int)(e - sb), sb, (int)(q - sa), sa, input);
            return buf;
        }
        if (sscanf(e, "; all dims except axis %d must match", &axis2) != 1)
            return NULL;
        if (na != nb) {
            snprintf(buf, len, "Tensors must have same number of dimensions: got %d and %d", nb,
                     na);
            return buf;
        }
        for (int d = 0; d < na; d++)
            if (d != axis2 && a[d] != b[d]) {
                snprintf(buf, len, "Sizes of tensors must match except in dimension %d. Expected "
                         "size %lld but got size %lld for tensor number %d in the list.", axis2,
                         (long long)b[d], (long long)a[d], input);
                return buf;
            }
        return NULL;
    }
    if (!strncmp(p, "cannot expand ", 14)) {
        const char *q = p + 14, *sa = q;
        if ((na = parse_shape(&q, a)) < 0 || strncmp(q, " to ", 4))
            return NULL;
        const char *sb = q + 4, *e = sb;
        long long have;
        if ((nb = parse_shape(&e, b)) < 0)
            return NULL;
        if (sscanf(e, " (dim %d is %lld, must be 1 or equal)", &at_dim, &have) == 2 &&
            nb >= na) {
            for (int i = nb - 1; i >= 0; i--) { /* the last mismatch, as PyTorch checks */
                int j = i - (nb - na);
                have = j >= 0 ? a[j] : 1;
                if (b[i] != -1 && have != b[i] && have != 1) {
                    snprintf(buf, len, "The expanded size of the tensor (%lld) must match the "
                             "existing size (%lld) at non-singleton dimension %d.  Target "
                             "sizes: %.*s.  Tensor sizes: %.*s", (long long)b[i], have, i,
                             (int)(e - sb), sb, (int)(q - sa), sa);
                    return buf;
                }
            }
        }
        if (sscanf(e, " (-1 is not allowed for the new leading dim %d)", &at_dim) == 1) {
            snprintf(buf, len, "The expanded size of the tensor (-1) isn't allowed in a leading, "
                     "non-existing dimension %d", at_dim);
            return buf;
        }
        return NULL;
    }
    if (!strncmp(p, "cannot reshape ", 15)) {
        const char *q = p + 15;
        if (parse_shape(&q, a) < 0 || sscanf(q, " (%lld elements) into ", &numel) != 1)
            return NULL;
        if (!(q = strstr(q, " into ")))
            return NULL;
        const char *shape = q + 6, *e = shape;
        if ((nb = parse_shape(&e, b)) < 0 || (*e && strncmp(e, " (", 2)))
            return NULL;
        if (strstr(e, "ambiguous"))
            return NULL;
        snprintf(buf, len, "shape '%.*s' is invalid for input of size %lld", (int)(e - shape),
                 shape, numel);
        return buf;
    }
    return NULL;
}

PyObject *tgpy_raise_remapped(tg_status from, PyObject *exc)
{
    if (PyErr_Occurred()) /* a Python callback failed inside the C call */
        return NULL;
    tg_status s = tg_last_status();
    const char *msg = tg_last_error();
    if (s == TG_OK || !msg[0])
        PyErr_SetString(PyExc_RuntimeError, "tensorgraph: operation failed");
    else {
        char buf[512];
        const char *words = torch_words(msg, buf, sizeof buf);
        PyObject *cls = s == from && exc ? exc : exception_for(s);
        if (words && (strstr(words, " appears multiple times in the list of dims") ||
                      !strncmp(words, "flatten() has invalid args", 26)))
            cls = PyExc_RuntimeError; /* PyTorch's TORCH_CHECK, not an index error */
        PyErr_SetString(cls, words ? words : msg);
    }
    tg_clear_error();
    return NULL;
}

PyObject *tgpy_raise(void)
{
    return tgpy_raise_remapped(TG_OK, NULL);
}

int tgpy_fail_status(tg_status s)
{
    (void)s;
    tgpy_raise();
    return -1;
}

/* ---- dtypes ------------------------------------------------------------------- */
static DtypeObject dtype_objects[TG_NUM_DTYPES];

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("tensorgraph.%s", tg_dtype_name(((DtypeObject *)self)->code));
}
static PyObject *dtype_is_floating(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(tg_dtype_is_float(((DtypeObject *)self)->code));
}
static PyObject *dtype_itemsize(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(tg_dtype_size(((DtypeObject *)self)->code));
}
static PyObject *dtype_is_signed(PyObject *self, void *c)
{
    (void)c; /* PyTorch: every type but uint8 and bool */
    tg_dtype d = ((DtypeObject *)self)->code;
    return PyBool_FromLong(d != TG_UINT8 && d != TG_BOOL);
}
static PyObject *dtype_is_complex(PyObject *self, void *c)
{
    (void)self; (void)c; /* there are no complex dtypes */
    Py_RETURN_FALSE;
}
static PyObject *dtype_name(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(tg_dtype_name(((DtypeObject *)self)->code));
}
static PyObject *dtype_reduce(PyObject *self, PyObject *unused)
{
    (void)unused; /* pickles as the module attribute of that name */
    return PyUnicode_FromString(tg_dtype_name(((DtypeObject *)self)->code));
}
static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating, NULL, NULL, NULL},
    {"itemsize", dtype_itemsize, NULL, NULL, NULL},
    {"is_signed", dtype_is_signed, NULL, NULL, NULL},
    {"is_complex", dtype_is_complex, NULL, NULL, NULL},
    {"name", dtype_name, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};
static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};

PyTypeObject Dtype_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph.dtype",
    .tp_basicsize = sizeof(DtypeObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_repr = dtype_repr,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
    .tp_doc = "A tensor element type: tensorgraph.float32, int64, ...",
};

PyObject *tgpy_dtype(tg_dtype dt) { return (PyObject *)&dtype_objects[dt]; }

int tgpy_parse_dtype(PyObject *o, tg_dtype *out)
{
    if (Py_IS_TYPE(o, &Dtype_Type)) {
        *out = ((DtypeObject *)o)->code;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "dtype must be a tensorgraph.dtype (tensorgraph.float32, "
                 "...), not %.100s", Py_TYPE(o)->tp_name);
    return -1;
}

/* ---- generators ------------------------------------------------------------------ */
static PyObject *default_generator;

static PyObject *generator_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args; (void)kw;
    GeneratorObject *self = (GeneratorObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->seed = 67280421310721ULL; /* PyTorch's default seed */
    self->g = tg_generator_new(self->seed);
    if (!self->g) {
        Py_DECREF(self);
        return tgpy_raise();
    }
    return (PyObject *)self;
}
static int generator_init(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"device", NULL};
    PyObject *device = NULL;
    return PyArg_ParseTupleAndKeywords(args, kw, "|O", names, &device) ? 0 : -1;
}
static void generator_dealloc(PyObject *self)
{
    tg_generator_free(((GeneratorObject *)self)->g);
    Py_TYPE(self)->tp_free(self);
}
static PyObject *generator_manual_seed(PyObject *self, PyObject *arg)
{
    unsigned long long s = PyLong_AsUnsignedLongLongMask(arg);
    if (PyErr_Occurred())
        return NULL;
    ((GeneratorObject *)self)->seed = s;
    tg_generator_seed(((GeneratorObject *)self)->g, s);
    return Py_NewRef(self);
}
static PyObject *generator_initial_seed(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLongLong(((GeneratorObject *)self)->seed);
}
static PyObject *generator_next(PyObject *self, PyObject *unused)
{
    (void)unused; /* 64 random bits: seeds for loaders and workers */
    return PyLong_FromUnsignedLongLong(tg_generator_next(((GeneratorObject *)self)->g));
}
/* get_state(): the state as 40 bytes (the 4 state words, then the seed),
 * a uint8 tensor as PyTorch's ByteTensor; set_state(t) takes one back */
enum { STATE_BYTES = 5 * sizeof(uint64_t) };
static PyObject *generator_get_state(PyObject *self, PyObject *unused)
{
    (void)unused;
    uint64_t words[5];
    if (tg_generator_get_state(((GeneratorObject *)self)->g, words) != TG_OK)
        return tgpy_raise();
    words[4] = ((GeneratorObject *)self)->seed;
    tg_tensor *t = tg_from_data(TG_UINT8, 1, (const int64_t[]){STATE_BYTES}, words);
    return t ? tgpy_wrap(t) : tgpy_raise();
}
static PyObject *generator_set_state(PyObject *self, PyObject *arg)
{
    if (!Tensor_Check(arg))
        return PyErr_Format(PyExc_TypeError, "set_state(): argument 'new_state' must be "
                            "Tensor, not %.100s", Py_TYPE(arg)->tp_name);
    tg_tensor *t = TENSOR(arg);
    if (tgpy_concrete(t, "set_state") < 0)
        return NULL;
    if (tg_dtype_of(t) != TG_UINT8) /* PyTorch's error types */
        return PyErr_Format(PyExc_TypeError, "RNG state must be a uint8 tensor (a "
                            "ByteTensor), got %s", tg_dtype_name(tg_dtype_of(t)));
    if (tg_numel(t) != STATE_BYTES)
        return PyErr_Format(PyExc_RuntimeError, "set_state: expected a tensorgraph "
                            "generator's state of size %d (from get_state) but found the "
                            "input RNG state size to be %lld", (int)STATE_BYTES,
                            (long long)tg_numel(t));
    uint64_t words[5];
    if (tg_copy_to(t, TG_UINT8, words) != TG_OK ||
        tg_generator_set_state(((GeneratorObject *)self)->g, words) != TG_OK)
        return tgpy_raise();
    ((GeneratorObject *)self)->seed = words[4];
    return Py_NewRef(self);
}
static PyMethodDef generator_methods[] = {
    {"get_state", generator_get_state, METH_NOARGS, "The state, a uint8 tensor."},
    {"set_state", generator_set_state, METH_O, "Restores a state from get_state; returns self."},
    {"manual_seed", generator_manual_seed, METH_O, "Seeds the generator; returns it."},
    {"initial_seed", generator_initial_seed, METH_NOARGS, "The last seed set."},
    {"_next_u64", generator_next, METH_NOARGS, "64 random bits."},
    {NULL, NULL, 0, NULL}};

PyTypeObject Generator_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorgraph.Generator",
    .tp_basicsize = sizeof(GeneratorObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = generator_new,
    .tp_init = generator_init,
    .tp_dealloc = generator_dealloc,
    .tp_methods = generator_methods,
    .tp_doc = "Generator(): a seedable random number generator (PyTorch's torch.Generator).",
};

tg_generator *tgpy_generator(PyObject *o)
{
    if (!o || o == Py_None)
        return ((GeneratorObject *)default_generator)->g;
    if (PyObject_TypeCheck(o, &Generator_Type))
        return ((GeneratorObject *)o)->g;
    PyErr_Format(PyExc_TypeError, "generator must be a tensorgraph.Generator, not %.100s",
                 Py_TYPE(o)->tp_name);
    return NULL;
}

/* ---- numbers and shapes ------------------------------------------------------------- */
static bool is_data(PyObject *o)
{
    return (PySequence_Check(o) || PyObject_CheckBuffer(o)) && !PyUnicode_Check(o) &&
           !PyBytes_Check(o);
}

/* Python numbers and objects acting as one (not arrays, which also have
 * __index__ when they hold one integer) */
int tgpy_is_scalar(PyObject *o)
{
    if (PyFloat_Check(o) || PyLong_Check(o))
        return 1;
    if (Tensor_Check(o) || is_data(o))
        return 0;
    PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
    return PyIndex_Check(o) || (nb && nb->nb_float);
}

static tg_tensor *from_data(PyObject *o, tg_dtype ref, bool has_ref)
{
    /* lists, tuples, arrays: tensorgraph.tensor decides the dtype */
    PyObject *fn = tgpy_package_attr("tensor");
    if (!fn)
        return NULL;
    PyObject *r = PyObject_CallOneArg(fn, o);
    Py_DECREF(fn);
    (void)ref; (void)has_ref;
    if (!r)
        return NULL;
    if (!Tensor_Check(r)) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "tensorgraph.tensor returned a non-tensor");
        return NULL;
    }
    tg_tensor *t = tg_retain(TENSOR(r));
    Py_DECREF(r);
    return t;
}

tg_tensor *tgpy_as_tensor(PyObject *o, tg_dtype ref, bool has_ref)
{
    if (Tensor_Check(o))
        return tg_retain(TENSOR(o));
    tg_tensor *t = NULL;
    if (PyBool_Check(o)) {
        t = tg_scalar(TG_BOOL, o == Py_True);
    } else if (!PyFloat_Check(o) && is_data(o)) {
        return from_data(o, ref, has_ref);
    } else if (PyLong_Check(o) || (PyIndex_Check(o) && !PyFloat_Check(o))) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        t = tg_scalar(has_ref && ref != TG_BOOL ? ref : TG_INT64, (double)v);
    } else if (PyFloat_Check(o) || tgpy_is_scalar(o)) {
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred())
            return NULL;
        t = tg_scalar(has_ref && tg_dtype_is_float(ref) ? ref : tg_default_float(), v);
    } else {
        PyErr_Format(PyExc_TypeError, "expected a Tensor or a number, got %.100s",
                     Py_TYPE(o)->tp_name);
        return NULL;
    }
    return t ? t : (tg_tensor *)tgpy_raise();
}

/* a shape: an int, a sequence of ints or, as PyTorch's sizes, an integer
 * tensor of one element (one size) */
int tgpy_shape(PyObject *o, int64_t *shape, const char *what)
{
    if (Tensor_Check(o) && !tg_dtype_is_float(tg_dtype_of(TENSOR(o))) &&
        tg_numel(TENSOR(o)) == 1) {
        shape[0] = PyLong_AsLongLong(o);
        return shape[0] == -1 && PyErr_Occurred() ? -1 : 1;
    }
    return tgpy_ints(o, shape, TG_MAX_DIMS, " dims", what);
}

int tgpy_ints(PyObject *o, int64_t *shape, int max, const char *unit, const char *what)
{
    if (PyIndex_Check(o) && !Tensor_Check(o)) {
        shape[0] = PyLong_AsLongLong(o);
        return shape[0] == -1 && PyErr_Occurred() ? -1 : 1;
    }
    if (!PySequence_Check(o) || Tensor_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int or a sequence of ints, not %.100s",
                     what, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Size(o);
    if (n < 0)
        return -1;
    if (n > max) {
        PyErr_Format(PyExc_ValueError, "%s has %zd entries; at most %d%s are supported", what,
                     n, max, unit);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PySequence_GetItem(o, i);
        if (!e)
            return -1;
        if (!PyIndex_Check(e)) {
            PyErr_Format(PyExc_TypeError, "%s must contain ints, not %.100s", what,
                         Py_TYPE(e)->tp_name);
            Py_DECREF(e);
            return -1;
        }
        shape[i] = PyLong_AsLongLong(e);
        Py_DECREF(e);
        if (shape[i] == -1 && PyErr_Occurred())
            return -1;
    }
    return (int)n;
}

/* ---- module ---------------------------------------------------------------------------- */
static PyObject *package;

PyObject *tgpy_package_attr(const char *name)
{
    if (!package && !(package = PyImport_ImportModule("tensorgraph")))
        return NULL;
    return PyObject_GetAttrString(package, name);
}

static PyObject *set_num_threads(PyObject *m, PyObject *arg)
{
    (void)m;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 1 || n > 4096)
        return PyErr_Format(PyExc_RuntimeError, "set_num_threads: %ld threads; expected 1 to 4096",
                            n); /* PyTorch's TORCH_CHECK */
    if (tg_set_num_threads((int)n) != TG_OK)
        return tgpy_raise();
    Py_RETURN_NONE;
}
static PyObject *get_num_threads(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    return PyLong_FromLong(tg_get_num_threads());
}
static PyObject *promote_types(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    tg_dtype a, b;
    if (n != 2)
        return PyErr_Format(PyExc_TypeError, "promote_types takes 2 dtypes (%zd given)", n);
    if (tgpy_parse_dtype(args[0], &a) || tgpy_parse_dtype(args[1], &b))
        return NULL;
    return Py_NewRef(tgpy_dtype(tg_promote_types(a, b)));
}
/* torch.set_default_dtype: the core's one setting (tg_set_default_float) */
static PyObject *set_default_dtype(PyObject *m, PyObject *arg)
{
    (void)m;
    tg_dtype dt;
    if (tgpy_parse_dtype(arg, &dt) < 0)
        return NULL;
    if (!tg_dtype_is_float(dt))
        return PyErr_Format(PyExc_TypeError,
                            "only floating-point types are supported as the default type");
    return tg_set_default_float(dt) == TG_OK ? Py_NewRef(Py_None) : tgpy_raise();
}
static PyObject *get_default_dtype(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    return Py_NewRef(tgpy_dtype(tg_default_float()));
}
static PyObject *kernels_report(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    return PyUnicode_FromString(tg_kernels_report());
}

/* _write_file(path, data): data (bytes) as path's new content, replaced
 * atomically as every file the library writes (tg_write_file) */
static PyObject *write_file(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "sy*:_write_file", &path, &data))
        return NULL;
    tg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = tg_write_file(path, data.buf, (size_t)data.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return s == TG_OK ? Py_NewRef(Py_None) : tgpy_raise();
}

static PyMethodDef module_methods[] = {
    {"_write_file", write_file, METH_VARARGS,
     "_write_file(path, data): replace path's content atomically (tg_write_file)."},
    {"set_num_threads", set_num_threads, METH_O, "Sets the size of the thread pool."},
    {"get_num_threads", get_num_threads, METH_NOARGS, "The size of the thread pool."},
    {"_kernels_report", kernels_report, METH_NOARGS,
     "How the kernels run here and why (tg_kernels_report)."},
    {"_set_default_dtype", set_default_dtype, METH_O,
     "Sets the default float dtype (float32 or float64)."},
    {"_get_default_dtype", get_default_dtype, METH_NOARGS, "The default float dtype."},
    {"promote_types", (PyCFunction)(void (*)(void))promote_types, METH_FASTCALL,
     "The dtype two tensors of these dtypes promote to."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "tensorgraph._C",
    "tensorgraph's C core: tensors, ops, autograd, graphs (see tensorgraph).", -1,
    module_methods, NULL, NULL, NULL, NULL};

static int add_dtypes(PyObject *m)
{
    if (PyType_Ready(&Dtype_Type) < 0)
        return -1;
    for (int i = 0; i < TG_NUM_DTYPES; i++) {
        DtypeObject *d = &dtype_objects[i];
        Py_SET_TYPE(d, &Dtype_Type);
        Py_SET_REFCNT(d, 1);
        d->code = (tg_dtype)i;
        if (PyModule_AddObjectRef(m, tg_dtype_name((tg_dtype)i), (PyObject *)d) < 0)
            return -1;
    }
    return PyModule_AddObjectRef(m, "dtype", (PyObject *)&Dtype_Type);
}

static int add_generator(PyObject *m)
{
    if (PyType_Ready(&Generator_Type) < 0 ||
        PyModule_AddObjectRef(m, "Generator", (PyObject *)&Generator_Type) < 0)
        return -1;
    default_generator = PyObject_CallNoArgs((PyObject *)&Generator_Type);
    return default_generator ? PyModule_AddObjectRef(m, "default_generator", default_generator)
                             : -1;
}

PyMODINIT_FUNC PyInit__C(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (add_dtypes(m) < 0 || add_generator(m) < 0 || tgpy_init_tensor(m) < 0 ||
        tgpy_init_creation(m) < 0 ||
        tgpy_init_ops(m) < 0 || tgpy_init_index() < 0 || tgpy_init_autograd(m) < 0 ||
        tgpy_init_graph(m) < 0 || tgpy_init_device(m) < 0 || tgpy_init_train(m) < 0 || tgpy_init_data(m) < 0 || tgpy_init_dlpack(m) < 0 || tgpy_init_sort(m) < 0 || tgpy_init_dist(m) < 0 ||
        tgpy_init_control(m) < 0 || tgpy_init_profiler(m) < 0 ||
        PyModule_AddStringConstant(m, "__version__", TG_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
