/* Internal layout of tensors and storage, shared by core, ops, kernels and
 * autodiff. Nothing here is part of the public API. */
#ifndef TG_TENSOR_IMPL_H
#define TG_TENSOR_IMPL_H

#include "core/dtype_impl.h"
#include "core/size_math.h"
#include "tg/tensor.h"
#include "core/status_impl.h"

#define TG_ALIGN 64 /* buffers are 64-byte aligned: one AVX-512 line */

/* Reference counts are atomic: the parallel graph executor runs kernels on
 * several threads at once, and kernels retain and release (and make
 * views of) tensors that other threads also hold, all sharing one arena
 * storage. Everything else about a tensor stays single-writer. */
typedef struct tg_storage {
    _Atomic int refcount;
    uint64_t version; /* bumped by every in-place write (autograd checks) */
    size_t nbytes;
    void *data;
    /* memory owned by someone else (tg_from_blob): called with release_ctx
     * when the storage goes; NULL when data follows the header */
    void (*release)(void *release_ctx);
    void *release_ctx;
    /* one of the references is a plan's (tg_memplan.recycle), which reuses
     * the storage only once it holds the last one: code asking whether a
     * tensor is the storage's only user counts that reference out */
    bool plan_kept;
    /* frozen (tg__storage_freeze): the contents change only by in-place
     * writes, which bump version, never as a kernel's output or a plan's
     * buffer; with serial (unique over the process, never reused) and
     * version, a key under which kernels may keep forms derived from the
     * data (conv_pw.c's packed weights, pack_cache.c) */
    bool frozen;
    uint64_t serial;
} tg_storage;

struct tg_node;
struct tg_graph;

struct tg_tensor {
    _Atomic int refcount; /* atomic: see tg_storage */
    tg_dtype dtype;
    int ndim;
    int64_t shape[TG_MAX_DIMS];
    int64_t strides[TG_MAX_DIMS]; /* in elements */
    int64_t offset;               /* in elements */
    int64_t numel;
    tg_device device;
    tg_storage *storage;
    /* autograd */
    bool requires_grad;
    tg_tensor *grad;         /* owned */
    struct tg_node *grad_fn; /* owned reference; NULL for leaves */
    int out_index;           /* which output of grad_fn this is */
    /* a view made while grad mode was on: the tensor it views (the root
     * of a chain of views; owned reference) and the storage version its
     * history describes (autodiff/view_history.h) */
    struct tg_tensor *view_base;
    uint64_t view_version;
    /* a view of (a view of) one of the outputs of a function returning
     * several views (split, unbind; tg_mark_multi_output_view): no
     * in-place writes while autograd records, as PyTorch's; view_output:
     * which output it was (0 for views made of it) */
    bool view_multi;
    int view_output;
    /* a view made while grad mode was off (or a view of one): the root of
     * its chain (owned reference; view_base is then NULL) and, in
     * view_version, the storage version when it was made. With grad mode
     * on, PyTorch refuses writing it in place when autograd would record,
     * and reading it after its storage was written when its base requires
     * grad (autodiff/view_history.h) */
    struct tg_tensor *nograd_base;
    /* eager forward mode (autodiff/forward_ad.h): the tangent (owned; a
     * level's close drops them all) and 1 + the tensor's place in the
     * open level's list (0: not listed) */
    struct tg_tensor *tangent;
    int64_t tangent_slot;
    /* graph mode (src/graph): a symbolic tensor has no storage (NULL) and
     * stands for value `value` of `graph`, on which it holds a reference */
    struct tg_graph *graph;
    int value;
    void *owner; /* tg_set_owner: a front end's, not owned */
    /* made in inference mode, or a view of such a tensor (tg/autograd.h) */
    bool inference;
};

/* a tensor struct with shape and contiguous strides, no storage yet */
tg_tensor *tg__tensor_struct(tg_dtype dt, int ndim, const int64_t *shape);
/* drops one reference to a storage (frees it with the last) */
void tg__storage_drop(tg_storage *s);
/* marks t's storage frozen (see tg_storage): for constants whose owner
 * never hands them to a kernel as an output (an ONNX model's initializers) */
void tg__storage_freeze(tg_tensor *t);
/* a tensor with fresh, uninitialised, aligned storage; not registered
 * in any scope (internal callers own the reference) */
tg_tensor *tg__alloc(tg_dtype dt, int ndim, const int64_t *shape);
/* a generator's state (int64 [4], borrowed): what a graph holds as the
 * variable its random nodes advance (core/generator.c) */
tg_tensor *tg__generator_state(tg_generator *g);
/* d[i] = uniform < p for n draws from a 4-word xoshiro256** state: the
 * draws of tg_rand_bernoulli, shared with the graph's random node */
void tg__bernoulli_fill(uint64_t *state, uint8_t *d, int64_t n, double p);
/* n draws of U(lo, hi) (within [lo, hi)) and of N(mean, std^2) (Box-Muller,
 * two draws per pair of uniforms) into float32 or float64 data: the draws
 * of tg_rand_uniform and tg_rand_normal, shared with the graph's nodes */
void tg__uniform_fill(uint64_t *state, tg_dtype dt, void *data, int64_t n, double lo,
                      double hi);
void tg__normal_fill(uint64_t *state, tg_dtype dt, void *data, int64_t n, double mean,
                     double std);
/* a view of x's storage with the given geometry; not registered */
tg_tensor *tg__alias(const tg_tensor *x, int ndim, const int64_t *shape,
                     const int64_t *strides, int64_t offset);
/* hands a fresh reference to the current scope, if one is open; returns t.
 * Every public function that returns a new tensor ends with this. */
tg_tensor *tg__publish(tg_tensor *t);
/* hides the open scopes from code that owns its references explicitly:
 * until tg__scope_resume, new tensors go to no scope (the caller owns
 * them) and scopes opened meanwhile work as usual */
int tg__scope_suspend(void);
void tg__scope_resume(int old_floor);
void tg__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
int64_t tg__shape_numel(int ndim, const int64_t *shape);
bool tg__shape_eq(int na, const int64_t *a, int nb, const int64_t *b);
/* equal where both are known: a graph's dim unknown until it runs (-1)
 * agrees with any size */
bool tg__shape_agree(int na, const int64_t *a, int nb, const int64_t *b);
/* validates ndim/shape (non-negative, <= 8 dims) and names `op` in errors */
bool tg__check_shape(const char *op, int ndim, const int64_t *shape);
/* normalises a possibly negative axis; sets an error naming op if bad */
bool tg__norm_axis(const char *op, int axis, int ndim, int *out);
/* the element pointer at a flat C-order index (slow; for tests/printing) */
void *tg__elem_ptr(const tg_tensor *t, int64_t flat);
double tg__load(tg_dtype dt, const void *p);
void tg__store(tg_dtype dt, void *p, double v);
static inline char *tg__base(const tg_tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)tg__dtype_size(t->dtype);
}
void tg__bump_version(tg_tensor *t);
/* false, with an error naming fn, when t is symbolic (it has no data) */
bool tg__check_concrete(const char *fn, const tg_tensor *t);
/* drops a symbolic tensor's reference on its graph (src/graph/graph.c) */
void tg__graph_release(struct tg_graph *g);

#endif
