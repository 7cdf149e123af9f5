/* The dense implicit-GEMM convolution for AVX-512 (compiled with
 * -mavx512f & co., see CMakeLists.txt; run only when cpu.h finds
 * AVX-512): of the 32 vector registers, a tile of 12 output channels x 2
 * vectors of positions takes 24 accumulators, 2 hold the image's vectors
 * and 1 the broadcast weight; or 8 x 3 vectors (24 + 3 + 1), for output
 * channels in multiples of 8. The same tiles over ymm vectors
 * (tg__dense_arch_avx512y, all 32 registers still) cover positions 8 at
 * a time instead of 16; conv_dense.c picks the shape that computes the
 * fewest padded rows and columns, ymm's counted as zmm's on CPUs that
 * split zmm operations in two (AMD's Zen 4) and as twice that elsewhere.
 * With frozen (packed) weights, a third shape runs its vectors over
 * output channels: 64 of them (4 vectors) x 7 positions of one output
 * row, 28 accumulators and 4 weight vectors, the image's values
 * broadcast from memory: no wide overhang, which on ResNet's 7x7 planes
 * (layer 4) is 1/8 of the wide tiles' work, and 7 divides every plane
 * width of ResNet and the MobileNets. */
#if defined(__x86_64__)
#define DENSE_ISA avx512y
#define VEC_BYTES 32
#define DENSE_TILES(X) X(12, 2) X(8, 3)
#define DENSE_TAILS(X) X(12, 1) X(8, 1) X(8, 2)
#include "kernels/cpu/conv_dense_arch.h"
#undef DENSE_ISA
#undef VEC_BYTES
#undef DENSE_TILES
#undef DENSE_TAILS

#define DENSE_ISA avx512
#define VEC_BYTES 64
#define DENSE_TILES(X) X(12, 2) X(8, 3)
#define DENSE_TAILS(X) X(12, 1) X(8, 1) X(8, 2)
#define DENSE_OUTS(X) X(4, 7)
#define DENSE_NARROWER &tg__dense_arch_avx512y
#define DENSE_PACKED
#include "kernels/cpu/conv_dense_arch.h"
#endif
