/* The blocked GEMM for any CPU: on x86-64 compiled for the baseline
 * (SSE2, see CMakeLists.txt) whatever -march the rest of the build uses,
 * so that it is a real fallback; 6 x 8 float32 or 6 x 4 float64 tiles in
 * 16-byte vectors. */
#define GEMM_ISA generic
#define VEC_BYTES 16
#define MR_F32 6
#define NV_F32 2
#define MR_F64 6
#define NV_F64 2
#define KC 256
#define MC(MR) ((MR) * 16)
#define NC 4096
#include "kernels/cpu/gemm_arch.h"
