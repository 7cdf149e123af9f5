/* layer_norm's float32 row kernels (layer_norm_arch.h) built for AVX2 + FMA: flags in CMakeLists.txt */
#if defined(__x86_64__)
#define TG_ARCH avx2
#include "kernels/cpu/layer_norm_arch.h"
#endif
