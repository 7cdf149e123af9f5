/* The elementwise op family's registry table. The ops themselves live in
 * binary.c (arithmetic, fmod, remainder), unary.c (math), compare.c (comparisons, logic,
 * where, clamp) and convert.c (cast). */
#include "ops/op.h"

extern const tg_op_def tg_op_add, tg_op_sub, tg_op_mul, tg_op_div, tg_op_pow,
    tg_op_maximum, tg_op_minimum, tg_op_fmod, tg_op_remainder, tg_op_floor_divide,
    tg_op_trunc_divide, tg_op_cast;

const tg_op_def *const tg_ops_elementwise[] = {
    &tg_op_add, &tg_op_sub, &tg_op_mul, &tg_op_div, &tg_op_pow,
    &tg_op_maximum, &tg_op_minimum, &tg_op_fmod, &tg_op_remainder, &tg_op_floor_divide,
    &tg_op_trunc_divide, &tg_op_cast,
    NULL,
};
