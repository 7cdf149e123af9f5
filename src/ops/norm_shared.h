/* What batch_norm (norm.c) and layer_norm (layer_norm.c) share: the
 * attributes and argument lists of the fused ops, the buffers their
 * kernels work on, parameter checks, and the gradient and tangent rules
 * built around the fused backward ops (defined in norm.c). Internal. */
#ifndef TG_OPS_NORM_SHARED_H
#define TG_OPS_NORM_SHARED_H

#include "autodiff/jvp.h"
#include "ops/op.h"

/* the attributes: eps (both families) and, for layer norm, how many
 * trailing axes are normalised */
typedef struct norm_attrs {
    double eps;
    int64_t n_axes;
} norm_attrs;
static const tg_arg_spec norm_in[] = {
    {"x", TG_DTS_FLOAT}, {"weight", TG_DTS_FLOAT}, {"bias", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec norm_out[] = {
    {"y", TG_DTS_FLOAT}, {"mean", TG_DTS_FLOAT}, {"var", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec norm_grad_in[] = {
    {"x", TG_DTS_FLOAT}, {"dy", TG_DTS_FLOAT}, {"mean", TG_DTS_FLOAT}, {"var", TG_DTS_FLOAT},
    {"weight", TG_DTS_FLOAT}, {"dmean", TG_DTS_FLOAT}, {"dvar", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec norm_grad_out[] = {
    {"dx", TG_DTS_FLOAT}, {"dweight", TG_DTS_FLOAT}, {"dbias", TG_DTS_FLOAT}, {0}};

/* What every norm kernel works on, all owned: x (and for the gradient ops
 * dy, the next input) contiguous in x's dtype, contiguous float64 copies of
 * the n_p small parameter inputs after them, and a float64 buffer res for
 * results. tg__norm_io_close releases whatever tg__norm_io_open got. */
typedef struct norm_io {
    tg_tensor *x, *dy, *res, *p[5];
    int n_p;
} norm_io;

tg_status tg__norm_io_open(tg_op_ctx *c, bool with_dy, int n_p, int64_t n_res, norm_io *io);
void tg__norm_io_close(norm_io *io);
/* converts two results a kernel computed in float64 into the outputs o1 and
 * o2: they lie in buf at element 0 and at element off2, each laid out like
 * its output (contiguous) */
tg_status tg__norm_convert_pair(const tg_tensor *buf, tg_tensor *o1, tg_tensor *o2,
                                int64_t off2);
/* t (1-D or any shape) must have exactly `shape` */
tg_status tg__norm_check_param(const char *op, const char *name, const tg_tensor *t,
                               int nd, const int64_t *shape, const char *meaning,
                               const tg_tensor *x);
/* the first-order gradient, from the fused grad_op(x, dy, mean, var, weight,
 * dmean, dvar) -> dx, dweight, dbias (the composite one under create_graph) */
tg_status tg__norm_fused_rule(tg_grad_ctx *g, const tg_op_def *grad_op, const tg_attr *a,
                              int n_attrs);
/* forward mode of y = (x - mean) invstd w + b, mean and var over `axes` */
tg_status tg__norm_jvp(tg_jvp_ctx *c, int n, const int *axes, tg_tensor *mean,
                       tg_tensor *var, tg_tensor *w, tg_tensor *dw, tg_tensor *db);

#define F64(t) ((double *)tg__base(t))

#endif
