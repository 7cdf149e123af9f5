/* Exporting control flow: a cond node becomes If and a while_loop Loop.
 * Their body graphs are written as ONNX subgraphs whose values are named
 * "<node>/<body>/<value>" (names are one namespace across an ONNX model);
 * a body's inputs are the names the node gives them: the captures are the
 * enclosing graph's values, which ONNX subgraphs read by name (outer
 * scope). Loop has no separate condition graph: the condition is written
 * once before the Loop (on the initial variables) and again at the end of
 * the body (on the new ones). tensorgraph's max_iterations is an error
 * past the limit, which ONNX cannot say: it is not exported. */
#include "onnx/export.h"

#include "control/control.h"
#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool onnx_ex_is_control(const tg_op_def *op)
{
    return op == &tg_op_cond || op == &tg_op_while_loop;
}

/* the capacities of an ONNX graph's growing arrays, which the writers
 * that add to it share */
typedef struct og_caps {
    size_t node, init, in;
} og_caps;

/* writes body b into og (its capacities *caps) with its inputs
 * (parameters, then captures) named names[]; res[i] gets the name of
 * result i (owned by the caller) */
static void write_body(ex *e, const tg_graph *b, onnx_graph *og, og_caps *caps,
                       const char *prefix, const char *const *names, char **res)
{
    const tg_fgraph *fn = b->fn;
    ex s = {.g = b, .og = og, .n_aux = e->n_aux, .n_hints = e->n_hints,
            .hint_tensor = e->hint_tensor, .hint_name = e->hint_name, .prefix = prefix,
            .cap_node = caps->node, .cap_init = caps->init, .cap_in = caps->in};
    s.vname = calloc((size_t)b->n_values + 1, sizeof *s.vname);
    bool *need = onnx_ex_needed(b, fn->n_results, fn->results);
    if (!s.vname || !need)
        onnx_ex_fail(&s, TG_ERR_NOMEM, "out of memory");
    for (int k = 0; !s.err && k < fn->n_params + fn->n_caps; k++)
        s.vname[fn->inputs[k]] = strdup(names[k]);
    for (int id = 0; id < b->n_nodes && !s.err; id++)
        if (need[id])
            onnx_ex_write_node(&s, id, need, fn->n_results, fn->results);
    /* results through Identity: a result may be an input, a constant or
     * the same value twice, which a subgraph's outputs cannot be */
    for (int i = 0; i < fn->n_results && !s.err; i++) {
        char base[300];
        snprintf(base, sizeof base, "%s/result_%d", prefix, i);
        res[i] = onnx_ex_aux_name(&s, base);
        onnx_node *n = onnx_ex_node(&s, "Identity", res[i]);
        onnx_ex_io(&s, n, 1, (const char *const *)&s.vname[fn->results[i]], 1,
                   (const char *const *)&res[i]);
    }
    for (int v = 0; s.vname && v < b->n_values; v++)
        free(s.vname[v]);
    free(s.vname);
    free(need);
    *caps = (og_caps){s.cap_node, s.cap_init, s.cap_in};
    e->n_aux = s.n_aux;
    if (s.err && !e->err)
        e->err = s.err;
}

static onnx_graph *new_graph(ex *e, const char *name)
{
    onnx_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->name = strdup(name))) {
        free(g);
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return g;
}

/* a graph output or input entry typed like m */
static void add_io(ex *e, onnx_value_info **arr, size_t *n, const char *name, const tg_meta *m)
{
    size_t cap = tg__grow_capacity(0, *n, sizeof **arr);
    if (!TG_GROW(*arr, cap, *n + 1)) {
        onnx_ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    onnx_value_info *vi = &(*arr)[(*n)++];
    memset(vi, 0, sizeof *vi);
    vi->name = strdup(name);
    onnx_ex_set_type(vi, m);
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
}

static void ex_cond(ex *e, const exnode *x)
{
    const tg_cond_attrs *a = x->n->attr;
    const tg_graph *br[2] = {a->then_branch, a->else_branch};
    const char *attr[2] = {"then_branch", "else_branch"};
    onnx_graph *og[2] = {NULL, NULL};
    /* the node's inputs: the flag, the parameters both branches take, the
     * then branch's captures, the else branch's */
    int n_out = x->n->n_out, np = br[0]->fn->n_params, first = 1 + np;
    for (int k = 0; k < 2 && !e->err; k++) {
        char prefix[300], *res[TG_MAX_OP_OUTPUTS] = {0};
        const char *names[TG_MAX_OP_INPUTS];
        for (int i = 0; i < np; i++)
            names[i] = x->in[1 + i];
        for (int i = 0; i < br[k]->fn->n_caps; i++)
            names[np + i] = x->in[first + i];
        snprintf(prefix, sizeof prefix, "%s/%s", x->n->name, k ? "else" : "then");
        og[k] = new_graph(e, prefix);
        og_caps caps = {0};
        if (og[k])
            write_body(e, br[k], og[k], &caps, prefix, names, res);
        for (int i = 0; og[k] && i < n_out && !e->err; i++)
            add_io(e, &og[k]->output, &og[k]->n_output, res[i],
                   &br[k]->values[br[k]->fn->results[i]].meta);
        free_names(res, n_out);
        first += br[k]->fn->n_caps;
    }
    onnx_node *n = e->err ? NULL : onnx_ex_node(e, "If", x->n->name);
    onnx_ex_io(e, n, 1, x->in, n_out, x->out);
    for (int k = 0; k < 2; k++)
        onnx_ex_attr_graph(e, n, attr[k], og[k]);
}

/* the loop's condition inlined into og on the variables vars */
static char *loop_test(ex *e, const tg_while_attrs *a, const tg_loop_layout *l,
                       const exnode *x, onnx_graph *og, og_caps *caps, const char *prefix,
                       const char *const *vars)
{
    const char *names[TG_MAX_OP_INPUTS];
    for (int i = 0; i < l->nv; i++)
        names[i] = vars[i];
    for (int i = 0; i < l->nc; i++)
        names[l->nv + i] = x->in[l->nv + i];
    char *res = NULL;
    write_body(e, a->cond, og, caps, prefix, names, &res);
    return res;
}

static void ex_while(ex *e, const exnode *x)
{
    const tg_while_attrs *a = x->n->attr;
    tg_loop_layout l;
    if (tg__loop_layout("while_loop", a, x->n->n_in, &l) != TG_OK) {
        onnx_ex_fail(e, tg_last_status(), "%s", tg_last_error());
        return;
    }
    char prefix[300], name[340];
    snprintf(prefix, sizeof prefix, "%s/cond0", x->n->name);
    og_caps outer = {e->cap_node, e->cap_init, e->cap_in}, inner = {0};
    char *c0 = loop_test(e, a, &l, x, e->og, &outer, prefix, x->in);
    e->cap_node = outer.node;
    e->cap_init = outer.init;
    e->cap_in = outer.in;
    snprintf(prefix, sizeof prefix, "%s/body", x->n->name);
    onnx_graph *body = new_graph(e, prefix);
    /* the body's inputs: iteration number, condition, variables */
    char *in_names[TG_MAX_OP_INPUTS] = {0}, *res[TG_MAX_OP_OUTPUTS] = {0};
    static const tg_meta iter_meta = {.dtype = TG_INT64}, flag_meta = {.dtype = TG_BOOL};
    for (int i = 0; body && i < 2 + l.nv; i++) {
        snprintf(name, sizeof name, "%s/in_%d", prefix, i);
        in_names[i] = strdup(name);
        const tg_meta *m = i == 0 ? &iter_meta : i == 1 ? &flag_meta
                                  : &a->body->values[a->body->fn->inputs[i - 2]].meta;
        add_io(e, &body->input, &body->n_input, name, m);
    }
    const char *names[TG_MAX_OP_INPUTS];
    for (int i = 0; i < l.nv; i++)
        names[i] = in_names[2 + i];
    for (int i = 0; i < l.nb; i++)
        names[l.nv + i] = x->in[l.nv + l.nc + i];
    if (body && !e->err)
        write_body(e, a->body, body, &inner, prefix, names, res);
    snprintf(name, sizeof name, "%s/cond", x->n->name);
    char *c1 = body && !e->err ? loop_test(e, a, &l, x, body, &inner, name,
                                           (const char *const *)res)
                               : NULL;
    if (body && !e->err) {
        add_io(e, &body->output, &body->n_output, c1, &flag_meta);
        for (int i = 0; i < l.nv; i++)
            add_io(e, &body->output, &body->n_output, res[i],
                   &a->body->values[a->body->fn->results[i]].meta);
    }
    onnx_node *n = e->err ? NULL : onnx_ex_node(e, "Loop", x->n->name);
    const char *loop_in[TG_MAX_OP_INPUTS + 2] = {"", c0};
    for (int i = 0; i < l.nv; i++)
        loop_in[2 + i] = x->in[i];
    onnx_ex_io(e, n, 2 + l.nv, loop_in, l.nv, x->out);
    onnx_ex_attr_graph(e, n, "body", body);
    free(c0);
    free(c1);
    free_names(in_names, 2 + l.nv);
    free_names(res, l.nv);
}

void onnx_ex_control(ex *e, const exnode *x)
{
    if (x->n->op == &tg_op_cond)
        ex_cond(e, x);
    else
        ex_while(e, x);
}
