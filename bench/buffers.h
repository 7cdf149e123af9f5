/* The benchmarks' input buffers: n float32 values in [-0.5, 0.5) from a
 * seeded linear congruential generator (the same values every run), in a
 * 64-byte aligned block (free() releases it); NULL when out of memory.
 * Header-only: each benchmark is one program. */
#ifndef TG_BENCH_BUFFERS_H
#define TG_BENCH_BUFFERS_H

#include <stdint.h>
#include <stdlib.h>

static inline float *bench_rand_f32(int64_t n, unsigned seed)
{
    size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    for (int64_t i = 0; p && i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

#endif
