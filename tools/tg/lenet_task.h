/* LeNet-5 on MNIST for the tg tool: the pieces `tg train lenet` and
 * `tg eval lenet` share (data, model, checkpoints, evaluation). */
#ifndef TG_TOOL_LENET_TASK_H
#define TG_TOOL_LENET_TASK_H

#include "tg/tg.h"

/* fetches MNIST into dir when needed (progress lines on stderr unless
 * quiet), then opens the train or test split, only its first `limit`
 * images when limit > 0; NULL with an error */
tg_dataset *lenet_open_data(const char *dir, bool train, bool quiet, int64_t limit);
/* d itself when limit <= 0 or >= its size, else a dataset of its first
 * `limit` samples that owns d; NULL (d freed) on error */
tg_dataset *lenet_first_samples(tg_dataset *d, int64_t limit);
/* test-set accuracy of model (eval mode, no grad), as a fraction */
double lenet_accuracy(tg_module *model, tg_dataset *test, int64_t batch);
/* the optimizer `tg train --optimizer NAME` trains model with (sgd with
 * momentum, adam, adamw, adadelta; lr for all, momentum for sgd), over
 * the model's parameters in their order; NULL with an error */
tg_optimizer *lenet_optimizer(const char *name, tg_module *model, double lr, double momentum);

/* the model (and optimizer, when given: its state whichever mode stepped
 * it) saved atomically, with metadata {"model": name} */
tg_status lenet_save(const char *path, const char *name, tg_module *model,
                     tg_optimizer *opt, int epochs_done);
/* loads path into model (and opt when given and the file has its state);
 * a checkpoint of another model (metadata other than name) is an error.
 * Failures print one line
 * "tg: ..." on stderr. *epochs_done may be NULL. */
tg_status lenet_load(const char *path, const char *name, tg_module *model,
                     tg_optimizer *opt, int *epochs_done);
/* the models: "lenet" (tg_lenet5) and "lenet-bn", LeNet-5 with
 * BatchNorm2d after each conv (bn1, bn2: eps 1e-5, momentum 0.1) and
 * Dropout(0.25) before the last layer (drop). init draws the parameters;
 * dropout (borrowed, must outlive the model) draws the dropout masks;
 * NULL with an error for another name */
tg_module *lenet_model(const char *name, tg_generator *init, tg_generator *dropout);
bool lenet_model_known(const char *name);

/* peak resident set size of this process in MiB */
double peak_rss_mb(void);

#endif
