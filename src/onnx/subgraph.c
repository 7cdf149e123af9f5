/* The subgraphs of control-flow nodes (If's branches, Loop's and Scan's
 * bodies): each graph attribute is loaded as a model of its own whose
 * parent is the enclosing model. A name a subgraph reads without defining
 * it is looked up in the enclosing scopes (ONNX's outer-scope rule) and
 * becomes an SRC_OUTER value of the subgraph; the node that holds the
 * subgraph then reads that value implicitly, so the enclosing model sorts
 * the node after its producer and keeps the value alive until it runs. */
#include "onnx/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int onnx_outer_value(tg_onnx_model *m, const char *name)
{
    /* the parent is const to everyone but this lookup, which adds the
     * names it reads from further out: the subgraph owns no parent */
    tg_onnx_model *p = (tg_onnx_model *)m->parent;
    int pv = tg__hmap_get(&p->names, name);
    if (pv < 0 && p->parent)
        pv = onnx_outer_value(p, name);
    if (pv < 0) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_IO, "onnx: '%s' is not defined in the subgraph or any "
                      "enclosing graph", name);
        return -1;
    }
    const char **names = realloc(m->outer_names, ((size_t)m->n_outer + 1) * sizeof *names);
    if (names)
        m->outer_names = names;
    int *vids = realloc(m->outer_vid, ((size_t)m->n_outer + 1) * sizeof *vids);
    if (vids)
        m->outer_vid = vids;
    if (!names || !vids) {
        tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        return -1;
    }
    char what[64];
    snprintf(what, sizeof what, "outer value %d", m->n_outer);
    if (onnx_add_value(m, name, (mvalue){0, SRC_OUTER, m->n_outer, 0}, what) != TG_OK)
        return -1;
    m->outer_names[m->n_outer] = name;
    m->outer_vid[m->n_outer++] = pv;
    return m->n_values - 1;
}

/* adds v to the node's implicit inputs unless it reads it already */
static tg_status add_implicit(mnode *mn, int v)
{
    for (int j = 0; j < mnode_n_reads(mn); j++)
        if (mnode_read(mn, j) == v)
            return TG_OK;
    int *imp = realloc(mn->implicit, ((size_t)mn->n_implicit + 1) * sizeof *imp);
    if (!imp)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    mn->implicit = imp;
    mn->implicit[mn->n_implicit++] = v;
    return TG_OK;
}

/* "in subgraph 'body' of node 'loop' (Loop): <the subgraph's error>" */
static tg_status sub_error(const onnx_node *n, const char *attr)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tg_last_error());
    const char *rest = strncmp(msg, "onnx: ", 6) ? msg : msg + 6;
    tg_status s = tg_last_status() != TG_OK ? tg_last_status() : TG_ERR_INTERNAL;
    return tg__error(s, "onnx: in subgraph '%s' of node '%s' (%s): %s", attr,
                     onnx_node_label(n), n->op_type, rest);
}

tg_status onnx_load_subgraphs(tg_onnx_model *m, int i)
{
    mnode *mn = &m->nodes[i];
    const onnx_node *n = mn->node;
    int count = 0;
    for (size_t j = 0; j < n->n_attribute; j++)
        count += n->attribute[j].g != NULL;
    if (!count)
        return TG_OK;
    mn->subs = calloc((size_t)count, sizeof *mn->subs);
    mn->sub_names = calloc((size_t)count, sizeof *mn->sub_names);
    if (!mn->subs || !mn->sub_names)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (size_t j = 0; j < n->n_attribute; j++) {
        const onnx_attribute *a = &n->attribute[j];
        if (!a->g)
            continue;
        tg_onnx_model *sub = onnx_load_graph(NULL, a->g, m);
        if (!sub)
            return sub_error(n, a->name);
        mn->sub_names[mn->n_subs] = a->name;
        mn->subs[mn->n_subs++] = sub;
        for (int k = 0; k < sub->n_outer; k++) {
            tg_status s = add_implicit(mn, sub->outer_vid[k]);
            if (s != TG_OK)
                return s;
        }
    }
    return TG_OK;
}
