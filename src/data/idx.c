/* IDX files of unsigned bytes (MNIST's format): a hostile-input reader
 * that checks magic, dims and the exact file size before allocating, and
 * a writer. */
#include "core/tensor_impl.h"
#include "io/atomic_file.h"
#include "io/regular_file.h"
#include "tg/data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDX_UBYTE 0x08

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

/* opens path as a regular file (never a FIFO or device that could block
 * or never end) and returns its size through *size */
static FILE *open_regular(const char *path, int64_t *size)
{
    bool not_regular;
    FILE *f = tg__open_regular(path, size, &not_regular);
    if (!f && not_regular)
        return tg__error_null(TG_ERR_IO, "tg_idx_load: '%s' is not a regular file", path);
    if (!f)
        return tg__error_null(TG_ERR_IO, "tg_idx_load: cannot open '%s': %s", path,
                              strerror(errno));
    return f;
}

/* reads and validates the header; fills ndim/shape and the header size */
static bool read_header(FILE *f, const char *path, int64_t size, int expect_ndim,
                        int *ndim, int64_t *shape, int64_t *header)
{
    unsigned char b[4 + 4 * TG_MAX_DIMS];
    if (size < 4 || fread(b, 1, 4, f) != 4) {
        tg__error(TG_ERR_IO, "tg_idx_load: '%s' is truncated: %lld bytes, too "
                  "short for the 4-byte IDX magic", path, (long long)size);
        return false;
    }
    uint32_t magic = be32(b);
    int nd = b[3];
    if (b[0] != 0 || b[1] != 0 || b[2] != IDX_UBYTE || nd < 1 || nd > TG_MAX_DIMS ||
        (expect_ndim > 0 && nd != expect_ndim)) {
        char want[64];
        if (expect_ndim > 0)
            snprintf(want, sizeof want, "0x%08x", 0x800u | (unsigned)expect_ndim);
        else
            snprintf(want, sizeof want, "0x00000801 to 0x%08x", 0x800u | TG_MAX_DIMS);
        bool gz = b[0] == 0x1f && b[1] == 0x8b;
        tg__error(TG_ERR_IO, "tg_idx_load: '%s' has wrong magic 0x%08x, expected "
                  "%s (unsigned-byte IDX)%s", path, (unsigned)magic, want,
                  gz ? "; it is gzip-compressed: gunzip it first" : "");
        return false;
    }
    *header = 4 + 4 * (int64_t)nd;
    if (size < *header || fread(b + 4, 1, (size_t)(4 * nd), f) != (size_t)(4 * nd)) {
        tg__error(TG_ERR_IO, "tg_idx_load: '%s' is truncated: %lld bytes, the "
                  "header of %d dims needs %lld", path, (long long)size, nd,
                  (long long)*header);
        return false;
    }
    for (int i = 0; i < nd; i++) {
        uint32_t d = be32(b + 4 + 4 * i);
        if (d == 0 || d > INT32_MAX) {
            tg__error(TG_ERR_IO, "tg_idx_load: '%s' has invalid dim %d = %lu "
                      "(expected 1 to %d)", path, i, (unsigned long)d, INT32_MAX);
            return false;
        }
        shape[i] = d;
    }
    /* the product of the dims, saturating: compared with the file before
     * anything is allocated */
    int64_t avail = size - *header, n = 1;
    for (int i = 0; i < nd; i++)
        n = n > INT64_MAX / shape[i] ? INT64_MAX : n * shape[i];
    if (n != avail) {
        char dims[160];
        tg__error(TG_ERR_IO, "tg_idx_load: '%s' has %lld bytes after the header, "
                  "its dims %s say %s%lld (%s)", path, (long long)avail,
                  tg_shape_str(nd, shape, dims, sizeof dims),
                  n == INT64_MAX ? "more than " : "", (long long)n,
                  avail > n ? "trailing garbage" : "truncated, or dims too large");
        return false;
    }
    *ndim = nd;
    return true;
}

tg_tensor *tg_idx_load(const char *path, int expect_ndim)
{
    if (!path)
        return tg__error_null(TG_ERR_ARG, "tg_idx_load: path is NULL");
    if (expect_ndim < 0 || expect_ndim > TG_MAX_DIMS)
        return tg__error_null(TG_ERR_ARG, "tg_idx_load: expect_ndim %d is out "
                              "of range 0 to %d", expect_ndim, TG_MAX_DIMS);
    int64_t size = 0;
    FILE *f = open_regular(path, &size);
    if (!f)
        return NULL;
    int ndim;
    int64_t shape[TG_MAX_DIMS], header;
    tg_tensor *t = NULL;
    if (read_header(f, path, size, expect_ndim, &ndim, shape, &header)) {
        t = tg__alloc(TG_UINT8, ndim, shape);
        /* the size may have changed since fstat: demand exactly the bytes
         * promised and then the end of the file */
        if (t && (fread(tg__base(t), 1, (size_t)t->numel, f) != (size_t)t->numel ||
                  fgetc(f) != EOF)) {
            tg_release(t);
            t = tg__error_null(TG_ERR_IO, "tg_idx_load: '%s' changed size or "
                               "could not be read while loading", path);
        }
    }
    fclose(f);
    return tg__publish(t);
}

tg_status tg_idx_save(const char *path, const tg_tensor *t)
{
    if (!path || !t)
        return tg__error(TG_ERR_ARG, "tg_idx_save: %s is NULL", path ? "tensor" : "path");
    if (t->dtype != TG_UINT8 || t->ndim < 1)
        return tg__error(TG_ERR_DTYPE, "tg_idx_save: expected a uint8 tensor with "
                         "1 to %d dims, got %s with %d dims", TG_MAX_DIMS,
                         tg_dtype_name(t->dtype), t->ndim);
    unsigned char h[4 + 4 * TG_MAX_DIMS] = {0, 0, IDX_UBYTE, (unsigned char)t->ndim};
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 1 || t->shape[i] > INT32_MAX)
            return tg__error(TG_ERR_SHAPE, "tg_idx_save: dim %d = %lld cannot be "
                             "stored in IDX (1 to %d)", i, (long long)t->shape[i],
                             INT32_MAX);
        uint32_t d = (uint32_t)t->shape[i];
        unsigned char *p = h + 4 + 4 * i;
        p[0] = (unsigned char)(d >> 24);
        p[1] = (unsigned char)(d >> 16);
        p[2] = (unsigned char)(d >> 8);
        p[3] = (unsigned char)d;
    }
    unsigned char *buf = malloc((size_t)t->numel);
    if (!buf)
        return tg__error(TG_ERR_NOMEM, "tg_idx_save: out of memory");
    tg_status s = tg_copy_to(t, TG_UINT8, buf); /* any strides */
    tg__atomic_file af;
    if (s == TG_OK && (s = tg__atomic_begin(&af, path, "tg_idx_save")) == TG_OK) {
        size_t hn = 4 + 4 * (size_t)t->ndim;
        bool ok = fwrite(h, 1, hn, af.f) == hn &&
                  fwrite(buf, 1, (size_t)t->numel, af.f) == (size_t)t->numel;
        s = tg__atomic_end(&af, ok, ok ? 0 : errno, "tg_idx_save");
    }
    free(buf);
    return s;
}
