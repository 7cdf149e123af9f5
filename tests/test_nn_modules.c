/* Tests of the nn module layer: LeNet-5's structure and initialisation,
 * state naming and order, train/eval, forward against raw ops, gradients,
 * custom modules, state loading and the error paths. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *lenet_names[10] = {
    "conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
    "fc1.bias",     "fc2.weight", "fc2.bias",     "fc3.weight", "fc3.bias"};
static const int64_t lenet_shapes[10][4] = {
    {6, 1, 5, 5}, {6}, {16, 6, 5, 5}, {16}, {120, 400},
    {120},        {84, 120}, {84},    {10, 84}, {10}};
static const int lenet_ndims[10] = {4, 1, 4, 1, 2, 1, 2, 1, 2, 1};

static bool same_values(tg_tensor *a, tg_tensor *b)
{
    if (tg_numel(a) != tg_numel(b))
        return false;
    int64_t n = tg_numel(a);
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    bool same = tg_copy_to(a, TG_FLOAT64, x) == TG_OK &&
                tg_copy_to(b, TG_FLOAT64, y) == TG_OK &&
                memcmp(x, y, (size_t)n * sizeof *x) == 0;
    free(x);
    free(y);
    return same;
}

/* max |a - b| over all elements (both converted to double) */
static double max_diff(tg_tensor *a, tg_tensor *b)
{
    if (!a || !b || tg_numel(a) != tg_numel(b))
        return INFINITY;
    int64_t n = tg_numel(a);
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    double d = 0;
    if (tg_copy_to(a, TG_FLOAT64, x) != TG_OK || tg_copy_to(b, TG_FLOAT64, y) != TG_OK)
        d = INFINITY;
    for (int64_t i = 0; i < n && d != INFINITY; i++)
        d = fmax(d, fabs(x[i] - y[i]));
    free(x);
    free(y);
    return d;
}

static void min_max(tg_tensor *t, double *lo, double *hi)
{
    int64_t n = tg_numel(t);
    double *v = malloc((size_t)n * sizeof *v);
    tg_copy_to(t, TG_FLOAT64, v);
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        *lo = fmin(*lo, v[i]);
        *hi = fmax(*hi, v[i]);
    }
    free(v);
}

/* ---- structure --------------------------------------------------------------- */

static void test_lenet_structure(void)
{
    tg_generator *g = tg_generator_new(1);
    tg_module *net = tg_lenet5(g);
    CHECK(net != NULL);
    tg_named_tensor *p;
    int n = tg_module_parameters(net, &p);
    CHECK(n == 10);
    for (int i = 0; i < n && i < 10; i++) {
        CHECK(strcmp(p[i].name, lenet_names[i]) == 0);
        CHECK(!p[i].is_buffer);
        CHECK(tg_requires_grad(p[i].tensor) && tg_is_leaf(p[i].tensor));
        CHECK(tg_dtype_of(p[i].tensor) == TG_FLOAT32);
        tt_check_shape(p[i].tensor, lenet_shapes[i], lenet_ndims[i], p[i].name,
                       __FILE__, __LINE__);
        CHECK(tg_module_tensor(net, lenet_names[i]) == p[i].tensor);
    }
    CHECK(p[n].name == NULL && p[n].tensor == NULL); /* terminator */
    tg_named_tensors_free(p);
    CHECK(tg_module_num_parameters(net) == 61706);
    /* no buffers: the state is the parameters */
    tg_named_tensor *st;
    CHECK(tg_module_state(net, &st) == 10);
    tg_named_tensors_free(st);

    const char *kinds[12] = {"Conv2d", "ReLU", "MaxPool2d", "Conv2d", "ReLU",
                             "MaxPool2d", "Flatten", "Linear", "ReLU", "Linear",
                             "ReLU", "Linear"};
    CHECK(strcmp(tg_module_kind(net), "Sequential") == 0);
    CHECK(tg_module_num_children(net) == 12);
    for (int i = 0; i < 12; i++)
        CHECK(strcmp(tg_module_kind(tg_module_child_at(net, i)), kinds[i]) == 0);
    CHECK(strcmp(tg_module_child_name(net, 7), "fc1") == 0);
    CHECK(tg_module_child(net, "fc2") == tg_module_child_at(net, 9));
    CHECK(tg_module_child_at(net, 12) == NULL && tg_module_child_name(net, -1) == NULL);

    char *s = tg_module_to_string(net);
    CHECK(s && strstr(s, "Sequential(\n  (conv1): Conv2d(1, 6, kernel_size=(5, 5), "
                         "stride=(1, 1), padding=(2, 2))\n"));
    CHECK(s && strstr(s, "(fc1): Linear(in_features=400, out_features=120, bias=True)"));
    CHECK(s && strstr(s, "(pool2): MaxPool2d(kernel_size=2, stride=2, padding=0, "
                         "ceil_mode=False)"));
    CHECK(s && strstr(s, "(flatten): Flatten(start_dim=1, end_dim=-1)"));
    free(s);
    tg_module_free(net);
    tg_generator_free(g);
}

static void test_describe(void)
{
    tg_generator *g = tg_generator_new(1);
    tg_module *net = tg_nn_sequential(5, (tg_module *[]){
        tg_nn_conv2d(4, 8, 3, 1, &(tg_conv2d_opts){.stride = {2, 1},
            .dilation = {2, 2}, .groups = 2}, false, g),
        tg_nn_batch_norm2d(8, 1e-5, 0.1, true, true),
        tg_nn_sequential(2, (tg_module *[]){tg_nn_leaky_relu(0.2),
                                            tg_nn_dropout(0.5, g)}),
        tg_nn_avg_pool2d(&(tg_pool2d_opts){.kernel = {2, 3}}),
        tg_nn_gelu()});
    char *s = tg_module_to_string(net);
    const char *want =
        "Sequential(\n"
        "  (0): Conv2d(4, 8, kernel_size=(3, 1), stride=(2, 1), dilation=(2, 2), "
        "groups=2, bias=False)\n"
        "  (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, "
        "track_running_stats=True)\n"
        "  (2): Sequential(\n"
        "    (0): LeakyReLU(negative_slope=0.2)\n"
        "    (1): Dropout(p=0.5)\n"
        "  )\n"
        "  (3): AvgPool2d(kernel_size=(2, 3), stride=(2, 3), padding=0, "
        "ceil_mode=False, count_include_pad=False)\n"
        "  (4): GELU(approximate='none')\n"
        ")";
    CHECK(s && strcmp(s, want) == 0);
    if (s && strcmp(s, want))
        printf("got:\n%s\n", s);
    free(s);
    CHECK(tg_module_child(net, "2.1") != NULL);
    CHECK(strcmp(tg_module_kind(tg_module_child(net, "2.1")), "Dropout") == 0);
    tg_module_free(net);
    tg_generator_free(g);
}

/* ---- initialisation --------------------------------------------------------------- */

static void check_uniform(tg_tensor *t, double bound)
{
    double lo, hi;
    min_max(t, &lo, &hi);
    CHECK(lo >= -bound && hi <= bound);
    /* with hundreds of draws the extremes come close to the bounds */
    if (tg_numel(t) >= 100) {
        CHECK(lo < -0.9 * bound && hi > 0.9 * bound);
        double mean = tg_item(tg_sum(t, 0, NULL, false)) / (double)tg_numel(t);
        CHECK(fabs(mean) < 0.1 * bound);
    }
}

static void test_init_bounds(void)
{
    /* PyTorch's kaiming_uniform(a = sqrt 5): gain sqrt(2 / 6), bound
     * gain * sqrt(3 / fan_in), which is 1 / sqrt(fan_in) */
    double gain = sqrt(2.0 / (1.0 + 5.0));
    CHECK_NEAR(gain * sqrt(3.0 / 400.0), 1.0 / sqrt(400.0), 1e-15);
    tg_generator *g = tg_generator_new(3);
    tg_module *fc = tg_nn_linear(400, 120, true, g);
    check_uniform(tg_module_tensor(fc, "weight"), gain * sqrt(3.0 / 400));
    check_uniform(tg_module_tensor(fc, "bias"), 1 / sqrt(400.0));
    tg_module *conv = tg_nn_conv2d(6, 16, 5, 5, NULL, true, g);
    check_uniform(tg_module_tensor(conv, "weight"), gain * sqrt(3.0 / 150));
    check_uniform(tg_module_tensor(conv, "bias"), 1 / sqrt(150.0));
    /* groups shrink fan_in to in / groups * kh * kw = 2 * 9 */
    tg_module *gconv = tg_nn_conv2d(4, 8, 3, 3, &(tg_conv2d_opts){.groups = 2},
                                    true, g);
    CHECK_SHAPE(tg_module_tensor(gconv, "weight"), 8, 2, 3, 3);
    check_uniform(tg_module_tensor(gconv, "weight"), 1 / sqrt(18.0));
    check_uniform(tg_module_tensor(gconv, "bias"), 1 / sqrt(18.0));
    /* no bias: only a weight */
    tg_module *nb = tg_nn_linear(3, 2, false, g);
    tg_named_tensor *p;
    CHECK(tg_module_parameters(nb, &p) == 1);
    CHECK(strcmp(p[0].name, "weight") == 0);
    tg_named_tensors_free(p);
    tg_module_free(fc);
    tg_module_free(conv);
    tg_module_free(gconv);
    tg_module_free(nb);
    tg_generator_free(g);
}

static void test_init_reproducible(void)
{
    tg_generator *g1 = tg_generator_new(42), *g2 = tg_generator_new(42),
                 *g3 = tg_generator_new(43);
    tg_module *a = tg_lenet5(g1), *b = tg_lenet5(g2), *c = tg_lenet5(g3);
    for (int i = 0; i < 10; i++) {
        CHECK(same_values(tg_module_tensor(a, lenet_names[i]),
                          tg_module_tensor(b, lenet_names[i])));
        CHECK(!same_values(tg_module_tensor(a, lenet_names[i]),
                           tg_module_tensor(c, lenet_names[i])));
    }
    /* the documented draw order: weight, then bias, each in C order */
    tg_generator_seed(g1, 5);
    tg_generator_seed(g2, 5);
    tg_module *fc = tg_nn_linear(3, 2, true, g1);
    tg_tensor *w = tg_rand_uniform(g2, TG_FLOAT32, 2, (int64_t[]){2, 3},
                                   -1 / sqrt(3.0), 1 / sqrt(3.0));
    tg_tensor *bias = tg_rand_uniform(g2, TG_FLOAT32, 1, (int64_t[]){2},
                                      -1 / sqrt(3.0), 1 / sqrt(3.0));
    CHECK(max_diff(tg_module_tensor(fc, "weight"), w) < 1e-7);
    CHECK(max_diff(tg_module_tensor(fc, "bias"), bias) < 1e-7);
    tg_module_free(fc);
    tg_module_free(a);
    tg_module_free(b);
    tg_module_free(c);
    tg_generator_free(g1);
    tg_generator_free(g2);
    tg_generator_free(g3);
}

static void test_batch_norm_state(void)
{
    tg_module *bn = tg_nn_batch_norm2d(3, 1e-5, 0.1, true, true);
    tg_named_tensor *st;
    const char *names[5] = {"weight", "bias", "running_mean", "running_var",
                            "num_batches_tracked"};
    const double fill[5] = {1, 0, 0, 1, 0};
    CHECK(tg_module_state(bn, &st) == 5);
    for (int i = 0; i < 5; i++) {
        CHECK(strcmp(st[i].name, names[i]) == 0);
        CHECK(st[i].is_buffer == (i >= 2));
        if (i < 4) {
            CHECK_SHAPE(st[i].tensor, 3);
            CHECK_TENSOR(st[i].tensor, ((double[]){fill[i], fill[i], fill[i]}), 0);
        }
        CHECK(tg_requires_grad(st[i].tensor) == (i < 2));
    }
    CHECK(tg_ndim(st[4].tensor) == 0 && tg_dtype_of(st[4].tensor) == TG_INT64);
    CHECK(tg_item(st[4].tensor) == 0);
    tg_named_tensors_free(st);
    CHECK(tg_module_num_parameters(bn) == 6);
    tg_module_free(bn);

    tg_module *plain = tg_nn_batch_norm2d(3, 1e-5, 0.1, false, false);
    CHECK(tg_module_state(plain, &st) == 0);
    tg_named_tensors_free(st);
    tg_module_free(plain);
}

/* ---- naming and order ------------------------------------------------------------ */

static void test_state_order(void)
{
    tg_generator *g = tg_generator_new(9);
    tg_module *head = tg_nn_sequential(0, NULL);
    CHECK_OK(tg_module_add(head, "fc", tg_nn_linear(8, 4, true, g)));
    CHECK_OK(tg_module_add(head, "out", tg_nn_linear(4, 2, false, g)));
    tg_module *net = tg_nn_sequential(4, (tg_module *[]){
        tg_nn_conv2d(1, 2, 3, 3, NULL, true, g),
        tg_nn_batch_norm2d(2, 1e-5, 0.1, true, true), tg_nn_relu(), head});
    CHECK_OK(tg_nn_sequential_append(net, tg_nn_tanh()));
    CHECK(strcmp(tg_module_child_name(net, 4), "4") == 0);
    const char *want[] = {"0.weight", "0.bias", "1.weight", "1.bias",
                          "1.running_mean", "1.running_var",
                          "1.num_batches_tracked", "3.fc.weight", "3.fc.bias",
                          "3.out.weight"};
    for (int round = 0; round < 2; round++) { /* stable across calls */
        tg_named_tensor *st, *p;
        CHECK(tg_module_state(net, &st) == 10);
        for (int i = 0; i < 10; i++) {
            CHECK(strcmp(st[i].name, want[i]) == 0);
            CHECK(st[i].tensor == tg_module_tensor(net, want[i]));
        }
        CHECK(tg_module_parameters(net, &p) == 7);
        const int param_idx[7] = {0, 1, 2, 3, 7, 8, 9};
        for (int i = 0; i < 7; i++)
            CHECK(strcmp(p[i].name, want[param_idx[i]]) == 0);
        tg_named_tensors_free(st);
        tg_named_tensors_free(p);
    }
    CHECK(tg_module_num_parameters(net) == 2 * 9 + 2 + 2 + 2 + 8 * 4 + 4 + 4 * 2);
    tg_module_free(net);
    tg_generator_free(g);
}

static void test_tied_parameters(void)
{
    tg_generator *g = tg_generator_new(2);
    tg_module *a = tg_nn_linear(3, 3, false, g);
    tg_module *m = tg_module_new("Tied", NULL, NULL, NULL);
    CHECK_OK(tg_module_add_parameter(m, "shared", tg_module_tensor(a, "weight")));
    CHECK_OK(tg_module_add(m, "a", a));
    tg_named_tensor *p, *st;
    CHECK(tg_module_parameters(m, &p) == 1); /* listed once */
    CHECK(strcmp(p[0].name, "shared") == 0);
    CHECK(tg_module_state(m, &st) == 2); /* under both names */
    CHECK(strcmp(st[1].name, "a.weight") == 0 && st[0].tensor == st[1].tensor);
    tg_named_tensors_free(p);
    tg_named_tensors_free(st);
    tg_module_free(m);
    tg_generator_free(g);
}

/* ---- modes ------------------------------------------------------------------------- */

static void test_train_eval(void)
{
    tg_generator *g = tg_generator_new(4);
    tg_module *net = tg_nn_sequential(2, (tg_module *[]){
        tg_nn_dropout(0.5, g),
        tg_nn_sequential(1, (tg_module *[]){tg_nn_batch_norm2d(2, 1e-5, 0.1,
                                                               true, true)})});
    CHECK(tg_module_is_training(net));
    tg_module_train(net, false);
    CHECK(!tg_module_is_training(net));
    CHECK(!tg_module_is_training(tg_module_child(net, "0")));
    CHECK(!tg_module_is_training(tg_module_child(net, "1.0")));
    tg_module_train(net, true);
    CHECK(tg_module_is_training(tg_module_child(net, "1.0")));
    tg_module_free(net);
    tg_generator_free(g);
}

static void test_dropout_modes(void)
{
    tg_generator *g = tg_generator_new(4);
    tg_module *d = tg_nn_dropout(0.25, g);
    int64_t s[2] = {40, 50};
    tg_tensor *x = tg_add_scalar(tg_rand_uniform(g, TG_FLOAT32, 2, s, 0, 1), 1);
    tg_module_train(d, false);
    tg_tensor *y = tg_module_forward(d, x);
    CHECK(y && same_values(x, y)); /* the identity in eval */
    tg_module_train(d, true);
    y = tg_module_forward(d, x);
    CHECK(y != NULL);
    if (y) {
        int64_t n = tg_numel(x), zeros = 0, bad = 0;
        double *xv = malloc((size_t)n * sizeof *xv), *yv = malloc((size_t)n * sizeof *yv);
        tg_copy_to(x, TG_FLOAT64, xv);
        tg_copy_to(y, TG_FLOAT64, yv);
        for (int64_t i = 0; i < n; i++) {
            if (yv[i] == 0)
                zeros++;
            else if (fabs(yv[i] - xv[i] / 0.75) > 1e-5)
                bad++;
        }
        CHECK(bad == 0);
        CHECK(zeros > n / 4 - 100 && zeros < n / 4 + 100);
        free(xv);
        free(yv);
    }
    tg_module_free(d);
    /* p = 0 needs no generator and is the identity in training too */
    tg_module *d0 = tg_nn_dropout(0, NULL);
    CHECK(d0 && same_values(tg_module_forward(d0, x), x));
    tg_module_free(d0);
    tg_generator_free(g);
}

/* per-channel mean and unbiased variance of x [N, C, H, W] */
static void channel_stats(tg_tensor *x, int c, double *mean, double *var)
{
    const int64_t *s = tg_shape(x);
    int64_t n = s[0] * s[2] * s[3];
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < s[0]; i++)
        for (int64_t h = 0; h < s[2]; h++)
            for (int64_t w = 0; w < s[3]; w++)
                sum += tg_get(x, (int64_t[]){i, c, h, w});
    *mean = sum / (double)n;
    for (int64_t i = 0; i < s[0]; i++)
        for (int64_t h = 0; h < s[2]; h++)
            for (int64_t w = 0; w < s[3]; w++) {
                double d = tg_get(x, (int64_t[]){i, c, h, w}) - *mean;
                sq += d * d;
            }
    *var = sq / (double)(n - 1);
}

static void test_batch_norm_modes(void)
{
    tg_generator *g = tg_generator_new(6);
    int64_t s[4] = {3, 2, 2, 3};
    tg_tensor *x = tg_rand_uniform(g, TG_FLOAT64, 4, s, -2, 3);
    tg_module *bn = tg_nn_batch_norm2d(2, 1e-5, 0.1, true, true);
    CHECK_OK(tg_module_to_dtype(bn, TG_FLOAT64));
    tg_tensor *rm = tg_module_tensor(bn, "running_mean");
    tg_tensor *rv = tg_module_tensor(bn, "running_var");
    tg_tensor *w = tg_module_tensor(bn, "weight");
    tg_tensor *b = tg_module_tensor(bn, "bias");
    tg_no_grad_begin();
    CHECK_OK(tg_copy_(w, tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){2, 0.5})));
    CHECK_OK(tg_copy_(b, tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1, -1})));
    tg_no_grad_end();

    /* training: batch statistics, running stats updated with momentum */
    tg_tensor *y = tg_module_forward(bn, x);
    CHECK(y != NULL);
    double mean[2], var[2], wv[2] = {2, 0.5}, bv[2] = {1, -1};
    for (int c = 0; c < 2; c++)
        channel_stats(x, c, &mean[c], &var[c]);
    if (y) {
        double biased = var[0] * 17 / 18; /* normalisation uses biased var */
        double want = (tg_get(x, (int64_t[]){1, 0, 1, 2}) - mean[0]) /
                      sqrt(biased + 1e-5) * 2 + 1;
        CHECK_NEAR(tg_get(y, (int64_t[]){1, 0, 1, 2}), want, 1e-9);
    }
    CHECK_TENSOR(rm, ((double[]){0.1 * mean[0], 0.1 * mean[1]}), 1e-12);
    CHECK_TENSOR(rv, ((double[]){0.9 + 0.1 * var[0], 0.9 + 0.1 * var[1]}), 1e-12);
    CHECK(tg_item(tg_module_tensor(bn, "num_batches_tracked")) == 1);

    /* eval: running statistics, nothing updated */
    tg_module_train(bn, false);
    y = tg_module_forward(bn, x);
    CHECK(y != NULL);
    if (y) {
        for (int c = 0; c < 2; c++) {
            double m = tg_get(rm, (int64_t[]){c}), v = tg_get(rv, (int64_t[]){c});
            double xv = tg_get(x, (int64_t[]){2, c, 0, 1});
            CHECK_NEAR(tg_get(y, (int64_t[]){2, c, 0, 1}),
                       (xv - m) / sqrt(v + 1e-5) * wv[c] + bv[c], 1e-9);
        }
    }
    CHECK_TENSOR(rm, ((double[]){0.1 * mean[0], 0.1 * mean[1]}), 1e-12);
    CHECK(tg_item(tg_module_tensor(bn, "num_batches_tracked")) == 1);
    tg_module_free(bn);

    /* cumulative average: after two batches the running mean is their mean */
    tg_module *cum = tg_nn_batch_norm2d(2, 1e-5, TG_NN_MOMENTUM_CUMULATIVE, false,
                                        true);
    CHECK_OK(tg_module_to_dtype(cum, TG_FLOAT64));
    tg_tensor *x2 = tg_rand_uniform(g, TG_FLOAT64, 4, s, 0, 5);
    CHECK(tg_module_forward(cum, x) && tg_module_forward(cum, x2));
    double mean2[2], var2[2];
    for (int c = 0; c < 2; c++)
        channel_stats(x2, c, &mean2[c], &var2[c]);
    CHECK_TENSOR(tg_module_tensor(cum, "running_mean"),
                 ((double[]){(mean[0] + mean2[0]) / 2, (mean[1] + mean2[1]) / 2}),
                 1e-12);
    CHECK(tg_item(tg_module_tensor(cum, "num_batches_tracked")) == 2);
    tg_module_free(cum);

    /* no running stats: batch statistics in eval as well */
    tg_module *bs = tg_nn_batch_norm2d(2, 1e-5, 0.1, false, false);
    CHECK_OK(tg_module_to_dtype(bs, TG_FLOAT64));
    tg_module_train(bs, false);
    y = tg_module_forward(bs, x);
    CHECK(y != NULL);
    if (y) {
        double xv = tg_get(x, (int64_t[]){0, 1, 1, 1});
        CHECK_NEAR(tg_get(y, (int64_t[]){0, 1, 1, 1}),
                   (xv - mean[1]) / sqrt(var[1] * 17 / 18 + 1e-5), 1e-9);
    }
    tg_module_free(bs);
    tg_generator_free(g);
}

/* ---- forward ------------------------------------------------------------------------- */

static void test_lenet_forward(void)
{
    tg_generator *g = tg_generator_new(11);
    tg_module *net = tg_lenet5(g);
    for (int64_t b = 1; b <= 3; b += 2) {
        tg_tensor *x = tg_rand_uniform(g, TG_FLOAT32, 4, (int64_t[]){b, 1, 28, 28},
                                       0, 1);
        tg_tensor *y = tg_module_forward(net, x);
        CHECK(y != NULL);
        if (y) {
            CHECK_SHAPE(y, b, 10);
            CHECK(tg_dtype_of(y) == TG_FLOAT32 && tg_requires_grad(y));
        }
    }
    /* eval gives the same logits (no dropout or batch norm inside) */
    tg_tensor *x = tg_rand_uniform(g, TG_FLOAT32, 4, (int64_t[]){2, 1, 28, 28}, 0, 1);
    tg_tensor *y1 = tg_module_forward(net, x);
    tg_module_train(net, false);
    tg_tensor *y2 = tg_module_forward(net, x);
    CHECK(y1 && y2 && same_values(y1, y2));
    /* float64 after conversion */
    CHECK_OK(tg_module_to_dtype(net, TG_FLOAT64));
    tg_named_tensor *p;
    int n = tg_module_parameters(net, &p);
    for (int i = 0; i < n; i++)
        CHECK(tg_dtype_of(p[i].tensor) == TG_FLOAT64 && tg_requires_grad(p[i].tensor));
    tg_named_tensors_free(p);
    tg_tensor *y3 = tg_module_forward(net, tg_cast(x, TG_FLOAT64));
    CHECK(y3 && tg_dtype_of(y3) == TG_FLOAT64);
    CHECK(max_diff(y1, y3) < 1e-4);
    tg_module_free(net);
    tg_generator_free(g);
}

static void test_sequential_matches_raw_ops(void)
{
    tg_generator *g = tg_generator_new(12);
    tg_module *mlp = tg_nn_sequential(3, (tg_module *[]){
        tg_nn_linear(4, 5, true, g), tg_nn_relu(), tg_nn_linear(5, 3, true, g)});
    CHECK_OK(tg_module_to_dtype(mlp, TG_FLOAT64));
    tg_tensor *w0 = tg_module_tensor(mlp, "0.weight"), *b0 = tg_module_tensor(mlp, "0.bias");
    tg_tensor *w2 = tg_module_tensor(mlp, "2.weight"), *b2 = tg_module_tensor(mlp, "2.bias");
    tg_tensor *x = tt_rand(2, (int64_t[]){6, 4}, -2, 2);
    tg_tensor *y = tg_module_forward(mlp, x);
    tg_tensor *h = tg_relu(tg_add(tg_matmul(x, tg_transpose(w0, 0, 1)), b0));
    tg_tensor *ref = tg_add(tg_matmul(h, tg_transpose(w2, 0, 1)), b2);
    CHECK(y && ref);
    if (y && ref) {
        CHECK_SHAPE(y, 6, 3);
        CHECK(max_diff(y, ref) < 1e-12);
    }
    /* the same gradients, by the module and by the raw ops */
    tg_tensor *pars[4] = {w0, b0, w2, b2};
    tg_tensor *g_mod[4] = {0}, *g_raw[4] = {0};
    tg_tensor *l1 = tg_sum(tg_mul(y, y), 0, NULL, false);
    tg_tensor *l2 = tg_sum(tg_mul(ref, ref), 0, NULL, false);
    CHECK_OK(tg_autograd_grad(1, &l1, NULL, 4, pars, g_mod, false, false));
    CHECK_OK(tg_autograd_grad(1, &l2, NULL, 4, pars, g_raw, false, false));
    for (int i = 0; i < 4; i++) {
        CHECK(max_diff(g_mod[i], g_raw[i]) < 1e-12);
        tg_release(g_mod[i]);
        tg_release(g_raw[i]);
    }
    tg_module_free(mlp);
    tg_generator_free(g);
}

static tg_tensor *mlp_fn(int n, tg_tensor *const *in, void *user)
{
    (void)n;
    return tg_module_forward(user, in[0]);
}

static void test_module_gradcheck(void)
{
    tg_generator *g = tg_generator_new(13);
    tg_module *mlp = tg_nn_sequential(3, (tg_module *[]){
        tg_nn_linear(3, 4, true, g), tg_nn_tanh(), tg_nn_linear(4, 2, true, g)});
    CHECK_OK(tg_module_to_dtype(mlp, TG_FLOAT64));
    tg_tensor *in[1] = {tt_rand(2, (int64_t[]){2, 3}, -1, 1)};
    CHECK_GRADCHECK(mlp_fn, mlp, 1, in);
    tg_module_free(mlp);
    tg_generator_free(g);
}

static void test_gradients_reach_parameters(void)
{
    tg_generator *g = tg_generator_new(14);
    tg_module *net = tg_lenet5(g);
    tg_tensor *x = tg_rand_uniform(g, TG_FLOAT32, 4, (int64_t[]){4, 1, 28, 28}, 0, 1);
    tg_tensor *labels = tg_from_data(TG_INT64, 1, (int64_t[]){4},
                                     (int64_t[]){3, 1, 4, 1});
    tg_tensor *loss = tg_cross_entropy(tg_module_forward(net, x), labels,
                                       TG_REDUCTION_MEAN);
    CHECK(loss != NULL);
    CHECK_OK(tg_backward(loss, NULL, false));
    tg_named_tensor *p;
    int n = tg_module_parameters(net, &p);
    for (int i = 0; i < n; i++) {
        tg_tensor *gr = tg_grad(p[i].tensor);
        CHECK(gr != NULL);
        if (!gr)
            continue;
        CHECK(tg_ndim(gr) == tg_ndim(p[i].tensor) &&
              memcmp(tg_shape(gr), tg_shape(p[i].tensor),
                     (size_t)tg_ndim(gr) * sizeof(int64_t)) == 0);
        double lo, hi;
        min_max(gr, &lo, &hi);
        CHECK(hi - lo > 0); /* some signal reached every parameter */
    }
    tg_module_zero_grad(net);
    for (int i = 0; i < n; i++)
        CHECK(tg_grad(p[i].tensor) == NULL);
    /* frozen: no gradients, and a loss that needs none */
    CHECK_OK(tg_module_requires_grad(net, false));
    tg_tensor *y = tg_module_forward(net, x);
    CHECK(y && !tg_requires_grad(y));
    CHECK_OK(tg_module_requires_grad(net, true));
    tg_named_tensors_free(p);
    tg_module_free(net);
    tg_generator_free(g);
}

static void test_activation_modules(void)
{
    int64_t s[3] = {2, 3, 4};
    tg_tensor *x = tt_rand(3, s, -2, 2);
    tg_module *mods[6] = {tg_nn_relu(), tg_nn_tanh(), tg_nn_sigmoid(), tg_nn_gelu(),
                          tg_nn_leaky_relu(0.1), tg_nn_identity()};
    tg_tensor *ref[6] = {tg_relu(x), tg_tanh(x), tg_sigmoid(x), tg_gelu(x),
                         tg_leaky_relu(x, 0.1), x};
    const char *kinds[6] = {"ReLU", "Tanh", "Sigmoid", "GELU", "LeakyReLU",
                            "Identity"};
    for (int i = 0; i < 6; i++) {
        CHECK(strcmp(tg_module_kind(mods[i]), kinds[i]) == 0);
        tg_tensor *y = tg_module_forward(mods[i], x);
        CHECK(y && same_values(y, ref[i]));
        tg_module_free(mods[i]);
    }
    tg_module *fl = tg_nn_flatten(1, -1), *fl0 = tg_nn_flatten(0, 1);
    CHECK_SHAPE(tg_module_forward(fl, x), 2, 12);
    CHECK_SHAPE(tg_module_forward(fl0, x), 6, 4);
    tg_module_free(fl);
    tg_module_free(fl0);
    /* an empty Sequential passes its input through */
    tg_module *empty = tg_nn_sequential(0, NULL);
    CHECK(same_values(tg_module_forward(empty, x), x));
    tg_module_free(empty);
}

static void test_pool_modules(void)
{
    tg_tensor *x = tt_rand(4, (int64_t[]){1, 2, 4, 6}, -1, 1);
    tg_pool2d_opts o = {.kernel = {2, 3}};
    tg_module *mp = tg_nn_max_pool2d(&o), *ap = tg_nn_avg_pool2d(&o);
    tg_tensor *y1 = tg_module_forward(mp, x), *y2 = tg_module_forward(ap, x);
    CHECK(y1 && y2);
    if (y1 && y2) {
        CHECK_SHAPE(y1, 1, 2, 2, 2);
        CHECK(same_values(y1, tg_max_pool2d(x, &o)));
        CHECK(same_values(y2, tg_avg_pool2d(x, &o)));
    }
    tg_module_free(mp);
    tg_module_free(ap);
}

/* the module's parameters drive an optimizer: a few SGD steps on a fixed
 * batch lower the loss */
static void test_training_steps(void)
{
    tg_generator *g = tg_generator_new(21);
    tg_module *net = tg_nn_sequential(3, (tg_module *[]){
        tg_nn_linear(4, 8, true, g), tg_nn_tanh(), tg_nn_linear(8, 3, true, g)});
    tg_named_tensor *p;
    int n = tg_module_parameters(net, &p);
    tg_tensor *params[4];
    for (int i = 0; i < n && i < 4; i++)
        params[i] = p[i].tensor;
    tg_named_tensors_free(p);
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 0.5;
    o.momentum = 0.9;
    tg_optimizer *opt = tg_optim_sgd(n, params, &o);
    CHECK(opt != NULL);
    tg_tensor *x = tg_rand_uniform(g, TG_FLOAT32, 2, (int64_t[]){8, 4}, -1, 1);
    tg_tensor *labels = tg_from_data(TG_INT64, 1, (int64_t[]){8},
                                     (int64_t[]){0, 1, 2, 0, 1, 2, 0, 1});
    double first = 0, last = 0;
    for (int step = 0; step < 20 && opt; step++) {
        tg_scope_begin();
        tg_optim_zero_grad(opt);
        tg_tensor *loss = tg_cross_entropy(tg_module_forward(net, x), labels,
                                           TG_REDUCTION_MEAN);
        CHECK(loss != NULL);
        if (loss) {
            last = tg_item(loss);
            if (step == 0)
                first = last;
            CHECK_OK(tg_backward(loss, NULL, false));
            CHECK_OK(tg_optim_step(opt));
        }
        tg_scope_end();
    }
    CHECK(last < first * 0.5);
    tg_optim_free(opt);
    tg_module_free(net);
    tg_generator_free(g);
}

/* tracing: forward inside a graph scope builds a graph (parameters become
 * constants) whose run gives the eager logits */
static void test_trace_to_graph(void)
{
    tg_generator *g = tg_generator_new(22);
    tg_module *net = tg_nn_sequential(2, (tg_module *[]){
        tg_lenet5(g), tg_nn_dropout(0.5, g)});
    tg_module_train(net, false);
    int64_t shape[4] = {2, 1, 28, 28};
    tg_tensor *x = tg_rand_uniform(g, TG_FLOAT32, 4, shape, 0, 1);
    tg_tensor *eager = tg_module_forward(net, x);
    tg_graph *gr = tg_graph_new("lenet");
    CHECK_OK(tg_graph_begin(gr));
    tg_tensor *in = tg_placeholder(gr, "x", TG_FLOAT32, 4, shape);
    tg_tensor *out = tg_module_forward(net, in);
    CHECK_OK(tg_graph_end());
    CHECK(out && tg_is_symbolic(out));
    if (out)
        CHECK_SHAPE(out, 2, 10);
    tg_session *sess = tg_session_new(gr);
    tg_tensor *res = NULL;
    CHECK_OK(tg_session_run(sess, 1, &in, &x, 1, &out, &res, 0, NULL));
    CHECK(res && max_diff(res, eager) < 1e-5);
    tg_session_free(sess);
    tg_graph_free(gr);
    tg_module_free(net);
    tg_generator_free(g);
}

/* ---- custom modules --------------------------------------------------------------------- */

typedef struct scaler {
    double factor;
    int calls;
} scaler;

/* y = child(x) * scale * factor, with intermediates the scope frees */
static tg_tensor *scaler_forward(tg_module *m, tg_tensor *x)
{
    scaler *s = tg_module_user(m);
    s->calls++;
    tg_tensor *h = tg_module_forward(tg_module_child(m, "inner"), x);
    return tg_mul_scalar(tg_mul(h, tg_module_tensor(m, "scale")), s->factor);
}

static void test_custom_module(void)
{
    scaler *s = malloc(sizeof *s);
    *s = (scaler){2.0, 0};
    tg_module *m = tg_module_new("Scaler", scaler_forward, s, free);
    tg_tensor *scale = tg_full(TG_FLOAT64, 1, (int64_t[]){3}, 0.5);
    CHECK_OK(tg_module_add_parameter(m, "scale", scale));
    CHECK(tg_requires_grad(scale));
    tg_tensor *count = tg_zeros(TG_INT64, 0, NULL);
    CHECK_OK(tg_module_add_buffer(m, "count", count));
    CHECK_OK(tg_module_add(m, "inner", tg_nn_tanh()));
    CHECK(strcmp(tg_module_kind(m), "Scaler") == 0);
    tg_tensor *x = tt_rand(2, (int64_t[]){2, 3}, -1, 1);
    tg_tensor *y = tg_module_forward(m, x);
    CHECK(y && s->calls == 1);
    CHECK(y && same_values(y, tg_mul_scalar(tg_tanh(x), 1.0)));
    CHECK_OK(tg_backward(tg_sum(y, 0, NULL, false), NULL, false));
    CHECK(tg_grad(scale) != NULL && tg_grad(x) != NULL);
    tg_named_tensor *st;
    CHECK(tg_module_state(m, &st) == 2);
    CHECK(strcmp(st[0].name, "scale") == 0 && strcmp(st[1].name, "count") == 0);
    tg_named_tensors_free(st);
    /* a custom module without forward is a container only */
    tg_module *box = tg_module_new("Box", NULL, NULL, NULL);
    CHECK_ERROR(tg_module_forward(box, x), TG_ERR_UNSUPPORTED, "Box: module has no forward");
    tg_module_free(box);
    tg_module_free(m); /* frees s through user_free */
}

/* ---- scopes and ownership ------------------------------------------------------------------ */

static void test_ownership(void)
{
    tg_generator *g = tg_generator_new(15);
    /* built inside a scope, the parameters outlive it */
    tg_scope_begin();
    tg_module *relu = tg_nn_relu();
    tg_module *bn = tg_nn_batch_norm2d(2, 1e-5, 0.1, true, true);
    tg_scope_end();
    CHECK(tg_numel(tg_module_tensor(bn, "running_var")) == 2);
    /* forward's result belongs to the current scope, like an op's */
    tg_tensor *x = tt_rand(1, (int64_t[]){5}, -1, 1);
    tg_scope_begin();
    tg_tensor *y = tg_keep(tg_module_forward(relu, x));
    tg_module_forward(relu, x); /* freed here */
    tg_scope_end();
    CHECK(y && same_values(y, tg_relu(x)));
    tg_module_free(bn);
    tg_module_free(relu);
    tg_generator_free(g);
}

static void test_load_state(void)
{
    tg_generator *g = tg_generator_new(16);
    tg_module *a = tg_lenet5(g), *b = tg_lenet5(g);
    tg_named_tensor *st;
    int n = tg_module_state(a, &st);
    CHECK(!same_values(tg_module_tensor(a, "fc1.weight"), tg_module_tensor(b, "fc1.weight")));
    CHECK_OK(tg_module_load_state(b, n, st, true));
    for (int i = 0; i < 10; i++)
        CHECK(same_values(tg_module_tensor(a, lenet_names[i]),
                          tg_module_tensor(b, lenet_names[i])));
    /* parameters stay the same tensors (optimizers keep pointers) */
    CHECK(tg_module_tensor(b, "fc1.weight") != tg_module_tensor(a, "fc1.weight"));
    /* strict: missing and unexpected keys, shape mismatches */
    CHECK_FAILS(tg_module_load_state(b, n - 1, st, true), TG_ERR_ARG,
                "missing key 'fc3.bias'");
    tg_named_tensor extra[2] = {st[0], {"conv9.weight", st[0].tensor, false}};
    CHECK_FAILS(tg_module_load_state(b, 2, extra, true), TG_ERR_ARG,
                "unexpected key 'conv9.weight'");
    CHECK_OK(tg_module_load_state(b, 2, extra, false)); /* ignored when lax */
    tg_named_tensor wrong = {"fc1.bias", st[0].tensor, false};
    CHECK_FAILS(tg_module_load_state(b, 1, &wrong, false), TG_ERR_SHAPE,
                "'fc1.bias' has shape [6, 1, 5, 5] in the state but [120]");
    /* dtypes are converted */
    tg_named_tensor dbl = {"fc3.bias", tg_full(TG_FLOAT64, 1, (int64_t[]){10}, 0.25),
                           false};
    CHECK_OK(tg_module_load_state(b, 1, &dbl, false));
    CHECK(tg_dtype_of(tg_module_tensor(b, "fc3.bias")) == TG_FLOAT32);
    CHECK_NEAR(tg_get(tg_module_tensor(b, "fc3.bias"), (int64_t[]){7}), 0.25, 0);
    tg_named_tensors_free(st);
    tg_module_free(a);
    tg_module_free(b);
    tg_generator_free(g);
}


/* model state through a state dict and a safetensors file, with PyTorch's
 * names, a prefix for sharing the file, and int64 buffers */
static void test_checkpoint_roundtrip(void)
{
    tg_generator *g = tg_generator_new(20);
    tg_module *a = tg_nn_sequential(2, (tg_module *[]){
        tg_lenet5(g), tg_nn_batch_norm2d(3, 1e-5, 0.1, true, true)});
    tg_module *b = tg_nn_sequential(2, (tg_module *[]){
        tg_lenet5(g), tg_nn_batch_norm2d(3, 1e-5, 0.1, true, true)});
    tg_tensor *nbt = tg_module_tensor(a, "1.num_batches_tracked");
    *(int64_t *)tg_data(nbt) = 7;
    tg_state_dict *sd = tg_state_dict_new();
    CHECK_OK(tg_module_state_dict(a, sd, "model."));
    CHECK_OK(tg_state_dict_add(sd, "optim.state.0.step", tg_zeros(TG_INT64, 0, NULL)));
    CHECK(tg_state_dict_size(sd) == 16);
    CHECK(strcmp(tg_state_dict_name(sd, 0), "model.0.conv1.weight") == 0);
    CHECK(strcmp(tg_state_dict_name(sd, 14), "model.1.num_batches_tracked") == 0);
    char path[64];
    snprintf(path, sizeof path, "test_nn_modules_%d.safetensors", (int)getpid());
    CHECK_OK(tg_safetensors_save_dict(path, sd));
    tg_state_dict_free(sd);
    tg_state_dict *back = tg_safetensors_load(path);
    CHECK(back != NULL);
    remove(path);
    /* without the prefix the names do not match */
    CHECK_FAILS(tg_module_load_state_dict(b, back, NULL, true), TG_ERR_ARG,
                "unexpected key 'model.0.conv1.weight'");
    CHECK_OK(tg_module_load_state_dict(b, back, "model.", true));
    tg_named_tensor *sa, *sb;
    int n = tg_module_state(a, &sa);
    CHECK(tg_module_state(b, &sb) == n && n == 15);
    for (int i = 0; i < n; i++) {
        CHECK(strcmp(sa[i].name, sb[i].name) == 0);
        CHECK(tg_dtype_of(sa[i].tensor) == tg_dtype_of(sb[i].tensor));
        CHECK(same_values(sa[i].tensor, sb[i].tensor));
    }
    CHECK(tg_item(tg_module_tensor(b, "1.num_batches_tracked")) == 7);
    tg_named_tensors_free(sa);
    tg_named_tensors_free(sb);
    /* plain names: what PyTorch's load_state_dict expects */
    tg_state_dict *plain = tg_state_dict_new();
    CHECK_OK(tg_module_state_dict(tg_module_child(a, "0"), plain, NULL));
    CHECK(tg_state_dict_size(plain) == 10);
    for (int i = 0; i < 10; i++)
        CHECK(strcmp(tg_state_dict_name(plain, i), lenet_names[i]) == 0);
    CHECK_FAILS(tg_module_state_dict(tg_module_child(a, "0"), plain, NULL),
                TG_ERR_ARG, "conv1.weight");
    tg_state_dict_free(plain);
    tg_state_dict_free(back);
    tg_module_free(a);
    tg_module_free(b);
    tg_generator_free(g);
}

/* ---- errors --------------------------------------------------------------------------------- */

static void test_forward_errors(void)
{
    tg_generator *g = tg_generator_new(17);
    tg_module *fc = tg_nn_linear(4, 3, true, g);
    tg_module *conv = tg_nn_conv2d(3, 4, 3, 3, NULL, true, g);
    tg_tensor *x2 = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 5});
    tg_tensor *x4 = tg_zeros(TG_FLOAT32, 4, (int64_t[]){1, 2, 8, 8});
    tg_tensor *x3 = tg_zeros(TG_FLOAT32, 3, (int64_t[]){3, 8, 8});
    /* the ops' own messages come through */
    CHECK_ERROR(tg_module_forward(fc, x2), TG_ERR_SHAPE, "linear");
    CHECK_ERROR(tg_module_forward(conv, x4), TG_ERR_SHAPE, "conv2d");
    CHECK_ERROR(tg_module_forward(conv, x3), TG_ERR_SHAPE, "conv2d");
    tg_module *bn = tg_nn_batch_norm2d(3, 1e-5, 0.1, true, true);
    CHECK_ERROR(tg_module_forward(bn, x2), TG_ERR_SHAPE,
                "BatchNorm2d: expected input [N, 3, H, W]");
    CHECK_ERROR(tg_module_forward(bn, x4), TG_ERR_SHAPE, "got 4D input [1, 2, 8, 8]");
    CHECK(tg_item(tg_module_tensor(bn, "num_batches_tracked")) == 0);
    /* inside containers the failing child is named */
    tg_module *inner = tg_nn_sequential(2, (tg_module *[]){tg_nn_relu(), conv});
    tg_module *outer = tg_nn_sequential(0, NULL);
    CHECK_OK(tg_module_add(outer, "features", inner));
    CHECK_ERROR(tg_module_forward(outer, x4), TG_ERR_SHAPE,
                "module features.1 (Conv2d): conv2d");
    CHECK_ERROR(tg_module_forward(NULL, x4), TG_ERR_ARG, "module is NULL");
    CHECK_ERROR(tg_module_forward(fc, NULL), TG_ERR_ARG, "Linear: input is NULL");
    tg_module_free(fc);
    tg_module_free(bn);
    tg_module_free(outer);
    tg_generator_free(g);
}

static void test_construction_errors(void)
{
    tg_generator *g = tg_generator_new(18);
    CHECK_ERROR(tg_nn_linear(0, 3, true, g), TG_ERR_ARG, "Linear: in_features");
    CHECK_ERROR(tg_nn_linear(2, 3, true, NULL), TG_ERR_ARG, "generator is NULL");
    CHECK_ERROR(tg_nn_conv2d(3, 4, 3, 3, &(tg_conv2d_opts){.groups = 2}, true, g),
                TG_ERR_ARG, "divisible by groups (2)");
    CHECK_ERROR(tg_nn_conv2d(3, 4, 0, 3, NULL, true, g), TG_ERR_ARG, "kernel (0, 3)");
    CHECK_ERROR(tg_nn_conv2d(3, 4, 3, 3, &(tg_conv2d_opts){.padding = {-1, 0}},
                             true, g), TG_ERR_ARG, "must not be negative");
    CHECK_ERROR(tg_nn_batch_norm2d(0, 1e-5, 0.1, true, true), TG_ERR_ARG,
                "num_features");
    CHECK_ERROR(tg_nn_batch_norm2d(3, 1e-5, 1.5, true, true), TG_ERR_ARG, "momentum");
    CHECK_ERROR(tg_nn_dropout(1.5, g), TG_ERR_ARG, "between 0 and 1, got 1.5");
    CHECK_ERROR(tg_nn_dropout(0.5, NULL), TG_ERR_ARG, "generator is NULL");
    CHECK_ERROR(tg_nn_max_pool2d(NULL), TG_ERR_ARG, "MaxPool2d: options are NULL");
    CHECK_ERROR(tg_nn_avg_pool2d(&(tg_pool2d_opts){.kernel = {0, 2}}), TG_ERR_ARG,
                "AvgPool2d: expected kernel >= 1");
    CHECK_ERROR(tg_lenet5(NULL), TG_ERR_ARG, "generator is NULL");
    CHECK_ERROR(tg_module_new("", NULL, NULL, NULL), TG_ERR_ARG, "kind is empty");
    /* a failed constructor inside tg_nn_sequential: the error survives, the
     * other children are freed (valgrind checks) */
    CHECK_ERROR(tg_nn_sequential(3, (tg_module *[]){tg_nn_relu(),
                                 tg_nn_linear(0, 1, true, g), tg_nn_tanh()}),
                TG_ERR_ARG, "Linear: in_features");
    tg_generator_free(g);
}

static void test_name_errors(void)
{
    tg_generator *g = tg_generator_new(19);
    tg_module *seq = tg_nn_sequential(0, NULL);
    CHECK_OK(tg_module_add(seq, "block", tg_nn_relu()));
    CHECK_FAILS(tg_module_add(seq, "block", tg_nn_tanh()), TG_ERR_ARG,
                "duplicate name 'block' in Sequential");
    CHECK_FAILS(tg_module_add(seq, "a.b", tg_nn_tanh()), TG_ERR_ARG,
                "must not contain '.'");
    CHECK_FAILS(tg_module_add(seq, "", tg_nn_tanh()), TG_ERR_ARG, "name is empty");
    CHECK_FAILS(tg_module_add(seq, "x", tg_nn_linear(0, 1, true, g)), TG_ERR_ARG,
                "Linear: in_features"); /* the constructor's error is kept */
    CHECK_FAILS(tg_module_add(seq, "x", seq), TG_ERR_ARG, "its own child");
    CHECK_FAILS(tg_module_add(seq, "x", tg_module_child(seq, "block")), TG_ERR_ARG,
                "already belongs to a container");
    CHECK(tg_module_num_children(seq) == 1);
    /* append names by count, as PyTorch: here "1", taken by a named child */
    tg_module *seq2 = tg_nn_sequential(0, NULL);
    CHECK_OK(tg_module_add(seq2, "1", tg_nn_relu()));
    CHECK_FAILS(tg_nn_sequential_append(seq2, tg_nn_relu()), TG_ERR_ARG,
                "duplicate name '1'");
    CHECK_FAILS(tg_nn_sequential_append(NULL, tg_nn_relu()), TG_ERR_ARG,
                "module is NULL");
    tg_module_free(seq2);

    tg_module *m = tg_module_new("Custom", NULL, NULL, NULL);
    tg_tensor *w = tg_zeros(TG_FLOAT32, 1, (int64_t[]){2});
    CHECK_OK(tg_module_add_parameter(m, "w", w));
    CHECK_FAILS(tg_module_add_buffer(m, "w", w), TG_ERR_ARG, "duplicate name 'w'");
    CHECK_FAILS(tg_module_add(m, "w", tg_nn_relu()), TG_ERR_ARG, "duplicate name 'w'");
    CHECK_FAILS(tg_module_add_parameter(m, "i", tg_zeros(TG_INT32, 0, NULL)),
                TG_ERR_DTYPE, "must be floating point, got int32");
    CHECK_FAILS(tg_module_add_parameter(m, "v", tg_mul_scalar(w, 2)),
                TG_ERR_AUTOGRAD, "must be a leaf");
    CHECK_FAILS(tg_module_add_parameter(m, "n", NULL), TG_ERR_ARG, "is NULL");
    CHECK_ERROR(tg_module_tensor(m, "nope"), TG_ERR_INDEX, "no parameter or buffer 'nope'");
    CHECK_ERROR(tg_module_child(seq, "block.x"), TG_ERR_INDEX, "no submodule 'block.x'");
    CHECK_FAILS(tg_module_to_dtype(m, TG_INT32), TG_ERR_DTYPE, "expected float32");
    tg_module_free(m);
    tg_module_free(seq);
    tg_generator_free(g);
}

int main(void)
{
    RUN(test_lenet_structure);
    RUN(test_describe);
    RUN(test_init_bounds);
    RUN(test_init_reproducible);
    RUN(test_batch_norm_state);
    RUN(test_state_order);
    RUN(test_tied_parameters);
    RUN(test_train_eval);
    RUN(test_dropout_modes);
    RUN(test_batch_norm_modes);
    RUN(test_lenet_forward);
    RUN(test_sequential_matches_raw_ops);
    RUN(test_module_gradcheck);
    RUN(test_gradients_reach_parameters);
    RUN(test_training_steps);
    RUN(test_trace_to_graph);
    RUN(test_activation_modules);
    RUN(test_pool_modules);
    RUN(test_custom_module);
    RUN(test_ownership);
    RUN(test_load_state);
    RUN(test_checkpoint_roundtrip);
    RUN(test_forward_errors);
    RUN(test_construction_errors);
    RUN(test_name_errors);
    return tt_finish();
}
