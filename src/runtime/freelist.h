/* The free blocks of a memory plan's arena (memplan.c), kept so that every
 * operation is O(log n): by start and by end offset (hash maps: the
 * neighbours a freed block merges with, the block at the arena's top) and
 * by (size, offset) in a treap (best fit: the smallest block that is large
 * enough, the lowest offset among equals). Internal. */
#ifndef TG_RUNTIME_FREELIST_H
#define TG_RUNTIME_FREELIST_H

#include "util/hmap.h"

#include <stdbool.h>
#include <stdint.h>

#define TG_FREE_MAX_WAIT 16

typedef struct tg_fblock {
    int64_t off, size;
    int n_wait;
    int wait[TG_FREE_MAX_WAIT]; /* parallel plans: steps that must be ancestors */
    int left, right;            /* the treap's children (-1: none) */
    uint32_t prio;
} tg_fblock;

typedef struct tg_freelist {
    tg_fblock *b; /* the pool; removed blocks are chained through .left */
    int n, cap, unused;
    int root;
    tg_hmap by_start, by_end; /* offset + 1 (as a key) -> block */
    uint32_t seed;
    int count;
} tg_freelist;

void tg__freelist_init(tg_freelist *f);
void tg__freelist_free(tg_freelist *f);
/* adds a copy of blk (its off, size and wait set); false when out of memory */
bool tg__freelist_insert(tg_freelist *f, const tg_fblock *blk);
void tg__freelist_remove(tg_freelist *f, int i);
/* the block starting (ending) exactly at off, or -1 */
int tg__freelist_starting_at(const tg_freelist *f, int64_t off);
int tg__freelist_ending_at(const tg_freelist *f, int64_t off);
/* the smallest block of at least size bytes (the lowest offset among
 * equal sizes) that ok accepts, or -1. ok may be NULL (any block). */
int tg__freelist_best_fit(const tg_freelist *f, int64_t size,
                          bool (*ok)(const void *ctx, const tg_fblock *b), const void *ctx);

#endif
