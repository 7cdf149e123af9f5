/* Triangular masks of the last two dims: torch.tril / torch.triu with a
 * diagonal offset k, as one op (ONNX Trilu: `upper` picks which). Element
 * (i, j) of every matrix is kept when j - i <= k (lower) or j - i >= k
 * (upper), else zero. Any dtype, any batch dims. The op is linear, so its
 * gradient and tangent are the same mask applied to them. */
#include "autodiff/jvp.h"
#include "ops/nn_util.h"

#include <string.h>

typedef struct trilu_attrs {
    bool upper;
    int64_t diagonal;
} trilu_attrs;
static const tg_attr_spec trilu_specs[] = {
    TG_SPEC_BOOL(trilu_attrs, upper, 0), TG_SPEC_INT(trilu_attrs, diagonal, 0), {0}};

/* PyTorch's names, for messages */
static const char *trilu_name(const trilu_attrs *at) { return at->upper ? "triu" : "tril"; }

static tg_status trilu_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    if (x->ndim < 2)
        return tg__error(TG_ERR_INDEX, "%s: input tensor must have at least 2 dimensions, "
                         "got %d", trilu_name(c->attr), x->ndim);
    return tg_infer_set(c, 0, x->dtype, x->ndim, x->shape);
}

/* ---- kernel: each row of each matrix is one kept run of columns and
 * zeros; the element size is all that depends on the dtype (zero is all
 * bits zero for every dtype) ---- */
typedef struct trilu_task {
    const char *x;
    char *y;
    int64_t rows, cols; /* of one matrix */
    int64_t k;          /* clamped to [-rows - 1, cols + 1]: no overflow */
    size_t es;
    bool upper;
} trilu_task;

static void trilu_rows(void *ctx, int64_t begin, int64_t end)
{
    const trilu_task *t = ctx;
    const int64_t n = t->cols;
    for (int64_t r = begin; r < end; r++) {
        int64_t i = r % t->rows, lo, hi; /* keep columns [lo, hi) */
        if (t->upper) {
            lo = i + t->k;
            hi = n;
        } else {
            lo = 0;
            hi = i + t->k + 1;
        }
        lo = lo < 0 ? 0 : lo > n ? n : lo;
        hi = hi < lo ? lo : hi > n ? n : hi;
        const char *x = t->x + (size_t)(r * n) * t->es;
        char *y = t->y + (size_t)(r * n) * t->es;
        memset(y, 0, (size_t)lo * t->es);
        memcpy(y + (size_t)lo * t->es, x + (size_t)lo * t->es, (size_t)(hi - lo) * t->es);
        memset(y + (size_t)hi * t->es, 0, (size_t)(n - hi) * t->es);
    }
}

static tg_status trilu_kernel(tg_op_ctx *c)
{
    const trilu_attrs *at = c->attr;
    tg_tensor *y = c->out[0];
    if (y->numel == 0)
        return TG_OK;
    tg_tensor *x = tg__nn_contig(c->in[0], y->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    int64_t rows = x->shape[x->ndim - 2], cols = x->shape[x->ndim - 1];
    int64_t k = at->diagonal;
    k = k < -rows - 1 ? -rows - 1 : k > cols + 1 ? cols + 1 : k;
    trilu_task t = {.x = tg__base(x), .y = tg__base(y), .rows = rows, .cols = cols, .k = k,
                    .es = tg_dtype_size(y->dtype), .upper = at->upper};
    tg__nn_parallel(x->numel / cols, cols, trilu_rows, &t);
    tg_release(x);
    return TG_OK;
}

/* linear: the gradient is the same mask on dy */
static tg_status trilu_grad(tg_grad_ctx *g)
{
    g->dx[0] = tg_op_call(g->op, 1, &g->dy[0], g->attrs, g->n_attrs);
    return TG_OK;
}

static const tg_arg_spec trilu_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec trilu_out[] = {{"y", TG_DTS_ANY}, {0}};

const tg_op_def tg_op_trilu = {
    .name = "trilu", .n_in = 1, .n_out = 1, .inputs = trilu_in, .outputs = trilu_out,
    .attrs = {trilu_specs, sizeof(trilu_attrs)}, .flags = TG_OP_PURE,
    .infer = trilu_infer, .kernel = {[TG_CPU] = trilu_kernel}, .grad = trilu_grad,
    .jvp = tg__jvp_linear, .onnx = {"Trilu", 14}};

tg_tensor *tg_tril(tg_tensor *x, int64_t diagonal)
{
    tg_attr a[2] = {TG_AI("upper", 0), TG_AI("diagonal", diagonal)};
    return tg_op_call(&tg_op_trilu, 1, &x, a, 2);
}

tg_tensor *tg_triu(tg_tensor *x, int64_t diagonal)
{
    tg_attr a[2] = {TG_AI("upper", 1), TG_AI("diagonal", diagonal)};
    return tg_op_call(&tg_op_trilu, 1, &x, a, 2);
}

const tg_op_def *const tg_ops_trilu[] = {&tg_op_trilu, NULL};
