/* The direct convolution kernels for any CPU: on x86-64 compiled for the
 * baseline (SSE2, see CMakeLists.txt) whatever -march the rest of the
 * build uses; 16-byte vectors, tiles of up to 12 accumulators. */
#define CONV_ISA generic
#define VEC_BYTES 16
#define CONV_TILES_BLF(X) X(4, 3) X(3, 4) X(2, 6) X(6, 2) X(1, 8) X(4, 2) X(6, 1) X(4, 1)
#define CONV_TILES_BLW(X) X(4, 3) X(3, 4) X(2, 6) X(6, 2) X(1, 8) X(4, 2)
#define CONV_TILES_PVF(X) X(6, 2) X(4, 3) X(3, 4) X(2, 6) X(1, 8) X(4, 2)
#define CONV_TILES_PVW(X) X(6, 2) X(4, 3) X(3, 4) X(2, 6) X(1, 8) X(4, 2)
#include "kernels/cpu/conv_arch.h"
