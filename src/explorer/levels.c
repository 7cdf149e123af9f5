/* The explorer's optimization levels: for each of levels 0, 1 and 2 a
 * session over the caller's graph compiles the plan of one signature (as
 * a run would), and the page gets the graph that plan runs, what each pass
 * did to it and its memory plan. The same pass manager and planner as
 * every run: the page shows what runs, not a model of it.
 *
 * Node classes. Backward nodes are those tg_graph_gradients made and the
 * op nodes computed from them (the optimizer's arithmetic on gradients,
 * and the nodes passes made of backward ones: a fused node reading a
 * gradient); nodes writing state (assign, fused_update) are updates, and
 * so, when the plan has such targets, are the other nodes only they need
 * (a step counter); every other op node is forward. */
#include "explorer/explorer.h"
#include "io/json.h"
#include "graph/graph_json.h"

#include <stdlib.h>
#include <string.h>

typedef struct signature {
    int n_feeds, n_fetches, n_targets;
    tg_tensor *const *feeds, *const *feed_tensors, *const *fetches, *const *targets;
    tg_tensor **made; /* defaults made here (released after), or NULL */
    int n_made;
} signature;

static bool side_effects(const tg_gnode *n)
{
    return n->kind == TG_GNODE_OP && (n->op->flags & TG_OP_SIDE_EFFECTS);
}

/* the defaults: every placeholder fed; every value no node reads fetched,
 * every state update no node reads a target */
static tg_status default_signature(tg_graph *g, const tg_html_options *o, signature *s)
{
    int *readers = calloc((size_t)g->n_values + 1, sizeof *readers);
    s->made = malloc(((size_t)g->n_values + 1) * sizeof *s->made);
    if (!readers || !s->made) {
        free(readers);
        return tg__error(TG_ERR_NOMEM, "tg_graph_to_html: out of memory");
    }
    for (int id = 0; id < g->n_nodes; id++)
        for (int i = 0; i < g->nodes[id].n_in; i++)
            readers[g->nodes[id].in[i]]++;
    tg_status st = TG_OK;
    /* three passes over the nodes keep each list contiguous in s->made */
    for (int pass = 0; pass < 3 && st == TG_OK; pass++) {
        int start = s->n_made;
        bool wanted = pass == 0 ? o->n_feeds == 0 : o->n_fetches == 0 && o->n_targets == 0;
        for (int id = 0; wanted && id < g->n_nodes && st == TG_OK; id++) {
            const tg_gnode *n = &g->nodes[id];
            for (int k = 0; k < n->n_out; k++) {
                int v = n->out[k];
                bool take = pass == 0   ? n->kind == TG_GNODE_PLACEHOLDER
                            : pass == 1 ? n->kind == TG_GNODE_OP && !side_effects(n) &&
                                              readers[v] == 0
                                        : side_effects(n) && k == 0 && readers[v] == 0;
                if (take && !(s->made[s->n_made++] = tg__graph_symbolic(g, v)))
                    st = tg_last_status();
            }
        }
        if (wanted) {
            tg_tensor *const *list = s->made + start;
            int n = s->n_made - start;
            if (pass == 0)
                s->feeds = list, s->n_feeds = n, s->feed_tensors = NULL;
            else if (pass == 1)
                s->fetches = list, s->n_fetches = n;
            else
                s->targets = list, s->n_targets = n;
        }
    }
    free(readers);
    return st;
}

static tg_status make_signature(tg_graph *g, const tg_html_options *o, signature *s)
{
    *s = (signature){o->n_feeds, o->n_fetches, o->n_targets, o->feeds, o->feed_tensors,
                     o->fetches, o->targets, NULL, 0};
    if (o->n_feeds && o->n_fetches + o->n_targets)
        return TG_OK;
    return default_signature(g, o, s);
}

static void free_signature(signature *s)
{
    for (int i = 0; i < s->n_made; i++)
        tg_release(s->made[i]);
    free(s->made);
}

static void put_passes(tg_strbuf *b, const tg_plan *p)
{
    tg__strbuf_puts(b, ",\"passes\":[");
    for (int i = 0; i < p->n_records; i++) {
        const tg_pass_record *r = &p->records[i];
        tg__strbuf_puts(b, i ? ",{\"pass\":" : "{\"pass\":");
        tg_json_put_string(b, r->pass);
        tg__strbuf_printf(b, ",\"before\":%d,\"after\":%d,\"counts\":[", r->nodes_before,
                          r->nodes_after);
        for (int k = 0; k < r->n_counts; k++) {
            tg__strbuf_puts(b, k ? ",[" : "[");
            tg_json_put_string(b, r->counts[k].what);
            tg__strbuf_printf(b, ",%d]", r->counts[k].n);
        }
        tg__strbuf_puts(b, "]}");
    }
    tg__strbuf_puts(b, "]");
}

/* per node of the plan's graph: its step in the plan, -1: not run */
static void steps_of(const tg_plan *p, int *step)
{
    for (int id = 0; id < p->g->n_nodes; id++)
        step[id] = -1;
    for (int k = 0; k < p->n_steps; k++)
        step[p->steps[k]] = k;
}

/* per node of the plan's graph: do the fetched values need it (data
 * edges)? NULL when out of memory (then every node counts as needed) */
static bool *needed_by_fetches(const tg_plan *p)
{
    const tg_graph *g = p->g;
    bool *need = calloc((size_t)g->n_nodes + 1, 1);
    for (int i = 0; need && i < p->key.n_fetches; i++)
        if (p->run_fetches[i] >= 0)
            need[g->values[p->run_fetches[i]].node] = true;
    /* ids are a topological order of the data edges: one sweep backwards */
    for (int id = g->n_nodes - 1; need && id >= 0; id--)
        for (int i = 0; need[id] && i < g->nodes[id].n_in; i++)
            need[g->values[g->nodes[id].in[i]].node] = true;
    return need;
}

/* per op node its class; ids are a topological order of the data edges,
 * so a node's inputs are classed before it. needed (NULL: all): the nodes
 * the fetched values need; a forward-looking node only the updates need
 * (a step counter, a learning-rate schedule) is part of the update. */
static void classify(const tg_graph *g, const bool *needed, const char **cls)
{
    for (int id = 0; id < g->n_nodes; id++) {
        const tg_gnode *n = &g->nodes[id];
        cls[id] = NULL;
        if (n->kind != TG_GNODE_OP)
            continue;
        bool bwd = n->backward;
        for (int i = 0; i < n->n_in && !bwd; i++) {
            const char *c = cls[g->values[n->in[i]].node];
            bwd = c && !strcmp(c, "bwd");
        }
        cls[id] = side_effects(n) ? "upd" : bwd ? "bwd" : needed && !needed[id] ? "upd" : "fwd";
    }
}

static void put_plan(tg_strbuf *b, const tg_plan *p)
{
    int n = p->g->n_nodes + 1;
    int *step = malloc((size_t)n * sizeof *step);
    const char **cls = malloc((size_t)n * sizeof *cls);
    if (!step || !cls) {
        b->failed = true;
    } else {
        steps_of(p, step);
        bool *needed = p->key.n_targets ? needed_by_fetches(p) : NULL;
        classify(p->g, needed, cls);
        free(needed);
        tg__strbuf_puts(b, ",\"graph\":");
        tg__graph_json(b, p->g, &(tg_graph_json_plan){cls, step});
        put_passes(b, p);
        tg__strbuf_puts(b, ",\"memory\":");
        tg__explorer_memory(b, p, step);
    }
    free(step);
    free(cls);
}

static void put_unplanned(tg_strbuf *b, const tg_graph *g)
{
    const char **cls = malloc(((size_t)g->n_nodes + 1) * sizeof *cls);
    if (!cls) {
        b->failed = true;
        return;
    }
    classify(g, NULL, cls);
    tg__strbuf_puts(b, ",\"graph\":");
    tg__graph_json(b, g, &(tg_graph_json_plan){cls, NULL});
    free(cls);
}

static void put_level(tg_strbuf *b, tg_graph *g, const signature *s, int level)
{
    tg__strbuf_printf(b, "%s{\"level\":%d", level ? ",\n" : "", level);
    tg_session *ss = tg_session_new(g);
    tg_session_options so = tg_session_default_options();
    so.opt_level = level;
    tg_graph *pg = ss && tg_session_set_options(ss, &so) == TG_OK
                       ? tg_session_optimized_graph(ss, s->n_feeds, s->feeds, s->feed_tensors,
                                                    s->n_fetches, s->fetches, s->n_targets,
                                                    s->targets, 0, NULL, NULL)
                       : NULL;
    const tg_plan *p = pg ? tg__session_last_plan(ss) : NULL;
    if (p) {
        put_plan(b, p);
    } else {
        tg__strbuf_puts(b, ",\"error\":");
        tg_json_put_string(b, tg_last_error());
        if (level == 0) /* the graph as built, without a plan */
            put_unplanned(b, g);
    }
    tg__strbuf_puts(b, "}");
    tg_graph_free(pg);
    tg_session_free(ss);
}

tg_status tg__explorer_levels(tg_strbuf *b, tg_graph *g, const tg_html_options *o)
{
    signature s;
    tg_status st = make_signature(g, o, &s);
    if (st == TG_OK) {
        tg__strbuf_puts(b, "\"levels\":[\n");
        for (int level = 0; level <= 2; level++)
            put_level(b, g, &s, level);
        tg__strbuf_puts(b, "]");
    }
    free_signature(&s);
    return st;
}
