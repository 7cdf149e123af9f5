/* float32 max pooling values (pool_max_values_arch.h) built for AVX2 + FMA: flags in CMakeLists.txt */
#if defined(__x86_64__)
#define TG_ARCH avx2
#include "kernels/cpu/pool_max_values_arch.h"
#endif
