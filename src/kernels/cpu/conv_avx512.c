/* The direct convolution kernels for AVX-512 (compiled with -mavx512f &
 * co., see CMakeLists.txt; run only when cpu.h finds AVX-512): tiles of
 * up to 24 accumulators of the 32 vector registers. */
#if defined(__x86_64__)
#define CONV_ISA avx512
#define VEC_BYTES 64
#define CONV_TILES_BLF(X) X(4, 6) X(6, 4) X(4, 5) X(8, 3) X(3, 8) X(6, 2) X(6, 1) X(4, 3)
#define CONV_TILES_BLW(X) X(4, 6) X(6, 4) X(3, 8) X(8, 3) X(2, 12) X(1, 16)
#define CONV_TILES_PVF(X) X(6, 4) X(4, 6) X(8, 3) X(3, 8) X(2, 12) X(1, 16)
#define CONV_TILES_PVW(X) X(6, 4) X(4, 6) X(8, 3) X(3, 8) X(2, 12) X(1, 16)
#include "kernels/cpu/conv_arch.h"
#endif
