/* Convolutions given hostile strides, dilations and paddings, and the
 * messages of failed allocations (tests/python/test_hostile_conv.py has
 * the Python side, against torch). A stride far past the input is legal
 * (torch gives one output position along that dim) and must not size the
 * strided kernels' scratch; a dilation and padding of 2^30 around a small
 * input is a small convolution; a request no machine can serve fails with
 * TG_ERR_NOMEM and a message naming what failed. */
#include "core/tensor_impl.h"
#include "harness.h"
#include "ops/op.h"
#include "tg/tg.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define BIG 2147483647 /* INT_MAX: the largest stride the public options take */

/* ASan aborts on an allocation past its maximum unless told to return NULL,
 * which is what the tests of TG_ERR_NOMEM below need malloc to do */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* the peak resident set, in MB */
static long peak_mb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

static tg_tensor *leaf(tg_dtype dt, int ndim, const int64_t *shape)
{
    tg_tensor *t = tt_rand_dtype(dt, ndim, shape, -1, 1);
    tg_set_requires_grad(t, true);
    return t;
}

/* one layer shape of each forward path: few input channels with a
 * stride (conv_few.c), many channels and taps (conv_dense.c), depthwise,
 * pointwise, and grouped (im2col) */
typedef struct layer {
    const char *name;
    int64_t c, o, k, groups;
} layer;
static const layer layers[] = {{"few", 3, 4, 3, 1},  {"dense", 32, 32, 3, 1},
                               {"dw", 8, 8, 3, 8},   {"pw", 8, 4, 1, 1},
                               {"grouped", 4, 6, 3, 2}};

/* the stride cut to the smallest giving the same output size along a dim
 * (in + 2 pad - dilated kernel, plus one, when one position fits) */
static int cut_stride(int64_t in, int pad, int64_t k, int dil, int stride)
{
    int64_t span = in + 2 * (int64_t)pad - (k - 1) * dil - 1;
    return span / stride == 0 && stride > span + 1 ? (int)(span + 1) : stride;
}

/* y, dx, dw of conv2d(x, w) with opts, backward of sum(y * y) */
static void conv_and_grads(tg_tensor *x, tg_tensor *w, const tg_conv2d_opts *o,
                           tg_tensor **out)
{
    tg_zero_grad(x);
    tg_zero_grad(w);
    out[0] = tg_conv2d(x, w, NULL, o);
    CHECK(out[0] != NULL);
    if (!out[0])
        return;
    CHECK_OK(tg_backward(tg_sum(tg_mul(out[0], out[0]), 0, NULL, false), NULL, false));
    out[1] = tg_clone(tg_grad(x));
    out[2] = tg_clone(tg_grad(w));
}

/* every path, both dtypes, strides up to INT_MAX along one or both dims:
 * the values and gradients of the same convolution with the stride cut to
 * the smallest that gives the same output, and no more memory than such a
 * small convolution needs. Before, the few-channel path sized its stride
 * phases by the stride: (2, INT_MAX) failed with TG_ERR_NOMEM and no
 * message, 2^26 took gigabytes. */
static void test_huge_strides_are_one_position(void)
{
    const int strides[][2] = {{2, BIG}, {BIG, 2}, {BIG, BIG}, {1, 1 << 26}, {1 << 20, 3}};
    const tg_dtype dts[2] = {TG_FLOAT32, TG_FLOAT64};
    long before = peak_mb();
    for (size_t l = 0; l < sizeof layers / sizeof *layers; l++)
        for (int d = 0; d < 2; d++)
            for (size_t s = 0; s < sizeof strides / sizeof *strides; s++) {
                const layer *L = &layers[l];
                tg_scope_begin();
                tg_tensor *x = leaf(dts[d], 4, (int64_t[]){2, L->c, 9, 11});
                tg_tensor *w = leaf(dts[d], 4, (int64_t[]){L->o, L->c / L->groups, L->k, L->k});
                int pad = L->k / 2;
                tg_conv2d_opts big = {{strides[s][0], strides[s][1]}, {pad, pad}, {1, 1},
                                      (int)L->groups};
                tg_conv2d_opts cut = big;
                cut.stride[0] = cut_stride(9, pad, L->k, 1, big.stride[0]);
                cut.stride[1] = cut_stride(11, pad, L->k, 1, big.stride[1]);
                tg_tensor *a[3] = {0}, *b[3] = {0};
                conv_and_grads(x, w, &big, a);
                conv_and_grads(x, w, &cut, b);
                double tol = dts[d] == TG_FLOAT32 ? 1e-5 : 1e-12;
                for (int i = 0; i < 3; i++)
                    if (!(tt_rel_diff(a[i], b[i], 1) <= tol))
                        tt_fail(__FILE__, __LINE__, "%s %s stride %dx%d: output %d differs "
                                "from stride %dx%d's (%s)", L->name, tg_dtype_name(dts[d]),
                                big.stride[0], big.stride[1], i, cut.stride[0],
                                cut.stride[1], tg_last_error());
                tg_scope_end();
            }
    long grew = peak_mb() - before;
    if (grew > 200)
        tt_fail(__FILE__, __LINE__, "huge strides grew the peak RSS by %ld MB", grew);
}

/* dilation and padding 2^30 - 1 around a 5 x 6 plane with a 3 x 3 kernel:
 * only the centre tap reads the input, so y = w[:, :, 1, 1] @ x per
 * position (torch computes it). Before, the padded planes were refused as
 * "shape too large" (2^31 x 2^31 elements each). */
static void test_huge_dilation_reads_the_centre_tap(void)
{
    const int D = (1 << 30) - 1;
    for (size_t l = 0; l < sizeof layers / sizeof *layers; l++) {
        const layer *L = &layers[l];
        if (L->k != 3)
            continue;
        tg_scope_begin();
        tg_tensor *x = leaf(TG_FLOAT64, 4, (int64_t[]){2, L->c, 5, 6});
        tg_tensor *w = leaf(TG_FLOAT64, 4, (int64_t[]){L->o, L->c / L->groups, 3, 3});
        tg_conv2d_opts o = {{1, 1}, {D, D}, {D, D}, (int)L->groups};
        tg_tensor *y[3] = {0}, *want[3] = {0};
        conv_and_grads(x, w, &o, y);
        CHECK_SHAPE(y[0], 2, L->o, 5, 6);
        /* the centre taps as a 1 x 1 convolution */
        tg_tensor *centre = tg_detach(tg_slice(tg_slice(w, 2, 1, 2, 1), 3, 1, 2, 1));
        tg_set_requires_grad(centre, true);
        tg_conv2d_opts one = {{1, 1}, {0, 0}, {1, 1}, (int)L->groups};
        conv_and_grads(x, centre, &one, want);
        CHECK(tt_rel_diff(y[0], want[0], 1) <= 1e-12);
        CHECK(tt_rel_diff(y[1], want[1], 1) <= 1e-12);
        /* the weight gradient: zero but at the centre */
        tg_tensor *dwc = y[2] ? tg_slice(tg_slice(y[2], 2, 1, 2, 1), 3, 1, 2, 1) : NULL;
        CHECK(tt_rel_diff(dwc, want[2], 1) <= 1e-12);
        if (y[2])
            CHECK_NEAR(tg_item(tg_sum(tg_abs(y[2]), 0, NULL, false)),
                       tg_item(tg_sum(tg_abs(want[2]), 0, NULL, false)), 1e-9);
        tg_scope_end();
    }
}

/* a transposed convolution of a one-position input ignores its stride: a
 * stride of INT_MAX gives the kernel's extent, the same as stride 1 */
static void test_transposed_of_one_position(void)
{
    tg_tensor *x = leaf(TG_FLOAT64, 4, (int64_t[]){1, 3, 1, 1});
    tg_tensor *w = leaf(TG_FLOAT64, 4, (int64_t[]){3, 2, 3, 3});
    tg_conv_transpose2d_opts big = {{BIG, BIG}, {1, 0}, {0, 0}, {1, 1}, 1};
    tg_conv_transpose2d_opts one = {{1, 1}, {1, 0}, {0, 0}, {1, 1}, 1};
    tg_tensor *a = tg_conv_transpose2d(x, w, NULL, &big);
    tg_tensor *b = tg_conv_transpose2d(x, w, NULL, &one);
    CHECK_SHAPE(a, 1, 2, 1, 3);
    CHECK(tt_rel_diff(a, b, 1) <= 1e-12);
}

/* the level-2 node conv2d_pw_dw (a pointwise then a depthwise layer) takes
 * int64 strides from a graph's wire form: a stride of 2^62 along a dim of
 * one output position gives the two layers' values, fused (frozen
 * pointwise weights, a 24 x 24 plane) or not (a guard: this passed before
 * the stride cut too, the fused kernel's strips being sized by the output) */
static void test_pw_dw_of_huge_strides(void)
{
    const int64_t strides[][2] = {{2, INT64_C(1) << 62}, {INT64_C(1) << 40, 1}};
    for (int frozen = 0; frozen < 2; frozen++)
        for (int s = 0; s < 2; s++) {
            tg_scope_begin();
            tg_tensor *x = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){2, 5, 24, 24}, -1, 1);
            tg_tensor *w1 = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){16, 5, 1, 1}, -1, 1);
            tg_tensor *b1 = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){16}, -1, 1);
            tg_tensor *w2 = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){16, 1, 3, 3}, -1, 1);
            tg_tensor *b2 = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){16}, -1, 1);
            if (frozen)
                tg__storage_freeze(w1);
            const int64_t pad[2] = {1, 1};
            tg_attr a[2] = {TG_AINTS("stride", strides[s], 2), TG_AINTS("padding", pad, 2)};
            tg_tensor *y = tg_op_call(tg_op_find("conv2d_pw_dw"), 5,
                                      (tg_tensor *[]){x, w1, b1, w2, b2}, a, 2);
            tg_conv2d_opts o = {{cut_stride(24, 1, 3, 1, (int)(strides[s][0] > BIG ? BIG : strides[s][0])),
                                 cut_stride(24, 1, 3, 1, (int)(strides[s][1] > BIG ? BIG : strides[s][1]))},
                                {1, 1}, {1, 1}, 16};
            tg_tensor *want = tg_conv2d(tg_conv2d(x, w1, b1, NULL), w2, b2, &o);
            CHECK(y != NULL);
            if (!(tt_rel_diff(y, want, 1) <= 1e-5))
                tt_fail(__FILE__, __LINE__, "pw_dw stride %lld x %lld (frozen %d): %g (%s)",
                        (long long)strides[s][0], (long long)strides[s][1], frozen,
                        tt_rel_diff(y, want, 1), tg_last_error());
            tg_scope_end();
        }
}

/* what no machine serves fails with TG_ERR_NOMEM and a message: a tensor
 * of 2^50 elements (under the size bound, so malloc is asked), and a
 * convolution whose im2col patches (2^21 taps x 2^20 positions, 8 TB)
 * are its kernel's scratch, which the kernel itself does not describe:
 * the dispatcher says which op ran out (tg__said_why). Before, the
 * convolution failed with an empty message. */
static void test_failed_allocations_say_so(void)
{
    int64_t huge[1] = {(int64_t)1 << 50};
    CHECK_ERROR(tg_empty(TG_FLOAT32, 1, huge), TG_ERR_NOMEM, "out of memory");
    CHECK_ERROR(tg_ones(TG_FLOAT64, 1, huge), TG_ERR_NOMEM, "out of memory");
    CHECK_ERROR(tg_zeros(TG_FLOAT32, 2, ((int64_t[]){1 << 25, 1 << 25})), TG_ERR_NOMEM,
                "out of memory");
    tg_tensor *x = tg_ones(TG_FLOAT32, 4, (int64_t[]){1, 1, 1, (int64_t)1 << 22});
    tg_tensor *w = tg_ones(TG_FLOAT32, 4, (int64_t[]){1, 1, 1, (int64_t)1 << 21});
    tg_conv2d_opts o = {{1, 2}, {0, 0}, {1, 1}, 1};
    CHECK_ERROR(tg_conv2d(x, w, NULL, &o), TG_ERR_NOMEM, "conv2d: out of memory");
    /* the message is the call's own, not an earlier one kept */
    tg_clear_error();
    tg_tensor *ok = tg_conv2d(tg_ones(TG_FLOAT32, 4, (int64_t[]){1, 1, 1, 4}),
                              tg_ones(TG_FLOAT32, 4, (int64_t[]){1, 1, 1, 2}), NULL, &o);
    CHECK_SHAPE(ok, 1, 1, 1, 2);
}

int main(void)
{
    RUN(test_huge_strides_are_one_position);
    RUN(test_huge_dilation_reads_the_centre_tap);
    RUN(test_transposed_of_one_position);
    RUN(test_pw_dw_of_huge_strides);
    RUN(test_failed_allocations_say_so);
    return tt_finish();
}
