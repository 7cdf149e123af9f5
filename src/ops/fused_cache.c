/* Parsed fused programs, kept. A fused node's kernel gets its program as
 * text (the node's attribute) at every run, and parsing it (op lookup by
 * name, attribute decoding, allocations) costs more than computing small
 * tensors: it made level 2 slower than level 0 on small models. A parsed
 * program is never changed (tg__fused_run reads it), so one parse serves
 * every node and run with the same text and parameters, from any thread.
 * The cache is bounded: past CACHE_MAX programs, new ones are parsed per
 * call as before. Entries live until exit. */
#include "ops/fused.h"
#include "util/hmap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX 512
#define KEY_MAX 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tg_hmap index_of = {.strings = true}; /* key -> entry */
static char *keys[CACHE_MAX];
static tg_fused_prog *progs[CACHE_MAX];
static int n_entries;

/* appends v in decimal and then sep at key[*pos]; false when full */
static bool put_int(char *key, int *pos, long long v, char sep)
{
    char digits[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        digits[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (*pos + n + 2 >= KEY_MAX)
        return false;
    if (v < 0)
        key[(*pos)++] = '-';
    while (n > 0)
        key[(*pos)++] = digits[--n];
    key[(*pos)++] = sep;
    return true;
}

/* what a parse depends on, as one string: n_in, producer, keep, text;
 * false when it does not fit (no printf: this runs at every kernel call) */
static bool make_key(char *key, const char *text, int n_in, const int64_t *keep, int n_keep,
                     bool producer)
{
    int pos = 0;
    bool ok = put_int(key, &pos, n_in, '/') && put_int(key, &pos, producer, '/');
    for (int i = 0; ok && i < n_keep; i++)
        ok = put_int(key, &pos, keep[i], ',');
    size_t len = text ? strlen(text) : 0;
    if (!ok || pos + 1 + len >= KEY_MAX)
        return false;
    key[pos++] = '|';
    memcpy(key + pos, text ? text : "", len);
    key[pos + len] = '\0';
    return true;
}

static const tg_fused_prog *lookup(const char *key)
{
    pthread_mutex_lock(&lock);
    int e = tg__hmap_get(&index_of, key);
    pthread_mutex_unlock(&lock);
    return e >= 0 ? progs[e] : NULL;
}

/* keeps p (malloc'd) under key unless the cache is full or another thread
 * kept the same program first; returns the program to use */
static const tg_fused_prog *keep_parsed(const char *key, tg_fused_prog *p, bool *kept)
{
    pthread_mutex_lock(&lock);
    int e = tg__hmap_get(&index_of, key);
    const tg_fused_prog *r = e >= 0 ? progs[e] : NULL;
    *kept = false;
    if (!r && n_entries < CACHE_MAX && tg__hmap_reserve(&index_of, (size_t)n_entries + 1)) {
        char *k = strdup(key);
        if (k) {
            keys[n_entries] = k;
            progs[n_entries] = p;
            tg__hmap_put(&index_of, k, n_entries); /* reserved: cannot fail */
            n_entries++;
            *kept = true;
            r = p;
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

tg_status tg__fused_parse_cached(const char *who, const char *text, int n_in,
                                 const int64_t *keep, int n_keep, bool producer,
                                 tg_fused_prog *local, const tg_fused_prog **out)
{
    char key[KEY_MAX];
    *out = NULL;
    bool keyed = make_key(key, text, n_in, keep, n_keep, producer);
    const tg_fused_prog *hit = keyed ? lookup(key) : NULL;
    if (hit) {
        *out = hit;
        return TG_OK;
    }
    tg_status s = tg__fused_parse(who, text, n_in, keep, n_keep, producer, local);
    if (s != TG_OK)
        return s;
    *out = local;
    tg_fused_prog *copy = keyed ? malloc(sizeof *copy) : NULL;
    if (!copy)
        return TG_OK; /* uncached: the caller frees local */
    *copy = *local; /* the instructions' attributes move to the copy */
    bool kept;
    const tg_fused_prog *r = keep_parsed(key, copy, &kept);
    if (!kept) {
        free(copy); /* local keeps its attributes */
        if (r) {
            tg__fused_free(local);
            *out = r;
        }
        return TG_OK;
    }
    memset(local, 0, sizeof *local);
    *out = r;
    return TG_OK;
}
