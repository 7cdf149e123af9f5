/* ONNX ops that keep or test elements -> tensorgraph: Trilu (tril/triu,
 * its k a known scalar input) and IsInf (isinf with its detect_negative
 * and detect_positive); IsNaN maps one to one through its op definition. */
#include "onnx/ops.h"

static tg_status done(onnx_ictx *c, tg_tensor *y)
{
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

/* Trilu(input, k): upper (default 1) picks triu; k, optional, a known
 * one-element int64 input (default 0) */
static tg_status m_trilu(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "input");
    int64_t upper, k = 0;
    tg_status s = x ? oa_int(c, "upper", 1, &upper) : tg_last_status();
    if (s == TG_OK && c->n_in > 1 && c->in[1]) {
        int64_t *v, n;
        s = oi_ints(c, 1, "k", &v, &n);
        if (s == TG_OK && n != 1)
            s = onnx_err(c, TG_ERR_IO, "k must have one element, has %lld", (long long)n);
        if (s == TG_OK)
            k = v[0];
    }
    if (s == TG_OK && tg_ndim(x) < 2)
        s = onnx_err(c, TG_ERR_SHAPE, "input should have rank 2 or more, has %d", tg_ndim(x));
    if (s != TG_OK)
        return s;
    return done(c, upper ? tg_triu(x, k) : tg_tril(x, k));
}

/* IsInf(X): detect_negative, detect_positive (default 1 each) */
static tg_status m_isinf(onnx_ictx *c)
{
    tg_tensor *x = oi_req(c, 0, "X");
    int64_t neg, pos;
    tg_status s = x ? oa_int(c, "detect_negative", 1, &neg) : tg_last_status();
    if (s == TG_OK)
        s = oa_int(c, "detect_positive", 1, &pos);
    if (s != TG_OK)
        return s;
    if (neg && pos)
        return done(c, tg_isinf(x));
    if (neg || pos)
        return done(c, neg ? tg_isneginf(x) : tg_isposinf(x));
    /* neither: all false, still of x's shape */
    return done(c, tg_logical_and(tg_isinf(x), tg_scalar(TG_BOOL, 0)));
}

const onnx_op_entry onnx_ops_mask[] = {
    {"IsInf", {10}, 1, 1, 1, 1, m_isinf, 0},
    {"Trilu", {14}, 1, 2, 1, 1, m_trilu, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
