/* The strict JSON reader and the string escaping of json.h. Recursive
 * descent with a depth limit; every error names the byte offset. */
#include "io/json.h"
#include "util/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct parser {
    const unsigned char *s, *p, *end;
    char *err;
    size_t errlen;
    bool failed;
    long values_left;
} parser;

static bool fail(parser *ps, const char *what)
{
    if (!ps->failed) {
        ps->failed = true;
        if (ps->err && ps->errlen)
            snprintf(ps->err, ps->errlen, "%s at byte %zu", what,
                     (size_t)(ps->p - ps->s));
    }
    return false;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static void free_value(tg_json *v)
{
    if (v->type == TG_JSON_STRING) {
        free(v->str);
    } else if (v->type == TG_JSON_ARRAY || v->type == TG_JSON_OBJECT) {
        for (int i = 0; i < v->n; i++) {
            free_value(&v->items[i]);
            if (v->keys)
                free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
}

void tg_json_free(tg_json *v)
{
    if (!v)
        return;
    free_value(v);
    free(v);
}

/* ---- strings ------------------------------------------------------------------ */

static int hex4(const unsigned char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(unsigned char *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0 */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; cp = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* parses the string at ps->p (a '"'); the decoded text is never longer
 * than the encoded one, so one allocation of the raw length suffices */
static char *parse_string(parser *ps)
{
    ps->p++; /* opening quote */
    const unsigned char *q = ps->p;
    while (q < ps->end && *q != '"') {
        if (*q == '\\' && q + 1 < ps->end)
            q++;
        q++;
    }
    if (q >= ps->end) {
        fail(ps, "unterminated string");
        return NULL;
    }
    unsigned char *out = malloc((size_t)(q - ps->p) + 1), *o = out;
    if (!out) {
        fail(ps, "out of memory");
        return NULL;
    }
    while (*ps->p != '"') {
        unsigned c = *ps->p;
        if (c < 0x20) {
            fail(ps, "control character in string");
            goto bad;
        }
        if (c >= 0x80) {
            size_t n = utf8_seq(ps->p, ps->end);
            if (!n) {
                fail(ps, "invalid UTF-8 in string");
                goto bad;
            }
            memcpy(o, ps->p, n);
            o += n;
            ps->p += n;
            continue;
        }
        if (c != '\\') {
            *o++ = (unsigned char)c;
            ps->p++;
            continue;
        }
        ps->p++;
        switch (*ps->p) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            int hi = ps->end - ps->p > 4 ? hex4(ps->p + 1) : -1;
            if (hi < 0) {
                fail(ps, "bad \\u escape");
                goto bad;
            }
            uint32_t cp = (uint32_t)hi;
            ps->p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) { /* needs a low surrogate */
                int lo = ps->end - ps->p > 6 && ps->p[1] == '\\' && ps->p[2] == 'u'
                             ? hex4(ps->p + 3) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    fail(ps, "unpaired surrogate in \\u escape");
                    goto bad;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                ps->p += 6;
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                fail(ps, "unpaired surrogate in \\u escape");
                goto bad;
            } else if (cp == 0) {
                fail(ps, "\\u0000 in string");
                goto bad;
            }
            o += put_utf8(o, cp);
            break;
        }
        default:
            fail(ps, "bad escape in string");
            goto bad;
        }
        ps->p++;
    }
    ps->p++; /* closing quote */
    *o = '\0';
    return (char *)out;
bad:
    free(out);
    return NULL;
}

/* ---- numbers ------------------------------------------------------------------ */

static bool parse_number(parser *ps, tg_json *v)
{
    const unsigned char *start = ps->p, *p = ps->p;
    bool neg = false, integral = true;
    if (p < ps->end && *p == '-') { neg = true; p++; }
    if (p >= ps->end || *p < '0' || *p > '9')
        return fail(ps, "bad number");
    if (*p == '0') {
        p++;
    } else {
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < ps->end && *p == '.') {
        integral = false;
        p++;
        if (p >= ps->end || *p < '0' || *p > '9')
            return fail(ps, "bad number");
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        integral = false;
        p++;
        if (p < ps->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= ps->end || *p < '0' || *p > '9')
            return fail(ps, "bad number");
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    size_t n = (size_t)(p - start);
    char buf[64];
    if (n >= sizeof buf)
        return fail(ps, "number too long");
    memcpy(buf, start, n);
    buf[n] = '\0';
    v->type = TG_JSON_NUMBER;
    v->num = strtod(buf, NULL);
    v->is_uint = false;
    if (integral && !neg) {
        uint64_t u = 0;
        bool fits = true;
        for (size_t i = 0; i < n; i++) {
            unsigned d = (unsigned)(buf[i] - '0');
            if (u > (UINT64_MAX - d) / 10) { fits = false; break; }
            u = u * 10 + d;
        }
        v->is_uint = fits;
        v->u = fits ? u : 0;
    }
    ps->p = p;
    return true;
}

/* ---- values ------------------------------------------------------------------- */

static bool parse_value(parser *ps, tg_json *v, int depth);

/* room for one more item (and key, for objects: cap_keys not NULL) */
static bool grow(parser *ps, tg_json *v, int *cap_items, int *cap_keys)
{
    if (v->n >= (1 << 28))
        return fail(ps, "too many items");
    if (!TG_GROW(v->items, *cap_items, v->n + 1) ||
        (cap_keys && !TG_GROW(v->keys, *cap_keys, v->n + 1)))
        return fail(ps, "out of memory");
    return true;
}

static bool parse_array(parser *ps, tg_json *v, int depth)
{
    int cap = 0;
    v->type = TG_JSON_ARRAY;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        return true;
    }
    for (;;) {
        if (!grow(ps, v, &cap, NULL))
            return false;
        memset(&v->items[v->n], 0, sizeof v->items[0]);
        v->n++;
        if (!parse_value(ps, &v->items[v->n - 1], depth + 1))
            return false;
        skip_ws(ps);
        if (ps->p >= ps->end)
            return fail(ps, "unterminated array");
        if (*ps->p == ']') {
            ps->p++;
            return true;
        }
        if (*ps->p != ',')
            return fail(ps, "expected ',' or ']' in array");
        ps->p++;
    }
}

static bool parse_object(parser *ps, tg_json *v, int depth)
{
    int cap = 0, cap_keys = 0;
    v->type = TG_JSON_OBJECT;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        return true;
    }
    for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != '"')
            return fail(ps, "expected a string key in object");
        if (!grow(ps, v, &cap, &cap_keys))
            return false;
        char *key = parse_string(ps);
        if (!key)
            return false;
        memset(&v->items[v->n], 0, sizeof v->items[0]);
        v->keys[v->n] = key;
        v->n++;
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':')
            return fail(ps, "expected ':' after key in object");
        ps->p++;
        if (!parse_value(ps, &v->items[v->n - 1], depth + 1))
            return false;
        skip_ws(ps);
        if (ps->p >= ps->end)
            return fail(ps, "unterminated object");
        if (*ps->p == '}') {
            ps->p++;
            return true;
        }
        if (*ps->p != ',')
            return fail(ps, "expected ',' or '}' in object");
        ps->p++;
    }
}

static bool literal(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail(ps, "unexpected character");
    ps->p += n;
    return true;
}

static bool parse_value(parser *ps, tg_json *v, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(ps, "nesting too deep");
    if (--ps->values_left < 0)
        return fail(ps, "too many values");
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "unexpected end of input");
    switch (*ps->p) {
    case '{': return parse_object(ps, v, depth);
    case '[': return parse_array(ps, v, depth);
    case '"':
        v->str = parse_string(ps);
        if (!v->str)
            return false;
        v->type = TG_JSON_STRING;
        return true;
    case 't': v->type = TG_JSON_BOOL; v->boolean = true; return literal(ps, "true");
    case 'f': v->type = TG_JSON_BOOL; v->boolean = false; return literal(ps, "false");
    case 'n': v->type = TG_JSON_NULL; return literal(ps, "null");
    default: return parse_number(ps, v);
    }
}

tg_json *tg_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    parser ps = {(const unsigned char *)text, (const unsigned char *)text,
                 (const unsigned char *)text + len, err, errlen, false,
                 TG_JSON_MAX_VALUES};
    if (err && errlen)
        err[0] = '\0';
    tg_json *root = calloc(1, sizeof *root);
    if (!root) {
        fail(&ps, "out of memory");
        return NULL;
    }
    if (parse_value(&ps, root, 0)) {
        skip_ws(&ps);
        if (ps.p == ps.end)
            return root;
        fail(&ps, "unexpected text after the JSON value");
    }
    tg_json_free(root);
    return NULL;
}

const tg_json *tg_json_get(const tg_json *obj, const char *key)
{
    if (!obj || obj->type != TG_JSON_OBJECT)
        return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}

/* ---- writing ---------------------------------------------------------------- */

void tg_json_put_string(tg_strbuf *b, const char *s)
{
    tg__strbuf_append(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        tg__strbuf_append(b, run, (size_t)(s - run));
        run = s + 1;
        switch (c) {
        case '"': tg__strbuf_puts(b, "\\\""); break;
        case '\\': tg__strbuf_puts(b, "\\\\"); break;
        case '\n': tg__strbuf_puts(b, "\\n"); break;
        case '\r': tg__strbuf_puts(b, "\\r"); break;
        case '\t': tg__strbuf_puts(b, "\\t"); break;
        default: tg__strbuf_printf(b, "\\u%04x", c); break;
        }
    }
    tg__strbuf_append(b, run, (size_t)(s - run));
    tg__strbuf_append(b, "\"", 1);
}
