/* tg graph lenet: LeNet-5 as a static graph — drawn (DOT, or SVG/PNG
 * through Graphviz's `dot`), or its memory plan reported. */
#include "args.h"
#include "commands.h"
#include "lenet_graph.h"
#include "paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: tg graph lenet [--backward] [--format dot|svg|png] [-o FILE]\n"
    "       tg graph lenet --memory [--json]\n"
    "Builds LeNet-5's forward graph (with --backward or --memory: the whole\n"
    "training step: forward, gradients and SGD update) and writes it as a\n"
    "picture, or reports the memory plan of the training step.";

typedef struct graph_opts {
    const char *format, *out;
    int batch;
    bool backward, memory, json;
} graph_opts;

/* renders the DOT file through Graphviz into out */
static int render(const char *dot_path, const char *format, const char *out)
{
    if (system("command -v dot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "tg: --format %s needs Graphviz's 'dot' (apt-get install graphviz); "
                        "--format dot writes the DOT source without it\n", format);
        return 1;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "dot -T%s -o '%s' '%s'", format, out, dot_path);
    if (strchr(out, '\'') || system(cmd) != 0) {
        fprintf(stderr, "tg: dot could not render %s\n", out);
        return 1;
    }
    return 0;
}

static int write_picture(lenet_graph *lg, const graph_opts *o)
{
    if (!strcmp(o->format, "dot")) {
        if (tg_graph_to_dot(lg->graph, o->out) != TG_OK) {
            fprintf(stderr, "tg: %s\n", tg_last_error());
            return 1;
        }
        return 0;
    }
    char tmp[] = "/tmp/tg-graph-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) {
        perror("tg: temporary file");
        return 1;
    }
    close(fd);
    int r = tg_graph_to_dot(lg->graph, tmp) == TG_OK ? render(tmp, o->format, o->out) : 1;
    if (r && tg_last_status() != TG_OK)
        fprintf(stderr, "tg: %s\n", tg_last_error());
    unlink(tmp);
    return r;
}

static int report_memory(lenet_graph *lg, const graph_opts *o)
{
    tg_tensor *feeds[2] = {lg->x, lg->y};
    tg_memory_stats m;
    if (tg_session_memory_stats(lg->session, 2, feeds, 1, &lg->loss, lg->n_params, lg->updates,
                                &m) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    if (o->json)
        printf("{\"graph\":\"lenet_train_step\",\"batch\":%d,\"nodes\":%d,\"naive_bytes\":%lld,"
               "\"planned_peak_bytes\":%lld,\"values\":%d,\"reused\":%d,\"in_place\":%d}\n",
               o->batch, tg_graph_num_nodes(lg->graph), (long long)m.naive_bytes,
               (long long)m.planned_bytes, m.n_values, m.n_reused, m.n_inplace);
    else
        printf("lenet_train_step (batch %d): %d nodes, %d values computed\n"
               "  naive (every value its own buffer): %.2f MiB\n"
               "  planned peak: %.2f MiB (%.0f%%): %d values reuse memory, %d run in place\n",
               o->batch, tg_graph_num_nodes(lg->graph), m.n_values,
               (double)m.naive_bytes / 1048576, (double)m.planned_bytes / 1048576,
               100.0 * (double)m.planned_bytes / (double)m.naive_bytes, m.n_reused, m.n_inplace);
    return 0;
}

static int parse(int argc, char **argv, graph_opts *o)
{
    *o = (graph_opts){.format = "dot", .out = "lenet.dot", .batch = 64};
    const opt table[] = {
        {"backward", OPT_FLAG, &o->backward, "draw the whole training step, not just the forward"},
        {"format", OPT_STRING, &o->format, "dot | svg | png (svg and png need Graphviz)"},
        {"o", OPT_STRING, &o->out, "output file (default lenet.dot)"},
        {"output", OPT_STRING, &o->out, "the same as -o"},
        {"memory", OPT_FLAG, &o->memory, "report the training step's memory plan"},
        {"json", OPT_FLAG, &o->json, "with --memory: one JSON line"},
        {"batch", OPT_INT, &o->batch, "batch size (default 64)"},
    };
    /* accept the short -o as --o */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-o"))
            argv[i] = "--o";
    const char *pos[1];
    int n_pos;
    args_result r = args_parse(usage, argc, argv, 1, table, (int)(sizeof table / sizeof table[0]),
                               pos, 1, &n_pos);
    if (r != ARGS_OK)
        return r == ARGS_HELP ? 0 : 1;
    if (n_pos != 1 || strcmp(pos[0], "lenet")) {
        fprintf(stderr, "tg: expected a model name: tg graph lenet (the only model so far)\n");
        return 1;
    }
    if (strcmp(o->format, "dot") && strcmp(o->format, "svg") && strcmp(o->format, "png")) {
        fprintf(stderr, "tg: unknown format '%s' (dot, svg, png)\n", o->format);
        return 1;
    }
    if (o->batch < 1) {
        fprintf(stderr, "tg: --batch must be >= 1\n");
        return 1;
    }
    if (!o->memory && !path_check_output("-o", o->out))
        return 1;
    return -1;
}

int tg_cmd_graph(int argc, char **argv)
{
    graph_opts o;
    int r = parse(argc, argv, &o);
    if (r >= 0)
        return r;
    tg_generator *gen = tg_generator_new(1);
    tg_module *model = tg_lenet5(gen);
    tg_named_tensor *names = NULL;
    sgd_state st;
    lenet_graph lg;
    bool step = o.backward || o.memory;
    r = 1;
    if (!model || sgd_state_init(&st, model, 0.02, 0.9, &names) != TG_OK)
        fprintf(stderr, "tg: %s\n", tg_last_error());
    else if (lenet_graph_build(&lg, model, &st, o.batch, step, step) != TG_OK)
        fprintf(stderr, "tg: building the graph: %s\n", tg_last_error());
    else {
        r = o.memory ? report_memory(&lg, &o) : write_picture(&lg, &o);
        if (!r && !o.memory)
            printf("wrote %s (%d nodes)\n", o.out, tg_graph_num_nodes(lg.graph));
        lenet_graph_free(&lg);
    }
    if (model)
        sgd_state_free(&st);
    tg_named_tensors_free(names);
    tg_module_free(model);
    tg_generator_free(gen);
    return r;
}
