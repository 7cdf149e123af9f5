/* GEMM for float32/float64: the built-in blocked kernel for the CPU's
 * instruction set (gemm_arch.h, picked at run time by cpu.h) or CBLAS
 * (OpenBLAS), whichever gemm_select.c found faster for the shape; large
 * products are split over the library's one thread pool. Integer matmul
 * is a plain loop. */
#include "kernels/cpu/gemm.h"
#include "core/threadpool.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/gemm_arch_api.h"
#include "kernels/cpu/pack_cache.h"
#include "kernels/cpu/scratch.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- threading policy ----------------------------------------------------
 * There is one thread pool in the library. A BLAS that starts threads of
 * its own would compete with it for the cores (and each pool worker
 * calling a threaded BLAS would ask for all of them), so OpenBLAS is told
 * once to use 1 thread, and big GEMMs, of either implementation, are
 * split here by blocks of rows (or columns) of C over the pool; a GEMM
 * reached from inside a pool region (conv over the batch, batched matmul,
 * the parallel executor) runs on its caller's thread. Small products stay
 * serial (TG__GEMM_PAR_WORK: a parallel_for costs ~1-2 us). The
 * blocks are claimed by the threads as they come, a few per thread, so
 * that a thread the scheduler starts late on shared cores leaves its
 * share to the others. openblas_set_num_threads is looked up weakly: a
 * CBLAS other than OpenBLAS simply lacks it. */
#ifdef TG_HAVE_CBLAS
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
#pragma weak openblas_set_num_threads

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static void blas_init(void)
{
    if (openblas_set_num_threads)
        openblas_set_num_threads(1);
}
#endif

#define PAR_MIN_WORK TG__GEMM_PAR_WORK
/* blocks of C per thread, claimed dynamically */
#define PARTS_PER_THREAD 2

/* ---- the built-in kernel ---------------------------------------------------- */
const tg__gemm_arch *tg__gemm_arch_now(void)
{
#ifdef TG_HAVE_X86_KERNELS
    switch (tg__cpu_isa()) {
    case TG_ISA_AVX512: return &tg__gemm_arch_avx512;
    case TG_ISA_AVX2: return &tg__gemm_arch_avx2;
    default: break;
    }
#endif
    return &tg__gemm_arch_generic;
}

#define SCALE_C(T, SUF)                                                         \
    static void scale_c_##SUF(int64_t m, int64_t n, T beta, T *c, int64_t ldc)  \
    {                                                                           \
        if (beta == 1)                                                          \
            return;                                                             \
        for (int64_t i = 0; i < m; i++) {                                       \
            T *r = c + i * ldc;                                                 \
            if (beta == 0)                                                      \
                memset(r, 0, (size_t)n * sizeof(T));                            \
            else                                                                \
                for (int64_t j = 0; j < n; j++)                                 \
                    r[j] *= beta;                                               \
        }                                                                       \
    }
SCALE_C(float, f32)
SCALE_C(double, f64)

/* element addresses of op(A), op(B) and C */
static size_t elem(const tg__gemm_call *g) { return g->f64 ? sizeof(double) : sizeof(float); }
static const char *at_a(const tg__gemm_call *g, int64_t i, int64_t p)
{
    return (const char *)g->a + (g->ta ? p * g->lda + i : i * g->lda + p) * (int64_t)elem(g);
}
static const char *at_b(const tg__gemm_call *g, int64_t p, int64_t j)
{
    return (const char *)g->b + (g->tb ? j * g->ldb + p : p * g->ldb + j) * (int64_t)elem(g);
}
static char *at_c(const tg__gemm_call *g, int64_t i, int64_t j)
{
    return (char *)g->c + (i * g->ldc + j) * (int64_t)elem(g);
}
static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* the product is trivial (no k, or alpha 0): C = beta C, and true */
static bool trivial(const tg__gemm_call *g)
{
    if (g->k > 0 && g->alpha != 0)
        return false;
    if (g->f64)
        scale_c_f64(g->m, g->n, g->beta, g->c, g->ldc);
    else
        scale_c_f32(g->m, g->n, (float)g->beta, g->c, g->ldc);
    return true;
}

/* ---- B packed whole (kept for a frozen B) ----------------------------------------
 * Slab pc (rows pc .. pc + kc of op(B)) at pc * n_pad, its panels of nr
 * columns one after another: column block jc of slab pc starts at
 * jc * kc within it, the layout the serial loops pack each block in (nc
 * is a multiple of nr) and the threads' shared B in builtin_parallel. */
static int64_t b_whole_len(const tg__gemm_call *g, const tg__gemm_kern *kn)
{
    return round_up(g->n, kn->nr);
}
static const char *b_whole_block(const tg__gemm_call *g, const tg__gemm_kern *kn,
                                 const char *whole, int64_t pc, int64_t jc, int64_t kc)
{
    return whole + (pc * b_whole_len(g, kn) + jc * kc) * (int64_t)elem(g);
}
static void pack_b_whole(const tg__gemm_call *g, const tg__gemm_kern *kn, char *whole)
{
    for (int64_t pc = 0; pc < g->k; pc += kn->kc) {
        int64_t kc = min64(g->k - pc, kn->kc);
        for (int64_t jc = 0; jc < g->n; jc += kn->nc)
            kn->pack_b(g->tb, at_b(g, pc, jc), g->ldb, kc, min64(g->n - jc, kn->nc),
                       (char *)b_whole_block(g, kn, whole, pc, jc, kc));
    }
}

/* the packed form of a frozen B from the cache (packed into it now when
 * it is not there yet), or NULL: B not frozen, or too large for the
 * cache. *entry is released by the caller after the product. */
static const char *kept_b(const tg__gemm_call *g, tg__pack_entry **entry)
{
    *entry = NULL;
    if (!g->b_serial || g->k <= 0 || g->alpha == 0)
        return NULL;
    const tg__gemm_kern *kn = &tg__gemm_arch_now()->k[g->f64];
    tg__pack_key key = {.serial = g->b_serial, .version = g->b_version, .data = g->b,
                        .kern = kn, .layout = {g->tb, g->ldb, g->k, g->n, 0, 0}};
    bool ready;
    size_t bytes = (size_t)(b_whole_len(g, kn) * g->k) * elem(g);
    char *buf = tg__pack_cache_get(&key, bytes, &ready, entry);
    if (buf && !ready)
        pack_b_whole(g, kn, buf);
    return buf;
}

/* whether the micro-kernel reads A where it is instead of from packed
 * panels: a packed A block is reused once per NR columns of C, so for
 * products of few columns its packing (a transpose, when A is not
 * transposed) costs more than the strided reads it saves. bench_gemm on
 * Zen 5, one thread (docs/BENCHMARKS.md): the transformer layer's
 * products +5-20% with either ISA's kernels, attention's 64 x 32 x 64
 * +15-35%; square 1024 level at AVX2 and up to 10% slower at AVX-512,
 * and A transposed (a weight gradient) 4% slower at 512 columns, hence
 * the bounds. Alpha is folded into packed A only. */
static bool a_in_place(const tg__gemm_call *g)
{
    return g->alpha == 1 && g->n <= (g->ta ? 256 : 512);
}

/* with A in place, whether B is read in place too: a packed B panel is
 * reused once per MR rows of C, so for products of few rows packing it
 * costs more than it saves (bench_gemm, Zen 5, one thread: attention's
 * probabilities @ values and LeNet's input gradients +5-15% at either
 * ISA, 2048-row products level). B stored transposed stays packed (its
 * rows are C's columns: no vector loads) */
static bool b_in_place(const tg__gemm_call *g)
{
    return !g->tb && g->m <= 256;
}

/* Goto's loops on the calling thread: B in KC x NC blocks (L3), A in
 * MC x KC blocks (L2), the macro-kernel on each pair; kb: B packed whole
 * already (kept_b), else NULL */
static tg_status builtin_serial(const tg__gemm_call *g, const char *kb)
{
    if (g->m <= 0 || g->n <= 0 || trivial(g))
        return TG_OK;
    const tg__gemm_kern *kn = &tg__gemm_arch_now()->k[g->f64];
    size_t z = elem(g);
    int64_t kcap = min64(g->k, kn->kc), mcap = min64(round_up(g->m, kn->mr), kn->mc);
    int64_t ncap = min64(round_up(g->n, kn->nr), kn->nc);
    void *pa = tg__scratch(TG_SCRATCH_GEMM_A, (size_t)(mcap * kcap) * z);
    void *pb = kb ? NULL : tg__scratch(TG_SCRATCH_GEMM_B, (size_t)(ncap * kcap) * z);
    if (!pa || (!kb && !pb))
        return TG_ERR_NOMEM;
    bool direct = a_in_place(g);
    bool b_direct = direct && !kb && b_in_place(g);
    for (int64_t jc = 0; jc < g->n; jc += kn->nc) {
        int64_t nc = min64(g->n - jc, kn->nc);
        for (int64_t pc = 0; pc < g->k; pc += kn->kc) {
            int64_t kc = min64(g->k - pc, kn->kc);
            if (kb)
                pb = (void *)b_whole_block(g, kn, kb, pc, jc, kc);
            else if (!b_direct)
                kn->pack_b(g->tb, at_b(g, pc, jc), g->ldb, kc, nc, pb);
            for (int64_t ic = 0; ic < g->m; ic += kn->mc) {
                int64_t mc = min64(g->m - ic, kn->mc);
                double beta = pc == 0 ? g->beta : 1;
                if (direct) {
                    const void *b = b_direct ? at_b(g, pc, jc) : pb;
                    kn->macro_direct(mc, nc, kc, g->ta, at_a(g, ic, pc), g->lda, b,
                                     b_direct ? g->ldb : 0, at_c(g, ic, jc), g->ldc, beta,
                                     pa, pb);
                    continue;
                }
                kn->pack_a(g->ta, at_a(g, ic, pc), g->lda, mc, kc, g->alpha, pa);
                kn->macro(mc, nc, kc, pa, pb, at_c(g, ic, jc), g->ldc, beta);
            }
        }
    }
    return TG_OK;
}

#define BUILTIN(T, SUF, IS64)                                                   \
    tg_status tg__gemm_builtin_##SUF(bool ta, bool tb, int64_t m, int64_t n,    \
                                     int64_t k, T alpha, const T *a,            \
                                     int64_t lda, const T *b, int64_t ldb,      \
                                     T beta, T *c, int64_t ldc)                 \
    {                                                                           \
        tg__gemm_call g = {.ta = ta, .tb = tb, .f64 = IS64, .m = m, .n = n,     \
                           .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,          \
                           .alpha = alpha, .beta = beta, .a = a, .b = b,        \
                           .c = c};                                             \
        return builtin_serial(&g, NULL);                                        \
    }
BUILTIN(float, f32, false)
BUILTIN(double, f64, true)

/* ---- the built-in kernel on several threads ------------------------------------
 * The operand along C's shorter side is packed once, whole, by all
 * threads together (shared); then the threads claim blocks of C's longer
 * side, a few per thread, packing their own part of the other operand:
 * nothing is packed twice, and a thread the scheduler starts late on
 * shared cores leaves its blocks to the others. Blocks wait for the
 * shared packing to be complete (its units are all claimed by then, by
 * running threads, so the wait ends even on one thread). */
typedef struct coop_job {
    const tg__gemm_call *g;
    const tg__gemm_kern *kn;
    bool by_rows;     /* blocks of rows of C (B shared) or of columns (A) */
    char *shared;     /* packed B: slab pc at pc * len_pad, or packed A */
    const char *kb;   /* B packed whole already (kept_b), or NULL */
    int64_t len_pad;  /* the shared side (n or m) rounded to its panels */
    int64_t units;    /* shared panels (of nr columns or mr rows) */
    int64_t parts;    /* blocks of the long side */
    atomic_llong next_unit, units_done, next_part;
    atomic_int status;
} coop_job;

/* packs shared panel u for every slab of k */
static void pack_unit(coop_job *j, int64_t u)
{
    const tg__gemm_call *g = j->g;
    const tg__gemm_kern *kn = j->kn;
    int64_t z = (int64_t)elem(g);
    for (int64_t pc = 0; pc < g->k; pc += kn->kc) {
        int64_t kc = min64(g->k - pc, kn->kc);
        char *slab = j->shared + pc * j->len_pad * z;
        if (j->by_rows) {
            int64_t jp = u * kn->nr;
            kn->pack_b(g->tb, at_b(g, pc, jp), g->ldb, kc, min64(kn->nr, g->n - jp),
                       slab + jp * kc * z);
        } else {
            int64_t ip = u * kn->mr;
            kn->pack_a(g->ta, at_a(g, ip, pc), g->lda, min64(kn->mr, g->m - ip), kc,
                       g->alpha, slab + ip * kc * z);
        }
    }
}

/* block t of the long side against the shared operand */
static void run_block(coop_job *j, int64_t t)
{
    const tg__gemm_call *g = j->g;
    const tg__gemm_kern *kn = j->kn;
    int64_t z = (int64_t)elem(g), unit = j->by_rows ? kn->mr : kn->nr;
    int64_t len = j->by_rows ? g->m : g->n, step = j->by_rows ? kn->mc : kn->nc;
    int64_t units = (len + unit - 1) / unit;
    int64_t lo = units * t / j->parts * unit, hi = min64(units * (t + 1) / j->parts * unit, len);
    int64_t kcap = min64(g->k, kn->kc);
    void *own = j->by_rows ? tg__scratch(TG_SCRATCH_GEMM_A, (size_t)(kn->mc * kcap * z))
                : j->kb    ? NULL
                           : tg__scratch(TG_SCRATCH_GEMM_B, (size_t)(kn->nc * kcap * z));
    if (!own && !j->kb) {
        atomic_store(&j->status, TG_ERR_NOMEM);
        return;
    }
    for (int64_t s0 = lo; s0 < hi; s0 += step) {
        int64_t sn = min64(hi - s0, step);
        for (int64_t pc = 0; pc < g->k; pc += kn->kc) {
            int64_t kc = min64(g->k - pc, kn->kc);
            const char *slab = j->shared + pc * j->len_pad * z;
            double beta = pc == 0 ? g->beta : 1;
            if (j->by_rows && a_in_place(g)) {
                kn->macro_direct(sn, g->n, kc, g->ta, at_a(g, s0, pc), g->lda, slab, 0,
                                 at_c(g, s0, 0), g->ldc, beta, own, NULL);
            } else if (j->by_rows) {
                kn->pack_a(g->ta, at_a(g, s0, pc), g->lda, sn, kc, g->alpha, own);
                kn->macro(sn, g->n, kc, own, slab, at_c(g, s0, 0), g->ldc, beta);
            } else {
                const void *pb = j->kb ? b_whole_block(g, kn, j->kb, pc, s0, kc) : own;
                if (!j->kb)
                    kn->pack_b(g->tb, at_b(g, pc, s0), g->ldb, kc, sn, own);
                kn->macro(g->m, sn, kc, slab, pb, at_c(g, 0, s0), g->ldc, beta);
            }
        }
    }
}

static void coop_body(void *ctx, int64_t begin, int64_t end)
{
    coop_job *j = ctx;
    (void)begin, (void)end;
    for (int64_t u; (u = atomic_fetch_add(&j->next_unit, 1)) < j->units;) {
        pack_unit(j, u);
        atomic_fetch_add(&j->units_done, 1);
    }
    while (atomic_load(&j->units_done) < j->units)
        sched_yield();
    for (int64_t t; (t = atomic_fetch_add(&j->next_part, 1)) < j->parts;)
        run_block(j, t);
}

/* kb: B packed whole already (kept_b), else NULL; when B is the shared
 * operand, the threads then only claim blocks of rows */
static tg_status builtin_parallel(const tg__gemm_call *g, int threads, const char *kb)
{
    if (trivial(g))
        return TG_OK;
    coop_job j = {.g = g, .kn = &tg__gemm_arch_now()->k[g->f64], .by_rows = g->m >= g->n,
                  .kb = kb};
    int64_t unit = j.by_rows ? j.kn->nr : j.kn->mr, len = j.by_rows ? g->n : g->m;
    int64_t long_unit = j.by_rows ? j.kn->mr : j.kn->nr, long_len = j.by_rows ? g->m : g->n;
    j.len_pad = round_up(len, unit);
    j.units = j.len_pad / unit;
    j.parts = min64((long_len + long_unit - 1) / long_unit, (int64_t)threads * PARTS_PER_THREAD);
    if (j.parts < 2)
        return builtin_serial(g, kb);
    bool shared_kept = j.by_rows && kb; /* B, packed already */
    j.shared = shared_kept ? (char *)kb
                           : tg__scratch(j.by_rows ? TG_SCRATCH_GEMM_B : TG_SCRATCH_GEMM_A,
                                         (size_t)(j.len_pad * g->k) * elem(g));
    if (!j.shared)
        return TG_ERR_NOMEM;
    atomic_init(&j.next_unit, shared_kept ? j.units : 0);
    atomic_init(&j.units_done, shared_kept ? j.units : 0);
    atomic_init(&j.next_part, 0);
    atomic_init(&j.status, TG_OK);
    tg_parallel_for(threads, 1, coop_body, &j);
    return (tg_status)atomic_load(&j.status);
}

/* ---- CBLAS -------------------------------------------------------------------- */
#ifdef TG_HAVE_CBLAS
#define BLAS_T(t) ((t) ? CblasTrans : CblasNoTrans)
/* BLAS insists on lda >= the row length even where a stride is never used
 * (a single row or column); such strides are normalised here */
static int64_t fix_ld(int64_t ld, int64_t rows, int64_t cols)
{
    int64_t need = cols > 1 ? cols : 1;
    return rows <= 1 && ld < need ? need : ld;
}
static bool fits_int(int64_t x, int64_t y, int64_t z)
{
    return x <= INT_MAX && y <= INT_MAX && z <= INT_MAX;
}
#define BLAS(T, SUF, BLASFN)                                                    \
    tg_status tg__gemm_blas_##SUF(bool ta, bool tb, int64_t m, int64_t n,       \
                                  int64_t k, T alpha, const T *a, int64_t lda,  \
                                  const T *b, int64_t ldb, T beta, T *c,        \
                                  int64_t ldc)                                  \
    {                                                                           \
        pthread_once(&blas_once, blas_init);                                    \
        if (m <= 0 || n <= 0)                                                   \
            return TG_OK;                                                       \
        if (k == 0) {                                                           \
            scale_c_##SUF(m, n, beta, c, ldc);                                  \
            return TG_OK;                                                       \
        }                                                                       \
        if (!fits_int(m, n, k) || !fits_int(lda, ldb, ldc)) /* CBLAS: int */    \
            return tg__gemm_builtin_##SUF(ta, tb, m, n, k, alpha, a, lda, b,    \
                                          ldb, beta, c, ldc);                   \
        BLASFN(CblasRowMajor, BLAS_T(ta), BLAS_T(tb), (int)m, (int)n, (int)k,   \
               alpha, a, (int)fix_ld(lda, ta ? k : m, ta ? m : k), b,           \
               (int)fix_ld(ldb, tb ? n : k, tb ? k : n), beta, c,               \
               (int)fix_ld(ldc, m, n));                                         \
        return TG_OK;                                                           \
    }
BLAS(float, f32, cblas_sgemm)
BLAS(double, f64, cblas_dgemm)
#else
tg_status tg__gemm_blas_f32(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                            float alpha, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float beta, float *c,
                            int64_t ldc)
{
    return tg__gemm_builtin_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
tg_status tg__gemm_blas_f64(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                            double alpha, const double *a, int64_t lda,
                            const double *b, int64_t ldb, double beta, double *c,
                            int64_t ldc)
{
    return tg__gemm_builtin_f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#endif

/* ---- CBLAS on several threads ---------------------------------------------------
 * C is cut into `parts` blocks of whole rows (or, when C is short and
 * wide, whole columns); each block is an independent serial call. */
typedef struct split_job {
    const tg__gemm_call *g;
    bool blas, by_rows;
    int64_t parts, unit;
    atomic_llong next; /* the first part no thread has claimed */
    atomic_int status; /* first failure (NOMEM only) */
} split_job;

static tg_status run_serial(const tg__gemm_call *g, bool blas, int64_t m,
                            int64_t n, const void *a, const void *b, void *c)
{
    if (g->f64)
        return (blas ? tg__gemm_blas_f64 : tg__gemm_builtin_f64)(
            g->ta, g->tb, m, n, g->k, g->alpha, a, g->lda, b, g->ldb, g->beta,
            c, g->ldc);
    return (blas ? tg__gemm_blas_f32 : tg__gemm_builtin_f32)(
        g->ta, g->tb, m, n, g->k, (float)g->alpha, a, g->lda, b, g->ldb,
        (float)g->beta, c, g->ldc);
}

static void run_part(split_job *j, int64_t t)
{
    const tg__gemm_call *g = j->g;
    int64_t z = g->f64 ? (int64_t)sizeof(double) : (int64_t)sizeof(float);
    int64_t len = j->by_rows ? g->m : g->n, units = (len + j->unit - 1) / j->unit;
    int64_t lo = units * t / j->parts * j->unit;
    int64_t hi = units * (t + 1) / j->parts * j->unit;
    hi = hi < len ? hi : len;
    if (hi <= lo)
        return;
    /* offsets of the block's first element of op(A)/op(B)/C */
    int64_t oa = 0, ob = 0, oc, m = g->m, n = g->n;
    if (j->by_rows) {
        oa = g->ta ? lo : lo * g->lda;
        oc = lo * g->ldc;
        m = hi - lo;
    } else {
        ob = g->tb ? lo * g->ldb : lo;
        oc = lo;
        n = hi - lo;
    }
    tg_status s = run_serial(g, j->blas, m, n, (const char *)g->a + oa * z,
                             (const char *)g->b + ob * z, (char *)g->c + oc * z);
    if (s != TG_OK)
        atomic_store(&j->status, s); /* any failure will do; all are NOMEM */
}

static void split_body(void *ctx, int64_t begin, int64_t end)
{
    split_job *j = ctx;
    (void)begin, (void)end;
    for (int64_t t; (t = atomic_fetch_add(&j->next, 1)) < j->parts;)
        run_part(j, t);
}

int tg__gemm_threads(int64_t m, int64_t n, int64_t k)
{
    if (m * n * k < PAR_MIN_WORK || tg_in_parallel_region())
        return 1;
    return tg_get_num_threads();
}

tg_status tg__gemm_exec(const tg__gemm_call *g, bool blas, int threads)
{
    if (g->m <= 0 || g->n <= 0)
        return TG_OK;
    if (!blas) {
        tg__pack_entry *entry;
        const char *kb = kept_b(g, &entry);
        tg_status s = threads > 1 ? builtin_parallel(g, threads, kb) : builtin_serial(g, kb);
        tg__pack_cache_release(entry, true); /* packed whole by kept_b */
        return s;
    }
    /* CBLAS: blocks of C, each a serial call packing its own operands */
    split_job j = {.g = g, .blas = blas, .by_rows = g->m >= g->n};
    const tg__gemm_kern *kn = &tg__gemm_arch_now()->k[g->f64];
    j.unit = j.by_rows ? kn->mr : kn->nr;
    int64_t units = ((j.by_rows ? g->m : g->n) + j.unit - 1) / j.unit;
    int64_t want = (int64_t)threads * PARTS_PER_THREAD;
    j.parts = units < want ? units : want;
    if (threads <= 1 || j.parts <= 1)
        return run_serial(g, blas, g->m, g->n, g->a, g->b, g->c);
    atomic_init(&j.next, 0);
    atomic_init(&j.status, TG_OK);
    tg_parallel_for(threads, 1, split_body, &j);
    return (tg_status)atomic_load(&j.status);
}

/* ---- entry points ------------------------------------------------------------- */
#define ENTRY(T, SUF, IS64, DT)                                                 \
    static tg_status entry_##SUF(bool ta, bool tb, int64_t m, int64_t n,        \
                                 int64_t k, T alpha, const T *a, int64_t lda,   \
                                 const T *b, int64_t ldb, T beta, T *c,         \
                                 int64_t ldc, uint64_t bs, uint64_t bv)         \
    {                                                                           \
        if (m <= 0 || n <= 0)                                                   \
            return TG_OK;                                                       \
        tg__gemm_call g = {.ta = ta, .tb = tb, .f64 = IS64, .m = m, .n = n,     \
                           .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,          \
                           .alpha = alpha, .beta = beta, .a = a, .b = b,        \
                           .c = c, .b_serial = bs, .b_version = bv};            \
        if (tg__gemm_get_mode() == TG_GEMM_AUTO && tg__gemm_skinny_fits(&g))    \
            return tg__gemm_skinny(&g, tg__gemm_skinny_threads(&g));            \
        int threads = tg__gemm_threads(m, n, k);                                \
        return tg__gemm_exec(&g, tg__gemm_use_blas(), threads);                 \
    }
ENTRY(float, f32, false, TG_FLOAT32)
ENTRY(double, f64, true, TG_FLOAT64)

tg_status tg__gemm_f32(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb,
                       float beta, float *c, int64_t ldc)
{
    return entry_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0, 0);
}

tg_status tg__gemm_f64(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                       const double *a, int64_t lda, const double *b, int64_t ldb,
                       double beta, double *c, int64_t ldc)
{
    return entry_f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 0, 0);
}

tg_status tg__sgemm_frozen_b(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                             float alpha, const float *a, int64_t lda, const float *b,
                             int64_t ldb, float beta, float *c, int64_t ldc,
                             uint64_t b_serial, uint64_t b_version)
{
    return entry_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, b_serial,
                     b_version);
}

tg_status tg__dgemm_frozen_b(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                             double alpha, const double *a, int64_t lda, const double *b,
                             int64_t ldb, double beta, double *c, int64_t ldc,
                             uint64_t b_serial, uint64_t b_version)
{
    return entry_f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, b_serial,
                     b_version);
}

tg_status tg__sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    float alpha, const float *a, int64_t lda, const float *b,
                    int64_t ldb, float beta, float *c, int64_t ldc)
{
    return tg__gemm_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

tg_status tg__dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                    double alpha, const double *a, int64_t lda, const double *b,
                    int64_t ldb, double beta, double *c, int64_t ldc)
{
    return tg__gemm_f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* ---- integers: i-p-j loops (the j loop runs along C's row) ------------------- */
#define IGEMM(NAME, T, UT)                                                      \
    void NAME(int64_t m, int64_t n, int64_t k, const T *a, int64_t sa0,         \
              int64_t sa1, const T *b, int64_t sb0, int64_t sb1, T *c,          \
              int64_t ldc)                                                      \
    {                                                                           \
        for (int64_t i = 0; i < m; i++) {                                       \
            UT *r = (UT *)(c + i * ldc);                                        \
            for (int64_t j = 0; j < n; j++)                                     \
                r[j] = 0;                                                       \
            for (int64_t p = 0; p < k; p++) {                                   \
                const UT av = (UT)a[i * sa0 + p * sa1];                         \
                const T *brow = b + p * sb0;                                    \
                if (sb1 == 1)                                                   \
                    for (int64_t j = 0; j < n; j++)                             \
                        r[j] += av * (UT)brow[j];                               \
                else                                                            \
                    for (int64_t j = 0; j < n; j++)                             \
                        r[j] += av * (UT)brow[j * sb1];                         \
            }                                                                   \
        }                                                                       \
    }

IGEMM(tg__gemm_i32, int32_t, uint32_t)
IGEMM(tg__gemm_i64, int64_t, uint64_t)
IGEMM(tg__gemm_u8, uint8_t, uint8_t)
