/* Send/Recv between processes: the rendezvous' transport to another rank
 * (runtime/rendezvous.h) over MPI. A Send is one non-blocking message on
 * the transfers' own communicator: the step, the rendezvous key
 * ("name;src;dst") and the tensor (io/wire.h). Every message carries its
 * whole key, so one tag serves all transfers: a receiver drains whatever
 * has arrived from the peer (MPI_Improbe, MPI_Mrecv) into a mailbox and
 * takes the entry with its key and step. (Tags from hashes of keys would
 * save nothing: MPI guarantees only 32 767 tags, so a key check would be
 * needed anyway, and draining lets any device thread collect for all.)
 * An abort is a message too: the step's receives from that peer fail
 * with its error. A malformed message fails every receive from the peer
 * with an error naming it; nothing is trusted before it is checked. */
#ifdef TG_HAVE_MPI
#include "dist/world.h"
#include "io/wire.h"
#include "runtime/rendezvous.h"
#include "util/grow.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_DATA 1
#define TAG_ABORT 2

typedef struct arrival {
    char *key;
    int64_t step;
    tg_tensor *t;
} arrival;

typedef struct abort_note {
    int64_t step;
    tg_status st;
    char *msg;
} abort_note;

typedef struct outgoing {
    MPI_Request req;
    char *buf;
} outgoing;

typedef struct peer_transport {
    tg_transport base; /* first: the rendezvous holds a tg_transport * */
    int rank;
    pthread_mutex_t mu;
    arrival *in;
    int n_in, cap_in;
    abort_note *notes;
    int n_notes, cap_notes;
    outgoing *out;
    int n_out, cap_out;
    char *broken; /* why this peer's messages cannot be trusted, or NULL */
} peer_transport;

static peer_transport *peers;
static int n_peers;

/* ---- sending --------------------------------------------------------------------------- */
/* frees the buffers of sends that completed (under p->mu) */
static void reap(peer_transport *p)
{
    for (int i = 0; i < p->n_out;) {
        int done = 0;
        MPI_Test(&p->out[i].req, &done, MPI_STATUS_IGNORE);
        if (done) {
            free(p->out[i].buf);
            p->out[i] = p->out[--p->n_out];
        } else {
            i++;
        }
    }
}

/* starts sending b's bytes (under p->mu); b is emptied */
static tg_status post(peer_transport *p, tg_strbuf *b, int tag, const char *what)
{
    reap(p);
    if (b->failed || !TG_GROW(p->out, p->cap_out, p->n_out + 1))
        return tg__error(TG_ERR_NOMEM, "%s: out of memory", what);
    if (b->len > INT_MAX)
        return tg__error(TG_ERR_UNSUPPORTED, "%s: %zu bytes do not fit one MPI message",
                         what, b->len);
    int n = (int)b->len;
    outgoing o = {MPI_REQUEST_NULL, tg__strbuf_take(b)};
    int e = MPI_Isend(o.buf, n, MPI_BYTE, p->rank, tag, tg__dist_rv_comm(), &o.req);
    if (e != MPI_SUCCESS) {
        free(o.buf);
        return tg__dist_mpi_error(e, what);
    }
    p->out[p->n_out++] = o;
    return TG_OK;
}

static tg_status t_send(tg_transport *self, const tg_rv_key *k, tg_tensor *t)
{
    peer_transport *p = (peer_transport *)self;
    char key[512], what[600];
    tg__rv_key_str(k, key, sizeof key);
    snprintf(what, sizeof what, "send '%s' to rank %d", key, p->rank);
    if (!tg__dist_ready(what)) {
        tg_release(t);
        return tg_last_status();
    }
    tg_strbuf b = {0};
    tg__wire_u64(&b, (uint64_t)k->step);
    tg__wire_str(&b, key);
    tg_status st = tg__wire_tensor(&b, t);
    tg_release(t);
    if (st == TG_OK) {
        pthread_mutex_lock(&p->mu);
        st = post(p, &b, TAG_DATA, what);
        pthread_mutex_unlock(&p->mu);
    }
    tg__strbuf_free(&b);
    return st;
}

static void t_abort(tg_transport *self, int64_t step, tg_status st, const char *msg)
{
    peer_transport *p = (peer_transport *)self;
    tg_strbuf b = {0};
    tg__wire_u64(&b, (uint64_t)step);
    tg__wire_u32(&b, (uint32_t)st);
    tg__wire_str(&b, msg);
    pthread_mutex_lock(&p->mu);
    if (post(p, &b, TAG_ABORT, "abort") != TG_OK)
        tg_clear_error(); /* the peer then learns of it from its own waits */
    pthread_mutex_unlock(&p->mu);
    tg__strbuf_free(&b);
}

/* ---- receiving ------------------------------------------------------------------------- */
static void set_broken(peer_transport *p, const char *why)
{
    if (!p->broken)
        p->broken = strdup(why);
}

/* one message from the peer into the mailbox (under p->mu) */
static void file_message(peer_transport *p, int tag, const char *buf, int len)
{
    char what[64];
    snprintf(what, sizeof what, "a transfer from rank %d", p->rank);
    tg_wire_reader r = {(const uint8_t *)buf, (size_t)len, 0, what, false};
    int64_t step = (int64_t)tg__wire_get_u64(&r);
    if (tag == TAG_DATA) {
        arrival a = {tg__wire_get_str(&r), step, NULL};
        a.t = a.key ? tg__wire_get_tensor(&r) : NULL;
        if (tg__wire_end(&r) && TG_GROW(p->in, p->cap_in, p->n_in + 1)) {
            p->in[p->n_in++] = a;
            return;
        }
        free(a.key);
        tg_release(a.t);
    } else if (tag == TAG_ABORT) {
        abort_note n = {step, (tg_status)tg__wire_get_u32(&r), NULL};
        n.msg = tg__wire_get_str(&r);
        if (n.st <= TG_OK || n.st > TG_ERR_INTERNAL)
            n.st = TG_ERR_INTERNAL;
        if (tg__wire_end(&r) && TG_GROW(p->notes, p->cap_notes, p->n_notes + 1)) {
            p->notes[p->n_notes++] = n;
            return;
        }
        free(n.msg);
    } else {
        tg__wire_fail(&r, "a message with an unknown tag", NULL);
    }
    set_broken(p, r.failed ? tg_last_error() : "out of memory filing a transfer");
}

/* everything that has arrived from the peer (under p->mu); a message that
 * could not be received leaves the peer's transfers untrustworthy */
static tg_status drain(peer_transport *p)
{
    for (;;) {
        char *buf;
        int len, tag;
        if (tg__dist_try_message(p->rank, MPI_ANY_TAG, tg__dist_rv_comm(), &buf, &len, &tag,
                                 "receiving transfers") != TG_OK) {
            set_broken(p, tg_last_error());
            return tg_last_status();
        }
        if (!buf)
            return TG_OK;
        file_message(p, tag, buf, len);
        free(buf);
    }
}

/* drops what belongs to steps before `step` (aborted steps' leftovers) */
static void forget_before(peer_transport *p, int64_t step)
{
    for (int i = 0; i < p->n_in;)
        if (p->in[i].step < step) {
            free(p->in[i].key);
            tg_release(p->in[i].t);
            p->in[i] = p->in[--p->n_in];
        } else {
            i++;
        }
    for (int i = 0; i < p->n_notes;)
        if (p->notes[i].step < step) {
            free(p->notes[i].msg);
            p->notes[i] = p->notes[--p->n_notes];
        } else {
            i++;
        }
}

static tg_status take_arrival(peer_transport *p, const tg_rv_key *k, tg_tensor **out)
{
    char key[512];
    tg__rv_key_str(k, key, sizeof key);
    forget_before(p, k->step);
    if (p->broken)
        return tg__error(TG_ERR_IO, "recv '%s' from rank %d: %s", key, p->rank, p->broken);
    for (int i = 0; i < p->n_notes; i++)
        if (p->notes[i].step == k->step)
            return tg__error(p->notes[i].st, "%s", p->notes[i].msg ? p->notes[i].msg : "");
    for (int i = 0; i < p->n_in; i++)
        if (p->in[i].step == k->step && !strcmp(p->in[i].key, key)) {
            *out = p->in[i].t;
            free(p->in[i].key);
            p->in[i] = p->in[--p->n_in];
            break;
        }
    return TG_OK;
}

static tg_status t_try_recv(tg_transport *self, const tg_rv_key *k, tg_tensor **out)
{
    peer_transport *p = (peer_transport *)self;
    *out = NULL;
    char what[64];
    snprintf(what, sizeof what, "recv from rank %d", p->rank);
    if (!tg__dist_ready(what))
        return tg_last_status();
    pthread_mutex_lock(&p->mu);
    tg_status st = drain(p);
    if (st == TG_OK)
        st = take_arrival(p, k, out);
    pthread_mutex_unlock(&p->mu);
    return st;
}

static void t_wait(tg_transport *self, int64_t timeout_ns)
{
    (void)self;
    struct timespec ts = {0, timeout_ns < 100000 ? (long)timeout_ns : 100000};
    nanosleep(&ts, NULL);
}

/* ---- up and down ----------------------------------------------------------------------- */
void tg__dist_transports_start(void)
{
    n_peers = tg_dist_world_size();
    peers = calloc((size_t)n_peers, sizeof *peers);
    tg__rv_set_rank(tg_dist_rank());
    for (int r = 0; peers && r < n_peers; r++) {
        peer_transport *p = &peers[r];
        p->base = (tg_transport){t_send, t_try_recv, t_wait, t_abort};
        p->rank = r;
        pthread_mutex_init(&p->mu, NULL);
        if (r != tg_dist_rank())
            tg__rv_set_remote(r, &p->base);
    }
}

static void peer_free(peer_transport *p)
{
    forget_before(p, INT64_MAX);
    for (int i = 0; i < p->n_out; i++)
        free(p->out[i].buf);
    free(p->in);
    free(p->notes);
    free(p->out);
    free(p->broken);
    pthread_mutex_destroy(&p->mu);
}

/* every rank drains what the others send until all have seen their own
 * sends complete (a barrier entered once they have): no send is left
 * waiting for a receiver that has stopped listening */
static void finish_sends(void)
{
    MPI_Request barrier = MPI_REQUEST_NULL;
    bool entered = false;
    for (;;) {
        int pending = 0, done = 0;
        for (int r = 0; r < n_peers; r++) {
            pthread_mutex_lock(&peers[r].mu);
            if (r != tg_dist_rank())
                drain(&peers[r]);
            reap(&peers[r]);
            pending += peers[r].n_out;
            pthread_mutex_unlock(&peers[r].mu);
        }
        if (!entered && pending == 0) {
            entered = MPI_Ibarrier(tg__dist_rv_comm(), &barrier) == MPI_SUCCESS;
            if (!entered)
                return;
        }
        if (entered && (MPI_Test(&barrier, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done))
            return;
        if (!tg__dist_ready("stopping the transfers")) {
            tg_clear_error();
            return; /* a lost peer: the world is broken, buffers stay with MPI */
        }
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

void tg__dist_transports_stop(void)
{
    if (!peers)
        return;
    for (int r = 0; r < n_peers; r++)
        tg__rv_set_remote(r, NULL);
    bool broken = !tg__dist_ready("stopping the transfers");
    tg_clear_error();
    if (!broken)
        finish_sends();
    for (int r = 0; r < n_peers && !broken; r++)
        peer_free(&peers[r]);
    if (!broken)
        free(peers);
    peers = NULL;
    n_peers = 0;
    tg__rv_set_rank(0);
}
#endif
