/* PyTorch-exported models (tests/data/torch_models: NAME.onnx from
 * torch.onnx.export and NAME.safetensors with PyTorch's inputs, outputs and
 * gradients, written by make.py there) run through tensorgraph's ONNX
 * import in eager and in graph mode: every output and every gradient of
 * the sum of the outputs (with respect to the float inputs and to the
 * parameters that are initializers) must match PyTorch's. Runs without
 * PyTorch; the sanitizer build runs it too. TG_TORCH_MODELS_DIR overrides
 * the directory; a model name as argv[1] runs only that one. */
#include "harness.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static char dir[1024];

/* max |got - want| / max(max |want|, 1e-6): 0 when equal, INFINITY on a
 * shape or dtype mismatch */
static double rel_max_err(tg_tensor *got, tg_tensor *want)
{
    if (!got || !want || tg_ndim(got) != tg_ndim(want) ||
        memcmp(tg_shape(got), tg_shape(want), sizeof(int64_t) * (size_t)tg_ndim(got)))
        return INFINITY;
    int64_t n = tg_numel(want);
    double *a = malloc((size_t)(n ? n : 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    double err = 0, scale = 1e-6;
    if (!a || !b || tg_copy_to(got, TG_FLOAT64, a) != TG_OK ||
        tg_copy_to(want, TG_FLOAT64, b) != TG_OK) {
        err = INFINITY;
        n = 0;
    }
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        err = d > err || d != d ? d : err;
        scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
    }
    free(a);
    free(b);
    return err / scale;
}

/* every "PREFIX.name" of want against `name` in got */
static int compare(const char *model, const char *mode, const tg_state_dict *want,
                   const char *prefix, const tg_state_dict *got)
{
    int compared = 0;
    size_t np = strlen(prefix);
    for (int i = 0; i < tg_state_dict_size(want); i++) {
        const char *key = tg_state_dict_name(want, i);
        if (strncmp(key, prefix, np) || key[np] != '.')
            continue;
        const char *name = key + np + 1;
        tg_tensor *w = tg_state_dict_tensor(want, i);
        tt_checks++;
        if (!tg_state_dict_has(got, name)) {
            tt_fail(__FILE__, __LINE__, "%s (%s): no %s for '%s'", model, mode, prefix, name);
            continue;
        }
        tg_tensor *g = tg_state_dict_get(got, name);
        double tol = tg_dtype_of(w) == TG_FLOAT64 ? 1e-9 : 2e-4;
        if (tg_dtype_of(w) != TG_FLOAT32 && tg_dtype_of(w) != TG_FLOAT64)
            tol = 0; /* integers exactly */
        double e = rel_max_err(g, w);
        if (!(e <= tol) || tg_dtype_of(g) != tg_dtype_of(w))
            tt_fail(__FILE__, __LINE__, "%s (%s): %s '%s' differs from PyTorch's: relative "
                    "error %.3g (tol %g), dtype %s vs %s", model, mode, prefix, name, e, tol,
                    tg_dtype_name(tg_dtype_of(g)), tg_dtype_name(tg_dtype_of(w)));
        compared++;
    }
    return compared;
}

static void run_model(const char *name)
{
    char onnx_path[1200], st_path[1200];
    snprintf(onnx_path, sizeof onnx_path, "%s/%s.onnx", dir, name);
    snprintf(st_path, sizeof st_path, "%s/%s.safetensors", dir, name);
    tt_current = name;
    tg_onnx_model *m = tg_onnx_load(onnx_path);
    tg_state_dict *want = tg_safetensors_load(st_path);
    CHECK(m && want);
    if (!m || !want) {
        tg_onnx_free(m);
        tg_state_dict_free(want);
        return;
    }
    const char *names[64];
    tg_tensor *inputs[64];
    int n_in = 0;
    for (int i = 0; i < tg_state_dict_size(want) && n_in < 64; i++)
        if (!strncmp(tg_state_dict_name(want, i), "input.", 6)) {
            names[n_in] = tg_state_dict_name(want, i) + 6;
            inputs[n_in++] = tg_state_dict_tensor(want, i);
        }
    for (int mode = 0; mode < 2; mode++) {
        const char *mname = mode ? "graph" : "eager";
        tg_state_dict *out = NULL, *grads = NULL;
        tg_status s = tg_onnx_run(m, (tg_onnx_mode)mode, n_in, names, inputs, &out, &grads);
        tt_checks++;
        if (s != TG_OK) {
            tt_fail(__FILE__, __LINE__, "%s (%s): tg_onnx_run failed: %s", name, mname,
                    tg_last_error());
        } else {
            int n_out = compare(name, mname, want, "output", out);
            int n_grad = compare(name, mname, want, "grad", grads);
            CHECK(n_out >= 1 && n_grad >= 1);
            if (mode == 1)
                printf("  %-16s %d outputs, %d gradients compared in both modes\n", name, n_out,
                       n_grad);
        }
        tg_state_dict_free(out);
        tg_state_dict_free(grads);
    }
    tg_onnx_free(m);
    tg_state_dict_free(want);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_torch_models(void)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    char *models[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".onnx"))
            models[n++] = strndup(e->d_name, len - 5);
    }
    closedir(d);
    qsort(models, (size_t)n, sizeof *models, by_name);
    CHECK(n >= 15);
    for (int i = 0; i < n; i++) {
        tg_scope_begin();
        run_model(models[i]);
        tg_scope_end();
        free(models[i]);
    }
}

int main(int argc, char **argv)
{
    const char *env = getenv("TG_TORCH_MODELS_DIR");
    snprintf(dir, sizeof dir, "%s", env ? env : TG_SOURCE_DIR "/tests/data/torch_models");
    if (argc > 1) {
        tg_scope_begin();
        run_model(argv[1]);
        tg_scope_end();
    } else {
        RUN(test_torch_models);
    }
    return tt_finish();
}
