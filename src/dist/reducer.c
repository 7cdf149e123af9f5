/* The data-parallel gradient reducer (tg/dist.h), PyTorch DDP's design:
 * parameters are grouped into buckets, last parameter first (the order
 * backward finishes them); the backward hooks of the autograd engine say
 * when a parameter's gradient is final; its values are copied into its
 * bucket, and a bucket whose parameters are all in starts a non-blocking
 * allreduce while backward goes on. Buckets start strictly in index order
 * on every rank (a ready bucket waits for the ones before it), so every
 * rank issues the same collectives in the same order whatever order its
 * backward happens to finish parameters in. */
#ifdef TG_HAVE_MPI
#include "dist/collectives.h"
#include "core/status_impl.h"
#include "core/tensor_impl.h"
#include "util/hmap.h"

#include <stdlib.h>
#include <string.h>

typedef struct bucket {
    float *data;
    int64_t numel;
    int n_params, n_ready;
    MPI_Request req;
    bool started;
} bucket;

struct tg_dist_reducer {
    int n;
    tg_tensor **params; /* retained */
    int *bucket_of;
    int64_t *offset; /* of each parameter in its bucket */
    bool *ready;
    tg_hmap index;   /* parameter -> its index */
    int n_buckets, next_start, started_early;
    bucket *buckets;
    tg_reduce_op op;
};

static bool make_buckets(tg_dist_reducer *r, size_t bucket_bytes)
{
    r->buckets = calloc((size_t)r->n, sizeof *r->buckets);
    if (!r->buckets)
        return false;
    size_t bytes = 0;
    for (int i = r->n - 1; i >= 0; i--) {
        if (r->n_buckets == 0 || bytes >= bucket_bytes) {
            r->n_buckets++;
            bytes = 0;
        }
        bucket *b = &r->buckets[r->n_buckets - 1];
        r->bucket_of[i] = r->n_buckets - 1;
        r->offset[i] = b->numel;
        b->numel += r->params[i]->numel;
        b->n_params++;
        bytes += (size_t)r->params[i]->numel * sizeof(float);
    }
    for (int k = 0; k < r->n_buckets; k++)
        if (!(r->buckets[k].data = malloc((size_t)r->buckets[k].numel * sizeof(float) + 1)))
            return false;
    return true;
}

static tg_status check_params(int n, tg_tensor *const *params)
{
    static const char fn[] = "tg_dist_reducer_new";
    if (n < 1 || !params)
        return tg__error(TG_ERR_ARG, "%s: need at least one parameter", fn);
    for (int i = 0; i < n; i++) {
        if (!params[i])
            return tg__error(TG_ERR_ARG, "%s: parameter %d is NULL", fn, i);
        if (!tg__check_concrete(fn, params[i]))
            return tg_last_status();
        if (params[i]->dtype != TG_FLOAT32)
            return tg__error(TG_ERR_DTYPE, "%s: parameter %d is %s, expected float32", fn, i,
                             tg_dtype_name(params[i]->dtype));
        for (int j = 0; j < i; j++)
            if (params[j] == params[i])
                return tg__error(TG_ERR_ARG, "%s: parameter %d repeats parameter %d", fn, i, j);
    }
    return TG_OK;
}

tg_dist_reducer *tg_dist_reducer_new(int n, tg_tensor *const *params, size_t bucket_bytes,
                                     tg_reduce_op op)
{
    if (check_params(n, params) != TG_OK)
        return NULL;
    if (op != TG_REDUCE_MEAN && op != TG_REDUCE_SUM)
        return tg__error_null(TG_ERR_ARG, "tg_dist_reducer_new: op must be MEAN or SUM");
    tg_dist_reducer *r = calloc(1, sizeof *r);
    if (!r)
        return tg__error_null(TG_ERR_NOMEM, "tg_dist_reducer_new: out of memory");
    r->n = n;
    r->op = op;
    r->index = tg__hmap_pointers();
    r->params = calloc((size_t)n, sizeof *r->params);
    r->bucket_of = calloc((size_t)n, sizeof *r->bucket_of);
    r->offset = calloc((size_t)n, sizeof *r->offset);
    r->ready = calloc((size_t)n, sizeof *r->ready);
    bool ok = r->params && r->bucket_of && r->offset && r->ready &&
              tg__hmap_reserve(&r->index, (size_t)n);
    for (int i = 0; ok && i < n; i++) {
        r->params[i] = tg_retain(params[i]);
        tg__hmap_put(&r->index, params[i], i);
    }
    if (!ok || !make_buckets(r, bucket_bytes ? bucket_bytes : 1)) {
        tg_dist_reducer_free(r);
        return tg__error_null(TG_ERR_NOMEM, "tg_dist_reducer_new: out of memory");
    }
    return r;
}

void tg_dist_reducer_free(tg_dist_reducer *r)
{
    if (!r)
        return;
    for (int i = 0; r->params && i < r->n; i++)
        tg_release(r->params[i]);
    for (int k = 0; r->buckets && k < r->n_buckets; k++)
        free(r->buckets[k].data);
    free(r->buckets);
    free(r->params);
    free(r->bucket_of);
    free(r->offset);
    free(r->ready);
    tg__hmap_free(&r->index);
    free(r);
}

int tg_dist_reducer_buckets(const tg_dist_reducer *r, int *started_early)
{
    if (!r) {
        tg__error(TG_ERR_ARG, "tg_dist_reducer_buckets: reducer is NULL");
        return -1;
    }
    if (started_early)
        *started_early = r->started_early;
    return r->n_buckets;
}

/* starts, in index order, every bucket whose parameters are all in */
static tg_status start_ready(tg_dist_reducer *r, bool early)
{
    while (r->next_start < r->n_buckets) {
        bucket *b = &r->buckets[r->next_start];
        if (b->n_ready < b->n_params)
            return TG_OK;
        tg_status s = tg__dist_iallreduce(b->data, b->numel, TG_FLOAT32, r->op, &b->req);
        if (s != TG_OK)
            return s;
        b->started = true;
        r->started_early += early;
        r->next_start++;
    }
    return TG_OK;
}

/* parameter i's gradient (or zeros when it has none) into its bucket */
static tg_status take(tg_dist_reducer *r, int i)
{
    bucket *b = &r->buckets[r->bucket_of[i]];
    float *dst = b->data + r->offset[i];
    const tg_tensor *g = r->params[i]->grad;
    tg_status s = TG_OK;
    if (g)
        s = tg_copy_to(g, TG_FLOAT32, dst);
    else
        memset(dst, 0, (size_t)r->params[i]->numel * sizeof(float));
    r->ready[i] = true;
    b->n_ready++;
    return s;
}

static tg_status on_grad_ready(void *user, tg_tensor *leaf)
{
    tg_dist_reducer *r = user;
    int i = tg__hmap_get(&r->index, leaf);
    if (i < 0 || r->ready[i] || !tg__dist_multi())
        return TG_OK;
    tg_status s = take(r, i);
    return s == TG_OK ? start_ready(r, true) : s;
}

/* the averaged values back into parameter i's grad: in place when it
 * owns a float32 contiguous one, else a new tensor */
static tg_status give_back(tg_dist_reducer *r, int i)
{
    tg_tensor *p = r->params[i], *g = p->grad;
    const float *src = r->buckets[r->bucket_of[i]].data + r->offset[i];
    if (g && g->dtype == TG_FLOAT32 && tg_is_contiguous(g) && !g->requires_grad) {
        memcpy(tg__base(g), src, (size_t)g->numel * sizeof(float));
        tg__bump_version(g);
        return TG_OK;
    }
    int floor = tg__scope_suspend();
    tg_tensor *fresh = tg_from_data(TG_FLOAT32, p->ndim, p->shape, src);
    tg_status s = fresh ? tg_set_grad(p, fresh) : tg_last_status();
    tg_release(fresh);
    tg__scope_resume(floor);
    return s;
}

/* the end of a step: the buckets not started yet, every wait, the means */
static tg_status finish(tg_dist_reducer *r)
{
    static const char fn[] = "data-parallel gradient allreduce";
    tg_status s = TG_OK;
    for (int i = r->n - 1; i >= 0 && s == TG_OK; i--)
        if (!r->ready[i])
            s = take(r, i);
    if (s == TG_OK)
        s = start_ready(r, false);
    for (int k = 0; k < r->next_start && s == TG_OK; k++)
        s = tg__dist_wait(&r->buckets[k].req, fn);
    for (int k = 0; k < r->n_buckets && s == TG_OK && r->op == TG_REDUCE_MEAN; k++)
        tg__dist_scale(r->buckets[k].data, TG_FLOAT32, r->buckets[k].numel,
                       1.0 / tg_dist_world_size());
    for (int i = 0; i < r->n && s == TG_OK; i++)
        s = give_back(r, i);
    return s;
}

static tg_status on_backward_done(void *user)
{
    tg_dist_reducer *r = user;
    tg_set_backward_hooks(NULL); /* one backward per arming, as DDP's forward */
    return tg__dist_multi() ? finish(r) : TG_OK;
}

tg_status tg_dist_reducer_arm(tg_dist_reducer *r)
{
    if (!r)
        return tg__error(TG_ERR_ARG, "tg_dist_reducer_arm: reducer is NULL");
    if (!tg__dist_ready("tg_dist_reducer_arm"))
        return tg_last_status();
    memset(r->ready, 0, (size_t)r->n * sizeof *r->ready);
    for (int k = 0; k < r->n_buckets; k++) {
        r->buckets[k].n_ready = 0;
        r->buckets[k].started = false;
    }
    r->next_start = r->started_early = 0;
    tg_set_backward_hooks(&(tg_backward_hooks){on_grad_ready, on_backward_done, r});
    return TG_OK;
}

tg_status tg_dist_reducer_finish(tg_dist_reducer *r)
{
    if (!r)
        return tg__error(TG_ERR_ARG, "tg_dist_reducer_finish: reducer is NULL");
    if (!tg__dist_ready("tg_dist_reducer_finish"))
        return tg_last_status();
    return on_backward_done(r);
}
#endif
