/* Internal entry points of the composite ops (ops built from other public
 * ops, so their gradients and forward-mode rules come from those ops'),
 * for the ONNX importer, which needs forms PyTorch's API does not offer. */
#ifndef TG_OPS_COMPOSITE_H
#define TG_OPS_COMPOSITE_H

#include "ops/op.h"

/* tg_instance_norm without PyTorch's refusal of one spatial element
 * (ONNX InstanceNormalization accepts it: the output is the bias) */
tg_tensor *tg__instance_norm(tg_tensor *x, tg_tensor *weight, tg_tensor *bias,
                             double eps);

/* ---- resizing (ONNX Resize; tg_interpolate builds on it) ---------------------- */
typedef enum { TG_RESIZE_NEAREST, TG_RESIZE_LINEAR, TG_RESIZE_CUBIC } tg_resize_mode;
/* how an output index i maps to a source coordinate, with in / out the
 * axis sizes and inv the source step per output step (1 / scale) */
typedef enum {
    TG_COORD_HALF_PIXEL,         /* (i + 0.5) inv - 0.5 */
    TG_COORD_PYTORCH_HALF_PIXEL, /* the same, but 0 when out == 1 */
    TG_COORD_ALIGN_CORNERS,      /* i (in - 1) / (out - 1), 0 when out == 1 */
    TG_COORD_ASYMMETRIC,         /* i inv */
    TG_COORD_TF_HALF_PIXEL_NN,   /* (i + 0.5) inv */
    /* roi start r0 and end r1 (fractions of in - 1): r0 (in - 1) +
     * i (r1 - r0) (in - 1) / (out - 1); outside [0, in - 1] the output is
     * the extrapolation value */
    TG_COORD_TF_CROP_AND_RESIZE
} tg_coord_mode;
/* nearest: rounding of the source coordinate */
typedef enum {
    TG_NEAREST_ROUND_PREFER_FLOOR,
    TG_NEAREST_ROUND_PREFER_CEIL,
    TG_NEAREST_FLOOR,
    TG_NEAREST_CEIL
} tg_nearest_mode;

typedef struct tg_resize_spec {
    tg_resize_mode mode;
    tg_coord_mode coord;
    tg_nearest_mode nearest;
    double cubic_a;       /* cubic: the kernel's coefficient (-0.75 in PyTorch) */
    bool exclude_outside; /* cubic: drop taps outside the input, renormalise */
    /* compute source coordinates in float32, as PyTorch does for nearest
     * and for float32 linear (ONNX's reference uses float64) */
    bool f32_coords;
    const int64_t *out; /* x->ndim output sizes */
    /* x->ndim source steps per output step, multiplied (PyTorch's form),
     * or x->ndim scales that coordinates are divided by (ONNX's): one of
     * the two is NULL */
    const double *inv, *scale;
    const double *roi;    /* tf_crop_and_resize: x->ndim starts, then x->ndim ends */
    double extrapolation; /* tf_crop_and_resize: the value outside the input */
} tg_resize_spec;

/* x resized axis by axis (separable: index_select of the nearest, the two
 * neighbouring or the four (cubic) source slices, weighted); axes whose
 * size and coordinates do not change are left alone */
tg_tensor *tg__resize(tg_tensor *x, const tg_resize_spec *spec);

#endif
