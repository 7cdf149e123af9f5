/* tg train lenet / tg eval lenet: LeNet-5 on MNIST with eager autograd,
 * SGD (or Adam, AdamW, Adadelta), a background data loader, checkpoints,
 * a progress display, and a --json summary line. */
#include "args.h"
#include "commands.h"
#include "lenet_graph.h"
#include "lenet_task.h"
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct train_opts {
    const char *data, *optimizer, *save, *load, *mode, *profile, *export_path;
    int epochs, batch, threads, seed, prefetch;
    double lr, momentum;
    bool json, quiet;
} train_opts;

static tg_optimizer *make_optimizer(const train_opts *o, tg_module *model)
{
    tg_named_tensor *params;
    int n = tg_module_parameters(model, &params);
    if (n < 0)
        return NULL;
    tg_tensor *p[64];
    for (int i = 0; i < n && i < 64; i++)
        p[i] = params[i].tensor;
    tg_optimizer *opt = NULL;
    if (!strcmp(o->optimizer, "sgd")) {
        tg_sgd_opts so = tg_sgd_defaults();
        so.lr = o->lr;
        so.momentum = o->momentum;
        opt = tg_optim_sgd(n, p, &so);
    } else if (!strcmp(o->optimizer, "adam") || !strcmp(o->optimizer, "adamw")) {
        tg_adam_opts ao = !strcmp(o->optimizer, "adam") ? tg_adam_defaults() : tg_adamw_defaults();
        ao.lr = o->lr;
        opt = !strcmp(o->optimizer, "adam") ? tg_optim_adam(n, p, &ao) : tg_optim_adamw(n, p, &ao);
    } else if (!strcmp(o->optimizer, "adadelta")) {
        tg_adadelta_opts ad = tg_adadelta_defaults();
        ad.lr = o->lr;
        opt = tg_optim_adadelta(n, p, &ad);
    }
    tg_named_tensors_free(params);
    return opt;
}

/* What a training step needs in either mode. Eager: the optimizer runs
 * after backward. Graph: one session run per step of a graph holding the
 * forward, the backward and the SGD update; one graph per batch size (the
 * last batch of an epoch is smaller), sharing parameters and momentum. */
typedef struct trainer {
    tg_module *model;
    tg_optimizer *opt; /* eager mode */
    bool graph_mode;
    sgd_state sgd;
    tg_named_tensor *names;
    lenet_graph graphs[2];
    int n_graphs;
    int64_t graph_steps;  /* graph mode: SGD steps taken (for checkpoints) */
    const char *profile;  /* graph mode: Chrome trace of the first steps */
    tg_session *traced;
    int traced_steps;
} trainer;

#define PROFILE_STEPS 50

/* the first PROFILE_STEPS runs of the first graph go into the trace */
static tg_status profile_step(trainer *t, lenet_graph *lg, bool before)
{
    if (!t->profile)
        return TG_OK;
    if (before)
        return t->traced ? TG_OK : tg_session_trace_begin(t->traced = lg->session);
    if (lg->session != t->traced || ++t->traced_steps < PROFILE_STEPS)
        return TG_OK;
    tg_status s = tg_session_trace_end(t->traced, t->profile);
    t->profile = NULL;
    return s;
}

static lenet_graph *graph_for(trainer *t, int64_t batch)
{
    for (int i = 0; i < t->n_graphs; i++)
        if (t->graphs[i].batch == batch)
            return &t->graphs[i];
    if (t->n_graphs == 2) { /* a third batch size: rebuild the second slot */
        lenet_graph_free(&t->graphs[1]);
        t->n_graphs = 1;
    }
    lenet_graph *lg = &t->graphs[t->n_graphs];
    if (lenet_graph_build(lg, t->model, &t->sgd, batch, true, true) != TG_OK)
        return NULL;
    t->n_graphs++;
    return lg;
}

/* one step on (x, y); the loss before the update, or NaN on error */
static double trainer_step(trainer *t, tg_tensor *x, tg_tensor *y)
{
    if (t->graph_mode) {
        lenet_graph *lg = graph_for(t, tg_size(x, 0));
        if (!lg || profile_step(t, lg, true) != TG_OK)
            return 0.0 / 0.0;
        double loss = lenet_graph_step(lg, x, y);
        t->graph_steps++;
        return profile_step(t, lg, false) == TG_OK ? loss : 0.0 / 0.0;
    }
    tg_tensor *loss = tg_cross_entropy(tg_module_forward(t->model, x), y, TG_REDUCTION_MEAN);
    if (!loss || tg_backward(loss, NULL, false) != TG_OK || tg_optim_step(t->opt) != TG_OK)
        return 0.0 / 0.0;
    tg_optim_zero_grad(t->opt);
    return tg_item(loss);
}

static tg_status trainer_init(trainer *t, const train_opts *o, tg_module *model)
{
    memset(t, 0, sizeof *t);
    t->model = model;
    t->graph_mode = !strcmp(o->mode, "graph");
    t->profile = o->profile;
    t->opt = make_optimizer(o, model);
    if (!t->opt)
        return tg_last_status();
    return t->graph_mode ? sgd_state_init(&t->sgd, model, o->lr, o->momentum, &t->names)
                         : TG_OK;
}

static void trainer_free(trainer *t)
{
    if (t->profile && t->traced && tg_session_trace_end(t->traced, t->profile) != TG_OK)
        fprintf(stderr, "tg: writing the profile: %s\n", tg_last_error());
    for (int i = 0; i < t->n_graphs; i++)
        lenet_graph_free(&t->graphs[i]);
    sgd_state_free(&t->sgd);
    tg_named_tensors_free(t->names);
    tg_optim_free(t->opt);
}

/* one epoch of training; returns the mean loss, or NaN on error */
static double train_epoch(trainer *t, tg_loader *loader, int epoch, const train_opts *o)
{
    progress pr;
    progress_begin(&pr, epoch, o->epochs, tg_loader_num_batches(loader), o->quiet);
    tg_module_train(t->model, true);
    tg_tensor *x, *y;
    int r;
    for (;;) {
        tg_scope_begin();
        r = tg_loader_next(loader, &x, &y);
        double loss = r == 1 ? trainer_step(t, x, y) : 0;
        int64_t images = r == 1 ? tg_size(x, 0) : 0;
        tg_scope_end();
        if (r == 1 && loss != loss)
            r = -1;
        if (r != 1)
            break;
        progress_step(&pr, images, loss);
    }
    double mean = progress_end(&pr);
    if (r < 0) {
        fprintf(stderr, "tg: training failed: %s\n", tg_last_error());
        return 0.0 / 0.0;
    }
    return mean;
}

static const char train_usage[] =
    "usage: tg train lenet [options]\n"
    "Trains LeNet-5 on MNIST (fetched into --data on first use) and prints\n"
    "per-epoch train loss, test accuracy, seconds and images/s.\n"
    "--mode graph (the default) runs each step as one static graph with the\n"
    "SGD update inside; --mode eager runs it op by op. Checkpoints of either\n"
    "mode resume in either (model, SGD momentum and step count).";

static int parse_train(int argc, char **argv, train_opts *o, bool eval)
{
    *o = (train_opts){.data = "data/mnist", .optimizer = "sgd", .epochs = 1, .batch = 64,
                      .threads = tg_get_num_threads(), .seed = 1, .prefetch = 2, .mode = "graph",
                      .lr = 0.02, .momentum = 0.9};
    const opt train_table[] = {
        {"data", OPT_STRING, &o->data, "MNIST directory (default data/mnist)"},
        {"epochs", OPT_INT, &o->epochs, "epochs to train (default 1)"},
        {"batch", OPT_INT, &o->batch, "batch size (default 64)"},
        {"lr", OPT_DOUBLE, &o->lr, "learning rate (default 0.02)"},
        {"momentum", OPT_DOUBLE, &o->momentum, "SGD momentum (default 0.9)"},
        {"optimizer", OPT_STRING, &o->optimizer, "sgd | adam | adamw | adadelta (default sgd)"},
        {"threads", OPT_INT, &o->threads, "threads (default: TG_NUM_THREADS or the cores)"},
        {"seed", OPT_INT, &o->seed, "seed for initialisation and shuffling (default 1)"},
        {"mode", OPT_STRING, &o->mode, "eager | graph: run each step op by op, or as one static graph (default graph)"},
        {"prefetch", OPT_INT, &o->prefetch, "batches prepared ahead in the background, 0 = off (default 2)"},
        {"profile", OPT_STRING, &o->profile, "graph mode: write a Chrome trace of the first 50 steps (Perfetto)"},
        {"export", OPT_STRING, &o->export_path, "write the trained model as ONNX (opset 17, input [1,1,28,28])"},
        {"save", OPT_STRING, &o->save, "write a checkpoint (safetensors) at the end"},
        {"load", OPT_STRING, &o->load, "start from a checkpoint (model and optimizer)"},
        {"json", OPT_FLAG, &o->json, "end with one JSON summary line"},
        {"quiet", OPT_FLAG, &o->quiet, "no progress or per-epoch lines"},
    };
    const opt eval_table[] = {
        {"load", OPT_STRING, &o->load, "checkpoint to evaluate (required)"},
        {"data", OPT_STRING, &o->data, "MNIST directory (default data/mnist)"},
        {"threads", OPT_INT, &o->threads, "threads (default: TG_NUM_THREADS or the cores)"},
        {"json", OPT_FLAG, &o->json, "print one JSON line"},
    };
    const char *pos[1];
    int n_pos;
    args_result r = eval ? args_parse("usage: tg eval lenet --load PATH [options]\n"
                                      "Prints the test accuracy of a LeNet-5 checkpoint.",
                                      argc, argv, 1, eval_table, 4, pos, 1, &n_pos)
                         : args_parse(train_usage, argc, argv, 1, train_table,
                                      (int)(sizeof train_table / sizeof train_table[0]),
                                      pos, 1, &n_pos);
    if (r != ARGS_OK)
        return r == ARGS_HELP ? 0 : 1;
    if (n_pos != 1 || strcmp(pos[0], "lenet") != 0) {
        fprintf(stderr, "tg: expected a model name: tg %s lenet (the only model so far)\n",
                eval ? "eval" : "train");
        return 1;
    }
    if (o->epochs < 1 || o->batch < 1 || o->threads < 1 || o->prefetch < 0 || !(o->lr > 0)) {
        fprintf(stderr, "tg: --epochs, --batch and --threads must be >= 1, --prefetch >= 0, --lr > 0\n");
        return 1;
    }
    if (strcmp(o->optimizer, "sgd") && strcmp(o->optimizer, "adam") &&
        strcmp(o->optimizer, "adamw") && strcmp(o->optimizer, "adadelta")) {
        fprintf(stderr, "tg: unknown optimizer '%s' (sgd, adam, adamw, adadelta)\n", o->optimizer);
        return 1;
    }
    if (strcmp(o->mode, "eager") && strcmp(o->mode, "graph")) {
        fprintf(stderr, "tg: unknown mode '%s' (eager, graph)\n", o->mode);
        return 1;
    }
    if (!strcmp(o->mode, "graph") && strcmp(o->optimizer, "sgd")) {
        fprintf(stderr, "tg: --mode graph trains with --optimizer sgd only (its update is "
                        "built into the graph); use --mode eager for %s\n", o->optimizer);
        return 1;
    }
    if (o->profile && strcmp(o->mode, "graph")) {
        fprintf(stderr, "tg: --profile traces graph sessions: use it with --mode graph\n");
        return 1;
    }
    if (eval && !o->load) {
        fprintf(stderr, "tg: eval needs --load PATH\n");
        return 1;
    }
    if (tg_set_num_threads(o->threads) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    return -1; /* go on */
}

static int run_training(const train_opts *o, trainer *t, tg_dataset *train,
                        tg_dataset *test)
{
    tg_module *model = t->model;
    /* graph mode keeps its momentum in the sgd_state the graphs update */
    tg_optimizer *opt = t->opt;
    lenet_momentum mom = {t->sgd.n, t->sgd.momentum, &t->graph_steps};
    const lenet_momentum *momp = t->graph_mode ? &mom : NULL;
    tg_loader_options lo = tg_loader_defaults();
    lo.batch_size = o->batch;
    lo.shuffle = true;
    lo.seed = (uint64_t)o->seed;
    lo.prefetch = o->prefetch;
    tg_loader *loader = tg_loader_new(train, &lo);
    if (!loader) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    int done = 0;
    if (o->load && lenet_load(o->load, model, opt, momp, &done) != TG_OK) {
        tg_loader_free(loader);
        return 1;
    }
    double train_seconds = 0, loss = 0, acc = 0;
    int64_t images = 0;
    for (int e = 1; e <= o->epochs; e++) {
        tg_loader_set_epoch(loader, (uint64_t)(done + e - 1));
        double t0 = progress_now();
        loss = train_epoch(t, loader, e, o);
        double secs = progress_now() - t0;
        if (loss != loss) {
            tg_loader_free(loader);
            return 1;
        }
        train_seconds += secs;
        images += tg_dataset_size(train);
        acc = lenet_accuracy(model, test, 1000);
        if (!o->quiet)
            printf("epoch %d/%d  train loss %.4f  test accuracy %.2f%%  %.1f s  %.0f images/s\n",
                   e, o->epochs, loss, 100 * acc, secs, (double)tg_dataset_size(train) / secs);
    }
    tg_loader_free(loader);
    /* in graph mode the optimizer never steps: it gives the checkpoint its
     * type and hyper-parameters, the momentum comes from the graphs */
    if (o->save && lenet_save(o->save, model, opt, momp, done + o->epochs) != TG_OK) {
        fprintf(stderr, "tg: saving %s: %s\n", o->save, tg_last_error());
        return 1;
    }
    if (o->save && !o->quiet)
        printf("saved %s\n", o->save);
    if (o->export_path &&
        tg_onnx_export_module(model, 4, (int64_t[]){1, 1, 28, 28}, o->export_path) != TG_OK) {
        fprintf(stderr, "tg: exporting %s: %s\n", o->export_path, tg_last_error());
        return 1;
    }
    if (o->export_path && !o->quiet)
        printf("exported %s\n", o->export_path);
    if (o->json)
        printf("{\"model\":\"lenet\",\"mode\":\"%s\",\"epochs\":%d,\"batch\":%d,\"threads\":%d,"
               "\"train_seconds\":%.3f,\"images_per_second\":%.1f,\"final_train_loss\":%.5f,"
               "\"test_accuracy\":%.4f,\"peak_rss_mb\":%.1f}\n",
               o->mode, o->epochs, o->batch, o->threads, train_seconds,
               (double)images / train_seconds, loss, acc, peak_rss_mb());
    return 0;
}

int tg_cmd_train(int argc, char **argv)
{
    train_opts o;
    int r = parse_train(argc, argv, &o, false);
    if (r >= 0)
        return r;
    tg_dataset *train = lenet_open_data(o.data, true, o.quiet);
    tg_dataset *test = train ? tg_mnist_dataset(o.data, false) : NULL;
    tg_generator *gen = tg_generator_new((uint64_t)o.seed);
    tg_module *model = test ? tg_lenet5(gen) : NULL;
    trainer t;
    if (!model || trainer_init(&t, &o, model) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        r = 1;
    } else {
        r = run_training(&o, &t, train, test);
    }
    if (model)
        trainer_free(&t);
    tg_module_free(model);
    tg_generator_free(gen);
    tg_dataset_free(test);
    tg_dataset_free(train);
    return r;
}

int tg_cmd_eval(int argc, char **argv)
{
    train_opts o;
    int r = parse_train(argc, argv, &o, true);
    if (r >= 0)
        return r;
    /* the checkpoint first: a wrong file fails before any data is fetched */
    tg_generator *gen = tg_generator_new(1);
    tg_module *model = tg_lenet5(gen);
    tg_dataset *test = NULL;
    r = 1;
    if (!model)
        fprintf(stderr, "tg: %s\n", tg_last_error());
    else if (lenet_load(o.load, model, NULL, NULL, NULL) != TG_OK)
        ; /* lenet_load said why */
    else if (!(test = lenet_open_data(o.data, false, true)))
        fprintf(stderr, "tg: %s\n", tg_last_error());
    else {
        double acc = lenet_accuracy(model, test, 1000);
        if (acc < 0)
            fprintf(stderr, "tg: evaluation failed: %s\n", tg_last_error());
        else if (o.json)
            printf("{\"model\":\"lenet\",\"test_accuracy\":%.4f}\n", acc);
        else
            printf("test accuracy %.2f%% (%s)\n", 100 * acc, o.load);
        r = acc < 0;
    }
    tg_module_free(model);
    tg_generator_free(gen);
    tg_dataset_free(test);
    return r;
}
