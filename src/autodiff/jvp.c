/* Running a forward-mode (JVP) rule and conforming the tangents it gives,
 * as vjp.c does for gradient rules; and the check of a caller's tangent
 * that the graph pass and eager tg_jvp share. */
#include "autodiff/jvp.h"

/* a tangent for output o: expanded to the output's shape when it
 * broadcasts to it (a rule may return ta alone for add(a, b)), then cast
 * to its dtype. Runs inside the rule's scope, which owns what it makes. */
static tg_tensor *conform(const tg_jvp_ctx *c, int o, tg_tensor *t)
{
    const tg_meta *m = &c->out_meta[o];
    if (!tg__shape_eq(t->ndim, t->shape, m->ndim, m->shape)) {
        char a[160], b[160];
        tg_tensor *e = tg_expand(t, m->ndim, m->shape);
        if (!e || !tg__shape_eq(e->ndim, e->shape, m->ndim, m->shape))
            return tg__error_null(TG_ERR_INTERNAL, "forward mode: the JVP rule of "
                                  "'%s' gave shape %s for output %d of shape %s (node "
                                  "'%s')", c->op->name,
                                  tg_shape_str(t->ndim, t->shape, a, sizeof a), o,
                                  tg_shape_str(m->ndim, m->shape, b, sizeof b), c->name);
        t = e;
    }
    return t->dtype == m->dtype ? t : tg_cast(t, m->dtype);
}

/* a unary op's tangent from its derivative: t * f'(x); none for
 * piecewise-constant ops */
static tg_status deriv_rule(tg_jvp_ctx *c)
{
    if (c->op->deriv == tg__deriv_zero)
        return TG_OK;
    return tg__jvp_set(c, 0, c->op->deriv(c->dx[0], c->in[0], c->out[0], c->attr));
}

tg_status tg__jvp_run(const tg_jvp_ctx *c, tg_tensor *const *dx, tg_tensor **dy)
{
    for (int o = 0; o < c->n_out; o++)
        dy[o] = NULL;
    if (!tg_op_has_jvp(c->op))
        return tg__error(TG_ERR_UNSUPPORTED, "forward mode: op '%s' has no JVP rule "
                         "(node '%s'); forward-mode autodiff cannot go through it",
                         c->op->name, c->name);
    tg_jvp_ctx r = *c;
    r.dx = dx;
    r.dy = dy;
    tg_scope_begin();
    tg_status s = c->op->jvp ? c->op->jvp(&r) : deriv_rule(&r);
    for (int o = 0; o < c->n_out; o++) {
        /* outputs that are not floating point have no tangents */
        bool want = s == TG_OK && dy[o] && tg_dtype_is_float(c->out_meta[o].dtype);
        tg_tensor *t = want ? conform(c, o, dy[o]) : NULL;
        if (want && !t)
            s = tg_last_status();
        /* survives the scope: the caller owns it */
        dy[o] = s == TG_OK && t ? tg_retain(t) : NULL;
    }
    tg_scope_end();
    if (s != TG_OK)
        for (int o = 0; o < c->n_out; o++) {
            tg_release(dy[o]);
            dy[o] = NULL;
        }
    return s;
}

tg_status tg__jvp_check_tangent(const char *fn, int i, const tg_tensor *t,
                                const tg_meta *m, const char *xname)
{
    char a[160], b[160];
    if (!t)
        return TG_OK;
    if (!tg_dtype_is_float(m->dtype))
        return tg__error(TG_ERR_DTYPE, "%s: tangents[%d] is given for '%s', which is "
                         "%s; only floating-point values have tangents (pass NULL)",
                         fn, i, xname, tg_dtype_name(m->dtype));
    if (!tg__shape_eq(t->ndim, t->shape, m->ndim, m->shape))
        return tg__error(TG_ERR_SHAPE, "%s: tangents[%d] has shape %s but its x '%s' "
                         "has shape %s", fn, i, tg_shape_str(t->ndim, t->shape, a, sizeof a),
                         xname, tg_shape_str(m->ndim, m->shape, b, sizeof b));
    if (t->dtype != m->dtype)
        return tg__error(TG_ERR_DTYPE, "%s: tangents[%d] is %s but its x '%s' is %s "
                         "(a tangent has its x's dtype)", fn, i, tg_dtype_name(t->dtype),
                         xname, tg_dtype_name(m->dtype));
    return TG_OK;
}
