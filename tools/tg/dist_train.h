/* `tg train --distributed`: data-parallel training over MPI ranks
 * (mpirun -np N tg train lenet --distributed). Every rank draws the same
 * global batch (same seed, same loader) and trains on its slice; the
 * gradient reducer (tg/dist.h) sums the slices' gradients, weighted so
 * the result is the global batch's mean gradient, in buckets started while
 * backward runs; rank 0 alone prints, evaluates, saves and exports. */
#ifndef TG_TOOL_DIST_TRAIN_H
#define TG_TOOL_DIST_TRAIN_H

#include "trainer.h"

/* joins the world; ranks other than 0 go quiet. false after printing why */
bool dist_begin(train_opts *o);
/* leaves it (after a failure too: a lost peer leaves MPI alone) */
void dist_end(void);
bool dist_is_root(void);
/* --ranks on a rank other than 0: a worker of rank 0's graph runs until
 * rank 0 finishes (tg_dist_serve), then leaves the world; the exit code */
int dist_serve(void);
/* rank 0's parameters and buffers to every rank */
tg_status dist_sync_model(tg_module *model);
/* the reducer over the model's parameters, buckets of bucket_kb KiB */
tg_dist_reducer *dist_reducer(tg_module *model, int bucket_kb);
/* one eager data-parallel step on this rank's slice of the global batch
 * (x, y); *loss is the global batch's mean loss, before the update */
tg_status dist_step(trainer *t, tg_tensor *x, tg_tensor *y, double *loss);
/* MNIST fetched by rank 0 alone, then opened by every rank */
tg_dataset *dist_open_data(const char *dir, bool train, bool quiet, int64_t limit);

#endif
