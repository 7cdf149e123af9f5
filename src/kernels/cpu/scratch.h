/* Per-thread scratch buffers for kernels: packing buffers and the like are
 * kept between calls instead of being allocated per call (malloc of a few
 * hundred KB is an mmap and page faults each time). Slots let kernels
 * that call each other hold buffers at the same time: */
#ifndef TG_KERNELS_SCRATCH_H
#define TG_KERNELS_SCRATCH_H

#include <stddef.h>

enum {
    TG_SCRATCH_GEMM_A,  /* GEMM: packed A */
    TG_SCRATCH_GEMM_B,  /* GEMM: packed B */
    TG_SCRATCH_KERNEL0, /* kernels that call GEMM (convolution, ...) */
    TG_SCRATCH_KERNEL1,
    TG_SCRATCH_KERNEL2,
    TG_SCRATCH_SHARED,  /* a buffer the caller shares with its pool's threads */
    TG_SCRATCH_SLOTS
};

/* the calling thread's buffer in `slot`, at least `bytes` long and 64-byte
 * aligned, or NULL when out of memory; valid until the thread asks for
 * the same slot again. Its contents are not kept when it grows. Freed at
 * thread exit. */
void *tg__scratch(int slot, size_t bytes);

#endif
