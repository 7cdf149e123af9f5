/* Printing graphs: a text listing (one node per line, in id order, which
 * is a topological order of the data edges) and Graphviz DOT export. */
#include "graph/graph_impl.h"
#include "io/atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void meta_str(const tg_meta *m, char *buf, size_t len)
{
    char s[160];
    snprintf(buf, len, "%s%s", tg_dtype_name(m->dtype),
             tg_shape_str(m->ndim, m->shape, s, sizeof s));
}

static void dump_node(const tg_graph *g, int id, FILE *f)
{
    const tg_gnode *n = &g->nodes[id];
    char name[300], meta[200], attrs[512];
    fprintf(f, "  ");
    for (int o = 0; o < n->n_out; o++)
        fprintf(f, "%s%%%s", o ? ", " : "", tg__value_name(g, n->out[o], name, sizeof name));
    fprintf(f, " = %s(", tg__gnode_op_name(n));
    for (int i = 0; i < n->n_in; i++)
        fprintf(f, "%s%%%s", i ? ", " : "", tg__value_name(g, n->in[i], name, sizeof name));
    fprintf(f, ")");
    if (n->n_attrs)
        fprintf(f, " {%s}", tg__attrs_summary(n, attrs, sizeof attrs));
    fprintf(f, " :");
    for (int o = 0; o < n->n_out; o++) {
        meta_str(&g->values[n->out[o]].meta, meta, sizeof meta);
        fprintf(f, "%s %s", o ? "," : "", meta);
    }
    /* ^x: control edge (x must run), ~x: ordering-only edge */
    for (int i = n->n_in; i < tg__gnode_n_preds(n); i++)
        fprintf(f, "%s%c%s", i > n->n_in ? ", " : "  after ",
                i - n->n_in < n->n_ctrl ? '^' : '~', g->nodes[tg__gnode_pred(g, n, i)].name);
    fprintf(f, "\n");
}

tg_status tg_graph_dump(const tg_graph *g, FILE *f)
{
    if (!g || !f)
        return tg__error(TG_ERR_ARG, "tg_graph_dump: graph or file is NULL");
    fprintf(f, "graph %s (%d nodes, %d values) {\n", g->name, g->n_nodes, g->n_values);
    for (int id = 0; id < g->n_nodes; id++)
        dump_node(g, id, f);
    fprintf(f, "}\n");
    return ferror(f) ? tg__error(TG_ERR_IO, "tg_graph_dump: write failed") : TG_OK;
}

/* ---- DOT -------------------------------------------------------------------------- */
/* a DOT string body: quotes and backslashes escaped */
static void dot_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
}

static const char *node_style(tg_gnode_kind k)
{
    switch (k) {
    case TG_GNODE_PLACEHOLDER:
        return "shape=invhouse, style=filled, fillcolor=\"#cfe2ff\"";
    case TG_GNODE_VARIABLE:
        return "shape=cylinder, style=filled, fillcolor=\"#ffe5b4\"";
    case TG_GNODE_CONSTANT:
        return "shape=ellipse, style=filled, fillcolor=\"#e8e8e8\", fontsize=10";
    case TG_GNODE_OP:
        break;
    }
    return "shape=box, style=\"rounded\"";
}

/* nodes are named by a prefix per graph ("n" for the graph drawn, one per
 * body inside it) and their id */
static void dot_node(const tg_graph *g, const char *pre, int id, FILE *f)
{
    const tg_gnode *n = &g->nodes[id];
    char attrs[512], meta[200];
    fprintf(f, "  %s%d [%s, label=\"", pre, id, node_style(n->kind));
    dot_str(f, n->name);
    if (n->kind == TG_GNODE_OP && strcmp(n->name, n->op->name) != 0) {
        fprintf(f, "\\n");
        dot_str(f, n->op->name);
    }
    if (n->n_attrs) {
        fprintf(f, "\\n");
        dot_str(f, tg__attrs_summary(n, attrs, sizeof attrs));
    }
    if (n->kind != TG_GNODE_OP) {
        meta_str(&g->values[n->out[0]].meta, meta, sizeof meta);
        fprintf(f, "\\n%s", meta);
    }
    fprintf(f, "\"];\n");
}

static void dot_edges(const tg_graph *g, const char *pre, int id, FILE *f)
{
    const tg_gnode *n = &g->nodes[id];
    char meta[200];
    for (int i = 0; i < n->n_in; i++) {
        const tg_gvalue *v = &g->values[n->in[i]];
        meta_str(&v->meta, meta, sizeof meta);
        fprintf(f, "  %s%d -> %s%d [label=\"", pre, v->node, pre, id);
        if (g->nodes[v->node].n_out > 1)
            fprintf(f, ":%d ", v->index);
        fprintf(f, "%s\"];\n", meta);
    }
    for (int i = n->n_in; i < tg__gnode_n_preds(n); i++)
        fprintf(f, "  %s%d -> %s%d [style=%s, color=gray40];\n", pre,
                tg__gnode_pred(g, n, i), pre, id,
                i - n->n_in < n->n_ctrl ? "dashed" : "dotted");
}

static void dot_graph(const tg_graph *g, const char *pre, FILE *f, int depth);

/* the bodies of control node id (graph attributes) as clusters, each
 * result joined to the node by a dotted edge */
static void dot_bodies(const tg_graph *g, const char *pre, int id, FILE *f, int depth)
{
    const tg_gnode *n = &g->nodes[id];
    for (int a = 0; a < n->n_attrs && depth < 8; a++) {
        const tg_graph *b = n->attrs[a].type == TG_ATTR_GRAPH ? n->attrs[a].u.g : NULL;
        if (!b || !b->fn)
            continue;
        char sub[96];
        snprintf(sub, sizeof sub, "%s%d_%d_", pre, id, a);
        fprintf(f, "  subgraph cluster_%s {\n  label=\"", sub);
        dot_str(f, n->name);
        fprintf(f, ": ");
        dot_str(f, n->attrs[a].name);
        fprintf(f, "\";\n  style=\"rounded,dashed\";\n  color=\"#4a6fa5\";\n");
        dot_graph(b, sub, f, depth + 1);
        fprintf(f, "  }\n");
        for (int r = 0; r < b->fn->n_results; r++)
            fprintf(f, "  %s%d -> %s%d [style=dotted, color=\"#4a6fa5\", label=\"%s %d\"];\n",
                    sub, b->values[b->fn->results[r]].node, pre, id, n->attrs[a].name, r);
    }
}

static void dot_graph(const tg_graph *g, const char *pre, FILE *f, int depth)
{
    for (int id = 0; id < g->n_nodes; id++) {
        dot_node(g, pre, id, f);
        if (g->nodes[id].kind == TG_GNODE_OP)
            dot_bodies(g, pre, id, f, depth);
    }
    for (int id = 0; id < g->n_nodes; id++)
        dot_edges(g, pre, id, f);
}

tg_status tg_graph_to_dot(const tg_graph *g, const char *path)
{
    if (!g || !path)
        return tg__error(TG_ERR_ARG, "tg_graph_to_dot: graph or path is NULL");
    tg__atomic_file af;
    tg_status s = tg__atomic_begin(&af, path, "tg_graph_to_dot");
    if (s != TG_OK)
        return s;
    FILE *f = af.f;
    fprintf(f, "digraph \"");
    dot_str(f, g->name);
    fprintf(f, "\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=11];\n"
               "  edge [fontname=\"Helvetica\", fontsize=9];\n");
    dot_graph(g, "n", f, 0);
    fprintf(f, "}\n");
    bool ok = ferror(f) == 0;
    return tg__atomic_end(&af, ok, ok ? 0 : errno, "tg_graph_to_dot");
}
