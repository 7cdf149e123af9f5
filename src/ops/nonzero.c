/* nonzero: the coordinates of x's nonzero elements in C order, int64
 * [count, ndim] (PyTorch's torch.nonzero; a NaN is nonzero; a 0-d x gives
 * [1, 0] or [0, 0]). count depends on the values, so inference reads them
 * wherever x has data: eagerly, and in a graph at run time, where the
 * executor infers the shapes a graph left unknown from the actual inputs
 * (docs/GRAPHS.md, "Dynamic shapes"). On a graph's symbolic value count
 * is an unknown dim (-1) and everything computed from it waits for run
 * time the same way. No gradient: the output is integer. */
#include "ops/elementwise.h"

#include <stdlib.h>

static const tg_arg_spec any_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec index_out[] = {{"y", TG_DT(TG_INT64)}, {0}};

/* x != 0 elementwise, as a contiguous bool tensor (the cast to bool:
 * any nonzero value, NaN too); NULL: no memory */
static tg_tensor *nonzero_mask(const tg_tensor *x)
{
    return tg__contig_as(x, TG_BOOL);
}

static int64_t count_true(const tg_tensor *m)
{
    const bool *b = (const bool *)tg__base(m);
    int64_t n = 0;
    for (int64_t e = 0; e < m->numel; e++)
        n += b[e];
    return n;
}

static tg_status nonzero_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    int64_t count = -1; /* a symbolic value: known at run time */
    if (x->storage) {
        tg_tensor *m = nonzero_mask(x);
        if (!m)
            return tg__error(TG_ERR_NOMEM, "nonzero: no memory for a mask of %lld elements",
                             (long long)x->numel);
        count = count_true(m);
        tg_release(m);
    }
    if (count >= 0)
        return tg_infer_set(c, 0, TG_INT64, 2, (int64_t[]){count, x->ndim});
    /* tg_infer_set takes known dims only */
    c->out_meta[0] = (tg_meta){.dtype = TG_INT64, .ndim = 2, .shape = {-1, x->ndim}};
    return TG_OK;
}

static tg_status nonzero_kernel(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    tg_tensor *m = nonzero_mask(x);
    if (!m)
        return tg__error(TG_ERR_NOMEM, "nonzero: no memory for a mask of %lld elements",
                         (long long)x->numel);
    tg_tensor *out = c->out[0];
    int64_t count = count_true(m);
    if (count != out->shape[0]) { /* the values changed since inference */
        tg_release(m);
        return tg__error(TG_ERR_INTERNAL, "nonzero: %lld nonzero elements, the output has "
                         "room for %lld", (long long)count, (long long)out->shape[0]);
    }
    const bool *b = (const bool *)tg__base(m);
    int64_t *y = (int64_t *)tg__base(out), idx[TG_MAX_DIMS] = {0};
    for (int64_t e = 0; e < m->numel; e++) {
        if (b[e])
            for (int k = 0; k < x->ndim; k++)
                *y++ = idx[k];
        for (int k = x->ndim - 1; k >= 0 && ++idx[k] == x->shape[k]; k--)
            idx[k] = 0;
    }
    tg_release(m);
    return TG_OK;
}

const tg_op_def tg_op_nonzero = {
    .name = "nonzero", .n_in = 1, .n_out = 1, .inputs = any_in, .outputs = index_out,
    .flags = TG_OP_PURE, .nondiff = true, .infer = nonzero_infer,
    .kernel = {[TG_CPU] = nonzero_kernel}};

tg_tensor *tg_nonzero(tg_tensor *x)
{
    if (!x) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "nonzero: input is NULL");
        return NULL;
    }
    return tg_op_call(&tg_op_nonzero, 1, &x, NULL, 0);
}

const tg_op_def *const tg_ops_nonzero[] = {&tg_op_nonzero, NULL};
