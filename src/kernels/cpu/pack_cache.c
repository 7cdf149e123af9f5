/* Packed forms of frozen weights kept between calls (pack_cache.h). A
 * small table under one mutex: entries are found by their whole key,
 * counted while a caller uses them, and the least recently used ones with
 * no user are freed when the total would pass PACK_CACHE_BYTES. A storage
 * that goes away leaves its entries behind until they are evicted: its
 * serial is never reused, so they are never found again. */
#include "kernels/cpu/pack_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PACK_CACHE_ENTRIES 256
#define PACK_CACHE_BYTES ((size_t)128 << 20)

struct tg__pack_entry {
    tg__pack_key key;
    void *buf;
    size_t bytes;
    int users;
    bool ready; /* packed by its first user (tg__pack_cache_release) */
    uint64_t used; /* the clock at the last use */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static tg__pack_entry table[PACK_CACHE_ENTRIES];
static size_t total;
static uint64_t clock_now;

static bool same_key(const tg__pack_key *a, const tg__pack_key *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* frees unused entries, least recently used first, until bytes more fit
 * and a slot is free; the free slot, or NULL */
static tg__pack_entry *make_room(size_t bytes)
{
    for (;;) {
        tg__pack_entry *slot = NULL, *old = NULL;
        for (int i = 0; i < PACK_CACHE_ENTRIES; i++) {
            tg__pack_entry *e = &table[i];
            if (!e->buf)
                slot = slot ? slot : e;
            else if (e->users == 0 && (!old || e->used < old->used))
                old = e;
        }
        if (slot && total + bytes <= PACK_CACHE_BYTES)
            return slot;
        if (!old)
            return NULL;
        total -= old->bytes;
        free(old->buf);
        memset(old, 0, sizeof *old);
    }
}

void *tg__pack_cache_get(const tg__pack_key *key, size_t bytes, bool *ready,
                         tg__pack_entry **entry)
{
    *entry = NULL;
    *ready = false;
    if (bytes == 0 || bytes > PACK_CACHE_BYTES / 4)
        return NULL;
    pthread_mutex_lock(&mu);
    void *buf = NULL;
    for (int i = 0; i < PACK_CACHE_ENTRIES && !buf; i++) {
        tg__pack_entry *e = &table[i];
        if (e->buf && e->ready && same_key(&e->key, key)) {
            e->users++;
            e->used = ++clock_now;
            *entry = e;
            *ready = true;
            buf = e->buf;
        }
    }
    if (!buf) {
        /* not there (or being packed by another caller: it packs its own) */
        tg__pack_entry *e = make_room(bytes);
        size_t rounded = (bytes + 63) / 64 * 64;
        void *mem = e ? aligned_alloc(64, rounded) : NULL;
        if (mem) {
            *e = (tg__pack_entry){.key = *key, .buf = mem, .bytes = rounded, .users = 1,
                                  .ready = false, .used = ++clock_now};
            total += rounded;
            *entry = e;
            buf = mem;
        }
    }
    pthread_mutex_unlock(&mu);
    return buf;
}

void tg__pack_cache_release(tg__pack_entry *entry, bool packed)
{
    if (!entry)
        return;
    pthread_mutex_lock(&mu);
    entry->users--;
    if (!entry->ready && !packed) { /* the packing failed: nobody may use it */
        total -= entry->bytes;
        free(entry->buf);
        memset(entry, 0, sizeof *entry);
    } else {
        entry->ready = true;
    }
    pthread_mutex_unlock(&mu);
}

void tg__pack_cache_clear(void)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < PACK_CACHE_ENTRIES; i++)
        if (table[i].buf && table[i].users == 0) {
            total -= table[i].bytes;
            free(table[i].buf);
            memset(&table[i], 0, sizeof table[i]);
        }
    pthread_mutex_unlock(&mu);
}

size_t tg__pack_cache_bytes(void)
{
    pthread_mutex_lock(&mu);
    size_t b = total;
    pthread_mutex_unlock(&mu);
    return b;
}
