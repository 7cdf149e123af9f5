/* RMSprop (optionally centered, with momentum), as PyTorch's
 * torch.optim.RMSprop: eps is added after the square root. */
#include "optim/formula.h"
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

/* The update, written once (formula.h) for the fused loop and for graphs:
 * sq = alpha sq + (1 - alpha) g g; centered: ga = lerp(ga, g, 1 - alpha),
 * avg = sqrt(sq - ga ga) + eps, else sqrt(sq) + eps; with momentum
 * buf = mom buf + g / avg, p += -lr buf; else p += -lr g / avg */
#define RMSPROP_K(V) struct { V sign, wd, alpha, om_alpha, alpha1, minus1, eps, mom, neg_lr; }
#define RMSPROP_CONSTS(T, h, k)                                             \
    do {                                                                    \
        k.sign = (h)->maximize ? (T)-1 : (T)1;                              \
        k.wd = (T)(h)->weight_decay;                                        \
        k.alpha = (T)(h)->alpha;                                            \
        k.om_alpha = (T)(1.0 - (h)->alpha);                                 \
        k.alpha1 = (T)1 - k.om_alpha;                                       \
        k.minus1 = (T)-1;                                                   \
        k.eps = (T)(h)->eps;                                                \
        k.mom = (T)(h)->momentum;                                           \
    } while (0)
#define RMSPROP_CONST_FIELDS(X) \
    X(sign) X(wd) X(alpha) X(om_alpha) X(alpha1) X(minus1) X(eps) X(mom)

#define RMSPROP_STEP(A, V, WD, CENTERED, MOM, SMALL, p, g, sq, buf, ga, k, out) \
    do {                                                                    \
        V gi_ = A##_MUL(k.sign, g);                                         \
        if (WD)                                                             \
            gi_ = A##_ADD(gi_, A##_MUL(k.wd, p));                           \
        V sqi_ = A##_SET(sq, A##_ADD(A##_MUL(sq, k.alpha),                  \
                                     A##_MUL(A##_MUL(k.om_alpha, gi_), gi_))); \
        V avg_;                                                             \
        if (CENTERED) {                                                     \
            V gai_ = A##_SET(ga, A##_LERP(SMALL, ga, gi_, k.om_alpha, k.alpha1)); \
            avg_ = A##_SQRT(A##_ADD(sqi_, A##_MUL(A##_MUL(k.minus1, gai_), gai_))); \
        } else {                                                            \
            avg_ = A##_SQRT(sqi_);                                          \
        }                                                                   \
        avg_ = A##_ADD(avg_, k.eps);                                        \
        if (MOM) {                                                          \
            V bi_ = A##_SET(buf, A##_ADD(A##_MUL(buf, k.mom), A##_DIV(gi_, avg_))); \
            A##_RESULT(out, A##_SET(p, A##_ADD(p, A##_MUL(k.neg_lr, bi_)))); \
        } else {                                                            \
            A##_RESULT(out, A##_SET(p, A##_ADD(p, A##_MUL(k.neg_lr,         \
                                                          A##_DIV(gi_, avg_))))); \
        }                                                                   \
    } while (0)

#define RMSPROP_LOOP(T, WD, CENTERED, MOM, SMALL)                           \
    for (int64_t i = b; i < e; i++)                                         \
        RMSPROP_STEP(TG_C, T, WD, CENTERED, MOM, SMALL, p[i], g[i], sq[i], buf[i], ga[i], \
                     k, _);

#define RMSPROP_KERNEL(NAME, T)                                             \
    static void NAME(const tg__optim_job *j, int64_t b, int64_t e)          \
    {                                                                       \
        const tg_rmsprop_opts *h = j->opts;                                 \
        T *restrict p = (T *)j->p;                                          \
        const T *restrict g = (const T *)j->g;                              \
        T *restrict sq = (T *)j->s[0], *restrict buf = (T *)j->s[1];        \
        T *restrict ga = (T *)j->s[2];                                      \
        RMSPROP_K(T) k;                                                     \
        RMSPROP_CONSTS(T, h, k);                                            \
        k.neg_lr = (T)TG_C_NEG(h->lr);                                      \
        int flags = (h->weight_decay != 0) | h->centered << 1 |             \
                    (h->momentum > 0) << 2 | (k.om_alpha < (T)0.5) << 3;    \
        TG_OPTIM_FLAGS16(RMSPROP_LOOP, T, flags)                            \
    }
RMSPROP_KERNEL(rmsprop_f32, float)
RMSPROP_KERNEL(rmsprop_f64, double)

static tg_status rmsprop_graph_scalars(const void *opts, tg_tensor *lr, tg_tensor *t,
                                       tg_dtype dt, tg_tensor **out)
{
    (void)opts;
    (void)t;
    return tg__optim_graph_neg_lr(lr, dt, out);
}

#define RMSPROP_SMALL(T) small = c_.om_alpha < (T)0.5;

static tg_tensor *rmsprop_graph_update(tg__optim_gparam *c)
{
    const tg_rmsprop_opts *h = c->opts;
    RMSPROP_K(tg__sym) k;
    bool small = false;
    TG_G_CONSTS(c->dt, RMSPROP_K, RMSPROP_CONSTS, RMSPROP_CONST_FIELDS, RMSPROP_SMALL, h);
    k.neg_lr = c->k[0];
    tg_tensor *out = NULL;
    RMSPROP_STEP(TG_G, tg__sym, h->weight_decay != 0, h->centered, h->momentum > 0, small,
                 c->p, c->g, c->s[0], c->s[1], c->s[2], k, out);
    return out;
}

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
    .n_scalars = 1,
    .graph_scalars = rmsprop_graph_scalars,
    .graph_update = rmsprop_graph_update,
};

tg_optimizer *tg_optim_rmsprop(int n, tg_tensor *const *params,
                               const tg_rmsprop_opts *opts)
{
    tg_rmsprop_opts d = tg_rmsprop_defaults();
    return tg__optim_new(&tg__optim_rmsprop, n, params, opts ? opts : &d);
}
