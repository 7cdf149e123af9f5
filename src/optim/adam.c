/* Adam and AdamW (optionally AMSGrad), as PyTorch's torch.optim.Adam /
 * AdamW: L2 weight decay in the gradient for Adam, decoupled decay of the
 * parameter for AdamW; bias corrections computed in double per step. */
#include "optim/optim_impl.h"
TG_OPTIM_VECTORIZE

tg_adam_opts tg_adam_defaults(void)
{
    return (tg_adam_opts){.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
}

tg_adam_opts tg_adamw_defaults(void)
{
    tg_adam_opts o = tg_adam_defaults();
    o.weight_decay = 1e-2;
    return o;
}

static tg_status adam_validate(const void *opts)
{
    const tg_adam_opts *h = opts;
    if (!(h->lr >= 0))
        return tg__error(TG_ERR_ARG, "adam: invalid learning rate %g (must be >= 0)", h->lr);
    if (!(h->eps >= 0))
        return tg__error(TG_ERR_ARG, "adam: invalid eps %g (must be >= 0)", h->eps);
    if (!(h->beta1 >= 0 && h->beta1 < 1))
        return tg__error(TG_ERR_ARG, "adam: invalid beta1 %g (must be in [0, 1))", h->beta1);
    if (!(h->beta2 >= 0 && h->beta2 < 1))
        return tg__error(TG_ERR_ARG, "adam: invalid beta2 %g (must be in [0, 1))", h->beta2);
    if (!(h->weight_decay >= 0))
        return tg__error(TG_ERR_ARG, "adam: invalid weight_decay %g (must be >= 0)",
                         h->weight_decay);
    return TG_OK;
}

static bool adam_slot_used(const void *opts, int s)
{
    return s < 2 || ((const tg_adam_opts *)opts)->amsgrad;
}

/* AdamW: p *= 1 - lr wd. Adam: g += wd p. Then m = lerp(m, g, 1 - b1),
 * v = b2 v + (1 - b2) g g, vmax = max(vmax, v) (amsgrad),
 * p += -lr/bc1 * m / (sqrt(v or vmax) / sqrt(bc2) + eps) */
#define ADAM_LOOP(T, L2, DECOUPLED, AMS, SMALL)                             \
    for (int64_t i = b; i < e; i++) {                                       \
        T gi = sign * g[i];                                                 \
        T pi = p[i];                                                        \
        if (DECOUPLED)                                                      \
            pi = pi * decay;                                                \
        if (L2)                                                             \
            gi = gi + wd * pi;                                              \
        T mi = TG_LERP(SMALL, m[i], gi, w1, omw1);                          \
        m[i] = mi;                                                          \
        T vi = v[i] * b2 + om_b2 * gi * gi;                                 \
        v[i] = vi;                                                          \
        if (AMS) {                                                          \
            T mx = vmax[i];                                                 \
            mx = (vi > mx || vi != vi) ? vi : mx;                           \
            vmax[i] = mx;                                                   \
            vi = mx;                                                        \
        }                                                                   \
        T denom = TG_SQRT(vi) / bc2s + eps;                                 \
        p[i] = pi + neg_step * (mi / denom);                                \
    }

#define ADAM_KERNEL(NAME, T)                                                \
    static void NAME(const tg__optim_job *j, int64_t b, int64_t e, bool adamw) \
    {                                                                       \
        const tg_adam_opts *h = j->opts;                                    \
        T *restrict p = (T *)j->p;                                          \
        const T *restrict g = (const T *)j->g;                              \
        T *restrict m = (T *)j->s[0], *restrict v = (T *)j->s[1];           \
        T *restrict vmax = (T *)j->s[2];                                    \
        double bc1 = 1.0 - pow(h->beta1, (double)j->step);                  \
        double bc2 = 1.0 - pow(h->beta2, (double)j->step);                  \
        const T sign = h->maximize ? (T)-1 : (T)1;                          \
        const T wd = (T)h->weight_decay, decay = (T)(1.0 - h->lr * h->weight_decay); \
        const T w1 = (T)(1.0 - h->beta1), omw1 = (T)1 - w1; \
        const T b2 = (T)h->beta2, om_b2 = (T)(1.0 - h->beta2);              \
        const T bc2s = (T)sqrt(bc2), eps = (T)h->eps;                       \
        const T neg_step = (T)(-(h->lr / bc1));                             \
        bool decayed = h->weight_decay != 0;                                \
        int flags = (decayed && !adamw) | (decayed && adamw) << 1 |         \
                    h->amsgrad << 2 | (w1 < (T)0.5) << 3;          \
        TG_OPTIM_FLAGS16(ADAM_LOOP, T, flags)                               \
    }
ADAM_KERNEL(adam_f32, float)
ADAM_KERNEL(adam_f64, double)

static void adam_update(const tg__optim_job *j, int64_t b, int64_t e)
{
    if (j->dt == TG_FLOAT32)
        adam_f32(j, b, e, false);
    else
        adam_f64(j, b, e, false);
}

static void adamw_update(const tg__optim_job *j, int64_t b, int64_t e)
{
    if (j->dt == TG_FLOAT32)
        adam_f32(j, b, e, true);
    else
        adam_f64(j, b, e, true);
}

static const tg__hparam adam_hparams[] = {
    {"lr", offsetof(tg_adam_opts, lr), false},
    {"beta1", offsetof(tg_adam_opts, beta1), false},
    {"beta2", offsetof(tg_adam_opts, beta2), false},
    {"eps", offsetof(tg_adam_opts, eps), false},
    {"weight_decay", offsetof(tg_adam_opts, weight_decay), false},
    {"amsgrad", offsetof(tg_adam_opts, amsgrad), true},
    {"maximize", offsetof(tg_adam_opts, maximize), true},
};

/* Adam and AdamW share options, state and checks: only the name (also the
 * checkpoint's type) and the update differ */
#define ADAM_ALGO(NAME, UPDATE)                                             \
    {                                                                       \
        .name = (NAME),                                                     \
        .opts_size = sizeof(tg_adam_opts),                                  \
        .n_hparams = sizeof adam_hparams / sizeof adam_hparams[0],          \
        .hparams = adam_hparams,                                            \
        .n_slots = 3,                                                       \
        .slot_names = {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"},          \
        .validate = adam_validate,                                          \
        .slot_used = adam_slot_used,                                        \
        .update = (UPDATE),                                                 \
    }

const tg__optim_algo tg__optim_adam = ADAM_ALGO("adam", adam_update);
const tg__optim_algo tg__optim_adamw = ADAM_ALGO("adamw", adamw_update);

tg_optimizer *tg_optim_adam(int n, tg_tensor *const *params, const tg_adam_opts *opts)
{
    tg_adam_opts d = tg_adam_defaults();
    return tg__optim_new(&tg__optim_adam, n, params, opts ? opts : &d);
}

tg_optimizer *tg_optim_adamw(int n, tg_tensor *const *params, const tg_adam_opts *opts)
{
    tg_adam_opts d = tg_adamw_defaults();
    return tg__optim_new(&tg__optim_adamw, n, params, opts ? opts : &d);
}
