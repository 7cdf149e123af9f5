/* Accumulator kernels of the reduction engine (ops/reduce_engine.c): what
 * is accumulated, how results are finished, and per kind and dtype the
 * functions that do it. */
#ifndef TG_KERNELS_REDUCE_KERNELS_H
#define TG_KERNELS_REDUCE_KERNELS_H

#include "tg/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* what is accumulated over the reduced elements */
typedef enum tg_red_kind {
    TG_RED_SUM,
    TG_RED_PROD,
    TG_RED_MAX,
    TG_RED_MIN,
    TG_RED_SQDEV,  /* sum of (x - prm)^2, floats only */
    TG_RED_SUMEXP, /* sum of exp(x - prm), floats only */
    TG_RED_ABSSUM, /* sum of |x|, floats only (the L1 norm) */
    TG_RED_SQSUM,  /* sum of x^2, floats only (the L2 norm, with TG_FIN_SQRT) */
    TG_RED_ARGMAX, /* index of the first maximum (NaN counts as maximum) */
    TG_RED_ARGMIN,
    TG_RED_NKINDS
} tg_red_kind;

/* what is written per output, from the accumulated a */
typedef enum tg_red_fin {
    TG_FIN_PLAIN,  /* a (argmax/argmin: the index) */
    TG_FIN_DIV,    /* a / div */
    TG_FIN_SQRT,   /* sqrt(a / div) */
    TG_FIN_LOGADD, /* log(a) + prm */
    TG_FIN_SHIFT   /* a, or 0 when a is infinite (the shift of logsumexp) */
} tg_red_fin;

/* accumulator functions of one kind and dtype */
typedef struct tg_fin_args {
    tg_red_fin fin;
    double div;
} tg_fin_args;
typedef struct tg_red_fns {
    size_t acc_size; /* bytes per accumulator */
    void (*init)(void *acc, int64_t n);
    /* one accumulator += n elements at p, s bytes apart; r0 is the reduced
     * index of the first (argmax); prm the output's parameter */
    void (*inner)(void *acc, const char *p, int64_t n, int64_t s, int64_t r0,
                  double prm);
    /* nv accumulators += m rows at p + i * rs, each nv elements vs bytes
     * apart; row i has reduced index r0 + i; prm[j] per accumulator */
    void (*outer)(void *acc, const char *p, int64_t nv, int64_t vs, int64_t m,
                  int64_t rs, int64_t r0, const double *prm);
    /* acc[j] combined with other[j], which covers later reduced indices */
    void (*combine)(void *acc, const void *other, int64_t n);
    /* writes n results to out (dtype odt, os elements apart) */
    void (*finish)(const void *acc, char *out, tg_dtype odt, int64_t n,
                   int64_t os, const double *prm, int64_t ps,
                   const tg_fin_args *f);
    /* optional (NULL: inner row by row): acc[j] += m rows of n elements at
     * base + offs[j], s bytes apart, each as inner would add it; prm[j]
     * row j's parameter (NULL for kinds without) */
    void (*inner_rows)(void *acc, const char *base, const int64_t *offs,
                       int64_t m, int64_t n, int64_t s, const double *prm);
    /* inner_rows numbers each row's elements from 0 (argmax, argmin): the
     * engine calls it only for rows that start at reduced index 0 */
    bool rows_from_zero;
} tg_red_fns;
/* NULL when the kind does not support the dtype */
const tg_red_fns *tg__red_fns(tg_red_kind kind, tg_dtype dt);

#endif
