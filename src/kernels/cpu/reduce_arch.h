/* Accumulator kernels of the reduction engine, one template per kind
 * expanded per dtype: row loops (one accumulator, 8 lanes so contiguous
 * rows vectorize) and column loops (a vector of accumulators updated row
 * by row). Floats accumulate sums in double, integers in wrapping 64 bits.
 * Included once per instruction set (reduce_avx512.c, reduce_avx2.c,
 * reduce_generic.c: their flags in CMakeLists.txt, without FP contraction,
 * so every level gives the same bits), each defining TG_ARCH and so its
 * own table, tg__red_table_<arch>; reduce_kernels.c picks one at run time. */
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/reduce_kernels.h"
#include "kernels/cpu/vmath.h"

#include <math.h>
#include <stdbool.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <string.h>

#define LANES 8
/* contiguous rows are summed in chunks of this many elements, each from
 * its own 8 lanes, which keeps float64 rounding error growth small */
#define CHUNK 4096

static inline double sqd(double d) { return d * d; }

/* v where t, else a, by bits: GCC compiles the plain conditional of a
 * NaN-aware comparison as branches, which mispredict on data */
static inline float take_f(bool t, float v, float a) { return tg__vsel(t, v, a); }
static inline double take_d(bool t, double v, double a) { return tg__vseld(t, v, a); }

/* the same in float for float32 inputs (8 lanes per AVX register), within
 * 1 ulp of exp; 0 below -86 (near float's smallest normal), inf above 88.8 */
static inline float vexpf(float x)
{
    const float log2e = 1.44269504f, shifter = 0x1.8p23f;
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    float xc = take_f(x < -86.0f, -86.0f, take_f(x > 88.8f, 88.8f, x));
    float t = xc * log2e + shifter;
    float n = t - shifter;
    float r = (xc - n * ln2_hi) - n * ln2_lo;
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    uint32_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits + 126) << 23;
    float s;
    memcpy(&s, &bits, sizeof s);
    float y = p * s * 2.0f;
    y = take_f(x < -86.0f, 0.0f, y);
    y = take_f(x > 88.8f, (float)INFINITY, y);
    return take_f(x != x, x, y);
}

/* exp in double built from arithmetic and bit operations only, so that
 * loops over it vectorize (libm's exp does not): Cody-Waite reduction
 * x = n ln2 + r, |r| <= ln2/2, a degree-12 Taylor polynomial, and 2^n
 * from the exponent bits (of 2^(n-1), so n = 1024 stays finite). Within
 * 1e-15 of exp; 0 below -708 (where exp is subnormal), inf above 709.79,
 * NaN kept. */
static inline double vexp(double x)
{
    const double log2e = 1.4426950408889634074, shifter = 0x1.8p52;
    const double ln2_hi = 6.93147180369123816490e-01;
    const double ln2_lo = 1.90821492927058770002e-10;
    double xc = take_d(x < -708.0, -708.0, take_d(x > 709.79, 709.79, x));
    double t = xc * log2e + shifter; /* n in the low bits of t */
    double n = t - shifter;
    double r = (xc - n * ln2_hi) - n * ln2_lo;
    double p = 1.0 / 479001600;
    p = p * r + 1.0 / 39916800;
    p = p * r + 1.0 / 3628800;
    p = p * r + 1.0 / 362880;
    p = p * r + 1.0 / 40320;
    p = p * r + 1.0 / 5040;
    p = p * r + 1.0 / 720;
    p = p * r + 1.0 / 120;
    p = p * r + 1.0 / 24;
    p = p * r + 1.0 / 6;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits + 1022) << 52; /* 2^(n-1): n = 1024 stays finite */
    double s;
    memcpy(&s, &bits, sizeof s);
    double y = p * s * 2.0;
    y = take_d(x < -708.0, 0.0, y);
    y = take_d(x > 709.79, (double)INFINITY, y);
    return take_d(x != x, x, y);
}

/* ---- accumulate-by-OP kinds: sum, prod, max, min, sqdev, sumexp ----------
 * OP(a, v) combines accumulator a with value v; PRE(x, m) maps element x
 * (with the output's parameter m) to the accumulator type A; ID is OP's
 * identity. */
#define ACC_KIND(NAME, T, A, OP, PRE, ID)                                   \
    static void NAME##_init(void *acc, int64_t n)                           \
    {                                                                       \
        A *a = acc;                                                         \
        for (int64_t j = 0; j < n; j++)                                     \
            a[j] = (ID);                                                    \
    }                                                                       \
    static void NAME##_inner(void *acc, const char *p, int64_t n, int64_t s, \
                             int64_t r0, double prm)                        \
    {                                                                       \
        (void)r0, (void)prm;                                                \
        A tot = *(A *)acc;                                                  \
        if (s != (int64_t)sizeof(T)) {                                      \
            for (int64_t i = 0; i < n; i++) {                               \
                A v = PRE(*(const T *)(p + i * s), prm);                    \
                tot = OP(tot, v);                                           \
            }                                                               \
            *(A *)acc = tot;                                                \
            return;                                                         \
        }                                                                   \
        const T *x = (const T *)p;                                          \
        for (int64_t c = 0; c < n; c += CHUNK) {                            \
            int64_t e = n - c > CHUNK ? c + CHUNK : n, i = c;               \
            A l[LANES];                                                     \
            for (int k = 0; k < LANES; k++)                                 \
                l[k] = (ID);                                                \
            for (; i + LANES <= e; i += LANES)                              \
                for (int k = 0; k < LANES; k++) {                           \
                    A v = PRE(x[i + k], prm);                               \
                    l[k] = OP(l[k], v);                                     \
                }                                                           \
            for (; i < e; i++) {                                            \
                A v = PRE(x[i], prm);                                       \
                l[0] = OP(l[0], v);                                         \
            }                                                               \
            A h0 = OP(l[0], l[1]), h1 = OP(l[2], l[3]);                     \
            A h2 = OP(l[4], l[5]), h3 = OP(l[6], l[7]);                     \
            A h = OP(OP(h0, h1), OP(h2, h3));                               \
            tot = OP(tot, h);                                               \
        }                                                                   \
        *(A *)acc = tot;                                                    \
    }                                                                       \
    /* one contiguous row into the accumulators: a function of its own    \
     * with restrict arguments, which is what lets gcc vectorize it */     \
    static void NAME##_vrow(A *restrict a, const T *restrict x, int64_t nv, \
                            const double *restrict prm)                     \
    {                                                                       \
        (void)prm;                                                          \
        int64_t j = 0;                                                      \
        for (; j + LANES <= nv; j += LANES)                                 \
            for (int k = 0; k < LANES; k++) {                               \
                A v = PRE(x[j + k], prm[j + k]);                            \
                a[j + k] = OP(a[j + k], v);                                 \
            }                                                               \
        for (; j < nv; j++) {                                               \
            A v = PRE(x[j], prm[j]);                                        \
            a[j] = OP(a[j], v);                                             \
        }                                                                   \
    }                                                                       \
    /* four rows in order into each accumulator, read and written once:  \
     * the same adds as four vrow calls, a quarter of the accumulator      \
     * traffic (8 bytes read and written per 4-byte float otherwise) */    \
    static void NAME##_vrow4(A *restrict a, const T *restrict x0,           \
                             const T *restrict x1, const T *restrict x2,    \
                             const T *restrict x3, int64_t nv,              \
                             const double *restrict prm)                    \
    {                                                                       \
        (void)prm;                                                          \
        for (int64_t j = 0; j < nv; j++) {                                  \
            A t = a[j];                                                     \
            t = OP(t, PRE(x0[j], prm[j]));                                  \
            t = OP(t, PRE(x1[j], prm[j]));                                  \
            t = OP(t, PRE(x2[j], prm[j]));                                  \
            a[j] = OP(t, PRE(x3[j], prm[j]));                               \
        }                                                                   \
    }                                                                       \
    static void NAME##_outer(void *acc, const char *p, int64_t nv, int64_t vs, \
                             int64_t m, int64_t rs, int64_t r0,             \
                             const double *prm)                             \
    {                                                                       \
        (void)r0;                                                           \
        A *a = acc;                                                         \
        int64_t i = 0;                                                      \
        for (; vs == (int64_t)sizeof(T) && i + 4 <= m; i += 4, p += 4 * rs) \
            NAME##_vrow4(a, (const T *)p, (const T *)(p + rs),              \
                         (const T *)(p + 2 * rs), (const T *)(p + 3 * rs), nv, prm); \
        for (; i < m; i++, p += rs) {                                       \
            if (vs == (int64_t)sizeof(T)) {                                 \
                NAME##_vrow(a, (const T *)p, nv, prm);                      \
                continue;                                                   \
            }                                                               \
            for (int64_t j = 0; j < nv; j++) {                              \
                A v = PRE(*(const T *)(p + j * vs), prm[j]);                \
                a[j] = OP(a[j], v);                                         \
            }                                                               \
        }                                                                   \
    }                                                                       \
    static void NAME##_combine(void *acc, const void *other, int64_t n)     \
    {                                                                       \
        A *a = acc;                                                         \
        const A *o = other;                                                 \
        for (int64_t j = 0; j < n; j++)                                     \
            a[j] = OP(a[j], o[j]);                                          \
    }

#define ADD(a, v) ((a) + (v))
#define MUL(a, v) ((a) * (v))
#define TAKEF(t, v, a) _Generic((v), float: take_f, double: take_d)(t, v, a)
/* NaN wins, as in PyTorch's max/min, by bits everywhere: GCC makes
 * branches of the plain conditional, which mispredict on data (argmax
 * over rows of 28 random floats took 1000 cycles a row) */
#define MAXF_SEL(a, v) TAKEF(((v) > (a)) | ((v) != (v)), (v), (a))
#define MINF_SEL(a, v) TAKEF(((v) < (a)) | ((v) != (v)), (v), (a))
#define MAXI(a, v) ((v) > (a) ? (v) : (a))
#define MINI(a, v) ((v) < (a) ? (v) : (a))
#define TO_D(x, m) ((double)(x))
#define TO_U(x, m) ((uint64_t)(x))
#define SAME(x, m) (x)
#define SQDEV(x, m) sqd((double)(x) - (m))
#define ABSD(x, m) fabs((double)(x))
#define SQD(x, m) sqd((double)(x))
#define EXPD(x, m) vexp((double)(x) - (m))
#define EXPF(x, m) ((double)vexpf((x) - (float)(m)))

/* ---- finishing: accumulators to outputs -------------------------------------- */
static double post(double a, const tg_fin_args *f, double prm)
{
    switch (f->fin) {
    case TG_FIN_DIV: return a / f->div;
    case TG_FIN_SQRT: return sqrt(a / f->div);
    case TG_FIN_LOGADD: return log(a) + prm;
    case TG_FIN_SHIFT: return isinf(a) ? 0.0 : a;
    default: return a;
    }
}

/* float accumulators (double, or float/double max and min) to float outputs */
#define FIN_FLOAT(NAME, A)                                                  \
    static void NAME(const void *acc, char *out, tg_dtype odt, int64_t n,   \
                     int64_t os, const double *prm, int64_t ps,             \
                     const tg_fin_args *f)                                  \
    {                                                                       \
        const A *a = acc;                                                   \
        if (f->fin == TG_FIN_PLAIN && os == 1) { /* no switch per element */ \
            if (odt == TG_FLOAT32)                                          \
                for (int64_t j = 0; j < n; j++)                             \
                    ((float *)out)[j] = (float)(double)a[j];                \
            else                                                            \
                for (int64_t j = 0; j < n; j++)                             \
                    ((double *)out)[j] = (double)a[j];                      \
            return;                                                         \
        }                                                                   \
        for (int64_t j = 0; j < n; j++) {                                   \
            double v = post((double)a[j], f, prm ? prm[j * ps] : 0.0);      \
            if (odt == TG_FLOAT32)                                          \
                ((float *)out)[j * os] = (float)v;                          \
            else                                                            \
                ((double *)out)[j * os] = v;                                \
        }                                                                   \
    }
/* integer accumulators copied to outputs of type O */
#define FIN_COPY(NAME, A, O)                                                \
    static void NAME(const void *acc, char *out, tg_dtype odt, int64_t n,   \
                     int64_t os, const double *prm, int64_t ps,             \
                     const tg_fin_args *f)                                  \
    {                                                                       \
        (void)odt, (void)prm, (void)ps, (void)f;                            \
        const A *a = acc;                                                   \
        for (int64_t j = 0; j < n; j++)                                     \
            ((O *)out)[j * os] = (O)a[j];                                   \
    }
FIN_FLOAT(fin_d, double)
FIN_FLOAT(fin_f, float)
FIN_COPY(fin_u64, uint64_t, int64_t)
FIN_COPY(fin_i32, int32_t, int32_t)
FIN_COPY(fin_i64, int64_t, int64_t)
FIN_COPY(fin_u8, uint8_t, uint8_t)

/* ---- argmax/argmin: best value and its index --------------------------------
 * BET(v, b): v replaces the best b; strict, so the first of ties stays, and
 * the first NaN wins (as in PyTorch). The initial index 0 is right when all
 * elements equal ID, and a later chunk keeping it never beats an earlier.
 * EQ(v, m): v is the extreme m (NaN included); VAL: the max/min kind. */
#define EQF(v, m) (((v) == (m)) | (((v) != (v)) & ((m) != (m))))
#define EQI(v, m) ((v) == (m))
#define ARGF_MAX(v, b) ((v) > (b) || ((v) != (v) && (b) == (b)))
#define ARGF_MIN(v, b) ((v) < (b) || ((v) != (v) && (b) == (b)))
#define ARG_KIND(NAME, T, BET, EQ, VAL, ID)                                        \
    typedef struct NAME##_acc {                                             \
        T v;                                                                \
        int64_t i;                                                          \
    } NAME##_acc;                                                           \
    static void NAME##_init(void *acc, int64_t n)                           \
    {                                                                       \
        NAME##_acc *a = acc;                                                \
        for (int64_t j = 0; j < n; j++)                                     \
            a[j] = (NAME##_acc){(ID), 0};                                   \
    }                                                                       \
    /* per chunk: its extreme by the vectorized VAL kernel, then, only if \
     * it beats the best so far, the first index holding it */             \
    static void NAME##_inner(void *acc, const char *p, int64_t n, int64_t s, \
                             int64_t r0, double prm)                        \
    {                                                                       \
        (void)prm;                                                          \
        NAME##_acc *a = acc;                                                \
        for (int64_t c = 0; c < n; c += CHUNK) {                            \
            int64_t len = n - c > CHUNK ? CHUNK : n - c, i = 0;             \
            const char *q = p + c * s;                                      \
            T m = (ID);                                                     \
            VAL##_inner(&m, q, len, s, 0, 0.0);                             \
            if (!BET(m, a->v))                                              \
                continue;                                                   \
            if (s == (int64_t)sizeof(T)) {                                  \
                const T *x = (const T *)q;                                  \
                for (; i + LANES <= len; i += LANES) {                      \
                    int hit = 0;                                            \
                    for (int k = 0; k < LANES; k++)                         \
                        hit |= EQ(x[i + k], m);                             \
                    if (hit)                                                \
                        break;                                              \
                }                                                           \
            }                                                               \
            while (i < len - 1 && !EQ(*(const T *)(q + i * s), m))          \
                i++;                                                        \
            *a = (NAME##_acc){m, r0 + c + i};                               \
        }                                                                   \
    }                                                                       \
    static void NAME##_outer(void *acc, const char *p, int64_t nv, int64_t vs, \
                             int64_t m, int64_t rs, int64_t r0,             \
                             const double *prm)                             \
    {                                                                       \
        (void)prm;                                                          \
        NAME##_acc *a = acc;                                                \
        for (int64_t i = 0; i < m; i++, p += rs)                            \
            for (int64_t j = 0; j < nv; j++) {                              \
                T v = *(const T *)(p + j * vs);                             \
                if (BET(v, a[j].v))                                         \
                    a[j] = (NAME##_acc){v, r0 + i};                         \
            }                                                               \
    }                                                                       \
    static void NAME##_combine(void *acc, const void *other, int64_t n)     \
    {                                                                       \
        NAME##_acc *a = acc;                                                \
        const NAME##_acc *o = other;                                        \
        for (int64_t j = 0; j < n; j++)                                     \
            if (BET(o[j].v, a[j].v))                                        \
                a[j] = o[j];                                                \
    }                                                                       \
    static void NAME##_finish(const void *acc, char *out, tg_dtype odt,     \
                              int64_t n, int64_t os, const double *prm,     \
                              int64_t ps, const tg_fin_args *f)             \
    {                                                                       \
        (void)odt, (void)prm, (void)ps, (void)f;                            \
        const NAME##_acc *a = acc;                                          \
        for (int64_t j = 0; j < n; j++)                                     \
            ((int64_t *)out)[j * os] = a[j].i;                              \
    }

/* ---- expansions ---------------------------------------------------------------- */
#define ACC_INTS(KIND, OP, PRE, ID)                                         \
    ACC_KIND(KIND##_i32, int32_t, uint64_t, OP, PRE, ID)                    \
    ACC_KIND(KIND##_i64, int64_t, uint64_t, OP, PRE, ID)                    \
    ACC_KIND(KIND##_u8, uint8_t, uint64_t, OP, PRE, ID)
ACC_KIND(sum_f32, float, double, ADD, TO_D, 0.0)
ACC_KIND(sum_f64, double, double, ADD, TO_D, 0.0)
ACC_INTS(sum, ADD, TO_U, 0)
ACC_KIND(prod_f32, float, double, MUL, TO_D, 1.0)
ACC_KIND(prod_f64, double, double, MUL, TO_D, 1.0)
ACC_INTS(prod, MUL, TO_U, 1)
ACC_KIND(sqdev_f32, float, double, ADD, SQDEV, 0.0)
ACC_KIND(sqdev_f64, double, double, ADD, SQDEV, 0.0)
ACC_KIND(sumexp_f32, float, double, ADD, EXPF, 0.0)
ACC_KIND(sumexp_f64, double, double, ADD, EXPD, 0.0)
ACC_KIND(abssum_f32, float, double, ADD, ABSD, 0.0)
ACC_KIND(abssum_f64, double, double, ADD, ABSD, 0.0)
ACC_KIND(sqsum_f32, float, double, ADD, SQD, 0.0)
ACC_KIND(sqsum_f64, double, double, ADD, SQD, 0.0)

/* float sums of contiguous rows in explicit vectors: GCC does not turn
 * the 8-lane loop of ACC_KIND into vector code for them. The 8 lanes are
 * held as registers of the build's width (VN doubles each: 8 with AVX-512,
 * 4 with AVX2, 2 without AVX), never as one wider vector: GCC keeps an
 * 8-double vector in memory where registers are narrower, and the loop then
 * runs at a tenth of the speed. The lanes (SUM_LANES: 16 measured no
 * faster, rows of 100 slower), the order of the adds (lane k takes the
 * elements k mod SUM_LANES of a chunk, the tail goes to lane 0, then a
 * pairwise tree) and so the results are the same at every width. */
#include "kernels/cpu/simd.h"
#define VN (TG_VEC_BYTES / 8)
#define SUM_LANES 8
typedef double vdn __attribute__((vector_size(VN * sizeof(double))));
typedef float vfnu __attribute__((vector_size(VN * sizeof(float)), aligned(4), may_alias));
typedef double vdnu __attribute__((vector_size(VN * sizeof(double)), aligned(8), may_alias));

/* VN floats at x as doubles: one conversion instruction (GCC's
 * __builtin_convertvector goes through scalars or halves here) */
static inline vdn load_as_d_f32(const float *x)
{
#if defined(__AVX512F__)
    return (vdn)_mm512_cvtps_pd(_mm256_loadu_ps(x));
#elif defined(__AVX__)
    return (vdn)_mm256_cvtps_pd(_mm_loadu_ps(x));
#elif defined(__SSE2__)
    return (vdn)_mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)x)));
#else
    return __builtin_convertvector(*(const vfnu *)x, vdn);
#endif
}
static inline vdn load_as_d_f64(const double *x) { return *(const vdnu *)x; }
#include "kernels/cpu/reduce_rows_arch.h"
#define RR_LOAD_AS_D_F32(p, m) load_as_d_f32(p)
#define RR_LOAD_AS_D_F64(p, m) load_as_d_f64(p)
ROWS_ACROSS(sum_f32, float, double, rr_vd, RR_WD, RR_LOAD_AS_D_F32, TO_D, RR_ADD, 0.0, -0.0)
ROWS_ACROSS(sum_f64, double, double, rr_vd, RR_WD, RR_LOAD_AS_D_F64, TO_D, RR_ADD, 0.0, -0.0)
ROWS_ACROSS(sqdev_f32, float, double, rr_vd, RR_WD, RR_SQDEV_F, SQDEV, RR_ADD, 0.0, -0.0)
ROWS_ACROSS(sqdev_f64, double, double, rr_vd, RR_WD, RR_SQDEV_D, SQDEV, RR_ADD, 0.0, -0.0)
ROWS_ACROSS(sumexp_f32, float, double, rr_vd, RR_WD, RR_EXP_F, EXPF, RR_ADD, 0.0, -0.0)
ROWS_PARAM(sqdev_f32, float)
ROWS_PARAM(sqdev_f64, double)
ROWS_PARAM(sumexp_f32, float)
/* the end of a chunk [i0, e) of x whose vector part (up to i) is in the
 * lanes l: the tail to lane 0, then the pairwise tree; the chunk's sum */
#define SUM_CHUNK_END(NAME, T)                                              \
    static inline double NAME##_chunk_end(const vdn *l, const T *x, int64_t i, \
                                          int64_t e)                        \
    {                                                                       \
        double d[SUM_LANES];                                                \
        memcpy(d, l, sizeof d);                                             \
        for (; i < e; i++)                                                  \
            d[0] += (double)x[i];                                           \
        for (int w = SUM_LANES / 2; w >= 1; w /= 2)                         \
            for (int k = 0; k < w; k++)                                     \
                d[k] = d[2 * k] + d[2 * k + 1];                             \
        return d[0];                                                        \
    }
/* R contiguous rows of n at base + offs[r] into a[r], each as vinner */
#define SUM_ROWS_R(NAME, T, R)                                              \
    static void NAME##_rows##R(double *a, const char *base, const int64_t *offs, \
                               int64_t n)                                   \
    {                                                                       \
        const T *x[R];                                                      \
        for (int r = 0; r < R; r++)                                         \
            x[r] = (const T *)(base + offs[r]);                             \
        for (int64_t c = 0; c < n; c += CHUNK) {                            \
            int64_t e = n - c > CHUNK ? c + CHUNK : n, i = c;               \
            vdn l[R][SUM_LANES / VN];                                       \
            for (int r = 0; r < R; r++)                                     \
                for (int k = 0; k < SUM_LANES / VN; k++)                    \
                    l[r][k] = (vdn){0};                                     \
            for (; i + SUM_LANES <= e; i += SUM_LANES)                      \
                for (int r = 0; r < R; r++)                                 \
                    for (int k = 0; k < SUM_LANES / VN; k++)                \
                        l[r][k] += load_as_d_##NAME(x[r] + i + k * VN);     \
            for (int r = 0; r < R; r++)                                     \
                a[r] += NAME##_chunk_end(l[r], x[r], i, e);                 \
        }                                                                   \
    }
#define SUM_VEC(NAME, T)                                                    \
    SUM_CHUNK_END(NAME, T)                                                  \
    static void NAME##_vinner(void *acc, const char *p, int64_t n,          \
                              int64_t s, int64_t r0, double prm)            \
    {                                                                       \
        if (s != (int64_t)sizeof(T)) {                                      \
            NAME##_inner(acc, p, n, s, r0, prm);                            \
            return;                                                         \
        }                                                                   \
        double tot = *(double *)acc;                                        \
        const T *x = (const T *)p;                                          \
        for (int64_t c = 0; c < n; c += CHUNK) {                            \
            int64_t e = n - c > CHUNK ? c + CHUNK : n, i = c;               \
            vdn l[SUM_LANES / VN];                                          \
            for (int k = 0; k < SUM_LANES / VN; k++)                        \
                l[k] = (vdn){0};                                            \
            for (; i + SUM_LANES <= e; i += SUM_LANES)                      \
                for (int k = 0; k < SUM_LANES / VN; k++)                    \
                    l[k] += load_as_d_##NAME(x + i + k * VN);               \
            tot += NAME##_chunk_end(l, x, i, e);                            \
        }                                                                   \
        *(double *)acc = tot;                                               \
    }                                                                       \
    SUM_ROWS_R(NAME, T, 2)                                                  \
    SUM_ROWS_R(NAME, T, 4)                                                  \
    /* m rows at once, each summed exactly as vinner sums it, 4 (2 without \
     * AVX: 16 registers) or 2 at a time: their chains of adds are         \
     * independent, where one row's wait on the adder's latency (a third  \
     * of a copy's speed alone) */                                          \
    static void NAME##_vrows(void *acc, const char *base, const int64_t *offs, \
                             int64_t m, int64_t n, int64_t s, const double *prm) \
    {                                                                       \
        (void)prm;                                                          \
        double *a = acc;                                                    \
        int64_t j = 0;                                                      \
        if (s == (int64_t)sizeof(T)) {                                      \
            for (; n < RR_MAX_N && j + RR_WD <= m; j += RR_WD)              \
                NAME##_across(a + j, base, offs + j, n, NULL);              \
            for (; VN >= 4 && j + 4 <= m; j += 4)                           \
                NAME##_rows4(a + j, base, offs + j, n);                     \
            for (; j + 2 <= m; j += 2)                                      \
                NAME##_rows2(a + j, base, offs + j, n);                     \
        }                                                                   \
        for (; j < m; j++)                                                  \
            NAME##_vinner(a + j, base + offs[j], n, s, 0, 0.0);             \
    }

#define load_as_d_sum_f32 load_as_d_f32
#define load_as_d_sum_f64 load_as_d_f64
SUM_VEC(sum_f32, float)
SUM_VEC(sum_f64, double)

#define MINMAX(KIND, OPF, OPI, SIGN, LIM)                                   \
    ACC_KIND(KIND##_f32, float, float, OPF, SAME, SIGN INFINITY)            \
    ACC_KIND(KIND##_f64, double, double, OPF, SAME, SIGN INFINITY)          \
    ACC_KIND(KIND##_i32, int32_t, int32_t, OPI, SAME, INT32_##LIM)          \
    ACC_KIND(KIND##_i64, int64_t, int64_t, OPI, SAME, INT64_##LIM)          \
    ACC_KIND(KIND##_u8, uint8_t, uint8_t, OPI, SAME, (LIM##_U8))
#define MIN_U8 0
#define MAX_U8 UINT8_MAX
MINMAX(max, MAXF_SEL, MAXI, -, MIN)
MINMAX(min, MINF_SEL, MINI, +, MAX)

/* float max and min of contiguous rows in explicit vectors (GCC keeps the
 * NaN-aware select of ACC_KIND's 8-lane loop as branches: 10 cycles an
 * element): the same 8 lanes, in registers of the build's width (MM_N
 * elements, at most 8), the tail to lane 0 and the same tree, so the same
 * bits (signs of zero, NaN) as ACC_KIND; rows of a block 4 (2 without
 * AVX) at a time, as the sums. Rows under 16 elements stay ACC_KIND's
 * (measured faster there: the tail and tree are most of the work) */
#define MM_VEC(NAME, T, IT, CMP, ID, W)                                         \
    enum { NAME##_n = TG_VEC_BYTES / sizeof(T) < 8 ? TG_VEC_BYTES / sizeof(T) : 8 }; \
    typedef T NAME##_v __attribute__((vector_size(NAME##_n * sizeof(T))));  \
    typedef T NAME##_vu __attribute__((vector_size(NAME##_n * sizeof(T)), aligned(sizeof(T)), \
                                       may_alias));                          \
    typedef IT NAME##_m __attribute__((vector_size(NAME##_n * sizeof(T)))); \
    static inline T NAME##_chunk_end(const NAME##_v *l, const T *x, int64_t i, \
                                     int64_t e)                              \
    {                                                                        \
        T d[LANES];                                                          \
        memcpy(d, l, sizeof d);                                              \
        for (; i < e; i++)                                                   \
            d[0] = CMP(d[0], x[i]);                                       \
        T h0 = CMP(d[0], d[1]), h1 = CMP(d[2], d[3]);                  \
        T h2 = CMP(d[4], d[5]), h3 = CMP(d[6], d[7]);                  \
        return CMP(CMP(h0, h1), CMP(h2, h3));                       \
    }                                                                        \
    /* R rows at x[r] into a[r] */                                           \
    static inline void NAME##_rowsR(T *a, const T *const *x, int R, int64_t n) \
    {                                                                        \
        enum { NV = LANES / NAME##_n };                                      \
        for (int64_t c = 0; c < n; c += CHUNK) {                             \
            int64_t e = n - c > CHUNK ? c + CHUNK : n, i = c;                \
            NAME##_v l[4][NV];                                               \
            for (int r = 0; r < R; r++)                                      \
                for (int k = 0; k < NV; k++)                                 \
                    l[r][k] = (NAME##_v){0} + (ID);                          \
            for (; i + LANES <= e; i += LANES)                               \
                for (int r = 0; r < R; r++)                                  \
                    for (int k = 0; k < NV; k++) {                           \
                        NAME##_v v = *(const NAME##_vu *)(x[r] + i + k * NAME##_n); \
                        NAME##_m t = (v CMP##_OP l[r][k]) | (v != v);        \
                        l[r][k] = (NAME##_v)(((NAME##_m)v & t) | ((NAME##_m)l[r][k] & ~t)); \
                    }                                                        \
            for (int r = 0; r < R; r++)                                      \
                a[r] = CMP(a[r], NAME##_chunk_end(l[r], x[r], i, e));     \
        }                                                                    \
    }                                                                        \
    static void NAME##_rows1(T *a, const T *const *x, int64_t n) { NAME##_rowsR(a, x, 1, n); } \
    static void NAME##_rows2(T *a, const T *const *x, int64_t n) { NAME##_rowsR(a, x, 2, n); } \
    static void NAME##_rows4(T *a, const T *const *x, int64_t n) { NAME##_rowsR(a, x, 4, n); } \
    static void NAME##_vinner(void *acc, const char *p, int64_t n, int64_t s, \
                              int64_t r0, double prm)                        \
    {                                                                        \
        if (s != (int64_t)sizeof(T) || n < 2 * LANES) {                      \
            NAME##_inner(acc, p, n, s, r0, prm);                             \
            return;                                                          \
        }                                                                    \
        const T *x = (const T *)p;                                           \
        NAME##_rows1(acc, &x, n);                                            \
    }                                                                        \
    static void NAME##_vrows(void *acc, const char *base, const int64_t *offs, \
                             int64_t m, int64_t n, int64_t s, const double *prm) \
    {                                                                        \
        (void)prm;                                                           \
        T *a = acc;                                                          \
        int64_t j = 0;                                                       \
        const T *x[4];                                                       \
        for (; s == (int64_t)sizeof(T) && n < RR_MAX_N && j + W <= m; j += W) \
            NAME##_across(a + j, base, offs + j, n, NULL);                   \
        for (; s == (int64_t)sizeof(T) && n >= 2 * LANES && j + 4 <= m; j += 4) { \
            for (int r = 0; r < 4; r++)                                      \
                x[r] = (const T *)(base + offs[j + r]);                      \
            if (TG_VEC_BYTES >= 32)                                          \
                NAME##_rows4(a + j, x, n);                                   \
            else {                                                           \
                NAME##_rows2(a + j, x, n);                                   \
                NAME##_rows2(a + j + 2, x + 2, n);                           \
            }                                                                \
        }                                                                    \
        for (; j < m; j++)                                                   \
            NAME##_vinner(a + j, base + offs[j], n, s, 0, 0.0);              \
    }
#define MAXF_SEL_OP >
#define MINF_SEL_OP <
#define MINF_OP <
ROWS_ACROSS(max_f32, float, float, rr_vf, RR_WF, RR_LOAD_F, RR_SAME, RR_MAX_F, -INFINITY, -INFINITY)
ROWS_ACROSS(max_f64, double, double, rr_vd, RR_WD, RR_LOAD_D, RR_SAME, RR_MAX_D, -INFINITY, -INFINITY)
ROWS_ACROSS(min_f32, float, float, rr_vf, RR_WF, RR_LOAD_F, RR_SAME, RR_MIN_F, INFINITY, INFINITY)
ROWS_ACROSS(min_f64, double, double, rr_vd, RR_WD, RR_LOAD_D, RR_SAME, RR_MIN_D, INFINITY, INFINITY)
MM_VEC(max_f32, float, int32_t, MAXF_SEL, -INFINITY, RR_WF)
MM_VEC(max_f64, double, int64_t, MAXF_SEL, -INFINITY, RR_WD)
MM_VEC(min_f32, float, int32_t, MINF_SEL, INFINITY, RR_WF)
MM_VEC(min_f64, double, int64_t, MINF_SEL, INFINITY, RR_WD)

#define ARGS(KIND, VAL, BETF, BETI, SIGN, LIM)                              \
    ARG_KIND(KIND##_f32, float, BETF, EQF, VAL##_f32, SIGN INFINITY)        \
    ARG_KIND(KIND##_f64, double, BETF, EQF, VAL##_f64, SIGN INFINITY)       \
    ARG_KIND(KIND##_i32, int32_t, BETI, EQI, VAL##_i32, INT32_##LIM)        \
    ARG_KIND(KIND##_i64, int64_t, BETI, EQI, VAL##_i64, INT64_##LIM)        \
    ARG_KIND(KIND##_u8, uint8_t, BETI, EQI, VAL##_u8, (LIM##_U8))
#define GT(v, b) ((v) > (b))
#define LT(v, b) ((v) < (b))
ARGS(argmax, max, ARGF_MAX, GT, -, MIN)
ARGS(argmin, min, ARGF_MIN, LT, +, MAX)

/* float argmax/argmin of short contiguous rows, W at a time: the rows'
 * extremes by the across-rows kernel (the bits of VAL's), then in each
 * row the first element equal to it, what inner finds in one chunk; the
 * rows' reduced indices start at 0 (the engine calls it so, tg_red_fns) */
#define ARG_ROWS(NAME, T, VAL, EQ, BET, ID, W)                               \
    static void NAME##_rows(void *acc, const char *base, const int64_t *offs, \
                            int64_t m, int64_t n, int64_t s, const double *prm) \
    {                                                                        \
        (void)prm;                                                           \
        NAME##_acc *a = acc;                                                 \
        int64_t j = 0;                                                       \
        for (; s == (int64_t)sizeof(T) && n < RR_MAX_N && j + W <= m; j += W) { \
            T best[W];                                                       \
            for (int r = 0; r < W; r++)                                      \
                best[r] = (ID);                                              \
            VAL##_across(best, base, offs + j, n, NULL);                     \
            for (int r = 0; r < W; r++) {                                    \
                if (!BET(best[r], a[j + r].v))                               \
                    continue;                                                \
                const T *x = (const T *)(base + offs[j + r]);                \
                int64_t i = 0;                                               \
                if (n <= 64) { /* the hits as bits: no branch per element */ \
                    uint64_t hit = 0;                                        \
                    for (int64_t k = 0; k < n; k++)                          \
                        hit |= (uint64_t)EQ(x[k], best[r]) << k;             \
                    i = hit ? __builtin_ctzll(hit) : n - 1;                  \
                }                                                            \
                while (i < n - 1 && !EQ(x[i], best[r]))                      \
                    i++;                                                     \
                a[j + r] = (NAME##_acc){best[r], i};                         \
            }                                                                \
        }                                                                    \
        for (; j < m; j++)                                                   \
            NAME##_inner(a + j, base + offs[j], n, s, 0, 0.0);               \
    }
ARG_ROWS(argmax_f32, float, max_f32, EQF, ARGF_MAX, -INFINITY, RR_WF)
ARG_ROWS(argmax_f64, double, max_f64, EQF, ARGF_MAX, -INFINITY, RR_WD)
ARG_ROWS(argmin_f32, float, min_f32, EQF, ARGF_MIN, INFINITY, RR_WF)
ARG_ROWS(argmin_f64, double, min_f64, EQF, ARGF_MIN, INFINITY, RR_WD)

/* ---- the table ------------------------------------------------------------------- */
#define FNS(NAME, A, FIN)                                                   \
    {sizeof(A), NAME##_init, NAME##_inner, NAME##_outer, NAME##_combine, FIN}
#define FNS_ARG(NAME) FNS(NAME, NAME##_acc, NAME##_finish)
#define FNS_ACC(KIND)                                                       \
    {[TG_FLOAT32] = FNS(KIND##_f32, double, fin_d),                         \
     [TG_FLOAT64] = FNS(KIND##_f64, double, fin_d),                         \
     [TG_INT32] = FNS(KIND##_i32, uint64_t, fin_u64),                       \
     [TG_INT64] = FNS(KIND##_i64, uint64_t, fin_u64),                       \
     [TG_UINT8] = FNS(KIND##_u8, uint64_t, fin_u64)}
#define FNS_MINMAX(KIND)                                                    \
    {[TG_FLOAT32] = {sizeof(float), KIND##_f32_init, KIND##_f32_vinner, KIND##_f32_outer, \
                     KIND##_f32_combine, fin_f, KIND##_f32_vrows},          \
     [TG_FLOAT64] = {sizeof(double), KIND##_f64_init, KIND##_f64_vinner, KIND##_f64_outer, \
                     KIND##_f64_combine, fin_d, KIND##_f64_vrows},          \
     [TG_INT32] = FNS(KIND##_i32, int32_t, fin_i32),                        \
     [TG_INT64] = FNS(KIND##_i64, int64_t, fin_i64),                        \
     [TG_UINT8] = FNS(KIND##_u8, uint8_t, fin_u8)}
#define FNS_PROWS(NAME)                                                     \
    {sizeof(double), NAME##_init, NAME##_inner, NAME##_outer, NAME##_combine, fin_d, \
     NAME##_prows}
#define FNS_ARG_ROWS(NAME)                                                  \
    {sizeof(NAME##_acc), NAME##_init, NAME##_inner, NAME##_outer, NAME##_combine, \
     NAME##_finish, NAME##_rows, true}
#define FNS_ARGS(KIND)                                                      \
    {[TG_FLOAT32] = FNS_ARG_ROWS(KIND##_f32), [TG_FLOAT64] = FNS_ARG_ROWS(KIND##_f64), \
     [TG_INT32] = FNS_ARG(KIND##_i32), [TG_INT64] = FNS_ARG(KIND##_i64),    \
     [TG_UINT8] = FNS_ARG(KIND##_u8)}

const tg_red_fns TG_ARCH_FN(tg__red_table)[TG_RED_NKINDS][TG_NUM_DTYPES] = {
    [TG_RED_SUM] = {[TG_FLOAT32] = {sizeof(double), sum_f32_init, sum_f32_vinner, sum_f32_outer,
                                    sum_f32_combine, fin_d, sum_f32_vrows},
                    [TG_FLOAT64] = {sizeof(double), sum_f64_init, sum_f64_vinner, sum_f64_outer,
                                    sum_f64_combine, fin_d, sum_f64_vrows},
                    [TG_INT32] = FNS(sum_i32, uint64_t, fin_u64),
                    [TG_INT64] = FNS(sum_i64, uint64_t, fin_u64),
                    [TG_UINT8] = FNS(sum_u8, uint64_t, fin_u64)},
    [TG_RED_PROD] = FNS_ACC(prod),
    [TG_RED_MAX] = FNS_MINMAX(max),
    [TG_RED_MIN] = FNS_MINMAX(min),
    [TG_RED_SQDEV] = {[TG_FLOAT32] = FNS_PROWS(sqdev_f32),
                      [TG_FLOAT64] = FNS_PROWS(sqdev_f64)},
    [TG_RED_SUMEXP] = {[TG_FLOAT32] = FNS_PROWS(sumexp_f32),
                       [TG_FLOAT64] = FNS(sumexp_f64, double, fin_d)},
    [TG_RED_ABSSUM] = {[TG_FLOAT32] = FNS(abssum_f32, double, fin_d),
                       [TG_FLOAT64] = FNS(abssum_f64, double, fin_d)},
    [TG_RED_SQSUM] = {[TG_FLOAT32] = FNS(sqsum_f32, double, fin_d),
                      [TG_FLOAT64] = FNS(sqsum_f64, double, fin_d)},
    [TG_RED_ARGMAX] = FNS_ARGS(argmax),
    [TG_RED_ARGMIN] = FNS_ARGS(argmin),
};
