/* What every benchmark in bench/ needs to time and summarise: a monotonic
 * clock in seconds and the comparison qsort takes to order samples (for
 * medians and minima). Header-only: each benchmark is one program. */
#ifndef TG_BENCH_TIMING_H
#define TG_BENCH_TIMING_H

#include <time.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline double now_ms(void) { return now_s() * 1e3; }

/* the process's CPU time (all its threads) in ms: on a machine shared
 * with other work, a figure preemption does not inflate */
static inline double process_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}
static inline double now_us(void) { return now_s() * 1e6; }

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
