/* Offline placement of a serial plan's arena (greedy by size, as
 * TensorFlow Lite's arena planner does): every buffer's life is known
 * before anything is placed, so the largest buffers go first, each at the
 * lowest offset where it overlaps no buffer alive at the same time. The
 * online best-fit walk (memplan.c) must place a buffer before it knows
 * what comes later, and a big late buffer then often finds only small
 * holes and goes on top: in LeNet's training step the gradient of the
 * first pooling layer (1.2 MB) did. The planner keeps whichever of the two
 * arenas is smaller. Quadratic in the number of buffers, so used up to
 * MAX_BUFFERS of them. */
#include "runtime/runtime_impl.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BUFFERS 2048

typedef struct buffer {
    int64_t size, off;
    int start, end; /* steps: produced, last touched */
    int first;      /* the value it was made for (others took it in place) */
} buffer;

/* the first order tried: largest first, then earliest */
static int by_size_desc(const void *a, const void *b)
{
    const buffer *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return (x->start > y->start) - (x->start < y->start);
}

static int by_off(const void *a, const void *b)
{
    const buffer *x = *(buffer *const *)a, *y = *(buffer *const *)b;
    return (x->off > y->off) - (x->off < y->off);
}

static bool overlap_in_time(const buffer *a, const buffer *b)
{
    return a->start <= b->end && b->start <= a->end;
}

/* places the buffers in the given order (indices into b), each at the
 * lowest offset where it overlaps no buffer placed before it that is
 * alive at the same time: sets off, returns the arena's size */
static int64_t place_all(buffer *b, const int *order, int n, buffer **scratch)
{
    int64_t top = 0;
    for (int i = 0; i < n; i++) {
        buffer *x = &b[order[i]];
        int k = 0;
        for (int j = 0; j < i; j++)
            if (overlap_in_time(x, &b[order[j]]))
                scratch[k++] = &b[order[j]];
        qsort(scratch, (size_t)k, sizeof *scratch, by_off);
        int64_t off = 0;
        for (int j = 0; j < k; j++) {
            if (scratch[j]->off - off >= x->size)
                break; /* fits in the gap before it */
            if (scratch[j]->off + scratch[j]->size > off)
                off = scratch[j]->off + scratch[j]->size;
        }
        x->off = off;
        if (off + x->size > top)
            top = off + x->size;
    }
    return top;
}

/* no placement is smaller than the most bytes alive at one step */
static int64_t lower_bound(const buffer *b, int n)
{
    int steps = 0;
    for (int i = 0; i < n; i++)
        steps = b[i].end + 1 > steps ? b[i].end + 1 : steps;
    int64_t *d = calloc((size_t)steps + 2, sizeof *d), live = 0, most = 0;
    if (!d)
        return 0;
    for (int i = 0; i < n; i++) {
        d[b[i].start] += b[i].size;
        d[b[i].end + 1] -= b[i].size;
    }
    for (int k = 0; k <= steps; k++) {
        live += d[k];
        most = live > most ? live : most;
    }
    free(d);
    return most;
}

/* Largest first is not always enough: in LeNet's training step at level 2
 * the pooling gradient (1.2 MB) took the place of the first activation
 * (same size, dead long before), leaving the gradient's input, whose
 * life overlaps the pooled values', only room at the top: 19% above the
 * bytes alive at the peak. When the first placement is above that bound,
 * a local search over the order (move one buffer elsewhere in the order,
 * keep the result unless the arena grows; a fixed pseudo-random sequence,
 * so plans are reproducible) runs for a budget of about SEARCH_WORK
 * buffer comparisons, and the best order wins. */
#define SEARCH_WORK ((int64_t)1 << 24)
#define SEARCH_MAX_TRIES 4000

static int64_t search(buffer *b, int n, int *order, int64_t top, buffer **scratch)
{
    int64_t bound = lower_bound(b, n);
    int64_t tries = n > 1 ? SEARCH_WORK / ((int64_t)n * n) : 0;
    int *cand = malloc((size_t)n * sizeof *cand + 1);
    if (!cand || top <= bound) {
        free(cand);
        return top;
    }
    if (tries > SEARCH_MAX_TRIES)
        tries = SEARCH_MAX_TRIES;
    uint32_t seed = 2463534242u;
    for (int64_t t = 0; t < tries && top > bound; t++) {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        int from = (int)(seed % (uint32_t)n), to = (int)((seed >> 16) % (uint32_t)n);
        if (from == to)
            continue;
        memcpy(cand, order, (size_t)n * sizeof *cand);
        int moved = cand[from];
        if (from < to)
            memmove(cand + from, cand + from + 1, (size_t)(to - from) * sizeof *cand);
        else
            memmove(cand + to + 1, cand + to, (size_t)(from - to) * sizeof *cand);
        cand[to] = moved;
        int64_t c = place_all(b, cand, n, scratch);
        if (c <= top) {
            top = c;
            memcpy(order, cand, (size_t)n * sizeof *cand);
        }
    }
    free(cand);
    return place_all(b, order, n, scratch); /* the offsets of the order kept */
}

/* the buffer each arena value lives in: in-place outputs share their
 * input's, back to the first value of the chain (an input's id is smaller
 * than its reader's outputs', so one pass in id order finds them all) */
static void roots(const tg_memplan *m, int nv, int *root)
{
    for (int v = 0; v < nv; v++)
        root[v] = m->inplace_of[v] >= 0 ? root[m->inplace_of[v]] : v;
}

int64_t tg__memplan_offline(const tg_plan *p, const int *prod, const int *last,
                            const int64_t *bytes, int64_t *offset, int *n_reused)
{
    const tg_memplan *m = &p->mem;
    int nv = p->n_values, nb = 0;
    int *index = malloc(((size_t)nv + 1) * sizeof *index);
    int *root = malloc(((size_t)nv + 1) * sizeof *root);
    buffer *b = malloc(((size_t)nv + 1) * sizeof *b);
    buffer **scratch = malloc(((size_t)nv + 1) * sizeof *scratch);
    int *order = calloc((size_t)nv + 1, sizeof *order);
    int64_t top = -1;
    if (!index || !root || !b || !scratch || !order)
        goto done;
    roots(m, nv, root);
    for (int v = 0; v < nv; v++) {
        index[v] = -1;
        if (m->kind[v] == TG_MEM_ARENA && m->inplace_of[v] < 0)
            b[index[v] = nb++] = (buffer){bytes[v], 0, prod[v], last[v], v};
    }
    if (nb > MAX_BUFFERS)
        goto done;
    for (int v = 0; v < nv; v++) /* a chain lives until its last value dies */
        if (m->kind[v] == TG_MEM_ARENA && m->inplace_of[v] >= 0) {
            buffer *r = &b[index[root[v]]];
            if (last[v] > r->end)
                r->end = last[v];
        }
    qsort(b, (size_t)nb, sizeof *b, by_size_desc);
    for (int i = 0; i < nb; i++)
        order[i] = i;
    top = search(b, nb, order, place_all(b, order, nb, scratch), scratch);
    *n_reused = 0;
    for (int i = 0; i < nb; i++) {
        index[b[i].first] = i;
        bool reused = false; /* memory a buffer dead before it used */
        for (int j = 0; j < nb && !reused; j++)
            reused = b[j].end < b[i].start && b[j].off < b[i].off + b[i].size &&
                     b[i].off < b[j].off + b[j].size;
        *n_reused += reused;
    }
    for (int v = 0; v < nv; v++)
        if (m->kind[v] == TG_MEM_ARENA)
            offset[v] = b[index[root[v]]].off;
done:
    free(index);
    free(root);
    free(b);
    free(scratch);
    free(order);
    return top;
}
