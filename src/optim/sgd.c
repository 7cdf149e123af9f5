/* SGD with momentum, dampening, Nesterov and weight decay, as PyTorch's
 * torch.optim.SGD: the momentum buffer starts as the (decayed) gradient
 * itself, and dampening applies from the second step on. */
#include "optim/optim_impl.h"
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

/* g = sign * grad (+ wd * p); buf = g on the first step, else
 * mom * buf + (1 - dampening) * g; p += -lr * (nesterov ? g + mom * buf : buf) */
#define SGD_LOOP(T, WD, MOM, FIRST, NEST)                                   \
    for (int64_t i = b; i < e; i++) {                                       \
        T gi = sign * g[i];                                                 \
        if (WD)                                                             \
            gi = gi + wd * p[i];                                            \
        if (MOM) {                                                          \
            T bi = (FIRST) ? gi : buf[i] * mom + damp1 * gi;                \
            buf[i] = bi;                                                    \
            gi = (NEST) ? gi + mom * bi : bi;                               \
        }                                                                   \
        p[i] = p[i] + neg_lr * gi;                                          \
    }

#define SGD_KERNEL(NAME, T)                                                 \
    static void NAME(const tg__optim_job *j, int64_t b, int64_t e)          \
    {                                                                       \
        const tg_sgd_opts *h = j->opts;                                     \
        T *restrict p = (T *)j->p;                                          \
        const T *restrict g = (const T *)j->g;                              \
        T *restrict buf = (T *)j->s[0];                                     \
        const T sign = h->maximize ? (T)-1 : (T)1, wd = (T)h->weight_decay; \
        const T mom = (T)h->momentum, damp1 = (T)(1.0 - h->dampening);      \
        const T neg_lr = (T)(-h->lr);                                       \
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
};

tg_optimizer *tg_optim_sgd(int n, tg_tensor *const *params, const tg_sgd_opts *opts)
{
    tg_sgd_opts d = tg_sgd_defaults();
    return tg__optim_new(&tg__optim_sgd, n, params, opts ? opts : &d);
}
