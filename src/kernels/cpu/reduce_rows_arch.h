/* Short contiguous rows of a float sum, max or min, a register's width of
 * rows at once (part of reduce_arch.h, built per instruction set).
 *
 * One row at a time (SUM_VEC, MM_VEC, ACC_KIND) folds a row into 8 lanes
 * (lane k takes the elements k mod 8 of the vector part), the tail into
 * lane 0 one element after the other, then the lanes by a pairwise tree:
 * d[k] = d[2k] op d[2k+1], three levels. For rows of 10 or 28 elements
 * the tail and the tree are most of the work, and done per row they are
 * scalar, with a loop and a branch each. Here W rows (W = the lanes of a
 * register of the accumulator's type) are folded into their lanes side by
 * side as before, each row's tail goes to its lane 0 as before, and the
 * tree runs on all W rows at once: laid end to end, the W rows' 8 lanes
 * are 8 registers; taking adjacent pairs of that sequence (the even and
 * the odd elements of two registers, op'd) halves it while keeping every
 * row's lanes together, so three such steps are the three levels of every
 * row's tree, and leave one register holding the W rows' results in row
 * order. Every operation is the one-row code's, on the same operands in
 * the same order, so the bits (signs of zero, which NaN) are the same. */

/* the even / odd elements of the concatenation of two registers of N */
#define RR_EVENS_2(a, b) __builtin_shufflevector(a, b, 0, 2)
#define RR_ODDS_2(a, b) __builtin_shufflevector(a, b, 1, 3)
#define RR_EVENS_4(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6)
#define RR_ODDS_4(a, b) __builtin_shufflevector(a, b, 1, 3, 5, 7)
#define RR_EVENS_8(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14)
#define RR_ODDS_8(a, b) __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15)
#define RR_CAT(a, b) RR_CAT_(a, b)
#define RR_CAT_(a, b) a##b

/* lanes per register: of doubles, and of floats (at most 8: the lanes) */
#if TG_VEC_BYTES >= 64
#define RR_WD 8
#define RR_WF 8
#elif TG_VEC_BYTES >= 32
#define RR_WD 4
#define RR_WF 8
#else
#define RR_WD 2
#define RR_WF 4
#endif

/* every loop over rows, registers and tree levels unrolled, so that the
 * lanes stay in registers */
#define RR_UNROLL _Pragma("GCC unroll 16")

/* rows shorter than this take the across-rows path (longer ones amortize
 * their tree; measured no faster there) */
#define RR_MAX_N 256

/* NAME##_across(a, base, offs, n): a[r] op= the fold of the row of n
 * elements of T at base + offs[r], r < W, where V is a vector of W
 * accumulators A, LOADV(p, m) the W elements at p as a V mapped as the
 * kind maps them (m: the row's parameter, prm[r]; prm may be NULL), PRES(x,
 * m) the same for one element, OPV the vector op,
 * ID the value the lanes start from, TAIL_ID an identity of OPV (for sums
 * -0, not the lanes' +0) */
#define ROWS_ACROSS(NAME, T, A, V, W, LOADV, PRES, OPV, ID, TAIL_ID)             \
    static inline V NAME##_pairs(V a, V b)                                   \
    {                                                                        \
        return OPV(RR_CAT(RR_EVENS_, W)(a, b), RR_CAT(RR_ODDS_, W)(a, b));   \
    }                                                                        \
    static void NAME##_across(A *a, const char *base, const int64_t *offs,   \
                              int64_t n, const double *prm)                  \
    {                                                                        \
        enum { G = LANES / W }; /* registers per row */                     \
        const T *x[W];                                                       \
        double pr[W]; /* the rows' parameters (0 without) */               \
        V l[W * G];             /* row r's lanes: l[r * G .. r * G + G - 1] */ \
        RR_UNROLL                                                            \
        for (int r = 0; r < W; r++) {                                        \
            x[r] = (const T *)(base + offs[r]);                              \
            pr[r] = prm ? prm[r] : 0.0;                                      \
            for (int g = 0; g < G; g++)                                      \
                l[r * G + g] = (V){0} + (ID);                                \
        }                                                                    \
        (void)pr; /* unread by kinds without a parameter */                 \
        int64_t i = 0;                                                       \
        for (; i + LANES <= n; i += LANES)                                   \
            RR_UNROLL                                                        \
            for (int r = 0; r < W; r++)                                      \
                RR_UNROLL                                                    \
                for (int g = 0; g < G; g++)                                  \
                    l[r * G + g] = OPV(l[r * G + g], LOADV(x[r] + i + g * W, pr[r])); \
        /* the tail to lane 0, by the vector op with the identity in the \
         * other lanes (x + -0 is x, as max(x, -inf) is) */                 \
        for (int64_t j = i; j < n; j++)                                      \
            RR_UNROLL                                                        \
            for (int r = 0; r < W; r++) {                                    \
                V t = (TAIL_ID) - (V){0}; /* -0 - +0 is -0 */               \
                t[0] = PRES(x[r][j], pr[r]);                                 \
                l[r * G] = OPV(l[r * G], t);                                 \
            }                                                                \
        /* the tree: 8 registers to 4, 2, 1 */                              \
        RR_UNROLL                                                            \
        for (int k = 0; k < 4; k++)                                          \
            l[k] = NAME##_pairs(l[2 * k], l[2 * k + 1]);                     \
        l[0] = NAME##_pairs(l[0], l[1]);                                     \
        l[1] = NAME##_pairs(l[2], l[3]);                                     \
        l[0] = NAME##_pairs(l[0], l[1]);                                     \
        V acc;                                                               \
        memcpy(&acc, a, sizeof acc);                                         \
        acc = OPV(acc, l[0]);                                                \
        memcpy(a, &acc, sizeof acc);                                         \
    }

/* the vector ops: a + v; v where v beats a (or is NaN), else a */
#define RR_ADD(a, v) ((a) + (v))
#define RR_SEL(a, v, CMPOP, M)                                               \
    ({                                                                       \
        __typeof__(a) a_ = (a), v_ = (v);                                    \
        M t_ = (v_ CMPOP a_) | (v_ != v_);                                   \
        (__typeof__(a))(((M)v_ & t_) | ((M)a_ & ~t_));                       \
    })

typedef double rr_vd __attribute__((vector_size(RR_WD * sizeof(double))));
typedef int64_t rr_md __attribute__((vector_size(RR_WD * sizeof(double))));
typedef double rr_vdu __attribute__((vector_size(RR_WD * sizeof(double)), aligned(8), may_alias));
typedef float rr_vf __attribute__((vector_size(RR_WF * sizeof(float))));
typedef int32_t rr_mf __attribute__((vector_size(RR_WF * sizeof(float))));
typedef float rr_vfu __attribute__((vector_size(RR_WF * sizeof(float)), aligned(4), may_alias));

#define RR_LOAD_D(p, m) (*(const rr_vdu *)(p))
#define RR_LOAD_F(p, m) (*(const rr_vfu *)(p))
#define RR_SAME(x, m) (x)
#define RR_MAX_D(a, v) RR_SEL(a, v, >, rr_md)
#define RR_MIN_D(a, v) RR_SEL(a, v, <, rr_md)
#define RR_MAX_F(a, v) RR_SEL(a, v, >, rr_mf)
#define RR_MIN_F(a, v) RR_SEL(a, v, <, rr_mf)

/* the mapped loads of the kinds with a parameter: (x - m)^2 in double
 * (var, std), exp(x - m) (logsumexp; float32: vexpf on W floats, then
 * double), each element as ACC_KIND's PRE maps it */
typedef float rr_vfw __attribute__((vector_size(RR_WD * sizeof(float))));
typedef int32_t rr_mfw __attribute__((vector_size(RR_WD * sizeof(float))));
typedef uint32_t rr_ufw __attribute__((vector_size(RR_WD * sizeof(float))));
typedef float rr_vfwu __attribute__((vector_size(RR_WD * sizeof(float)), aligned(4), may_alias));
#define RR_SELW(c, a, b) ((rr_vfw)(((rr_mfw)(a) & (c)) | ((rr_mfw)(b) & ~(c))))
/* vexpf (reduce_arch.h) on a vector: the same operations lane by lane */
static inline rr_vfw vexpf_v(rr_vfw x)
{
    const float log2e = 1.44269504f, shifter = 0x1.8p23f;
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    rr_vfw lo = (rr_vfw){0} - 86.0f, hi = (rr_vfw){0} + 88.8f;
    rr_vfw xc = RR_SELW(x < lo, lo, RR_SELW(x > hi, hi, x));
    rr_vfw t = xc * log2e + shifter;
    rr_vfw n = t - shifter;
    rr_vfw r = (xc - n * ln2_hi) - n * ln2_lo;
    rr_vfw p = (rr_vfw){0} + 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    rr_vfw s = (rr_vfw)(((rr_ufw)t + 126) << 23);
    rr_vfw y = p * s * 2.0f;
    y = RR_SELW(x < lo, (rr_vfw){0}, y);
    y = RR_SELW(x > hi, (rr_vfw){0} + (float)INFINITY, y);
    return RR_SELW(x != x, x, y);
}
#define RR_SQDEV_F(p, m) ({ rr_vd d_ = load_as_d_f32(p) - (m); d_ * d_; })
#define RR_SQDEV_D(p, m) ({ rr_vd d_ = load_as_d_f64(p) - (m); d_ * d_; })
#define RR_EXP_F(p, m) __builtin_convertvector(vexpf_v(*(const rr_vfwu *)(p) - (float)(m)), rr_vd)

/* m rows of a kind with a parameter (prm[j] for row j), W at a time */
#define ROWS_PARAM(NAME, T)                                                  \
    static void NAME##_prows(void *acc, const char *base, const int64_t *offs, \
                             int64_t m, int64_t n, int64_t s, const double *prm) \
    {                                                                        \
        double *a = acc;                                                     \
        int64_t j = 0;                                                       \
        for (; s == (int64_t)sizeof(T) && n < RR_MAX_N && j + RR_WD <= m; j += RR_WD) \
            NAME##_across(a + j, base, offs + j, n, prm + j);                \
        for (; j < m; j++)                                                   \
            NAME##_inner(a + j, base + offs[j], n, s, 0, prm[j]);            \
    }
