/* Activation-style nn ops: softmax and log_softmax along any axis (fused,
 * numerically stable kernels whose gradients are written with public ops)
 * and dropout. The losses live in loss.c; both share the nn op table. */
#include "autodiff/jvp.h"
#include "graph/graph_impl.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/vmath.h"
#include "ops/nn_util.h"
#include "ops/softmax.h"

#include <math.h>

/* ---- softmax kernels: x viewed as [outer, n, inner], normalised over n ------------ */
typedef struct sm_task {
    bool f64, log;
    const char *x;
    char *y;
    int64_t n, inner;
} sm_task;

#define SM_BLOCK 256 /* columns handled at once when inner > 1 */

#define SM_KERNEL(SFX, T, EXP, LOG)                                             \
    static void sm_row_##SFX(const sm_task *t, const T *x, T *y)                \
    {                                                                           \
        const int64_t n = t->n;                                                 \
        T m = x[0];                                                             \
        for (int64_t k = 1; k < n; k++)                                         \
            m = x[k] > m ? x[k] : m;                                            \
        double s = 0;                                                           \
        if (t->log) {                                                           \
            for (int64_t k = 0; k < n; k++)                                     \
                s += EXP(x[k] - m);                                             \
            const T lse = m + (T)log(s);                                        \
            for (int64_t k = 0; k < n; k++)                                     \
                y[k] = x[k] - lse;                                              \
        } else {                                                                \
            for (int64_t k = 0; k < n; k++) {                                   \
                T e = EXP(x[k] - m);                                            \
                y[k] = e;                                                       \
                s += e;                                                         \
            }                                                                   \
            const T r = (T)(1.0 / s);                                           \
            for (int64_t k = 0; k < n; k++)                                     \
                y[k] *= r;                                                      \
        }                                                                       \
    }                                                                           \
    /* nb <= SM_BLOCK columns j of stride 1; row k starts at k * inner */       \
    static void sm_cols_##SFX(const sm_task *t, const T *x, T *y, int64_t nb)   \
    {                                                                           \
        const int64_t n = t->n, in = t->inner;                                  \
        T m[SM_BLOCK];                                                          \
        double s[SM_BLOCK];                                                     \
        for (int64_t j = 0; j < nb; j++) {                                      \
            m[j] = x[j];                                                        \
            s[j] = 0;                                                           \
        }                                                                       \
        for (int64_t k = 1; k < n; k++)                                         \
            for (int64_t j = 0; j < nb; j++)                                    \
                m[j] = x[k * in + j] > m[j] ? x[k * in + j] : m[j];             \
        for (int64_t k = 0; k < n; k++)                                         \
            for (int64_t j = 0; j < nb; j++) {                                  \
                T e = EXP(x[k * in + j] - m[j]);                                \
                if (!t->log)                                                    \
                    y[k * in + j] = e;                                          \
                s[j] += e;                                                      \
            }                                                                   \
        for (int64_t j = 0; j < nb; j++)                                        \
            m[j] = t->log ? m[j] + (T)LOG(s[j]) : (T)(1.0 / s[j]);              \
        for (int64_t k = 0; k < n; k++)                                         \
            for (int64_t j = 0; j < nb; j++) {                                  \
                if (t->log)                                                     \
                    y[k * in + j] = x[k * in + j] - m[j];                       \
                else                                                            \
                    y[k * in + j] *= m[j];                                      \
            }                                                                   \
    }                                                                           \
    static void sm_outer_##SFX(const sm_task *t, int64_t o)                     \
    {                                                                           \
        const T *x = (const T *)t->x + o * t->n * t->inner;                     \
        T *y = (T *)t->y + o * t->n * t->inner;                                 \
        if (t->inner == 1) {                                                    \
            sm_row_##SFX(t, x, y);                                              \
            return;                                                             \
        }                                                                       \
        for (int64_t j = 0; j < t->inner; j += SM_BLOCK) {                      \
            int64_t nb = t->inner - j < SM_BLOCK ? t->inner - j : SM_BLOCK;     \
            sm_cols_##SFX(t, x + j, y + j, nb);                                 \
        }                                                                       \
    }

SM_KERNEL(f32, float, expf, log)
SM_KERNEL(f64, double, exp, log)

#define SM_LANES 16 /* independent maxima and sums: the vector width of AVX-512 */

/* a float32 row along the last axis in lanes that vectorize, with the exp
 * of kernels/cpu/vmath.h (libm's expf is a scalar call); the sum in float
 * over 16 partial sums (the plain loops sum in double, one element after
 * another). NaN propagates as there: a NaN element makes its sum NaN. */
TG_ISA_DISPATCH(static, void, sm_row_vec_f32, (const float *x, float *y, int64_t n, bool log),
                (x, y, n, log))
{
    float mx[SM_LANES], acc[SM_LANES];
    for (int j = 0; j < SM_LANES; j++) {
        mx[j] = x[0];
        acc[j] = 0;
    }
    int64_t k = 0;
    for (; k + SM_LANES <= n; k += SM_LANES)
        for (int j = 0; j < SM_LANES; j++)
            mx[j] = x[k + j] > mx[j] ? x[k + j] : mx[j];
    float m = mx[0];
    for (int j = 1; j < SM_LANES; j++)
        m = mx[j] > m ? mx[j] : m;
    for (; k < n; k++)
        m = x[k] > m ? x[k] : m;
    for (k = 0; k + SM_LANES <= n; k += SM_LANES)
        for (int j = 0; j < SM_LANES; j++) {
            float e = tg__vexpf(x[k + j] - m);
            if (!log)
                y[k + j] = e;
            acc[j] += e;
        }
    float s = 0;
    for (; k < n; k++) {
        float e = tg__vexpf(x[k] - m);
        if (!log)
            y[k] = e;
        s += e;
    }
    for (int j = 0; j < SM_LANES; j++)
        s += acc[j];
    if (log) {
        const float lse = m + logf(s);
        for (k = 0; k < n; k++)
            y[k] = x[k] - lse;
    } else {
        const float r = 1.0f / s;
        for (k = 0; k < n; k++)
            y[k] *= r;
    }
}

/* Short rows (sm_short_limit): the exps of a block of rows in one vector
 * loop over the block (row by row, a row of 10 is a scalar tail of 10
 * polynomials), each element's row maximum, then its scale, read from a
 * buffer filled per row. The maximum and the sum of each row are taken in
 * sm_row_vec_f32's order (below), and every element gets the same
 * operations, so the bits are that function's. */
#define SM_BLOCK_ELEMS 1024
/* Which rows take the block path, by measurement (one thread, rows of 64
 * to 4096 floats): with AVX-512 it is faster up to 256 (1.3x at 64) and
 * 5-10% slower on longer rows, where the row loop runs whole vectors;
 * below AVX-512 GCC does not vectorize the row loop (its store under a
 * condition), and the block path is 1.4x (AVX2) to 4.4x (the baseline)
 * faster at every length it holds */
static int64_t sm_short_limit(void)
{
    return tg__cpu_isa() == TG_ISA_AVX512 ? 256 : SM_BLOCK_ELEMS;
}

/* sm_row_vec_f32's maximum: 16 lanes from x[0], then the tail */
static inline float sm_max_lanes(const float *x, int64_t n)
{
    float m = x[0];
    int64_t k = 0;
    if (n >= SM_LANES) {
        float mx[SM_LANES];
        for (int j = 0; j < SM_LANES; j++)
            mx[j] = x[0];
        for (; k + SM_LANES <= n; k += SM_LANES)
            for (int j = 0; j < SM_LANES; j++)
                mx[j] = x[k + j] > mx[j] ? x[k + j] : mx[j];
        m = mx[0];
        for (int j = 1; j < SM_LANES; j++)
            m = mx[j] > m ? mx[j] : m;
    }
    for (; k < n; k++)
        m = x[k] > m ? x[k] : m;
    return m;
}

/* sm_row_vec_f32's sum of the exps e: 16 lanes, the tail, then the lanes
 * (all zero, adding nothing, under 16 elements) */
static inline float sm_sum_lanes(const float *e, int64_t n)
{
    float s = 0;
    int64_t k = n - n % SM_LANES;
    for (int64_t i = k; i < n; i++)
        s += e[i];
    if (n >= SM_LANES) {
        float acc[SM_LANES] = {0};
        for (int64_t b = 0; b < k; b += SM_LANES)
            for (int j = 0; j < SM_LANES; j++)
                acc[j] += e[b + j];
        for (int j = 0; j < SM_LANES; j++)
            s += acc[j];
    }
    return s;
}

/* the same for 8 rows of n at x, each in its own order, side by side: one
 * row's chain of dependent maxima or adds waits on the latency (four
 * cycles an element); eight independent chains do not */
#define SM_GROUP 8
static inline void sm_max_group(const float *x, int64_t n, float *m)
{
    if (n >= SM_LANES) {
        for (int r = 0; r < SM_GROUP; r++)
            m[r] = sm_max_lanes(x + r * n, n);
        return;
    }
    for (int r = 0; r < SM_GROUP; r++)
        m[r] = x[r * n];
    for (int64_t k = 0; k < n; k++)
        for (int r = 0; r < SM_GROUP; r++)
            m[r] = x[r * n + k] > m[r] ? x[r * n + k] : m[r];
}
static inline void sm_sum_group(const float *e, int64_t n, float *s)
{
    int64_t k = n - n % SM_LANES;
    for (int r = 0; r < SM_GROUP; r++)
        s[r] = 0;
    for (int64_t i = k; i < n; i++)
        for (int r = 0; r < SM_GROUP; r++)
            s[r] += e[r * n + i];
    if (n < SM_LANES)
        return;
    float acc[SM_GROUP][SM_LANES] = {{0}};
    for (int r = 0; r < SM_GROUP; r++)
        for (int64_t b = 0; b < k; b += SM_LANES)
            for (int j = 0; j < SM_LANES; j++)
                acc[r][j] += e[r * n + b + j];
    for (int j = 0; j < SM_LANES; j++)
        for (int r = 0; r < SM_GROUP; r++)
            s[r] += acc[r][j];
}

/* the block's loops, each a function of its own with restrict pointers:
 * what lets GCC vectorize them (e may be y, which may be x's buffer) */
static inline void sm_exp_block(float *restrict e, const float *restrict x,
                                const float *restrict m, int64_t len)
{
    for (int64_t i = 0; i < len; i++)
        e[i] = tg__vexpf(x[i] - m[i]);
}
static inline void sm_sub_block(float *restrict y, const float *restrict x,
                                const float *restrict v, int64_t len)
{
    for (int64_t i = 0; i < len; i++)
        y[i] = x[i] - v[i];
}
static inline void sm_scale_block(float *y, const float *restrict v, int64_t len)
{
    for (int64_t i = 0; i < len; i++)
        y[i] *= v[i];
}

TG_ISA_DISPATCH(static, void, sm_rows_short_f32,
                (const float *x, float *y, int64_t rows, int64_t n, bool log),
                (x, y, rows, n, log))
{
    float per_elem[SM_BLOCK_ELEMS], ex[SM_BLOCK_ELEMS], st[SM_BLOCK_ELEMS]; /* st: per row */
    const int64_t per = SM_BLOCK_ELEMS / n;
    for (int64_t r0 = 0; r0 < rows; r0 += per) {
        const int64_t nr = rows - r0 < per ? rows - r0 : per, len = nr * n;
        const float *xb = x + r0 * n;
        float *yb = y + r0 * n, *e = log ? ex : yb;
        int64_t r = 0;
        for (; r + SM_GROUP <= nr; r += SM_GROUP)
            sm_max_group(xb + r * n, n, st + r);
        for (; r < nr; r++)
            st[r] = sm_max_lanes(xb + r * n, n);
        for (r = 0; r < nr; r++)
            for (int64_t k = 0; k < n; k++)
                per_elem[r * n + k] = st[r];
        sm_exp_block(e, xb, per_elem, len);
        for (r = 0; r + SM_GROUP <= nr; r += SM_GROUP)
            sm_sum_group(e + r * n, n, st + r);
        for (; r < nr; r++)
            st[r] = sm_sum_lanes(e + r * n, n);
        for (r = 0; r < nr; r++) {
            float v = log ? per_elem[r * n] + logf(st[r]) : 1.0f / st[r];
            for (int64_t k = 0; k < n; k++)
                per_elem[r * n + k] = v;
        }
        if (log)
            sm_sub_block(yb, xb, per_elem, len);
        else
            sm_scale_block(yb, per_elem, len); /* e is yb */
    }
}

static void sm_range(void *ctx, int64_t b, int64_t e)
{
    const sm_task *t = ctx;
    if (!t->f64 && t->inner == 1 && t->n <= sm_short_limit()) {
        sm_rows_short_f32((const float *)t->x + b * t->n, (float *)t->y + b * t->n, e - b,
                          t->n, t->log);
        return;
    }
    for (int64_t o = b; o < e; o++) {
        if (t->f64)
            sm_outer_f64(t, o);
        else if (t->inner == 1)
            sm_row_vec_f32((const float *)t->x + o * t->n, (float *)t->y + o * t->n, t->n,
                           t->log);
        else
            sm_outer_f32(t, o);
    }
}

/* ---- softmax and log_softmax ops ------------------------------------------------- */
typedef tg_softmax_attrs sm_attrs;
const tg_attr_spec tg_softmax_specs[] = {TG_SPEC_INT(sm_attrs, axis, -1), {0}};
#define sm_specs tg_softmax_specs

static tg_status sm_infer(tg_op_ctx *c)
{
    const tg_tensor *x = c->in[0];
    int64_t axis = ((const sm_attrs *)c->attr)->axis;
    int a;
    tg_status s = tg_require_float(c->op->name, x, 0);
    if (s == TG_OK && !tg__norm_axis(c->op->name, (int)axis, x->ndim ? x->ndim : 1, &a))
        s = tg_last_status();
    return s != TG_OK ? s : tg_infer_set(c, 0, x->dtype, x->ndim, x->shape);
}

static tg_status sm_kernel(tg_op_ctx *c)
{
    tg_tensor *x = tg__nn_contig(c->in[0], c->in[0]->dtype);
    if (!x)
        return TG_ERR_NOMEM;
    int a = (int)((const sm_attrs *)c->attr)->axis;
    if (a < 0)
        a += x->ndim;
    sm_task t = {.f64 = x->dtype == TG_FLOAT64, .log = c->op->name[0] == 'l',
                 .x = tg__base(x), .y = tg__base(c->out[0]),
                 .n = x->ndim ? x->shape[a] : 1, .inner = 1};
    for (int i = a + 1; i < x->ndim; i++)
        t.inner *= x->shape[i];
    if (t.n > 0 && t.inner > 0)
        tg__nn_parallel(x->numel / (t.n * t.inner), 3 * t.n * t.inner, sm_range, &t);
    tg_release(x);
    return TG_OK;
}

static int rule_axis(const tg_grad_ctx *g)
{
    return (int)((const sm_attrs *)g->attr)->axis;
}

/* dx = y * (dy - sum(dy * y, axis)): one op (softmax_grad.c) */
static tg_status softmax_rule(tg_grad_ctx *g)
{
    g->dx[0] = tg__softmax_grad(g->dy[0], g->out[0], rule_axis(g));
    return TG_OK;
}

/* dx = dy - exp(y) * sum(dy, axis) */
static tg_status log_softmax_rule(tg_grad_ctx *g)
{
    tg_tensor *y = g->out[0], *dy = g->dy[0];
    int a = rule_axis(g);
    tg_tensor *sdy = g->in_meta[0].ndim ? tg_sum(dy, 1, &a, true) : dy;
    g->dx[0] = tg_sub(dy, tg_mul(tg_exp(y), sdy));
    return TG_OK;
}

/* y * (t - sum(t y)) */
static tg_status softmax_jvp(tg_jvp_ctx *c)
{
    int a = (int)((const sm_attrs *)c->attr)->axis;
    tg_tensor *y = c->out[0], *ty = tg_mul(c->dx[0], y);
    tg_tensor *dot = c->in_meta[0].ndim ? tg_sum(ty, 1, &a, true) : ty;
    return tg__jvp_set(c, 0, tg_mul(y, tg_sub(c->dx[0], dot)));
}

/* t - sum(t softmax(x)) */
static tg_status log_softmax_jvp(tg_jvp_ctx *c)
{
    int a = (int)((const sm_attrs *)c->attr)->axis;
    tg_tensor *tp = tg_mul(c->dx[0], tg_exp(c->out[0]));
    return tg__jvp_set(c, 0, tg_sub(c->dx[0], c->in_meta[0].ndim ? tg_sum(tp, 1, &a, true)
                                                                  : tp));
}

static const tg_arg_spec sm_in[] = {{"x", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec sm_out[] = {{"y", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_softmax = {
    .name = "softmax", .n_in = 1, .n_out = 1, .inputs = sm_in, .outputs = sm_out,
    .attrs = {sm_specs, sizeof(sm_attrs)}, .flags = TG_OP_PURE, .save_outputs = 1u,
    .infer = sm_infer, .kernel = {[TG_CPU] = sm_kernel}, .grad = softmax_rule,
    .jvp = softmax_jvp, .onnx = {"Softmax", 13}};
const tg_op_def tg_op_log_softmax = {
    .name = "log_softmax", .n_in = 1, .n_out = 1, .inputs = sm_in, .outputs = sm_out,
    .attrs = {sm_specs, sizeof(sm_attrs)}, .flags = TG_OP_PURE, .save_outputs = 1u,
    .infer = sm_infer, .kernel = {[TG_CPU] = sm_kernel}, .grad = log_softmax_rule,
    .jvp = log_softmax_jvp, .onnx = {"LogSoftmax", 13}};

static tg_tensor *sm_call(const tg_op_def *op, tg_tensor *x, int axis)
{
    int a;
    if (!tg__nn_have(op->name, x, "input"))
        return NULL;
    if (!tg__norm_axis(op->name, axis, x->ndim ? x->ndim : 1, &a))
        return NULL;
    tg_attr attr = TG_AI("axis", a);
    return tg_op_call(op, 1, &x, &attr, 1);
}

tg_tensor *tg_softmax(tg_tensor *x, int axis) { return sm_call(&tg_op_softmax, x, axis); }

tg_tensor *tg_log_softmax(tg_tensor *x, int axis)
{
    return sm_call(&tg_op_log_softmax, x, axis);
}

/* ---- dropout: x * mask / (1 - p), mask ~ Bernoulli(1 - p) --------------------------- */
tg_tensor *tg_dropout(tg_tensor *x, double p, bool training, tg_generator *gen)
{
    if (!tg__nn_have("dropout", x, "input"))
        return NULL;
    if (!(p >= 0 && p <= 1))
        return tg__error_null(TG_ERR_ARG, "dropout: probability p must be in [0, 1], "
                              "got %g", p);
    if (tg_require_float("dropout", x, 0) != TG_OK)
        return NULL;
    if (!training || p == 0)
        return tg__publish(tg_retain(x));
    if (p < 1 && !gen)
        return tg__error_null(TG_ERR_ARG, "dropout: a generator is needed in training "
                              "mode (gen is NULL)");
    TG_LOCAL_BEGIN();
    tg_tensor *y;
    if (p == 1) { /* everything dropped; the gradient is zero, not NaN */
        y = tg_mul(x, tg_scalar(x->dtype, 0.0));
    } else {
        /* in a graph the mask is a random node drawing from gen at every
         * run (a mask drawn now would be a constant); the draws are the
         * eager ones, from the same generator state */
        bool graph = x->graph || tg_graph_current();
        tg_tensor *keep = graph ? tg__graph_bernoulli_like(x, gen, 1.0 - p)
                                   : tg_rand_bernoulli(gen, x->ndim, x->shape, 1.0 - p);
        y = tg_mul(x, tg_mul_scalar(tg_cast(keep, x->dtype), 1.0 / (1.0 - p)));
    }
    TG_LOCAL_RETURN(y);
}

extern const tg_op_def tg_op_nll_loss, tg_op_nll_loss_grad, tg_op_bce_with_logits;

const tg_op_def *const tg_ops_nn[] = {
    &tg_op_softmax, &tg_op_log_softmax, &tg_op_nll_loss, &tg_op_nll_loss_grad,
    &tg_op_bce_with_logits, NULL,
};
