/* The direct convolution kernels for AVX2 + FMA (compiled with -mavx2
 * -mfma, see CMakeLists.txt; run only when cpu.h finds them): tiles of up
 * to 12 accumulators of the 16 vector registers. */
#if defined(__x86_64__)
#define CONV_ISA avx2
#define VEC_BYTES 32
#define CONV_TILES_BLF(X) X(4, 3) X(3, 4) X(2, 6) X(6, 2) X(1, 8) X(4, 2) X(6, 1) X(4, 1)
#define CONV_TILES_BLW(X) X(4, 3) X(3, 4) X(2, 6) X(6, 2) X(1, 8) X(4, 2)
#define CONV_TILES_PVF(X) X(6, 2) X(4, 3) X(3, 4) X(2, 6) X(1, 8) X(4, 2)
#define CONV_TILES_PVW(X) X(6, 2) X(4, 3) X(3, 4) X(2, 6) X(1, 8) X(4, 2)
#include "kernels/cpu/conv_arch.h"
#endif
