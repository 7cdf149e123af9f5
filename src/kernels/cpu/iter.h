/* Strided elementwise iteration over up to four operands with numpy
 * broadcasting: dims are coalesced, the inner loop is handed whole rows
 * (pointer + byte stride per operand) so kernels can vectorize, and large
 * iterations are split across the thread pool. */
#ifndef TG_ITER_H
#define TG_ITER_H

#include "core/tensor_impl.h"

#define TG_ITER_MAX_OPS 4

typedef struct tg_iter {
    int ndim; /* >= 1 after coalescing */
    int64_t shape[TG_MAX_DIMS];
    int n_ops;
    char *base[TG_ITER_MAX_OPS];
    int64_t strides[TG_ITER_MAX_OPS][TG_MAX_DIMS]; /* bytes */
    int64_t numel;
} tg_iter;

/* t[0] (usually the output) sets the shape; the other operands must
 * broadcast to it (checked by the op's inference beforehand) */
void tg_iter_init(tg_iter *it, int n_ops, const tg_tensor *const *t);

/* a row: n elements, operand k at p[k] advancing s[k] bytes */
typedef void (*tg_iter_row_fn)(char **p, const int64_t *s, int64_t n,
                               void *ctx);
/* runs fn over every row, in parallel when the iteration is large */
void tg_iter_run(const tg_iter *it, tg_iter_row_fn fn, void *ctx);
/* the same, always on the calling thread */
void tg_iter_run_serial(const tg_iter *it, tg_iter_row_fn fn, void *ctx);

/* elements per parallel chunk: below this, threads cost more than they
 * give. A parallel_for costs ~1-2 us when the pool's workers are watching
 * for work (core/threadpool.c), while cheap kernels stream ~10 elements
 * per ns: a chunk of 16k elements is a couple of microseconds of work.
 * Smaller than that pays on two cores even so: an op over 32k-64k
 * elements run on one core reads the half its neighbour op wrote on the
 * other (LeNet's fc1 update, 48k elements, in a level-0 graph: where
 * 11.4 -> 8.6 us, assign 18.3 -> 9.4 us when split in two, 4 us alone
 * on one thread) */
#define TG_ITER_GRAIN 16384

#endif
