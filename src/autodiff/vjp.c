/* Running a gradient rule and conforming its results: the pieces eager
 * and symbolic reverse mode share (see vjp.h). */
#include "autodiff/vjp.h"

#include <stdio.h>
#include <string.h>

tg_tensor *tg__grad_sum(tg_tensor *a, tg_tensor *b)
{
    tg_tensor *s = tg_add(a, b);
    tg_release(a);
    tg_release(b);
    return s;
}

tg_tensor *tg__grad_conform(const char *name, int i, const tg_meta *m,
                            tg_tensor *g, bool user_rule)
{
    if (!tg__shape_agree(g->ndim, g->shape, m->ndim, m->shape)) {
        char a[160], b[160];
        tg_shape_str(g->ndim, g->shape, a, sizeof a); /* before g goes */
        tg_shape_str(m->ndim, m->shape, b, sizeof b);
        tg_release(g);
        if (user_rule)
            return tg__error_null(TG_ERR_AUTOGRAD,
                                  "backward: custom function '%s' returned a "
                                  "gradient of shape %s for input %d of shape %s",
                                  name, a, i, b);
        return tg__error_null(TG_ERR_INTERNAL,
                              "backward: gradient rule of '%s' gave shape %s "
                              "for input %d of shape %s", name, a, i, b);
    }
    if (g->dtype == m->dtype)
        return g;
    tg_tensor *c = tg_cast(g, m->dtype);
    tg_release(g);
    return c;
}

static tg_status call(const tg_vjp *v, tg_tensor *const *dy, tg_tensor **dx)
{
    if (!tg_op_has_vjp(v->op))
        return tg__error(TG_ERR_UNSUPPORTED,
                         "backward: op '%s' has no gradient rule (node '%s')",
                         v->op->name, v->name);
    tg_tensor *dy_full[TG_MAX_OP_OUTPUTS];
    for (int o = 0; o < v->n_out; o++) {
        /* integer and bool outputs (max_pool2d's indices) carry no gradient:
         * no zeros are made for them, they would be written for nothing */
        const tg_meta *m = &v->out_meta[o];
        /* unknown dims (graph mode, where outputs are given): zeros shaped
         * like the output when the graph runs */
        bool unknown = tg__shape_has_unknown(m->ndim, m->shape) && v->out && v->out[o];
        dy_full[o] = dy[o] || !tg_dtype_is_float(m->dtype) ? dy[o]
                     : unknown ? tg_zeros_like(v->out[o])
                               : tg_zeros(m->dtype, m->ndim, m->shape);
        if (!dy_full[o] && tg_dtype_is_float(m->dtype))
            return tg_last_status();
    }
    tg_grad_ctx g = {
        .op = v->op, .n_in = v->n_in, .n_out = v->n_out,
        .in = v->in, .out = v->out, .in_meta = v->in_meta,
        .dy = dy_full, .dx = dx, .needs_grad = v->needs_grad,
        .attr = v->attr, .attrs = v->attrs, .n_attrs = v->n_attrs,
    };
    if (v->op->grad)
        return v->op->grad(&g);
    /* a unary elementwise op: dx = dy * f'(x) from its derivative */
    g.dx[0] = v->op->deriv(dy_full[0], v->in[0], v->out[0], v->attr);
    return TG_OK;
}

/* Every floating-point input that needs a gradient got one, unless its
 * spec says its gradient is zero by definition: a NULL left is an op
 * inside the rule that failed (its error is the cause) or a rule that
 * forgot the input. Either is an error naming the op, never a gradient
 * silently missing. */
static tg_status check_given(const tg_vjp *v, tg_tensor *const *dx)
{
    for (int i = 0; i < v->n_in; i++) {
        const tg_arg_spec *a = tg_arg_at(v->op->inputs, i);
        if (dx[i] || !v->needs_grad[i] || !tg_dtype_is_float(v->in_meta[i].dtype) ||
            (a && (a->dtypes & TG_ARG_NO_GRAD)))
            continue;
        char node[300] = "";
        if (strcmp(v->name, v->op->name) != 0)
            snprintf(node, sizeof node, " (node '%s')", v->name);
        if (!tg__error_is_set())
            return tg__error(TG_ERR_INTERNAL, "backward: the gradient rule of '%s'%s gave "
                             "no gradient for input %d", v->op->name, node, i);
        char cause[600];
        snprintf(cause, sizeof cause, "%s", tg_last_error());
        return tg__error(tg_last_status(), "backward: the gradient rule of '%s'%s failed "
                         "for input %d: %s", v->op->name, node, i, cause);
    }
    return TG_OK;
}

tg_status tg__vjp_run(const tg_vjp *v, tg_tensor *const *dy, tg_tensor **dx)
{
    for (int i = 0; i < v->n_in; i++)
        dx[i] = NULL;
    tg_clear_error(); /* an error set from here on is the rule's */
    tg_scope_begin();
    tg_status s = call(v, dy, dx);
    if (s == TG_OK)
        s = check_given(v, dx);
    for (int i = 0; i < v->n_in; i++) {
        if (s == TG_OK && dx[i] && v->needs_grad[i])
            tg_retain(dx[i]); /* survives the scope: the caller owns it */
        else
            dx[i] = NULL;
    }
    tg_scope_end();
    for (int i = 0; i < v->n_in && s == TG_OK; i++)
        if (dx[i] && !(dx[i] = tg__grad_conform(v->name, i, &v->in_meta[i], dx[i], false)))
            s = tg_last_status();
    if (s != TG_OK)
        for (int i = 0; i < v->n_in; i++) {
            tg_release(dx[i]);
            dx[i] = NULL;
        }
    return s;
}
