/* conv2d + relu + 2 x 2 max pooling as one node: the kernel
 * (tg__conv2d_relu_pool) bitwise equal to the three steps apart at every
 * instruction set, convolution path, dtype and shape (batches that leave
 * lanes empty, odd planes whose last row and column no window takes,
 * ties from relu's zeros, NaN and infinities); the level-2 pass
 * fuse_conv_pool on training and inference graphs (results bitwise
 * equal to level 0, and where it must not apply); the op's errors. */
#include "harness.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/cpu.h"
#include "kernels/cpu/pool.h"
#include "ops/op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* n values of multiples of 1/2 in [-2, 2] (ties after relu), with NaN and
 * infinities here and there when specials */
static void fill(double *v, int64_t n, bool specials, uint32_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (double)((seed >> 24) % 9) / 2 - 2;
        if (specials && i % 97 == 13)
            v[i] = NAN;
        else if (specials && i % 89 == 5)
            v[i] = (i / 89) % 2 ? INFINITY : -INFINITY;
    }
}

typedef struct shape {
    int64_t n, c, h, w, o, k, pad, dil;
} shape;

static const shape shapes[] = {
    {16, 1, 28, 28, 6, 5, 2, 1}, /* LeNet's first layer */
    {5, 6, 14, 14, 16, 5, 0, 1}, /* its second, lanes left empty */
    {21, 2, 9, 11, 3, 3, 1, 1},  /* odd planes: the last row and column dropped */
    {3, 3, 9, 8, 4, 3, 2, 2},    /* dilated */
    {2, 1, 2, 3, 1, 1, 0, 1},    /* a 1x1 kernel (the pointwise path), one window */
};

static tg__conv_geom geom_of(const shape *s)
{
    int64_t span = (s->k - 1) * s->dil + 1;
    return (tg__conv_geom){.n = s->n, .c = s->c, .h = s->h, .w = s->w, .o = s->o,
                           .kh = s->k, .kw = s->k, .oh = s->h + 2 * s->pad - span + 1,
                           .ow = s->w + 2 * s->pad - span + 1, .sh = 1, .sw = 1,
                           .ph = s->pad, .pw = s->pad, .dh = s->dil, .dw = s->dil,
                           .groups = 1};
}

/* the fused kernel against conv + relu, then the compact pooling kernel */
static void check_kernel(tg_dtype dt, const shape *s, bool bias, bool specials)
{
    tg__conv_geom g = geom_of(s);
    size_t z = tg_dtype_size(dt);
    int64_t nx = s->n * s->c * s->h * s->w, nw = s->o * s->c * s->k * s->k;
    int64_t ny = s->n * s->o * g.oh * g.ow, np = s->n * s->o * (g.oh / 2) * (g.ow / 2);
    double *v = malloc(sizeof(double) * (size_t)(nx + nw + s->o));
    fill(v, nx, specials, 11u + (uint32_t)nx);
    fill(v + nx, nw + s->o, false, 5u);
    char *buf = calloc((size_t)(nx + nw + s->o + ny + 2 * np), z);
    char *x = buf, *w = x + nx * z, *b = w + nw * z, *y = b + s->o * z;
    char *p_ref = y + ny * z, *p = p_ref + np * z;
    for (int64_t i = 0; i < nx + nw + s->o; i++)
        if (dt == TG_FLOAT64)
            ((double *)buf)[i] = v[i];
        else
            ((float *)buf)[i] = (float)v[i];
    uint8_t *off_ref = malloc((size_t)np), *off = malloc((size_t)np);
    memset(off, 0xee, (size_t)np);
    CHECK_OK(tg__conv2d_forward_relu(dt, &g, x, w, bias ? b : NULL, true, y));
    if (dt == TG_FLOAT64)
        tg__maxpool2x2c_planes_f64((double *)y, s->n * s->o, g.oh, g.ow, g.oh / 2, g.ow / 2,
                                   (double *)p_ref, off_ref);
    else
        tg__maxpool2x2c_planes_f32((float *)y, s->n * s->o, g.oh, g.ow, g.oh / 2, g.ow / 2,
                                   (float *)p_ref, off_ref);
    CHECK_OK(tg__conv2d_relu_pool(dt, &g, x, w, bias ? b : NULL, p, off));
    if (memcmp(p, p_ref, (size_t)np * z) || memcmp(off, off_ref, (size_t)np))
        tt_fail(__FILE__, __LINE__, "%s %s mode %d: n%lld c%lld %lldx%lld o%lld k%lld: "
                "differs from conv, relu, then pooling",
                tg__isa_name(tg__cpu_isa()), dt == TG_FLOAT64 ? "f64" : "f32",
                (int)tg__conv_get_mode(), (long long)s->n, (long long)s->c,
                (long long)s->h, (long long)s->w, (long long)s->o, (long long)s->k);
    free(v);
    free(buf);
    free(off_ref);
    free(off);
}

static void test_kernel_every_isa_and_path(void)
{
    for (int isa = 0; isa <= (int)tg__cpu_detected(); isa++)
        for (int mode = TG_CONV_AUTO; mode <= TG_CONV_PLANES; mode++) {
            tg__cpu_force((tg__isa)isa);
            tg__conv_set_mode((tg__conv_mode)mode);
            for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
                for (int d = 0; d < 2; d++)
                    for (int sp = 0; sp < 2; sp++)
                        check_kernel(d ? TG_FLOAT64 : TG_FLOAT32, &shapes[k], sp == 0, sp);
        }
    tg__conv_set_mode(TG_CONV_AUTO);
    tg__cpu_force(tg__cpu_detected());
}

/* ---- the pass ---------------------------------------------------------------------- */
/* pass fuse_conv_pool's count "fused" fetching f from x at level 2 */
static int fused(tg_session *s, tg_tensor *x, int n_fetch, tg_tensor **f)
{
    return tt_pass_count(s, x, n_fetch, f, "fuse_conv_pool", "fused");
}

static tg_tensor *input(tg_dtype dt, const shape *s, bool specials)
{
    int64_t n = s->n * s->c * s->h * s->w;
    double *v = malloc(sizeof(double) * (size_t)n);
    fill(v, n, specials, 3u);
    tg_tensor *t = tt_tensor(dt, 4, (int64_t[]){s->n, s->c, s->h, s->w}, v);
    free(v);
    return t;
}

/* p = max_pool2d(relu(conv2d(x, w, b)), 2); loss = sum(p * c); the
 * pooled values and the gradients of x, w and b */
static void test_pass_levels_equal(void)
{
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        for (int d = 0; d < 2; d++) {
            const shape *q = &shapes[k];
            tg_dtype dt = d ? TG_FLOAT64 : TG_FLOAT32;
            tg_graph *g = tg_graph_new("conv_pool");
            tg_tensor *x = tg_placeholder(g, "x", dt, 4, (int64_t[]){q->n, q->c, q->h, q->w});
            tg_tensor *w = tt_rand_dtype(dt, 4, (int64_t[]){q->o, q->c, q->k, q->k}, -1, 1);
            tg_tensor *b = tt_rand_dtype(dt, 1, (int64_t[]){q->o}, -1, 1);
            tg_conv2d_opts co = {{1, 1}, {(int)q->pad, (int)q->pad},
                                 {(int)q->dil, (int)q->dil}, 1};
            tg_pool2d_opts po = {.kernel = {2, 2}};
            tg_tensor *wv = tg_variable_ref(g, "w", w), *bv = tg_variable_ref(g, "b", b);
            CHECK_OK(tg_graph_begin(g));
            tg_tensor *p = tg_max_pool2d(tg_relu(tg_conv2d(x, wv, bv, &co)), &po);
            CHECK_OK(tg_graph_end());
            tg_tensor *c = tt_rand_dtype(dt, 4, tg_shape(p), -1, 1);
            CHECK_OK(tg_graph_begin(g));
            tg_tensor *loss = tg_sum(tg_mul(p, c), 0, NULL, false);
            CHECK_OK(tg_graph_end());
            tg_tensor *f[4] = {p, NULL, NULL, NULL};
            CHECK_OK(tg_graph_gradients(g, 1, &loss, NULL, 3, (tg_tensor *[]){x, wv, bv},
                                        f + 1));
            tg_session *s = tg_session_new(g);
            CHECK(fused(s, x, 4, f) == 1); /* training */
            CHECK(fused(s, x, 1, f) == 1); /* inference: the indices unread */
            for (int sp = 0; sp < 2; sp++) {
                tg_tensor *xv = input(dt, q, sp);
                CHECK_LEVELS_EQUAL(s, x, xv, 4, f);
                CHECK_LEVELS_EQUAL(s, x, xv, 1, f);
            }
            tg_session_free(s);
            tg_graph_free(g);
        }
}

/* the activation fetched or read elsewhere, other windows: nothing fused */
static void test_pass_declines(void)
{
    const shape q = {4, 2, 8, 8, 3, 3, 1, 1};
    tg_graph *g = tg_graph_new("conv_pool_no");
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, (int64_t[]){4, 2, 8, 8});
    tg_tensor *w = tt_rand(4, (int64_t[]){3, 2, 3, 3}, -1, 1);
    tg_conv2d_opts co = {{1, 1}, {1, 1}, {1, 1}, 1};
    tg_pool2d_opts two = {.kernel = {2, 2}}, three = {.kernel = {3, 3}, .stride = {2, 2}};
    tg_pool2d_opts padded = {.kernel = {2, 2}, .padding = {1, 1}};
    CHECK_OK(tg_graph_begin(g));
    tg_tensor *y = tg_conv2d(x, w, NULL, &co), *r = tg_relu(y);
    tg_tensor *p2 = tg_max_pool2d(r, &two), *p3 = tg_max_pool2d(r, &three);
    tg_tensor *pp = tg_max_pool2d(tg_relu(tg_conv2d(x, w, NULL, &co)), &padded);
    tg_tensor *y2 = tg_conv2d(x, w, NULL, &co);
    tg_tensor *also = tg_max_pool2d(tg_relu(y2), &two), *plus = tg_add_scalar(y2, 1.0);
    CHECK_OK(tg_graph_end());
    tg_session *s = tg_session_new(g);
    tg_tensor *xv = input(TG_FLOAT32, &q, true);
    /* the relu read by two pools; the relu fetched; a padded window; the
     * convolution read by another op */
    tg_tensor *f1[2] = {p2, p3}, *f2[2] = {p2, r}, *f3[2] = {pp, NULL}, *f4[2] = {also, plus};
    CHECK(fused(s, x, 2, f1) == 0);
    CHECK(fused(s, x, 2, f2) == 0);
    CHECK(fused(s, x, 1, f3) == 0);
    CHECK(fused(s, x, 2, f4) == 0);
    CHECK_LEVELS_EQUAL(s, x, xv, 2, f1);
    CHECK_LEVELS_EQUAL(s, x, xv, 2, f4);
    /* and alone, each fuses */
    CHECK(fused(s, x, 1, &p2) == 1);
    CHECK_LEVELS_EQUAL(s, x, xv, 1, &p2);
    tg_session_free(s);
    tg_graph_free(g);
}

/* ---- the op's errors ------------------------------------------------------------------ */
static void test_op_errors(void)
{
    const tg_op_def *op = tg_op_find("conv2d_relu_pool");
    CHECK(op != NULL);
    tg_tensor *x = tt_rand(4, (int64_t[]){1, 1, 3, 3}, -1, 1);
    tg_tensor *w = tt_rand(4, (int64_t[]){2, 1, 3, 3}, -1, 1);
    tg_tensor *w2 = tt_rand(4, (int64_t[]){2, 1, 2, 2}, -1, 1);
    tg_tensor *wc = tt_rand(4, (int64_t[]){2, 3, 2, 2}, -1, 1);
    /* a 1x1 output plane has no window; channels that do not match */
    CHECK_ERROR(tg_op_call(op, 2, (tg_tensor *[]){x, w}, NULL, 0), TG_ERR_SHAPE,
                "no 2x2 window");
    CHECK_ERROR(tg_op_call(op, 2, (tg_tensor *[]){x, wc}, NULL, 0), TG_ERR_SHAPE, "channels");
    /* 2x2 output: one window, the offsets uint8 */
    tg_tensor *out[2] = {NULL, NULL};
    CHECK_OK(tg_op_run(op, 2, (tg_tensor *[]){x, w2}, NULL, 0, out));
    if (out[1]) {
        CHECK(tg_dtype_of(out[1]) == TG_UINT8);
        CHECK_SHAPE(out[0], 1, 2, 1, 1);
    }
}

int main(void)
{
    RUN(test_kernel_every_isa_and_path);
    RUN(test_pass_levels_equal);
    RUN(test_pass_declines);
    RUN(test_op_errors);
    return tt_finish();
}
