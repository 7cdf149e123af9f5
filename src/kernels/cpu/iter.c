/* Strided elementwise iteration (see iter.h). */
#include "kernels/cpu/iter.h"
#include "core/threadpool.h"

#include <string.h>

static void broadcast_strides(const tg_tensor *t, int ndim, int64_t *out)
{
    int64_t es = (int64_t)tg__dtype_size(t->dtype);
    int lead = ndim - t->ndim;
    for (int i = 0; i < ndim; i++) {
        int j = i - lead;
        out[i] = (j < 0 || t->shape[j] == 1) ? 0 : t->strides[j] * es;
    }
}

static bool mergeable(const tg_iter *it, int outer, int inner)
{
    for (int k = 0; k < it->n_ops; k++)
        if (it->strides[k][outer] != it->strides[k][inner] * it->shape[inner])
            return false;
    return true;
}

/* drop size-1 dims and merge dims that are contiguous for every operand */
static void coalesce(tg_iter *it)
{
    int n = 0;
    for (int i = 0; i < it->ndim; i++) {
        if (it->shape[i] == 1)
            continue;
        it->shape[n] = it->shape[i];
        for (int k = 0; k < it->n_ops; k++)
            it->strides[k][n] = it->strides[k][i];
        if (n > 0 && mergeable(it, n - 1, n)) {
            it->shape[n - 1] *= it->shape[n];
            for (int k = 0; k < it->n_ops; k++)
                it->strides[k][n - 1] = it->strides[k][n];
            continue;
        }
        n++;
    }
    if (n == 0) { /* a single element */
        it->shape[0] = 1;
        for (int k = 0; k < it->n_ops; k++)
            it->strides[k][0] = 0;
        n = 1;
    }
    it->ndim = n;
}

/* every operand contiguous with t[0]'s element count (so no broadcast: the
 * shapes agree but for size-1 dims): one flat row, set up without the
 * general case's clearing and coalescing of eight dims, which cost more
 * than the op itself on the small tensors of an MLP's step */
static bool init_flat(tg_iter *it, int n_ops, const tg_tensor *const *t)
{
    for (int k = 0; k < n_ops; k++)
        if (t[k]->numel != t[0]->numel || !tg_is_contiguous(t[k]))
            return false;
    it->n_ops = n_ops;
    it->ndim = 1;
    it->numel = t[0]->numel;
    it->shape[0] = it->numel;
    for (int k = 0; k < n_ops; k++) {
        it->base[k] = tg__base(t[k]);
        it->strides[k][0] = it->numel > 1 ? (int64_t)tg__dtype_size(t[k]->dtype) : 0;
    }
    return true;
}

void tg_iter_init(tg_iter *it, int n_ops, const tg_tensor *const *t)
{
    if (init_flat(it, n_ops, t))
        return;
    memset(it, 0, sizeof *it);
    it->n_ops = n_ops;
    it->ndim = t[0]->ndim;
    memcpy(it->shape, t[0]->shape, sizeof it->shape);
    it->numel = t[0]->numel;
    for (int k = 0; k < n_ops; k++) {
        it->base[k] = tg__base(t[k]);
        broadcast_strides(t[k], it->ndim, it->strides[k]);
    }
    if (it->ndim == 0) {
        it->ndim = 1;
        it->shape[0] = 1;
    }
    coalesce(it);
}

typedef struct range_job {
    const tg_iter *it;
    tg_iter_row_fn fn;
    void *ctx;
} range_job;

/* runs the flat element range [begin, end) row by row */
static void run_range(void *arg, int64_t begin, int64_t end)
{
    const range_job *j = arg;
    const tg_iter *it = j->it;
    int nd = it->ndim, last = nd - 1;
    int64_t idx[TG_MAX_DIMS];
    char *p[TG_ITER_MAX_OPS];
    int64_t rem = begin;
    for (int i = last; i >= 0; i--) {
        idx[i] = rem % it->shape[i];
        rem /= it->shape[i];
    }
    for (int k = 0; k < it->n_ops; k++) {
        p[k] = it->base[k];
        for (int i = 0; i < nd; i++)
            p[k] += idx[i] * it->strides[k][i];
    }
    int64_t s_inner[TG_ITER_MAX_OPS];
    for (int k = 0; k < it->n_ops; k++)
        s_inner[k] = it->strides[k][last];
    int64_t pos = begin;
    while (pos < end) {
        int64_t n = it->shape[last] - idx[last];
        if (n > end - pos)
            n = end - pos;
        j->fn(p, s_inner, n, j->ctx);
        pos += n;
        /* advance the multi-index by n along the last dim, carrying */
        for (int k = 0; k < it->n_ops; k++)
            p[k] += n * s_inner[k];
        idx[last] += n;
        for (int i = last; i > 0 && idx[i] == it->shape[i]; i--) {
            idx[i] = 0;
            idx[i - 1]++;
            for (int k = 0; k < it->n_ops; k++)
                p[k] += it->strides[k][i - 1] - it->shape[i] * it->strides[k][i];
        }
    }
}

void tg_iter_run_serial(const tg_iter *it, tg_iter_row_fn fn, void *ctx)
{
    range_job j = {it, fn, ctx};
    if (it->numel > 0)
        run_range(&j, 0, it->numel);
}

void tg_iter_run(const tg_iter *it, tg_iter_row_fn fn, void *ctx)
{
    range_job j = {it, fn, ctx};
    if (it->numel >= 2 * TG_ITER_GRAIN)
        tg_parallel_for(it->numel, TG_ITER_GRAIN, run_range, &j);
    else if (it->numel > 0)
        run_range(&j, 0, it->numel);
}
