/* ONNX TfIdfVectorizer (opset 9) on integer inputs, composed of tensor
 * ops so that it runs in graphs too. The counts depend on X's values but
 * the output's shape does not ([max(ngram_indexes) + 1], per row of a 2-D
 * X), so nothing needs X at import time.
 *
 * Per gram length n (min_gram_length..max_gram_length, the levels the
 * pool has) the windows of X that could hold an n-gram are gathered once:
 * for every skip s (0..max_skip_count; unigrams only at s = 0, as
 * onnxruntime counts them once) and start i whose n-gram fits in the row,
 * the items X[i + j * (s + 1)], j < n, form one window (one index_select
 * at constant positions). Every window is
 * compared with every n-gram of the pool at that level; a window matches
 * when all n items are equal, and the matches summed over the windows
 * are that n-gram's count. The counts (in pool order) are weighed by
 * mode and added at their output coordinates (place_counts: a cumulative
 * sum in coordinate order, differenced at constant positions). Strings
 * (pool_strings) are not supported: tensorgraph has no string tensors. */
#include "onnx/ops.h"

#include <stdlib.h>
#include <string.h>

/* the most item comparisons (rows x windows x pool n-grams x n) one level
 * may make: its comparison tensor's elements (a symbolic batch counts as
 * one row; the graph checks nothing when it runs) */
#define TFIDF_MAX_COMPARE ((int64_t)1 << 26)

typedef enum { TFIDF_TF, TFIDF_IDF, TFIDF_TFIDF } tfidf_mode;

typedef struct tfidf_spec {
    int64_t min_n, max_n, max_skip;
    tfidf_mode mode;
    const int64_t *pool, *counts, *indexes;
    int n_pool, n_counts, n_indexes, n_weights;
    const float *weights; /* NULL: all ones */
    int64_t width;        /* max(ngram_indexes) + 1 */
} tfidf_spec;

/* the number of n-grams at level `lv` (gram length lv + 1) of the pool */
static int64_t level_grams(const tfidf_spec *t, int lv)
{
    int64_t end = lv + 1 < t->n_counts ? t->counts[lv + 1] : t->n_pool;
    return (end - t->counts[lv]) / (lv + 1);
}

static tg_status read_mode(onnx_ictx *c, tfidf_spec *t)
{
    const char *mode;
    tg_status s = oa_string(c, "mode", NULL, &mode);
    if (s != TG_OK)
        return s;
    if (!mode)
        return onnx_err(c, TG_ERR_IO, "attribute 'mode' (TF, IDF or TFIDF) is required");
    if (!strcmp(mode, "TF"))
        t->mode = TFIDF_TF;
    else if (!strcmp(mode, "IDF"))
        t->mode = TFIDF_IDF;
    else if (!strcmp(mode, "TFIDF"))
        t->mode = TFIDF_TFIDF;
    else
        return onnx_err(c, TG_ERR_IO, "mode should be TF, IDF or TFIDF, got '%s'", mode);
    return TG_OK;
}

static tg_status read_lengths(onnx_ictx *c, tfidf_spec *t)
{
    static const char *const names[3] = {"min_gram_length", "max_gram_length",
                                         "max_skip_count"};
    int64_t *dst[3] = {&t->min_n, &t->max_n, &t->max_skip};
    for (int k = 0; k < 3; k++) {
        if (!onnx_attr(c, names[k]))
            return onnx_err(c, TG_ERR_IO, "attribute '%s' is required", names[k]);
        tg_status s = oa_int(c, names[k], 0, dst[k]);
        if (s != TG_OK)
            return s;
    }
    if (t->min_n < 1 || t->max_n < t->min_n || t->max_n > 64)
        return onnx_err(c, TG_ERR_IO, "min_gram_length %lld and max_gram_length %lld should "
                        "satisfy 1 <= min <= max <= 64", (long long)t->min_n,
                        (long long)t->max_n);
    if (t->max_skip < 0 || t->max_skip > 1000000)
        return onnx_err(c, TG_ERR_IO, "max_skip_count should be in [0, 1000000], got %lld",
                        (long long)t->max_skip);
    return TG_OK;
}

/* ngram_counts: level starts, ascending from 0, each level a whole
 * number of n-grams; ngram_indexes (and weights): one per n-gram */
static tg_status check_pool(onnx_ictx *c, tfidf_spec *t)
{
    if (t->n_counts < 1)
        return onnx_err(c, TG_ERR_IO, "attribute 'ngram_counts' is required");
    if (t->counts[0] != 0)
        return onnx_err(c, TG_ERR_IO, "ngram_counts should start at 0, starts at %lld",
                        (long long)t->counts[0]);
    int64_t grams = 0;
    for (int lv = 0; lv < t->n_counts; lv++) {
        int64_t end = lv + 1 < t->n_counts ? t->counts[lv + 1] : t->n_pool;
        if (end < t->counts[lv] || end > t->n_pool || (end - t->counts[lv]) % (lv + 1))
            return onnx_err(c, TG_ERR_IO, "ngram_counts[%d] = %lld: level %d of the pool "
                            "(%d values) should hold a whole number of %d-grams", lv,
                            (long long)t->counts[lv], lv, t->n_pool, lv + 1);
        grams += level_grams(t, lv);
    }
    if (t->n_indexes != grams)
        return onnx_err(c, TG_ERR_IO, "ngram_indexes has %d values, the pool %lld n-grams",
                        t->n_indexes < 0 ? 0 : t->n_indexes, (long long)grams);
    if (t->weights && t->n_weights != grams)
        return onnx_err(c, TG_ERR_IO, "weights has %d values, the pool %lld n-grams",
                        t->n_weights, (long long)grams);
    t->width = 0;
    for (int k = 0; k < t->n_indexes; k++) {
        if (t->indexes[k] < 0 || t->indexes[k] >= ONNX_IMPORT_MAX_ELEMENTS)
            return onnx_err(c, TG_ERR_IO, "ngram_indexes[%d] = %lld is out of range", k,
                            (long long)t->indexes[k]);
        if (t->indexes[k] + 1 > t->width)
            t->width = t->indexes[k] + 1;
    }
    if (!t->width)
        return onnx_err(c, TG_ERR_IO, "the pool holds no n-grams (the output would have no "
                        "width)");
    return TG_OK;
}

static tg_status read_spec(onnx_ictx *c, tfidf_spec *t)
{
    memset(t, 0, sizeof *t);
    tg_status s = read_mode(c, t);
    if (s == TG_OK)
        s = read_lengths(c, t);
    if (s == TG_OK && onnx_attr(c, "pool_strings"))
        s = onnx_err(c, TG_ERR_UNSUPPORTED, "pool_strings: string tensors do not exist in "
                     "tensorgraph (pool_int64s is supported)");
    if (s == TG_OK)
        s = oa_ints(c, "pool_int64s", &t->pool, &t->n_pool);
    if (s == TG_OK && t->n_pool < 0)
        s = onnx_err(c, TG_ERR_IO, "attribute 'pool_int64s' is required");
    if (s == TG_OK)
        s = oa_ints(c, "ngram_counts", &t->counts, &t->n_counts);
    if (s == TG_OK)
        s = oa_ints(c, "ngram_indexes", &t->indexes, &t->n_indexes);
    if (s == TG_OK)
        s = oa_floats(c, "weights", &t->weights, &t->n_weights);
    if (s == TG_OK && t->n_weights < 0)
        t->weights = NULL;
    return s == TG_OK ? check_pool(c, t) : s;
}

/* the number of windows of gram length n in a row of C items: per skip
 * s (unigrams: s = 0 only) the starts whose n-gram fits, C - (n-1)(s+1) */
static int64_t level_window_count(const tfidf_spec *t, int64_t C, int64_t n)
{
    int64_t skips = n == 1 ? 0 : t->max_skip, total = 0;
    for (int64_t s = 0; s <= skips && C - (n - 1) * (s + 1) > 0; s++)
        total += C - (n - 1) * (s + 1);
    return total;
}

/* the windows of x [B, C] (int64) for gram length n: [B, nwin, n], one
 * index_select at the constant positions i + j * (s + 1) */
static tg_tensor *level_windows(const tfidf_spec *t, tg_tensor *x, int64_t n, int64_t nwin)
{
    int64_t C = tg_shape(x)[1], skips = n == 1 ? 0 : t->max_skip;
    int64_t *pos = malloc((size_t)(nwin * n) * sizeof *pos), k = 0;
    if (!pos)
        return tg__error_null(TG_ERR_NOMEM, "TfIdfVectorizer: out of memory");
    for (int64_t s = 0; s <= skips && C - (n - 1) * (s + 1) > 0; s++)
        for (int64_t i = 0; i + (n - 1) * (s + 1) < C; i++)
            for (int64_t j = 0; j < n; j++)
                pos[k++] = i + j * (s + 1);
    int tok = onnx_eager_begin();
    tg_tensor *idx = tg_from_data(TG_INT64, 1, (int64_t[]){nwin * n}, pos);
    onnx_eager_end(tok);
    free(pos);
    tg_tensor *flat = idx ? tg_index_select(x, 1, idx) : NULL;
    return flat ? tg_reshape(flat, 3, (int64_t[]){tg_shape(x)[0], nwin, n}) : NULL;
}

/* zeros [B, K] float32 for the rows of x [B, C]: B may be unknown (a
 * symbolic batch in a graph), so they are derived from x (the sums of
 * x != x, false everywhere, over rows of any C) rather than made with a
 * shape */
static tg_tensor *zero_rows(tg_tensor *x, int64_t K)
{
    tg_tensor *z = tg_sum(tg_cast(tg_ne(x, x), TG_FLOAT32), 1, (int[]){1}, true);
    return z ? tg_expand(z, 2, (int64_t[]){tg_shape(x)[0], K}) : NULL;
}

/* the counts of the pool's n-grams at level lv (length lv + 1) in each
 * row of x: [B, K], float32 */
static tg_tensor *level_counts(onnx_ictx *c, const tfidf_spec *t, tg_tensor *x, int lv)
{
    int64_t n = lv + 1, K = level_grams(t, lv);
    int64_t nwin = level_window_count(t, tg_shape(x)[1], n);
    if (!nwin) /* no n-gram fits in a row: all counts 0 */
        return zero_rows(x, K);
    int64_t rows = tg_shape(x)[0] > 0 ? tg_shape(x)[0] : 1;
    if (nwin > TFIDF_MAX_COMPARE / n / K / rows) {
        onnx_err(c, TG_ERR_UNSUPPORTED, "level %d compares %lld rows of %lld windows with "
                 "%lld %lld-grams: more than %lld item comparisons", lv, (long long)rows,
                 (long long)nwin, (long long)K, (long long)n, (long long)TFIDF_MAX_COMPARE);
        return NULL;
    }
    tg_tensor *w = level_windows(t, x, n, nwin);
    int tok = onnx_eager_begin();
    tg_tensor *pool = tg_from_data(TG_INT64, 2, (int64_t[]){K, n}, t->pool + t->counts[lv]);
    onnx_eager_end(tok);
    if (!w || !pool)
        return NULL;
    /* [B, W, 1, n] == [K, n] -> [B, W, K, n]; all n equal -> [B, W, K] */
    tg_tensor *eq = tg_cast(tg_eq(tg_unsqueeze(w, 2), pool), TG_FLOAT32);
    tg_tensor *all = n == 1 ? tg_squeeze(eq, 3) : tg_min(eq, 1, (int[]){3}, false);
    return tg_sum(all, 1, (int[]){1}, false);
}

/* the levels counted: gram lengths in [min, max] that the pool has */
static int first_level(const tfidf_spec *t) { return (int)t->min_n - 1; }
static int end_level(const tfidf_spec *t)
{
    return (int)(t->max_n < t->n_counts ? t->max_n : t->n_counts);
}

/* the counted n-grams (pool positions, in pool order) */
static int64_t counted_grams(const tfidf_spec *t, int64_t *ids)
{
    int64_t r = 0, k0 = 0;
    for (int lv = 0; lv < end_level(t); k0 += level_grams(t, lv), lv++)
        for (int64_t k = k0; lv >= first_level(t) && k < k0 + level_grams(t, lv); k++)
            ids[r++] = k;
    return r;
}

typedef struct keyed {
    int64_t key, col; /* an output coordinate, a column of the counts */
} keyed;

static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->col < y->col ? -1 : x->col > y->col;
}

/* Y [B, width] from the counts [B, K] of the counted n-grams ids[0..K):
 * each count (weighed where the mode uses weights) added at its output
 * coordinate. The counts ordered by coordinate are summed cumulatively
 * (float64, a zero in front); the coordinate j takes the difference of
 * the sums after and before its n-grams (0 where it has none; several
 * n-grams may share it). Two index_selects of `width` positions: no
 * [K, width] matrix, so a vocabulary of 10^5 n-grams costs O(B (K + width)). */
static tg_tensor *place_counts(onnx_ictx *c, const tfidf_spec *t, tg_tensor *x,
                               tg_tensor *counts, const int64_t *ids, int64_t K)
{
    keyed *order = onnx_tmp_alloc(c, (size_t)(K + 1) * sizeof *order);
    int64_t *cols = onnx_tmp_alloc(c, (size_t)(K + 2 * t->width + 1) * sizeof *cols);
    float *w = onnx_tmp_alloc(c, (size_t)(K + 1) * sizeof *w);
    if (!order || !cols || !w)
        return NULL;
    int64_t *lo = cols + K, *hi = lo + t->width;
    for (int64_t q = 0; q < K; q++) {
        order[q] = (keyed){t->indexes[ids[q]], q};
        w[q] = t->mode != TFIDF_TF && t->weights ? t->weights[ids[q]] : 1.0f;
    }
    qsort(order, (size_t)K, sizeof *order, by_key);
    for (int64_t k = 0; k < K; k++)
        cols[k] = order[k].col;
    for (int64_t j = 0, k = 0; j < t->width; j++) { /* j's range in the sorted order */
        lo[j] = k;
        while (k < K && order[k].key == j)
            k++;
        hi[j] = k;
    }
    int tok = onnx_eager_begin();
    tg_tensor *ct = tg_from_data(TG_INT64, 1, (int64_t[]){K}, cols);
    tg_tensor *wt = tg_from_data(TG_FLOAT32, 1, (int64_t[]){K}, w);
    tg_tensor *lt = tg_from_data(TG_INT64, 1, (int64_t[]){t->width}, lo);
    tg_tensor *ht = tg_from_data(TG_INT64, 1, (int64_t[]){t->width}, hi);
    onnx_eager_end(tok);
    if (!ct || !wt || !lt || !ht)
        return NULL;
    tg_tensor *sorted = tg_index_select(tg_mul(counts, wt), 1, ct);
    tg_tensor *sums[2] = {tg_cast(zero_rows(x, 1), TG_FLOAT64),
                          tg_cumsum(tg_cast(sorted, TG_FLOAT64), 1, false, false)};
    tg_tensor *cs = tg_concat(2, sums, 1);
    tg_tensor *y = tg_sub(tg_index_select(cs, 1, ht), tg_index_select(cs, 1, lt));
    return tg_cast(y, TG_FLOAT32);
}

static tg_status check_input(onnx_ictx *c, const tfidf_spec *t, tg_tensor *x)
{
    tg_dtype dt = tg_dtype_of(x);
    if (dt != TG_INT32 && dt != TG_INT64)
        return onnx_err(c, TG_ERR_IO, "X should be int32 or int64, got %s", tg_dtype_name(dt));
    int r = tg_ndim(x);
    if (r != 1 && r != 2)
        return onnx_err(c, TG_ERR_IO, "X should be 1-D or 2-D, has rank %d", r);
    if (tg_shape(x)[r - 1] < 0)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "X's last dim (the sequence) must be known "
                        "at import");
    int64_t rows = r == 2 && tg_shape(x)[0] > 0 ? tg_shape(x)[0] : 1;
    if (t->width > ONNX_IMPORT_MAX_ELEMENTS / rows)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "an output of %lld rows of width %lld is too "
                        "large", (long long)rows, (long long)t->width);
    return TG_OK;
}

static tg_status m_tfidf(onnx_ictx *c)
{
    tfidf_spec t;
    tg_tensor *x = oi_req(c, 0, "X");
    tg_status s = x ? read_spec(c, &t) : tg_last_status();
    if (s == TG_OK)
        s = check_input(c, &t, x);
    if (s != TG_OK)
        return s;
    bool flat = tg_ndim(x) == 1;
    tg_tensor *x2 = onnx_as(flat ? tg_unsqueeze(x, 0) : x, TG_INT64);
    tg_tensor *parts[64]; /* max_gram_length <= 64 */
    int n_parts = 0;
    for (int lv = first_level(&t); lv < end_level(&t); lv++) {
        if (!level_grams(&t, lv))
            continue;
        if (!(parts[n_parts++] = level_counts(c, &t, x2, lv)))
            return tg_last_status();
    }
    int64_t *ids = onnx_tmp_alloc(c, (size_t)(t.n_indexes + 1) * sizeof *ids);
    if (!ids)
        return tg_last_status();
    int64_t K = counted_grams(&t, ids);
    tg_tensor *y;
    if (!n_parts) { /* the pool has no n-gram of a counted length */
        y = zero_rows(x2, t.width);
    } else {
        tg_tensor *counts = n_parts == 1 ? parts[0] : tg_concat(n_parts, parts, 1);
        if (counts && t.mode == TFIDF_IDF) /* present or not */
            counts = tg_cast(tg_gt(counts, tg_scalar(TG_FLOAT32, 0)), TG_FLOAT32);
        y = counts ? place_counts(c, &t, x2, counts, ids, K) : NULL;
    }
    if (y && flat)
        y = tg_squeeze(y, 0);
    c->out[0] = y;
    return y ? TG_OK : tg_last_status();
}

const onnx_op_entry onnx_ops_tfidf[] = {
    {"TfIdfVectorizer", {9}, 1, 1, 1, 1, m_tfidf, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
