/* tensorgraph optimizers (SGD, Adam, AdamW, Adadelta, RMSprop) and
 * learning-rate schedules (StepLR, CosineAnnealingLR). The update rules
 * are PyTorch's (torch.optim, single-tensor algorithms), step by step. */
#ifndef TG_OPTIM_H
#define TG_OPTIM_H

#include "tg/io.h"
#include "tg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* ---- options ---------------------------------------------------------------
 * Start from tg_<name>_defaults() (PyTorch's defaults) and change fields.
 * maximize ascends instead of descending, as PyTorch's flag. */
typedef struct tg_sgd_opts {
    double lr;           /* 1e-3 */
    double momentum;     /* 0 */
    double dampening;    /* 0 */
    double weight_decay; /* 0: L2 penalty added to the gradient */
    bool nesterov;       /* needs momentum > 0 and dampening == 0 */
    bool maximize;
} tg_sgd_opts;

typedef struct tg_adam_opts {
    double lr;           /* 1e-3 */
    double beta1, beta2; /* 0.9, 0.999 */
    double eps;          /* 1e-8 */
    double weight_decay; /* Adam: 0, L2 in the gradient; AdamW: 1e-2, decoupled */
    bool amsgrad;
    bool maximize;
} tg_adam_opts;

typedef struct tg_adadelta_opts {
    double lr;           /* 1.0 */
    double rho;          /* 0.9 */
    double eps;          /* 1e-6 */
    double weight_decay; /* 0 */
    bool maximize;
} tg_adadelta_opts;

typedef struct tg_rmsprop_opts {
    double lr;           /* 1e-2 */
    double alpha;        /* 0.99 */
    double eps;          /* 1e-8 */
    double momentum;     /* 0 */
    double weight_decay; /* 0 */
    bool centered;
    bool maximize;
} tg_rmsprop_opts;

tg_sgd_opts tg_sgd_defaults(void);
tg_adam_opts tg_adam_defaults(void);
tg_adam_opts tg_adamw_defaults(void);
tg_adadelta_opts tg_adadelta_defaults(void);
tg_rmsprop_opts tg_rmsprop_defaults(void);

/* ---- optimizers ---------------------------------------------------------------
 * Created over n parameters: distinct float32/float64 leaf tensors, which
 * the optimizer retains. opts NULL means the defaults. Invalid options
 * (negative lr, beta outside [0, 1), nesterov without momentum, ...) fail
 * with TG_ERR_ARG. An optimizer is not a tensor: free it. */
typedef struct tg_optimizer tg_optimizer;

tg_optimizer *tg_optim_sgd(int n, tg_tensor *const *params,
                           const tg_sgd_opts *opts);
tg_optimizer *tg_optim_adam(int n, tg_tensor *const *params,
                            const tg_adam_opts *opts);
tg_optimizer *tg_optim_adamw(int n, tg_tensor *const *params,
                             const tg_adam_opts *opts);
tg_optimizer *tg_optim_adadelta(int n, tg_tensor *const *params,
                                const tg_adadelta_opts *opts);
tg_optimizer *tg_optim_rmsprop(int n, tg_tensor *const *params,
                               const tg_rmsprop_opts *opts);
void tg_optim_free(tg_optimizer *o); /* NULL is ignored */

/* one update of every parameter that has a gradient (tg_grad); those
 * without one are skipped and their state left alone. Parameters are
 * changed in place (their version bumps), with grad mode off. Either
 * every parameter is updated or, on error, none. */
tg_status tg_optim_step(tg_optimizer *o);
/* drops every parameter's gradient (PyTorch's set_to_none=True) */
void tg_optim_zero_grad(tg_optimizer *o);

const char *tg_optim_name(const tg_optimizer *o); /* "sgd", "adam", ... */
int tg_optim_num_params(const tg_optimizer *o);
tg_tensor *tg_optim_param(const tg_optimizer *o, int i); /* borrowed */
double tg_optim_get_lr(const tg_optimizer *o);
/* any finite lr (a constructor refuses one below 0; a schedule may pass
 * there, as PyTorch's may) */
tg_status tg_optim_set_lr(tg_optimizer *o, double lr);
/* how many updates parameter i has had (0 before its first step) */
int64_t tg_optim_param_steps(const tg_optimizer *o, int i);

/* ---- checkpoints ---------------------------------------------------------------
 * tg_optim_state_dict adds the optimizer's state to sd: per parameter i
 * its buffers as "optim.state.<i>.<buffer>" (PyTorch's names:
 * momentum_buffer, exp_avg, exp_avg_sq, max_exp_avg_sq, square_avg,
 * acc_delta, grad_avg; in the parameter's dtype; shared, not copied) and
 * its step count as the int64 scalar "optim.state.<i>.step"; the type and
 * every hyper-parameter (lr included) as metadata "optim.<name>".
 * tg_optim_load_state_dict checks everything (type, parameter count,
 * buffer shapes and dtypes, no unknown entries) before changing anything,
 * then copies the buffers in and restores the hyper-parameters, so that
 * training resumes bit for bit. Errors: TG_ERR_IO for a dict that does
 * not match. */
tg_status tg_optim_state_dict(const tg_optimizer *o, tg_state_dict *sd);
tg_status tg_optim_load_state_dict(tg_optimizer *o, const tg_state_dict *sd);

/* ---- learning-rate schedules ------------------------------------------------
 * A scheduler sets its optimizer's lr; call tg_sched_step once per epoch
 * after the optimizer's steps. Creating one records the optimizer's lr as
 * the base lr (PyTorch's initial_lr) and leaves it unchanged (epoch 0).
 * The recurrences are PyTorch's (chainable form), so lrs match it:
 *   StepLR:  lr *= gamma whenever epoch % step_size == 0 (epoch > 0)
 *   Cosine:  lr = eta_min + (base - eta_min)(1 + cos(pi e/T)) / 2, written
 *            as PyTorch's recursive update (it keeps going past T_max).
 * The scheduler borrows the optimizer: free it first. */
typedef struct tg_lr_scheduler tg_lr_scheduler;

tg_lr_scheduler *tg_sched_step_lr(tg_optimizer *o, int64_t step_size,
                                  double gamma);
tg_lr_scheduler *tg_sched_cosine_annealing(tg_optimizer *o, int64_t t_max,
                                           double eta_min);
void tg_sched_free(tg_lr_scheduler *s); /* NULL is ignored */
tg_status tg_sched_step(tg_lr_scheduler *s);
double tg_sched_get_last_lr(const tg_lr_scheduler *s);
int64_t tg_sched_last_epoch(const tg_lr_scheduler *s);
/* metadata "sched.type", "sched.last_epoch", "sched.base_lr" (the lr
 * itself is part of the optimizer's state) */
tg_status tg_sched_state_dict(const tg_lr_scheduler *s, tg_state_dict *sd);
tg_status tg_sched_load_state_dict(tg_lr_scheduler *s,
                                   const tg_state_dict *sd);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
