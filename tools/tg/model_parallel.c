/* `mpirun -np 2 tg train lenet --model-parallel`: LeNet-5's convolutional
 * part (conv1 ... flatten) on rank 0, its classifier (fc1 ... fc3) on
 * rank 1, joined by point-to-point transfers (tg_dist_send/recv, not yet
 * the partitioner's Send/Recv). Per step: rank 0 runs its part and sends
 * the [B, 400] features; rank 1 runs the classifier, the loss and its
 * backward, steps its optimizer and sends back the features' gradient
 * and the loss; rank 0 runs its backward from that gradient and steps
 * its optimizer. The same kernels run on the same shapes in the same
 * order as one process, so the losses are one process's. Both ranks
 * build the whole model from the seed and train only their half. */
#include "model_parallel.h"
#include "dist_train.h"
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_FEATURES = 1, TAG_FEATURE_GRAD = 2, TAG_LOSS = 3, TAG_COUNT = 4 };

typedef struct half {
    tg_module *model;
    int first, last; /* the children [first, last) this rank runs */
    tg_optimizer *opt;
    FILE *log; /* --losses (rank 0) */
} half;

static int classifier_start(const tg_module *model)
{
    for (int i = 0; i < tg_module_num_children(model); i++)
        if (!strcmp(tg_module_child_name(model, i), "fc1"))
            return i;
    return -1;
}

static tg_tensor *run_children(const half *h, tg_tensor *x)
{
    for (int i = h->first; x && i < h->last; i++)
        x = tg_module_forward(tg_module_child_at(h->model, i), x);
    return x;
}

/* SGD (with the CLI's lr and momentum) over this rank's parameters */
static tg_optimizer *half_optimizer(const half *h, const train_opts *o)
{
    tg_tensor *p[16];
    int n = 0;
    for (int i = h->first; i < h->last; i++) {
        tg_named_tensor *params;
        int k = tg_module_parameters(tg_module_child_at(h->model, i), &params);
        for (int j = 0; j < k && n < 16; j++)
            p[n++] = params[j].tensor;
        if (k >= 0)
            tg_named_tensors_free(params);
    }
    tg_sgd_opts so = tg_sgd_defaults();
    so.lr = o->lr;
    so.momentum = o->momentum;
    return tg_optim_sgd(n, p, &so);
}

static tg_status step_rank0(half *h, tg_tensor *x, double *loss)
{
    tg_tensor *feat = run_children(h, x);
    if (!feat)
        return tg_last_status();
    tg_tensor *grad = tg_empty(TG_FLOAT32, 2, (int64_t[]){tg_size(feat, 0), tg_size(feat, 1)});
    tg_tensor *l = tg_zeros(TG_FLOAT64, 1, (int64_t[]){1});
    tg_status s = tg_dist_send(tg_contiguous(feat), 1, TAG_FEATURES);
    if (s == TG_OK)
        s = tg_dist_recv(grad, 1, TAG_FEATURE_GRAD);
    if (s == TG_OK)
        s = tg_dist_recv(l, 1, TAG_LOSS);
    if (s == TG_OK && isfinite(*loss = tg_item(l))) {
        s = tg_backward(feat, grad, false);
        if (s == TG_OK)
            s = tg_optim_step(h->opt);
    }
    tg_optim_zero_grad(h->opt);
    return s;
}

static tg_status step_rank1(half *h, tg_tensor *y, double *loss)
{
    tg_tensor *feat = tg_empty(TG_FLOAT32, 2, (int64_t[]){tg_size(y, 0), 400});
    tg_status s = tg_dist_recv(feat, 0, TAG_FEATURES);
    if (s == TG_OK)
        s = tg_set_requires_grad(feat, true);
    tg_tensor *l = s == TG_OK ? tg_cross_entropy(run_children(h, feat), y, TG_REDUCTION_MEAN)
                              : NULL;
    if (s == TG_OK && !l)
        s = tg_last_status();
    *loss = l ? tg_item(l) : NAN;
    bool finite = isfinite(*loss);
    if (s == TG_OK && finite)
        s = tg_backward(l, NULL, false);
    tg_tensor *g = s == TG_OK ? (finite ? tg_grad(feat) : tg_zeros_like(feat)) : NULL;
    if (s == TG_OK)
        s = tg_dist_send(g, 0, TAG_FEATURE_GRAD);
    if (s == TG_OK)
        s = tg_dist_send(tg_full(TG_FLOAT64, 1, (int64_t[]){1}, *loss), 0, TAG_LOSS);
    if (s == TG_OK && finite)
        s = tg_optim_step(h->opt);
    tg_optim_zero_grad(h->opt);
    return s;
}

/* one epoch; the mean loss, or NaN after saying why */
static double epoch(half *h, tg_loader *loader, int e, const train_opts *o)
{
    progress pr;
    progress_begin(&pr, e, o->epochs, tg_loader_num_batches(loader), o->quiet);
    tg_tensor *x, *y;
    int r;
    double loss = 0;
    int64_t step = 0;
    tg_status s = TG_OK;
    for (;;) {
        tg_scope_begin();
        r = tg_loader_next(loader, &x, &y);
        if (r == 1)
            s = tg_dist_rank() == 0 ? step_rank0(h, x, &loss) : step_rank1(h, y, &loss);
        int64_t images = r == 1 ? tg_size(x, 0) : 0;
        tg_scope_end();
        if (r != 1 || s != TG_OK || !isfinite(loss))
            break;
        step++;
        progress_step(&pr, images, loss);
        if (h->log)
            fprintf(h->log, "%.9g\n", loss);
    }
    double mean = progress_end(&pr);
    if (r < 0 || s != TG_OK || r == 1) {
        fprintf(stderr, "tg: rank %d: training failed at epoch %d step %lld: %s\n",
                tg_dist_rank(), e, (long long)step + 1,
                r == 1 && s == TG_OK ? "the loss is not finite" : tg_last_error());
        return NAN;
    }
    return mean;
}

/* test accuracy through both halves: rank 1 counts, rank 0 gets the count */
static double accuracy(half *h, tg_dataset *test)
{
    tg_loader_options lo = tg_loader_defaults();
    lo.batch_size = 1000;
    tg_loader *l = tg_loader_new(test, &lo);
    if (!l)
        return -1;
    tg_module_train(h->model, false);
    tg_no_grad_begin();
    tg_tensor *counts = tg_zeros(TG_INT64, 1, (int64_t[]){2});
    int64_t correct = 0, seen = 0;
    tg_tensor *x, *y;
    int r;
    tg_status s = TG_OK;
    while (s == TG_OK) {
        tg_scope_begin();
        r = tg_loader_next(l, &x, &y);
        if (r == 1 && tg_dist_rank() == 0) {
            tg_tensor *feat = tg_contiguous(run_children(h, x));
            s = feat ? tg_dist_send(feat, 1, TAG_FEATURES) : tg_last_status();
        } else if (r == 1) {
            tg_tensor *feat = tg_empty(TG_FLOAT32, 2, (int64_t[]){tg_size(y, 0), 400});
            s = tg_dist_recv(feat, 0, TAG_FEATURES);
            tg_tensor *hit = s == TG_OK ? tg_eq(tg_argmax(run_children(h, feat), 1, false), y)
                                        : NULL;
            tg_tensor *n = hit ? tg_sum(tg_cast(hit, TG_INT64), 0, NULL, false) : NULL;
            if (s == TG_OK && !n)
                s = tg_last_status();
            correct += n ? (int64_t)tg_item(n) : 0;
            seen += tg_size(y, 0);
        }
        tg_scope_end();
        if (r != 1)
            break;
    }
    tg_no_grad_end();
    tg_module_train(h->model, true);
    tg_loader_free(l);
    if (s == TG_OK && tg_dist_rank() == 1) {
        tg_fill_(counts, 0);
        int64_t *c = tg_data(counts);
        c[0] = correct;
        c[1] = seen;
        s = tg_dist_send(counts, 0, TAG_COUNT);
    } else if (s == TG_OK) {
        s = tg_dist_recv(counts, 1, TAG_COUNT);
    }
    const int64_t *c = tg_data(counts);
    double acc = s == TG_OK && c[1] > 0 ? (double)c[0] / (double)c[1] : -1;
    tg_release(counts);
    return acc;
}

static void summary(const train_opts *o, const double *losses, double secs, double acc)
{
    printf("{\"model\":\"lenet\",\"mode\":\"eager\",\"optimizer\":\"sgd\",\"epochs\":%d,"
           "\"batch\":%d,\"threads\":%d,\"train_seconds\":%.3f,\"final_train_loss\":%.5f,"
           "\"test_accuracy\":%.4f,\"ranks\":2,\"model_parallel\":true,\"epoch_losses\":[",
           o->epochs, o->batch, o->threads, secs, losses[o->epochs - 1], acc);
    for (int e = 0; e < o->epochs; e++)
        printf("%s%.9g", e ? "," : "", losses[e]);
    printf("]}\n");
}

int model_parallel_train(const train_opts *o, trainer *t, tg_dataset *train, tg_dataset *test)
{
    if (tg_dist_world_size() != 2) {
        fprintf(stderr, "tg: --model-parallel needs exactly 2 ranks (mpirun -np 2), "
                        "this world has %d\n", tg_dist_world_size());
        return 1;
    }
    int split = classifier_start(t->model);
    half h = {t->model, 0, split, NULL, t->loss_log};
    if (tg_dist_rank() == 1) {
        h.first = split;
        h.last = tg_module_num_children(t->model);
    }
    tg_loader_options lo = tg_loader_defaults();
    lo.batch_size = o->batch;
    lo.shuffle = true;
    lo.seed = (uint64_t)o->seed;
    lo.prefetch = o->prefetch;
    tg_loader *loader = split > 0 ? tg_loader_new(train, &lo) : NULL;
    h.opt = loader ? half_optimizer(&h, o) : NULL;
    double *losses = calloc((size_t)o->epochs, sizeof *losses), secs = 0, acc = -1;
    int r = h.opt && losses ? 0 : 1;
    if (r)
        fprintf(stderr, "tg: --model-parallel: %s\n", tg_last_error());
    for (int e = 1; r == 0 && e <= o->epochs; e++) {
        tg_loader_set_epoch(loader, (uint64_t)(e - 1));
        double t0 = progress_now();
        losses[e - 1] = epoch(&h, loader, e, o);
        secs += progress_now() - t0;
        acc = isnan(losses[e - 1]) ? -1 : accuracy(&h, test);
        r = acc < 0;
        if (!isnan(losses[e - 1]) && acc < 0)
            fprintf(stderr, "tg: rank %d: evaluating: %s\n", tg_dist_rank(), tg_last_error());
        if (r == 0 && !o->quiet)
            printf("epoch %d/%d  train loss %.4f  test accuracy %.2f%%  %.1f s\n", e, o->epochs,
                   losses[e - 1], 100 * acc, secs);
    }
    if (r == 0 && o->json && tg_dist_rank() == 0)
        summary(o, losses, secs, acc);
    tg_optim_free(h.opt);
    tg_loader_free(loader);
    free(losses);
    return r;
}
