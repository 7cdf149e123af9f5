/* Optimizer state in checkpoints: buffers as "optim.state.<i>.<name>"
 * tensors, step counts as int64 scalars, type and hyper-parameters as
 * metadata. Loading checks the whole dict before changing anything. */
#include "io/io_impl.h"
#include "ops/elementwise.h"
#include "optim/optim_impl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "optim.state."

static tg_status set_meta_f(tg_state_dict *sd, const char *key, const char *fmt,
                            double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v);
    return tg_state_dict_set_meta(sd, key, buf);
}

tg_status tg_optim_state_dict(const tg_optimizer *o, tg_state_dict *sd)
{
    if (!o || !sd)
        return tg__error(TG_ERR_ARG, "tg_optim_state_dict: %s is NULL",
                         !o ? "the optimizer" : "the dict");
    const tg__optim_algo *a = o->algo;
    char key[128];
    tg_status s = tg_state_dict_set_meta(sd, "optim.type", a->name);
    if (s == TG_OK)
        s = set_meta_f(sd, "optim.num_params", "%.0f", (double)o->n);
    for (int h = 0; s == TG_OK && h < a->n_hparams; h++) {
        const char *field = (const char *)&o->opts + a->hparams[h].offset;
        snprintf(key, sizeof key, "optim.%s", a->hparams[h].name);
        if (a->hparams[h].is_bool)
            s = tg_state_dict_set_meta(sd, key, *(const bool *)field ? "true" : "false");
        else /* %.17g: the double comes back bit for bit */
            s = set_meta_f(sd, key, "%.17g", *(const double *)field);
    }
    for (int i = 0; s == TG_OK && i < o->n; i++) {
        for (int k = 0; s == TG_OK && k < a->n_slots; k++) {
            tg_tensor *b = o->state[i * TG_OPTIM_MAX_SLOTS + k];
            if (!b)
                continue;
            snprintf(key, sizeof key, PREFIX "%d.%s", i, a->slot_names[k]);
            s = tg_state_dict_add(sd, key, b);
        }
        if (s != TG_OK || o->steps[i] == 0)
            continue;
        tg_tensor *st = tg__alloc(TG_INT64, 0, NULL);
        if (!st)
            return tg_last_status();
        *(int64_t *)tg__base(st) = o->steps[i];
        snprintf(key, sizeof key, PREFIX "%d.step", i);
        s = tg__state_dict_add_owned(sd, key, st);
    }
    return s;
}

/* ---- loading --------------------------------------------------------------------- */

#define BAD(...) tg__error(TG_ERR_IO, "tg_optim_load_state_dict: " __VA_ARGS__)

static tg_status parse_hparams(const tg_optimizer *o, const tg_state_dict *sd,
                               tg__optim_opts *out)
{
    const tg__optim_algo *a = o->algo;
    memcpy(out, &o->opts, sizeof *out);
    for (int h = 0; h < a->n_hparams; h++) {
        char key[96];
        snprintf(key, sizeof key, "optim.%s", a->hparams[h].name);
        const char *v = tg_state_dict_meta(sd, key);
        if (!v)
            return BAD("the metadata lacks '%s'", key);
        char *field = (char *)out + a->hparams[h].offset;
        if (a->hparams[h].is_bool) {
            if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
                return BAD("'%s' is \"%s\", expected true or false", key, v);
            *(bool *)field = strcmp(v, "true") == 0;
        } else {
            char *end;
            errno = 0;
            double d = strtod(v, &end);
            if (!v[0] || *end || errno == ERANGE)
                return BAD("'%s' is \"%s\", expected a number", key, v);
            *(double *)field = d;
        }
    }
    /* a scheduled lr may be below 0 (tg_optim_set_lr takes any finite
     * one): the rest is checked as the constructor does; every options
     * struct starts with its lr */
    tg__optim_opts check = *out;
    if (isfinite(check.sgd.lr) && check.sgd.lr < 0)
        check.sgd.lr = 0;
    if (a->validate(&check) != TG_OK) {
        char why[256]; /* the message buffer is about to be rewritten */
        snprintf(why, sizeof why, "%s", tg_last_error());
        return BAD("the hyper-parameters are invalid: %s", why);
    }
    return TG_OK;
}

/* "<i>.<what>" after the prefix: the parameter index and the slot (-1 for
 * the step count); false when the name is not one of ours */
static bool parse_state_name(const tg_optimizer *o, const char *rest, int *idx,
                             int *slot)
{
    char *dot;
    errno = 0;
    if (rest[0] < '0' || rest[0] > '9')
        return false;
    long i = strtol(rest, &dot, 10);
    if (errno || *dot != '.' || i < 0 || i >= o->n)
        return false;
    *idx = (int)i;
    if (strcmp(dot + 1, "step") == 0) {
        *slot = -1;
        return true;
    }
    for (int k = 0; k < o->algo->n_slots; k++) {
        if (strcmp(dot + 1, o->algo->slot_names[k]) == 0) {
            *slot = k;
            return true;
        }
    }
    return false;
}

static tg_status check_entry(const tg_optimizer *o, const char *name, const tg_tensor *t,
                             int i, int slot)
{
    const tg_tensor *p = o->params[i];
    char a[160], b[160];
    if (slot < 0) {
        if (t->dtype != TG_INT64 || t->numel != 1 || *(const int64_t *)tg__base(t) < 0)
            return BAD("'%s' must be a non-negative int64 scalar", name);
        return TG_OK;
    }
    if (t->dtype != p->dtype || !tg__shape_eq(t->ndim, t->shape, p->ndim, p->shape))
        return BAD("'%s' is %s %s but parameter %d is %s %s", name,
                   tg_dtype_name(t->dtype), tg_shape_str(t->ndim, t->shape, a, sizeof a), i,
                   tg_dtype_name(p->dtype), tg_shape_str(p->ndim, p->shape, b, sizeof b));
    return TG_OK;
}

tg_status tg_optim_load_state_dict(tg_optimizer *o, const tg_state_dict *sd)
{
    if (!o || !sd)
        return tg__error(TG_ERR_ARG, "tg_optim_load_state_dict: %s is NULL",
                         !o ? "the optimizer" : "the dict");
    const tg__optim_algo *a = o->algo;
    const char *type = tg_state_dict_meta(sd, "optim.type");
    if (!type)
        return BAD("the dict holds no optimizer state (no 'optim.type' metadata)");
    if (strcmp(type, a->name) != 0)
        return BAD("the dict holds the state of a '%s' optimizer, this one is '%s'",
                   type, a->name);
    const char *np = tg_state_dict_meta(sd, "optim.num_params");
    char want[32];
    snprintf(want, sizeof want, "%d", o->n);
    if (!np || strcmp(np, want) != 0)
        return BAD("the dict is for %s parameters, this optimizer has %d",
                   np ? np : "(unknown)", o->n);
    tg__optim_opts opts;
    tg_status s = parse_hparams(o, sd, &opts);
    if (s != TG_OK)
        return s;

    /* new state, built aside: buffers copied, steps read */
    size_t n_state = ((size_t)o->n + 1) * TG_OPTIM_MAX_SLOTS;
    tg_tensor **state = calloc(n_state, sizeof *state);
    int64_t *steps = calloc((size_t)o->n + 1, sizeof *steps);
    if (!state || !steps)
        s = tg__error(TG_ERR_NOMEM, "tg_optim_load_state_dict: out of memory");
    for (int e = 0; s == TG_OK && e < tg_state_dict_size(sd); e++) {
        const char *name = tg_state_dict_name(sd, e);
        if (strncmp(name, "optim.", 6) != 0)
            continue; /* model parameters and the like */
        int i, slot;
        if (strncmp(name, PREFIX, strlen(PREFIX)) != 0 ||
            !parse_state_name(o, name + strlen(PREFIX), &i, &slot)) {
            s = BAD("unknown entry '%s' for a '%s' optimizer with %d parameters",
                    name, a->name, o->n);
            break;
        }
        const tg_tensor *t = tg__state_dict_find(sd, name);
        if ((s = check_entry(o, name, t, i, slot)) != TG_OK)
            break;
        if (slot < 0) {
            steps[i] = *(const int64_t *)tg__base(t);
            continue;
        }
        tg_tensor *c = tg__alloc(t->dtype, t->ndim, t->shape);
        if (!c) {
            s = tg_last_status();
            break;
        }
        tg__convert_into(c, t);
        state[i * TG_OPTIM_MAX_SLOTS + slot] = c;
    }
    if (s != TG_OK) {
        for (size_t k = 0; state && k < n_state; k++)
            tg_release(state[k]);
        free(state);
        free(steps);
        return s;
    }
    /* into the buffers and step counts in place: graphs built over this
     * optimizer (tg_graph_optim) hold them as variables. A buffer the dict
     * lacks becomes zeros (a graph's) or stays absent (eager's) */
    for (size_t k = 0; k < (size_t)o->n * TG_OPTIM_MAX_SLOTS; k++) {
        if (o->state[k] && state[k]) {
            tg__convert_into(o->state[k], state[k]);
            tg_release(state[k]);
        } else if (o->state[k]) {
            memset(tg__base(o->state[k]), 0,
                   (size_t)o->state[k]->numel * tg_dtype_size(o->state[k]->dtype));
        } else {
            o->state[k] = state[k];
        }
    }
    free(state);
    memcpy(o->steps, steps, (size_t)o->n * sizeof *steps);
    free(steps);
    memcpy(&o->opts, &opts, sizeof opts);
    return TG_OK;
}
