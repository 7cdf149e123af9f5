/* A picture of a partitioned run (Graphviz DOT): one cluster per device,
 * every node filled with its device's colour, data edges solid, control
 * and ordering edges dashed, and each Send joined to its Recv by a bold
 * red edge labelled with the value that crosses. Written whole or not at
 * all (the text is built in memory first). */
#include "io/atomic_file.h"
#include "runtime/partition.h"
#include "util/strbuf.h"
#include "tg/device.h"

#include <stdio.h>
#include <string.h>

static const char *const palette[] = {"#cfe2ff", "#ffe5b4", "#d1f0d1", "#f8d0e0",
                                      "#e6d8f5", "#fff3b0", "#d0f0f0", "#e8e8e8"};
#define N_COLOURS (int)(sizeof palette / sizeof palette[0])

static const char *attr_string(const tg_gnode *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].type == TG_ATTR_STRING && !strcmp(n->attrs[i].name, name))
            return n->attrs[i].u.s;
    return "";
}

static bool is_op(const tg_gnode *n, const char *op)
{
    return n->kind == TG_GNODE_OP && !strcmp(n->op->name, op);
}

static void put_label(tg_strbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            tg__strbuf_puts(b, "\\");
        tg__strbuf_printf(b, "%c", *s);
    }
}

static void cluster(tg_strbuf *b, const tg_partition *p, int d)
{
    char dev[48];
    tg__strbuf_printf(b, "  subgraph cluster_%d {\n    label=\"%s\"; fontsize=16; "
                      "style=rounded;\n", d, tg_device_str(p->device, dev, sizeof dev));
    const tg_graph *g = p->g;
    for (int id = 0; id < g->n_nodes; id++) {
        const tg_gnode *n = &g->nodes[id];
        bool sr = is_op(n, "send") || is_op(n, "recv");
        tg__strbuf_printf(b, "    p%dn%d [label=\"", d, id);
        put_label(b, n->name);
        tg__strbuf_puts(b, "\\n");
        put_label(b, tg__gnode_op_name(n));
        tg__strbuf_printf(b, "\", shape=%s, style=filled, fillcolor=\"%s\"%s];\n",
                          sr ? "cds" : n->kind == TG_GNODE_OP ? "box" : "ellipse",
                          palette[d % N_COLOURS], sr ? ", color=\"#c00000\", penwidth=2" : "");
    }
    for (int id = 0; id < g->n_nodes; id++) {
        const tg_gnode *n = &g->nodes[id];
        for (int i = 0; i < tg__gnode_n_preds(n); i++)
            tg__strbuf_printf(b, "    p%dn%d -> p%dn%d%s;\n", d, tg__gnode_pred(g, n, i), d,
                              id, i < n->n_in ? "" : " [style=dashed]");
    }
    tg__strbuf_puts(b, "  }\n");
}

/* the bold edge from the Send matching Recv node r of partition d */
static void transfer(tg_strbuf *b, const tg_partitioning *P, int d, int r)
{
    const tg_gnode *rn = &P->parts[d].g->nodes[r];
    const char *name = attr_string(rn, "tensor_name"), *src = attr_string(rn, "src");
    const char *dst = attr_string(rn, "dst");
    for (int e = 0; e < P->n; e++)
        for (int id = 0; id < P->parts[e].g->n_nodes; id++) {
            const tg_gnode *sn = &P->parts[e].g->nodes[id];
            if (!is_op(sn, "send") || strcmp(attr_string(sn, "tensor_name"), name) ||
                strcmp(attr_string(sn, "src"), src) || strcmp(attr_string(sn, "dst"), dst))
                continue;
            tg__strbuf_printf(b, "  p%dn%d -> p%dn%d [color=\"#c00000\", penwidth=2.5, "
                              "label=\"", e, id, d, r);
            put_label(b, name);
            tg__strbuf_puts(b, "\", fontcolor=\"#c00000\"];\n");
        }
}

tg_status tg__partitions_to_dot(const tg_partitioning *P, const char *path)
{
    tg_strbuf b = {0};
    tg__strbuf_printf(&b, "digraph partitions {\n  rankdir=TB; compound=true;\n  label=\"%d "
                      "devices, %lld bytes cross per run\";\n  node [fontname=\"Helvetica\", "
                      "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n",
                      P->n, (long long)P->cut_bytes);
    for (int d = 0; d < P->n; d++)
        cluster(&b, &P->parts[d], d);
    for (int d = 0; d < P->n; d++)
        for (int id = 0; id < P->parts[d].g->n_nodes; id++)
            if (is_op(&P->parts[d].g->nodes[id], "recv"))
                transfer(&b, P, d, id);
    tg__strbuf_puts(&b, "}\n");
    tg_status st = b.failed
                       ? tg__error(TG_ERR_NOMEM, "tg_session_partitions_to_dot: out of memory")
                       : tg__atomic_write(path, b.data, b.len, "tg_session_partitions_to_dot");
    tg__strbuf_free(&b);
    return st;
}
