/* Adam and AdamW (optionally AMSGrad), as PyTorch's torch.optim.Adam /
 * AdamW: L2 weight decay in the gradient for Adam, decoupled decay of the
 * parameter for AdamW; bias corrections computed in double per step. The
 * update is one formula, run by the fused loop and built into graphs. */
#include "optim/formula.h"
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

/* The update, written once (formula.h) for the fused loop and for graphs.
 * Per step, in double: the step size -lr / bc1 with bc1 = 1 - beta1^t,
 * sqrt(bc2) with bc2 = 1 - beta2^t, and AdamW's decay 1 - lr wd. */
#define ADAM_SCALARS(A, lr, t, one, beta1, beta2, wd, neg_step, bc2s, decay) \
    do {                                                                    \
        neg_step = A##_NEG(A##_DIV(lr, A##_SUB(one, A##_POW(beta1, t))));   \
        bc2s = A##_SQRT(A##_SUB(one, A##_POW(beta2, t)));                   \
        decay = A##_SUB(one, A##_MUL(lr, wd));                              \
    } while (0)

/* the constants of every element, in the element type (V: T in the loop,
 * a tensor in graphs) */
#define ADAM_K(V) struct { V sign, wd, w1, omw1, b2, om_b2, eps, neg_step, bc2s, decay; }
#define ADAM_CONSTS(T, h, k)                                                \
    do {                                                                    \
        k.sign = (h)->maximize ? (T)-1 : (T)1;                              \
        k.wd = (T)(h)->weight_decay;                                        \
        k.w1 = (T)(1.0 - (h)->beta1);                                       \
        k.omw1 = (T)1 - k.w1;                                               \
        k.b2 = (T)(h)->beta2;                                               \
        k.om_b2 = (T)(1.0 - (h)->beta2);                                    \
        k.eps = (T)(h)->eps;                                                \
    } while (0)
#define ADAM_CONST_FIELDS(X) X(sign) X(wd) X(w1) X(omw1) X(b2) X(om_b2) X(eps)

/* AdamW: p *= decay. Adam: g += wd p. Then m = lerp(m, g, 1 - b1),
 * v = b2 v + (1 - b2) g g, vmax = max(vmax, v) (amsgrad),
 * p += neg_step * m / (sqrt(v or vmax) / sqrt(bc2) + eps). SMALL: the
 * lerp's weight is below 0.5 (PyTorch's lerp picks its form by it). */
#define ADAM_STEP(A, V, L2, DECOUPLED, AMS, SMALL, p, g, m, v, vmax, k, out) \
    do {                                                                    \
        V gi_ = A##_MUL(k.sign, g);                                         \
        V pi_ = p;                                                          \
        if (DECOUPLED)                                                      \
            pi_ = A##_MUL(pi_, k.decay);                                    \
        if (L2)                                                             \
            gi_ = A##_ADD(gi_, A##_MUL(k.wd, pi_));                         \
        V mi_ = A##_SET(m, A##_LERP(SMALL, m, gi_, k.w1, k.omw1));          \
        V vi_ = A##_SET(v, A##_ADD(A##_MUL(v, k.b2),                        \
                                   A##_MUL(A##_MUL(k.om_b2, gi_), gi_)));   \
        if (AMS)                                                            \
            vi_ = A##_SET(vmax, A##_MAX(vi_, vmax));                        \
        V den_ = A##_ADD(A##_DIV(A##_SQRT(vi_), k.bc2s), k.eps);            \
        A##_RESULT(out, A##_SET(p, A##_ADD(pi_, A##_MUL(k.neg_step,         \
                                                        A##_DIV(mi_, den_))))); \
    } while (0)

#define ADAM_LOOP(T, L2, DECOUPLED, AMS, SMALL)                             \
    for (int64_t i = b; i < e; i++)                                         \
        ADAM_STEP(TG_C, T, L2, DECOUPLED, AMS, SMALL, p[i], g[i], m[i], v[i], \
                  vmax[i], k, _);

#define ADAM_KERNEL(NAME, T)                                                \
    static void NAME(const tg__optim_job *j, int64_t b, int64_t e, bool adamw) \
    {                                                                       \
        const tg_adam_opts *h = j->opts;                                    \
        T *restrict p = (T *)j->p;                                          \
        const T *restrict g = (const T *)j->g;                              \
        T *restrict m = (T *)j->s[0], *restrict v = (T *)j->s[1];           \
        T *restrict vmax = (T *)j->s[2];                                    \
        double neg_step, bc2s, decay;                                       \
        ADAM_SCALARS(TG_C, h->lr, (double)j->step, 1.0, h->beta1, h->beta2, \
                     h->weight_decay, neg_step, bc2s, decay);               \
        ADAM_K(T) k;                                                        \
        ADAM_CONSTS(T, h, k);                                               \
        k.neg_step = (T)neg_step;                                           \
        k.bc2s = (T)bc2s;                                                   \
        k.decay = (T)decay;                                                 \
        bool decayed = h->weight_decay != 0;                                \
        int flags = (decayed && !adamw) | (decayed && adamw) << 1 |         \
                    h->amsgrad << 2 | (k.w1 < (T)0.5) << 3;                 \
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

/* ---- the graph form ---------------------------------------------------------- */

static tg_status adam_graph_scalars(const void *opts, tg_tensor *lr, tg_tensor *t, tg_dtype dt,
                                    tg_tensor **out)
{
    const tg_adam_opts *h = opts;
    tg_tensor *neg_step, *bc2s, *decay;
    ADAM_SCALARS(TG_G, lr, t, tg_scalar(TG_FLOAT64, 1.0), tg_scalar(TG_FLOAT64, h->beta1),
                 tg_scalar(TG_FLOAT64, h->beta2), tg_scalar(TG_FLOAT64, h->weight_decay),
                 neg_step, bc2s, decay);
    out[0] = tg_cast(neg_step, dt);
    out[1] = tg_cast(bc2s, dt);
    out[2] = tg_cast(decay, dt);
    return out[0] && out[1] && out[2] ? TG_OK : tg_last_status();
}

#define ADAM_SMALL(T) small = c_.w1 < (T)0.5;

static tg_tensor *adam_graph(tg__optim_gparam *c, bool adamw)
{
    const tg_adam_opts *h = c->opts;
    ADAM_K(tg__sym) k;
    bool small = false;
    TG_G_CONSTS(c->dt, ADAM_K, ADAM_CONSTS, ADAM_CONST_FIELDS, ADAM_SMALL, h);
    k.neg_step = c->k[0];
    k.bc2s = c->k[1];
    k.decay = c->k[2];
    bool decayed = h->weight_decay != 0;
    tg_tensor *out = NULL;
    ADAM_STEP(TG_G, tg__sym, decayed && !adamw, decayed && adamw, h->amsgrad, small, c->p,
              c->g, c->s[0], c->s[1], c->s[2], k, out);
    return out;
}

static tg_tensor *adam_graph_update(tg__optim_gparam *c) { return adam_graph(c, false); }
static tg_tensor *adamw_graph_update(tg__optim_gparam *c) { return adam_graph(c, true); }

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
#define ADAM_ALGO(NAME, UPDATE, GRAPH)                                      \
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
        .n_scalars = 3,                                                     \
        .graph_scalars = adam_graph_scalars,                                \
        .graph_update = (GRAPH),                                            \
    }

const tg__optim_algo tg__optim_adam = ADAM_ALGO("adam", adam_update, adam_graph_update);
const tg__optim_algo tg__optim_adamw = ADAM_ALGO("adamw", adamw_update, adamw_graph_update);

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
