/* The storage allocator (see alloc.h). Blocks are rounded up to a size
 * class (four per doubling, so at most 25% is wasted) and, when freed,
 * kept on that class's list for reuse, up to a budget of cached bytes:
 *  - from 64 KiB: glibc serves blocks this large with mmap and returns
 *    them with munmap, so without the cache every large tensor of every
 *    training step costs page faults: measured on conv1 of LeNet (batch
 *    64) as more system time than the convolution's own compute;
 *  - below: an aligned malloc and its free cost ~300 instructions (the
 *    alignment splits chunks that free then merges back), a list's pop
 *    and push a few dozen: an eager MLP step allocates ~60 small tensors
 *    (callgrind: 307.7k -> 292.2k instructions a step).
 * Under AddressSanitizer, or with TG_ALLOC_CACHE=0, nothing is cached,
 * so that the tools see every use after free. */
#include "core/alloc.h"
#include "core/spinlock.h"
#include "core/tensor_impl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_MIN ((size_t)256) /* the smallest class: its quarters are whole lines */
#define CACHE_MIN ((size_t)64 << 10)     /* the large classes start here */
#define CACHE_MAX ((size_t)256 << 20)    /* larger blocks are not cached */
#define CACHE_BUDGET ((size_t)1 << 30)   /* bytes kept in the large lists at most */
#define SMALL_BUDGET ((size_t)64 << 20)  /* ... and in the small ones */
#define N_SMALL 33 /* 256 B to 64 KiB: eight doublings and their end */
#define N_CLASSES 64

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifndef ASAN
#define ASAN 0
#endif

typedef struct block {
    struct block *next;
} block;

typedef struct classes {
    size_t min, budget, cached;
    int n;
    block *free_list[N_CLASSES];
} classes;

static struct {
    tg_spinlock mu;
    classes small, large;
} cache = {.mu = {false},
           .small = {.min = SMALL_MIN, .budget = SMALL_BUDGET, .n = N_SMALL},
           .large = {.min = CACHE_MIN, .budget = CACHE_BUDGET, .n = N_CLASSES}};

/* class k of a series from min covers sizes up to
 * min * 2^(k/4) * (1 + (k%4)/4) */
static size_t class_size(const classes *c, int k)
{
    size_t base = c->min << (k / 4);
    return base + base / 4 * (size_t)(k % 4);
}

/* the smallest class holding size (> 0): with base = min * 2^d < size <=
 * 2 * base, quarter q = ceil((size - base) / (base / 4)), class 4d + q */
static int class_of(const classes *c, size_t size)
{
    if (size <= c->min)
        return 0;
    int d = 63 - __builtin_clzll((unsigned long long)((size - 1) / c->min));
    size_t base = c->min << d, quarter = base / 4;
    return 4 * d + (int)((size - base + quarter - 1) / quarter);
}

bool tg__alloc_caching(void)
{
    static _Atomic int state; /* 0: not read yet, 1: caching, 2: not */
    int s = state;
    if (s == 0) {
        const char *env = getenv("TG_ALLOC_CACHE");
        s = ASAN || (env && strcmp(env, "0") == 0) ? 2 : 1;
        state = s;
    }
    return s == 1;
}

/* the series that caches blocks of size, or NULL */
static classes *series(size_t size)
{
    if (size == 0 || size > CACHE_MAX || !tg__alloc_caching())
        return NULL;
    return size < CACHE_MIN ? &cache.small : &cache.large;
}

static void *raw_alloc(size_t size)
{
    size = (size + TG_ALIGN - 1) / TG_ALIGN * TG_ALIGN;
    return aligned_alloc(TG_ALIGN, size ? size : TG_ALIGN);
}

static void drop_all(classes *c)
{
    for (int k = 0; k < c->n; k++) {
        while (c->free_list[k]) {
            block *b = c->free_list[k];
            c->free_list[k] = b->next;
            free(b);
        }
    }
    c->cached = 0;
}

size_t tg__buffer_block_bytes(size_t size)
{
    classes *c = series(size);
    return c ? class_size(c, class_of(c, size)) : (size + TG_ALIGN - 1) / TG_ALIGN * TG_ALIGN;
}

/* around fork(): the lists are held, so that the child never starts with
 * them half-updated by a thread it does not have (data loaders allocate
 * on threads of their own) */
static void lock_cache(void) { tg__spin_lock(&cache.mu); }
static void unlock_cache(void) { tg__spin_unlock(&cache.mu); }

void tg__buffer_trim(void)
{
    tg__spin_lock(&cache.mu);
    drop_all(&cache.small);
    drop_all(&cache.large);
    tg__spin_unlock(&cache.mu);
}

/* before the lists' lock is first taken (a block is freed to them only
 * after one was allocated through them), so that no fork finds it held
 * without the handlers that release it in the child */
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static void register_cache(void)
{
    atexit(tg__buffer_trim);
    pthread_atfork(lock_cache, unlock_cache, unlock_cache);
}

void *tg__buffer_alloc(size_t size)
{
    classes *c = series(size);
    if (!c)
        return raw_alloc(size);
    int k = class_of(c, size);
    pthread_once(&cache_once, register_cache);
    tg__spin_lock(&cache.mu);
    block *b = c->free_list[k];
    if (b) {
        c->free_list[k] = b->next;
        c->cached -= class_size(c, k);
    }
    tg__spin_unlock(&cache.mu);
    return b ? (void *)b : raw_alloc(class_size(c, k));
}

void tg__buffer_free(void *p, size_t size)
{
    if (!p)
        return;
    classes *c = series(size);
    if (!c) {
        free(p);
        return;
    }
    int k = class_of(c, size);
    tg__spin_lock(&cache.mu);
    bool keep = c->cached + class_size(c, k) <= c->budget;
    if (keep) {
        block *b = p;
        b->next = c->free_list[k];
        c->free_list[k] = b;
        c->cached += class_size(c, k);
    }
    tg__spin_unlock(&cache.mu);
    if (!keep)
        free(p);
}
