/* LeNet-5 on MNIST with the public C API, top to bottom: fetch the data,
 * build the model, train one epoch with SGD + momentum, report the test
 * accuracy, save a checkpoint. This is what `tg train lenet` does, minus
 * the options and the progress bar.
 *
 *   build/example_lenet_mnist [DATA_DIR]      (default data/mnist)
 */
#include <tg/tg.h>

#include <stdio.h>

#define BATCH 64
#define LR 0.02
#define MOMENTUM 0.9
#define SEED 1

static int fail(const char *what)
{
    fprintf(stderr, "lenet_mnist: %s: %s\n", what, tg_last_error());
    return 1;
}

/* fraction of test images whose arg-max logit is the label */
static double test_accuracy(tg_module *model, tg_dataset *test)
{
    tg_loader *loader = tg_loader_new(test, &(tg_loader_options){.batch_size = 1000});
    int64_t correct = 0, seen = 0;
    tg_tensor *x, *y;
    tg_module_train(model, false); /* eval mode */
    tg_no_grad_begin();            /* no tape while testing */
    tg_scope_begin();
    while (tg_loader_next(loader, &x, &y) == 1) {
        tg_tensor *predicted = tg_argmax(tg_module_forward(model, x), 1, false);
        tg_tensor *hits = tg_sum(tg_cast(tg_eq(predicted, y), TG_INT64), 0, NULL, false);
        correct += (int64_t)tg_item(hits);
        seen += tg_size(y, 0);
    }
    tg_scope_end();
    tg_no_grad_end();
    tg_loader_free(loader);
    return seen ? (double)correct / (double)seen : 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : TG_MNIST_DEFAULT_DIR;

    /* 1. data: the four IDX files, fetched and verified on first use */
    if (tg_mnist_ensure(dir, NULL, NULL) != TG_OK)
        return fail("getting MNIST");
    tg_dataset *train = tg_mnist_dataset(dir, true);
    tg_dataset *test = tg_mnist_dataset(dir, false);
    if (!train || !test)
        return fail("opening MNIST");

    /* 2. the model and its optimizer; parameters live outside scopes */
    tg_generator *gen = tg_generator_new(SEED);
    tg_module *model = tg_lenet5(gen);
    tg_named_tensor *params;
    int n_params = tg_module_parameters(model, &params);
    tg_tensor *param_list[16];
    for (int i = 0; i < n_params; i++)
        param_list[i] = params[i].tensor;
    tg_sgd_opts sgd = tg_sgd_defaults();
    sgd.lr = LR;
    sgd.momentum = MOMENTUM;
    tg_optimizer *opt = tg_optim_sgd(n_params, param_list, &sgd);
    tg_named_tensors_free(params);

    /* 3. one epoch: shuffled batches prepared in the background */
    tg_loader *loader = tg_loader_new(train, &(tg_loader_options){
        .batch_size = BATCH, .shuffle = true, .seed = SEED, .prefetch = 4});
    tg_module_train(model, true);
    tg_tensor *x, *y;
    int step = 0;
    for (;;) {
        tg_scope_begin(); /* everything made in this step is freed at its end */
        if (tg_loader_next(loader, &x, &y) != 1) {
            tg_scope_end();
            break;
        }
        tg_tensor *logits = tg_module_forward(model, x);
        tg_tensor *loss = tg_cross_entropy(logits, y, TG_REDUCTION_MEAN);
        if (!loss || tg_backward(loss, NULL, false) != TG_OK || tg_optim_step(opt) != TG_OK)
            return fail("training step");
        tg_optim_zero_grad(opt);
        if (step++ % 100 == 0)
            printf("step %4d  loss %.4f\n", step - 1, tg_item(loss));
        tg_scope_end();
    }
    tg_loader_free(loader);

    /* 4. evaluate and save (safetensors, PyTorch's parameter names) */
    printf("test accuracy %.2f%%\n", 100 * test_accuracy(model, test));
    tg_state_dict *sd = tg_state_dict_new();
    if (tg_module_state_dict(model, sd, NULL) != TG_OK ||
        tg_safetensors_save_dict("lenet_example.safetensors", sd) != TG_OK)
        return fail("saving");
    printf("saved lenet_example.safetensors\n");

    tg_state_dict_free(sd);
    tg_optim_free(opt);
    tg_module_free(model);
    tg_generator_free(gen);
    tg_dataset_free(test);
    tg_dataset_free(train);
    return 0;
}
