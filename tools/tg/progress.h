/* Training progress for the tg tool: a live bar on a terminal, periodic
 * plain lines otherwise, nothing when quiet. */
#ifndef TG_TOOL_PROGRESS_H
#define TG_TOOL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct progress {
    bool tty, quiet;
    int epoch, epochs;
    int64_t total, done, images;
    double start, last_print;
    double loss_sum;
    int64_t loss_n;
} progress;

double progress_now(void); /* monotonic seconds */
/* CPU seconds of the whole process (every thread): with --threads 1 the
 * work itself, far less sensitive than wall time to other jobs sharing the
 * machine's cores (bench/lenet_isa_modes.sh compares modes on it) */
double progress_cpu_now(void);
void progress_begin(progress *p, int epoch, int epochs, int64_t batches,
                    bool quiet);
/* one batch of `images` images done with this loss */
void progress_step(progress *p, int64_t images, double loss);
/* clears the bar; returns the epoch's mean loss */
double progress_end(progress *p);

#endif
