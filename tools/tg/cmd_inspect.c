/* tg inspect MODEL.onnx: what an ONNX model holds (opset, producer, inputs
 * and outputs with shapes, an op histogram, the parameter count) and, with
 * --dot, a Graphviz picture of the graph tensorgraph builds from it, with
 * --html the graph explorer page of that graph. */
#include "args.h"
#include "commands.h"
#include "paths.h"
#include "tg/tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INSPECT_USAGE                                                               \
    "usage: tg inspect MODEL.onnx [--dot FILE] [--html FILE] [--dims NAME=VALUE,...]\n" \
    "Prints the model's opset, inputs and outputs (symbolic dims by name), an op\n"  \
    "histogram and the parameter count. --dot builds the model as a static graph\n" \
    "(symbolic dims from --dims, else 1) and writes it in Graphviz format; --html\n" \
    "writes the graph explorer page of it (one self-contained file: the graph at\n"  \
    "optimization levels 0, 1 and 2, what each pass did, the memory plan)."

static void print_value(const tg_onnx_value_info *v)
{
    static const char *const kinds[] = {"", "sequence of ", "optional ", "optional sequence of "};
    printf("  %-24s %s%-8s ", v->name, v->kind >= 0 && v->kind <= 3 ? kinds[v->kind] : "",
           tg_dtype_name(v->dtype));
    if (v->ndim < 0) {
        printf("(any shape)\n");
        return;
    }
    printf("[");
    for (int d = 0; d < v->ndim; d++) {
        if (d)
            printf(", ");
        if (v->dim_param[d])
            printf("%s", v->dim_param[d]);
        else if (v->shape[d] < 0)
            printf("?");
        else
            printf("%lld", (long long)v->shape[d]);
    }
    printf("]\n");
}

static int cmp_count(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return y[1] - x[1];
}

static void histogram(const tg_onnx_model *m)
{
    int n = tg_onnx_num_nodes(m);
    int (*rows)[2] = calloc((size_t)n + 1, sizeof *rows); /* first node, count */
    int nr = 0;
    for (int i = 0; rows && i < n; i++) {
        int k = 0;
        while (k < nr && strcmp(tg_onnx_node_op(m, rows[k][0]), tg_onnx_node_op(m, i)))
            k++;
        if (k == nr)
            rows[nr++][0] = i;
        rows[k][1]++;
    }
    if (rows)
        qsort(rows, (size_t)nr, sizeof *rows, cmp_count);
    printf("ops (%d nodes):\n", n);
    for (int k = 0; k < nr; k++)
        printf("  %-24s %d\n", tg_onnx_node_op(m, rows[k][0]), rows[k][1]);
    free(rows);
}

/* the model as a static graph, symbolic dims from dims ("N=1,T=4") or 1,
 * written as DOT and/or as the explorer page */
static int write_graph(const tg_onnx_model *m, const char *dims, const char *dot,
                       const char *html, const char *title)
{
    const char *names[64];
    int64_t values[64];
    int nd = 0;
    char *copy = strdup(dims ? dims : "");
    for (char *tok = strtok(copy, ","); tok && nd < 64; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            fprintf(stderr, "tg inspect: --dims wants NAME=VALUE, got '%s'\n", tok);
            free(copy);
            return 1;
        }
        *eq = '\0';
        names[nd] = tok;
        values[nd++] = strtoll(eq + 1, NULL, 10);
    }
    for (int i = 0; i < tg_onnx_num_inputs(m); i++) { /* unbound symbols: 1 */
        tg_onnx_value_info v;
        tg_onnx_input_info(m, i, &v);
        for (int d = 0; d < v.ndim && nd < 64; d++)
            if (v.shape[d] < 0 && v.dim_param[d]) {
                names[nd] = v.dim_param[d];
                values[nd++] = 1;
            }
    }
    tg_onnx_opts o = {.n_dims = nd, .dim_names = names, .dim_values = values};
    tg_graph *g = tg_graph_new("onnx");
    int status = 1;
    tg_scope_begin();
    if (g && tg_graph_begin(g) == TG_OK) {
        tg_onnx_net *net = tg_onnx_build(m, 0, NULL, NULL, &o);
        tg_graph_end();
        bool ok = net && (!dot || tg_graph_to_dot(g, dot) == TG_OK) &&
                  (!html || tg_graph_to_html(g, html, &(tg_html_options){.title = title, .level = 2}) == TG_OK);
        if (ok) {
            if (dot)
                printf("graph: %d nodes written to %s\n", tg_graph_num_nodes(g), dot);
            if (html)
                printf("explorer: %d nodes (as built) written to %s\n", tg_graph_num_nodes(g),
                       html);
            status = 0;
        }
        tg_onnx_net_free(net);
    }
    if (status)
        fprintf(stderr, "tg inspect: %s\n", tg_last_error());
    tg_scope_end();
    tg_graph_free(g);
    free(copy);
    return status;
}

int tg_cmd_inspect(int argc, char **argv)
{
    const char *dot = NULL, *html = NULL, *dims = NULL, *pos[1];
    int n_pos = 0;
    const opt opts[] = {
        {"dot", OPT_STRING, &dot, "write the built graph as Graphviz DOT to FILE"},
        {"html", OPT_STRING, &html, "write the graph explorer page (HTML) to FILE"},
        {"dims", OPT_STRING, &dims, "values for symbolic dims, e.g. N=8,T=16"},
    };
    args_result r = args_parse(INSPECT_USAGE, argc, argv, 1, opts, 3, pos, 1, &n_pos);
    if (r != ARGS_OK)
        return r == ARGS_HELP ? 0 : 1;
    if (n_pos != 1) {
        fprintf(stderr, "tg inspect: expected one MODEL.onnx (see tg inspect --help)\n");
        return 1;
    }
    const path_role files[] = {{"model", pos[0], false}, {"--dot", dot, true},
                               {"--html", html, true}};
    if (!path_check_output("--dot", dot) || !path_check_output("--html", html) ||
        !path_check_distinct(3, files))
        return 1;
    tg_onnx_model *m = tg_onnx_load(pos[0]);
    if (!m) {
        fprintf(stderr, "tg inspect: %s\n", tg_last_error());
        return 1;
    }
    printf("model: %s\n", pos[0]);
    if (tg_onnx_opset(m) > 0)
        printf("opset: %lld\n", (long long)tg_onnx_opset(m));
    else /* tg/onnx.h: a model of the training domain's ops alone */
        printf("opset: none of the default domain (ai.onnx.preview.training only)\n");
    printf("producer: %s\n", tg_onnx_producer(m)[0] ? tg_onnx_producer(m) : "(none)");
    tg_onnx_value_info v;
    printf("inputs (%d):\n", tg_onnx_num_inputs(m));
    for (int i = 0; i < tg_onnx_num_inputs(m); i++)
        if (tg_onnx_input_info(m, i, &v) == TG_OK)
            print_value(&v);
    printf("outputs (%d):\n", tg_onnx_num_outputs(m));
    for (int i = 0; i < tg_onnx_num_outputs(m); i++)
        if (tg_onnx_output_info(m, i, &v) == TG_OK)
            print_value(&v);
    printf("initializers: %d, parameters: %lld (floating-point elements)\n",
           tg_onnx_num_initializers(m), (long long)tg_onnx_num_parameters(m));
    histogram(m);
    int status = dot || html ? write_graph(m, dims, dot, html, pos[0]) : 0;
    tg_onnx_free(m);
    return status;
}
