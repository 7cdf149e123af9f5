/* the reduction accumulators (reduce_arch.h) built for AVX2 + FMA: flags in CMakeLists.txt */
#if defined(__x86_64__)
#define TG_ARCH avx2
#include "kernels/cpu/reduce_arch.h"
#endif
