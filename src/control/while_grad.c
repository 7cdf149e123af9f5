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

/* the body's gradient graph for these inputs: the one the rule traced, or
 * (variables whose shapes change) the one traced for their shapes, made
 * once per shape signature and kept on the body */
static tg_graph *body_grad_for(const tg_while_attrs *a, int n, tg_tensor *const *bin)
{
    if (a->body_grad)
        return a->body_grad;
    tg_fgraph *f = a->body->fn;
    tg_meta m[TG_MAX_OP_INPUTS];
    memset(m, 0, sizeof m);
    for (int i = 0; i < n; i++)
        tg_meta_of(bin[i], &m[i]);
    for (int k = 0; k < f->n_grads; k++)
        if (!memcmp(&f->grad_keys[(size_t)k * (size_t)n], m, (size_t)n * sizeof *m))
            return f->grads[k];
    tg_graph *g = tg__while_body_grad(NULL, a, m, a->grad_caps.n, a->grad_caps.v);
    tg_graph **grads = g ? realloc(f->grads, (size_t)(f->n_grads + 1) * sizeof *grads) : NULL;
    if (grads)
        f->grads = grads;
    tg_meta *keys = grads ? realloc(f->grad_keys, (size_t)(f->n_grads + 1) * (size_t)n *
                                                      sizeof *keys) : NULL;
    if (!keys) {
        tg_graph_free(g);
        return g ? tg__error_null(TG_ERR_NOMEM, "while_grad: out of memory") : NULL;
    }
    f->grad_keys = keys;
    memcpy(&keys[(size_t)f->n_grads * (size_t)n], m, (size_t)n * sizeof *m);
    f->n_key = n;
    f->grads[f->n_grads++] = g;
    return g;
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
    tg_graph *bg = body_grad_for(a, n, bin);
    tg_status s = bg ? tg__fgraph_run(bg, bin, res) : tg_last_status();
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

/* r into output o: copied into the executor's buffer, or handed over
 * when the shape was known only now (TG_OP_SHAPES_AT_RUN); consumes r */
static tg_status hand_out(tg_op_ctx *c, int o, tg_tensor *r)
{
    if (!c->out[o]) {
        c->out[o] = r;
        return TG_OK;
    }
    tg__convert_into(c->out[o], r);
    tg_release(r);
    return TG_OK;
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
    for (int k = 0; k < l->nd; k++)
        s = s == TG_OK ? hand_out(c, k, dv[k]) : (tg_release(dv[k]), s);
    for (int k = 0; k < n_dcap; k++) {
        tg_tensor *o = c->out[l->nd + k];
        if (s == TG_OK && !dcap[k] && o) /* the loop never ran */
            memset(tg_data(o), 0, (size_t)tg_numel(o) * tg_dtype_size(o->dtype));
        else if (s == TG_OK && !dcap[k])
            s = tg__error(TG_ERR_UNSUPPORTED, "while_grad '%s': the loop never ran and the "
                          "gradient of capture %d has a shape known only at run time",
                          a->name, k);
        else
            s = s == TG_OK ? hand_out(c, l->nd + k, dcap[k]) : (tg_release(dcap[k]), s);
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
