/* The dense implicit-GEMM convolution for any CPU: on x86-64 compiled
 * for the baseline (SSE2, see CMakeLists.txt) whatever -march the rest of
 * the build uses; 16-byte vectors, the tiles of AVX2. */
#define DENSE_ISA generic
#define VEC_BYTES 16
#define DENSE_TILES(X) X(6, 2) X(4, 3)
#define DENSE_TAILS(X) X(6, 1) X(4, 1) X(4, 2)
#include "kernels/cpu/conv_dense_arch.h"
