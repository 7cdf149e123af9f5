/* The operator definition: everything about an op in one struct, read by
 * everyone who needs to know about ops (the dispatcher, the graph builder
 * and verifier, autodiff, the memory planner, ONNX, tooling): its inputs,
 * outputs and attribute schema, flags, shape/dtype inference, kernels per
 * device kind, and its reverse- and forward-mode rules. See "Adding an op"
 * in docs/ARCHITECTURE.md for the checklist and a worked example. */
#ifndef TG_OP_H
#define TG_OP_H

#include "core/tensor_impl.h"
#include "tg/ops.h"

#define TG_MAX_OP_INPUTS 64
#define TG_MAX_OP_OUTPUTS 32
/* bytes of an op's decoded attribute struct (the registry test checks) */
#define TG_MAX_ATTR_SIZE 256
/* kernel slots, indexed by tg_device_type (TG_CPU only so far) */
#define TG_NUM_DEVICE_TYPES 1

/* ---- attributes as given: a list of named values, typed like ONNX's ----
 * This is what callers pass, graphs store and print, and ONNX maps. An op
 * never looks attributes up in it: the dispatcher checks the list against
 * the op's schema and decodes it once into the op's own struct. */
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

/* lookups in a list, for code that reads a stored list without the op's
 * struct (ONNX export, printing); the default when absent. Ops use their
 * decoded struct instead. */
int64_t tg_attr_int(const tg_attr *a, int n, const char *name, int64_t dflt);
double tg_attr_float(const tg_attr *a, int n, const char *name, double dflt);
/* ints attribute: returns count, sets *v (NULL/0 when absent) */
int tg_attr_ints(const tg_attr *a, int n, const char *name, const int64_t **v);
/* deep copy into one malloc'd block (for nodes); NULL when n == 0 */
tg_attr *tg_attrs_copy(const tg_attr *a, int n);

/* ---- the attribute schema ------------------------------------------------
 * An op with attributes declares a struct and one spec per field, e.g.
 *
 *     typedef struct elu_attrs { double a; } elu_attrs;
 *     static const tg_attr_spec elu_specs[] = {
 *         TG_SPEC_FLOAT(elu_attrs, a, 1.0), {0}};
 *     ... .attrs = {elu_specs, sizeof(elu_attrs)}, ...
 *
 * The attribute's name is the field's name; the macros check at compile
 * time that the field has the C type the spec decodes into. infer, the
 * kernels and the rules read `const elu_attrs *a = c->attr`. */
typedef struct tg_ints {
    const int64_t *v; /* points into the attribute list it was decoded from */
    int n;
} tg_ints;

typedef enum tg_attr_field {
    TG_FIELD_INT,       /* int64_t, from an int */
    TG_FIELD_BOOL,      /* bool, from an int (non-zero is true) */
    TG_FIELD_FLOAT,     /* double, from a float */
    TG_FIELD_STRING,    /* const char *, from a string */
    TG_FIELD_INTS,      /* tg_ints, from ints of any count (default: none) */
    TG_FIELD_INT_ARRAY, /* int64_t[count], from exactly `count` ints */
    TG_FIELD_TENSOR,    /* tg_tensor *, from a tensor */
    TG_FIELD_GRAPH      /* struct tg_graph *, from a graph (control flow bodies) */
} tg_attr_field;

typedef struct tg_attr_spec {
    const char *name; /* NULL ends a spec list */
    tg_attr_type type;
    tg_attr_field field;
    size_t offset;   /* of the field in the op's struct */
    int count;       /* TG_FIELD_INT_ARRAY: its length */
    bool required;   /* no default: absence is an error */
    bool has_min, has_max;
    int64_t min, max; /* int, int array and ints values: each within */
    /* defaults */
    int64_t i;
    double f;
    const char *s;
    const int64_t *ints; /* TG_FIELD_INT_ARRAY: `count` values */
} tg_attr_spec;

/* the byte offset of S.F, and a compile error unless `ok` (a _Generic
 * over the type of S.F) holds */
#define TG__SPEC_OFF(S, F, ok) (offsetof(S, F) + 0 * sizeof(char[(ok) ? 1 : -1]))
#define TG__IS(S, F, T) _Generic(((S *)0)->F, T: 1, default: 0)
#define TG_SPEC_INT(S, F, dflt, ...)                                            \
    {.name = #F, .type = TG_ATTR_INT, .field = TG_FIELD_INT,                    \
     .offset = TG__SPEC_OFF(S, F, TG__IS(S, F, int64_t)), .i = (dflt), __VA_ARGS__}
#define TG_SPEC_BOOL(S, F, dflt)                                                \
    {.name = #F, .type = TG_ATTR_INT, .field = TG_FIELD_BOOL,                   \
     .offset = TG__SPEC_OFF(S, F, TG__IS(S, F, bool)), .i = (dflt)}
#define TG_SPEC_FLOAT(S, F, dflt, ...)                                          \
    {.name = #F, .type = TG_ATTR_FLOAT, .field = TG_FIELD_FLOAT,                \
     .offset = TG__SPEC_OFF(S, F, TG__IS(S, F, double)), .f = (dflt), __VA_ARGS__}
#define TG_SPEC_INTS(S, F, ...)                                                 \
    {.name = #F, .type = TG_ATTR_INTS, .field = TG_FIELD_INTS,                  \
     .offset = TG__SPEC_OFF(S, F, TG__IS(S, F, tg_ints)), __VA_ARGS__}
/* int64_t F[N] in S; the default is N values, e.g. (const int64_t[]){1, 1},
 * or NULL with TG_REQUIRED */
#define TG_SPEC_INT_ARRAY(S, F, dflt, ...)                                      \
    {.name = #F, .type = TG_ATTR_INTS, .field = TG_FIELD_INT_ARRAY,             \
     .offset = TG__SPEC_OFF(S, F, _Generic(&((S *)0)->F,                        \
         int64_t(*)[sizeof(((S *)0)->F) / sizeof(int64_t)]: 1, default: 0)),    \
     .count = (int)(sizeof(((S *)0)->F) / sizeof(int64_t)), .ints = (dflt), __VA_ARGS__}
/* the first N elements of int64_t F[M] in S (N <= M): one struct for
 * ops of several ranks (pooling, convolution), each op's spec saying how
 * many values it takes */
#define TG_SPEC_INT_ARRAY_N(S, F, N, dflt, ...)                                 \
    {.name = #F, .type = TG_ATTR_INTS, .field = TG_FIELD_INT_ARRAY,             \
     .offset = TG__SPEC_OFF(S, F, TG__IS(S, F[0], int64_t) &&                   \
                                      (N) <= sizeof(((S *)0)->F) / sizeof(int64_t)), \
     .count = (N), .ints = (dflt), __VA_ARGS__}
#define TG_SPEC_TENSOR(S, F, ...)                                               \
    {.name = #F, .type = TG_ATTR_TENSOR, .field = TG_FIELD_TENSOR,              \
     .offset = TG__SPEC_OFF(S, F, TG__IS(S, F, tg_tensor *)), __VA_ARGS__}
#define TG_SPEC_GRAPH(S, F, ...)                                                \
    {.name = #F, .type = TG_ATTR_GRAPH, .field = TG_FIELD_GRAPH,                \
     .offset = TG__SPEC_OFF(S, F, TG__IS(S, F, struct tg_graph *)), __VA_ARGS__}
/* constraints, as extra arguments of the macros above */
#define TG_REQUIRED .required = true
#define TG_MIN(v) .has_min = true, .min = (v)
#define TG_RANGE(lo, hi) .has_min = true, .min = (lo), .has_max = true, .max = (hi)

typedef struct tg_attr_schema {
    const tg_attr_spec *specs; /* NULL: the op takes no attributes */
    size_t size;               /* of the decoded struct */
} tg_attr_schema;

/* ---- inputs and outputs: names and the dtypes they may have ------------- */
#define TG_DT(d) (1u << (d))
#define TG_DTS_FLOAT (TG_DT(TG_FLOAT32) | TG_DT(TG_FLOAT64))
#define TG_DTS_INDEX (TG_DT(TG_INT32) | TG_DT(TG_INT64))
#define TG_DTS_INT (TG_DTS_INDEX | TG_DT(TG_UINT8))
#define TG_DTS_NUMBER (TG_DTS_FLOAT | TG_DTS_INT)
#define TG_DTS_BOOL TG_DT(TG_BOOL)
#define TG_DTS_ANY (TG_DTS_NUMBER | TG_DTS_BOOL)

/* with the dtypes of an input: it may be left out (a trailing input); it
 * is one or more (the last input); its gradient is zero by definition, so
 * the rule gives none (where's condition, relu_grad's y). Any other input
 * that needs a gradient and gets none from the rule is an error. */
#define TG_ARG_OPTIONAL (1u << 30)
#define TG_ARG_VARIADIC (1u << 31)
#define TG_ARG_NO_GRAD (1u << 29)
#define TG_ARG_FLAGS (TG_ARG_OPTIONAL | TG_ARG_VARIADIC | TG_ARG_NO_GRAD)

typedef struct tg_arg_spec {
    const char *name; /* NULL ends the list */
    uint32_t dtypes;  /* TG_DT() bits, and TG_ARG_* */
} tg_arg_spec;

/* the spec of input i of a list (the last repeats when variadic), or NULL */
const tg_arg_spec *tg_arg_at(const tg_arg_spec *list, int i);

/* ---- flags the passes read ------------------------------------------------ */
enum {
    /* effects: every op has exactly one of these three */
    TG_OP_PURE = 1u << 0,         /* outputs depend on inputs and attributes only */
    TG_OP_SIDE_EFFECTS = 1u << 1, /* writes state besides its outputs (assign) */
    TG_OP_RANDOM = 1u << 2,       /* draws from a generator */
    /* output element i depends on the input elements at i only (after
     * broadcasting) */
    TG_OP_ELEMENTWISE = 1u << 3,
    TG_OP_COMMUTATIVE = 1u << 4, /* op(a, b) == op(b, a) */
    TG_OP_VIEW = 1u << 5,        /* its output aliases input 0 (make_view) */
    /* differentiable in principle, but no rule yet: backward / forward
     * mode through it fails cleanly (an explicit mark, so that a missing
     * rule is a decision the registry test can see) */
    TG_OP_NO_VJP = 1u << 6,
    TG_OP_NO_JVP = 1u << 7,
    /* writes input 0 and returns that same tensor (copy_, add_): eager
     * only, never a graph node; recorded by autograd like any op, the
     * destination's history going on through it */
    TG_OP_INPLACE = 1u << 8,
    /* an output's shape may be known only once the kernel ran (a loop
     * variable whose dims change): at run time, outputs whose shapes the
     * inference on the actual inputs leaves unknown are passed to the
     * kernel as NULL and the kernel makes them (control flow) */
    TG_OP_SHAPES_AT_RUN = 1u << 9,
    /* each saved input is read only by the other inputs' gradients (mul:
     * da = dy * b, db = dy * a): autograd saves input i only when another
     * input requires grad, as PyTorch's mul does, so modifying a tensor in
     * place after multiplying it by a constant leaves backward valid */
    TG_OP_SAVES_FOR_OTHERS = 1u << 10,
    /* its inference takes unknown dims (-1) itself: graph code calls it
     * as it is instead of probing them (infer_unknown.c), so that an
     * unknown dim may meet a known one (append_row's first row) */
    TG_OP_INFERS_UNKNOWN = 1u << 11,
};
/* the kernel may write output 0 over input i (same dtype and shape): it
 * reads each element of input i before writing the same index of the
 * output, and uses no scratch in the output */
#define TG_INPLACE_OK(i) (1u << (16 + (i)))
#define TG_INPLACE_INPUTS(flags) ((flags) >> 16)

/* ---- metadata of a value (what inference computes) --------------------- */
typedef struct tg_meta {
    tg_dtype dtype;
    int ndim;
    int64_t shape[TG_MAX_DIMS];
} tg_meta;

void tg_meta_of(const tg_tensor *t, tg_meta *m);

/* ---- contexts ------------------------------------------------------------
 * Each carries the attributes twice: `attr`, the op's decoded struct
 * (what op code reads), and the list it came from (`attrs`, `n_attrs`:
 * what an op passes on when it calls itself or a sibling with the same
 * schema). */
struct tg_op_def;

/* passed to infer, kernel and make_view */
typedef struct tg_op_ctx {
    const struct tg_op_def *op;
    int n_in, n_out;
    tg_tensor *const *in;
    tg_tensor **out;                    /* kernel: allocated outputs */
    tg_meta out_meta[TG_MAX_OP_OUTPUTS]; /* infer writes these */
    const void *attr;                   /* the decoded struct */
    const tg_attr *attrs;
    int n_attrs;
} tg_op_ctx;

/* passed to a gradient rule (a vector-Jacobian product). dy[i] is never
 * NULL for a floating-point output (zeros are filled in); it is NULL for
 * an integer or bool output, which carries no gradient.
 * The rule sets dx[i] for inputs with needs_grad[i] using public tg ops;
 * tensors it creates are released by the engine's scope, dx excepted. A
 * dx[i] left NULL for an input that needs it is an error naming the op
 * (an op inside the rule failed), unless the rule returned an error. */
typedef struct tg_grad_ctx {
    const struct tg_op_def *op;
    int n_in, n_out;
    tg_tensor *const *in;  /* saved inputs; NULL when not saved */
    tg_tensor *const *out; /* saved outputs; NULL when not saved */
    const tg_meta *in_meta;
    tg_tensor *const *dy;
    tg_tensor **dx;
    const bool *needs_grad;
    const void *attr;
    const tg_attr *attrs;
    int n_attrs;
} tg_grad_ctx;

/* Passed to a forward-mode (JVP) rule. dx[i] is the tangent of input i
 * (NULL: zero; at least one is not NULL), of the input's shape and dtype.
 * The rule sets dy[o] (NULL: zero) with public tg ops only, so that it
 * runs inside a graph scope (appending the tangent nodes) or eagerly. All
 * inputs and outputs are given (symbolic in a graph). Tensors the rule
 * makes are released by the runner's scope, dy excepted; dy may be an
 * input tangent itself. A rule returns TG_OK or the status of a failed
 * op (helpers in autodiff/jvp.h). */
typedef struct tg_jvp_ctx {
    const struct tg_op_def *op;
    const char *name; /* the node, for messages */
    int n_in, n_out;
    tg_tensor *const *in;
    tg_tensor *const *out;
    const tg_meta *in_meta, *out_meta;
    tg_tensor *const *dx;
    tg_tensor **dy;
    const void *attr;
    const tg_attr *attrs;
    int n_attrs;
} tg_jvp_ctx;

/* The derivative of a unary elementwise op, as a product: t * f'(x),
 * written with public ops. x and y are the op's input and output (in
 * reverse mode, NULL unless the op saves them). One function gives both
 * rules: the VJP is deriv(dy, ...), the JVP deriv(tangent, ...). */
typedef tg_tensor *(*tg_deriv_fn)(tg_tensor *t, tg_tensor *x, tg_tensor *y,
                                  const void *attr);
/* the deriv of piecewise-constant ops (floor, sign): zero everywhere */
tg_tensor *tg__deriv_zero(tg_tensor *t, tg_tensor *x, tg_tensor *y, const void *attr);

#define TG_SAVE_ALL 0xffffffffu

typedef struct tg_op_def {
    const char *name;
    int n_in;  /* -1: variadic or optional inputs (see `inputs`) */
    int n_out; /* -1: counted from the attributes by count_out */
    const tg_arg_spec *inputs;  /* names and dtypes, NULL-terminated */
    const tg_arg_spec *outputs;
    tg_attr_schema attrs;
    uint32_t flags;        /* TG_OP_*, TG_INPLACE_OK(i) */
    bool nondiff;          /* outputs never require grad (eq, argmax...) */
    uint32_t save_inputs;  /* bit i: input i is saved for the gradient */
    uint32_t save_outputs; /* bit i: output i is saved */
    tg_status (*infer)(tg_op_ctx *c);
    /* fill the outputs the dispatcher allocated, per device kind */
    tg_status (*kernel[TG_NUM_DEVICE_TYPES])(tg_op_ctx *c);
    tg_status (*make_view)(tg_op_ctx *c); /* instead of kernel: views */
    /* autodiff: unary elementwise ops give `deriv`, others `grad` (the
     * VJP) and `jvp`; missing ones are marked TG_OP_NO_VJP / NO_JVP */
    tg_deriv_fn deriv;
    tg_status (*grad)(tg_grad_ctx *g);
    tg_status (*jvp)(tg_jvp_ctx *c);
    /* the ONNX operator this op is, where one is (NULL otherwise), and
     * the opset version that defined the semantics matched */
    struct {
        const char *op;
        int opset;
    } onnx;
    /* n_out == -1 (control flow: as many outputs as the body has results):
     * the count, from the attribute list as given (before decoding);
     * -1 with an error when the list does not say */
    int (*count_out)(const tg_attr *attrs, int n_attrs);
} tg_op_def;

/* the number of outputs of an application of op with these attributes */
static inline int tg_op_n_out(const tg_op_def *op, const tg_attr *attrs, int n_attrs)
{
    return op->n_out >= 0 ? op->n_out : op->count_out(attrs, n_attrs);
}

/* does the op have a reverse / forward rule (its own or from deriv)? */
static inline bool tg_op_has_vjp(const tg_op_def *op) { return op->grad || op->deriv; }
static inline bool tg_op_has_jvp(const tg_op_def *op) { return op->jvp || op->deriv; }

/* ---- decoding attributes --------------------------------------------------
 * Checks the list against op's schema and writes op's struct to dst
 * (op->attrs.size bytes): defaults for absent attributes; errors naming
 * the op for unknown, repeated, mistyped, missing or out-of-range ones.
 * Ints, strings and tensors in dst point into the list, which must
 * outlive dst. */
tg_status tg_attrs_decode(const tg_op_def *op, const tg_attr *attrs, int n, void *dst);
/* a node's decoded struct: malloc'd and decoded from the node's own copy
 * of the list (already checked when the op ran); NULL when the op has no
 * attributes or on failure (then *s is set) */
void *tg__attrs_decode_copy(const tg_op_def *op, const tg_attr *copy, int n,
                            tg_status *s);

/* ---- dispatch -------------------------------------------------------------
 * Runs op on inputs: checks for NULL inputs, decodes the attributes,
 * infers, allocates, runs the kernel (or makes the view), records an
 * autograd node when needed, and publishes the outputs to the current
 * scope. Writes n_out new references to out. */
tg_status tg_op_run(const tg_op_def *op, int n_in, tg_tensor *const *in,
                    const tg_attr *attrs, int n_attrs, tg_tensor **out);
/* single-output shorthand: returns the output or NULL */
tg_tensor *tg_op_call(const tg_op_def *op, int n_in, tg_tensor *const *in,
                      const tg_attr *attrs, int n_attrs);
/* runs the op's kernel for the device of its outputs (CPU so far) on an
 * inferred context with allocated outputs; an op without a kernel for
 * that device kind fails with TG_ERR_UNSUPPORTED */
tg_status tg_op_kernel_run(tg_op_ctx *c);
/* s, given a message naming op when it is an error and none was recorded
 * since tg__error_count() was errors: a kernel that returns
 * TG_ERR_NOMEM from a failed allocation need not say so itself */
tg_status tg__said_why(const tg_op_def *op, tg_status s, uint64_t errors);

/* inference helpers */
tg_status tg_infer_set(tg_op_ctx *c, int i, tg_dtype dt, int ndim,
                       const int64_t *shape);
/* numpy broadcast of two shapes into out (ndim returned via *ndim_out) */
tg_status tg_broadcast_shapes(const char *op, int na, const int64_t *a,
                              int nb, const int64_t *b, int *ndim_out,
                              int64_t *out);
/* error "op: expected a floating-point input, got int32" unless float */
tg_status tg_require_float(const char *op, const tg_tensor *t, int index);

/* Unknown dims (-1) of symbolic tensors (graph mode): inference runs the
 * op's infer twice with the unknown dims probed at two sizes; output dims
 * that differ are unknown (src/ops/infer_unknown.c) */
bool tg__shape_has_unknown(int ndim, const int64_t *shape);
bool tg__inputs_have_unknown(int n_in, tg_tensor *const *in);
tg_status tg__infer_unknown(tg_op_ctx *c);
/* the op's infer, or tg__infer_unknown when an input has unknown dims
 * (graph code re-inferring from stored metadata) */
tg_status tg__infer_any(tg_op_ctx *c);

/* ---- registry: every op by name (for graphs, ONNX, tooling) ------------ */
const tg_op_def *tg_op_find(const char *name);
int tg_op_count(void);
const tg_op_def *tg_op_at(int i);

/* each family file defines a NULL-terminated table */
extern const tg_op_def *const tg_ops_elementwise[];
extern const tg_op_def *const tg_ops_unary[];
extern const tg_op_def *const tg_ops_unary_math[]; /* unary_math.c: tan ... square */
extern const tg_op_def *const tg_ops_unary_act[];  /* unary_act.c: silu ... threshold */
extern const tg_op_def *const tg_ops_act_grad[];   /* act_grad.c: gelu_grad */
extern const tg_op_def *const tg_ops_softmax_grad[]; /* softmax_grad.c */
extern const tg_op_def *const tg_ops_compare[];
extern const tg_op_def *const tg_ops_reduce[];
extern const tg_op_def *const tg_ops_shape[];
extern const tg_op_def *const tg_ops_array[];
extern const tg_op_def *const tg_ops_linalg[];
extern const tg_op_def *const tg_ops_conv[];
extern const tg_op_def *const tg_ops_pool[];
extern const tg_op_def *const tg_ops_norm[];
extern const tg_op_def *const tg_ops_nn[];
extern const tg_op_def *const tg_ops_inplace[];
extern const tg_op_def *const tg_ops_scan[];  /* scan.c: cumsum */
extern const tg_op_def *const tg_ops_range[]; /* range.c */
extern const tg_op_def *const tg_ops_sort[];  /* sort.c: topk */
extern const tg_op_def *const tg_ops_trilu[]; /* trilu.c: tril, triu */
extern const tg_op_def *const tg_ops_fpclass[]; /* fpclass.c: isnan, isinf */
extern const tg_op_def *const tg_ops_scatter[]; /* scatter.c: scatter */
extern const tg_op_def *const tg_ops_graph[]; /* src/graph/assign.c */
extern const tg_op_def *const tg_ops_fused[]; /* src/ops/fused.c */
extern const tg_op_def *const tg_ops_pool_compact[]; /* pool_compact.c: level 2 */
extern const tg_op_def *const tg_ops_dynamic[];
extern const tg_op_def *const tg_ops_random[]; /* src/graph/random.c */
extern const tg_op_def *const tg_ops_diagonal[]; /* diagonal.c: diagonal, its gradient */
extern const tg_op_def *const tg_ops_as_strided[]; /* as_strided.c: the view, its gradient */
extern const tg_op_def *const tg_ops_nonzero[]; /* nonzero.c: coordinates, count at run time */
extern const tg_op_def *const tg_ops_slice_by[]; /* slice_by.c: bounds as tensors, its gradient */
extern const tg_op_def *const tg_ops_shape_of[]; /* shape_of.c: a shape as an int64 tensor */
extern const tg_op_def *const tg_ops_full_by[]; /* full_by.c: a full tensor of a shape given as values */
extern const tg_op_def *const tg_ops_append_row[]; /* append_row.c: a list growing by a row */
extern const tg_op_def *const tg_ops_expand_by[]; /* expand_by.c: expand_by, tile_by, gradients */
extern const tg_op_def *const tg_ops_unique[]; /* unique.c: distinct slices, count at run time */
extern const tg_op_def *const tg_ops_reshape_by[]; /* reshape_by.c: ONNX Reshape on a tensor target */
extern const tg_op_def *const tg_ops_grad_link[]; /* grad_link.c: a gradient's zero-slope tie to x */
/* v, tied to x (grad_link) when a gradient is being recorded, x requires
 * grad and v does not: the rules of ops whose PyTorch backward is an op of
 * the forward's input (hardtanh_backward(grad, self)) return their
 * gradients through it, so that these require grad under create_graph as
 * PyTorch's do and give x a zero second derivative (grad_link.c) */
tg_tensor *tg__grad_of_input(tg_tensor *v, tg_tensor *x);
extern const tg_op_def *const tg_ops_nms[]; /* nms.c: non_max_suppression, count at run time */
extern const tg_op_def tg_op_non_max_suppression;
extern const tg_op_def *const tg_ops_control[]; /* src/control/ops.c: cond, while_loop */
extern const tg_op_def *const tg_ops_sendrecv[]; /* sendrecv.c: send, recv */

/* a random op's generator state input (its last, which its kernel
 * advances in place), or -1 for other ops */
static inline int tg_op_state_input(const tg_op_def *op, int n_in)
{
    return (op->flags & TG_OP_RANDOM) ? n_in - 1 : -1;
}

/* shape-dependent helpers for unknown dims (src/ops/dynamic.c): x
 * broadcast to ref's shape; x * (alpha / n) (bessel: alpha * n / (n - 1))
 * with n the element count of ref over axes (all when n_axes is 0) */
tg_tensor *tg__expand_as(tg_tensor *x, tg_tensor *ref);
/* value in dtype dt, of the shape held by the int64 1-D tensor `shape`;
 * in a graph, where shape has no data, the dims are `hint` (-1: unknown
 * until the graph runs; n_hint 0: all unknown) (src/ops/full_by.c) */
tg_tensor *tg__full_by(tg_tensor *shape, tg_dtype dt, double value, int n_hint,
                       const int64_t *hint);
/* the inference of ops whose output 0 (dtype dt) has the shape held by the
 * int64 1-D input s: its values where s has data, else hint's dims (-1, or
 * all when hint is empty: known when the graph runs) (src/ops/full_by.c) */
tg_status tg__infer_by_shape(tg_op_ctx *c, const tg_tensor *s, const tg_ints *hint,
                             tg_dtype dt);
/* output 0 of dtype dt and shape [nd]: set as tg_infer_set does where every
 * dim is known, else kept open (-1 dims: the executor infers them when the
 * graph runs) (src/ops/full_by.c) */
tg_status tg__infer_set_open(tg_op_ctx *c, tg_dtype dt, int nd, const int64_t *shape);
/* U(a, b) (normal: N(a, b^2)) draws of dtype dt shaped like x, from gen:
 * eagerly tg_rand_uniform's (tg_rand_normal's) numbers; in a graph a node
 * drawing at every run, x's unknown dims read then (src/graph/random.c) */
tg_tensor *tg__rand_like(tg_tensor *x, tg_generator *gen, tg_dtype dt, bool normal, double a,
                         double b);
/* tg_expand_by / tg_tile_by with the dims the caller knows where the
 * shape or repeats have no data (a graph's value): hint[i] the value,
 * -1 where unknown until the graph runs; n_hint 0: none (expand_by.c) */
tg_tensor *tg__expand_by(tg_tensor *x, tg_tensor *shape, int n_hint, const int64_t *hint);
tg_tensor *tg__tile_by(tg_tensor *x, tg_tensor *repeats, int n_hint, const int64_t *hint);
/* ONNX Reshape-14 of x to the int64 1-D `shape` (0 copies x's dim unless
 * allowzero, one -1 inferred); in a graph, where shape has no data, its
 * values are `hint` (INT64_MIN where unknown until the graph runs;
 * n_hint 0: all unknown) (src/ops/reshape_by.c) */
tg_tensor *tg__reshape_by(tg_tensor *x, tg_tensor *shape, bool allowzero, int n_hint,
                          const int64_t *hint);
/* out[0..3) = the first occurrence of each distinct slice of x along
 * axis, each slice's unique's position, the counts (int64; sorted, else
 * in order of first occurrence); their length is unknown in a graph
 * until it runs (src/ops/unique.c) */
tg_status tg__unique(tg_tensor *x, int axis, bool sorted, tg_tensor **out);
/* acc [r, d...] with elem [d...] as row r; an acc without rows takes its
 * other dims from elem (src/ops/append_row.c) */
tg_tensor *tg__append_row(tg_tensor *acc, tg_tensor *elem);
tg_tensor *tg__count_scale(tg_tensor *x, tg_tensor *ref, int n_axes, const int *axes,
                           double alpha, bool bessel);
/* x / numel(ref) in x's dtype, the count read when the graph runs (the
 * losses' mean with an unknown batch: the bits of tg_div by the count) */
tg_tensor *tg__count_divide(tg_tensor *x, tg_tensor *ref);

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
