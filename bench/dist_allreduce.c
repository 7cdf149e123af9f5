/* Allreduce timings for the scaling model of docs/DISTRIBUTED.md: run
 * under `mpirun -np N` (bench/distributed.sh does, with N = 2). For each
 * size (1 float: the latency alpha; LeNet-5's 61 706 parameters; 1 Mi
 * floats: the bandwidth term) rank 0 prints one JSON line with the median
 * and minimum seconds of tg_dist_allreduce (float32 SUM) over the reps,
 * each rep started together after a barrier. Never asserts. */
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int time_size(int64_t n, int reps)
{
    tg_tensor *t = tg_ones(TG_FLOAT32, 1, &n);
    double *secs = malloc((size_t)reps * sizeof *secs);
    if (!t || !secs)
        return 1;
    for (int r = 0; r < reps; r++) {
        if (tg_dist_barrier() != TG_OK)
            return 1;
        double t0 = now();
        if (tg_dist_allreduce(t, TG_REDUCE_SUM) != TG_OK)
            return 1;
        secs[r] = now() - t0;
    }
    qsort(secs, (size_t)reps, sizeof *secs, cmp_double);
    if (tg_dist_rank() == 0)
        printf("{\"bench\":\"allreduce\",\"ranks\":%d,\"floats\":%lld,\"bytes\":%lld,"
               "\"reps\":%d,\"median_s\":%.3e,\"min_s\":%.3e}\n",
               tg_dist_world_size(), (long long)n, (long long)n * 4, reps, secs[reps / 2],
               secs[0]);
    free(secs);
    tg_release(t);
    return 0;
}

int main(void)
{
    if (tg_dist_init() != TG_OK) {
        fprintf(stderr, "bench_dist_allreduce: %s\n", tg_last_error());
        return 1;
    }
    int fail = time_size(1, 2000) || time_size(61706, 500) || time_size(1 << 20, 50);
    if (fail)
        fprintf(stderr, "bench_dist_allreduce: %s\n", tg_last_error());
    tg_dist_finalize();
    return fail;
}
