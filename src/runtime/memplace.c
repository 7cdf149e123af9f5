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

#define MAX_BUFFERS 2048

typedef struct buffer {
    int64_t size, off;
    int start, end; /* steps: produced, last touched */
    int first;      /* the value it was made for (others took it in place) */
} buffer;

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

/* places b[0..n) (sorted by size): sets off, returns the arena's size */
static int64_t place_all(buffer *b, int n, buffer **scratch)
{
    int64_t top = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < i; j++)
            if (overlap_in_time(&b[i], &b[j]))
                scratch[k++] = &b[j];
        qsort(scratch, (size_t)k, sizeof *scratch, by_off);
        int64_t off = 0;
        for (int j = 0; j < k; j++) {
            if (scratch[j]->off - off >= b[i].size)
                break; /* fits in the gap before it */
            if (scratch[j]->off + scratch[j]->size > off)
                off = scratch[j]->off + scratch[j]->size;
        }
        b[i].off = off;
        if (off + b[i].size > top)
            top = off + b[i].size;
    }
    return top;
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
    int64_t top = -1;
    if (!index || !root || !b || !scratch)
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
    top = place_all(b, nb, scratch);
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
    return top;
}
