/* Eager forward mode: dual levels, dual tensors and the propagation of
 * tangents through ops as they run (forward_ad.h, tg/autograd.h).
 *
 * One level is open at a time, process-wide, as in PyTorch 1.13 (nested
 * levels are refused). Closing it drops every tangent made in it: the
 * tensors that carry one are listed (not owned: a tensor leaves the list
 * when it is freed), and their tangents are released at the close. That
 * is what breaks the cycles forward over reverse makes: a tangent's
 * history (recorded when the primal requires grad) saves the primal,
 * which holds the tangent. So every tangent there is belongs to the open
 * level: no tensor needs to remember which. Levels are numbered and never
 * reused (tg_dual_level_enter's answer). */
#include "autodiff/forward_ad.h"
#include "autodiff/jvp.h"
#include "core/tensor_impl.h"
#include "tg/autograd.h"
#include "tg/ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t open_level; /* 0: none open */
static _Atomic uint64_t last_level;
/* while this thread runs a JVP rule, the rule's own ops (on the primal
 * inputs, which carry tangents) must not propagate again */
static _Thread_local int in_rule;

/* the tensors carrying a tangent of the open level (freed ones NULL) */
static pthread_mutex_t list_mu = PTHREAD_MUTEX_INITIALIZER;
static tg_tensor **carriers;
static int64_t n_carriers, cap_carriers;

static tg_tensor *live_tangent(const tg_tensor *t)
{
    return t && t->tangent && atomic_load_explicit(&open_level, memory_order_relaxed)
               ? t->tangent
               : NULL;
}

static bool list_carrier(tg_tensor *t)
{
    bool ok = true;
    pthread_mutex_lock(&list_mu);
    if (n_carriers == cap_carriers) {
        int64_t cap = cap_carriers ? 2 * cap_carriers : 256;
        tg_tensor **grown = realloc(carriers, (size_t)cap * sizeof *grown);
        ok = grown != NULL;
        if (ok)
            carriers = grown, cap_carriers = cap;
    }
    if (ok) {
        carriers[n_carriers++] = t;
        t->tangent_slot = n_carriers;
    }
    pthread_mutex_unlock(&list_mu);
    return ok;
}

void tg__dual_forget(tg_tensor *t)
{
    pthread_mutex_lock(&list_mu);
    int64_t i = t->tangent_slot - 1;
    if (i >= 0 && i < n_carriers && carriers[i] == t)
        carriers[i] = NULL;
    t->tangent_slot = 0;
    pthread_mutex_unlock(&list_mu);
}

/* t's tangent becomes `tangent` (a reference the call takes; NULL:
 * none) under the open level */
static tg_status attach(tg_tensor *t, tg_tensor *tangent)
{
    tg_tensor *old = t->tangent;
    t->tangent = tangent;
    tg_release(old);
    if (tangent && !t->tangent_slot && !list_carrier(t)) {
        t->tangent = NULL;
        tg_release(tangent);
        return tg__error(TG_ERR_NOMEM, "forward mode: out of memory listing a tangent");
    }
    return TG_OK;
}

/* drops the tangents of every listed tensor; their releases may free
 * other carriers, which then leave the list (tg__dual_forget) */
static void drop_tangents(void)
{
    for (int64_t i = 0;; i++) {
        tg_tensor *tangent = NULL;
        pthread_mutex_lock(&list_mu);
        bool more = i < n_carriers;
        if (more && carriers[i]) {
            tangent = carriers[i]->tangent;
            carriers[i]->tangent = NULL;
            carriers[i]->tangent_slot = 0;
            carriers[i] = NULL;
        }
        pthread_mutex_unlock(&list_mu);
        if (!more)
            break;
        tg_release(tangent);
    }
    pthread_mutex_lock(&list_mu);
    free(carriers);
    carriers = NULL;
    n_carriers = cap_carriers = 0;
    pthread_mutex_unlock(&list_mu);
}

int64_t tg_dual_level_enter(void)
{
    uint64_t none = 0, level = atomic_load(&last_level) + 1;
    if (!atomic_compare_exchange_strong(&open_level, &none, level)) {
        tg__error(TG_ERR_AUTOGRAD, "dual level: nested forward mode AD is not supported "
                  "(a level is open already; exit it first)");
        return -1;
    }
    atomic_store(&last_level, level);
    return (int64_t)level;
}

tg_status tg_dual_level_exit(void)
{
    if (atomic_exchange(&open_level, 0) == 0)
        return tg__error(TG_ERR_AUTOGRAD, "dual level: no level is open to exit");
    drop_tangents();
    return TG_OK;
}

bool tg_dual_level_open(void) { return atomic_load(&open_level) != 0; }

tg_tensor *tg_make_dual(tg_tensor *primal, tg_tensor *tangent)
{
    if (!primal || !tangent)
        return tg__error_null(TG_ERR_ARG, "make_dual: %s is NULL",
                              primal ? "tangent" : "primal");
    if (!tg_dual_level_open())
        return tg__error_null(TG_ERR_AUTOGRAD, "make_dual: no dual level is open (enter "
                              "one first: tg_dual_level_enter)");
    if (!primal->storage || !tangent->storage)
        return tg__error_null(TG_ERR_ARG, "make_dual: primal and tangent must be concrete "
                              "tensors, not symbolic (graph mode)");
    if (!tg_dtype_is_float(primal->dtype))
        return tg__error_null(TG_ERR_DTYPE, "make_dual: the primal must be floating point, "
                              "got %s", tg_dtype_name(primal->dtype));
    if (!tg__shape_eq(primal->ndim, primal->shape, tangent->ndim, tangent->shape)) {
        char a[160], b[160];
        return tg__error_null(TG_ERR_SHAPE, "make_dual: the tangent's shape %s differs "
                              "from the primal's %s",
                              tg_shape_str(tangent->ndim, tangent->shape, b, sizeof b),
                              tg_shape_str(primal->ndim, primal->shape, a, sizeof a));
    }
    /* a view of the primal (its history and storage), not the primal
     * itself: the primal stays without a tangent */
    in_rule++;
    tg_tensor *dual = tg_view(primal, primal->ndim, primal->shape);
    tg_tensor *t = dual && tangent->dtype != primal->dtype ? tg_cast(tangent, primal->dtype)
                                                           : tangent;
    in_rule--;
    if (!dual || !t || attach(dual, tg_retain(t)) != TG_OK) {
        tg_release(dual);
        return NULL;
    }
    return dual;
}

tg_tensor *tg_dual_tangent(const tg_tensor *t) { return live_tangent(t); }

bool tg__dual_carries(const tg_tensor *t) { return live_tangent(t) != NULL; }

void tg__dual_share(tg_tensor *dst, const tg_tensor *src)
{
    tg_tensor *t = live_tangent(src);
    if (dst && t && dst != src)
        attach(dst, tg_retain(t)); /* out of memory: dst goes without */
}

tg_tensor *tg_dual_primal(tg_tensor *t)
{
    if (!t)
        return tg__error_null(TG_ERR_ARG, "dual_primal: tensor is NULL");
    in_rule++;
    tg_tensor *p = tg_view(t, t->ndim, t->shape);
    in_rule--;
    return p;
}

bool tg__dual_wanted(const tg_op_def *op, int n_in, tg_tensor *const *in)
{
    /* ops whose outputs are never differentiable (comparisons, argmax)
     * give no tangents */
    if (in_rule || op->nondiff || !atomic_load_explicit(&open_level, memory_order_relaxed))
        return false;
    for (int i = 0; i < n_in; i++)
        if (live_tangent(in[i]))
            return true;
    return false;
}

tg_status tg__dual_propagate(const tg_op_ctx *c)
{
    tg_meta in_meta[TG_MAX_OP_INPUTS];
    tg_tensor *dx[TG_MAX_OP_INPUTS], *dy[TG_MAX_OP_OUTPUTS];
    if (c->n_in > TG_MAX_OP_INPUTS)
        return tg__error(TG_ERR_UNSUPPORTED, "forward mode: op '%s' has %d inputs, at most "
                         "%d carry tangents", c->op->name, c->n_in, TG_MAX_OP_INPUTS);
    for (int i = 0; i < c->n_in; i++) {
        tg_meta_of(c->in[i], &in_meta[i]);
        dx[i] = live_tangent(c->in[i]);
    }
    tg_jvp_ctx r = {.op = c->op, .name = c->op->name, .n_in = c->n_in, .n_out = c->n_out,
                    .in = c->in, .out = c->out, .in_meta = in_meta,
                    .out_meta = c->out_meta, .attr = c->attr, .attrs = c->attrs,
                    .n_attrs = c->n_attrs};
    in_rule++;
    tg_status s = tg__jvp_run(&r, dx, dy);
    in_rule--;
    if (s != TG_OK)
        return s;
    for (int o = 0; o < c->n_out; o++)
        if ((dy[o] || c->out[o]->tangent) && s == TG_OK) /* in place: the old one goes */
            s = attach(c->out[o], dy[o]);
        else
            tg_release(dy[o]);
    return s;
}
