/* Choosing between the built-in GEMM and CBLAS per shape, by measuring
 * both on this machine (see gemm.h). A system BLAS picks its kernels from
 * what it thinks the CPU is, and a BLAS older than the CPU guesses low
 * (Debian's OpenBLAS 0.3.21 runs a Zen 5 on its Haswell kernels, at half
 * the built-in kernel's AVX-512 speed): so nothing is assumed, the first
 * product of each shape times both implementations on scratch matrices
 * (with the threads the real call will use) and the answer is cached.
 * CBLAS must win by a margin, so that noise does not flip a shape that
 * the two serve equally to the implementation with other rounding. */
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef TG_HAVE_CBLAS
char *openblas_get_corename(void);
#pragma weak openblas_get_corename
void openblas_set_num_threads(int num_threads);
#pragma weak openblas_set_num_threads
#endif

/* CBLAS is chosen when it takes less than this share of the built-in
 * kernel's time */
#define BLAS_MARGIN 0.9
/* each implementation runs at least MIN_REPS times and until MIN_SECONDS
 * (of CPU time) have passed, at most MAX_REPS; the best time counts */
#define MIN_REPS 3
#define MAX_REPS 50
#define MIN_SECONDS 2e-3
/* shapes remembered; beyond, new shapes use the built-in kernel */
#define TABLE_SIZE 1024

const char *tg__gemm_backend(void)
{
#ifdef TG_HAVE_CBLAS
    return openblas_set_num_threads ? "openblas" : "cblas";
#else
    return "none";
#endif
}

const char *tg__blas_corename(void)
{
#ifdef TG_HAVE_CBLAS
    if (openblas_get_corename) {
        const char *s = openblas_get_corename();
        return s ? s : "";
    }
#endif
    return "";
}

/* ---- the mode ------------------------------------------------------------- */
static tg__gemm_mode mode;
static pthread_once_t mode_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *e = getenv("TG_GEMM");
    if (e && strcmp(e, "builtin") == 0)
        mode = TG_GEMM_BUILTIN;
    else if (e && strcmp(e, "blas") == 0)
        mode = TG_GEMM_BLAS;
}

void tg__gemm_set_mode(tg__gemm_mode m)
{
    pthread_once(&mode_once, read_env);
    mode = m;
}

tg__gemm_mode tg__gemm_get_mode(void)
{
    pthread_once(&mode_once, read_env);
    return mode;
}

/* ---- calibration ------------------------------------------------------------
 * Timed in CPU time, not wall time: on cores shared with other work a
 * preempted run would otherwise decide the choice. One thread: the
 * calling thread's CPU time; several: the process's (the work of all the
 * threads, which is what the split divides). The implementations run in
 * turn and the best run of each counts. */
static double cpu_now(int threads)
{
    struct timespec ts;
    clock_gettime(threads > 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* true when CBLAS ran g faster than the built-in kernel, by the margin */
static bool faster_blas(const tg__gemm_call *g, int threads)
{
    double best[2] = {1e30, 1e30}, start = cpu_now(threads);
    for (int i = 0; i < 2; i++) /* warm-up: packing buffers, BLAS set-up */
        if (tg__gemm_exec(g, i == 1, threads) != TG_OK)
            return false;
    for (int r = 0; r < MAX_REPS; r++) {
        for (int i = 0; i < 2; i++) {
            double t0 = cpu_now(threads);
            tg__gemm_exec(g, i == 1, threads);
            double dt = cpu_now(threads) - t0;
            best[i] = dt < best[i] ? dt : best[i];
        }
        if (r + 1 >= MIN_REPS && cpu_now(threads) - start >= MIN_SECONDS)
            break;
    }
    return best[1] < BLAS_MARGIN * best[0];
}

static bool calibrate(tg_dtype dt, bool ta, bool tb, int64_t m, int64_t n,
                      int64_t k, int threads)
{
    size_t z = tg_dtype_size(dt);
    void *a = calloc((size_t)(m * k) + 1, z), *b = calloc((size_t)(k * n) + 1, z);
    void *c = calloc((size_t)(m * n) + 1, z);
    bool blas = false;
    if (a && b && c) {
        tg__gemm_call g = {.ta = ta, .tb = tb, .f64 = dt == TG_FLOAT64, .m = m,
                           .n = n, .k = k, .lda = ta ? m : k, .ldb = tb ? k : n,
                           .ldc = n, .alpha = 1, .beta = 0, .a = a, .b = b, .c = c};
        blas = faster_blas(&g, threads);
    }
    free(a);
    free(b);
    free(c);
    return blas;
}

/* ---- the cache: open addressing over (dtype, transposes, m, n, k, threads) */
typedef struct entry {
    int64_t m, n, k;
    int threads;
    uint8_t dt, ta, tb, used, blas;
} entry;

static entry table[TABLE_SIZE];
static int n_entries;
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t hash_key(const entry *e)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t parts[5] = {(uint64_t)e->m, (uint64_t)e->n, (uint64_t)e->k,
                         (uint64_t)e->threads,
                         (uint64_t)e->dt | (uint64_t)e->ta << 8 | (uint64_t)e->tb << 9};
    for (int i = 0; i < 5; i++)
        h = (h ^ parts[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static bool same_key(const entry *a, const entry *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->threads == b->threads &&
           a->dt == b->dt && a->ta == b->ta && a->tb == b->tb;
}

bool tg__gemm_use_blas(tg_dtype dt, bool ta, bool tb, int64_t m, int64_t n,
                       int64_t k, int threads)
{
#ifndef TG_HAVE_CBLAS
    (void)dt, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)threads;
    return false;
#else
    tg__gemm_mode md = tg__gemm_get_mode();
    if (md != TG_GEMM_AUTO)
        return md == TG_GEMM_BLAS;
    if (m <= 0 || n <= 0 || k <= 0)
        return false;
    entry key = {.m = m, .n = n, .k = k, .threads = threads, .dt = (uint8_t)dt,
                 .ta = ta, .tb = tb, .used = 1};
    bool blas = false;
    pthread_mutex_lock(&table_mu);
    size_t i = hash_key(&key) % TABLE_SIZE;
    while (table[i].used && !same_key(&table[i], &key))
        i = (i + 1) % TABLE_SIZE;
    if (table[i].used) {
        blas = table[i].blas;
    } else if (n_entries < TABLE_SIZE * 3 / 4) {
        /* measured under the lock: two calibrations at once would time
         * each other */
        key.blas = calibrate(dt, ta, tb, m, n, k, threads);
        table[i] = key;
        n_entries++;
        blas = key.blas;
    }
    pthread_mutex_unlock(&table_mu);
    return blas;
#endif
}

/* ---- reports (public, tg/core.h) ---------------------------------------------- */
const char *tg_kernels_isa(void) { return tg__isa_name(tg__cpu_isa()); }

static char blas_desc[96];
static pthread_once_t desc_once = PTHREAD_ONCE_INIT;

static void describe_blas(void)
{
    const char *core = tg__blas_corename();
    if (core[0])
        snprintf(blas_desc, sizeof blas_desc, "%s (%s)", tg__gemm_backend(), core);
    else
        snprintf(blas_desc, sizeof blas_desc, "%s", tg__gemm_backend());
}

const char *tg_kernels_blas(void)
{
    pthread_once(&desc_once, describe_blas);
    return blas_desc;
}

const char *tg_gemm_choice(tg_dtype dt, bool trans_a, bool trans_b, int64_t m,
                           int64_t n, int64_t k)
{
    if (dt != TG_FLOAT32 && dt != TG_FLOAT64)
        return "built-in";
    int threads = tg__gemm_threads(m, n, k);
    return tg__gemm_use_blas(dt, trans_a, trans_b, m, n, k, threads) ? "blas"
                                                                      : "built-in";
}
