/* What background prefetch gains: epochs of real MNIST through the loader
 * (batch 64, shuffled) with a simulated training step of a few ms of busy
 * CPU per batch, prefetch on (4 batches ahead) and off, interleaved.
 * Prints one JSON line per epoch and a summary line per mode (medians).
 *   bench_data_loader [--dir DIR] [--batch B] [--compute-ms MS] [--repeats R]
 *                     [--prefetch N]   (the "on" mode; default 4)
 * Fetches MNIST into DIR (default data/mnist) if it is not there. The
 * number that matters is wait_us_per_batch: time the training loop spends
 * in tg_loader_next, i.e. data preparation left on the critical path. */
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "timing.h"

static volatile double sink_all; /* keeps the simulated work alive */

typedef struct result {
    double epoch_s, wait_us, median_wait_us, p90_wait_us;
    double other_us; /* per batch, outside the loader and the step */
} result;

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n ? v[n / 2] : 0;
}

/* reads the batch (as a training step would) then burns CPU until `ms`
 * have passed since the step began */
static double fake_step(const tg_tensor *x, double ms)
{
    double t0 = now_s();
    const float *d = tg_data(x);
    double acc = 0;
    for (int64_t i = 0; i < tg_numel(x); i++)
        acc += d[i];
    volatile double sink = acc;
    while ((now_s() - t0) * 1e3 < ms)
        sink = sink * 1.0000001 + 1e-9;
    return sink;
}

static void log_stderr(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
}

/* one epoch; returns false on error */
static bool epoch(tg_dataset *d, int64_t batch, double ms, int prefetch,
                  int repeat, result *res)
{
    tg_loader_options o = {.batch_size = batch, .shuffle = true, .seed = 42,
                           .drop_last = false, .prefetch = prefetch};
    tg_loader *l = tg_loader_new(d, &o);
    if (!l)
        return false;
    tg_loader_set_epoch(l, (uint64_t)repeat);
    int64_t nb = tg_loader_num_batches(l), n = 0;
    double *waits = malloc(sizeof(double) * (size_t)(nb + 1));
    double wait = 0, step = 0, t0 = now_s(), sink = 0;
    int r;
    for (;;) {
        tg_scope_begin();
        tg_tensor *x, *y;
        double w0 = now_s();
        r = tg_loader_next(l, &x, &y);
        double w = now_s() - w0;
        if (r == 1) {
            waits[n++] = w * 1e6;
            wait += w;
            double s0 = now_s();
            sink += fake_step(x, ms);
            step += now_s() - s0;
        }
        tg_scope_end();
        if (r != 1)
            break;
    }
    double total = now_s() - t0;
    tg_loader_free(l);
    if (r < 0) {
        free(waits);
        return false;
    }
    res->epoch_s = total;
    res->other_us = (total - wait - step) / (double)(n ? n : 1) * 1e6;
    res->wait_us = wait / (double)(n ? n : 1) * 1e6;
    res->median_wait_us = median(waits, (int)n);
    res->p90_wait_us = n ? waits[n * 9 / 10] : 0;
    free(waits);
    printf("{\"bench\":\"data_loader\",\"prefetch\":%d,\"batch\":%lld,"
           "\"compute_ms\":%.1f,\"repeat\":%d,\"batches\":%lld,\"epoch_s\":%.4f,"
           "\"wait_us_per_batch\":%.1f,\"median_wait_us\":%.1f,"
           "\"p90_wait_us\":%.1f,\"other_us_per_batch\":%.1f}\n",
           prefetch, (long long)batch, ms, repeat, (long long)n, total,
           res->wait_us, res->median_wait_us, res->p90_wait_us, res->other_us);
    fflush(stdout);
    sink_all += sink;
    return true;
}

int main(int argc, char **argv)
{
    const char *dir = TG_MNIST_DEFAULT_DIR;
    int64_t batch = 64;
    double ms = 3;
    int repeats = 5, ahead = 4;
    for (int i = 1; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--dir"))
            dir = v;
        else if (!strcmp(argv[i], "--batch"))
            batch = atoll(v);
        else if (!strcmp(argv[i], "--compute-ms"))
            ms = atof(v);
        else if (!strcmp(argv[i], "--repeats"))
            repeats = atoi(v);
        else if (!strcmp(argv[i], "--prefetch"))
            ahead = atoi(v);
        else {
            fprintf(stderr, "usage: bench_data_loader [--dir DIR] [--batch B] "
                    "[--compute-ms MS] [--repeats R] [--prefetch N]\n");
            return 1;
        }
    }
    if (repeats < 1 || repeats > 100 || batch < 1 || ahead < 1 || ahead > 64) {
        fprintf(stderr, "bench_data_loader: bad --repeats, --batch or --prefetch\n");
        return 1;
    }
    if (tg_mnist_ensure(dir, log_stderr, NULL) != TG_OK) {
        fprintf(stderr, "bench_data_loader: %s\n", tg_last_error());
        return 1;
    }
    double t0 = now_s();
    tg_dataset *d = tg_mnist_dataset(dir, true);
    if (!d) {
        fprintf(stderr, "bench_data_loader: %s\n", tg_last_error());
        return 1;
    }
    printf("{\"bench\":\"mnist_load\",\"images\":%lld,\"load_s\":%.4f}\n",
           (long long)tg_dataset_size(d), now_s() - t0);
    /* modes interleaved, so drifting machine load hits both alike */
    const int modes[2] = {0, ahead};
    double ep[2][100], wt[2][100], md[2][100];
    for (int r = 0; r < repeats; r++)
        for (int m = 0; m < 2; m++) {
            result res;
            if (!epoch(d, batch, ms, modes[m], r, &res)) {
                fprintf(stderr, "bench_data_loader: %s\n", tg_last_error());
                tg_dataset_free(d);
                return 1;
            }
            ep[m][r] = res.epoch_s;
            wt[m][r] = res.wait_us;
            md[m][r] = res.median_wait_us;
        }
    for (int m = 0; m < 2; m++)
        printf("{\"bench\":\"data_loader_summary\",\"prefetch\":%d,\"batch\":%lld,"
               "\"compute_ms\":%.1f,\"repeats\":%d,\"median_epoch_s\":%.4f,"
               "\"median_wait_us_per_batch\":%.1f,\"median_of_median_wait_us\":%.1f}\n",
               modes[m], (long long)batch, ms, repeats, median(ep[m], repeats),
               median(wt[m], repeats), median(md[m], repeats));
    tg_dataset_free(d);
    return 0;
}
