/* RMSprop (optionally centered, with momentum), as PyTorch's
 * torch.optim.RMSprop: eps is added after the square root. */
#include "optim/optim_impl.h"
TG_OPTIM_VECTORIZE

tg_rmsprop_opts tg_rmsprop_defaults(void)
{
    return (tg_rmsprop_opts){.lr = 1e-2, .alpha = 0.99, .eps = 1e-8};
}

static tg_status rmsprop_validate(const void *opts)
{
    const tg_rmsprop_opts *h = opts;
    if (!(h->lr >= 0))
        return tg__error(TG_ERR_ARG, "rmsprop: invalid learning rate %g (must be >= 0)",
                         h->lr);
    if (!(h->eps >= 0))
        return tg__error(TG_ERR_ARG, "rmsprop: invalid eps %g (must be >= 0)", h->eps);
    if (!(h->momentum >= 0))
        return tg__error(TG_ERR_ARG, "rmsprop: invalid momentum %g (must be >= 0)",
                         h->momentum);
    if (!(h->weight_decay >= 0))
        return tg__error(TG_ERR_ARG, "rmsprop: invalid weight_decay %g (must be >= 0)",
                         h->weight_decay);
    if (!(h->alpha >= 0))
        return tg__error(TG_ERR_ARG, "rmsprop: invalid alpha %g (must be >= 0)", h->alpha);
    return TG_OK;
}

/* slots: square_avg always, momentum_buffer with momentum, grad_avg when
 * centered */
static bool rmsprop_slot_used(const void *opts, int s)
{
    const tg_rmsprop_opts *h = opts;
    return s == 0 || (s == 1 && h->momentum > 0) || (s == 2 && h->centered);
}

/* sq = alpha sq + (1 - alpha) g g; centered: ga = lerp(ga, g, 1 - alpha),
 * avg = sqrt(sq - ga ga) + eps, else sqrt(sq) + eps; with momentum
 * buf = mom buf + g / avg, p += -lr buf; else p += -lr g / avg */
#define RMSPROP_LOOP(T, WD, CENTERED, MOM, SMALL)                           \
    for (int64_t i = b; i < e; i++) {                                       \
        T gi = sign * g[i];                                                 \
        if (WD)                                                             \
            gi = gi + wd * p[i];                                            \
        T sqi = sq[i] * alpha + om_alpha * gi * gi;                         \
        sq[i] = sqi;                                                        \
        T avg;                                                              \
        if (CENTERED) {                                                     \
            T gai = TG_LERP(SMALL, ga[i], gi, om_alpha, alpha1);            \
            ga[i] = gai;                                                    \
            avg = TG_SQRT(sqi + minus1 * gai * gai);                        \
        } else {                                                            \
            avg = TG_SQRT(sqi);                                             \
        }                                                                   \
        avg = avg + eps;                                                    \
        if (MOM) {                                                          \
            T bi = buf[i] * mom + gi / avg;                                 \
            buf[i] = bi;                                                    \
            p[i] = p[i] + neg_lr * bi;                                      \
        } else {                                                            \
            p[i] = p[i] + neg_lr * (gi / avg);                              \
        }                                                                   \
    }

#define RMSPROP_KERNEL(NAME, T)                                             \
    static void NAME(const tg__optim_job *j, int64_t b, int64_t e)          \
    {                                                                       \
        const tg_rmsprop_opts *h = j->opts;                                 \
        T *restrict p = (T *)j->p;                                          \
        const T *restrict g = (const T *)j->g;                              \
        T *restrict sq = (T *)j->s[0], *restrict buf = (T *)j->s[1];        \
        T *restrict ga = (T *)j->s[2];                                      \
        const T sign = h->maximize ? (T)-1 : (T)1, wd = (T)h->weight_decay; \
        const T alpha = (T)h->alpha, om_alpha = (T)(1.0 - h->alpha);        \
        const T alpha1 = (T)1 - om_alpha, minus1 = (T)-1;                   \
        const T eps = (T)h->eps, mom = (T)h->momentum, neg_lr = (T)(-h->lr); \
        int flags = (h->weight_decay != 0) | h->centered << 1 |             \
                    (h->momentum > 0) << 2 | (om_alpha < (T)0.5) << 3;      \
        TG_OPTIM_FLAGS16(RMSPROP_LOOP, T, flags)                            \
    }
RMSPROP_KERNEL(rmsprop_f32, float)
RMSPROP_KERNEL(rmsprop_f64, double)

static void rmsprop_update(const tg__optim_job *j, int64_t b, int64_t e)
{
    if (j->dt == TG_FLOAT32)
        rmsprop_f32(j, b, e);
    else
        rmsprop_f64(j, b, e);
}

static const tg__hparam rmsprop_hparams[] = {
    {"lr", offsetof(tg_rmsprop_opts, lr), false},
    {"alpha", offsetof(tg_rmsprop_opts, alpha), false},
    {"eps", offsetof(tg_rmsprop_opts, eps), false},
    {"momentum", offsetof(tg_rmsprop_opts, momentum), false},
    {"weight_decay", offsetof(tg_rmsprop_opts, weight_decay), false},
    {"centered", offsetof(tg_rmsprop_opts, centered), true},
    {"maximize", offsetof(tg_rmsprop_opts, maximize), true},
};

const tg__optim_algo tg__optim_rmsprop = {
    .name = "rmsprop",
    .opts_size = sizeof(tg_rmsprop_opts),
    .n_hparams = sizeof rmsprop_hparams / sizeof rmsprop_hparams[0],
    .hparams = rmsprop_hparams,
    .n_slots = 3,
    .slot_names = {"square_avg", "momentum_buffer", "grad_avg"},
    .validate = rmsprop_validate,
    .slot_used = rmsprop_slot_used,
    .update = rmsprop_update,
};

tg_optimizer *tg_optim_rmsprop(int n, tg_tensor *const *params,
                               const tg_rmsprop_opts *opts)
{
    tg_rmsprop_opts d = tg_rmsprop_defaults();
    return tg__optim_new(&tg__optim_rmsprop, n, params, opts ? opts : &d);
}
