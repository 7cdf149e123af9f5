/* The parts of the public API that front ends (the Python package) lean
 * on: tensors over memory someone else owns (tg_from_blob) and custom
 * functions that own their user data (tg_function.user_free). */
#include "harness.h"

#include <math.h>
#include <tg/tg.h>

static int releases;
static void count_release(void *ctx)
{
    releases++;
    *(int *)ctx = 1;
}

static void test_blob_shares_and_releases(void)
{
    double data[6] = {1, 2, 3, 4, 5, 6};
    int released = 0;
    releases = 0;
    tg_scope_end(); /* act as a caller that owns what it gets */
    tg_tensor *t = tg_from_blob(TG_FLOAT64, 2, (int64_t[]){2, 3}, NULL, data,
                                count_release, &released);
    CHECK(t && tg_data(t) == data && tg_is_contiguous(t));
    CHECK_NEAR(tg_get(t, (int64_t[]){1, 2}), 6, 0);
    /* writes through the tensor land in the caller's memory */
    CHECK_OK(tg_add_(t, t, 1.0));
    CHECK_NEAR(data[4], 10, 0);
    CHECK(tg_version(t) == 1);
    /* views keep the memory alive after the first tensor goes */
    tg_tensor *v = tg_transpose(t, 0, 1);
    tg_release(t);
    CHECK(released == 0);
    tg_tensor *s = tg_sum(v, 0, NULL, false);
    CHECK_NEAR(tg_item(s), 42, 0);
    tg_release(s);
    tg_release(v);
    CHECK(released == 1 && releases == 1);
    tg_scope_begin();
}

static void test_blob_strided(void)
{
    /* every other column of a 3x4 int32 array, as numpy's a[:, ::2] */
    int32_t data[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    tg_tensor *t = tg_from_blob(TG_INT32, 2, (int64_t[]){3, 2}, (int64_t[]){4, 2},
                                data, NULL, NULL);
    CHECK(t && !tg_is_contiguous(t));
    CHECK_TENSOR(tg_contiguous(t), ((double[]){0, 2, 4, 6, 8, 10}), 0);
    /* a zero stride (numpy's broadcast_to) reads one element repeatedly */
    tg_tensor *b = tg_from_blob(TG_INT32, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1},
                                data, NULL, NULL);
    CHECK_TENSOR(tg_contiguous(b), ((double[]){0, 1, 2, 0, 1, 2}), 0);
    /* empty and 0-d tensors */
    CHECK(tg_numel(tg_from_blob(TG_FLOAT32, 1, (int64_t[]){0}, NULL, NULL, NULL, NULL)) == 0);
    CHECK_NEAR(tg_item(tg_from_blob(TG_INT32, 0, NULL, NULL, data + 5, NULL, NULL)), 5, 0);
}

static void test_blob_errors(void)
{
    float f[4] = {0};
    int released = 0;
    CHECK_ERROR(tg_from_blob(TG_FLOAT32, 1, (int64_t[]){2}, (int64_t[]){-1}, f + 1,
                             count_release, &released),
                TG_ERR_ARG, "negative");
    CHECK_ERROR(tg_from_blob(TG_FLOAT32, 1, (int64_t[]){2}, NULL, NULL, NULL, NULL),
                TG_ERR_ARG, "NULL");
    CHECK_ERROR(tg_from_blob((tg_dtype)42, 1, (int64_t[]){2}, NULL, f, NULL, NULL),
                TG_ERR_DTYPE, "dtype");
    CHECK_ERROR(tg_from_blob(TG_FLOAT32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, NULL,
                             f, NULL, NULL),
                TG_ERR_SHAPE, "dims");
    CHECK(released == 0); /* not called on failure */
}

/* ---- custom functions owning their user data ------------------------------ */
static int user_frees;
static void user_free(void *user)
{
    user_frees++;
    (*(int *)user)++;
}
static tg_tensor *double_fwd(tg_function_ctx *ctx, int n, tg_tensor *const *in, void *u)
{
    (void)ctx; (void)n; (void)u;
    return tg_mul_scalar(in[0], 2);
}
static tg_status double_bwd(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx,
                            void *u)
{
    (void)ctx; (void)n;
    CHECK(*(int *)u == 0); /* still alive while backward runs */
    dx[0] = tg_mul_scalar(dy, 2);
    return TG_OK;
}
static const tg_function doubler = {"doubler", double_fwd, double_bwd};

static void test_function_user_free(void)
{
    int a = 0, b = 0, c = 0;
    user_frees = 0;
    tg_tensor *x = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_OK(tg_set_requires_grad(x, true));
    /* recorded: freed with the node, after backward (which frees nothing
     * of the node itself) when the output goes */
    tg_scope_begin();
    tg_tensor *y = tg_function_apply_owned(&doubler, 1, &x, &a, user_free);
    CHECK(y && a == 0);
    CHECK_OK(tg_backward(tg_sum(y, 0, NULL, false), NULL, false));
    CHECK_NEAR(tg_get(tg_grad(x), (int64_t[]){0}), 2, 0);
    CHECK(a == 0);
    tg_scope_end();
    CHECK(a == 1);
    /* nothing recorded (grad mode off): freed before apply returns */
    tg_no_grad_begin();
    CHECK(tg_function_apply_owned(&doubler, 1, &x, &b, user_free) != NULL);
    tg_no_grad_end();
    CHECK(b == 1);
    /* an error: freed too */
    tg_tensor *none = NULL;
    CHECK_ERROR(tg_function_apply_owned(&doubler, 1, &none, &c, user_free), TG_ERR_ARG, "NULL");
    CHECK(c == 1 && user_frees == 3);
}

static void test_scope_hide(void)
{
    tg_scope_begin();
    tg_tensor *kept = tg_ones(TG_FLOAT32, 1, (int64_t[]){2}); /* owned by the scope */
    int token = tg_scope_hide();
    tg_tensor *mine = tg_add(kept, kept); /* owned by this code, not the scope */
    tg_scope_begin(); /* scopes opened while hidden work as usual */
    tg_tensor *inner = tg_mul(mine, mine);
    CHECK(inner && tg_scope_depth() >= 2);
    tg_scope_end();
    tg_scope_unhide(token);
    tg_tensor *after = tg_neg(mine); /* visible again: the scope owns it */
    CHECK(after != NULL);
    tg_scope_end();
    /* mine survived the scope's end: it was never the scope's */
    CHECK_NEAR(tg_get(mine, (int64_t[]){1}), 2, 0);
    tg_release(mine);
}

int main(void)
{
    RUN(test_scope_hide);
    RUN(test_blob_shares_and_releases);
    RUN(test_blob_strided);
    RUN(test_blob_errors);
    RUN(test_function_user_free);
    return tt_finish();
}
