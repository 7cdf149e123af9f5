/* Device scopes while building graphs (tf.device) and the placement of a
 * node: every node appended inside a scope records the scope's device
 * (tg__graph_add_node reads tg__device_scope_current). */
#include "graph/graph_impl.h"
#include "tg/device.h"

#include <stdio.h>

#define MAX_DEVICE_DEPTH 64

static _Thread_local tg_device stack[MAX_DEVICE_DEPTH];
static _Thread_local int depth;

static const tg_device unplaced = {TG_CPU, -1, 0};

tg_device tg__device_scope_current(void)
{
    return depth > 0 ? stack[depth - 1] : unplaced;
}

tg_status tg_device_scope_begin(const char *name)
{
    if (depth == MAX_DEVICE_DEPTH)
        return tg__error(TG_ERR_ARG, "tg_device_scope_begin: more than %d nested device "
                         "scopes", MAX_DEVICE_DEPTH);
    if (!name)
        return tg__error(TG_ERR_ARG, "tg_device_scope_begin: name is NULL (\"\" opens a "
                         "scope whose nodes stay unplaced)");
    tg_device d = unplaced;
    if (name[0] && tg_device_parse(name, &d) != TG_OK)
        return tg_last_status();
    stack[depth++] = d;
    return TG_OK;
}

tg_status tg_device_scope_end(void)
{
    if (depth == 0)
        return tg__error(TG_ERR_ARG, "tg_device_scope_end: no device scope is open");
    depth--;
    return TG_OK;
}

/* the node producing symbolic t, or NULL with an error naming fn */
static tg_gnode *node_of(const tg_tensor *t, const char *fn)
{
    if (!t)
        return tg__error_null(TG_ERR_ARG, "%s: tensor is NULL", fn);
    if (!t->graph)
        return tg__error_null(TG_ERR_ARG, "%s: the tensor is concrete; placement is "
                              "for symbolic tensors (nodes of a graph)", fn);
    return &t->graph->nodes[t->graph->values[t->value].node];
}

tg_status tg_graph_set_device(tg_tensor *t, const char *name)
{
    tg_gnode *n = node_of(t, "tg_graph_set_device");
    if (!n)
        return tg_last_status();
    tg_device d = unplaced;
    if (name && tg_device_parse(name, &d) != TG_OK)
        return tg_last_status();
    n->device = d;
    t->graph->epoch++; /* cached plans were partitioned for the old placement */
    return TG_OK;
}

const char *tg_graph_device(const tg_tensor *t, char *buf, size_t len)
{
    const tg_gnode *n = node_of(t, "tg_graph_device");
    if (!n || !buf || len == 0)
        return n ? tg__error_null(TG_ERR_ARG, "tg_graph_device: no buffer") : NULL;
    if (n->device.index < 0)
        buf[0] = '\0';
    else
        tg_device_str(n->device, buf, len);
    return buf;
}
