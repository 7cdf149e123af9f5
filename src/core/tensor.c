/* Tensor and storage lifetime: allocation (64-byte aligned), views that
 * share storage, reference counting, and shape helpers. */
#include "core/tensor_impl.h"
#include "autodiff/forward_ad.h"
#include "autodiff/node.h"
#include "core/alloc.h"
#include "core/spinlock.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* storage header and data share one aligned block: one malloc per tensor
 * buffer keeps eager dispatch cheap */
#define STORAGE_HEADER ((sizeof(tg_storage) + TG_ALIGN - 1) / TG_ALIGN * TG_ALIGN)

static size_t storage_bytes(size_t nbytes)
{
    return STORAGE_HEADER + (nbytes + TG_ALIGN - 1) / TG_ALIGN * TG_ALIGN;
}

/* storages' serials: unique over the process (tg_storage.serial) */
static _Atomic uint64_t next_serial = 1;

/* a blob whose owner frees it by other means */
static void blob_keep(void *ctx) { (void)ctx; }

static tg_storage *storage_new(size_t nbytes)
{
    tg_storage *s = tg__buffer_alloc(storage_bytes(nbytes));
    if (!s)
        return tg__error_null(TG_ERR_NOMEM, "out of memory allocating %zu bytes",
                              nbytes);
    s->refcount = 1;
    s->version = 0;
    s->nbytes = nbytes;
    s->data = (char *)s + STORAGE_HEADER;
    s->release = NULL;
    s->release_ctx = NULL;
    s->plan_kept = false;
    s->frozen = false;
    s->serial = atomic_fetch_add(&next_serial, 1);
    return s;
}

static void storage_release(tg_storage *s)
{
    if (!s || --s->refcount > 0)
        return;
    if (s->release) { /* a blob: the header alone was allocated here */
        s->release(s->release_ctx);
        tg__buffer_free(s, storage_bytes(0));
        return;
    }
    tg__buffer_free(s, storage_bytes(s->nbytes));
}

void tg__storage_drop(tg_storage *s) { storage_release(s); }

void tg__storage_freeze(tg_tensor *t)
{
    if (t && t->storage)
        t->storage->frozen = true;
}

tg_tensor *tg_from_blob(tg_dtype dt, int ndim, const int64_t *shape,
                        const int64_t *strides, void *data,
                        void (*release)(void *ctx), void *ctx)
{
    if (!tg_dtype_is_valid((int)dt))
        return tg__error_null(TG_ERR_DTYPE, "tg_from_blob: invalid dtype %d", (int)dt);
    if (!tg__check_shape("tg_from_blob", ndim, shape))
        return NULL;
    tg_tensor *t = tg__tensor_struct(dt, ndim, shape);
    if (!t)
        return NULL;
    int64_t span = t->numel > 0 ? 1 : 0; /* elements from data to the last one */
    for (int i = 0; i < ndim && strides; i++) {
        if (strides[i] < 0) {
            free(t);
            return tg__error_null(TG_ERR_ARG, "tg_from_blob: stride %lld of dim %d is "
                                  "negative; strides must be >= 0", (long long)strides[i], i);
        }
        t->strides[i] = strides[i];
        if (t->numel > 0)
            span += (shape[i] - 1) * strides[i];
    }
    if (!strides)
        span = t->numel;
    if (span > 0 && !data) {
        free(t);
        return tg__error_null(TG_ERR_ARG, "tg_from_blob: data is NULL");
    }
    tg_storage *s = tg__buffer_alloc(storage_bytes(0));
    if (!s) {
        free(t);
        return tg__error_null(TG_ERR_NOMEM, "out of memory");
    }
    s->refcount = 1;
    s->version = 0;
    s->nbytes = (size_t)span * tg_dtype_size(dt);
    s->data = data;
    s->release = release ? release : blob_keep;
    s->release_ctx = ctx;
    s->plan_kept = false;
    s->frozen = false;
    s->serial = atomic_fetch_add(&next_serial, 1);
    t->storage = s;
    return tg__publish(t);
}

void tg__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t st = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = st;
        st *= shape[i] > 0 ? shape[i] : 1;
    }
}

int64_t tg__shape_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

bool tg__shape_eq(int na, const int64_t *a, int nb, const int64_t *b)
{
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

bool tg__shape_agree(int na, const int64_t *a, int nb, const int64_t *b)
{
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i] && a[i] >= 0 && b[i] >= 0)
            return false;
    return true;
}

bool tg__check_shape(const char *op, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > TG_MAX_DIMS) {
        tg__error(TG_ERR_SHAPE, "%s: %d dims requested, supported are 0 to %d",
                  op, ndim, TG_MAX_DIMS);
        return false;
    }
    if (ndim > 0 && !shape) {
        tg__error(TG_ERR_ARG, "%s: shape is NULL for %d dims", op, ndim);
        return false;
    }
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            tg__error(TG_ERR_SHAPE, "%s: dim %d is %lld, dims must be >= 0", op,
                      i, (long long)shape[i]);
            return false;
        }
    }
    int64_t n;
    return tg__size_numel(op, ndim, shape, &n);
}

bool tg__norm_axis(const char *op, int axis, int ndim, int *out)
{
    int n = ndim > 0 ? ndim : 1;
    if (axis < -n || axis >= n) {
        tg__error(TG_ERR_INDEX,
                  "%s: axis %d is out of range for a tensor of %d dims "
                  "(expected %d to %d)",
                  op, axis, ndim, -n, n - 1);
        return false;
    }
    *out = axis < 0 ? axis + n : axis;
    return true;
}

/* freed tensor structs kept for reuse (core/alloc.h: tg__alloc_caching),
 * chained through .grad: a calloc and a free of their ~300 bytes cost
 * ~250 instructions, and a training step makes one per value it touches
 * (callgrind, an MLP 16-32-32-4 training step: eager 292.2k -> 283.6k
 * instructions, tg.function 212.7k -> 202.2k) */
#define SPARE_MAX 4096
static struct {
    tg_spinlock mu;
    tg_tensor *head;
    int n;
} spare = {.mu = {false}};
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;

static void drop_spares(void)
{
    tg__spin_lock(&spare.mu);
    while (spare.head) {
        tg_tensor *t = spare.head;
        spare.head = t->grad;
        free(t);
    }
    spare.n = 0;
    tg__spin_unlock(&spare.mu);
}

/* held around fork(), as the storage cache's lists (alloc.c) */
static void lock_spares(void) { tg__spin_lock(&spare.mu); }
static void unlock_spares(void) { tg__spin_unlock(&spare.mu); }

/* before the list's lock is first taken, so that no fork finds it held
 * without the handlers that release it in the child */
static void register_spares(void)
{
    atexit(drop_spares);
    pthread_atfork(lock_spares, unlock_spares, unlock_spares);
}

static tg_tensor *struct_new(void)
{
    if (!tg__alloc_caching()) /* the list stays empty: no lock to take */
        return calloc(1, sizeof(tg_tensor));
    pthread_once(&spare_once, register_spares);
    tg__spin_lock(&spare.mu);
    tg_tensor *t = spare.head;
    if (t) {
        spare.head = t->grad;
        spare.n--;
    }
    tg__spin_unlock(&spare.mu);
    if (!t)
        return calloc(1, sizeof *t);
    memset(t, 0, sizeof *t);
    return t;
}

static void struct_free(tg_tensor *t)
{
    if (!tg__alloc_caching()) {
        free(t);
        return;
    }
    pthread_once(&spare_once, register_spares);
    tg__spin_lock(&spare.mu);
    bool keep = spare.n < SPARE_MAX;
    if (keep) {
        t->grad = spare.head;
        spare.head = t;
        spare.n++;
    }
    tg__spin_unlock(&spare.mu);
    if (!keep)
        free(t);
}

static _Thread_local bool inference_on;

void tg_set_inference_mode(bool on) { inference_on = on; }
bool tg_inference_mode(void) { return inference_on; }
bool tg_is_inference(const tg_tensor *t) { return t && t->inference; }

tg_tensor *tg__tensor_struct(tg_dtype dt, int ndim, const int64_t *shape)
{
    tg_tensor *t = struct_new();
    if (!t)
        return tg__error_null(TG_ERR_NOMEM, "out of memory");
    t->refcount = 1;
    t->inference = inference_on;
    t->dtype = dt;
    t->ndim = ndim;
    if (ndim > 0)
        memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
    tg__contiguous_strides(ndim, t->shape, t->strides);
    t->numel = tg__shape_numel(ndim, t->shape);
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] < 0)
            t->numel = -1; /* a symbolic tensor with unknown dims (-1) */
    return t;
}

tg_tensor *tg__alloc(tg_dtype dt, int ndim, const int64_t *shape)
{
    tg_tensor *t = tg__tensor_struct(dt, ndim, shape);
    if (!t)
        return NULL;
    t->storage = storage_new((size_t)t->numel * tg_dtype_size(dt));
    if (!t->storage) {
        free(t);
        return NULL;
    }
    return t;
}

tg_tensor *tg__alias(const tg_tensor *x, int ndim, const int64_t *shape,
                     const int64_t *strides, int64_t offset)
{
    tg_tensor *t = tg__tensor_struct(x->dtype, ndim, shape);
    if (!t)
        return NULL;
    t->inference |= x->inference; /* a view of an inference tensor is one */
    if (ndim > 0)
        memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
    t->offset = offset;
    t->device = x->device;
    t->storage = x->storage;
    t->storage->refcount++;
    return t;
}

tg_tensor *tg_retain(tg_tensor *t)
{
    if (t)
        t->refcount++;
    return t;
}

void tg_release(tg_tensor *t)
{
    if (!t || --t->refcount > 0)
        return;
    storage_release(t->storage);
    tg_release(t->grad);
    tg__node_release(t->grad_fn);
    tg_release(t->view_base);
    tg_release(t->nograd_base);
    if (t->tangent) {
        tg__dual_forget(t);
        tg_release(t->tangent);
    }
    tg__graph_release(t->graph);
    struct_free(t);
}

/* ---- inspection ---------------------------------------------------------- */
int tg_ndim(const tg_tensor *t) { return t ? t->ndim : -1; }
const int64_t *tg_shape(const tg_tensor *t) { return t ? t->shape : NULL; }
const int64_t *tg_strides(const tg_tensor *t) { return t ? t->strides : NULL; }
int64_t tg_offset(const tg_tensor *t) { return t ? t->offset : 0; }
int64_t tg_numel(const tg_tensor *t) { return t ? t->numel : 0; }
tg_dtype tg_dtype_of(const tg_tensor *t) { return t ? t->dtype : TG_FLOAT32; }
tg_device tg_device_of(const tg_tensor *t)
{
    tg_device cpu = {TG_CPU, 0, 0};
    return t ? t->device : cpu;
}
void *tg_data(const tg_tensor *t)
{
    return t && tg__check_concrete("tg_data", t) ? tg__base(t) : NULL;
}
uint64_t tg_version(const tg_tensor *t)
{
    return t && t->storage ? t->storage->version : 0;
}

void tg__bump_version(tg_tensor *t) { t->storage->version++; }

bool tg__check_concrete(const char *fn, const tg_tensor *t)
{
    if (!t->graph)
        return true;
    tg__error(TG_ERR_ARG,
              "%s: the tensor is symbolic (a value of a graph built in graph "
              "mode) and holds no data; compute it with tg_session_run", fn);
    return false;
}

int64_t tg_size(const tg_tensor *t, int axis)
{
    int a;
    if (!t || !tg__norm_axis("tg_size", axis, t->ndim, &a))
        return -1;
    return t->ndim ? t->shape[a] : 1;
}

bool tg_is_contiguous(const tg_tensor *t)
{
    if (!t)
        return false;
    int64_t st = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != st)
            return false;
        st *= t->shape[i];
    }
    return true;
}

bool tg_shares_storage(const tg_tensor *a, const tg_tensor *b)
{
    return a && b && a->storage && a->storage == b->storage;
}

void tg_set_owner(tg_tensor *t, void *owner)
{
    if (t)
        t->owner = owner;
}

void *tg_owner(const tg_tensor *t) { return t ? t->owner : NULL; }

double tg__load(tg_dtype dt, const void *p)
{
    switch (dt) {
    case TG_FLOAT32: return *(const float *)p;
    case TG_FLOAT64: return *(const double *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_INT64: return (double)*(const int64_t *)p;
    case TG_UINT8: return *(const uint8_t *)p;
    case TG_BOOL: return *(const uint8_t *)p != 0;
    default: return 0;
    }
}

void tg__store(tg_dtype dt, void *p, double v)
{
    switch (dt) {
    case TG_FLOAT32: *(float *)p = (float)v; break;
    case TG_FLOAT64: *(double *)p = v; break;
    /* through int64: negative values wrap into uint8 (defined behaviour) */
    case TG_INT32: *(int32_t *)p = (int32_t)(int64_t)v; break;
    case TG_INT64: *(int64_t *)p = (int64_t)v; break;
    case TG_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case TG_BOOL: *(uint8_t *)p = v != 0; break;
    default: break;
    }
}

void *tg__elem_ptr(const tg_tensor *t, int64_t flat)
{
    int64_t off = 0;
    for (int i = t->ndim - 1; i >= 0; i--) {
        int64_t idx = flat % t->shape[i];
        flat /= t->shape[i];
        off += idx * t->strides[i];
    }
    return tg__base(t) + off * (int64_t)tg_dtype_size(t->dtype);
}

/* a NULL tensor is usually an earlier failure: keep its message */
static double null_nan(const char *fn)
{
    if (!tg__error_is_set())
        tg__error(TG_ERR_ARG, "%s: tensor is NULL", fn);
    return NAN;
}

double tg_item(const tg_tensor *t)
{
    if (!t)
        return null_nan("tg_item");
    if (t->numel != 1) {
        tg__error(TG_ERR_SHAPE, "tg_item: expected a one-element tensor, got %lld elements",
                  (long long)t->numel);
        return NAN;
    }
    if (!tg__check_concrete("tg_item", t))
        return NAN;
    return tg__load(t->dtype, tg__base(t));
}

double tg_get(const tg_tensor *t, const int64_t *index)
{
    if (!t)
        return null_nan("tg_get");
    if (!tg__check_concrete("tg_get", t))
        return NAN;
    if (!index && t->ndim > 0) {
        tg__error(TG_ERR_ARG, "tg_get: index is NULL");
        return NAN;
    }
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (index[i] < 0 || index[i] >= t->shape[i]) {
            tg__error(TG_ERR_INDEX, "tg_get: index %lld out of range for axis %d of size %lld",
                      (long long)index[i], i, (long long)t->shape[i]);
            return NAN;
        }
        off += index[i] * t->strides[i];
    }
    return tg__load(t->dtype, tg__base(t) + off * (int64_t)tg_dtype_size(t->dtype));
}

tg_status tg_copy_to(const tg_tensor *t, tg_dtype dt, void *out)
{
    if (!t || !out || !tg_dtype_is_valid((int)dt))
        return tg__error(TG_ERR_ARG, "tg_copy_to: NULL tensor, NULL output or bad dtype");
    if (!tg__check_concrete("tg_copy_to", t))
        return tg_last_status();
    size_t es = tg_dtype_size(dt);
    if (dt == t->dtype && tg_is_contiguous(t)) {
        memcpy(out, tg__base(t), (size_t)t->numel * es);
        return TG_OK;
    }
    for (int64_t i = 0; i < t->numel; i++)
        tg__store(dt, (char *)out + i * (int64_t)es,
                  tg__load(t->dtype, tg__elem_ptr(t, i)));
    return TG_OK;
}

char *tg_shape_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    if ((!shape && ndim > 0) || ndim < 0 || ndim > TG_MAX_DIMS) {
        snprintf(buf, len, "%s", ndim < 0 || ndim > TG_MAX_DIMS ? "(bad ndim)" : "(null)");
        return buf;
    }
    size_t n = 0;
    n += (size_t)snprintf(buf + n, len - n, "[");
    for (int i = 0; i < ndim && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, i ? ", %lld" : "%lld",
                              (long long)shape[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}
