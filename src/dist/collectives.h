/* What the gradient reducer shares with the collectives (collectives.c):
 * a non-blocking in-place allreduce of a flat buffer, and scaling. */
#ifndef TG_DIST_COLLECTIVES_H
#define TG_DIST_COLLECTIVES_H

#include "dist/world.h"

/* starts an in-place allreduce of n elements of dt (float32/float64,
 * int32/int64) at data; MEAN sums (the caller divides) */
tg_status tg__dist_iallreduce(void *data, int64_t n, tg_dtype dt, tg_reduce_op op,
                              MPI_Request *req);
/* data[i] *= by for n floats of dt (float32 or float64) */
void tg__dist_scale(void *data, tg_dtype dt, int64_t n, double by);

#endif
