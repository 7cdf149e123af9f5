/* SGD with momentum, dampening, Nesterov and weight decay, as PyTorch's
 * torch.optim.SGD: the momentum buffer starts as the (decayed) gradient
 * itself, and dampening applies from the second step on. The update is
 * one formula, run by the fused loop and built into graphs. */
#include "optim/formula.h"
TG_OPTIM_VECTORIZE

tg_sgd_opts tg_sgd_defaults(void)
{
    return (tg_sgd_opts){.lr = 1e-3};
}

static tg_status sgd_validate(const void *opts)
{
    const tg_sgd_opts *h = opts;
    if (!(h->lr >= 0))
        return tg__error(TG_ERR_ARG, "sgd: invalid learning rate %g (must be >= 0)", h->lr);
    if (!(h->momentum >= 0))
        return tg__error(TG_ERR_ARG, "sgd: invalid momentum %g (must be >= 0)", h->momentum);
    if (!(h->weight_decay >= 0))
        return tg__error(TG_ERR_ARG, "sgd: invalid weight_decay %g (must be >= 0)",
                         h->weight_decay);
    if (!(h->dampening == h->dampening))
        return tg__error(TG_ERR_ARG, "sgd: dampening is NaN");
    if (h->nesterov && (h->momentum <= 0 || h->dampening != 0))
        return tg__error(TG_ERR_ARG, "sgd: nesterov momentum requires a momentum > 0 "
                         "and zero dampening (momentum %g, dampening %g)",
                         h->momentum, h->dampening);
    return TG_OK;
}

static bool sgd_slot_used(const void *opts, int s)
{
    (void)s;
    return ((const tg_sgd_opts *)opts)->momentum != 0;
}

/* The update, written once (formula.h) for the fused loop and for graphs:
 * g = sign * grad (+ wd * p); buf = g on the first step, else
 * mom * buf + (1 - dampening) * g; p += -lr * (nesterov ? g + mom * buf : buf) */
#define SGD_K(V) struct { V sign, wd, mom, damp1, neg_lr; }
#define SGD_CONSTS(T, h, k)                                                 \
    do {                                                                    \
        k.sign = (h)->maximize ? (T)-1 : (T)1;                              \
        k.wd = (T)(h)->weight_decay;                                        \
        k.mom = (T)(h)->momentum;                                           \
        k.damp1 = (T)(1.0 - (h)->dampening);                                \
    } while (0)
#define SGD_CONST_FIELDS(X) X(sign) X(wd) X(mom) X(damp1)

#define SGD_STEP(A, V, WD, MOM, FIRST, NEST, p, g, buf, k, out)             \
    do {                                                                    \
        V gi_ = A##_MUL(k.sign, g);                                         \
        if (WD)                                                             \
            gi_ = A##_ADD(gi_, A##_MUL(k.wd, p));                           \
        if (MOM) {                                                          \
            V bi_ = A##_SET(buf, A##_SELECT(FIRST, gi_,                     \
                                            A##_ADD(A##_MUL(buf, k.mom),    \
                                                    A##_MUL(k.damp1, gi_)))); \
            gi_ = (NEST) ? A##_ADD(gi_, A##_MUL(k.mom, bi_)) : bi_;         \
        }                                                                   \
        A##_RESULT(out, A##_SET(p, A##_ADD(p, A##_MUL(k.neg_lr, gi_))));    \
    } while (0)

#define SGD_LOOP(T, WD, MOM, FIRST, NEST)                                   \
    for (int64_t i = b; i < e; i++)                                         \
        SGD_STEP(TG_C, T, WD, MOM, FIRST, NEST, p[i], g[i], buf[i], k, _);

#define SGD_KERNEL(NAME, T)                                                 \
    static void NAME(const tg__optim_job *j, int64_t b, int64_t e)          \
    {                                                                       \
        const tg_sgd_opts *h = j->opts;                                     \
        T *restrict p = (T *)j->p;                                          \
        const T *restrict g = (const T *)j->g;                              \
        T *restrict buf = (T *)j->s[0];                                     \
        SGD_K(T) k;                                                         \
        SGD_CONSTS(T, h, k);                                                \
        k.neg_lr = (T)TG_C_NEG(h->lr);                                      \
        bool use_mom = h->momentum != 0;                                    \
        int flags = (h->weight_decay != 0) | use_mom << 1 |                 \
                    (use_mom && j->first) << 2 | (use_mom && h->nesterov) << 3; \
        TG_OPTIM_FLAGS16(SGD_LOOP, T, flags)                                \
    }
SGD_KERNEL(sgd_f32, float)
SGD_KERNEL(sgd_f64, double)

static void sgd_update(const tg__optim_job *j, int64_t b, int64_t e)
{
    if (j->dt == TG_FLOAT32)
        sgd_f32(j, b, e);
    else
        sgd_f64(j, b, e);
}

/* ---- the graph form: scalars -lr (shared) and first (per parameter) ---------- */

static tg_status sgd_graph_scalars(const void *opts, tg_tensor *lr, tg_tensor *t, tg_dtype dt,
                                   tg_tensor **out)
{
    (void)opts;
    tg_status s = tg__optim_graph_neg_lr(lr, dt, out);
    out[1] = NULL; /* without momentum there is no step count and no need */
    if (s == TG_OK && t && !(out[1] = tg_eq(t, tg_scalar(TG_FLOAT64, 1.0))))
        s = tg_last_status();
    return s;
}

static tg_tensor *sgd_graph_update(tg__optim_gparam *c)
{
    const tg_sgd_opts *h = c->opts;
    SGD_K(tg__sym) k;
    TG_G_CONSTS(c->dt, SGD_K, SGD_CONSTS, SGD_CONST_FIELDS, TG_G_NOTHING, h);
    k.neg_lr = c->k[0];
    tg_tensor *out = NULL;
    SGD_STEP(TG_G, tg__sym, h->weight_decay != 0, h->momentum != 0, c->k[1], h->nesterov,
             c->p, c->g, c->s[0], k, out);
    return out;
}

static const tg__hparam sgd_hparams[] = {
    {"lr", offsetof(tg_sgd_opts, lr), false},
    {"momentum", offsetof(tg_sgd_opts, momentum), false},
    {"dampening", offsetof(tg_sgd_opts, dampening), false},
    {"weight_decay", offsetof(tg_sgd_opts, weight_decay), false},
    {"nesterov", offsetof(tg_sgd_opts, nesterov), true},
    {"maximize", offsetof(tg_sgd_opts, maximize), true},
};

const tg__optim_algo tg__optim_sgd = {
    .name = "sgd",
    .opts_size = sizeof(tg_sgd_opts),
    .n_hparams = sizeof sgd_hparams / sizeof sgd_hparams[0],
    .hparams = sgd_hparams,
    .n_slots = 1,
    .slot_names = {"momentum_buffer"},
    .validate = sgd_validate,
    .slot_used = sgd_slot_used,
    .update = sgd_update,
    .n_scalars = 2,
    .graph_scalars = sgd_graph_scalars,
    .graph_update = sgd_graph_update,
};

tg_optimizer *tg_optim_sgd(int n, tg_tensor *const *params, const tg_sgd_opts *opts)
{
    tg_sgd_opts d = tg_sgd_defaults();
    return tg__optim_new(&tg__optim_sgd, n, params, opts ? opts : &d);
}
