/* The one string builder (see strbuf.h). */
#include "util/strbuf.h"
#include "util/grow.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* room for n more bytes and the NUL */
static bool reserve(tg_strbuf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n > SIZE_MAX - b->len - 1 || !TG_GROW(b->data, b->cap, b->len + n + 1)) {
        b->failed = true;
        return false;
    }
    return true;
}

void tg__strbuf_append(tg_strbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void tg__strbuf_puts(tg_strbuf *b, const char *s) { tg__strbuf_append(b, s, strlen(s)); }

void tg__strbuf_printf(tg_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap); /* the length, then the text in place */
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *tg__strbuf_take(tg_strbuf *b)
{
    if (reserve(b, 0)) /* an empty builder still gives "" */
        b->data[b->len] = '\0';
    char *s = b->failed ? NULL : b->data;
    if (!s)
        free(b->data);
    *b = (tg_strbuf){0};
    return s;
}

void tg__strbuf_free(tg_strbuf *b)
{
    free(b->data);
    *b = (tg_strbuf){0};
}
