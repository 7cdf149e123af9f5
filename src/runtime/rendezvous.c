/* The in-process rendezvous (one table per run, a mutex and a condition
 * variable) and the routing of transfers to other processes' transports. */
#include "runtime/rendezvous.h"
#include "util/grow.h"
#include "tg/device.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RANKS 4096

typedef struct entry {
    char *key; /* tg__rv_key_str */
    tg_tensor *t;
} entry;

struct tg_rendezvous {
    int64_t step;
    pthread_mutex_t mu;
    pthread_cond_t arrived;
    entry *table;
    int n, cap;
    tg_status aborted;
    char msg[1024];
};

static tg_transport *remotes[MAX_RANKS];
static int process_rank;

int tg__rv_rank(void) { return process_rank; }
void tg__rv_set_rank(int rank) { process_rank = rank; }

tg_status tg__rv_set_remote(int rank, tg_transport *t)
{
    if (rank < 0 || rank >= MAX_RANKS)
        return tg__error(TG_ERR_ARG, "rendezvous: rank %d out of range (0..%d)", rank,
                         MAX_RANKS - 1);
    remotes[rank] = t;
    return TG_OK;
}

static const tg_remote_runner *runner;
void tg__set_remote_runner(const tg_remote_runner *r) { runner = r; }
const tg_remote_runner *tg__remote_runner(void) { return runner; }

const char *tg__rv_key_str(const tg_rv_key *k, char *buf, size_t len)
{
    char a[48], b[48];
    snprintf(buf, len, "%s;%s;%s", k->name, tg_device_str(k->src, a, sizeof a),
             tg_device_str(k->dst, b, sizeof b));
    return buf;
}

tg_rendezvous *tg__rendezvous_new(int64_t step)
{
    tg_rendezvous *rv = calloc(1, sizeof *rv);
    if (!rv)
        return tg__error_null(TG_ERR_NOMEM, "rendezvous: out of memory");
    rv->step = step;
    pthread_mutex_init(&rv->mu, NULL);
    pthread_cond_init(&rv->arrived, NULL);
    return rv;
}

void tg__rendezvous_free(tg_rendezvous *rv)
{
    if (!rv)
        return;
    for (int i = 0; i < rv->n; i++) { /* sent but never received (an aborted step) */
        free(rv->table[i].key);
        tg_release(rv->table[i].t);
    }
    free(rv->table);
    pthread_mutex_destroy(&rv->mu);
    pthread_cond_destroy(&rv->arrived);
    free(rv);
}

/* the transport of another process for a transfer with `peer` (the
 * destination's rank for a send, the source's for a receive), NULL for
 * this process; an error when none is registered */
static tg_status route(int rank, tg_transport **t)
{
    *t = NULL;
    if (rank == process_rank)
        return TG_OK;
    if (rank < 0 || rank >= MAX_RANKS || !remotes[rank])
        return tg__error(TG_ERR_UNSUPPORTED, "rendezvous: no transport to rank %d (devices "
                         "of another process need the MPI layer: mpirun and "
                         "tensorgraph's distributed runtime)", rank);
    *t = remotes[rank];
    return TG_OK;
}

tg_status tg__rv_send(tg_rendezvous *rv, const tg_rv_key *k, tg_tensor *t)
{
    tg_transport *tr;
    if (route(k->dst.rank, &tr) != TG_OK) {
        tg_release(t);
        return tg_last_status();
    }
    if (tr)
        return tr->send(tr, k, t);
    char key[512];
    tg__rv_key_str(k, key, sizeof key);
    pthread_mutex_lock(&rv->mu);
    tg_status st = TG_OK;
    char *copy = strdup(key);
    if (!copy || !TG_GROW(rv->table, rv->cap, rv->n + 1)) {
        free(copy);
        tg_release(t);
        st = tg__error(TG_ERR_NOMEM, "rendezvous: out of memory sending '%s'", key);
    } else {
        rv->table[rv->n++] = (entry){copy, t};
        pthread_cond_broadcast(&rv->arrived);
    }
    pthread_mutex_unlock(&rv->mu);
    return st;
}

static tg_status abort_error(tg_rendezvous *rv)
{
    return tg__error(rv->aborted, "%s", rv->msg);
}

tg_status tg__rv_try_recv(tg_rendezvous *rv, const tg_rv_key *k, tg_tensor **out)
{
    *out = NULL;
    tg_transport *tr;
    if (route(k->src.rank, &tr) != TG_OK)
        return tg_last_status();
    if (tr) { /* this step may have failed here, with nothing to come from there */
        char msg[1024];
        tg_status st = tg__rv_aborted(rv, msg, sizeof msg);
        return st != TG_OK ? tg__error(st, "%s", msg) : tr->try_recv(tr, k, out);
    }
    char key[512];
    tg__rv_key_str(k, key, sizeof key);
    pthread_mutex_lock(&rv->mu);
    tg_status st = TG_OK;
    if (rv->aborted != TG_OK) {
        st = abort_error(rv);
    } else {
        for (int i = 0; i < rv->n; i++)
            if (!strcmp(rv->table[i].key, key)) {
                *out = rv->table[i].t;
                free(rv->table[i].key);
                rv->table[i] = rv->table[--rv->n];
                break;
            }
    }
    pthread_mutex_unlock(&rv->mu);
    return st;
}

void tg__rv_wait(tg_rendezvous *rv, int64_t timeout_ns)
{
    bool remote = false;
    for (int r = 0; r < MAX_RANKS && !remote; r++)
        remote = remotes[r] != NULL;
    if (remote && timeout_ns > 200000)
        timeout_ns = 200000; /* other processes' arrivals are polled */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + timeout_ns;
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&rv->mu);
    if (rv->aborted == TG_OK)
        pthread_cond_timedwait(&rv->arrived, &rv->mu, &ts);
    pthread_mutex_unlock(&rv->mu);
}

void tg__rv_abort(tg_rendezvous *rv, tg_status st, const char *msg)
{
    pthread_mutex_lock(&rv->mu);
    bool first = rv->aborted == TG_OK;
    if (first) {
        rv->aborted = st == TG_OK ? TG_ERR_INTERNAL : st;
        snprintf(rv->msg, sizeof rv->msg, "%s", msg ? msg : "");
    }
    pthread_cond_broadcast(&rv->arrived);
    pthread_mutex_unlock(&rv->mu);
    for (int r = 0; first && r < MAX_RANKS; r++)
        if (remotes[r])
            remotes[r]->abort(remotes[r], rv->step, st, msg);
}

tg_status tg__rv_aborted(tg_rendezvous *rv, char *msg, size_t len)
{
    pthread_mutex_lock(&rv->mu);
    tg_status st = rv->aborted;
    if (st != TG_OK && msg)
        snprintf(msg, len, "%s", rv->msg);
    pthread_mutex_unlock(&rv->mu);
    return st;
}

static _Thread_local tg_rv_context context;
static _Thread_local bool has_context;

void tg__rv_context_set(const tg_rv_context *c)
{
    has_context = c != NULL;
    if (c)
        context = *c;
}

const tg_rv_context *tg__rv_context(void) { return has_context ? &context : NULL; }

tg_rv_context *tg__rv_context_mut(void) { return has_context ? &context : NULL; }
