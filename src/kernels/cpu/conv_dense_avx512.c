/* The dense implicit-GEMM convolution for AVX-512 (compiled with
 * -mavx512f & co., see CMakeLists.txt; run only when cpu.h finds
 * AVX-512): of the 32 vector registers, a tile of 12 output channels x 2
 * vectors of positions takes 24 accumulators, 2 hold the image's vectors
 * and 1 the broadcast weight; or 8 x 3 vectors (24 + 3 + 1), for output
 * channels in multiples of 8. The same tiles over ymm vectors
 * (tg__dense_arch_avx512y, all 32 registers still) cover positions 8 at
 * a time instead of 16; conv_dense.c picks the shape that computes the
 * fewest padded rows and columns, ymm's counted as zmm's on CPUs that
 * split zmm operations in two (AMD's Zen 4) and as twice that elsewhere.
 * With frozen (packed) weights, a third shape runs its vectors over
 * output channels: 64 of them (4 vectors) x 7 positions of one output
 * row, 28 accumulators, 3 weight vectors and the broadcast image value
 * (the fourth weight vector read by its multiply-adds): no wide
 * overhang, which on ResNet's 7x7 planes (layer 4) is 1/8 of the wide
 * tiles' work, and 7 divides every plane width of ResNet and the
 * MobileNets. */
#if defined(__x86_64__)
#define DENSE_ISA avx512y
#define VEC_BYTES 32
#define DENSE_TILES(X) X(12, 2) X(8, 3)
#define DENSE_TAILS(X) X(12, 1) X(8, 1) X(8, 2)
#include "kernels/cpu/conv_dense_arch.h"
#undef DENSE_ISA
#undef VEC_BYTES
#undef DENSE_TILES
#undef DENSE_TAILS

#include "kernels/cpu/conv_dense_api.h"

#include <immintrin.h>

/* lane c of s as the low half and lane c of t as the high half of a ymm */
#define HALVES(s, t, c)                                                          \
    _mm256_insertf128_ps(_mm256_castps128_ps256(_mm512_extractf32x4_ps(s, c)),   \
                         _mm512_extractf32x4_ps(t, c), 1)

/* output channel o0 + c's n <= 7 positions v (lane j: position j), the
 * shortcut added and relu applied (as put_row), stored at at0; with
 * `spare`, as 8 positions without a mask (lane 7 is overwritten later:
 * the masked store and load took most of the store's time) */
static inline void put_channel(__m256 v, int64_t c, int64_t n, bool spare, int64_t o0,
                               int64_t at0, const tg__dense_store *st)
{
    const __mmask8 m = (__mmask8)((1u << n) - 1);
    int64_t at = (o0 + c) * st->ohw + at0;
    if (st->res) {
        const float *res = (const float *)st->res + at;
        v = _mm256_add_ps(v, spare ? _mm256_loadu_ps(res) : _mm256_maskz_loadu_ps(m, res));
        /* the shortcut's rows are 64 streams, more than the hardware
         * prefetcher follows: ask for the line two tiles ahead (ResNet's
         * residual layers at one thread: -1% in the whole model) */
        _mm_prefetch((const char *)(res + 32), _MM_HINT_T0);
    }
    if (st->relu) {
        __mmask8 keep = _mm256_cmp_ps_mask(v, _mm256_setzero_ps(), _CMP_GT_OQ) |
                        _mm256_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        v = _mm256_maskz_mov_ps(keep, v);
    }
    if (spare)
        _mm256_storeu_ps((float *)st->y + at, v);
    else
        _mm256_mask_storeu_ps((float *)st->y + at, m, v);
}

/* channels 4 q .. 4 q + 3 of the 16 transposed in s (their lane q) */
#define PUT_QUAD(q)                                                              \
    for (int m = 0; m < 4; m++)                                                  \
        put_channel(HALVES(s[m], s[4 + m], q), g + 4 * (q) + m, n, spare, o0, at0, st)

/* the float32 store of the tiles over output channels (conv_dense_arch.h's
 * DENSE_OUT_STORE_SCALAR, the same bits): per 16 output channels, the
 * tile's 7 position vectors biased, then transposed in registers (8 x 16
 * -> 16 x 8, the eighth row zero) so that each channel's positions are
 * one vector, stored; the element-by-element store had taken a third of
 * ResNet's 56x56 layers' time. Whole groups of 16 name each 128-bit lane
 * as a constant (a lane chosen at run time kept the transposed rows on
 * the stack) */
static void dense_out_store_f32(const float *tile, int np, int mr, int64_t n, int64_t rows,
                                int64_t o0, int64_t at0, bool spare,
                                const tg__dense_store *st)
{
    (void)np; /* 7: the tile shape below */
    for (int64_t g = 0; g < mr && g < rows; g += 16) {
        int64_t left = rows - g;
        __mmask16 bm = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
        __m512 b = st->bias ? _mm512_maskz_loadu_ps(bm, (const float *)st->bias + o0 + g)
                            : _mm512_setzero_ps();
        __m512 p[8];
        for (int j = 0; j < 7; j++)
            p[j] = _mm512_add_ps(_mm512_loadu_ps(tile + j * mr + g), b);
        p[7] = _mm512_setzero_ps();
        __m512 t[8], s[8];
        for (int j = 0; j < 8; j += 2) { /* per 128-bit lane: rows j, j + 1 interleaved */
            t[j] = _mm512_unpacklo_ps(p[j], p[j + 1]);
            t[j + 1] = _mm512_unpackhi_ps(p[j], p[j + 1]);
        }
        for (int h = 0; h < 2; h++) { /* s[4h + m]: rows 4h..4h+3 of channel 4 lane + m */
            s[4 * h + 0] = _mm512_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
            s[4 * h + 1] = _mm512_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
            s[4 * h + 2] = _mm512_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
            s[4 * h + 3] = _mm512_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
        }
        if (left >= 16) {
            PUT_QUAD(0);
            PUT_QUAD(1);
            PUT_QUAD(2);
            PUT_QUAD(3);
            continue;
        }
        for (int64_t c = 0; c < left; c++) {
            int m = (int)(c & 3);
            __m256 v;
            switch (c >> 2) {
            case 0: v = HALVES(s[m], s[4 + m], 0); break;
            case 1: v = HALVES(s[m], s[4 + m], 1); break;
            case 2: v = HALVES(s[m], s[4 + m], 2); break;
            default: v = HALVES(s[m], s[4 + m], 3); break;
            }
            put_channel(v, g + c, n, spare, o0, at0, st);
        }
    }
}

/* the 64-channel x 7-position tile's tap loop (tapso's contract: out[j]
 * holds position j's 64 sums), written out because the template's needs
 * 33 vector registers (28 sums, 4 weight vectors, the broadcast image
 * value) and GCC kept one sum on the stack, a load and a store per tap.
 * Here 28 sums sit in zmm0-27 (position j's four in 4j .. 4j + 3), three
 * of the tap's weight vectors in zmm28-30, each image value is broadcast
 * once into zmm31, and the fourth weight vector is the memory operand of
 * its multiply-add. Folding the broadcast into every multiply-add
 * instead ({1to16}: 28 broadcast loads a tap rather than 7) ran at 60-70%
 * of this on Zen 5: ResNet-18's 7x7 layers 1.3x faster
 * (docs/BENCHMARKS.md) */
#define O47_FMA(w, acc) "vfmadd231ps %%zmm31, %%zmm" #w ", %%zmm" #acc "\n\t"
#define O47_POS(at, a0, a1, a2, a3)                                                   \
    "vbroadcastss " #at "(%%rax), %%zmm31\n\t" O47_FMA(28, a0) O47_FMA(29, a1)          \
        O47_FMA(30, a2) "vfmadd231ps 192(%[a]), %%zmm31, %%zmm" #a3 "\n\t"
#define O47_ZERO(r) "vpxord %%zmm" #r ", %%zmm" #r ", %%zmm" #r "\n\t"
#define O47_ZERO4(a0, a1, a2, a3) O47_ZERO(a0) O47_ZERO(a1) O47_ZERO(a2) O47_ZERO(a3)
#define O47_PUT(r) "vmovaps %%zmm" #r ", 64*" #r "(%[out])\n\t"
#define O47_PUT4(a0, a1, a2, a3) O47_PUT(a0) O47_PUT(a1) O47_PUT(a2) O47_PUT(a3)
#define O47_GET(r) "vmovaps 64*" #r "(%[out]), %%zmm" #r "\n\t"
#define O47_GET4(a0, a1, a2, a3) O47_GET(a0) O47_GET(a1) O47_GET(a2) O47_GET(a3)
/* one tap: 3 of its 4 weight vectors (with PF's prefetches), 28
 * multiply-adds, on to the next; the flags say whether taps are left */
#define O47_TAP(PF)                                                                    \
    "mov (%[off]), %%rax\n\t"                                                          \
    "vmovups 0(%[a]), %%zmm28\n\t"                                                     \
    "vmovups 64(%[a]), %%zmm29\n\t"                                                    \
    "vmovups 128(%[a]), %%zmm30\n\t"                                                   \
    PF "lea (%[img], %%rax, 4), %%rax\n\t"                                             \
    O47_POS(0, 0, 1, 2, 3) O47_POS(4, 4, 5, 6, 7) O47_POS(8, 8, 9, 10, 11)             \
    O47_POS(12, 12, 13, 14, 15) O47_POS(16, 16, 17, 18, 19)                            \
    O47_POS(20, 20, 21, 22, 23) O47_POS(24, 24, 25, 26, 27)                            \
    "add $8, %[off]\n\t"                                                               \
    "add $256, %[a]\n\t"                                                               \
    "cmp %[off], %[end]\n\t"
/* the same tap's weights `ahead` bytes further on, into L2 */
#define O47_AHEAD                                                                      \
    "prefetcht1 (%[a], %[ahead])\n\t"                                                  \
    "prefetcht1 64(%[a], %[ahead])\n\t"                                                \
    "prefetcht1 128(%[a], %[ahead])\n\t"                                               \
    "prefetcht1 192(%[a], %[ahead])\n\t"
#define O47_EACH(X)                                                                    \
    X(0, 1, 2, 3) X(4, 5, 6, 7) X(8, 9, 10, 11) X(12, 13, 14, 15) X(16, 17, 18, 19)   \
    X(20, 21, 22, 23) X(24, 25, 26, 27)

static __attribute__((noinline)) void taps_o4x7_f32(int64_t k, const float *restrict a,
                                                    const float *restrict img,
                                                    const int64_t *restrict off,
                                                    float (*restrict out)[64],
                                                    bool first, int64_t ahead)
{
    const int64_t *end = off + k;
    __asm__ volatile("test %[first], %[first]\n\t"
                     "jz 3f\n\t"
                     O47_EACH(O47_ZERO4)
                     "jmp 4f\n\t"
                     "3:\n\t"
                     O47_EACH(O47_GET4)
                     "4:\n\t"
                     "test %[k], %[k]\n\t"
                     "jle 2f\n\t"
                     "test %[ahead], %[ahead]\n\t"
                     "jnz 5f\n\t"
                     "1:\n\t"
                     O47_TAP("")
                     "jne 1b\n\t"
                     "jmp 2f\n\t"
                     "5:\n\t"
                     O47_TAP(O47_AHEAD)
                     "jne 5b\n\t"
                     "2:\n\t"
                     O47_EACH(O47_PUT4)
                     : [off] "+r"(off), [a] "+r"(a)
                     : [img] "r"(img), [end] "r"(end), [k] "r"(k), [out] "r"(out),
                       [first] "r"((int64_t)first), [ahead] "r"(ahead)
                     : "rax", "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
                       "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
                       "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",
                       "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29",
                       "xmm30", "xmm31");
}
#define DENSE_OUT_TAPS_f32(TN) taps_o4x7_f32

#define DENSE_ISA avx512
#define VEC_BYTES 64
#define DENSE_OUT_STORE_f32 dense_out_store_f32
#define DENSE_TILES(X) X(12, 2) X(8, 3)
#define DENSE_TAILS(X) X(12, 1) X(8, 1) X(8, 2)
#define DENSE_OUTS(X) X(4, 7)
#define DENSE_NARROWER &tg__dense_arch_avx512y
#define DENSE_PACKED
#include "kernels/cpu/conv_dense_arch.h"
#endif
