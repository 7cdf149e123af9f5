/* Modules with parameters or state: Linear, Conv2d, BatchNorm2d, and
 * Dropout (which draws from a generator). Initialisation follows
 * PyTorch's reset_parameters. */
#include "graph/graph_impl.h"
#include "nn/module.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* kaiming_uniform_(w, a=sqrt(5)) as PyTorch computes it: leaky_relu gain
 * sqrt(2 / (1 + a^2)), bound gain * sqrt(3 / fan_in) */
static double kaiming_bound(int64_t fan_in)
{
    double a = sqrt(5.0);
    double gain = sqrt(2.0 / (1.0 + a * a));
    return gain * sqrt(3.0 / (double)fan_in);
}

/* weight from kaiming_uniform, then (if wanted) bias from
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
static tg_module *init_weight_bias(tg_module *m, int ndim, const int64_t *shape,
                                   int64_t fan_in, bool bias, tg_generator *g)
{
    tg_status s = tg__module_add_uniform(m, "weight", ndim, shape,
                                         kaiming_bound(fan_in), g);
    if (s == TG_OK && bias)
        s = tg__module_add_uniform(m, "bias", 1, shape, 1.0 / sqrt((double)fan_in),
                                   g);
    if (s != TG_OK) {
        tg_module_free(m);
        return NULL;
    }
    return m;
}

/* ---- Linear ----------------------------------------------------------------- */

typedef struct linear_cfg {
    int64_t in, out;
} linear_cfg;

static tg_tensor *linear_forward(tg_module *m, tg_tensor *x)
{
    return tg_linear(x, tg__module_own(m, "weight"), tg__module_own(m, "bias"));
}

static void linear_describe(const tg_module *m, char *buf, size_t len)
{
    const linear_cfg *c = m->cfg;
    snprintf(buf, len, "in_features=%lld, out_features=%lld, bias=%s",
             (long long)c->in, (long long)c->out,
             tg__module_own(m, "bias") ? "True" : "False");
}

static const tg_module_type linear_type = {"Linear", linear_forward,
                                           linear_describe};

tg_module *tg_nn_linear(int64_t in_features, int64_t out_features, bool bias,
                        tg_generator *g)
{
    if (in_features < 1 || out_features < 1)
        return tg__error_null(TG_ERR_ARG, "Linear: in_features and out_features "
                              "must be positive, got %lld and %lld",
                              (long long)in_features, (long long)out_features);
    if (!g)
        return tg__error_null(TG_ERR_ARG, "Linear: generator is NULL");
    linear_cfg *c = malloc(sizeof *c);
    if (!c)
        return tg__error_null(TG_ERR_NOMEM, "Linear: out of memory");
    *c = (linear_cfg){in_features, out_features};
    tg_module *m = tg__module_make(&linear_type, c);
    if (!m)
        return NULL;
    int64_t shape[2] = {out_features, in_features};
    return init_weight_bias(m, 2, shape, in_features, bias, g);
}

/* ---- Conv2d ------------------------------------------------------------------- */

typedef struct conv_cfg {
    int64_t in, out;
    int kh, kw;
    tg_conv2d_opts opts;
} conv_cfg;

static tg_tensor *conv_forward(tg_module *m, tg_tensor *x)
{
    const conv_cfg *c = m->cfg;
    return tg_conv2d(x, tg__module_own(m, "weight"), tg__module_own(m, "bias"),
                     &c->opts);
}

static void conv_describe(const tg_module *m, char *buf, size_t len)
{
    const conv_cfg *c = m->cfg;
    const tg_conv2d_opts *o = &c->opts;
    int n = snprintf(buf, len, "%lld, %lld, kernel_size=(%d, %d), stride=(%d, %d)",
                     (long long)c->in, (long long)c->out, c->kh, c->kw,
                     o->stride[0], o->stride[1]);
    /* like PyTorch, only the settings that differ from the defaults */
    if (n >= 0 && (size_t)n < len && (o->padding[0] || o->padding[1]))
        n += snprintf(buf + n, len - (size_t)n, ", padding=(%d, %d)",
                      o->padding[0], o->padding[1]);
    if (n >= 0 && (size_t)n < len && (o->dilation[0] != 1 || o->dilation[1] != 1))
        n += snprintf(buf + n, len - (size_t)n, ", dilation=(%d, %d)",
                      o->dilation[0], o->dilation[1]);
    if (n >= 0 && (size_t)n < len && o->groups != 1)
        n += snprintf(buf + n, len - (size_t)n, ", groups=%d", o->groups);
    if (n >= 0 && (size_t)n < len && !tg__module_own(m, "bias"))
        snprintf(buf + n, len - (size_t)n, ", bias=False");
}

static const tg_module_type conv_type = {"Conv2d", conv_forward, conv_describe};

/* fills zero fields with the defaults and checks the rest */
static bool conv_settings(int64_t in, int64_t out, int kh, int kw,
                          const tg_conv2d_opts *opts, tg_conv2d_opts *o)
{
    *o = opts ? *opts : (tg_conv2d_opts){{0, 0}, {0, 0}, {0, 0}, 0};
    for (int i = 0; i < 2; i++) {
        if (!o->stride[i])
            o->stride[i] = 1;
        if (!o->dilation[i])
            o->dilation[i] = 1;
    }
    if (!o->groups)
        o->groups = 1;
    if (in < 1 || out < 1 || kh < 1 || kw < 1) {
        tg__error(TG_ERR_ARG, "Conv2d: channels and kernel size must be "
                  "positive, got in_channels %lld, out_channels %lld, kernel "
                  "(%d, %d)", (long long)in, (long long)out, kh, kw);
        return false;
    }
    if (o->stride[0] < 0 || o->stride[1] < 0 || o->dilation[0] < 0 ||
        o->dilation[1] < 0 || o->padding[0] < 0 || o->padding[1] < 0 ||
        o->groups < 0) {
        tg__error(TG_ERR_ARG, "Conv2d: stride (%d, %d), padding (%d, %d), "
                  "dilation (%d, %d) and groups %d must not be negative",
                  o->stride[0], o->stride[1], o->padding[0], o->padding[1],
                  o->dilation[0], o->dilation[1], o->groups);
        return false;
    }
    if (in % o->groups || out % o->groups) {
        tg__error(TG_ERR_ARG, "Conv2d: in_channels (%lld) and out_channels "
                  "(%lld) must be divisible by groups (%d)", (long long)in,
                  (long long)out, o->groups);
        return false;
    }
    return true;
}

tg_module *tg_nn_conv2d(int64_t in_channels, int64_t out_channels, int kh,
                        int kw, const tg_conv2d_opts *opts, bool bias,
                        tg_generator *g)
{
    tg_conv2d_opts o;
    if (!conv_settings(in_channels, out_channels, kh, kw, opts, &o))
        return NULL;
    if (!g)
        return tg__error_null(TG_ERR_ARG, "Conv2d: generator is NULL");
    conv_cfg *c = malloc(sizeof *c);
    if (!c)
        return tg__error_null(TG_ERR_NOMEM, "Conv2d: out of memory");
    *c = (conv_cfg){in_channels, out_channels, kh, kw, o};
    tg_module *m = tg__module_make(&conv_type, c);
    if (!m)
        return NULL;
    int64_t shape[4] = {out_channels, in_channels / o.groups, kh, kw};
    return init_weight_bias(m, 4, shape, shape[1] * kh * kw, bias, g);
}

/* ---- BatchNorm2d ---------------------------------------------------------------- */

typedef struct bn_cfg {
    int64_t c;
    double eps, momentum;
    bool affine, track;
} bn_cfg;

static tg_tensor *bn_forward(tg_module *m, tg_tensor *x)
{
    const bn_cfg *c = m->cfg;
    if (x->ndim != 4 || x->shape[1] != c->c) {
        char s[160];
        return tg__error_null(TG_ERR_SHAPE, "BatchNorm2d: expected input [N, "
                              "%lld, H, W] (4-D with num_features channels), "
                              "got %dD input %s", (long long)c->c, x->ndim,
                              tg_shape_str(x->ndim, x->shape, s, sizeof s));
    }
    tg_tensor *count = c->track ? tg__module_own(m, "num_batches_tracked") : NULL;
    double momentum = c->momentum;
    bool update = m->training && count;
    tg_graph *g = x->graph ? x->graph : tg_graph_current();
    if (update && momentum < 0 && g) /* the factor would be frozen at build time */
        return tg__error_null(TG_ERR_UNSUPPORTED, "BatchNorm2d: the cumulative moving "
                              "average (momentum None) is not supported in graph mode; "
                              "give a momentum");
    if (update && momentum < 0) /* cumulative average over the batches seen */
        momentum = 1.0 / (double)(*(int64_t *)tg__base(count) + 1);
    /* without running statistics, batch statistics serve in eval too */
    tg_tensor *y = tg_batch_norm(x, tg__module_own(m, "running_mean"),
                                 tg__module_own(m, "running_var"),
                                 tg__module_own(m, "weight"),
                                 tg__module_own(m, "bias"),
                                 m->training || !c->track, momentum, c->eps);
    if (y && update && g) { /* the count as state of the graph: an assign per run */
        tg_tensor *a = NULL, *z = NULL;
        tg_scope_begin();
        if (tg__graph_state_variable(g, count, "num_batches_tracked", "BatchNorm2d") == TG_OK &&
            (a = tg_assign(count, tg_add_scalar(count, 1))))
            z = tg_keep(tg__graph_after_updates(y, 1, &a));
        tg_scope_end();
        tg_release(y); /* ours: modules run with the caller's scopes hidden */
        return z;
    }
    if (y && update) {
        (*(int64_t *)tg__base(count))++;
        tg__bump_version(count);
    }
    return y;
}

static void bn_describe(const tg_module *m, char *buf, size_t len)
{
    const bn_cfg *c = m->cfg;
    char mom[32];
    if (c->momentum < 0)
        snprintf(mom, sizeof mom, "None");
    else
        snprintf(mom, sizeof mom, "%g", c->momentum);
    snprintf(buf, len, "%lld, eps=%g, momentum=%s, affine=%s, "
             "track_running_stats=%s", (long long)c->c, c->eps, mom,
             c->affine ? "True" : "False", c->track ? "True" : "False");
}

static const tg_module_type bn_type = {"BatchNorm2d", bn_forward, bn_describe};

/* adds a new tensor filled with value as a parameter or buffer */
static tg_status add_filled(tg_module *m, const char *name, bool param,
                            tg_dtype dt, int ndim, const int64_t *shape,
                            double value)
{
    tg_tensor *t = tg__module_full(dt, ndim, shape, value);
    if (!t)
        return tg_last_status();
    tg_status s = param ? tg_module_add_parameter(m, name, t)
                        : tg_module_add_buffer(m, name, t);
    tg_release(t);
    return s;
}

tg_module *tg_nn_batch_norm2d(int64_t num_features, double eps,
                              double momentum, bool affine,
                              bool track_running_stats)
{
    if (num_features < 1)
        return tg__error_null(TG_ERR_ARG, "BatchNorm2d: num_features must be "
                              "positive, got %lld", (long long)num_features);
    if (!(eps >= 0) || !(momentum <= 1) ||
        (momentum < 0 && momentum != TG_NN_MOMENTUM_CUMULATIVE))
        return tg__error_null(TG_ERR_ARG, "BatchNorm2d: expected eps >= 0 and "
                              "momentum in [0, 1] (or TG_NN_MOMENTUM_CUMULATIVE), "
                              "got eps %g, momentum %g", eps, momentum);
    bn_cfg *c = malloc(sizeof *c);
    if (!c)
        return tg__error_null(TG_ERR_NOMEM, "BatchNorm2d: out of memory");
    *c = (bn_cfg){num_features, eps, momentum, affine, track_running_stats};
    tg_module *m = tg__module_make(&bn_type, c);
    if (!m)
        return NULL;
    const int64_t shape[1] = {num_features};
    tg_status s = TG_OK;
    if (affine) {
        s = add_filled(m, "weight", true, TG_FLOAT32, 1, shape, 1.0);
        if (s == TG_OK)
            s = add_filled(m, "bias", true, TG_FLOAT32, 1, shape, 0.0);
    }
    if (s == TG_OK && track_running_stats) {
        s = add_filled(m, "running_mean", false, TG_FLOAT32, 1, shape, 0.0);
        if (s == TG_OK)
            s = add_filled(m, "running_var", false, TG_FLOAT32, 1, shape, 1.0);
        if (s == TG_OK)
            s = add_filled(m, "num_batches_tracked", false, TG_INT64, 0, NULL, 0);
    }
    if (s != TG_OK) {
        tg_module_free(m);
        return NULL;
    }
    return m;
}

/* ---- Dropout ---------------------------------------------------------------------- */

typedef struct dropout_cfg {
    double p;
    tg_generator *g; /* borrowed */
} dropout_cfg;

static tg_tensor *dropout_forward(tg_module *m, tg_tensor *x)
{
    const dropout_cfg *c = m->cfg;
    if (!m->training || c->p == 0) /* the identity, as in PyTorch */
        return tg_retain(x);
    return tg_dropout(x, c->p, true, c->g);
}

static void dropout_describe(const tg_module *m, char *buf, size_t len)
{
    snprintf(buf, len, "p=%g", ((const dropout_cfg *)m->cfg)->p);
}

static const tg_module_type dropout_type = {"Dropout", dropout_forward,
                                            dropout_describe};

tg_module *tg_nn_dropout(double p, tg_generator *g)
{
    if (!(p >= 0 && p <= 1))
        return tg__error_null(TG_ERR_ARG, "Dropout: probability has to be "
                              "between 0 and 1, got %g", p);
    if (!g && p > 0)
        return tg__error_null(TG_ERR_ARG, "Dropout: generator is NULL");
    dropout_cfg *c = malloc(sizeof *c);
    if (!c)
        return tg__error_null(TG_ERR_NOMEM, "Dropout: out of memory");
    *c = (dropout_cfg){p, g};
    return tg__module_make(&dropout_type, c);
}
