/* Training progress (see progress.h): the bar redraws at most 10 times a
 * second; plain lines come every tenth of an epoch. */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double progress_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_begin(progress *p, int epoch, int epochs, int64_t batches, bool quiet)
{
    *p = (progress){.tty = isatty(STDOUT_FILENO), .quiet = quiet, .epoch = epoch,
                    .epochs = epochs, .total = batches, .start = progress_now()};
}

static void draw(progress *p, double now)
{
    double secs = now - p->start, rate = secs > 0 ? (double)p->images / secs : 0;
    double eta = p->done ? secs * (double)(p->total - p->done) / (double)p->done : 0;
    double loss = p->loss_n ? p->loss_sum / (double)p->loss_n : 0;
    if (p->tty) {
        int width = 30, fill = p->total ? (int)(width * p->done / p->total) : width;
        printf("\repoch %d/%d [%.*s%*s] %3d%% loss %.4f %6.0f img/s ETA %3.0fs ",
               p->epoch, p->epochs, fill, "==============================", width - fill,
               "", p->total ? (int)(100 * p->done / p->total) : 100, loss, rate, eta);
    } else {
        printf("epoch %d/%d batch %lld/%lld loss %.4f %.0f img/s ETA %.0fs\n", p->epoch,
               p->epochs, (long long)p->done, (long long)p->total, loss, rate, eta);
    }
    fflush(stdout);
}

void progress_step(progress *p, int64_t images, double loss)
{
    p->done++;
    p->images += images;
    p->loss_sum += loss;
    p->loss_n++;
    if (p->quiet)
        return;
    double now = progress_now();
    int64_t tenth = p->total >= 10 ? p->total / 10 : 1;
    bool due = p->tty ? now - p->last_print >= 0.1 : p->done % tenth == 0;
    if (due || p->done == p->total) {
        p->last_print = now;
        draw(p, now);
    }
}

double progress_end(progress *p)
{
    if (p->tty && !p->quiet)
        printf("\r%*s\r", 100, "");
    return p->loss_n ? p->loss_sum / (double)p->loss_n : 0;
}
