/* The dense implicit-GEMM convolution for AVX2 + FMA (compiled with
 * -mavx2 -mfma, see CMakeLists.txt; run only when cpu.h finds them): of
 * the 16 vector registers, a tile of 6 output channels x 2 vectors of
 * positions takes 12 accumulators, 2 hold the image's vectors and 1 the
 * broadcast weight; or 4 x 3 vectors (12 + 3 + 1). */
#if defined(__x86_64__)
#define DENSE_ISA avx2
#define VEC_BYTES 32
#define DENSE_TILES(X) X(6, 2) X(4, 3)
#define DENSE_TAILS(X) X(6, 1) X(4, 1) X(4, 2)
#include "kernels/cpu/conv_dense_arch.h"
#endif
