/* 2 x 2 max pooling with one-byte offsets (pool_2x2_compact_arch.h) built for the baseline: flags in CMakeLists.txt */
#define TG_ARCH generic
#include "kernels/cpu/pool_2x2_compact_arch.h"
