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
/* waits for req, polling: MPI_Test, the heartbeat thread's verdict, and
 * a growing pause; an MPI error or a lost peer fails with a message
 * naming `what` (the caller's operation) and the lost rank */
tg_status tg__dist_wait(MPI_Request *req, const char *what);
/* an MPI error code as a tensorgraph error naming what */
tg_status tg__dist_mpi_error(int code, const char *what);

#endif
