/* The one registry of operator definitions: every op family's table,
 * searchable by name (for graphs, ONNX import and tooling). */
#include "ops/op.h"

#include <string.h>

static const tg_op_def *const *const families[] = {
    tg_ops_elementwise, tg_ops_unary,  tg_ops_compare,
    tg_ops_reduce,
    tg_ops_shape,       tg_ops_array,  tg_ops_linalg,
    tg_ops_conv,        tg_ops_pool,   tg_ops_norm,
    tg_ops_nn,          tg_ops_graph,
};
#define N_FAMILIES (sizeof families / sizeof families[0])

int tg_op_count(void)
{
    int n = 0;
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const tg_op_def *const *p = families[f]; *p; p++)
            n++;
    return n;
}

const tg_op_def *tg_op_at(int i)
{
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const tg_op_def *const *p = families[f]; *p; p++)
            if (i-- == 0)
                return *p;
    return NULL;
}

const tg_op_def *tg_op_find(const char *name)
{
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const tg_op_def *const *p = families[f]; *p; p++)
            if (strcmp((*p)->name, name) == 0)
                return *p;
    return NULL;
}
