/* Adadelta, as PyTorch's torch.optim.Adadelta: running averages of the
 * squared gradient and of the squared update, with lr scaling the step. */
#include "optim/formula.h"
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

/* The update, written once (formula.h) for the fused loop and for graphs:
 * sq = rho sq + (1 - rho) g g; delta = sqrt(acc + eps) / sqrt(sq + eps) * g;
 * acc = rho acc + (1 - rho) delta delta; p += -lr delta. In a graph the
 * parameter's assign does not read acc's: that one is `extra`. */
#define ADADELTA_K(V) struct { V sign, wd, rho, om_rho, eps, neg_lr; }
#define ADADELTA_CONSTS(T, h, k)                                            \
    do {                                                                    \
        k.sign = (h)->maximize ? (T)-1 : (T)1;                              \
        k.wd = (T)(h)->weight_decay;                                        \
        k.rho = (T)(h)->rho;                                                \
        k.om_rho = (T)(1.0 - (h)->rho);                                     \
        k.eps = (T)(h)->eps;                                                \
    } while (0)
#define ADADELTA_CONST_FIELDS(X) X(sign) X(wd) X(rho) X(om_rho) X(eps)

#define ADADELTA_STEP(A, V, WD, p, g, sq, acc, k, out, extra)               \
    do {                                                                    \
        V gi_ = A##_MUL(k.sign, g);                                         \
        if (WD)                                                             \
            gi_ = A##_ADD(gi_, A##_MUL(k.wd, p));                           \
        V sqi_ = A##_SET(sq, A##_ADD(A##_MUL(sq, k.rho),                    \
                                     A##_MUL(A##_MUL(k.om_rho, gi_), gi_))); \
        V std_ = A##_SQRT(A##_ADD(sqi_, k.eps));                            \
        V delta_ = A##_MUL(A##_DIV(A##_SQRT(A##_ADD(acc, k.eps)), std_), gi_); \
        A##_RESULT(extra, A##_SET(acc, A##_ADD(A##_MUL(acc, k.rho),         \
                                               A##_MUL(A##_MUL(k.om_rho, delta_), \
                                                       delta_))));          \
        A##_RESULT(out, A##_SET(p, A##_ADD(p, A##_MUL(k.neg_lr, delta_))));  \
    } while (0)

#define ADADELTA_LOOP(T, WD, UNUSED1, UNUSED2, UNUSED3)                     \
    for (int64_t i = b; i < e; i++)                                         \
        ADADELTA_STEP(TG_C, T, WD, p[i], g[i], sq[i], acc[i], k, _, _);

#define ADADELTA_KERNEL(NAME, T)                                            \
    static void NAME(const tg__optim_job *j, int64_t b, int64_t e)          \
    {                                                                       \
        const tg_adadelta_opts *h = j->opts;                                \
        T *restrict p = (T *)j->p;                                          \
        const T *restrict g = (const T *)j->g;                              \
        T *restrict sq = (T *)j->s[0], *restrict acc = (T *)j->s[1];        \
        ADADELTA_K(T) k;                                                    \
        ADADELTA_CONSTS(T, h, k);                                           \
        k.neg_lr = (T)TG_C_NEG(h->lr);                                      \
        int flags = h->weight_decay != 0;                                   \
        TG_OPTIM_FLAGS16(ADADELTA_LOOP, T, flags)                           \
    }
ADADELTA_KERNEL(adadelta_f32, float)
ADADELTA_KERNEL(adadelta_f64, double)

static tg_status adadelta_graph_scalars(const void *opts, tg_tensor *lr, tg_tensor *t,
                                        tg_dtype dt, tg_tensor **out)
{
    (void)opts;
    (void)t;
    return tg__optim_graph_neg_lr(lr, dt, out);
}

static tg_tensor *adadelta_graph_update(tg__optim_gparam *c)
{
    const tg_adadelta_opts *h = c->opts;
    ADADELTA_K(tg__sym) k;
    TG_G_CONSTS(c->dt, ADADELTA_K, ADADELTA_CONSTS, ADADELTA_CONST_FIELDS, TG_G_NOTHING, h);
    k.neg_lr = c->k[0];
    tg_tensor *out = NULL;
    ADADELTA_STEP(TG_G, tg__sym, h->weight_decay != 0, c->p, c->g, c->s[0], c->s[1], k, out,
                  c->extra);
    return out;
}

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
    .n_scalars = 1,
    .graph_scalars = adadelta_graph_scalars,
    .graph_update = adadelta_graph_update,
};

tg_optimizer *tg_optim_adadelta(int n, tg_tensor *const *params,
                                const tg_adadelta_opts *opts)
{
    tg_adadelta_opts d = tg_adadelta_defaults();
    return tg__optim_new(&tg__optim_adadelta, n, params, opts ? opts : &d);
}
