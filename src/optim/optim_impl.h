/* Internals shared by the optimizers: the optimizer struct, the table
 * that describes one algorithm (state buffers, hyper-parameters, fused
 * update loop), and the job handed to an update loop. */
#ifndef TG_OPTIM_IMPL_H
#define TG_OPTIM_IMPL_H

#include "core/tensor_impl.h"
#include "tg/optim.h"

#include <math.h>
#include <stddef.h>

#define TG_OPTIM_MAX_SLOTS 3
#define TG_OPTIM_MAX_SCALARS 4

/* one hyper-parameter: its name in checkpoints and where it lives in the
 * options struct (a double or a bool) */
typedef struct tg__hparam {
    const char *name;
    size_t offset;
    bool is_bool;
} tg__hparam;

struct tg__optim_job;
struct tg__optim_gparam;
typedef struct tg__optim_algo {
    const char *name; /* "sgd", "adam", ... also the checkpoint's type */
    size_t opts_size;
    int n_hparams;
    const tg__hparam *hparams; /* "lr" first */
    int n_slots;
    const char *slot_names[TG_OPTIM_MAX_SLOTS]; /* PyTorch's state names */
    /* TG_ERR_ARG naming the bad option, else TG_OK */
    tg_status (*validate)(const void *opts);
    /* does a parameter need slot s under these options? */
    bool (*slot_used)(const void *opts, int s);
    /* the fused update of elements [begin, end) of one parameter */
    void (*update)(const struct tg__optim_job *j, int64_t begin, int64_t end);
    /* the graph form (tg_graph_optim), written with the same formula as
     * the loop (formula.h); NULL: none. graph_scalars makes the per-step
     * scalars of all parameters at once, from lr (float64 0-d) and the
     * step numbers (float64 [n], from 1): n_scalars values of dtype dt (or
     * bool), each [n] (one per parameter) or 0-d (shared); graph_update
     * appends one parameter's update and returns the parameter's assign */
    int n_scalars;
    tg_status (*graph_scalars)(const void *opts, tg_tensor *lr, tg_tensor *step, tg_dtype dt,
                               tg_tensor **out);
    tg_tensor *(*graph_update)(struct tg__optim_gparam *c);
} tg__optim_algo;

typedef union tg__optim_opts {
    tg_sgd_opts sgd;
    tg_adam_opts adam;
    tg_adadelta_opts adadelta;
    tg_rmsprop_opts rmsprop;
} tg__optim_opts;

struct tg_optimizer {
    const tg__optim_algo *algo;
    tg__optim_opts opts;
    int n;
    tg_tensor **params;  /* retained */
    tg_tensor *step_t;   /* int64 [n]: updates per parameter (graphs update it) */
    int64_t *steps;      /* its data */
    tg_tensor **state;   /* n * TG_OPTIM_MAX_SLOTS, NULL until first used */
};

/* one parameter's update: contiguous data of numel n, all of dtype dt */
typedef struct tg__optim_job {
    const void *opts;
    tg_dtype dt;
    int64_t n;
    char *p;
    const char *g;
    char *s[TG_OPTIM_MAX_SLOTS];
    bool first;   /* the parameter's first update (SGD's momentum buffer) */
    int64_t step; /* this update's step number, from 1 */
} tg__optim_job;

/* one parameter's update in a graph: the builder (src/runtime/train.c)
 * gives the symbolic parameter and state variables, the gradient and this
 * parameter's per-step scalars (0-d); graph_update sets extra to a state
 * assign the parameter's assign does not read (the builder runs it first) */
typedef struct tg__optim_gparam {
    const void *opts;
    tg_dtype dt;
    tg_tensor *p, *g;
    tg_tensor *s[TG_OPTIM_MAX_SLOTS]; /* NULL when the slot is unused */
    tg_tensor *k[TG_OPTIM_MAX_SCALARS];
    tg_tensor *extra;
} tg__optim_gparam;

/* optimizer o's state buffer s of parameter i, created (zeros) when
 * missing; NULL when out of memory */
tg_tensor *tg__optim_state(tg_optimizer *o, int i, int s);

/* common constructor: validates params and opts, copies opts */
tg_optimizer *tg__optim_new(const tg__optim_algo *algo, int n,
                            tg_tensor *const *params, const void *opts);

extern const tg__optim_algo tg__optim_sgd, tg__optim_adam, tg__optim_adamw,
    tg__optim_adadelta, tg__optim_rmsprop;

/* ---- helpers for the fused loops ---------------------------------------------
 * The loops take their options as compile-time flags so each variant is a
 * straight-line body the compiler vectorizes; TG_OPTIM_FLAGS16 expands a
 * switch over 4 flag bits into 16 calls of LOOP(T, bit0, bit1, bit2, bit3). */
#define TG_OPTIM_CASE(LOOP, T, F) \
    case F: LOOP(T, ((F) & 1) != 0, ((F) & 2) != 0, ((F) & 4) != 0, ((F) & 8) != 0); break;
#define TG_OPTIM_FLAGS16(LOOP, T, flags)                                     \
    switch (flags) {                                                        \
        TG_OPTIM_CASE(LOOP, T, 0) TG_OPTIM_CASE(LOOP, T, 1)                 \
        TG_OPTIM_CASE(LOOP, T, 2) TG_OPTIM_CASE(LOOP, T, 3)                 \
        TG_OPTIM_CASE(LOOP, T, 4) TG_OPTIM_CASE(LOOP, T, 5)                 \
        TG_OPTIM_CASE(LOOP, T, 6) TG_OPTIM_CASE(LOOP, T, 7)                 \
        TG_OPTIM_CASE(LOOP, T, 8) TG_OPTIM_CASE(LOOP, T, 9)                 \
        TG_OPTIM_CASE(LOOP, T, 10) TG_OPTIM_CASE(LOOP, T, 11)               \
        TG_OPTIM_CASE(LOOP, T, 12) TG_OPTIM_CASE(LOOP, T, 13)               \
        TG_OPTIM_CASE(LOOP, T, 14) TG_OPTIM_CASE(LOOP, T, 15)               \
    default: break;                                                         \
    }

/* PyTorch's lerp: a + w (b - a) for w < 0.5, else b - (b - a)(1 - w), so
 * the ends are exact; SMALL says which (w is the same for every element) */
#define TG_LERP(SMALL, a, b, w, w1) ((SMALL) ? (a) + (w) * ((b) - (a)) : (b) - ((b) - (a)) * (w1))

/* sqrt in the element type (one instruction: the build uses
 * -fno-math-errno, so loops with sqrt vectorize) */
#define TG_SQRT(x) _Generic((x), float: sqrtf, default: sqrt)(x)
/* GCC 12's -O2 vectorizes only loops of known trip count ("very cheap"
 * cost model); the update loops run over any range, so files holding them
 * ask for the dynamic model */
#if defined(__GNUC__) && !defined(__clang__)
#define TG_OPTIM_VECTORIZE _Pragma("GCC optimize(\"vect-cost-model=dynamic\")")
#else
#define TG_OPTIM_VECTORIZE
#endif

#endif
