/* The optimizer ops of ONNX's ai.onnx.preview.training domain (version 1):
 * Adagrad, Adam and Momentum, composed of elementwise tensor ops. Each
 * node updates any number of tensors at once: inputs R (learning rate,
 * one float), T (update count, one int64), then the groups (X_1..X_k,
 * G_1..G_k, and per optimizer state V_1..V_k / H_1..H_k); outputs the new
 * X_1..X_k, then the new states in the same order. T is a value, not a
 * constant: its tests (T > 0, alpha^T) are tensor ops, so the update
 * runs in graphs too. Only nodes of this domain, in a model that imports
 * it, are looked up here (load.c). */
#include "onnx/ops.h"

#include <string.h>

typedef struct opt_io {
    tg_tensor *r, *t; /* 0-d: R in X's dtype, T as int64 */
    int k;            /* tensors updated */
    tg_dtype dt;      /* X_1's */
} opt_io;

/* R and T (one element each), and the groups: n_state tensors per X
 * after X and G, all of X_i's shape and one float dtype */
static tg_status read_io(onnx_ictx *c, int n_state, opt_io *io)
{
    int per = 2 + n_state;
    if ((c->n_in - 2) % per || c->n_in < 2 + per || c->n_out != (c->n_in - 2) / per * (1 + n_state))
        return onnx_err(c, TG_ERR_IO, "%d inputs and %d outputs: expected R, T and %d "
                        "inputs per updated tensor, %d outputs per updated tensor", c->n_in,
                        c->n_out, per, 1 + n_state);
    io->k = (c->n_in - 2) / per;
    tg_tensor *r = oi_req(c, 0, "R"), *t = r ? oi_req(c, 1, "T") : NULL;
    if (!t)
        return tg_last_status();
    for (int i = 2; i < c->n_in; i++)
        if (!oi_req(c, i, "a tensor, gradient or state"))
            return tg_last_status();
    io->dt = tg_dtype_of(c->in[2]);
    if (!tg_dtype_is_float(tg_dtype_of(r)) || tg_numel(r) != 1)
        return onnx_err(c, TG_ERR_IO, "R should be one floating-point value, is %s of %lld "
                        "elements", tg_dtype_name(tg_dtype_of(r)), (long long)tg_numel(r));
    if (tg_dtype_of(t) != TG_INT64 || tg_numel(t) != 1)
        return onnx_err(c, TG_ERR_IO, "T should be one int64 value, is %s of %lld elements",
                        tg_dtype_name(tg_dtype_of(t)), (long long)tg_numel(t));
    if (!tg_dtype_is_float(io->dt))
        return onnx_err(c, TG_ERR_IO, "X should be floating-point, is %s",
                        tg_dtype_name(io->dt));
    for (int g = 0; g < io->k; g++) {
        tg_tensor *x = c->in[2 + g];
        for (int j = 1; j < per; j++) {
            tg_tensor *o = c->in[2 + j * io->k + g];
            if (tg_dtype_of(o) != io->dt || tg_ndim(o) != tg_ndim(x) ||
                memcmp(tg_shape(o), tg_shape(x), (size_t)tg_ndim(x) * sizeof(int64_t)))
                return onnx_err(c, TG_ERR_IO, "input %d ('%s') should have the dtype and "
                                "shape of input %d ('%s')", 2 + j * io->k + g,
                                c->node->input[2 + j * io->k + g], 2 + g,
                                c->node->input[2 + g]);
        }
    }
    io->r = onnx_as(tg_reshape(r, 0, NULL), io->dt);
    io->t = tg_reshape(t, 0, NULL);
    return io->r && io->t ? TG_OK : tg_last_status();
}

/* input `which` (0: X, 1: G, 2...: the states) of group g */
static tg_tensor *group_in(const onnx_ictx *c, const opt_io *io, int which, int g)
{
    return c->in[2 + which * io->k + g];
}

static tg_tensor *scalar_like(const opt_io *io, double v) { return tg_scalar(io->dt, v); }

/* T > 0 ? a : b, elementwise on 0-d values */
static tg_tensor *if_started(const opt_io *io, tg_tensor *a, tg_tensor *b)
{
    return tg_where(tg_gt(io->t, tg_scalar(TG_INT64, 0)), a, b);
}

/* norm_coefficient * X + G */
static tg_tensor *regularized(const onnx_ictx *c, const opt_io *io, int g, double norm)
{
    return tg_add(tg_mul_scalar(group_in(c, io, 0, g), norm), group_in(c, io, 1, g));
}

/* ---- Adagrad(decay_factor, epsilon, norm_coefficient): X, G, H ----------------------
 * r = R / (1 + T * decay_factor); G' = norm * X + G; H' = H + G'^2;
 * X' = X - r * G' / (sqrt(H') + epsilon) */
static tg_status m_adagrad(onnx_ictx *c)
{
    double decay, eps, norm;
    opt_io io;
    tg_status s = oa_float(c, "decay_factor", 0, &decay);
    if (s == TG_OK)
        s = oa_float(c, "epsilon", 1e-6f, &eps); /* the schema's float 1e-6 */
    if (s == TG_OK)
        s = oa_float(c, "norm_coefficient", 0, &norm);
    if (s == TG_OK)
        s = read_io(c, 1, &io);
    if (s != TG_OK)
        return s;
    tg_tensor *tf = tg_cast(io.t, io.dt);
    tg_tensor *r = tg_div(io.r, tg_add_scalar(tg_mul_scalar(tf, decay), 1));
    for (int g = 0; g < io.k; g++) {
        tg_tensor *gr = regularized(c, &io, g, norm);
        tg_tensor *h = tg_add(group_in(c, &io, 2, g), tg_mul(gr, gr));
        tg_tensor *step = tg_div(tg_mul(r, gr), tg_add_scalar(tg_sqrt(h), eps));
        c->out[g] = tg_sub(group_in(c, &io, 0, g), step);
        c->out[io.k + g] = h;
        if (!c->out[g] || !h)
            return tg_last_status();
    }
    return TG_OK;
}

/* ---- Momentum(alpha, beta, mode, norm_coefficient): X, G, V -----------------------
 * G' = norm * X + G; V' = alpha * V + (T > 0 ? beta : 1) * G';
 * standard: X' = X - R * V'; nesterov: X' = X - R * (G' + alpha * V') */
static tg_status momentum_attrs(onnx_ictx *c, double *alpha, double *beta, double *norm,
                                bool *nesterov)
{
    static const char *const req[4] = {"alpha", "beta", "mode", "norm_coefficient"};
    for (int i = 0; i < 4; i++)
        if (!onnx_attr(c, req[i]))
            return onnx_err(c, TG_ERR_IO, "attribute '%s' is required", req[i]);
    const char *mode;
    tg_status s = oa_float(c, "alpha", 0, alpha);
    if (s == TG_OK)
        s = oa_float(c, "beta", 0, beta);
    if (s == TG_OK)
        s = oa_float(c, "norm_coefficient", 0, norm);
    if (s == TG_OK)
        s = oa_string(c, "mode", "", &mode);
    if (s != TG_OK)
        return s;
    if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
        return onnx_err(c, TG_ERR_IO, "mode should be standard or nesterov, got '%s'", mode);
    *nesterov = !strcmp(mode, "nesterov");
    return TG_OK;
}

static tg_status m_momentum(onnx_ictx *c)
{
    double alpha, beta, norm;
    bool nesterov = false;
    opt_io io;
    tg_status s = momentum_attrs(c, &alpha, &beta, &norm, &nesterov);
    if (s == TG_OK)
        s = read_io(c, 1, &io);
    if (s != TG_OK)
        return s;
    tg_tensor *beta_t = if_started(&io, scalar_like(&io, beta), scalar_like(&io, 1));
    for (int g = 0; g < io.k; g++) {
        tg_tensor *gr = regularized(c, &io, g, norm);
        tg_tensor *v = tg_add(tg_mul_scalar(group_in(c, &io, 2, g), alpha), tg_mul(beta_t, gr));
        tg_tensor *dir = nesterov ? tg_add(gr, tg_mul_scalar(v, alpha)) : v;
        c->out[g] = tg_sub(group_in(c, &io, 0, g), tg_mul(io.r, dir));
        c->out[io.k + g] = v;
        if (!c->out[g] || !v)
            return tg_last_status();
    }
    return TG_OK;
}

/* ---- Adam(alpha, beta, epsilon, norm_coefficient, norm_coefficient_post): X, G, V, H --
 * G' = norm * X + G; V' = alpha * V + (1 - alpha) * G';
 * H' = beta * H + (1 - beta) * G'^2;
 * R' = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
 * X' = (1 - norm_post) * (X - R' * V' / (sqrt(H') + epsilon)) */
static tg_tensor *adam_rate(const opt_io *io, double alpha, double beta)
{
    tg_tensor *tf = tg_cast(io->t, TG_FLOAT64);
    tg_tensor *one = tg_scalar(TG_FLOAT64, 1);
    tg_tensor *num = tg_sqrt(tg_sub(one, tg_pow(tg_scalar(TG_FLOAT64, beta), tf)));
    /* at T = 0 the unused branch would divide by 1 - alpha^0 = 0 */
    tg_tensor *den = if_started(io, tg_sub(one, tg_pow(tg_scalar(TG_FLOAT64, alpha), tf)), one);
    tg_tensor *corrected = tg_mul(io->r, onnx_as(tg_div(num, den), io->dt));
    return if_started(io, corrected, io->r);
}

static tg_status m_adam(onnx_ictx *c)
{
    double alpha, beta, eps, norm, post;
    opt_io io;
    tg_status s = oa_float(c, "alpha", 0.9, &alpha);
    if (s == TG_OK)
        s = oa_float(c, "beta", 0.999, &beta);
    if (s == TG_OK)
        s = oa_float(c, "epsilon", 1e-6f, &eps); /* the schema's float 1e-6 */
    if (s == TG_OK)
        s = oa_float(c, "norm_coefficient", 0, &norm);
    if (s == TG_OK)
        s = oa_float(c, "norm_coefficient_post", 0, &post);
    if (s == TG_OK)
        s = read_io(c, 2, &io);
    if (s != TG_OK)
        return s;
    tg_tensor *rate = adam_rate(&io, alpha, beta);
    for (int g = 0; g < io.k; g++) {
        tg_tensor *gr = regularized(c, &io, g, norm);
        tg_tensor *v = tg_add(tg_mul_scalar(group_in(c, &io, 2, g), alpha),
                              tg_mul_scalar(gr, 1 - alpha));
        tg_tensor *h = tg_add(tg_mul_scalar(group_in(c, &io, 3, g), beta),
                              tg_mul_scalar(tg_mul(gr, gr), 1 - beta));
        tg_tensor *step = tg_mul(rate, tg_div(v, tg_add_scalar(tg_sqrt(h), eps)));
        c->out[g] = tg_mul_scalar(tg_sub(group_in(c, &io, 0, g), step), 1 - post);
        c->out[io.k + g] = v;
        c->out[2 * io.k + g] = h;
        if (!c->out[g] || !v || !h)
            return tg_last_status();
    }
    return TG_OK;
}

/* inputs: R, T and at least one group; at most ONNX_MAX_IO in all */
const onnx_op_entry onnx_ops_training[] = {
    {"Adagrad", {1}, 5, -1, 2, ONNX_MAX_IO, m_adagrad, 0},
    {"Adam", {1}, 6, -1, 3, ONNX_MAX_IO, m_adam, 0},
    {"Momentum", {1}, 5, -1, 2, ONNX_MAX_IO, m_momentum, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};

const onnx_op_entry *onnx_training_op_lookup(const char *op_type)
{
    for (const onnx_op_entry *e = onnx_ops_training; e->op_type; e++)
        if (!strcmp(e->op_type, op_type))
            return e;
    return NULL;
}
