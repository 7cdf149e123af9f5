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
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX 512
#define KEY_MAX 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tg_hmap index_of = {.strings = true}; /* key -> entry */
static char *keys[CACHE_MAX];
static tg_fused_prog *progs[CACHE_MAX];
static int n_entries;

/* per entry, the result dtypes for the first input signature seen (a
 * function's plan runs one signature over and over): written once,
 * read without the lock once `state` says it is complete */
enum { MEMO_EMPTY, MEMO_WRITING, MEMO_READY };
typedef struct memo {
    atomic_int state;
    int n_in;
    unsigned char sig[TG_MAX_OP_INPUTS]; /* per input: dtype * 2 + (0-d) */
    tg_dtype dt[TG_FUSED_MAX_INSTRS];
} memo;
static memo memos[CACHE_MAX];

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
            p->cache_entry = ++n_entries;
            *kept = true;
            r = p;
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

/* the programs this thread found last, by the address of their text (a
 * node's attribute, the same at every run of a plan): a hit skips making
 * the key, hashing it and the lock, which cost more per call than running
 * a small node's program. The text is compared, so an address reused for
 * another program is no false hit. */
#define RECENT 32 /* a training step's graph has 15-30 fused nodes: fewer thrash */
#define RECENT_KEEP 8
typedef struct recent {
    const char *text; /* the address looked up */
    int entry;        /* its cache entry + 1; 0: unused */
    int n_in, n_keep;
    bool producer;
    int64_t keep[RECENT_KEEP];
} recent;
static _Thread_local recent recents[RECENT];
static _Thread_local unsigned recent_next;

/* the text part of entry e's key */
static const char *key_text(int e)
{
    return strchr(keys[e], '|') + 1;
}

static const tg_fused_prog *recent_hit(const char *text, int n_in, const int64_t *keep,
                                       int n_keep, bool producer)
{
    for (int i = 0; i < RECENT; i++) {
        const recent *r = &recents[i];
        if (r->entry && r->text == text && r->n_in == n_in && r->n_keep == n_keep &&
            r->producer == producer &&
            (n_keep == 0 || memcmp(r->keep, keep, (size_t)n_keep * sizeof *keep) == 0) &&
            strcmp(key_text(r->entry - 1), text) == 0)
            return progs[r->entry - 1];
    }
    return NULL;
}

static void remember(const char *text, int n_in, const int64_t *keep, int n_keep,
                     bool producer, const tg_fused_prog *p)
{
    if (!text || p->cache_entry <= 0 || n_keep > RECENT_KEEP)
        return;
    recent *r = &recents[recent_next++ % RECENT];
    *r = (recent){.text = text, .entry = p->cache_entry, .n_in = n_in, .n_keep = n_keep,
                  .producer = producer};
    if (n_keep)
        memcpy(r->keep, keep, (size_t)n_keep * sizeof *keep);
}

static tg_status parse_cached(const char *who, const char *text, int n_in,
                              const int64_t *keep, int n_keep, bool producer,
                              tg_fused_prog *local, const tg_fused_prog **out);

tg_status tg__fused_parse_cached(const char *who, const char *text, int n_in,
                                 const int64_t *keep, int n_keep, bool producer,
                                 tg_fused_prog *local, const tg_fused_prog **out)
{
    const tg_fused_prog *hit = text ? recent_hit(text, n_in, keep, n_keep, producer) : NULL;
    if (hit) {
        *out = hit;
        return TG_OK;
    }
    tg_status s = parse_cached(who, text, n_in, keep, n_keep, producer, local, out);
    if (s == TG_OK)
        remember(text, n_in, keep, n_keep, producer, *out);
    return s;
}

static tg_status parse_cached(const char *who, const char *text, int n_in,
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

/* the input signature result dtypes depend on: dtypes, and 0-d inputs
 * (they may promote differently); false when it does not fit */
static bool signature(int n_in, tg_tensor *const *in, unsigned char *sig)
{
    if (n_in > TG_MAX_OP_INPUTS)
        return false;
    for (int i = 0; i < n_in; i++) {
        unsigned v = (unsigned)in[i]->dtype * 2u + (in[i]->ndim == 0);
        if (v > 255)
            return false;
        sig[i] = (unsigned char)v;
    }
    return true;
}

tg_status tg__fused_dtypes(const char *who, const tg_fused_prog *p, int n_in,
                           tg_tensor *const *in, tg_dtype *dt)
{
    unsigned char sig[TG_MAX_OP_INPUTS];
    memo *m = p->cache_entry > 0 && signature(n_in, in, sig) ? &memos[p->cache_entry - 1]
                                                             : NULL;
    if (m && atomic_load_explicit(&m->state, memory_order_acquire) == MEMO_READY &&
        m->n_in == n_in && memcmp(m->sig, sig, (size_t)n_in) == 0) {
        memcpy(dt, m->dt, (size_t)p->n * sizeof *dt);
        return TG_OK;
    }
    tg_meta metas[TG_FUSED_MAX_INSTRS];
    tg_status s = tg__fused_infer(who, p, n_in, in, metas);
    if (s != TG_OK)
        return s;
    for (int k = 0; k < p->n; k++)
        dt[k] = metas[k].dtype;
    int empty = MEMO_EMPTY;
    if (m && atomic_compare_exchange_strong(&m->state, &empty, MEMO_WRITING)) {
        m->n_in = n_in;
        memcpy(m->sig, sig, (size_t)n_in);
        memcpy(m->dt, dt, (size_t)p->n * sizeof *dt);
        atomic_store_explicit(&m->state, MEMO_READY, memory_order_release);
    }
    return TG_OK;
}
