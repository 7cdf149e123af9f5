/* The one thread pool of the library (intra-op parallelism). */
#ifndef TG_THREADPOOL_H
#define TG_THREADPOOL_H

#include <stdint.h>

/* calls fn(ctx, begin, end) over [0, n) split into chunks of at least
 * `grain` items, on the pool's threads and the caller's. Nested calls
 * from inside a worker run serially on that worker. */
typedef void (*tg_range_fn)(void *ctx, int64_t begin, int64_t end);
void tg_parallel_for(int64_t n, int64_t grain, tg_range_fn fn, void *ctx);
/* true on a pool worker or inside a parallel_for body */
int tg_in_parallel_region(void);

#endif
