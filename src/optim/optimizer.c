/* The optimizer object shared by every algorithm: parameter list, lazily
 * created state buffers, the step driver (validate, allocate, then run
 * the fused loop per parameter) and zero_grad. */
#include "core/threadpool.h"
#include "ops/array.h"
#include "ops/elementwise.h"
#include "optim/formula.h"
#include "tg/autograd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* parameters at least this large are updated by the thread pool */
#define PARALLEL_MIN (1 << 14)
#define PARALLEL_GRAIN (1 << 13)

tg_optimizer *tg__optim_new(const tg__optim_algo *algo, int n,
                            tg_tensor *const *params, const void *opts)
{
    const char *nm = algo->name;
    if (n < 0 || (n > 0 && !params))
        return tg__error_null(TG_ERR_ARG, "%s: bad parameter list (n = %d)", nm, n);
    for (int i = 0; i < n; i++) {
        tg_tensor *p = params[i];
        if (!p)
            return tg__error_null(TG_ERR_ARG, "%s: parameter %d is NULL", nm, i);
        if (!tg_dtype_is_float(p->dtype))
            return tg__error_null(TG_ERR_DTYPE, "%s: parameter %d is %s; only "
                                  "float32/float64 tensors can be optimized", nm, i,
                                  tg_dtype_name(p->dtype));
        if (!tg_is_leaf(p))
            return tg__error_null(TG_ERR_ARG, "%s: parameter %d is not a leaf (it "
                                  "was produced by '%s'); optimize leaves", nm, i,
                                  tg_grad_fn_name(p));
        for (int j = 0; j < i; j++)
            if (params[j] == p)
                return tg__error_null(TG_ERR_ARG, "%s: parameter %d appears twice "
                                      "(also at %d)", nm, i, j);
    }
    if (algo->validate(opts) != TG_OK)
        return NULL;
    tg_optimizer *o = calloc(1, sizeof *o);
    if (o) {
        o->params = calloc((size_t)n + 1, sizeof *o->params);
        o->step_t = tg__alloc(TG_INT64, 1, (int64_t[]){n});
        o->state = calloc(((size_t)n + 1) * TG_OPTIM_MAX_SLOTS, sizeof *o->state);
    }
    if (o && o->step_t) {
        o->steps = (int64_t *)tg__base(o->step_t);
        memset(o->steps, 0, (size_t)n * sizeof *o->steps);
    }
    if (!o || !o->params || !o->step_t || !o->state) {
        tg_optim_free(o); /* n is still 0: it frees only what was allocated */
        return tg__error_null(TG_ERR_NOMEM, "%s: out of memory", nm);
    }
    o->algo = algo;
    memcpy(&o->opts, opts, algo->opts_size);
    o->n = n;
    for (int i = 0; i < n; i++)
        o->params[i] = tg_retain(params[i]);
    return o;
}

void tg_optim_free(tg_optimizer *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n; i++)
        tg_release(o->params[i]);
    for (int i = 0; i < o->n * TG_OPTIM_MAX_SLOTS; i++)
        tg_release(o->state[i]);
    free(o->params);
    tg_release(o->step_t);
    free(o->state);
    free(o);
}

/* ---- step ------------------------------------------------------------------------ */

typedef struct run_ctx {
    const tg__optim_algo *algo;
    tg__optim_job job;
} run_ctx;

static void run_range(void *ctx, int64_t begin, int64_t end)
{
    const run_ctx *r = ctx;
    r->algo->update(&r->job, begin, end);
}

static tg_tensor *zeros_like_param(const tg_tensor *p)
{
    tg_tensor *z = tg__alloc(p->dtype, p->ndim, p->shape);
    if (z)
        memset(tg__base(z), 0, (size_t)z->numel * tg_dtype_size(z->dtype));
    return z;
}

tg_tensor *tg__optim_state(tg_optimizer *o, int i, int s)
{
    tg_tensor **b = &o->state[i * TG_OPTIM_MAX_SLOTS + s];
    if (!*b && !(*b = zeros_like_param(o->params[i])))
        return tg__error_null(TG_ERR_NOMEM, "%s: out of memory for state", o->algo->name);
    return *b;
}

/* a concrete 0-d 1 of dtype dt */
static bool is_one(const tg_tensor *t, tg_dtype dt)
{
    if (!t || t->graph || t->ndim != 0 || t->dtype != dt)
        return false;
    return dt == TG_FLOAT32 ? *(const float *)tg__base(t) == 1.0f
                            : dt == TG_FLOAT64 && *(const double *)tg__base(t) == 1.0;
}

tg_tensor *tg__optim_graph_mul(tg_tensor *a, tg_tensor *b)
{
    if (a && b && is_one(a, b->dtype))
        return b;
    if (a && b && is_one(b, a->dtype))
        return a;
    return tg_mul(a, b);
}

tg_status tg__optim_graph_neg_lr(tg_tensor *lr, tg_dtype dt, tg_tensor **out)
{
    out[0] = tg_cast(tg_neg(lr), dt);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status check_grads(const tg_optimizer *o)
{
    for (int i = 0; i < o->n; i++) {
        const tg_tensor *p = o->params[i], *g = p->grad;
        if (g && (g->dtype != p->dtype || !tg__shape_eq(g->ndim, g->shape, p->ndim, p->shape))) {
            char a[160], b[160];
            return tg__error(TG_ERR_SHAPE, "%s step: the gradient of parameter %d is "
                             "%s %s, expected %s %s like the parameter", o->algo->name, i,
                             tg_dtype_name(g->dtype), tg_shape_str(g->ndim, g->shape, a, sizeof a),
                             tg_dtype_name(p->dtype), tg_shape_str(p->ndim, p->shape, b, sizeof b));
        }
    }
    return TG_OK;
}

/* everything the updates need, allocated before any parameter changes so a
 * failed allocation leaves the optimizer and parameters untouched */
typedef struct step_plan {
    tg_tensor **grads; /* contiguous gradients, NULL for skipped params */
    tg_tensor **work;  /* contiguous parameter data (the param or a copy) */
    tg_tensor **fresh; /* state buffers created for this step */
} step_plan;

static void plan_free(step_plan *pl, int n, bool keep_fresh)
{
    for (int i = 0; i < n; i++) {
        tg_release(pl->grads ? pl->grads[i] : NULL);
        tg_release(pl->work ? pl->work[i] : NULL);
    }
    if (!keep_fresh && pl->fresh)
        for (int i = 0; i < n * TG_OPTIM_MAX_SLOTS; i++)
            tg_release(pl->fresh[i]);
    free(pl->grads);
    free(pl->work);
    free(pl->fresh);
}

static tg_status plan_step(const tg_optimizer *o, step_plan *pl)
{
    size_t n = (size_t)o->n + 1;
    pl->grads = calloc(n, sizeof *pl->grads);
    pl->work = calloc(n, sizeof *pl->work);
    pl->fresh = calloc(n * TG_OPTIM_MAX_SLOTS, sizeof *pl->fresh);
    if (!pl->grads || !pl->work || !pl->fresh)
        return tg__error(TG_ERR_NOMEM, "%s step: out of memory", o->algo->name);
    for (int i = 0; i < o->n; i++) {
        tg_tensor *p = o->params[i];
        if (!p->grad)
            continue;
        pl->grads[i] = tg__contig(p->grad);
        pl->work[i] = tg__contig(p);
        if (!pl->grads[i] || !pl->work[i])
            return tg__error(TG_ERR_NOMEM, "%s step: out of memory", o->algo->name);
        for (int s = 0; s < o->algo->n_slots; s++) {
            int k = i * TG_OPTIM_MAX_SLOTS + s;
            if (o->state[k] || !o->algo->slot_used(&o->opts, s))
                continue;
            if (!(pl->fresh[k] = zeros_like_param(p)))
                return tg__error(TG_ERR_NOMEM, "%s step: out of memory for state",
                                 o->algo->name);
        }
    }
    return TG_OK;
}

static void update_param(tg_optimizer *o, int i, tg_tensor *grad, tg_tensor *work,
                         bool first)
{
    run_ctx r = {o->algo, {0}};
    tg__optim_job *j = &r.job;
    j->opts = &o->opts;
    j->dt = work->dtype;
    j->n = work->numel;
    j->p = tg__base(work);
    j->g = tg__base(grad);
    for (int s = 0; s < TG_OPTIM_MAX_SLOTS; s++) {
        tg_tensor *b = o->state[i * TG_OPTIM_MAX_SLOTS + s];
        j->s[s] = b ? tg__base(b) : NULL;
    }
    j->first = first;
    j->step = o->steps[i] + 1;
    if (j->n >= PARALLEL_MIN && !tg_in_parallel_region())
        tg_parallel_for(j->n, PARALLEL_GRAIN, run_range, &r);
    else if (j->n > 0)
        run_range(&r, 0, j->n);
}

tg_status tg_optim_step(tg_optimizer *o)
{
    if (!o)
        return tg__error(TG_ERR_ARG, "tg_optim_step: the optimizer is NULL");
    tg_status st = check_grads(o);
    if (st != TG_OK)
        return st;
    step_plan pl = {0};
    st = plan_step(o, &pl);
    if (st != TG_OK) {
        plan_free(&pl, o->n, false);
        return st;
    }
    tg_no_grad_begin();
    for (int i = 0; i < o->n; i++) {
        if (!pl.grads[i])
            continue;
        /* a state made zeros before (a graph built over this optimizer)
         * and never stepped counts as new */
        bool first = o->steps[i] == 0;
        for (int s = 0; s < TG_OPTIM_MAX_SLOTS; s++) {
            int k = i * TG_OPTIM_MAX_SLOTS + s;
            if (pl.fresh[k]) {
                o->state[k] = pl.fresh[k];
                first = true;
            }
        }
        update_param(o, i, pl.grads[i], pl.work[i], first);
        if (pl.work[i] != o->params[i]) /* a non-contiguous parameter */
            tg__convert_into(o->params[i], pl.work[i]);
        tg__bump_version(o->params[i]);
        o->steps[i]++;
    }
    tg_no_grad_end();
    plan_free(&pl, o->n, true);
    return TG_OK;
}

void tg_optim_zero_grad(tg_optimizer *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n; i++)
        tg_zero_grad(o->params[i]);
}

/* ---- accessors ---------------------------------------------------------------- */

const char *tg_optim_name(const tg_optimizer *o) { return o ? o->algo->name : NULL; }
int tg_optim_num_params(const tg_optimizer *o) { return o ? o->n : 0; }

tg_tensor *tg_optim_param(const tg_optimizer *o, int i)
{
    if (!o || i < 0 || i >= o->n)
        return tg__error_null(TG_ERR_INDEX, "tg_optim_param: index %d out of range "
                              "[0, %d)", i, o ? o->n : 0);
    return o->params[i];
}

/* every options struct starts with its lr */
double tg_optim_get_lr(const tg_optimizer *o) { return o ? o->opts.sgd.lr : 0.0 / 0.0; }

tg_status tg_optim_set_lr(tg_optimizer *o, double lr)
{
    if (!o)
        return tg__error(TG_ERR_ARG, "tg_optim_set_lr: the optimizer is NULL");
    /* any finite value: as PyTorch, whose optimizers check lr >= 0 when
     * built, not when a scheduler moves it (OneCycleLR's three phases can
     * pass below 0, and the step then ascends) */
    if (!isfinite(lr))
        return tg__error(TG_ERR_ARG, "tg_optim_set_lr: invalid learning rate %g "
                         "(must be finite)", lr);
    o->opts.sgd.lr = lr;
    return TG_OK;
}

int64_t tg_optim_param_steps(const tg_optimizer *o, int i)
{
    return o && i >= 0 && i < o->n ? o->steps[i] : 0;
}
