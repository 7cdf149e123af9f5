/* The MPI world behind tg/dist.h (world.c): the communicators, the
 * heartbeat thread that watches the peers, and the polled wait every
 * communication goes through, so that a lost peer is an error naming it
 * instead of a hang. Compiled only with MPI (TG_HAVE_MPI). */
#ifndef TG_DIST_WORLD_H
#define TG_DIST_WORLD_H

#include "tg/dist.h"

#include <mpi.h>

/* true when the world is up and no peer was lost; else false with an
 * error naming fn (not initialised, or the lost rank) */
bool tg__dist_ready(const char *fn);
/* true when there is a real MPI world (more than one process) */
bool tg__dist_multi(void);
/* the communicator collectives run on */
MPI_Comm tg__dist_comm(void);
/* the communicator of Send/Recv transfers between partitions (transport.c) */
MPI_Comm tg__dist_rv_comm(void);
/* the communicator of the master's commands and the workers' answers */
MPI_Comm tg__dist_ctl_comm(void);

/* ---- graphs over processes (transport.c, master.c, worker.c) ----------------------- */
/* a world of several processes is up: the rendezvous gets a transport to
 * every other rank, and rank 0 the remote runner (master.c) */
void tg__dist_graphs_start(void);
/* before the world ends: the master tells the workers it used to stop;
 * transports unregistered, their pending sends waited for */
void tg__dist_graphs_stop(void);
/* transport.c: the transports up / down (pending sends finished) */
void tg__dist_transports_start(void);
void tg__dist_transports_stop(void);
/* master.c: rank 0's remote runner up; down: STOP to the workers it used */
void tg__dist_master_start(void);
void tg__dist_master_stop(void);
/* waits for req, polling: MPI_Test, the heartbeat thread's verdict, and
 * a growing pause; an MPI error or a lost peer fails with a message
 * naming `what` (the caller's operation) and the lost rank */
tg_status tg__dist_wait(MPI_Request *req, const char *what);
/* a message from src with tag on comm (MPI_ANY_TAG: any, *got_tag says
 * which; got_tag may be NULL) if one has arrived: *buf (malloc'd, free it)
 * and its *len bytes; *buf NULL when none has */
tg_status tg__dist_try_message(int src, int tag, MPI_Comm comm, char **buf, int *len,
                               int *got_tag, const char *what);
/* the next message from src with tag on comm, waited for (polled as
 * tg__dist_wait) */
tg_status tg__dist_recv_message(int src, int tag, MPI_Comm comm, char **buf, int *len,
                                const char *what);
/* an MPI error code as a tensorgraph error naming what */
tg_status tg__dist_mpi_error(int code, const char *what);

#endif
