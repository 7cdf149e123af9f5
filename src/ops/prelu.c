/* PReLU (torch.nn.functional.prelu): x where x > 0, weight * x elsewhere,
 * with one weight or one per channel (dim 1). Composed from gt, mul and
 * where, so both gradients (x's: 1 or the weight; the weight's: x summed
 * over the broadcast dims where x <= 0, as PyTorch's) and graph mode and
 * ONNX export come from those ops. */
#include "ops/nn_util.h"

tg_tensor *tg_prelu(tg_tensor *x, tg_tensor *weight)
{
    if (!tg__nn_have("prelu", x, "input") || !tg__nn_have("prelu", weight, "weight"))
        return NULL;
    if (weight->ndim > 1) {
        tg__error(TG_ERR_SHAPE, "prelu: Expected `weight` to be a scalar or 1D tensor, but "
                  "got ndim = %d", weight->ndim);
        return NULL;
    }
    int64_t channels = x->ndim >= 2 ? x->shape[1] : 1;
    if (weight->numel != 1 && weight->numel != channels) {
        tg__error(TG_ERR_SHAPE, "prelu: Mismatch of parameter numbers and input channel "
                  "size. Found parameter numbers = %lld and channel size = %lld.",
                  (long long)weight->numel, (long long)channels);
        return NULL;
    }
    /* one weight: a 0-d tensor; one per channel: [C, 1, ...] against x's
     * dims from 1 on */
    int64_t shape[TG_MAX_DIMS];
    int nd = 0;
    if (weight->numel != 1) {
        shape[nd++] = channels;
        while (nd < x->ndim - 1)
            shape[nd++] = 1;
    }
    TG_LOCAL_BEGIN();
    tg_tensor *w = tg_reshape(weight, nd, shape);
    tg_tensor *y = tg_where(tg_gt(x, tg_scalar(x->dtype, 0)), x, tg_mul(w, x));
    TG_LOCAL_RETURN(y);
}
