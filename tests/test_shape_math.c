/* Shape arithmetic that cannot wrap: sizes computed from user input (pads,
 * reps, concatenated and split axes, reshape targets, convolution and
 * pooling geometry, the im2col buffer, one_hot) fail with "shape too
 * large" instead of overflowing int64 (undefined behaviour, which the
 * UBSan build would also report). Symbolic tensors (graph mode) hold no
 * data, so their shapes reach the checks without any allocation failing
 * first. Also PyTorch's rules for reshape with -1 on empty tensors and for
 * integer powers with negative exponents. */
#include "harness.h"
#include "core/size_math.h"
#include "ops/op.h"

#include <stdint.h>
#include <string.h>

#define P2(k) ((int64_t)1 << (k))

static void test_helpers(void)
{
    int64_t r = -1;
    CHECK(tg__size_add("t", "x", 3, 4, &r) && r == 7);
    CHECK(tg__size_mul("t", "x", P2(20), P2(20), &r) && r == P2(40));
    CHECK(tg__size_mul("t", "x", 0, INT64_MAX, &r) && r == 0);
    CHECK_FAILS(tg__size_mul("t", "x", P2(32), P2(32), &r) ? TG_OK : tg_last_status(),
                TG_ERR_SHAPE, "t: shape too large");
    CHECK_FAILS(tg__size_add("t", "x", INT64_MAX, 1, &r) ? TG_OK : tg_last_status(),
                TG_ERR_SHAPE, "shape too large");
    CHECK_FAILS(tg__size_add("t", "x", TG_SIZE_MAX, 1, &r) ? TG_OK : tg_last_status(),
                TG_ERR_SHAPE, "shape too large");
    CHECK(tg__size_numel("t", 3, (int64_t[]){P2(20), 0, P2(20)}, &r) && r == 0);
    CHECK(!tg__size_numel("t", 3, (int64_t[]){P2(30), P2(30), 0}, &r));
    size_t b = 0;
    CHECK(tg__size_bytes("t", 10, 8, &b) && b == 80);
    CHECK(!tg__size_bytes("t", TG_SIZE_MAX, 32, &b));
    CHECK(tg__size_mul_exceeds(INT64_MAX, 2, 5) && !tg__size_mul_exceeds(2, 2, 4));
    CHECK(tg__size_window_span("t", 10, 1, 1, 3, 2, &r) && r == 10 + 2 - 4 - 1);
    CHECK(!tg__size_window_span("t", 10, INT64_MAX - 4, 0, 3, 1, &r));
}

/* the cases, concrete tensors */
static void test_tile_and_pad(void)
{
    tg_tensor *x = tg_ones(TG_FLOAT32, 1, (int64_t[]){4});
    CHECK_ERROR(tg_tile(x, 1, (int64_t[]){P2(62)}), TG_ERR_SHAPE, "shape too large");
    CHECK_ERROR(tg_tile(x, 1, (int64_t[]){P2(61)}), TG_ERR_SHAPE, "shape too large");
    CHECK_ERROR(tg_tile(x, 2, (int64_t[]){P2(40), P2(40)}), TG_ERR_SHAPE, "too large");
    CHECK_ERROR(tg_pad(x, 2, (int64_t[]){INT64_MAX - 1, INT64_MAX - 1}, 0), TG_ERR_SHAPE,
                "pad: shape too large");
    CHECK_ERROR(tg_pad(x, 2, (int64_t[]){P2(62), 0}, 0), TG_ERR_SHAPE, "shape too large");
    CHECK_SHAPE(tg_tile(x, 1, (int64_t[]){3}), 12);
    CHECK_SHAPE(tg_pad(x, 2, (int64_t[]){1, 2}, 0), 7);
    /* a huge step is a slice of one element, not a wrapped size */
    CHECK_SHAPE(tg_slice(x, 0, 0, 4, INT64_MAX), 1);
    CHECK_SHAPE(tg_slice(x, 0, 1, 4, P2(62)), 1);
    /* split sizes whose sum wraps do not match the axis by accident */
    tg_tensor *parts[3];
    CHECK_FAILS(tg_split(x, 0, 3, (int64_t[]){INT64_MAX, INT64_MAX, 6}, parts),
                TG_ERR_SHAPE, "shape too large");
}

/* graph mode: no data, so nothing but the arithmetic can stop these */
static void test_symbolic_shapes(void)
{
    tg_graph *g = tg_graph_new("big");
    tg_tensor *big = tg_placeholder(g, "big", TG_FLOAT32, 1, (int64_t[]){P2(57)});
    tg_tensor *sq = tg_placeholder(g, "sq", TG_FLOAT32, 2, (int64_t[]){P2(28), P2(28)});
    tg_tensor *idx = tg_placeholder(g, "idx", TG_INT64, 1, (int64_t[]){P2(30)});
    CHECK(big && sq && idx);
    CHECK_OK(tg_graph_begin(g));
    CHECK_SHAPE(tg_tile(big, 1, (int64_t[]){2}), P2(58));
    CHECK_ERROR(tg_tile(big, 1, (int64_t[]){P2(7)}), TG_ERR_SHAPE, "shape too large");
    tg_tensor *four[4] = {big, big, big, big};
    CHECK_SHAPE(tg_concat(2, four, 0), P2(58));
    CHECK_ERROR(tg_concat(4, four, 0), TG_ERR_SHAPE, "concat: shape too large");
    CHECK_ERROR(tg_pad(big, 2, (int64_t[]){P2(62), P2(62)}, 0), TG_ERR_SHAPE,
                "shape too large");
    CHECK_ERROR(tg_reshape(sq, 3, (int64_t[]){P2(40), P2(40), -1}), TG_ERR_SHAPE,
                "shape too large");
    CHECK_ERROR(tg_one_hot(idx, P2(40)), TG_ERR_SHAPE, "shape too large");
    CHECK_SHAPE(tg_one_hot(idx, 16), P2(30), 16);
    CHECK_OK(tg_graph_end());
    tg_graph_free(g);
}

/* convolution and pooling geometry from attributes (the op by name takes
 * int64 attributes, as graphs and ONNX import give them) */
static tg_tensor *conv_by_name(tg_tensor *x, tg_tensor *w, int64_t pad, int64_t dil)
{
    int64_t stride[2] = {1, 1}, padding[2] = {pad, pad}, dilation[2] = {dil, dil};
    tg_attr a[4] = {TG_AINTS("stride", stride, 2), TG_AINTS("padding", padding, 2),
                    TG_AINTS("dilation", dilation, 2), TG_AI("groups", 1)};
    tg_tensor *in[2] = {x, w};
    return tg_op_call(tg_op_find("conv2d"), 2, in, a, 4);
}

static tg_tensor *pool_by_name(tg_tensor *x, int64_t k, int64_t s, int64_t p, bool ceil)
{
    int64_t kk[2] = {k, k}, ss[2] = {s, s}, pp[2] = {p, p};
    tg_attr a[4] = {TG_AINTS("kernel", kk, 2), TG_AINTS("stride", ss, 2),
                    TG_AINTS("padding", pp, 2), TG_AI("ceil_mode", ceil)};
    return tg_op_call(tg_op_find("max_pool2d"), 1, &x, a, 4);
}

static void test_conv_and_pool_geometry(void)
{
    tg_tensor *x = tg_ones(TG_FLOAT32, 4, (int64_t[]){1, 1, 5, 5});
    tg_tensor *w = tg_ones(TG_FLOAT32, 4, (int64_t[]){1, 1, 3, 3});
    CHECK(tg_op_find("conv2d") && tg_op_find("max_pool2d"));
    CHECK_SHAPE(conv_by_name(x, w, 1, 1), 1, 1, 5, 5);
    CHECK_ERROR(conv_by_name(x, w, P2(62), 1), TG_ERR_SHAPE, "shape too large");
    CHECK_ERROR(conv_by_name(x, w, INT64_MAX / 2, 1), TG_ERR_SHAPE, "shape too large");
    CHECK_ERROR(conv_by_name(x, w, 0, P2(62)), TG_ERR_SHAPE, "shape too large");
    CHECK_ERROR(conv_by_name(x, w, 0, 4), TG_ERR_SHAPE, "larger than the padded input");
    CHECK_SHAPE(pool_by_name(x, 2, 2, 0, false), 1, 1, 2, 2);
    CHECK_SHAPE(pool_by_name(x, 2, 2, 0, true), 1, 1, 3, 3);
    CHECK_SHAPE(pool_by_name(x, 2, INT64_MAX, 0, true), 1, 1, 1, 1);
    CHECK_SHAPE(pool_by_name(x, 3, P2(62), 1, false), 1, 1, 1, 1);
    CHECK_ERROR(pool_by_name(x, P2(62), 1, P2(61), false), TG_ERR_SHAPE, "shape too large");
    CHECK_ERROR(pool_by_name(x, INT64_MAX, 1, INT64_MAX / 2, true), TG_ERR_SHAPE,
                "shape too large");
    /* an im2col buffer past any size, on symbolic tensors: 2^10 channels x
     * 2^10 x 2^10 taps x 2^20 x 2^20 output pixels */
    tg_graph *g = tg_graph_new("conv");
    tg_tensor *xs = tg_placeholder(g, "x", TG_FLOAT32, 4,
                                   (int64_t[]){1, P2(10), P2(20) + 1023, P2(20) + 1023});
    tg_tensor *ws = tg_placeholder(g, "w", TG_FLOAT32, 4, (int64_t[]){1, P2(10), P2(10), P2(10)});
    CHECK_OK(tg_graph_begin(g));
    CHECK_ERROR(conv_by_name(xs, ws, 0, 1), TG_ERR_SHAPE, "im2col buffer");
    CHECK_OK(tg_graph_end());
    tg_graph_free(g);
}

/* PyTorch: -1 is ambiguous only when the other dims multiply to 0 */
static void test_reshape_of_empty(void)
{
    tg_tensor *e = tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 3});
    CHECK_SHAPE(tg_reshape(e, 2, (int64_t[]){5, -1}), 5, 0); /* torch: [5, 0] */
    CHECK_SHAPE(tg_reshape(e, 2, (int64_t[]){-1, 3}), 0, 3);
    CHECK_ERROR(tg_reshape(e, 2, (int64_t[]){-1, 0}), TG_ERR_SHAPE,
                "the unspecified dimension size -1 can be any value and is ambiguous");
    CHECK_ERROR(tg_reshape(e, 2, (int64_t[]){0, -1}), TG_ERR_SHAPE, "ambiguous");
    CHECK_ERROR(tg_reshape(e, 2, (int64_t[]){-1, -1}), TG_ERR_SHAPE, "only one -1");
}

/* PyTorch: x ** -2 on integers raises; pow with a tensor exponent rounds
 * 1 / x toward zero (torch.pow(tensor([0,1,-1,2,-2,3]), tensor(-1)) is
 * [0, 1, -1, 0, 0, 0]) */
static void test_integer_pow(void)
{
    tg_tensor *x = tt_tensor(TG_INT64, 1, (int64_t[]){6}, (double[]){0, 1, -1, 2, -2, 3});
    CHECK_ERROR(tg_pow_scalar(x, -1), TG_ERR_ARG,
                "Integers to negative integer powers are not allowed");
    CHECK_ERROR(tg_pow_scalar(tg_cast(x, TG_INT32), -2), TG_ERR_ARG, "int32");
    CHECK_TENSOR(tg_pow_scalar(x, 2), ((double[]){0, 1, 1, 4, 4, 9}), 0);
    CHECK_TENSOR(tg_pow_scalar(x, 0), ((double[]){1, 1, 1, 1, 1, 1}), 0);
    tg_tensor *neg = tg_scalar(TG_INT64, -1);
    CHECK_TENSOR(tg_pow(x, neg), ((double[]){0, 1, -1, 0, 0, 0}), 0);
    CHECK_TENSOR(tg_pow(x, tg_scalar(TG_INT64, -2)), ((double[]){0, 1, 1, 0, 0, 0}), 0);
    /* a fractional or float exponent computes in floating point */
    tg_tensor *f = tg_pow_scalar(x, -0.5);
    CHECK(f && tg_dtype_is_float(tg_dtype_of(f)));
    tg_tensor *h = tg_pow_scalar(tg_cast(x, TG_FLOAT32), -1);
    CHECK(h && isinf(tg_get(h, (int64_t[]){0})) && tg_get(h, (int64_t[]){3}) == 0.5);
}

int main(void)
{
    RUN(test_helpers);
    RUN(test_tile_and_pad);
    RUN(test_symbolic_shapes);
    RUN(test_conv_and_pool_geometry);
    RUN(test_reshape_of_empty);
    RUN(test_integer_pow);
    return tt_finish();
}
