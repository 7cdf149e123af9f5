/* append_row: a list that grows by one row, for values stacked in a loop
 * (ONNX Loop's scan outputs in graph mode):
 *
 *   y = append_row(acc [r, d...], elem [d...])   ->   [r + 1, d...]
 *
 * An acc without rows takes its other dims from elem, so a list whose
 * elements' dims are known only when the graph runs starts as [0, 0...]
 * and its loop variable's shape invariant is [-1, -1...]. Gradient: dy's
 * last row goes to elem, the rows before it to acc (append_row_grad). */
#include "autodiff/jvp.h"
#include "ops/elementwise.h"

#include <string.h>

static const tg_arg_spec append_in[] = {{"acc", TG_DTS_ANY}, {"elem", TG_DTS_ANY}, {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

/* out_meta 0: shape (-1 where unknown) */
static void set_meta(tg_op_ctx *c, tg_dtype dt, int nd, const int64_t *shape)
{
    c->out_meta[0] = (tg_meta){.dtype = dt, .ndim = nd};
    memcpy(c->out_meta[0].shape, shape, (size_t)nd * sizeof *shape);
}

static tg_status append_row_infer(tg_op_ctx *c)
{
    const tg_tensor *acc = c->in[0], *elem = c->in[1];
    char a[160], b[160];
    if (acc->dtype != elem->dtype || acc->ndim != elem->ndim + 1)
        return tg__error(TG_ERR_SHAPE, "%s: cannot append a %s %s as a row of a %s %s",
                         c->op->name, tg_dtype_name(elem->dtype),
                         tg_shape_str(elem->ndim, elem->shape, a, sizeof a),
                         tg_dtype_name(acc->dtype), tg_shape_str(acc->ndim, acc->shape, b, sizeof b));
    int64_t shape[TG_MAX_DIMS];
    bool empty = acc->shape[0] == 0;
    if (!empty && !tg__shape_agree(elem->ndim, elem->shape, acc->ndim - 1, acc->shape + 1))
        return tg__error(TG_ERR_SHAPE, "%s: a row of %s does not fit a list of rows %s",
                         c->op->name, tg_shape_str(elem->ndim, elem->shape, a, sizeof a),
                         tg_shape_str(acc->ndim, acc->shape, b, sizeof b));
    shape[0] = acc->shape[0] < 0 ? -1 : acc->shape[0] + 1;
    for (int d = 0; d < elem->ndim; d++)
        shape[d + 1] = empty || elem->shape[d] >= 0 ? elem->shape[d] : acc->shape[d + 1];
    set_meta(c, acc->dtype, acc->ndim, shape);
    return TG_OK;
}

/* rows [first, first + n) of t, a [rows, d...] tensor */
static tg_tensor *rows_of(const tg_tensor *t, int64_t first, int64_t n)
{
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    shape[0] = n;
    return tg__alias(t, t->ndim, shape, t->strides, t->offset + first * t->strides[0]);
}

/* row i of t, without its axis 0 */
static tg_tensor *row_of(const tg_tensor *t, int64_t i)
{
    return tg__alias(t, t->ndim - 1, t->shape + 1, t->strides + 1,
                     t->offset + i * t->strides[0]);
}

static tg_status append_row_kernel(tg_op_ctx *c)
{
    const tg_tensor *acc = c->in[0], *elem = c->in[1];
    tg_tensor *y = c->out[0];
    int64_t r = acc->shape[0];
    tg_tensor *head = r ? rows_of(y, 0, r) : NULL, *last = row_of(y, r);
    if ((r && !head) || !last) {
        tg_release(head);
        tg_release(last);
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    }
    if (head)
        tg__convert_into(head, acc);
    tg__convert_into(last, elem);
    tg_release(head);
    tg_release(last);
    return TG_OK;
}

/* ---- the gradient: input `which` (0 acc, 1 elem) of dy, shaped like ref ---- */
typedef struct grad_attrs {
    int64_t which;
} grad_attrs;
static const tg_attr_spec grad_specs[] = {TG_SPEC_INT(grad_attrs, which, 0, TG_RANGE(0, 1)),
                                          {0}};
static const tg_arg_spec grad_in[] = {{"dy", TG_DTS_ANY},
                                      {"ref", TG_DTS_ANY | TG_ARG_NO_GRAD}, {0}};

static tg_status append_row_grad_infer(tg_op_ctx *c)
{
    const tg_tensor *dy = c->in[0], *ref = c->in[1];
    bool elem = ((const grad_attrs *)c->attr)->which == 1;
    if (dy->ndim != ref->ndim + elem)
        return tg__error(TG_ERR_SHAPE, "%s: a gradient of %d dims for an input of %d",
                         c->op->name, dy->ndim, ref->ndim);
    set_meta(c, dy->dtype, ref->ndim, ref->shape);
    return TG_OK;
}

static tg_status append_row_grad_kernel(tg_op_ctx *c)
{
    const tg_tensor *dy = c->in[0];
    tg_tensor *dx = c->out[0];
    bool elem = ((const grad_attrs *)c->attr)->which == 1;
    if (dx->numel == 0)
        return TG_OK; /* an acc without rows */
    tg_tensor *part = elem ? row_of(dy, dy->shape[0] - 1) : rows_of(dy, 0, dx->shape[0]);
    if (!part)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    tg__convert_into(dx, part);
    tg_release(part);
    return TG_OK;
}

const tg_op_def tg_op_append_row_grad = {
    .name = "append_row_grad", .n_in = 2, .n_out = 1, .inputs = grad_in, .outputs = any_out,
    .attrs = {grad_specs, sizeof(grad_attrs)},
    .flags = TG_OP_PURE | TG_OP_NO_VJP | TG_OP_NO_JVP | TG_OP_INFERS_UNKNOWN,
    .infer = append_row_grad_infer, .kernel = {[TG_CPU] = append_row_grad_kernel}};

static tg_status append_row_vjp(tg_grad_ctx *g)
{
    for (int i = 0; i < 2; i++) {
        if (!g->needs_grad[i])
            continue;
        tg_tensor *in[2] = {g->dy[0], g->in[i]};
        tg_attr a = TG_AI("which", i);
        g->dx[i] = tg_op_call(&tg_op_append_row_grad, 2, in, &a, 1);
    }
    return TG_OK;
}

const tg_op_def tg_op_append_row = {
    .name = "append_row", .n_in = 2, .n_out = 1, .inputs = append_in, .outputs = any_out,
    .flags = TG_OP_PURE | TG_OP_INFERS_UNKNOWN, .infer = append_row_infer,
    .kernel = {[TG_CPU] = append_row_kernel},
    .grad = append_row_vjp, .save_inputs = 3, .jvp = tg__jvp_joint_linear};

tg_tensor *tg__append_row(tg_tensor *acc, tg_tensor *elem)
{
    tg_tensor *in[2] = {acc, elem};
    return tg_op_call(&tg_op_append_row, 2, in, NULL, 0);
}

const tg_op_def *const tg_ops_append_row[] = {&tg_op_append_row, &tg_op_append_row_grad, NULL};
