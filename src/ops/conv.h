/* The attributes of the convolution ops (conv.c), decoded: for the passes
 * that read a convolution node's geometry (fuse_pw_dw.c). */
#ifndef TG_OPS_CONV_H
#define TG_OPS_CONV_H

#include <stdint.h>

/* spatial dims at most */
#define TG_CONV_ND_MAX 3

/* the attributes of every rank (the first nd of each array; absent ones
 * take PyTorch's defaults); the gradient ops also give the shape they
 * produce */
typedef struct conv_params {
    int64_t stride[TG_CONV_ND_MAX], padding[TG_CONV_ND_MAX], dilation[TG_CONV_ND_MAX];
    int64_t groups;
    int64_t output_padding[TG_CONV_ND_MAX];     /* conv_transposeNd */
    int64_t input_shape[TG_CONV_ND_MAX + 2];  /* convNd_grad_input */
    int64_t weight_shape[TG_CONV_ND_MAX + 2]; /* convNd_grad_weight */
} conv_params;

#endif
