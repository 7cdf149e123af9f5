/* The one hash map (see hmap.h): FNV-1a over string bytes, a multiplicative
 * (Fibonacci) hash for pointers, linear probing, deletion by moving back. */
#include "util/hmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash_key(const tg_hmap *m, const void *key)
{
    uint64_t h;
    if (m->strings) {
        h = 1469598103934665603ull; /* FNV-1a */
        for (const unsigned char *s = key; *s; s++)
            h = (h ^ *s) * 1099511628211ull;
    } else {
        /* the high bits of the product mix every bit of the address */
        h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    return (size_t)h & (m->cap - 1);
}

static bool key_eq(const tg_hmap *m, const void *a, const void *b)
{
    return a == b || (m->strings && strcmp(a, b) == 0);
}

/* the slot holding key, or the empty slot where it would go (cap > 0) */
static size_t probe(const tg_hmap *m, const void *key)
{
    size_t i = hash_key(m, key);
    while (m->keys[i] && !key_eq(m, m->keys[i], key))
        i = (i + 1) & (m->cap - 1);
    return i;
}

int tg__hmap_get(const tg_hmap *m, const void *key)
{
    if (m->cap == 0 || !key)
        return -1;
    size_t i = probe(m, key);
    return m->keys[i] ? m->vals[i] : -1;
}

bool tg__hmap_reserve(tg_hmap *m, size_t n)
{
    if (2 * n <= m->cap) /* keep the load at most 1/2 */
        return true;
    size_t cap = m->cap ? m->cap : 16;
    while (cap < 2 * n)
        cap *= 2;
    tg_hmap g = {calloc(cap, sizeof *g.keys), malloc(cap * sizeof *g.vals), cap, 0,
                 m->strings};
    if (!g.keys || !g.vals) {
        free(g.keys);
        free(g.vals);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t j = probe(&g, m->keys[i]);
            g.keys[j] = m->keys[i];
            g.vals[j] = m->vals[i];
            g.n++;
        }
    free(m->keys);
    free(m->vals);
    *m = g;
    return true;
}

bool tg__hmap_put(tg_hmap *m, const void *key, int val)
{
    if (!tg__hmap_reserve(m, m->n + 1))
        return false;
    size_t i = probe(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->n++;
    }
    m->vals[i] = val;
    return true;
}

/* Deletion without tombstones: the entries after the hole in its probe
 * run move back into it when their home slot does not lie between the
 * hole and where they are (Knuth's algorithm R). */
void tg__hmap_del(tg_hmap *m, const void *key)
{
    if (m->cap == 0 || !key)
        return;
    size_t mask = m->cap - 1, hole = probe(m, key);
    if (!m->keys[hole])
        return;
    m->keys[hole] = NULL;
    m->n--;
    for (size_t j = (hole + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        size_t home = hash_key(m, m->keys[j]);
        bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays)
            continue;
        m->keys[hole] = m->keys[j];
        m->vals[hole] = m->vals[j];
        m->keys[j] = NULL;
        hole = j;
    }
}

void tg__hmap_free(tg_hmap *m)
{
    free(m->keys);
    free(m->vals);
    *m = (tg_hmap){.strings = m->strings};
}
