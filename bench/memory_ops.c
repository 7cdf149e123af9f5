/* Elementwise memory-bound ops of LeNet-5's step (JSON lines): relu and
 * its gradient, the bias add and log_softmax, at batch 64 and the step's
 * shapes, eager through the public API, GELU (exact and tanh forms) and
 * its gradient at a transformer feed-forward block's [tokens, 4 d_model]
 * (2048 x 512), softmax and log_softmax over short
 * rows (28 and 10 elements, the last dims of conv outputs), a fused
 * elementwise program (bias add + relu, what a level-2 graph runs after a
 * convolution) and optimizer steps (SGD with momentum, Adam) on a
 * parameter of conv1's output size, layer norm over rows of 128 and 512
 * (a transformer layer's [batch * tokens, d_model] and its feed-forward
 * width) and its gradient (input, weight and bias), at 1 and 2 threads (pooling, in both
 * its forms, and the reductions are bench_pool's). Each line gives the median
 * microseconds of 11 samples, the bytes the op must move at least (inputs
 * read once, outputs written once) as GB/s, and the same bytes moved by a
 * plain copy split over the same threads (the machine's limit for data of
 * that size: the step's tensors sit in L2) with the op's share of it, and
 * the instruction-set level the kernels ran at (TG_CPU lowers it). On one
 * thread the op and the copy are timed in the thread's CPU time (as
 * bench_pool does), which other work on a shared machine inflates less.
 *   bench_memory_ops [--samples N] [--only NAME_PREFIX] [--threads T] */
#include "core/threadpool.h"
#include "kernels/cpu/cpu.h"
#include "ops/op.h"
#include "tg/optim.h"
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "copy_probe.h"
#include "timing.h"

/* one measured op: its inputs, and how to run it once */
typedef struct job {
    const char *name;
    tg_tensor *x, *y, *dy, *w, *b;
    tg_optimizer *opt;
    int64_t bytes; /* the least the op must read and write */
    void (*run)(struct job *j);
} job;

static void drop(tg_tensor *t) { tg_release(t); }

static void run_relu(job *j) { drop(tg_relu(j->x)); }
static void run_gelu(job *j) { drop(tg_gelu(j->x)); }
static void run_gelu_tanh(job *j) { drop(tg_gelu_tanh(j->x)); }
static void run_bias_add(job *j) { drop(tg_add(j->x, j->b)); }
static void run_log_softmax(job *j) { drop(tg_log_softmax(j->x, 1)); }
static void run_softmax_last(job *j) { drop(tg_softmax(j->x, -1)); }
static void run_log_softmax_last(job *j) { drop(tg_log_softmax(j->x, -1)); }
static void run_step(job *j) { (void)tg_optim_step(j->opt); }
/* layer norm over the last dim, with weight and bias */
static void run_layer_norm(job *j) { drop(tg_layer_norm(j->x, 1, j->w, j->b, 1e-5)); }

/* the program fuse_elementwise makes of a bias add and relu */
static void run_fused(job *j)
{
    static const tg_op_def *op;
    if (!op)
        op = tg_op_find("fused_elementwise");
    tg_attr p = {.name = "program", .type = TG_ATTR_STRING, .u.s = "add(%0, %1); relu($0)"};
    tg_tensor *in[2] = {j->x, j->b};
    drop(tg_op_call(op, 2, in, &p, 1));
}

/* a parameter with a gradient, and an optimizer over it that has taken
 * one step (its state exists) */
static tg_tensor *param;
static tg_optimizer *stepped(tg_optimizer *o)
{
    if (o && tg_optim_step(o) != TG_OK) {
        tg_optim_free(o);
        return NULL;
    }
    return o;
}

/* the VJP of y = f(x) (recorded once per call): relu_grad */
static void run_vjp(job *j)
{
    tg_tensor *g = NULL;
    if (tg_autograd_grad(1, &j->y, &j->dy, 1, &j->x, &g, true, false) == TG_OK)
        drop(g);
}

/* on the clock of copy_probe.h (set per thread count in main) */
static double sample(job *j)
{
    j->run(j); /* wakes the pool's threads */
    int reps = 1;
    double t0 = probe_clock_us();
    j->run(j);
    double one = probe_clock_us() - t0;
    reps = one > 2000 ? 1 : (int)(2000 / (one > 0.1 ? one : 0.1)) + 1;
    t0 = probe_clock_us();
    for (int i = 0; i < reps; i++)
        j->run(j);
    return (probe_clock_us() - t0) / reps;
}

static tg_generator *gen;

static tg_tensor *random_tensor(int ndim, const int64_t *shape, bool grad)
{
    tg_tensor *t = tg_rand_normal(gen, TG_FLOAT32, ndim, shape, 0.0, 1.0);
    if (t && grad)
        tg_set_requires_grad(t, true);
    return t;
}

static void report(job *j, int threads, int samples)
{
    double *t = malloc((size_t)samples * sizeof *t);
    for (int s = 0; s < samples; s++)
        t[s] = sample(j);
    qsort(t, (size_t)samples, sizeof *t, cmp_double);
    double us = t[samples / 2], cu = copy_us(j->bytes);
    printf("{\"bench\":\"memory_ops\",\"op\":\"%s\",\"isa\":\"%s\",\"threads\":%d,\"us\":%.2f,"
           "\"bytes\":%lld,\"gbps\":%.1f,\"copy_gbps\":%.1f,\"of_copy\":%.2f}\n",
           j->name, tg__isa_name(tg__cpu_isa()), threads, us, (long long)j->bytes, (double)j->bytes / us * 1e-3,
           (double)j->bytes / cu * 1e-3, cu / us);
    fflush(stdout);
    free(t);
}

int main(int argc, char **argv)
{
    int samples = 11, only_threads = 0;
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--samples") == 0)
            samples = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 11;
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0)
            only_threads = atoi(argv[++i]);
    gen = tg_generator_new(1);
    const int64_t c1[4] = {64, 6, 28, 28}, b1[4] = {1, 6, 1, 1}, lg[2] = {64, 10};
    const int64_t c2[4] = {64, 16, 10, 10}, ln1[2] = {2048, 128}, ln2[2] = {4096, 512};
    const int64_t ff[2] = {2048, 512};
    const int64_t n1 = 64 * 6 * 28 * 28, n2 = 64 * 16 * 10 * 10, nf = 2048 * 512, f = 4;
    param = random_tensor(1, &n1, true);
    if (param)
        tg_set_grad(param, random_tensor(1, &n1, false));
    tg_sgd_opts so = tg_sgd_defaults();
    so.momentum = 0.9;
    tg_adam_opts ao = tg_adam_defaults();
    job jobs[] = {
        {.name = "relu[64,6,28,28]", .x = random_tensor(4, c1, false), .bytes = 2 * n1 * f,
         .run = run_relu},
        {.name = "relu_grad[64,6,28,28]", .x = random_tensor(4, c1, true),
         .dy = random_tensor(4, c1, false), .bytes = 3 * n1 * f, .run = run_vjp},
        {.name = "bias_add[64,6,28,28]", .x = random_tensor(4, c1, false),
         .b = random_tensor(4, b1, false), .bytes = 2 * n1 * f, .run = run_bias_add},
        {.name = "log_softmax[64,10]", .x = random_tensor(2, lg, false), .bytes = 2 * 640 * f,
         .run = run_log_softmax},
        {.name = "softmax_last[64,6,28,28]", .x = random_tensor(4, c1, false), .bytes = 2 * n1 * f,
         .run = run_softmax_last},
        {.name = "softmax_last[64,16,10,10]", .x = random_tensor(4, c2, false),
         .bytes = 2 * n2 * f, .run = run_softmax_last},
        {.name = "log_softmax_last[64,6,28,28]", .x = random_tensor(4, c1, false),
         .bytes = 2 * n1 * f, .run = run_log_softmax_last},
        {.name = "log_softmax_last[64,16,10,10]", .x = random_tensor(4, c2, false),
         .bytes = 2 * n2 * f, .run = run_log_softmax_last},
        {.name = "gelu[2048,512]", .x = random_tensor(2, ff, false), .bytes = 2 * nf * f,
         .run = run_gelu},
        {.name = "gelu_grad[2048,512]", .x = random_tensor(2, ff, true),
         .dy = random_tensor(2, ff, false), .bytes = 3 * nf * f, .run = run_vjp},
        {.name = "gelu_tanh[2048,512]", .x = random_tensor(2, ff, false), .bytes = 2 * nf * f,
         .run = run_gelu_tanh},
        {.name = "gelu_tanh_grad[2048,512]", .x = random_tensor(2, ff, true),
         .dy = random_tensor(2, ff, false), .bytes = 3 * nf * f, .run = run_vjp},
        {.name = "fused_add_relu[64,6,28,28]", .x = random_tensor(4, c1, false),
         .b = random_tensor(4, b1, false), .bytes = 2 * n1 * f, .run = run_fused},
        /* p, g, momentum read; p, momentum written */
        {.name = "sgd_momentum[301056]", .x = param, .opt = stepped(tg_optim_sgd(1, &param, &so)),
         .bytes = 5 * n1 * f, .run = run_step},
        /* p, g, m, v read; p, m, v written */
        {.name = "adam[301056]", .x = param, .opt = stepped(tg_optim_adam(1, &param, &ao)),
         .bytes = 7 * n1 * f, .run = run_step},
        {.name = "layer_norm[2048,128]", .x = random_tensor(2, ln1, false),
         .w = random_tensor(1, ln1 + 1, false), .b = random_tensor(1, ln1 + 1, false),
         .bytes = 2 * 2048 * 128 * f, .run = run_layer_norm},
        {.name = "layer_norm[4096,512]", .x = random_tensor(2, ln2, false),
         .w = random_tensor(1, ln2 + 1, false), .b = random_tensor(1, ln2 + 1, false),
         .bytes = 2 * 4096 * 512 * f, .run = run_layer_norm},
        /* x, dy read; dx written (and the small dweight, dbias) */
        {.name = "layer_norm_grad[2048,128]", .x = random_tensor(2, ln1, true),
         .dy = random_tensor(2, ln1, false), .w = random_tensor(1, ln1 + 1, true),
         .b = random_tensor(1, ln1 + 1, true), .bytes = 3 * 2048 * 128 * f, .run = run_vjp},
        {.name = "layer_norm_grad[4096,512]", .x = random_tensor(2, ln2, true),
         .dy = random_tensor(2, ln2, false), .w = random_tensor(1, ln2 + 1, true),
         .b = random_tensor(1, ln2 + 1, true), .bytes = 3 * 4096 * 512 * f, .run = run_vjp},
    };
    int n_jobs = (int)(sizeof jobs / sizeof *jobs);
    /* the graphs the VJPs run */
    jobs[1].y = tg_relu(jobs[1].x);
    for (int i = 0; i < n_jobs; i++)
        if (jobs[i].run == run_vjp && jobs[i].w)
            jobs[i].y = tg_layer_norm(jobs[i].x, 1, jobs[i].w, jobs[i].b, 1e-5);
    for (int i = 0; i < n_jobs; i++)
        if (jobs[i].run == run_vjp && !jobs[i].y)
            jobs[i].y = strstr(jobs[i].name, "tanh") ? tg_gelu_tanh(jobs[i].x) : tg_gelu(jobs[i].x);
    for (int i = 0; i < n_jobs; i++)
        if (!jobs[i].x || (jobs[i].dy && !jobs[i].y) ||
            (jobs[i].run == run_step && !jobs[i].opt)) {
            fprintf(stderr, "bench_memory_ops: setup failed: %s\n", tg_last_error());
            return 1;
        }
    for (int threads = 1; threads <= 2; threads++) {
        if (only_threads && threads != only_threads)
            continue;
        tg_set_num_threads(threads);
        probe_clock_us = threads == 1 ? thread_cpu_us : now_us;
        for (int i = 0; i < n_jobs; i++)
            if (!only || strncmp(jobs[i].name, only, strlen(only)) == 0)
                report(&jobs[i], threads, samples);
    }
    for (int i = 0; i < n_jobs; i++)
        tg_optim_free(jobs[i].opt);
    return 0;
}
