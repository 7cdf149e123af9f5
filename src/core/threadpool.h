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

/* Task groups, for schedulers (the parallel graph executor): runs
 * fn(q, ctx, task, worker) for each of the n initial task ids and for
 * every id pushed with tg_tasks_push (from fn, on any thread) until none
 * is queued or running. The caller's thread and the pool's take tasks,
 * lowest id first; `worker` is the taking thread's index, 0 for the
 * caller, below tg_get_num_threads(). fn runs inside the pool's region,
 * so parallel_for calls it makes run serially on its thread. Called from
 * inside a region, everything runs on the calling thread. Returns 0, or
 * -1 when memory for the queue ran out (pushed tasks were then dropped). */
typedef struct tg_tasks tg_tasks;
typedef void (*tg_task_fn)(tg_tasks *q, void *ctx, int64_t task, int worker);
int tg_tasks_run(int n, const int64_t *tasks, tg_task_fn fn, void *ctx);
void tg_tasks_push(tg_tasks *q, int64_t task);

#endif
