#include "util/intset.h"

#include <stdlib.h>
#include <string.h>

int tg__cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

enum { SMALL_SET = 32 };

int tg__sorted_set(const int *a, int n, int *out)
{
    if (n <= 0)
        return 0;
    if (n > SMALL_SET) {
        memcpy(out, a, (size_t)n * sizeof *a);
        qsort(out, (size_t)n, sizeof *out, tg__cmp_int);
    } else { /* insertion: a session run keys its plan by a few ids, every call */
        for (int i = 0; i < n; i++) {
            int j = i;
            for (; j > 0 && out[j - 1] > a[i]; j--)
                out[j] = out[j - 1];
            out[j] = a[i];
        }
    }
    int k = 1;
    for (int i = 1; i < n; i++)
        if (out[i] != out[k - 1])
            out[k++] = out[i];
    return k;
}
