/* The automatic placer for nodes no scope placed. (First version: a
 * group goes where its first placed input comes from, else to device 0.) */
#include "runtime/partition.h"

static int leader(int *up, int x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

tg_status tg__place_by_cost(const tg_graph *g, const bool *needed, int *up, int n_devices,
                            int *part)
{
    (void)n_devices;
    for (int u = 0; u < g->n_nodes; u++) {
        int r = leader(up, u);
        if (!needed[u] || part[r] >= 0)
            continue;
        const tg_gnode *n = &g->nodes[u];
        int d = 0;
        for (int i = 0; i < n->n_in; i++) {
            int p = part[leader(up, g->values[n->in[i]].node)];
            if (p >= 0) {
                d = p;
                break;
            }
        }
        part[r] = d;
    }
    return TG_OK;
}
