/* Classifying floating-point values: isnan (ONNX IsNaN) and isinf with
 * ONNX IsInf's detect_negative / detect_positive (torch.isinf is both,
 * torch.isposinf and torch.isneginf one each). Bool results without
 * gradient (nondiff: a test of a value is piecewise constant). Integer
 * and bool inputs are never NaN or infinite: all false, as in PyTorch. */
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"

#include <math.h>

typedef struct isinf_attrs {
    bool detect_negative, detect_positive;
} isinf_attrs;
static const tg_attr_spec isinf_specs[] = {
    TG_SPEC_BOOL(isinf_attrs, detect_negative, 1), TG_SPEC_BOOL(isinf_attrs, detect_positive, 1),
    {0}};

/* rows over (out bool, in T); ctx: the isinf_attrs, NULL for isnan */
#define CLASS_ROW(NAME, T)                                                     \
    static void NAME(char **p, const int64_t *s, int64_t n, void *ctx)         \
    {                                                                          \
        const isinf_attrs *at = ctx;                                           \
        for (int64_t i = 0; i < n; i++) {                                      \
            T v = *(const T *)(p[1] + i * s[1]);                               \
            bool r = at ? (v == (T)INFINITY && at->detect_positive) ||         \
                              (v == (T)-INFINITY && at->detect_negative)       \
                        : v != v;                                              \
            *(uint8_t *)(p[0] + i * s[0]) = (uint8_t)r;                        \
        }                                                                      \
    }
CLASS_ROW(class_f32, float)
CLASS_ROW(class_f64, double)

static void false_row(char **p, const int64_t *s, int64_t n, void *ctx)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++)
        *(uint8_t *)(p[0] + i * s[0]) = 0;
}

static tg_status class_infer(tg_op_ctx *c)
{
    return tg_infer_set(c, 0, TG_BOOL, c->in[0]->ndim, c->in[0]->shape);
}

static tg_status class_kernel(tg_op_ctx *c)
{
    const tg_tensor *ops[2] = {c->out[0], c->in[0]};
    tg_dtype dt = c->in[0]->dtype;
    tg_iter it;
    tg_iter_init(&it, 2, ops);
    /* the rows test for NaN when given no attributes (c->attr need not be
     * NULL for an op without any) */
    tg_iter_run(&it, dt == TG_FLOAT32 ? class_f32 : dt == TG_FLOAT64 ? class_f64 : false_row,
                c->op->attrs.specs ? (void *)c->attr : NULL);
    return TG_OK;
}

static const tg_arg_spec class_in[] = {{"x", TG_DTS_ANY}, {0}};
static const tg_arg_spec class_out[] = {{"y", TG_DTS_BOOL}, {0}};

const tg_op_def tg_op_isnan = {
    .name = "isnan", .n_in = 1, .n_out = 1, .inputs = class_in, .outputs = class_out,
    .flags = TG_OP_PURE | TG_OP_ELEMENTWISE, .nondiff = true, .infer = class_infer,
    .kernel = {[TG_CPU] = class_kernel}, .onnx = {"IsNaN", 13}};

const tg_op_def tg_op_isinf = {
    .name = "isinf", .n_in = 1, .n_out = 1, .inputs = class_in, .outputs = class_out,
    .attrs = {isinf_specs, sizeof(isinf_attrs)}, .flags = TG_OP_PURE | TG_OP_ELEMENTWISE,
    .nondiff = true, .infer = class_infer, .kernel = {[TG_CPU] = class_kernel},
    .onnx = {"IsInf", 10}};

tg_tensor *tg_isnan(tg_tensor *x) { return tg_op_call(&tg_op_isnan, 1, &x, NULL, 0); }

static tg_tensor *isinf_call(tg_tensor *x, bool negative, bool positive)
{
    tg_attr a[2] = {TG_AI("detect_negative", negative), TG_AI("detect_positive", positive)};
    return tg_op_call(&tg_op_isinf, 1, &x, a, 2);
}

tg_tensor *tg_isinf(tg_tensor *x) { return isinf_call(x, true, true); }
tg_tensor *tg_isposinf(tg_tensor *x) { return isinf_call(x, false, true); }
tg_tensor *tg_isneginf(tg_tensor *x) { return isinf_call(x, true, false); }

/* neither NaN nor infinite: composed, so graphs and ONNX export see the
 * two tests (ONNX has no IsFinite) */
tg_tensor *tg_isfinite(tg_tensor *x)
{
    if (!x)
        return tg_isnan(x); /* the dispatcher's NULL-input error */
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_logical_not(tg_logical_or(tg_isnan(x), tg_isinf(x)));
    TG_LOCAL_RETURN(y);
}

const tg_op_def *const tg_ops_fpclass[] = {&tg_op_isnan, &tg_op_isinf, NULL};
