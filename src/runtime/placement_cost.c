/* The automatic placer: places the colocation groups no scope placed, by
 * a cost model. Each node's time is estimated from its op and shapes:
 *   time = flops / F + bytes / B        (F = 10 GFLOP/s, B = 10 GB/s)
 * with flops 2 * out * K for products (linear, matmul, convolutions and
 * their gradients: K the length of the reduced dim, or the weight's
 * elements per output channel) and one per element touched otherwise,
 * bytes the inputs' and outputs' (an unknown dim counts as 32). A value
 * read on a device other than its producer's costs a transfer:
 *   alpha + bytes / Bt                    (alpha = 20 us, Bt = 5 GB/s)
 * once per destination device (fed values and constants cost nothing:
 * every device gets its own). The objective is the estimated step time,
 *   J = max over devices of the time of its nodes + the time of all transfers,
 * minimised in two phases: a greedy pass in topological order (each
 * group on the device holding most of the bytes it exchanges with groups
 * placed so far, among the devices below their share of the total time
 * plus 10%; ties to the least loaded), then passes of single-group moves
 * that lower J, until none does (at most 30 passes; skipped above 4000
 * groups, where one pass would cost too much). */
#include "runtime/partition.h"

#include <stdlib.h>
#include <string.h>

#define FLOPS_PER_S 10e9
#define BYTES_PER_S 10e9
#define TRANSFER_BYTES_PER_S 5e9
#define TRANSFER_ALPHA_S 20e-6
#define UNKNOWN_DIM 32
#define SHARE_SLACK 1.10
#define MAX_PASSES 30
#define MAX_REFINE_GROUPS 4000

static int leader(int *up, int x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

static double numel_of(const tg_meta *m)
{
    double n = 1;
    for (int i = 0; i < m->ndim; i++)
        n *= m->shape[i] < 0 ? UNKNOWN_DIM : (double)m->shape[i];
    return n;
}

static double bytes_of(const tg_meta *m) { return numel_of(m) * (double)tg_dtype_size(m->dtype); }

static bool has(const char *s, const char *part) { return strstr(s, part) != NULL; }

/* estimated FLOPs of op node n */
static double node_flops(const tg_graph *g, const tg_gnode *n)
{
    double out = 0, touched = 0;
    for (int o = 0; o < n->n_out; o++)
        out += numel_of(&g->values[n->out[o]].meta);
    touched = out;
    for (int i = 0; i < n->n_in; i++)
        touched += numel_of(&g->values[n->in[i]].meta);
    const char *op = n->op->name;
    if ((has(op, "matmul") || has(op, "linear") || has(op, "addmm") || !strcmp(op, "mm") ||
         !strcmp(op, "bmm")) && n->n_in >= 2) {
        const tg_meta *a = &g->values[n->in[0]].meta;
        double k = a->ndim ? (a->shape[a->ndim - 1] < 0 ? UNKNOWN_DIM : a->shape[a->ndim - 1]) : 1;
        return 2 * out * k;
    }
    if (has(op, "conv")) { /* forward or gradients: the weight-like 3-5-D tensor is the smallest */
        double wmin = 0, big = 0, per_channel = 1;
        for (int i = 0; i < n->n_in + n->n_out; i++) {
            const tg_meta *m = &g->values[i < n->n_in ? n->in[i] : n->out[i - n->n_in]].meta;
            double e = numel_of(m);
            if (m->ndim < 3)
                continue;
            big = e > big ? e : big;
            if (wmin == 0 || e < wmin) {
                wmin = e;
                per_channel = e / (m->shape[0] > 0 ? (double)m->shape[0] : 1);
            }
        }
        return 2 * big * per_channel;
    }
    return touched;
}

static double node_time(const tg_graph *g, const tg_gnode *n)
{
    if (n->kind != TG_GNODE_OP)
        return 0;
    double bytes = 0;
    for (int o = 0; o < n->n_out; o++)
        bytes += bytes_of(&g->values[n->out[o]].meta);
    for (int i = 0; i < n->n_in; i++)
        bytes += bytes_of(&g->values[n->in[i]].meta);
    return node_flops(g, n) / FLOPS_PER_S + bytes / BYTES_PER_S;
}

/* the model over groups: per group its time; per value that may cross,
 * its producer's group, its cost, and its readers' groups */
typedef struct model {
    int n_groups, n_dev;
    double *w;       /* per group */
    int *fixed;      /* per group: device, or -1 */
    int *dev;        /* per group: the current device */
    int n_vals;
    int *vgroup;     /* per value kept: producer group */
    double *vcost;   /* its transfer time */
    int *rstart, *readers; /* CSR: reader groups (distinct, not the producer's) */
    int *gstart, *gvals;   /* CSR: per group, the kept values it produces or reads */
    double *load;          /* per device: the time of its groups */
} model;

static double transfer_time(double bytes) { return TRANSFER_ALPHA_S + bytes / TRANSFER_BYTES_PER_S; }

/* the transfer time of value k under the current devices */
static double value_cut(const model *m, int k, const int *dev)
{
    int src = dev[m->vgroup[k]];
    double t = 0;
    for (int i = m->rstart[k]; i < m->rstart[k + 1]; i++) {
        int d = dev[m->readers[i]];
        bool seen = d == src;
        for (int j = m->rstart[k]; j < i && !seen; j++)
            seen = dev[m->readers[j]] == d;
        if (!seen)
            t += m->vcost[k];
    }
    return t;
}


static double max_load(const model *m)
{
    double mx = 0;
    for (int d = 0; d < m->n_dev; d++)
        mx = m->load[d] > mx ? m->load[d] : mx;
    return mx;
}

/* the transfer time of group g's values with g on device d */
static double group_cut(model *m, int g, int d)
{
    int old = m->dev[g];
    m->dev[g] = d;
    double t = 0;
    for (int i = m->gstart[g]; i < m->gstart[g + 1]; i++)
        t += value_cut(m, m->gvals[i], m->dev);
    m->dev[g] = old;
    return t;
}

/* ---- building the model --------------------------------------------------------------- */
static bool crosses(const tg_graph *g, const bool *needed, int v)
{
    const tg_gnode *p = &g->nodes[g->values[v].node];
    return needed[g->values[v].node] && p->kind != TG_GNODE_PLACEHOLDER &&
           p->kind != TG_GNODE_CONSTANT;
}

/* per value: the distinct reader groups other than its producer's (CSR) */
static bool build_readers(const tg_graph *g, const bool *needed, const int *gid, model *m,
                          int *vid)
{
    int nv = g->n_values, nr = 0;
    for (int v = 0; v < nv; v++)
        vid[v] = -1;
    for (int u = 0; u < g->n_nodes; u++)
        for (int i = 0; needed[u] && i < g->nodes[u].n_in; i++) {
            int v = g->nodes[u].in[i];
            if (crosses(g, needed, v) && gid[g->values[v].node] != gid[u] && vid[v] < 0)
                vid[v] = m->n_vals++;
            nr += crosses(g, needed, v);
        }
    m->vgroup = malloc(((size_t)m->n_vals + 1) * sizeof(int));
    m->vcost = malloc(((size_t)m->n_vals + 1) * sizeof(double));
    m->rstart = calloc((size_t)m->n_vals + 2, sizeof(int));
    m->readers = malloc(((size_t)nr + 1) * sizeof(int));
    if (!m->vgroup || !m->vcost || !m->rstart || !m->readers)
        return false;
    for (int v = 0; v < nv; v++)
        if (vid[v] >= 0) {
            m->vgroup[vid[v]] = gid[g->values[v].node];
            m->vcost[vid[v]] = transfer_time(bytes_of(&g->values[v].meta));
        }
    /* readers in node order; a group reading twice counts once */
    for (int pass = 0; pass < 2; pass++) {
        int *fill = pass ? calloc((size_t)m->n_vals + 1, sizeof(int)) : NULL;
        if (pass && !fill)
            return false;
        for (int u = 0; u < g->n_nodes; u++)
            for (int i = 0; needed[u] && i < g->nodes[u].n_in; i++) {
                int k = vid[g->nodes[u].in[i]];
                if (k < 0 || m->vgroup[k] == gid[u])
                    continue;
                if (!pass) {
                    m->rstart[k + 1]++;
                    continue;
                }
                bool seen = false;
                for (int j = m->rstart[k]; j < m->rstart[k] + fill[k] && !seen; j++)
                    seen = m->readers[j] == gid[u];
                if (!seen)
                    m->readers[m->rstart[k] + fill[k]++] = gid[u];
            }
        if (!pass)
            for (int k = 0; k < m->n_vals; k++)
                m->rstart[k + 1] += m->rstart[k];
        else { /* compact: duplicates left holes */
            int at = 0;
            for (int k = 0; k < m->n_vals; k++) {
                int from = m->rstart[k];
                m->rstart[k] = at;
                memmove(&m->readers[at], &m->readers[from], (size_t)fill[k] * sizeof(int));
                at += fill[k];
            }
            m->rstart[m->n_vals] = at;
            free(fill);
        }
    }
    return true;
}

/* per group: the values it produces or reads (CSR) */
static bool build_group_values(model *m)
{
    m->gstart = calloc((size_t)m->n_groups + 2, sizeof(int));
    int n = m->n_vals + m->rstart[m->n_vals];
    m->gvals = malloc(((size_t)n + 1) * sizeof(int));
    int *fill = calloc((size_t)m->n_groups + 1, sizeof(int));
    if (!m->gstart || !m->gvals || !fill) {
        free(fill);
        return false;
    }
    for (int k = 0; k < m->n_vals; k++) {
        m->gstart[m->vgroup[k] + 1]++;
        for (int i = m->rstart[k]; i < m->rstart[k + 1]; i++)
            m->gstart[m->readers[i] + 1]++;
    }
    for (int gi = 0; gi < m->n_groups; gi++)
        m->gstart[gi + 1] += m->gstart[gi];
    for (int k = 0; k < m->n_vals; k++) {
        m->gvals[m->gstart[m->vgroup[k]] + fill[m->vgroup[k]]++] = k;
        for (int i = m->rstart[k]; i < m->rstart[k + 1]; i++)
            m->gvals[m->gstart[m->readers[i]] + fill[m->readers[i]]++] = k;
    }
    free(fill);
    return true;
}

static void model_free(model *m)
{
    free(m->w);
    free(m->fixed);
    free(m->dev);
    free(m->vgroup);
    free(m->vcost);
    free(m->rstart);
    free(m->readers);
    free(m->gstart);
    free(m->gvals);
    free(m->load);
}

/* ---- the two phases ----------------------------------------------------------------- */
/* greedy: groups in the order of their first node, each where it
 * exchanges most bytes with what is placed, within its share */
static void greedy(model *m, const int *order)
{
    double total = 0, *aff = calloc((size_t)m->n_dev, sizeof(double));
    if (!aff)
        return; /* the caller sees groups left at -1 and falls back */
    for (int gi = 0; gi < m->n_groups; gi++)
        total += m->w[gi];
    double share = total / m->n_dev * SHARE_SLACK;
    for (int o = 0; o < m->n_groups; o++) {
        int gi = order[o];
        if (m->dev[gi] >= 0)
            continue;
        memset(aff, 0, (size_t)m->n_dev * sizeof(double));
        for (int i = m->gstart[gi]; i < m->gstart[gi + 1]; i++) {
            int k = m->gvals[i];
            if (m->vgroup[k] != gi && m->dev[m->vgroup[k]] >= 0)
                aff[m->dev[m->vgroup[k]]] += m->vcost[k];
            for (int j = m->rstart[k]; m->vgroup[k] == gi && j < m->rstart[k + 1]; j++)
                if (m->dev[m->readers[j]] >= 0)
                    aff[m->dev[m->readers[j]]] += m->vcost[k];
        }
        int best = -1;
        for (int d = 0; d < m->n_dev; d++) {
            if (m->load[d] + m->w[gi] > share && m->load[d] > 0)
                continue;
            if (best < 0 || aff[d] > aff[best] ||
                (aff[d] == aff[best] && m->load[d] < m->load[best]))
                best = d;
        }
        for (int d = 0; best < 0 && d < m->n_dev; d++) /* all full: the least loaded */
            if (d == 0 || m->load[d] < m->load[best < 0 ? 0 : best])
                best = d;
        m->dev[gi] = best;
        m->load[best] += m->w[gi];
    }
    free(aff);
}

/* single-group moves that lower J = max load + transfers */
static void refine(model *m)
{
    if (m->n_groups > MAX_REFINE_GROUPS)
        return;
    for (int pass = 0; pass < MAX_PASSES; pass++) {
        bool moved = false;
        for (int gi = 0; gi < m->n_groups; gi++) {
            if (m->fixed[gi] >= 0)
                continue;
            int from = m->dev[gi];
            double cut_now = group_cut(m, gi, from), j_now = max_load(m) + cut_now;
            int best = from;
            double best_j = j_now;
            for (int d = 0; d < m->n_dev; d++) {
                if (d == from)
                    continue;
                m->load[from] -= m->w[gi];
                m->load[d] += m->w[gi];
                double j = max_load(m) + group_cut(m, gi, d);
                m->load[d] -= m->w[gi];
                m->load[from] += m->w[gi];
                if (j < best_j - 1e-12) {
                    best_j = j;
                    best = d;
                }
            }
            if (best != from) {
                m->load[from] -= m->w[gi];
                m->load[best] += m->w[gi];
                m->dev[gi] = best;
                moved = true;
            }
        }
        if (!moved)
            break;
    }
}

tg_status tg__place_by_cost(const tg_graph *g, const bool *needed, int *up, int n_devices,
                            int *part)
{
    size_t N = (size_t)g->n_nodes + 1;
    int *gid = malloc(N * sizeof(int)), *vid = malloc(((size_t)g->n_values + 1) * sizeof(int));
    int *order = malloc(N * sizeof(int));
    model m = {0};
    m.n_dev = n_devices;
    tg_status s = TG_OK;
    if (!gid || !vid || !order)
        goto nomem;
    for (int u = 0; u < g->n_nodes; u++) /* leaders first in id order: their gid */
        gid[u] = needed[u] && leader(up, u) == u ? m.n_groups++ : -1;
    for (int u = 0; u < g->n_nodes; u++)
        if (needed[u])
            gid[u] = gid[leader(up, u)];
    m.w = calloc((size_t)m.n_groups + 1, sizeof(double));
    m.fixed = malloc(((size_t)m.n_groups + 1) * sizeof(int));
    m.dev = malloc(((size_t)m.n_groups + 1) * sizeof(int));
    m.load = calloc((size_t)n_devices + 1, sizeof(double));
    if (!m.w || !m.fixed || !m.dev || !m.load)
        goto nomem;
    int n_order = 0;
    for (int u = 0; u < g->n_nodes; u++) {
        if (!needed[u])
            continue;
        int gi = gid[u];
        if (leader(up, u) == u) {
            m.fixed[gi] = m.dev[gi] = part[u];
            order[n_order++] = gi; /* groups by their lowest id: about topological */
        }
        m.w[gi] += node_time(g, &g->nodes[u]);
    }
    for (int gi = 0; gi < m.n_groups; gi++)
        if (m.dev[gi] >= 0)
            m.load[m.dev[gi]] += m.w[gi];
    if (!build_readers(g, needed, gid, &m, vid) || !build_group_values(&m))
        goto nomem;
    greedy(&m, order);
    for (int gi = 0; gi < m.n_groups; gi++)
        if (m.dev[gi] < 0)
            goto nomem;
    refine(&m);
    for (int u = 0; u < g->n_nodes; u++)
        if (needed[u] && leader(up, u) == u)
            part[u] = m.dev[gid[u]];
    goto done;
nomem:
    s = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory placing nodes");
done:
    model_free(&m);
    free(gid);
    free(vid);
    free(order);
    return s;
}
