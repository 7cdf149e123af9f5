/* Per-thread scratch buffers (see scratch.h): one record per thread under
 * a pthread key, whose destructor frees them when the thread exits. */
#include "kernels/cpu/scratch.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct record {
    void *buf[TG_SCRATCH_SLOTS];
    size_t cap[TG_SCRATCH_SLOTS];
} record;

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void release(void *p)
{
    record *r = p;
    for (int i = 0; i < TG_SCRATCH_SLOTS; i++)
        free(r->buf[i]);
    free(r);
}

static void make_key(void) { pthread_key_create(&key, release); }

void *tg__scratch(int slot, size_t bytes)
{
    pthread_once(&once, make_key);
    record *r = pthread_getspecific(key);
    if (!r) {
        if (!(r = calloc(1, sizeof *r)))
            return NULL;
        if (pthread_setspecific(key, r) != 0) {
            free(r);
            return NULL;
        }
    }
    if (r->cap[slot] >= bytes && r->buf[slot])
        return r->buf[slot];
    size_t cap = (bytes + bytes / 4 + 63) / 64 * 64; /* some room to grow */
    free(r->buf[slot]);
    r->buf[slot] = aligned_alloc(64, cap ? cap : 64);
    r->cap[slot] = r->buf[slot] ? cap : 0;
    return r->buf[slot];
}
