/* The in-place ops' undispatched paths (src/ops/inplace.c: fill_plain,
 * add_plain, copy_plain): on a plain destination they must do exactly
 * what the dispatched op does (values, version bump), and every case
 * they do not cover must still take the op (autograd recording, views,
 * conversions, overlapping storage, non-contiguous operands, copies
 * large enough to split over threads). */
#include "harness.h"

#include <string.h>

static tg_tensor *ramp(tg_dtype dt, int n, double from)
{
    return tg_cast(tg_arange(TG_FLOAT64, from, from + n, 1), dt);
}

static void test_copy_plain(void)
{
    tg_scope_begin();
    tg_dtype dts[] = {TG_FLOAT32, TG_FLOAT64, TG_INT32, TG_INT64, TG_UINT8, TG_BOOL};
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        tg_tensor *dst = tg_zeros(dts[k], 1, (int64_t[]){7}), *src = ramp(dts[k], 7, 1);
        uint64_t v0 = tg_version(dst);
        CHECK_OK(tg_copy_(dst, src));
        CHECK(tt_same(dst, src));
        CHECK(tg_version(dst) == v0 + 1);
    }
    /* another dtype: converted by the op */
    tg_tensor *d32 = tg_zeros(TG_FLOAT32, 1, (int64_t[]){5});
    CHECK_OK(tg_copy_(d32, ramp(TG_INT64, 5, -2)));
    CHECK(tt_same(d32, ramp(TG_FLOAT32, 5, -2)));
    /* broadcast source */
    tg_tensor *m = tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 4});
    CHECK_OK(tg_copy_(m, ramp(TG_FLOAT32, 4, 0)));
    CHECK(tg_item(tg_sum(m, 0, NULL, false)) == 18);
    /* a transposed source and a transposed destination */
    tg_tensor *a = tg_reshape(ramp(TG_FLOAT32, 6, 0), 2, (int64_t[]){2, 3});
    tg_tensor *b = tg_zeros(TG_FLOAT32, 2, (int64_t[]){3, 2});
    CHECK_OK(tg_copy_(b, tg_transpose(a, 0, 1)));
    CHECK(tt_same(b, tg_contiguous(tg_transpose(a, 0, 1))));
    tg_tensor *c = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_OK(tg_copy_(tg_transpose(c, 0, 1), tg_transpose(a, 0, 1)));
    CHECK(tt_same(c, a));
    /* the same storage, overlapping: the op's order (a shift by one) */
    tg_tensor *s = ramp(TG_FLOAT64, 6, 0);
    CHECK_OK(tg_copy_(tg_slice(s, 0, 0, 5, 1), tg_slice(s, 0, 1, 6, 1)));
    double got[6];
    CHECK_OK(tg_copy_to(s, TG_FLOAT64, got));
    CHECK(got[0] == 1 && got[4] == 5 && got[5] == 5);
    /* larger than the plain path's bound: the op, the same values */
    tg_tensor *big = tg_zeros(TG_FLOAT32, 1, (int64_t[]){1 << 19}),
              *bsrc = ramp(TG_FLOAT32, 1 << 19, 0);
    CHECK_OK(tg_copy_(big, bsrc));
    CHECK(tt_same(big, bsrc));
    tg_scope_end();
}

static void test_copy_records(void)
{
    tg_scope_begin();
    /* a source that requires grad: the copy is recorded (dst gets history) */
    tg_tensor *x = ramp(TG_FLOAT64, 4, 1);
    tg_set_requires_grad(x, true);
    tg_tensor *y = tg_zeros(TG_FLOAT64, 1, (int64_t[]){4});
    CHECK_OK(tg_copy_(y, x));
    CHECK(tg_requires_grad(y) && tg_grad_fn_name(y) != NULL);
    CHECK_OK(tg_backward(tg_sum(tg_mul(y, y), 0, NULL, false), NULL, false));
    CHECK(tt_same(tg_grad(x), tg_mul_scalar(x, 2)));
    /* under no_grad it is a plain write */
    tg_tensor *z = tg_zeros(TG_FLOAT64, 1, (int64_t[]){4});
    tg_no_grad_begin();
    CHECK_OK(tg_copy_(z, x));
    tg_no_grad_end();
    CHECK(!tg_requires_grad(z) && tt_same(z, tg_detach(x)));
    /* a leaf that requires grad is refused, as by the op */
    tg_tensor *leaf = tg_zeros(TG_FLOAT64, 1, (int64_t[]){4});
    tg_set_requires_grad(leaf, true);
    CHECK(tg_copy_(leaf, tg_detach(x)) != TG_OK);
    tg_clear_error();
    /* a view of a tensor: its base sees the write */
    tg_tensor *base = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3});
    CHECK_OK(tg_copy_(tg_reshape(tg_slice(base, 0, 1, 2, 1), 1, (int64_t[]){3}), ramp(TG_FLOAT32, 3, 7)));
    CHECK(tg_item(tg_sum(base, 0, NULL, false)) == 24);
    tg_scope_end();
}

static void test_fill_add_plain(void)
{
    tg_scope_begin();
    tg_tensor *t = ramp(TG_FLOAT32, 5, 0);
    uint64_t v0 = tg_version(t);
    CHECK_OK(tg_fill_(t, 2.5));
    CHECK(tg_version(t) == v0 + 1 && tg_item(tg_sum(t, 0, NULL, false)) == 12.5);
    CHECK_OK(tg_add_(t, ramp(TG_FLOAT32, 5, 0), 2));
    CHECK(tg_version(t) == v0 + 2 && tg_item(tg_sum(t, 0, NULL, false)) == 32.5);
    /* adding a tensor to itself (one storage): the op */
    CHECK_OK(tg_add_(t, t, 1));
    CHECK(tg_item(tg_sum(t, 0, NULL, false)) == 65);
    tg_scope_end();
}

int main(void)
{
    RUN(test_copy_plain);
    RUN(test_copy_records);
    RUN(test_fill_add_plain);
    return tt_finish();
}
