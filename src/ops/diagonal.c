/* diagonal: the diagonal of the (dim1, dim2) planes as a view (PyTorch's
 * torch.diagonal): the other dims keep their strides and the diagonal is
 * a new last dim whose stride is the sum of the two, so writes through
 * it reach the input. diagonal_grad places dy on those diagonals of
 * zeros of the input's shape (its adjoint is diagonal again). */
#include "autodiff/jvp.h"
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"

#include <string.h>

extern const tg_op_def tg_op_diagonal; /* diagonal_grad's adjoint calls it */

typedef struct diagonal_attrs {
    int64_t offset, dim1, dim2; /* dims already normalized to [0, ndim) */
} diagonal_attrs;
static const tg_attr_spec diagonal_specs[] = {
    TG_SPEC_INT(diagonal_attrs, offset, 0), TG_SPEC_INT(diagonal_attrs, dim1, 0),
    TG_SPEC_INT(diagonal_attrs, dim2, 1), {0}};

typedef struct diagonal_grad_attrs {
    int64_t offset, dim1, dim2;
    tg_ints input_shape;
} diagonal_grad_attrs;
static const tg_attr_spec diagonal_grad_specs[] = {
    TG_SPEC_INT(diagonal_grad_attrs, offset, 0), TG_SPEC_INT(diagonal_grad_attrs, dim1, 0),
    TG_SPEC_INT(diagonal_grad_attrs, dim2, 1), TG_SPEC_INTS(diagonal_grad_attrs, input_shape),
    {0}};

static const tg_arg_spec any_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec any_out[] = {{"y", TG_DTS_ANY}, {0}};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* the diagonal's length in a rows x cols plane */
static int64_t diag_len(int64_t rows, int64_t cols, int64_t offset)
{
    return max64(0, min64(rows + min64(offset, 0), cols - max64(offset, 0)));
}

/* the output shape for an input of nd dims (shape): the other dims in
 * order, then the diagonal */
static tg_status diagonal_shape(const char *op, int nd, const int64_t *shape,
                                const diagonal_attrs *a, int *out_nd, int64_t *out)
{
    if (nd < 2)
        return tg__error(TG_ERR_SHAPE, "%s: the input needs at least 2 dims, it has %d",
                         op, nd);
    if (a->dim1 < 0 || a->dim1 >= nd || a->dim2 < 0 || a->dim2 >= nd || a->dim1 == a->dim2)
        return tg__error(TG_ERR_ARG, "%s: dims %lld and %lld must be distinct dims of a "
                         "%d-d input", op, (long long)a->dim1, (long long)a->dim2, nd);
    if (shape[a->dim1] < 0 || shape[a->dim2] < 0)
        return tg__error(TG_ERR_UNSUPPORTED, "%s: the sizes of dims %lld and %lld must be "
                         "known", op, (long long)a->dim1, (long long)a->dim2);
    int k = 0;
    for (int i = 0; i < nd; i++)
        if (i != a->dim1 && i != a->dim2)
            out[k++] = shape[i];
    out[k++] = diag_len(shape[a->dim1], shape[a->dim2], a->offset);
    *out_nd = k;
    return TG_OK;
}

/* the view of x (any strides) on its diagonals, of shape `shape` */
static tg_tensor *diagonal_alias(const tg_tensor *x, const diagonal_attrs *a,
                                 int nd, const int64_t *shape)
{
    int64_t strides[TG_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != a->dim1 && i != a->dim2)
            strides[k++] = x->strides[i];
    strides[k] = x->strides[a->dim1] + x->strides[a->dim2];
    int64_t offset = x->offset;
    if (shape[nd - 1] > 0) /* an empty diagonal may start past the end */
        offset += a->offset >= 0 ? a->offset * x->strides[a->dim2]
                                 : -a->offset * x->strides[a->dim1];
    return tg__alias(x, nd, shape, strides, offset);
}

static tg_status diagonal_infer(tg_op_ctx *c)
{
    int nd = 0;
    int64_t shape[TG_MAX_DIMS];
    const tg_tensor *x = c->in[0];
    tg_status s = diagonal_shape(c->op->name, x->ndim, x->shape, c->attr, &nd, shape);
    return s == TG_OK ? tg_infer_set(c, 0, x->dtype, nd, shape) : s;
}

static tg_status diagonal_make(tg_op_ctx *c)
{
    const tg_meta *m = &c->out_meta[0];
    c->out[0] = diagonal_alias(c->in[0], c->attr, m->ndim, m->shape);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

static tg_tensor *diagonal_call(tg_tensor *x, const diagonal_attrs *d)
{
    tg_attr a[3] = {TG_AI("offset", d->offset), TG_AI("dim1", d->dim1),
                    TG_AI("dim2", d->dim2)};
    return tg_op_call(&tg_op_diagonal, 1, &x, a, 3);
}

static diagonal_attrs diagonal_of(const diagonal_grad_attrs *g)
{
    return (diagonal_attrs){g->offset, g->dim1, g->dim2};
}

static tg_status diagonal_grad_infer(tg_op_ctx *c)
{
    const diagonal_grad_attrs *g = c->attr;
    const tg_tensor *dy = c->in[0];
    diagonal_attrs a = diagonal_of(g);
    int nd = 0;
    int64_t shape[TG_MAX_DIMS];
    tg_status s = diagonal_shape(c->op->name, g->input_shape.n, g->input_shape.v, &a, &nd,
                                 shape);
    if (s != TG_OK)
        return s;
    if (!tg__shape_eq(nd, shape, dy->ndim, dy->shape)) {
        char b1[160], b2[160];
        return tg__error(TG_ERR_SHAPE, "%s: gradient of shape %s does not match the "
                         "diagonal's shape %s", c->op->name,
                         tg_shape_str(dy->ndim, dy->shape, b1, sizeof b1),
                         tg_shape_str(nd, shape, b2, sizeof b2));
    }
    return tg_infer_set(c, 0, dy->dtype, g->input_shape.n, g->input_shape.v);
}

static tg_status diagonal_grad_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    memset(tg__base(out), 0, (size_t)out->numel * tg_dtype_size(out->dtype));
    diagonal_attrs a = diagonal_of(c->attr);
    const tg_tensor *dy = c->in[0];
    tg_tensor *window = diagonal_alias(out, &a, dy->ndim, dy->shape);
    if (!window)
        return TG_ERR_NOMEM;
    tg__convert_into(window, dy);
    tg_release(window);
    return TG_OK;
}

/* linear in dy: its adjoint is the diagonal */
static tg_status diagonal_grad_grad(tg_grad_ctx *g)
{
    diagonal_attrs a = diagonal_of(g->attr);
    g->dx[0] = diagonal_call(g->dy[0], &a);
    return TG_OK;
}

const tg_op_def tg_op_diagonal_grad = {
    .name = "diagonal_grad", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {diagonal_grad_specs, sizeof(diagonal_grad_attrs)}, .flags = TG_OP_PURE,
    .infer = diagonal_grad_infer, .kernel = {[TG_CPU] = diagonal_grad_kernel},
    .grad = diagonal_grad_grad, .jvp = tg__jvp_linear};

static tg_status diagonal_grad(tg_grad_ctx *g)
{
    const diagonal_attrs *d = g->attr;
    tg_attr a[4] = {TG_AI("offset", d->offset), TG_AI("dim1", d->dim1),
                    TG_AI("dim2", d->dim2),
                    TG_AINTS("input_shape", g->in_meta[0].shape, g->in_meta[0].ndim)};
    g->dx[0] = tg_op_call(&tg_op_diagonal_grad, 1, &g->dy[0], a, 4);
    return TG_OK;
}

const tg_op_def tg_op_diagonal = {
    .name = "diagonal", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = any_out,
    .attrs = {diagonal_specs, sizeof(diagonal_attrs)}, .flags = TG_OP_PURE | TG_OP_VIEW,
    .infer = diagonal_infer, .make_view = diagonal_make, .grad = diagonal_grad,
    .jvp = tg__jvp_linear};

tg_tensor *tg_diagonal(tg_tensor *x, int64_t offset, int dim1, int dim2)
{
    int d1, d2;
    if (!x) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "diagonal: input is NULL");
        return NULL;
    }
    /* two distinct valid dims imply 2 dims at least */
    if (!tg__norm_axis("diagonal", dim1, x->ndim, &d1) ||
        !tg__norm_axis("diagonal", dim2, x->ndim, &d2))
        return NULL;
    if (d1 == d2)
        return tg__error_null(TG_ERR_ARG, "diagonal dimensions cannot be identical %d, %d",
                              dim1, dim2);
    return diagonal_call(x, &(diagonal_attrs){offset, d1, d2});
}

const tg_op_def *const tg_ops_diagonal[] = {&tg_op_diagonal, &tg_op_diagonal_grad, NULL};
