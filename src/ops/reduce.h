/* Internal interface of the reduction family: the op definition shared by
 * reduce.c, reduce_stat.c and reduce_arg.c, axis helpers, and the engine
 * (reduce_engine.c; its kernels are in kernels/cpu/reduce_kernels.c) that
 * runs any reduction over any strides, choosing row or column loops and
 * threads. */
#ifndef TG_REDUCE_H
#define TG_REDUCE_H

#include "kernels/cpu/reduce_kernels.h"
#include "ops/op.h"

/* ---- the engine ------------------------------------------------------------ */
typedef struct tg_red_spec {
    tg_red_kind kind;
    tg_red_fin fin;
    double div;
    const double *prm; /* one per output, in the output's C order; or NULL */
} tg_red_spec;

/* Reduces x over the axes marked in mask into out, a contiguous tensor of
 * the kept dims' size. out's dtype: x's for max/min (float64 allowed with
 * TG_FIN_SHIFT), int64 for argmax/argmin and for integer sum/prod, and
 * float32 or float64 for float inputs otherwise. */
tg_status tg__reduce(const tg_tensor *x, const bool *mask,
                     const tg_red_spec *spec, tg_tensor *out);

/* ---- the op definitions -------------------------------------------------- */
/* dtype rules of the reduction ops */
typedef enum tg_red_dtype {
    TG_RDT_SAME,      /* any numeric dtype, result of the same dtype */
    TG_RDT_INT64,     /* integers give int64 (sum, prod) */
    TG_RDT_FLOAT,     /* float inputs only (mean, var, std) */
    TG_RDT_TO_FLOAT,  /* integers computed in float32 (logsumexp) */
    TG_RDT_INDEX      /* int64 indices (argmax, argmin) */
} tg_red_dtype;

typedef struct tg_red_def {
    tg_op_def def;
    tg_red_dtype dtype_rule;
    bool nonempty; /* reducing over an axis of size 0 is an error */
} tg_red_def;

/* the attributes of the family, one struct for all: each op declares the
 * ones it takes (reduce.c, reduce_stat.c, reduce_arg.c) */
typedef struct tg_red_attrs {
    tg_ints axes;       /* the reduced axes; none: all */
    int64_t axis;       /* argmax, argmin: the one axis */
    bool keepdim;       /* reduced axes stay, with size 1 */
    int64_t correction; /* var, std: divide by N - correction */
    int64_t ord;        /* vector_norm: 1 or 2 */
} tg_red_attrs;
#define TG_RED_AXES_SPECS                                                    \
    TG_SPEC_INTS(tg_red_attrs, axes), TG_SPEC_BOOL(tg_red_attrs, keepdim, 0)
extern const tg_arg_spec tg_red_number_in[], tg_red_float_in[], tg_red_number_out[],
    tg_red_float_out[];

/* infer for the family's ops */
tg_status tg__red_infer(tg_op_ctx *c);
/* the axes of op context c as a mask; validated by infer */
void tg__red_mask(const tg_op_ctx *c, bool *mask);
/* the same from a gradient context, on the input's metadata */
void tg__red_grad_mask(const tg_grad_ctx *g, bool *mask);
/* the same for a JVP rule, as a list of axes (returns the count) */
int tg__red_jvp_axes(const tg_jvp_ctx *c, int *axes);
/* t (shaped like the output) in keepdim form, to broadcast against x, in
 * a JVP rule */
tg_tensor *tg__red_jvp_keep(const tg_jvp_ctx *c, tg_tensor *t, int n, const int *axes);
/* elements per output: the product of the reduced dims */
int64_t tg__red_count(int ndim, const int64_t *shape, const bool *mask);
/* t (shaped like the output) reshaped to keepdim form, so that it
 * broadcasts against the input */
tg_tensor *tg__red_keep(const tg_grad_ctx *g, tg_tensor *t);
/* t (shaped like the output) expanded back to the input's shape */
tg_tensor *tg__red_expand(const tg_grad_ctx *g, tg_tensor *t);
/* packs axes/keepdim (and an optional extra attribute) and runs op */
tg_tensor *tg__red_call(const tg_red_def *op, tg_tensor *x, int n_axes,
                        const int *axes, bool keepdim, const tg_attr *extra);

extern const tg_red_def tg_op_var, tg_op_std, tg_op_logsumexp, tg_op_vector_norm,
    tg_op_argmax, tg_op_argmin;

#endif
