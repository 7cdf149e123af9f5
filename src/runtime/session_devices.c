/* Runs over several devices (see session_devices.h and partition.h). */
#include "util/intset.h"
#include "io/wire.h"
#include "runtime/rendezvous.h"
#include "runtime/session_devices.h"
#include "ops/elementwise.h"
#include "tg/device.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dplan {
    int n_feeds, n_fetches, n_targets;
    int *ids; /* sorted, duplicate-free: feeds, then fetches, then targets */
    tg_meta *fmeta; /* per feed (in ids' order): the fed shape it was made for */
    uint64_t epoch;
    tg_partitioning P;
    tg_session **subs; /* one per partition */
    int64_t uid;       /* the plan's name for the ranks its remote partitions run on */
    bool *shipped;     /* per partition: loaded on its rank already */
    struct dplan *next;
} dplan;

struct tg_dsession {
    int n_devices;
    tg_device *devices;
    dplan *plans;
};

/* the rendezvous keys' step: unique over every run of this process, since
 * workers of other processes see the steps of all its sessions */
static _Atomic int64_t next_step;
static _Atomic int64_t next_uid;

static void dplan_free(dplan *p)
{
    const tg_remote_runner *rr = tg__remote_runner();
    for (int i = 0; rr && p->shipped && i < p->P.n; i++)
        if (p->shipped[i])
            rr->drop(&p->P.parts[i], p->uid);
    free(p->shipped);
    for (int i = 0; p->subs && i < p->P.n; i++)
        tg_session_free(p->subs[i]);
    free(p->subs);
    tg__partitioning_free(&p->P);
    free(p->ids);
    free(p->fmeta);
    free(p);
}

void tg__devices_drop(tg_dsession *d)
{
    while (d && d->plans) {
        dplan *p = d->plans;
        d->plans = p->next;
        dplan_free(p);
    }
}

void tg__devices_free(tg_dsession *d)
{
    if (!d)
        return;
    tg__devices_drop(d);
    free(d->devices);
    free(d);
}

static tg_dsession *dsession(tg_dsession **slot)
{
    if (!*slot && !(*slot = calloc(1, sizeof **slot)))
        return tg__error_null(TG_ERR_NOMEM, "tg_session: out of memory");
    return *slot;
}

bool tg__devices_wanted(const tg_dsession *d, const tg_graph *g)
{
    if (g->fn) /* a control-flow body runs whole where its control node runs */
        return false;
    if (d && d->n_devices > 0)
        return true;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].device.index >= 0)
            return true;
    return false;
}

tg_status tg_session_set_devices(tg_session *s, int n, const char *const *names)
{
    if (!s || n < 0 || (n > 0 && !names))
        return tg__error(TG_ERR_ARG, "tg_session_set_devices: %s", !s ? "session is NULL"
                         : "bad count or NULL names");
    tg_device *devs = malloc(((size_t)n + 1) * sizeof *devs);
    if (!devs)
        return tg__error(TG_ERR_NOMEM, "tg_session_set_devices: out of memory");
    for (int i = 0; i < n; i++) {
        if (tg_device_parse(names[i], &devs[i]) != TG_OK) {
            free(devs);
            return tg_last_status();
        }
        for (int k = 0; k < i; k++)
            if (tg_device_eq(devs[k], devs[i])) {
                free(devs);
                return tg__error(TG_ERR_ARG, "tg_session_set_devices: device '%s' is "
                                 "listed twice", names[i]);
            }
    }
    tg_dsession *d = dsession(tg__session_devices(s));
    if (!d) {
        free(devs);
        return tg_last_status();
    }
    tg__devices_drop(d);
    free(d->devices);
    d->devices = devs;
    d->n_devices = n;
    return TG_OK;
}

/* ---- the cache ------------------------------------------------------------------- */
/* the signature as sorted sets into a new dplan's ids, and the fed
 * shapes (feed_meta NULL: the declared ones), not yet compiled */
static dplan *new_key(const tg_graph *g, const tg_run_sig *sig, const tg_meta *feed_meta)
{
    dplan *p = calloc(1, sizeof *p);
    int n = sig->n_feeds + sig->n_fetches + sig->n_targets;
    if (!p || !(p->ids = malloc(((size_t)n + 1) * sizeof(int)))) {
        free(p);
        return tg__error_null(TG_ERR_NOMEM, "tg_session_run: out of memory");
    }
    p->n_feeds = tg__sorted_set(sig->feeds, sig->n_feeds, p->ids);
    p->n_fetches = tg__sorted_set(sig->fetches, sig->n_fetches, p->ids + p->n_feeds);
    p->n_targets = tg__sorted_set(sig->targets, sig->n_targets,
                              p->ids + p->n_feeds + p->n_fetches);
    if (!(p->fmeta = calloc((size_t)p->n_feeds + 1, sizeof *p->fmeta))) {
        dplan_free(p);
        return tg__error_null(TG_ERR_NOMEM, "tg_session_run: out of memory");
    }
    for (int i = 0; i < p->n_feeds; i++)
        p->fmeta[i] = feed_meta ? feed_meta[p->ids[i]] : g->values[p->ids[i]].meta;
    return p;
}

static bool same_key(const dplan *a, const dplan *b)
{
    if (a->n_feeds != b->n_feeds || a->n_fetches != b->n_fetches ||
        a->n_targets != b->n_targets ||
        memcmp(a->ids, b->ids, (size_t)(a->n_feeds + a->n_fetches + a->n_targets) * sizeof(int)))
        return false;
    for (int i = 0; i < a->n_feeds; i++)
        if (a->fmeta[i].dtype != b->fmeta[i].dtype ||
            !tg__shape_eq(a->fmeta[i].ndim, a->fmeta[i].shape, b->fmeta[i].ndim,
                          b->fmeta[i].shape))
            return false;
    return true;
}

/* A variable the placer put on another process's device keeps that device
 * (recorded on its node): its state lives there, so a later signature
 * must not place it anew and start from the stale copy here. */
static void pin_remote_variables(tg_graph *g, const tg_partitioning *P)
{
    for (int i = 0; i < P->n_nodes; i++) {
        tg_gnode *n = &g->nodes[i];
        if (n->kind == TG_GNODE_VARIABLE && n->device.index < 0 && P->part[i] >= 0 &&
            P->parts[P->part[i]].device.rank != tg__rv_rank())
            n->device = P->parts[P->part[i]].device;
    }
}

static tg_status compile(tg_session *s, const tg_dsession *d, const tg_graph *g,
                         const bool *fed, const tg_meta *feed_meta, dplan *p)
{
    tg_run_sig sig = {p->n_feeds, p->n_fetches, p->n_targets, p->ids,
                      p->ids + p->n_feeds, p->ids + p->n_feeds + p->n_fetches};
    p->epoch = g->epoch;
    if (tg__partition(g, &sig, fed, feed_meta, d->n_devices, d->devices, &p->P) != TG_OK)
        return tg_last_status();
    pin_remote_variables((tg_graph *)g, &p->P);
    p->uid = ++next_uid;
    if (!(p->subs = calloc((size_t)p->P.n + 1, sizeof *p->subs)) ||
        !(p->shipped = calloc((size_t)p->P.n + 1, sizeof *p->shipped)))
        return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    for (int i = 0; i < p->P.n; i++)
        if (!(p->subs[i] = tg_session_new(p->P.parts[i].g)) ||
            tg__session_inherit(s, p->subs[i]) != TG_OK)
            return tg_last_status();
    return TG_OK;
}

static dplan *find_or_compile(tg_session *s, tg_dsession *d, const tg_graph *g,
                              const tg_run_sig *sig, const bool *fed, const tg_meta *feed_meta)
{
    dplan *k = new_key(g, sig, feed_meta);
    if (!k)
        return NULL;
    dplan **pp = &d->plans;
    for (; *pp && !same_key(*pp, k); pp = &(*pp)->next)
        ;
    if (*pp && (*pp)->epoch == g->epoch) {
        dplan_free(k);
        return *pp;
    }
    if (*pp) { /* stale: the graph was edited or placed anew */
        dplan *old = *pp;
        *pp = old->next;
        dplan_free(old);
    }
    if (compile(s, d, g, fed, feed_meta, k) != TG_OK) {
        dplan_free(k);
        return NULL;
    }
    k->next = d->plans;
    d->plans = k;
    return k;
}

/* ---- a run ------------------------------------------------------------------------ */
typedef struct job {
    tg_session *sub;
    const tg_partition *part;
    tg_rendezvous *rv;
    int64_t step;
    int tid;
    tg_tensor **feeds;   /* per partition feed */
    tg_tensor **results; /* per partition fetch */
    const tg_remote_runner *remote; /* the partition runs in another process */
    int64_t uid;
    int n_on_rank; /* the run's partitions on that process */
    tg_strbuf *trace; /* remote and traced: its spans come back here */
    bool *shipped;
    tg_status st;
    pthread_t thread;
    bool started;
} job;

tg_status tg__device_run(tg_session *sub, tg_device device, tg_rendezvous *rv, int64_t step,
                         int tid, int n_feeds, tg_tensor *const *feed_values,
                         tg_tensor *const *feed_tensors, int n_fetches,
                         tg_tensor *const *fetch_values, tg_tensor **results, int n_targets,
                         tg_tensor *const *targets)
{
    /* the caller's context, if it runs a partition itself, comes back after */
    const tg_rv_context *outer = tg__rv_context();
    tg_rv_context saved = outer ? *outer : (tg_rv_context){0};
    tg_rv_context c = {rv, step, device, tid, NULL};
    tg__rv_context_set(&c);
    int old = tg__scope_suspend(); /* the results go to the caller, not a scope */
    tg_status st = tg_session_run(sub, n_feeds, feed_values, feed_tensors, n_fetches,
                                  fetch_values, results, n_targets, targets);
    tg__scope_resume(old);
    if (st != TG_OK) {
        char dev[48], msg[1100];
        snprintf(msg, sizeof msg, "device %s: %s", tg_device_str(device, dev, sizeof dev),
                 tg_last_error());
        tg__rv_abort(rv, st, msg);
    }
    tg__rv_context_set(outer ? &saved : NULL);
    return st;
}

/* a partition of another process: shipped there before its first run,
 * then run there; this thread waits for its fetches or its error */
static tg_status run_remote(job *j)
{
    tg_status st = TG_OK;
    if (!*j->shipped && (st = j->remote->load(j->part, j->uid)) == TG_OK)
        *j->shipped = true;
    if (st == TG_OK)
        st = j->remote->run(j->part, j->uid, j->step, j->n_on_rank, j->feeds, j->results,
                            j->trace);
    if (st != TG_OK)
        tg__rv_abort(j->rv, st, tg_last_error());
    return st;
}

static void *run_job(void *arg)
{
    job *j = arg;
    const tg_partition *q = j->part;
    if (j->remote) {
        j->st = run_remote(j);
        return NULL;
    }
    j->st = tg__device_run(j->sub, q->device, j->rv, j->step, j->tid, q->n_feeds, q->feed_vals,
                           j->feeds, q->n_fetches, q->fetch_vals, j->results, q->n_targets,
                           q->targets);
    return NULL;
}

/* the tensor fed for original value v (the request's) */
static tg_tensor *feed_of(const tg_run_sig *sig, tg_tensor *const *feed_tensors, int v)
{
    for (int i = 0; i < sig->n_feeds; i++)
        if (sig->feeds[i] == v)
            return feed_tensors[i];
    return NULL;
}

/* the partitions of the run on q's rank */
static int on_rank(const tg_partitioning *P, const tg_partition *q)
{
    int n = 0;
    for (int i = 0; i < P->n; i++)
        n += P->parts[i].device.rank == q->device.rank;
    return n;
}

static tg_status make_jobs(tg_session *s, const dplan *p, const tg_run_sig *sig,
                           tg_tensor *const *feed_tensors, tg_rendezvous *rv,
                           int64_t step, job *jobs)
{
    for (int i = 0; i < p->P.n; i++) {
        const tg_partition *q = &p->P.parts[i];
        char dev[48];
        bool remote = q->device.rank != tg__rv_rank();
        if (remote && !tg__remote_runner() && q->n_fetches + q->n_targets > 0)
            return tg__error(TG_ERR_UNSUPPORTED, "tg_session_run: nodes are placed on %s, a "
                             "device of another process (this one is rank %d): its partition "
                             "runs there, which needs the program under mpirun, "
                             "tg_dist_init on every rank, and the other ranks in "
                             "tg_dist_serve (docs/DISTRIBUTED.md)",
                             tg_device_str(q->device, dev, sizeof dev), tg__rv_rank());
        jobs[i] = (job){.sub = p->subs[i], .part = q, .rv = rv, .step = step, .tid = i,
                        .remote = remote ? tg__remote_runner() : NULL, .uid = p->uid,
                        .n_on_rank = on_rank(&p->P, q),
                        .shipped = &p->shipped[i],
                        .feeds = malloc(((size_t)q->n_feeds + 1) * sizeof(tg_tensor *)),
                        .results = calloc((size_t)q->n_fetches + 1, sizeof(tg_tensor *))};
        if (!jobs[i].feeds || !jobs[i].results)
            return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
        for (int k = 0; k < q->n_feeds; k++)
            jobs[i].feeds[k] = feed_of(sig, feed_tensors, q->feed_of[k]);
        if (!remote)
            tg__session_trace_sync(s, p->subs[i]);
        else if (tg__session_tracing(s) && !(jobs[i].trace = calloc(1, sizeof(tg_strbuf))))
            return tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    }
    return TG_OK;
}

/* runs every partition with work on a thread of its own (the first on
 * this one); the step's error is the first abort's */
static tg_status run_jobs(job *jobs, int n, tg_rendezvous *rv)
{
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (jobs[i].part->n_fetches + jobs[i].part->n_targets == 0)
            continue;
        if (first < 0) {
            first = i;
            continue;
        }
        if (pthread_create(&jobs[i].thread, NULL, run_job, &jobs[i]) != 0) {
            tg__rv_abort(rv, TG_ERR_NOMEM, "tg_session_run: cannot start a device's thread");
            break;
        }
        jobs[i].started = true;
    }
    if (first >= 0)
        run_job(&jobs[first]);
    for (int i = 0; i < n; i++)
        if (jobs[i].started)
            pthread_join(jobs[i].thread, NULL);
    char msg[1024];
    tg_status st = tg__rv_aborted(rv, msg, sizeof msg);
    return st == TG_OK ? TG_OK : tg__error(st, "%s", msg);
}

/* results[j] for the request's fetch j: a partition's result, copied when
 * the same value is fetched twice */
static tg_status hand_over(const dplan *p, const tg_run_sig *sig, job *jobs,
                           tg_tensor **results)
{
    const int *fetch_set = p->ids + p->n_feeds;
    for (int j = 0; j < sig->n_fetches; j++) {
        int k = (int)((const int *)bsearch(&sig->fetches[j], fetch_set, (size_t)p->n_fetches,
                                           sizeof(int), tg__cmp_int) - fetch_set);
        for (int i = 0; i < p->P.n && !results[j]; i++)
            for (int f = 0; f < p->P.parts[i].n_fetches && !results[j]; f++) {
                if (p->P.parts[i].fetch_of[f] != k)
                    continue;
                tg_tensor **t = &jobs[i].results[f];
                if (*t) { /* first use: handed over */
                    results[j] = *t;
                    *t = NULL;
                } else { /* fetched twice: a copy */
                    tg_tensor *first = NULL;
                    for (int jj = 0; jj < j && !first; jj++)
                        if (sig->fetches[jj] == sig->fetches[j])
                            first = results[jj];
                    if (!(results[j] = tg__alloc(first->dtype, first->ndim, first->shape)))
                        return tg_last_status();
                    tg__convert_into(results[j], first);
                }
            }
    }
    for (int j = 0; j < sig->n_fetches; j++)
        tg__publish(results[j]);
    return TG_OK;
}

/* the spans a remote partition's rank recorded, on its device's track */
static tg_status adopt_remote_trace(tg_session *s, const job *j, tg_device device, int tid)
{
    char dev[48];
    tg_wire_reader r = {(const uint8_t *)j->trace->data, j->trace->len, 0,
                        "a worker's trace", false};
    if (j->trace->len == 0) /* the run failed before its spans came */
        return TG_OK;
    int64_t offset = (int64_t)tg__wire_get_u64(&r);
    return r.failed ? tg_last_status()
                    : tg__session_trace_import(s, &r, tg_device_str(device, dev, sizeof dev),
                                               tid, offset);
}

tg_status tg__devices_run(tg_session *s, tg_dsession **slot, const tg_graph *g,
                          const tg_run_sig *sig, const bool *fed, const tg_meta *feed_meta,
                          tg_tensor *const *feed_tensors, tg_tensor **results)
{
    tg_dsession *d = dsession(slot);
    dplan *p = d ? find_or_compile(s, d, g, sig, fed, feed_meta) : NULL;
    if (!p)
        return tg_last_status();
    int64_t step = next_step++;
    tg_rendezvous *rv = tg__rendezvous_new(step);
    job *jobs = calloc((size_t)p->P.n + 1, sizeof *jobs);
    tg_status st = rv && jobs ? make_jobs(s, p, sig, feed_tensors, rv, step, jobs)
                              : tg__error(TG_ERR_NOMEM, "tg_session_run: out of memory");
    if (st == TG_OK)
        st = run_jobs(jobs, p->P.n, rv);
    bool first = true;
    for (int i = 0; i < p->P.n && jobs; i++) {
        char dev[48];
        if (jobs[i].remote) { /* its ops ran and were traced in its process */
            if (jobs[i].trace && st == TG_OK &&
                adopt_remote_trace(s, &jobs[i], p->P.parts[i].device, i) != TG_OK)
                st = tg_last_status();
            continue;
        }
        tg__session_count_ops(s, p->subs[i], first);
        first = false;
        if (tg__session_trace_adopt(s, p->subs[i],
                                    tg_device_str(p->P.parts[i].device, dev, sizeof dev),
                                    i) != TG_OK && st == TG_OK)
            st = tg_last_status();
    }
    tg__session_trace_next(s);
    if (st == TG_OK)
        st = hand_over(p, sig, jobs, results);
    for (int i = 0; i < p->P.n && jobs; i++) {
        for (int f = 0; jobs[i].results && f < p->P.parts[i].n_fetches; f++)
            tg_release(jobs[i].results[f]);
        free(jobs[i].feeds);
        free(jobs[i].results);
        if (jobs[i].trace)
            tg__strbuf_free(jobs[i].trace);
        free(jobs[i].trace);
    }
    if (st != TG_OK)
        for (int j = 0; j < sig->n_fetches; j++) {
            tg_release(results[j]);
            results[j] = NULL;
        }
    free(jobs);
    tg__rendezvous_free(rv);
    return st;
}

/* ---- placement and pictures without running ------------------------------------------ */
/* the partitioning of a signature given as tensors (compiled and cached
 * as a run would); NULL with an error naming fn */
static const dplan *plan_for(tg_session *s, const char *fn, int n_feeds,
                             tg_tensor *const *feed_values, int n_fetches,
                             tg_tensor *const *fetch_values, int n_targets,
                             tg_tensor *const *targets)
{
    if (!s || n_feeds < 0 || n_fetches < 0 || n_targets < 0 || (n_feeds && !feed_values) ||
        (n_fetches && !fetch_values) || (n_targets && !targets) || n_fetches + n_targets == 0)
        return tg__error_null(TG_ERR_ARG, "%s: %s", fn, !s ? "session is NULL"
                              : "bad counts or NULL arrays (something to fetch or run is needed)");
    tg_graph *g = tg__session_graph(s);
    int n = n_feeds + n_fetches + n_targets;
    int *ids = malloc(((size_t)n + 1) * sizeof *ids);
    bool *fed = calloc((size_t)g->n_values + 1, 1);
    const dplan *p = NULL;
    tg_status st = ids && fed ? TG_OK : tg__error(TG_ERR_NOMEM, "%s: out of memory", fn);
    for (int i = 0; i < n && st == TG_OK; i++) {
        const tg_tensor *t = i < n_feeds ? feed_values[i] : i < n_feeds + n_fetches
                             ? fetch_values[i - n_feeds] : targets[i - n_feeds - n_fetches];
        if ((ids[i] = tg__graph_value_of(g, t, fn, "a value")) < 0)
            st = tg_last_status();
        else if (i < n_feeds)
            fed[ids[i]] = true;
        else if (i >= n_feeds + n_fetches)
            ids[i] = g->values[ids[i]].node;
    }
    tg_dsession *d = st == TG_OK ? dsession(tg__session_devices(s)) : NULL;
    if (d) {
        tg_run_sig sig = {n_feeds, n_fetches, n_targets, ids, ids + n_feeds,
                          ids + n_feeds + n_fetches};
        p = find_or_compile(s, d, g, &sig, fed, NULL);
    }
    free(ids);
    free(fed);
    return p;
}

tg_status tg_session_placement(tg_session *s, int n_feeds, tg_tensor *const *feed_values,
                               int n_fetches, tg_tensor *const *fetch_values,
                               int n_targets, tg_tensor *const *targets, int n_nodes,
                               tg_device *device)
{
    if (!device)
        return tg__error(TG_ERR_ARG, "tg_session_placement: device is NULL");
    if (s && n_nodes != tg_graph_num_nodes(tg__session_graph(s)))
        return tg__error(TG_ERR_ARG, "tg_session_placement: room for %d nodes, the graph "
                         "has %d", n_nodes, tg_graph_num_nodes(tg__session_graph(s)));
    const dplan *p = plan_for(s, "tg_session_placement", n_feeds, feed_values, n_fetches,
                              fetch_values, n_targets, targets);
    if (!p)
        return tg_last_status();
    for (int i = 0; i < n_nodes; i++)
        device[i] = i < p->P.n_nodes && p->P.part[i] >= 0 ? p->P.parts[p->P.part[i]].device
                                                          : (tg_device){TG_CPU, -1, 0};
    return TG_OK;
}

tg_status tg_session_partitions_to_dot(tg_session *s, int n_feeds,
                                       tg_tensor *const *feed_values, int n_fetches,
                                       tg_tensor *const *fetch_values, int n_targets,
                                       tg_tensor *const *targets, const char *path)
{
    if (!path)
        return tg__error(TG_ERR_ARG, "tg_session_partitions_to_dot: path is NULL");
    const dplan *p = plan_for(s, "tg_session_partitions_to_dot", n_feeds, feed_values,
                              n_fetches, fetch_values, n_targets, targets);
    return p ? tg__partitions_to_dot(&p->P, path) : tg_last_status();
}

/* ---- variables that live in other processes -------------------------------------------- */
tg_status tg_session_pull_variables(tg_session *s)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_session_pull_variables: session is NULL");
    tg_graph *g = tg__session_graph(s);
    int n = 0;
    tg_tensor **vars = malloc(((size_t)g->n_nodes + 1) * sizeof *vars), **vals = NULL;
    if (!vars)
        return tg__error(TG_ERR_NOMEM, "tg_session_pull_variables: out of memory");
    tg_scope_begin();
    tg_status st = TG_OK;
    for (int i = 0; i < g->n_nodes && st == TG_OK; i++) {
        const tg_gnode *nd = &g->nodes[i];
        if (nd->kind == TG_GNODE_VARIABLE && nd->device.index >= 0 &&
            nd->device.rank != tg__rv_rank() && !(vars[n++] = tg__graph_symbolic(g, nd->out[0])))
            st = tg_last_status();
    }
    if (st == TG_OK && n > 0 && !(vals = calloc((size_t)n, sizeof *vals)))
        st = tg__error(TG_ERR_NOMEM, "tg_session_pull_variables: out of memory");
    if (st == TG_OK && n > 0)
        st = tg_session_run(s, 0, NULL, NULL, n, vars, vals, 0, NULL);
    const tg_remote_runner *rr = tg__remote_runner();
    for (int k = 0; st == TG_OK && k < n; k++) {
        tg_tensor *own = g->nodes[g->values[vars[k]->value].node].tensor;
        tg__convert_into(own, vals[k]);
        tg__bump_version(own);
        if (rr)
            rr->synced(own);
    }
    for (int k = 0; k < n; k++)
        tg_release(vars[k]);
    free(vars);
    free(vals);
    tg_scope_end();
    return st;
}
