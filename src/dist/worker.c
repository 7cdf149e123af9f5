/* A worker (every rank but 0, in tg_dist_serve): receives partitions from
 * the master, checks each on receipt as it would a file (the graph's
 * wire form is read as hostile bytes and every node is rebuilt through
 * the op dispatcher), compiles it in a session of its own and runs it
 * when told to, with the device executor: its Sends and Recvs go straight
 * to the other ranks over the transports. Each run is a task on a thread
 * of its own, so the partitions of one step on this rank's devices run at
 * once and meet in the step's one rendezvous here. Variables live here:
 * the first partition that holds one brings its value, later partitions
 * of any plan share that storage (the resource table), so state persists
 * across steps and signatures as it does in one process. */
#ifdef TG_HAVE_MPI
#include "dist/protocol.h"
#include "dist/world.h"
#include "graph/serialize.h"
#include "io/wire.h"
#include "ops/elementwise.h"
#include "runtime/session_devices.h"
#include "tg/device.h"
#include "util/grow.h"

#include <pthread.h>
#include <stdatomic.h>
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

/* the rendezvous of a step, shared by its partitions on this rank */
typedef struct step_rv {
    int64_t step;
    tg_rendezvous *rv;
    int expected, finished;
} step_rv;

typedef struct task task;

typedef struct worker {
    plan **plans; /* each allocated alone: tasks keep pointers to them */
    int n_plans, cap_plans;
    resource *vars;
    int n_vars, cap_vars;
    pthread_mutex_t mu; /* steps: tasks take and leave rendezvous */
    step_rv *steps;
    int n_steps, cap_steps;
    task **tasks;
    int n_tasks, cap_tasks;
} worker;

/* one RUN command, run on its own thread */
struct task {
    worker *w;
    plan *p;
    char *buf; /* the command (owned); r reads what follows its header */
    tg_wire_reader r;
    int64_t received_ns; /* when the command came (a traced run reports it) */
    pthread_t thread;
    atomic_bool done;
};

/* ---- plans and variables ------------------------------------------------------------------ */
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
    free(p);
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
    plan *p = calloc(1, sizeof *p);
    if (!p) {
        free(dev);
        return tg__error(TG_ERR_NOMEM, "worker: out of memory");
    }
    p->uid = uid;
    if (dev && tg_device_parse(dev, &p->device) != TG_OK)
        tg__wire_fail(r, "a bad device name: ", dev);
    free(dev);
    uint64_t n = tg__wire_get_u64(r);
    if (!r->failed && n > r->len - r->off)
        tg__wire_fail(r, "truncated partition", NULL);
    if (!r->failed && !(p->g = tg__graph_deserialize(r->p + r->off, (size_t)n, "rank 0",
                                                      resolve, w)))
        r->failed = true;
    r->off += r->failed ? 0 : (size_t)n;
    tg_scope_begin(); /* find_all's symbolic tensors are retained below */
    if (!r->failed && find_all(r, p->g, &p->n_feeds, &p->feeds) &&
        find_all(r, p->g, &p->n_fetches, &p->fetches) &&
        find_all(r, p->g, &p->n_targets, &p->targets))
        tg__wire_end(r);
    for (int i = 0; !r->failed && i < p->n_feeds + p->n_fetches + p->n_targets; i++)
        tg_retain(i < p->n_feeds ? p->feeds[i] : i < p->n_feeds + p->n_fetches
                  ? p->fetches[i - p->n_feeds] : p->targets[i - p->n_feeds - p->n_fetches]);
    tg_scope_end();
    if (!r->failed && ((p->s = tg_session_new(p->g)) == NULL ||
                       !TG_GROW(w->plans, w->cap_plans, w->n_plans + 1)))
        r->failed = true;
    if (r->failed) {
        tg_status st = tg_last_status();
        p->n_feeds = p->n_fetches = p->n_targets = 0; /* not retained */
        plan_free(p);
        return st;
    }
    tg__session_device_executor(p->s);
    w->plans[w->n_plans++] = p;
    return TG_OK;
}

static int find_plan(const worker *w, int64_t uid, int device)
{
    for (int i = 0; i < w->n_plans; i++)
        if (w->plans[i]->uid == uid && w->plans[i]->device.index == device)
            return i;
    return -1;
}

/* ---- answers ------------------------------------------------------------------------------ */
static tg_status answer(int device, tg_status st, const tg_strbuf *results)
{
    tg_strbuf b = {0};
    tg__wire_u32(&b, (uint32_t)st);
    tg__wire_str(&b, st == TG_OK ? "" : tg_last_error());
    if (st == TG_OK && results)
        tg__wire_put(&b, results->data, results->len);
    MPI_Request req;
    int e = b.failed ? MPI_ERR_NO_MEM
                     : MPI_Isend(b.data, (int)b.len, MPI_BYTE, 0, TAG_ANSWER + device,
                                 tg__dist_ctl_comm(), &req);
    tg_status s = e == MPI_SUCCESS ? tg__dist_wait(&req, "answering the master")
                                   : tg__dist_mpi_error(e, "answering the master");
    tg__strbuf_free(&b);
    return s;
}

/* ---- runs --------------------------------------------------------------------------------- */
static tg_rendezvous *step_enter(worker *w, int64_t step, int expected)
{
    pthread_mutex_lock(&w->mu);
    tg_rendezvous *rv = NULL;
    for (int i = 0; i < w->n_steps && !rv; i++)
        if (w->steps[i].step == step)
            rv = w->steps[i].rv;
    if (!rv && TG_GROW(w->steps, w->cap_steps, w->n_steps + 1) &&
        (rv = tg__rendezvous_new(step)))
        w->steps[w->n_steps++] = (step_rv){step, rv, expected < 1 ? 1 : expected, 0};
    pthread_mutex_unlock(&w->mu);
    return rv ? rv : tg__error_null(TG_ERR_NOMEM, "worker: out of memory");
}

/* the last partition of the step on this rank frees its rendezvous */
static void step_leave(worker *w, int64_t step)
{
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < w->n_steps; i++)
        if (w->steps[i].step == step && ++w->steps[i].finished >= w->steps[i].expected) {
            tg__rendezvous_free(w->steps[i].rv);
            w->steps[i] = w->steps[--w->n_steps];
            break;
        }
    pthread_mutex_unlock(&w->mu);
}

/* runs the task's plan for the step; its fetched values into *out */
static tg_status run(task *t, tg_strbuf *out)
{
    tg_wire_reader *r = &t->r;
    plan *p = t->p;
    int64_t step = (int64_t)tg__wire_get_u64(r);
    int on_rank = (int)tg__wire_get_u32(r);
    bool traced = tg__wire_get_u8(r) != 0;
    if (r->failed)
        return tg_last_status();
    tg_rendezvous *rv = step_enter(t->w, step, on_rank);
    if (!rv)
        return tg_last_status();
    if (tg__wire_get_count(r, 10) != (uint32_t)p->n_feeds && !r->failed)
        tg__wire_fail(r, "a different number of feeds than the partition has", NULL);
    tg_tensor **feeds = calloc((size_t)p->n_feeds + 1, sizeof *feeds);
    tg_tensor **results = calloc((size_t)p->n_fetches + 1, sizeof *results);
    if (!feeds || !results)
        tg__wire_fail(r, "out of memory", NULL);
    for (int i = 0; i < p->n_feeds && !r->failed; i++)
        feeds[i] = tg__wire_get_tensor(r);
    tg_status st = tg__wire_end(r) ? TG_OK : tg_last_status();
    if (st == TG_OK && traced)
        tg__session_trace_on(p->s);
    if (st != TG_OK) /* the step's other partitions here must not wait for us */
        tg__rv_abort(rv, st, tg_last_error());
    else if (tg__device_run(p->s, p->device, rv, step, p->device.index, p->n_feeds, p->feeds,
                            feeds, p->n_fetches, p->fetches, results, p->n_targets,
                            p->targets) != TG_OK) {
        char msg[1024]; /* the step's error: "device /rank:1/cpu:0: ..." */
        st = tg__rv_aborted(rv, msg, sizeof msg);
        st = tg__error(st == TG_OK ? tg_last_status() : st, "%s",
                       st == TG_OK ? tg_last_error() : msg);
    }
    tg__wire_u32(out, (uint32_t)p->n_fetches);
    for (int i = 0; i < p->n_fetches && st == TG_OK; i++)
        st = tg__wire_tensor(out, results[i]);
    if (st == TG_OK && traced) { /* the clock's marks, then the spans */
        tg__wire_u64(out, (uint64_t)t->received_ns);
        tg__wire_u64(out, (uint64_t)tg__now_ns());
        st = tg__session_trace_export(p->s, out);
    }
    for (int i = 0; i < p->n_feeds && feeds; i++)
        tg_release(feeds[i]);
    for (int i = 0; i < p->n_fetches && results; i++)
        tg_release(results[i]);
    free(feeds);
    free(results);
    step_leave(t->w, step);
    return st;
}

static void *task_main(void *arg)
{
    task *t = arg;
    tg_strbuf out = {0};
    tg_status st = run(t, &out);
    if (answer(t->p->device.index, st, &out) != TG_OK)
        fprintf(stderr, "tensorgraph: rank %d: %s\n", tg_dist_rank(), tg_last_error());
    tg__strbuf_free(&out);
    atomic_store(&t->done, true);
    return NULL;
}

/* joins finished tasks (all: every task) */
static void reap_tasks(worker *w, bool all)
{
    for (int i = 0; i < w->n_tasks;) {
        task *t = w->tasks[i];
        if (!all && !atomic_load(&t->done)) {
            i++;
            continue;
        }
        pthread_join(t->thread, NULL);
        free(t->buf);
        free(t);
        w->tasks[i] = w->tasks[--w->n_tasks];
    }
}

/* starts a RUN of plan k; takes buf (the command) */
static tg_status start_run(worker *w, int k, char *buf, const tg_wire_reader *r)
{
    task *t = calloc(1, sizeof *t);
    if (!t || !TG_GROW(w->tasks, w->cap_tasks, w->n_tasks + 1)) {
        free(t);
        free(buf);
        return tg__error(TG_ERR_NOMEM, "worker: out of memory");
    }
    *t = (task){.w = w, .p = w->plans[k], .buf = buf, .r = *r, .received_ns = tg__now_ns()};
    atomic_init(&t->done, false);
    if (pthread_create(&t->thread, NULL, task_main, t) != 0) {
        free(t);
        free(buf);
        return tg__error(TG_ERR_NOMEM, "worker: cannot start a thread for a run");
    }
    w->tasks[w->n_tasks++] = t;
    return TG_OK;
}

/* the master's value for a variable held here (between runs that use it) */
static void assign(worker *w, tg_wire_reader *r)
{
    uint64_t key = tg__wire_get_u64(r);
    tg_tensor *v = tg__wire_get_tensor(r);
    tg_tensor *own = NULL;
    for (int i = 0; i < w->n_vars && !own; i++)
        if (w->vars[i].key == key)
            own = w->vars[i].t;
    if (tg__wire_end(r) && own && v && own->dtype == v->dtype &&
        tg__shape_eq(own->ndim, own->shape, v->ndim, v->shape)) {
        tg__convert_into(own, v);
        tg__bump_version(own);
    } else if (!r->failed) {
        fprintf(stderr, "tensorgraph: rank %d: an assignment to a variable this worker does "
                "not hold, or of another dtype or shape: ignored\n", tg_dist_rank());
    } else {
        fprintf(stderr, "tensorgraph: rank %d: %s\n", tg_dist_rank(), tg_last_error());
    }
    tg_release(v);
}

/* ---- the loop ----------------------------------------------------------------------------- */
/* one command (buf is taken); *stop when it was STOP. Errors of a command
 * go to the master in its answer; the return is the link's status */
static tg_status serve_one(worker *w, char *buf, int len, bool *stop)
{
    tg_wire_reader r = {(const uint8_t *)buf, (size_t)len, 0, "a command from rank 0", false};
    unsigned kind = tg__wire_get_u8(&r);
    int64_t uid = (int64_t)tg__wire_get_u64(&r);
    uint32_t dev = tg__wire_get_u32(&r);
    if (!r.failed && dev > MAX_WORKER_DEVICE)
        tg__wire_fail(&r, "a device index out of range", NULL);
    if (r.failed) { /* not even a command: nobody to answer */
        fprintf(stderr, "tensorgraph: rank %d: %s\n", tg_dist_rank(), tg_last_error());
        free(buf);
        return TG_OK;
    }
    tg_status st = TG_OK;
    int k;
    switch (kind) {
    case CMD_LOAD: st = answer((int)dev, load(w, uid, &r), NULL); break;
    case CMD_RUN:
        if ((k = find_plan(w, uid, (int)dev)) >= 0)
            return start_run(w, k, buf, &r) == TG_OK ? TG_OK
                                                     : answer((int)dev, tg_last_status(), NULL);
        tg__error(TG_ERR_ARG, "worker %d: no plan %lld for device %u (not loaded, or dropped)",
                  tg_dist_rank(), (long long)uid, dev);
        st = answer((int)dev, TG_ERR_ARG, NULL);
        break;
    case CMD_DROP:
        reap_tasks(w, true);
        if ((k = find_plan(w, uid, (int)dev)) >= 0) {
            plan_free(w->plans[k]);
            w->plans[k] = w->plans[--w->n_plans];
        }
        break;
    case CMD_ASSIGN: assign(w, &r); break;
    case CMD_STOP: *stop = true; break;
    default:
        tg__wire_fail(&r, "an unknown command", NULL);
        st = answer((int)dev, tg_last_status(), NULL);
    }
    free(buf);
    return st;
}

tg_status tg_dist_serve(void)
{
    if (!tg__dist_ready("tg_dist_serve"))
        return tg_last_status();
    if (tg_dist_rank() == 0)
        return tg__error(TG_ERR_ARG, "tg_dist_serve: rank 0 is the master (it runs the "
                         "program); the other ranks serve it");
    worker w = {0};
    pthread_mutex_init(&w.mu, NULL);
    bool stop = false;
    tg_status st = TG_OK;
    while (!stop && st == TG_OK) {
        char *buf;
        int len;
        st = tg__dist_recv_message(0, TAG_COMMAND, tg__dist_ctl_comm(), &buf, &len,
                                   "tg_dist_serve: waiting for the master");
        if (st == TG_OK)
            st = serve_one(&w, buf, len, &stop);
        reap_tasks(&w, false);
    }
    reap_tasks(&w, true); /* after a lost master they fail on their own waits */
    for (int i = 0; i < w.n_plans; i++)
        plan_free(w.plans[i]);
    for (int i = 0; i < w.n_vars; i++)
        tg_release(w.vars[i].t);
    for (int i = 0; i < w.n_steps; i++)
        tg__rendezvous_free(w.steps[i].rv);
    free(w.plans);
    free(w.vars);
    free(w.steps);
    free(w.tasks);
    pthread_mutex_destroy(&w.mu);
    return st;
}
#endif
