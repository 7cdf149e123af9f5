/* tensorgraph across processes: the MPI world (init, rank, size),
 * collectives on tensors (allreduce, broadcast, barrier) and the
 * data-parallel gradient reducer. See docs/DISTRIBUTED.md.
 *
 * Built only when CMake found MPI (TG_WITH_MPI); otherwise every call
 * that would communicate fails with TG_ERR_UNSUPPORTED, "tensorgraph was
 * built without MPI", and tg_dist_built() is false.
 *
 * A program started without mpirun is one process: rank 0 of a world of
 * 1 (MPI is not even initialised), where every collective is the
 * identity. Under mpirun every wait is non-blocking underneath and polled:
 * each rank's heartbeat thread watches its peers (a process gone on this
 * host is seen at once, any peer silent for tg_dist_set_timeout's seconds
 * is lost), and a lost peer fails the waiting call with an error naming
 * the lost rank, never a hang. After that the world is broken: every
 * later call fails with the same message. When mpirun itself ends the job
 * (SIGTERM, as OpenMPI does when a rank dies), each rank prints which
 * peers it found gone before it dies. */
#ifndef TG_DIST_H
#define TG_DIST_H

#include "tg/autograd.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

typedef enum tg_reduce_op {
    TG_REDUCE_SUM = 0,
    TG_REDUCE_MEAN, /* the sum divided by the world size */
    TG_REDUCE_MAX,
    TG_REDUCE_MIN
} tg_reduce_op;

/* was this library built with MPI? */
bool tg_dist_built(void);
/* joins the world (idempotent): under mpirun MPI with thread support and
 * errors returned, never aborting; without mpirun a world of one */
tg_status tg_dist_init(void);
/* leaves it: a barrier (polled), the heartbeats stopped, MPI finalized.
 * After a lost peer MPI is left alone (finalizing would wait for the dead
 * rank): the process may then only exit. */
tg_status tg_dist_finalize(void);
bool tg_dist_is_initialized(void);
int tg_dist_rank(void);       /* 0 before init */
int tg_dist_world_size(void); /* 1 before init */
/* seconds a peer may stay silent before it counts as lost (default 5,
 * or TG_DIST_TIMEOUT from the environment); > 0 */
tg_status tg_dist_set_timeout(double seconds);

/* in place on a contiguous float32, float64, int32 or int64 tensor (MEAN:
 * floats only); every rank passes the same dtype and shape */
tg_status tg_dist_allreduce(tg_tensor *t, tg_reduce_op op);
/* t's data from rank root to every rank, in place (same dtype and shape) */
tg_status tg_dist_broadcast(tg_tensor *t, int root);
tg_status tg_dist_barrier(void);

/* point to point (model parallel): t's data to rank dst, or into t (the
 * sender's dtype and element count, contiguous) from rank src; tag in
 * [0, 32767]; both wait, polled, until their side is done */
tg_status tg_dist_send(const tg_tensor *t, int dst, int tag);
tg_status tg_dist_recv(tg_tensor *t, int src, int tag);

/* ---- master and workers (graphs over processes) ------------------------------
 * Rank 0 is the master: it runs the program, and its sessions may place
 * nodes on devices of other ranks ("/rank:1/cpu:0", tg/device.h). Such a
 * run ships each partition to its rank serialized (once per signature),
 * then runs it there every step; values cross between partitions by
 * Send/Recv over MPI. Every other rank calls tg_dist_serve after
 * tg_dist_init: it runs what the master sends until the master calls
 * tg_dist_finalize (then it returns TG_OK) or is lost (an error naming
 * it). A worker may hold several devices (their partitions of a step run
 * at once there). Variables placed on a worker live there, across plans
 * and sessions, until tg_dist_finalize (their tensors here are kept alive
 * as long); read them by fetching them, or tg_session_pull_variables of
 * tg/device.h; writes to them here reach the worker before the next run
 * that uses them. Fails on rank 0, and without MPI. */
tg_status tg_dist_serve(void);

/* ---- the data-parallel gradient reducer (PyTorch DDP's) ------------------
 * Averages the gradients of params across ranks in buckets of about
 * bucket_bytes (params taken last to first, the order backward finishes
 * them). Armed with tg_dist_reducer_arm, the next backward on this thread
 * tells it each parameter whose gradient is final (tg_set_backward_hooks):
 * a bucket whose parameters are all final starts its allreduce at once,
 * while backward goes on; at the end of backward the rest start, all are
 * waited for and each parameter's grad holds the mean over ranks (or the
 * sum with TG_REDUCE_SUM); the reducer disarms itself. A parameter that
 * got no gradient contributes zeros. Float32 parameters only. */
typedef struct tg_dist_reducer tg_dist_reducer;
tg_dist_reducer *tg_dist_reducer_new(int n, tg_tensor *const *params, size_t bucket_bytes,
                                     tg_reduce_op op);
tg_status tg_dist_reducer_arm(tg_dist_reducer *r);
/* what the end of an armed backward does, for a rank that runs no
 * backward this step (an empty shard): its parameters contribute their
 * current grad, or zeros, and get the result; disarms */
tg_status tg_dist_reducer_finish(tg_dist_reducer *r);
/* buckets (number, and how many of the last backward's started before
 * backward ended): for tests and reports */
int tg_dist_reducer_buckets(const tg_dist_reducer *r, int *started_early);
void tg_dist_reducer_free(tg_dist_reducer *r);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
