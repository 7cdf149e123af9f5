/* The kernel of while_grad, the backward loop of while_loop's gradient
 * (TensorFlow's stacks): run the forward loop again, pushing the variables
 * each iteration starts from; then, for the trip count this run found,
 * pop them in reverse and run the body's gradient graph on each,
 * carrying the variables' gradients back and summing the captures'.
 * The history lives only inside this kernel: a loop whose gradient is
 * not asked for never stores it. */
#include "control/control.h"
#include "ops/elementwise.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

typedef struct stack {
    tg_tensor **t; /* nv per pushed iteration */
    int64_t n, cap;
    int nv;
} stack;

static tg_status push(stack *st, tg_tensor *const *vars)
{
    if (!TG_GROW(st->t, st->cap, (st->n + 1) * st->nv))
        return tg__error(TG_ERR_NOMEM, "while_grad: out of memory for the loop's history");
    for (int i = 0; i < st->nv; i++)
        st->t[st->n * st->nv + i] = tg_retain(vars[i]);
    st->n++;
    return TG_OK;
}

static void stack_free(stack *st)
{
    for (int64_t k = 0; k < st->n * st->nv; k++)
        tg_release(st->t[k]);
    free(st->t);
}

/* the forward loop, pushing the variables each iteration starts from */
static tg_status forward(const tg_while_attrs *a, const tg_loop_layout *l,
                         tg_tensor *const *in, stack *st)
{
    tg_tensor *vars[TG_MAX_OP_OUTPUTS];
    for (int i = 0; i < l->nv; i++)
        vars[i] = tg_retain(in[i]);
    tg_status s = TG_OK;
    bool go = true;
    for (int64_t it = 0; s == TG_OK; it++) {
        if ((s = tg__loop_test(a, l, vars, in + l->nv, it, &go)) != TG_OK || !go)
            break;
        if ((s = push(st, vars)) == TG_OK)
            s = tg__loop_step(a, l, vars, in + l->nv + l->nc);
    }
    for (int i = 0; i < l->nv; i++)
        tg_release(vars[i]);
    return s;
}

/* one backward step: (dv, dcap_t) = body_grad(vars_t, caps, dv, bg caps) */
static tg_status backward_step(const tg_while_attrs *a, const tg_loop_layout *l,
                               tg_tensor *const *vars, tg_tensor *const *in, tg_tensor **dv,
                               tg_tensor **dcap, int n_dcap)
{
    tg_tensor *bin[TG_MAX_OP_INPUTS], *res[TG_MAX_OP_OUTPUTS];
    int n = 0;
    for (int i = 0; i < l->nv; i++)
        bin[n++] = vars[i];
    for (int k = 0; k < l->nb; k++)
        bin[n++] = in[l->nv + l->nc + k];
    for (int k = 0; k < l->nd; k++)
        bin[n++] = dv[k];
    for (int k = 0; k < l->ng; k++)
        bin[n++] = in[l->nv + l->nc + l->nb + l->nd + k];
    tg_status s = tg__fgraph_run(a->body_grad, bin, res);
    if (s != TG_OK)
        return s;
    for (int k = 0; k < l->nd; k++) {
        tg_release(dv[k]);
        dv[k] = res[k];
    }
    for (int k = 0; k < n_dcap && s == TG_OK; k++) {
        tg_tensor *r = res[l->nd + k];
        if (!dcap[k]) {
            dcap[k] = r;
            continue;
        }
        tg_tensor *sum = tg_add(dcap[k], r);
        tg_release(r);
        tg_release(dcap[k]);
        dcap[k] = sum;
        if (!sum)
            s = tg_last_status();
    }
    return s;
}

static tg_status backward(const tg_while_attrs *a, const tg_loop_layout *l, tg_tensor *const *in,
                          stack *st, tg_op_ctx *c)
{
    int n_dcap = c->n_out - l->nd;
    tg_tensor *dv[TG_MAX_OP_OUTPUTS], *dcap[TG_MAX_OP_OUTPUTS] = {0};
    for (int k = 0; k < l->nd; k++)
        dv[k] = tg_retain(in[l->nv + l->nc + l->nb + k]);
    tg_status s = TG_OK;
    for (int64_t t = st->n - 1; t >= 0 && s == TG_OK; t--) {
        s = backward_step(a, l, st->t + t * st->nv, in, dv, dcap, n_dcap);
        for (int i = 0; i < st->nv; i++) { /* popped */
            tg_release(st->t[t * st->nv + i]);
            st->t[t * st->nv + i] = NULL;
        }
    }
    for (int k = 0; k < l->nd; k++) {
        if (s == TG_OK)
            tg__convert_into(c->out[k], dv[k]);
        tg_release(dv[k]);
    }
    for (int k = 0; k < n_dcap; k++) {
        if (s == TG_OK && dcap[k])
            tg__convert_into(c->out[l->nd + k], dcap[k]);
        else if (s == TG_OK) /* the loop never ran */
            memset(tg_data(c->out[l->nd + k]), 0,
                   (size_t)tg_numel(c->out[l->nd + k]) * tg_dtype_size(c->out[l->nd + k]->dtype));
        tg_release(dcap[k]);
    }
    return s;
}

tg_status tg__while_grad_kernel(tg_op_ctx *c)
{
    const tg_while_attrs *a = c->attr;
    tg_loop_layout l;
    tg_status s = tg__loop_layout("while_grad", a, c->n_in, &l);
    if (s != TG_OK)
        return s;
    stack st = {NULL, 0, 0, l.nv};
    int floor = tg__scope_suspend(); /* every reference here is owned */
    s = forward(a, &l, c->in, &st);
    if (s == TG_OK)
        s = backward(a, &l, c->in, &st, c);
    tg__scope_resume(floor);
    stack_free(&st);
    return s;
}
