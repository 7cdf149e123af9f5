/* Optimizers and lr schedules against PyTorch's algorithms written here
 * as double-precision reference loops (plus a few values worked out by
 * hand), in float32 and float64; checkpoint resume bit for bit. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the fixed problem: three parameters, 11 elements ------------------------ */

#define NP 3
#define NE 11
static const int p_ndim[NP] = {1, 2, 0};
static const int64_t p_shape[NP][2] = {{4, 0}, {2, 3}, {0, 0}};
static const int p_off[NP + 1] = {0, 4, 10, 11};
static const double p_init[NE] = {0.5, -1.25, 2.0, 0.0, 0.75, -0.3, 1.5, -2.5, 0.1, 3.0, -0.8};

/* gradient of element k at step s (from 1); parameter 2 has none at step 2 */
static double grad_val(int s, int k) { return sin(0.9 * s + 0.37 * k) * (1.0 + 0.25 * k); }
static bool has_grad(int s, int param) { return !(param == 2 && s == 2); }

static void make_params(tg_dtype dt, tg_tensor **ps)
{
    for (int i = 0; i < NP; i++) {
        ps[i] = tt_tensor(dt, p_ndim[i], p_shape[i], p_init + p_off[i]);
        tg_set_requires_grad(ps[i], true);
    }
}

/* sets p's grad to exactly g: backward of p * 1 with grad_output g */
static void set_grad(tg_tensor *p, const double *g)
{
    tg_zero_grad(p);
    tg_tensor *go = tt_tensor(tg_dtype_of(p), tg_ndim(p), tg_shape(p), g);
    CHECK_OK(tg_backward(tg_mul_scalar(p, 1.0), go, false));
}

static void set_step_grads(tg_tensor **ps, int s)
{
    double g[NE];
    for (int k = 0; k < NE; k++)
        g[k] = grad_val(s, k);
    for (int i = 0; i < NP; i++) {
        if (has_grad(s, i))
            set_grad(ps[i], g + p_off[i]);
        else
            tg_zero_grad(ps[i]);
    }
}

/* the reference: per-element state in double */
typedef struct ref {
    double p[NE], s[3][NE];
    int64_t step[NP];
    bool has_buf[NP];
} ref;

typedef void (*ref_fn)(const void *opts, ref *r, int param, const double *g);
typedef tg_optimizer *(*make_fn)(int, tg_tensor *const *, const void *);

static void check_against_ref(const char *what, tg_dtype dt, make_fn make,
                              const void *opts, ref_fn rf, int steps)
{
    tg_tensor *ps[NP];
    make_params(dt, ps);
    tg_optimizer *o = make(NP, ps, opts);
    CHECK(o != NULL);
    if (!o)
        return;
    ref r;
    memset(&r, 0, sizeof r);
    memcpy(r.p, p_init, sizeof r.p);
    double rel = dt == TG_FLOAT64 ? 1e-12 : 2e-5;
    for (int s = 1; s <= steps; s++) {
        set_step_grads(ps, s);
        CHECK_OK(tg_optim_step(o));
        double g[NE];
        for (int k = 0; k < NE; k++)
            g[k] = grad_val(s, k);
        for (int i = 0; i < NP; i++)
            if (has_grad(s, i))
                rf(opts, &r, i, g);
        for (int i = 0; i < NP; i++) {
            double vals[NE];
            CHECK_OK(tg_copy_to(ps[i], TG_FLOAT64, vals));
            for (int k = p_off[i]; k < p_off[i + 1]; k++) {
                double got = vals[k - p_off[i]];
                double want = r.p[k], tol = rel * (1.0 + fabs(want));
                if (!(fabs(got - want) <= tol))
                    tt_fail(__FILE__, __LINE__, "%s %s step %d: param %d elem %d = %.17g, "
                            "expected %.17g", what, tg_dtype_name(dt), s, i,
                            k - p_off[i], got, want);
                tt_checks++;
            }
            CHECK(tg_optim_param_steps(o, i) == r.step[i]);
        }
        tg_optim_zero_grad(o);
        for (int i = 0; i < NP; i++)
            CHECK(tg_grad(ps[i]) == NULL);
    }
    tg_optim_free(o);
}

static void check_both(const char *what, make_fn make, const void *opts, ref_fn rf)
{
    check_against_ref(what, TG_FLOAT64, make, opts, rf, 6);
    check_against_ref(what, TG_FLOAT32, make, opts, rf, 6);
}

/* ---- references: PyTorch's single-tensor algorithms in double ----------------- */

static void sgd_ref(const void *opts, ref *r, int i, const double *g)
{
    const tg_sgd_opts *h = opts;
    for (int k = p_off[i]; k < p_off[i + 1]; k++) {
        double gi = h->maximize ? -g[k] : g[k];
        if (h->weight_decay != 0)
            gi += h->weight_decay * r->p[k];
        if (h->momentum != 0) {
            double *buf = &r->s[0][k];
            *buf = r->has_buf[i] ? h->momentum * *buf + (1 - h->dampening) * gi : gi;
            gi = h->nesterov ? gi + h->momentum * *buf : *buf;
        }
        r->p[k] -= h->lr * gi;
    }
    r->has_buf[i] = h->momentum != 0;
    r->step[i]++;
}

static void adam_ref_impl(const tg_adam_opts *h, bool adamw, ref *r, int i, const double *g)
{
    int64_t t = ++r->step[i];
    double bc1 = 1 - pow(h->beta1, (double)t), bc2 = 1 - pow(h->beta2, (double)t);
    for (int k = p_off[i]; k < p_off[i + 1]; k++) {
        double gi = h->maximize ? -g[k] : g[k];
        if (adamw)
            r->p[k] *= 1 - h->lr * h->weight_decay;
        else if (h->weight_decay != 0)
            gi += h->weight_decay * r->p[k];
        double *m = &r->s[0][k], *v = &r->s[1][k], *vmax = &r->s[2][k];
        *m = h->beta1 * *m + (1 - h->beta1) * gi;
        *v = h->beta2 * *v + (1 - h->beta2) * gi * gi;
        double vh = *v;
        if (h->amsgrad) {
            *vmax = fmax(*vmax, *v);
            vh = *vmax;
        }
        r->p[k] -= h->lr / bc1 * *m / (sqrt(vh) / sqrt(bc2) + h->eps);
    }
}

static void adam_ref(const void *o, ref *r, int i, const double *g) { adam_ref_impl(o, false, r, i, g); }
static void adamw_ref(const void *o, ref *r, int i, const double *g) { adam_ref_impl(o, true, r, i, g); }

static void adadelta_ref(const void *opts, ref *r, int i, const double *g)
{
    const tg_adadelta_opts *h = opts;
    for (int k = p_off[i]; k < p_off[i + 1]; k++) {
        double gi = h->maximize ? -g[k] : g[k];
        if (h->weight_decay != 0)
            gi += h->weight_decay * r->p[k];
        double *sq = &r->s[0][k], *acc = &r->s[1][k];
        *sq = h->rho * *sq + (1 - h->rho) * gi * gi;
        double delta = sqrt(*acc + h->eps) / sqrt(*sq + h->eps) * gi;
        *acc = h->rho * *acc + (1 - h->rho) * delta * delta;
        r->p[k] -= h->lr * delta;
    }
    r->step[i]++;
}

static void rmsprop_ref(const void *opts, ref *r, int i, const double *g)
{
    const tg_rmsprop_opts *h = opts;
    for (int k = p_off[i]; k < p_off[i + 1]; k++) {
        double gi = h->maximize ? -g[k] : g[k];
        if (h->weight_decay != 0)
            gi += h->weight_decay * r->p[k];
        double *sq = &r->s[0][k], *buf = &r->s[1][k], *ga = &r->s[2][k];
        *sq = h->alpha * *sq + (1 - h->alpha) * gi * gi;
        double avg;
        if (h->centered) {
            *ga = h->alpha * *ga + (1 - h->alpha) * gi;
            avg = sqrt(*sq - *ga * *ga) + h->eps;
        } else {
            avg = sqrt(*sq) + h->eps;
        }
        if (h->momentum > 0) {
            *buf = h->momentum * *buf + gi / avg;
            r->p[k] -= h->lr * *buf;
        } else {
            r->p[k] -= h->lr * gi / avg;
        }
    }
    r->step[i]++;
}

static tg_optimizer *mk_sgd(int n, tg_tensor *const *p, const void *o) { return tg_optim_sgd(n, p, o); }
static tg_optimizer *mk_adam(int n, tg_tensor *const *p, const void *o) { return tg_optim_adam(n, p, o); }
static tg_optimizer *mk_adamw(int n, tg_tensor *const *p, const void *o) { return tg_optim_adamw(n, p, o); }
static tg_optimizer *mk_adadelta(int n, tg_tensor *const *p, const void *o) { return tg_optim_adadelta(n, p, o); }
static tg_optimizer *mk_rmsprop(int n, tg_tensor *const *p, const void *o) { return tg_optim_rmsprop(n, p, o); }

/* ---- values worked out by hand ------------------------------------------------ */

static void test_sgd_by_hand(void)
{
    /* p = 1, g = 0.5, lr 0.1, momentum 0.9, dampening 0.5:
     * step 1: buf = g = 0.5 (no dampening), p = 1 - 0.05 = 0.95
     * step 2: buf = 0.9 * 0.5 + 0.5 * 0.5 = 0.7, p = 0.95 - 0.07 = 0.88 */
    tg_tensor *p = tg_scalar(TG_FLOAT64, 1.0);
    tg_set_requires_grad(p, true);
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 0.1;
    o.momentum = 0.9;
    o.dampening = 0.5;
    tg_optimizer *opt = tg_optim_sgd(1, &p, &o);
    double g = 0.5;
    set_grad(p, &g);
    CHECK_OK(tg_optim_step(opt));
    CHECK_NEAR(tg_item(p), 0.95, 1e-15);
    set_grad(p, &g);
    CHECK_OK(tg_optim_step(opt));
    CHECK_NEAR(tg_item(p), 0.88, 1e-15);
    /* no gradient: nothing moves */
    tg_optim_zero_grad(opt);
    CHECK_OK(tg_optim_step(opt));
    CHECK_NEAR(tg_item(p), 0.88, 1e-15);
    CHECK(tg_optim_param_steps(opt, 0) == 2);
    tg_optim_free(opt);
}

static void test_adam_by_hand(void)
{
    /* the first Adam step moves by lr * g / (|g| + eps') whatever g is:
     * m = 0.1 g, v = 0.001 g^2, m/bc1 = g, sqrt(v/bc2) = |g| */
    double gs[2] = {0.3, -4.0};
    tg_tensor *p = tt_tensor(TG_FLOAT64, 1, (int64_t[]){2}, (double[]){1.0, 2.0});
    tg_set_requires_grad(p, true);
    tg_adam_opts o = tg_adam_defaults();
    o.lr = 0.01;
    tg_optimizer *opt = tg_optim_adam(1, &p, &o);
    set_grad(p, gs);
    CHECK_OK(tg_optim_step(opt));
    double want[2] = {1.0 - 0.01 * 0.3 / (0.3 + 1e-8), 2.0 + 0.01 * 4.0 / (4.0 + 1e-8)};
    CHECK_TENSOR(p, want, 1e-12);
    tg_optim_free(opt);
}

/* ---- each algorithm and option against the reference ------------------------- */

static void test_sgd(void)
{
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 0.1;
    check_both("sgd plain", mk_sgd, &o, sgd_ref);
    o.momentum = 0.9;
    check_both("sgd momentum", mk_sgd, &o, sgd_ref);
    o.dampening = 0.3;
    check_both("sgd dampening", mk_sgd, &o, sgd_ref);
    o.dampening = 0;
    o.nesterov = true;
    check_both("sgd nesterov", mk_sgd, &o, sgd_ref);
    o.weight_decay = 0.05;
    check_both("sgd nesterov+wd", mk_sgd, &o, sgd_ref);
    o.nesterov = false;
    o.momentum = 0;
    check_both("sgd wd", mk_sgd, &o, sgd_ref);
    o.maximize = true;
    o.momentum = 0.5;
    o.dampening = 0.1;
    check_both("sgd maximize", mk_sgd, &o, sgd_ref);
}

static void test_adam(void)
{
    tg_adam_opts o = tg_adam_defaults();
    o.lr = 0.05;
    check_both("adam", mk_adam, &o, adam_ref);
    o.weight_decay = 0.1;
    check_both("adam wd", mk_adam, &o, adam_ref);
    o.amsgrad = true;
    check_both("adam amsgrad", mk_adam, &o, adam_ref);
    o.beta1 = 0.3; /* 1 - beta1 >= 0.5: the other lerp form */
    o.beta2 = 0.8;
    o.maximize = true;
    check_both("adam beta1 0.3 maximize", mk_adam, &o, adam_ref);
}

static void test_adamw(void)
{
    tg_adam_opts o = tg_adamw_defaults();
    CHECK_NEAR(o.weight_decay, 1e-2, 0);
    o.lr = 0.05;
    check_both("adamw", mk_adamw, &o, adamw_ref);
    o.weight_decay = 0.2;
    o.amsgrad = true;
    check_both("adamw amsgrad", mk_adamw, &o, adamw_ref);
    o.weight_decay = 0;
    check_both("adamw no decay", mk_adamw, &o, adamw_ref);
}

static void test_adadelta(void)
{
    tg_adadelta_opts o = tg_adadelta_defaults();
    check_both("adadelta", mk_adadelta, &o, adadelta_ref);
    o.lr = 0.5;
    o.rho = 0.7;
    o.eps = 1e-4;
    o.weight_decay = 0.1;
    check_both("adadelta wd", mk_adadelta, &o, adadelta_ref);
    o.maximize = true;
    check_both("adadelta maximize", mk_adadelta, &o, adadelta_ref);
}

static void test_rmsprop(void)
{
    tg_rmsprop_opts o = tg_rmsprop_defaults();
    check_both("rmsprop", mk_rmsprop, &o, rmsprop_ref);
    o.centered = true;
    check_both("rmsprop centered", mk_rmsprop, &o, rmsprop_ref);
    o.momentum = 0.8;
    check_both("rmsprop centered+momentum", mk_rmsprop, &o, rmsprop_ref);
    o.centered = false;
    o.weight_decay = 0.05;
    check_both("rmsprop momentum+wd", mk_rmsprop, &o, rmsprop_ref);
    o.alpha = 0.3; /* 1 - alpha >= 0.5: the other lerp form */
    o.centered = true;
    o.maximize = true;
    check_both("rmsprop alpha 0.3 centered maximize", mk_rmsprop, &o, rmsprop_ref);
}

/* ---- layouts: non-contiguous parameters, parameters big enough for threads -- */

static void test_noncontiguous_param(void)
{
    /* a transposed view as the parameter: updates land in the base */
    double base_v[6] = {1, 2, 3, 4, 5, 6};
    tg_tensor *base = tt_tensor(TG_FLOAT32, 2, (int64_t[]){2, 3}, base_v);
    tg_tensor *p = tg_transpose(base, 0, 1); /* [3, 2] */
    CHECK(!tg_is_contiguous(p));
    CHECK_OK(tg_set_requires_grad(p, true));
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 0.5;
    o.momentum = 0.9;
    tg_optimizer *opt = tg_optim_sgd(1, &p, &o);
    double g[6] = {1, 2, 3, 4, 5, 6}; /* in p's [3, 2] order */
    uint64_t v0 = tg_version(p);
    set_grad(p, g);
    CHECK_OK(tg_optim_step(opt));
    CHECK(tg_version(p) > v0);
    double want_p[6] = {1 - 0.5, 4 - 1.0, 2 - 1.5, 5 - 2.0, 3 - 2.5, 6 - 3.0};
    CHECK_TENSOR(p, want_p, 1e-6);
    double want_base[6] = {0.5, 0.5, 0.5, 3.0, 3.0, 3.0};
    CHECK_TENSOR(base, want_base, 1e-6);
    tg_optim_free(opt);
}

static void test_large_param_threads(void)
{
    int64_t n = 70000; /* above the size where the thread pool takes over */
    tg_tensor *p = tg_arange(TG_FLOAT32, 0, (double)n, 1);
    tg_set_requires_grad(p, true);
    double *g = malloc((size_t)n * sizeof *g), *want = malloc((size_t)n * sizeof *want);
    for (int64_t i = 0; i < n; i++)
        g[i] = (double)(i % 7) - 3.0;
    tg_adam_opts o = tg_adam_defaults();
    o.lr = 0.5;
    tg_optimizer *opt = tg_optim_adam(1, &p, &o);
    set_grad(p, g);
    CHECK_OK(tg_optim_step(opt));
    for (int64_t i = 0; i < n; i++) /* first Adam step: -lr * sign(g) */
        want[i] = (double)i - (g[i] == 0 ? 0 : 0.5 * g[i] / (fabs(g[i]) + 1e-8));
    CHECK_TENSOR(p, want, 1e-3);
    tg_optim_free(opt);
    free(g);
    free(want);
}

/* ---- errors ---------------------------------------------------------------------- */

static void test_errors(void)
{
    tg_tensor *p = tg_zeros(TG_FLOAT32, 1, (int64_t[]){3});
    tg_set_requires_grad(p, true);
    tg_tensor *pi = tg_zeros(TG_INT32, 1, (int64_t[]){3});
    tg_tensor *two[2] = {p, p};
    tg_sgd_opts s = tg_sgd_defaults();
    s.lr = -1;
    CHECK_ERROR(tg_optim_sgd(1, &p, &s), TG_ERR_ARG, "learning rate");
    s = tg_sgd_defaults();
    s.momentum = -0.1;
    CHECK_ERROR(tg_optim_sgd(1, &p, &s), TG_ERR_ARG, "momentum");
    s = tg_sgd_defaults();
    s.nesterov = true;
    CHECK_ERROR(tg_optim_sgd(1, &p, &s), TG_ERR_ARG, "nesterov");
    s.momentum = 0.9;
    s.dampening = 0.1;
    CHECK_ERROR(tg_optim_sgd(1, &p, &s), TG_ERR_ARG, "dampening");
    s = tg_sgd_defaults();
    s.weight_decay = -1;
    CHECK_ERROR(tg_optim_sgd(1, &p, &s), TG_ERR_ARG, "weight_decay");
    CHECK_ERROR(tg_optim_sgd(2, two, NULL), TG_ERR_ARG, "twice");
    CHECK_ERROR(tg_optim_sgd(1, &pi, NULL), TG_ERR_DTYPE, "int32");
    CHECK_ERROR(tg_optim_sgd(1, NULL, NULL), TG_ERR_ARG, "parameter list");
    tg_tensor *nul = NULL;
    CHECK_ERROR(tg_optim_sgd(1, &nul, NULL), TG_ERR_ARG, "NULL");
    tg_tensor *nonleaf = tg_mul_scalar(p, 2.0);
    CHECK_ERROR(tg_optim_sgd(1, &nonleaf, NULL), TG_ERR_ARG, "leaf");

    tg_adam_opts a = tg_adam_defaults();
    a.beta1 = 1.0;
    CHECK_ERROR(tg_optim_adam(1, &p, &a), TG_ERR_ARG, "beta1");
    a = tg_adam_defaults();
    a.beta2 = -0.5;
    CHECK_ERROR(tg_optim_adamw(1, &p, &a), TG_ERR_ARG, "beta2");
    a = tg_adam_defaults();
    a.eps = -1;
    CHECK_ERROR(tg_optim_adam(1, &p, &a), TG_ERR_ARG, "eps");
    a = tg_adam_defaults();
    a.lr = 0.0 / 0.0;
    CHECK_ERROR(tg_optim_adam(1, &p, &a), TG_ERR_ARG, "learning rate");
    tg_adadelta_opts d = tg_adadelta_defaults();
    d.rho = 1.5;
    CHECK_ERROR(tg_optim_adadelta(1, &p, &d), TG_ERR_ARG, "rho");
    tg_rmsprop_opts r = tg_rmsprop_defaults();
    r.alpha = -1;
    CHECK_ERROR(tg_optim_rmsprop(1, &p, &r), TG_ERR_ARG, "alpha");
    r = tg_rmsprop_defaults();
    r.momentum = -1;
    CHECK_ERROR(tg_optim_rmsprop(1, &p, &r), TG_ERR_ARG, "momentum");

    tg_optimizer *o = tg_optim_sgd(1, &p, NULL);
    CHECK_FAILS(tg_optim_set_lr(o, NAN), TG_ERR_ARG, "learning rate");
    CHECK_FAILS(tg_optim_set_lr(o, INFINITY), TG_ERR_ARG, "learning rate");
    CHECK_OK(tg_optim_set_lr(o, -0.5)); /* a schedule below 0: ascent, as PyTorch's */
    CHECK_NEAR(tg_optim_get_lr(o), -0.5, 0);
    CHECK_OK(tg_optim_set_lr(o, 0.25));
    CHECK_NEAR(tg_optim_get_lr(o), 0.25, 0);
    CHECK(strcmp(tg_optim_name(o), "sgd") == 0);
    CHECK(tg_optim_num_params(o) == 1 && tg_optim_param(o, 0) == p);
    CHECK_ERROR(tg_optim_param(o, 1), TG_ERR_INDEX, "out of range");
    CHECK_FAILS(tg_optim_step(NULL), TG_ERR_ARG, "NULL");
    tg_optim_free(o);
    tg_optim_free(NULL);

    CHECK_ERROR(tg_sched_step_lr(NULL, 3, 0.1), TG_ERR_ARG, "optimizer");
    o = tg_optim_sgd(1, &p, NULL);
    CHECK_ERROR(tg_sched_step_lr(o, 0, 0.1), TG_ERR_ARG, "step_size");
    CHECK_ERROR(tg_sched_step_lr(o, 2, -0.1), TG_ERR_ARG, "gamma");
    CHECK_ERROR(tg_sched_cosine_annealing(o, 0, 0), TG_ERR_ARG, "T_max");
    CHECK_ERROR(tg_sched_cosine_annealing(o, 5, -1), TG_ERR_ARG, "eta_min");
    CHECK_FAILS(tg_sched_step(NULL), TG_ERR_ARG, "NULL");
    tg_optim_free(o);
}

/* ---- schedules -------------------------------------------------------------------- */

static void test_step_lr(void)
{
    tg_tensor *p = tg_zeros(TG_FLOAT32, 1, (int64_t[]){2});
    tg_sgd_opts o = tg_sgd_defaults();
    o.lr = 0.5;
    tg_optimizer *opt = tg_optim_sgd(1, &p, &o);
    tg_lr_scheduler *s = tg_sched_step_lr(opt, 3, 0.1);
    CHECK(tg_sched_last_epoch(s) == 0);
    CHECK_NEAR(tg_sched_get_last_lr(s), 0.5, 0);
    double lr = 0.5; /* PyTorch's chainable form, in the same order */
    for (int e = 1; e <= 12; e++) {
        CHECK_OK(tg_sched_step(s));
        if (e % 3 == 0)
            lr = lr * 0.1;
        CHECK(tg_sched_get_last_lr(s) == lr); /* bit for bit */
        CHECK_NEAR(tg_optim_get_lr(opt), 0.5 * pow(0.1, e / 3), 1e-15);
        CHECK(tg_sched_last_epoch(s) == e);
    }
    tg_sched_free(s);
    tg_optim_free(opt);
}

static void test_cosine_lr(void)
{
    tg_tensor *p = tg_zeros(TG_FLOAT32, 1, (int64_t[]){2});
    tg_adam_opts o = tg_adam_defaults();
    o.lr = 0.5;
    tg_optimizer *opt = tg_optim_adam(1, &p, &o);
    const int T = 10;
    const double eta = 0.01, base = 0.5, pi = 3.14159265358979323846;
    tg_lr_scheduler *s = tg_sched_cosine_annealing(opt, T, eta);
    CHECK_NEAR(tg_sched_get_last_lr(s), base, 0);
    double lr = base;
    for (int e = 1; e <= 3 * T + 3; e++) {
        CHECK_OK(tg_sched_step(s));
        /* PyTorch's recursion, written out */
        if ((e - 1 - T) % (2 * T) == 0)
            lr = lr + (base - eta) * (1 - cos(pi / T)) / 2;
        else
            lr = (1 + cos(pi * e / T)) / (1 + cos(pi * (e - 1) / T)) * (lr - eta) + eta;
        CHECK(tg_sched_get_last_lr(s) == lr);
        /* and the closed form it follows, past T_max too */
        CHECK_NEAR(tg_optim_get_lr(opt), eta + (base - eta) * (1 + cos(pi * e / T)) / 2, 1e-12);
    }
    /* epoch T is the trough */
    tg_lr_scheduler *s2;
    tg_optim_set_lr(opt, base);
    s2 = tg_sched_cosine_annealing(opt, 4, 0.0);
    for (int e = 1; e <= 4; e++)
        tg_sched_step(s2);
    CHECK_NEAR(tg_optim_get_lr(opt), 0.0, 1e-15);
    tg_sched_free(s2);
    tg_sched_free(s);
    tg_optim_free(opt);
}

/* ---- checkpoints: resuming gives the same bits --------------------------------- */

static char tmpdir[64];

/* loss = sum_i sum(c_i (p_i - t_i)^2); parameter 2 joins at step 4, so at
 * the checkpoint (after 3 steps) it has no state yet */
static void train(tg_optimizer *o, tg_lr_scheduler *s, tg_tensor **ps, int from, int to)
{
    for (int step = from; step < to; step++) {
        tg_scope_begin();
        tg_tensor *loss = NULL;
        for (int i = 0; i < NP; i++) {
            if (i == 2 && step < 3)
                continue;
            tg_tensor *d = tg_add_scalar(ps[i], -0.3 * (i + 1));
            tg_tensor *l = tg_sum(tg_mul_scalar(tg_mul(d, d), 0.7 + i), 0, NULL, false);
            loss = loss ? tg_add(loss, l) : l;
        }
        CHECK_OK(tg_backward(loss, NULL, false));
        CHECK_OK(tg_optim_step(o));
        tg_optim_zero_grad(o);
        if (s)
            CHECK_OK(tg_sched_step(s));
        tg_scope_end();
    }
}

static void copy_params_from(tg_tensor **ps, const tg_state_dict *sd)
{
    tg_no_grad_begin();
    for (int i = 0; i < NP; i++) {
        char name[32];
        snprintf(name, sizeof name, "model.%d", i);
        CHECK_OK(tg_copy_(ps[i], tg_state_dict_get(sd, name)));
    }
    tg_no_grad_end();
}

static void check_resume(const char *what, tg_dtype dt, make_fn make, const void *opts,
                         const void *other_opts)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.safetensors", tmpdir, what);
    /* straight: 6 steps */
    tg_tensor *a[NP];
    make_params(dt, a);
    tg_optimizer *oa = make(NP, a, opts);
    tg_lr_scheduler *sa = tg_sched_cosine_annealing(oa, 4, 1e-3);
    train(oa, sa, a, 0, 6);

    /* 3 steps, checkpoint, then a fresh run (other options) resumes */
    tg_tensor *b[NP];
    make_params(dt, b);
    tg_optimizer *ob = make(NP, b, opts);
    tg_lr_scheduler *sb = tg_sched_cosine_annealing(ob, 4, 1e-3);
    train(ob, sb, b, 0, 3);
    tg_state_dict *sd = tg_state_dict_new();
    for (int i = 0; i < NP; i++) {
        char name[32];
        snprintf(name, sizeof name, "model.%d", i);
        CHECK_OK(tg_state_dict_add(sd, name, b[i]));
    }
    CHECK_OK(tg_optim_state_dict(ob, sd));
    CHECK_OK(tg_sched_state_dict(sb, sd));
    CHECK_OK(tg_safetensors_save_dict(path, sd));
    tg_state_dict_free(sd);
    tg_sched_free(sb);
    tg_optim_free(ob);

    tg_tensor *c[NP];
    make_params(dt, c);
    tg_optimizer *oc = make(NP, c, other_opts);
    tg_lr_scheduler *sc = tg_sched_cosine_annealing(oc, 4, 1e-3);
    tg_state_dict *ld = tg_safetensors_load(path);
    CHECK(ld != NULL);
    if (ld) {
        copy_params_from(c, ld);
        CHECK_OK(tg_optim_load_state_dict(oc, ld));
        CHECK_OK(tg_sched_load_state_dict(sc, ld));
        CHECK(tg_sched_last_epoch(sc) == 3);
        CHECK(tg_optim_param_steps(oc, 0) == 3 && tg_optim_param_steps(oc, 2) == 0);
        tg_state_dict_free(ld);
    }
    train(oc, sc, c, 3, 6);
    for (int i = 0; i < NP; i++) {
        size_t nb = (size_t)tg_numel(a[i]) * tg_dtype_size(dt);
        bool same = memcmp(tg_data(a[i]), tg_data(c[i]), nb) == 0;
        if (!same)
            tt_fail(__FILE__, __LINE__, "%s %s: parameter %d differs after resuming", what,
                    tg_dtype_name(dt), i);
        tt_checks++;
    }
    CHECK(tg_optim_get_lr(oa) == tg_optim_get_lr(oc));
    tg_sched_free(sa);
    tg_sched_free(sc);
    tg_optim_free(oa);
    tg_optim_free(oc);
    unlink(path);
}

static void test_resume_bitwise(void)
{
    tg_sgd_opts s = tg_sgd_defaults(), s_other = tg_sgd_defaults();
    s.lr = 0.05;
    s.momentum = 0.9;
    s.dampening = 0.2;
    s.weight_decay = 0.01;
    check_resume("sgd_momentum", TG_FLOAT32, mk_sgd, &s, &s_other);
    check_resume("sgd_momentum64", TG_FLOAT64, mk_sgd, &s, &s_other);
    s.dampening = 0;
    s.nesterov = true;
    check_resume("sgd_nesterov", TG_FLOAT32, mk_sgd, &s, &s_other);

    tg_adam_opts a = tg_adam_defaults(), a_other = tg_adam_defaults();
    a.lr = 0.1;
    check_resume("adam", TG_FLOAT32, mk_adam, &a, &a_other);
    check_resume("adam64", TG_FLOAT64, mk_adam, &a, &a_other);
    a.amsgrad = true;
    a.weight_decay = 0.05;
    check_resume("adam_amsgrad", TG_FLOAT32, mk_adam, &a, &a_other);
    check_resume("adamw_amsgrad", TG_FLOAT32, mk_adamw, &a, &a_other);

    tg_adadelta_opts d = tg_adadelta_defaults(), d_other = tg_adadelta_defaults();
    d.weight_decay = 0.1;
    check_resume("adadelta", TG_FLOAT32, mk_adadelta, &d, &d_other);
    tg_rmsprop_opts r = tg_rmsprop_defaults(), r_other = tg_rmsprop_defaults();
    r.centered = true;
    r.momentum = 0.5;
    check_resume("rmsprop", TG_FLOAT32, mk_rmsprop, &r, &r_other);
}

static void test_state_dict_contents(void)
{
    tg_tensor *ps[NP];
    make_params(TG_FLOAT32, ps);
    tg_adam_opts o = tg_adam_defaults();
    o.lr = 0.125;
    o.amsgrad = true;
    tg_optimizer *opt = tg_optim_adam(NP, ps, &o);
    set_step_grads(ps, 2); /* parameter 2 has no gradient */
    CHECK_OK(tg_optim_step(opt));
    tg_state_dict *sd = tg_state_dict_new();
    CHECK_OK(tg_optim_state_dict(opt, sd));
    CHECK(strcmp(tg_state_dict_meta(sd, "optim.type"), "adam") == 0);
    CHECK(strcmp(tg_state_dict_meta(sd, "optim.lr"), "0.125") == 0);
    CHECK(strcmp(tg_state_dict_meta(sd, "optim.amsgrad"), "true") == 0);
    CHECK(strcmp(tg_state_dict_meta(sd, "optim.num_params"), "3") == 0);
    CHECK(tg_state_dict_has(sd, "optim.state.0.exp_avg"));
    CHECK(tg_state_dict_has(sd, "optim.state.1.max_exp_avg_sq"));
    CHECK(!tg_state_dict_has(sd, "optim.state.2.exp_avg"));
    tg_tensor *st = tg_state_dict_get(sd, "optim.state.1.step");
    CHECK(st && tg_dtype_of(st) == TG_INT64 && tg_item(st) == 1);
    CHECK(tg_state_dict_size(sd) == 8); /* 3 buffers + step, for 2 params */

    /* a dict that does not fit is refused and changes nothing */
    tg_optimizer *sgd = tg_optim_sgd(NP, ps, NULL);
    CHECK_FAILS(tg_optim_load_state_dict(sgd, sd), TG_ERR_IO, "'adam' optimizer");
    tg_optimizer *two = tg_optim_adam(2, ps, NULL);
    CHECK_FAILS(tg_optim_load_state_dict(two, sd), TG_ERR_IO, "3 parameters");
    tg_optimizer *fresh = tg_optim_adam(NP, ps, NULL);
    tg_state_dict *bad = tg_state_dict_new();
    CHECK_FAILS(tg_optim_load_state_dict(fresh, bad), TG_ERR_IO, "optim.type");
    for (int i = 0; i < tg_state_dict_meta_size(sd); i++)
        tg_state_dict_set_meta(bad, tg_state_dict_meta_key(sd, i), tg_state_dict_meta_value(sd, i));
    tg_state_dict_add(bad, "optim.state.0.exp_avg", tg_zeros(TG_FLOAT32, 1, (int64_t[]){5}));
    CHECK_FAILS(tg_optim_load_state_dict(fresh, bad), TG_ERR_IO, "[5]");
    tg_state_dict_free(bad);
    bad = tg_state_dict_new();
    for (int i = 0; i < tg_state_dict_meta_size(sd); i++)
        tg_state_dict_set_meta(bad, tg_state_dict_meta_key(sd, i), tg_state_dict_meta_value(sd, i));
    tg_state_dict_add(bad, "optim.state.0.momentum_buffer", tg_zeros(TG_FLOAT32, 1, (int64_t[]){4}));
    CHECK_FAILS(tg_optim_load_state_dict(fresh, bad), TG_ERR_IO, "unknown entry");
    tg_state_dict_free(bad);
    bad = tg_state_dict_new();
    for (int i = 0; i < tg_state_dict_meta_size(sd); i++)
        tg_state_dict_set_meta(bad, tg_state_dict_meta_key(sd, i), tg_state_dict_meta_value(sd, i));
    tg_state_dict_add(bad, "optim.state.7.exp_avg", tg_zeros(TG_FLOAT32, 1, (int64_t[]){4}));
    CHECK_FAILS(tg_optim_load_state_dict(fresh, bad), TG_ERR_IO, "unknown entry");
    tg_state_dict_set_meta(bad, "optim.amsgrad", "maybe");
    CHECK_FAILS(tg_optim_load_state_dict(fresh, bad), TG_ERR_IO, "true or false");
    tg_state_dict_set_meta(bad, "optim.amsgrad", "true");
    tg_state_dict_set_meta(bad, "optim.beta1", "1.5");
    CHECK_FAILS(tg_optim_load_state_dict(fresh, bad), TG_ERR_IO, "beta1");
    tg_state_dict_set_meta(bad, "optim.beta1", "0.9x");
    CHECK_FAILS(tg_optim_load_state_dict(fresh, bad), TG_ERR_IO, "expected a number");
    tg_state_dict_free(bad);
    CHECK_NEAR(tg_optim_get_lr(fresh), 1e-3, 0); /* untouched by the failures */

    /* the good dict loads and restores the hyper-parameters */
    CHECK_OK(tg_optim_load_state_dict(fresh, sd));
    CHECK_NEAR(tg_optim_get_lr(fresh), 0.125, 0);
    CHECK(tg_optim_param_steps(fresh, 0) == 1 && tg_optim_param_steps(fresh, 2) == 0);
    /* a scheduled lr below 0 saves and loads; one that is not finite does not */
    CHECK_OK(tg_optim_set_lr(opt, -0.25));
    tg_state_dict_free(sd);
    sd = tg_state_dict_new();
    CHECK_OK(tg_optim_state_dict(opt, sd));
    CHECK_OK(tg_optim_load_state_dict(fresh, sd));
    CHECK_NEAR(tg_optim_get_lr(fresh), -0.25, 0);
    tg_state_dict_set_meta(sd, "optim.lr", "nan");
    CHECK_FAILS(tg_optim_load_state_dict(fresh, sd), TG_ERR_IO, "learning rate");
    tg_state_dict_free(sd);
    tg_optim_free(opt);
    tg_optim_free(sgd);
    tg_optim_free(two);
    tg_optim_free(fresh);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tg_optim_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_sgd_by_hand);
    RUN(test_adam_by_hand);
    RUN(test_sgd);
    RUN(test_adam);
    RUN(test_adamw);
    RUN(test_adadelta);
    RUN(test_rmsprop);
    RUN(test_noncontiguous_param);
    RUN(test_large_param_threads);
    RUN(test_errors);
    RUN(test_step_lr);
    RUN(test_cosine_lr);
    RUN(test_resume_bitwise);
    RUN(test_state_dict_contents);
    rmdir(tmpdir);
    return tt_finish();
}
