/* The one registry of operator definitions: every op family's table, in
 * a fixed order (tg_op_at) and by name through a hash table built once
 * (graphs, ONNX import and tooling look ops up by name). */
#include "ops/op.h"

#include <pthread.h>
#include <string.h>

static const tg_op_def *const *const families[] = {
    tg_ops_elementwise, tg_ops_unary,  tg_ops_compare,
    tg_ops_reduce,
    tg_ops_shape,       tg_ops_array,  tg_ops_linalg,
    tg_ops_conv,        tg_ops_pool,   tg_ops_norm,
    tg_ops_nn,          tg_ops_inplace, tg_ops_graph,
};
#define N_FAMILIES (sizeof families / sizeof families[0])

/* open addressing, linear probing, at most half full. Ops beyond
 * MAX_OPS are counted but not stored: tg_op_at gives NULL for them,
 * which the registry test reports. */
#define MAX_OPS 512
#define TABLE_SIZE (2 * MAX_OPS)
static const tg_op_def *table[TABLE_SIZE];
static const tg_op_def *by_index[MAX_OPS];
static int n_ops;
static pthread_once_t built = PTHREAD_ONCE_INIT;

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void build(void)
{
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const tg_op_def *const *p = families[f]; *p; p++) {
            if (n_ops++ >= MAX_OPS)
                continue;
            by_index[n_ops - 1] = *p;
            uint32_t h = hash((*p)->name) & (TABLE_SIZE - 1);
            while (table[h] && strcmp(table[h]->name, (*p)->name) != 0)
                h = (h + 1) & (TABLE_SIZE - 1);
            if (!table[h]) /* a repeated name keeps the first (the test fails) */
                table[h] = *p;
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
    for (uint32_t h = hash(name) & (TABLE_SIZE - 1); table[h]; h = (h + 1) & (TABLE_SIZE - 1))
        if (strcmp(table[h]->name, name) == 0)
            return table[h];
    return NULL;
}
