/* tg_cond and tg_while_loop: in eager mode the callbacks run on the host
 * (their ops go on the autograd tape); in graph mode they are traced into
 * body graphs and one control node is appended (control/ops.c). */
#include "control/control.h"

#include <stdio.h>
#include <string.h>

tg_graph *tg__control_graph(int n, tg_tensor *const *in)
{
    tg_graph *g = tg_graph_current();
    for (int i = 0; i < n && !g; i++)
        g = in[i]->graph;
    return g;
}

tg_status tg__control_node(const tg_op_def *op, int n_in, tg_tensor *const *in,
                           int n_bodies, tg_graph *const *bodies, const tg_attr *attrs,
                           int n_attrs, tg_tensor **out)
{
    tg_tensor *all[TG_MAX_OP_INPUTS];
    int n = n_in;
    memcpy(all, in, (size_t)n_in * sizeof *all);
    for (int b = 0; b < n_bodies; b++) {
        const tg_fgraph *f = bodies[b]->fn;
        if (n + f->n_caps > TG_MAX_OP_INPUTS)
            return tg__error(TG_ERR_ARG, "%s: %d inputs with the values its bodies capture, "
                             "at most %d are supported", op->name, n + f->n_caps,
                             TG_MAX_OP_INPUTS);
        for (int k = 0; k < f->n_caps; k++)
            all[n++] = f->outer[k];
    }
    tg_status s = tg_op_run(op, n, all, attrs, n_attrs, out);
    for (int b = 0; b < n_bodies; b++)
        tg__fgraph_seal(bodies[b]);
    return s;
}

/* ---- eager mode: the callbacks on the host ----------------------------------------- */
/* fn(in) into out (n_out owned references, no scope); errors name `what` */
static tg_status call_eager(const char *what, tg_trace_fn fn, void *user,
                            tg_tensor *const *in, int n_out, tg_tensor **out)
{
    bool counted = n_out < 0; /* the callback's results decide */
    if (counted)
        n_out = TG_MAX_OP_OUTPUTS;
    for (int i = 0; i < n_out; i++)
        out[i] = NULL;
    tg_scope_begin();
    tg_status s = fn(user, in, out);
    if (counted)
        n_out = tg__count_results(out);
    for (int i = 0; i < n_out && s == TG_OK; i++)
        if (!out[i])
            s = tg__error_is_set() ? tg_last_status()
                                   : tg__error(TG_ERR_ARG, "left result %d NULL", i);
    for (int i = 0; i < n_out && s == TG_OK; i++)
        tg_retain(out[i]);
    tg_scope_end();
    if (s == TG_OK)
        return TG_OK;
    for (int i = 0; i < n_out; i++)
        out[i] = NULL;
    char msg[900];
    snprintf(msg, sizeof msg, "%s", tg__error_is_set() ? tg_last_error() : "failed");
    return tg__error(tg_last_status() != TG_OK ? tg_last_status() : s, "%s: %s", what, msg);
}

static void release_all(tg_tensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        tg_release(t[i]);
        t[i] = NULL;
    }
}

static void publish_all(tg_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        tg__publish(t[i]);
}

static tg_status check_args(const char *fn, int n_in, tg_tensor *const *in, int n_out,
                            tg_tensor **out, int max_in)
{
    if (n_in < 0 || n_in > max_in || (n_in && !in) || n_out < 0 ||
        n_out > TG_MAX_OP_OUTPUTS || (n_out && !out))
        return tg__error(TG_ERR_ARG, "%s: bad counts (%d inputs, %d outputs; at most %d and "
                         "%d) or NULL arrays", fn, n_in, n_out, max_in, TG_MAX_OP_OUTPUTS);
    for (int i = 0; i < n_out; i++)
        out[i] = NULL;
    for (int i = 0; i < n_in; i++)
        if (!in[i])
            return tg__error_is_set() ? tg_last_status()
                                      : tg__error(TG_ERR_ARG, "%s: input %d is NULL", fn, i);
    return TG_OK;
}

static tg_status check_pred(const char *fn, const tg_tensor *p, const char *what)
{
    if (p->dtype == TG_BOOL && tg_numel(p) == 1)
        return TG_OK;
    tg_meta m;
    tg_meta_of(p, &m);
    char a[200];
    return tg__error(TG_ERR_DTYPE, "%s: %s must be a bool tensor of one element, got %s", fn,
                     what, tg__meta_str(&m, a, sizeof a));
}

/* ---- cond ------------------------------------------------------------------------------ */
static tg_status cond_graph(tg_graph *g, tg_tensor *pred, tg_trace_fn then_fn,
                            tg_trace_fn else_fn, void *user, int n_in,
                            tg_tensor *const *inputs, int n_out, tg_tensor **outputs)
{
    tg_meta m[TG_MAX_OP_INPUTS];
    for (int i = 0; i < n_in; i++)
        tg_meta_of(inputs[i], &m[i]);
    tg_graph *b[2] = {NULL, NULL};
    b[0] = tg__fgraph_trace(g, "cond_then", "tg_cond: then branch", then_fn, user, n_in, m,
                            n_out);
    if (b[0])
        b[1] = tg__fgraph_trace(g, "cond_else", "tg_cond: else branch", else_fn, user, n_in,
                                m, b[0]->fn->n_results);
    tg_status s = b[1] ? TG_OK : tg_last_status();
    if (s == TG_OK) {
        tg_tensor *in[TG_MAX_OP_INPUTS];
        in[0] = pred;
        memcpy(in + 1, inputs, (size_t)n_in * sizeof *in);
        tg_attr attrs[2] = {{.name = "then_branch", .type = TG_ATTR_GRAPH, .u.g = b[0]},
                            {.name = "else_branch", .type = TG_ATTR_GRAPH, .u.g = b[1]}};
        s = tg__control_node(&tg_op_cond, n_in + 1, in, 2, b, attrs, 2, outputs);
    }
    tg_graph_free(b[0]);
    tg_graph_free(b[1]);
    return s;
}

tg_status tg_cond(tg_tensor *pred, tg_trace_fn then_fn, tg_trace_fn else_fn, void *user,
                  int n_in, tg_tensor *const *inputs, int n_out, tg_tensor **outputs)
{
    tg_status s = check_args("tg_cond", n_in, inputs, n_out < 0 ? TG_MAX_OP_OUTPUTS : n_out,
                             outputs, TG_MAX_OP_INPUTS - 1);
    if (s != TG_OK)
        return s;
    if (n_out == 0 || n_out < -1)
        return tg__error(TG_ERR_ARG, "tg_cond: n_out is %d (expected the number of results, "
                         "or -1)", n_out);
    if (!pred || !then_fn || !else_fn)
        return tg__error_is_set() && !pred ? tg_last_status()
               : tg__error(TG_ERR_ARG, "tg_cond: NULL %s", !pred ? "predicate" : "branch");
    if ((s = check_pred("tg_cond", pred, "the predicate")) != TG_OK)
        return s;
    tg_tensor *all[TG_MAX_OP_INPUTS];
    all[0] = pred;
    if (n_in) /* inputs may be NULL when there are none */
        memcpy(all + 1, inputs, (size_t)n_in * sizeof *all);
    tg_graph *g = tg__control_graph(n_in + 1, all);
    if (g)
        return cond_graph(g, pred, then_fn, else_fn, user, n_in, inputs, n_out, outputs);
    bool p = tg__flag_value(pred);
    s = call_eager(p ? "tg_cond: then branch" : "tg_cond: else branch",
                   p ? then_fn : else_fn, user, inputs, n_out, outputs);
    if (s == TG_OK)
        publish_all(outputs, n_out < 0 ? tg__count_results(outputs) : n_out);
    return s;
}

/* ---- while_loop ------------------------------------------------------------------------ */
typedef struct loop_call {
    tg_trace_fn cond_fn, body_fn;
    void *user;
    int n_vars;
    const char *name;
    int64_t max_iterations;
    const tg_shape_spec *inv;
} loop_call;

/* the metadata a variable must keep: its invariant's, else init's */
static tg_status var_meta(const loop_call *l, int i, const tg_tensor *init, tg_meta *m)
{
    tg_meta_of(init, m);
    const tg_shape_spec *sp = l->inv ? &l->inv[i] : NULL;
    if (!sp || sp->ndim < 0)
        return TG_OK;
    bool ok = sp->ndim == init->ndim && sp->ndim <= TG_MAX_DIMS;
    for (int d = 0; ok && d < sp->ndim; d++)
        ok = sp->shape[d] == -1 || sp->shape[d] == init->shape[d];
    if (!ok) {
        char a[200], b[200];
        tg_meta want = {.dtype = init->dtype, .ndim = sp->ndim};
        memcpy(want.shape, sp->shape, sizeof want.shape);
        return tg__error(TG_ERR_SHAPE, "tg_while_loop '%s': loop variable %d starts as %s, "
                         "which its shape invariant %s does not allow", l->name, i,
                         tg__meta_str(m, a, sizeof a), tg__meta_str(&want, b, sizeof b));
    }
    for (int d = 0; d < sp->ndim; d++)
        m->shape[d] = sp->shape[d];
    return TG_OK;
}

static bool fits(const tg_meta *m, const tg_tensor *t)
{
    if (m->dtype != t->dtype || m->ndim != t->ndim)
        return false;
    for (int d = 0; d < m->ndim; d++)
        if (m->shape[d] >= 0 && m->shape[d] != t->shape[d])
            return false;
    return true;
}

static tg_status check_vars(const loop_call *l, const tg_meta *m, tg_tensor *const *next)
{
    for (int i = 0; i < l->n_vars; i++)
        if (!fits(&m[i], next[i])) {
            tg_meta have;
            tg_meta_of(next[i], &have);
            char a[200], b[200];
            return tg__error(TG_ERR_SHAPE, "tg_while_loop '%s': the body made loop variable "
                             "%d %s, but it must stay %s (declare a shape invariant with -1 "
                             "dims for a dim that changes)", l->name, i,
                             tg__meta_str(&have, a, sizeof a), tg__meta_str(&m[i], b, sizeof b));
        }
    return TG_OK;
}

static tg_status loop_eager(const loop_call *l, const tg_meta *m, tg_tensor *const *init,
                            tg_tensor **outputs)
{
    tg_tensor *vars[TG_MAX_OP_OUTPUTS], *next[TG_MAX_OP_OUTPUTS], *flag;
    char what[200];
    for (int i = 0; i < l->n_vars; i++)
        vars[i] = tg_retain(init[i]);
    tg_status s = TG_OK;
    for (int64_t it = 0; s == TG_OK; it++) {
        snprintf(what, sizeof what, "tg_while_loop '%s': condition", l->name);
        if ((s = call_eager(what, l->cond_fn, l->user, vars, 1, &flag)) != TG_OK)
            break;
        s = check_pred(what, flag, "its result");
        bool go = s == TG_OK && tg__flag_value(flag);
        tg_release(flag);
        if (s != TG_OK || !go)
            break;
        if (l->max_iterations > 0 && it >= l->max_iterations) {
            s = tg__error(TG_ERR_ARG, "tg_while_loop '%s': the condition still holds after "
                          "max_iterations (%lld) iterations", l->name,
                          (long long)l->max_iterations);
            break;
        }
        snprintf(what, sizeof what, "tg_while_loop '%s': body", l->name);
        if ((s = call_eager(what, l->body_fn, l->user, vars, l->n_vars, next)) != TG_OK)
            break;
        s = check_vars(l, m, next);
        release_all(vars, l->n_vars);
        memcpy(vars, next, (size_t)l->n_vars * sizeof *vars);
    }
    if (s != TG_OK) {
        release_all(vars, l->n_vars);
        return s;
    }
    memcpy(outputs, vars, (size_t)l->n_vars * sizeof *vars);
    publish_all(outputs, l->n_vars);
    return TG_OK;
}

static tg_status loop_graph(tg_graph *g, const loop_call *l, const tg_meta *m,
                            tg_tensor *const *init, tg_tensor **outputs)
{
    char what[200];
    tg_graph *b[2] = {NULL, NULL};
    snprintf(what, sizeof what, "tg_while_loop '%s': condition", l->name);
    b[0] = tg__fgraph_trace(g, "while_cond", what, l->cond_fn, l->user, l->n_vars, m, 1);
    snprintf(what, sizeof what, "tg_while_loop '%s': body", l->name);
    if (b[0])
        b[1] = tg__fgraph_trace(g, "while_body", what, l->body_fn, l->user, l->n_vars, m,
                                l->n_vars);
    tg_status s = b[1] ? TG_OK : tg_last_status();
    if (s == TG_OK) {
        tg_attr attrs[4] = {
            {.name = "cond", .type = TG_ATTR_GRAPH, .u.g = b[0]},
            {.name = "body", .type = TG_ATTR_GRAPH, .u.g = b[1]},
            {.name = "max_iterations", .type = TG_ATTR_INT, .u.i = l->max_iterations},
            {.name = "name", .type = TG_ATTR_STRING, .u.s = l->name}};
        s = tg__control_node(&tg_op_while_loop, l->n_vars, init, 2, b, attrs, 4, outputs);
    }
    tg_graph_free(b[0]);
    tg_graph_free(b[1]);
    return s;
}

tg_status tg_while_loop(tg_trace_fn cond_fn, tg_trace_fn body_fn, void *user, int n_vars,
                        tg_tensor *const *init, tg_tensor **outputs,
                        const tg_loop_options *opt)
{
    tg_status s = check_args("tg_while_loop", n_vars, init, n_vars, outputs,
                             TG_MAX_OP_OUTPUTS);
    if (s != TG_OK)
        return s;
    if (!cond_fn || !body_fn)
        return tg__error(TG_ERR_ARG, "tg_while_loop: NULL condition or body");
    if (n_vars < 1)
        return tg__error(TG_ERR_ARG, "tg_while_loop: a loop needs at least one variable");
    loop_call l = {cond_fn, body_fn, user, n_vars, opt && opt->name ? opt->name : "while_loop",
                   opt ? opt->max_iterations : 0, opt ? opt->shape_invariants : NULL};
    if (l.max_iterations < 0)
        return tg__error(TG_ERR_ARG, "tg_while_loop '%s': max_iterations is %lld (0 means no "
                         "limit)", l.name, (long long)l.max_iterations);
    tg_meta m[TG_MAX_OP_OUTPUTS];
    for (int i = 0; i < n_vars && s == TG_OK; i++)
        s = var_meta(&l, i, init[i], &m[i]);
    if (s != TG_OK)
        return s;
    tg_graph *g = tg__control_graph(n_vars, init);
    return g ? loop_graph(g, &l, m, init, outputs) : loop_eager(&l, m, init, outputs);
}
