/* The op table's types, shared by the calling path (ops.c) and the
 * table with the calls through each C function's shape (ops_table.c). */
#ifndef TGPY_OPS_H
#define TGPY_OPS_H

#include "tgpy.h"

#define MAX_PARAMS 10

typedef enum {
    C_T, C_TT, C_TTT, C_TD, C_TDD, C_TI, C_TII, C_TAB, C_VAR, C_ARG, C_TS,
    C_TP, C_TTR, C_TTO, C_CAST, C_CONV, C_POOL, C_BN, C_LN, C_DROP, C_EMB,
    C_LIST, C_TIT, C_PAD, C_ONEHOT, C_SQUEEZE, C_NLL, C_ADDMM, C_CONVT,
    C_CONV1, C_CONVT1, C_POOL1, C_CONV3, C_CONVT3, C_POOL3, C_INORM, C_GNORM, C_INTERP,
    C_EINSUM, C_CUMSUM, C_NORM, C_TL, C_TLII, C_SCATTER, C_STRIDED, C_SLICE_BY
} call_shape;

typedef void (*any_fn)(void);
/* a C function as the table stores it (rows name theirs with it, checks
 * compare with it) */
#define F(f) ((any_fn)(f))
typedef tg_tensor *(*fn_t)(tg_tensor *);
typedef tg_tensor *(*fn_tt)(tg_tensor *, tg_tensor *);
typedef tg_tensor *(*fn_ttt)(tg_tensor *, tg_tensor *, tg_tensor *);
typedef tg_tensor *(*fn_td)(tg_tensor *, double);
typedef tg_tensor *(*fn_tdd)(tg_tensor *, double, double);
typedef tg_tensor *(*fn_ti)(tg_tensor *, int);
typedef tg_tensor *(*fn_tii)(tg_tensor *, int, int);
typedef tg_tensor *(*fn_tl)(tg_tensor *, int64_t);
typedef tg_tensor *(*fn_tlii)(tg_tensor *, int64_t, int, int);
typedef tg_tensor *(*fn_tab)(tg_tensor *, int, const int *, bool);
typedef tg_tensor *(*fn_var)(tg_tensor *, int, const int *, int, bool);
typedef tg_tensor *(*fn_arg)(tg_tensor *, int, bool);
typedef tg_tensor *(*fn_ts)(tg_tensor *, int, const int64_t *);
typedef tg_tensor *(*fn_strided)(tg_tensor *, int, const int64_t *, const int64_t *, int64_t);
typedef tg_tensor *(*fn_tp)(tg_tensor *, const int *);
typedef tg_tensor *(*fn_ttr)(tg_tensor *, tg_tensor *, tg_reduction);
typedef tg_tensor *(*fn_cast)(tg_tensor *, tg_dtype);
typedef tg_tensor *(*fn_pool)(tg_tensor *, const tg_pool2d_opts *);
typedef tg_tensor *(*fn_pool1)(tg_tensor *, const tg_pool1d_opts *);
typedef tg_tensor *(*fn_pool3)(tg_tensor *, const tg_pool3d_opts *);
typedef tg_tensor *(*fn_list)(int, tg_tensor *const *, int);
typedef tg_tensor *(*fn_tit)(tg_tensor *, int, tg_tensor *);

/* op_checks.flags: what PyTorch checks that the C function accepts, or
 * reports with another exception (checked with the GIL before the call) */
enum {
    ROW_SAME_DTYPE = 1,    /* tensor inputs share one dtype (matmul & co. do not promote) */
    ROW_INDEX_RUNTIME = 2, /* index values out of range are PyTorch's TORCH_CHECK, a
                            * RuntimeError (gather, scatter, one_hot); a dim out of
                            * range stays an IndexError, checked before the call */
};

typedef struct {
    const char *name, *sig;
    call_shape call;
    any_fn fn;
    bool method; /* also a Tensor method (self = first parameter) */
} op_row;

typedef struct {
    const char *name; /* the row's */
    int rank;         /* > 0: every tensor input has exactly this many dims (mm 2, bmm 3) */
    unsigned flags;   /* ROW_* */
} op_checks;

/* PyTorch's grad_fn name for an op whose C function records another op's
 * (transpose is a permute, sum over dims SumBackward1): `name`, or
 * `other` when the rule's case holds */
enum { GRAD_ALWAYS, GRAD_DIM_GIVEN, GRAD_COPIED, GRAD_MATMUL, GRAD_TENSOR_ARG, GRAD_LINEAR,
       GRAD_COPY };
typedef struct {
    const char *row;   /* the row's name */
    int rule;          /* GRAD_*: when `other` is used instead of `name` */
    const char *name, *other;
} op_grad_name;

/* ---- parsed signatures -------------------------------------------------------- */
typedef struct {
    char name[32];
    char kind;
    bool required, none_default;
    double num;         /* numeric default (i, f, b, d, P) */
    int red;            /* R default */
} param;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    const op_row *row;
    op_checks checks; /* from tgpy_op_checks, zero when the row has none */
    const op_grad_name *grad; /* from tgpy_op_grad_names, or NULL */
    int n_params;
    param params[MAX_PARAMS];
} OpObject;

/* ---- one converted argument --------------------------------------------------- */
typedef struct {
    bool none;
    tg_tensor *t;               /* T, O (borrowed or in `owned`) */
    double f;                   /* i, j, l, f, b, d */
    int64_t i;                  /* i, j, l: the exact value */
    int n;                          /* A: count (0 = all); S: ndim; W, L: count */
    int64_t shape[2 * TG_MAX_DIMS]; /* S, W */
    int ints[TG_MAX_DIMS];      /* A, P (2), Q (3), U (1) */
    tg_dtype dt;
    tg_reduction red;
    tg_generator *g;
    tg_tensor **list; /* L: owned array of owned references */
    double floats[TG_MAX_DIMS]; /* F: n values */
    const char *str;            /* s: UTF-8, borrowed from the argument */
} argval;


/* the table (ops_table.c) */
extern const op_row tgpy_op_rows[];
extern const int tgpy_n_ops;
extern const op_checks tgpy_op_checks[];
extern const int tgpy_n_op_checks;
extern const op_grad_name tgpy_op_grad_names[];
extern const int tgpy_n_op_grad_names;
/* checks the C function cannot make, with the GIL: -1 with an exception */
int tgpy_op_validate(const OpObject *op, const argval *v);
/* -1 with PyTorch's IndexError unless -n <= dim < n (n = ndim, 1 for a 0-d tensor) */
int tgpy_check_dim(const char *fn, long dim, int ndim);
/* calls the row's C function (may run without the GIL) */
tg_tensor *tgpy_op_invoke(const OpObject *op, argval *v);

#endif
