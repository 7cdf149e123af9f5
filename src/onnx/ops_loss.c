/* ONNX losses -> tensorgraph: SoftmaxCrossEntropyLoss (what F.cross_entropy
 * exports) and NegativeLogLikelihoodLoss, onto tg_cross_entropy_ex /
 * tg_nll_loss_ex (class weights, ignore_index, N-d inputs). */
#include "onnx/ops.h"

#include <string.h>

/* the reduction, weight and ignore_index of either loss */
static tg_status loss_opts(onnx_ictx *c, tg_nll_opts *o)
{
    const char *red;
    tg_status s = oa_string(c, "reduction", "mean", &red);
    if (s != TG_OK)
        return s;
    if (!strcmp(red, "mean"))
        o->reduction = TG_REDUCTION_MEAN;
    else if (!strcmp(red, "sum"))
        o->reduction = TG_REDUCTION_SUM;
    else if (!strcmp(red, "none"))
        o->reduction = TG_REDUCTION_NONE;
    else
        return onnx_err(c, TG_ERR_IO, "reduction '%s' (expected mean, sum or none)", red);
    o->has_ignore_index = onnx_attr(c, "ignore_index") != NULL;
    if (o->has_ignore_index && (s = oa_int(c, "ignore_index", 0, &o->ignore_index)) != TG_OK)
        return s;
    o->weight = c->n_in > 2 ? c->in[2] : NULL;
    return TG_OK;
}

static tg_status l_sce(onnx_ictx *c)
{
    tg_tensor *scores = oi_req(c, 0, "scores"), *labels = scores ? oi_req(c, 1, "labels") : NULL;
    tg_nll_opts o = {0};
    if (!labels || loss_opts(c, &o) != TG_OK)
        return tg_last_status();
    tg_tensor *lp = tg_log_softmax(scores, 1);
    c->out[0] = lp ? tg_nll_loss_ex(lp, labels, &o) : NULL;
    if (c->n_out > 1)
        c->out[1] = lp;
    return c->out[0] ? TG_OK : tg_last_status();
}

static tg_status l_nll(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input"), *labels = x ? oi_req(c, 1, "target") : NULL;
    tg_nll_opts o = {0};
    if (!labels || loss_opts(c, &o) != TG_OK)
        return tg_last_status();
    c->out[0] = tg_nll_loss_ex(x, labels, &o);
    return c->out[0] ? TG_OK : tg_last_status();
}

const onnx_op_entry onnx_ops_loss[] = {
    {"SoftmaxCrossEntropyLoss", {12, 13}, 2, 3, 1, 2, l_sce, 0},
    {"NegativeLogLikelihoodLoss", {12, 13}, 2, 3, 1, 1, l_nll, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
