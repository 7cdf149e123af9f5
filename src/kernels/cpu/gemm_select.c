/* Choosing between the built-in GEMM and CBLAS (see gemm.h). The
 * choice is a rule, not a timing: the built-in kernel wherever the
 * library has vector kernels for the running instruction set (AVX2,
 * AVX-512), CBLAS below that when the library was built with one. The
 * two round differently, so a choice made by timing each shape at its
 * first use (what this file did until 2026-12) gave different bits from
 * one process to the next wherever they ran at about the same speed:
 * LeNet at TG_CPU=avx2 ended its epoch at three different losses in four
 * runs with the same seed, and ran 2-5% slower than with the built-in
 * kernel alone (the calibration's own time). A system BLAS also picks
 * its kernels from what it thinks the CPU is, and one older than the CPU
 * guesses low (Debian's OpenBLAS 0.3.21 runs a Zen 5 on its Haswell
 * kernels). */
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TG_HAVE_CBLAS
char *openblas_get_corename(void);
#pragma weak openblas_get_corename
void openblas_set_num_threads(int num_threads);
#pragma weak openblas_set_num_threads
#endif

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

/* ---- the rule ------------------------------------------------------------- */
bool tg__gemm_use_blas(void)
{
#ifndef TG_HAVE_CBLAS
    return false;
#else
    tg__gemm_mode md = tg__gemm_get_mode();
    if (md != TG_GEMM_AUTO)
        return md == TG_GEMM_BLAS;
    return tg__cpu_isa() == TG_ISA_GENERIC;
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
    (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k; /* one rule for every shape */
    if (dt != TG_FLOAT32 && dt != TG_FLOAT64)
        return "built-in";
    return tg__gemm_use_blas() ? "blas" : "built-in";
}
