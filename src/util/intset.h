/* Sets of ints as sorted, duplicate-free arrays: a run's feeds, fetches and
 * targets are keyed this way, so that the same request given in another
 * order (or with an id twice) finds the same cached plan. */
#ifndef TG_UTIL_INTSET_H
#define TG_UTIL_INTSET_H

/* qsort's comparison for ints, ascending */
int tg__cmp_int(const void *a, const void *b);

/* a sorted, duplicate-free copy of a[0..n) into out (room for n); returns
 * its length */
int tg__sorted_set(const int *a, int n, int *out);

#endif
