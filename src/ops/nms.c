/* non_max_suppression: ONNX's NonMaxSuppression (and torchvision's nms per
 * batch and class): per batch b and class k, the boxes scoring above
 * score_threshold (when has_score) in descending score, ties to the lower
 * index, each kept unless its IoU with a kept one exceeds iou_threshold,
 * at most max_output of them; the output is int64 [n, 3] rows (b, k, box).
 * boxes [B, S, 4] are corners in either order ([y1, x1, y2, x2]) or, with
 * center_point_box, [x_center, y_center, width, height]; float32 boxes are
 * compared in float, as onnxruntime and torchvision compute. n depends on
 * the values: inference runs the selection where the inputs have data
 * (eagerly, and in a graph at run time), and gives an unknown dim on a
 * graph's values, as nonzero does (nonzero.c). No gradient. */
#include "ops/elementwise.h"

#include <math.h>
#include <stdlib.h>

/* the most IoU computations one node may take (a hostile model with a
 * million disjoint boxes must not hang) */
#define NMS_MAX_WORK ((int64_t)1 << 31)

typedef struct nms_attrs {
    bool center_point_box, has_score;
    int64_t max_output;
    double iou_threshold, score_threshold;
} nms_attrs;
static const tg_attr_spec nms_specs[] = {
    TG_SPEC_BOOL(nms_attrs, center_point_box, 0), TG_SPEC_BOOL(nms_attrs, has_score, 0),
    TG_SPEC_INT(nms_attrs, max_output, 0, .has_min = true, .min = 0),
    TG_SPEC_FLOAT(nms_attrs, iou_threshold, 0), TG_SPEC_FLOAT(nms_attrs, score_threshold, 0),
    {0}};

static const tg_arg_spec nms_in[] = {{"boxes", TG_DTS_FLOAT}, {"scores", TG_DTS_FLOAT}, {0}};
static const tg_arg_spec nms_out[] = {{"selected", TG_DT(TG_INT64)}, {0}};

typedef struct nms_box {
    double y1, x1, y2, x2, area;
} nms_box;

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

/* boxes per class kept at most: max_output, no more than the boxes */
static int64_t keep_limit(const nms_attrs *a, int64_t S)
{
    return a->max_output > S ? S : a->max_output;
}

static tg_status nms_check(const char *op, const tg_tensor *bx, const tg_tensor *sc,
                           const nms_attrs *a)
{
    const int64_t *bs = bx->shape, *ss = sc->shape;
    if (bx->ndim != 3 || bs[2] != 4 || sc->ndim != 3 || ss[0] != bs[0] || ss[2] != bs[1])
        return tg__error(TG_ERR_SHAPE, "%s: boxes should be [B, S, 4] and scores [B, C, S] "
                         "of the same B and S", op);
    if (!(a->iou_threshold >= 0 && a->iou_threshold <= 1))
        return tg__error(TG_ERR_ARG, "%s: iou_threshold should be in [0, 1], got %g", op,
                         a->iou_threshold);
    int64_t B = bs[0], S = bs[1], C = ss[1], keep = keep_limit(a, S), work;
    if (B < 0 || S < 0 || C < 0) /* a graph's unknown dims: checked when it runs */
        return TG_OK;
    if (__builtin_mul_overflow(B * C, S, &work) ||
        __builtin_mul_overflow(work, keep ? keep : 1, &work) || work > NMS_MAX_WORK)
        return tg__error(TG_ERR_UNSUPPORTED, "%s: %lld batches x %lld classes x %lld boxes "
                         "keeping up to %lld: too much work", op, (long long)B, (long long)C,
                         (long long)S, (long long)keep);
    return TG_OK;
}

/* the selection: its row count; the first `cap` rows written to out; -1
 * with an error when out of memory */
static int64_t nms_select(const tg_tensor *bx, const tg_tensor *sc, const nms_attrs *a,
                          int64_t *out, int64_t cap)
{
    int64_t B = bx->shape[0], S = bx->shape[1], C = sc->shape[1], keep = keep_limit(a, S);
    tg_tensor *bd = tg__contig_as(bx, TG_FLOAT64), *sd = tg__contig_as(sc, TG_FLOAT64);
    nms_box *boxes = malloc((size_t)(B * S > 0 ? B * S : 1) * sizeof *boxes);
    int64_t *order = malloc((size_t)(S ? S : 1) * sizeof *order);
    int64_t *kept = malloc((size_t)(S ? S : 1) * sizeof *kept), n = 0;
    if (!bd || !sd || !boxes || !order || !kept) {
        n = -1;
        tg__error(TG_ERR_NOMEM, "non_max_suppression: no memory for %lld boxes",
                  (long long)(B * S));
        goto done;
    }
    const double *bv = (const double *)tg__base(bd), *sv = (const double *)tg__base(sd);
    for (int64_t i = 0; i < B * S; i++)
        boxes[i] = box_at(bv + 4 * i, a->center_point_box, bx->dtype == TG_FLOAT32);
    for (int64_t b = 0; b < B; b++)
        for (int64_t k = 0; k < C; k++) {
            const double *score = sv + (b * C + k) * S;
            int64_t m = 0, nk = 0;
            for (int64_t i = 0; i < S; i++)
                if (!a->has_score || score[i] > a->score_threshold)
                    order[m++] = i;
            nms_scores = score;
            qsort(order, (size_t)m, sizeof *order, cmp_desc);
            for (int64_t j = 0; j < m && nk < keep; j++) {
                const nms_box *p = &boxes[b * S + order[j]];
                bool ok = true;
                for (int64_t q = 0; q < nk && ok; q++)
                    ok = !(iou(p, &boxes[b * S + kept[q]]) > a->iou_threshold);
                if (!ok)
                    continue;
                kept[nk++] = order[j];
                if (n < cap) {
                    out[3 * n] = b;
                    out[3 * n + 1] = k;
                    out[3 * n + 2] = order[j];
                }
                n++;
            }
        }
done:
    tg_release(bd);
    tg_release(sd);
    free(boxes), free(order), free(kept);
    return n;
}

static tg_status nms_infer(tg_op_ctx *c)
{
    const tg_tensor *bx = c->in[0], *sc = c->in[1];
    tg_status s = nms_check(c->op->name, bx, sc, c->attr);
    if (s != TG_OK)
        return s;
    if (!bx->storage || !sc->storage) { /* a graph's values: known when it runs */
        c->out_meta[0] = (tg_meta){.dtype = TG_INT64, .ndim = 2, .shape = {-1, 3}};
        return TG_OK;
    }
    int64_t n = nms_select(bx, sc, c->attr, NULL, 0);
    return n < 0 ? tg_last_status() : tg_infer_set(c, 0, TG_INT64, 2, (int64_t[]){n, 3});
}

static tg_status nms_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    int64_t cap = out->shape[0];
    int64_t n = nms_select(c->in[0], c->in[1], c->attr, (int64_t *)tg__base(out), cap);
    if (n < 0)
        return tg_last_status();
    if (n != cap) /* the values changed since inference */
        return tg__error(TG_ERR_INTERNAL, "non_max_suppression: %lld rows selected, the "
                         "output has room for %lld", (long long)n, (long long)cap);
    return TG_OK;
}

const tg_op_def tg_op_non_max_suppression = {
    .name = "non_max_suppression", .n_in = 2, .n_out = 1, .inputs = nms_in,
    .outputs = nms_out, .attrs = {nms_specs, sizeof(nms_attrs)}, .flags = TG_OP_PURE,
    .nondiff = true, .infer = nms_infer, .kernel = {[TG_CPU] = nms_kernel}};

const tg_op_def *const tg_ops_nms[] = {&tg_op_non_max_suppression, NULL};
