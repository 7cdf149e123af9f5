/* The linalg op family (to be filled in). */
#include "ops/op.h"

const tg_op_def *const tg_ops_linalg[] = {NULL};
