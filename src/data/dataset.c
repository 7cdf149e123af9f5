/* Datasets: the generic interface, datasets built from tensors, and
 * MNIST from its IDX files (normalised to float32 on the fly). */
#include "core/tensor_impl.h"
#include "data/data_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tg_dataset {
    tg_dataset_impl impl;
    void *self;
};

bool tg__path_join(char *out, size_t len, const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    const char *sep = dl > 0 && dir[dl - 1] != '/' ? "/" : "";
    int n = snprintf(out, len, "%s%s%s", dir, sep, name);
    if (n < 0 || (size_t)n >= len) {
        tg__error(TG_ERR_ARG, "path '%s/%s' is too long", dir, name);
        return false;
    }
    return true;
}

tg_dataset *tg_dataset_new(const tg_dataset_impl *impl, void *self)
{
    if (!impl || !impl->size || !impl->get_batch)
        return tg__error_null(TG_ERR_ARG, "tg_dataset_new: impl needs size and "
                              "get_batch");
    tg_dataset *d = malloc(sizeof *d);
    if (!d)
        return tg__error_null(TG_ERR_NOMEM, "tg_dataset_new: out of memory");
    d->impl = *impl;
    d->self = self;
    return d;
}

int64_t tg_dataset_size(const tg_dataset *d)
{
    return d ? d->impl.size(d->self) : 0;
}

void tg_dataset_free(tg_dataset *d)
{
    if (!d)
        return;
    if (d->impl.free)
        d->impl.free(d->self);
    free(d);
}

static bool batch_ok(const tg_tensor *t, int64_t n)
{
    return t && t->ndim >= 1 && t->shape[0] == n;
}

tg_status tg__dataset_get_raw(const tg_dataset *d, const int64_t *idx, int64_t n,
                              tg_tensor **x, tg_tensor **y)
{
    *x = *y = NULL;
    int64_t size = d->impl.size(d->self);
    for (int64_t i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= size)
            return tg__error(TG_ERR_INDEX, "dataset: sample index %lld is out of "
                             "range for %lld samples", (long long)idx[i],
                             (long long)size);
    /* whatever get_batch creates belongs to us, not to a caller's scope */
    int floor = tg__scope_suspend();
    tg_status s = d->impl.get_batch(d->self, idx, n, x, y);
    tg__scope_resume(floor);
    if (s == TG_OK && (!batch_ok(*x, n) || !batch_ok(*y, n)))
        s = tg__error(TG_ERR_SHAPE, "dataset: get_batch for %lld samples must "
                      "return x and y with %lld rows", (long long)n, (long long)n);
    if (s != TG_OK) {
        tg_release(*x);
        tg_release(*y);
        *x = *y = NULL;
    }
    return s;
}

tg_status tg_dataset_get(const tg_dataset *d, const int64_t *idx, int64_t n,
                         tg_tensor **x, tg_tensor **y)
{
    if (!x || !y)
        return tg__error(TG_ERR_ARG, "tg_dataset_get: x or y is NULL");
    *x = *y = NULL;
    if (!d || (n > 0 && !idx) || n < 0)
        return tg__error(TG_ERR_ARG, "tg_dataset_get: dataset or indices missing "
                         "(n = %lld)", (long long)n);
    tg_status s = tg__dataset_get_raw(d, idx, n, x, y);
    if (s == TG_OK) {
        tg__publish(*x);
        tg__publish(*y);
    }
    return s;
}

/* ---- datasets from tensors: rows of contiguous copies ------------------ */
typedef struct rows {
    tg_dtype dt;
    int ndim;
    int64_t shape[TG_MAX_DIMS]; /* shape[0] is the number of samples */
    size_t row_bytes;
    char *data;
} rows;

typedef struct tensor_ds {
    rows x, y;
} tensor_ds;

static bool rows_init(rows *r, const tg_tensor *t)
{
    r->dt = t->dtype;
    r->ndim = t->ndim;
    memcpy(r->shape, t->shape, sizeof r->shape);
    r->row_bytes = (size_t)(t->shape[0] ? t->numel / t->shape[0] : 0) *
                   tg_dtype_size(t->dtype);
    r->data = malloc((size_t)t->numel * tg_dtype_size(t->dtype) + 1);
    if (!r->data) {
        tg__error(TG_ERR_NOMEM, "tg_dataset_from_tensors: out of memory");
        return false;
    }
    return tg_copy_to(t, t->dtype, r->data) == TG_OK;
}

static tg_tensor *rows_gather(const rows *r, const int64_t *idx, int64_t n)
{
    int64_t shape[TG_MAX_DIMS];
    memcpy(shape, r->shape, sizeof shape);
    shape[0] = n;
    tg_tensor *t = tg__alloc(r->dt, r->ndim, shape);
    if (!t)
        return NULL;
    for (int64_t i = 0; i < n; i++)
        memcpy(tg__base(t) + (size_t)i * r->row_bytes,
               r->data + (size_t)idx[i] * r->row_bytes, r->row_bytes);
    return t;
}

static int64_t tensor_ds_size(void *self) { return ((tensor_ds *)self)->x.shape[0]; }

static tg_status tensor_ds_get(void *self, const int64_t *idx, int64_t n,
                               tg_tensor **x, tg_tensor **y)
{
    tensor_ds *d = self;
    *x = rows_gather(&d->x, idx, n);
    *y = *x ? rows_gather(&d->y, idx, n) : NULL;
    return *y ? TG_OK : tg_last_status();
}

static void tensor_ds_free(void *self)
{
    tensor_ds *d = self;
    if (!d)
        return;
    free(d->x.data);
    free(d->y.data);
    free(d);
}

tg_dataset *tg_dataset_from_tensors(const tg_tensor *x, const tg_tensor *y)
{
    if (!x || !y)
        return tg__error_null(TG_ERR_ARG, "tg_dataset_from_tensors: x or y is NULL");
    if (x->ndim < 1 || y->ndim < 1 || x->shape[0] != y->shape[0]) {
        char a[128], b[128];
        return tg__error_null(TG_ERR_SHAPE, "tg_dataset_from_tensors: x %s and "
                              "y %s need the same size on axis 0",
                              tg_shape_str(x->ndim, x->shape, a, sizeof a),
                              tg_shape_str(y->ndim, y->shape, b, sizeof b));
    }
    tensor_ds *d = calloc(1, sizeof *d);
    if (!d)
        return tg__error_null(TG_ERR_NOMEM, "tg_dataset_from_tensors: out of memory");
    static const tg_dataset_impl impl = {tensor_ds_size, tensor_ds_get, tensor_ds_free};
    tg_dataset *ds = NULL;
    if (rows_init(&d->x, x) && rows_init(&d->y, y))
        ds = tg_dataset_new(&impl, d);
    if (!ds)
        tensor_ds_free(d);
    return ds;
}

/* ---- MNIST ------------------------------------------------------------------ */
typedef struct mnist_ds {
    tg_tensor *images; /* uint8 [N, H, W] */
    tg_tensor *labels; /* uint8 [N] */
} mnist_ds;

/* as torchvision: ToTensor (v / 255) then Normalize, in float32. Fixed
 * 16-wide chunks let gcc vectorize at -O2; IEEE division keeps every
 * value bit-identical to the scalar formula (and to PyTorch). */
static void normalize(const uint8_t *restrict src, float *restrict dst, int64_t n)
{
    const float mean = (float)TG_MNIST_MEAN, std = (float)TG_MNIST_STD;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++)
            dst[i + k] = ((float)src[i + k] / 255.0f - mean) / std;
    for (; i < n; i++)
        dst[i] = ((float)src[i] / 255.0f - mean) / std;
}

static int64_t mnist_size(void *self) { return ((mnist_ds *)self)->labels->shape[0]; }

static tg_status mnist_get(void *self, const int64_t *idx, int64_t n,
                           tg_tensor **x, tg_tensor **y)
{
    const mnist_ds *m = self;
    int64_t h = m->images->shape[1], w = m->images->shape[2], hw = h * w;
    *x = tg__alloc(TG_FLOAT32, 4, (int64_t[]){n, 1, h, w});
    *y = tg__alloc(TG_INT64, 1, &n);
    if (!*x || !*y)
        return tg_last_status();
    const uint8_t *img = (const uint8_t *)tg__base(m->images);
    const uint8_t *lab = (const uint8_t *)tg__base(m->labels);
    float *xd = (float *)tg__base(*x);
    int64_t *yd = (int64_t *)tg__base(*y);
    for (int64_t i = 0; i < n; i++) {
        normalize(img + idx[i] * hw, xd + i * hw, hw);
        yd[i] = lab[idx[i]];
    }
    return TG_OK;
}

static void mnist_free(void *self)
{
    mnist_ds *m = self;
    if (!m)
        return;
    tg_release(m->images);
    tg_release(m->labels);
    free(m);
}

static bool mnist_check(const mnist_ds *m, const char *ipath, const char *lpath)
{
    if (m->images->shape[0] != m->labels->shape[0]) {
        tg__error(TG_ERR_IO, "tg_mnist_dataset: '%s' has %lld images but '%s' "
                  "has %lld labels", ipath, (long long)m->images->shape[0], lpath,
                  (long long)m->labels->shape[0]);
        return false;
    }
    const uint8_t *lab = (const uint8_t *)tg__base(m->labels);
    for (int64_t i = 0; i < m->labels->shape[0]; i++)
        if (lab[i] > 9) {
            tg__error(TG_ERR_IO, "tg_mnist_dataset: '%s' has label %d at index "
                      "%lld (expected a digit 0 to 9)", lpath, lab[i], (long long)i);
            return false;
        }
    return true;
}

tg_dataset *tg_mnist_dataset(const char *dir, bool train)
{
    if (!dir)
        return tg__error_null(TG_ERR_ARG, "tg_mnist_dataset: dir is NULL");
    const char *pre = train ? "train" : "t10k";
    char in[64], ln[64], ipath[TG__PATH_MAX], lpath[TG__PATH_MAX];
    snprintf(in, sizeof in, "%s-images-idx3-ubyte", pre);
    snprintf(ln, sizeof ln, "%s-labels-idx1-ubyte", pre);
    if (!tg__path_join(ipath, sizeof ipath, dir, in) ||
        !tg__path_join(lpath, sizeof lpath, dir, ln))
        return NULL;
    mnist_ds *m = calloc(1, sizeof *m);
    if (!m)
        return tg__error_null(TG_ERR_NOMEM, "tg_mnist_dataset: out of memory");
    int floor = tg__scope_suspend(); /* we own the loaded tensors */
    m->images = tg_idx_load(ipath, 3);
    m->labels = m->images ? tg_idx_load(lpath, 1) : NULL;
    tg__scope_resume(floor);
    /* the file that failed, when it failed by not being there */
    const char *failed = !m->images ? ipath : !m->labels ? lpath : NULL;
    const char *missing = failed && access(failed, F_OK) != 0 ? failed : NULL;
    if (missing)
        tg__error(TG_ERR_IO, "tg_mnist_dataset: '%s' not found; fetch MNIST with "
                  "`tg data mnist --dir %s` (tg_mnist_ensure)", missing, dir);
    tg_dataset *ds = NULL;
    if (m->labels && mnist_check(m, ipath, lpath)) {
        static const tg_dataset_impl impl = {mnist_size, mnist_get, mnist_free};
        ds = tg_dataset_new(&impl, m);
    }
    if (!ds)
        mnist_free(m);
    return ds;
}
