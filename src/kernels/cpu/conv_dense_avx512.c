/* The dense implicit-GEMM convolution for AVX-512 (compiled with
 * -mavx512f & co., see CMakeLists.txt; run only when cpu.h finds
 * AVX-512): of the 32 vector registers, a tile of 12 output channels x 2
 * vectors of positions takes 24 accumulators, 2 hold the image's vectors
 * and 1 the broadcast weight. */
#if defined(__x86_64__)
#define DENSE_ISA avx512
#define VEC_BYTES 64
#define MR_F32 12
#define NV_F32 2
#define MR_F64 12
#define NV_F64 2
#include "kernels/cpu/conv_dense_arch.h"
#endif
