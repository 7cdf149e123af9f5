/* tg_kernels_report (tg/core.h): how this build's kernels run on this
 * machine and why, for `tg version --verbose` and tensorgraph.show_config().
 * What the build targets comes from CMake (TG_BUILD_TARGET, set on this
 * file only: TG_NATIVE); the rest is read at run time. */
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/isa_clone.h"
#include "tg/core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TG_BUILD_TARGET
#define TG_BUILD_TARGET "unknown (not built by CMake)"
#endif

/* the kernels built once per instruction set and picked at run time: the
 * elementwise rows only where isa_clone.h clones them (portable builds) */
#define PER_ISA_FILES "GEMM, convolution (direct, depthwise, dense implicit GEMM, Winograd's GEMMs), " \
                      "2x2 max pooling, " \
                      "reductions, float32 layer norm"
#if TG_ISA_CLONES
#define PER_ISA PER_ISA_FILES ", elementwise rows (unary, binary, comparisons, casts, " \
                              "in-place updates; fused programs run these), Winograd's transforms"
#define BASELINE_ONLY "the other kernels"
#else
#define PER_ISA PER_ISA_FILES
#define BASELINE_ONLY "the other kernels, elementwise rows included (TG_CPU does not lower them)"
#endif

static char report[1024];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void why(char *buf, size_t n)
{
    tg__isa used = tg__cpu_isa(), found = tg__cpu_detected();
    const char *env = getenv("TG_CPU");
    if (!env)
        snprintf(buf, n, "the best the CPU has, TG_CPU unset");
    else if (used < found)
        snprintf(buf, n, "TG_CPU=%s lowered it from %s", env, tg__isa_name(found));
    else if (strcmp(env, "generic") && strcmp(env, "avx2") && strcmp(env, "avx512"))
        snprintf(buf, n, "TG_CPU=%s is not generic, avx2 or avx512: ignored", env);
    else
        snprintf(buf, n, "TG_CPU=%s is not below what the CPU has", env);
}

static void build_report(void)
{
    char reason[160];
    why(reason, sizeof reason);
    snprintf(report, sizeof report,
             "build: %s\n"
             "cpu: %s (cpuid and the OS's saved register state)\n"
             "kernels: %s (%s)\n"
             "per instruction set, chosen at run time: %s\n"
             "compiled for the build's baseline: %s\n"
             "blas: %s",
             TG_BUILD_TARGET, tg__isa_name(tg__cpu_detected()), tg__isa_name(tg__cpu_isa()),
             reason, PER_ISA, BASELINE_ONLY, tg_kernels_blas());
}

const char *tg_kernels_report(void)
{
    pthread_once(&once, build_report);
    return report;
}
