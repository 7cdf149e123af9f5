/* LeNet-5 training-step micro-benchmark (JSON lines): ms per step (forward,
 * cross-entropy, backward, SGD with momentum, zero_grad) at batch 64 on a
 * fixed random batch, at 1 and 2 threads; median and minimum over STEPS
 * steps after a warm-up. The minimum is what the code does on an idle
 * machine; a whole MNIST epoch is 938 such steps plus data loading.
 * usage: bench_lenet_step [steps] [threads] */
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "timing.h"

/* one step; returns its milliseconds, or -1 on failure */
static double step(tg_module *model, tg_optimizer *opt, tg_tensor *x, tg_tensor *y)
{
    tg_scope_begin();
    double t0 = now_ms();
    tg_tensor *loss = tg_cross_entropy(tg_module_forward(model, x), y,
                                       TG_REDUCTION_MEAN);
    bool ok = loss && tg_backward(loss, NULL, false) == TG_OK &&
              tg_optim_step(opt) == TG_OK;
    tg_optim_zero_grad(opt);
    double t1 = now_ms();
    tg_scope_end();
    return ok ? t1 - t0 : -1;
}

static int bench(int threads, int steps)
{
    tg_set_num_threads(threads);
    tg_generator *g = tg_generator_new(1);
    tg_module *model = tg_lenet5(g);
    tg_named_tensor *params;
    int n = tg_module_parameters(model, &params);
    tg_tensor *p[16];
    for (int i = 0; i < n && i < 16; i++)
        p[i] = params[i].tensor;
    tg_sgd_opts so = tg_sgd_defaults();
    so.lr = 0.02;
    so.momentum = 0.9;
    tg_optimizer *opt = tg_optim_sgd(n, p, &so);
    tg_named_tensors_free(params);
    tg_tensor *x = tg_rand_uniform(g, TG_FLOAT32, 4, (int64_t[]){64, 1, 28, 28}, 0, 1);
    tg_tensor *y = tg_cast(tg_rand_uniform(g, TG_FLOAT32, 1, (int64_t[]){64}, 0, 9.99),
                           TG_INT64);
    double *ms = malloc((size_t)steps * sizeof *ms);
    int bad = !opt || !x || !y || !ms;
    for (int s = 0; s < 20 && !bad; s++) /* warm-up: caches, allocator, pool */
        bad = step(model, opt, x, y) < 0;
    for (int s = 0; s < steps && !bad; s++)
        bad = (ms[s] = step(model, opt, x, y)) < 0;
    if (bad) {
        fprintf(stderr, "bench_lenet_step: %s\n", tg_last_error());
    } else {
        qsort(ms, (size_t)steps, sizeof *ms, cmp_double);
        printf("{\"bench\":\"lenet_step\",\"batch\":64,\"threads\":%d,\"steps\":%d,"
               "\"step_ms\":%.3f,\"step_min_ms\":%.3f,\"epoch_s_est\":%.2f}\n",
               threads, steps, ms[steps / 2], ms[0], ms[steps / 2] * 938 / 1e3);
    }
    free(ms);
    tg_optim_free(opt);
    tg_module_free(model);
    tg_generator_free(g);
    return bad;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 200;
    int only = argc > 2 ? atoi(argv[2]) : 0;
    if (steps < 1)
        steps = 200;
    int bad = 0;
    for (int t = 1; t <= 2; t++)
        if (!only || only == t)
            bad |= bench(t, steps);
    return bad;
}
