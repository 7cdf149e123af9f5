/* The depthwise plane kernel for AVX2 + FMA (compiled with -mavx2 -mfma,
 * see CMakeLists.txt; run only when cpu.h finds them): conv_dw_arch.h. */
#if defined(__x86_64__)
#define DW_ISA avx2
#define VEC_BYTES 32
#include "kernels/cpu/conv_dw_arch.h"
#include "kernels/cpu/conv_few_arch.h"
#endif
