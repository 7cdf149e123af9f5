/* torch.nn.functional.pixel_shuffle / pixel_unshuffle: depth to space and
 * back, [*, C r^2, H, W] <-> [*, C, H r, W r], with channel c r^2 + i r + j
 * holding the pixel (i, j) of each r x r block of channel c (ONNX's
 * DepthToSpace in CRD mode; the importer builds DCR and SpaceToDepth the
 * same way). Composed from reshape and permute, so gradients, graph mode
 * and ONNX export come from those; any dtype. The batch dims are flattened
 * into one so that the 6-d intermediate fits any input rank. */
#include "core/size_math.h"
#include "ops/nn_util.h"

/* x's dims before the last three, as one: its size, or -1 (inferred) */
static int64_t batch_of(const tg_tensor *x)
{
    int64_t b = 1;
    for (int i = 0; i < x->ndim - 3; i++) {
        if (x->shape[i] < 0)
            return -1;
        b *= x->shape[i];
    }
    return b;
}

static bool check(const char *op, tg_tensor *x, int64_t r, const char *factor)
{
    if (!tg__nn_have(op, x, "input"))
        return false;
    if (x->ndim < 3) {
        tg__error(TG_ERR_SHAPE, "%s expects input to have at least 3 dimensions, but got "
                  "input with %d dimension(s)", op, x->ndim);
        return false;
    }
    if (r <= 0) {
        tg__error(TG_ERR_ARG, "%s expects a positive %s, but got %lld", op, factor,
                  (long long)r);
        return false;
    }
    return true;
}

/* [*, C, H, W] with shape[0..ndim-3) the batch dims, then c, h, w */
static tg_tensor *unflatten(tg_tensor *y, const tg_tensor *x, int64_t c, int64_t h, int64_t w)
{
    int64_t shape[TG_MAX_DIMS];
    int nb = x->ndim - 3;
    for (int i = 0; i < nb; i++)
        shape[i] = x->shape[i];
    shape[nb] = c;
    shape[nb + 1] = h;
    shape[nb + 2] = w;
    return tg_reshape(y, x->ndim, shape);
}

tg_tensor *tg_pixel_shuffle(tg_tensor *x, int64_t upscale_factor)
{
    const char *op = "pixel_shuffle";
    int64_t r = upscale_factor, rr;
    if (!check(op, x, r, "upscale_factor"))
        return NULL;
    int nd = x->ndim;
    int64_t c = x->shape[nd - 3], h = x->shape[nd - 2], w = x->shape[nd - 1], hr, wr;
    if (!tg__size_mul(op, "upscale_factor squared", r, r, &rr))
        return NULL;
    if (c % rr) {
        tg__error(TG_ERR_SHAPE, "pixel_shuffle expects its input's 'channel' dimension to "
                  "be divisible by the square of upscale_factor, but input.size(-3)=%lld is "
                  "not divisible by %lld", (long long)c, (long long)rr);
        return NULL;
    }
    if (!tg__size_mul(op, "the output height", h, r, &hr) ||
        !tg__size_mul(op, "the output width", w, r, &wr))
        return NULL;
    TG_LOCAL_BEGIN();
    /* [B, C, r, r, H, W] -> [B, C, H, r, W, r] */
    tg_tensor *y = tg_reshape(x, 6, (int64_t[]){batch_of(x), c / rr, r, r, h, w});
    y = tg_permute(y, (int[]){0, 1, 4, 2, 5, 3});
    y = unflatten(y, x, c / rr, hr, wr);
    TG_LOCAL_RETURN(y);
}

tg_tensor *tg_pixel_unshuffle(tg_tensor *x, int64_t downscale_factor)
{
    const char *op = "pixel_unshuffle";
    int64_t r = downscale_factor, rr, crr;
    if (!check(op, x, r, "downscale_factor"))
        return NULL;
    int nd = x->ndim;
    int64_t c = x->shape[nd - 3], h = x->shape[nd - 2], w = x->shape[nd - 1];
    if (h % r || w % r) {
        bool hb = h % r != 0;
        tg__error(TG_ERR_SHAPE, "pixel_unshuffle expects %s to be divisible by "
                  "downscale_factor, but input.size(%d)=%lld is not divisible by %lld",
                  hb ? "height" : "width", hb ? -2 : -1, (long long)(hb ? h : w),
                  (long long)r);
        return NULL;
    }
    if (!tg__size_mul(op, "downscale_factor squared", r, r, &rr) ||
        !tg__size_mul(op, "the output channels", c, rr, &crr))
        return NULL;
    TG_LOCAL_BEGIN();
    /* [B, C, H/r, r, W/r, r] -> [B, C, r, r, H/r, W/r] */
    tg_tensor *y = tg_reshape(x, 6, (int64_t[]){batch_of(x), c, h / r, r, w / r, r});
    y = tg_permute(y, (int[]){0, 1, 3, 5, 2, 4});
    y = unflatten(y, x, crr, h / r, w / r);
    TG_LOCAL_RETURN(y);
}
