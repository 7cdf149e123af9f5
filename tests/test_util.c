/* The util layer: the hash map (string and pointer keys, growth, replace,
 * absent keys, reserve) and the string builder (append, printf past any
 * small buffer, take, an empty builder). */
#include "harness.h"
#include "util/hmap.h"
#include "util/intset.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

static void test_hmap_strings(void)
{
    tg_hmap m = tg__hmap_strings();
    CHECK(tg__hmap_get(&m, "a") == -1); /* an empty map allocates nothing */
    enum { N = 5000 };                  /* many growths */
    static char names[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "node_%d", i);
        CHECK(tg__hmap_put(&m, names[i], i));
    }
    CHECK(m.n == N);
    CHECK(2 * m.n <= m.cap); /* at most half full */
    int wrong = 0;
    char probe[16];
    for (int i = 0; i < N; i++) {
        snprintf(probe, sizeof probe, "node_%d", i); /* equal text, other pointer */
        wrong += tg__hmap_get(&m, probe) != i;
    }
    CHECK(wrong == 0);
    CHECK(tg__hmap_get(&m, "node_5000") == -1);
    CHECK(tg__hmap_get(&m, "") == -1);
    CHECK(tg__hmap_get(&m, NULL) == -1);
    CHECK(tg__hmap_put(&m, "node_7", 70)); /* replacing keeps the count */
    CHECK(tg__hmap_get(&m, "node_7") == 70);
    CHECK(m.n == N);
    tg__hmap_free(&m);
    CHECK(m.cap == 0 && m.n == 0 && m.strings);
    CHECK(tg__hmap_get(&m, "node_1") == -1);
}

static void test_hmap_pointers(void)
{
    tg_hmap m = {0}; /* a zeroed map is a pointer map */
    enum { N = 3000 };
    int *cells = malloc(N * sizeof *cells);
    for (int i = 0; i < N; i++)
        CHECK(tg__hmap_put(&m, &cells[i], i));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += tg__hmap_get(&m, &cells[i]) != i;
    CHECK(wrong == 0);
    int other;
    CHECK(tg__hmap_get(&m, &other) == -1);
    /* pointer keys compare by address: equal strings at two addresses are
     * two keys */
    char a[] = "x", b[] = "x";
    CHECK(tg__hmap_put(&m, a, 1) && tg__hmap_put(&m, b, 2));
    CHECK(tg__hmap_get(&m, a) == 1 && tg__hmap_get(&m, b) == 2);
    tg__hmap_free(&m);
    free(cells);
}

static void test_hmap_reserve(void)
{
    tg_hmap m = tg__hmap_strings();
    CHECK(tg__hmap_reserve(&m, 100));
    size_t cap = m.cap;
    CHECK(cap >= 200);
    static char keys[100][8];
    for (int i = 0; i < 100; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        CHECK(tg__hmap_put(&m, keys[i], i));
    }
    CHECK(m.cap == cap); /* reserved: no growth */
    CHECK(tg__hmap_reserve(&m, 10) && m.cap == cap); /* never shrinks */
    tg__hmap_free(&m);
}

/* deleting keeps every other entry reachable, across wrap-around and
 * long probe runs, in maps of every size; deleted keys can come back */
static void test_hmap_delete(void)
{
    enum { N = 2000 };
    static char keys[N][16];
    for (int size = 1; size <= N; size = size * 3 + 1) {
        tg_hmap m = tg__hmap_strings();
        for (int i = 0; i < size; i++) {
            snprintf(keys[i], sizeof keys[i], "v%d", i);
            CHECK(tg__hmap_put(&m, keys[i], i));
        }
        unsigned x = 12345;
        bool gone[N] = {false};
        for (int k = 0; k < size; k++) { /* delete about half, in random order */
            x = x * 1103515245u + 12345u;
            int i = (int)((x >> 8) % (unsigned)size);
            tg__hmap_del(&m, keys[i]);
            gone[i] = true;
        }
        tg__hmap_del(&m, "absent"); /* nothing happens */
        int wrong = 0;
        size_t live = 0;
        for (int i = 0; i < size; i++) {
            wrong += tg__hmap_get(&m, keys[i]) != (gone[i] ? -1 : i);
            live += !gone[i];
        }
        CHECK(wrong == 0 && m.n == live);
        for (int i = 0; i < size; i++)
            if (gone[i])
                CHECK(tg__hmap_put(&m, keys[i], -i - 2));
        wrong = 0;
        for (int i = 0; i < size; i++)
            wrong += tg__hmap_get(&m, keys[i]) != (gone[i] ? -i - 2 : i);
        CHECK(wrong == 0 && m.n == (size_t)size);
        tg__hmap_free(&m);
    }
    tg_hmap e = tg__hmap_strings();
    tg__hmap_del(&e, "x"); /* an empty map */
    tg__hmap_del(&e, NULL);
    CHECK(e.n == 0);
}

static void test_strbuf(void)
{
    tg_strbuf b = {0};
    tg__strbuf_puts(&b, "ab");
    tg__strbuf_append(&b, "cdef", 2);
    tg__strbuf_printf(&b, "-%d-%s", 42, "x");
    CHECK(b.len == 9 && strcmp(b.data, "abcd-42-x") == 0);
    /* longer than any small stack buffer: formatted in place */
    char big[1000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tg__strbuf_printf(&b, "[%s]", big);
    CHECK(b.len == 9 + 1001);
    CHECK(b.data[b.len] == '\0' && b.data[9] == '[' && b.data[b.len - 1] == ']');
    CHECK(!b.failed);
    char *s = tg__strbuf_take(&b);
    CHECK(s && strlen(s) == 1010);
    CHECK(b.data == NULL && b.len == 0); /* emptied */
    free(s);
    s = tg__strbuf_take(&b); /* nothing appended: still a string */
    CHECK(s && s[0] == '\0');
    free(s);
    tg__strbuf_puts(&b, "gone");
    tg__strbuf_free(&b);
    CHECK(b.data == NULL && b.len == 0 && b.cap == 0);
}

static void test_strbuf_failed_is_sticky(void)
{
    tg_strbuf b = {0};
    tg__strbuf_puts(&b, "abc");
    b.failed = true; /* as after an allocation failure */
    tg__strbuf_puts(&b, "def");
    tg__strbuf_printf(&b, "%d", 1);
    CHECK(b.len == 3);
    CHECK(tg__strbuf_take(&b) == NULL); /* incomplete text is not handed out */
    CHECK(b.data == NULL && !b.failed);
}

/* sorted and duplicate-free, for the small sets (insertion) and the large
 * (qsort) alike, against a counting reference */
static void test_sorted_set(void)
{
    enum { N = 100 };
    int a[N], out[N];
    unsigned seed = 7;
    for (int n = 0; n <= N; n += n < 40 ? 1 : 20) {
        bool seen[50] = {0};
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            a[i] = (int)(seed >> 16) % 50 - 10;
            seen[a[i] + 10] = true;
        }
        int k = tg__sorted_set(a, n, out), expect = 0;
        for (int v = 0; v < 50; v++)
            if (seen[v])
                CHECK(expect < k && out[expect++] == v - 10);
        CHECK(k == expect);
    }
}

int main(void)
{
    RUN(test_hmap_strings);
    RUN(test_hmap_pointers);
    RUN(test_hmap_reserve);
    RUN(test_hmap_delete);
    RUN(test_strbuf);
    RUN(test_strbuf_failed_is_sticky);
    RUN(test_sorted_set);
    return tt_finish();
}
