/* The explorer page's JSON of one graph: every node in id order (a
 * topological order of the data edges) with what the side panel shows
 * and what the layout needs. Edges are given by their ends (producer
 * node and output index), so the page draws them without a value table.
 * Nested graphs (graph attributes: loop and branch bodies) are written
 * inside their node, where the page draws them as collapsible clusters. */
#include "graph/graph_json.h"
#include "io/json.h"

#include <math.h>
#include <stdio.h>

#define MAX_DEPTH 8   /* nested graphs drawn; deeper ones are named only */
#define MAX_LIST 256  /* elements of an ints/floats attribute written */

void tg__json_number(tg_strbuf *b, double x)
{
    if (isfinite(x))
        tg__strbuf_printf(b, "%.17g", x);
    else
        tg__strbuf_puts(b, isnan(x) ? "\"nan\"" : x > 0 ? "\"inf\"" : "\"-inf\"");
}

static void put_list(tg_strbuf *b, const tg_attr *a)
{
    int n = a->u.ints.n;
    tg__strbuf_puts(b, "[");
    for (int k = 0; k < n && k < MAX_LIST; k++) {
        if (k)
            tg__strbuf_puts(b, ",");
        if (a->type == TG_ATTR_INTS)
            tg__strbuf_printf(b, "%lld", (long long)a->u.ints.v[k]);
        else
            tg__json_number(b, a->u.floats.v[k]);
    }
    if (n > MAX_LIST)
        tg__strbuf_puts(b, ",\"...\"");
    tg__strbuf_puts(b, "]");
}

static void put_attr_value(tg_strbuf *b, const tg_attr *a)
{
    char s[200], shape[160];
    switch (a->type) {
    case TG_ATTR_INT: tg__strbuf_printf(b, "%lld", (long long)a->u.i); return;
    case TG_ATTR_FLOAT: tg__json_number(b, a->u.f); return;
    case TG_ATTR_STRING: tg_json_put_string(b, a->u.s ? a->u.s : ""); return;
    case TG_ATTR_INTS:
    case TG_ATTR_FLOATS: put_list(b, a); return;
    case TG_ATTR_TENSOR:
        snprintf(s, sizeof s, "tensor %s%s", a->u.t ? tg_dtype_name(a->u.t->dtype) : "NULL",
                 a->u.t ? tg_shape_str(a->u.t->ndim, a->u.t->shape, shape, sizeof shape) : "");
        tg_json_put_string(b, s);
        return;
    case TG_ATTR_GRAPH:
        snprintf(s, sizeof s, "graph %s", a->u.g ? ((const tg_graph *)a->u.g)->name : "NULL");
        tg_json_put_string(b, s);
        return;
    }
}

static void put_ids(tg_strbuf *b, const char *key, const int *ids, int n)
{
    tg__strbuf_printf(b, ",\"%s\":[", key);
    for (int i = 0; i < n; i++)
        tg__strbuf_printf(b, i ? ",%d" : "%d", ids[i]);
    tg__strbuf_puts(b, "]");
}

static void put_graph(tg_strbuf *b, const tg_graph *g, const tg_graph_json_plan *plan,
                      int depth);

static void put_subgraphs(tg_strbuf *b, const tg_gnode *n, int depth)
{
    bool first = true;
    for (int i = 0; i < n->n_attrs; i++) {
        const tg_attr *a = &n->attrs[i];
        if (a->type != TG_ATTR_GRAPH || !a->u.g || depth >= MAX_DEPTH)
            continue;
        tg__strbuf_puts(b, first ? ",\"sub\":[{\"attr\":" : ",{\"attr\":");
        first = false;
        tg_json_put_string(b, a->name);
        tg__strbuf_puts(b, ",\"graph\":");
        put_graph(b, a->u.g, NULL, depth + 1);
        tg__strbuf_puts(b, "}");
    }
    if (!first)
        tg__strbuf_puts(b, "]");
}

static void put_node(tg_strbuf *b, const tg_graph *g, int id, const tg_graph_json_plan *plan,
                     int depth)
{
    const tg_gnode *n = &g->nodes[id];
    tg__strbuf_printf(b, "%s{\"id\":%d,\"name\":", id ? ",\n" : "", id);
    tg_json_put_string(b, n->name);
    tg__strbuf_printf(b, ",\"kind\":\"%s\",\"op\":", tg__gnode_kind_name(n->kind));
    tg_json_put_string(b, tg__gnode_op_name(n));
    if (plan && plan->cls && plan->cls[id])
        tg__strbuf_printf(b, ",\"cls\":\"%s\"", plan->cls[id]);
    if (n->loc) {
        tg__strbuf_puts(b, ",\"loc\":");
        tg_json_put_string(b, n->loc);
    }
    if (plan && plan->step)
        tg__strbuf_printf(b, ",\"step\":%d", plan->step[id]);
    tg__strbuf_puts(b, ",\"attrs\":[");
    for (int i = 0; i < n->n_attrs; i++) {
        tg__strbuf_puts(b, i ? ",[" : "[");
        tg_json_put_string(b, n->attrs[i].name);
        tg__strbuf_puts(b, ",");
        put_attr_value(b, &n->attrs[i]);
        tg__strbuf_puts(b, "]");
    }
    tg__strbuf_puts(b, "],\"in\":[");
    for (int i = 0; i < n->n_in; i++) {
        const tg_gvalue *v = &g->values[n->in[i]];
        tg__strbuf_printf(b, i ? ",[%d,%d]" : "[%d,%d]", v->node, v->index);
    }
    tg__strbuf_puts(b, "],\"out\":[");
    for (int o = 0; o < n->n_out; o++) {
        const tg_meta *m = &g->values[n->out[o]].meta;
        tg__strbuf_printf(b, "%s[\"%s\",[", o ? "," : "", tg_dtype_name(m->dtype));
        for (int d = 0; d < m->ndim; d++)
            tg__strbuf_printf(b, d ? ",%lld" : "%lld", (long long)m->shape[d]);
        tg__strbuf_puts(b, "]]");
    }
    tg__strbuf_puts(b, "]");
    put_ids(b, "ctrl", n->ctrl, n->n_ctrl);
    put_ids(b, "order", n->order, n->n_order);
    put_subgraphs(b, n, depth);
    tg__strbuf_puts(b, "}");
}

static void put_graph(tg_strbuf *b, const tg_graph *g, const tg_graph_json_plan *plan,
                      int depth)
{
    tg__strbuf_puts(b, "{\"name\":");
    tg_json_put_string(b, g->name);
    tg__strbuf_puts(b, ",\"nodes\":[\n");
    for (int id = 0; id < g->n_nodes; id++)
        put_node(b, g, id, plan, depth);
    tg__strbuf_puts(b, "]}");
}

void tg__graph_json(tg_strbuf *b, const tg_graph *g, const tg_graph_json_plan *plan)
{
    put_graph(b, g, plan, 0);
}
