/* ONNX NonMaxSuppression: its attribute and scalar inputs checked and
 * read at import, the selection by the non_max_suppression op
 * (src/ops/nms.c), whose output length is known when it runs: at import
 * in an eager build, when the graph runs in graph mode. */
#include "onnx/ops_misc.h"
#include "ops/op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* an optional one-element input's value, dflt when absent (*given
 * says which, when not NULL) */
static tg_status scalar_input(onnx_ictx *c, int i, const char *what, double dflt,
                              double *out, bool *given)
{
    *out = dflt;
    if (given)
        *given = false;
    if (i >= c->n_in || !c->in[i])
        return TG_OK;
    tg_tensor *t = misc_value_req(c, i, what, "NonMaxSuppression's output length depends "
                                  "on it");
    if (!t)
        return tg_last_status();
    if (tg_numel(t) != 1)
        return onnx_err(c, TG_ERR_IO, "%s should have one element, has %lld", what,
                        (long long)tg_numel(t));
    if (given)
        *given = true;
    return tg_copy_to(t, TG_FLOAT64, out);
}

tg_status misc_nms(onnx_ictx *c)
{
    tg_tensor *bx = oi_req(c, 0, "boxes");
    tg_tensor *sc = bx ? oi_req(c, 1, "scores") : NULL;
    int64_t center;
    double max_out, iou_thr, score_thr;
    bool has_score;
    tg_status s = sc ? oa_int(c, "center_point_box", 0, &center) : tg_last_status();
    if (s == TG_OK)
        s = scalar_input(c, 2, "max_output_boxes_per_class", 0, &max_out, NULL);
    if (s == TG_OK)
        s = scalar_input(c, 3, "iou_threshold", 0, &iou_thr, NULL);
    if (s == TG_OK)
        s = scalar_input(c, 4, "score_threshold", -INFINITY, &score_thr, &has_score);
    if (s != TG_OK)
        return s;
    const int64_t *bs = tg_shape(bx), *ss = tg_shape(sc);
    if (tg_ndim(bx) != 3 || bs[2] != 4 || tg_ndim(sc) != 3 || ss[0] != bs[0] ||
        ss[2] != bs[1] || !tg_dtype_is_float(tg_dtype_of(bx)) ||
        !tg_dtype_is_float(tg_dtype_of(sc)))
        return onnx_err(c, TG_ERR_IO, "boxes should be float [B, S, 4] and scores float [B, "
                        "C, S] of the same B and S");
    if ((center != 0 && center != 1) || !(iou_thr >= 0 && iou_thr <= 1) || isnan(max_out))
        return onnx_err(c, TG_ERR_IO, "center_point_box should be 0 or 1, iou_threshold in "
                        "[0, 1], max_output_boxes_per_class a number");
    /* at most the boxes (and INT64_MAX) per class: the op bounds it by S */
    int64_t keep = max_out < 0 ? 0 : max_out > 0x1p62 ? ((int64_t)1 << 62) : (int64_t)max_out;
    tg_attr a[5] = {TG_AI("center_point_box", center), TG_AI("has_score", has_score),
                    TG_AI("max_output", keep), TG_AF("iou_threshold", iou_thr),
                    TG_AF("score_threshold", has_score ? score_thr : 0)};
    tg_tensor *in[2] = {bx, sc};
    return misc_done(c, tg_op_call(&tg_op_non_max_suppression, 2, in, a, 5));
}
