/* The one growth helper every growable array uses (src/util/grow.h):
 * contents survive growth, capacities follow from counts (arrays that
 * store none rely on it), overflow fails cleanly, and in grow-by-one
 * builds every growth of a small array moves it. */
#include "harness.h"
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>

static void test_contents_survive(void)
{
    int *a = NULL, cap = 0;
    for (int i = 0; i < 5000; i++) {
        CHECK(TG_GROW(a, cap, i + 1));
        CHECK(cap >= i + 1);
        a[i] = 3 * i;
    }
    int bad = 0;
    for (int i = 0; i < 5000; i++)
        bad += a[i] != 3 * i;
    CHECK(bad == 0);
    free(a);

    double *d = NULL;
    size_t zcap = 0;
    CHECK(TG_GROW(d, zcap, 0)); /* nothing asked: nothing allocated */
    CHECK(d == NULL && zcap == 0);
    CHECK(TG_GROW(d, zcap, 100)); /* several at once */
    CHECK(zcap >= 100);
    d[99] = 1.5;
    int64_t icap = 0;
    char *s = NULL;
    CHECK(TG_GROW(s, icap, 3));
    CHECK(icap >= 3);
    free(d);
    free(s);
}

/* the capacity of an array grown one element at a time from empty is
 * tg__grow_capacity(0, count): what arrays that keep only a count rely on */
static void test_capacity_follows_count(void)
{
    size_t sizes[] = {1, 24, 4096};
    for (int k = 0; k < 3; k++) {
        char *a = NULL;
        size_t cap = 0, elem = sizes[k], bad = 0;
        for (size_t n = 1; n <= 20000; n++) {
            if (!tg__grow_size(&a, &cap, n, elem)) {
                bad++;
                break;
            }
            bad += cap != tg__grow_capacity(0, n, elem);
            if (n % 997 == 0) { /* a jump of several elements lands the same */
                size_t c2 = tg__grow_capacity(0, n - 500, elem);
                bad += tg__grow_capacity(c2, n, elem) != cap;
            }
        }
        CHECK(bad == 0);
        free(a);
    }
    CHECK(tg__grow_capacity(16, 10, 4) == 16); /* room already */
}

static void test_overflow_fails_cleanly(void)
{
    int *a = NULL, cap = 0;
    CHECK(TG_GROW(a, cap, 4));
    a[3] = 7;
    int *before = a;
    CHECK(!TG_GROW(a, cap, (size_t)INT32_MAX + 10)); /* more than an int counts */
    CHECK(a == before && cap >= 4 && a[3] == 7);
    size_t zcap = 0;
    double *d = NULL;
    CHECK(!TG_GROW(d, zcap, SIZE_MAX / 4)); /* bytes overflow */
    CHECK(d == NULL && zcap == 0);
    free(a);
}

static void test_policy(void)
{
    int *a = NULL, cap = 0, moves = 0;
    for (int i = 0; i < 300; i++) {
        int *before = a;
        CHECK(TG_GROW(a, cap, i + 1));
        moves += a != before;
        a[i] = i;
    }
    if (tg__grow_by_one()) {
        /* every append moved the array: a pointer kept across one is freed */
        CHECK(moves == 300);
        CHECK(cap == 300);
    } else {
        CHECK(cap == 512); /* 8, 16, ..., 512 */
        CHECK(moves <= 7);
    }
    free(a);
    printf("  (this build grows %s)\n", tg__grow_by_one() ? "by one" : "by doubling");
}

int main(void)
{
    RUN(test_contents_survive);
    RUN(test_capacity_follows_count);
    RUN(test_overflow_fails_cleanly);
    RUN(test_policy);
    return tt_finish();
}
