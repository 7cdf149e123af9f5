/* The depthwise plane kernel for AVX-512 (compiled with -mavx512f & co.,
 * see CMakeLists.txt; run only when cpu.h finds it): conv_dw_arch.h. */
#if defined(__x86_64__)
#define DW_ISA avx512
#define VEC_BYTES 64
#include "kernels/cpu/conv_dw_arch.h"
#include "kernels/cpu/conv_few_arch.h"
#endif
