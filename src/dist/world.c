/* The MPI world (see world.h and tg/dist.h). Under mpirun: MPI with
 * MPI_THREAD_MULTIPLE (the heartbeat thread communicates while the caller
 * does), errors returned instead of aborting, four duplicates of the world
 * communicator (collectives; heartbeats; Send/Recv transfers; the
 * master's commands to workers) so their messages never meet.
 * Without mpirun: a world of one and no MPI at all. */
#ifdef TG_HAVE_MPI
#include "dist/world.h"
#include "core/status_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HEARTBEAT_TAG 1
#define HEARTBEAT_NS 100000000LL /* a heartbeat to each peer every 0.1 s */

enum { LOST_GONE = 1, LOST_SILENT = 2 };

/* where a peer runs: a process on this host (same host name and pid
 * namespace) can be checked directly */
typedef struct peer {
    int pid;
    bool local;
    _Atomic int64_t last_heard_ns;
} peer;

static struct {
    bool initialized, mpi; /* mpi: MPI_Init was ours and MPI runs */
    int rank, size;
    MPI_Comm coll, beat, rv, ctl;
    double timeout;
    peer *peers;
    pthread_t thread;
    bool thread_running;
    atomic_bool stop;
    atomic_int lost, lost_why; /* the first lost rank (-1: none) and why */
    double lost_after;         /* seconds of silence when it was declared */
    struct sigaction old_term;
    bool term_installed;
} W = {.rank = 0, .size = 1, .timeout = 5.0, .lost = -1};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- is a peer's process gone? (async-signal-safe: the SIGTERM handler
 * asks too) ------------------------------------------------------------ */
static bool process_gone(int pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    /* a zombie (killed, not yet reaped by mpirun) is gone as well */
    char path[64] = "/proc/", stat[128];
    int n = 6;
    char digits[16];
    int d = 0;
    for (int v = pid; v > 0 && d < 15; v /= 10)
        digits[d++] = (char)('0' + v % 10);
    while (d > 0)
        path[n++] = digits[--d];
    memcpy(path + n, "/stat", 6);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (got <= 0)
        return false;
    stat[got] = 0;
    const char *paren = strrchr(stat, ')');
    return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static void declare_lost(int rank, int why, double silent_s)
{
    int none = -1;
    if (atomic_compare_exchange_strong(&W.lost, &none, rank)) {
        W.lost_after = silent_s;
        atomic_store(&W.lost_why, why);
    }
}

/* ---- the heartbeat thread -------------------------------------------------- */
typedef struct beats {
    MPI_Request *send, *recv;
    char *in, out;
} beats;

static void post_recv(beats *b, int p)
{
    if (MPI_Irecv(&b->in[p], 1, MPI_CHAR, p, HEARTBEAT_TAG, W.beat, &b->recv[p]) != MPI_SUCCESS)
        b->recv[p] = MPI_REQUEST_NULL;
}

/* one round: hear from, beat to and check each peer */
static void beat_round(beats *b)
{
    int64_t now = now_ns();
    for (int p = 0; p < W.size; p++) {
        if (p == W.rank)
            continue;
        int done = 0;
        if (b->recv[p] != MPI_REQUEST_NULL &&
            MPI_Test(&b->recv[p], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
            atomic_store(&W.peers[p].last_heard_ns, now);
            post_recv(b, p);
        }
        done = b->send[p] == MPI_REQUEST_NULL;
        if (!done)
            MPI_Test(&b->send[p], &done, MPI_STATUS_IGNORE);
        if (done)
            MPI_Isend(&b->out, 1, MPI_CHAR, p, HEARTBEAT_TAG, W.beat, &b->send[p]);
        double silent = 1e-9 * (double)(now - atomic_load(&W.peers[p].last_heard_ns));
        if (W.peers[p].local && process_gone(W.peers[p].pid))
            declare_lost(p, LOST_GONE, silent);
        else if (silent > W.timeout)
            declare_lost(p, LOST_SILENT, silent);
    }
}

/* after a normal finish only: every peer is alive and past its last
 * heartbeat, so cancelling our receives and freeing sends is safe */
static void beats_close(beats *b)
{
    for (int p = 0; p < W.size; p++) {
        if (b->recv[p] != MPI_REQUEST_NULL) {
            MPI_Cancel(&b->recv[p]);
            MPI_Wait(&b->recv[p], MPI_STATUS_IGNORE);
        }
        if (b->send[p] != MPI_REQUEST_NULL)
            MPI_Request_free(&b->send[p]);
    }
}

static void *heartbeat_main(void *arg)
{
    beats *b = arg;
    for (int p = 0; p < W.size; p++) {
        b->send[p] = b->recv[p] = MPI_REQUEST_NULL;
        if (p != W.rank)
            post_recv(b, p);
    }
    while (!atomic_load(&W.stop) && atomic_load(&W.lost) < 0) {
        beat_round(b);
        struct timespec pause = {0, HEARTBEAT_NS};
        nanosleep(&pause, NULL);
    }
    /* a lost peer leaves MPI unusable (requests to it never finish) */
    if (atomic_load(&W.lost) < 0)
        beats_close(b);
    return NULL;
}

static beats the_beats;

static tg_status start_heartbeats(void)
{
    beats *b = &the_beats;
    b->send = calloc((size_t)W.size, sizeof *b->send);
    b->recv = calloc((size_t)W.size, sizeof *b->recv);
    b->in = calloc((size_t)W.size, 1);
    int64_t now = now_ns();
    for (int p = 0; p < W.size; p++)
        atomic_store(&W.peers[p].last_heard_ns, now);
    atomic_store(&W.stop, false);
    if (!b->send || !b->recv || !b->in || pthread_create(&W.thread, NULL, heartbeat_main, b)) {
        free(b->send);
        free(b->recv);
        free(b->in);
        return tg__error(TG_ERR_NOMEM, "tg_dist_init: cannot start the heartbeat thread");
    }
    W.thread_running = true;
    return TG_OK;
}

static void stop_heartbeats(void)
{
    if (!W.thread_running)
        return;
    atomic_store(&W.stop, true);
    pthread_join(W.thread, NULL);
    W.thread_running = false;
    free(the_beats.send);
    free(the_beats.recv);
    free(the_beats.in);
}

/* ---- SIGTERM from the launcher ---------------------------------------------
 * OpenMPI's mpirun ends the whole job when one rank dies. Before this rank
 * goes, it says which peers it finds gone (async-signal-safe code only). */
static size_t put_str(char *buf, size_t n, const char *s)
{
    while (*s && n < 255)
        buf[n++] = *s++;
    return n;
}

static size_t put_int(char *buf, size_t n, int v)
{
    char d[16];
    int k = 0;
    do {
        d[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0 && k < 15);
    while (k > 0 && n < 255)
        buf[n++] = d[--k];
    return n;
}

static void on_sigterm(int sig)
{
    char buf[256];
    size_t n = put_str(buf, 0, "tensorgraph: rank ");
    n = put_int(buf, n, W.rank);
    n = put_str(buf, n, ": ended by the MPI launcher (a peer died?); lost ranks:");
    int found = 0;
    for (int p = 0; p < W.size; p++)
        if (p != W.rank && (p == atomic_load(&W.lost) ||
                            (W.peers[p].local && process_gone(W.peers[p].pid)))) {
            n = put_str(buf, n, " ");
            n = put_int(buf, n, p);
            found++;
        }
    n = put_str(buf, n, found ? "\n" : " none seen from this host\n");
    ssize_t w = write(2, buf, n);
    (void)w;
    sigaction(sig, &W.old_term, NULL);
    raise(sig);
}

static void install_sigterm(void)
{
    struct sigaction cur;
    if (sigaction(SIGTERM, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL)
        return; /* the program handles SIGTERM itself */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigterm;
    sigemptyset(&sa.sa_mask);
    W.term_installed = sigaction(SIGTERM, &sa, &W.old_term) == 0;
}

/* ---- init and finalize --------------------------------------------------------- */
static bool under_launcher(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

tg_status tg__dist_mpi_error(int code, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return tg__error(TG_ERR_IO, "%s: rank %d: MPI error: %s", what, W.rank, msg);
}

/* who runs where: (pid, host name, pid namespace) of every rank */
typedef struct where {
    int pid;
    unsigned long long pidns;
    char host[64];
} where;

static tg_status learn_peers(void)
{
    where me = {.pid = (int)getpid()}, *all = calloc((size_t)W.size, sizeof *all);
    W.peers = calloc((size_t)W.size, sizeof *W.peers);
    if (!all || !W.peers) {
        free(all);
        return tg__error(TG_ERR_NOMEM, "tg_dist_init: out of memory");
    }
    gethostname(me.host, sizeof me.host - 1);
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) == 0)
        me.pidns = (unsigned long long)st.st_ino;
    int e = MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, W.coll);
    for (int p = 0; e == MPI_SUCCESS && p < W.size; p++) {
        W.peers[p].pid = all[p].pid;
        W.peers[p].local = p != W.rank && all[p].pidns == me.pidns &&
                           !strncmp(all[p].host, me.host, sizeof me.host);
    }
    free(all);
    return e == MPI_SUCCESS ? TG_OK : tg__dist_mpi_error(e, "tg_dist_init");
}

static tg_status mpi_init(void)
{
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return tg__error(TG_ERR_IO, "tg_dist_init: MPI_Init_thread failed");
    if (inited)
        MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE)
        return tg__error(TG_ERR_UNSUPPORTED,
                         "tg_dist_init: this MPI gives thread level %d, tensorgraph needs "
                         "MPI_THREAD_MULTIPLE (%d)", provided, MPI_THREAD_MULTIPLE);
    W.mpi = !inited;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &W.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &W.size);
    MPI_Comm *comms[4] = {&W.coll, &W.beat, &W.rv, &W.ctl};
    for (int i = 0; i < 4; i++) {
        if (MPI_Comm_dup(MPI_COMM_WORLD, comms[i]) != MPI_SUCCESS)
            return tg__error(TG_ERR_IO, "tg_dist_init: MPI_Comm_dup failed");
        MPI_Comm_set_errhandler(*comms[i], MPI_ERRORS_RETURN);
    }
    return TG_OK;
}

bool tg_dist_built(void)
{
    return true;
}

tg_status tg_dist_init(void)
{
    if (W.initialized)
        return TG_OK;
    const char *env = getenv("TG_DIST_TIMEOUT");
    if (env && atof(env) > 0)
        W.timeout = atof(env);
    if (!under_launcher()) { /* a world of one: nothing to talk to */
        W.rank = 0;
        W.size = 1;
        W.initialized = true;
        return TG_OK;
    }
    tg_status s = mpi_init();
    if (s == TG_OK)
        s = learn_peers();
    if (s == TG_OK && W.size > 1)
        s = start_heartbeats();
    if (s != TG_OK)
        return s;
    if (W.size > 1)
        install_sigterm();
    W.initialized = true;
    if (W.size > 1)
        tg__dist_graphs_start();
    return TG_OK;
}

tg_status tg_dist_finalize(void)
{
    if (!W.initialized)
        return TG_OK;
    tg_status s = TG_OK;
    if (W.size > 1)
        tg__dist_graphs_stop(); /* the master releases its workers */
    if (W.size > 1 && atomic_load(&W.lost) < 0)
        s = tg_dist_barrier(); /* nobody still sends to us */
    stop_heartbeats();
    if (W.term_installed)
        sigaction(SIGTERM, &W.old_term, NULL);
    W.term_installed = false;
    bool broken = atomic_load(&W.lost) >= 0;
    if (W.mpi && !broken) {
        MPI_Comm_free(&W.coll);
        MPI_Comm_free(&W.beat);
        MPI_Comm_free(&W.rv);
        MPI_Comm_free(&W.ctl);
        MPI_Finalize();
    }
    if (!broken) { /* a broken world stays broken: later calls say why */
        free(W.peers);
        W.peers = NULL;
        W.initialized = false;
        W.rank = 0;
        W.size = 1;
    }
    return s;
}

bool tg_dist_is_initialized(void)
{
    return W.initialized;
}

int tg_dist_rank(void)
{
    return W.rank;
}

int tg_dist_world_size(void)
{
    return W.size;
}

tg_status tg_dist_set_timeout(double seconds)
{
    if (!(seconds > 0) || seconds > 1e6)
        return tg__error(TG_ERR_ARG, "tg_dist_set_timeout: expected seconds in (0, 1e6], got %g",
                         seconds);
    W.timeout = seconds;
    return TG_OK;
}

/* ---- the polled wait ---------------------------------------------------------- */
static tg_status lost_error(const char *what)
{
    int lost = atomic_load(&W.lost);
    if (atomic_load(&W.lost_why) == LOST_GONE)
        return tg__error(TG_ERR_IO, "%s: rank %d lost rank %d: its process is gone "
                                    "(killed or crashed)", what, W.rank, lost);
    return tg__error(TG_ERR_IO, "%s: rank %d lost rank %d: no heartbeat for %.1f s "
                                "(hung, or its host unreachable; TG_DIST_TIMEOUT=%g)",
                     what, W.rank, lost, W.lost_after, W.timeout);
}

bool tg__dist_ready(const char *fn)
{
    if (!W.initialized) {
        tg__error(TG_ERR_ARG, "%s: the distributed world is not initialised "
                              "(call tg_dist_init first)", fn);
        return false;
    }
    if (atomic_load(&W.lost) >= 0) {
        lost_error(fn);
        return false;
    }
    return true;
}

bool tg__dist_multi(void)
{
    return W.size > 1;
}

MPI_Comm tg__dist_comm(void)
{
    return W.coll;
}

MPI_Comm tg__dist_rv_comm(void)
{
    return W.rv;
}

MPI_Comm tg__dist_ctl_comm(void)
{
    return W.ctl;
}

/* spin a little, then yield the core to the other ranks (they may share
 * this machine's cores) with pauses up to 0.2 ms */
static void pause_more(int64_t *pause_ns)
{
    *pause_ns = *pause_ns < 200000 ? *pause_ns + 2000 : *pause_ns;
    if (*pause_ns > 20000) {
        struct timespec ts = {0, *pause_ns};
        nanosleep(&ts, NULL);
    }
}

tg_status tg__dist_wait(MPI_Request *req, const char *what)
{
    int64_t pause_ns = 0;
    for (;;) {
        int done = 0;
        int e = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS)
            return tg__dist_mpi_error(e, what);
        if (done)
            return TG_OK;
        if (atomic_load(&W.lost) >= 0)
            return lost_error(what); /* req stays pending: the world is broken */
        pause_more(&pause_ns);
    }
}

tg_status tg__dist_try_message(int src, int tag, MPI_Comm comm, char **buf, int *len,
                               int *got_tag, const char *what)
{
    int flag = 0;
    MPI_Message m;
    MPI_Status st;
    *buf = NULL;
    *len = 0;
    int e = MPI_Improbe(src, tag, comm, &flag, &m, &st);
    if (e != MPI_SUCCESS)
        return tg__dist_mpi_error(e, what);
    if (!flag)
        return TG_OK;
    MPI_Get_count(&st, MPI_BYTE, len);
    if (got_tag)
        *got_tag = st.MPI_TAG;
    char *b = malloc((size_t)*len + 1);
    e = MPI_Mrecv(b ? b : (char[1]){0}, b ? *len : 0, MPI_BYTE, &m, MPI_STATUS_IGNORE);
    if (!b)
        return tg__error(TG_ERR_NOMEM, "%s: out of memory for a message of %d bytes", what,
                         *len);
    if (e != MPI_SUCCESS) {
        free(b);
        return tg__dist_mpi_error(e, what);
    }
    *buf = b;
    return TG_OK;
}

tg_status tg__dist_recv_message(int src, int tag, MPI_Comm comm, char **buf, int *len,
                                const char *what)
{
    int64_t pause_ns = 0;
    for (;;) {
        tg_status st = tg__dist_try_message(src, tag, comm, buf, len, NULL, what);
        if (st != TG_OK || *buf)
            return st;
        if (atomic_load(&W.lost) >= 0)
            return lost_error(what);
        pause_more(&pause_ns);
    }
}
#endif
