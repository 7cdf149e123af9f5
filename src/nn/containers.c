/* Containers: Sequential, and the LeNet-5 model built from it. */
#include "nn/module.h"

#include <stdio.h>
#include <string.h>

/* prefixes the current error with the failing child's name, so a deep
 * failure reads "module features.conv1 (Conv2d): conv2d: ..." */
static void name_failure(const tg_nn_child *c)
{
    if (!tg__error_is_set()) {
        tg__error(TG_ERR_INTERNAL, "module %s (%s): forward failed without an "
                  "error", c->name, tg_module_kind(c->m));
        return;
    }
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tg_last_error());
    tg_status s = tg_last_status();
    if (!strncmp(msg, "module ", 7)) /* already named by an inner container */
        tg__error(s, "module %s.%s", c->name, msg + 7);
    else
        tg__error(s, "module %s (%s): %s", c->name, tg_module_kind(c->m), msg);
}

static tg_tensor *seq_forward(tg_module *m, tg_tensor *x)
{
    tg_tensor *cur = tg_retain(x);
    for (int i = 0; i < m->n_children; i++) {
        tg_tensor *y = tg__module_run(m->children[i].m, cur);
        tg_release(cur); /* each intermediate goes as soon as it is used */
        if (!y) {
            name_failure(&m->children[i]);
            return NULL;
        }
        cur = y;
    }
    return cur;
}

static const tg_module_type seq_type = {"Sequential", seq_forward, NULL};

tg_status tg_nn_sequential_append(tg_module *seq, tg_module *child)
{
    char name[32];
    snprintf(name, sizeof name, "%d", seq ? seq->n_children : 0);
    if (!seq) {
        tg_module_free(child);
        return tg__error(TG_ERR_ARG, "tg_nn_sequential_append: module is NULL");
    }
    return tg_module_add(seq, name, child);
}

tg_module *tg_nn_sequential(int n, tg_module *const *children)
{
    bool bad = n < 0 || (n > 0 && !children);
    for (int i = 0; !bad && i < n; i++)
        bad = !children[i];
    tg_module *m = bad ? NULL : tg__module_make(&seq_type, NULL);
    if (!m) { /* the container owns the children: free the ones given */
        for (int i = 0; children && i < n; i++)
            tg_module_free(children[i]);
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "Sequential: bad children (n = %d, a NULL "
                      "child or array)", n);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (tg_nn_sequential_append(m, children[i]) != TG_OK) {
            for (int j = i + 1; j < n; j++)
                tg_module_free(children[j]);
            tg_module_free(m);
            return NULL;
        }
    }
    return m;
}

/* ---- LeNet-5 -------------------------------------------------------------------- */

tg_module *tg_lenet5(tg_generator *g)
{
    if (!g)
        return tg__error_null(TG_ERR_ARG, "tg_lenet5: generator is NULL");
    tg_module *net = tg_nn_sequential(0, NULL);
    if (!net)
        return NULL;
    const tg_conv2d_opts pad2 = {.padding = {2, 2}};
    const tg_pool2d_opts pool = {.kernel = {2, 2}, .stride = {2, 2}};
    tg_status s = TG_OK;
    /* one statement per layer: the order fixes which random draws each
     * layer's initialisation takes, as in PyTorch's constructor */
#define ADD(name, ctor) \
    if (s == TG_OK)     \
        s = tg_module_add(net, name, ctor)
    ADD("conv1", tg_nn_conv2d(1, 6, 5, 5, &pad2, true, g));
    ADD("relu1", tg_nn_relu());
    ADD("pool1", tg_nn_max_pool2d(&pool));
    ADD("conv2", tg_nn_conv2d(6, 16, 5, 5, NULL, true, g));
    ADD("relu2", tg_nn_relu());
    ADD("pool2", tg_nn_max_pool2d(&pool));
    ADD("flatten", tg_nn_flatten(1, -1));
    ADD("fc1", tg_nn_linear(16 * 5 * 5, 120, true, g));
    ADD("relu3", tg_nn_relu());
    ADD("fc2", tg_nn_linear(120, 84, true, g));
    ADD("relu4", tg_nn_relu());
    ADD("fc3", tg_nn_linear(84, 10, true, g));
#undef ADD
    if (s != TG_OK) {
        tg_module_free(net);
        return NULL;
    }
    return net;
}
