/* Free blocks of an arena (see freelist.h): a pool of blocks, two hash
 * maps by offset and a treap by (size, offset), built by split and merge
 * (expected depth O(log n); priorities from a fixed xorshift sequence, so
 * plans are reproducible). */
#include "runtime/freelist.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

static const void *key_of(int64_t off) { return (const void *)(uintptr_t)(off + 1); }

void tg__freelist_init(tg_freelist *f)
{
    memset(f, 0, sizeof *f);
    f->root = f->unused = -1;
    f->seed = 2463534242u;
}

void tg__freelist_free(tg_freelist *f)
{
    free(f->b);
    tg__hmap_free(&f->by_start);
    tg__hmap_free(&f->by_end);
    tg__freelist_init(f);
}

/* a before b in (size, offset) order */
static bool less(const tg_fblock *a, const tg_fblock *b)
{
    return a->size < b->size || (a->size == b->size && a->off < b->off);
}

/* t into (< key, >= key) */
static void split(tg_fblock *b, int t, const tg_fblock *key, int *lo, int *hi)
{
    if (t < 0) {
        *lo = *hi = -1;
    } else if (less(&b[t], key)) {
        split(b, b[t].right, key, &b[t].right, hi);
        *lo = t;
    } else {
        split(b, b[t].left, key, lo, &b[t].left);
        *hi = t;
    }
}

/* every key of l before every key of r */
static int join(tg_fblock *b, int l, int r)
{
    if (l < 0 || r < 0)
        return l < 0 ? r : l;
    if (b[l].prio > b[r].prio) {
        b[l].right = join(b, b[l].right, r);
        return l;
    }
    b[r].left = join(b, l, b[r].left);
    return r;
}

static int new_slot(tg_freelist *f)
{
    if (f->unused >= 0) {
        int i = f->unused;
        f->unused = f->b[i].left;
        return i;
    }
    if (!TG_GROW(f->b, f->cap, f->n + 1))
        return -1;
    return f->n++;
}

bool tg__freelist_insert(tg_freelist *f, const tg_fblock *blk)
{
    /* room first, so that nothing fails once the block is linked */
    if (!tg__hmap_reserve(&f->by_start, (size_t)f->count + 1) ||
        !tg__hmap_reserve(&f->by_end, (size_t)f->count + 1))
        return false;
    int i = new_slot(f);
    if (i < 0)
        return false;
    tg_fblock *b = &f->b[i];
    *b = *blk;
    f->seed ^= f->seed << 13;
    f->seed ^= f->seed >> 17;
    f->seed ^= f->seed << 5;
    b->prio = f->seed;
    b->left = b->right = -1;
    int lo, hi;
    split(f->b, f->root, b, &lo, &hi);
    f->root = join(f->b, join(f->b, lo, i), hi);
    tg__hmap_put(&f->by_start, key_of(b->off), i);
    tg__hmap_put(&f->by_end, key_of(b->off + b->size), i);
    f->count++;
    return true;
}

void tg__freelist_remove(tg_freelist *f, int i)
{
    tg_fblock *b = &f->b[i];
    tg_fblock after = *b;
    after.off++; /* the next key after b's: (size, off + 1) */
    int lo, mid, hi;
    split(f->b, f->root, b, &lo, &mid);
    split(f->b, mid, &after, &mid, &hi); /* mid is b alone */
    f->root = join(f->b, lo, hi);
    tg__hmap_del(&f->by_start, key_of(b->off));
    tg__hmap_del(&f->by_end, key_of(b->off + b->size));
    b->left = f->unused;
    f->unused = i;
    f->count--;
}

int tg__freelist_starting_at(const tg_freelist *f, int64_t off)
{
    return tg__hmap_get(&f->by_start, key_of(off));
}

int tg__freelist_ending_at(const tg_freelist *f, int64_t off)
{
    return tg__hmap_get(&f->by_end, key_of(off));
}

/* in (size, offset) order from the first block of at least size bytes */
static int fit(const tg_freelist *f, int t, int64_t size,
               bool (*ok)(const void *, const tg_fblock *), const void *ctx)
{
    while (t >= 0) {
        const tg_fblock *b = &f->b[t];
        if (b->size < size) { /* b and its left subtree are too small */
            t = b->right;
            continue;
        }
        int r = fit(f, b->left, size, ok, ctx);
        if (r >= 0)
            return r;
        if (!ok || ok(ctx, b))
            return t;
        t = b->right;
    }
    return -1;
}

int tg__freelist_best_fit(const tg_freelist *f, int64_t size,
                          bool (*ok)(const void *ctx, const tg_fblock *b), const void *ctx)
{
    return fit(f, f->root, size, ok, ctx);
}
