/* A pointwise convolution, its activation, the depthwise convolution after
 * it and that one's activation as one node: the kernel
 * (tg__conv_pwdw_forward) bitwise equal to the two layers apart at every
 * instruction set it runs at, both dtypes, every activation, strides,
 * dilations, 3x3 and 5x5 filters, channel counts that leave lanes empty,
 * planes cut into strips, NaN and infinities; the level-2 pass
 * fuse_pw_dw on inference graphs (results bitwise equal to level 0) and
 * where it must not apply; the op's errors. */
#include "harness.h"
#include "core/tensor_impl.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_pwdw.h"
#include "kernels/cpu/cpu.h"
#include "ops/op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tg__storage_freeze(tg_tensor *t);

typedef struct shape {
    int64_t n, c, e, h, w, k, stride, pad, dil;
} shape;

static const shape shapes[] = {
    {1, 16, 96, 20, 20, 3, 2, 1, 1},  /* MobileNetV2's stride-2 blocks */
    {2, 5, 21, 9, 11, 3, 1, 1, 1},    /* lanes left empty, odd planes, two images */
    {1, 7, 33, 13, 10, 5, 1, 2, 1},   /* 5x5 (MobileNetV3) */
    {3, 4, 17, 12, 12, 3, 2, 0, 1},   /* no padding */
    {1, 3, 8, 10, 9, 3, 1, 2, 2},     /* dilated */
    {1, 8, 40, 120, 100, 3, 1, 1, 1}, /* a plane cut into strips of rows */
    {1, 256, 16, 9, 9, 3, 1, 1, 1},   /* the most input channels it takes */
};

typedef struct acts {
    tg__conv_act a1, a2;
} acts;

static const acts act_pairs[] = {
    {{TG_CONV_ACT_CLAMP, 0, 6}, {TG_CONV_ACT_CLAMP, 0, 6}},
    {{TG_CONV_ACT_RELU, 0, 0}, {TG_CONV_ACT_NONE, 0, 0}},
    {{TG_CONV_ACT_HARDSWISH, 0, 0}, {TG_CONV_ACT_HARDSWISH, 0, 0}},
    {{TG_CONV_ACT_CLAMP, -0.5, 0.75}, {TG_CONV_ACT_RELU, 0, 0}},
};

static void geoms(const shape *s, tg__conv_geom *pw, tg__conv_geom *dw)
{
    int64_t span = (s->k - 1) * s->dil + 1;
    int64_t oh = (s->h + 2 * s->pad - span) / s->stride + 1;
    int64_t ow = (s->w + 2 * s->pad - span) / s->stride + 1;
    *pw = (tg__conv_geom){.n = s->n, .c = s->c, .h = s->h, .w = s->w, .o = s->e, .kh = 1,
                          .kw = 1, .oh = s->h, .ow = s->w, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                          .groups = 1, .w_serial = UINT64_MAX - 7, .w_version = 1};
    *dw = (tg__conv_geom){.n = s->n, .c = s->e, .h = s->h, .w = s->w, .o = s->e, .kh = s->k,
                          .kw = s->k, .oh = oh, .ow = ow, .sh = s->stride, .sw = s->stride,
                          .ph = s->pad, .pw = s->pad, .dh = s->dil, .dw = s->dil,
                          .groups = s->e};
}

/* n values in [-2, 2], NaN and infinities here and there when specials */
static void *values(tg_dtype dt, int64_t n, bool specials, uint32_t seed)
{
    void *p = malloc((size_t)n * tg_dtype_size(dt) + 1);
    for (int64_t i = 0; p && i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        double v = (double)(seed >> 8) / 4194304.0 - 2;
        if (specials && i % 97 == 13)
            v = NAN;
        else if (specials && i % 89 == 5)
            v = (i / 89) % 2 ? INFINITY : -INFINITY;
        if (dt == TG_FLOAT64)
            ((double *)p)[i] = v;
        else
            ((float *)p)[i] = (float)v;
    }
    return p;
}

/* the fused kernel against the pointwise layer, then the depthwise one */
static void check_kernel(tg_dtype dt, const shape *s, const acts *a, bool specials)
{
    tg__conv_geom pw, dw;
    geoms(s, &pw, &dw);
    CHECK(tg__conv_pwdw_fits(dt, &pw, &dw));
    size_t z = tg_dtype_size(dt);
    int64_t n_mid = s->n * s->e * s->h * s->w, n_out = s->n * s->e * dw.oh * dw.ow;
    void *x = values(dt, s->n * s->c * s->h * s->w, specials, 1);
    void *w1 = values(dt, s->e * s->c, false, 2), *b1 = values(dt, s->e, false, 3);
    void *w2 = values(dt, s->e * s->k * s->k, false, 4), *b2 = values(dt, s->e, false, 5);
    void *mid = malloc((size_t)n_mid * z), *y0 = malloc((size_t)n_out * z),
         *y1 = malloc((size_t)n_out * z);
    CHECK(x && w1 && b1 && w2 && b2 && mid && y0 && y1);
    for (int bias = 0; bias < 2; bias++) { /* with and without the biases */
        const void *c1 = bias ? b1 : NULL, *c2 = bias ? b2 : NULL;
        CHECK_OK(tg__conv2d_forward_act(dt, &pw, x, w1, c1, &a->a1, mid));
        CHECK_OK(tg__conv2d_forward_act(dt, &dw, mid, w2, c2, &a->a2, y0));
        memset(y1, 0xa5, (size_t)n_out * z);
        CHECK_OK(tg__conv_pwdw_forward(dt, &pw, &dw, x, w1, c1, &a->a1, w2, c2, &a->a2, y1));
        if (memcmp(y0, y1, (size_t)n_out * z))
            tt_fail(__FILE__, __LINE__, "%s %lldx%lld k%lld s%lld: not the two layers' bits",
                    tg_dtype_name(dt), (long long)s->h, (long long)s->w, (long long)s->k,
                    (long long)s->stride);
    }
    free(x), free(w1), free(b1), free(w2), free(b2), free(mid), free(y0), free(y1);
}

static void test_kernel_every_isa(void)
{
    /* on 1 thread; on 2 and 3, units of two channel blocks or, where
     * those would be few per thread, of one, claimed as the threads come */
    for (int threads = 1; threads <= 3; threads++) {
        tg_set_num_threads(threads);
        for (int isa = TG_ISA_AVX2; isa <= (int)tg__cpu_detected(); isa++) {
            tg__cpu_force((tg__isa)isa);
            for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
                for (size_t a = 0; a < sizeof act_pairs / sizeof *act_pairs; a++)
                    for (int d = 0; d < 2; d++)
                        check_kernel(d ? TG_FLOAT64 : TG_FLOAT32, &shapes[k], &act_pairs[a],
                                     a == 0);
        }
    }
    tg_set_num_threads(2);
    tg__cpu_force(tg__cpu_detected());
}

/* what the kernel does not take */
static void test_kernel_declines(void)
{
    tg__conv_geom pw, dw;
    geoms(&shapes[0], &pw, &dw);
    tg__conv_geom strided = pw, padded = pw, wide = pw, dense = dw;
    strided.sh = 2;
    padded.ph = 1;
    wide.c = 257;
    dense.groups = 1;
    CHECK(!tg__conv_pwdw_fits(TG_FLOAT32, &strided, &dw));
    CHECK(!tg__conv_pwdw_fits(TG_FLOAT32, &padded, &dw));
    CHECK(!tg__conv_pwdw_fits(TG_FLOAT32, &wide, &dw));
    CHECK(!tg__conv_pwdw_fits(TG_FLOAT32, &pw, &dense));
    CHECK(!tg__conv_pwdw_fits(TG_INT32, &pw, &dw));
    /* where it pays: AVX-512 above 8x8, AVX2 above 20x20, not at the
     * baseline (the pointwise layer may take OpenBLAS there) */
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++) {
        tg__cpu_force((tg__isa)isa);
        CHECK(tg__conv_pwdw_pays(8 * 8) == false);
        CHECK(tg__conv_pwdw_pays(9 * 9) == (isa == TG_ISA_AVX512));
        CHECK(tg__conv_pwdw_pays(28 * 28) == (isa != TG_ISA_GENERIC));
    }
    tg__cpu_force(tg__cpu_detected());
}

/* ---- the pass ---------------------------------------------------------------------- */
/* pass fuse_pw_dw's count "fused" fetching f from x at level 2 */
static int fused(tg_session *s, tg_tensor *x, int n_fetch, tg_tensor **f)
{
    return tt_pass_count(s, x, n_fetch, f, "fuse_pw_dw", "fused");
}

static tg_tensor *frozen(tg_dtype dt, int ndim, const int64_t *shape)
{
    tg_tensor *t = tt_rand_dtype(dt, ndim, shape, -1, 1);
    tg__storage_freeze(t);
    return t;
}

static tg_tensor *input(tg_dtype dt, const shape *q)
{
    int64_t n = q->n * q->c * q->h * q->w;
    void *v = values(TG_FLOAT64, n, true, 9u);
    tg_tensor *t = tt_tensor(dt, 4, (int64_t[]){q->n, q->c, q->h, q->w}, v);
    free(v);
    return t;
}

/* one block's two layers with the weights frozen (an imported model's):
 * fused where it pays (AVX-512); not frozen: left apart (they may take
 * OpenBLAS); the same bits as level 0 either way */
static void test_pass_levels_equal(void)
{
    static const int which[] = {0, 1, 2, 5}; /* the last fuses with AVX2 too */
    for (size_t k = 0; k < sizeof which / sizeof *which; k++)
        for (int d = 0; d < 2; d++)
            for (int fz = 0; fz < 2; fz++) {
                const shape *q = &shapes[which[k]];
                tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
                tg_graph *g = tg_graph_new("pw_dw");
                tg_tensor *x = tg_placeholder(g, "x", dt, 4,
                                              (int64_t[]){q->n, q->c, q->h, q->w});
                int64_t s1[4] = {q->e, q->c, 1, 1}, s2[4] = {q->e, 1, q->k, q->k};
                tg_tensor *w1 = fz ? frozen(dt, 4, s1) : tt_rand_dtype(dt, 4, s1, -1, 1);
                tg_tensor *w2 = fz ? frozen(dt, 4, s2) : tt_rand_dtype(dt, 4, s2, -1, 1);
                tg_tensor *b1 = tt_rand_dtype(dt, 1, &q->e, -1, 1);
                tg_tensor *b2 = tt_rand_dtype(dt, 1, &q->e, -1, 1);
                /* another block's weights: common subexpressions would merge */
                tg_tensor *v1 = fz ? frozen(dt, 4, s1) : tt_rand_dtype(dt, 4, s1, -1, 1);
                tg_conv2d_opts o = {{(int)q->stride, (int)q->stride},
                                    {(int)q->pad, (int)q->pad},
                                    {(int)q->dil, (int)q->dil}, (int)q->e};
                CHECK_OK(tg_graph_begin(g));
                tg_tensor *e = tg_clamp(tg_conv2d(x, w1, b1, NULL), 0, 6);
                tg_tensor *y = tg_clamp(tg_conv2d(e, w2, b2, &o), 0, 6);
                tg_tensor *z = tg_hardswish(tg_conv2d(tg_relu(tg_conv2d(x, v1, b1, NULL)), w2,
                                                      b2, &o));
                CHECK_OK(tg_graph_end());
                tg_session *s = tg_session_new(g);
                tg_tensor *f[2] = {y, z};
                bool pays = tg__conv_pwdw_pays(q->h * q->w);
                CHECK(fused(s, x, 2, f) == (fz && pays ? 2 : 0));
                tg_tensor *xv = input(dt, q);
                CHECK_LEVELS_EQUAL(s, x, xv, 2, f);
                tg_session_free(s);
                tg_graph_free(g);
            }
}

/* the activation fetched, read elsewhere or differentiated, a pointwise
 * layer with a stride, another op between, a 7x7 plane, mixed dtypes,
 * weights not frozen, a plane too small at the level: nothing fused */
static void test_pass_declines(void)
{
    const shape q = {1, 4, 12, 10, 10, 3, 1, 1, 1};
    tg_graph *g = tg_graph_new("pw_dw_no");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, (int64_t[]){1, 4, 10, 10});
    tg_tensor *x7 = tg_placeholder(g, "x7", TG_FLOAT32, 4, (int64_t[]){1, 4, 7, 7});
    tg_tensor *w1 = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){12, 4, 1, 1}, -1, 1);
    tg_tensor *w2 = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){12, 1, 3, 3}, -1, 1);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){12}, -1, 1);
    tg_tensor *w1d = tt_rand_dtype(TG_FLOAT64, 4, (int64_t[]){12, 4, 1, 1}, -1, 1);
    tg_tensor *w1f = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){12, 4, 1, 1}, -1, 1);
    tg__storage_freeze(w1);
    tg__storage_freeze(w1d);
    tg_tensor *w1v = tg_variable_ref(g, "w1", w1f);
    tg_conv2d_opts dwo = {{1, 1}, {1, 1}, {1, 1}, 12}, s2 = {{2, 2}, {0, 0}, {1, 1}, 1};
    CHECK_OK(tg_graph_begin(g));
    tg_tensor *e = tg_relu(tg_conv2d(x, w1, b, NULL));
    tg_tensor *y = tg_relu(tg_conv2d(e, w2, b, &dwo));
    tg_tensor *ys = tg_relu(tg_conv2d(tg_relu(tg_conv2d(x, w1, b, &s2)), w2, b, &dwo));
    tg_tensor *yt = tg_relu(tg_conv2d(tg_tanh(tg_conv2d(x, w1, b, NULL)), w2, b, &dwo));
    tg_tensor *y7 = tg_relu(tg_conv2d(tg_relu(tg_conv2d(x7, w1, b, NULL)), w2, b, &dwo));
    tg_tensor *yv = tg_relu(tg_conv2d(tg_relu(tg_conv2d(x, w1v, b, NULL)), w2, b, &dwo));
    tg_tensor *yd = tg_relu(tg_conv2d(tg_relu(tg_conv2d(x, w1d, b, NULL)), w2, b, &dwo));
    tg_tensor *yf = tg_relu(tg_conv2d(tg_relu(tg_conv2d(x, w1f, b, NULL)), w2, b, &dwo));
    tg_tensor *loss = tg_sum(yv, 0, NULL, false);
    CHECK_OK(tg_graph_end());
    tg_tensor *grad = NULL;
    CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 1, &w1v, &grad));
    tg_session *s = tg_session_new(g);
    tg_tensor *f1[2] = {y, e}, *f2[1] = {ys}, *f3[1] = {yt}, *f5[2] = {loss, grad};
    CHECK(fused(s, x, 2, f1) == 0); /* the activation fetched */
    CHECK(fused(s, x, 1, f2) == 0); /* a strided pointwise layer */
    CHECK(fused(s, x, 1, f3) == 0); /* tanh between */
    CHECK(fused(s, x7, 1, &y7) == 0); /* a 7x7 plane */
    CHECK(fused(s, x, 2, f5) == 0);   /* a training step */
    CHECK(fused(s, x, 1, &yd) == 0);  /* float32 input, float64 weights */
    CHECK(fused(s, x, 1, &yf) == 0);  /* weights not frozen */
    CHECK(fused(s, x, 1, &yv) == 0);  /* a variable's */
    bool pays = tg__conv_pwdw_pays(10 * 10);
    CHECK(fused(s, x, 1, &y) == (pays ? 1 : 0)); /* and alone, it fuses */
    tg__cpu_force(TG_ISA_AVX2); /* not on a 10x10 plane with AVX2 */
    CHECK(fused(s, x, 1, &y) == 0);
    tg__cpu_force(tg__cpu_detected());
    tg_tensor *xv = input(TG_FLOAT32, &q);
    CHECK_LEVELS_EQUAL(s, x, xv, 2, f1);
    CHECK_LEVELS_EQUAL(s, x, xv, 1, &y);
    tg_session_free(s);
    tg_graph_free(g);
}

/* TG_DISABLE_PASSES leaves the pass out of new sessions (a name no pass
 * has is reported and skipped) */
static void test_pass_disabled_by_env(void)
{
    const shape *q = &shapes[5];
    tg_graph *g = tg_graph_new("pw_dw_env");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, (int64_t[]){q->n, q->c, q->h, q->w});
    tg_tensor *w1 = frozen(TG_FLOAT32, 4, (int64_t[]){q->e, q->c, 1, 1});
    tg_tensor *w2 = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){q->e, 1, q->k, q->k}, -1, 1);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 1, &q->e, -1, 1);
    tg_conv2d_opts o = {{1, 1}, {1, 1}, {1, 1}, (int)q->e};
    CHECK_OK(tg_graph_begin(g));
    tg_tensor *y = tg_relu(tg_conv2d(tg_relu(tg_conv2d(x, w1, b, NULL)), w2, b, &o));
    CHECK_OK(tg_graph_end());
    bool pays = tg__conv_pwdw_pays(q->h * q->w);
    setenv("TG_DISABLE_PASSES", "no_such_pass,fuse_pw_dw", 1);
    tg_session *off = tg_session_new(g);
    CHECK(fused(off, x, 1, &y) == -1); /* did not run */
    unsetenv("TG_DISABLE_PASSES");
    tg_session *on = tg_session_new(g);
    CHECK(fused(on, x, 1, &y) == (pays ? 1 : 0));
    tg_session_free(off);
    tg_session_free(on);
    tg_graph_free(g);
}

/* ---- the op's errors ------------------------------------------------------------------ */
static void test_op_errors(void)
{
    const tg_op_def *op = tg_op_find("conv2d_pw_dw");
    CHECK(op != NULL);
    tg_tensor *x = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){1, 2, 5, 5}, -1, 1);
    tg_tensor *w1 = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){3, 2, 1, 1}, -1, 1);
    tg_tensor *w1k = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){3, 2, 3, 3}, -1, 1);
    tg_tensor *b = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){3}, -1, 1), *b4 = tt_rand_dtype(TG_FLOAT32, 1, (int64_t[]){4}, -1, 1);
    tg_tensor *w2 = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){3, 1, 3, 3}, -1, 1);
    tg_tensor *w2big = tt_rand_dtype(TG_FLOAT32, 4, (int64_t[]){3, 1, 9, 9}, -1, 1);
    tg_tensor *xi = tg_full(TG_INT32, 4, (int64_t[]){1, 2, 5, 5}, 1.0);
    tg_tensor *xd = tt_rand_dtype(TG_FLOAT64, 4, (int64_t[]){1, 2, 5, 5}, -1, 1);
    CHECK_ERROR(tg_op_call(op, 4, (tg_tensor *[]){x, w1, b, w2}, NULL, 0), TG_ERR_ARG,
                "5 inputs");
    CHECK_ERROR(tg_op_call(op, 5, (tg_tensor *[]){x, w1k, b, w2, b}, NULL, 0), TG_ERR_SHAPE,
                "w1");
    CHECK_ERROR(tg_op_call(op, 5, (tg_tensor *[]){x, w1, b4, w2, b}, NULL, 0), TG_ERR_SHAPE,
                "b1");
    CHECK_ERROR(tg_op_call(op, 5, (tg_tensor *[]){x, w1, b, w1k, b}, NULL, 0), TG_ERR_SHAPE,
                "w2");
    CHECK_ERROR(tg_op_call(op, 5, (tg_tensor *[]){x, w1, b, w2, b4}, NULL, 0), TG_ERR_SHAPE,
                "b2");
    CHECK_ERROR(tg_op_call(op, 5, (tg_tensor *[]){x, w1, b, w2big, b}, NULL, 0), TG_ERR_SHAPE,
                "does not fit");
    CHECK_ERROR(tg_op_call(op, 5, (tg_tensor *[]){xd, w1, b, w2, b}, NULL, 0), TG_ERR_DTYPE,
                "one dtype");
    CHECK(tg_op_call(op, 5, (tg_tensor *[]){xi, w1, b, w2, b}, NULL, 0) == NULL);
    /* padding 1: a 5x5 output, the two layers' values */
    tg_attr pad[] = {TG_AINTS("padding", ((const int64_t[]){1, 1}), 2), TG_AI("act1", 1)};
    tg_tensor *y = tg_op_call(op, 5, (tg_tensor *[]){x, w1, b, w2, b}, pad, 2);
    CHECK(y != NULL);
    if (y) {
        CHECK_SHAPE(y, 1, 3, 5, 5);
        tg_conv2d_opts o = {{1, 1}, {1, 1}, {1, 1}, 3};
        tg_tensor *ref = tg_conv2d(tg_relu(tg_conv2d(x, w1, b, NULL)), w2, b, &o);
        CHECK(tt_same(y, ref));
    }
}

int main(void)
{
    RUN(test_kernel_every_isa);
    RUN(test_kernel_declines);
    RUN(test_pass_levels_equal);
    RUN(test_pass_declines);
    RUN(test_pass_disabled_by_env);
    RUN(test_op_errors);
    return tt_finish();
}
