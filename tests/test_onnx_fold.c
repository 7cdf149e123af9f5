/* Batch norm folded into the convolution before it at ONNX import
 * (src/onnx/fold_bn.c): a crafted model (tests/data/onnx_fold, made by
 * make_onnx_fold_fixture.py) with a foldable Conv + BatchNormalization, a
 * depthwise one without a bias, and one whose Conv output has a second
 * reader (not foldable), built with
 * and without folding (keep_batch_norm), trainable (never folded) and
 * eagerly: the batch_norm nodes that remain, and the outputs within 1e-5
 * relative of the unfolded ones. The torchvision models are checked in
 * tests/python/test_onnx_fold.py. */
#include "harness.h"
#include "graph/graph_impl.h"
#include "ops/op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *model_path(void)
{
    return TG_SOURCE_DIR "/tests/data/onnx_fold/conv_bn.onnx";
}

static int count_op(const tg_graph *g, const char *op)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++)
        n += g->nodes[i].op && !strcmp(g->nodes[i].op->name, op);
    return n;
}

/* the model built into a graph with opts, run on xv; *n_bn: its batch
 * norms (graphs decompose them: one rsqrt each) */
static tg_tensor *run_graph(tg_onnx_model *m, const tg_onnx_opts *opts, tg_tensor *xv,
                            int *n_bn)
{
    tg_graph *g = tg_graph_new("imported");
    tg_graph_begin(g);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 4, tg_shape(xv));
    const char *nm = "x";
    tg_onnx_net *net = tg_onnx_build(m, 1, &nm, &x, opts);
    tg_graph_end();
    tg_tensor *y = NULL, *out = net ? tg_onnx_net_output(net, 0) : NULL;
    *n_bn = count_op(g, "rsqrt");
    tg_session *s = out ? tg_session_new(g) : NULL;
    if (s)
        CHECK_OK(tg_session_run(s, 1, &x, &xv, 1, &out, &y, 0, NULL));
    else
        tt_fail(__FILE__, __LINE__, "build failed: %s", tg_last_error());
    tg_session_free(s);
    tg_onnx_net_free(net);
    tg_graph_free(g);
    return y;
}

/* max |a - b| / max |b| */
static double rel_diff(tg_tensor *a, tg_tensor *b)
{
    if (!a || !b || tg_numel(a) != tg_numel(b))
        return INFINITY;
    int64_t n = tg_numel(a);
    double *x = malloc((size_t)n * 8), *y = malloc((size_t)n * 8), d = 0, s = 0;
    tg_copy_to(a, TG_FLOAT64, x);
    tg_copy_to(b, TG_FLOAT64, y);
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs(x[i] - y[i]));
        s = fmax(s, fabs(y[i]));
    }
    free(x);
    free(y);
    return s > 0 ? d / s : d;
}

static void test_fold(void)
{
    tg_onnx_model *m = tg_onnx_load(model_path());
    CHECK(m != NULL);
    if (!m)
        return;
    tg_generator *gen = tg_generator_new(7);
    tg_tensor *xv = tg_rand_uniform(gen, TG_FLOAT32, 4, (int64_t[]){2, 3, 9, 9}, -1, 1);
    int n_kept, n_folded, n_trainable;
    tg_tensor *kept = run_graph(m, &(tg_onnx_opts){.keep_batch_norm = true}, xv, &n_kept);
    tg_tensor *folded = run_graph(m, NULL, xv, &n_folded);
    tg_tensor *trained = run_graph(m, &(tg_onnx_opts){.trainable = true}, xv, &n_trainable);
    CHECK(n_kept == 3);
    CHECK(n_folded == 1); /* c3's output has a second reader */
    CHECK(n_trainable == 3); /* gradients must reach the parameters */
    double d = rel_diff(folded, kept);
    if (!(d <= 1e-5))
        tt_fail(__FILE__, __LINE__, "folded differs from unfolded by %g relative", d);
    CHECK(d > 0 || n_folded == n_kept); /* not the same computation */
    CHECK(rel_diff(trained, kept) <= 1e-6);
    /* eagerly, folded too */
    tg_state_dict *o = NULL;
    const char *nm = "x";
    CHECK_OK(tg_onnx_run(m, TG_ONNX_EAGER, 1, &nm, &xv, &o, NULL));
    tg_onnx_value_info vi;
    tg_onnx_output_info(m, 0, &vi);
    d = o ? rel_diff(tg_state_dict_get(o, vi.name), kept) : INFINITY;
    if (!(d <= 1e-5))
        tt_fail(__FILE__, __LINE__, "eager folded differs by %g relative", d);
    tg_state_dict_free(o);
    tg_generator_free(gen);
    tg_onnx_free(m);
}

int main(void)
{
    RUN(test_fold);
    return tt_finish();
}
