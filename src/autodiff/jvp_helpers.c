/* Helpers for forward-mode (JVP) rules and the generic rules that op
 * definitions point at (linear, multilinear, joint linear). The rules
 * themselves live in the op definitions, next to the gradient rules. */
#include "autodiff/jvp.h"

tg_status tg__jvp_fail(const tg_jvp_ctx *c)
{
    if (tg_last_status() != TG_OK)
        return tg_last_status();
    return tg__error(TG_ERR_INTERNAL, "forward mode: the JVP rule of '%s' failed "
                     "(node '%s')", c->op->name, c->name);
}

tg_status tg__jvp_set(tg_jvp_ctx *c, int o, tg_tensor *t)
{
    c->dy[o] = t;
    return t ? TG_OK : tg__jvp_fail(c);
}

tg_tensor *tg__jvp_add_term(tg_tensor *acc, tg_tensor *term)
{
    if (!term)
        return NULL;
    return acc ? tg_add(acc, term) : term;
}

tg_tensor *tg__jvp_scalar(const tg_jvp_ctx *c, double v)
{
    return tg_scalar(c->out_meta[0].dtype, v);
}

tg_tensor *tg__jvp_with_tangent(const tg_jvp_ctx *c, int i, int n)
{
    tg_tensor *in[TG_MAX_OP_INPUTS];
    for (int k = 0; k < n; k++)
        in[k] = c->in[k];
    in[i] = c->dx[i];
    return tg_op_call(c->op, n, in, c->attrs, c->n_attrs);
}

tg_status tg__jvp_linear(tg_jvp_ctx *c)
{
    return c->dx[0] ? tg__jvp_set(c, 0, tg__jvp_with_tangent(c, 0, c->n_in)) : TG_OK;
}

tg_tensor *tg__jvp_multilinear_terms(tg_jvp_ctx *c, int n, tg_status *s)
{
    tg_tensor *acc = NULL;
    for (int i = 0; i < n; i++)
        if (c->dx[i] && !(acc = tg__jvp_add_term(acc, tg__jvp_with_tangent(c, i, n)))) {
            *s = tg__jvp_fail(c);
            return NULL;
        }
    *s = TG_OK;
    return acc;
}

tg_status tg__jvp_multilinear(tg_jvp_ctx *c)
{
    tg_status s;
    c->dy[0] = tg__jvp_multilinear_terms(c, c->n_in, &s);
    return s;
}

tg_status tg__jvp_joint_linear(tg_jvp_ctx *c)
{
    tg_tensor *in[TG_MAX_OP_INPUTS];
    for (int i = 0; i < c->n_in; i++) {
        const tg_meta *m = &c->in_meta[i];
        if (!(in[i] = c->dx[i] ? c->dx[i] : tg_zeros(m->dtype, m->ndim, m->shape)))
            return tg__jvp_fail(c);
    }
    return tg__jvp_set(c, 0, tg_op_call(c->op, c->n_in, in, c->attrs, c->n_attrs));
}
