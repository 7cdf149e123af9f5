/* The ops PyTorch-exported models contain (issue 10 §3), each through its
 * public function: forward against PyTorch's values (obtained with
 * PyTorch 1.13 on /usr/bin/python3 in float64; the call is given next to
 * each), then op_check.h's checks: gradcheck, forward mode against
 * reverse mode, graph mode against eager. */
#include "harness.h"
#include "op_check.h"

static const double xs12[12] = {0.0, -0.6, -1.2, 0.3, -0.3, -0.9,
                                0.6, 1.1102230246251565e-16, -0.6, 0.9, 0.3, -0.3};

/* ---- cross_entropy / nll_loss with weight and ignore_index ------------------- */
typedef struct loss_case {
    tg_reduction r;
    bool nll; /* nll_loss of log_softmax instead of cross_entropy */
} loss_case;

static tg_tensor *ce(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    const loss_case *c = user;
    tg_nll_opts o = {.weight = in[2], .has_ignore_index = true, .ignore_index = -1,
                     .reduction = c->r};
    return c->nll ? tg_nll_loss_ex(tg_log_softmax(in[0], 1), in[1], &o)
                  : tg_cross_entropy_ex(in[0], in[1], &o);
}

static void test_cross_entropy_weight_ignore_index(void)
{
    /* F.cross_entropy(x [2,3,2], lab, weight=w, ignore_index=-1, reduction=r) */
    tg_tensor *in[3] = {tt_tensor(TG_FLOAT64, 3, (int64_t[]){2, 3, 2}, xs12),
                        tt_tensor(TG_INT64, 2, (int64_t[]){2, 2}, (double[]){0, 2, 1, -1}),
                        tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0.5, 1, 2})};
    loss_case mean = {TG_REDUCTION_MEAN, false}, sum = {TG_REDUCTION_SUM, true},
              none = {TG_REDUCTION_NONE, false};
    CHECK_TENSOR(ce(3, in, &mean), ((double[]){1.640363824848624}), 1e-12);
    CHECK_TENSOR(ce(3, in, &sum), ((double[]){5.741273386970184}), 1e-12);
    CHECK_TENSOR(ce(3, in, &none),
                 ((double[]){0.356967904081833, 3.470369674724686, 1.913935808163665, 0}),
                 1e-12);
    tg_set_requires_grad(in[0], true);
    tg_tensor *y = ce(3, in, &mean), *dx;
    CHECK_OK(tg_autograd_grad(1, &y, NULL, 1, in, &dx, false, false));
    CHECK_TENSOR(dx, ((double[]){-0.072898145263933, 0.136040774552118, 0.021071245146255,
                                 0.334606312332591, 0.051826900117678, -0.470647086884709,
                                 0.13991799518642, 0, -0.243571795421777, 0,
                                 0.103653800235357, 0}), 1e-12);
    tg_release(dx);
    CHECK_OP(ce, &mean, 3, in);
    CHECK_OP(ce, &sum, 3, in);
    CHECK_OP(ce, &none, 3, in);
    tg_set_requires_grad(in[2], true); /* the class weights are differentiable too */
    CHECK_OP(ce, &mean, 3, in);

    /* every label ignored: mean is 0/0, NaN as in PyTorch */
    tg_tensor *all = tt_tensor(TG_INT64, 2, (int64_t[]){2, 2}, (double[]){-1, -1, -1, -1});
    tg_nll_opts o = {.has_ignore_index = true, .ignore_index = -1};
    tg_tensor *nan = tg_cross_entropy_ex(in[0], all, &o);
    double v = 0;
    CHECK(nan && tg_copy_to(nan, TG_FLOAT64, &v) == TG_OK && isnan(v));
    /* ... and its gradient zero (PyTorch's), not NaN */
    tg_tensor *dall;
    CHECK_OK(tg_autograd_grad(1, &nan, NULL, 1, in, &dall, false, false));
    CHECK_TENSOR(dall, ((double[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 0);
    tg_release(dall);
    /* without weight or ignore_index it is tg_cross_entropy */
    tg_nll_opts plain = {0};
    CHECK(tt_rel_diff(tg_cross_entropy_ex(in[0], tg_relu(in[1]), &plain),
                      tg_cross_entropy(in[0], tg_relu(in[1]), TG_REDUCTION_MEAN), 1) < 1e-15);
}

static void test_loss_errors(void)
{
    tg_tensor *x = tt_tensor(TG_FLOAT64, 2, (int64_t[]){2, 3}, xs12);
    tg_tensor *lab = tt_tensor(TG_INT64, 1, (int64_t[]){2}, (double[]){0, 3});
    tg_nll_opts o = {0};
    CHECK_ERROR(tg_cross_entropy_ex(x, lab, &o), TG_ERR_INDEX, "label 3");
    o.has_ignore_index = true;
    o.ignore_index = 3; /* now 3 is ignored, not out of range */
    CHECK(tg_cross_entropy_ex(x, lab, &o) != NULL);
    o.weight = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, 1});
    CHECK_ERROR(tg_cross_entropy_ex(x, lab, &o), TG_ERR_SHAPE, "weight must be");
    CHECK_ERROR(tg_nll_loss_ex(x, lab, NULL), TG_ERR_ARG, "opts is NULL");
    tg_nll_opts bad = {.reduction = (tg_reduction)7};
    CHECK_ERROR(tg_nll_loss_ex(x, tg_relu(lab), &bad), TG_ERR_ARG, "unknown reduction");
}

/* ---- hardsigmoid, selu ------------------------------------------------------ */
static tg_tensor *hsig(int n, tg_tensor *const *in, void *u)
{
    (void)n, (void)u;
    return tg_hardsigmoid(in[0], 1.0 / 6, 0.5);
}

static tg_tensor *hsig_onnx(int n, tg_tensor *const *in, void *u)
{
    (void)n, (void)u;
    return tg_hardsigmoid(in[0], 0.2, 0.5);
}

static tg_tensor *selu1(int n, tg_tensor *const *in, void *u)
{
    (void)n, (void)u;
    return tg_selu(in[0]);
}

static void test_hardsigmoid_selu(void)
{
    /* F.hardsigmoid at [-3, 3, 0, -4, 1]: values and gradients (0 at the kinks) */
    tg_tensor *x = tt_tensor(TG_FLOAT64, 1, (int64_t[]){5}, (double[]){-3, 3, 0, -4, 1});
    tg_set_requires_grad(x, true);
    tg_tensor *y = tg_hardsigmoid(x, 1.0 / 6, 0.5), *dx;
    CHECK_TENSOR(y, ((double[]){0, 1, 0.5, 0, 0.6666666666666666}), 1e-15);
    CHECK_OK(tg_autograd_grad(1, &y, (tg_tensor *[]){tg_ones_like(y)}, 1, &x, &dx, false, false));
    CHECK_TENSOR(dx, ((double[]){0, 0, 1.0 / 6, 0, 1.0 / 6}), 1e-15);
    tg_release(dx);
    /* F.selu at [0, -1, 1]: values, gradients (gamma alpha at 0) */
    tg_tensor *z = tt_tensor(TG_FLOAT64, 1, (int64_t[]){3}, (double[]){0, -1, 1});
    tg_set_requires_grad(z, true);
    y = tg_selu(z);
    CHECK_TENSOR(y, ((double[]){0, -1.1113307378125625, 1.0507009873554805}), 1e-15);
    CHECK_OK(tg_autograd_grad(1, &y, (tg_tensor *[]){tg_ones_like(y)}, 1, &z, &dx, false, false));
    CHECK_TENSOR(dx, ((double[]){1.7580993408473766, 0.646768603034814, 1.0507009873554805}),
                 1e-15);
    tg_release(dx);
    /* float32 follows the same formula */
    tg_tensor *f = tg_selu(tg_cast(z, TG_FLOAT32));
    CHECK(tg_dtype_of(f) == TG_FLOAT32);
    CHECK_TENSOR(f, ((double[]){0, -1.1113307378125625, 1.0507009873554805}), 1e-6);
    /* the checks away from the kinks */
    tg_tensor *r = tt_rand(2, (int64_t[]){3, 4}, -2.9, 2.9);
    CHECK_OP(hsig, NULL, 1, &r);
    CHECK_OP(hsig_onnx, NULL, 1, &r);
    CHECK_OP(selu1, NULL, 1, &r);
    CHECK_ONNX_ROUNDTRIP(hsig_onnx, NULL, 1, &r);
    CHECK_ONNX_ROUNDTRIP(selu1, NULL, 1, &r);
}

int main(void)
{
    RUN(test_cross_entropy_weight_ignore_index);
    RUN(test_loss_errors);
    RUN(test_hardsigmoid_selu);
    return tt_finish();
}
