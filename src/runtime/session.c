/* Sessions: check a run's feeds, fetches and targets, find or compile the
 * plan for their signature (cached), execute it with the chosen executor,
 * and hand the fetched values back as concrete tensors; options, memory
 * statistics and the profiler's spans. */
#include "io/json.h"
#include "util/grow.h"
#include "ops/elementwise.h"
#include "runtime/runtime_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct trace_event {
    int node, tid, run;
    int64_t t0, t1;
} trace_event;

struct tg_session {
    tg_graph *g;
    tg_plan *plans; /* the cache: a list, most recently compiled first */
    const tg_plan *last; /* used by the last run or memory_stats call */
    tg_session_stats stats;
    tg_executor_kind executor;
    bool no_memory_plan;
    /* profiler */
    bool tracing;
    int64_t trace_t0;
    trace_event *events;
    int64_t n_events, cap_events;
    int trace_runs;
};

static void drop_plans(tg_session *s)
{
    while (s->plans) {
        tg_plan *p = s->plans;
        s->plans = p->next;
        tg__plan_free(p);
    }
    s->last = NULL;
    s->stats.n_plans = 0;
}

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
    drop_plans(s);
    free(s->events);
    tg__graph_release(s->g);
    free(s);
}

tg_status tg_session_set_executor(tg_session *s, tg_executor_kind kind)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_session_set_executor: session is NULL");
    if (kind != TG_EXECUTOR_SERIAL && kind != TG_EXECUTOR_PARALLEL)
        return tg__error(TG_ERR_ARG, "tg_session_set_executor: unknown executor %d",
                         (int)kind);
    if (kind != s->executor)
        drop_plans(s); /* the memory plan differs between executors */
    s->executor = kind;
    return TG_OK;
}

tg_status tg_session_set_memory_plan(tg_session *s, bool on)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_session_set_memory_plan: session is NULL");
    if (on == s->no_memory_plan)
        drop_plans(s);
    s->no_memory_plan = !on;
    return TG_OK;
}

const tg_plan *tg__session_last_plan(const tg_session *s) { return s ? s->last : NULL; }

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

/* r->feed_tensors NULL: planning only (memory_stats), no tensors to check */
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
        if (!r->feed_tensors)
            continue;
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
        if (s->last == p)
            s->last = NULL;
        *pp = p->next;
        tg__plan_free(p);
        s->stats.n_plans--;
        p = NULL;
    }
    if (p) {
        s->stats.plan_hits++;
    } else if (tg_graph_verify(s->g) == TG_OK &&
               (p = tg__plan_compile(s->g, &k, fed, !s->no_memory_plan,
                                     s->executor == TG_EXECUTOR_PARALLEL))) {
        p->next = s->plans;
        s->plans = p;
        s->stats.plan_misses++;
        s->stats.n_plans++;
    }
    free(buf);
    if (p)
        s->last = p;
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

/* ---- profiler ---------------------------------------------------------------------- */
static tg_status record_spans(tg_session *s, const tg_trace_span *spans, int n)
{
    for (int k = 0; k < n; k++) {
        if (spans[k].node < 0)
            continue;
        if (!TG_GROW(s->events, s->cap_events, s->n_events + 1))
            return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory "
                             "recording the trace");
        s->events[s->n_events++] = (trace_event){spans[k].node, spans[k].tid,
                                                 s->trace_runs, spans[k].t0, spans[k].t1};
    }
    s->trace_runs++;
    return TG_OK;
}

tg_status tg_session_trace_begin(tg_session *s)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_session_trace_begin: session is NULL");
    s->tracing = true;
    s->trace_t0 = tg__now_ns();
    s->n_events = 0;
    s->trace_runs = 0;
    return TG_OK;
}

static void write_event(tg_strbuf *b, const tg_graph *g, const trace_event *e, int64_t t0,
                        bool first)
{
    const tg_gnode *n = &g->nodes[e->node];
    tg__strbuf_puts(b, first ? "\n  {\"name\": " : ",\n  {\"name\": ");
    tg_json_put_string(b, n->name);
    tg__strbuf_puts(b, ", \"cat\": ");
    tg_json_put_string(b, tg__gnode_op_name(n));
    tg__strbuf_printf(b, ", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": 1, "
                     "\"tid\": %d, \"args\": {\"run\": %d}}",
                     (double)(e->t0 - t0) / 1e3, (double)(e->t1 - e->t0) / 1e3, e->tid,
                     e->run);
}

tg_status tg_session_trace_end(tg_session *s, const char *path)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_session_trace_end: session is NULL");
    if (!s->tracing)
        return tg__error(TG_ERR_ARG, "tg_session_trace_end: no trace was begun "
                         "(tg_session_trace_begin)");
    s->tracing = false;
    tg_status st = TG_OK;
    if (path) {
        tg_strbuf b = {0};
        tg__strbuf_puts(&b, "{\"traceEvents\": [");
        for (int64_t i = 0; i < s->n_events; i++)
            write_event(&b, s->g, &s->events[i], s->trace_t0, i == 0);
        tg__strbuf_puts(&b, "\n], \"displayTimeUnit\": \"ms\"}\n");
        FILE *f = b.failed ? NULL : fopen(path, "wb");
        if (b.failed) {
            st = tg__error(TG_ERR_NOMEM, "tg_session_trace_end: out of memory");
        } else if (!f) {
            st = tg__error(TG_ERR_IO, "tg_session_trace_end: cannot open '%s' for "
                           "writing", path);
        } else {
            bool ok = fwrite(b.data, 1, b.len, f) == b.len;
            if (fclose(f) != 0 || !ok)
                st = tg__error(TG_ERR_IO, "tg_session_trace_end: cannot write '%s'", path);
        }
        tg__strbuf_free(&b);
    }
    free(s->events);
    s->events = NULL;
    s->n_events = s->cap_events = 0;
    return st;
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
    tg_trace_span *spans = NULL;
    if (st == TG_OK && s->tracing &&
        !(spans = malloc(((size_t)p->n_steps + 1) * sizeof *spans)))
        st = tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    if (st == TG_OK) {
        for (int i = 0; i < r->n_feeds; i++)
            vals[r->feeds[i]] = tg_retain(r->feed_tensors[i]);
        for (int k = 0; spans && k < p->n_steps; k++)
            spans[k].node = -1; /* steps that never ran */
        tg_exec x = {g, p, vals, snaps, spans, 0};
        st = s->executor == TG_EXECUTOR_PARALLEL ? tg__plan_execute_parallel(&x)
                                                 : tg__plan_execute(&x);
        s->stats.nodes_last_run = x.n_ops;
        s->stats.nodes_total += x.n_ops;
        if (spans && record_spans(s, spans, p->n_steps) != TG_OK && st == TG_OK)
            st = tg_last_status();
    }
    free(spans);
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

/* the value ids of feeds and fetches and the node ids of targets, into
 * ids (n_feeds + n_fetches + n_targets entries); the three lists hold
 * tensors, or names (const char *) when `named` */
static tg_status ids_of(const tg_session *s, bool named, int n_feeds, const void *feeds,
                        int n_fetches, const void *fetches, int n_targets,
                        const void *targets, int *ids)
{
    static const char *const what[3] = {"a fed value", "a fetched value", "a target"};
    const void *lists[3] = {feeds, fetches, targets};
    int first[3] = {0, n_feeds, n_feeds + n_fetches};
    for (int i = 0; i < n_feeds + n_fetches + n_targets; i++) {
        int l = i < first[1] ? 0 : i < first[2] ? 1 : 2, k = i - first[l];
        ids[i] = named ? tg__graph_parse_value(s->g, ((const char *const *)lists[l])[k],
                                               "tg_session_run")
                       : tg__graph_value_of(s->g, ((tg_tensor *const *)lists[l])[k],
                                            "tg_session_run", what[l]);
        if (ids[i] < 0)
            return tg_last_status();
        if (l == 2) /* targets are nodes */
            ids[i] = s->g->values[ids[i]].node;
    }
    return TG_OK;
}

/* both front doors: feeds, fetches and targets given as tensors, or by
 * name when `named` (the lists are then const char *const *) */
static tg_status session_run(tg_session *s, bool named, int n_feeds, const void *feeds,
                             tg_tensor *const *feed_tensors, int n_fetches,
                             const void *fetches, tg_tensor **results, int n_targets,
                             const void *targets)
{
    tg_status st = check_counts(s, n_feeds, feeds, feed_tensors, n_fetches, fetches,
                                results, n_targets, targets);
    if (st != TG_OK)
        return st;
    int n = n_feeds + n_fetches + n_targets;
    int *ids = malloc((size_t)(n + 1) * sizeof *ids);
    if (!ids)
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    st = ids_of(s, named, n_feeds, feeds, n_fetches, fetches, n_targets, targets, ids);
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

tg_status tg_session_run(tg_session *s, int n_feeds, tg_tensor *const *feed_values,
                         tg_tensor *const *feed_tensors, int n_fetches,
                         tg_tensor *const *fetch_values, tg_tensor **results,
                         int n_targets, tg_tensor *const *targets)
{
    return session_run(s, false, n_feeds, feed_values, feed_tensors, n_fetches,
                       fetch_values, results, n_targets, targets);
}

tg_status tg_session_memory_stats(tg_session *s, int n_feeds, tg_tensor *const *feed_values,
                                  int n_fetches, tg_tensor *const *fetch_values,
                                  int n_targets, tg_tensor *const *targets,
                                  tg_memory_stats *out)
{
    tg_tensor *dummy = NULL;
    tg_status st = check_counts(s, n_feeds, feed_values, feed_values, n_fetches,
                                fetch_values, &dummy, n_targets, targets);
    if (st == TG_OK && !out)
        st = tg__error(TG_ERR_ARG, "tg_session_memory_stats: out is NULL");
    if (st != TG_OK)
        return st;
    int n = n_feeds + n_fetches + n_targets;
    int *ids = malloc((size_t)(n + 1) * sizeof *ids);
    bool *fed = calloc((size_t)s->g->n_values + 1, 1);
    if (!ids || !fed)
        st = tg__error(TG_ERR_NOMEM, "tg_session_memory_stats: out of memory");
    if (st == TG_OK)
        st = ids_of(s, false, n_feeds, feed_values, n_fetches, fetch_values, n_targets,
                    targets, ids);
    request r = {n_feeds, n_fetches, n_targets, ids, ids + n_feeds,
                 ids + n_feeds + n_fetches, NULL};
    if (st == TG_OK)
        st = check_feeds(s->g, &r, fed);
    const tg_plan *p = st == TG_OK ? find_or_compile(s, &r, fed) : NULL;
    if (st == TG_OK && !p)
        st = tg_last_status();
    if (p)
        *out = p->mem.stats;
    free(ids);
    free(fed);
    return st;
}

tg_status tg_session_run_named(tg_session *s, int n_feeds, const char *const *feed_names,
                               tg_tensor *const *feed_tensors, int n_fetches,
                               const char *const *fetch_names, tg_tensor **results,
                               int n_targets, const char *const *target_names)
{
    return session_run(s, true, n_feeds, feed_names, feed_tensors, n_fetches, fetch_names,
                       results, n_targets, target_names);
}
