/* A small strict JSON reader (a tree of values) and JSON string escaping
 * for writers (onto the string builder of util/strbuf.h), for file headers.
 * The reader treats its input as hostile: bounded depth, checked UTF-8,
 * no NUL inside strings, exact unsigned integers. */
#ifndef TG_IO_JSON_H
#define TG_IO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

typedef enum tg_json_type {
    TG_JSON_NULL,
    TG_JSON_BOOL,
    TG_JSON_NUMBER,
    TG_JSON_STRING,
    TG_JSON_ARRAY,
    TG_JSON_OBJECT
} tg_json_type;

typedef struct tg_json {
    tg_json_type type;
    int n; /* arrays and objects: number of items */
    union {
        bool boolean;
        /* numbers: every number as a double; is_uint when it was written
         * as a non-negative integer that fits uint64 exactly (then in u) */
        struct {
            double num;
            uint64_t u;
            bool is_uint;
        };
        char *str; /* strings: NUL-terminated UTF-8 */
        struct {
            struct tg_json *items; /* array items / object member values */
            char **keys;           /* object member keys (in input order) */
        };
    };
} tg_json;

/* at most this many values in one document: bounds the memory a hostile
 * input can make the parser allocate (32 bytes per value plus keys) */
#define TG_JSON_MAX_VALUES (4 << 20)

/* parses len bytes; returns the root (free with tg_json_free) or NULL with
 * a message "what, at byte N" in err */
tg_json *tg_json_parse(const char *text, size_t len, char *err, size_t errlen);
void tg_json_free(tg_json *v);
/* member of an object by key (first match) or NULL */
const tg_json *tg_json_get(const tg_json *obj, const char *key);

/* ---- writing ---------------------------------------------------------------- */
/* s as a quoted JSON string, escaping quotes, backslashes, controls */
void tg_json_put_string(tg_strbuf *b, const char *s);

#endif
