/* Checked size arithmetic (see size_math.h): __builtin_*_overflow, then
 * the TG_SIZE_MAX bound. */
#include "core/size_math.h"
#include "core/status_impl.h"
#include "tg/core.h"

static bool too_large(const char *op, const char *what, const char *sign, int64_t a,
                      int64_t b)
{
    tg__error(TG_ERR_SHAPE, "%s: shape too large: %s %lld %s %lld exceeds %lld elements",
              op, what, (long long)a, sign, (long long)b, (long long)TG_SIZE_MAX);
    return false;
}

bool tg__size_add(const char *op, const char *what, int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r) || r > TG_SIZE_MAX)
        return too_large(op, what, "+", a, b);
    *out = r;
    return true;
}

bool tg__size_mul(const char *op, const char *what, int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || r > TG_SIZE_MAX)
        return too_large(op, what, "x", a, b);
    *out = r;
    return true;
}

/* The dims other than 0 must multiply within the bound whatever their
 * order: an empty tensor of dims [3, 2^62, 0] (or [0, 3, 2^62]) would have
 * strides, and kernels byte offsets, that overflow. */
bool tg__size_numel(const char *op, int ndim, const int64_t *shape, int64_t *out)
{
    int64_t n = 1;
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0)
            empty = true;
        else if (!tg__size_mul(op, "the element count", n, shape[i], &n))
            return false;
    }
    *out = empty ? 0 : n;
    return true;
}

bool tg__size_bytes(const char *op, int64_t n, size_t elem, size_t *out)
{
    int64_t b;
    if (n < 0 || !tg__size_mul(op, "the byte count", n, (int64_t)elem, &b))
        return n < 0 ? too_large(op, "the byte count", "x", n, (int64_t)elem) : false;
    *out = (size_t)b;
    return true;
}

bool tg__size_mul_exceeds(int64_t a, int64_t b, int64_t limit)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) || r > limit;
}

bool tg__size_window_span(const char *op, int64_t in, int64_t pad_before, int64_t pad_after,
                          int64_t k, int64_t dilation, int64_t *span)
{
    int64_t padded, reach;
    if (!tg__size_add(op, "the padded input", in, pad_before, &padded) ||
        !tg__size_add(op, "the padded input", padded, pad_after, &padded) ||
        !tg__size_mul(op, "the dilated kernel", dilation, k - 1, &reach))
        return false;
    *span = padded - reach - 1; /* both in [0, TG_SIZE_MAX]: no overflow */
    return true;
}
