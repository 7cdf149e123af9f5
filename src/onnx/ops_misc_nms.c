/* ONNX NonMaxSuppression, computed at import from the boxes' and scores'
 * values (its output length depends on them): per batch and class, the
 * boxes scoring above score_threshold in descending score (ties: the
 * lower index first), each kept unless its IoU with a kept one exceeds
 * iou_threshold, at most max_output_boxes_per_class of them; as
 * onnxruntime and torchvision's nms (per class, per batch) do. */
#include "onnx/ops_misc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the most IoU computations one node may take (a hostile model with a
 * million disjoint boxes must not hang the import) */
#define NMS_MAX_WORK ((int64_t)1 << 31)

typedef struct nms_box {
    double y1, x1, y2, x2, area;
} nms_box;

/* corners (either order, as ONNX allows flipped ones) or center and size;
 * in float when the boxes are float32, as the references compute */
static nms_box box_at(const double *v, bool center, bool single)
{
    double a = v[0], b = v[1], c = v[2], d = v[3];
    nms_box r;
    if (center) { /* [x_center, y_center, width, height] */
        r.x1 = a - c / 2;
        r.x2 = a + c / 2;
        r.y1 = b - d / 2;
        r.y2 = b + d / 2;
    } else { /* [y1, x1, y2, x2] */
        r.y1 = fmin(a, c);
        r.y2 = fmax(a, c);
        r.x1 = fmin(b, d);
        r.x2 = fmax(b, d);
    }
    if (single) {
        r.x1 = (float)r.x1, r.x2 = (float)r.x2, r.y1 = (float)r.y1, r.y2 = (float)r.y2;
        r.area = (float)((float)(r.x2 - r.x1) * (float)(r.y2 - r.y1));
    } else {
        r.area = (r.x2 - r.x1) * (r.y2 - r.y1);
    }
    return r;
}

static double iou(const nms_box *p, const nms_box *q)
{
    double w = fmin(p->x2, q->x2) - fmax(p->x1, q->x1);
    double h = fmin(p->y2, q->y2) - fmax(p->y1, q->y1);
    if (w <= 0 || h <= 0 || p->area <= 0 || q->area <= 0)
        return 0;
    double inter = w * h;
    return inter / (p->area + q->area - inter);
}

/* the scores to sort by, read by cmp_desc (qsort has no context) */
static _Thread_local const double *nms_scores;

static int cmp_desc(const void *a, const void *b)
{
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    double si = nms_scores[i], sj = nms_scores[j];
    if (si != sj)
        return si > sj ? -1 : 1;
    return (i > j) - (i < j);
}

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
    const char *why = "NonMaxSuppression's output length depends on it";
    tg_tensor *bx = misc_value_req(c, 0, "boxes", why);
    tg_tensor *sc = bx ? misc_value_req(c, 1, "scores", why) : NULL;
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
    int64_t B = bs[0], S = bs[1], C = ss[1];
    int64_t keep = max_out < 0 ? 0 : max_out > (double)S ? S : (int64_t)max_out;
    if (B * C * S * (keep ? keep : 1) > NMS_MAX_WORK)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "%lld batches x %lld classes x %lld boxes "
                        "keeping up to %lld: too much work for an import", (long long)B,
                        (long long)C, (long long)S, (long long)keep);
    void *bv, *sv;
    bool f;
    if ((s = misc_host_values(c, bx, &bv, &f)) != TG_OK ||
        (s = misc_host_values(c, sc, &sv, &f)) != TG_OK)
        return s;
    bool single = tg_dtype_of(bx) == TG_FLOAT32;
    nms_box *boxes = onnx_tmp_alloc(c, (size_t)(B * S) * sizeof *boxes);
    int64_t *order = onnx_tmp_alloc(c, (size_t)S * sizeof *order);
    int64_t *kept = onnx_tmp_alloc(c, (size_t)S * sizeof *kept);
    int64_t *out = onnx_tmp_alloc(c, (size_t)(3 * B * C * keep) * sizeof *out);
    if (!boxes || !order || !kept || !out)
        return tg_last_status();
    for (int64_t i = 0; i < B * S; i++)
        boxes[i] = box_at((const double *)bv + 4 * i, center == 1, single);
    int64_t n = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t k = 0; k < C; k++) {
            const double *score = (const double *)sv + (b * C + k) * S;
            int64_t m = 0, nk = 0;
            for (int64_t i = 0; i < S; i++)
                if (!has_score || score[i] > score_thr)
                    order[m++] = i;
            nms_scores = score;
            qsort(order, (size_t)m, sizeof *order, cmp_desc);
            for (int64_t j = 0; j < m && nk < keep; j++) {
                const nms_box *p = &boxes[b * S + order[j]];
                bool ok = true;
                for (int64_t q = 0; q < nk && ok; q++)
                    ok = !(iou(p, &boxes[b * S + kept[q]]) > iou_thr);
                if (!ok)
                    continue;
                kept[nk++] = order[j];
                out[3 * n] = b;
                out[3 * n + 1] = k;
                out[3 * n + 2] = order[j];
                n++;
            }
        }
    int tok = onnx_eager_begin();
    tg_tensor *y = tg_from_data(TG_INT64, 2, (int64_t[]){n, 3}, out);
    onnx_eager_end(tok);
    return misc_done(c, y);
}
