/* The exact GELU as exporters write it, x * (erf(x / sqrt 2) + 1) * 0.5
 * (torch.onnx below opset 20: Div, Erf, Add, Mul, Mul), built as one gelu
 * node in graph mode: one vectorized pass over the activation where the
 * five nodes were a fused interpreter program (14% of a small encoder's
 * time at batch 1). The values differ from the five ops' by float
 * rounding (a few ulp), as onnxruntime's own GELU fusion does; the
 * decomposition stays for eager builds (tg run --eager, folding) and
 * whenever the structure or the constants differ. The plan says which Mul
 * ends such a chain; the build walk (build.c) checks the constants when it
 * gets there and keeps x and the constants alive until then. See docs/ONNX.md. */
#include "onnx/import.h"

#include <stdlib.h>
#include <string.h>

static bool is_op(const mnode *mn, const char *type, size_t n_in)
{
    const onnx_node *n = mn->node;
    return !strcmp(n->op_type, type) && n->n_input == n_in && n->n_output == 1 &&
           mn->out[0] >= 0 && (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx"));
}

/* the other input of a two-input node than value v, or -1 when v is not one */
static int other_input(const mnode *mn, int v)
{
    return mn->in[0] == v ? mn->in[1] : mn->in[1] == v ? mn->in[0] : -1;
}

typedef struct chain_state {
    const tg_onnx_model *m;
    int *readers, *reader, *producer;
} chain_state;

/* the one reader of value v (read once, not a model output), or NULL */
static const mnode *sole_reader(const chain_state *c, int v)
{
    return v >= 0 && c->readers[v] == 1 ? &c->m->nodes[c->reader[v]] : NULL;
}

/* Erf node e as the middle of a GELU: fills the tail's entry */
static void match(const chain_state *c, const mnode *e, onnx_gelu_tail *plan, bool *keep)
{
    int dv = e->in[0];
    if (dv < 0 || c->producer[dv] < 0 || c->readers[dv] != 1)
        return;
    const mnode *d = &c->m->nodes[c->producer[dv]];
    const mnode *a = sole_reader(c, e->out[0]);
    if (!is_op(d, "Div", 2) || !a || !is_op(a, "Add", 2) || d->in[0] < 0 || d->in[1] < 0)
        return;
    int x = d->in[0], c_add = other_input(a, e->out[0]);
    const mnode *m1 = sole_reader(c, a->out[0]);
    if (c_add < 0 || !m1 || !is_op(m1, "Mul", 2) || other_input(m1, a->out[0]) != x)
        return;
    const mnode *t = sole_reader(c, m1->out[0]);
    int c_half = t && is_op(t, "Mul", 2) ? other_input(t, m1->out[0]) : -1;
    if (c_half < 0)
        return;
    onnx_gelu_tail *p = &plan[t - c->m->nodes];
    *p = (onnx_gelu_tail){.x = x, .c_div = d->in[1], .c_add = c_add, .c_half = c_half};
    keep[x] = keep[p->c_div] = keep[p->c_add] = true; /* read again at the tail */
}

onnx_gelu_tail *onnx_gelu_plan(const tg_onnx_model *m, bool *keep)
{
    size_t nv = (size_t)m->n_values + 1, nn = (size_t)m->n_nodes + 1;
    chain_state c = {m, calloc(nv, sizeof(int)), calloc(nv, sizeof(int)), malloc(nv * sizeof(int))};
    onnx_gelu_tail *plan = malloc(nn * sizeof *plan);
    if (!c.readers || !c.reader || !c.producer || !plan) {
        free(plan);
        plan = NULL;
        goto done;
    }
    for (size_t v = 0; v < nv; v++)
        c.producer[v] = -1;
    for (int k = 0; k < m->n_nodes; k++) {
        const mnode *mn = &m->nodes[k];
        plan[k].x = -1;
        for (int j = 0; j < mnode_n_reads(mn); j++) {
            int v = mnode_read(mn, j);
            if (v >= 0) {
                c.readers[v]++;
                c.reader[v] = k;
            }
        }
        for (size_t j = 0; j < mn->node->n_output; j++)
            if (mn->out[j] >= 0)
                c.producer[mn->out[j]] = k;
    }
    for (int i = 0; i < m->n_outputs; i++)
        c.readers[m->output_vid[i]] += 2; /* an output is seen: never fused away */
    for (int k = 0; k < m->n_nodes; k++)
        if (is_op(&m->nodes[k], "Erf", 1) && m->nodes[k].in[0] >= 0)
            match(&c, &m->nodes[k], plan, keep);
done:
    free(c.readers);
    free(c.reader);
    free(c.producer);
    return plan;
}
