/* Shared pieces of the elementwise op families: result dtypes, casting
 * inputs to the compute dtype, and the broadcast shape inference. */
#ifndef TG_ELEMENTWISE_H
#define TG_ELEMENTWISE_H

#include "kernels/cpu/iter.h"
#include "ops/op.h"

/* PyTorch's result_type for two tensors: 0-d tensors take part only when
 * their category (bool < integer < float) is higher than the other's:
 * an integer tensor with a float64 0-d tensor gives float64 (a Python
 * float arrives as a 0-d tensor of the default float, tg_default_float) */
tg_dtype tg_result_type(const tg_tensor *a, const tg_tensor *b);
/* infers a broadcast binary op with output dtype dt */
tg_status tg_infer_broadcast(tg_op_ctx *c, tg_dtype dt);
/* infers a gradient op of (dy, second) that works elementwise: both
 * floating point of one shape and dtype (else an error naming the op, dy
 * and the second input by `name`), dx like dy */
tg_status tg__infer_grad_pair(tg_op_ctx *c, const char *name);
/* runs such an op: the row f32 or f64 over (dx, dy, second) */
tg_status tg__run_grad_pair(tg_op_ctx *c, tg_iter_row_fn f32, tg_iter_row_fn f64);
/* x itself (retained) when already of dtype dt, else a converted copy;
 * internal: not published to any scope */
tg_tensor *tg__as_dtype(tg_tensor *x, tg_dtype dt);
/* x itself (retained) when of dtype dt and contiguous, else a contiguous
 * converted copy (what a kernel reading tg__base needs); internal */
tg_tensor *tg__contig_as(const tg_tensor *x, tg_dtype dt);
/* converts src into dst elementwise (shapes broadcast), any dtypes */
void tg__convert_into(tg_tensor *dst, const tg_tensor *src);

#endif
