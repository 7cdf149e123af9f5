/* A two-layer perceptron trained with eager autograd and a hand-written
 * SGD loop on a synthetic problem: learn y = sin(x0) + x1^2 / 2 from
 * random points. Prints the loss going down.
 *
 * Read it top to bottom: parameters are leaves created outside any
 * scope; each step runs inside a scope, so no intermediate needs a free. */
#include <tg/tg.h>

#include <math.h>
#include <stdio.h>

#define N_SAMPLES 512
#define HIDDEN 32
#define STEPS 300
#define LR 0.05

/* a leaf parameter: uniform in [-bound, bound], requires grad */
static tg_tensor *param(tg_generator *g, int64_t rows, int64_t cols, double bound)
{
    int64_t shape[2] = {rows, cols};
    tg_tensor *p = tg_rand_uniform(g, TG_FLOAT32, cols ? 2 : 1,
                                   cols ? shape : &rows, -bound, bound);
    tg_set_requires_grad(p, true);
    return p;
}

/* the data set: inputs in [-2, 2]^2 and their targets */
static void make_data(tg_generator *g, tg_tensor **x, tg_tensor **y)
{
    int64_t xs[2] = {N_SAMPLES, 2}, ys[2] = {N_SAMPLES, 1};
    *x = tg_rand_uniform(g, TG_FLOAT32, 2, xs, -2, 2);
    float *xv = tg_data(*x), yv[N_SAMPLES];
    for (int i = 0; i < N_SAMPLES; i++)
        yv[i] = sinf(xv[2 * i]) + 0.5f * xv[2 * i + 1] * xv[2 * i + 1];
    *y = tg_from_data(TG_FLOAT32, 2, ys, yv);
}

/* p -= lr * grad, then drop the gradient: parameters change in place, so
 * this runs with grad mode off */
static void sgd_step(tg_tensor **params, int n, double lr)
{
    tg_no_grad_begin();
    for (int i = 0; i < n; i++) {
        tg_add_(params[i], tg_grad(params[i]), -lr);
        tg_zero_grad(params[i]);
    }
    tg_no_grad_end();
}

int main(void)
{
    tg_generator *g = tg_generator_new(7);
    tg_tensor *x, *y;
    make_data(g, &x, &y);
    tg_tensor *w1 = param(g, HIDDEN, 2, 1 / sqrt(2.0)), *b1 = param(g, HIDDEN, 0, 1 / sqrt(2.0));
    tg_tensor *w2 = param(g, 1, HIDDEN, 1 / sqrt(HIDDEN)), *b2 = param(g, 1, 0, 1 / sqrt(HIDDEN));
    tg_tensor *params[4] = {w1, b1, w2, b2};

    double first = 0, last = 0;
    for (int step = 0; step < STEPS; step++) {
        tg_scope_begin();
        tg_tensor *h = tg_tanh(tg_linear(x, w1, b1));
        tg_tensor *loss = tg_mse_loss(tg_linear(h, w2, b2), y, TG_REDUCTION_MEAN);
        if (!loss || tg_backward(loss, NULL, false) != TG_OK) {
            fprintf(stderr, "mlp: %s\n", tg_last_error());
            return 1;
        }
        last = tg_item(loss);
        if (step == 0)
            first = last;
        if (step % 50 == 0 || step == STEPS - 1)
            printf("step %3d  loss %.5f\n", step, last);
        tg_scope_end();
        sgd_step(params, 4, LR);
    }
    printf("loss went from %.4f to %.4f\n", first, last);
    for (int i = 0; i < 4; i++)
        tg_release(params[i]);
    tg_release(x);
    tg_release(y);
    tg_generator_free(g);
    return last < first / 4 ? 0 : 1;
}
