#include "util/intset.h"

#include <stdlib.h>
#include <string.h>

int tg__cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int tg__sorted_set(const int *a, int n, int *out)
{
    if (n <= 0)
        return 0;
    memcpy(out, a, (size_t)n * sizeof *a);
    qsort(out, (size_t)n, sizeof *out, tg__cmp_int);
    int k = 1;
    for (int i = 1; i < n; i++)
        if (out[i] != out[k - 1])
            out[k++] = out[i];
    return k;
}
