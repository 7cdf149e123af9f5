/* layer_norm's float32 row kernels (layer_norm_arch.h) built for the baseline: flags in CMakeLists.txt */
#define TG_ARCH generic
#include "kernels/cpu/layer_norm_arch.h"
