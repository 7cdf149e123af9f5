/* The limit of a memory-bound kernel on this machine: the time a plain
 * copy (memcpy, split over the thread pool like the kernels) takes to move
 * the same bytes, half read and half written, between buffers of that
 * size, so that cache level and threads are those of the kernel measured.
 * Header-only, for the benchmarks that print an op's share of it
 * (memory_ops.c, pool.c). */
#ifndef TG_BENCH_COPY_PROBE_H
#define TG_BENCH_COPY_PROBE_H

#include "core/threadpool.h"
#include "timing.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the clock both the probe and the benchmark read: wall time by default;
 * on one thread the benchmarks take the thread's CPU time (probe_cpu_clock),
 * which other processes on a shared machine do not inflate */
static double (*probe_clock_us)(void) = now_us;
static inline double thread_cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

typedef struct copy_job {
    const char *src;
    char *dst;
} copy_job;

static void copy_range(void *ctx, int64_t b, int64_t e)
{
    copy_job *c = ctx;
    memcpy(c->dst + b, c->src + b, (size_t)(e - b));
}

/* median microseconds over 11 samples to read and write `bytes` / 2 each,
 * split over the pool's threads */
static double copy_us(int64_t bytes)
{
    int64_t half = bytes / 2;
    char *src = malloc((size_t)half), *dst = malloc((size_t)half);
    if (!src || !dst) {
        free(src);
        free(dst);
        return 0.0;
    }
    memset(src, 1, (size_t)half);
    memset(dst, 0, (size_t)half);
    copy_job c = {src, dst};
    double t[11];
    for (int s = 0; s < 11; s++) {
        tg_parallel_for(half, 4096, copy_range, &c);
        double t0 = probe_clock_us();
        for (int i = 0; i < 50; i++)
            tg_parallel_for(half, 4096, copy_range, &c);
        t[s] = (probe_clock_us() - t0) / 50;
    }
    qsort(t, 11, sizeof *t, cmp_double);
    free(src);
    free(dst);
    return t[5];
}

#endif
