/* The composed nn functions tg_prelu, tg_pixel_shuffle and
 * tg_pixel_unshuffle: forward against references written out here (the
 * PyTorch definitions), gradients against float64 finite differences
 * (both of prelu's inputs, contiguous and strided), the round trip of
 * shuffle and unshuffle, graph mode against eager, and PyTorch's errors. */
#include "harness.h"

#include <stdlib.h>

static tg_tensor *prelu_fn(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    (void)user;
    return tg_prelu(in[0], in[1]);
}

static tg_tensor *shuffle_fn(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return *(int *)user > 0 ? tg_pixel_shuffle(in[0], *(int *)user)
                            : tg_pixel_unshuffle(in[0], -*(int *)user);
}

static void test_prelu(void)
{
    /* per channel: [2, 3, 2] with weights [3] */
    tg_tensor *x = tt_rand(3, (int64_t[]){2, 3, 2}, -1, 1), *w = tt_rand(1, (int64_t[]){3}, 0.1, 0.9);
    tg_tensor *y = tg_prelu(x, w);
    double *xv = tt_values(x), *wv = tt_values(w), want[12];
    for (int i = 0; i < 12; i++)
        want[i] = xv[i] > 0 ? xv[i] : wv[i / 2 % 3] * xv[i];
    CHECK_TENSOR(y, want, 1e-15);
    free(xv);
    free(wv);
    CHECK_GRADCHECK(prelu_fn, NULL, 2, ((tg_tensor *[]){x, w}));
    /* one weight, 0-d and [1], on [4] and [2, 2, 2] */
    CHECK_GRADCHECK(prelu_fn, NULL, 2, ((tg_tensor *[]){tt_rand(1, (int64_t[]){4}, -1, 1),
                                                         tt_rand(1, (int64_t[]){1}, 0.1, 0.9)}));
    CHECK_GRADCHECK(prelu_fn, NULL, 2, ((tg_tensor *[]){tt_rand(3, (int64_t[]){2, 2, 2}, -1, 1),
                                                         tt_rand(0, NULL, 0.1, 0.9)}));
    /* 0 is on the weight's side (x > 0 keeps x), as PyTorch */
    tg_tensor *z = tg_prelu(tt_tensor(TG_FLOAT32, 1, (int64_t[]){3}, (double[]){0, -2, 3}),
                            tg_scalar(TG_FLOAT32, 0.5));
    CHECK_TENSOR(z, ((double[]){0, -1, 3}), 0);
    /* PyTorch's checks */
    CHECK_ERROR(tg_prelu(x, tg_zeros(TG_FLOAT64, 1, (int64_t[]){2})), TG_ERR_SHAPE,
                "Mismatch of parameter numbers and input channel size. Found parameter "
                "numbers = 2 and channel size = 3.");
    CHECK_ERROR(tg_prelu(x, tg_zeros(TG_FLOAT64, 2, (int64_t[]){1, 3})), TG_ERR_SHAPE,
                "scalar or 1D tensor");
    CHECK_ERROR(tg_prelu(tg_zeros(TG_FLOAT64, 1, (int64_t[]){3}),
                         tg_zeros(TG_FLOAT64, 1, (int64_t[]){3})), TG_ERR_SHAPE,
                "channel size = 1");
    CHECK_ERROR(tg_prelu(NULL, w), TG_ERR_ARG, "prelu: input is NULL");
}

static void test_pixel_shuffle(void)
{
    /* [2, 1, 8, 2, 3] -> [2, 1, 2, 4, 6]: out[b, c, h r + i, w r + j] =
     * in[b, c r^2 + i r + j, h, w] */
    const int64_t B = 2, C = 2, r = 2, H = 2, W = 3;
    tg_tensor *x = tt_rand(5, (int64_t[]){B, 1, C * r * r, H, W}, -1, 1);
    tg_tensor *y = tg_pixel_shuffle(x, r);
    CHECK_SHAPE(y, B, 1, C, H * r, W * r);
    double *xv = tt_values(x), *want = malloc((size_t)tg_numel(x) * sizeof *want);
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H * r; h++)
                for (int64_t w = 0; w < W * r; w++) {
                    int64_t ci = c * r * r + (h % r) * r + w % r;
                    want[((b * C + c) * H * r + h) * W * r + w] =
                        xv[((b * C * r * r + ci) * H + h / r) * W + w / r];
                }
    CHECK_TENSOR(y, want, 0);
    free(xv);
    free(want);
    CHECK(tt_same(tg_pixel_unshuffle(y, r), x));
    int up = 2, down = -2;
    CHECK_GRADCHECK(shuffle_fn, &up, 1, ((tg_tensor *[]){tt_rand(3, (int64_t[]){8, 1, 2}, -1, 1)}));
    CHECK_GRADCHECK(shuffle_fn, &down, 1,
                    ((tg_tensor *[]){tt_rand(4, (int64_t[]){1, 2, 4, 2}, -1, 1)}));
    /* integers and bool keep their dtype */
    tg_tensor *i = tg_pixel_shuffle(tg_ones(TG_INT64, 3, (int64_t[]){4, 1, 1}), 2);
    CHECK(i && tg_dtype_of(i) == TG_INT64);
    CHECK_SHAPE(i, 1, 2, 2);
    /* PyTorch's checks */
    CHECK_ERROR(tg_pixel_shuffle(tg_zeros(TG_FLOAT32, 2, (int64_t[]){4, 4}), 2), TG_ERR_SHAPE,
                "at least 3 dimensions");
    CHECK_ERROR(tg_pixel_shuffle(tg_zeros(TG_FLOAT32, 3, (int64_t[]){2, 3, 3}), 2),
                TG_ERR_SHAPE, "input.size(-3)=2 is not divisible by 4");
    CHECK_ERROR(tg_pixel_shuffle(x, 0), TG_ERR_ARG, "positive upscale_factor");
    CHECK_ERROR(tg_pixel_shuffle(x, INT64_MAX), TG_ERR_SHAPE, "too large");
    CHECK_ERROR(tg_pixel_unshuffle(tg_zeros(TG_FLOAT32, 3, (int64_t[]){1, 3, 4}), 2),
                TG_ERR_SHAPE, "height to be divisible by downscale_factor, but "
                "input.size(-2)=3 is not divisible by 2");
    CHECK_ERROR(tg_pixel_unshuffle(tg_zeros(TG_FLOAT32, 3, (int64_t[]){1, 4, 5}), 2),
                TG_ERR_SHAPE, "width");
    CHECK_ERROR(tg_pixel_unshuffle(x, -1), TG_ERR_ARG, "positive downscale_factor");
}

/* graph mode builds the same values as eager (the ops are the composite's),
 * also with an unknown batch dim */
static void test_graph_mode(void)
{
    tg_tensor *x = tt_rand(4, (int64_t[]){2, 4, 3, 3}, -1, 1), *w = tt_rand(1, (int64_t[]){4}, 0, 1);
    tg_tensor *eager = tg_pixel_unshuffle(tg_prelu(tg_pixel_shuffle(x, 2), tg_reshape(
        tg_slice(w, 0, 0, 1, 1), 1, (int64_t[]){1})), 3);
    tg_graph *g = tg_graph_new(NULL);
    CHECK_OK(tg_graph_begin(g));
    tg_tensor *p = tg_placeholder(g, "x", TG_FLOAT64, 4, (int64_t[]){-1, 4, 3, 3});
    tg_tensor *sym = tg_pixel_unshuffle(tg_prelu(tg_pixel_shuffle(p, 2), tg_reshape(
        tg_slice(w, 0, 0, 1, 1), 1, (int64_t[]){1})), 3);
    CHECK_OK(tg_graph_end());
    CHECK(sym && tg_shape(sym)[0] == -1);
    tg_session *s = tg_session_new(g);
    tg_tensor *out = NULL;
    CHECK_OK(tg_session_run(s, 1, (tg_tensor *[]){p}, (tg_tensor *[]){x}, 1, &sym, &out, 0,
                            NULL));
    CHECK(tt_same(out, eager)); /* out belongs to tt_run's scope (tg_session_run) */
    tg_session_free(s);
    tg_graph_free(g);
}

int main(void)
{
    RUN(test_prelu);
    RUN(test_pixel_shuffle);
    RUN(test_graph_mode);
    return tt_finish();
}
