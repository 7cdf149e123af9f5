/* Every public function that takes a pointer handles NULL there: an error
 * (a status with a message, or NULL), or printing "(null)" — never a
 * crash. The calls are generated from the headers by
 * scripts/gen_null_args.py into null_args_calls.inc: for each pointer
 * parameter of each function in the headers of include/tg, one call with that
 * parameter NULL and every other argument valid (the fixtures below,
 * fresh for each call). A failing status must come with a message; no
 * call may leave a scope or graph scope open. A crash names its call. */
#include "harness.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a writable-looking path in a directory that does not exist: file
 * functions fail at once instead of writing or fetching anything */
#define FX_MISSING_PATH "/nonexistent/tg-null-args/x"

typedef struct fixture {
    tg_tensor *t, *ts[8], *outs[8];
    char buf[256];
    const char *names[8];
    int64_t shape[8];
    int ints[8];
    double dbls[8];
    tg_generator *gen;
    tg_module *m;
    tg_state_dict *sd, *sd_out[8];
    tg_graph *g;
    tg_session *s;
    tg_optimizer *opt;
    tg_lr_scheduler *sched;
    tg_dataset *ds;
    tg_loader *loader;
    tg_loader_options loader_opts;
    tg_onnx_model *onnx;
    tg_onnx_net *net;
    tg_onnx_opts onnx_opts;
    tg_onnx_value_info value_info;
    tg_named_tensor *named, *named_out;
    tg_memory_stats mem_stats;
    tg_session_stats session_stats;
    tg_kv kv[8];
    tg_sgd_opts sgd_opts;
    tg_adam_opts adam_opts;
    tg_adadelta_opts adadelta_opts;
    tg_rmsprop_opts rmsprop_opts;
    tg_conv2d_opts conv_opts;
    tg_pool2d_opts pool_opts;
    tg_conv_transpose2d_opts convt_opts;
    tg_conv1d_opts conv1_opts;
    tg_conv_transpose1d_opts convt1_opts;
    tg_pool1d_opts pool1_opts;
    tg_conv3d_opts conv3_opts;
    tg_conv_transpose3d_opts convt3_opts;
    tg_pool3d_opts pool3_opts;
    tg_nll_opts nll_opts;
    tg_gradcheck_opts gradcheck_opts;
    tg_pass_record pass_records[64];
    tg_session_options session_opts;
    FILE *file;
    tg_tensor *leaf, *made;             /* made = exp(leaf), leaf requiring grad */
    tg_grad_node *node, *node_out;      /* made's grad_fn; an output */
} fixture;

static char onnx_path[1024]; /* tests/data/onnx_import/mlp.onnx */

/* ---- valid callbacks --------------------------------------------------------------- */
static tg_status fx_trace(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)user;
    out[0] = tg_mul(in[0], in[0]);
    return out[0] ? TG_OK : tg_last_status();
}

static tg_tensor *fx_gradcheck(int n, tg_tensor *const *in, void *user)
{
    (void)n, (void)user;
    return tg_mul(in[0], in[0]);
}

static tg_tensor *fx_forward(tg_module *m, tg_tensor *x)
{
    (void)m;
    return tg_retain(x);
}

static void fx_log(void *user, const char *line) { (void)user, (void)line; }
static void fx_free_nothing(void *p) { (void)p; }

static tg_status fx_node_hook(void *user, tg_grad_node *n, int n_in, tg_tensor **gi, int n_out,
                              tg_tensor **go)
{
    (void)user, (void)n, (void)n_in, (void)gi, (void)n_out, (void)go;
    return TG_OK;
}

static tg_tensor *fx_fn_forward(tg_function_ctx *ctx, int n, tg_tensor *const *in, void *u)
{
    (void)ctx, (void)n, (void)u;
    return tg_mul(in[0], in[0]);
}

static tg_status fx_fn_backward(tg_function_ctx *ctx, tg_tensor *dy, int n, tg_tensor **dx,
                                void *u)
{
    (void)ctx, (void)n, (void)u;
    dx[0] = tg_retain(dy);
    return TG_OK;
}

static const tg_function fx_function = {"fx", fx_fn_forward, fx_fn_backward};

static int64_t fx_ds_size(void *self)
{
    (void)self;
    return 2;
}

static tg_status fx_ds_get(void *self, const int64_t *idx, int64_t n, tg_tensor **x,
                           tg_tensor **y)
{
    (void)self, (void)idx;
    *x = tg_zeros(TG_FLOAT32, 2, (int64_t[]){n, 2});
    *y = tg_zeros(TG_INT64, 1, &n);
    return *x && *y ? TG_OK : tg_last_status();
}

static const tg_dataset_impl fx_dataset_impl = {fx_ds_size, fx_ds_get, NULL};

/* ---- fixtures -------------------------------------------------------------------------- */
static bool fx_open(fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->t = tg_ones(TG_FLOAT32, 2, (int64_t[]){2, 2});
    for (int i = 0; i < 8; i++) {
        fx->ts[i] = fx->t;
        fx->names[i] = "x";
        fx->shape[i] = 2;
        fx->dbls[i] = 1.0;
        fx->kv[i] = (tg_kv){"k", "v"};
    }
    fx->gen = tg_generator_new(1);
    fx->m = tg_nn_linear(2, 2, true, fx->gen);
    fx->sd = tg_state_dict_new();
    if (fx->sd)
        tg_state_dict_add(fx->sd, "x", fx->t);
    fx->g = tg_graph_new("fx");
    if (fx->g)
        tg_release(tg_placeholder(fx->g, "x", TG_FLOAT32, 2, fx->shape));
    fx->s = fx->g ? tg_session_new(fx->g) : NULL;
    int n = fx->m ? tg_module_parameters(fx->m, &fx->named) : -1;
    tg_tensor *params[8];
    for (int i = 0; i < n && i < 8; i++)
        params[i] = fx->named[i].tensor;
    fx->sgd_opts = tg_sgd_defaults();
    fx->adam_opts = tg_adam_defaults();
    fx->adadelta_opts = tg_adadelta_defaults();
    fx->rmsprop_opts = tg_rmsprop_defaults();
    fx->opt = n > 0 ? tg_optim_sgd(n, params, &fx->sgd_opts) : NULL;
    fx->sched = fx->opt ? tg_sched_step_lr(fx->opt, 1, 0.5) : NULL;
    tg_tensor *dx = tg_zeros(TG_FLOAT32, 2, (int64_t[]){4, 2});
    tg_tensor *dy = tg_zeros(TG_INT64, 1, (int64_t[]){4});
    fx->ds = tg_dataset_from_tensors(dx, dy);
    tg_release(dx);
    tg_release(dy);
    fx->loader_opts = tg_loader_defaults();
    fx->loader_opts.prefetch = 0;
    fx->loader = fx->ds ? tg_loader_new(fx->ds, &fx->loader_opts) : NULL;
    fx->onnx = tg_onnx_load(onnx_path);
    tg_tensor *x4 = tg_zeros(TG_FLOAT32, 2, (int64_t[]){2, 4}); /* mlp.onnx: x [N, 4] */
    fx->net = fx->onnx ? tg_onnx_build(fx->onnx, 1, (const char *[]){"x"}, &x4, NULL) : NULL;
    tg_release(x4);
    fx->conv_opts = (tg_conv2d_opts){{1, 1}, {0, 0}, {1, 1}, 1};
    fx->pool_opts = (tg_pool2d_opts){{2, 2}, {2, 2}, {0, 0}, false, true};
    fx->convt_opts = (tg_conv_transpose2d_opts){{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1};
    fx->conv1_opts = (tg_conv1d_opts){1, 0, 1, 1};
    fx->convt1_opts = (tg_conv_transpose1d_opts){1, 0, 0, 1, 1};
    fx->pool1_opts = (tg_pool1d_opts){2, 2, 0, false, true};
    fx->conv3_opts = (tg_conv3d_opts){{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1};
    fx->convt3_opts = (tg_conv_transpose3d_opts){{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 1};
    fx->pool3_opts = (tg_pool3d_opts){{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, false, true};
    fx->nll_opts = (tg_nll_opts){.reduction = TG_REDUCTION_MEAN};
    fx->session_opts = tg_session_default_options();
    fx->file = fopen("/dev/null", "w");
    fx->leaf = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    if (fx->leaf)
        tg_set_requires_grad(fx->leaf, true);
    fx->made = tg_exp(fx->leaf);
    fx->node = tg_grad_fn(fx->made);
    const char *missing = !fx->t ? "t" : !fx->gen ? "gen" : !fx->m ? "m" : !fx->sd ? "sd"
                          : !fx->g ? "g" : !fx->s ? "s" : !fx->opt ? "opt"
                          : !fx->sched ? "sched" : !fx->ds ? "ds" : !fx->loader ? "loader"
                          : !fx->onnx ? "onnx" : !fx->net ? "net" : !fx->file ? "file" : !fx->node ? "node" : NULL;
    if (missing)
        tt_fail(__FILE__, __LINE__, "fixture %s: %s", missing, tg_last_error());
    tg_clear_error();
    return !missing;
}

static void fx_close(fixture *fx)
{
    for (int i = 0; i < 8; i++)
        tg_state_dict_free(fx->sd_out[i]);
    tg_named_tensors_free(fx->named_out);
    tg_loader_free(fx->loader);
    tg_dataset_free(fx->ds);
    tg_sched_free(fx->sched);
    tg_optim_free(fx->opt);
    tg_named_tensors_free(fx->named);
    tg_session_free(fx->s);
    tg_graph_free(fx->g);
    tg_state_dict_free(fx->sd);
    tg_module_free(fx->m);
    tg_generator_free(fx->gen);
    tg_onnx_net_free(fx->net);
    tg_onnx_free(fx->onnx);
    tg_release(fx->t);
    tg_grad_node_release(fx->node_out);
    tg_grad_node_release(fx->node);
    tg_release(fx->made);
    tg_release(fx->leaf);
    if (fx->file)
        fclose(fx->file);
}

/* ---- the calls ----------------------------------------------------------------------- */
typedef struct null_call {
    const char *label;
    tg_status (*run)(fixture *fx);
    bool returns_status;
} null_call;

#define FX_RETURNED TG_OK
#include "null_args_calls.inc"

static const char *volatile current = "(none)";

static void on_crash(int sig)
{
    static const char msg[] = "test_null_args: crashed in ";
    ssize_t w = write(2, msg, sizeof msg - 1);
    w = write(2, current, strlen(current));
    w = write(2, "\n", 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void run_all(void)
{
    int n = (int)(sizeof null_calls / sizeof null_calls[0]);
    int failed_fixtures = 0;
    for (int i = 0; i < n; i++) {
        const null_call *c = &null_calls[i];
        fixture fx;
        if (!fx_open(&fx)) {
            fx_close(&fx);
            if (++failed_fixtures > 3)
                break;
            continue;
        }
        int depth = tg_scope_depth();
        current = c->label;
        tg_scope_begin(); /* new tensors the call returns go here */
        tg_status s = c->run(&fx);
        tg_scope_end();
        tt_checks++;
        if (c->returns_status && s != TG_OK && !tg_last_error()[0])
            tt_fail(__FILE__, __LINE__, "%s failed (%s) without a message", c->label,
                    tg_status_name(s));
        tt_checks++;
        if (tg_scope_depth() != depth || tg_graph_current() != NULL)
            tt_fail(__FILE__, __LINE__, "%s left a scope (%d, was %d) or a graph scope open",
                    c->label, tg_scope_depth(), depth);
        while (tg_graph_current())
            tg_graph_end();
        tg_clear_error();
        fx_close(&fx);
    }
    printf("  %d calls with a NULL argument\n", n);
}

/* the two crashes, and what printing NULL gives */
static void test_printing_null(void)
{
    char buf[64];
    CHECK(strcmp(tg_shape_str(2, NULL, buf, sizeof buf), "(null)") == 0);
    CHECK(tg_shape_str(2, (int64_t[]){3, 4}, NULL, 0) == NULL);
    CHECK(strcmp(tg_shape_str(2, (int64_t[]){3, 4}, buf, sizeof buf), "[3, 4]") == 0);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        tg_fprint(f, NULL);
        rewind(f);
        char line[64] = {0};
        CHECK(fgets(line, sizeof line, f) && strcmp(line, "tensor(NULL)\n") == 0);
        fclose(f);
    }
    tg_tensor *t = tg_ones(TG_FLOAT32, 1, (int64_t[]){2});
    tg_clear_error();
    tg_fprint(NULL, t);
    CHECK(tg_last_status() == TG_ERR_ARG && strstr(tg_last_error(), "FILE is NULL"));
    char *s = tg_to_string(NULL);
    CHECK(s && strcmp(s, "tensor(NULL)") == 0);
    free(s);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *slash = strrchr(__FILE__, '/');
    snprintf(onnx_path, sizeof onnx_path, "%.*s/data/onnx_import/mlp.onnx",
             slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".");
    (void)argv;
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGABRT, on_crash);
    tg_set_num_threads(1);
    current = "test_printing_null";
    RUN(test_printing_null);
    current = "(outside the calls)";
    tt_current = "null arguments";
    run_all(); /* outside RUN: the fixtures own their references, no scope does */
    int r = tt_finish();
    return r || tt_failures ? 1 : 0;
}
