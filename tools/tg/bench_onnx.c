/* tg bench onnx MODEL [--batch B] [--threads T] [--runs N] [--profile TRACE]
 * tensorgraph's time per run of an ONNX model (graph mode, one session,
 * warm, median of N runs) on a random float32 input whose first dim is
 * the batch, and onnxruntime's on the same input when `node` and the npm
 * package onnxruntime-node are there (scripts/install_ort.sh puts it in
 * build/ort; TG_ORT_DIR names another folder): one JSON line with both
 * times, their ratio and the largest difference of the first output.
 * --profile writes tensorgraph's per-op spans of the timed runs as a
 * Chrome trace (bench/onnx_models.py sums them per op). */
#include "commands.h"
#include "progress.h"
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WARM_RUNS 3
#define WARM_MS 300.0

#ifndef TG_SOURCE_DIR
#define TG_SOURCE_DIR "."
#endif

typedef struct bench_args {
    const char *model, *profile;
    int batch, threads, runs;
} bench_args;

/* the tool's clocks (progress.h), in ms: wall time, and the process's CPU
 * time (with one thread, what a run costs whatever else the machine runs,
 * where wall time swings with other processes) */
static double now_ms(void) { return progress_now() * 1e3; }
static double cpu_ms(void) { return progress_cpu_now() * 1e3; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(void)
{
    fprintf(stderr, "usage: tg bench onnx MODEL [--batch B] [--threads T] [--runs N] "
                    "[--profile TRACE.json]\n");
    return 1;
}

static bool parse(int argc, char **argv, bench_args *a)
{
    *a = (bench_args){.batch = 1, .threads = 2, .runs = 20};
    for (int i = 1; i < argc; i++) {
        int *dst = !strcmp(argv[i], "--batch") ? &a->batch
                   : !strcmp(argv[i], "--threads") ? &a->threads
                   : !strcmp(argv[i], "--runs") ? &a->runs : NULL;
        if (dst && i + 1 < argc) {
            *dst = atoi(argv[++i]);
            if (*dst < 1) {
                fprintf(stderr, "tg bench onnx: %s must be a positive number\n", argv[i - 1]);
                return false;
            }
        } else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
            a->profile = argv[++i];
        } else if (argv[i][0] != '-' && !a->model) {
            a->model = argv[i];
        } else {
            fprintf(stderr, "tg bench onnx: unknown or incomplete option '%s'\n", argv[i]);
            return false;
        }
    }
    return a->model != NULL;
}

/* the input's shape with the batch dim set; false (printed) when the
 * model's input is not float32 or has other unknown dims */
static bool input_shape(const tg_onnx_model *m, int batch, tg_onnx_value_info *vi,
                        int64_t *shape)
{
    if (tg_onnx_input_info(m, 0, vi) != TG_OK || vi->dtype != TG_FLOAT32 || vi->ndim < 1) {
        fprintf(stderr, "tg bench onnx: the model's first input should be a float32 tensor "
                        "of known rank\n");
        return false;
    }
    for (int d = 0; d < vi->ndim; d++) {
        shape[d] = d == 0 ? batch : vi->shape[d];
        if (d == 0 && vi->shape[0] >= 0 && vi->shape[0] != batch) {
            fprintf(stderr, "tg bench onnx: input '%s' has a fixed batch of %lld; export "
                            "it with a dynamic first dim for --batch %d\n", vi->name,
                    (long long)vi->shape[0], batch);
            return false;
        }
        if (shape[d] < 0) {
            fprintf(stderr, "tg bench onnx: input '%s' dim %d is unknown\n", vi->name, d);
            return false;
        }
    }
    return true;
}

/* median ms per run of the model in a session, wall time (and in *cpu
 * the process's CPU time); *out: the first output */
static double time_tg(const tg_onnx_model *m, tg_tensor *x, const bench_args *a,
                      tg_tensor **out, double *cpu)
{
    tg_onnx_value_info vi;
    tg_onnx_input_info(m, 0, &vi);
    tg_graph *g = tg_graph_new("bench");
    double med = -1;
    if (!g || tg_graph_begin(g) != TG_OK)
        return -1;
    tg_onnx_opts o = {.specialize = false};
    tg_onnx_net *net = tg_onnx_build(m, 1, &vi.name, &x, &o);
    tg_graph_end();
    tg_session *s = net ? tg_session_new(g) : NULL;
    double *t = malloc((size_t)a->runs * sizeof *t), *c = malloc((size_t)a->runs * sizeof *c);
    if (s && t && c) {
        tg_tensor *p = tg_onnx_net_input(net, 0), *y = tg_onnx_net_output(net, 0);
        bool ok = true;
        /* warm: at least WARM_RUNS runs and WARM_MS. Debian's OpenBLAS
         * starts threads of its own when it loads, which spin for about
         * 0.1 s before they sleep; runs in that window share the cores
         * with them (mobilenet_v3_small at batch 1, 2 threads: 2.2-2.8 ms
         * per run there, 1.33-1.38 ms after) */
        double warm_until = now_ms() + WARM_MS;
        int warm = 0;
        while (ok && (warm < WARM_RUNS || now_ms() < warm_until)) {
            tg_tensor *res = NULL;
            ok = tg_session_run(s, 1, &p, &x, 1, &y, &res, 0, NULL) == TG_OK;
            tg_release(res);
            warm++;
        }
        if (ok && a->profile)
            ok = tg_session_trace_begin(s) == TG_OK;
        for (int r = 0; ok && r < a->runs; r++) {
            tg_tensor *res = NULL;
            double t0 = now_ms(), c0 = cpu_ms();
            ok = tg_session_run(s, 1, &p, &x, 1, &y, &res, 0, NULL) == TG_OK;
            t[r] = now_ms() - t0;
            c[r] = cpu_ms() - c0;
            if (r == a->runs - 1 && ok)
                *out = res;
            else
                tg_release(res);
        }
        if (ok && a->profile && tg_session_trace_end(s, a->profile) != TG_OK)
            ok = false;
        if (ok) {
            qsort(t, (size_t)a->runs, sizeof *t, cmp_double);
            qsort(c, (size_t)a->runs, sizeof *c, cmp_double);
            med = t[a->runs / 2];
            *cpu = c[a->runs / 2];
        }
    }
    if (med < 0)
        fprintf(stderr, "tg bench onnx: %s\n", tg_last_error());
    free(t);
    free(c);
    tg_session_free(s);
    tg_onnx_net_free(net);
    tg_graph_free(g);
    return med;
}

/* where onnxruntime-node is: TG_ORT_DIR, else build/ort next to tg */
static bool ort_dir(char *dir, size_t n)
{
    const char *env = getenv("TG_ORT_DIR");
    if (env) {
        snprintf(dir, n, "%s", env);
    } else {
        char exe[1000];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k <= 0)
            return false;
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(dir, n, "%s/ort", exe);
    }
    char probe[1200];
    snprintf(probe, sizeof probe, "%s/node_modules/onnxruntime-node/package.json", dir);
    return access(probe, R_OK) == 0 && system("node --version > /dev/null 2>&1") == 0;
}

/* runs bench/ort_bench.js; its JSON line into line, its output into y */
static bool run_ort(const bench_args *a, const char *dir, const char *name, tg_tensor *x,
                    tg_tensor *y, char *line, size_t n_line)
{
    char in[] = "/tmp/tg-bench-in-XXXXXX", out[] = "/tmp/tg-bench-out-XXXXXX";
    int fi = mkstemp(in), fo = mkstemp(out);
    bool ok = fi >= 0 && fo >= 0;
    int64_t numel = tg_numel(x);
    float *buf = malloc((size_t)(numel > tg_numel(y) ? numel : tg_numel(y)) * sizeof *buf);
    ok = ok && buf && tg_copy_to(x, TG_FLOAT32, buf) == TG_OK &&
         write(fi, buf, (size_t)numel * 4) == (ssize_t)(numel * 4);
    char shape[256] = "", cmd[4096];
    for (int d = 0; d < tg_ndim(x); d++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? "," : "",
                 (long long)tg_shape(x)[d]);
    const char *js = getenv("TG_ORT_BENCH_JS");
    snprintf(cmd, sizeof cmd, "NODE_PATH='%s/node_modules' node '%s' '%s' '%s' '%s' '%s' %d %d "
             "'%s'", dir, js ? js : TG_SOURCE_DIR "/bench/ort_bench.js", a->model, name, shape,
             in, a->threads, a->runs, out);
    FILE *p = ok ? popen(cmd, "r") : NULL;
    ok = p && fgets(line, (int)n_line, p) != NULL;
    if (p)
        ok = pclose(p) == 0 && ok;
    if (ok) {
        line[strcspn(line, "\n")] = 0;
        ok = pread(fo, buf, (size_t)tg_numel(y) * 4, 0) == (ssize_t)(tg_numel(y) * 4);
    }
    if (ok) { /* y := the onnxruntime output */
        tg_tensor *o = tg_from_data(TG_FLOAT32, tg_ndim(y), tg_shape(y), buf);
        ok = o && tg_copy_(y, o) == TG_OK;
        tg_release(o);
    }
    free(buf);
    if (fi >= 0)
        close(fi), unlink(in);
    if (fo >= 0)
        close(fo), unlink(out);
    return ok;
}

int tg_bench_onnx(int argc, char **argv)
{
    bench_args a;
    if (!parse(argc, argv, &a))
        return usage();
    tg_set_num_threads(a.threads);
    tg_onnx_model *m = tg_onnx_load(a.model);
    if (!m) {
        fprintf(stderr, "tg bench onnx: %s\n", tg_last_error());
        return 1;
    }
    tg_onnx_value_info vi;
    int64_t shape[TG_MAX_DIMS];
    int rc = 1;
    if (!input_shape(m, a.batch, &vi, shape))
        goto out;
    tg_generator *gen = tg_generator_new(0);
    tg_tensor *x = tg_rand_uniform(gen, TG_FLOAT32, vi.ndim, shape, -1, 1), *y = NULL;
    tg_generator_free(gen);
    double tg_cpu = -1, tg_ms = x ? time_tg(m, x, &a, &y, &tg_cpu) : -1;
    if (tg_ms < 0 || !y) {
        tg_release(x);
        goto out;
    }
    printf("{\"bench\":\"onnx\",\"model\":\"%s\",\"opset\":%lld,\"batch\":%d,\"threads\":%d,"
           "\"runs\":%d,\"tg_ms\":%.3f,\"tg_cpu_ms\":%.3f", a.model,
           (long long)tg_onnx_opset(m), a.batch, a.threads, a.runs, tg_ms, tg_cpu);
    char dir[1024], line[512];
    tg_tensor *ref = tg_zeros_like(y);
    if (!ort_dir(dir, sizeof dir)) {
        printf(",\"ort\":\"not found (node and onnxruntime-node: scripts/install_ort.sh)\"}\n");
    } else if (!ref || !run_ort(&a, dir, vi.name, x, ref, line, sizeof line) ||
               line[0] != '{') {
        printf(",\"ort\":\"failed\"}\n");
    } else {
        double ort_ms = -1, ort_cpu = -1, diff = -1, scale = 0;
        const char *k = strstr(line, "\"ort_ms\":"), *kc = strstr(line, "\"ort_cpu_ms\":");
        if (k)
            ort_ms = atof(k + 9);
        if (kc)
            ort_cpu = atof(kc + 13);
        tg_tensor *d = tg_max(tg_abs(tg_sub(y, ref)), 0, NULL, false);
        tg_tensor *sc = tg_max(tg_abs(ref), 0, NULL, false);
        if (d && sc && tg_copy_to(d, TG_FLOAT64, &diff) == TG_OK)
            tg_copy_to(sc, TG_FLOAT64, &scale);
        tg_release(d);
        tg_release(sc);
        const char *v = strstr(line, "\"ort_version\":\"");
        int vlen = v ? (int)strcspn(v + 15, "\"") : 0;
        printf(",\"ort_ms\":%.3f,\"ratio\":%.3f,\"ort_cpu_ms\":%.3f,\"cpu_ratio\":%.3f,"
               "\"max_diff\":%.3g,\"max_abs_output\":%.3g,\"ort_version\":\"%.*s\"}\n",
               ort_ms, ort_ms > 0 ? tg_ms / ort_ms : -1, ort_cpu,
               ort_cpu > 0 ? tg_cpu / ort_cpu : -1, diff, scale, vlen, v ? v + 15 : "");
    }
    tg_release(ref);
    tg_release(x);
    tg_release(y);
    rc = 0;
out:
    tg_onnx_free(m);
    return rc;
}
