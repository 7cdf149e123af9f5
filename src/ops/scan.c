/* Scans along one axis: cumsum (torch.cumsum, with ONNX CumSum's
 * exclusive and reverse options). */
#include "autodiff/jvp.h"
#include "ops/nn_util.h"

/* ---- kernel: x viewed as [outer, n, inner], one column (o, j) at a time ----
 * Sums accumulate in double for floats (float32 too, as PyTorch's CPU
 * kernel does) and in wrapping unsigned arithmetic for int64. */
typedef struct scan_task {
    const char *x;
    char *y;
    int64_t n, inner;
    bool exclusive, reverse;
} scan_task;

#define SCAN_ROWS(SFX, T, ACC)                                                  \
    static void scan_##SFX(void *ctx, int64_t begin, int64_t end)               \
    {                                                                           \
        const scan_task *t = ctx;                                               \
        const int64_t n = t->n, in = t->inner;                                  \
        for (int64_t c = begin; c < end; c++) {                                 \
            int64_t base = (c / in) * n * in + c % in;                          \
            const T *x = (const T *)t->x + base;                                \
            T *y = (T *)t->y + base;                                            \
            ACC acc = 0;                                                        \
            for (int64_t s = 0; s < n; s++) {                                   \
                int64_t k = (t->reverse ? n - 1 - s : s) * in;                  \
                if (t->exclusive) {                                             \
                    y[k] = (T)acc;                                              \
                    acc += (ACC)x[k];                                           \
                } else {                                                        \
                    acc += (ACC)x[k];                                           \
                    y[k] = (T)acc;                                              \
                }                                                               \
            }                                                                   \
        }                                                                       \
    }
SCAN_ROWS(f32, float, double)
SCAN_ROWS(f64, double, double)
SCAN_ROWS(i64, int64_t, uint64_t)

/* ---- the op ---------------------------------------------------------------------- */
typedef struct cumsum_attrs {
    int64_t axis;
    bool exclusive, reverse;
} cumsum_attrs;
static const tg_attr_spec cumsum_specs[] = {
    TG_SPEC_INT(cumsum_attrs, axis, 0, TG_REQUIRED), TG_SPEC_BOOL(cumsum_attrs, exclusive, 0),
    TG_SPEC_BOOL(cumsum_attrs, reverse, 0), {0}};

/* the axis, normalised; a 0-d tensor scans its one element (axis 0 or -1) */
static bool scan_axis(const char *op, int64_t axis, int ndim, int *out)
{
    if (axis < -TG_MAX_DIMS - 1 || axis > TG_MAX_DIMS) {
        tg__error(TG_ERR_INDEX, "%s: axis %lld is out of range for a tensor of %d dims", op,
                  (long long)axis, ndim);
        return false;
    }
    return tg__norm_axis(op, (int)axis, ndim ? ndim : 1, out);
}

/* PyTorch's dtypes: floats keep theirs, integers and bool sum as int64 */
static tg_status cumsum_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    int a;
    if (!scan_axis(c->op->name, ((const cumsum_attrs *)c->attr)->axis, x->ndim, &a))
        return tg_last_status();
    tg_dtype dt = tg_dtype_is_float(x->dtype) ? x->dtype : TG_INT64;
    return tg_infer_set(c, 0, dt, x->ndim, x->shape);
}

static tg_status cumsum_kernel(tg_op_ctx *c)
{
    const cumsum_attrs *at = c->attr;
    tg_tensor *y = c->out[0];
    tg_tensor *x = tg__nn_contig(c->in[0], y->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    int a;
    scan_axis(c->op->name, at->axis, x->ndim, &a);
    scan_task t = {.x = tg__base(x), .y = tg__base(y), .n = x->ndim ? x->shape[a] : 1,
                   .inner = 1, .exclusive = at->exclusive, .reverse = at->reverse};
    for (int i = a + 1; i < x->ndim; i++)
        t.inner *= x->shape[i];
    tg_range_fn fn = y->dtype == TG_FLOAT32 ? scan_f32 : y->dtype == TG_FLOAT64 ? scan_f64
                                                                              : scan_i64;
    if (t.n > 0 && t.inner > 0)
        tg__nn_parallel(x->numel / t.n, t.n, fn, &t);
    tg_release(x);
    return TG_OK;
}

/* the adjoint of a scan is the scan the other way: each input element
 * reaches the outputs at and after it (before it, when reversed) */
static tg_status cumsum_grad(tg_grad_ctx *g)
{
    const cumsum_attrs *at = g->attr;
    g->dx[0] = tg_cumsum(g->dy[0], (int)at->axis, at->exclusive, !at->reverse);
    return TG_OK;
}

static const tg_arg_spec scan_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec scan_out[] = {{"y", TG_DTS_FLOAT | TG_DT(TG_INT64)}, {0}};

const tg_op_def tg_op_cumsum = {
    .name = "cumsum", .n_in = 1, .n_out = 1, .inputs = scan_in, .outputs = scan_out,
    .attrs = {cumsum_specs, sizeof(cumsum_attrs)}, .flags = TG_OP_PURE,
    .infer = cumsum_infer, .kernel = {[TG_CPU] = cumsum_kernel}, .grad = cumsum_grad,
    .jvp = tg__jvp_linear, .onnx = {"CumSum", 14}};

tg_tensor *tg_cumsum(tg_tensor *x, int axis, bool exclusive, bool reverse)
{
    tg_attr a[3] = {TG_AI("axis", axis), TG_AI("exclusive", exclusive),
                    TG_AI("reverse", reverse)};
    return tg_op_call(&tg_op_cumsum, 1, &x, a, 3);
}

const tg_op_def *const tg_ops_scan[] = {&tg_op_cumsum, NULL};
