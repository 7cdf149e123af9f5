/* The library's one string builder: a growable NUL-terminated buffer for
 * text assembled piece by piece (tensor printing, JSON headers, profiles).
 * An allocation failure is sticky: later appends do nothing and `failed`
 * says the content is incomplete, so callers check once at the end. */
#ifndef TG_UTIL_STRBUF_H
#define TG_UTIL_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tg_strbuf {
    char *data; /* NUL-terminated once anything was appended, else NULL */
    size_t len, cap;
    bool failed; /* an allocation failed; the content is incomplete */
} tg_strbuf;

void tg__strbuf_append(tg_strbuf *b, const char *s, size_t n);
void tg__strbuf_puts(tg_strbuf *b, const char *s);
void tg__strbuf_printf(tg_strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* hands the text to the caller (to free) and empties b; NULL when an
 * allocation failed (b freed) */
char *tg__strbuf_take(tg_strbuf *b);
void tg__strbuf_free(tg_strbuf *b);

#endif
