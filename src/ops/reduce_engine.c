/* The reduction engine: plans the loops of a reduction over any axes of a
 * strided tensor (row loops when the reduced elements are nearest in
 * memory, column loops when kept ones are) and spreads the outputs, or,
 * when there are few, the reduced elements too, over the thread pool. */
#include "core/threadpool.h"
#include "kernels/cpu/iter.h"
#include "ops/reduce.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK 256       /* row mode: outputs whose accumulators are batched */
#define VBLOCK 2048     /* column mode: accumulators updated as one vector */
#define ACC_MAX 16      /* bytes of the largest accumulator */
#define MIN_SPLIT 4096  /* fewest reduced elements worth a thread of their own */

/* The loops: kept dims in output (C) order, reduced dims by decreasing
 * stride, both with size-1 dims dropped and mergeable neighbours merged;
 * each list has at least one dim (a dummy of size 1 when empty). */
typedef struct plan {
    int nk, nr;
    int64_t ks[TG_MAX_DIMS], kx[TG_MAX_DIMS]; /* kept: size, x stride (bytes) */
    int64_t ko[TG_MAX_DIMS];                  /* kept: out stride (elements) */
    int64_t rs[TG_MAX_DIMS], rx[TG_MAX_DIMS]; /* reduced: size, x stride */
    int64_t n_out, n_red;
    const char *xb;
    int v;   /* column mode: the kept dim updated as a vector; -1: row mode */
    int nro; /* row mode: leading reduced dims with strides above the kept */
} plan;

static void add_dim(int *n, int64_t *size, int64_t *stride, int64_t sz, int64_t st)
{
    if (*n > 0 && stride[*n - 1] == st * sz) { /* previous = outer of this */
        size[*n - 1] *= sz;
        stride[*n - 1] = st;
        return;
    }
    size[*n] = sz;
    stride[*n] = st;
    (*n)++;
}

static void make_plan(const tg_tensor *x, const bool *mask, plan *P)
{
    int64_t es = (int64_t)tg_dtype_size(x->dtype);
    int order[TG_MAX_DIMS], n = 0;
    P->nk = P->nr = 0;
    P->n_out = P->n_red = 1;
    for (int i = 0; i < x->ndim; i++) {
        if (mask[i]) {
            P->n_red *= x->shape[i];
            if (x->shape[i] != 1)
                order[n++] = i;
        } else {
            P->n_out *= x->shape[i];
            if (x->shape[i] != 1)
                add_dim(&P->nk, P->ks, P->kx, x->shape[i], x->strides[i] * es);
        }
    }
    /* reduced dims by decreasing stride (stable), so the walk follows memory */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && x->strides[order[j]] > x->strides[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < n; i++)
        add_dim(&P->nr, P->rs, P->rx, x->shape[order[i]], x->strides[order[i]] * es);
    bool real_kept = P->nk > 0;
    if (P->nk == 0)
        add_dim(&P->nk, P->ks, P->kx, 1, 0);
    if (P->nr == 0)
        add_dim(&P->nr, P->rs, P->rx, 1, 0);
    tg__contiguous_strides(P->nk, P->ks, P->ko);
    P->xb = tg__base(x);
    P->v = -1;
    P->nro = 0;
    if (real_kept) {
        int v = 0;
        for (int i = 1; i < P->nk; i++)
            if (P->kx[i] < P->kx[v])
                v = i;
        if (P->n_red == 1 || P->kx[v] < P->rx[P->nr - 1])
            P->v = v;
        else
            while (P->rx[P->nro] > P->kx[v])
                P->nro++; /* stops before the last: its stride is smaller */
    }
}

/* ---- walking reduced elements: an odometer over n dims of the plan -------- */
typedef struct walk {
    const int64_t *size, *stride; /* stride in bytes */
    int n;
    int64_t idx[TG_MAX_DIMS];
    int64_t off; /* bytes */
} walk;

/* a walk over dims [d0, d1) of the reduced dims, at flat index r */
static void walk_init(walk *w, const plan *P, int d0, int d1, int64_t r)
{
    w->size = P->rs + d0;
    w->stride = P->rx + d0;
    w->n = d1 - d0;
    w->off = 0;
    if (r == 0) { /* the common case, without divisions */
        memset(w->idx, 0, sizeof w->idx);
        return;
    }
    for (int i = w->n - 1; i >= 0; i--) {
        w->idx[i] = w->size[i] ? r % w->size[i] : 0;
        r = w->size[i] ? r / w->size[i] : 0;
        w->off += w->idx[i] * w->stride[i];
    }
}

/* elements left in the current run of the innermost dim */
static int64_t walk_run(const walk *w) { return w->size[w->n - 1] - w->idx[w->n - 1]; }

/* n steps along the innermost dim, carrying into outer ones */
static void walk_step(walk *w, int64_t n)
{
    int last = w->n - 1;
    w->idx[last] += n;
    w->off += n * w->stride[last];
    for (int i = last; i > 0 && w->idx[i] == w->size[i]; i--) {
        w->off += w->stride[i - 1] - w->size[i] * w->stride[i];
        w->idx[i] = 0;
        w->idx[i - 1]++;
    }
}

/* ---- tasks ---------------------------------------------------------------------- */
typedef struct job {
    const plan *P;
    const tg_red_fns *F;
    tg_fin_args fa;
    const double *prm;
    char *out;
    tg_dtype odt;
    int64_t oes;
    int64_t nb;      /* column mode: blocks per vector */
    int64_t n_split; /* pieces the reduced elements are split into */
    char *partial;   /* n_split x n_out accumulators when split */
} job;

/* n accumulators of outputs o0, o0 + os, ... to the output or, when the
 * reduction is split, to piece k's partial results */
static void emit(const job *J, const void *acc, int64_t o0, int64_t n,
                 int64_t os, int64_t k)
{
    size_t as = J->F->acc_size;
    if (J->partial) {
        char *dst = J->partial + (size_t)(k * J->P->n_out + o0) * as;
        for (int64_t j = 0; j < n; j++)
            memcpy(dst + (size_t)(j * os) * as, (const char *)acc + j * as, as);
        return;
    }
    J->F->finish(acc, J->out + o0 * J->oes, J->odt, n, os,
                 J->prm ? J->prm + o0 : NULL, os, &J->fa);
}

/* row mode: outputs [ob, oe), each over reduced elements [rb, re). When
 * the whole reduction is done at once, reduced dims with strides above the
 * kept ones (N of [N, C, H, W] over N, H, W) loop outside the outputs, so
 * memory is read in order. */
static void run_rows(const job *J, int64_t ob, int64_t oe, int64_t rb,
                     int64_t re, int64_t k)
{
    const plan *P = J->P;
    _Alignas(64) unsigned char acc[BLOCK * ACC_MAX];
    int64_t koff[BLOCK];
    size_t as = J->F->acc_size;
    int nro = rb == 0 && re == P->n_red ? P->nro : 0;
    int64_t n_ri = 1;
    for (int i = nro; i < P->nr; i++)
        n_ri *= P->rs[i];
    int64_t n_ro = n_ri ? P->n_red / n_ri : 0, stride = P->rx[P->nr - 1];
    if (nro == 0) { /* one pass over [rb, re) */
        n_ro = 1;
        n_ri = re - rb;
    }
    /* the reduced elements of an output (in one pass over [rb, re) or per
     * outer index) are one run of the innermost reduced dim */
    bool rows_at_once = J->F->inner_rows && P->nr - nro == 1 &&
                        (!J->F->rows_from_zero || (nro == 0 && rb == 0));
    int64_t kidx[TG_MAX_DIMS], kpos = 0, rem = ob;
    for (int i = P->nk - 1; i >= 0; i--) {
        kidx[i] = rem % P->ks[i];
        rem /= P->ks[i];
        kpos += kidx[i] * P->kx[i];
    }
    for (int64_t o0 = ob; o0 < oe; o0 += BLOCK) {
        int64_t nb = oe - o0 < BLOCK ? oe - o0 : BLOCK;
        if (P->nk == 1) { /* one kept dim: offsets in steps */
            for (int64_t j = 0; j < nb; j++)
                koff[j] = kpos + j * P->kx[0];
            kpos += nb * P->kx[0];
        }
        for (int64_t j = 0; P->nk > 1 && j < nb; j++) { /* the outputs' offsets in x */
            koff[j] = kpos;
            for (int i = P->nk - 1; i >= 0; i--) {
                kpos += P->kx[i];
                if (++kidx[i] < P->ks[i])
                    break;
                kpos -= P->ks[i] * P->kx[i];
                kidx[i] = 0;
            }
        }
        J->F->init(acc, nb);
        walk wo;
        walk_init(&wo, P, 0, nro ? nro : 1, 0);
        for (int64_t ro = 0; ro < n_ro; ro++) {
            int64_t base = nro ? wo.off : 0, r0 = nro ? ro * n_ri : rb;
            if (rows_at_once) { /* each output's elements one run: all at once */
                J->F->inner_rows(acc, P->xb + base + (nro ? 0 : rb * stride), koff, nb, n_ri,
                                 stride, J->prm ? J->prm + o0 : NULL);
                if (nro)
                    walk_step(&wo, 1);
                continue;
            }
            for (int64_t j = 0; j < nb; j++) {
                double prm = J->prm ? J->prm[o0 + j] : 0.0;
                walk w;
                walk_init(&w, P, nro, P->nr, nro ? 0 : rb);
                for (int64_t r = 0; r < n_ri;) {
                    int64_t n = walk_run(&w);
                    if (n > n_ri - r)
                        n = n_ri - r;
                    J->F->inner(acc + j * as, P->xb + koff[j] + base + w.off, n,
                                stride, r0 + r, prm);
                    r += n;
                    walk_step(&w, n);
                }
            }
            if (nro)
                walk_step(&wo, 1);
        }
        emit(J, acc, o0, nb, 1, k);
    }
}

/* column mode: task t is one block of the vector dim at one index of the
 * other kept dims; its accumulators take reduced elements [rb, re) */
static void run_block(const job *J, int64_t t, int64_t rb, int64_t re, int64_t k)
{
    const plan *P = J->P;
    int v = P->v, last = P->nr - 1;
    int64_t q = t / J->nb, j0 = (t % J->nb) * VBLOCK;
    int64_t nv = P->ks[v] - j0 < VBLOCK ? P->ks[v] - j0 : VBLOCK;
    int64_t xoff = j0 * P->kx[v], o0 = j0 * P->ko[v];
    for (int i = P->nk - 1; i >= 0; i--) {
        if (i == v)
            continue;
        xoff += (q % P->ks[i]) * P->kx[i];
        o0 += (q % P->ks[i]) * P->ko[i];
        q /= P->ks[i];
    }
    _Alignas(64) unsigned char acc[VBLOCK * ACC_MAX];
    double prm[VBLOCK];
    if (J->prm)
        for (int64_t j = 0; j < nv; j++)
            prm[j] = J->prm[o0 + j * P->ko[v]];
    J->F->init(acc, nv);
    walk w;
    walk_init(&w, P, 0, P->nr, rb);
    for (int64_t r = rb; r < re;) {
        int64_t n = walk_run(&w);
        if (n > re - r)
            n = re - r;
        J->F->outer(acc, P->xb + xoff + w.off, nv, P->kx[v], n, P->rx[last], r,
                    J->prm ? prm : NULL);
        r += n;
        walk_step(&w, n);
    }
    emit(J, acc, o0, nv, P->ko[v], k);
}

static void run_items(void *ctx, int64_t b, int64_t e)
{
    const job *J = ctx;
    const plan *P = J->P;
    int64_t ns = J->n_split;
    if (ns == 1 && P->v < 0) {
        run_rows(J, b, e, 0, P->n_red, 0);
        return;
    }
    for (int64_t i = b; i < e; i++) {
        int64_t t = i / ns, k = i % ns;
        int64_t rb = P->n_red * k / ns, re = P->n_red * (k + 1) / ns;
        if (P->v < 0)
            run_rows(J, t, t + 1, rb, re, k);
        else
            run_block(J, t, rb, re, k);
    }
}

/* few outputs, many reduced elements: pieces of the reduction in parallel,
 * then their partial results combined in order */
static tg_status run_split(job *J, int64_t n_tasks, int64_t ns)
{
    const plan *P = J->P;
    size_t as = J->F->acc_size;
    J->partial = malloc((size_t)(ns * P->n_out) * as);
    if (!J->partial)
        return tg__error(TG_ERR_NOMEM, "reduce: out of memory for %lld partial "
                         "results", (long long)(ns * P->n_out));
    J->n_split = ns;
    tg_parallel_for(n_tasks * ns, 1, run_items, J);
    for (int64_t k = 1; k < ns; k++)
        J->F->combine(J->partial, J->partial + (size_t)(k * P->n_out) * as, P->n_out);
    J->F->finish(J->partial, J->out, J->odt, P->n_out, 1, J->prm, 1, &J->fa);
    free(J->partial);
    J->partial = NULL;
    return TG_OK;
}

tg_status tg__reduce(const tg_tensor *x, const bool *mask,
                     const tg_red_spec *spec, tg_tensor *out)
{
    const tg_red_fns *F = tg__red_fns(spec->kind, x->dtype);
    if (!F)
        return tg__error(TG_ERR_INTERNAL, "reduce: kind %d does not support %s",
                         (int)spec->kind, tg_dtype_name(x->dtype));
    if (out->numel == 0)
        return TG_OK;
    plan P;
    make_plan(x, mask, &P);
    job J = {.P = &P, .F = F, .fa = {spec->fin, spec->div}, .prm = spec->prm,
             .out = tg__base(out), .odt = out->dtype,
             .oes = (int64_t)tg_dtype_size(out->dtype), .nb = 1, .n_split = 1};
    int64_t n_tasks = P.n_out, per_task = P.n_red;
    if (P.v >= 0) {
        int64_t V = P.ks[P.v];
        J.nb = (V + VBLOCK - 1) / VBLOCK;
        n_tasks = P.n_out / V * J.nb;
        per_task = P.n_red * (V < VBLOCK ? V : VBLOCK);
    }
    if (per_task < 1)
        per_task = 1;
    int threads = tg_get_num_threads();
    if (threads <= 1 || tg_in_parallel_region() ||
        n_tasks * per_task < 2 * TG_ITER_GRAIN) {
        run_items(&J, 0, n_tasks);
        return TG_OK;
    }
    int64_t ns = (threads + n_tasks - 1) / n_tasks;
    if (ns > P.n_red / MIN_SPLIT)
        ns = P.n_red / MIN_SPLIT;
    if (n_tasks >= threads || ns <= 1) {
        int64_t grain = TG_ITER_GRAIN / per_task;
        tg_parallel_for(n_tasks, grain < 1 ? 1 : grain, run_items, &J);
        return TG_OK;
    }
    return run_split(&J, n_tasks, ns);
}
