/* tg_scatter (torch.scatter with a src tensor): forward against a reference
 * written out here (PyTorch's definition), repeated indices (the last in
 * index order wins), strided operands, every dtype, and PyTorch's errors.
 * Gradients, forward mode, graph mode and the ONNX round trip are the op
 * samples' (tests/op_samples.c). */
#include "harness.h"

#include <stdlib.h>

/* x [3, 4], index [2, 3] along axis 1 (values in 0..3, with repeats), src
 * [3, 5]: out[i][index[i][j]] = src[i][j] */
static void test_scatter_values(void)
{
    const double iv[6] = {3, 0, 3, 1, 1, 2};
    const tg_dtype dts[] = {TG_FLOAT32, TG_FLOAT64, TG_INT32, TG_INT64, TG_UINT8, TG_BOOL};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
        double xv[12], sv[15], want[12];
        for (int i = 0; i < 12; i++)
            xv[i] = dts[d] == TG_BOOL ? i % 2 : i + 1;
        for (int i = 0; i < 15; i++)
            sv[i] = dts[d] == TG_BOOL ? (i % 3 == 0) : 20 + i;
        for (int i = 0; i < 12; i++)
            want[i] = xv[i];
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                want[i * 4 + (int)iv[i * 3 + j]] = sv[i * 5 + j];
        tg_tensor *x = tt_tensor(dts[d], 2, (int64_t[]){3, 4}, xv);
        tg_tensor *src = tt_tensor(dts[d], 2, (int64_t[]){3, 5}, sv);
        tg_tensor *index = tt_tensor(TG_INT64, 2, (int64_t[]){2, 3}, iv);
        tg_tensor *y = tg_scatter(x, 1, index, src);
        CHECK(y && tg_dtype_of(y) == dts[d]);
        CHECK_TENSOR(y, want, 0);
        /* int32 indices and a negative axis give the same */
        CHECK(tt_same(tg_scatter(x, -1, tg_cast(index, TG_INT32), src), y));
        /* strided operands: scattering transposed tensors along axis 0 */
        tg_tensor *yt = tg_scatter(tg_transpose(tg_contiguous(tg_transpose(x, 0, 1)), 0, 1), 1,
                                   tg_transpose(tg_contiguous(tg_transpose(index, 0, 1)), 0, 1),
                                   src);
        CHECK(tt_same(yt, y));
    }
}

static void test_scatter_errors(void)
{
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 4});
    tg_tensor *src = tg_ones(TG_FLOAT32, 2, (int64_t[]){3, 5});
    tg_tensor *i = tt_tensor(TG_INT64, 2, (int64_t[]){1, 1}, (double[]){4});
    CHECK_ERROR(tg_scatter(x, 1, i, src), TG_ERR_INDEX,
                "scatter: index 4 is out of bounds for dimension 1 with size 4");
    CHECK_ERROR(tg_scatter(x, 1, tg_neg(i), src), TG_ERR_INDEX, "index -4 is out of bounds");
    CHECK_ERROR(tg_scatter(x, 1, i, tg_cast(src, TG_FLOAT64)), TG_ERR_DTYPE,
                "Expected self.dtype to be equal to src.dtype");
    CHECK_ERROR(tg_scatter(x, 1, tg_zeros(TG_INT64, 2, (int64_t[]){4, 1}), src), TG_ERR_SHAPE,
                "Expected index [4, 1] to be smaller than self [3, 4] apart from dimension 1 "
                "and to be smaller size than src [3, 5]");
    CHECK_ERROR(tg_scatter(x, 1, tg_zeros(TG_INT64, 1, (int64_t[]){3}), src), TG_ERR_SHAPE,
                "same number of dimensions");
    CHECK_ERROR(tg_scatter(x, 2, i, src), TG_ERR_INDEX, "");
    CHECK_ERROR(tg_scatter(x, 1, tg_cast(i, TG_FLOAT32), src), TG_ERR_DTYPE, "int");
    CHECK_ERROR(tg_scatter(x, 1, NULL, src), TG_ERR_ARG, "");
}

int main(void)
{
    RUN(test_scatter_values);
    RUN(test_scatter_errors);
    return tt_finish();
}
