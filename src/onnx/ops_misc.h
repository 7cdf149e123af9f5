/* Helpers shared by the ops_misc_*.c importers (BitShift, Compress,
 * NonZero, Unique, Det, MaxUnpool, GridSample, ...). */
#ifndef TG_ONNX_OPS_MISC_H
#define TG_ONNX_OPS_MISC_H

#include "onnx/ops.h"

/* c->out[0] = y (the error of the op that failed when y is NULL) */
tg_status misc_done(onnx_ictx *c, tg_tensor *y);

/* the concrete value of input i where the import has one: a known
 * value, a given input with opts.specialize, or (eager builds and their
 * sizing run) any input that is not symbolic; NULL in graph mode over an
 * input computed when the graph runs */
tg_tensor *misc_value(const onnx_ictx *c, int i);

/* misc_value, or TG_ERR_UNSUPPORTED naming the node, the input and why
 * its value is needed (`why`: "the output's shape depends on it") */
tg_tensor *misc_value_req(onnx_ictx *c, int i, const char *what, const char *why);

/* x's elements as int64 (integer or bool dtypes) or double (float
 * dtypes): a buffer in c->tmp, *is_float says which */
tg_status misc_host_values(onnx_ictx *c, tg_tensor *x, void **out, bool *is_float);

/* a 1-D int64 tensor of n values (a constant, scope-owned) */
tg_tensor *misc_int64s(const int64_t *v, int64_t n);

/* the importers (ops_misc_select.c) */
tg_status misc_bitshift(onnx_ictx *c);
tg_status misc_reverse_sequence(onnx_ictx *c);
tg_status misc_compress(onnx_ictx *c);
tg_status misc_nonzero(onnx_ictx *c);
tg_status misc_unique(onnx_ictx *c);
/* ops_misc_linalg.c */
tg_status misc_det(onnx_ictx *c);
tg_status misc_max_unpool(onnx_ictx *c);
/* ops_misc_sample.c */
tg_status misc_grid_sample(onnx_ictx *c);
tg_status misc_roi_align(onnx_ictx *c);
/* ops_misc_nms.c */
tg_status misc_nms(onnx_ictx *c);
/* ops_misc_signal.c */
tg_status misc_hann_window(onnx_ictx *c);
tg_status misc_hamming_window(onnx_ictx *c);
tg_status misc_blackman_window(onnx_ictx *c);
tg_status misc_dft(onnx_ictx *c);
tg_status misc_stft(onnx_ictx *c);
tg_status misc_mel_weight_matrix(onnx_ictx *c);
/* ops_misc_random.c */
tg_status misc_random_uniform(onnx_ictx *c);
tg_status misc_random_normal(onnx_ictx *c);
tg_status misc_random_uniform_like(onnx_ictx *c);
tg_status misc_random_normal_like(onnx_ictx *c);
tg_status misc_bernoulli(onnx_ictx *c);
tg_status misc_multinomial(onnx_ictx *c);

#endif
