/* ONNX ops: BitShift, Compress, ReverseSequence, MaxUnpool, NonZero, Unique, Det, GridSample, RoiAlign, NonMaxSuppression, .... */
#include "onnx/ops.h"

const onnx_op_entry onnx_ops_misc[] = {
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
