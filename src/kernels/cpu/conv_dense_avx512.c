/* The dense implicit-GEMM convolution for AVX-512 (compiled with
 * -mavx512f & co., see CMakeLists.txt; run only when cpu.h finds
 * AVX-512): of the 32 vector registers, a tile of 12 output channels x 2
 * vectors of positions takes 24 accumulators, 2 hold the image's vectors
 * and 1 the broadcast weight; or 8 x 3 vectors (24 + 3 + 1), for output
 * channels in multiples of 8 (conv_dense.c picks the one that computes
 * fewer padded rows and columns). */
#if defined(__x86_64__)
#define DENSE_ISA avx512
#define VEC_BYTES 64
#define DENSE_TILES(X) X(12, 2) X(8, 3)
#include "kernels/cpu/conv_dense_arch.h"
#endif
