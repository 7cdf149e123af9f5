/* The master (rank 0): a partitioned run whose partition lives on a device
 * of another rank ships that partition to the rank's worker, serialized
 * in the graph's own wire form, once per cached plan, then has it run
 * each step, sending the feeds it needs and receiving its fetches (the
 * remote runner of runtime/rendezvous.h; commands in protocol.h). The
 * values that cross between partitions go by Send/Recv over the
 * transports (transport.c), not through the master. A worker may hold
 * several devices: their partitions run at once there, each answering on
 * a tag of its own. */
#ifdef TG_HAVE_MPI
#include "dist/protocol.h"
#include "dist/world.h"
#include "graph/serialize.h"
#include "io/wire.h"
#include "runtime/partition.h"
#include "runtime/rendezvous.h"
#include "tg/device.h"
#include "util/grow.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n_ranks; /* the world's size while the runner is up */

/* the master's variables workers hold copies of: the storage version the
 * worker's copy was last made equal to (shipped, assigned or pulled). A
 * worker knows a variable by its tensor's address here, so the tensor is
 * kept alive until the world ends: no later tensor can take its address
 * and be mistaken for it, and the worker's copy (with what training made
 * of it) outlives the plans and sessions that used it. */
typedef struct held {
    const tg_tensor *t;
    int rank;
    uint64_t version;
} held;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static held *helds;
static int n_held, cap_held;

static tg_status send_command(int rank, tg_strbuf *b, const char *what)
{
    if (b->failed)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", what);
    if (b->len > 0x7fffffff)
        return tg__error(TG_ERR_UNSUPPORTED, "%s: %zu bytes do not fit one MPI message",
                         what, b->len);
    MPI_Request req;
    int e = MPI_Isend(b->data, (int)b->len, MPI_BYTE, rank, TAG_COMMAND, tg__dist_ctl_comm(),
                      &req);
    if (e != MPI_SUCCESS)
        return tg__dist_mpi_error(e, what);
    return tg__dist_wait(&req, what);
}

/* the worker's answer: its status (its error set here), and r over the
 * rest (buf to free) */
static tg_status read_answer(const tg_partition *q, const char *what, char **buf,
                             tg_wire_reader *r)
{
    int len;
    if (tg__dist_recv_message(q->device.rank, TAG_ANSWER + q->device.index,
                              tg__dist_ctl_comm(), buf, &len, what) != TG_OK)
        return tg_last_status();
    *r = (tg_wire_reader){(const uint8_t *)*buf, (size_t)len, 0, what, false};
    tg_status st = (tg_status)tg__wire_get_u32(r);
    char *msg = tg__wire_get_str(r);
    if (r->failed)
        st = tg_last_status();
    else if (st != TG_OK)
        st = tg__error(st > TG_ERR_INTERNAL ? TG_ERR_INTERNAL : st, "%s", msg);
    free(msg);
    return st;
}

static void start_command(tg_strbuf *b, int kind, int64_t uid, int device)
{
    tg__wire_u8(b, (unsigned)kind);
    tg__wire_u64(b, (uint64_t)uid);
    tg__wire_u32(b, (uint32_t)device);
}

static void put_names(tg_strbuf *b, int n, tg_tensor *const *t, bool values)
{
    tg__wire_u32(b, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        char name[320];
        const tg_graph *g = tg_tensor_graph(t[i]);
        tg__wire_str(b, values ? tg__value_name(g, t[i]->value, name, sizeof name)
                               : tg_graph_node_name(t[i]));
    }
}

/* can q's rank serve it: a worker of this world, a device index the
 * answer tags cover */
static bool servable(const tg_partition *q, const char *what)
{
    int r = q->device.rank;
    if (r <= 0 || r >= n_ranks) {
        tg__error(TG_ERR_ARG, "%s: no rank %d in a world of %d processes", what, r, n_ranks);
        return false;
    }
    if (q->device.index > MAX_WORKER_DEVICE) {
        tg__error(TG_ERR_UNSUPPORTED, "%s: a worker's device index is at most %d", what,
                  MAX_WORKER_DEVICE);
        return false;
    }
    return true;
}

static held *find_held(const tg_tensor *t, int rank)
{
    for (int i = 0; i < n_held; i++)
        if (helds[i].t == t && helds[i].rank == rank)
            return &helds[i];
    return NULL;
}

/* the variables of a partition its rank now holds: the versions they
 * were shipped at (a worker that held one already kept its own copy,
 * whose record stays) */
static void note_shipped(const tg_partition *q)
{
    pthread_mutex_lock(&held_mu);
    for (int i = 0; i < q->g->n_nodes; i++) {
        const tg_tensor *t = q->g->nodes[i].tensor;
        if (q->g->nodes[i].kind == TG_GNODE_VARIABLE && !find_held(t, q->device.rank) &&
            TG_GROW(helds, cap_held, n_held + 1))
            helds[n_held++] = (held){tg_retain((tg_tensor *)t), q->device.rank,
                                     t->storage->version};
    }
    pthread_mutex_unlock(&held_mu);
}

/* variables of q changed here since its rank's copies were made: sent
 * before the run (on the same communicator and from this thread, so the
 * worker assigns them before it starts the run) */
static tg_status push_changed(const tg_partition *q, const char *what)
{
    tg_status st = TG_OK;
    for (int i = 0; i < q->g->n_nodes && st == TG_OK; i++) {
        const tg_gnode *n = &q->g->nodes[i];
        if (n->kind != TG_GNODE_VARIABLE)
            continue;
        pthread_mutex_lock(&held_mu);
        held *h = find_held(n->tensor, q->device.rank);
        bool changed = h && h->version != n->tensor->storage->version;
        if (changed)
            h->version = n->tensor->storage->version;
        pthread_mutex_unlock(&held_mu);
        if (!changed)
            continue;
        tg_strbuf b = {0};
        start_command(&b, CMD_ASSIGN, 0, q->device.index);
        tg__wire_u64(&b, (uint64_t)(uintptr_t)n->tensor);
        st = tg__wire_tensor(&b, n->tensor);
        if (st == TG_OK)
            st = send_command(q->device.rank, &b, what);
        tg__strbuf_free(&b);
    }
    return st;
}

static void m_synced(const tg_tensor *t)
{
    pthread_mutex_lock(&held_mu);
    for (int i = 0; i < n_held; i++)
        if (helds[i].t == t)
            helds[i].version = t->storage->version;
    pthread_mutex_unlock(&held_mu);
}

static tg_status m_load(const tg_partition *q, int64_t uid)
{
    char dev[48], what[128];
    tg_device_str(q->device, dev, sizeof dev);
    snprintf(what, sizeof what, "device %s: shipping its partition", dev);
    if (!servable(q, what))
        return tg_last_status();
    tg_strbuf graph = {0}, b = {0};
    tg_status st = tg__graph_serialize(q->g, &graph);
    if (st == TG_OK && graph.failed)
        st = tg__error(TG_ERR_NOMEM, "%s: out of memory", what);
    if (st != TG_OK) {
        tg__strbuf_free(&graph);
        return tg__error(tg_last_status(), "device %s: %s", dev, tg_last_error());
    }
    start_command(&b, CMD_LOAD, uid, q->device.index);
    tg__wire_str(&b, dev);
    tg__wire_u64(&b, graph.len);
    tg__wire_put(&b, graph.data, graph.len);
    tg__strbuf_free(&graph);
    put_names(&b, q->n_feeds, q->feed_vals, false);
    put_names(&b, q->n_fetches, q->fetch_vals, true);
    put_names(&b, q->n_targets, q->targets, false);
    char *ans = NULL;
    tg_wire_reader r;
    st = send_command(q->device.rank, &b, what);
    if (st == TG_OK) {
        st = read_answer(q, what, &ans, &r);
        if (st == TG_OK && !tg__wire_end(&r))
            st = tg_last_status();
    }
    if (st == TG_OK)
        note_shipped(q);
    free(ans);
    tg__strbuf_free(&b);
    return st;
}

/* the fetched values; with a trace, the worker's spans after them go to
 * *trace as (i64 offset to this clock, the spans' records) */
static tg_status read_results(tg_wire_reader *r, int n, tg_tensor **results, tg_strbuf *trace,
                              int64_t sent_ns, int64_t got_ns)
{
    if (tg__wire_get_u32(r) != (uint32_t)n && !r->failed)
        tg__wire_fail(r, "a different number of fetched values than asked for", NULL);
    for (int i = 0; i < n && !r->failed; i++)
        results[i] = tg__wire_get_tensor(r);
    if (trace && !r->failed) {
        /* the worker's receive and send times: its clock's offset from
         * ours, with the transit halved each way (NTP's estimate) */
        int64_t w_got = (int64_t)tg__wire_get_u64(r), w_sent = (int64_t)tg__wire_get_u64(r);
        int64_t offset = ((w_got - sent_ns) + (w_sent - got_ns)) / 2;
        tg__wire_u64(trace, (uint64_t)-offset);
        tg__wire_put(trace, r->p + r->off, r->len - r->off);
        r->off = r->len;
    }
    if (tg__wire_end(r))
        return TG_OK;
    for (int i = 0; i < n; i++) {
        tg_release(results[i]);
        results[i] = NULL;
    }
    return tg_last_status();
}

static tg_status m_run(const tg_partition *q, int64_t uid, int64_t step, int n_on_rank,
                       tg_tensor *const *feeds, tg_tensor **results, tg_strbuf *trace)
{
    char dev[48], what[128];
    tg_device_str(q->device, dev, sizeof dev);
    snprintf(what, sizeof what, "device %s: step %lld", dev, (long long)step);
    if (!servable(q, what))
        return tg_last_status();
    tg_strbuf b = {0};
    start_command(&b, CMD_RUN, uid, q->device.index);
    tg__wire_u64(&b, (uint64_t)step);
    tg__wire_u32(&b, (uint32_t)n_on_rank);
    tg__wire_u8(&b, trace != NULL);
    tg__wire_u32(&b, (uint32_t)q->n_feeds);
    tg_status st = TG_OK;
    for (int i = 0; i < q->n_feeds && st == TG_OK; i++)
        st = tg__wire_tensor(&b, feeds[i]);
    char *ans = NULL;
    tg_wire_reader r;
    if (st == TG_OK)
        st = push_changed(q, what);
    int64_t sent = tg__now_ns();
    if (st == TG_OK)
        st = send_command(q->device.rank, &b, what);
    if (st == TG_OK)
        st = read_answer(q, what, &ans, &r);
    if (st == TG_OK)
        st = read_results(&r, q->n_fetches, results, trace, sent, tg__now_ns());
    free(ans);
    tg__strbuf_free(&b);
    return st;
}

static void m_drop(const tg_partition *q, int64_t uid)
{
    if (!tg__dist_ready("dropping a plan") || !servable(q, "dropping a plan")) {
        tg_clear_error();
        return;
    }
    tg_strbuf b = {0};
    start_command(&b, CMD_DROP, uid, q->device.index);
    if (send_command(q->device.rank, &b, "dropping a plan") != TG_OK)
        tg_clear_error();
    tg__strbuf_free(&b);
}

static const tg_remote_runner runner = {m_load, m_run, m_drop, m_synced};

void tg__dist_master_start(void)
{
    if (tg_dist_rank() != 0)
        return;
    n_ranks = tg_dist_world_size();
    tg__set_remote_runner(&runner);
}

void tg__dist_master_stop(void)
{
    if (tg_dist_rank() != 0 || n_ranks == 0)
        return;
    tg__set_remote_runner(NULL);
    /* every worker: one in tg_dist_serve returns; a rank that never served
     * leaves the small message unread, which MPI drops */
    for (int r = 1; r < n_ranks && tg__dist_ready("stopping the workers"); r++) {
        tg_strbuf b = {0};
        start_command(&b, CMD_STOP, 0, 0);
        send_command(r, &b, "stopping the workers");
        tg__strbuf_free(&b);
    }
    tg_clear_error();
    n_ranks = 0;
    pthread_mutex_lock(&held_mu);
    for (int i = 0; i < n_held; i++)
        tg_release((tg_tensor *)helds[i].t);
    free(helds);
    helds = NULL;
    n_held = cap_held = 0;
    pthread_mutex_unlock(&held_mu);
}

void tg__dist_graphs_start(void)
{
    tg__dist_transports_start();
    tg__dist_master_start();
}

void tg__dist_graphs_stop(void)
{
    tg__dist_master_stop();
    tg__dist_transports_stop();
}
#endif
