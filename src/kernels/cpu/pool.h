/* Pooling kernels over the planes (volumes) of contiguous [N, C, ...]
 * float32 or float64 buffers, 1 to 3 spatial dims, with PyTorch's
 * semantics (see ops/pool.c, which checks shapes and attributes and
 * computes the output size): one general kernel for every rank, and the
 * 2 x 2 stride-2 plane kernels (pool_2x2*.c) it hands LeNet's shapes to. */
#ifndef TG_KERNELS_POOL_H
#define TG_KERNELS_POOL_H

#include "tg/core.h"

#include <stdbool.h>
#include <stdint.h>

/* The window over nd spatial dims, right-aligned in arrays of 3 (depth,
 * height, width): the leading 3 - nd dims are 1 in size, kernel and
 * stride and 0 in padding, so that one loop nest serves every rank. The
 * names D, H, W, kh, ... alias the arrays' elements. */
#define TG__POOL_DIMS(arr, a, b, c) \
    union {                       \
        int64_t arr[3];           \
        struct {                  \
            int64_t a, b, c;      \
        };                        \
    }
typedef struct tg__pool_geom {
    int nd;
    TG__POOL_DIMS(in, D, H, W);
    TG__POOL_DIMS(out, OD, OH, OW);
    TG__POOL_DIMS(k, kd, kh, kw);
    TG__POOL_DIMS(s, sd, sh, sw);
    TG__POOL_DIMS(p, pd, ph, pw);
    bool ceil_mode, include_pad;
} tg__pool_geom;

/* the window of output position o along dim i (0 depth, 1 rows, 2
 * columns): [*lo, *hi) inside the input; returns its extent clipped to the
 * padded input only (PyTorch's average divisor with count_include_pad is
 * the product of these) */
static inline int64_t tg__pool_window(const tg__pool_geom *g, int i, int64_t o, int64_t *lo,
                                      int64_t *hi)
{
    int64_t start = o * g->s[i] - g->p[i], end = start + g->k[i];
    if (end > g->in[i] + g->p[i])
        end = g->in[i] + g->p[i];
    *lo = start < 0 ? 0 : start;
    *hi = end < g->in[i] ? end : g->in[i];
    return end - start;
}

/* max pooling's rule, every kernel's (scalars or vector masks): v replaces
 * the maximum so far m when larger or NaN, so NaN wins and of equal values
 * (-0 and +0) the first stays */
#define TG__POOL_TAKES(m, v) (((v) > (m)) | ((v) != (v)))

typedef enum tg__pool_kind {
    TG_POOL_MAX,      /* a: x, b: y, idx: argmax out (position in the plane or volume) */
    TG_POOL_AVG,      /* a: x, b: y */
    TG_POOL_AVG_GRAD, /* a: dy, b: dx */
    TG_POOL_MAX_GRAD, /* a: dy, b: dx (zeroed here), idx: argmax in, like a */
    TG_POOL_SELECT,   /* a: src, b: src at idx (idx like b) */
    TG_POOL_MAX_VALUES /* a: x, b: y, no indices (2-D planes; pool_max_values.c) */
} tg__pool_kind;

/* runs kind k over `planes` planes (volumes) of a_n elements of a and b_n
 * of b (g is needed by MAX, MAX_VALUES, AVG and AVG_GRAD; MAX_GRAD and
 * SELECT work on positions, whatever the rank, and read g, when given, for
 * the sizes of a 2-D plane). Returns true when an index read (MAX_GRAD,
 * SELECT) was outside its plane, or MAX_VALUES found no memory for a row;
 * the output is then unspecified. */
bool tg__pool_run(tg__pool_kind k, const tg__pool_geom *g, tg_dtype dt,
                  const void *a, void *b, int64_t *idx, int64_t planes,
                  int64_t a_n, int64_t b_n);

/* max pooling values of planes [0, planes) of x (a_n elements each) into
 * y (b_n each), 2-D g; false when out of memory (pool_max_values.c) */
bool tg__maxpool_values_f32(const tg__pool_geom *g, const float *x, float *y, int64_t planes,
                            int64_t a_n, int64_t b_n);
bool tg__maxpool_values_f64(const tg__pool_geom *g, const double *x, double *y,
                            int64_t planes, int64_t a_n, int64_t b_n);

/* the vector width (16, 8) the values of g's float32 planes (dt) run at
 * on this CPU (tg__cpu_isa), or 0 for the general loops: windows of 1 to
 * 4 columns at column stride 1 or 2, rows of at least that many outputs
 * (any rows, row stride, padding, ceil mode; pool_max_values_arch.h) */
int tg__maxpool_values_lanes(const tg__pool_geom *g, tg_dtype dt);

/* 2 x 2, stride 2 max pooling (pool_2x2.c) of `planes` planes back to back
 * (H x W each, OH x OW outputs, 2 OH <= H, 2 OW <= W, W < 2^30); and its gradient,
 * of planes of 2 OH x 2 OW (dx all written), false (dx unspecified) when
 * an index is not in its window or OW < 8 */
#define TG__POOL2X2_DECL(T, SUF)                                               \
    void tg__maxpool2x2_planes_##SUF(const T *x, int64_t planes, int64_t H,      \
                                     int64_t W, int64_t OH, int64_t OW, T *y,   \
                                     int64_t *idx);                             \
    bool tg__maxpool2x2_grad_planes_##SUF(const T *dy, const int64_t *idx,     \
                                          int64_t planes, int64_t OH,           \
                                          int64_t OW, T *dx);
TG__POOL2X2_DECL(float, f32)
TG__POOL2X2_DECL(double, f64)

/* 2 x 2, stride 2 average pooling of float32 planes as above (W < 2^30),
 * and its gradient, of planes of exactly 2 OH x 2 OW (dx all written):
 * pool.c's float expressions, (a + b + c + d) * 0.25 and 0 + dy / 4 */
void tg__avgpool2x2_planes_f32(const float *x, int64_t planes, int64_t H, int64_t W, int64_t OH,
                               int64_t OW, float *y);
void tg__avgpool2x2_grad_planes_f32(const float *dy, int64_t planes, int64_t OH, int64_t OW,
                                    float *dx);

/* the same with one-byte offsets (0..3, the argmax's row-major place in
 * its window) instead of plane positions (pool_2x2_compact.c): planes as
 * above; the gradient of planes of 2 OH x 2 OW (dx all written), false
 * (dx unspecified) when an offset is above 3 */
#define TG__POOL2X2C_DECL(T, SUF)                                              \
    void tg__maxpool2x2c_planes_##SUF(const T *x, int64_t planes, int64_t H,     \
                                      int64_t W, int64_t OH, int64_t OW, T *y,  \
                                      uint8_t *off);                            \
    bool tg__maxpool2x2c_grad_planes_##SUF(const T *dy, const uint8_t *off,    \
                                           int64_t planes, int64_t OH,          \
                                           int64_t OW, T *dx);
TG__POOL2X2C_DECL(float, f32)
TG__POOL2X2C_DECL(double, f64)

/* for the row loops of the 2 x 2 kernels (pool_2x2*_arch.h): how many
 * leading rows of a run of `rows` rows shorter than a group (OW < LN
 * outputs) take a group each with their reads and writes inside the run:
 * row k reads 2 LN elements from its input rows' start, (2 k + 1) W +
 * 2 LN <= a_n, and writes LN from its outputs' start, k OW + LN <= rows
 * OW (a_n: the elements of the run's input side, in rows of W) */
static inline int64_t tg__pool2x2_rows_fit(int64_t a_n, int64_t W, int64_t OW, int64_t rows, int LN)
{
    int64_t in = a_n - W - 2 * LN, out = rows * OW - LN;
    int64_t fit = in < 0 || out < 0 ? 0 : in / (2 * W) + 1;
    fit = out < 0 ? 0 : (out / OW + 1 < fit ? out / OW + 1 : fit);
    return fit < rows ? fit : rows;
}

#endif
