/* ONNX's random ops: RandomUniform, RandomNormal, their *Like forms,
 * Bernoulli and Multinomial, drawn from the import's generator (c->gen,
 * seeded 0 by each build, as training-mode Dropout) or, for a node with
 * a seed attribute, from a generator of its own seeded so (onnxruntime's
 * reading: a seeded node's draws do not depend on the other nodes'), and
 * never folded (ONNX_OP_NO_FOLD). In an eager build they draw now; in a
 * graph they are random nodes (tg_rand_uniform_by & co.) that draw anew
 * at every run, the first run drawing what an eager build draws. The
 * draws are tensorgraph's, not numpy's: ONNX's node cases, whose expected
 * outputs come from numpy's generator, cannot match. */
#include "onnx/ops_misc.h"
#include "ops/op.h"

#include <string.h>

/* in the sizing run of an eager build (a scratch graph) a placeholder of
 * the shape stands in for the draw, which allocates nothing */
static tg_tensor *stand_in(tg_dtype dt, int ndim, const int64_t *shape)
{
    return tg_placeholder(tg_graph_current(), "random", dt, ndim, shape);
}

tg_status onnx_node_gen(onnx_ictx *c, tg_generator **gen, tg_generator **own)
{
    *own = NULL;
    *gen = c->gen;
    const onnx_attribute *a = onnx_attr(c, "seed");
    if (!a)
        return TG_OK;
    /* a float in the random ops, an int in Dropout-12/13 */
    int64_t seed = 0;
    tg_status s = a->type == ONNX_ATTR_INT ? oa_int(c, "seed", 0, &seed) : TG_OK;
    if (a->type != ONNX_ATTR_INT) {
        double f;
        s = oa_float(c, "seed", 0, &f);
        if (s == TG_OK && !(f > -0x1p63 && f < 0x1p63))
            return onnx_err(c, TG_ERR_IO, "seed %g is not a 64-bit integer", f);
        seed = (int64_t)f;
    }
    if (s != TG_OK)
        return s;
    if (!(*gen = *own = tg_generator_new((uint64_t)seed)))
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    return TG_OK;
}

/* the float dtype of attribute dtype (default: dflt, an ONNX type) */
static tg_status float_dtype(onnx_ictx *c, int32_t dflt, tg_dtype *dt)
{
    int64_t t;
    tg_status s = oa_int(c, "dtype", dflt, &t);
    if (s != TG_OK)
        return s;
    if (t < 0 || t > INT32_MAX || onnx_storage_dtype((int32_t)t, dt) != TG_OK ||
        !tg_dtype_is_float(*dt))
        return onnx_err(c, TG_ERR_IO, "dtype %lld should be a floating-point type",
                        (long long)t);
    return TG_OK;
}

/* uniform (low, high) or normal (mean, scale) of shape, or of input 0's */
static tg_status draw(onnx_ictx *c, bool like, bool normal)
{
    tg_tensor *x = like ? oi_req(c, 0, "input") : NULL;
    if (like && !x)
        return tg_last_status();
    tg_dtype dt = TG_FLOAT32;
    tg_status s = TG_OK;
    if (!like || onnx_attr(c, "dtype"))
        s = float_dtype(c, 1, &dt);
    else if (tg_dtype_is_float(tg_dtype_of(x)))
        dt = tg_dtype_of(x);
    double a, b;
    if (s == TG_OK)
        s = oa_float(c, normal ? "mean" : "low", 0, &a);
    if (s == TG_OK)
        s = oa_float(c, normal ? "scale" : "high", 1, &b);
    if (s != TG_OK)
        return s;
    int ndim;
    const int64_t *shape;
    if (like) {
        ndim = tg_ndim(x);
        shape = tg_shape(x);
    } else {
        int n;
        if ((s = oa_ints(c, "shape", &shape, &n)) != TG_OK)
            return s;
        if (n < 0 || n > TG_MAX_DIMS)
            return onnx_err(c, TG_ERR_IO, "attribute shape is required (at most %d dims)",
                            TG_MAX_DIMS);
        for (int d = 0; d < n; d++)
            if (shape[d] < 0)
                return onnx_err(c, TG_ERR_IO, "shape[%d] = %lld is negative", d,
                                (long long)shape[d]);
        ndim = n;
        if ((s = onnx_check_numel(c, ndim, shape, "the output")) != TG_OK)
            return s;
    }
    if (c->sizing)
        return misc_done(c, stand_in(dt, ndim, shape));
    tg_generator *gen, *own;
    if ((s = onnx_node_gen(c, &gen, &own)) != TG_OK)
        return s;
    tg_tensor *y;
    if (like)
        y = tg__rand_like(x, gen, dt, normal, a, b);
    else
        y = normal ? tg_rand_normal_by(gen, misc_int64s(shape, ndim), dt, a, b)
                   : tg_rand_uniform_by(gen, misc_int64s(shape, ndim), dt, a, b);
    tg_generator_free(own); /* a graph keeps the state its node draws from */
    return misc_done(c, y);
}

tg_status misc_random_uniform(onnx_ictx *c) { return draw(c, false, false); }
tg_status misc_random_normal(onnx_ictx *c) { return draw(c, false, true); }
tg_status misc_random_uniform_like(onnx_ictx *c) { return draw(c, true, false); }
tg_status misc_random_normal_like(onnx_ictx *c) { return draw(c, true, true); }

/* ---- Bernoulli(dtype, seed): 1 where a uniform draw falls below p --------------------- */
tg_status misc_bernoulli(onnx_ictx *c)
{
    tg_tensor *p = oi_req(c, 0, "input");
    if (!p)
        return tg_last_status();
    if (!tg_dtype_is_float(tg_dtype_of(p)))
        return onnx_err(c, TG_ERR_IO, "input (probabilities) should be floating point");
    tg_dtype dt = tg_dtype_of(p);
    int64_t t;
    tg_status s = oa_int(c, "dtype", 0, &t);
    if (s != TG_OK)
        return s;
    if (onnx_attr(c, "dtype") &&
        (t < 0 || t > INT32_MAX || onnx_storage_dtype((int32_t)t, &dt) != TG_OK))
        return onnx_err(c, TG_ERR_IO, "dtype %lld is not a type tensorgraph holds",
                        (long long)t);
    if (c->sizing)
        return misc_done(c, stand_in(dt, tg_ndim(p), tg_shape(p)));
    tg_generator *gen, *own;
    if ((s = onnx_node_gen(c, &gen, &own)) != TG_OK)
        return s;
    tg_tensor *u = tg__rand_like(p, gen, TG_FLOAT64, false, 0, 1);
    tg_generator_free(own);
    return misc_done(c, onnx_as(tg_lt(u, onnx_as(p, TG_FLOAT64)), dt));
}

/* ---- Multinomial(dtype, sample_size, seed): input [B, C] log-probabilities ------------
 * inverse transform sampling: the class of a draw u is the number of
 * cumulative probabilities at or below u (u in [0, 1) times the total) */
tg_status misc_multinomial(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t t, n;
    tg_status s = x ? oa_int(c, "dtype", 6, &t) : tg_last_status();
    if (s == TG_OK)
        s = oa_int(c, "sample_size", 1, &n);
    if (s != TG_OK)
        return s;
    if (tg_ndim(x) != 2 || !tg_dtype_is_float(tg_dtype_of(x)) || tg_shape(x)[1] < 1)
        return onnx_err(c, TG_ERR_IO, "input should be float [batch, classes] (classes >= 1)");
    if (t != 6 && t != 7)
        return onnx_err(c, TG_ERR_IO, "dtype %lld should be INT32 (6) or INT64 (7)",
                        (long long)t);
    int64_t B = tg_shape(x)[0], C = tg_shape(x)[1];
    if (n < 1 || (s = onnx_check_numel(c, 3, (int64_t[]){B, n, C}, "the draws")) != TG_OK)
        return s != TG_OK ? s : onnx_err(c, TG_ERR_IO, "sample_size %lld should be >= 1",
                                         (long long)n);
    tg_dtype dt = t == 6 ? TG_INT32 : TG_INT64;
    if (B < 0)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "a batch known only when the graph runs");
    if (c->sizing)
        return misc_done(c, stand_in(dt, 2, (int64_t[]){B, n}));
    tg_generator *gen, *own;
    if ((s = onnx_node_gen(c, &gen, &own)) != TG_OK)
        return s;
    /* the cumulative sums of softmax, without its division: exp(x - max) */
    tg_tensor *x64 = onnx_as(x, TG_FLOAT64);
    tg_tensor *e = tg_exp(tg_sub(x64, tg_max(x64, 1, (int[]){1}, true)));
    tg_tensor *cdf = tg_cumsum(e, 1, false, false); /* [B, C] */
    tg_tensor *total = tg_slice(cdf, 1, C - 1, C, 1); /* [B, 1] */
    tg_tensor *u = tg_mul(tg_rand_uniform_by(gen, misc_int64s((int64_t[]){B, n}, 2),
                                             TG_FLOAT64, 0, 1), total);
    tg_generator_free(own);
    tg_tensor *below = tg_le(tg_reshape(cdf, 3, (int64_t[]){B, 1, C}),
                             tg_reshape(u, 3, (int64_t[]){B, n, 1}));
    tg_tensor *k = tg_sum(onnx_as(below, TG_INT64), 1, (int[]){2}, false);
    return misc_done(c, onnx_as(tg_clamp(k, 0, (double)(C - 1)), dt));
}
