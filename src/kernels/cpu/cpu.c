/* Run-time CPU feature detection for kernel dispatch (see cpu.h). */
#include "kernels/cpu/cpu.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* the CPU must have the instructions AND the OS must save the registers
 * (XCR0): ymm state for AVX2, plus opmask and zmm state for AVX-512 */
static tg__isa detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(1, 0, &a, &b, &c, &d))
        return TG_ISA_GENERIC;
    bool fma = c >> 12 & 1, avx = c >> 28 & 1, osxsave = c >> 27 & 1;
    if (!fma || !avx || !osxsave)
        return TG_ISA_GENERIC;
    uint64_t xcr0 = xgetbv0();
    if ((xcr0 & 0x6) != 0x6 || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return TG_ISA_GENERIC;
    bool avx2 = b >> 5 & 1;
    bool avx512 = (b >> 16 & 1) && (b >> 17 & 1) && (b >> 30 & 1) && (b >> 31 & 1);
    if (avx512 && (xcr0 & 0xe6) == 0xe6)
        return TG_ISA_AVX512;
    return avx2 ? TG_ISA_AVX2 : TG_ISA_GENERIC;
}

/* "AuthenticAMD"'s family (extended family added), else 0 */
static unsigned detect_amd_family(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541 /* "Auth" */ ||
        d != 0x69746e65 /* "enti" */ || c != 0x444d4163 /* "cAMD" */ ||
        !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    unsigned family = (a >> 8) & 0xf;
    return family + (family == 0xf ? (a >> 20) & 0xff : 0);
}
#else
static tg__isa detect(void) { return TG_ISA_GENERIC; }
static unsigned detect_amd_family(void) { return 0; }
#endif

static tg__isa detected, chosen;
static unsigned amd_family;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    detected = chosen = detect();
    amd_family = detect_amd_family();
    const char *env = getenv("TG_CPU");
    if (!env)
        return;
    for (int i = TG_ISA_GENERIC; i <= TG_ISA_AVX512; i++)
        if (strcmp(env, tg__isa_name((tg__isa)i)) == 0 && i < (int)chosen)
            chosen = (tg__isa)i;
}

tg__isa tg__cpu_isa(void)
{
    pthread_once(&once, init);
    return chosen;
}

tg__isa tg__cpu_detected(void)
{
    pthread_once(&once, init);
    return detected;
}

unsigned tg__cpu_amd_family(void)
{
    pthread_once(&once, init);
    return amd_family;
}

void tg__cpu_force(tg__isa isa)
{
    pthread_once(&once, init);
    chosen = isa < detected ? isa : detected;
}

const char *tg__isa_name(tg__isa isa)
{
    switch (isa) {
    case TG_ISA_AVX512: return "avx512";
    case TG_ISA_AVX2: return "avx2";
    default: return "generic";
    }
}
