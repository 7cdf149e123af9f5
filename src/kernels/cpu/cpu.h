/* Which SIMD instruction set the hand-written kernels use, decided at run
 * time from the CPU itself (cpuid and the OS's register-state mask), never
 * from what a library guessed: AVX-512 (F, VL, BW, DQ), AVX2 + FMA, or
 * the generic build (SSE2 on x86-64). TG_CPU=generic|avx2|avx512 asks for
 * a lower level (a level the CPU lacks is not granted): valgrind, for one,
 * reports AVX2 but no AVX-512. */
#ifndef TG_KERNELS_CPU_H
#define TG_KERNELS_CPU_H

typedef enum tg__isa {
    TG_ISA_GENERIC,
    TG_ISA_AVX2,
    TG_ISA_AVX512
} tg__isa;

/* the level in use (detected once; TG_CPU read once) */
tg__isa tg__cpu_isa(void);
/* the level the CPU and OS support, whatever TG_CPU says */
tg__isa tg__cpu_detected(void);
/* the CPU's family when it is AMD's (0x19: Zen 3 and 4, 0x1A: Zen 5),
 * else 0: for the choices measured to differ between them (a Zen 4 runs
 * each zmm operation as two halves, a Zen 5 whole) */
unsigned tg__cpu_amd_family(void);
/* tests and benchmarks: use `isa` from now on (at most the detected
 * level); not for use while kernels run on other threads */
void tg__cpu_force(tg__isa isa);
/* "generic", "avx2" or "avx512" */
const char *tg__isa_name(tg__isa isa);

#endif
