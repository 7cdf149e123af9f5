/* The dense implicit-GEMM convolution for any CPU: on x86-64 compiled
 * for the baseline (SSE2, see CMakeLists.txt) whatever -march the rest of
 * the build uses; 16-byte vectors, a tile of 6 x 2 vectors as on AVX2. */
#define DENSE_ISA generic
#define VEC_BYTES 16
#define MR_F32 6
#define NV_F32 2
#define MR_F64 6
#define NV_F64 2
#include "kernels/cpu/conv_dense_arch.h"
