/* ONNX TfIdfVectorizer (src/onnx/ops_tfidf.c) and the optimizers of the
 * ai.onnx.preview.training domain (ops_training.c): a symbolic batch kept
 * unknown in a graph and run in a session, the domain's rules at load,
 * and hostile models refused by name in both modes (fixtures of
 * tests/data/make_onnx_import_fixtures.py, hostile_rest). Values against
 * references: tests/python/test_onnx_tfidf_training.py and onnx's node
 * cases (tests/onnx_conformance). */
#include "harness.h"
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tests/data/onnx_import/NAME.onnx (TG_TEST_DATA_DIR replaces tests/data) */
static const char *path_of(const char *name)
{
    static char buf[2][1400];
    static int k;
    const char *env = getenv("TG_TEST_DATA_DIR");
    k = (k + 1) % 2;
    snprintf(buf[k], sizeof buf[k], "%s%s/onnx_import/%s.onnx", env ? env : TG_SOURCE_DIR,
             env ? "" : "/tests/data", name);
    return buf[k];
}

/* model `name`, built into a graph without inputs (the batch unknown),
 * run in a session on x; the output's values must be want[] */
static void check_symbolic(const char *name, tg_tensor *x, const float *want, int64_t rows,
                           int64_t width)
{
    tg_onnx_model *m = tg_onnx_load(path_of(name));
    CHECK_OK(m ? TG_OK : tg_last_status());
    tg_graph *g = tg_graph_new(name);
    tg_graph_begin(g);
    tg_onnx_net *net = m ? tg_onnx_build(m, 0, NULL, NULL, NULL) : NULL;
    tg_graph_end();
    CHECK(net != NULL);
    if (net) {
        CHECK_SHAPE(tg_onnx_net_output(net, 0), -1, width);
        tg_session *s = tg_session_new(g);
        tg_tensor *ph = tg_onnx_net_input(net, 0), *out = tg_onnx_net_output(net, 0), *y = NULL;
        CHECK_OK(tg_session_run(s, 1, &ph, &x, 1, &out, &y, 0, NULL));
        CHECK_SHAPE(y, rows, width);
        float got[64] = {0};
        if (y && rows * width <= 64 && tg_copy_to(y, TG_FLOAT32, got) == TG_OK)
            for (int64_t i = 0; i < rows * width; i++)
                if (got[i] != want[i])
                    tt_fail(__FILE__, __LINE__, "%s: element %lld is %g, expected %g", name,
                            (long long)i, got[i], want[i]);
        tg_session_free(s);
    }
    tg_onnx_net_free(net);
    tg_graph_free(g);
    tg_onnx_free(m);
}

static void test_tfidf_symbolic_batch(void)
{
    /* onnx's tf_batch_uniandbigrams_skip5 rows, and a third */
    static const int64_t rows[3][6] = {{1, 1, 3, 3, 3, 7}, {8, 6, 7, 5, 6, 8}, {7, 8, 2, 2, 5, 6}};
    static const float want[3][7] = {{0, 3, 0, 0, 0, 0, 0}, {0, 0, 1, 0, 1, 1, 1},
                                     {2, 0, 1, 0, 1, 1, 0}};
    tg_tensor *x = tg_from_data(TG_INT64, 2, (int64_t[]){3, 6}, rows);
    check_symbolic("tfidf_symbolic", x, &want[0][0], 3, 7);
    /* 7-grams never fit a row of 6: zeros, the batch still unknown */
    static const float zeros[3][3] = {{0}};
    check_symbolic("tfidf_symbolic_short", x, &zeros[0][0], 3, 3);
}

/* the optimizers' domain must be imported, and only its ops Adagrad,
 * Adam and Momentum are */
static void test_training_domain(void)
{
    CHECK_ERROR(tg_onnx_load(path_of("bad_adam_no_domain")), TG_ERR_UNSUPPORTED,
                "unsupported op: ai.onnx.preview.training.Adam (the model does not import the "
                "domain) (node 'opt')");
    CHECK_ERROR(tg_onnx_load(path_of("bad_training_gradient")), TG_ERR_UNSUPPORTED,
                "unsupported op: ai.onnx.preview.training.Gradient (not imported) (node 'opt')");
}

/* nonsense refused with the node named, in both modes */
static void test_hostile(void)
{
    static const struct { const char *file, *needle; tg_status st; } cases[] = {
        {"bad_tfidf_mode", "node 'tfidf' (TfIdfVectorizer): mode should be TF, IDF or TFIDF, got 'BM25'", TG_ERR_IO},
        {"bad_tfidf_indexes", "node 'tfidf' (TfIdfVectorizer): ngram_indexes has 2 values, the pool 3 n-grams", TG_ERR_IO},
        {"bad_tfidf_counts", "ngram_counts[1] = 3: level 1 of the pool (4 values) should hold a whole number of 2-grams", TG_ERR_IO},
        {"bad_tfidf_lengths", "min_gram_length 3 and max_gram_length 2 should satisfy 1 <= min <= max <= 64", TG_ERR_IO},
        {"bad_tfidf_required", "node 'tfidf' (TfIdfVectorizer): attribute 'max_skip_count' is required", TG_ERR_IO},
        {"bad_tfidf_dtype", "node 'tfidf' (TfIdfVectorizer): X should be int32 or int64, got float32", TG_ERR_IO},
        {"bad_tfidf_huge", "node 'tfidf' (TfIdfVectorizer): level 1 compares 1 rows of 199990000 windows with 1 2-grams: more than 67108864 item comparisons", TG_ERR_UNSUPPORTED},
        {"bad_tfidf_strings", "pool_strings: string tensors do not exist in tensorgraph", TG_ERR_UNSUPPORTED},
        {"bad_adam_arity", "node 'opt' (Adam): 7 inputs and 3 outputs: expected R, T and 4 inputs per updated tensor", TG_ERR_IO},
        {"bad_adam_shape", "node 'opt' (Adam): input 3 ('G') should have the dtype and shape of input 2 ('X')", TG_ERR_IO},
        {"bad_adagrad_t", "node 'opt' (Adagrad): T should be one int64 value, is float32 of 1 elements", TG_ERR_IO},
        {"bad_adagrad_attr", "node 'opt' (Adagrad): attribute 'decay_factor' should be FLOAT, got FLOATS", TG_ERR_IO},
        {"bad_momentum_mode", "node 'opt' (Momentum): mode should be standard or nesterov, got 'heavy'", TG_ERR_IO},
        {"bad_momentum_alpha", "node 'opt' (Momentum): attribute 'alpha' is required", TG_ERR_IO},
    };
    tg_tensor *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 3}); /* the models' x */
    const char *nm = "x";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg_onnx_model *m = tg_onnx_load(path_of(cases[i].file));
        CHECK_OK(m ? TG_OK : tg_last_status());
        tg_state_dict *o = NULL;
        for (int mode = 0; m && mode < 2; mode++)
            CHECK_FAILS(tg_onnx_run(m, (tg_onnx_mode)mode, 1, &nm, &x, &o, NULL), cases[i].st,
                        cases[i].needle);
        tg_onnx_free(m);
    }
}

int main(void)
{
    RUN(test_tfidf_symbolic_batch);
    RUN(test_training_domain);
    RUN(test_hostile);
    return tt_finish();
}
