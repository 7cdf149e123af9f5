/* The blocked GEMM for AVX-512 (compiled with -mavx512f & co., see
 * CMakeLists.txt; run only when cpu.h finds AVX-512): 32 vector registers
 * hold a 14 x 32 float32 tile (28 accumulators, 2 of B, 1 broadcast) or
 * 14 x 16 float64. */
#if defined(__x86_64__)
#define GEMM_ISA avx512
#define VEC_BYTES 64
#define MR_F32 14
#define NV_F32 2
#define MR_F64 14
#define NV_F64 2
/* KC x NR of B (32 KB) stays in L1 across a block's row panels; the
 * MC x KC A block (224 KB float32) in L2 */
#define KC 256
#define MC(MR) ((MR) * 16)
#define NC 4096
#include "kernels/cpu/gemm_arch.h"
#endif
