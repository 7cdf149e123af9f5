/* layer_norm's float32 row kernels (layer_norm_arch.h) built for AVX-512 (F, VL, BW, DQ): flags in CMakeLists.txt */
#if defined(__x86_64__)
#define TG_ARCH avx512
#include "kernels/cpu/layer_norm_arch.h"
#endif
