/* Sessions: check a run's feeds, fetches and targets, find or compile the
 * plan for their signature (cached), execute it, and hand the fetched
 * values back as concrete tensors. */
#include "ops/elementwise.h"
#include "runtime/runtime_impl.h"

#include <stdlib.h>
#include <string.h>

struct tg_session {
    tg_graph *g;
    tg_plan *plans; /* the cache: a list, most recently compiled first */
    tg_session_stats stats;
};

tg_session *tg_session_new(tg_graph *g)
{
    if (!g)
        return tg__error_null(TG_ERR_ARG, "tg_session_new: graph is NULL");
    tg_session *s = calloc(1, sizeof *s);
    if (!s)
        return tg__error_null(TG_ERR_NOMEM, "tg_session_new: out of memory");
    s->g = g;
    tg__graph_retain(g);
    return s;
}

void tg_session_free(tg_session *s)
{
    if (!s)
        return;
    while (s->plans) {
        tg_plan *p = s->plans;
        s->plans = p->next;
        tg__plan_free(p);
    }
    tg__graph_release(s->g);
    free(s);
}

void tg_session_get_stats(const tg_session *s, tg_session_stats *out)
{
    if (s && out)
        *out = s->stats;
}

/* ---- a run's request, as ids ---------------------------------------------------- */
typedef struct request {
    int n_feeds, n_fetches, n_targets;
    int *feeds, *fetches, *targets; /* value, value and node ids, as given */
    tg_tensor *const *feed_tensors;
} request;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* a sorted, duplicate-free copy of a[0..n) into out; returns its length */
static int sorted_set(const int *a, int n, int *out)
{
    if (n == 0)
        return 0;
    memcpy(out, a, (size_t)n * sizeof *a);
    qsort(out, (size_t)n, sizeof *out, cmp_int);
    int k = 1;
    for (int i = 1; i < n; i++)
        if (out[i] != out[k - 1])
            out[k++] = out[i];
    return k;
}

static bool key_eq(const tg_plan_key *a, const tg_plan_key *b)
{
    return a->n_feeds == b->n_feeds && a->n_fetches == b->n_fetches &&
           a->n_targets == b->n_targets &&
           !memcmp(a->feeds, b->feeds, (size_t)a->n_feeds * sizeof(int)) &&
           !memcmp(a->fetches, b->fetches, (size_t)a->n_fetches * sizeof(int)) &&
           !memcmp(a->targets, b->targets, (size_t)a->n_targets * sizeof(int));
}

static void meta_str(int ndim, const int64_t *shape, tg_dtype dt, char *buf, size_t len)
{
    char s[160];
    snprintf(buf, len, "%s%s", tg_dtype_name(dt), tg_shape_str(ndim, shape, s, sizeof s));
}

static tg_status check_feeds(const tg_graph *g, const request *r, bool *fed)
{
    char name[300], a[200], b[200];
    for (int i = 0; i < r->n_feeds; i++) {
        int v = r->feeds[i];
        const tg_tensor *t = r->feed_tensors ? r->feed_tensors[i] : NULL;
        const tg_gvalue *x = &g->values[v];
        const tg_gnode *n = &g->nodes[x->node];
        tg__value_name(g, v, name, sizeof name);
        if (fed[v])
            return tg__error(TG_ERR_ARG, "tg_session_run: '%s' is fed twice", name);
        fed[v] = true;
        if (n->kind == TG_GNODE_VARIABLE)
            return tg__error(TG_ERR_ARG, "tg_session_run: '%s' is a variable and "
                             "cannot be fed; assign it (tg_assign) instead", name);
        if (!t)
            return tg__error(TG_ERR_ARG, "tg_session_run: the tensor fed to '%s' is NULL",
                             name);
        if (t->graph)
            return tg__error(TG_ERR_ARG, "tg_session_run: the tensor fed to '%s' is "
                             "symbolic; feeds must be concrete tensors", name);
        if (t->dtype != x->meta.dtype ||
            !tg__shape_eq(t->ndim, t->shape, x->meta.ndim, x->meta.shape)) {
            meta_str(t->ndim, t->shape, t->dtype, a, sizeof a);
            meta_str(x->meta.ndim, x->meta.shape, x->meta.dtype, b, sizeof b);
            return tg__error(t->dtype != x->meta.dtype ? TG_ERR_DTYPE : TG_ERR_SHAPE,
                             "tg_session_run: %s '%s' was fed a %s tensor, expected %s",
                             tg__gnode_op_name(n), name, a, b);
        }
    }
    for (int i = 0; i < r->n_fetches; i++)
        if (fed[r->fetches[i]])
            return tg__error(TG_ERR_ARG, "tg_session_run: '%s' is both fed and fetched",
                             tg__value_name(g, r->fetches[i], name, sizeof name));
    return TG_OK;
}

static tg_plan *find_or_compile(tg_session *s, const request *r, const bool *fed)
{
    int *buf = malloc((size_t)(r->n_feeds + r->n_fetches + r->n_targets + 1) * sizeof *buf);
    if (!buf)
        return tg__error_null(TG_ERR_NOMEM, "tg_session_run: out of memory");
    tg_plan_key k;
    k.feeds = buf;
    k.n_feeds = sorted_set(r->feeds, r->n_feeds, k.feeds);
    k.fetches = k.feeds + k.n_feeds;
    k.n_fetches = sorted_set(r->fetches, r->n_fetches, k.fetches);
    k.targets = k.fetches + k.n_fetches;
    k.n_targets = sorted_set(r->targets, r->n_targets, k.targets);
    tg_plan **pp = &s->plans;
    for (; *pp; pp = &(*pp)->next)
        if (key_eq(&(*pp)->key, &k))
            break;
    tg_plan *p = *pp;
    if (p && p->epoch != s->g->epoch) { /* the graph was edited: recompile */
        *pp = p->next;
        tg__plan_free(p);
        s->stats.n_plans--;
        p = NULL;
    }
    if (p) {
        s->stats.plan_hits++;
    } else if (tg_graph_verify(s->g) == TG_OK && (p = tg__plan_compile(s->g, &k, fed))) {
        p->next = s->plans;
        s->plans = p;
        s->stats.plan_misses++;
        s->stats.n_plans++;
    }
    free(buf);
    return p;
}

/* fetched values that alias variables or constants were copied by the
 * executor (see tg_plan.snapshot): hand the tensors over as they are */
static void hand_over(const request *r, tg_tensor **vals, tg_tensor **snaps,
                      tg_tensor **results)
{
    for (int i = 0; i < r->n_fetches; i++) {
        int v = r->fetches[i];
        results[i] = tg__publish(tg_retain(snaps[v] ? snaps[v] : vals[v]));
    }
}

static tg_status run_request(tg_session *s, const request *r, tg_tensor **results)
{
    const tg_graph *g = s->g;
    for (int i = 0; i < r->n_fetches; i++)
        results[i] = NULL;
    bool *fed = calloc((size_t)g->n_values + 1, 1);
    tg_tensor **vals = calloc((size_t)g->n_values + 1, sizeof *vals);
    tg_tensor **snaps = calloc((size_t)g->n_values + 1, sizeof *snaps);
    tg_status st = fed && vals && snaps ? check_feeds(g, r, fed)
                               : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    tg_plan *p = st == TG_OK ? find_or_compile(s, r, fed) : NULL;
    if (st == TG_OK && !p)
        st = tg_last_status();
    int64_t n_ops = 0;
    if (st == TG_OK) {
        for (int i = 0; i < r->n_feeds; i++)
            vals[r->feeds[i]] = tg_retain(r->feed_tensors[i]);
        st = tg__plan_execute(g, p, vals, snaps, &n_ops);
        s->stats.nodes_last_run = n_ops;
        s->stats.nodes_total += n_ops;
    }
    if (st == TG_OK) {
        hand_over(r, vals, snaps, results);
        s->stats.runs++;
    }
    for (int v = 0; v < g->n_values; v++) {
        tg_release(vals ? vals[v] : NULL);
        tg_release(snaps ? snaps[v] : NULL);
    }
    if (st != TG_OK)
        for (int i = 0; i < r->n_fetches; i++) {
            results[i] = NULL;
        }
    free(fed);
    free(vals);
    free(snaps);
    return st;
}

/* ---- the two front doors ---------------------------------------------------------- */
static tg_status check_counts(const tg_session *s, int n_feeds, const void *feeds,
                              const void *feed_tensors, int n_fetches,
                              const void *fetches, const void *results, int n_targets,
                              const void *targets)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_session_run: session is NULL");
    if (n_feeds < 0 || n_fetches < 0 || n_targets < 0 ||
        (n_feeds && (!feeds || !feed_tensors)) || (n_fetches && (!fetches || !results)) ||
        (n_targets && !targets))
        return tg__error(TG_ERR_ARG, "tg_session_run: bad counts or NULL arrays");
    if (n_fetches + n_targets == 0)
        return tg__error(TG_ERR_ARG, "tg_session_run: nothing to fetch or run");
    return TG_OK;
}

tg_status tg_session_run(tg_session *s, int n_feeds, tg_tensor *const *feed_values,
                         tg_tensor *const *feed_tensors, int n_fetches,
                         tg_tensor *const *fetch_values, tg_tensor **results,
                         int n_targets, tg_tensor *const *targets)
{
    tg_status st = check_counts(s, n_feeds, feed_values, feed_tensors, n_fetches,
                                fetch_values, results, n_targets, targets);
    if (st != TG_OK)
        return st;
    int n = n_feeds + n_fetches + n_targets;
    int *ids = malloc((size_t)(n + 1) * sizeof *ids);
    if (!ids)
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    for (int i = 0; i < n && st == TG_OK; i++) {
        tg_tensor *t = i < n_feeds ? feed_values[i]
                       : i < n_feeds + n_fetches ? fetch_values[i - n_feeds]
                                                 : targets[i - n_feeds - n_fetches];
        const char *what = i < n_feeds ? "a fed value"
                           : i < n_feeds + n_fetches ? "a fetched value" : "a target";
        ids[i] = tg__graph_value_of(s->g, t, "tg_session_run", what);
        if (ids[i] < 0)
            st = tg_last_status();
        else if (i >= n_feeds + n_fetches) /* targets are nodes */
            ids[i] = s->g->values[ids[i]].node;
    }
    request r = {n_feeds, n_fetches, n_targets, ids, ids + n_feeds,
                 ids + n_feeds + n_fetches, feed_tensors};
    if (st == TG_OK)
        st = run_request(s, &r, results);
    else
        for (int i = 0; i < n_fetches; i++)
            results[i] = NULL;
    free(ids);
    return st;
}

tg_status tg_session_run_named(tg_session *s, int n_feeds, const char *const *feed_names,
                               tg_tensor *const *feed_tensors, int n_fetches,
                               const char *const *fetch_names, tg_tensor **results,
                               int n_targets, const char *const *target_names)
{
    tg_status st = check_counts(s, n_feeds, feed_names, feed_tensors, n_fetches,
                                fetch_names, results, n_targets, target_names);
    if (st != TG_OK)
        return st;
    int n = n_feeds + n_fetches + n_targets;
    int *ids = malloc((size_t)(n + 1) * sizeof *ids);
    if (!ids)
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    for (int i = 0; i < n && st == TG_OK; i++) {
        const char *name = i < n_feeds ? feed_names[i]
                           : i < n_feeds + n_fetches ? fetch_names[i - n_feeds]
                                                     : target_names[i - n_feeds - n_fetches];
        ids[i] = tg__graph_parse_value(s->g, name, "tg_session_run");
        if (ids[i] < 0)
            st = tg_last_status();
        else if (i >= n_feeds + n_fetches)
            ids[i] = s->g->values[ids[i]].node;
    }
    request r = {n_feeds, n_fetches, n_targets, ids, ids + n_feeds,
                 ids + n_feeds + n_fetches, feed_tensors};
    if (st == TG_OK)
        st = run_request(s, &r, results);
    else
        for (int i = 0; i < n_fetches; i++)
            results[i] = NULL;
    free(ids);
    return st;
}
