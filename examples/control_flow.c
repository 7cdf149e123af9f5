/* A model whose forward pass runs a data-dependent while loop, trained as
 * one static graph with gradients through the loop.
 *
 * The model refines a hidden state until it settles:
 *     a = x W1 + b1;  h = tanh(a)
 *     while mean|h_new - h| > tol and k < 12:  h_new = tanh(h W2 + a)
 *     y = h W3 + b3
 * so the number of refinement steps depends on the batch and on the
 * weights, and changes as training goes on. The loop is tg_while_loop: in
 * the graph it is one while_loop node whose condition and body are graphs
 * of their own; W2 and a are values of the enclosing graph the body uses
 * (captures). tg_graph_sgd appends the gradient (a while_grad node running
 * the loop backwards over the iterations' stacked states) and the updates.
 * It prints the loss and the trip count as training goes, checks the
 * graph's loss against the same model run eagerly, and writes the graph's
 * DOT picture with the loop's bodies drawn as clusters.
 *   control_flow [out.dot] */
#include <tg/tg.h>

#include <math.h>
#include <stdio.h>

#define BATCH 64
#define IN 4
#define HIDDEN 16
#define STEPS 400
#define LR 0.1
#define TOL 0.002
#define MAX_REFINE 12

typedef struct model {
    tg_tensor *w1, *b1, *w2, *w3, *b3;
} model;

/* loop state: h, delta (mean change of the last step), k (steps taken) */
typedef struct refine { tg_tensor *w2, *a; } refine;

static tg_status keep_going(void *user, tg_tensor *const *v, tg_tensor **out)
{
    (void)user;
    out[0] = tg_logical_and(tg_gt(v[1], tg_scalar(TG_FLOAT32, TOL)),
                            tg_lt(v[2], tg_scalar(TG_INT64, MAX_REFINE)));
    return out[0] ? TG_OK : tg_last_status();
}

static tg_status refine_step(void *user, tg_tensor *const *v, tg_tensor **out)
{
    const refine *r = user; /* w2 and a: captured from the enclosing graph */
    tg_tensor *h = tg_tanh(tg_add(tg_matmul(v[0], r->w2), r->a));
    out[0] = h;
    out[1] = tg_mean(tg_abs(tg_sub(h, v[0])), 0, NULL, false);
    out[2] = tg_add_scalar(v[2], 1);
    return out[0] && out[1] && out[2] ? TG_OK : tg_last_status();
}

/* the forward pass; *steps gets the loop's trip count */
static tg_tensor *forward(const model *m, tg_tensor *x, tg_tensor **steps)
{
    tg_tensor *a = tg_add(tg_matmul(x, m->w1), m->b1);
    refine r = {m->w2, a};
    tg_tensor *init[3] = {tg_tanh(a), tg_scalar(TG_FLOAT32, 1), tg_scalar(TG_INT64, 0)};
    tg_tensor *out[3];
    tg_loop_options o = {.name = "refine", .max_iterations = MAX_REFINE};
    if (tg_while_loop(keep_going, refine_step, &r, 3, init, out, &o) != TG_OK)
        return NULL;
    *steps = out[2];
    return tg_add(tg_matmul(out[0], m->w3), m->b3);
}

static tg_tensor *param(tg_generator *g, int64_t rows, int64_t cols, double bound)
{
    int64_t shape[2] = {rows, cols};
    return tg_rand_uniform(g, TG_FLOAT32, cols ? 2 : 1, cols ? shape : &rows, -bound, bound);
}

/* a batch: inputs in [-1, 1]^IN, targets sin(x0 + x1) * x2 + x3 / 2 */
static void batch(tg_generator *g, tg_tensor *x, tg_tensor *y)
{
    tg_scope_begin();
    tg_copy_(x, tg_rand_uniform(g, TG_FLOAT32, 2, (int64_t[]){BATCH, IN}, -1, 1));
    tg_scope_end();
    const float *xv = tg_data(x);
    float *yv = tg_data(y);
    for (int i = 0; i < BATCH; i++) {
        const float *p = xv + i * IN;
        yv[i] = sinf(p[0] + p[1]) * p[2] + 0.5f * p[3];
    }
}

int main(int argc, char **argv)
{
    const char *dot = argc > 1 ? argv[1] : "control_flow.dot";
    tg_generator *gen = tg_generator_new(11);
    model m = {param(gen, IN, HIDDEN, 0.5), param(gen, HIDDEN, 0, 0.5),
               param(gen, HIDDEN, HIDDEN, 0.15), param(gen, HIDDEN, 1, 0.25),
               param(gen, 1, 0, 0.25)};
    tg_tensor *params[5] = {m.w1, m.b1, m.w2, m.w3, m.b3};
    tg_tensor *xv = tg_zeros(TG_FLOAT32, 2, (int64_t[]){BATCH, IN});
    tg_tensor *yv = tg_zeros(TG_FLOAT32, 2, (int64_t[]){BATCH, 1});

    /* the training step as one graph: forward (with the loop), gradients
     * through it, SGD updates of the parameters (variables by reference);
     * the scope owns every tensor made from here on */
    tg_scope_begin();
    tg_graph *g = tg_graph_new("control_flow");
    for (int i = 0; i < 5; i++)
        tg_variable_ref(g, NULL, params[i]);
    tg_tensor *x = tg_placeholder(g, "x", TG_FLOAT32, 2, (int64_t[]){BATCH, IN});
    tg_tensor *y = tg_placeholder(g, "y", TG_FLOAT32, 2, (int64_t[]){BATCH, 1});
    tg_tensor *steps = NULL, *updates[5];
    tg_graph_begin(g);
    tg_tensor *loss = tg_mse_loss(forward(&m, x, &steps), y, TG_REDUCTION_MEAN);
    tg_graph_end();
    tg_sgd_opts sgd = {.lr = LR};
    if (!loss || tg_graph_sgd(loss, 5, params, &sgd, NULL, updates) != TG_OK) {
        fprintf(stderr, "control_flow: building the step failed: %s\n", tg_last_error());
        return 1;
    }
    if (tg_graph_to_dot(g, dot) != TG_OK) {
        fprintf(stderr, "control_flow: %s\n", tg_last_error());
        return 1;
    }
    tg_session *s = tg_session_new(g);
    double first = 0, last = 0;
    int min_steps = MAX_REFINE, max_steps = 0;
    for (int step = 0; step < STEPS; step++) {
        batch(gen, xv, yv);
        tg_tensor *res[2];
        tg_scope_begin(); /* this step's results */
        if (tg_session_run(s, 2, (tg_tensor *[]){x, y}, (tg_tensor *[]){xv, yv}, 2,
                           (tg_tensor *[]){loss, steps}, res, 5, updates) != TG_OK) {
            fprintf(stderr, "control_flow: step %d: %s\n", step, tg_last_error());
            return 1;
        }
        double l = tg_item(res[0]);
        int k = (int)tg_item(res[1]);
        min_steps = k < min_steps ? k : min_steps;
        max_steps = k > max_steps ? k : max_steps;
        first = step == 0 ? l : first;
        last = l;
        if (step % 50 == 0 || step == STEPS - 1)
            printf("step %3d  loss %.5f  refinement steps %d\n", step, l, k);
        tg_scope_end();
    }
    /* the same forward, eagerly (host loop), on the last batch: the same loss */
    tg_no_grad_begin();
    tg_tensor *eager_steps = NULL;
    tg_tensor *eager = tg_mse_loss(forward(&m, xv, &eager_steps), yv, TG_REDUCTION_MEAN);
    tg_no_grad_end();
    tg_tensor *res;
    tg_session_run(s, 2, (tg_tensor *[]){x, y}, (tg_tensor *[]){xv, yv}, 1, &loss, &res, 0,
                   NULL);
    double diff = fabs(tg_item(res) - tg_item(eager));
    printf("trip counts seen: %d to %d; loss %.5f -> %.5f; graph vs eager loss: %.2g\n",
           min_steps, max_steps, first, last, diff);
    printf("wrote %s (the loop's condition and body, and its gradient's, as clusters)\n", dot);
    int ok = last < 0.5 * first && diff < 1e-5;
    tg_session_free(s);
    tg_graph_free(g);
    tg_scope_end();
    for (int i = 0; i < 5; i++)
        tg_release(params[i]);
    tg_release(xv);
    tg_release(yv);
    tg_generator_free(gen);
    return ok ? 0 : 1;
}
