/* The storage allocator (see alloc.h). Blocks of 64 KiB and more are
 * rounded up to a size class (four per doubling, so at most 19% is wasted)
 * and, when freed, kept on that class's list for reuse, up to a budget of
 * cached bytes. glibc serves blocks this large with mmap and returns them
 * with munmap, so without the cache every large tensor of every training
 * step costs page faults: measured on conv1 of LeNet (batch 64) as more
 * system time than the convolution's own compute. */
#include "core/alloc.h"
#include "core/tensor_impl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define CACHE_MIN ((size_t)64 << 10)   /* smaller blocks: plain malloc */
#define CACHE_MAX ((size_t)256 << 20)  /* larger blocks are not cached */
#define CACHE_BUDGET ((size_t)1 << 30) /* bytes kept in all lists at most */
#define N_CLASSES 64

typedef struct block {
    struct block *next;
} block;

static struct {
    pthread_mutex_t mu;
    block *free_list[N_CLASSES];
    size_t cached;
    int registered;
} cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* class k covers sizes up to class_size(k): 64 KiB * 2^(k/4) * (1 + (k%4)/4) */
static size_t class_size(int k)
{
    size_t base = CACHE_MIN << (k / 4);
    return base + base / 4 * (size_t)(k % 4);
}

static int class_of(size_t size)
{
    for (int k = 0; k < N_CLASSES; k++)
        if (class_size(k) >= size)
            return k;
    return -1;
}

static void *raw_alloc(size_t size)
{
    size = (size + TG_ALIGN - 1) / TG_ALIGN * TG_ALIGN;
    return aligned_alloc(TG_ALIGN, size ? size : TG_ALIGN);
}

void tg__buffer_trim(void)
{
    pthread_mutex_lock(&cache.mu);
    for (int k = 0; k < N_CLASSES; k++) {
        while (cache.free_list[k]) {
            block *b = cache.free_list[k];
            cache.free_list[k] = b->next;
            free(b);
        }
    }
    cache.cached = 0;
    pthread_mutex_unlock(&cache.mu);
}

void *tg__buffer_alloc(size_t size)
{
    if (size < CACHE_MIN || size > CACHE_MAX)
        return raw_alloc(size);
    int k = class_of(size);
    pthread_mutex_lock(&cache.mu);
    block *b = cache.free_list[k];
    if (b) {
        cache.free_list[k] = b->next;
        cache.cached -= class_size(k);
    }
    if (!cache.registered) {
        cache.registered = 1;
        atexit(tg__buffer_trim);
    }
    pthread_mutex_unlock(&cache.mu);
    return b ? (void *)b : raw_alloc(class_size(k));
}

void tg__buffer_free(void *p, size_t size)
{
    if (!p)
        return;
    if (size < CACHE_MIN || size > CACHE_MAX) {
        free(p);
        return;
    }
    int k = class_of(size);
    pthread_mutex_lock(&cache.mu);
    bool keep = cache.cached + class_size(k) <= CACHE_BUDGET;
    if (keep) {
        block *b = p;
        b->next = cache.free_list[k];
        cache.free_list[k] = b;
        cache.cached += class_size(k);
    }
    pthread_mutex_unlock(&cache.mu);
    if (!keep)
        free(p);
}
