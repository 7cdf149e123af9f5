/* Shuffles of GCC vector-extension vectors by a mask vector of constant
 * indices (an index below the element count n picks from a, else element
 * index - n of b), for the kernels' transposes and interleaves. GCC has
 * them as __builtin_shuffle; clang has only __builtin_shufflevector, which
 * takes the indices as separate constant arguments, so under clang (the
 * fuzzing build, fuzz/run.sh, and anyone's CC=clang) they are written out
 * per element, which clang's optimizer turns back into one shuffle. The
 * mask is the last argument, and may be a compound literal with commas. */
#ifndef TG_KERNELS_SHUFFLE_H
#define TG_KERNELS_SHUFFLE_H

#if defined(__clang__)
#define TG_SHUFFLE2(a, b, ...)                                                 \
    __extension__({                                                            \
        __typeof__(a) tg_sh_a_ = (a), tg_sh_b_ = (b), tg_sh_r_;                \
        __typeof__(__VA_ARGS__) tg_sh_m_ = (__VA_ARGS__);                      \
        enum { TG_SH_N_ = sizeof tg_sh_a_ / sizeof tg_sh_a_[0] };              \
        for (int tg_sh_i_ = 0; tg_sh_i_ < TG_SH_N_; tg_sh_i_++) {              \
            int tg_sh_j_ = (int)tg_sh_m_[tg_sh_i_];                            \
            tg_sh_r_[tg_sh_i_] = tg_sh_j_ < TG_SH_N_ ? tg_sh_a_[tg_sh_j_]      \
                                                     : tg_sh_b_[tg_sh_j_ - TG_SH_N_]; \
        }                                                                      \
        tg_sh_r_;                                                              \
    })
#define TG_SHUFFLE1(a, m) TG_SHUFFLE2(a, a, m)
#else
#define TG_SHUFFLE2(a, b, ...) __builtin_shuffle(a, b, __VA_ARGS__)
#define TG_SHUFFLE1(a, m) __builtin_shuffle(a, m)
#endif

#endif
