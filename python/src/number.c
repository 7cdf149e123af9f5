/* Tensor operators: + - * / ** @ // % with broadcasting and Python
 * numbers on either side (reflected operators), unary - abs ~, in-place
 * += -= *= /= (PyTorch's semantics: they modify the left tensor), the
 * comparisons, and conversion to Python numbers (bool, float, int). */
#include "tgpy.h"

#include <string.h>


static bool is_operand(PyObject *o)
{
    return Tensor_Check(o) || PyFloat_Check(o) || PyLong_Check(o) || tgpy_is_scalar(o) ||
           (PyObject_CheckBuffer(o) && !PyBytes_Check(o)); /* numpy arrays: copied */
}

/* fn(a, b) with the rules where PyTorch and the C ops differ. Bool
 * tensors, which the C ops refuse in arithmetic: bool with another type
 * computes in that type, bool + bool and maximum are `or`, bool * bool and
 * minimum `and`, bool / bool a float quotient; the logical ops take
 * bools as they are. A 0-d
 * float64 tensor next to a dimensioned integer or bool one: PyTorch
 * computes in float64 (the C ops treat every 0-d operand as a Python
 * number would be, in the default float32; the Python numbers reach them
 * as float32 0-d tensors). a and b are borrowed. */
tg_tensor *tgpy_binary(binary_fn fn, tg_tensor *a, tg_tensor *b)
{
    tg_dtype da = tg_dtype_of(a), db = tg_dtype_of(b);
    bool logic = fn == tg_logical_and || fn == tg_logical_or || fn == tg_logical_xor;
    if (!logic && da == TG_FLOAT64 && tg_ndim(a) == 0 && tg_ndim(b) > 0 && !tg_dtype_is_float(db))
        db = TG_FLOAT64;
    else if (!logic && db == TG_FLOAT64 && tg_ndim(b) == 0 && tg_ndim(a) > 0 &&
             !tg_dtype_is_float(da))
        da = TG_FLOAT64;
    else if ((da != TG_BOOL && db != TG_BOOL) || logic)
        return fn(a, b);
    else if (da == TG_BOOL && db == TG_BOOL) {
        if (fn == tg_add || fn == tg_maximum)
            return tg_logical_or(a, b);
        if (fn == tg_mul || fn == tg_minimum)
            return tg_logical_and(a, b);
        if (fn != tg_div)
            return fn(a, b); /* the op's own rule or error */
        da = db = tg_default_float();
    } else if (da == TG_BOOL) {
        da = db;
    } else {
        db = da;
    }
    tg_tensor *ca = tg_dtype_of(a) == da ? tg_retain(a) : tg_cast(a, da);
    tg_tensor *cb = tg_dtype_of(b) == db ? tg_retain(b) : tg_cast(b, db);
    tg_tensor *r = ca && cb ? fn(ca, cb) : NULL;
    tg_release(ca);
    tg_release(cb);
    return r;
}

int tgpy_deprecated_alpha_first(const char *name, PyObject **alpha_pos, PyObject **other_pos)
{
    PyObject *alpha = *alpha_pos, *other = *other_pos;
    if (Tensor_Check(alpha) && (Tensor_Check(other) || PyLong_Check(other) ||
                                PyFloat_Check(other))) {
        /* PyTorch's Number parameter takes a 0-d tensor that does not
         * require grad; with three positional arguments only this overload
         * matches, so any other tensor there is refused, not taken as
         * `other` (sub(x, t, y) is x - t.item() * y, promoted with y; a
         * Python number y is PyTorch's wrapped number there) */
        tg_tensor *t = TENSOR(alpha);
        if (tg_ndim(t) != 0 || tg_requires_grad(t) || tg_is_symbolic(t)) {
            PyErr_Format(PyExc_TypeError, "%s(): argument 'alpha' must be Number, not Tensor",
                         name);
            return -1;
        }
    } else if (!(PyLong_Check(alpha) || PyFloat_Check(alpha)) || !Tensor_Check(other)) {
        return 0;
    }
    if (PyErr_WarnFormat(PyExc_UserWarning, 1,
                         "This overload of %s is deprecated:\n\t%s(Tensor input, Number alpha, "
                         "Tensor other, *, Tensor out)\nConsider using one of the following "
                         "signatures instead:\n\t%s(Tensor input, Tensor other, *, Number "
                         "alpha, Tensor out)", name, name, name) < 0)
        return -1;
    *alpha_pos = other;
    *other_pos = alpha;
    return 1;
}

int tgpy_check_bool_sub(const tg_tensor *a, const tg_tensor *b)
{
    bool ba = tg_dtype_of(a) == TG_BOOL, bb = tg_dtype_of(b) == TG_BOOL;
    if (ba && bb)
        PyErr_SetString(PyExc_RuntimeError, "Subtraction, the `-` operator, with two bool "
                        "tensors is not supported. Use the `^` or `logical_xor()` operator "
                        "instead.");
    else if (ba || bb)
        PyErr_SetString(PyExc_RuntimeError, "Subtraction, the `-` operator, with a bool tensor "
                        "is not supported. If you are trying to invert a mask, use the `~` or "
                        "`logical_not()` operator instead.");
    return ba || bb ? -1 : 0;
}

/* a (op) b where at least one is a tensor; numbers take the tensor's type
 * (a float one in a true division of integers) */
static PyObject *binary(PyObject *a, PyObject *b, binary_fn fn)
{
    if (!is_operand(a) || !is_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    tg_tensor *ta, *tb;
    bool true_div = fn == tg_div;
    if (Tensor_Check(a)) {
        ta = tg_retain(TENSOR(a));
        tb = tgpy_as_tensor(b, tgpy_number_ref(true_div, tg_dtype_of(ta)), true);
    } else {
        tb = tg_retain(TENSOR(b));
        ta = tgpy_as_tensor(a, tgpy_number_ref(true_div, tg_dtype_of(tb)), true);
    }
    PyObject *r = NULL;
    if (ta && tb && fn == tg_sub && tgpy_check_bool_sub(ta, tb) < 0) {
        tg_release(ta);
        tg_release(tb);
        return NULL;
    }
    if (ta && tb) {
        tg_tensor *both[2] = {ta, tb};
        tgpy_note_inputs(both, 2);
        tg_tensor *t;
        if (tg_numel(ta) + tg_numel(tb) >= TGPY_GIL_FREE_NUMEL) {
            Py_BEGIN_ALLOW_THREADS
            t = tgpy_binary(fn, ta, tb);
            Py_END_ALLOW_THREADS
        } else {
            t = tgpy_binary(fn, ta, tb);
        }
        r = tgpy_wrap(t);
        /* PyTorch's nodes: 2 - t is rsub, 2 / t a product with 1 / t, a
         * tensor exponent pow's second form */
        const char *name = !Tensor_Check(a) && fn == tg_sub   ? "RsubBackward1"
                           : !Tensor_Check(a) && fn == tg_div ? "MulBackward0"
                           : fn == tg_pow && Tensor_Check(b)  ? "PowBackward1"
                           : fn == tg_matmul && r
                               ? tgpy_matmul_grad_name(tg_ndim(ta), tg_ndim(tb))
                               : NULL;
        if (r && name && tgpy_set_grad_fn_name(TENSOR(r), name) < 0)
            Py_CLEAR(r);
        if (r && fn == tg_matmul) /* a batched product's view of it is a copy in PyTorch */
            tg_view_untrack_temporary(TENSOR(r));
    }
    if (!ta || !tb)
        tgpy_raise();
    tg_release(ta);
    tg_release(tb);
    return r;
}

static PyObject *nb_add(PyObject *a, PyObject *b) { return binary(a, b, tg_add); }
static PyObject *nb_sub(PyObject *a, PyObject *b) { return binary(a, b, tg_sub); }
static PyObject *nb_mul(PyObject *a, PyObject *b) { return binary(a, b, tg_mul); }
static PyObject *nb_div(PyObject *a, PyObject *b) { return binary(a, b, tg_div); }
/* a // b: rounded down (tg_floor_divide: integers exactly) */
static PyObject *nb_floordiv(PyObject *a, PyObject *b) { return binary(a, b, tg_floor_divide); }
static PyObject *nb_mod(PyObject *a, PyObject *b) { return binary(a, b, tg_remainder); }
static PyObject *nb_matmul(PyObject *a, PyObject *b)
{
    if (!Tensor_Check(a) || !Tensor_Check(b))
        Py_RETURN_NOTIMPLEMENTED;
    tg_dtype da = tg_dtype_of(TENSOR(a)), db = tg_dtype_of(TENSOR(b));
    if (da != db) /* as the matmul op (ops_table.c, ROW_SAME_DTYPE) */
        return PyErr_Format(PyExc_RuntimeError, "matmul: input is %s and other is %s; expected "
                            "the same dtype (no promotion here, as in PyTorch: cast one)",
                            tg_dtype_name(da), tg_dtype_name(db));
    return binary(a, b, tg_matmul);
}
int tgpy_check_int_pow(tg_tensor *base, tg_tensor *exponent)
{
    int64_t e;
    tg_dtype db = tg_dtype_of(base), de = tg_dtype_of(exponent);
    if (tg_dtype_is_float(db) || db == TG_BOOL || tg_dtype_is_float(de) || de == TG_BOOL ||
        tg_numel(exponent) != 1 || tg_is_symbolic(exponent) ||
        tg_copy_to(exponent, TG_INT64, &e) != TG_OK || e >= 0)
        return 0;
    PyErr_SetString(PyExc_RuntimeError, "Integers to negative integer powers are not "
                    "allowed."); /* PyTorch's words */
    return -1;
}

static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    if (Tensor_Check(a) && PyLong_Check(b) && !PyBool_Check(b)) {
        tg_tensor *e = tgpy_as_tensor(b, tg_dtype_of(TENSOR(a)), true);
        int bad = e ? tgpy_check_int_pow(TENSOR(a), e) : -1;
        tg_release(e);
        if (bad)
            return NULL;
    }
    return binary(a, b, tg_pow);
}
/* & | ^ are bitwise in PyTorch: on bool tensors the logical ops. Floats
 * have no bits to combine (PyTorch's RuntimeError); integers are combined
 * by tensorgraph/_ops_cover.py (bitwise_and & co., on the host: the C core
 * has no bitwise kernels). A number takes the tensor's type. */
static bool is_float_operand(PyObject *o)
{
    return Tensor_Check(o) ? tg_dtype_is_float(tg_dtype_of(TENSOR(o))) : PyFloat_Check(o);
}

static PyObject *call_cover(const char *name, PyObject *a, PyObject *b)
{
    PyObject *mod = PyImport_ImportModule("tensorgraph._ops_cover");
    if (!mod)
        return NULL;
    PyObject *r = b ? PyObject_CallMethod(mod, name, "OO", a, b)
                    : PyObject_CallMethod(mod, name, "O", a);
    Py_DECREF(mod);
    return r;
}

static PyObject *bitwise(PyObject *a, PyObject *b, binary_fn fn, const char *name)
{
    if (!is_operand(a) || !is_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    if (is_float_operand(a) || is_float_operand(b))
        return PyErr_Format(PyExc_RuntimeError, "bitwise_%s: not implemented for floating-point "
                            "tensors (bool and integer tensors only)", name);
    bool a_bool = !Tensor_Check(a) || tg_dtype_of(TENSOR(a)) == TG_BOOL;
    bool b_bool = !Tensor_Check(b) || tg_dtype_of(TENSOR(b)) == TG_BOOL;
    if (!a_bool || !b_bool) {
        char fname[32];
        snprintf(fname, sizeof fname, "bitwise_%s", name);
        return call_cover(fname, a, b);
    }
    return binary(a, b, fn);
}
static PyObject *nb_and(PyObject *a, PyObject *b) { return bitwise(a, b, tg_logical_and, "and"); }
static PyObject *nb_or(PyObject *a, PyObject *b) { return bitwise(a, b, tg_logical_or, "or"); }
static PyObject *nb_xor(PyObject *a, PyObject *b) { return bitwise(a, b, tg_logical_xor, "xor"); }

/* << and >> (and <<= >>=): the C core has no shift op; they are composed in
 * tensorgraph/_ops_bits.py (products / floor divisions by 2**k), called from
 * here because a static type's operator slots cannot be set from Python. */
static PyObject *call_bits(const char *name, PyObject *a, PyObject *b)
{
    PyObject *mod = PyImport_ImportModule("tensorgraph._ops_bits");
    if (!mod)
        return NULL;
    PyObject *r = PyObject_CallMethod(mod, name, "OO", a, b);
    Py_DECREF(mod);
    return r;
}
static PyObject *nb_lshift(PyObject *a, PyObject *b)
{
    if (!is_operand(a) || !is_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    return call_bits("bitwise_left_shift", a, b);
}
static PyObject *nb_rshift(PyObject *a, PyObject *b)
{
    if (!is_operand(a) || !is_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    return call_bits("bitwise_right_shift", a, b);
}
static PyObject *nb_ilshift(PyObject *a, PyObject *b)
{
    if (!Tensor_Check(a) || !is_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    return call_bits("bitwise_left_shift_", a, b);
}
static PyObject *nb_irshift(PyObject *a, PyObject *b)
{
    if (!Tensor_Check(a) || !is_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    return call_bits("bitwise_right_shift_", a, b);
}

static PyObject *unary(PyObject *a, tg_tensor *(*fn)(tg_tensor *))
{
    tgpy_note_inputs(&TENSOR(a), 1);
    return tgpy_wrap(fn(TENSOR(a)));
}
static PyObject *nb_neg(PyObject *a) { return unary(a, tg_neg); }
static PyObject *nb_abs(PyObject *a) { return unary(a, tg_abs); }
static PyObject *nb_pos(PyObject *a) { return Py_NewRef(a); }
static PyObject *nb_invert(PyObject *a)
{
    tg_dtype dt = tg_dtype_of(TENSOR(a));
    if (tg_dtype_is_float(dt)) {  /* PyTorch's ~ of a float tensor is a TypeError */
        PyErr_SetString(PyExc_TypeError, "~ (bitwise not) is only supported for integer and "
                        "bool tensors");
        return NULL;
    }
    if (dt != TG_BOOL)
        return call_cover("bitwise_not", a, NULL);
    return unary(a, tg_logical_not);
}

/* PyTorch's can_cast for in-place results: anything but a step up in kind
 * (bool < integer < floating point), so float64 into float32 is fine and
 * float into an integer tensor is refused */
static int dtype_kind(tg_dtype d)
{
    return d == TG_BOOL ? 0 : tg_dtype_is_float(d) ? 2 : 1;
}

int tgpy_check_cast(tg_dtype result, tg_dtype dst)
{
    if (dtype_kind(result) <= dtype_kind(dst))
        return 0;
    PyErr_Format(PyExc_RuntimeError, "result type %s can't be cast to the desired output type "
                 "%s", tg_dtype_name(result), tg_dtype_name(dst));
    return -1;
}

/* self = fn(self, s), written into self (one version bump). Recorded as
 * PyTorch records in-place ops when autograd watches either operand: fn
 * runs on a clone of self (its rule may save that input, and the copy_
 * below changes self), then copy_ gives self the history fn -> clone ->
 * self's old history. Otherwise computed without recording and copied
 * in. A result self's dtype cannot hold is PyTorch's RuntimeError. */
PyObject *tgpy_update(PyObject *self, tg_tensor *s, binary_fn fn)
{
    tg_tensor *t = TENSOR(self), *r;
    if (tg_grad_enabled() && (tg_requires_grad(t) || tg_requires_grad(s))) {
        tg_tensor *c = tg_clone(t);
        r = c ? tgpy_binary(fn, c, s) : NULL; /* bool operands as PyTorch's */
        tg_release(c);
    } else {
        tg_no_grad_begin();
        r = tgpy_binary(fn, t, s);
        tg_no_grad_end();
    }
    if (!r)
        return tgpy_raise();
    if (tgpy_check_cast(tg_dtype_of(r), tg_dtype_of(t)) < 0) {
        tg_release(r);
        return NULL;
    }
    tg_status st = tg_copy_(t, r);
    tg_release(r);
    if (st != TG_OK)
        return tgpy_raise();
    /* PyTorch's node for the in-place op */
    const char *name = fn == tg_add ? "AddBackward0" : fn == tg_sub ? "SubBackward0"
                       : fn == tg_mul ? "MulBackward0" : fn == tg_div ? "DivBackward0" : NULL;
    if (name && tgpy_name_inplace(t, name) < 0)
        return NULL;
    return Py_NewRef(self);
}

/* x += y: in place, as PyTorch (same object, version bumped); + and -
 * in the destination's dtype are one add_ (dst += alpha * src) */
static PyObject *inplace_op(PyObject *a, PyObject *b, binary_fn fn, double add_sign)
{
    if (!Tensor_Check(a) || !is_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    tg_tensor *t = TENSOR(a), *s = tgpy_as_tensor(b, tg_dtype_of(t), true);
    if (!s)
        return NULL;
    if (fn == tg_sub && tgpy_check_bool_sub(t, s) < 0) {
        tg_release(s);
        return NULL;
    }
    PyObject *r;
    if (add_sign != 0 && tg_dtype_of(t) != TG_BOOL && /* bools: a logical or, below */
        tg_promote_types(tg_dtype_of(t), tg_dtype_of(s)) == tg_dtype_of(t)) {
        r = tg_add_(t, s, add_sign) == TG_OK ? Py_NewRef(a) : tgpy_raise();
        if (r && tgpy_name_inplace(t, add_sign < 0 ? "SubBackward0" : "AddBackward0") < 0)
            Py_CLEAR(r);
    } else {
        r = tgpy_update(a, s, fn);
    }
    tg_release(s);
    return r;
}
static PyObject *nb_iadd(PyObject *a, PyObject *b) { return inplace_op(a, b, tg_add, 1); }
static PyObject *nb_isub(PyObject *a, PyObject *b) { return inplace_op(a, b, tg_sub, -1); }
static PyObject *nb_imul(PyObject *a, PyObject *b) { return inplace_op(a, b, tg_mul, 0); }
static PyObject *nb_idiv(PyObject *a, PyObject *b) { return inplace_op(a, b, tg_div, 0); }

/* ---- conversion to Python numbers --------------------------------------------- */
int tgpy_concrete(tg_tensor *t, const char *what)
{
    if (!tg_is_symbolic(t))
        return 0;
    /* a Python-level check, like torch.fx's TraceError (a ValueError) */
    PyErr_Format(PyExc_ValueError, "%s: the tensor is symbolic (traced by tg.function) and has "
                 "no value while tracing; Python code that reads values cannot be traced (use "
                 "tg.cond / tg.where, or keep it outside the function)", what);
    return -1;
}

static int one_element(PyObject *a, const char *what)
{
    if (tgpy_concrete(TENSOR(a), what) < 0)
        return -1;
    if (tg_numel(TENSOR(a)) == 1)
        return 0;
    if (what[0] == 'b')
        PyErr_SetString(PyExc_RuntimeError, "Boolean value of Tensor with more than one value "
                        "is ambiguous");
    else
        PyErr_Format(PyExc_ValueError, "only one element tensors can be converted to Python "
                     "scalars");
    return -1;
}
static int nb_bool(PyObject *a)
{
    double v;
    if (one_element(a, "bool") < 0)
        return -1;
    return tg_copy_to(TENSOR(a), TG_FLOAT64, &v) == TG_OK ? v != 0 : tgpy_fail_status(0);
}
static PyObject *nb_float(PyObject *a)
{
    double v;
    if (one_element(a, "float") < 0)
        return NULL;
    return tg_copy_to(TENSOR(a), TG_FLOAT64, &v) == TG_OK ? PyFloat_FromDouble(v) : tgpy_raise();
}
static PyObject *nb_int(PyObject *a)
{
    int64_t v;
    if (one_element(a, "int") < 0)
        return NULL;
    return tg_copy_to(TENSOR(a), TG_INT64, &v) == TG_OK ? PyLong_FromLongLong(v) : tgpy_raise();
}
/* PyTorch's: an integer or bool tensor of one element (of any rank) */
static PyObject *nb_index(PyObject *a)
{
    if (tg_dtype_is_float(tg_dtype_of(TENSOR(a))) || tg_numel(TENSOR(a)) != 1) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be "
                        "converted to an index");
        return NULL;
    }
    return nb_int(a);
}

PyNumberMethods tgpy_number_methods = {
    .nb_add = nb_add, .nb_subtract = nb_sub, .nb_multiply = nb_mul,
    .nb_true_divide = nb_div, .nb_floor_divide = nb_floordiv, .nb_remainder = nb_mod,
    .nb_power = nb_pow, .nb_matrix_multiply = nb_matmul,
    .nb_negative = nb_neg, .nb_positive = nb_pos, .nb_absolute = nb_abs,
    .nb_invert = nb_invert, .nb_and = nb_and, .nb_or = nb_or, .nb_xor = nb_xor,
    .nb_lshift = nb_lshift, .nb_rshift = nb_rshift,
    .nb_inplace_lshift = nb_ilshift, .nb_inplace_rshift = nb_irshift,
    .nb_inplace_add = nb_iadd, .nb_inplace_subtract = nb_isub,
    .nb_inplace_multiply = nb_imul, .nb_inplace_true_divide = nb_idiv,
    .nb_bool = nb_bool, .nb_float = nb_float, .nb_int = nb_int, .nb_index = nb_index,
};

PyObject *tgpy_richcompare(PyObject *a, PyObject *b, int op)
{
    static const binary_fn fns[] = {tg_lt, tg_le, tg_eq, tg_ne, tg_gt, tg_ge};
    if (!is_operand(a) || !is_operand(b)) {
        if (op == Py_EQ || op == Py_NE) /* `t == None`: identity, as PyTorch */
            return PyBool_FromLong((a == b) == (op == Py_EQ));
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (!Tensor_Check(a)) { /* reflected: 2 < t is t > 2 */
        static const int swap[] = {Py_GT, Py_GE, Py_EQ, Py_NE, Py_LT, Py_LE};
        return binary(b, a, fns[swap[op]]);
    }
    return binary(a, b, fns[op]);
}
