/* Reverse- and forward-mode rules of cond and while_loop, written with the
 * public control-flow functions, so that they serve graphs and higher
 * orders alike (a cond's gradient is itself a cond, and differentiable).
 *
 * cond: the gradient is a cond whose branches replay the forward branch on
 * their own placeholders and append its symbolic gradient
 * (tg_graph_gradients inside the new branch); the tangent likewise with
 * tg_graph_jvp.
 * while_loop: the gradient is a while_grad node that runs the loop again
 * pushing each iteration's variables, then the body's gradient graph
 * backwards popping them (TensorFlow's stacks; while_grad.c), so a loop
 * whose gradient nobody asks for keeps no history. The tangent is a loop
 * over the variables and their tangents. */
#include "control/control.h"

#include <stdio.h>
#include <string.h>

/* the tensor of the current graph standing for t (a capture when t is a
 * value of an enclosing graph); a new reference in the current scope */
static tg_tensor *here(tg_tensor *t)
{
    tg_graph *g = tg_graph_current();
    if (!t || !g || t->graph == g)
        return t;
    int v = tg__graph_input_value(g, t);
    return v < 0 ? NULL : tg__publish(tg__graph_symbolic(g, v));
}

/* ys[k] for k in idx that are values of the current graph (results that
 * are constants carry no gradient): compacted into ys_out with their
 * positions in pos; returns the count */
static int symbolic_ys(tg_tensor *const *ys, const int *idx, int n, tg_tensor **ys_out,
                       int *pos)
{
    int m = 0;
    for (int k = 0; k < n; k++)
        if (ys[idx[k]]->graph == tg_graph_current()) {
            ys_out[m] = ys[idx[k]];
            pos[m++] = k;
        }
    return m;
}

static tg_status zeros_for_null(tg_tensor **out, tg_tensor *const *like, int n)
{
    for (int k = 0; k < n; k++)
        if (!out[k] && !(out[k] = tg_zeros_like(like[k])))
            return tg_last_status();
    return TG_OK;
}

/* ---- cond ---------------------------------------------------------------------------- */
typedef struct cond_rule {
    const tg_cond_attrs *a;
    int np, nt, ne;        /* operands, captures of then and of else */
    int n_fo, fo[TG_MAX_OP_OUTPUTS]; /* floating-point outputs */
    int n_x, x[TG_MAX_OP_INPUTS];    /* the inputs (after pred) differentiated */
    bool then;             /* the branch the callback builds */
} cond_rule;

/* the branch's inputs from the callback's (operands, then caps, else caps) */
static const tg_graph *branch_inputs(const cond_rule *r, bool then, tg_tensor *const *in,
                                     tg_tensor **bin)
{
    memcpy(bin, in, (size_t)r->np * sizeof *bin);
    if (then)
        memcpy(bin + r->np, in + r->np, (size_t)r->nt * sizeof *bin);
    else
        memcpy(bin + r->np, in + r->np + r->nt, (size_t)r->ne * sizeof *bin);
    return then ? r->a->then_branch : r->a->else_branch;
}

static bool in_branch(const cond_rule *r, bool then, int i)
{
    return i < r->np || (then ? i < r->np + r->nt : i >= r->np + r->nt);
}

/* in: operands, then caps, else caps, then the output gradients */
static tg_status cond_grad_branch(void *user, tg_tensor *const *in, tg_tensor **out)
{
    cond_rule *r = user;
    bool then = r->then;
    r->then = !r->then; /* then is traced first, else second */
    tg_tensor *bin[TG_MAX_OP_INPUTS], *ys[TG_MAX_OP_OUTPUTS], *yf[TG_MAX_OP_OUTPUTS];
    tg_tensor *xs[TG_MAX_OP_INPUTS], *dx[TG_MAX_OP_INPUTS] = {0}, *dys[TG_MAX_OP_OUTPUTS];
    int pos[TG_MAX_OP_OUTPUTS], xpos[TG_MAX_OP_INPUTS], n_xs = 0;
    const tg_graph *b = branch_inputs(r, then, in, bin);
    tg_status s = tg__fgraph_call(b, bin, ys);
    if (s != TG_OK)
        return s;
    int n_ys = symbolic_ys(ys, r->fo, r->n_fo, yf, pos);
    int dy0 = r->np + r->nt + r->ne;
    for (int k = 0; k < n_ys; k++)
        dys[k] = in[dy0 + pos[k]];
    for (int k = 0; k < r->n_x; k++)
        if (in_branch(r, then, r->x[k])) {
            xpos[n_xs] = k;
            xs[n_xs++] = in[r->x[k]];
        }
    tg_tensor *got[TG_MAX_OP_INPUTS] = {0};
    if (n_ys > 0 && n_xs > 0)
        s = tg_graph_gradients(tg_graph_current(), n_ys, yf, dys, n_xs, xs, got);
    for (int k = 0; k < n_xs; k++)
        dx[xpos[k]] = got[k];
    for (int k = 0; k < r->n_x; k++)
        out[k] = dx[k];
    tg_tensor *like[TG_MAX_OP_INPUTS];
    for (int k = 0; k < r->n_x; k++)
        like[k] = in[r->x[k]];
    return s == TG_OK ? zeros_for_null(out, like, r->n_x) : s;
}

static void cond_rule_init(cond_rule *r, const tg_cond_attrs *a)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    r->np = a->then_branch->fn->n_params;
    r->nt = a->then_branch->fn->n_caps;
    r->ne = a->else_branch->fn->n_caps;
    r->then = true;
}

tg_status tg__cond_grad(tg_grad_ctx *g)
{
    cond_rule r;
    cond_rule_init(&r, g->attr);
    tg_tensor *in[TG_MAX_OP_INPUTS], *out[TG_MAX_OP_INPUTS];
    int n = g->n_in - 1;
    memcpy(in, g->in + 1, (size_t)n * sizeof *in);
    for (int o = 0; o < g->n_out; o++)
        if (g->dy[o]) {
            r.fo[r.n_fo++] = o;
            in[n++] = g->dy[o];
        }
    for (int i = 1; i < g->n_in; i++)
        if (g->needs_grad[i])
            r.x[r.n_x++] = i - 1;
    if (r.n_x == 0)
        return TG_OK;
    if (r.n_fo == 0) { /* no floating-point output: every gradient is zero */
        for (int k = 0; k < r.n_x; k++)
            if (!(g->dx[r.x[k] + 1] = tg_zeros_like(g->in[r.x[k] + 1])))
                return tg_last_status();
        return TG_OK;
    }
    tg_status s = tg_cond(g->in[0], cond_grad_branch, cond_grad_branch, &r, n, in, r.n_x,
                          out);
    for (int k = 0; k < r.n_x && s == TG_OK; k++)
        g->dx[r.x[k] + 1] = out[k];
    return s;
}

/* in: operands, then caps, else caps, then the tangents of r->x */
static tg_status cond_jvp_branch(void *user, tg_tensor *const *in, tg_tensor **out)
{
    cond_rule *r = user;
    bool then = r->then;
    r->then = !r->then;
    tg_tensor *bin[TG_MAX_OP_INPUTS], *ys[TG_MAX_OP_OUTPUTS], *yf[TG_MAX_OP_OUTPUTS];
    tg_tensor *xs[TG_MAX_OP_INPUTS], *ts[TG_MAX_OP_INPUTS], *got[TG_MAX_OP_OUTPUTS] = {0};
    int pos[TG_MAX_OP_OUTPUTS], n_xs = 0;
    const tg_graph *b = branch_inputs(r, then, in, bin);
    tg_status s = tg__fgraph_call(b, bin, ys);
    if (s != TG_OK)
        return s;
    int n_ys = symbolic_ys(ys, r->fo, r->n_fo, yf, pos);
    int t0 = r->np + r->nt + r->ne;
    for (int k = 0; k < r->n_x; k++)
        if (in_branch(r, then, r->x[k])) {
            xs[n_xs] = in[r->x[k]];
            ts[n_xs++] = in[t0 + k];
        }
    if (n_ys > 0 && n_xs > 0)
        s = tg_graph_jvp(tg_graph_current(), n_xs, xs, ts, n_ys, yf, got);
    for (int k = 0; k < r->n_fo; k++)
        out[k] = NULL;
    for (int k = 0; k < n_ys; k++)
        out[pos[k]] = got[k];
    tg_tensor *like[TG_MAX_OP_OUTPUTS];
    for (int k = 0; k < r->n_fo; k++)
        like[k] = ys[r->fo[k]];
    return s == TG_OK ? zeros_for_null(out, like, r->n_fo) : s;
}

tg_status tg__cond_jvp(tg_jvp_ctx *c)
{
    cond_rule r;
    cond_rule_init(&r, c->attr);
    tg_tensor *in[TG_MAX_OP_INPUTS], *out[TG_MAX_OP_OUTPUTS];
    int n = c->n_in - 1;
    memcpy(in, c->in + 1, (size_t)n * sizeof *in);
    for (int o = 0; o < c->n_out; o++)
        if (tg_dtype_is_float(c->out_meta[o].dtype))
            r.fo[r.n_fo++] = o;
    for (int i = 1; i < c->n_in; i++)
        if (c->dx[i] && tg_dtype_is_float(c->in_meta[i].dtype)) {
            r.x[r.n_x++] = i - 1;
            in[n++] = c->dx[i];
        }
    if (r.n_fo == 0 || r.n_x == 0)
        return TG_OK;
    if (n > TG_MAX_OP_INPUTS - 1)
        return tg__error(TG_ERR_UNSUPPORTED, "cond: %d inputs with their tangents, at most "
                         "%d are supported", n, TG_MAX_OP_INPUTS - 1);
    tg_status s = tg_cond(c->in[0], cond_jvp_branch, cond_jvp_branch, &r, n, in, r.n_fo, out);
    for (int k = 0; k < r.n_fo && s == TG_OK; k++)
        c->dy[r.fo[k]] = out[k];
    return s;
}

/* ---- while_loop: reverse mode ------------------------------------------------------ */
typedef struct loop_rule {
    const tg_while_attrs *a;
    tg_loop_layout l;
    int n_fv, fv[TG_MAX_OP_OUTPUTS]; /* floating-point variables */
    int n_fb, fb[TG_MAX_OP_INPUTS];  /* body captures differentiated */
    tg_tensor *const *ccaps, *const *bcaps; /* the node's (enclosing graph) */
    tg_tensor *const *bcap_tangents;
} loop_rule;

/* body_grad(vars, body caps, d vars_out) -> (d vars_in, d caps) */
static tg_status body_grad_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const loop_rule *r = user;
    const tg_loop_layout *l = &r->l;
    tg_tensor *ys[TG_MAX_OP_OUTPUTS], *yf[TG_MAX_OP_OUTPUTS], *dys[TG_MAX_OP_OUTPUTS];
    tg_tensor *xs[TG_MAX_OP_INPUTS], *like[TG_MAX_OP_INPUTS];
    int pos[TG_MAX_OP_OUTPUTS], n_xs = 0;
    tg_status s = tg__fgraph_call(r->a->body, in, ys);
    if (s != TG_OK)
        return s;
    int n_ys = symbolic_ys(ys, r->fv, r->n_fv, yf, pos);
    for (int k = 0; k < n_ys; k++)
        dys[k] = in[l->nv + l->nb + pos[k]];
    for (int k = 0; k < r->n_fv; k++)
        xs[n_xs++] = in[r->fv[k]];
    for (int k = 0; k < r->n_fb; k++)
        xs[n_xs++] = in[l->nv + r->fb[k]];
    for (int k = 0; k < n_xs; k++) {
        like[k] = xs[k];
        out[k] = NULL;
    }
    if (n_ys > 0)
        s = tg_graph_gradients(tg_graph_current(), n_ys, yf, dys, n_xs, xs, out);
    return s == TG_OK ? zeros_for_null(out, like, n_xs) : s;
}

static void loop_rule_init(loop_rule *r, const tg_while_attrs *a, const tg_loop_layout *l,
                           const tg_meta *in_meta)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    r->l = *l;
    for (int i = 0; i < l->nv; i++)
        if (tg_dtype_is_float(in_meta[i].dtype))
            r->fv[r->n_fv++] = i;
}

tg_graph *tg__while_body_grad(tg_graph *parent, const tg_while_attrs *a, const tg_meta *m,
                              int n_caps, const int64_t *caps)
{
    loop_rule r;
    tg_loop_layout l;
    if (tg__loop_layout("while_loop", a, a->body->fn->n_params + a->cond->fn->n_caps +
                                             a->body->fn->n_caps, &l) != TG_OK)
        return NULL;
    loop_rule_init(&r, a, &l, m);
    for (int k = 0; k < n_caps; k++)
        r.fb[r.n_fb++] = (int)caps[k];
    char what[200];
    snprintf(what, sizeof what, "the gradient of while_loop '%s'", a->name);
    return tg__fgraph_trace(parent, "while_body_grad", what, body_grad_fn, &r,
                            l.nv + l.nb + r.n_fv, m, r.n_fv + r.n_fb);
}

tg_status tg__while_grad(tg_grad_ctx *g)
{
    const tg_while_attrs *a = g->attr;
    loop_rule r;
    tg_loop_layout l;
    tg_status s = tg__loop_layout("while_loop", a, g->n_in, &l);
    if (s != TG_OK)
        return s;
    loop_rule_init(&r, a, &l, g->in_meta);
    for (int k = 0; k < l.nb; k++)
        if (g->needs_grad[l.nv + l.nc + k])
            r.fb[r.n_fb++] = k;
    for (int k = 0; k < l.nc; k++) /* the condition's values get no gradient */
        if (g->needs_grad[l.nv + k] && !(g->dx[l.nv + k] = tg_zeros_like(g->in[l.nv + k])))
            return tg_last_status();
    if (r.n_fv == 0)
        return TG_OK;
    /* the body's own inputs: variables with a shape invariant keep its -1
     * dims, and so do their gradients */
    tg_meta m[TG_MAX_OP_INPUTS];
    const tg_fgraph *fb = a->body->fn;
    int np = 0;
    bool unknown = false;
    for (int i = 0; i < l.nv + l.nb; i++)
        m[np++] = a->body->values[fb->inputs[i]].meta;
    for (int k = 0; k < r.n_fv; k++)
        m[np++] = a->body->values[fb->inputs[r.fv[k]]].meta;
    for (int i = 0; i < np; i++)
        unknown |= tg__shape_has_unknown(m[i].ndim, m[i].shape);
    int64_t caps[TG_MAX_OP_INPUTS];
    for (int k = 0; k < r.n_fb; k++)
        caps[k] = r.fb[k];
    /* shapes known only at run time: the kernel traces body_grad per shape
     * signature (gradient rules read concrete shapes) */
    tg_graph *bg = unknown ? NULL : tg__while_body_grad(tg_graph_current(), a, m, r.n_fb, caps);
    if (!unknown && !bg)
        return tg_last_status();
    tg_tensor *in[TG_MAX_OP_INPUTS], *out[TG_MAX_OP_OUTPUTS];
    int n = 0;
    for (int i = 0; i < l.nv + l.nc + l.nb; i++)
        in[n++] = g->in[i];
    for (int k = 0; k < r.n_fv; k++)
        in[n++] = g->dy[r.fv[k]];
    tg_attr attrs[5] = {
        {.name = "cond", .type = TG_ATTR_GRAPH, .u.g = a->cond},
        {.name = "body", .type = TG_ATTR_GRAPH, .u.g = a->body},
        {.name = "max_iterations", .type = TG_ATTR_INT, .u.i = a->max_iterations},
        {.name = "name", .type = TG_ATTR_STRING, .u.s = a->name},
        bg ? (tg_attr){.name = "body_grad", .type = TG_ATTR_GRAPH, .u.g = bg}
           : (tg_attr){.name = "grad_caps", .type = TG_ATTR_INTS, .u.ints = {caps, r.n_fb}}};
    s = tg__control_node(&tg_op_while_grad, n, in, bg ? 1 : 0, &bg, attrs, 5, out);
    tg_graph_free(bg);
    if (s != TG_OK)
        return s;
    for (int k = 0; k < r.n_fv; k++) {
        if (g->needs_grad[r.fv[k]])
            g->dx[r.fv[k]] = out[k];
    }
    for (int k = 0; k < r.n_fb; k++)
        g->dx[l.nv + l.nc + r.fb[k]] = out[r.n_fv + k];
    return TG_OK;
}

/* ---- while_loop: forward mode ------------------------------------------------------ */
/* in: the variables, then the tangents of the float ones */
static tg_status jvp_cond_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const loop_rule *r = user;
    tg_tensor *cin[TG_MAX_OP_INPUTS];
    memcpy(cin, in, (size_t)r->l.nv * sizeof *cin);
    memcpy(cin + r->l.nv, r->ccaps, (size_t)r->l.nc * sizeof *cin);
    return tg__fgraph_call(r->a->cond, cin, out);
}

static tg_status jvp_body_fn(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const loop_rule *r = user;
    const tg_loop_layout *l = &r->l;
    tg_tensor *bin[TG_MAX_OP_INPUTS], *ys[TG_MAX_OP_OUTPUTS], *yf[TG_MAX_OP_OUTPUTS];
    tg_tensor *xs[TG_MAX_OP_INPUTS], *ts[TG_MAX_OP_INPUTS], *got[TG_MAX_OP_OUTPUTS] = {0};
    int pos[TG_MAX_OP_OUTPUTS], n_xs = 0;
    memcpy(bin, in, (size_t)l->nv * sizeof *bin);
    memcpy(bin + l->nv, r->bcaps, (size_t)l->nb * sizeof *bin);
    tg_status s = tg__fgraph_call(r->a->body, bin, ys);
    if (s != TG_OK)
        return s;
    int n_ys = symbolic_ys(ys, r->fv, r->n_fv, yf, pos);
    for (int k = 0; k < r->n_fv; k++) {
        xs[n_xs] = in[r->fv[k]];
        ts[n_xs++] = in[l->nv + k];
    }
    for (int k = 0; k < r->n_fb; k++) {
        if (!(xs[n_xs] = here(r->bcaps[r->fb[k]])) ||
            !(ts[n_xs] = here(r->bcap_tangents[r->fb[k]])))
            return tg_last_status();
        n_xs++;
    }
    if (n_ys > 0)
        s = tg_graph_jvp(tg_graph_current(), n_xs, xs, ts, n_ys, yf, got);
    for (int i = 0; i < l->nv; i++)
        out[i] = ys[i];
    for (int k = 0; k < r->n_fv; k++)
        out[l->nv + k] = NULL;
    for (int k = 0; k < n_ys; k++)
        out[l->nv + pos[k]] = got[k];
    return s == TG_OK ? zeros_for_null(out + l->nv, in + l->nv, r->n_fv) : s;
}

tg_status tg__while_jvp(tg_jvp_ctx *c)
{
    const tg_while_attrs *a = c->attr;
    loop_rule r;
    tg_loop_layout l;
    tg_status s = tg__loop_layout("while_loop", a, c->n_in, &l);
    if (s != TG_OK)
        return s;
    loop_rule_init(&r, a, &l, c->in_meta);
    if (r.n_fv == 0)
        return TG_OK;
    if (l.nv + r.n_fv > TG_MAX_OP_OUTPUTS)
        return tg__error(TG_ERR_UNSUPPORTED, "while_loop '%s': forward mode carries %d "
                         "variables and tangents, at most %d are supported", a->name,
                         l.nv + r.n_fv, TG_MAX_OP_OUTPUTS);
    r.ccaps = c->in + l.nv;
    r.bcaps = c->in + l.nv + l.nc;
    r.bcap_tangents = c->dx + l.nv + l.nc;
    for (int k = 0; k < l.nb; k++)
        if (c->dx[l.nv + l.nc + k] && tg_dtype_is_float(c->in_meta[l.nv + l.nc + k].dtype))
            r.fb[r.n_fb++] = k;
    tg_tensor *init[TG_MAX_OP_OUTPUTS], *out[TG_MAX_OP_OUTPUTS];
    memcpy(init, c->in, (size_t)l.nv * sizeof *init);
    for (int k = 0; k < r.n_fv; k++)
        if (!(init[l.nv + k] = c->dx[r.fv[k]] ? c->dx[r.fv[k]] : tg_zeros_like(c->in[r.fv[k]])))
            return tg_last_status();
    tg_loop_options o = {.max_iterations = a->max_iterations, .name = a->name};
    s = tg_while_loop(jvp_cond_fn, jvp_body_fn, &r, l.nv + r.n_fv, init, out, &o);
    for (int k = 0; k < r.n_fv && s == TG_OK; k++)
        c->dy[r.fv[k]] = out[l.nv + k];
    return s;
}
