/* ONNX export of random nodes (graph/random.c). The generator state input
 * has no ONNX counterpart (an ONNX runtime keeps its own generators; the
 * exporter does not follow that input, so it is not written): the draws
 * are the runtime's, only the distributions and shapes carry over.
 *   rand_uniform / rand_normal: RandomUniform / RandomNormal with the
 *     shape as an attribute where every dim is known; else the *Like op of
 *     the tensor shaping them (like = 1) or of ConstantOfShape(shape).
 *   bernoulli(x; p): RandomUniformLike(x) in double, Less than p. */
#include "onnx/export.h"

#include <stdlib.h>
#include <string.h>

bool onnx_ex_is_random(const tg_op_def *op) { return (op->flags & TG_OP_RANDOM) != 0; }

static void draw_attrs(ex *e, onnx_node *n, bool normal, const exnode *x, tg_dtype dt)
{
    onnx_ex_attr_float(e, n, normal ? "mean" : "low", onnx_ex_afloat(x, "a", 0));
    onnx_ex_attr_float(e, n, normal ? "scale" : "high", onnx_ex_afloat(x, "b", 1));
    onnx_ex_attr_int(e, n, "dtype", onnx_dtype_from_tg(dt));
}

static void write_draw(ex *e, const exnode *x, bool normal)
{
    const tg_meta *m = x->out_meta;
    bool like = tg_attr_int(x->n->attrs, x->n->n_attrs, "like", 0) != 0;
    const char *op = normal ? "RandomNormal" : "RandomUniform";
    onnx_node *n;
    if (!tg__shape_has_unknown(m->ndim, m->shape)) {
        if ((n = onnx_ex_node(e, op, x->n->name))) {
            onnx_ex_io(e, n, 0, NULL, 1, x->out);
            onnx_ex_attr_ints(e, n, "shape", m->ndim, m->shape);
            draw_attrs(e, n, normal, x, m->dtype);
        }
        return;
    }
    char *zeros = like ? NULL : onnx_ex_aux_name(e, x->n->name);
    if (zeros && (n = onnx_ex_node(e, "ConstantOfShape", zeros)))
        onnx_ex_io(e, n, 1, &x->in[0], 1, (const char *const *)&zeros);
    const char *src = like ? x->in[0] : zeros;
    char like_op[32];
    snprintf(like_op, sizeof like_op, "%sLike", op);
    if ((n = onnx_ex_node(e, like_op, x->n->name))) {
        onnx_ex_io(e, n, 1, &src, 1, x->out);
        draw_attrs(e, n, normal, x, m->dtype);
    }
    free(zeros);
}

static void write_bernoulli(ex *e, const exnode *x)
{
    char *u = onnx_ex_aux_name(e, x->n->name);
    char *p = onnx_ex_init_scalar(e, "p", TG_FLOAT64, onnx_ex_afloat(x, "p", 0.5));
    onnx_node *n = onnx_ex_node(e, "RandomUniformLike", u);
    if (n) {
        onnx_ex_io(e, n, 1, &x->in[0], 1, (const char *const *)&u);
        onnx_ex_attr_int(e, n, "dtype", onnx_dtype_from_tg(TG_FLOAT64));
    }
    const char *in[2] = {u, p};
    if ((n = onnx_ex_node(e, "Less", x->n->name)))
        onnx_ex_io(e, n, 2, in, 1, x->out);
    free(u);
    free(p);
}

void onnx_ex_random(ex *e, const exnode *x)
{
    const char *name = x->n->op->name;
    if (!strcmp(name, "bernoulli"))
        write_bernoulli(e, x);
    else if (!strcmp(name, "rand_uniform") || !strcmp(name, "rand_normal"))
        write_draw(e, x, !strcmp(name, "rand_normal"));
    else
        onnx_ex_fail(e, TG_ERR_UNSUPPORTED, "random op '%s' (node '%s') has no ONNX mapping",
                     name, x->n->name);
}
