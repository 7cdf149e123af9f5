/* the reduction accumulators (reduce_arch.h) built for the baseline: flags in CMakeLists.txt */
#define TG_ARCH generic
#include "kernels/cpu/reduce_arch.h"
