/* A worker (every rank but 0, in tg_dist_serve): receives partitions from
 * the master, checks each on receipt as it would a file (the graph's
 * wire form is read as hostile bytes and every node is rebuilt through
 * the op dispatcher), compiles it in a session of its own and runs it
 * when told to, with the device executor: its Sends and Recvs go straight
 * to the other ranks over the transports. Variables live here: the first
 * partition that holds one brings its value, later partitions of any
 * plan share that storage (the resource table), so state persists across
 * steps and signatures as it does in one process. */
#ifdef TG_HAVE_MPI
#include "dist/protocol.h"
#include "dist/world.h"
#include "graph/serialize.h"
#include "io/wire.h"
#include "runtime/session_devices.h"
#include "tg/device.h"
#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct plan {
    int64_t uid;
    tg_device device;
    tg_graph *g;
    tg_session *s;
    int n_feeds, n_fetches, n_targets;
    tg_tensor **feeds, **fetches, **targets; /* symbolic tensors of g */
} plan;

typedef struct resource {
    uint64_t key;
    tg_tensor *t;
} resource;

typedef struct worker {
    plan *plans;
    int n_plans, cap_plans;
    resource *vars;
    int n_vars, cap_vars;
} worker;

static void plan_free(plan *p)
{
    for (int i = 0; i < p->n_feeds; i++)
        tg_release(p->feeds[i]);
    for (int i = 0; i < p->n_fetches; i++)
        tg_release(p->fetches[i]);
    for (int i = 0; i < p->n_targets; i++)
        tg_release(p->targets[i]);
    free(p->feeds);
    free(p->fetches);
    free(p->targets);
    tg_session_free(p->s);
    tg_graph_free(p->g);
}

/* the worker's storage for the master's variable `key` */
static tg_tensor *resolve(void *ctx, const char *name, uint64_t key, tg_tensor *shipped)
{
    (void)name;
    worker *w = ctx;
    for (int i = 0; i < w->n_vars; i++)
        if (w->vars[i].key == key)
            return tg_retain(w->vars[i].t);
    if (!TG_GROW(w->vars, w->cap_vars, w->n_vars + 1))
        return tg__error_null(TG_ERR_NOMEM, "worker: out of memory");
    w->vars[w->n_vars++] = (resource){key, tg_retain(shipped)};
    return tg_retain(shipped);
}

/* n names from r, each found in g: *out (malloc'd) */
static bool find_all(tg_wire_reader *r, tg_graph *g, int *n, tg_tensor ***out)
{
    *n = (int)tg__wire_get_count(r, 4);
    *out = calloc((size_t)*n + 1, sizeof **out);
    if (!*out)
        return tg__wire_fail(r, "out of memory", NULL);
    for (int i = 0; i < *n && !r->failed; i++) {
        char *name = tg__wire_get_str(r);
        if (name && !((*out)[i] = tg_graph_find(g, name)))
            tg__wire_fail(r, "a name the partition does not have: ", name);
        free(name);
    }
    return !r->failed;
}

static tg_status load(worker *w, int64_t uid, tg_wire_reader *r)
{
    char *dev = tg__wire_get_str(r);
    plan p = {.uid = uid};
    if (dev && tg_device_parse(dev, &p.device) != TG_OK)
        tg__wire_fail(r, "a bad device name: ", dev);
    free(dev);
    uint64_t n = tg__wire_get_u64(r);
    if (!r->failed && n > r->len - r->off)
        tg__wire_fail(r, "truncated partition", NULL);
    if (!r->failed && !(p.g = tg__graph_deserialize(r->p + r->off, (size_t)n, "rank 0",
                                                     resolve, w)))
        r->failed = true;
    r->off += r->failed ? 0 : (size_t)n;
    tg_scope_begin(); /* find_all's symbolic tensors are retained below */
    if (!r->failed && find_all(r, p.g, &p.n_feeds, &p.feeds) &&
        find_all(r, p.g, &p.n_fetches, &p.fetches) && find_all(r, p.g, &p.n_targets, &p.targets))
        tg__wire_end(r);
    for (int i = 0; !r->failed && i < p.n_feeds + p.n_fetches + p.n_targets; i++)
        tg_retain(i < p.n_feeds ? p.feeds[i] : i < p.n_feeds + p.n_fetches
                  ? p.fetches[i - p.n_feeds] : p.targets[i - p.n_feeds - p.n_fetches]);
    tg_scope_end();
    if (!r->failed && ((p.s = tg_session_new(p.g)) == NULL ||
                       !TG_GROW(w->plans, w->cap_plans, w->n_plans + 1)))
        r->failed = true;
    if (r->failed) {
        tg_status st = tg_last_status();
        p.n_feeds = p.n_fetches = p.n_targets = 0; /* not retained */
        plan_free(&p);
        return st;
    }
    tg__session_device_executor(p.s);
    w->plans[w->n_plans++] = p;
    return TG_OK;
}

static plan *find_plan(worker *w, int64_t uid)
{
    for (int i = 0; i < w->n_plans; i++)
        if (w->plans[i].uid == uid)
            return &w->plans[i];
    return tg__error_null(TG_ERR_ARG, "worker %d: no plan %lld (not loaded, or dropped)",
                          tg_dist_rank(), (long long)uid);
}

/* runs plan uid for the step; the fetched values into *answer */
static tg_status run(worker *w, int64_t uid, tg_wire_reader *r, tg_strbuf *answer)
{
    plan *p = find_plan(w, uid);
    if (!p)
        return tg_last_status();
    int64_t step = (int64_t)tg__wire_get_u64(r);
    if (tg__wire_get_count(r, 10) != (uint32_t)p->n_feeds && !r->failed)
        tg__wire_fail(r, "a different number of feeds than the partition has", NULL);
    tg_tensor **feeds = calloc((size_t)p->n_feeds + 1, sizeof *feeds);
    tg_tensor **results = calloc((size_t)p->n_fetches + 1, sizeof *results);
    if (!feeds || !results)
        tg__wire_fail(r, "out of memory", NULL);
    for (int i = 0; i < p->n_feeds && !r->failed; i++)
        feeds[i] = tg__wire_get_tensor(r);
    tg_status st = tg__wire_end(r) ? TG_OK : tg_last_status();
    tg_rendezvous *rv = st == TG_OK ? tg__rendezvous_new(step) : NULL;
    if (st == TG_OK && !rv)
        st = tg_last_status();
    if (st == TG_OK &&
        tg__device_run(p->s, p->device, rv, step, 0, p->n_feeds, p->feeds, feeds,
                       p->n_fetches, p->fetches, results, p->n_targets, p->targets) != TG_OK) {
        char msg[1024]; /* the step's error: "device /rank:1/cpu:0: ..." */
        st = tg__rv_aborted(rv, msg, sizeof msg);
        st = tg__error(st == TG_OK ? tg_last_status() : st, "%s",
                       st == TG_OK ? tg_last_error() : msg);
    }
    tg__wire_u32(answer, (uint32_t)p->n_fetches);
    for (int i = 0; i < p->n_fetches && st == TG_OK; i++)
        st = tg__wire_tensor(answer, results[i]);
    for (int i = 0; i < p->n_feeds && feeds; i++)
        tg_release(feeds[i]);
    for (int i = 0; i < p->n_fetches && results; i++)
        tg_release(results[i]);
    free(feeds);
    free(results);
    tg__rendezvous_free(rv);
    return st;
}

static void drop(worker *w, int64_t uid)
{
    for (int i = 0; i < w->n_plans; i++)
        if (w->plans[i].uid == uid) {
            plan_free(&w->plans[i]);
            w->plans[i] = w->plans[--w->n_plans];
            return;
        }
}

static tg_status answer(tg_status st, const tg_strbuf *results)
{
    tg_strbuf b = {0};
    tg__wire_u32(&b, (uint32_t)st);
    tg__wire_str(&b, st == TG_OK ? "" : tg_last_error());
    if (st == TG_OK && results)
        tg__wire_put(&b, results->data, results->len);
    MPI_Request req;
    int e = b.failed ? MPI_ERR_NO_MEM
                     : MPI_Isend(b.data, (int)b.len, MPI_BYTE, 0, TAG_ANSWER,
                                 tg__dist_ctl_comm(), &req);
    tg_status s = e == MPI_SUCCESS ? tg__dist_wait(&req, "answering the master")
                                   : tg__dist_mpi_error(e, "answering the master");
    tg__strbuf_free(&b);
    return s;
}

/* one command; *stop when it was STOP */
static tg_status serve_one(worker *w, const char *buf, int len, bool *stop)
{
    tg_wire_reader r = {(const uint8_t *)buf, (size_t)len, 0, "a command from rank 0", false};
    unsigned kind = tg__wire_get_u8(&r);
    int64_t uid = (int64_t)tg__wire_get_u64(&r);
    if (r.failed) /* not even a command: nothing to answer to */
        return answer(tg_last_status(), NULL);
    tg_strbuf results = {0};
    tg_status st;
    switch (kind) {
    case CMD_LOAD: return answer(load(w, uid, &r), NULL);
    case CMD_RUN:
        st = run(w, uid, &r, &results);
        st = answer(st, &results);
        tg__strbuf_free(&results);
        return st;
    case CMD_DROP: drop(w, uid); return TG_OK;
    case CMD_STOP: *stop = true; return TG_OK;
    default:
        tg__wire_fail(&r, "an unknown command", NULL);
        return answer(tg_last_status(), NULL);
    }
}

tg_status tg_dist_serve(void)
{
    if (!tg__dist_ready("tg_dist_serve"))
        return tg_last_status();
    if (tg_dist_rank() == 0)
        return tg__error(TG_ERR_ARG, "tg_dist_serve: rank 0 is the master (it runs the "
                         "program); the other ranks serve it");
    worker w = {0};
    bool stop = false;
    tg_status st = TG_OK;
    while (!stop && st == TG_OK) {
        char *buf;
        int len;
        st = tg__dist_recv_message(0, TAG_COMMAND, tg__dist_ctl_comm(), &buf, &len,
                                   "tg_dist_serve: waiting for the master");
        if (st == TG_OK)
            st = serve_one(&w, buf, len, &stop);
        free(buf);
    }
    for (int i = 0; i < w.n_plans; i++)
        plan_free(&w.plans[i]);
    for (int i = 0; i < w.n_vars; i++)
        tg_release(w.vars[i].t);
    free(w.plans);
    free(w.vars);
    return st;
}
#endif
