/* The library's one hash map: string or pointer keys to int values (ids,
 * indices into the caller's arrays). Open addressing with linear probing,
 * kept at most half full, so lookups and inserts are O(1) amortized. Keys
 * are borrowed: a key must outlive its entry. Deletion leaves no tombstones
 * (renaming a graph node deletes its old name). Used by graph name
 * uniquing and constant capture, the ONNX importer's value names and the
 * autograd engine's node slots. */
#ifndef TG_UTIL_HMAP_H
#define TG_UTIL_HMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tg_hmap {
    const void **keys; /* NULL: empty slot */
    int *vals;
    size_t cap, n;     /* cap is 0 or a power of two */
    bool strings;      /* keys are NUL-terminated strings, else pointers */
} tg_hmap;

/* an empty map (allocates nothing); zeroing the struct gives a pointer map */
static inline tg_hmap tg__hmap_strings(void) { return (tg_hmap){.strings = true}; }
static inline tg_hmap tg__hmap_pointers(void) { return (tg_hmap){.strings = false}; }

/* the value stored for key, or -1 when absent (so values are usually >= 0) */
int tg__hmap_get(const tg_hmap *m, const void *key);
/* sets key's value (inserting or replacing); false when out of memory,
 * the map unchanged. Sets no error: callers name their own operation. */
bool tg__hmap_put(tg_hmap *m, const void *key, int val);
/* removes key's entry (nothing when absent); never allocates */
void tg__hmap_del(tg_hmap *m, const void *key);
/* makes room for n entries in all, so the next puts cannot fail */
bool tg__hmap_reserve(tg_hmap *m, size_t n);
/* frees the table (not the keys) and leaves an empty map of the same kind */
void tg__hmap_free(tg_hmap *m);

#endif
