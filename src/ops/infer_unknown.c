/* Shape inference with unknown dims (-1, ONNX's symbolic batch) in graph
 * mode, for every op without touching its infer function: the op's own
 * inference runs twice, with every unknown input dim replaced by one probe
 * size and then by another. An output dim that comes out the same both
 * times does not depend on the unknown dims: it is known. One that differs
 * is unknown (-1). Checks between two unknown dims pass at build time (the
 * probes are equal) and run again on the concrete shapes when a session
 * specialises the plan to the fed shapes (src/passes/specialise.c), so
 * they are deferred to run time. A check between an unknown dim and a
 * known one (the contracted dim of a matmul given as -1) cannot be decided
 * here: the probe fails it, and the error says which unknown dims were
 * probed so the caller can give that dim its size. */
#include "ops/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* two probe sizes: distinct, larger than any broadcastable 1, prime so
 * that a divisibility check (reshape) does not pass for one by chance */
static const int64_t probes[2] = {7919, 7927};

bool tg__shape_has_unknown(int ndim, const int64_t *shape)
{
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return true;
    return false;
}

bool tg__inputs_have_unknown(int n_in, tg_tensor *const *in)
{
    for (int i = 0; i < n_in; i++)
        if (tg__shape_has_unknown(in[i]->ndim, in[i]->shape)) /* never concrete */
            return true;
    return false;
}

/* input i with its unknown dims set to p (a struct copy: no storage);
 * false when its known dims and the probes multiply past the size bound
 * (known dims of 2^51 and one unknown overflowed the strides) */
static bool probe_input(const tg_op_ctx *c, int i, tg_tensor *dst, const tg_tensor *src,
                        int64_t p)
{
    *dst = *src;
    for (int d = 0; d < dst->ndim; d++)
        if (dst->shape[d] < 0)
            dst->shape[d] = p;
    int64_t n;
    if (!tg__size_numel(c->op->name, dst->ndim, dst->shape, &n)) {
        char msg[600], dims[160];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        tg__error(TG_ERR_SHAPE, "%s (input %d of shape %s, its unknown dims (-1) probed as "
                  "%lld)", msg, i, tg_shape_str(src->ndim, src->shape, dims, sizeof dims),
                  (long long)p);
        return false;
    }
    tg__contiguous_strides(dst->ndim, dst->shape, dst->strides);
    dst->numel = n;
    return true;
}

tg_status tg__infer_unknown(tg_op_ctx *c)
{
    tg_tensor *copies = malloc(((size_t)c->n_in + 1) * sizeof *copies);
    tg_tensor **ptrs = malloc(((size_t)c->n_in + 1) * sizeof *ptrs);
    if (!copies || !ptrs) {
        free(copies);
        free(ptrs);
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", c->op->name);
    }
    tg_meta first[TG_MAX_OP_OUTPUTS];
    tg_tensor *const *given = c->in;
    tg_status s = TG_OK;
    for (int k = 0; k < 2 && s == TG_OK; k++) {
        for (int i = 0; i < c->n_in && s == TG_OK; i++) {
            if (!probe_input(c, i, &copies[i], given[i], probes[k]))
                s = tg_last_status();
            ptrs[i] = &copies[i];
        }
        if (s != TG_OK)
            break;
        c->in = ptrs;
        s = c->op->infer(c);
        if (s != TG_OK) {
            char msg[600];
            snprintf(msg, sizeof msg, "%s", tg_last_error());
            s = tg__error(s, "%s (unknown dims (-1) of the inputs probed as %lld: an "
                          "unknown dim that must equal a known size cannot be checked "
                          "when the graph is built; declare that dim's size)", msg,
                          (long long)probes[k]);
        } else if (k == 0) {
            memcpy(first, c->out_meta, (size_t)c->n_out * sizeof *first);
        }
    }
    c->in = given;
    free(copies);
    free(ptrs);
    for (int o = 0; o < c->n_out && s == TG_OK; o++) {
        tg_meta *m = &c->out_meta[o];
        if (m->ndim != first[o].ndim || m->dtype != first[o].dtype)
            return tg__error(TG_ERR_SHAPE, "%s: the rank or dtype of output %d depends "
                             "on the size of an unknown dim (-1); declare that dim's size",
                             c->op->name, o);
        for (int d = 0; d < m->ndim; d++)
            if (m->shape[d] != first[o].shape[d])
                m->shape[d] = -1;
    }
    return s;
}

tg_status tg__infer_any(tg_op_ctx *c)
{
    return tg__inputs_have_unknown(c->n_in, c->in) && !(c->op->flags & TG_OP_INFERS_UNKNOWN)
               ? tg__infer_unknown(c)
               : c->op->infer(c);
}
