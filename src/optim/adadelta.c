/* Adadelta, as PyTorch's torch.optim.Adadelta: running averages of the
 * squared gradient and of the squared update, with lr scaling the step. */
#include "optim/optim_impl.h"
TG_OPTIM_VECTORIZE

tg_adadelta_opts tg_adadelta_defaults(void)
{
    return (tg_adadelta_opts){.lr = 1.0, .rho = 0.9, .eps = 1e-6};
}

static tg_status adadelta_validate(const void *opts)
{
    const tg_adadelta_opts *h = opts;
    if (!(h->lr >= 0))
        return tg__error(TG_ERR_ARG, "adadelta: invalid learning rate %g (must be >= 0)",
                         h->lr);
    if (!(h->rho >= 0 && h->rho <= 1))
        return tg__error(TG_ERR_ARG, "adadelta: invalid rho %g (must be in [0, 1])", h->rho);
    if (!(h->eps >= 0))
        return tg__error(TG_ERR_ARG, "adadelta: invalid eps %g (must be >= 0)", h->eps);
    if (!(h->weight_decay >= 0))
        return tg__error(TG_ERR_ARG, "adadelta: invalid weight_decay %g (must be >= 0)",
                         h->weight_decay);
    return TG_OK;
}

static bool adadelta_slot_used(const void *opts, int s)
{
    (void)opts;
    (void)s;
    return true;
}

/* sq = rho sq + (1 - rho) g g; delta = sqrt(acc + eps) / sqrt(sq + eps) * g;
 * acc = rho acc + (1 - rho) delta delta; p += -lr delta */
#define ADADELTA_LOOP(T, WD, UNUSED1, UNUSED2, UNUSED3)                     \
    for (int64_t i = b; i < e; i++) {                                       \
        T gi = sign * g[i];                                                 \
        if (WD)                                                             \
            gi = gi + wd * p[i];                                            \
        T sqi = sq[i] * rho + om_rho * gi * gi;                             \
        sq[i] = sqi;                                                        \
        T std = TG_SQRT(sqi + eps);                                         \
        T delta = TG_SQRT(acc[i] + eps) / std * gi;                         \
        acc[i] = acc[i] * rho + om_rho * delta * delta;                     \
        p[i] = p[i] + neg_lr * delta;                                       \
    }

#define ADADELTA_KERNEL(NAME, T)                                            \
    static void NAME(const tg__optim_job *j, int64_t b, int64_t e)          \
    {                                                                       \
        const tg_adadelta_opts *h = j->opts;                                \
        T *restrict p = (T *)j->p;                                          \
        const T *restrict g = (const T *)j->g;                              \
        T *restrict sq = (T *)j->s[0], *restrict acc = (T *)j->s[1];        \
        const T sign = h->maximize ? (T)-1 : (T)1, wd = (T)h->weight_decay; \
        const T rho = (T)h->rho, om_rho = (T)(1.0 - h->rho);                \
        const T eps = (T)h->eps, neg_lr = (T)(-h->lr);                      \
        int flags = h->weight_decay != 0;                                   \
        TG_OPTIM_FLAGS16(ADADELTA_LOOP, T, flags)                           \
    }
ADADELTA_KERNEL(adadelta_f32, float)
ADADELTA_KERNEL(adadelta_f64, double)

static void adadelta_update(const tg__optim_job *j, int64_t b, int64_t e)
{
    if (j->dt == TG_FLOAT32)
        adadelta_f32(j, b, e);
    else
        adadelta_f64(j, b, e);
}

static const tg__hparam adadelta_hparams[] = {
    {"lr", offsetof(tg_adadelta_opts, lr), false},
    {"rho", offsetof(tg_adadelta_opts, rho), false},
    {"eps", offsetof(tg_adadelta_opts, eps), false},
    {"weight_decay", offsetof(tg_adadelta_opts, weight_decay), false},
    {"maximize", offsetof(tg_adadelta_opts, maximize), true},
};

const tg__optim_algo tg__optim_adadelta = {
    .name = "adadelta",
    .opts_size = sizeof(tg_adadelta_opts),
    .n_hparams = sizeof adadelta_hparams / sizeof adadelta_hparams[0],
    .hparams = adadelta_hparams,
    .n_slots = 2,
    .slot_names = {"square_avg", "acc_delta"},
    .validate = adadelta_validate,
    .slot_used = adadelta_slot_used,
    .update = adadelta_update,
};

tg_optimizer *tg_optim_adadelta(int n, tg_tensor *const *params,
                                const tg_adadelta_opts *opts)
{
    tg_adadelta_opts d = tg_adadelta_defaults();
    return tg__optim_new(&tg__optim_adadelta, n, params, opts ? opts : &d);
}
