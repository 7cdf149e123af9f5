/* Modules without parameters: activations, Identity, Flatten and the
 * pooling layers. Each forwards to one op. */
#include "nn/module.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- activations ------------------------------------------------------------ */

static tg_tensor *relu_forward(tg_module *m, tg_tensor *x)
{
    (void)m;
    return tg_relu(x);
}

static tg_tensor *tanh_forward(tg_module *m, tg_tensor *x)
{
    (void)m;
    return tg_tanh(x);
}

static tg_tensor *sigmoid_forward(tg_module *m, tg_tensor *x)
{
    (void)m;
    return tg_sigmoid(x);
}

static tg_tensor *gelu_forward(tg_module *m, tg_tensor *x)
{
    (void)m;
    return tg_gelu(x);
}

static tg_tensor *identity_forward(tg_module *m, tg_tensor *x)
{
    (void)m;
    return tg_retain(x);
}

static void gelu_describe(const tg_module *m, char *buf, size_t len)
{
    (void)m;
    snprintf(buf, len, "approximate='none'");
}

static const tg_module_type relu_type = {"ReLU", relu_forward, NULL};
static const tg_module_type tanh_type = {"Tanh", tanh_forward, NULL};
static const tg_module_type sigmoid_type = {"Sigmoid", sigmoid_forward, NULL};
static const tg_module_type gelu_type = {"GELU", gelu_forward, gelu_describe};
static const tg_module_type identity_type = {"Identity", identity_forward, NULL};

tg_module *tg_nn_relu(void) { return tg__module_make(&relu_type, NULL); }
tg_module *tg_nn_tanh(void) { return tg__module_make(&tanh_type, NULL); }
tg_module *tg_nn_sigmoid(void) { return tg__module_make(&sigmoid_type, NULL); }
tg_module *tg_nn_gelu(void) { return tg__module_make(&gelu_type, NULL); }
tg_module *tg_nn_identity(void) { return tg__module_make(&identity_type, NULL); }

/* modules whose settings are one or two numbers */
typedef struct numbers_cfg {
    double a;
    int i, j;
} numbers_cfg;

static tg_module *make_numbers(const tg_module_type *type, numbers_cfg v)
{
    numbers_cfg *c = malloc(sizeof *c);
    if (!c)
        return tg__error_null(TG_ERR_NOMEM, "%s: out of memory", type->kind);
    *c = v;
    return tg__module_make(type, c);
}

static tg_tensor *leaky_forward(tg_module *m, tg_tensor *x)
{
    return tg_leaky_relu(x, ((const numbers_cfg *)m->cfg)->a);
}

static void leaky_describe(const tg_module *m, char *buf, size_t len)
{
    snprintf(buf, len, "negative_slope=%g", ((const numbers_cfg *)m->cfg)->a);
}

static const tg_module_type leaky_type = {"LeakyReLU", leaky_forward,
                                          leaky_describe};

tg_module *tg_nn_leaky_relu(double negative_slope)
{
    return make_numbers(&leaky_type, (numbers_cfg){negative_slope, 0, 0});
}

/* ---- Flatten ---------------------------------------------------------------------- */

static tg_tensor *flatten_forward(tg_module *m, tg_tensor *x)
{
    const numbers_cfg *c = m->cfg;
    return tg_flatten(x, c->i, c->j);
}

static void flatten_describe(const tg_module *m, char *buf, size_t len)
{
    const numbers_cfg *c = m->cfg;
    snprintf(buf, len, "start_dim=%d, end_dim=%d", c->i, c->j);
}

static const tg_module_type flatten_type = {"Flatten", flatten_forward,
                                            flatten_describe};

tg_module *tg_nn_flatten(int start_axis, int end_axis)
{
    return make_numbers(&flatten_type, (numbers_cfg){0, start_axis, end_axis});
}

/* ---- pooling ------------------------------------------------------------------------ */

static tg_tensor *max_pool_forward(tg_module *m, tg_tensor *x)
{
    return tg_max_pool2d(x, m->cfg);
}

static tg_tensor *avg_pool_forward(tg_module *m, tg_tensor *x)
{
    return tg_avg_pool2d(x, m->cfg);
}

/* "2" when both entries agree, "(2, 3)" otherwise */
static void pair(char *buf, size_t len, const int *v)
{
    if (v[0] == v[1])
        snprintf(buf, len, "%d", v[0]);
    else
        snprintf(buf, len, "(%d, %d)", v[0], v[1]);
}

static void pool_describe(const tg_module *m, char *buf, size_t len)
{
    const tg_pool2d_opts *o = m->cfg;
    char k[32], s[32], p[32];
    pair(k, sizeof k, o->kernel);
    pair(s, sizeof s, o->stride);
    pair(p, sizeof p, o->padding);
    int n = snprintf(buf, len, "kernel_size=%s, stride=%s, padding=%s, "
                     "ceil_mode=%s", k, s, p, o->ceil_mode ? "True" : "False");
    if (m->type->forward == avg_pool_forward && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", count_include_pad=%s",
                 o->count_include_pad ? "True" : "False");
}

static const tg_module_type max_pool_type = {"MaxPool2d", max_pool_forward,
                                             pool_describe};
static const tg_module_type avg_pool_type = {"AvgPool2d", avg_pool_forward,
                                             pool_describe};

static tg_module *make_pool(const tg_module_type *type,
                            const tg_pool2d_opts *opts)
{
    if (!opts)
        return tg__error_null(TG_ERR_ARG, "%s: options are NULL (the kernel "
                              "size is required)", type->kind);
    if (opts->kernel[0] < 1 || opts->kernel[1] < 1 || opts->stride[0] < 0 ||
        opts->stride[1] < 0 || opts->padding[0] < 0 || opts->padding[1] < 0)
        return tg__error_null(TG_ERR_ARG, "%s: expected kernel >= 1, stride "
                              ">= 0 and padding >= 0, got kernel (%d, %d), "
                              "stride (%d, %d), padding (%d, %d)", type->kind,
                              opts->kernel[0], opts->kernel[1], opts->stride[0],
                              opts->stride[1], opts->padding[0], opts->padding[1]);
    tg_pool2d_opts *c = malloc(sizeof *c);
    if (!c)
        return tg__error_null(TG_ERR_NOMEM, "%s: out of memory", type->kind);
    *c = *opts;
    for (int i = 0; i < 2; i++) /* stride 0 means the kernel size */
        if (!c->stride[i])
            c->stride[i] = c->kernel[i];
    return tg__module_make(type, c);
}

tg_module *tg_nn_max_pool2d(const tg_pool2d_opts *opts)
{
    return make_pool(&max_pool_type, opts);
}

tg_module *tg_nn_avg_pool2d(const tg_pool2d_opts *opts)
{
    return make_pool(&avg_pool_type, opts);
}
