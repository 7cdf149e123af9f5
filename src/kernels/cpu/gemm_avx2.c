/* The blocked GEMM for AVX2 + FMA (compiled with -mavx2 -mfma, see
 * CMakeLists.txt; run only when cpu.h finds them): 16 vector registers
 * hold a 6 x 16 float32 tile (12 accumulators, 2 of B, 1 broadcast) or
 * 6 x 8 float64. */
#if defined(__x86_64__)
#define GEMM_ISA avx2
#define VEC_BYTES 32
#define MR_F32 6
#define NV_F32 2
#define MR_F64 6
#define NV_F64 2
#define KC 256
#define MC(MR) ((MR) * 16)
#define NC 4096
#include "kernels/cpu/gemm_arch.h"
#endif
