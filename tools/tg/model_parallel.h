/* `mpirun -np 2 tg train lenet --model-parallel`: LeNet-5's convolutional
 * part on rank 0, its classifier on rank 1 (model_parallel.c). */
#ifndef TG_TOOL_MODEL_PARALLEL_H
#define TG_TOOL_MODEL_PARALLEL_H

#include "trainer.h"

/* trains t->model (both ranks built it from the same seed) for o->epochs;
 * rank 0 prints; 0 or 1 after printing why */
int model_parallel_train(const train_opts *o, trainer *t, tg_dataset *train, tg_dataset *test);

#endif
