/* The one registry of operator definitions: every op family's table, in
 * a fixed order (tg_op_at) and by name through the util hash map, built once
 * (graphs, ONNX import and tooling look ops up by name). */
#include "ops/op.h"
#include "util/hmap.h"

#include <pthread.h>
#include <string.h>

static const tg_op_def *const *const families[] = {
    tg_ops_elementwise, tg_ops_unary,  tg_ops_compare,
    tg_ops_reduce,      tg_ops_fused, /* fused: made by the level-2 passes */
    tg_ops_pool_compact, /* made by the level-2 pass pool_indices */
    tg_ops_shape,       tg_ops_array,  tg_ops_linalg,
    tg_ops_conv,        tg_ops_pool,   tg_ops_norm,
    tg_ops_nn,          tg_ops_inplace, tg_ops_graph,
    tg_ops_scan,        tg_ops_range,
    tg_ops_sort,
    tg_ops_trilu,       tg_ops_fpclass, tg_ops_scatter,
    tg_ops_unary_math,  tg_ops_unary_act, tg_ops_act_grad, tg_ops_softmax_grad,
    /* keep these last: op samples run in registry order and draw from one
     * random stream */
    tg_ops_dynamic, /* unknown dims: expand_as, count_scale */
    tg_ops_random,  /* random ops as graph nodes (graph/random.c) */
    tg_ops_control, /* cond, while_loop (control/ops.c) */
    tg_ops_sendrecv, /* the ends of cross-device edges (partitioned runs) */
    tg_ops_diagonal, /* after every other family: their samples keep their draws */
    tg_ops_as_strided,
    tg_ops_nonzero,
    tg_ops_slice_by,
    tg_ops_shape_of,
    tg_ops_full_by,
    tg_ops_append_row,
    tg_ops_nms,
    tg_ops_expand_by,
    tg_ops_unique,
    tg_ops_reshape_by,
    tg_ops_grad_link,
};
#define N_FAMILIES (sizeof families / sizeof families[0])

/* Ops beyond MAX_OPS are counted but not stored: tg_op_at gives NULL for
 * them, which the registry test reports. */
#define MAX_OPS 512
static const tg_op_def *by_index[MAX_OPS];
static int n_ops;
static tg_hmap by_name; /* name -> index in by_index (the util hash map) */
static bool by_name_ok; /* false when building the map ran out of memory:
                         * lookups then scan by_index */
static pthread_once_t built = PTHREAD_ONCE_INIT;

static void build(void)
{
    by_name = tg__hmap_strings();
    by_name_ok = tg__hmap_reserve(&by_name, MAX_OPS);
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const tg_op_def *const *p = families[f]; *p; p++) {
            if (n_ops++ >= MAX_OPS)
                continue;
            by_index[n_ops - 1] = *p;
            /* a repeated name keeps the first (the registry test fails) */
            if (by_name_ok && tg__hmap_get(&by_name, (*p)->name) < 0)
                tg__hmap_put(&by_name, (*p)->name, n_ops - 1); /* reserved */
        }
}

int tg_op_count(void)
{
    pthread_once(&built, build);
    return n_ops;
}

const tg_op_def *tg_op_at(int i)
{
    pthread_once(&built, build);
    return i >= 0 && i < n_ops && i < MAX_OPS ? by_index[i] : NULL;
}

const tg_op_def *tg_op_find(const char *name)
{
    if (!name)
        return NULL;
    pthread_once(&built, build);
    if (by_name_ok) {
        int i = tg__hmap_get(&by_name, name);
        return i >= 0 ? by_index[i] : NULL;
    }
    for (int i = 0; i < n_ops && i < MAX_OPS; i++)
        if (strcmp(by_index[i]->name, name) == 0)
            return by_index[i];
    return NULL;
}
