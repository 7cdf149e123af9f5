/* Runs ONNX's node test cases (written by export_cases.py in the backend
 * test layout) through tensorgraph's importer in eager and in graph mode
 * and compares the outputs (rtol 1e-3, atol 1e-5; integers and bools
 * exactly; values of types held in a wider dtype, as INT8 in int32, must
 * also lie in the declared type's range). Sequence and optional values
 * are SequenceProto / OptionalProto files, given and compared under the
 * API's names (S[0], S[1], ...; an optional without a value absent). Prints the pass rate per op; cases listed in the expected
 * failures file (with the reason) may fail, any other failure (or an
 * expected failure that passes) makes the exit status 1.
 *   onnx_conformance_runner CASES_DIR [--xfail FILE] [--only NAME] [-v] */
#include "onnx/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-3
#define ATOL 1e-5

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 127) | (v > 127 ? 128 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* a TensorProto file, read as the one initializer of a ModelProto built
 * around its bytes (ModelProto.graph = 7, GraphProto.initializer = 5) */
static tg_tensor *load_pb(const char *path)
{
    size_t len;
    char *tp = read_all(path, &len);
    if (!tp)
        return NULL;
    uint8_t head[32];
    size_t h = 0, inner = 1 + put_varint(head, len) + len;
    h = 0;
    head[h++] = (7 << 3) | 2;
    h += put_varint(head + h, inner);
    head[h++] = (5 << 3) | 2;
    h += put_varint(head + h, len);
    uint8_t *msg = malloc(h + len);
    memcpy(msg, head, h);
    memcpy(msg + h, tp, len);
    free(tp);
    onnx_model *m = NULL;
    tg_tensor *t = NULL;
    if (onnx_model_parse(msg, h + len, &m) == TG_OK && m->graph && m->graph->n_initializer == 1)
        t = onnx_tensor_to_tg_wide(&m->graph->initializer[0]);
    onnx_model_free(m);
    free(msg);
    return t;
}

static bool close_enough(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= ATOL + RTOL * fabs(b);
}

/* the range of an ONNX integer type held in a wider dtype (INT8, INT16
 * and UINT16 in int32); false for the others */
static bool held_range(int onnx_type, double *lo, double *hi)
{
    switch (onnx_type) {
    case ONNX_INT8: *lo = -128; *hi = 127; return true;
    case ONNX_UINT16: *lo = 0; *hi = 65535; return true;
    case ONNX_INT16: *lo = -32768; *hi = 32767; return true;
    default: return false;
    }
}

/* "" when equal, else why not. onnx_type: the type the model declares for
 * the output (0: unknown); values held wider must lie in its range. */
static const char *compare(tg_tensor *got, tg_tensor *want, int onnx_type, char *why,
                           size_t cap)
{
    char s1[160], s2[160];
    if (!got)
        return "missing output";
    if (tg_dtype_of(got) != tg_dtype_of(want)) {
        snprintf(why, cap, "dtype %s, expected %s", tg_dtype_name(tg_dtype_of(got)),
                 tg_dtype_name(tg_dtype_of(want)));
        return why;
    }
    if (tg_ndim(got) != tg_ndim(want) ||
        memcmp(tg_shape(got), tg_shape(want), (size_t)tg_ndim(got) * 8)) {
        snprintf(why, cap, "shape %s, expected %s",
                 tg_shape_str(tg_ndim(got), tg_shape(got), s1, sizeof s1),
                 tg_shape_str(tg_ndim(want), tg_shape(want), s2, sizeof s2));
        return why;
    }
    int64_t n = tg_numel(got);
    double *a = malloc((size_t)(n ? n : 1) * 8), *b = malloc((size_t)(n ? n : 1) * 8);
    tg_copy_to(got, TG_FLOAT64, a);
    tg_copy_to(want, TG_FLOAT64, b);
    bool isf = tg_dtype_is_float(tg_dtype_of(want));
    double lo, hi;
    bool ranged = held_range(onnx_type, &lo, &hi);
    why[0] = '\0';
    for (int64_t i = 0; i < n; i++) {
        if (ranged && !(a[i] >= lo && a[i] <= hi)) {
            snprintf(why, cap, "element %lld is %.9g, outside the declared type's [%g, %g]",
                     (long long)i, a[i], lo, hi);
            break;
        }
        if (isf ? !close_enough(a[i], b[i]) : a[i] != b[i]) {
            snprintf(why, cap, "element %lld is %.9g, expected %.9g", (long long)i, a[i], b[i]);
            break;
        }
    }
    free(a);
    free(b);
    return why;
}

/* a sequence or optional value's file (SequenceProto, OptionalProto) */
static tg_status load_value(const char *path, tg_onnx_kind kind, onnx_value_data *d)
{
    size_t len;
    char *bytes = read_all(path, &len);
    if (!bytes)
        return tg__error(TG_ERR_IO, "cannot read %s", path);
    tg_status s = onnx_value_data_parse(bytes, len, kind != TG_ONNX_SEQUENCE, d);
    free(bytes);
    return s;
}

#define MAX_IN 256

/* runs one case in one mode: "" on success, else the reason */
static const char *run_case(const char *dir, tg_onnx_mode mode, char *why, size_t cap)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    tg_onnx_model *m = tg_onnx_load(path);
    if (!m) {
        snprintf(why, cap, "load: %s", tg_last_error());
        return why;
    }
    int ni = tg_onnx_num_inputs(m), no = tg_onnx_num_outputs(m), n = 0;
    tg_tensor *ins[MAX_IN] = {0};
    const char *names[MAX_IN];
    static char elem_names[MAX_IN][300];
    onnx_value_data held[64]; /* the sequences' and optionals' tensors */
    int n_held = 0;
    why[0] = '\0';
    tg_scope_begin();
    for (int i = 0; i < ni && !why[0]; i++) {
        tg_onnx_value_info vi;
        tg_onnx_input_info(m, i, &vi);
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, i);
        if (vi.kind == TG_ONNX_TENSOR) {
            names[n] = vi.name;
            if (!(ins[n++] = load_pb(path)))
                snprintf(why, cap, "input %d: %s", i, tg_last_error());
            continue;
        }
        onnx_value_data d;
        if (n_held == 64 || load_value(path, vi.kind, &d) != TG_OK) {
            snprintf(why, cap, "input %d: %s", i, tg_last_error());
            break;
        }
        held[n_held++] = d;
        for (int k = 0; (d.is_seq || !d.none) && k < d.n && !why[0]; k++) {
            if (n == MAX_IN) {
                snprintf(why, cap, "more than %d input tensors", MAX_IN);
                break;
            }
            snprintf(elem_names[n], sizeof elem_names[n], d.is_seq ? "%s[%d]" : "%s", vi.name, k);
            names[n] = elem_names[n];
            ins[n++] = d.elem[k];
        }
    }
    tg_state_dict *outs = NULL;
    if (!why[0] && tg_onnx_run(m, mode, n, names, ins, &outs, NULL) != TG_OK)
        snprintf(why, cap, "%s", tg_last_error());
    for (int i = 0; !why[0] && i < no; i++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", dir, i);
        tg_onnx_value_info vi;
        tg_onnx_output_info(m, i, &vi);
        onnx_value_data d = {0};
        if (vi.kind == TG_ONNX_TENSOR) {
            tg_tensor *t = load_pb(path);
            if (t) {
                d.elem = malloc(sizeof *d.elem);
                d.elem[0] = tg_retain(t); /* t is the scope's */
                d.n = 1;
            }
        } else if (load_value(path, vi.kind, &d) != TG_OK) {
            d.n = 0;
        }
        if (!d.n && !d.none && !d.is_seq) {
            snprintf(why, cap, "expected output %d unreadable: %s", i, tg_last_error());
            break;
        }
        char nm[300], w2[300];
        if (d.none) {
            snprintf(nm, sizeof nm, "%s[0]", vi.name);
            if (tg_state_dict_has(outs, vi.name) || tg_state_dict_has(outs, nm))
                snprintf(why, cap, "output '%s': a value, expected none", vi.name);
        }
        for (int k = 0; !d.none && k <= d.n && !why[0]; k++) {
            snprintf(nm, sizeof nm, d.is_seq ? "%s[%d]" : "%s", vi.name, k);
            if (k == d.n) { /* one element more than expected */
                if (d.is_seq && tg_state_dict_has(outs, nm))
                    snprintf(why, cap, "output '%s' has more than %d elements", vi.name, d.n);
                break;
            }
            tg_tensor *got = tg_state_dict_has(outs, nm) ? tg_state_dict_get(outs, nm) : NULL;
            const char *r = compare(got, d.elem[k], vi.onnx_type, w2, sizeof w2);
            if (r[0])
                snprintf(why, cap, "output '%s': %s", nm, r);
        }
        onnx_value_data_clear(&d);
    }
    tg_state_dict_free(outs);
    for (int k = 0; k < n_held; k++)
        onnx_value_data_clear(&held[k]);
    tg_scope_end();
    tg_onnx_free(m);
    tg_clear_error();
    return why;
}

typedef struct opstat {
    char op[100];
    int pass, total;
} opstat;

static const char *xfail_reason(char **xf, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        size_t l = strcspn(xf[i], " \t");
        if (l == strlen(name) && !strncmp(xf[i], name, l))
            return xf[i] + l + strspn(xf[i] + l, " \t#");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *xfile = NULL, *only = NULL;
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--xfail") && i + 1 < argc)
            xfile = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "-v"))
            verbose = true;
        else
            dir = argv[i];
    }
    if (!dir) {
        fprintf(stderr, "usage: %s CASES_DIR [--xfail FILE] [--only NAME] [-v]\n", argv[0]);
        return 2;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/cases.txt", dir);
    size_t len, xlen = 0;
    char *list = read_all(path, &len), *xtext = xfile ? read_all(xfile, &xlen) : NULL;
    if (!list) {
        fprintf(stderr, "cannot read %s\n", path);
        return 2;
    }
    list = realloc(list, len + 1);
    list[len] = '\0';
    char *xf[1024];
    int nxf = 0;
    if (xtext) {
        xtext = realloc(xtext, xlen + 1);
        xtext[xlen] = '\0';
        for (char *l = strtok(xtext, "\n"); l && nxf < 1024; l = strtok(NULL, "\n"))
            if (l[0] && l[0] != '#')
                xf[nxf++] = l;
    }
    opstat stats[512] = {{{0}, 0, 0}};
    int nstats = 0, pass = 0, total = 0, unexpected = 0, xfailed = 0, xpassed = 0;
    int node_pass = 0, node_total = 0, older_pass = 0, older_total = 0;
    int model_pass = 0, model_total = 0;
    char *save = NULL;
    for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[256], op[64], kind[32];
        if (sscanf(line, "%255s %63s %31s", name, op, kind) != 3)
            continue;
        if (only && strcmp(only, name))
            continue;
        char cdir[1024], w1[1024], w2[1024];
        snprintf(cdir, sizeof cdir, "%s/%s", dir, name);
        const char *r1 = run_case(cdir, TG_ONNX_EAGER, w1, sizeof w1);
        const char *r2 = run_case(cdir, TG_ONNX_GRAPH, w2, sizeof w2);
        bool ok = !r1[0] && !r2[0];
        char label[96];
        snprintf(label, sizeof label, "%s%s", op, !strcmp(kind, "expanded") ? " (expanded)"
                                                  : !strcmp(kind, "older") ? " (older opsets)"
                                                  : !strcmp(kind, "model") ? " (model cases)" : "");
        int k = 0;
        while (k < nstats && strcmp(stats[k].op, label))
            k++;
        if (k == nstats && nstats < 512)
            snprintf(stats[nstats++].op, sizeof stats[0].op, "%s", label);
        if (k < 512) {
            stats[k].total++;
            stats[k].pass += ok;
        }
        total++;
        pass += ok;
        if (!strcmp(kind, "node")) {
            node_total++;
            node_pass += ok;
        } else if (!strcmp(kind, "older")) {
            older_total++;
            older_pass += ok;
        } else if (!strcmp(kind, "model")) {
            model_total++;
            model_pass += ok;
        }
        const char *reason = xfail_reason(xf, nxf, name);
        if (!ok) {
            const char *why = r1[0] ? r1 : r2;
            const char *mode = r1[0] && r2[0] ? "both" : r1[0] ? "eager" : "graph";
            if (reason)
                xfailed++;
            else
                unexpected++;
            if (!reason || verbose)
                printf("%s %s [%s]: %s\n", reason ? "xfail" : "FAIL ", name, mode, why);
        } else if (reason) {
            xpassed++;
            printf("XPASS %s (listed as expected to fail: %s)\n", name, reason);
        } else if (verbose) {
            printf("ok    %s\n", name);
        }
    }
    printf("\nper op (passed/total, eager and graph mode both must match):\n");
    for (int k = 0; k < nstats; k++)
        printf("  %-32s %3d/%-3d%s\n", stats[k].op, stats[k].pass, stats[k].total,
               stats[k].pass < stats[k].total ? "  <-" : "");
    printf("\nnode cases for the listed ops: %d/%d passed (%.1f%%)\n", node_pass, node_total,
           node_total ? 100.0 * node_pass / node_total : 0.0);
    printf("node cases re-expressed at older opsets (NAME_opsetN): %d/%d passed\n",
           older_pass, older_total);
    printf("ONNX's simple model cases whose ops are all imported: %d/%d passed\n",
           model_pass, model_total);
    printf("all cases (with function expansions): %d/%d passed; %d expected failures, "
           "%d unexpected, %d unexpected passes\n", pass, total, xfailed, unexpected, xpassed);
    free(list);
    free(xtext);
    return unexpected || xpassed ? 1 : 0;
}
