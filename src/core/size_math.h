/* Checked size arithmetic: the one place where dims, element counts and
 * byte counts computed from user input (shapes, pads, reps, strides,
 * kernel sizes, ONNX files) are added and multiplied. Plain int64
 * arithmetic would wrap (undefined behaviour in C) and give a tiny or
 * negative shape; these fail instead with TG_ERR_SHAPE "<op>: shape too
 * large (...)". The largest size accepted is TG_SIZE_MAX, so that a byte
 * count (at most 8 bytes an element) and the offsets kernels compute from
 * element counts never overflow either. Internal. */
#ifndef TG_CORE_SIZE_MATH_H
#define TG_CORE_SIZE_MATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TG_SIZE_MAX (INT64_MAX / 16)

/* *out = a + b / a * b for sizes in [0, TG_SIZE_MAX] (a negative operand
 * is a caller's bug); false with the error set when the result exceeds
 * TG_SIZE_MAX. what says what is computed ("pad", "the output size"). */
bool tg__size_add(const char *op, const char *what, int64_t a, int64_t b, int64_t *out);
bool tg__size_mul(const char *op, const char *what, int64_t a, int64_t b, int64_t *out);
/* the product of shape[0..ndim) (1 for ndim 0), every dim >= 0 */
bool tg__size_numel(const char *op, int ndim, const int64_t *shape, int64_t *out);
/* n elements of elem bytes as a size_t byte count */
bool tg__size_bytes(const char *op, int64_t n, size_t elem, size_t *out);

/* a * b > limit, for a, b >= 0, without overflowing (sets no error) */
bool tg__size_mul_exceeds(int64_t a, int64_t b, int64_t limit);

/* A sliding window's extent: in + pad_before + pad_after - (dilation *
 * (k - 1) + 1), the span the window's start moves over (negative when the
 * window does not fit), for convolutions and pooling. Every operand >= 0
 * (k, dilation >= 1). */
bool tg__size_window_span(const char *op, int64_t in, int64_t pad_before, int64_t pad_after,
                          int64_t k, int64_t dilation, int64_t *span);

#endif
