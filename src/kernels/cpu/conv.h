/* 2-D convolution kernels on contiguous NCHW buffers of float32 or
 * float64 (one dtype for every operand): the forward product and the two
 * gradients. The op definitions (checks, attributes, gradient rules) are
 * in ops/conv.c. */
#ifndef TG_KERNELS_CONV_H
#define TG_KERNELS_CONV_H

#include "tg/core.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tg__conv_geom {
    int64_t n, c, h, w;  /* input [N, C, H, W] */
    int64_t o, kh, kw;   /* weight [O, C / groups, kh, kw] */
    int64_t oh, ow;      /* output [N, O, OH, OW] */
    int64_t sh, sw, ph, pw, dh, dw, groups;
    /* the weights' storage when it is frozen (core/tensor_impl.h), else 0:
     * the pointwise path keeps their packed form between calls */
    uint64_t w_serial, w_version;
} tg__conv_geom;

/* g with the stride of a dim whose output has one position cut to the
 * smallest that gives one position (at most the padded size): that
 * position reads the same input whatever the stride, and the strided
 * kernels lay their input out in stride phases, so a huge stride there
 * (torch gives it one output position) would size their scratch. Every
 * entry point below applies it to its own copy of g. */
void tg__conv_geom_canon(tg__conv_geom *g);
/* whether the padded copies the special paths make (the padded input
 * planes, and at stride 1 the output gradient padded by the dilated
 * kernel) stay within a small multiple of the call's own input and
 * output, or a few MB: a dilation and padding of 2^30 around a small
 * plane would otherwise ask for terabytes. Geometries outside it take
 * im2col and GEMM, whose scratch grows with the output alone. */
bool tg__conv_pads_bounded(const tg__conv_geom *g);

/* y [n, o, oh, ow] = x [n, c, h, w] (*) w [o, c / groups, kh, kw] (+ b [o]
 * when b is not NULL). Returns TG_OK or TG_ERR_NOMEM. */
tg_status tg__conv2d_forward(tg_dtype dt, const tg__conv_geom *g, const void *x,
                             const void *w, const void *b, void *y);
/* the same through relu (as the relu op: NaN passes, the rest not above
 * zero becomes +0) when relu is true, applied as the outputs are written:
 * the bits of relu after tg__conv2d_forward, without a pass over y */
tg_status tg__conv2d_forward_relu(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                  const void *w, const void *b, bool relu, void *y);
/* an activation the forward product applies as it writes its outputs:
 * relu (as the relu op), clamp to [lo, hi] (as the clamp op: NaN
 * passes, the bounds rounded to the dtype) or hardswish (as the
 * hardswish op: x * min(max(x + 3, 0), 6) / 6); the bits of the activation
 * op after tg__conv2d_forward. The pointwise and depthwise paths apply it
 * while the outputs are in registers or cache, the others in a pass
 * after the product (relu: as they are written). */
typedef enum tg__conv_act_kind {
    TG_CONV_ACT_NONE,
    TG_CONV_ACT_RELU,
    TG_CONV_ACT_CLAMP,
    TG_CONV_ACT_HARDSWISH
} tg__conv_act_kind;
typedef struct tg__conv_act {
    tg__conv_act_kind kind;
    double lo, hi; /* clamp */
} tg__conv_act;
tg_status tg__conv2d_forward_act(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                 const void *w, const void *b, const tg__conv_act *act,
                                 void *y);
/* y = relu?(conv(x, w, b) + res) with res laid out as y (not aliasing
 * it): the bits of the product, then the add op, then relu when relu is
 * true. The dense and pointwise paths add and activate as they store
 * (conv_dense.h, conv_pw.h: ResNet's and MobileNetV2's shortcuts); the
 * others in a pass over y after the product, each path the one
 * tg__conv2d_forward takes for g */
tg_status tg__conv2d_forward_residual(tg_dtype dt, const tg__conv_geom *g, const void *x,
                                      const void *w, const void *b, const void *res,
                                      bool relu, void *y);
/* y [n, o, oh/2, ow/2], off = max_pool2d_compact(relu(conv2d(x, w, b)))
 * with 2 x 2 windows, stride 2 (oh, ow >= 2): the bits of the three ops,
 * the pooling done as the batch-lane kernels store, else after the
 * product (conv_pool.c). Returns TG_OK or TG_ERR_NOMEM. */
tg_status tg__conv2d_relu_pool(tg_dtype dt, const tg__conv_geom *g, const void *x,
                               const void *w, const void *b, void *y, uint8_t *off);
/* dx [n, c, h, w] from dy [n, o, oh, ow] and w (dx is overwritten) */
tg_status tg__conv2d_grad_input(tg_dtype dt, const tg__conv_geom *g,
                                const void *dy, const void *w, void *dx);
/* dw [o, c / groups, kh, kw] from dy and x (dw is overwritten) */
tg_status tg__conv2d_grad_weight(tg_dtype dt, const tg__conv_geom *g,
                                 const void *dy, const void *x, void *dw);

#endif
