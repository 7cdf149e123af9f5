/* Test data for the kernel tests that compare against double-precision
 * reference loops: values drawn in [-1, 1) and their float32 or float64
 * copy for the kernel under test. */
#ifndef TG_TEST_KERNEL_DATA_H
#define TG_TEST_KERNEL_DATA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* n values in [-1, 1), multiples of 1/32768, from seed */
static inline void fill(double *v, int64_t n, unsigned seed)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (double)((seed >> 8) & 0xffff) / 32768.0 - 1.0;
    }
}

/* a malloc'd float64 (f64) or float32 copy of v[0..n) */
static inline void *typed(const double *v, int64_t n, bool f64)
{
    void *p = malloc((size_t)(n ? n : 1) * (f64 ? sizeof(double) : sizeof(float)));
    for (int64_t i = 0; i < n; i++) {
        if (f64)
            ((double *)p)[i] = v[i];
        else
            ((float *)p)[i] = (float)v[i];
    }
    return p;
}

#endif
