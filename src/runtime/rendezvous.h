/* The rendezvous: where a Send leaves a value and the matching Recv picks
 * it up. A transfer is named by its key (the value in the unpartitioned
 * graph, the source and destination devices, the step). The transport is
 * an interface: each run has an in-process table (rendezvous.c) for
 * devices of this process, and the MPI layer may register a transport per
 * peer rank for devices that live in another process ("/rank:1/cpu:0");
 * Sends go to the destination's rank, Recvs ask the source's. */
#ifndef TG_RENDEZVOUS_H
#define TG_RENDEZVOUS_H

#include "core/tensor_impl.h"

typedef struct tg_rv_key {
    /* the value in the graph as built ("node:i"), or "^node" for a
     * control token (an edge that carries only "node has run") */
    const char *name;
    tg_device src, dst;
    int64_t step; /* the session's run number: the same on every rank */
} tg_rv_key;

/* "name;src;dst" into buf (the string a transport may hash into a tag) */
const char *tg__rv_key_str(const tg_rv_key *k, char *buf, size_t len);

typedef struct tg_transport tg_transport;
struct tg_transport {
    /* hands t over (a reference the receiver takes: the sender never
     * writes t again); returns without waiting for the receiver */
    tg_status (*send)(tg_transport *self, const tg_rv_key *k, tg_tensor *t);
    /* *out: the tensor if it has arrived (a new reference), else NULL with
     * TG_OK; the abort's error once the step was aborted */
    tg_status (*try_recv)(tg_transport *self, const tg_rv_key *k, tg_tensor **out);
    /* returns when a transfer may have arrived, the step was aborted, or
     * after timeout_ns */
    void (*wait)(tg_transport *self, int64_t timeout_ns);
    /* ends step `step` with an error there too: its waiters wake, its
     * receives fail with it */
    void (*abort)(tg_transport *self, int64_t step, tg_status st, const char *msg);
};

/* ---- one run's rendezvous -------------------------------------------------------- */
typedef struct tg_rendezvous tg_rendezvous;
tg_rendezvous *tg__rendezvous_new(int64_t step);
void tg__rendezvous_free(tg_rendezvous *rv);
tg_status tg__rv_send(tg_rendezvous *rv, const tg_rv_key *k, tg_tensor *t);
tg_status tg__rv_try_recv(tg_rendezvous *rv, const tg_rv_key *k, tg_tensor **out);
void tg__rv_wait(tg_rendezvous *rv, int64_t timeout_ns);
/* the first abort wins: its status and message are the step's error */
void tg__rv_abort(tg_rendezvous *rv, tg_status st, const char *msg);
/* TG_OK, or the abort's status (message copied into msg) */
tg_status tg__rv_aborted(tg_rendezvous *rv, char *msg, size_t len);

/* ---- transports to other processes (the MPI layer) ---------------------------------- */
/* this process's rank (0 unless the MPI layer set it) */
int tg__rv_rank(void);
void tg__rv_set_rank(int rank);
/* the transport for devices of `rank` (NULL removes it); not owned */
tg_status tg__rv_set_remote(int rank, tg_transport *t);

/* ---- partitions that run in other processes (the MPI layer's master) -------------------
 * A partitioned run whose partition lives on a device of another rank
 * hands it to the runner the MPI layer registered: `load` ships the
 * partition (once per cached plan, before its first run) as plan `uid`,
 * `run` has that rank run it for `step` with the partition's feeds and
 * waits for its fetches (q->n_fetches new tensors) or its error (the run
 * has n_on_rank partitions on that rank: they share the step's
 * rendezvous there; with trace not NULL the rank traces the run and its
 * spans come back in it: i64 offset of the rank's clock to this one's,
 * then the records of tg__session_trace_export), and `drop` lets the
 * rank forget the plan. A variable
 * of a shipped partition that changed here since (an eager write, a
 * checkpoint loaded) is sent to the worker before the partition's next
 * run; `synced` says the copy here was just pulled from the workers. */
struct tg_partition; /* runtime/partition.h */
struct tg_strbuf;    /* util/strbuf.h */
typedef struct tg_remote_runner {
    tg_status (*load)(const struct tg_partition *q, int64_t uid);
    tg_status (*run)(const struct tg_partition *q, int64_t uid, int64_t step, int n_on_rank,
                     tg_tensor *const *feeds, tg_tensor **results, struct tg_strbuf *trace);
    void (*drop)(const struct tg_partition *q, int64_t uid);
    /* variable tensor t here was made equal to the workers' copies */
    void (*synced)(const tg_tensor *t);
} tg_remote_runner;
void tg__set_remote_runner(const tg_remote_runner *r); /* NULL: none */
const tg_remote_runner *tg__remote_runner(void);

/* ---- what Send and Recv kernels see: set by the device executor ---------------------- */
typedef struct tg_rv_context {
    tg_rendezvous *rv;
    int64_t step;
    tg_device device; /* the device whose partition runs on this thread */
    int tid;          /* its track in traces */
    /* set by the executor before it runs a Recv whose value it took from
     * the rendezvous already (the Recv kernel then does not wait) */
    tg_tensor *arrived;
} tg_rv_context;
/* the context of this thread, writable by the executor */
tg_rv_context *tg__rv_context_mut(void);
void tg__rv_context_set(const tg_rv_context *c); /* NULL clears */
const tg_rv_context *tg__rv_context(void);       /* NULL outside a partitioned run */

/* the executor's look at a Recv node (attr: its decoded attributes):
 * *out the value when it has arrived (sendrecv.c) */
tg_status tg__recv_try(const void *attr, tg_tensor **out);

#endif
