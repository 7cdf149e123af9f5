/* LeNet-5 on MNIST for the tg tool (see lenet_task.h). Checkpoints hold
 * the model under PyTorch's names (conv1.weight ...), the optimizer under
 * "optim.", and metadata {"model": "lenet", "epochs": N}. */
#include "lenet_task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void log_line(void *user, const char *line)
{
    if (!*(bool *)user)
        fprintf(stderr, "tg: %s\n", line);
}

/* the first `limit` samples of a dataset (quick runs and tests) */
typedef struct subset {
    tg_dataset *base;
    int64_t n;
} subset;

static int64_t subset_size(void *self)
{
    return ((subset *)self)->n;
}

static tg_status subset_get(void *self, const int64_t *idx, int64_t n, tg_tensor **x,
                            tg_tensor **y)
{
    return tg_dataset_get(((subset *)self)->base, idx, n, x, y);
}

static void subset_free(void *self)
{
    tg_dataset_free(((subset *)self)->base);
    free(self);
}

tg_dataset *lenet_first_samples(tg_dataset *d, int64_t limit)
{
    if (!d || limit <= 0 || limit >= tg_dataset_size(d))
        return d;
    static const tg_dataset_impl impl = {subset_size, subset_get, subset_free};
    subset *s = malloc(sizeof *s);
    tg_dataset *out = s ? tg_dataset_new(&impl, s) : NULL;
    if (!out) {
        free(s);
        tg_dataset_free(d);
        return NULL;
    }
    *s = (subset){d, limit};
    return out;
}

tg_dataset *lenet_open_data(const char *dir, bool train, bool quiet, int64_t limit)
{
    if (tg_mnist_ensure(dir, log_line, &quiet) != TG_OK)
        return NULL;
    return lenet_first_samples(tg_mnist_dataset(dir, train), limit);
}

double lenet_accuracy(tg_module *model, tg_dataset *test, int64_t batch)
{
    tg_loader_options o = tg_loader_defaults();
    o.batch_size = batch;
    tg_loader *l = tg_loader_new(test, &o);
    if (!l)
        return -1;
    bool was_training = tg_module_is_training(model);
    tg_module_train(model, false);
    tg_no_grad_begin();
    int64_t correct = 0, seen = 0;
    tg_tensor *x, *y;
    int r;
    while (true) {
        tg_scope_begin();
        r = tg_loader_next(l, &x, &y);
        if (r == 1) {
            tg_tensor *hit = tg_eq(tg_argmax(tg_module_forward(model, x), 1, false), y);
            tg_tensor *n = tg_sum(tg_cast(hit, TG_INT64), 0, NULL, false);
            if (!n)
                r = -1;
            else {
                correct += (int64_t)tg_item(n);
                seen += tg_size(y, 0);
            }
        }
        tg_scope_end();
        if (r != 1)
            break;
    }
    tg_no_grad_end();
    tg_module_train(model, was_training);
    tg_loader_free(l);
    return r < 0 || seen == 0 ? -1 : (double)correct / (double)seen;
}

tg_optimizer *lenet_optimizer(const char *name, tg_module *model, double lr, double momentum)
{
    tg_named_tensor *params;
    int n = tg_module_parameters(model, &params);
    if (n < 0)
        return NULL;
    tg_tensor *p[64];
    for (int i = 0; i < n && i < 64; i++)
        p[i] = params[i].tensor;
    tg_optimizer *opt = NULL;
    if (!strcmp(name, "sgd")) {
        tg_sgd_opts so = tg_sgd_defaults();
        so.lr = lr;
        so.momentum = momentum;
        opt = tg_optim_sgd(n, p, &so);
    } else if (!strcmp(name, "adam") || !strcmp(name, "adamw")) {
        tg_adam_opts ao = !strcmp(name, "adam") ? tg_adam_defaults() : tg_adamw_defaults();
        ao.lr = lr;
        opt = !strcmp(name, "adam") ? tg_optim_adam(n, p, &ao) : tg_optim_adamw(n, p, &ao);
    } else if (!strcmp(name, "adadelta")) {
        tg_adadelta_opts ad = tg_adadelta_defaults();
        ad.lr = lr;
        opt = tg_optim_adadelta(n, p, &ad);
    }
    tg_named_tensors_free(params);
    return opt;
}

tg_status lenet_save(const char *path, const char *name, tg_module *model,
                     tg_optimizer *opt, int epochs_done)
{
    tg_state_dict *sd = tg_state_dict_new();
    char epochs[32];
    snprintf(epochs, sizeof epochs, "%d", epochs_done);
    tg_status s = sd ? tg_module_state_dict(model, sd, NULL) : TG_ERR_NOMEM;
    if (s == TG_OK && opt)
        s = tg_optim_state_dict(opt, sd);
    if (s == TG_OK)
        s = tg_state_dict_set_meta(sd, "model", name);
    if (s == TG_OK)
        s = tg_state_dict_set_meta(sd, "epochs", epochs);
    if (s == TG_OK)
        s = tg_safetensors_save_dict(path, sd);
    tg_state_dict_free(sd);
    return s;
}

/* the model's own entries: everything but the optimizer's. The dict hands
 * out new references; the scope releases ours once the copy holds its own. */
static tg_state_dict *model_part(const tg_state_dict *sd)
{
    tg_state_dict *m = tg_state_dict_new();
    tg_scope_begin();
    for (int i = 0; m && i < tg_state_dict_size(sd); i++) {
        const char *name = tg_state_dict_name(sd, i);
        if (strncmp(name, "optim.", 6) != 0 &&
            tg_state_dict_add(m, name, tg_state_dict_tensor(sd, i)) != TG_OK) {
            tg_state_dict_free(m);
            m = NULL;
        }
    }
    tg_scope_end();
    return m;
}

static bool has_optimizer_state(const tg_state_dict *sd)
{
    if (tg_state_dict_meta(sd, "optim.type"))
        return true;
    for (int i = 0; i < tg_state_dict_size(sd); i++)
        if (strncmp(tg_state_dict_name(sd, i), "optim.", 6) == 0)
            return true;
    return false;
}

tg_status lenet_load(const char *path, const char *name, tg_module *model,
                     tg_optimizer *opt, int *epochs_done)
{
    tg_state_dict *sd = tg_safetensors_load(path);
    if (!sd) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return tg_last_status();
    }
    const char *kind = tg_state_dict_meta(sd, "model");
    tg_status s = TG_OK;
    tg_state_dict *m = NULL;
    if (kind && strcmp(kind, name) != 0) {
        fprintf(stderr, "tg: %s is a checkpoint of model '%s', not %s\n", path, kind, name);
        s = TG_ERR_IO;
    } else if (!(m = model_part(sd))) {
        s = TG_ERR_NOMEM;
    } else if ((s = tg_module_load_state_dict(model, m, NULL, true)) != TG_OK) {
        fprintf(stderr, "tg: %s does not hold a LeNet-5 checkpoint: %s\n", path,
                tg_last_error());
    } else if (opt && has_optimizer_state(sd) &&
               (s = tg_optim_load_state_dict(opt, sd)) != TG_OK) {
        fprintf(stderr, "tg: %s: optimizer state: %s\n", path, tg_last_error());
    }
    if (s == TG_OK && epochs_done)
        *epochs_done = atoi(tg_state_dict_meta(sd, "epochs") ? tg_state_dict_meta(sd, "epochs") : "0");
    tg_state_dict_free(m);
    tg_state_dict_free(sd);
    return s;
}

double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

bool lenet_model_known(const char *name)
{
    return !strcmp(name, "lenet") || !strcmp(name, "lenet-bn");
}

/* LeNet-5 with batch norm after the convolutions and dropout before the
 * last layer: the model that exercises random ops and state updates in
 * graph mode (docs/GRAPHS.md) */
static tg_module *lenet_bn(tg_generator *g, tg_generator *dropout)
{
    tg_module *net = tg_nn_sequential(0, NULL);
    if (!net)
        return NULL;
    const tg_conv2d_opts pad2 = {.padding = {2, 2}};
    const tg_pool2d_opts pool = {.kernel = {2, 2}};
    tg_status s = TG_OK;
#define ADD(name, ctor) \
    if (s == TG_OK)     \
        s = tg_module_add(net, name, ctor)
    ADD("conv1", tg_nn_conv2d(1, 6, 5, 5, &pad2, true, g));
    ADD("bn1", tg_nn_batch_norm2d(6, 1e-5, 0.1, true, true));
    ADD("relu1", tg_nn_relu());
    ADD("pool1", tg_nn_max_pool2d(&pool));
    ADD("conv2", tg_nn_conv2d(6, 16, 5, 5, NULL, true, g));
    ADD("bn2", tg_nn_batch_norm2d(16, 1e-5, 0.1, true, true));
    ADD("relu2", tg_nn_relu());
    ADD("pool2", tg_nn_max_pool2d(&pool));
    ADD("flatten", tg_nn_flatten(1, -1));
    ADD("fc1", tg_nn_linear(400, 120, true, g));
    ADD("relu3", tg_nn_relu());
    ADD("fc2", tg_nn_linear(120, 84, true, g));
    ADD("relu4", tg_nn_relu());
    ADD("drop", tg_nn_dropout(0.25, dropout));
    ADD("fc3", tg_nn_linear(84, 10, true, g));
#undef ADD
    if (s != TG_OK) {
        tg_module_free(net);
        return NULL;
    }
    return net;
}

tg_module *lenet_model(const char *name, tg_generator *init, tg_generator *dropout)
{
    if (!strcmp(name, "lenet"))
        return tg_lenet5(init);
    if (!strcmp(name, "lenet-bn"))
        return lenet_bn(init, dropout);
    fprintf(stderr, "tg: unknown model '%s' (lenet, lenet-bn)\n", name);
    return NULL;
}
