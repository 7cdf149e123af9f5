/* 2 x 2 max pooling (pool_2x2_arch.h) built for AVX-512 (F, VL, BW, DQ): flags in CMakeLists.txt */
#if defined(__x86_64__)
#define TG_ARCH avx512
#include "kernels/cpu/pool_2x2_arch.h"
#endif
