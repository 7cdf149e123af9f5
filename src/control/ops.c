/* The control-flow ops: cond (ONNX If), while_loop (ONNX Loop without the
 * trip-count input) and while_grad (the backward loop of while_loop's
 * gradient). Their attributes hold body graphs (graph/funcgraph.c); their
 * inputs are the bodies' parameters followed by each body's captures, in
 * the order of the graph attributes. Kernels run the bodies through the
 * sessions cached on the bodies, so each body is planned and memory-planned
 * once, not per call. The rules are in control/rules.c. */
#include "control/control.h"
#include "ops/elementwise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attributes ------------------------------------------------------------------ */
static const tg_attr_spec cond_specs[] = {
    TG_SPEC_GRAPH(tg_cond_attrs, then_branch, TG_REQUIRED),
    TG_SPEC_GRAPH(tg_cond_attrs, else_branch, TG_REQUIRED),
    {0}};

#define LOOP_SPECS(S)                                                            \
    TG_SPEC_GRAPH(S, cond, TG_REQUIRED), TG_SPEC_GRAPH(S, body, TG_REQUIRED),    \
        TG_SPEC_INT(S, max_iterations, 0, TG_MIN(0)),                            \
        {.name = "name", .type = TG_ATTR_STRING, .field = TG_FIELD_STRING,       \
         .offset = offsetof(S, name), .s = "while_loop"}

static const tg_attr_spec while_specs[] = {LOOP_SPECS(tg_while_attrs), {0}};
static const tg_attr_spec while_grad_specs[] = {
    LOOP_SPECS(tg_while_attrs), TG_SPEC_GRAPH(tg_while_attrs, body_grad),
    TG_SPEC_INTS(tg_while_attrs, grad_caps, TG_MIN(0)), {0}};

/* the output counts (count_out) come from the bodies, read from the list
 * decoded with the op's own schema */
static int body_results(const tg_graph *b)
{
    if (b && b->fn)
        return b->fn->n_results;
    tg__error(TG_ERR_ARG, "control flow: a graph attribute is not a body graph");
    return -1;
}

static int cond_count(const tg_attr *a, int n)
{
    tg_cond_attrs d;
    return tg_attrs_decode(&tg_op_cond, a, n, &d) == TG_OK ? body_results(d.then_branch) : -1;
}

static int while_count(const tg_attr *a, int n)
{
    tg_while_attrs d;
    return tg_attrs_decode(&tg_op_while_loop, a, n, &d) == TG_OK ? body_results(d.body) : -1;
}

/* body_grad's results; without it, one per float variable and one per
 * differentiated capture */
static int while_grad_count(const tg_attr *a, int n)
{
    tg_while_attrs d;
    if (tg_attrs_decode(&tg_op_while_grad, a, n, &d) != TG_OK)
        return -1;
    if (d.body_grad || !d.body || !d.body->fn)
        return body_results(d.body_grad ? d.body_grad : d.body);
    int k = d.grad_caps.n;
    for (int i = 0; i < d.body->fn->n_params; i++)
        k += tg_dtype_is_float(d.body->values[d.body->fn->inputs[i]].meta.dtype);
    return k;
}

/* ---- shared checks ----------------------------------------------------------------- */
static bool meta_fits(const tg_meta *want, const tg_meta *have)
{
    if (want->dtype != have->dtype || want->ndim != have->ndim)
        return false;
    for (int d = 0; d < want->ndim; d++)
        if (want->shape[d] >= 0 && have->shape[d] >= 0 && want->shape[d] != have->shape[d])
            return false;
    return true;
}

const char *tg__meta_str(const tg_meta *m, char *buf, size_t len)
{
    char s[160];
    snprintf(buf, len, "%s%s", tg_dtype_name(m->dtype),
             tg_shape_str(m->ndim, m->shape, s, sizeof s));
    return buf;
}

/* in[0..n) must fit body b's inputs from `first` on */
static tg_status check_inputs(const char *op, const tg_graph *b, int first, int n,
                              tg_tensor *const *in)
{
    for (int i = 0; i < n; i++) {
        tg_meta have, want = b->values[b->fn->inputs[first + i]].meta;
        tg_meta_of(in[i], &have);
        if (!meta_fits(&want, &have)) {
            char a[200], c[200];
            return tg__error(TG_ERR_SHAPE, "%s: input %d of body '%s' is %s, given %s", op,
                             first + i, b->name, tg__meta_str(&want, a, sizeof a),
                             tg__meta_str(&have, c, sizeof c));
        }
    }
    return TG_OK;
}

static tg_status check_count(const char *op, int n_in, int want)
{
    if (n_in == want)
        return TG_OK;
    return tg__error(TG_ERR_ARG, "%s: %d inputs, its bodies take %d", op, n_in, want);
}

static tg_status check_flag(const char *op, const tg_meta *m, const char *what)
{
    if (m->dtype == TG_BOOL && tg__shape_numel(m->ndim, m->shape) == 1)
        return TG_OK;
    char a[200];
    return tg__error(TG_ERR_DTYPE, "%s: %s must be a bool tensor of one element, got %s",
                     op, what, tg__meta_str(m, a, sizeof a));
}

static const tg_meta *result_meta(const tg_graph *b, int r)
{
    return &b->values[b->fn->results[r]].meta;
}

/* the output's meta: a dim unknown in either branch is unknown, decided
 * by the branch the run takes (cond makes such outputs itself) */
static tg_meta merged(const tg_meta *a, const tg_meta *b)
{
    tg_meta m = *a;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            m.shape[i] = -1;
    return m;
}

/* ---- cond -------------------------------------------------------------------------- */
static tg_status cond_infer(tg_op_ctx *c)
{
    const tg_cond_attrs *a = c->attr;
    const tg_graph *t = a->then_branch, *e = a->else_branch;
    const tg_fgraph *ft = t->fn, *fe = e->fn;
    tg_meta pm;
    tg_meta_of(c->in[0], &pm);
    tg_status s = check_flag("cond", &pm, "the predicate");
    if (s == TG_OK && ft->n_params != fe->n_params)
        s = tg__error(TG_ERR_ARG, "cond: the branches take %d and %d inputs", ft->n_params,
                      fe->n_params);
    if (s == TG_OK)
        s = check_count("cond", c->n_in, 1 + ft->n_params + ft->n_caps + fe->n_caps);
    if (s == TG_OK)
        s = check_inputs("cond", t, 0, ft->n_params + ft->n_caps, c->in + 1);
    if (s == TG_OK)
        s = check_inputs("cond", e, ft->n_params, fe->n_caps, c->in + 1 + ft->n_params + ft->n_caps);
    if (s == TG_OK && ft->n_results != fe->n_results)
        s = tg__error(TG_ERR_ARG, "cond: then branch '%s' gives %d results, else branch "
                      "'%s' gives %d", t->name, ft->n_results, e->name, fe->n_results);
    for (int o = 0; o < ft->n_results && s == TG_OK; o++) {
        const tg_meta *mt = result_meta(t, o), *me = result_meta(e, o);
        char x[200], y[200];
        /* a length known only at run time (after nonzero, say) may meet a
         * known one, such as an empty result */
        if (mt->dtype != me->dtype || !tg__shape_agree(mt->ndim, mt->shape, me->ndim, me->shape))
            s = tg__error(mt->dtype != me->dtype ? TG_ERR_DTYPE : TG_ERR_SHAPE,
                          "cond: output %d is %s in then branch '%s' but %s in else branch "
                          "'%s'; both branches must give the same dtypes and shapes", o,
                          tg__meta_str(mt, x, sizeof x), t->name,
                          tg__meta_str(me, y, sizeof y), e->name);
        else
            c->out_meta[o] = merged(mt, me);
    }
    return s;
}

/* copies body results into the outputs the executor allocated, or hands
 * them over where it left an output to the kernel (TG_OP_SHAPES_AT_RUN:
 * a shape known only now) */
static void deliver(tg_op_ctx *c, tg_tensor **res, int first)
{
    for (int o = 0; o < c->n_out; o++) {
        if (!c->out[o]) {
            c->out[o] = res[first + o];
            continue;
        }
        tg__convert_into(c->out[o], res[first + o]);
        tg_release(res[first + o]);
    }
}

_Static_assert(TG_CONTROL_MAX_RESULTS == TG_MAX_OP_OUTPUTS, "one limit for results");

int tg__count_results(tg_tensor *const *out)
{
    int n = 0;
    while (n < TG_MAX_OP_OUTPUTS && out[n])
        n++;
    return n;
}

bool tg__flag_value(const tg_tensor *t)
{
    return tg_item(t) != 0;
}

static tg_status cond_kernel(tg_op_ctx *c)
{
    const tg_cond_attrs *a = c->attr;
    const tg_fgraph *ft = a->then_branch->fn, *fe = a->else_branch->fn;
    bool p = tg__flag_value(c->in[0]);
    tg_tensor *in[TG_MAX_OP_INPUTS], *res[TG_MAX_OP_OUTPUTS];
    int np = ft->n_params;
    memcpy(in, c->in + 1, (size_t)np * sizeof *in);
    if (p)
        memcpy(in + np, c->in + 1 + np, (size_t)ft->n_caps * sizeof *in);
    else
        memcpy(in + np, c->in + 1 + np + ft->n_caps, (size_t)fe->n_caps * sizeof *in);
    tg_status s = tg__fgraph_run(p ? a->then_branch : a->else_branch, in, res);
    if (s == TG_OK)
        deliver(c, res, 0);
    return s;
}

static const tg_arg_spec cond_in[] = {{"pred", TG_DTS_BOOL},
                                      {"inputs", TG_DTS_ANY | TG_ARG_VARIADIC}, {NULL, 0}};
static const tg_arg_spec any_out[] = {{"outputs", TG_DTS_ANY | TG_ARG_VARIADIC}, {NULL, 0}};

const tg_op_def tg_op_cond = {
    .name = "cond", .n_in = -1, .n_out = -1, .inputs = cond_in, .outputs = any_out,
    .attrs = {cond_specs, sizeof(tg_cond_attrs)}, .flags = TG_OP_PURE | TG_OP_SHAPES_AT_RUN,
    .save_inputs = TG_SAVE_ALL, .infer = cond_infer, .kernel = {cond_kernel},
    .grad = tg__cond_grad, .jvp = tg__cond_jvp, .count_out = cond_count,
};

/* ---- while_loop -------------------------------------------------------------------- */
tg_status tg__loop_layout(const char *op, const tg_while_attrs *a, int n_in,
                          tg_loop_layout *l)
{
    const tg_fgraph *fc = a->cond->fn, *fb = a->body->fn;
    l->nv = fb->n_params;
    l->nc = fc->n_caps;
    l->nb = fb->n_caps;
    if (fc->n_params != l->nv || fb->n_results != l->nv || fc->n_results != 1)
        return tg__error(TG_ERR_ARG, "%s '%s': the condition takes %d inputs and gives %d "
                         "results, the body takes %d and gives %d (expected the loop "
                         "variables and one flag)", op, a->name, fc->n_params,
                         fc->n_results, fb->n_params, fb->n_results);
    int want = l->nv + l->nc + l->nb;
    l->nd = l->ng = 0;
    if (a->body_grad) {
        const tg_fgraph *fg = a->body_grad->fn;
        l->nd = fg->n_params - l->nv - l->nb;
        l->ng = fg->n_caps;
    } else if (strcmp(op, "while_grad") == 0) { /* body_grad made at run time */
        for (int i = 0; i < l->nv; i++)
            l->nd += tg_dtype_is_float(a->body->values[fb->inputs[i]].meta.dtype);
    }
    want += l->nd + l->ng;
    return n_in > want || n_in < want ? check_count(op, n_in, want) : TG_OK;
}

static tg_status while_infer(tg_op_ctx *c)
{
    const tg_while_attrs *a = c->attr;
    tg_loop_layout l;
    tg_status s = tg__loop_layout("while_loop", a, c->n_in, &l);
    if (s == TG_OK)
        s = check_inputs("while_loop", a->cond, 0, l.nv, c->in);
    if (s == TG_OK)
        s = check_inputs("while_loop", a->cond, l.nv, l.nc, c->in + l.nv);
    if (s == TG_OK)
        s = check_inputs("while_loop", a->body, 0, l.nv, c->in);
    if (s == TG_OK)
        s = check_inputs("while_loop", a->body, l.nv, l.nb, c->in + l.nv + l.nc);
    if (s == TG_OK)
        s = check_flag("while_loop", result_meta(a->cond, 0), "the condition's result");
    for (int i = 0; i < l.nv && s == TG_OK; i++) {
        const tg_meta *m = result_meta(a->body, i);
        const tg_meta *want = &a->body->values[a->body->fn->inputs[i]].meta;
        char x[200], y[200];
        if (!meta_fits(want, m))
            s = tg__error(TG_ERR_SHAPE, "while_loop '%s': loop variable %d enters the body "
                          "as %s and leaves it as %s; a loop variable keeps its dtype and "
                          "shape", a->name, i, tg__meta_str(want, x, sizeof x),
                          tg__meta_str(m, y, sizeof y));
        else
            c->out_meta[i] = *want;
    }
    return s;
}

/* the loop's inputs for a body: the variables, then that body's captures */
static void body_inputs(tg_tensor **dst, tg_tensor *const *vars, int nv,
                        tg_tensor *const *caps, int nk)
{
    memcpy(dst, vars, (size_t)nv * sizeof *dst);
    memcpy(dst + nv, caps, (size_t)nk * sizeof *dst);
}

tg_status tg__loop_test(const tg_while_attrs *a, const tg_loop_layout *l,
                        tg_tensor *const *vars, tg_tensor *const *caps, int64_t it,
                        bool *go)
{
    tg_tensor *in[TG_MAX_OP_INPUTS], *flag = NULL;
    body_inputs(in, vars, l->nv, caps, l->nc);
    tg_status s = tg__fgraph_run(a->cond, in, &flag);
    if (s != TG_OK)
        return s;
    *go = tg__flag_value(flag);
    tg_release(flag);
    if (*go && a->max_iterations > 0 && it >= a->max_iterations)
        return tg__error(TG_ERR_ARG, "while_loop '%s': the condition still holds after "
                         "max_iterations (%lld) iterations", a->name,
                         (long long)a->max_iterations);
    return TG_OK;
}

tg_status tg__loop_step(const tg_while_attrs *a, const tg_loop_layout *l, tg_tensor **vars,
                        tg_tensor *const *caps)
{
    tg_tensor *in[TG_MAX_OP_INPUTS], *next[TG_MAX_OP_OUTPUTS];
    body_inputs(in, vars, l->nv, caps, l->nb);
    tg_status s = tg__fgraph_run(a->body, in, next);
    if (s != TG_OK)
        return s;
    for (int i = 0; i < l->nv; i++) {
        tg_release(vars[i]);
        vars[i] = next[i];
    }
    return TG_OK;
}

static tg_status while_kernel(tg_op_ctx *c)
{
    const tg_while_attrs *a = c->attr;
    tg_loop_layout l;
    tg_status s = tg__loop_layout("while_loop", a, c->n_in, &l);
    tg_tensor *vars[TG_MAX_OP_OUTPUTS];
    for (int i = 0; i < l.nv; i++)
        vars[i] = tg_retain(c->in[i]);
    bool go = true;
    for (int64_t it = 0; s == TG_OK; it++) {
        if ((s = tg__loop_test(a, &l, vars, c->in + l.nv, it, &go)) != TG_OK || !go)
            break;
        s = tg__loop_step(a, &l, vars, c->in + l.nv + l.nc);
    }
    if (s == TG_OK)
        deliver(c, vars, 0);
    else
        for (int i = 0; i < l.nv; i++)
            tg_release(vars[i]);
    return s;
}

static const tg_arg_spec while_in[] = {{"inputs", TG_DTS_ANY | TG_ARG_VARIADIC}, {NULL, 0}};

const tg_op_def tg_op_while_loop = {
    .name = "while_loop", .n_in = -1, .n_out = -1, .inputs = while_in, .outputs = any_out,
    .attrs = {while_specs, sizeof(tg_while_attrs)}, .flags = TG_OP_PURE | TG_OP_SHAPES_AT_RUN,
    .save_inputs = TG_SAVE_ALL, .save_outputs = TG_SAVE_ALL, .infer = while_infer,
    .kernel = {while_kernel}, .grad = tg__while_grad, .jvp = tg__while_jvp,
    .count_out = while_count,
};

/* ---- while_grad: the backward loop ------------------------------------------------- */
static tg_status while_grad_infer(tg_op_ctx *c)
{
    const tg_while_attrs *a = c->attr;
    tg_loop_layout l;
    tg_status s = tg__loop_layout("while_grad", a, c->n_in, &l);
    if (s != TG_OK || a->body_grad) {
        for (int o = 0; o < c->n_out && s == TG_OK; o++)
            c->out_meta[o] = *result_meta(a->body_grad, o);
        return s;
    }
    /* made at run time: gradients of the float variables' initial values
     * and of the captures, shaped like them */
    int o = 0;
    for (int i = 0; i < l.nv; i++)
        if (tg_dtype_is_float(c->in[i]->dtype))
            tg_meta_of(c->in[i], &c->out_meta[o++]);
    for (int k = 0; k < a->grad_caps.n; k++) {
        if (a->grad_caps.v[k] >= l.nb)
            return tg__error(TG_ERR_ARG, "while_grad '%s': grad_caps names capture %lld of "
                             "%d", a->name, (long long)a->grad_caps.v[k], l.nb);
        tg_meta_of(c->in[l.nv + l.nc + a->grad_caps.v[k]], &c->out_meta[o++]);
    }
    return TG_OK;
}

const tg_op_def tg_op_while_grad = {
    .name = "while_grad", .n_in = -1, .n_out = -1, .inputs = while_in, .outputs = any_out,
    .attrs = {while_grad_specs, sizeof(tg_while_attrs)},
    .flags = TG_OP_PURE | TG_OP_NO_VJP | TG_OP_NO_JVP | TG_OP_SHAPES_AT_RUN,
    .infer = while_grad_infer,
    .kernel = {tg__while_grad_kernel}, .count_out = while_grad_count,
};

const tg_op_def *const tg_ops_control[] = {&tg_op_cond, &tg_op_while_loop, &tg_op_while_grad,
                                           NULL};
