/* Shared pieces of the elementwise op families: result dtypes, casting
 * inputs to the compute dtype, and the broadcast shape inference. */
#ifndef TG_ELEMENTWISE_H
#define TG_ELEMENTWISE_H

#include "ops/op.h"

/* PyTorch's result_type for two tensors: 0-d tensors take part only when
 * their category (bool < integer < float) is higher than the other's;
 * an integer tensor with a float 0-d tensor gives float32 */
tg_dtype tg_result_type(const tg_tensor *a, const tg_tensor *b);
/* infers a broadcast binary op with output dtype dt */
tg_status tg_infer_broadcast(tg_op_ctx *c, tg_dtype dt);
/* x itself (retained) when already of dtype dt, else a converted copy;
 * internal: not published to any scope */
tg_tensor *tg__as_dtype(tg_tensor *x, tg_dtype dt);
/* converts src into dst elementwise (shapes broadcast), any dtypes */
void tg__convert_into(tg_tensor *dst, const tg_tensor *src);

#endif
