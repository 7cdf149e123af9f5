/* ONNX ops: LSTM, GRU, RNN (unrolled over the sequence). */
#include "onnx/ops.h"

const onnx_op_entry onnx_ops_rnn[] = {
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
