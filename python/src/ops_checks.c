/* Argument checks the op table's C functions cannot make, run before each
 * call with the GIL held (tgpy_op_validate): PyTorch's refusals and
 * messages for dims, permutations, pools, batch norm, batch sizes and
 * extremum reductions, each -1 with the Python exception set. */
#include "ops.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int tgpy_check_dim(const char *fn, long dim, int ndim)
{
    int n = ndim ? ndim : 1; /* a 0-d tensor takes dim 0 or -1, as in PyTorch */
    if (dim >= -n && dim < n)
        return 0;
    PyErr_Format(PyExc_IndexError, "%s: Dimension out of range (expected to be in range of "
                 "[%d, %d], but got %ld)", fn, -n, n - 1, dim);
    return -1;
}

/* the row's declared checks: rank, one dtype, the dim of an index op */
static int row_checks(const OpObject *op, const argval *v)
{
    const op_row *row = op->row;
    const op_checks *c = &op->checks;
    int first = -1;
    for (int k = 0; k < op->n_params; k++) {
        tg_tensor *t = v[k].t;
        if (!t)
            continue;
        if (c->rank && tg_ndim(t) != c->rank) {
            PyErr_Format(PyExc_RuntimeError, "%s: %s must be a %d-D tensor, got %d-D",
                         row->name, op->params[k].name, c->rank, tg_ndim(t));
            return -1;
        }
        if ((c->flags & ROW_SAME_DTYPE) && first >= 0 &&
            tg_dtype_of(t) != tg_dtype_of(v[first].t)) {
            PyErr_Format(PyExc_RuntimeError, "%s: %s is %s and %s is %s; expected the same "
                         "dtype (no promotion here, as in PyTorch: cast one)", row->name,
                         op->params[first].name, tg_dtype_name(tg_dtype_of(v[first].t)),
                         op->params[k].name, tg_dtype_name(tg_dtype_of(t)));
            return -1;
        }
        first = first < 0 ? k : first;
    }
    if ((c->flags & ROW_INDEX_RUNTIME) && op->n_params > 1 &&
        !strcmp(op->params[1].name, "dim"))
        return tgpy_check_dim(row->name, (long)v[1].f, tg_ndim(v[0].t));
    return 0;
}

/* permute: as many dims as the input has, each in range, none twice */
static int check_permutation(const OpObject *op, const argval *v)
{
    int nd = tg_ndim(v[0].t);
    bool seen[TG_MAX_DIMS] = {false};
    if (v[1].n != nd) {
        PyErr_Format(PyExc_RuntimeError, "permute: number of dims don't match in permute "
                     "(%d given for a tensor of %d dims)", v[1].n, nd);
        return -1;
    }
    for (int i = 0; i < nd; i++) {
        long d = (long)v[1].shape[i];
        if (tgpy_check_dim(op->row->name, d, nd) < 0)
            return -1;
        if (seen[d < 0 ? d + nd : d]) {
            PyErr_Format(PyExc_RuntimeError, "permute(): duplicate dims are not allowed (dim "
                         "%ld at position %d names a dim given before)", d, i);
            return -1;
        }
        seen[d < 0 ? d + nd : d] = true;
    }
    return 0;
}

/* pooling: PyTorch refuses a stride of 0, where the C options read 0 as
 * "the kernel size"; and it has no dilation or return_indices here */
static int check_pool(const OpObject *op, const argval *v)
{
    bool avg = op->row->fn == F(tg_avg_pool2d) || op->row->fn == F(tg_avg_pool1d) ||
               op->row->fn == F(tg_avg_pool3d);
    int nd = op->row->call == C_POOL ? 2 : op->row->call == C_POOL3 ? 3 : 1;
    for (int i = 0; !v[2].none && i < nd; i++)
        if (v[2].ints[i] == 0) {
            PyErr_Format(PyExc_RuntimeError, "%s: stride should not be zero", op->row->name);
            return -1;
        }
    if (!avg && (v[4].ints[0] != 1 || v[4].ints[1 % nd] != 1 || v[4].ints[nd - 1] != 1 ||
                 v[6].f != 0)) {
        PyErr_Format(PyExc_NotImplementedError, "%s: dilation != 1 and return_indices "
                     "are not supported", op->row->name);
        return -1;
    }
    if (avg && nd != 1 && !v[6].none) {
        PyErr_Format(PyExc_NotImplementedError, "%s: divisor_override is not supported",
                     op->row->name);
        return -1;
    }
    return 0;
}

/* batch_norm in training needs two values per channel; PyTorch checks it in
 * Python (a ValueError), the C function with TG_ERR_ARG */
static int check_batch_norm(const argval *v)
{
    const int64_t *s = tg_shape(v[0].t);
    int nd = tg_ndim(v[0].t);
    int64_t per_channel = nd > 0 ? s[0] : 0;
    for (int i = 2; i < nd; i++)
        per_channel *= s[i];
    if (v[5].f == 0 || nd < 2 || per_channel != 1)
        return 0;
    PyErr_Format(PyExc_ValueError, "batch_norm: Expected more than 1 value per channel when "
                 "training, got input of %d dims with 1 value per channel", nd);
    return -1;
}

/* nll_loss / cross_entropy with class labels: PyTorch's TORCH_CHECK_VALUE */
static int check_batch_sizes(const OpObject *op, const argval *v)
{
    tg_tensor *x = v[0].t, *y = v[1].t;
    if (tg_ndim(x) < 2 || tg_ndim(y) < 1 || tg_dtype_is_float(tg_dtype_of(y)) ||
        tg_shape(x)[0] < 0 || tg_shape(y)[0] < 0 || tg_shape(x)[0] == tg_shape(y)[0])
        return 0;
    PyErr_Format(PyExc_ValueError, "%s: Expected input batch_size (%lld) to match target "
                 "batch_size (%lld).", op->row->name, (long long)tg_shape(x)[0],
                 (long long)tg_shape(y)[0]);
    return -1;
}

/* argument checks the C functions cannot make, with the GIL held (invoke
 * may run without it): -1 with an exception */
/* PyTorch's refusals of amax / amin (dims as given) and argmax / argmin
 * (one dim, counted from 0) over no elements: -1 with the exception */
static int check_extremum_dims(const char *name, const tg_tensor *x, int n, const int *dims,
                               bool normalize)
{
    int nd = tg_ndim(x);
    if (n == 0) {
        if (tg_numel(x) != 0)
            return 0;
        if (normalize) /* argmax: TORCH_CHECK_INDEX */
            PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim to be specified for "
                         "input.numel() == 0.", name);
        else
            PyErr_Format(PyExc_RuntimeError, "%s(): Expected reduction dim to be specified for "
                         "input.numel() == 0. Specify the reduction dim with the 'dim' "
                         "argument.", name);
        return -1;
    }
    for (int i = 0; i < n && nd > 0; i++) {
        int d = dims[i] < 0 ? dims[i] + nd : dims[i];
        if (d >= 0 && d < nd && tg_shape(x)[d] == 0) {
            PyErr_Format(PyExc_IndexError, "%s(): Expected reduction dim %d to have non-zero "
                         "size.", name, normalize ? d : dims[i]);
            return -1;
        }
    }
    return 0;
}

/* PyTorch has no argmax / argmin kernel for bools ("not implemented for
 * 'Bool'") and answers without one only where none runs: along a dim of
 * size 1 (zeros) or with no elements (dim NULL: over all elements) */
static int check_arg_of_bool(const char *name, const tg_tensor *x, const int *dim)
{
    if (tg_dtype_of(x) != TG_BOOL)
        return 0;
    int nd = tg_ndim(x);
    if (dim && nd > 0) {
        int d = *dim < 0 ? *dim + nd : *dim;
        if (d >= 0 && d < nd && (tg_shape(x)[d] == 1 || tg_numel(x) == 0))
            return 0;
    }
    PyErr_Format(PyExc_RuntimeError, "\"%s_cpu\" not implemented for 'Bool'", name);
    return -1;
}

int tgpy_op_validate(const OpObject *op, const argval *v)
{
    if (row_checks(op, v) < 0)
        return -1;
    switch (op->row->call) {
    case C_POOL1:
    case C_POOL3:
    case C_POOL: return check_pool(op, v);
    case C_TP: return check_permutation(op, v);
    case C_VAR: /* the C function takes an int: NaN, inf or 1e300 converted to one is UB */
        if (!v[4].none && !(v[4].f == floor(v[4].f) && fabs(v[4].f) <= INT_MAX)) {
            PyErr_Format(PyExc_RuntimeError, "%s(): correction must be a whole number of "
                         "at most %d in magnitude, got %g", op->row->name, INT_MAX, v[4].f);
            return -1;
        }
        return 0;
    case C_TT:
        if (op->n_params > 2 && v[2].f != floor(v[2].f) &&
            !tg_dtype_is_float(tg_dtype_of(v[0].t)) && !tg_dtype_is_float(tg_dtype_of(v[1].t))) {
            PyErr_SetString(PyExc_RuntimeError, "For integral input tensors, argument alpha "
                            "must not be a floating point number.");
            return -1;
        }
        if (op->row->fn == F(tg_sub))
            return tgpy_check_bool_sub(v[0].t, v[1].t);
        return op->row->fn == F(tg_pow) ? tgpy_check_int_pow(v[0].t, v[1].t) : 0;
    case C_TTT:
        if (op->row->fn == F(tg_where) && tg_dtype_of(v[0].t) != TG_BOOL &&
            tg_dtype_of(v[0].t) != TG_UINT8) {
            PyErr_Format(PyExc_RuntimeError, "where: expected condition to be a bool tensor, "
                         "got %s (compare it, e.g. x != 0)", tg_dtype_name(tg_dtype_of(v[0].t)));
            return -1;
        }
        return 0;
    case C_ARG: { /* PyTorch's TORCH_CHECK_INDEX */
        int d = v[1].none ? 0 : (int)v[1].f;
        if (check_extremum_dims(op->row->name, v[0].t, v[1].none ? 0 : 1, &d, true) < 0)
            return -1;
        return check_arg_of_bool(op->row->name, v[0].t, v[1].none ? NULL : &d);
    }
    case C_TAB:
        if (op->row->fn == F(tg_max) || op->row->fn == F(tg_min))
            return check_extremum_dims(op->row->name, v[0].t, v[1].none ? 0 : v[1].n,
                                       v[1].ints, false);
        return 0;
    case C_TIT: /* PyTorch's TORCH_CHECK_INDEX */
        if (op->row->fn == F(tg_index_select) && tg_ndim(v[2].t) > 1) {
            PyErr_Format(PyExc_IndexError, "index_select(): Index is supposed to be a vector, "
                         "got %d dims", tg_ndim(v[2].t));
            return -1;
        }
        return 0;
    case C_LN: {
        int nd = tg_ndim(v[0].t), n = v[1].n;
        bool ok = n >= 1 && n <= nd;
        for (int i = 0; ok && i < n; i++)
            ok = tg_shape(v[0].t)[nd - n + i] == v[1].shape[i];
        if (!ok) {
            PyErr_Format(PyExc_RuntimeError, "layer_norm: normalized_shape must match the "
                         "last %d dims of the input", n);
            return -1;
        }
        return 0;
    }
    case C_BN: return check_batch_norm(v);
    case C_NLL:
        if (check_batch_sizes(op, v) < 0)
            return -1;
        if (v[3].t || v[5].t) {
            PyErr_Format(PyExc_NotImplementedError, "%s: size_average and reduce are "
                         "deprecated in PyTorch and not supported; use reduction=",
                         op->row->name);
            return -1;
        }
        if (op->n_params > 7 && v[7].f != 0) {
            PyErr_Format(PyExc_NotImplementedError, "%s: label_smoothing is not supported",
                         op->row->name);
            return -1;
        }
        return 0;
    case C_NORM:
        if (v[1].f != 1 && v[1].f != 2) {
            PyErr_Format(PyExc_NotImplementedError, "vector_norm: ord %g is not supported (1 "
                         "and 2 are)", v[1].f);
            return -1;
        }
        return 0;
    default: return 0;
    }
}
