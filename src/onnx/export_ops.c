/* ONNX export, one writer per ONNX operator: which ONNX operator a graph
 * node becomes comes from its op definition (tg_op_def.onnx); the writer
 * translates the attributes and makes constant inputs initializers. Ops
 * without an ONNX operator of their own (at the export opset) are written
 * as several: ne here, the others in export_composite.c. */
#include "onnx/export.h"

#include <stdlib.h>
#include <string.h>


/* an ints attribute of the node, or the default its op's schema gives an
 * int array left out of the call (conv2d's stride, padding, dilation) */
static int aints(const exnode *x, const char *name, const int64_t **v)
{
    int n = tg_attr_ints(x->n->attrs, x->n->n_attrs, name, v);
    for (const tg_attr_spec *p = x->n->op->attrs.specs; !*v && p && p->name; p++)
        if (!strcmp(p->name, name) && p->field == TG_FIELD_INT_ARRAY && p->ints) {
            *v = p->ints;
            n = p->count;
        }
    return n;
}

/* one ONNX node with the tg node's inputs (first n_in) and output 0. A
 * float function of an integer (tan, sin, celu... compute in float32)
 * gets its input cast first: ONNX's operators take floats only. */
static onnx_node *simple(ex *e, const exnode *x, const char *op, int n_in)
{
    tg_dtype dt = x->out_meta->dtype;
    char *cast = NULL;
    if (n_in == 1 && tg_dtype_is_float(dt) && !tg_dtype_is_float(x->in_meta[0]->dtype))
        cast = (char *)onnx_ex_input_as(e, x, 0, dt);
    const char *in1[1] = {cast};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, n_in, cast ? in1 : x->in, 1, x->out);
    free(cast);
    return n;
}

/* ONNX wants equal input types: both inputs in dt */
static tg_status binary_in(ex *e, const exnode *x, const char *op, tg_dtype dt)
{
    char *a = (char *)onnx_ex_input_as(e, x, 0, dt), *b = (char *)onnx_ex_input_as(e, x, 1, dt);
    const char *in[2] = {a, b};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, 2, in, 1, x->out);
    if (a != x->in[0])
        free(a);
    if (b != x->in[1])
        free(b);
    return e->err;
}

/* ==== the writers: one per ONNX operator (or family) ====================== */

/* the op's inputs and output as they are */
static tg_status ex_simple(ex *e, const exnode *x, const char *op)
{
    simple(e, x, op, x->n->n_in);
    return e->err;
}

/* arithmetic and logic: the inputs in the output's type */
static tg_status ex_binary(ex *e, const exnode *x, const char *op)
{
    return binary_in(e, x, op, x->out_meta->dtype);
}

/* fmod: Mod with fmod=1; remainder: Mod with fmod=0, which ONNX defines
 * for integers only (floating-point remainder has no ONNX operator) */
static tg_status ex_mod(ex *e, const exnode *x, const char *op)
{
    tg_dtype dt = x->out_meta->dtype;
    bool c_sign = !strcmp(x->n->op->name, "fmod");
    if (!c_sign && tg_dtype_is_float(dt))
        return onnx_ex_fail(e, TG_ERR_UNSUPPORTED, "remainder of %s tensors (node '%s') has "
                            "no ONNX operator: Mod with fmod=0 takes integers only",
                            tg_dtype_name(dt), x->n->name);
    char *a = (char *)onnx_ex_input_as(e, x, 0, dt), *b = (char *)onnx_ex_input_as(e, x, 1, dt);
    const char *in[2] = {a, b};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n) {
        onnx_ex_io(e, n, 2, in, 1, x->out);
        onnx_ex_attr_int(e, n, "fmod", c_sign);
    }
    if (a != x->in[0])
        free(a);
    if (b != x->in[1])
        free(b);
    return e->err;
}

/* comparisons: the inputs in their promoted type */
static tg_status ex_compare(ex *e, const exnode *x, const char *op)
{
    return binary_in(e, x, op, tg_promote_types(x->in_meta[0]->dtype, x->in_meta[1]->dtype));
}

/* ONNX reductions keep the input type (tg sums integers as int64): cast
 * after. ReduceSum takes its axes as an input (opset 13), the others as an
 * attribute (until opset 18). */
static tg_status reduce(ex *e, const exnode *x, const char *op, bool axes_input)
{
    const int64_t *ax;
    int na = aints(x, "axes", &ax);
    int keep = (int)onnx_ex_aint(x, "keepdim", 0);
    tg_dtype in_dt = x->in_meta[0]->dtype, out_dt = x->out_meta->dtype;
    bool cast = in_dt != out_dt;
    char *mid = cast ? onnx_ex_aux_name(e, x->n->name) : NULL;
    const char *outs[1] = {cast ? mid : x->out[0]};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    char *axes = NULL;
    if (n && axes_input && na > 0) {
        axes = onnx_ex_init_ints(e, "axes", na, ax, false);
        const char *in[2] = {x->in[0], axes};
        onnx_ex_io(e, n, 2, in, 1, outs);
    } else if (n) {
        onnx_ex_io(e, n, 1, x->in, 1, outs);
        if (na > 0)
            onnx_ex_attr_ints(e, n, "axes", na, ax);
    }
    onnx_ex_attr_int(e, n, "keepdims", keep);
    if (cast) {
        onnx_node *c = onnx_ex_node(e, "Cast", mid);
        if (c) {
            onnx_ex_io(e, c, 1, outs, 1, x->out);
            onnx_ex_attr_int(e, c, "to", onnx_dtype_from_tg(out_dt));
        }
    }
    free(mid);
    free(axes);
    return e->err;
}

static tg_status ex_reduce_sum(ex *e, const exnode *x, const char *op)
{
    return reduce(e, x, op, true);
}

static tg_status ex_reduce_attr(ex *e, const exnode *x, const char *op)
{
    return reduce(e, x, op, false);
}

/* vector_norm: ReduceL1 or ReduceL2 by its ord */
static tg_status ex_norm(ex *e, const exnode *x, const char *op)
{
    (void)op;
    return reduce(e, x, onnx_ex_aint(x, "ord", 2) == 1 ? "ReduceL1" : "ReduceL2", false);
}

/* CumSum: the axis as an int64 scalar initializer; integer inputs cast
 * to int64 first (ONNX keeps the input type, tg sums integers as int64) */
static tg_status ex_cumsum(ex *e, const exnode *x, const char *op)
{
    int64_t axis = onnx_ex_aint(x, "axis", 0);
    char *ax = onnx_ex_init_ints(e, "axis", 1, &axis, true);
    char *src = (char *)onnx_ex_input_as(e, x, 0, x->out_meta->dtype);
    const char *in[2] = {src, ax};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n) {
        onnx_ex_io(e, n, 2, in, 1, x->out);
        onnx_ex_attr_int(e, n, "exclusive", onnx_ex_aint(x, "exclusive", 0));
        onnx_ex_attr_int(e, n, "reverse", onnx_ex_aint(x, "reverse", 0));
    }
    if (src != x->in[0])
        free(src);
    free(ax);
    return e->err;
}

/* Range: its bounds as scalar initializers of the output's type; range_by
 * has them as inputs already */
static tg_status ex_range(ex *e, const exnode *x, const char *op)
{
    if (x->n->n_in == 3)
        return ex_simple(e, x, op);
    static const char *const names[3] = {"start", "limit", "delta"};
    char *in[3];
    for (int i = 0; i < 3; i++)
        in[i] = onnx_ex_init_scalar(e, names[i], x->out_meta->dtype,
                                    onnx_ex_afloat(x, names[i], i == 2 ? 1 : 0));
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, 3, (const char *const *)in, 1, x->out);
    for (int i = 0; i < 3; i++)
        free(in[i]);
    return e->err;
}

/* TopK: K as an int64 [1] initializer; values and indices */
static tg_status ex_topk(ex *e, const exnode *x, const char *op)
{
    int64_t k = onnx_ex_aint(x, "k", 0);
    if (k < 0) { /* the whole axis (sort): its length */
        int r = x->out_meta->ndim;
        int64_t ax = onnx_ex_aint(x, "axis", -1);
        k = r ? x->out_meta->shape[ax < 0 ? ax + r : ax] : 1;
        if (k < 0)
            return onnx_ex_fail(e, TG_ERR_UNSUPPORTED, "sort (node '%s') over an axis whose "
                                "length is known only when the graph runs has no ONNX form "
                                "here", x->n->name);
    }
    char *kn = onnx_ex_init_ints(e, "K", 1, &k, false);
    const char *in[2] = {x->in[0], kn};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n) {
        onnx_ex_io(e, n, 2, in, 2, x->out);
        onnx_ex_attr_int(e, n, "axis", onnx_ex_aint(x, "axis", -1));
        onnx_ex_attr_int(e, n, "largest", onnx_ex_aint(x, "largest", 1));
        onnx_ex_attr_int(e, n, "sorted", 1);
    }
    free(kn);
    return e->err;
}

static tg_status ex_leaky_relu(ex *e, const exnode *x, const char *op)
{
    onnx_ex_attr_float(e, simple(e, x, op, 1), "alpha", onnx_ex_afloat(x, "a", 0.01));
    return e->err;
}

/* Elu and Celu: alpha is the op's attribute a, default 1 */
static tg_status ex_alpha1(ex *e, const exnode *x, const char *op)
{
    onnx_ex_attr_float(e, simple(e, x, op, 1), "alpha", onnx_ex_afloat(x, "a", 1.0));
    return e->err;
}

static tg_status ex_hardsigmoid(ex *e, const exnode *x, const char *op)
{
    onnx_node *n = simple(e, x, op, 1);
    onnx_ex_attr_float(e, n, "alpha", onnx_ex_afloat(x, "a", 1.0 / 6));
    onnx_ex_attr_float(e, n, "beta", onnx_ex_afloat(x, "b", 0.5));
    return e->err;
}

static tg_status ex_selu(ex *e, const exnode *x, const char *op)
{
    onnx_node *n = simple(e, x, op, 1);
    onnx_ex_attr_float(e, n, "alpha", onnx_ex_afloat(x, "a", 1.6732632423543772848170429916717));
    onnx_ex_attr_float(e, n, "gamma", onnx_ex_afloat(x, "b", 1.0507009873554804934193349852946));
    return e->err;
}

static tg_status ex_shrink(ex *e, const exnode *x, const char *op)
{
    onnx_node *n = simple(e, x, op, 1);
    onnx_ex_attr_float(e, n, "lambd", onnx_ex_afloat(x, "a", 0.5));
    onnx_ex_attr_float(e, n, "bias", onnx_ex_afloat(x, "b", 0.0));
    return e->err;
}

/* threshold(x, th, 0) of floats is ThresholdedRelu(alpha th); other
 * values (or integers, which ThresholdedRelu does not take) are
 * Where(LessOrEqual(x, th), value, x) */
static tg_status ex_threshold(ex *e, const exnode *x, const char *op)
{
    tg_dtype dt = x->in_meta[0]->dtype;
    double th = onnx_ex_afloat(x, "a", 0), value = onnx_ex_afloat(x, "b", 0);
    if (value == 0 && tg_dtype_is_float(dt)) {
        onnx_ex_attr_float(e, simple(e, x, op, 1), "alpha", th);
        return e->err;
    }
    char *thn = onnx_ex_init_scalar(e, "threshold", dt, th);
    char *vn = onnx_ex_init_scalar(e, "value", dt, value);
    char *le = onnx_ex_aux_name(e, x->n->name);
    const char *in_le[2] = {x->in[0], thn}, *in_w[3] = {le, vn, x->in[0]};
    const char *out_le[1] = {le};
    onnx_node *n;
    if ((n = onnx_ex_node(e, "LessOrEqual", le)))
        onnx_ex_io(e, n, 2, in_le, 1, out_le);
    if ((n = onnx_ex_node(e, "Where", x->n->name)))
        onnx_ex_io(e, n, 3, in_w, 1, x->out);
    free(thn);
    free(vn);
    free(le);
    return e->err;
}

static tg_status ex_clip(ex *e, const exnode *x, const char *op)
{
    tg_dtype dt = x->in_meta[0]->dtype;
    char *lo = onnx_ex_init_scalar(e, "min", dt, onnx_ex_afloat(x, "a", 0));
    char *hi = onnx_ex_init_scalar(e, "max", dt, onnx_ex_afloat(x, "b", 0));
    const char *in[3] = {x->in[0], lo, hi};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, 3, in, 1, x->out);
    free(lo);
    free(hi);
    return e->err;
}

static tg_status ex_cast(ex *e, const exnode *x, const char *op)
{
    onnx_ex_attr_int(e, simple(e, x, op, 1), "to",
                     onnx_dtype_from_tg((tg_dtype)onnx_ex_aint(x, "to", 0)));
    return e->err;
}

/* ArgMax, ArgMin */
static tg_status ex_arg(ex *e, const exnode *x, const char *op)
{
    onnx_node *n = simple(e, x, op, 1);
    onnx_ex_attr_int(e, n, "axis", onnx_ex_aint(x, "axis", 0));
    onnx_ex_attr_int(e, n, "keepdims", onnx_ex_aint(x, "keepdim", 0));
    return e->err;
}

/* Reshape, Expand: the output's shape as a second input (an initializer;
 * reshape_by and expand_by have it as an input already) */
static tg_status ex_to_shape(ex *e, const exnode *x, const char *op)
{
    if (x->n->n_in == 2) {
        onnx_node *n = simple(e, x, op, 2);
        if (onnx_ex_aint(x, "allowzero", 0))
            onnx_ex_attr_int(e, n, "allowzero", 1);
        return e->err;
    }
    char *shape = onnx_ex_init_ints(e, "shape", x->out_meta->ndim, x->out_meta->shape, false);
    const char *in[2] = {x->in[0], shape};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, 2, in, 1, x->out);
    free(shape);
    return e->err;
}

static tg_status ex_transpose(ex *e, const exnode *x, const char *op)
{
    const int64_t *v;
    int nv = aints(x, "perm", &v);
    onnx_ex_attr_ints(e, simple(e, x, op, 1), "perm", nv, v);
    return e->err;
}

/* slice's attributes as initializers; slice_by has them as inputs already */
static tg_status ex_slice(ex *e, const exnode *x, const char *op)
{
    if (x->n->n_in == 5)
        return ex_simple(e, x, op);
    int64_t s[4] = {onnx_ex_aint(x, "start", 0), onnx_ex_aint(x, "stop", 0),
                    onnx_ex_aint(x, "axis", 0), onnx_ex_aint(x, "step", 1)};
    char *names[4] = {onnx_ex_init_ints(e, "starts", 1, &s[0], false),
                      onnx_ex_init_ints(e, "ends", 1, &s[1], false),
                      onnx_ex_init_ints(e, "axes", 1, &s[2], false),
                      onnx_ex_init_ints(e, "steps", 1, &s[3], false)};
    const char *in[5] = {x->in[0], names[0], names[1], names[2], names[3]};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, 5, in, 1, x->out);
    for (int i = 0; i < 4; i++)
        free(names[i]);
    return e->err;
}

static tg_status ex_concat(ex *e, const exnode *x, const char *op)
{
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, x->n->n_in, x->in, 1, x->out);
    onnx_ex_attr_int(e, n, "axis", onnx_ex_aint(x, "axis", 0));
    return e->err;
}

static tg_status ex_pad(ex *e, const exnode *x, const char *op)
{
    const int64_t *v;
    int nv = aints(x, "pads", &v);
    int r = x->in_meta[0]->ndim;
    int64_t pads[2 * TG_MAX_DIMS] = {0};
    for (int i = 0; i < nv / 2 && i < r; i++) {
        pads[i] = v[2 * i];
        pads[r + i] = v[2 * i + 1];
    }
    char *p = onnx_ex_init_ints(e, "pads", 2 * r, pads, false);
    char *val =
        onnx_ex_init_scalar(e, "value", x->in_meta[0]->dtype, onnx_ex_afloat(x, "value", 0));
    const char *in[3] = {x->in[0], p, val};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, 3, in, 1, x->out);
    int64_t mode = onnx_ex_aint(x, "mode", 0); /* tg_pad_mode */
    if (mode)
        onnx_ex_attr_string(e, n, "mode", mode == TG_PAD_REFLECT ? "reflect" : "edge");
    free(p);
    free(val);
    return e->err;
}

/* tile's reps as an initializer; tile_by has them as an input already */
static tg_status ex_tile(ex *e, const exnode *x, const char *op)
{
    if (x->n->n_in == 2)
        return ex_simple(e, x, op);
    const int64_t *v;
    int nv = aints(x, "reps", &v);
    int r = x->out_meta->ndim;
    int64_t reps[TG_MAX_DIMS];
    for (int i = 0; i < r; i++) /* torch.tile aligns reps at the right */
        reps[i] = i - (r - nv) >= 0 ? v[i - (r - nv)] : 1;
    char *rp = onnx_ex_init_ints(e, "repeats", r, reps, false);
    const char *in[2] = {x->in[0], rp};
    onnx_node *n;
    if (r != x->in_meta[0]->ndim)
        onnx_ex_fail(e, TG_ERR_UNSUPPORTED, "tile that adds dims cannot be exported");
    else if ((n = onnx_ex_node(e, op, x->n->name)))
        onnx_ex_io(e, n, 2, in, 1, x->out);
    free(rp);
    return e->err;
}

/* index_select (axis) and embedding (rows of the weight: axis 0) */
static tg_status ex_gather(ex *e, const exnode *x, const char *op)
{
    onnx_ex_attr_int(e, simple(e, x, op, 2), "axis", onnx_ex_aint(x, "axis", 0));
    return e->err;
}

static tg_status ex_gemm(ex *e, const exnode *x, const char *op)
{
    onnx_node *n = simple(e, x, op, x->n->n_in);
    onnx_ex_attr_float(e, n, "alpha", onnx_ex_afloat(x, "alpha", 1));
    onnx_ex_attr_float(e, n, "beta", onnx_ex_afloat(x, "beta", 1));
    onnx_ex_attr_int(e, n, "transA", onnx_ex_aint(x, "trans_a", 0));
    onnx_ex_attr_int(e, n, "transB", onnx_ex_aint(x, "trans_b", 0));
    return e->err;
}

/* Conv and ConvTranspose (2-D or 3-D: as many spatial dims as strides):
 * kernel_shape, strides, symmetric pads, dilations, group */
static onnx_node *conv_node(ex *e, const exnode *x, const char *op, int *nsp)
{
    const int64_t *st, *pd, *dl;
    int n = aints(x, "stride", &st);
    if ((n != 2 && n != 3) || aints(x, "padding", &pd) != n || aints(x, "dilation", &dl) != n) {
        onnx_ex_fail(e, TG_ERR_INTERNAL, "%s node '%s' lacks attributes", x->n->op->name,
                     x->n->name);
        return NULL;
    }
    onnx_node *node = simple(e, x, op, x->n->n_in);
    int64_t pads[6];
    for (int i = 0; i < n; i++)
        pads[i] = pads[n + i] = pd[i];
    onnx_ex_attr_ints(e, node, "kernel_shape", n, x->in_meta[1]->shape + 2);
    onnx_ex_attr_ints(e, node, "strides", n, st);
    onnx_ex_attr_ints(e, node, "pads", 2 * n, pads);
    onnx_ex_attr_ints(e, node, "dilations", n, dl);
    onnx_ex_attr_int(e, node, "group", onnx_ex_aint(x, "groups", 1));
    *nsp = n;
    return node;
}

static tg_status ex_conv(ex *e, const exnode *x, const char *op)
{
    int nsp;
    conv_node(e, x, op, &nsp);
    return e->err;
}

/* conv_transpose2d/3d: Conv's attributes and output_padding */
static tg_status ex_conv_transpose(ex *e, const exnode *x, const char *op)
{
    const int64_t *op_pad;
    int nsp = 0, n = aints(x, "output_padding", &op_pad);
    onnx_node *node = conv_node(e, x, op, &nsp);
    if (node && n != nsp)
        return onnx_ex_fail(e, TG_ERR_INTERNAL, "%s node '%s' lacks attributes",
                            x->n->op->name, x->n->name);
    if (node)
        onnx_ex_attr_ints(e, node, "output_padding", n, op_pad);
    return e->err;
}

/* MaxPool and AveragePool (2-D or 3-D: as many spatial dims as kernel sizes) */
static onnx_node *pool(ex *e, const exnode *x, const char *op)
{
    const int64_t *k, *st, *pd;
    int n = aints(x, "kernel", &k);
    if ((n != 2 && n != 3) || aints(x, "stride", &st) != n || aints(x, "padding", &pd) != n) {
        onnx_ex_fail(e, TG_ERR_INTERNAL, "pool node '%s' lacks attributes", x->n->name);
        return NULL;
    }
    onnx_node *node = simple(e, x, op, 1);
    int64_t pads[6];
    for (int i = 0; i < n; i++)
        pads[i] = pads[n + i] = pd[i];
    onnx_ex_attr_ints(e, node, "kernel_shape", n, k);
    onnx_ex_attr_ints(e, node, "strides", n, st);
    onnx_ex_attr_ints(e, node, "pads", 2 * n, pads);
    onnx_ex_attr_int(e, node, "ceil_mode", onnx_ex_aint(x, "ceil_mode", 0));
    return node;
}

static tg_status ex_max_pool(ex *e, const exnode *x, const char *op)
{
    pool(e, x, op);
    return e->err;
}

static tg_status ex_avg_pool(ex *e, const exnode *x, const char *op)
{
    onnx_node *n = pool(e, x, op);
    if (n)
        onnx_ex_attr_int(e, n, "count_include_pad", onnx_ex_aint(x, "count_include_pad", 1));
    return e->err;
}

/* Softmax, LogSoftmax */
static tg_status ex_softmax(ex *e, const exnode *x, const char *op)
{
    onnx_ex_attr_int(e, simple(e, x, op, 1), "axis", onnx_ex_aint(x, "axis", -1));
    return e->err;
}

static tg_status ex_layer_norm(ex *e, const exnode *x, const char *op)
{
    int64_t na = onnx_ex_aint(x, "n_axes", 1);
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n)
        onnx_ex_io(e, n, 3, x->in, 1, x->out);
    onnx_ex_attr_int(e, n, "axis", -na);
    onnx_ex_attr_float(e, n, "epsilon", onnx_ex_afloat(x, "eps", 1e-5));
    return e->err;
}

/* ---- ops with no single ONNX operator, written as two ------------------- */

/* ne: Not(Equal(a, b)) */
static tg_status ex_ne(ex *e, const exnode *x, const char *op)
{
    (void)op;
    char *mid = onnx_ex_aux_name(e, x->n->name);
    exnode y = *x;
    y.out[0] = mid;
    ex_compare(e, &y, "Equal");
    const char *m1[1] = {mid};
    onnx_node *n;
    if ((n = onnx_ex_node(e, "Not", x->n->name)))
        onnx_ex_io(e, n, 1, m1, 1, x->out);
    free(mid);
    return e->err;
}

/* Trilu: the diagonal as a 0-d int64 initializer (input k), upper as is */
static tg_status ex_trilu(ex *e, const exnode *x, const char *op)
{
    int64_t k = onnx_ex_aint(x, "diagonal", 0);
    char *kn = onnx_ex_init_ints(e, "k", 1, &k, true);
    const char *in[2] = {x->in[0], kn};
    onnx_node *n = onnx_ex_node(e, op, x->n->name);
    if (n) {
        onnx_ex_io(e, n, 2, in, 1, x->out);
        onnx_ex_attr_int(e, n, "upper", onnx_ex_aint(x, "upper", 0));
    }
    free(kn);
    return e->err;
}

static tg_status ex_isinf(ex *e, const exnode *x, const char *op)
{
    onnx_node *n = simple(e, x, op, 1);
    onnx_ex_attr_int(e, n, "detect_negative", onnx_ex_aint(x, "detect_negative", 1));
    onnx_ex_attr_int(e, n, "detect_positive", onnx_ex_aint(x, "detect_positive", 1));
    return e->err;
}

/* ScatterElements from scatter (data, indices, updates; ONNX wants updates
 * of the indices' shape); scatter_add has no form here (it would need a
 * zero data input and reduction add) */
static tg_status ex_scatter(ex *e, const exnode *x, const char *op)
{
    const tg_meta *ix = x->in_meta[1], *src = x->in_meta[2];
    if (strcmp(x->n->op->name, "scatter") || ix->ndim != src->ndim ||
        memcmp(ix->shape, src->shape, (size_t)ix->ndim * sizeof ix->shape[0]))
        return onnx_ex_fail(e, TG_ERR_UNSUPPORTED, "op '%s' (node '%s') has no ONNX mapping "
                            "(scatter does when src has the index's shape)",
                            x->n->op->name, x->n->name);
    onnx_ex_attr_int(e, simple(e, x, op, 3), "axis", onnx_ex_aint(x, "axis", 0));
    return e->err;
}

/* ==== which writer ========================================================= */

typedef tg_status (*writer_fn)(ex *e, const exnode *x, const char *op);

/* by the ONNX operator of the op definition (tg_op_def.onnx): the ONNX
 * operators the exporter writes; an op naming another is not exported */
static const struct {
    const char *onnx;
    writer_fn write;
} writers[] = {
    {"Neg", ex_simple}, {"Abs", ex_simple}, {"Exp", ex_simple}, {"Log", ex_simple},
    {"Sqrt", ex_simple}, {"Sin", ex_simple}, {"Cos", ex_simple}, {"Tanh", ex_simple},
    {"Sigmoid", ex_simple}, {"Relu", ex_simple}, {"Erf", ex_simple},
    {"Softplus", ex_simple}, {"Floor", ex_simple}, {"Ceil", ex_simple},
    {"Round", ex_simple}, {"Sign", ex_simple}, {"Not", ex_simple},
    {"Identity", ex_simple}, {"Where", ex_simple}, {"MatMul", ex_simple},
    {"Add", ex_binary}, {"Sub", ex_binary}, {"Mul", ex_binary}, {"Div", ex_binary},
    {"Pow", ex_binary}, {"Max", ex_binary}, {"Min", ex_binary}, {"And", ex_binary},
    {"Or", ex_binary}, {"Xor", ex_binary}, {"Mod", ex_mod},
    {"Equal", ex_compare}, {"Less", ex_compare}, {"LessOrEqual", ex_compare},
    {"Greater", ex_compare}, {"GreaterOrEqual", ex_compare},
    {"ReduceSum", ex_reduce_sum}, {"ReduceMean", ex_reduce_attr},
    {"ReduceMax", ex_reduce_attr}, {"ReduceMin", ex_reduce_attr},
    {"ReduceProd", ex_reduce_attr}, {"ReduceLogSumExp", ex_reduce_attr},
    {"CumSum", ex_cumsum}, {"Range", ex_range}, {"ReduceL2", ex_norm}, {"TopK", ex_topk},
    {"LeakyRelu", ex_leaky_relu}, {"Elu", ex_alpha1},
    {"HardSigmoid", ex_hardsigmoid}, {"Selu", ex_selu}, {"Clip", ex_clip}, {"Cast", ex_cast},
    {"ArgMax", ex_arg}, {"ArgMin", ex_arg}, {"Reshape", ex_to_shape},
    {"Expand", ex_to_shape}, {"Transpose", ex_transpose}, {"Slice", ex_slice},
    {"Concat", ex_concat}, {"Pad", ex_pad}, {"Tile", ex_tile}, {"Gather", ex_gather},
    {"GatherElements", ex_gather},
    {"Gemm", ex_gemm}, {"Conv", ex_conv}, {"ConvTranspose", ex_conv_transpose},
    {"MaxPool", ex_max_pool}, {"AveragePool", ex_avg_pool}, {"Softmax", ex_softmax},
    {"LogSoftmax", ex_softmax},
    {"LayerNormalization", ex_layer_norm}, {"Trilu", ex_trilu},
    {"IsInf", ex_isinf}, {"ScatterElements", ex_scatter},
    {"Celu", ex_alpha1}, {"Shrink", ex_shrink}, {"ThresholdedRelu", ex_threshold},
};

/* by tg op name: ops that have no ONNX operator of their own */
static const struct {
    const char *op;
    writer_fn write;
} composites[] = {{"ne", ex_ne}};

tg_status onnx_ex_op(ex *e, const exnode *x)
{
    const tg_op_def *op = x->n->op;
    if (op->onnx.op && op->onnx.opset <= ONNX_EXPORT_OPSET)
        for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
            if (!strcmp(op->onnx.op, writers[i].onnx))
                return writers[i].write(e, x, op->onnx.op);
    /* ops without an ONNX operator, or with one newer than the export opset */
    bool none = !op->onnx.op || op->onnx.opset > ONNX_EXPORT_OPSET;
    for (size_t i = 0; none && i < sizeof composites / sizeof composites[0]; i++)
        if (!strcmp(op->name, composites[i].op))
            return composites[i].write(e, x, NULL);
    if (none && onnx_ex_composite(e, x))
        return e->err;
    /* an op that names its ONNX operator and takes no attributes maps one
     * to one (the importer's direct ops): inputs and output as they are */
    if (op->onnx.op && op->onnx.opset <= ONNX_EXPORT_OPSET && !op->attrs.specs &&
        op->n_out == 1)
        return ex_simple(e, x, op->onnx.op);
    return onnx_ex_fail(e, TG_ERR_UNSUPPORTED, "op '%s' (node '%s') has no ONNX mapping",
                        op->name, x->n->name);
}
