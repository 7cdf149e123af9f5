/* 2 x 2 max pooling with one-byte offsets (pool_2x2_compact_arch.h) built for AVX2 + FMA: flags in CMakeLists.txt */
#if defined(__x86_64__)
#define TG_ARCH avx2
#include "kernels/cpu/pool_2x2_compact_arch.h"
#endif
