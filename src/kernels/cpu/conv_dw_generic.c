/* The depthwise plane kernel for any CPU: on x86-64 compiled for the
 * baseline (SSE2, see CMakeLists.txt) whatever -march the rest of the
 * build uses; 16-byte vectors. conv_dw_arch.h. */
#define DW_ISA generic
#define VEC_BYTES 16
#include "kernels/cpu/conv_dw_arch.h"
