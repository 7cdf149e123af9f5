/* The full LeNet-5 module (tg_lenet5, 61706 parameters) in float64:
 * symbolic gradients from its static graph equal eager gradients to
 * 1e-9 relative, for every parameter. */
#include "harness.h"

#include <stdlib.h>

enum { BATCH = 4 };


static void test_lenet_symbolic_equals_eager(void)
{
    tg_generator *gen = tg_generator_new(11);
    tg_module *net = tg_lenet5(gen);
    CHECK_OK(tg_module_to_dtype(net, TG_FLOAT64));
    tg_named_tensor *params;
    int n = tg_module_parameters(net, &params);
    CHECK(n == 10);
    tg_tensor *x = tg_rand_normal(gen, TG_FLOAT64, 4, (int64_t[]){BATCH, 1, 28, 28}, 0, 1);
    tg_tensor *y = tt_tensor(TG_INT64, 1, (int64_t[]){BATCH}, (double[]){3, 1, 4, 1});

    /* eager: the tape */
    tg_tensor *loss = tg_cross_entropy(tg_module_forward(net, x), y, TG_REDUCTION_MEAN);
    CHECK_OK(tg_backward(loss, NULL, false));

    /* static: the same module inside a graph scope, parameters as variables */
    tg_graph *g = tg_graph_new("lenet64");
    tg_tensor *vars[10], *grads[10], *results[11];
    for (int i = 0; i < n; i++)
        vars[i] = tg_variable_ref(g, params[i].name, params[i].tensor);
    tg_tensor *px = tg_placeholder(g, "x", TG_FLOAT64, 4, (int64_t[]){BATCH, 1, 28, 28});
    tg_tensor *py = tg_placeholder(g, "y", TG_INT64, 1, (int64_t[]){BATCH});
    CHECK_OK(tg_graph_begin(g));
    tg_tensor *sloss = tg_cross_entropy(tg_module_forward(net, px), py, TG_REDUCTION_MEAN);
    CHECK_OK(tg_graph_end());
    CHECK_OK(tg_graph_gradients(g, 1, &sloss, NULL, n, vars, grads));
    CHECK_OK(tg_graph_verify(g));
    tg_session *s = tg_session_new(g);
    tg_tensor *fetch[11] = {sloss};
    for (int i = 0; i < n; i++)
        fetch[i + 1] = grads[i];
    CHECK_OK(tg_session_run(s, 2, (tg_tensor *[]){px, py}, (tg_tensor *[]){x, y}, n + 1, fetch,
                            results, 0, NULL));
    CHECK(tt_rel_diff(results[0], loss, 1e-3) <= 1e-12);
    for (int i = 0; i < n; i++) {
        double d = tt_rel_diff(results[i + 1], tg_grad(params[i].tensor), 1e-3);
        if (!(d <= 1e-9))
            tt_fail(__FILE__, __LINE__, "%s: symbolic vs eager gradient differ by %g",
                    params[i].name, d);
    }
    tg_session_free(s);
    tg_graph_free(g);
    tg_named_tensors_free(params);
    tg_module_free(net);
    tg_generator_free(gen);
}

int main(void)
{
    RUN(test_lenet_symbolic_equals_eager);
    return tt_finish();
}
