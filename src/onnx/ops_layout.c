/* ONNX ops about a tensor's type, size and layout, composed of tensorgraph
 * ops: CastLike (cast to the second input's type), Size (the element
 * count, known at import), EyeLike (a constant of the input's shape),
 * DepthToSpace (CRD: pixel_shuffle; DCR: the same reshape and transpose
 * with the block before the channel) and SpaceToDepth (its inverse in DCR
 * order). */
#include "onnx/ops.h"

#include "core/size_math.h"

#include <string.h>

static tg_status done(onnx_ictx *c, tg_tensor *y)
{
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

/* ---- CastLike ------------------------------------------------------------------------- */
/* the target is the declared type of target_type when the model gives it
 * (so FLOAT16 and BFLOAT16, held as float32, round as Cast does), else its
 * tensor's dtype */
static tg_status m_castlike(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input"), *like = x ? oi_req(c, 1, "target_type") : NULL;
    if (!like)
        return tg_last_status();
    int32_t to = c->in_type[1] ? c->in_type[1] : onnx_dtype_from_tg(tg_dtype_of(like));
    tg_dtype dt;
    if (onnx_storage_dtype(to, &dt) != TG_OK)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "CastLike to %s (%d) is not supported",
                        onnx_data_type_name(to), (int)to);
    tg_tensor *y = onnx_as(x, dt);
    if (to == ONNX_FLOAT16 || to == ONNX_BFLOAT16)
        y = onnx_round_to_half(y, to == ONNX_BFLOAT16);
    return done(c, y);
}

/* ---- Size ------------------------------------------------------------------------------ */
static tg_status m_size(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "data");
    if (!x)
        return tg_last_status();
    for (int i = 0; i < tg_ndim(x); i++)
        if (tg_shape(x)[i] < 0) /* known when the graph runs: counted then */
            return done(c, tg_prod(tg_shape_of(x), 0, NULL, false));
    c->out_known[0] = true;
    return done(c, tg_scalar(TG_INT64, (double)tg_numel(x)));
}

/* ---- EyeLike(dtype, k) ----------------------------------------------------------------- */
static tg_status m_eyelike(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t k, to;
    tg_status s = x ? oa_int(c, "k", 0, &k) : tg_last_status();
    if (s == TG_OK)
        s = oa_int(c, "dtype", 0, &to);
    if (s != TG_OK)
        return s;
    if (tg_ndim(x) != 2 || tg_shape(x)[0] < 0 || tg_shape(x)[1] < 0)
        return onnx_err(c, TG_ERR_SHAPE, "input should be a matrix of known size, has rank %d",
                        tg_ndim(x));
    tg_dtype dt = tg_dtype_of(x);
    if (onnx_attr(c, "dtype") &&
        (to < 0 || to > INT32_MAX || onnx_storage_dtype((int32_t)to, &dt) != TG_OK))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "dtype %lld is not supported", (long long)to);
    /* ones on the diagonal k: the ones of tril(k) that triu(k) keeps; a
     * constant, made eagerly */
    int tok = onnx_eager_begin();
    tg_tensor *y = tg_cast(tg_triu(tg_tril(tg_ones(TG_INT64, 2, tg_shape(x)), k), k), dt);
    onnx_eager_end(tok);
    c->out_known[0] = y != NULL;
    return done(c, y);
}

/* ---- DepthToSpace(blocksize, mode), SpaceToDepth(blocksize) ----------------------------- */
static tg_status block_args(onnx_ictx *c, tg_tensor **x, int64_t *b)
{
    *x = oi_req(c, 0, "input");
    tg_status s = *x ? oa_int(c, "blocksize", 0, b) : tg_last_status();
    if (s == TG_OK && !onnx_attr(c, "blocksize"))
        s = onnx_err(c, TG_ERR_IO, "attribute blocksize is required");
    if (s == TG_OK && *b <= 0)
        s = onnx_err(c, TG_ERR_IO, "blocksize is %lld; it must be positive", (long long)*b);
    if (s == TG_OK && tg_ndim(*x) != 4)
        s = onnx_err(c, TG_ERR_SHAPE, "input should be [N, C, H, W], has rank %d",
                     tg_ndim(*x));
    return s;
}

static tg_status m_depth_to_space(onnx_ictx *c)
{
    tg_tensor *x;
    int64_t b;
    const char *mode;
    tg_status s = block_args(c, &x, &b);
    if (s == TG_OK)
        s = oa_string(c, "mode", "DCR", &mode);
    if (s != TG_OK)
        return s;
    if (!strcmp(mode, "CRD"))
        return done(c, tg_pixel_shuffle(x, b));
    if (strcmp(mode, "DCR"))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "mode '%s' is not supported (DCR and CRD are)",
                        mode);
    const int64_t *d = tg_shape(x);
    if (b > d[1] || d[1] % (b * b))
        return onnx_err(c, TG_ERR_SHAPE, "channels (%lld) should be divisible by blocksize "
                        "squared (%lld)", (long long)d[1], (long long)b);
    int64_t n = d[0], ch = d[1] / (b * b), h = d[2], w = d[3];
    /* [N, b, b, C', H, W] -> [N, C', H, b, W, b] */
    tg_tensor *y = tg_reshape(x, 6, (int64_t[]){n, b, b, ch, h, w});
    y = tg_permute(y, (int[]){0, 3, 4, 1, 5, 2});
    return done(c, tg_reshape(y, 4, (int64_t[]){n, ch, h * b, w * b}));
}

static tg_status m_space_to_depth(onnx_ictx *c)
{
    tg_tensor *x;
    int64_t b;
    tg_status s = block_args(c, &x, &b);
    if (s != TG_OK)
        return s;
    const int64_t *d = tg_shape(x);
    if (d[2] % b || d[3] % b)
        return onnx_err(c, TG_ERR_SHAPE, "height and width (%lld, %lld) should be divisible "
                        "by blocksize (%lld)", (long long)d[2], (long long)d[3], (long long)b);
    int64_t n = d[0], ch = d[1], h = d[2] / b, w = d[3] / b;
    /* b divides H and W, but empty ones allow any b */
    if (tg__size_mul_exceeds(b, b, ONNX_IMPORT_MAX_ELEMENTS) ||
        tg__size_mul_exceeds(b * b, ch, ONNX_IMPORT_MAX_ELEMENTS))
        return onnx_err(c, TG_ERR_SHAPE, "blocksize %lld is too large", (long long)b);
    /* [N, C, H', b, W', b] -> [N, b, b, C, H', W'] */
    tg_tensor *y = tg_reshape(x, 6, (int64_t[]){n, ch, h, b, w, b});
    y = tg_permute(y, (int[]){0, 3, 5, 1, 2, 4});
    return done(c, tg_reshape(y, 4, (int64_t[]){n, b * b * ch, h, w}));
}

const onnx_op_entry onnx_ops_layout[] = {
    {"CastLike", {15}, 2, 2, 1, 1, m_castlike, 0},
    {"Size", {1, 13}, 1, 1, 1, 1, m_size, 0},
    {"EyeLike", {9}, 1, 1, 1, 1, m_eyelike, 0},
    {"DepthToSpace", {1, 11, 13}, 1, 1, 1, 1, m_depth_to_space, 0},
    {"SpaceToDepth", {1, 13}, 1, 1, 1, 1, m_space_to_depth, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
