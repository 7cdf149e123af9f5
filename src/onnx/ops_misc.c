/* ONNX ops imported by the ops_misc_*.c files, their table, and the
 * helpers they share (ops_misc.h):
 * - ops_misc_select.c: BitShift, ReverseSequence, Compress, NonZero, Unique
 * - ops_misc_linalg.c: Det, MaxUnpool
 * - ops_misc_sample.c: GridSample, RoiAlign
 * - ops_misc_nms.c: NonMaxSuppression
 * - ops_misc_signal.c: HannWindow, HammingWindow, BlackmanWindow, DFT, STFT,
 *   MelWeightMatrix
 * - ops_misc_random.c: RandomUniform, RandomNormal, *Like, Bernoulli,
 *   Multinomial (random nodes in a graph)
 * Ops whose output shape depends on an input's values (Compress's
 * condition, NonZero, Unique, NonMaxSuppression, RoiAlign's adaptive
 * sampling, the windows' size) compute it from that value at import time:
 * known values, given inputs with opts.specialize (tg run), and every
 * input of an eager build; over a value a graph computes they refuse. */
#include "onnx/ops_misc.h"

#include <string.h>

tg_status misc_done(onnx_ictx *c, tg_tensor *y)
{
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

tg_tensor *misc_value(const onnx_ictx *c, int i)
{
    if (i >= c->n_in || !c->in[i])
        return NULL;
    if (c->val[i] && !tg_is_symbolic(c->val[i]))
        return c->val[i];
    /* an eager build (or its sizing run in a scratch graph) holds values */
    bool eager = !c->graph_mode || c->sizing;
    return eager && !tg_is_symbolic(c->in[i]) ? c->in[i] : NULL;
}

tg_tensor *misc_value_req(onnx_ictx *c, int i, const char *what, const char *why)
{
    if (!oi_req(c, i, what))
        return NULL;
    tg_tensor *t = misc_value(c, i);
    if (!t)
        onnx_err(c, TG_ERR_UNSUPPORTED, "input %d (%s, '%s') is computed when the graph "
                 "runs, but %s and shapes are fixed at import: give it as a constant, or "
                 "build eagerly or with opts.specialize", i, what, c->node->input[i], why);
    return t;
}

tg_status misc_host_values(onnx_ictx *c, tg_tensor *x, void **out, bool *is_float)
{
    *is_float = tg_dtype_is_float(tg_dtype_of(x));
    int64_t n = tg_numel(x);
    if (n > ONNX_IMPORT_MAX_ELEMENTS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "an input of %lld elements is too large",
                        (long long)n);
    void *buf = onnx_tmp_alloc(c, (size_t)n * 8);
    if (!buf)
        return tg_last_status();
    *out = buf;
    return tg_copy_to(x, *is_float ? TG_FLOAT64 : TG_INT64, buf);
}

tg_tensor *misc_int64s(const int64_t *v, int64_t n)
{
    int tok = onnx_eager_begin();
    tg_tensor *t = tg_from_data(TG_INT64, 1, &n, v);
    onnx_eager_end(tok);
    return t;
}

const onnx_op_entry onnx_ops_misc[] = {
    {"BitShift", {11}, 2, 2, 1, 1, misc_bitshift, 0},
    {"ReverseSequence", {10}, 2, 2, 1, 1, misc_reverse_sequence, 0},
    {"Compress", {9, 11}, 2, 2, 1, 1, misc_compress, 0},
    {"NonZero", {9, 13}, 1, 1, 1, 1, misc_nonzero, 0},
    {"Unique", {11}, 1, 1, 1, 4, misc_unique, 0},
    {"Det", {11}, 1, 1, 1, 1, misc_det, 0},
    {"MaxUnpool", {9, 11}, 2, 3, 1, 1, misc_max_unpool, 0},
    {"GridSample", {16}, 2, 2, 1, 1, misc_grid_sample, 0},
    {"RoiAlign", {10, 16}, 3, 3, 1, 1, misc_roi_align, 0},
    {"NonMaxSuppression", {10, 11}, 2, 5, 1, 1, misc_nms, 0},
    {"HannWindow", {17}, 1, 1, 1, 1, misc_hann_window, 0},
    {"HammingWindow", {17}, 1, 1, 1, 1, misc_hamming_window, 0},
    {"BlackmanWindow", {17}, 1, 1, 1, 1, misc_blackman_window, 0},
    {"DFT", {17}, 1, 2, 1, 1, misc_dft, 0},
    {"STFT", {17}, 2, 4, 1, 1, misc_stft, 0},
    {"MelWeightMatrix", {17}, 5, 5, 1, 1, misc_mel_weight_matrix, 0},
    {"RandomUniform", {1}, 0, 0, 1, 1, misc_random_uniform, ONNX_OP_NO_FOLD},
    {"RandomNormal", {1}, 0, 0, 1, 1, misc_random_normal, ONNX_OP_NO_FOLD},
    {"RandomUniformLike", {1}, 1, 1, 1, 1, misc_random_uniform_like, ONNX_OP_NO_FOLD},
    {"RandomNormalLike", {1}, 1, 1, 1, 1, misc_random_normal_like, ONNX_OP_NO_FOLD},
    {"Bernoulli", {15}, 1, 1, 1, 1, misc_bernoulli, ONNX_OP_NO_FOLD},
    {"Multinomial", {7}, 1, 1, 1, 1, misc_multinomial, ONNX_OP_NO_FOLD},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
