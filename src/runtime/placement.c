/* Placement (TensorFlow's Placer): every node a run needs gets a device.
 * Nodes keep the device a scope or tg_graph_set_device gave them.
 * Colocation groups (union-find) keep a variable with the nodes that
 * alias or write it: its views, the assigns that update it, the random
 * ops that advance a generator's state; a group takes the device of its
 * placed members (two different ones are an error naming both). Groups
 * with no placed member are placed by the cost model (placement_cost.c). */
#include "runtime/partition.h"
#include "tg/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find(int *up, int x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

static void unite(int *up, int a, int b)
{
    a = find(up, a);
    b = find(up, b);
    if (a != b)
        up[a > b ? a : b] = a < b ? a : b; /* the lower id leads */
}

/* colocation groups over the needed nodes */
static void colocate(const tg_graph *g, const bool *needed, int *up)
{
    for (int u = 0; u < g->n_nodes; u++)
        up[u] = u;
    for (int u = 0; u < g->n_nodes; u++) {
        const tg_gnode *n = &g->nodes[u];
        if (!needed[u] || n->kind != TG_GNODE_OP)
            continue;
        for (int o = 0; o < n->n_out; o++) /* views of it, assigns (their results alias it) */
            if (g->values[n->out[o]].var >= 0)
                unite(up, u, g->values[n->out[o]].var);
        int st = tg_op_state_input(n->op, n->n_in);
        if (st >= 0 && g->values[n->in[st]].var >= 0) /* advances a generator's state */
            unite(up, u, g->values[n->in[st]].var);
    }
}

static int device_index(tg_device *devs, int *n, tg_device d, bool add)
{
    for (int i = 0; i < *n; i++)
        if (tg_device_eq(devs[i], d))
            return i;
    if (!add)
        return -1;
    devs[*n] = d;
    return (*n)++;
}

/* the groups' devices from their placed members: part[leader] */
static tg_status group_devices(const tg_graph *g, const bool *needed, int *up,
                               tg_device *devs, int *n_devs, int *part, int *who)
{
    for (int u = 0; u < g->n_nodes; u++)
        part[u] = who[u] = -1;
    for (int u = 0; u < g->n_nodes; u++) {
        const tg_gnode *n = &g->nodes[u];
        if (!needed[u] || n->device.index < 0)
            continue;
        int d = device_index(devs, n_devs, n->device, true), r = find(up, u);
        if (part[r] >= 0 && part[r] != d) {
            char a[48], b[48];
            return tg__error(TG_ERR_ARG, "placement: node '%s' is placed on %s, but it "
                             "must be colocated with '%s' on %s (a variable and the nodes "
                             "that alias or write it stay on one device)", n->name,
                             tg_device_str(n->device, a, sizeof a), g->nodes[who[r]].name,
                             tg_device_str(devs[part[r]], b, sizeof b));
        }
        part[r] = d;
        who[r] = u;
    }
    return TG_OK;
}

tg_status tg__place(const tg_graph *g, const bool *needed, int n_devices,
                    const tg_device *devices, tg_device **out_devices, int *n_out,
                    int *part)
{
    size_t N = (size_t)g->n_nodes + 1;
    int *up = malloc(N * sizeof *up), *who = malloc(N * sizeof *who), n_devs = n_devices;
    tg_device *devs = malloc((N + (size_t)n_devices) * sizeof *devs);
    tg_status s = up && who && devs ? TG_OK
                  : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory placing nodes");
    if (s == TG_OK) {
        if (n_devices)
            memcpy(devs, devices, (size_t)n_devices * sizeof *devs);
        colocate(g, needed, up);
        s = group_devices(g, needed, up, devs, &n_devs, part, who);
    }
    if (s == TG_OK && n_devs == 0)
        devs[n_devs++] = (tg_device){TG_CPU, 0, 0};
    if (s == TG_OK)
        s = tg__place_by_cost(g, needed, up, n_devs, part);
    for (int u = 0; s == TG_OK && u < g->n_nodes; u++)
        part[u] = needed[u] ? part[find(up, u)] : -1;
    free(up);
    free(who);
    if (s != TG_OK) {
        free(devs);
        return s;
    }
    *out_devices = devs;
    *n_out = n_devs;
    return TG_OK;
}
