/* Sessions: check a run's feeds, fetches and targets, find or compile the
 * plan for their signature (cached), execute it with the chosen executor,
 * and hand the fetched values back as concrete tensors; options and memory
 * statistics (the profiler's traces are session_trace.c's). */
#include "util/intset.h"
#include "util/grow.h"
#include "ops/elementwise.h"
#include "passes/passes.h"
#include "runtime/runtime_impl.h"
#include "runtime/session_devices.h"
#include "runtime/session_impl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void drop_plans(tg_session *s)
{
    while (s->plans) {
        tg_plan *p = s->plans;
        s->plans = p->next;
        tg__plan_free(p);
    }
    s->last = NULL;
    s->stats.n_plans = 0;
    tg__devices_drop(s->dev);
}

/* the level a session starts with: TG_OPT_LEVEL, else 2 */
static int default_level(void)
{
    const char *e = getenv("TG_OPT_LEVEL");
    if (e && e[0] >= '0' && e[0] <= '2' && !e[1])
        return e[0] - '0';
    return 2;
}

/* the passes sessions start without: TG_DISABLE_PASSES, names separated
 * by commas (to measure what a pass gains from any program, `tg bench
 * onnx` among them); a name no pass has is left out, the first such
 * reported on stderr. The list is the calling thread's, valid until its
 * next call. */
#define MAX_ENV_DISABLED 16
static _Thread_local char env_names[256];
static _Thread_local const char *env_disabled[MAX_ENV_DISABLED];
static atomic_bool env_warned;

static int read_env_disabled(void)
{
    const char *e = getenv("TG_DISABLE_PASSES");
    int n = 0;
    snprintf(env_names, sizeof env_names, "%s", e ? e : "");
    for (char *p = env_names, *next; *p && n < MAX_ENV_DISABLED; p = next) {
        size_t len = strcspn(p, ",");
        next = p + len + (p[len] == ',');
        p[len] = '\0';
        if (len > 0 && tg__pass_known(p))
            env_disabled[n++] = p;
        else if (len > 0 && !atomic_exchange(&env_warned, true)) /* once a process */
            fprintf(stderr, "tensorgraph: TG_DISABLE_PASSES: no pass is named '%s'\n", p);
    }
    return n;
}

tg_session_options tg_session_default_options(void)
{
    int n = read_env_disabled();
    return (tg_session_options){.opt_level = default_level(), .n_disabled = n,
                                .disabled_passes = n ? env_disabled : NULL};
}

static void free_disabled(tg_session *s)
{
    for (int i = 0; i < s->n_disabled; i++)
        free(s->disabled[i]);
    free(s->disabled);
    s->disabled = NULL;
    s->n_disabled = 0;
}

tg_status tg_session_set_options(tg_session *s, const tg_session_options *o)
{
    if (!s || !o)
        return tg__error(TG_ERR_ARG, "tg_session_set_options: %s is NULL",
                         s ? "options" : "session");
    if (o->opt_level < 0 || o->opt_level > 2)
        return tg__error(TG_ERR_ARG, "tg_session_set_options: optimization level %d "
                         "(expected 0, 1 or 2)", o->opt_level);
    if (o->n_disabled < 0 || (o->n_disabled > 0 && !o->disabled_passes))
        return tg__error(TG_ERR_ARG, "tg_session_set_options: bad list of disabled passes");
    for (int i = 0; i < o->n_disabled; i++)
        if (!tg__pass_known(o->disabled_passes[i]))
            return tg__error(TG_ERR_ARG, "tg_session_set_options: no pass is named '%s' "
                             "(tg_pass_info lists them)", o->disabled_passes[i]
                                 ? o->disabled_passes[i] : "(null)");
    char **copy = calloc((size_t)o->n_disabled + 1, sizeof *copy);
    for (int i = 0; copy && i < o->n_disabled; i++)
        if (!(copy[i] = strdup(o->disabled_passes[i]))) {
            for (int k = 0; k < i; k++)
                free(copy[k]);
            free(copy);
            copy = NULL;
        }
    if (!copy)
        return tg__error(TG_ERR_NOMEM, "tg_session_set_options: out of memory");
    drop_plans(s);
    free_disabled(s);
    s->disabled = copy;
    s->n_disabled = o->n_disabled;
    s->opt_level = o->opt_level;
    return TG_OK;
}

tg_session *tg_session_new(tg_graph *g)
{
    if (!g)
        return tg__error_null(TG_ERR_ARG, "tg_session_new: graph is NULL");
    tg_session *s = calloc(1, sizeof *s);
    if (!s)
        return tg__error_null(TG_ERR_NOMEM, "tg_session_new: out of memory");
    pthread_mutexattr_t recursive;
    if (pthread_mutexattr_init(&recursive) != 0 ||
        pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE) != 0 ||
        pthread_mutex_init(&s->run_lock, &recursive) != 0) {
        free(s);
        return tg__error_null(TG_ERR_INTERNAL, "tg_session_new: cannot make its lock");
    }
    pthread_mutexattr_destroy(&recursive);
    s->g = g;
    tg__graph_retain(g);
    tg_session_options o = tg_session_default_options();
    if (tg_session_set_options(s, &o) != TG_OK) { /* out of memory */
        tg_session_free(s);
        return NULL;
    }
    return s;
}

static void scratch_free(tg_run_scratch *sc)
{
    free(sc->fed);
    free(sc->feed_meta);
    free(sc->vals);
    free(sc->snaps);
    free(sc->ids);
    free(sc->dims);
    memset(sc, 0, sizeof *sc);
}

/* room for a run over a session graph of n values: fed[] cleared */
static bool scratch_graph(tg_run_scratch *sc, int n)
{
    if (sc->cap_graph < n + 1) {
        int cap = sc->cap_graph;
        if (!TG_GROW(sc->fed, cap, n + 1) || !TG_GROW(sc->feed_meta, sc->cap_graph, n + 1))
            return false;
    }
    memset(sc->fed, 0, (size_t)n + 1);
    return true;
}

/* room for the value table of a plan of n values, cleared */
static bool scratch_plan(tg_run_scratch *sc, int n)
{
    if (sc->cap_plan < n + 1) {
        int cap = sc->cap_plan;
        if (!TG_GROW(sc->vals, cap, n + 1) || !TG_GROW(sc->snaps, sc->cap_plan, n + 1))
            return false;
    }
    memset(sc->vals, 0, ((size_t)n + 1) * sizeof *sc->vals);
    memset(sc->snaps, 0, ((size_t)n + 1) * sizeof *sc->snaps);
    return true;
}

void tg_session_free(tg_session *s)
{
    if (!s)
        return;
    drop_plans(s);
    tg__session_free_events(s);
    free_disabled(s);
    tg__devices_free(s->dev);
    scratch_free(&s->scratch);
    for (int i = 0; i < s->n_tracks; i++)
        free(s->tracks[i]);
    free(s->tracks);
    tg__graph_release(s->g);
    pthread_mutex_destroy(&s->run_lock);
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

static bool key_eq(const tg_plan_key *a, const tg_plan_key *b)
{
    return a->n_feeds == b->n_feeds && a->n_fetches == b->n_fetches &&
           a->n_targets == b->n_targets &&
           !memcmp(a->feeds, b->feeds, (size_t)a->n_feeds * sizeof(int)) &&
           !memcmp(a->fetches, b->fetches, (size_t)a->n_fetches * sizeof(int)) &&
           !memcmp(a->targets, b->targets, (size_t)a->n_targets * sizeof(int)) &&
           a->n_dims == b->n_dims &&
           !memcmp(a->dims, b->dims, (size_t)a->n_dims * sizeof(int64_t));
}

/* the shape signature: the fed sizes of the declared unknown dims, in the
 * order of k's (sorted) feeds; dims must have room for 8 per feed */
static int shape_signature(const tg_graph *g, const tg_plan_key *k, const tg_meta *fm,
                           int64_t *dims)
{
    int n = 0;
    for (int i = 0; i < k->n_feeds; i++) {
        const tg_meta *m = &g->values[k->feeds[i]].meta;
        for (int d = 0; d < m->ndim; d++)
            if (m->shape[d] < 0)
                dims[n++] = fm[k->feeds[i]].shape[d];
    }
    return n;
}

static void meta_str(int ndim, const int64_t *shape, tg_dtype dt, char *buf, size_t len)
{
    char s[160];
    snprintf(buf, len, "%s%s", tg_dtype_name(dt), tg_shape_str(ndim, shape, s, sizeof s));
}

/* does tensor t fit the declared metadata m (-1 dims: any size)? */
static bool fits(const tg_meta *m, const tg_tensor *t)
{
    if (t->ndim != m->ndim)
        return false;
    for (int i = 0; i < m->ndim; i++)
        if (m->shape[i] >= 0 && m->shape[i] != t->shape[i])
            return false;
    return true;
}

/* r->feed_tensors NULL: planning only (memory_stats), no tensors to check */
static tg_status check_feeds(const tg_graph *g, const request *r, bool *fed,
                             tg_meta *feed_meta)
{
    char name[300], a[200], b[200];
    for (int i = 0; i < r->n_feeds; i++) {
        int v = r->feeds[i];
        const tg_tensor *t = r->feed_tensors ? r->feed_tensors[i] : NULL;
        const tg_gvalue *x = &g->values[v];
        const tg_gnode *n = &g->nodes[x->node];
        if (fed[v] || n->kind == TG_GNODE_VARIABLE || !r->feed_tensors || !t || t->graph ||
            t->dtype != x->meta.dtype || !fits(&x->meta, t)) /* named in errors only:
                                                               * formatting costs every run */
            tg__value_name(g, v, name, sizeof name);
        if (fed[v])
            return tg__error(TG_ERR_ARG, "tg_session_run: '%s' is fed twice", name);
        fed[v] = true;
        if (n->kind == TG_GNODE_VARIABLE)
            return tg__error(TG_ERR_ARG, "tg_session_run: '%s' is a variable and "
                             "cannot be fed; assign it (tg_assign) instead", name);
        feed_meta[v] = x->meta;
        if (!r->feed_tensors && tg__shape_has_unknown(x->meta.ndim, x->meta.shape))
            return tg__error(TG_ERR_ARG, "%s '%s' has unknown dims (-1): pass the "
                             "tensors to feed, so that the plan gets their shapes",
                             tg__gnode_op_name(n), name);
        if (!r->feed_tensors)
            continue;
        if (!t)
            return tg__error(TG_ERR_ARG, "tg_session_run: the tensor fed to '%s' is NULL",
                             name);
        if (t->graph)
            return tg__error(TG_ERR_ARG, "tg_session_run: the tensor fed to '%s' is "
                             "symbolic; feeds must be concrete tensors", name);
        if (t->dtype != x->meta.dtype || !fits(&x->meta, t)) {
            meta_str(t->ndim, t->shape, t->dtype, a, sizeof a);
            meta_str(x->meta.ndim, x->meta.shape, x->meta.dtype, b, sizeof b);
            return tg__error(t->dtype != x->meta.dtype ? TG_ERR_DTYPE : TG_ERR_SHAPE,
                             "tg_session_run: %s '%s' was fed a %s tensor, expected %s%s",
                             tg__gnode_op_name(n), name, a, b,
                             t->ndim != x->meta.ndim ? " (a different rank)"
                             : tg__shape_has_unknown(x->meta.ndim, x->meta.shape)
                                 ? " (-1: any size)" : "");
        }
        tg_meta_of(t, &feed_meta[v]);
    }
    for (int i = 0; i < r->n_fetches; i++)
        if (fed[r->fetches[i]])
            return tg__error(TG_ERR_ARG, "tg_session_run: '%s' is both fed and fetched",
                             tg__value_name(g, r->fetches[i], name, sizeof name));
    return TG_OK;
}

static tg_plan_opts plan_opts(const tg_session *s, const tg_meta *feed_meta)
{
    /* the parallel and device executors run steps in any order their
     * dependencies allow: memory is reused accordingly */
    return (tg_plan_opts){!s->no_memory_plan, s->executor != TG_EXECUTOR_SERIAL,
                          s->opt_level, s->n_disabled, s->disabled, feed_meta};
}

/* a cached plan is stale when the graph was edited or a constant it
 * folded was written in place since */
static bool stale(const tg_session *s, const tg_plan *p)
{
    return p->epoch != s->g->epoch || tg__plan_stale(p);
}

static tg_plan *find_or_compile(tg_session *s, tg_run_scratch *sc, const request *r,
                                const bool *fed, const tg_meta *feed_meta)
{
    size_t n_ids = (size_t)r->n_feeds + (size_t)r->n_fetches + (size_t)r->n_targets + 1;
    if (!TG_GROW(sc->ids, sc->cap_ids, n_ids) ||
        !TG_GROW(sc->dims, sc->cap_dims, (size_t)r->n_feeds * TG_MAX_DIMS + 1))
        return tg__error_null(TG_ERR_NOMEM, "tg_session_run: out of memory");
    tg_plan_key k;
    k.feeds = sc->ids;
    k.n_feeds = tg__sorted_set(r->feeds, r->n_feeds, k.feeds);
    k.fetches = k.feeds + k.n_feeds;
    k.n_fetches = tg__sorted_set(r->fetches, r->n_fetches, k.fetches);
    k.targets = k.fetches + k.n_fetches;
    k.n_targets = tg__sorted_set(r->targets, r->n_targets, k.targets);
    k.dims = sc->dims;
    k.n_dims = shape_signature(s->g, &k, feed_meta, k.dims);
    tg_plan **pp = &s->plans;
    for (; *pp; pp = &(*pp)->next)
        if (key_eq(&(*pp)->key, &k))
            break;
    tg_plan *p = *pp;
    if (p && stale(s, p)) { /* recompile */
        if (s->last == p)
            s->last = NULL;
        *pp = p->next;
        tg__plan_free(p);
        s->stats.n_plans--;
        p = NULL;
    }
    tg_plan_opts o = plan_opts(s, feed_meta);
    if (p) {
        s->stats.plan_hits++;
    } else if (tg_graph_verify(s->g) == TG_OK &&
               (p = tg__plan_compile(s->g, &k, fed, &o))) {
        p->next = s->plans;
        s->plans = p;
        s->stats.plan_misses++;
        s->stats.n_plans++;
    }
    if (p)
        s->last = p;
    return p;
}

/* the index of x in the sorted a[0..n) */
static int index_of(const int *a, int n, int x)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* the plan's value standing for the request's fed / fetched value v */
static int run_feed(const tg_plan *p, int v)
{
    return p->run_feeds[index_of(p->key.feeds, p->key.n_feeds, v)];
}
static int run_fetch(const tg_plan *p, int v)
{
    return p->run_fetches[index_of(p->key.fetches, p->key.n_fetches, v)];
}

/* fetched values that alias variables or constants were copied by the
 * executor (see tg_plan.snapshot); a fetched value the passes made a feed
 * (x*1 of a fed x), or one handed out twice (two fetches the passes
 * merged), is copied here: every result is the caller's own tensor */
static tg_status hand_over(const request *r, const tg_plan *p, tg_tensor **vals,
                           tg_tensor **snaps, tg_tensor **results)
{
    for (int i = 0; i < r->n_fetches; i++) {
        int v = run_fetch(p, r->fetches[i]);
        tg_tensor *t = snaps[v] ? snaps[v] : vals[v];
        bool twice = false;
        for (int j = 0; j < i && !twice; j++)
            twice = run_fetch(p, r->fetches[j]) == v;
        if (p->fed[v] || twice) {
            tg_tensor *c = tg__alloc(t->dtype, t->ndim, t->shape);
            if (!c) {
                for (int j = 0; j < i; j++)
                    tg_release(results[j]);
                return tg_last_status();
            }
            tg__convert_into(c, t);
            results[i] = c;
        } else {
            results[i] = tg_retain(t);
        }
    }
    for (int i = 0; i < r->n_fetches; i++)
        tg__publish(results[i]);
    return TG_OK;
}

/* the plan's value table for a run (sc's): feeds bound, the rest NULL */
static tg_status bind_feeds(const request *r, const tg_plan *p, tg_run_scratch *sc)
{
    if (!scratch_plan(sc, p->n_values))
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    for (int i = 0; i < r->n_feeds; i++) {
        int v = run_feed(p, r->feeds[i]);
        if (v >= 0 && !sc->vals[v])
            sc->vals[v] = tg_retain(r->feed_tensors[i]);
    }
    return TG_OK;
}

/* the session tracing the run in progress on this thread: bodies of
 * control flow that its kernels run record spans into it */
static _Thread_local tg_session *tracer;

void tg__trace_body_span(const char *name, int64_t t0, int64_t t1)
{
    tg_session *s = tracer;
    if (!s || !TG_GROW(s->events, s->cap_events, s->n_events + 1))
        return; /* out of memory: the span is dropped, the run goes on */
    char *copy = strdup(name);
    if (copy)
        s->events[s->n_events++] = (trace_event){copy, "body", 0, s->trace_runs, t0, t1};
}

static tg_status execute(tg_session *s, tg_plan *p, tg_tensor **vals, tg_tensor **snaps)
{
    tg_session *outer = tracer;
    if (s->tracing)
        tracer = s;
    tg_trace_span *spans = NULL;
    if (s->tracing && !(spans = malloc(((size_t)p->n_steps + 1) * sizeof *spans)))
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    for (int k = 0; spans && k < p->n_steps; k++)
        spans[k].node = -1; /* steps that never ran */
    tg_exec x = {p->g, p, vals, snaps, spans, 0};
    tg_status st = s->executor == TG_EXECUTOR_PARALLEL ? tg__plan_execute_parallel(&x)
                   : (int)s->executor == TG__EXECUTOR_DEVICE ? tg__plan_execute_device(&x)
                                                             : tg__plan_execute(&x);
    s->stats.nodes_last_run = x.n_ops;
    s->stats.nodes_total += x.n_ops;
    tracer = outer;
    if (spans && tg__session_record_spans(s, p->g, spans, p->n_steps) != TG_OK && st == TG_OK)
        st = tg_last_status();
    free(spans);
    return st;
}

static tg_status run_request_locked(tg_session *s, const request *r, tg_tensor **results)
{
    const tg_graph *g = s->g;
    for (int i = 0; i < r->n_fetches; i++)
        results[i] = NULL;
    tg_run_scratch own = {0}, *sc = s->scratch.busy ? &own : &s->scratch;
    sc->busy = true;
    tg_status st = scratch_graph(sc, g->n_values)
                       ? check_feeds(g, r, sc->fed, sc->feed_meta)
                       : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    tg_plan *p = NULL;
    /* partitioned over devices (not a partition's own session) */
    if (st == TG_OK && (int)s->executor != TG__EXECUTOR_DEVICE && tg__devices_wanted(s->dev, g)) {
        tg_run_sig sig = {r->n_feeds, r->n_fetches, r->n_targets, r->feeds, r->fetches,
                          r->targets};
        st = tg__devices_run(s, &s->dev, g, &sig, sc->fed, sc->feed_meta, r->feed_tensors,
                             results);
        if (st == TG_OK)
            s->stats.runs++;
    } else {
        p = st == TG_OK ? find_or_compile(s, sc, r, sc->fed, sc->feed_meta) : NULL;
        if (st == TG_OK && !p)
            st = tg_last_status();
        if (st == TG_OK)
            st = bind_feeds(r, p, sc);
        if (st == TG_OK)
            st = execute(s, p, sc->vals, sc->snaps);
        if (st == TG_OK)
            st = hand_over(r, p, sc->vals, sc->snaps, results);
        if (st == TG_OK)
            s->stats.runs++;
        for (int v = 0; p && sc->cap_plan > p->n_values && v < p->n_values; v++) {
            tg_release(sc->vals[v]);
            tg_release(sc->snaps[v]);
            sc->vals[v] = sc->snaps[v] = NULL;
        }
        if (st != TG_OK)
            for (int i = 0; i < r->n_fetches; i++)
                results[i] = NULL;
    }
    sc->busy = false;
    if (sc == &own)
        scratch_free(&own);
    return st;
}

static tg_status run_request(tg_session *s, const request *r, tg_tensor **results)
{
    pthread_mutex_lock(&s->run_lock);
    tg_status st = run_request_locked(s, r, results);
    pthread_mutex_unlock(&s->run_lock);
    return st;
}

tg_status tg__session_run_ids(tg_session *s, int n_feeds, int *feeds,
                              tg_tensor *const *feed_tensors, int n_fetches, int *fetches,
                              tg_tensor **results)
{
    request r = {n_feeds, n_fetches, 0, feeds, fetches, NULL, feed_tensors};
    return run_request(s, &r, results);
}

/* ---- what session_devices.c needs of a session ------------------------------------ */
tg_status tg__session_inherit(const tg_session *parent, tg_session *sub)
{
    tg_session_options o = {parent->opt_level, parent->n_disabled,
                            (const char *const *)parent->disabled};
    if (tg_session_set_options(sub, &o) != TG_OK)
        return tg_last_status();
    sub->no_memory_plan = parent->no_memory_plan;
    sub->executor = (tg_executor_kind)TG__EXECUTOR_DEVICE;
    return TG_OK;
}

void tg__session_device_executor(tg_session *s)
{
    drop_plans(s);
    s->executor = (tg_executor_kind)TG__EXECUTOR_DEVICE;
}

tg_dsession **tg__session_devices(tg_session *s) { return &s->dev; }
tg_graph *tg__session_graph(tg_session *s) { return s->g; }

void tg__session_count_ops(tg_session *parent, const tg_session *sub, bool first)
{
    if (first)
        parent->stats.nodes_last_run = 0;
    parent->stats.nodes_last_run += sub->stats.nodes_last_run;
    parent->stats.nodes_total += sub->stats.nodes_last_run;
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
    int n = n_feeds + n_fetches + n_targets, small[64];
    int *ids = n < 64 ? small : malloc((size_t)(n + 1) * sizeof *ids);
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
    if (ids != small)
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

/* compiles (or finds) the plan of a signature without running it, for
 * fn; feed_tensors may be NULL (the declared shapes) */
static const tg_plan *plan_only(tg_session *s, const char *fn, int n_feeds,
                                tg_tensor *const *feed_values,
                                tg_tensor *const *feed_tensors, int n_fetches,
                                tg_tensor *const *fetch_values, int n_targets,
                                tg_tensor *const *targets)
{
    tg_tensor *dummy = NULL;
    tg_status st = check_counts(s, n_feeds, feed_values, feed_values, n_fetches,
                                fetch_values, &dummy, n_targets, targets);
    if (st != TG_OK)
        return NULL;
    int n = n_feeds + n_fetches + n_targets;
    int *ids = malloc((size_t)(n + 1) * sizeof *ids);
    bool *fed = calloc((size_t)s->g->n_values + 1, 1);
    tg_meta *feed_meta = malloc(((size_t)s->g->n_values + 1) * sizeof *feed_meta);
    if (!ids || !fed || !feed_meta)
        st = tg__error(TG_ERR_NOMEM, "%s: out of memory", fn);
    if (st == TG_OK)
        st = ids_of(s, false, n_feeds, feed_values, n_fetches, fetch_values, n_targets,
                    targets, ids);
    request r = {n_feeds, n_fetches, n_targets, ids, ids + n_feeds,
                 ids + n_feeds + n_fetches, feed_tensors};
    if (st == TG_OK)
        st = check_feeds(s->g, &r, fed, feed_meta);
    tg_run_scratch key = {0}; /* for the plan key only */
    const tg_plan *p = st == TG_OK ? find_or_compile(s, &key, &r, fed, feed_meta) : NULL;
    scratch_free(&key);
    free(ids);
    free(fed);
    free(feed_meta);
    return p;
}

tg_status tg_session_memory_stats(tg_session *s, int n_feeds, tg_tensor *const *feed_values,
                                  int n_fetches, tg_tensor *const *fetch_values,
                                  int n_targets, tg_tensor *const *targets,
                                  tg_memory_stats *out)
{
    if (s && !out)
        return tg__error(TG_ERR_ARG, "tg_session_memory_stats: out is NULL");
    const tg_plan *p = plan_only(s, "tg_session_memory_stats", n_feeds, feed_values, NULL,
                                 n_fetches, fetch_values, n_targets, targets);
    if (!p)
        return tg_last_status();
    *out = p->mem.stats;
    return TG_OK;
}

tg_graph *tg_session_optimized_graph(tg_session *s, int n_feeds,
                                     tg_tensor *const *feed_values,
                                     tg_tensor *const *feed_tensors, int n_fetches,
                                     tg_tensor *const *fetch_values, int n_targets,
                                     tg_tensor *const *targets, int cap,
                                     tg_pass_record *records, int *n_records)
{
    if (cap < 0 || (cap > 0 && !records))
        return tg__error_null(TG_ERR_ARG, "tg_session_optimized_graph: bad records array");
    const tg_plan *p = plan_only(s, "tg_session_optimized_graph", n_feeds, feed_values,
                                 feed_tensors, n_fetches, fetch_values, n_targets, targets);
    if (!p)
        return NULL;
    for (int i = 0; i < p->n_records && i < cap; i++)
        records[i] = p->records[i];
    if (n_records)
        *n_records = p->n_records;
    tg__graph_retain(p->g);
    return p->g;
}

tg_status tg_session_run_named(tg_session *s, int n_feeds, const char *const *feed_names,
                               tg_tensor *const *feed_tensors, int n_fetches,
                               const char *const *fetch_names, tg_tensor **results,
                               int n_targets, const char *const *target_names)
{
    return session_run(s, true, n_feeds, feed_names, feed_tensors, n_fetches, fetch_names,
                       results, n_targets, target_names);
}
