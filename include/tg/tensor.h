/* tensorgraph tensors: creation, inspection, reference counting, scopes,
 * random generators and printing. Views and math live in tg/ops.h. */
#ifndef TG_TENSOR_H
#define TG_TENSOR_H

#include "tg/core.h"
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

typedef struct tg_tensor tg_tensor;
typedef struct tg_generator tg_generator;

/* ---- ownership ------------------------------------------------------------
 * Every function returning a tg_tensor* returns a new reference.
 *  - With no scope open, the caller owns it and calls tg_release once.
 *  - Inside tg_scope_begin()/tg_scope_end(), the innermost scope owns it:
 *    tg_scope_end releases every tensor created inside that was not kept.
 *  - tg_keep(t) makes t outlive the current scope: at tg_scope_end it is
 *    handed to the enclosing scope, or, when there is none, to the caller,
 *    who then owns one reference and must tg_release it.
 * Scopes are per thread and nest. Tensors created outside any scope
 * (parameters, say) are never touched by a scope. */
tg_tensor *tg_retain(tg_tensor *t);  /* returns t */
void tg_release(tg_tensor *t);       /* NULL is ignored */
void tg_scope_begin(void);
void tg_scope_end(void);
tg_tensor *tg_keep(tg_tensor *t);    /* returns t; NULL passes through */
int tg_scope_depth(void);
/* Hides every open scope: until tg_scope_unhide(token), new tensors go to
 * no scope (their creator owns them) and scopes opened meanwhile work as
 * usual. For code that manages references itself and is called from
 * inside a scope: a front end running user code (Python) from a custom
 * function's forward or backward, say. Pairs nest like brackets. */
int tg_scope_hide(void);
void tg_scope_unhide(int token);

/* ---- creation ----------------------------------------------------------
 * Shapes are int64 dims; ndim 0 makes a scalar (one element). */
tg_tensor *tg_empty(tg_dtype dt, int ndim, const int64_t *shape);
tg_tensor *tg_zeros(tg_dtype dt, int ndim, const int64_t *shape);
tg_tensor *tg_ones(tg_dtype dt, int ndim, const int64_t *shape);
tg_tensor *tg_full(tg_dtype dt, int ndim, const int64_t *shape, double value);
tg_tensor *tg_scalar(tg_dtype dt, double value); /* 0-d tensor */
/* start, start+step, ... while < stop (> stop for negative step) */
tg_tensor *tg_arange(tg_dtype dt, double start, double stop, double step);
/* copies numel elements of dtype dt from data (C order) */
tg_tensor *tg_from_data(tg_dtype dt, int ndim, const int64_t *shape,
                        const void *data);
/* A tensor over memory that someone else owns (no copy): numel elements
 * of dt at data, laid out with `strides` (in elements, each >= 0; NULL
 * means C-contiguous). Views, ops and in-place updates use the memory
 * as they would their own. release(ctx) is called once, when the last
 * tensor using the memory is gone (on whatever thread drops it); release
 * NULL means the caller keeps data alive longer than every tensor on it.
 * Front ends use it to share arrays (numpy, DLPack) without copying.
 * On failure release is not called. */
tg_tensor *tg_from_blob(tg_dtype dt, int ndim, const int64_t *shape,
                        const int64_t *strides, void *data,
                        void (*release)(void *ctx), void *ctx);
tg_tensor *tg_zeros_like(const tg_tensor *t);
tg_tensor *tg_ones_like(const tg_tensor *t);
tg_tensor *tg_full_like(const tg_tensor *t, double value);

/* ---- random: explicit, seedable generators (no global state) ----------
 * Random nodes of a graph (training-mode dropout) draw from and advance
 * the same generator when the graph runs; the graph keeps the state alive
 * after tg_generator_free. */
tg_generator *tg_generator_new(uint64_t seed);
void tg_generator_free(tg_generator *g);
void tg_generator_seed(tg_generator *g, uint64_t seed);
uint64_t tg_generator_next(tg_generator *g);  /* 64 random bits */
/* The 4 words of the generator's (xoshiro256**) state, to save and restore
 * it (PyTorch's get_state / set_state). set refuses an all-zero state
 * (the generator would give only zeros) with TG_ERR_ARG. */
tg_status tg_generator_get_state(const tg_generator *g, uint64_t *state);       /* 4 words */
tg_status tg_generator_set_state(tg_generator *g, const uint64_t *state); /* 4 words */
double tg_generator_uniform(tg_generator *g); /* in [0, 1) */
/* float32/float64 tensors from U(lo, hi) and N(mean, std^2) */
tg_tensor *tg_rand_uniform(tg_generator *g, tg_dtype dt, int ndim,
                           const int64_t *shape, double lo, double hi);
tg_tensor *tg_rand_normal(tg_generator *g, tg_dtype dt, int ndim,
                          const int64_t *shape, double mean, double std);
/* bool tensor, each element true with probability p */
tg_tensor *tg_rand_bernoulli(tg_generator *g, int ndim, const int64_t *shape,
                             double p);
/* The same draws as ops: `shape` is an int64 1-D tensor of the dims. With
 * concrete tensors and no graph scope they are drawn now (the numbers
 * tg_rand_uniform / tg_rand_normal give from the same state); in a graph
 * (a scope open, or shape symbolic: tg_shape_of of a value whose dims are
 * known only when it runs) they are a node that draws from g and advances
 * it at every run, never folded or merged, so each run has new numbers
 * and a run draws what eager code would from the same state. */
tg_tensor *tg_rand_uniform_by(tg_generator *g, tg_tensor *shape, tg_dtype dt, double lo,
                              double hi);
tg_tensor *tg_rand_normal_by(tg_generator *g, tg_tensor *shape, tg_dtype dt, double mean,
                             double std);
/* a uniformly random permutation of 0..n-1 (int64) */
tg_tensor *tg_randperm(tg_generator *g, int64_t n);

/* ---- inspection --------------------------------------------------------
 * Strides and offsets are in elements, not bytes. */
int tg_ndim(const tg_tensor *t);
const int64_t *tg_shape(const tg_tensor *t);
int64_t tg_size(const tg_tensor *t, int axis); /* negative axis counts back */
const int64_t *tg_strides(const tg_tensor *t);
int64_t tg_offset(const tg_tensor *t);
int64_t tg_numel(const tg_tensor *t);
tg_dtype tg_dtype_of(const tg_tensor *t);
tg_device tg_device_of(const tg_tensor *t);
bool tg_is_contiguous(const tg_tensor *t);
bool tg_shares_storage(const tg_tensor *a, const tg_tensor *b);
/* an opaque pointer a front end keeps with t (its wrapper object, to find
 * it again from a tensor the library hands back, such as a view's base):
 * not owned, not copied to views or results, NULL until set */
void tg_set_owner(tg_tensor *t, void *owner);
void *tg_owner(const tg_tensor *t);
/* pointer to element 0 (storage + offset); strides tell the layout */
void *tg_data(const tg_tensor *t);
/* value of a one-element tensor as double; NaN and an error otherwise */
double tg_item(const tg_tensor *t);
/* element at a multi-index (ndim entries), as double */
double tg_get(const tg_tensor *t, const int64_t *index);
/* copies all elements in C order into out, converted to dtype dt */
tg_status tg_copy_to(const tg_tensor *t, tg_dtype dt, void *out);

/* ---- printing: numpy/PyTorch style, elided when large ----------------- */
/* A NULL tensor prints as "tensor(NULL)"; tg_fprint to a NULL FILE sets
 * TG_ERR_ARG and prints nothing. */
char *tg_to_string(const tg_tensor *t); /* malloc'd; caller frees */
void tg_print(const tg_tensor *t);      /* to stdout, with a newline */
void tg_fprint(FILE *f, const tg_tensor *t);
/* "[2, 3]" into buf, for messages; returns buf. A NULL shape (ndim > 0)
 * gives "(null)"; a NULL buf or len 0 writes nothing and returns buf. */
char *tg_shape_str(int ndim, const int64_t *shape, char *buf, size_t len);

/* ---- in-place updates --------------------------------------------------
 * Each bumps the storage's version counter, so autograd can tell when a
 * tensor it saved was changed. With grad mode on they are recorded like
 * any op, as in PyTorch: y = tg_sin(x); tg_mul_scalar_(y, 2) makes y's
 * gradient flow through the update (2 cos x). A tensor that a gradient
 * rule saved and that is then changed fails at backward (tg_exp saves its
 * result). Writing through a view (made with grad mode on) updates the
 * history of the tensor it views, and views of a tensor written since are
 * read with its new history, as PyTorch's. Refused while grad mode is on:
 * leaves that require grad and their views (update parameters inside
 * tg_no_grad_begin/end), views whose elements overlap. Symbolic (graph)
 * tensors are refused: graphs use tg_assign. */
tg_status tg_copy_(tg_tensor *dst, const tg_tensor *src); /* broadcasts */
tg_status tg_fill_(tg_tensor *dst, double value);
tg_status tg_add_(tg_tensor *dst, const tg_tensor *src, double alpha);
tg_status tg_mul_scalar_(tg_tensor *dst, double s);
uint64_t tg_version(const tg_tensor *t);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
