/* Learning-rate schedules: StepLR and CosineAnnealingLR with PyTorch's
 * chainable (recursive) updates, so the lr sequence matches PyTorch's to
 * the last bit of double arithmetic. */
#include "optim/optim_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum sched_kind { SCHED_STEP, SCHED_COSINE } sched_kind;

struct tg_lr_scheduler {
    sched_kind kind;
    tg_optimizer *opt; /* borrowed */
    double base_lr;    /* PyTorch's initial_lr */
    int64_t last_epoch;
    int64_t step_size; /* StepLR */
    double gamma;
    int64_t t_max; /* cosine */
    double eta_min;
};

static const char *kind_name(sched_kind k) { return k == SCHED_STEP ? "step_lr" : "cosine_annealing"; }

static tg_lr_scheduler *sched_new(tg_optimizer *o, sched_kind kind)
{
    if (!o)
        return tg__error_null(TG_ERR_ARG, "%s: the optimizer is NULL", kind_name(kind));
    tg_lr_scheduler *s = calloc(1, sizeof *s);
    if (!s)
        return tg__error_null(TG_ERR_NOMEM, "%s: out of memory", kind_name(kind));
    s->kind = kind;
    s->opt = o;
    s->base_lr = tg_optim_get_lr(o);
    s->last_epoch = 0; /* PyTorch's constructor takes the first step: lr unchanged */
    return s;
}

tg_lr_scheduler *tg_sched_step_lr(tg_optimizer *o, int64_t step_size, double gamma)
{
    if (step_size < 1)
        return tg__error_null(TG_ERR_ARG, "step_lr: step_size must be >= 1, got %lld",
                              (long long)step_size);
    if (!(gamma >= 0))
        return tg__error_null(TG_ERR_ARG, "step_lr: gamma must be >= 0, got %g", gamma);
    tg_lr_scheduler *s = sched_new(o, SCHED_STEP);
    if (s) {
        s->step_size = step_size;
        s->gamma = gamma;
    }
    return s;
}

tg_lr_scheduler *tg_sched_cosine_annealing(tg_optimizer *o, int64_t t_max, double eta_min)
{
    if (t_max < 1)
        return tg__error_null(TG_ERR_ARG, "cosine_annealing: T_max must be >= 1, got %lld",
                              (long long)t_max);
    if (!(eta_min >= 0))
        return tg__error_null(TG_ERR_ARG, "cosine_annealing: eta_min must be >= 0, got %g",
                              eta_min);
    tg_lr_scheduler *s = sched_new(o, SCHED_COSINE);
    if (s) {
        s->t_max = t_max;
        s->eta_min = eta_min;
    }
    return s;
}

void tg_sched_free(tg_lr_scheduler *s) { free(s); }

/* PyTorch's get_lr() for last_epoch > 0, from the current lr */
static double next_lr(const tg_lr_scheduler *s, double lr)
{
    int64_t e = s->last_epoch;
    if (s->kind == SCHED_STEP)
        return e % s->step_size == 0 ? lr * s->gamma : lr;
    const double pi = 3.14159265358979323846, T = (double)s->t_max;
    int64_t m = 2 * s->t_max, r = ((e - 1 - s->t_max) % m + m) % m; /* Python's % */
    if (r == 0) /* the trough: the recurrence would divide by zero */
        return lr + (s->base_lr - s->eta_min) * (1 - cos(pi / T)) / 2;
    return (1 + cos(pi * (double)e / T)) / (1 + cos(pi * (double)(e - 1) / T)) *
               (lr - s->eta_min) + s->eta_min;
}

tg_status tg_sched_step(tg_lr_scheduler *s)
{
    if (!s)
        return tg__error(TG_ERR_ARG, "tg_sched_step: the scheduler is NULL");
    s->last_epoch++;
    double lr = next_lr(s, tg_optim_get_lr(s->opt));
    /* an lr the optimizer would refuse (a negative rounding error of the
     * cosine at eta_min = 0) is clamped */
    return tg_optim_set_lr(s->opt, lr > 0 ? lr : 0);
}

double tg_sched_get_last_lr(const tg_lr_scheduler *s)
{
    return s ? tg_optim_get_lr(s->opt) : 0.0 / 0.0;
}

int64_t tg_sched_last_epoch(const tg_lr_scheduler *s) { return s ? s->last_epoch : -1; }

tg_status tg_sched_state_dict(const tg_lr_scheduler *s, tg_state_dict *sd)
{
    if (!s || !sd)
        return tg__error(TG_ERR_ARG, "tg_sched_state_dict: %s is NULL",
                         !s ? "the scheduler" : "the dict");
    char buf[64];
    tg_status st = tg_state_dict_set_meta(sd, "sched.type", kind_name(s->kind));
    snprintf(buf, sizeof buf, "%lld", (long long)s->last_epoch);
    if (st == TG_OK)
        st = tg_state_dict_set_meta(sd, "sched.last_epoch", buf);
    snprintf(buf, sizeof buf, "%.17g", s->base_lr);
    if (st == TG_OK)
        st = tg_state_dict_set_meta(sd, "sched.base_lr", buf);
    return st;
}

tg_status tg_sched_load_state_dict(tg_lr_scheduler *s, const tg_state_dict *sd)
{
    if (!s || !sd)
        return tg__error(TG_ERR_ARG, "tg_sched_load_state_dict: %s is NULL",
                         !s ? "the scheduler" : "the dict");
    const char *type = tg_state_dict_meta(sd, "sched.type"),
               *ep = tg_state_dict_meta(sd, "sched.last_epoch"),
               *base = tg_state_dict_meta(sd, "sched.base_lr");
    if (!type || !ep || !base)
        return tg__error(TG_ERR_IO, "tg_sched_load_state_dict: the dict lacks the "
                         "metadata 'sched.%s'", !type ? "type" : !ep ? "last_epoch" : "base_lr");
    if (strcmp(type, kind_name(s->kind)) != 0)
        return tg__error(TG_ERR_IO, "tg_sched_load_state_dict: the dict holds a '%s' "
                         "schedule, this one is '%s'", type, kind_name(s->kind));
    char *end1, *end2;
    errno = 0;
    long long e = strtoll(ep, &end1, 10);
    double b = strtod(base, &end2);
    if (errno || !ep[0] || *end1 || e < 0 || !base[0] || *end2 || !(b >= 0))
        return tg__error(TG_ERR_IO, "tg_sched_load_state_dict: bad last_epoch \"%s\" "
                         "or base_lr \"%s\"", ep, base);
    s->last_epoch = e;
    s->base_lr = b;
    return TG_OK;
}
