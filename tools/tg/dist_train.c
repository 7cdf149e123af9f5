/* Data-parallel `tg train --distributed` (see dist_train.h). Why the
 * losses equal single-process training's: rank r of N takes rows
 * [r*B/N, (r+1)*B/N) of the global batch of B rows and scales its mean
 * loss by its n_r/B rows, so the SUM over ranks of its gradients is the
 * gradient of the global mean loss, even when B is not a multiple of N
 * (the last batch of an epoch); the printed loss is the same sum. */
#include "dist_train.h"

#include <math.h>
#include <stdio.h>

bool dist_begin(train_opts *o)
{
    if (tg_dist_init() != TG_OK) {
        fprintf(stderr, "tg: --distributed: %s\n", tg_last_error());
        return false;
    }
    if (tg_dist_rank() != 0)
        o->quiet = true; /* rank 0 alone reports */
    return true;
}

void dist_end(void)
{
    if (tg_dist_finalize() != TG_OK)
        fprintf(stderr, "tg: rank %d: leaving the MPI world: %s\n", tg_dist_rank(),
                tg_last_error());
}

int dist_serve(void)
{
    tg_status st = tg_dist_serve();
    if (st != TG_OK)
        fprintf(stderr, "tg: rank %d: serving rank 0: %s\n", tg_dist_rank(), tg_last_error());
    dist_end();
    return st == TG_OK ? 0 : 1;
}

bool dist_is_root(void)
{
    return tg_dist_rank() == 0;
}

tg_dataset *dist_open_data(const char *dir, bool train, bool quiet, int64_t limit)
{
    tg_dataset *d = NULL;
    if (dist_is_root() && !(d = lenet_open_data(dir, train, quiet, limit)))
        fprintf(stderr, "tg: %s\n", tg_last_error());
    /* the others open what rank 0 fetched (or fail with it: a lost rank 0
     * or its failure ends the barrier) */
    int ok = dist_is_root() ? d != NULL : 1;
    tg_tensor *flag = tg_full(TG_INT32, 1, (int64_t[]){1}, ok);
    tg_status s = flag ? tg_dist_allreduce(flag, TG_REDUCE_MIN) : tg_last_status();
    bool all_ok = s == TG_OK && tg_item(flag) == 1;
    tg_release(flag);
    if (!all_ok) {
        if (s != TG_OK)
            fprintf(stderr, "tg: %s\n", tg_last_error());
        tg_dataset_free(d);
        return NULL;
    }
    if (!d && !(d = lenet_open_data(dir, train, true, limit)))
        fprintf(stderr, "tg: rank %d: %s\n", tg_dist_rank(), tg_last_error());
    return d;
}

tg_status dist_sync_model(tg_module *model)
{
    tg_named_tensor *state;
    int n = tg_module_state(model, &state);
    if (n < 0)
        return tg_last_status();
    tg_status s = TG_OK;
    for (int i = 0; i < n && s == TG_OK; i++)
        s = tg_dist_broadcast(state[i].tensor, 0);
    tg_named_tensors_free(state);
    return s;
}

tg_dist_reducer *dist_reducer(tg_module *model, int bucket_kb)
{
    tg_named_tensor *params;
    int n = tg_module_parameters(model, &params);
    if (n < 0)
        return NULL;
    tg_tensor *p[64];
    for (int i = 0; i < n && i < 64; i++)
        p[i] = params[i].tensor;
    tg_dist_reducer *r = n <= 64 ? tg_dist_reducer_new(n, p, (size_t)bucket_kb * 1024,
                                                       TG_REDUCE_SUM)
                                 : NULL;
    tg_named_tensors_free(params);
    return r;
}

/* this rank's rows of a global batch of b rows */
static void my_rows(int64_t b, int64_t *start, int64_t *stop)
{
    int64_t rank = tg_dist_rank(), size = tg_dist_world_size();
    *start = b * rank / size;
    *stop = b * (rank + 1) / size;
}

tg_status dist_step(trainer *t, tg_tensor *x, tg_tensor *y, double *loss)
{
    int64_t b = tg_size(x, 0), start, stop;
    my_rows(b, &start, &stop);
    tg_status s = tg_dist_reducer_arm(t->reducer);
    tg_tensor *part = tg_zeros(TG_FLOAT64, 1, (int64_t[]){1});
    if (s == TG_OK && stop > start) {
        tg_tensor *xs = tg_slice(x, 0, start, stop, 1), *ys = tg_slice(y, 0, start, stop, 1);
        tg_tensor *l = tg_cross_entropy(tg_module_forward(t->model, xs), ys, TG_REDUCTION_MEAN);
        l = tg_mul_scalar(l, (double)(stop - start) / (double)b);
        s = l ? tg_backward(l, NULL, false) : tg_last_status(); /* the reducer sums */
        if (s == TG_OK)
            s = tg_fill_(part, tg_item(l));
    } else if (s == TG_OK) {
        s = tg_dist_reducer_finish(t->reducer); /* no rows here: zeros */
    }
    if (s == TG_OK)
        s = tg_dist_allreduce(part, TG_REDUCE_SUM);
    if (s == TG_OK && isfinite(*loss = tg_item(part)))
        s = tg_optim_step(t->opt);
    tg_optim_zero_grad(t->opt);
    return s;
}
