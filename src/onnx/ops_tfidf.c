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
 * mode and moved to their output coordinates by a product with a
 * constant 0/1 matrix [pool n-grams, output width]. Strings
 * (pool_strings) are not supported: tensorgraph has no string tensors. */
#include "onnx/ops.h"

#include <stdlib.h>
#include <string.h>

/* the most windows times pool n-grams times n one level may compare */
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
    if (nwin > TFIDF_MAX_COMPARE / n / K) {
        onnx_err(c, TG_ERR_UNSUPPORTED, "level %d compares %lld windows with %lld n-grams: "
                 "more than %lld comparisons per row", lv, (long long)nwin, (long long)K,
                 (long long)TFIDF_MAX_COMPARE);
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

/* the 0/1 matrix [counted n-grams, width] moving the counts of the
 * counted levels to their output coordinates, each row weighed by the
 * n-gram's weight where the mode uses weights */
static tg_tensor *placement(onnx_ictx *c, const tfidf_spec *t, int64_t rows)
{
    float *m = onnx_tmp_alloc(c, (size_t)(rows * t->width) * sizeof *m);
    if (!m)
        return NULL;
    memset(m, 0, (size_t)(rows * t->width) * sizeof *m);
    bool weighed = t->mode != TFIDF_TF && t->weights;
    int64_t r = 0;
    for (int lv = first_level(t); lv < end_level(t); lv++) {
        int64_t k0 = 0; /* the level's first n-gram in pool order */
        for (int l = 0; l < lv; l++)
            k0 += level_grams(t, l);
        for (int64_t k = k0; k < k0 + level_grams(t, lv); k++, r++)
            m[r * t->width + t->indexes[k]] = weighed ? t->weights[k] : 1.0f;
    }
    int tok = onnx_eager_begin();
    tg_tensor *p = tg_from_data(TG_FLOAT32, 2, (int64_t[]){rows, t->width}, m);
    onnx_eager_end(tok);
    return p;
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
    if (t->width > ONNX_IMPORT_MAX_ELEMENTS / rows ||
        (int64_t)t->n_indexes > ONNX_IMPORT_MAX_ELEMENTS / t->width)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "an output of width %lld (%lld rows, %d "
                        "n-grams) is too large", (long long)t->width, (long long)rows,
                        t->n_indexes);
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
    int64_t rows = 0;
    tg_tensor *parts[64]; /* max_gram_length <= 64 */
    int n_parts = 0;
    for (int lv = first_level(&t); lv < end_level(&t); lv++) {
        if (!level_grams(&t, lv))
            continue;
        if (!(parts[n_parts++] = level_counts(c, &t, x2, lv)))
            return tg_last_status();
        rows += level_grams(&t, lv);
    }
    tg_tensor *y;
    if (!n_parts) { /* the pool has no n-gram of a counted length */
        y = zero_rows(x2, t.width);
    } else {
        tg_tensor *counts = n_parts == 1 ? parts[0] : tg_concat(n_parts, parts, 1);
        if (counts && t.mode == TFIDF_IDF) /* present or not */
            counts = tg_cast(tg_gt(counts, tg_scalar(TG_FLOAT32, 0)), TG_FLOAT32);
        tg_tensor *place = counts ? placement(c, &t, rows) : NULL;
        y = place ? tg_matmul(counts, place) : NULL;
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
