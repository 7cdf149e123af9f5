/* tg train lenet|lenet-bn / tg eval lenet|lenet-bn: options, checks before any work
 * (values, output paths), the epochs (trainer.c), checkpoints, export and
 * the --json summary line. */
#include "args.h"
#include "commands.h"
#include "dist_train.h"
#include "model_parallel.h"
#include "paths.h"
#include "progress.h"
#include "trainer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char train_usage[] =
    "usage: tg train lenet|lenet-bn [options]\n"
    "Trains LeNet-5 on MNIST (fetched into --data on first use) and prints\n"
    "per-epoch train loss, test accuracy, seconds and images/s. lenet-bn is\n"
    "LeNet-5 with batch norm after each conv and dropout (0.25) before the\n"
    "last layer: in graph mode its dropout masks are random nodes drawing from\n"
    "the same generator as eager mode, and the running statistics assign nodes.\n"
    "--mode graph (the default) runs each step as one static graph with the\n"
    "optimizer's update inside (every --optimizer: the eager step's formula,\n"
    "so both modes give the same losses bit for bit for a seed and thread\n"
    "count); --mode eager runs it op by op. Checkpoints of either mode resume\n"
    "in either (model, optimizer state: momentum, Adam's moments, step counts).\n"
    "A resumed run takes the optimizer's hyper-parameters (lr, momentum ...)\n"
    "from the checkpoint, as PyTorch's load_state_dict does. Output paths are\n"
    "checked before training; a run that diverges (a loss that is NaN or\n"
    "infinite) stops, says where, and writes no checkpoint or export.\n"
    "--distributed (under mpirun -np N): data parallel over N processes: each\n"
    "takes its slice of every global batch (--batch), gradients are summed\n"
    "across ranks in buckets while backward runs, so the losses are one\n"
    "process's; eager steps only; rank 0 alone prints, saves and exports.";

/* each numeric option in its range, the message naming the option */
static bool check_values(const train_opts *o)
{
    if (!(o->lr > 0)) {
        fprintf(stderr, "tg: --lr must be > 0, got %g\n", o->lr);
        return false;
    }
    return args_check_range("epochs", o->epochs, 1, INFINITY) &&
           args_check_range("batch", o->batch, 1, INFINITY) &&
           args_check_range("threads", o->threads, 1, 1024) &&
           args_check_range("prefetch", o->prefetch, 0, 64) &&
           args_check_range("limit", o->limit, 0, INFINITY) &&
           args_check_range("momentum", o->momentum, 0, INFINITY) &&
           args_check_range("devices", o->devices, 1, 64) &&
           args_check_range("bucket-kb", o->bucket_kb, 1, 1 << 20);
}

static int parse_train(int argc, char **argv, train_opts *o, bool eval)
{
    *o = (train_opts){.data = "data/mnist", .optimizer = "sgd", .epochs = 1, .batch = 64,
                      .threads = tg_get_num_threads(), .seed = 1, .prefetch = 2, .mode = NULL,
                      .lr = 0.02, .momentum = 0.9, .limit = 0, .bucket_kb = 64, .devices = 1};
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
        {"limit", OPT_INT, &o->limit, "use only the first N images of each split, 0 = all (quick runs)"},
        {"devices", OPT_INT, &o->devices, "graph mode: spread each step over N virtual CPU devices, placed automatically (default 1)"},
        {"profile", OPT_STRING, &o->profile, "graph mode: write a Chrome trace of the first 50 steps (Perfetto)"},
        {"export", OPT_STRING, &o->export_path, "write the trained model as ONNX (opset 17, input [batch,1,28,28], batch symbolic)"},
        {"save", OPT_STRING, &o->save, "write a checkpoint (safetensors) at the end"},
        {"load", OPT_STRING, &o->load, "start from a checkpoint (model and optimizer; --save may name the same file)"},
        {"losses", OPT_STRING, &o->losses, "write every step's loss to this file, one per line"},
        {"distributed", OPT_FLAG, &o->distributed, "data parallel over the ranks of mpirun -np N (eager steps)"},
        {"bucket-kb", OPT_INT, &o->bucket_kb, "--distributed: gradient allreduce buckets of N KiB (default 64)"},
        {"ranks", OPT_FLAG, &o->ranks, "graph mode under mpirun -np N: one device per process (/rank:R/cpu:0), each step placed by the cost model and partitioned; rank 0 trains and the others run its partitions (master/worker)"},
        {"model-parallel", OPT_FLAG, &o->model_parallel, "lenet over mpirun -np 2: convolutions on rank 0, classifier on rank 1 (sgd, eager)"},
        {"json", OPT_FLAG, &o->json, "end with one JSON summary line"},
        {"quiet", OPT_FLAG, &o->quiet, "no progress or per-epoch lines"},
    };
    const opt eval_table[] = {
        {"load", OPT_STRING, &o->load, "checkpoint to evaluate (required)"},
        {"data", OPT_STRING, &o->data, "MNIST directory (default data/mnist)"},
        {"threads", OPT_INT, &o->threads, "threads (default: TG_NUM_THREADS or the cores)"},
        {"limit", OPT_INT, &o->limit, "use only the first N test images, 0 = all"},
        {"json", OPT_FLAG, &o->json, "print one JSON line"},
    };
    const char *pos[1];
    int n_pos;
    args_result r = eval ? args_parse("usage: tg eval lenet|lenet-bn --load PATH [options]\n"
                                      "Prints the test accuracy of a LeNet-5 (or lenet-bn) "
                                      "checkpoint and "
                                      "the images/s\nof the evaluation (batches of 1000).",
                                      argc, argv, 1, eval_table, 5, pos, 1, &n_pos)
                         : args_parse(train_usage, argc, argv, 1, train_table,
                                      (int)(sizeof train_table / sizeof train_table[0]),
                                      pos, 1, &n_pos);
    if (r != ARGS_OK)
        return r == ARGS_HELP ? 0 : 1;
    if (!o->mode) /* data- and model-parallel steps are eager ones */
        o->mode = o->distributed || o->model_parallel ? "eager" : "graph";
    if (n_pos != 1 || !lenet_model_known(pos[0])) {
        fprintf(stderr, "tg: expected a model name: tg %s lenet|lenet-bn\n",
                eval ? "eval" : "train");
        return 1;
    }
    o->model = pos[0];
    if (!check_values(o))
        return 1;
    if (strcmp(o->optimizer, "sgd") && strcmp(o->optimizer, "adam") &&
        strcmp(o->optimizer, "adamw") && strcmp(o->optimizer, "adadelta")) {
        fprintf(stderr, "tg: unknown optimizer '%s' (sgd, adam, adamw, adadelta)\n", o->optimizer);
        return 1;
    }
    if (strcmp(o->mode, "eager") && strcmp(o->mode, "graph")) {
        fprintf(stderr, "tg: unknown mode '%s' (eager, graph)\n", o->mode);
        return 1;
    }
    if (o->distributed && strcmp(o->mode, "eager")) {
        fprintf(stderr, "tg: --distributed trains with eager steps (--mode eager, its "
                        "default); graph-mode data parallel is not built\n");
        return 1;
    }
    if (o->ranks && (strcmp(o->mode, "graph") || o->distributed || o->model_parallel ||
                     o->devices > 1)) {
        fprintf(stderr, "tg: --ranks spreads graph-mode steps over the processes (--mode "
                        "graph), without --distributed, --model-parallel or --devices\n");
        return 1;
    }
    if (o->devices > 1 && strcmp(o->mode, "graph")) {
        fprintf(stderr, "tg: --devices partitions graph sessions: use it with --mode graph\n");
        return 1;
    }
    if (o->model_parallel && (o->distributed || strcmp(o->mode, "eager") ||
                              strcmp(o->model, "lenet") || strcmp(o->optimizer, "sgd") ||
                              o->save || o->export_path || o->load || o->profile)) {
        fprintf(stderr, "tg: --model-parallel trains lenet with sgd in eager steps, without "
                        "--distributed, --save, --export, --load or --profile (not built)\n");
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
    /* --save may replace --load: the checkpoint is read whole before
     * training and replaced atomically at the end */
    const path_role files[] = {{"--save", o->save, true}, {"--export", o->export_path, true},
                               {"--profile", o->profile, true}, {"--losses", o->losses, true}};
    if (!eval && (!path_check_output("--save", o->save) ||
                  !path_check_output("--export", o->export_path) ||
                  !path_check_output("--profile", o->profile) ||
                  !path_check_output("--losses", o->losses) || !path_check_distinct(4, files)))
        return 1;
    if (tg_set_num_threads(o->threads) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    return -1; /* go on */
}

/* the training loops' time, summed over epochs (evaluation excluded) */
typedef struct train_time {
    double wall, cpu; /* seconds; cpu: every thread of the process */
} train_time;

/* after the last epoch: the checkpoint, the export, the summary */
static int finish(const train_opts *o, trainer *t, int done, const double *losses,
                  train_time spent, int64_t images, double acc)
{
    tg_module *model = t->model;
    if (o->distributed && !dist_is_root())
        return 0; /* rank 0 saves, exports and reports */
    /* in graph mode the graph has updated the optimizer's own state */
    if (o->save && lenet_save(o->save, o->model, model, t->opt, done + o->epochs) != TG_OK) {
        fprintf(stderr, "tg: saving %s: %s\n", o->save, tg_last_error());
        return 1;
    }
    if (o->save && !o->quiet)
        printf("saved %s\n", o->save);
    if (o->export_path &&
        tg_onnx_export_module(model, 4, (int64_t[]){-1, 1, 28, 28}, o->export_path) != TG_OK) {
        fprintf(stderr, "tg: exporting %s: %s\n", o->export_path, tg_last_error());
        return 1;
    }
    if (o->export_path && !o->quiet)
        printf("exported %s\n", o->export_path);
    if (!o->json)
        return 0;
    /* the per-epoch losses to 9 digits: resumed runs are compared on them */
    printf("{\"model\":\"%s\",\"mode\":\"%s\",\"optimizer\":\"%s\",\"epochs\":%d,"
           "\"batch\":%d,\"threads\":%d,\"train_seconds\":%.3f,\"train_cpu_seconds\":%.3f,"
           "\"images_per_second\":%.1f,"
           "\"final_train_loss\":%.5f,\"test_accuracy\":%.4f,\"peak_rss_mb\":%.1f,",
           o->model, o->mode, o->optimizer, o->epochs, o->batch, o->threads, spent.wall,
           spent.cpu, (double)images / spent.wall, losses[o->epochs - 1], acc, peak_rss_mb());
    if (o->distributed)
        printf("\"ranks\":%d,\"bucket_kb\":%d,", tg_dist_world_size(), o->bucket_kb);
    if (o->ranks)
        printf("\"ranks\":%d,", tg_dist_world_size());
    printf("\"devices\":%d,", t->devices > 1 ? t->devices : 1);
    printf("\"epoch_losses\":[");
    for (int e = 0; e < o->epochs; e++)
        printf("%s%.9g", e ? "," : "", losses[e]);
    printf("]}\n");
    return 0;
}

static int run_training(const train_opts *o, trainer *t, tg_dataset *train,
                        tg_dataset *test)
{
    tg_module *model = t->model;
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
    if (o->load && lenet_load(o->load, o->model, model, t->opt, &done) != TG_OK) {
        tg_loader_free(loader);
        return 1;
    }
    train_time spent = {0, 0};
    double loss = 0, acc = 0;
    double *losses = calloc((size_t)o->epochs, sizeof *losses);
    int64_t images = 0;
    for (int e = 1; losses && e <= o->epochs; e++) {
        tg_loader_set_epoch(loader, (uint64_t)(done + e - 1));
        if (t->dropout) /* the masks of an epoch depend on (seed, epoch) only */
            tg_generator_seed(t->dropout, (uint64_t)o->seed * 0x9e3779b97f4a7c15ULL +
                                              (uint64_t)(done + e - 1));
        double t0 = progress_now(), c0 = progress_cpu_now();
        losses[e - 1] = loss = trainer_epoch(t, loader, e, o);
        double secs = progress_now() - t0, cpu = progress_cpu_now() - c0;
        /* with --distributed rank 0 evaluates (the ranks' models are equal) */
        acc = isnan(loss) ? -1 : o->distributed && !dist_is_root() ? 0
                                                                    : lenet_accuracy(model, test, 1000);
        if (isnan(loss) || acc < 0) {
            if (!isnan(loss))
                fprintf(stderr, "tg: evaluating epoch %d: %s\n", e, tg_last_error());
            tg_loader_free(loader);
            free(losses);
            return 1;
        }
        spent.wall += secs;
        spent.cpu += cpu;
        images += tg_dataset_size(train);
        if (!o->quiet)
            printf("epoch %d/%d  train loss %.4f  test accuracy %.2f%%  %.1f s  %.0f images/s\n",
                   e, o->epochs, loss, 100 * acc, secs, (double)tg_dataset_size(train) / secs);
    }
    tg_loader_free(loader);
    int r = losses ? finish(o, t, done, losses, spent, images, acc) : 1;
    free(losses);
    return r;
}

/* --losses: opened by the rank that reports (all of them without
 * --distributed, rank 0 with it) */
static bool open_loss_log(const train_opts *o, trainer *t)
{
    if (!o->losses || ((o->distributed || o->model_parallel) && !dist_is_root()))
        return true;
    if ((t->loss_log = fopen(o->losses, "w"))) {
        setvbuf(t->loss_log, NULL, _IOLBF, 0); /* watchable while training */
        return true;
    }
    fprintf(stderr, "tg: --losses %s: %s\n", o->losses, strerror(errno));
    return false;
}

int tg_cmd_train(int argc, char **argv)
{
    train_opts o;
    int r = parse_train(argc, argv, &o, false);
    if (r >= 0)
        return r;
    bool multi = o.distributed || o.model_parallel;
    if ((multi || o.ranks) && !dist_begin(&o))
        return 1;
    if (o.ranks && !dist_is_root()) /* a worker: runs what rank 0 sends */
        return dist_serve();
    tg_dataset *train = multi ? dist_open_data(o.data, true, o.quiet, o.limit)
                                      : lenet_open_data(o.data, true, o.quiet, o.limit);
    tg_dataset *test = train ? lenet_first_samples(tg_mnist_dataset(o.data, false), o.limit)
                             : NULL;
    tg_generator *gen = tg_generator_new((uint64_t)o.seed);
    tg_generator *drop = tg_generator_new((uint64_t)o.seed);
    tg_module *model = test && drop ? lenet_model(o.model, gen, drop) : NULL;
    trainer t;
    if (!model || trainer_init(&t, &o, model) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        r = 1;
    } else if (!open_loss_log(&o, &t)) {
        r = 1;
    } else if (multi && dist_sync_model(model) != TG_OK) {
        fprintf(stderr, "tg: --distributed: %s\n", tg_last_error());
        r = 1;
    } else if (o.model_parallel) {
        r = model_parallel_train(&o, &t, train, test);
    } else {
        t.dropout = drop;
        r = run_training(&o, &t, train, test);
    }
    if (model)
        trainer_free(&t);
    tg_module_free(model);
    tg_generator_free(drop);
    tg_generator_free(gen);
    tg_dataset_free(test);
    tg_dataset_free(train);
    if (multi || o.ranks)
        dist_end();
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
    tg_module *model = lenet_model(o.model, gen, gen); /* eval: no dropout drawn */
    tg_dataset *test = NULL;
    r = 1;
    if (!model)
        fprintf(stderr, "tg: %s\n", tg_last_error());
    else if (lenet_load(o.load, o.model, model, NULL, NULL) != TG_OK)
        ; /* lenet_load said why */
    else if (!(test = lenet_open_data(o.data, false, true, o.limit)))
        fprintf(stderr, "tg: %s\n", tg_last_error());
    else {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        double acc = lenet_accuracy(model, test, 1000);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        double ips = secs > 0 ? (double)tg_dataset_size(test) / secs : 0;
        if (acc < 0)
            fprintf(stderr, "tg: evaluation failed: %s\n", tg_last_error());
        else if (o.json)
            printf("{\"model\":\"%s\",\"test_accuracy\":%.4f,\"eval_seconds\":%.4f,"
                   "\"images_per_second\":%.1f}\n", o.model, acc, secs, ips);
        else
            printf("test accuracy %.2f%% (%s), %.0f images/s\n", 100 * acc, o.load, ips);
        r = acc < 0;
    }
    tg_module_free(model);
    tg_generator_free(gen);
    tg_dataset_free(test);
    return r;
}
