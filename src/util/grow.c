/* The growth policy of every growable array (see grow.h). */
#include "util/grow.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef TG_GROW_BY_ONE
bool tg__grow_by_one(void) { return true; }
#else
bool tg__grow_by_one(void) { return false; }
#endif

/* grow-by-one builds grow exactly up to this many bytes */
#define BY_ONE_BYTES ((size_t)64 << 10)

/* The new capacity for `need` elements of elem bytes (need > the old
 * capacity), at most `limit`; 0 when impossible. It depends on need alone
 * (8 * 2^k, or need itself while small in grow-by-one builds), so an
 * array grown from empty has a capacity that follows from its count. */
static size_t new_capacity(size_t need, size_t elem, size_t limit)
{
    if (need > limit)
        return 0;
#ifdef TG_GROW_BY_ONE
    /* exactly what is asked while the array is small; past BY_ONE_BYTES
     * it doubles (still moving at every growth), or the suite's arrays of
     * 100 000 elements would cost 10^10 bytes of copying */
    if (need <= BY_ONE_BYTES / elem)
        return need;
#else
    (void)elem;
#endif
    size_t c = 8;
    while (c < need)
        c = c > limit / 2 ? limit : 2 * c;
    return c;
}

/* moves the array to a block of c elements; the old block is scribbled
 * over before it is freed, so a stale pointer reads garbage even without
 * a sanitizer */
static void *move_to(void *old, size_t used, size_t c, size_t elem)
{
#ifdef TG_GROW_BY_ONE
    void *p = malloc(c * elem);
    if (!p)
        return NULL;
    if (old) {
        memcpy(p, old, used * elem);
        memset(old, 0xA5, used * elem);
        free(old);
    }
    return p;
#else
    (void)used;
    return realloc(old, c * elem);
#endif
}

size_t tg__grow_capacity(size_t cap, size_t need, size_t elem)
{
    if (need <= cap)
        return cap;
    return elem ? new_capacity(need, elem, SIZE_MAX / elem) : 0;
}

static bool grow(void *arrp, size_t *cap, size_t need, size_t elem, size_t limit)
{
    if (need <= *cap)
        return true;
    if (elem == 0)
        return false;
    if (limit > SIZE_MAX / elem)
        limit = SIZE_MAX / elem;
    size_t c = new_capacity(need, elem, limit);
    if (!c)
        return false;
    void *old;
    memcpy(&old, arrp, sizeof old);
    void *p = move_to(old, *cap, c, elem);
    if (!p)
        return false;
    memcpy(arrp, &p, sizeof p);
    *cap = c;
    return true;
}

bool tg__grow_size(void *arrp, size_t *cap, size_t need, size_t elem)
{
    return grow(arrp, cap, need, elem, SIZE_MAX);
}

bool tg__grow_int(void *arrp, int *cap, size_t need, size_t elem)
{
    size_t c = *cap > 0 ? (size_t)*cap : 0;
    if (!grow(arrp, &c, need, elem, INT_MAX))
        return false;
    *cap = (int)c;
    return true;
}

bool tg__grow_i64(void *arrp, int64_t *cap, size_t need, size_t elem)
{
    size_t c = *cap > 0 ? (size_t)*cap : 0;
    if (!grow(arrp, &c, need, elem, INT64_MAX))
        return false;
    *cap = (int64_t)c;
    return true;
}
