/* The operator definition: one struct per op holding its schema, shape and
 * dtype inference, CPU kernel and gradient rule, plus the
 * dispatcher every public op function calls. */
#ifndef TG_OP_H
#define TG_OP_H

#include "core/tensor_impl.h"
#include "tg/ops.h"

#define TG_MAX_OP_INPUTS 64
#define TG_MAX_OP_OUTPUTS 8

/* ---- attributes, typed like ONNX's ------------------------------------ */
typedef enum tg_attr_type {
    TG_ATTR_INT,
    TG_ATTR_FLOAT,
    TG_ATTR_STRING,
    TG_ATTR_INTS,
    TG_ATTR_FLOATS,
    TG_ATTR_TENSOR,
    TG_ATTR_GRAPH
} tg_attr_type;

typedef struct tg_attr {
    const char *name;
    tg_attr_type type;
    union {
        int64_t i;
        double f;
        const char *s;
        struct { const int64_t *v; int n; } ints;
        struct { const double *v; int n; } floats;
        tg_tensor *t;
        void *g;
    } u;
} tg_attr;

#define TG_AI(nm, val) ((tg_attr){.name = (nm), .type = TG_ATTR_INT, .u.i = (val)})
#define TG_AF(nm, val) ((tg_attr){.name = (nm), .type = TG_ATTR_FLOAT, .u.f = (val)})
#define TG_AINTS(nm, ptr, cnt) \
    ((tg_attr){.name = (nm), .type = TG_ATTR_INTS, .u.ints = {(ptr), (cnt)}})

/* lookups return the default when the attribute is absent */
int64_t tg_attr_int(const tg_attr *a, int n, const char *name, int64_t dflt);
double tg_attr_float(const tg_attr *a, int n, const char *name, double dflt);
/* ints attribute: returns count, sets *v (NULL/0 when absent) */
int tg_attr_ints(const tg_attr *a, int n, const char *name, const int64_t **v);
/* deep copy into one malloc'd block (for nodes); NULL when n == 0 */
tg_attr *tg_attrs_copy(const tg_attr *a, int n);

/* ---- metadata of a value (what inference computes) --------------------- */
typedef struct tg_meta {
    tg_dtype dtype;
    int ndim;
    int64_t shape[TG_MAX_DIMS];
} tg_meta;

void tg_meta_of(const tg_tensor *t, tg_meta *m);

/* ---- contexts ------------------------------------------------------------ */
struct tg_op_def;

/* passed to infer, kernel and make_view */
typedef struct tg_op_ctx {
    const struct tg_op_def *op;
    int n_in, n_out;
    tg_tensor *const *in;
    tg_tensor **out;                    /* kernel: allocated outputs */
    tg_meta out_meta[TG_MAX_OP_OUTPUTS]; /* infer writes these */
    const tg_attr *attrs;
    int n_attrs;
} tg_op_ctx;

/* passed to a gradient rule. dy[i] is never NULL for a floating-point
 * output (zeros are filled in); it is NULL for an integer or bool output,
 * which carries no gradient.
 * The rule sets dx[i] for inputs with needs_grad[i] using public tg ops;
 * tensors it creates are released by the engine's scope, dx excepted. */
typedef struct tg_grad_ctx {
    const struct tg_op_def *op;
    int n_in, n_out;
    tg_tensor *const *in;  /* saved inputs; NULL when not saved */
    tg_tensor *const *out; /* saved outputs; NULL when not saved */
    const tg_meta *in_meta;
    tg_tensor *const *dy;
    tg_tensor **dx;
    const bool *needs_grad;
    const tg_attr *attrs;
    int n_attrs;
} tg_grad_ctx;

#define TG_SAVE_ALL 0xffffffffu

typedef struct tg_op_def {
    const char *name;
    int n_in;  /* -1: variadic */
    int n_out;
    uint32_t save_inputs;  /* bit i: input i is saved for the gradient */
    uint32_t save_outputs; /* bit i: output i is saved */
    bool nondiff;          /* outputs never require grad (eq, argmax...) */
    tg_status (*infer)(tg_op_ctx *c);
    tg_status (*kernel)(tg_op_ctx *c);    /* outputs already allocated */
    tg_status (*make_view)(tg_op_ctx *c); /* instead of kernel: views */
    tg_status (*grad)(tg_grad_ctx *g);    /* NULL: not differentiable */
} tg_op_def;

/* ---- dispatch -------------------------------------------------------------
 * Runs op on inputs: checks for NULL inputs, infers, allocates, runs the
 * kernel (or makes the view), records an autograd node when needed, and
 * publishes the outputs to the current scope. Writes n_out new references
 * to out. */
tg_status tg_op_run(const tg_op_def *op, int n_in, tg_tensor *const *in,
                    const tg_attr *attrs, int n_attrs, tg_tensor **out);
/* single-output shorthand: returns the output or NULL */
tg_tensor *tg_op_call(const tg_op_def *op, int n_in, tg_tensor *const *in,
                      const tg_attr *attrs, int n_attrs);

/* inference helpers */
tg_status tg_infer_set(tg_op_ctx *c, int i, tg_dtype dt, int ndim,
                       const int64_t *shape);
/* numpy broadcast of two shapes into out (ndim returned via *ndim_out) */
tg_status tg_broadcast_shapes(const char *op, int na, const int64_t *a,
                              int nb, const int64_t *b, int *ndim_out,
                              int64_t *out);
/* error "op: expected a floating-point input, got int32" unless float */
tg_status tg_require_float(const char *op, const tg_tensor *t, int index);

/* ---- registry: every op by name (for graphs, ONNX, tooling) ------------ */
const tg_op_def *tg_op_find(const char *name);
int tg_op_count(void);
const tg_op_def *tg_op_at(int i);

/* each family file defines a NULL-terminated table */
extern const tg_op_def *const tg_ops_elementwise[];
extern const tg_op_def *const tg_ops_unary[];
extern const tg_op_def *const tg_ops_compare[];
extern const tg_op_def *const tg_ops_reduce[];
extern const tg_op_def *const tg_ops_shape[];
extern const tg_op_def *const tg_ops_array[];
extern const tg_op_def *const tg_ops_linalg[];
extern const tg_op_def *const tg_ops_conv[];
extern const tg_op_def *const tg_ops_pool[];
extern const tg_op_def *const tg_ops_norm[];
extern const tg_op_def *const tg_ops_nn[];
extern const tg_op_def *const tg_ops_graph[]; /* src/graph/assign.c */

/* ---- internal scoping for composite ops and the engine -------------------
 * TG_LOCAL_BEGIN opens a scope; TG_LOCAL_RETURN(t) keeps t, closes the
 * scope and returns t (handed to the caller's scope or to the caller). */
#define TG_LOCAL_BEGIN() tg_scope_begin()
#define TG_LOCAL_RETURN(t)               \
    do {                                 \
        tg_tensor *tg__r = tg_keep(t);   \
        tg_scope_end();                  \
        return tg__r;                    \
    } while (0)

#endif
