/* Views: view/reshape, permute/transpose, slice, expand, squeeze/unsqueeze,
 * flatten share storage and never copy (writes show through); contiguous
 * and clone copy. Values, strides, gradients (gradcheck on contiguous and
 * strided inputs) and error messages; PyTorch's refusals of in-place
 * changes to multi-output views and views made with grad mode off. */
#include "harness.h"
#include "ops/op.h" /* ops by name, as graphs and ONNX import reach them */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* values of t in C order, as doubles (static buffer per call site) */
static double *vals(const tg_tensor *t)
{
    static double v[4096];
    tg_copy_to(t, TG_FLOAT64, v);
    return v;
}

/* an arange of the given shape, float64 */
static tg_tensor *iota(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return tg_reshape(tg_arange(TG_FLOAT64, 0, (double)n, 1), ndim, shape);
}

#define CHECK_0D(t) CHECK((t) && tg_ndim(t) == 0)

#define CHECK_STRIDES(t, ...) \
    do { \
        const int64_t tt_st[] = {__VA_ARGS__}; \
        int tt_n = (int)(sizeof tt_st / sizeof tt_st[0]); \
        bool tt_same = t && tg_ndim(t) == tt_n; \
        for (int tt_i = 0; tt_same && tt_i < tt_n; tt_i++) \
            tt_same = tg_strides(t)[tt_i] == tt_st[tt_i]; \
        CHECK(tt_same); \
    } while (0)

/* ---- view and reshape ------------------------------------------------------ */
static void test_view_reshape(void)
{
    tg_tensor *x = iota(2, (int64_t[]){2, 6});
    tg_tensor *v = tg_view(x, 3, (int64_t[]){3, -1, 2});
    CHECK_SHAPE(v, 3, 2, 2);
    CHECK_STRIDES(v, 4, 2, 1);
    CHECK(tg_shares_storage(x, v) && tg_data(v) == tg_data(x));
    double e[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    CHECK_TENSOR(v, e, 0);
    CHECK_SHAPE(tg_view(x, 1, (int64_t[]){-1}), 12);
    CHECK_SHAPE(tg_view(tg_scalar(TG_FLOAT32, 1), 3, (int64_t[]){1, -1, 1}), 1, 1, 1);
    CHECK_0D(tg_view(tg_ones(TG_FLOAT32, 3, (int64_t[]){1, 1, 1}), 0, NULL));
    /* writes through the view reach the base */
    CHECK_OK(tg_fill_(tg_slice(v, 0, 1, 2, 1), -1));
    CHECK_NEAR(tg_get(x, (int64_t[]){0, 4}), -1, 0);
    CHECK_NEAR(tg_get(x, (int64_t[]){1, 1}), -1, 0);
    CHECK_NEAR(tg_get(x, (int64_t[]){1, 2}), 8, 0);
    /* a viewable non-contiguous input: a slice of rows keeps row blocks */
    tg_tensor *big = iota(3, (int64_t[]){4, 3, 2});
    tg_tensor *rows = tg_slice(big, 0, 0, 4, 2); /* [2, 3, 2], strides 12 2 1 */
    tg_tensor *rv = tg_view(rows, 2, (int64_t[]){2, 6});
    CHECK(rv && tg_shares_storage(rv, big));
    CHECK_STRIDES(rv, 12, 1);
    double er[12] = {0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17};
    CHECK_TENSOR(rv, er, 0);
    /* split and merge size-1 dims of a transposed tensor */
    tg_tensor *t = tg_transpose(iota(2, (int64_t[]){3, 4}), 0, 1); /* [4, 3] */
    tg_tensor *tv = tg_view(t, 4, (int64_t[]){2, 2, 1, 3});
    CHECK(tv && tg_shares_storage(tv, t));
    CHECK_STRIDES(tv, 2, 1, 12, 4);
    /* non-viewable: view fails, reshape copies */
    CHECK_ERROR(tg_view(t, 1, (int64_t[]){12}), TG_ERR_SHAPE,
                "shape [4, 3] with these strides cannot be viewed as [12]");
    tg_tensor *r = tg_reshape(t, 1, (int64_t[]){-1});
    CHECK_SHAPE(r, 12);
    CHECK(!tg_shares_storage(r, t) && tg_is_contiguous(r));
    double et[12] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
    CHECK_TENSOR(r, et, 0);
    /* viewable: reshape is a view */
    tg_tensor *r2 = tg_reshape(x, 2, (int64_t[]){4, 3});
    CHECK(tg_shares_storage(r2, x));
    /* empty tensors */
    tg_tensor *z = tg_zeros(TG_FLOAT32, 2, (int64_t[]){0, 3});
    CHECK_SHAPE(tg_reshape(z, 2, (int64_t[]){-1, 3}), 0, 3);
    CHECK_SHAPE(tg_view(z, 3, (int64_t[]){3, 0, 5}), 3, 0, 5);
    /* errors */
    CHECK_ERROR(tg_reshape(x, 2, (int64_t[]){5, 3}), TG_ERR_SHAPE,
                "reshape: cannot reshape [2, 6] (12 elements) into [5, 3] (15 elements)");
    CHECK_ERROR(tg_view(x, 2, (int64_t[]){-1, 5}), TG_ERR_SHAPE,
                "view: cannot reshape [2, 6] (12 elements) into [-1, 5]");
    CHECK_ERROR(tg_reshape(x, 2, (int64_t[]){-1, -1}), TG_ERR_SHAPE, "only one -1");
    CHECK_ERROR(tg_view(x, 2, (int64_t[]){-3, -4}), TG_ERR_SHAPE, "invalid dim -3");
    CHECK_ERROR(tg_reshape(z, 2, (int64_t[]){0, -1}), TG_ERR_SHAPE, "[0, -1]");
    CHECK_ERROR(tg_reshape(x, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 2, 6}), TG_ERR_SHAPE,
                "9 dims");
    CHECK_ERROR(tg_view(x, 2, NULL), TG_ERR_ARG, "shape is NULL");
    CHECK_ERROR(tg_reshape(NULL, 1, (int64_t[]){1}), TG_ERR_ARG, "reshape: input is NULL");
}

/* every view of a layout agrees with reshaping a contiguous copy */
static void test_view_matches_copy(void)
{
    const int64_t targets[][4] = {{24, 0}, {2, 12}, {6, 4}, {4, 3, 2}, {2, 2, 3, 2},
                                  {1, 24, 1}, {3, 8}, {12, 2}};
    const int nts[] = {1, 2, 2, 3, 4, 3, 2, 2};
    tg_tensor *base = iota(3, (int64_t[]){2, 3, 4});
    tg_tensor *layouts[5] = {
        base,
        tg_permute(base, (const int[]){2, 0, 1}),
        tg_transpose(base, 0, 1),
        tg_slice(iota(3, (int64_t[]){2, 3, 8}), 2, 1, 8, 2),
        tg_expand(tg_slice(iota(3, (int64_t[]){1, 3, 4}), 0, 0, 1, 1), 3,
                  (int64_t[]){2, 3, 4}),
    };
    int viewable = 0;
    for (int l = 0; l < 5; l++) {
        tg_tensor *c = tg_contiguous(layouts[l]);
        for (int k = 0; k < 8; k++) {
            tg_tensor *ref = tg_view(c, nts[k], targets[k]);
            tg_tensor *r = tg_reshape(layouts[l], nts[k], targets[k]);
            CHECK(r && ref);
            if (!r || !ref)
                continue;
            double want[24];
            memcpy(want, vals(ref), sizeof want);
            CHECK_TENSOR(r, want, 0);
            tg_clear_error();
            tg_tensor *v = tg_view(layouts[l], nts[k], targets[k]);
            CHECK(v ? tg_shares_storage(v, layouts[l]) : tg_last_status() == TG_ERR_SHAPE);
            if (v) {
                CHECK_TENSOR(v, want, 0);
                CHECK(tg_shares_storage(r, layouts[l]));
                viewable++;
            }
        }
    }
    CHECK(viewable > 8 && viewable < 40); /* both paths were exercised */
}

/* ---- permute and transpose ------------------------------------------------- */
static void test_permute_transpose(void)
{
    tg_tensor *x = iota(3, (int64_t[]){2, 3, 4});
    tg_tensor *p = tg_permute(x, (const int[]){2, 0, 1});
    CHECK_SHAPE(p, 4, 2, 3);
    CHECK_STRIDES(p, 1, 12, 4);
    CHECK(tg_shares_storage(p, x) && !tg_is_contiguous(p));
    CHECK_NEAR(tg_get(p, (int64_t[]){3, 1, 2}), 1 * 12 + 2 * 4 + 3, 0);
    tg_tensor *t = tg_transpose(x, -1, 0);
    CHECK_SHAPE(t, 4, 3, 2);
    CHECK_NEAR(tg_get(t, (int64_t[]){1, 2, 1}), 12 + 8 + 1, 0);
    CHECK_SHAPE(tg_transpose(x, 1, 1), 2, 3, 4);
    CHECK_0D(tg_transpose(tg_scalar(TG_FLOAT32, 1), 0, -1));
    CHECK_0D(tg_permute(tg_scalar(TG_FLOAT32, 1), NULL));
    /* permuting back restores the layout */
    tg_tensor *back = tg_permute(p, (const int[]){1, 2, 0});
    CHECK(tg_is_contiguous(back) && tg_data(back) == tg_data(x));
    /* a write through the permuted view */
    CHECK_OK(tg_fill_(tg_slice(p, 0, 0, 1, 1), 100)); /* x[..., 0] */
    CHECK_NEAR(tg_get(x, (int64_t[]){1, 2, 0}), 100, 0);
    CHECK_NEAR(tg_get(x, (int64_t[]){1, 2, 1}), 21, 0);
    /* errors */
    CHECK_ERROR(tg_permute(x, (const int[]){0, 0, 1}), TG_ERR_INDEX, "repeated");
    CHECK_ERROR(tg_permute(x, (const int[]){0, 3, 1}), TG_ERR_INDEX,
                "permute: axis 3 at position 1");
    CHECK_ERROR(tg_permute(x, (const int[]){-1, 0, 1}), TG_ERR_INDEX, "permutation of 0..2");
    CHECK_ERROR(tg_permute(x, NULL), TG_ERR_ARG, "perm is NULL");
    CHECK_ERROR(tg_transpose(x, 0, 3), TG_ERR_INDEX, "transpose: axis 3 is out of range");
    CHECK_ERROR(tg_transpose(x, -4, 0), TG_ERR_INDEX, "axis -4");
    CHECK_ERROR(tg_transpose(NULL, 0, 1), TG_ERR_ARG, "NULL");
}

/* ---- slice ----------------------------------------------------------------- */
static void test_slice(void)
{
    tg_tensor *x = iota(2, (int64_t[]){3, 10});
    tg_tensor *s = tg_slice(x, 1, 2, 9, 3); /* columns 2, 5, 8 */
    CHECK_SHAPE(s, 3, 3);
    CHECK_STRIDES(s, 10, 3);
    CHECK(tg_offset(s) == 2 && tg_shares_storage(s, x));
    double e1[9] = {2, 5, 8, 12, 15, 18, 22, 25, 28};
    CHECK_TENSOR(s, e1, 0);
    CHECK_SHAPE(tg_slice(x, 1, 2, 10, 3), 3, 3); /* 2 5 8 */
    CHECK_SHAPE(tg_slice(x, 1, 2, 11, 3), 3, 3); /* stop is clamped */
    CHECK_SHAPE(tg_slice(x, 1, 0, 10, 2), 3, 5);
    /* negative start/stop count from the end */
    tg_tensor *n = tg_slice(x, -1, -4, -1, 2); /* 6, 8 */
    double e2[6] = {6, 8, 16, 18, 26, 28};
    CHECK_TENSOR(n, e2, 0);
    double e3[20];
    for (int i = 0; i < 20; i++)
        e3[i] = 10 + i;
    CHECK_TENSOR(tg_slice(x, 0, -2, 100, 1), e3, 0);
    CHECK_SHAPE(tg_slice(x, 0, -100, 1, 1), 1, 10); /* clamped to 0 */
    /* empty results */
    tg_tensor *e = tg_slice(x, 1, 5, 5, 1);
    CHECK_SHAPE(e, 3, 0);
    CHECK_SHAPE(tg_slice(x, 1, 7, 3, 1), 3, 0);
    CHECK_SHAPE(tg_slice(x, 0, 3, 10, 2), 0, 10);
    CHECK_SHAPE(tg_slice(x, 1, -1, -5, 1), 3, 0);
    CHECK_0D(tg_sum(e, 0, NULL, false));
    /* slice of a slice, and a write through it */
    tg_tensor *ss = tg_slice(tg_slice(x, 1, 1, 10, 2), 1, 1, 5, 2); /* cols 3, 7 */
    CHECK_OK(tg_fill_(ss, -1));
    CHECK_NEAR(tg_get(x, (int64_t[]){2, 3}), -1, 0);
    CHECK_NEAR(tg_get(x, (int64_t[]){2, 7}), -1, 0);
    CHECK_NEAR(tg_get(x, (int64_t[]){2, 5}), 25, 0);
    /* errors */
    CHECK_ERROR(tg_slice(x, 2, 0, 1, 1), TG_ERR_INDEX, "slice: axis 2 is out of range");
    CHECK_ERROR(tg_slice(x, -3, 0, 1, 1), TG_ERR_INDEX, "axis -3");
    CHECK_ERROR(tg_slice(x, 0, 0, 1, 0), TG_ERR_ARG, "step must be >= 1, got 0");
    CHECK_ERROR(tg_slice(x, 0, 2, 0, -1), TG_ERR_ARG, "step");
    CHECK_ERROR(tg_slice(tg_scalar(TG_FLOAT32, 1), 0, 0, 1, 1), TG_ERR_SHAPE, "0-d");
}

/* ---- expand ------------------------------------------------------------------ */
static void test_expand(void)
{
    tg_tensor *x = iota(2, (int64_t[]){3, 1});
    tg_tensor *e = tg_expand(x, 3, (int64_t[]){2, 3, 4});
    CHECK_SHAPE(e, 2, 3, 4);
    CHECK_STRIDES(e, 0, 1, 0);
    CHECK(tg_shares_storage(e, x) && !tg_is_contiguous(e));
    CHECK_NEAR(tg_get(e, (int64_t[]){1, 2, 3}), 2, 0);
    tg_tensor *m = tg_expand(x, 2, (int64_t[]){-1, 5});
    CHECK_SHAPE(m, 3, 5);
    CHECK_SHAPE(tg_expand(x, 2, (int64_t[]){3, 1}), 3, 1);
    CHECK_SHAPE(tg_expand(x, 3, (int64_t[]){4, -1, -1}), 4, 3, 1);
    CHECK_SHAPE(tg_expand(tg_scalar(TG_INT32, 7), 2, (int64_t[]){2, 2}), 2, 2);
    CHECK_SHAPE(tg_expand(x, 2, (int64_t[]){3, 0}), 3, 0);
    /* writes to the base show in every copy */
    tg_no_grad_begin();
    CHECK_OK(tg_fill_(tg_slice(x, 0, 0, 1, 1), 9));
    tg_no_grad_end();
    CHECK_NEAR(tg_get(e, (int64_t[]){1, 0, 2}), 9, 0);
    /* errors */
    CHECK_ERROR(tg_expand(iota(2, (int64_t[]){2, 3}), 2, (int64_t[]){4, 3}), TG_ERR_SHAPE,
                "expand: cannot expand [2, 3] to [4, 3] (dim 0 is 2");
    CHECK_ERROR(tg_expand(x, 1, (int64_t[]){3}), TG_ERR_SHAPE, "fewer dims");
    CHECK_ERROR(tg_expand(x, 3, (int64_t[]){-1, 3, 2}), TG_ERR_SHAPE, "-1");
    CHECK_ERROR(tg_expand(x, 2, (int64_t[]){3, -2}), TG_ERR_SHAPE, "-2");
    CHECK_ERROR(tg_expand(x, 2, NULL), TG_ERR_ARG, "shape is NULL");
    CHECK_ERROR(tg_expand(x, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 3, 1}), TG_ERR_SHAPE, "expand");
}

/* ---- squeeze, unsqueeze, flatten ------------------------------------------ */
static void test_squeeze_unsqueeze_flatten(void)
{
    tg_tensor *x = iota(4, (int64_t[]){2, 1, 3, 1});
    tg_tensor *s = tg_squeeze(x, 1);
    CHECK_SHAPE(s, 2, 3, 1);
    CHECK(tg_shares_storage(s, x));
    CHECK_SHAPE(tg_squeeze(x, -1), 2, 1, 3);
    CHECK_SHAPE(tg_squeeze_all(x), 2, 3);
    CHECK_0D(tg_squeeze_all(tg_ones(TG_FLOAT32, 2, (int64_t[]){1, 1})));
    CHECK_0D(tg_squeeze(tg_scalar(TG_FLOAT32, 1), 0));
    tg_tensor *u = tg_unsqueeze(x, 0);
    CHECK_SHAPE(u, 1, 2, 1, 3, 1);
    CHECK_SHAPE(tg_unsqueeze(x, 4), 2, 1, 3, 1, 1);
    CHECK_SHAPE(tg_unsqueeze(x, -1), 2, 1, 3, 1, 1);
    CHECK_SHAPE(tg_unsqueeze(x, -5), 1, 2, 1, 3, 1);
    CHECK_SHAPE(tg_unsqueeze(tg_scalar(TG_FLOAT32, 1), 0), 1);
    CHECK(tg_shares_storage(u, x));
    /* on strided inputs: still views */
    tg_tensor *t = tg_transpose(iota(2, (int64_t[]){3, 4}), 0, 1);
    tg_tensor *tu = tg_unsqueeze(t, 1);
    CHECK(tg_shares_storage(tu, t));
    CHECK_NEAR(tg_get(tu, (int64_t[]){3, 0, 2}), 11, 0);
    tg_tensor *f = tg_flatten(iota(4, (int64_t[]){2, 3, 4, 5}), 1, 2);
    CHECK_SHAPE(f, 2, 12, 5);
    CHECK_SHAPE(tg_flatten(iota(4, (int64_t[]){2, 3, 4, 5}), 0, -1), 120);
    CHECK_SHAPE(tg_flatten(iota(4, (int64_t[]){2, 3, 4, 5}), -2, -1), 2, 3, 20);
    CHECK_SHAPE(tg_flatten(tg_scalar(TG_FLOAT32, 2), 0, 0), 1);
    CHECK_SHAPE(tg_flatten(iota(2, (int64_t[]){2, 3}), 1, 1), 2, 3);
    /* flatten of a transpose must copy, with the right order */
    tg_tensor *ft = tg_flatten(t, 0, 1);
    CHECK(!tg_shares_storage(ft, t));
    double et[12] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
    CHECK_TENSOR(ft, et, 0);
    /* errors name the op and the axis */
    CHECK_ERROR(tg_squeeze(x, 0), TG_ERR_SHAPE, "squeeze: axis 0 has size 2, expected 1");
    CHECK_ERROR(tg_squeeze(x, 4), TG_ERR_INDEX, "squeeze: axis 4 is out of range");
    CHECK_ERROR(tg_unsqueeze(x, 5), TG_ERR_INDEX, "unsqueeze: axis 5 is out of range");
    CHECK_ERROR(tg_unsqueeze(x, -6), TG_ERR_INDEX, "expected -5 to 4");
    CHECK_ERROR(tg_unsqueeze(iota(8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 2}), 0), TG_ERR_SHAPE,
                "8 dims");
    CHECK_ERROR(tg_flatten(x, 2, 1), TG_ERR_INDEX, "flatten: start axis 2 is after end axis 1");
    CHECK_ERROR(tg_flatten(x, 0, 4), TG_ERR_INDEX, "flatten: axis 4");
    CHECK_ERROR(tg_squeeze_all(NULL), TG_ERR_ARG, "NULL");
}

/* ---- contiguous and clone ----------------------------------------------------- */
static void test_contiguous_clone(void)
{
    tg_tensor *x = iota(2, (int64_t[]){3, 4});
    tg_tensor *c = tg_contiguous(x);
    CHECK(c == x); /* already contiguous: the same tensor */
    tg_tensor *t = tg_transpose(x, 0, 1);
    tg_tensor *tc = tg_contiguous(t);
    CHECK(tc != t && !tg_shares_storage(tc, t) && tg_is_contiguous(tc));
    CHECK_STRIDES(tc, 3, 1);
    double et[12] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
    CHECK_TENSOR(tc, et, 0);
    tg_tensor *k = tg_clone(x);
    CHECK(!tg_shares_storage(k, x) && tg_is_contiguous(k));
    CHECK_OK(tg_fill_(k, 0));
    CHECK_NEAR(tg_get(x, (int64_t[]){2, 3}), 11, 0); /* independent */
    /* a size-1 dim with any stride is still contiguous */
    tg_tensor *row = tg_slice(x, 0, 1, 2, 1);
    CHECK(tg_is_contiguous(row) && tg_contiguous(row) == row);
    tg_tensor *e = tg_expand(tg_scalar(TG_INT32, 3), 1, (int64_t[]){4});
    tg_tensor *ec = tg_contiguous(e);
    CHECK(ec && tg_is_contiguous(ec) && tg_dtype_of(ec) == TG_INT32);
    CHECK_TENSOR(ec, ((double[]){3, 3, 3, 3}), 0);
    CHECK_ERROR(tg_clone(NULL), TG_ERR_ARG, "clone: input 0 is NULL");
    CHECK_ERROR(tg_contiguous(NULL), TG_ERR_ARG, "NULL");
}

/* ---- gradients ------------------------------------------------------------------ */
/* weights make every output element count differently */
static tg_tensor *weigh(tg_tensor *y)
{
    if (!y)
        return NULL;
    tg_tensor *w = tg_add_scalar(tg_arange(TG_FLOAT64, 0, (double)tg_numel(y), 1), 1.5);
    return tg_mul(y, tg_reshape(w, tg_ndim(y), tg_shape(y)));
}

static tg_tensor *f_view(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_view(in[0], 3, (int64_t[]){3, 2, -1}));
}
static tg_tensor *f_reshape_copy(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_reshape(tg_transpose(in[0], 0, 1), 2, (int64_t[]){2, 6}));
}
static tg_tensor *f_permute(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_permute(in[0], (const int[]){2, 0, 1}));
}
static tg_tensor *f_transpose(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_transpose(in[0], 0, -1));
}
static tg_tensor *f_slice(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    int64_t step = *(const int64_t *)u;
    return weigh(tg_slice(tg_slice(in[0], 1, -7, 8, step), 0, 1, 3, 1));
}
static tg_tensor *f_expand(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_expand(in[0], 3, (int64_t[]){2, -1, 4}));
}
static tg_tensor *f_squeeze(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_unsqueeze(tg_squeeze(in[0], 1), -1));
}
static tg_tensor *f_squeeze_all(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_squeeze_all(in[0]));
}
static tg_tensor *f_flatten(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_flatten(in[0], 0, 1));
}
static tg_tensor *f_contiguous(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_contiguous(tg_transpose(in[0], 0, 1)));
}
static tg_tensor *f_clone(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    return weigh(tg_clone(in[0]));
}
/* a chain of views, then arithmetic with another input */
static tg_tensor *f_chain(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    tg_tensor *a = tg_slice(tg_transpose(in[0], 0, 1), 0, 0, 4, 2); /* [2, 3] */
    tg_tensor *b = tg_expand(tg_unsqueeze(in[1], 0), 2, (int64_t[]){2, 3});
    return tg_mul(tg_reshape(tg_mul(a, b), 1, (int64_t[]){6}), tg_flatten(a, 0, 1));
}

static void test_view_gradients(void)
{
    tg_tensor *x34[1] = {tt_rand(2, (int64_t[]){3, 4}, -1, 1)};
    tg_tensor *x62[1] = {tt_rand(2, (int64_t[]){6, 2}, -1, 1)};
    tg_tensor *x234[1] = {tt_rand(3, (int64_t[]){2, 3, 4}, -1, 1)};
    tg_tensor *x310[1] = {tt_rand(2, (int64_t[]){3, 10}, -1, 1)};
    tg_tensor *x31[1] = {tt_rand(2, (int64_t[]){3, 1}, -1, 1)};
    tg_tensor *x2131[1] = {tt_rand(4, (int64_t[]){2, 1, 3, 1}, -1, 1)};
    CHECK_GRADCHECK(f_view, NULL, 1, x62);
    CHECK_GRADCHECK(f_reshape_copy, NULL, 1, x34);
    CHECK_GRADCHECK(f_permute, NULL, 1, x234);
    CHECK_GRADCHECK(f_transpose, NULL, 1, x234);
    int64_t step2 = 2, step3 = 3;
    CHECK_GRADCHECK(f_slice, &step2, 1, x310);
    CHECK_GRADCHECK(f_slice, &step3, 1, x310);
    CHECK_GRADCHECK(f_expand, NULL, 1, x31);
    CHECK_GRADCHECK(f_squeeze, NULL, 1, x2131);
    CHECK_GRADCHECK(f_squeeze_all, NULL, 1, x2131);
    CHECK_GRADCHECK(f_flatten, NULL, 1, x234);
    CHECK_GRADCHECK(f_contiguous, NULL, 1, x34);
    CHECK_GRADCHECK(f_clone, NULL, 1, x234);
    tg_tensor *two[2] = {tt_rand(2, (int64_t[]){3, 4}, -1, 1), tt_rand(1, (int64_t[]){3}, -1, 1)};
    CHECK_GRADCHECK(f_chain, NULL, 2, two);
}

/* gradient values: expand sums, slice scatters into zeros */
static void test_view_gradient_values(void)
{
    tg_tensor *x = tt_rand(2, (int64_t[]){3, 1}, -1, 1);
    CHECK_OK(tg_backward(tg_sum(tg_expand(x, 3, (int64_t[]){2, 3, 5}), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(x), ((double[]){10, 10, 10}), 0);
    tg_tensor *y = tt_rand(1, (int64_t[]){7}, -1, 1);
    tg_tensor *s = tg_slice(y, 0, 1, 7, 3); /* elements 1 and 4 */
    CHECK(strcmp(tg_grad_fn_name(s), "slice") == 0);
    CHECK_OK(tg_backward(tg_sum(tg_mul_scalar(s, 2), 0, NULL, false), NULL, false));
    CHECK_TENSOR(tg_grad(y), ((double[]){0, 2, 0, 0, 2, 0, 0}), 0);
    CHECK(tg_shares_storage(s, y)); /* the leaf's view, still */
    CHECK(strcmp(tg_grad_fn_name(tg_view(y, 2, (int64_t[]){7, 1})), "view") == 0);
    CHECK(strcmp(tg_grad_fn_name(tg_transpose(x, 0, 1)), "permute") == 0);
    CHECK(strcmp(tg_grad_fn_name(tg_expand(x, 2, (int64_t[]){3, 2})), "expand") == 0);
    CHECK(strcmp(tg_grad_fn_name(tg_clone(x)), "clone") == 0);
}

/* grad of grad through slice: slice_grad's own gradient is a slice */
static tg_tensor *f_slice_double(int n, tg_tensor *const *in, void *u)
{
    (void)n; (void)u;
    tg_tensor *x = in[0];
    /* gradcheck evaluates with grad off; a gradient inside needs it on */
    bool was = tg_grad_enabled();
    tg_set_grad_enabled(true);
    tg_tensor *y = tg_sum(tg_mul(tg_pow_scalar(tg_slice(x, 0, 1, 6, 2), 3),
                                 tg_slice(x, 0, 0, 6, 2)), 0, NULL, false);
    tg_tensor *g = NULL; /* results belong to the caller, scope or not */
    tg_autograd_grad(1, &y, NULL, 1, &x, &g, false, true);
    tg_tensor *r = g ? tg_mul(g, g) : NULL;
    tg_release(g);
    tg_set_grad_enabled(was);
    return r;
}

static void test_slice_double_backward(void)
{
    tg_tensor *x[1] = {tt_rand(1, (int64_t[]){6}, 0.5, 1.5)};
    CHECK_GRADCHECK(f_slice_double, NULL, 1, x);
}

/* random compositions of views, then a reshape to a random factorisation:
 * three independent readers (strides via tg_get, tg_copy_to, the iterator
 * via tg_contiguous) and the view rule must all agree */
static uint64_t rng_state = 88172645463325252ULL;
static int rnd(int n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (int)(rng_state % (uint64_t)n);
}

static tg_tensor *random_view_step(tg_tensor *v)
{
    int nd = tg_ndim(v);
    const int64_t *s = tg_shape(v);
    switch (rnd(5)) {
    case 0: { /* permute */
        int p[TG_MAX_DIMS];
        for (int i = 0; i < nd; i++)
            p[i] = i;
        for (int i = nd - 1; i > 0; i--) {
            int j = rnd(i + 1), t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return tg_permute(v, p);
    }
    case 1: { /* slice */
        if (nd == 0)
            return v;
        int a = rnd(nd);
        int64_t n = s[a], start = rnd((int)n + 1), stop = start + rnd((int)(n - start) + 1);
        return stop > start ? tg_slice(v, a, start, stop, 1 + rnd(3)) : v;
    }
    case 2: { /* expand a size-1 dim */
        int64_t t[TG_MAX_DIMS];
        for (int i = 0; i < nd; i++)
            t[i] = s[i] == 1 ? 1 + rnd(3) : s[i];
        return tg_expand(v, nd, t);
    }
    case 3:
        return nd < 5 ? tg_unsqueeze(v, rnd(nd + 1)) : v;
    default:
        return nd > 1 ? tg_squeeze_all(v) : v;
    }
}

static void test_view_fuzz(void)
{
    int viewed = 0, copied = 0;
    for (int iter = 0; iter < 300; iter++) {
        tg_scope_begin();
        int nd = 1 + rnd(4);
        int64_t shape[4];
        for (int i = 0; i < nd; i++)
            shape[i] = 1 + rnd(4);
        tg_tensor *v = iota(nd, shape);
        for (int k = 0; k < 4; k++)
            v = random_view_step(v);
        int64_t n = tg_numel(v);
        CHECK(v && n <= 4096);
        if (!v || n > 4096 || n == 0) {
            tg_scope_end();
            continue;
        }
        static double ref[4096], got[4096];
        tg_tensor *c = tg_contiguous(v);
        memcpy(ref, tg_data(c), (size_t)n * sizeof *ref);
        tg_copy_to(v, TG_FLOAT64, got);
        bool same = memcmp(ref, got, (size_t)n * sizeof *ref) == 0;
        int64_t idx[TG_MAX_DIMS];
        for (int64_t f = 0; f < n && same; f++) {
            int64_t r = f;
            for (int i = tg_ndim(v) - 1; i >= 0; i--) {
                idx[i] = r % tg_shape(v)[i];
                r /= tg_shape(v)[i];
            }
            same = tg_get(v, idx) == ref[f];
        }
        CHECK(same);
        /* a random factorisation of n as the target */
        int64_t t[TG_MAX_DIMS], rest = n;
        int tn = 0;
        while (rest > 1 && tn < 5) {
            int64_t d = 2;
            while (rest % d)
                d++;
            int64_t f = d;
            while (rnd(2) && rest % (f * d) == 0)
                f *= d;
            t[tn++] = f;
            rest /= f;
            if (rnd(4) == 0)
                t[tn++] = 1;
        }
        if (rest > 1 || tn == 0)
            t[tn++] = rest;
        if (tn > 1 && rnd(2))
            t[rnd(tn)] = -1;
        tg_tensor *r = tg_reshape(v, tn, t);
        CHECK(r != NULL);
        if (r) {
            tg_copy_to(r, TG_FLOAT64, got);
            CHECK(memcmp(ref, got, (size_t)n * sizeof *ref) == 0);
            if (tg_shares_storage(r, v))
                viewed++;
            else
                copied++;
            tg_clear_error();
            tg_tensor *w = tg_view(v, tn, t);
            CHECK(w ? tg_shares_storage(w, v) == tg_shares_storage(r, v)
                    : !tg_shares_storage(r, v) && tg_last_status() == TG_ERR_SHAPE);
        }
        tg_scope_end();
    }
    CHECK(viewed > 50 && copied > 20);
}

/* attributes that did not come through tg_slice are checked too */
static void test_ops_by_name_validate(void)
{
    tg_tensor *x = iota(2, (int64_t[]){3, 4});
    const tg_op_def *slice = tg_op_find("slice");
    CHECK(slice != NULL);
    tg_attr ok[4] = {TG_AI("axis", 1), TG_AI("start", 1), TG_AI("stop", 4), TG_AI("step", 2)};
    CHECK_SHAPE(tg_op_call(slice, 1, &x, ok, 4), 3, 2);
    tg_attr bad_axis[4] = {TG_AI("axis", 2), TG_AI("start", 0), TG_AI("stop", 1), TG_AI("step", 1)};
    CHECK_ERROR(tg_op_call(slice, 1, &x, bad_axis, 4), TG_ERR_INDEX, "slice: axis 2");
    tg_attr bad_stop[4] = {TG_AI("axis", 0), TG_AI("start", 0), TG_AI("stop", 9), TG_AI("step", 1)};
    CHECK_ERROR(tg_op_call(slice, 1, &x, bad_stop, 4), TG_ERR_INDEX, "stop 9");
    tg_attr bad_start[4] = {TG_AI("axis", 0), TG_AI("start", -1), TG_AI("stop", 2), TG_AI("step", 1)};
    CHECK_ERROR(tg_op_call(slice, 1, &x, bad_start, 4), TG_ERR_INDEX, "start -1");
    tg_attr bad_step[4] = {TG_AI("axis", 0), TG_AI("start", 0), TG_AI("stop", 2), TG_AI("step", 0)};
    CHECK_ERROR(tg_op_call(slice, 1, &x, bad_step, 4), TG_ERR_INDEX, "step 0");
    /* slice_grad: dy must have the slice's shape */
    const tg_op_def *sg = tg_op_find("slice_grad");
    CHECK(sg != NULL);
    tg_tensor *dy = tg_ones(TG_FLOAT64, 2, (int64_t[]){3, 2});
    tg_attr ga[5] = {TG_AI("axis", 1), TG_AI("start", 1), TG_AI("stop", 4), TG_AI("step", 2),
                     TG_AINTS("input_shape", ((const int64_t[]){3, 4}), 2)};
    tg_tensor *g = tg_op_call(sg, 1, &dy, ga, 5);
    CHECK_SHAPE(g, 3, 4);
    CHECK_TENSOR(g, ((double[]){0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}), 0);
    tg_tensor *big = tg_ones(TG_FLOAT64, 2, (int64_t[]){3, 3});
    CHECK_ERROR(tg_op_call(sg, 1, &big, ga, 5), TG_ERR_SHAPE,
                "slice_grad: gradient of shape [3, 3] does not match the slice's shape [3, 2]");
    tg_attr gb[5] = {TG_AI("axis", 1), TG_AI("start", 1), TG_AI("stop", 9), TG_AI("step", 2),
                     TG_AINTS("input_shape", ((const int64_t[]){3, 4}), 2)};
    CHECK_ERROR(tg_op_call(sg, 1, &dy, gb, 5), TG_ERR_INDEX, "slice_grad");
    /* permute and view by name */
    const int64_t perm[2] = {1, 1};
    tg_attr pa = TG_AINTS("perm", perm, 2);
    CHECK_ERROR(tg_op_call(tg_op_find("permute"), 1, &x, &pa, 1), TG_ERR_INDEX, "repeated");
    const int64_t vs[2] = {5, -1};
    tg_attr va = TG_AINTS("shape", vs, 2);
    CHECK_ERROR(tg_op_call(tg_op_find("view"), 1, &x, &va, 1), TG_ERR_SHAPE, "view");
    CHECK_ERROR(tg_op_call(tg_op_find("cast"), 1, &x, NULL, 0), TG_ERR_DTYPE, "cast");
}

/* PyTorch's refusals for multi-output views (tg_mark_multi_output_view)
 * and views made with grad mode off, and the front-end helpers */
static void test_multi_output_and_nograd_views(void)
{
    tg_tensor *x = tg_ones(TG_FLOAT64, 1, (int64_t[]){4});
    CHECK_OK(tg_set_requires_grad(x, true));
    tg_tensor *y = tg_mul_scalar(x, 2);
    tg_tensor *a = tg_slice(y, 0, 0, 2, 1), *b = tg_slice(y, 0, 2, 4, 1);
    CHECK_FAILS(tg_mark_multi_output_view(a, "narrow", 0), TG_ERR_ARG,
                "unknown function 'narrow'");
    CHECK_FAILS(tg_mark_multi_output_view(a, "split", -1), TG_ERR_ARG, "output number -1 < 0");
    CHECK_OK(tg_mark_multi_output_view(a, "split", 0));
    CHECK_OK(tg_mark_multi_output_view(b, "split", 1));
    CHECK(!strcmp(tg_grad_fn_name(b), "split"));
    CHECK_FAILS(tg_mul_scalar_(b, 2), TG_ERR_AUTOGRAD,
                "Output 1 of SplitBackward0 is a view and is being modified inplace. This "
                "view is the output of a function that returns multiple views.");
    CHECK_FAILS(tg_check_view_inplace(a, false), TG_ERR_AUTOGRAD,
                "Output 0 of SplitBackward0 is a view and is being modified inplace.");
    tg_no_grad_begin();
    CHECK_OK(tg_check_view_inplace(a, false));
    CHECK_OK(tg_mul_scalar_(a, 3)); /* allowed, unrecorded: a is stale from now on */
    tg_no_grad_end();
    CHECK(tg_add(b, b) == NULL);
    CHECK(strstr(tg_last_error(), "Output 1 of SplitBackward0 is a view and its base or "
                                  "another view of its base has been modified inplace."));
    /* a plain tensor is left as it is */
    tg_tensor *c = tg_ones(TG_FLOAT64, 1, (int64_t[]){2});
    CHECK_OK(tg_mark_multi_output_view(c, "unbind", 0));
    CHECK_OK(tg_mul_scalar_(c, 2));

    /* views made with grad mode off */
    tg_tensor *z = tg_mul_scalar(x, 1);
    tg_no_grad_begin();
    tg_tensor *v = tg_slice(z, 0, 1, 3, 1), *w = tg_unsqueeze(z, 0);
    tg_no_grad_end();
    CHECK_FAILS(tg_fill_(v, 1), TG_ERR_AUTOGRAD,
                "A view was created in no_grad mode and is being modified inplace with grad "
                "mode enabled. Given that this use case is ambiguous and error-prone, it is "
                "forbidden.");
    CHECK_FAILS(tg_check_view_inplace(v, false), TG_ERR_AUTOGRAD, "created in no_grad mode");
    /* w replaces z (an in-place view op): no view of z, so writable */
    CHECK_OK(tg_view_rebind(w, z));
    CHECK_OK(tg_check_view_inplace(w, false));
    CHECK_OK(tg_mul_scalar_(w, 2));
    CHECK(tg_add(v, v) == NULL); /* z's storage was written since v was made */
    CHECK(strstr(tg_last_error(), "A view was created in no_grad mode and its base or another "
                                  "view of its base has been modified inplace"));
    /* a view of a constant: nothing to record, nothing refused */
    tg_tensor *k = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    tg_no_grad_begin();
    tg_tensor *kv = tg_slice(k, 0, 0, 2, 1);
    tg_no_grad_end();
    CHECK_OK(tg_fill_(kv, 5));
    CHECK_FAILS(tg_check_view_inplace(kv, true), TG_ERR_AUTOGRAD, "created in no_grad mode");
}

/* a front end's in-place op computed out of place and copied back: the
 * result its node saved is the destination from then on, so changing
 * the destination again fails backward (PyTorch's y.exp_(); y.mul_(2)) */
static void test_saved_result_moves_to_the_destination(void)
{
    tg_tensor *x = tg_full(TG_FLOAT64, 1, (int64_t[]){3}, 0.5);
    CHECK_OK(tg_set_requires_grad(x, true));
    tg_tensor *y = tg_mul_scalar(x, 1);
    tg_tensor *r = tg_exp(tg_clone(y));
    CHECK_OK(tg_copy_(y, r));
    CHECK_OK(tg_autograd_saved_result_is(r, y));
    CHECK_OK(tg_mul_scalar_(y, 2));
    CHECK_FAILS(tg_backward(tg_sum(y, 0, NULL, false), NULL, false), TG_ERR_AUTOGRAD,
                "was modified by an in-place operation (it is at version 2, expected 1)");
    /* unchanged since: backward runs, exp's gradient read from y */
    tg_tensor *z = tg_mul_scalar(x, 1), *q = tg_exp(tg_clone(z));
    CHECK_OK(tg_copy_(z, q));
    CHECK_OK(tg_autograd_saved_result_is(q, z));
    CHECK_OK(tg_backward(tg_sum(z, 0, NULL, false), NULL, false));
    double g[3];
    CHECK_OK(tg_copy_to(tg_grad(x), TG_FLOAT64, g));
    CHECK_NEAR(g[0], exp(0.5), 1e-12);
    /* no saved output, another shape: nothing to move */
    tg_tensor *s = tg_sin(tg_mul_scalar(x, 1));
    CHECK_OK(tg_autograd_saved_result_is(s, y));
    CHECK_OK(tg_autograd_saved_result_is(tg_exp(x), tg_ones(TG_FLOAT64, 1, (int64_t[]){2})));
    CHECK_FAILS(tg_autograd_saved_result_is(NULL, y), TG_ERR_ARG, "NULL tensor");
}

/* fill_ stores one value, so it may write an expanded tensor, each element
 * once; an update that reads refuses; an empty expanded tensor is no
 * overlap */
static void test_fill_of_an_expanded_tensor(void)
{
    tg_tensor *b = tg_mul_scalar(tg_full(TG_FLOAT64, 2, (int64_t[]){2, 1}, 0.5), 1);
    tg_tensor *e = tg_expand(b, 2, (int64_t[]){2, 3});
    CHECK_OK(tg_fill_(e, 2));
    double got[6];
    CHECK_OK(tg_copy_to(e, TG_FLOAT64, got));
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == 2);
    CHECK_FAILS(tg_mul_scalar_(e, 2), TG_ERR_ARG, "refers to the same memory location");
    tg_tensor *empty = tg_slice(e, 1, 0, 0, 1);
    CHECK_OK(tg_mul_scalar_(empty, 2));

    /* with history the write runs, and a backward through it fails, from
     * the base or from the view (PyTorch's refusal) */
    tg_tensor *leaf = tg_ones(TG_FLOAT64, 2, (int64_t[]){2, 1});
    CHECK_OK(tg_set_requires_grad(leaf, true));
    for (int from_view = 0; from_view < 2; from_view++) {
        tg_tensor *h = tg_mul_scalar(leaf, 1);
        tg_tensor *he = tg_expand(h, 2, (int64_t[]){2, 3});
        CHECK_OK(tg_fill_(he, 3));
        CHECK_FAILS(tg_backward(tg_sum(from_view ? he : h, 0, NULL, false), NULL, false),
                    TG_ERR_AUTOGRAD, "more than one element of the written-to tensor");
    }
    /* a front end's own write marks itself the same way */
    tg_tensor *w = tg_mul_scalar(leaf, 2);
    CHECK_OK(tg_autograd_mark_overlapping_write(w));
    CHECK_FAILS(tg_backward(tg_sum(w, 0, NULL, false), NULL, false), TG_ERR_AUTOGRAD,
                "single memory location");
    CHECK_FAILS(tg_autograd_mark_overlapping_write(NULL), TG_ERR_ARG, "NULL tensor");
}

/* inference tensors: made in inference mode (and their views, made in it
 * or not); outside it no in-place write, no requires_grad, no saving by a
 * recorded op; an op that saves nothing of them records */
static void test_inference_tensors(void)
{
    tg_tensor *w = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_OK(tg_set_requires_grad(w, true));
    CHECK(!tg_inference_mode());
    tg_set_inference_mode(true);
    tg_no_grad_begin();
    tg_tensor *t = tg_mul_scalar(tg_ones(TG_FLOAT64, 1, (int64_t[]){3}), 2);
    CHECK_OK(tg_mul_scalar_(t, 1.5)); /* inside: writes are allowed */
    tg_no_grad_end();
    tg_set_inference_mode(false);
    tg_tensor *v = tg_slice(t, 0, 0, 2, 1);
    CHECK(tg_is_inference(t) && tg_is_inference(v) && !tg_is_inference(w));
    CHECK(!tg_is_inference(tg_ones(TG_FLOAT64, 0, NULL)) && !tg_is_inference(NULL));
    CHECK_FAILS(tg_mul_scalar_(t, 1), TG_ERR_AUTOGRAD, "inference tensor outside InferenceMode");
    CHECK_FAILS(tg_fill_(v, 0), TG_ERR_AUTOGRAD, "inference tensor outside InferenceMode");
    CHECK_FAILS(tg_set_requires_grad(t, true), TG_ERR_AUTOGRAD, "requires_grad=True on inference");
    CHECK_ERROR(tg_mul(t, w), TG_ERR_AUTOGRAD, "cannot be saved for backward");
    tg_tensor *sum = tg_add(t, w); /* add saves neither input */
    CHECK(sum && tg_requires_grad(sum) && !tg_is_inference(sum));
    CHECK(tg_requires_grad(tg_mul(tg_clone(t), w)));
    CHECK_NEAR(tg_item(tg_sum(t, 0, NULL, false)), 9, 0);
}

/* what a front end asks of views (PyTorch's _base, _is_view, requires_grad
 * of no-grad views), the grad_fn names it gives, its owner pointer */
static void test_view_base_owner_and_names(void)
{
    tg_tensor *x = tg_ones(TG_FLOAT64, 2, (int64_t[]){2, 3});
    CHECK(tg_view_base(x) == NULL && !tg_is_nograd_view(x));
    tg_tensor *v = tg_transpose(x, 0, 1), *vv = tg_slice(v, 0, 1, 3, 1);
    CHECK(tg_view_base(v) == x && tg_view_base(vv) == x && !tg_is_nograd_view(vv));
    CHECK(tg_view_base(tg_detach(x)) == NULL && tg_view_base(tg_add(x, x)) == NULL);
    tg_no_grad_begin();
    tg_tensor *n = tg_slice(v, 1, 0, 1, 1);
    tg_no_grad_end();
    CHECK(tg_view_base(n) == x && tg_is_nograd_view(n));
    /* reshape's copy is no view (of the temporary it copied into) */
    tg_tensor *r = tg_reshape(v, 1, (int64_t[]){6});
    CHECK(r && !tg_shares_storage(r, x) && tg_view_base(r) == NULL);
    CHECK(tg_view_base(tg_reshape(x, 1, (int64_t[]){6})) == x);
    /* untracking a view whose base is held elsewhere changes nothing */
    tg_view_untrack_temporary(v);
    CHECK(tg_view_base(v) == x);
    tg_tensor *c = tg_contiguous(v), *cv = tg_view(c, 1, (int64_t[]){6});
    tg_view_untrack_temporary(cv);
    CHECK(tg_view_base(cv) == c); /* c is still held here */
    tg_view_untrack_temporary(NULL);

    /* ops on a no-grad view of a tensor that requires grad are recorded
     * (PyTorch's), with no gradient flowing to the tensor */
    tg_tensor *p = tg_ones(TG_FLOAT64, 1, (int64_t[]){3});
    CHECK_OK(tg_set_requires_grad(p, true));
    tg_no_grad_begin();
    tg_tensor *pv = tg_slice(p, 0, 0, 2, 1);
    tg_no_grad_end();
    CHECK(!tg_requires_grad(pv) && tg_grad_fn_name(pv) == NULL);
    tg_tensor *loss = tg_sum(tg_mul(pv, pv), 0, NULL, false);
    CHECK(loss && tg_requires_grad(loss) && tg_grad_fn_name(loss));
    CHECK_OK(tg_backward(loss, NULL, false));
    CHECK(tg_grad(p) == NULL);

    /* grad_fn names */
    tg_tensor *y = tg_mul_scalar(p, 2);
    CHECK_FAILS(tg_set_grad_fn_name(y, ""), TG_ERR_ARG, "empty name");
    CHECK_FAILS(tg_set_grad_fn_name(y, NULL), TG_ERR_ARG, "NULL");
    CHECK_OK(tg_set_grad_fn_name(p, "LeafBackward0")); /* a leaf: nothing to name */
    CHECK(tg_grad_fn_name(p) == NULL);
    CHECK_OK(tg_set_grad_fn_name(y, "TBackward0"));
    CHECK(!strcmp(tg_grad_fn_name(y), "TBackward0"));
    tg_tensor *z = tg_neg(y); /* y's node is held by z's edge now: no renaming */
    CHECK_OK(tg_set_grad_fn_name(y, "OtherBackward0"));
    CHECK(!strcmp(tg_grad_fn_name(y), "TBackward0") && z);
    /* the anomaly check's message uses the name as it is */
    tg_set_anomaly_check(true);
    tg_tensor *s = tg_sqrt(tg_sub(tg_zeros(TG_FLOAT64, 1, (int64_t[]){3}), p));
    CHECK_OK(tg_set_grad_fn_name(s, "CopySlices"));
    CHECK_FAILS(tg_backward(tg_sum(s, 0, NULL, false), NULL, false), TG_ERR_AUTOGRAD,
                "Function 'CopySlices' returned nan values");
    tg_set_anomaly_check(false);

    /* the owner pointer: the front end's, not copied to views */
    int marker;
    CHECK(tg_owner(x) == NULL && tg_owner(NULL) == NULL);
    tg_set_owner(x, &marker);
    CHECK(tg_owner(x) == &marker && tg_owner(tg_slice(x, 0, 0, 1, 1)) == NULL);
    tg_set_owner(x, NULL);
    tg_set_owner(NULL, &marker);
    CHECK(tg_owner(x) == NULL);
}

int main(void)
{
    RUN(test_view_reshape);
    RUN(test_view_matches_copy);
    RUN(test_permute_transpose);
    RUN(test_slice);
    RUN(test_expand);
    RUN(test_squeeze_unsqueeze_flatten);
    RUN(test_contiguous_clone);
    RUN(test_view_gradients);
    RUN(test_view_gradient_values);
    RUN(test_slice_double_backward);
    RUN(test_ops_by_name_validate);
    RUN(test_view_fuzz);
    RUN(test_multi_output_and_nograd_views);
    RUN(test_view_base_owner_and_names);
    RUN(test_saved_result_moves_to_the_destination);
    RUN(test_fill_of_an_expanded_tensor);
    RUN(test_inference_tensors);
    return tt_finish();
}
