/* Per-instruction-set copies of a kernel, chosen at run time, written once:
 * in one file by target attributes (plain loops: elementwise rows), or in
 * per-ISA files (vector-extension kernels: pooling, reductions; below).
 *
 *     TG_ISA_DISPATCH(static, void, relu_f32, (char **p, int64_t n), (p, n))
 *     {
 *         ... the body, as before ...
 *     }
 *
 * In a portable build (x86-64 whose baseline lacks AVX2: TG_NATIVE=OFF) the
 * body becomes an always-inlined function and three copies of it are
 * compiled in this translation unit with GCC target attributes: AVX-512 (F,
 * VL, BW, DQ, with AVX2 and FMA), AVX2 + FMA, and the baseline; `flatten`
 * inlines what the body calls into each copy, so loops the compiler
 * vectorizes and GCC vector-extension code get that copy's instructions.
 * The function itself switches on the level cpu.h chose (cpuid, XCR0,
 * TG_CPU). The copies are the same C: with FP contraction off (C11 mode)
 * they give the same bits, only in wider registers.
 *
 * This is the per-ISA files of the GEMM (gemm_arch.h included by
 * gemm_avx512.c, ...) without the files: the kernels stay where they are,
 * next to their op definitions, and a family needs one line per kernel.
 * In a native build (-march=native: the baseline has AVX2 or more) the
 * macro is the plain definition: everything already uses the build
 * machine's instructions, and TG_CPU does not lower these kernels
 * (tg_kernels_report says so). */
#ifndef TG_KERNELS_ISA_CLONE_H
#define TG_KERNELS_ISA_CLONE_H

#include "kernels/cpu/cpu.h"

#if defined(__x86_64__) && !defined(__AVX2__) && defined(__GNUC__)
#define TG_ISA_CLONES 1
#define TG__CLONE_AVX512                                                              \
    __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"), flatten, noinline))
#define TG__CLONE_AVX2 __attribute__((target("avx2,fma"), flatten, noinline))
#define TG__CLONE_BASE __attribute__((flatten, noinline))
#define TG__CLONE_BODY static inline __attribute__((always_inline))

/* SC: the storage class (static or nothing); PARAMS the parenthesised
 * parameter list, ARGS the parameter names in parentheses; the body
 * follows the macro */
#define TG_ISA_DISPATCH(SC, RET, NAME, PARAMS, ARGS)                                 \
    TG__CLONE_BODY RET NAME##_isa_body PARAMS;                                       \
    TG__CLONE_AVX512 static RET NAME##_isa_avx512 PARAMS { return NAME##_isa_body ARGS; } \
    TG__CLONE_AVX2 static RET NAME##_isa_avx2 PARAMS { return NAME##_isa_body ARGS; } \
    TG__CLONE_BASE static RET NAME##_isa_base PARAMS { return NAME##_isa_body ARGS; } \
    SC RET NAME PARAMS                                                               \
    {                                                                                \
        switch (tg__cpu_isa()) {                                                     \
        case TG_ISA_AVX512: return NAME##_isa_avx512 ARGS;                           \
        case TG_ISA_AVX2: return NAME##_isa_avx2 ARGS;                               \
        default: return NAME##_isa_base ARGS;                                        \
        }                                                                            \
    }                                                                                \
    TG__CLONE_BODY RET NAME##_isa_body PARAMS
#else
#define TG_ISA_CLONES 0
#define TG_ISA_DISPATCH(SC, RET, NAME, PARAMS, ARGS) SC RET NAME PARAMS
#endif

/* ---- per-ISA files: a kernel file written once as NAME_arch.h, included by
 * NAME_avx512.c, NAME_avx2.c and NAME_generic.c (each compiled with its
 * instruction set's flags, CMakeLists.txt), which define TG_ARCH before
 * including it; the arch header names its entry points TG_ARCH_FN(f), i.e.
 * f_avx512 ..., and the dispatching file calls TG_ISA_CALL(f, (args)).
 * GCC vector-extension code needs this form: built under a target
 * attribute in a baseline file its wide vector types are lowered to
 * scalars. */
#define TG__ARCH_CAT2(a, b) a##_##b
#define TG__ARCH_CAT(a, b) TG__ARCH_CAT2(a, b)
#define TG_ARCH_FN(name) TG__ARCH_CAT(name, TG_ARCH)
/* the three builds of f, declared */
#define TG_ISA_PROTOS(RET, NAME, PARAMS)                                             \
    RET NAME##_avx512 PARAMS;                                                        \
    RET NAME##_avx2 PARAMS;                                                          \
    RET NAME##_generic PARAMS;
#if defined(__x86_64__)
#define TG_ISA_CALL(NAME, ARGS)                                                      \
    (tg__cpu_isa() == TG_ISA_AVX512 ? NAME##_avx512 ARGS                             \
     : tg__cpu_isa() == TG_ISA_AVX2 ? NAME##_avx2 ARGS                               \
                                    : NAME##_generic ARGS)
#else
#define TG_ISA_CALL(NAME, ARGS) (NAME##_generic ARGS)
#endif

/* an elementwise row (tg_iter_row_fn) with per-ISA copies */
#define TG_ISA_ROW(NAME)                                                             \
    TG_ISA_DISPATCH(static, void, NAME, (char **p, const int64_t *s, int64_t n, void *ctx), \
                    (p, s, n, ctx))

#endif
