/* tg graph lenet: LeNet-5 as a static graph — drawn (DOT, or SVG/PNG
 * through Graphviz's `dot`), written as the explorer page (--html), or its
 * memory plan or pass records reported. */
#include "args.h"
#include "commands.h"
#include "lenet_graph.h"
#include "lenet_task.h"
#include "paths.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: tg graph lenet [--opt 0|1|2] [--backward] [--format dot|svg|png] [-o FILE]\n"
    "       tg graph lenet [--opt 0|1|2] --memory [--json]\n"
    "       tg graph lenet [--opt 0|1|2] [--backward] --passes [--json]\n"
    "       tg graph lenet --devices N [--backward] [--format dot|svg|png] [-o FILE]\n"
    "       tg graph lenet [--opt 0|1|2] [--backward] --html FILE [--profile TRACE.json]\n"
    "       (each with [--batch B|-1] [--optimizer sgd|adam|adamw|adadelta] [--lr X])\n"
    "Builds LeNet-5's forward graph (with --backward, --memory or --passes:\n"
    "the whole training step: forward, gradients and the optimizer's update\n"
    "as tg train --mode graph runs it), runs the graph passes of the\n"
    "optimization level (default 2) on it as a session does for --batch B,\n"
    "and writes the result as a picture, reports the memory plan, or\n"
    "reports what each pass did (nodes before and after, its changes) and\n"
    "checks that one training step gives the same results as at level 0.\n"
    "With --devices N: the run placed over cpu:0..cpu:N-1 by the session's\n"
    "cost model and partitioned, one cluster per device, each Send joined to\n"
    "its Recv.\n"
    "--html writes the graph explorer: one self-contained page with the graph\n"
    "at levels 0, 1 and 2 (--opt: the one shown first), what each pass did,\n"
    "the memory plan and, with --profile, the Chrome trace tg train --profile\n"
    "wrote (open it in a browser; nothing is fetched).";

typedef struct graph_opts {
    const char *format, *out, *optimizer, *html, *profile;
    double lr;
    int batch, level, devices;
    bool backward, memory, json, passes;
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

/* writes a DOT file to a path */
typedef tg_status (*dot_writer)(void *ctx, const char *path);

static tg_status graph_dot(void *ctx, const char *path) { return tg_graph_to_dot(ctx, path); }

static int write_dot_or_render(dot_writer write, void *ctx, const graph_opts *o)
{
    if (!strcmp(o->format, "dot")) {
        if (write(ctx, o->out) != TG_OK) {
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
    int r = write(ctx, tmp) == TG_OK ? render(tmp, o->format, o->out) : 1;
    if (r && tg_last_status() != TG_OK)
        fprintf(stderr, "tg: %s\n", tg_last_error());
    unlink(tmp);
    return r;
}

/* the graph the session runs for the drawn signature, after the passes */
static tg_graph *optimized(lenet_graph *lg, bool step, tg_pass_record *rec, int cap,
                           int *n_rec)
{
    tg_tensor *feeds[2] = {lg->x, lg->y};
    return step ? tg_session_optimized_graph(lg->session, 2, feeds, NULL, 1, &lg->loss,
                                             lg->n_params, lg->updates, cap, rec, n_rec)
                : tg_session_optimized_graph(lg->session, 1, feeds, NULL, 1, &lg->logits, 0,
                                             NULL, cap, rec, n_rec);
}

/* the graph a level runs for --batch B; with the symbolic batch (-1) the
 * graph as built, every batch dim unknown: passes run on a plan's copy,
 * which is specialised to the batch size fed */
static int write_picture(lenet_graph *lg, const graph_opts *o)
{
    int n_rec;
    tg_graph *g = lg->batch < 0 ? NULL : optimized(lg, o->backward, NULL, 0, &n_rec);
    if (!g && lg->batch >= 0) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    tg_graph *drawn = g ? g : lg->graph;
    int r = write_dot_or_render(graph_dot, drawn, o);
    if (!r)
        printf("wrote %s (%d nodes%s)\n", o->out, tg_graph_num_nodes(drawn),
               g ? "" : "; as built, the batch dim unknown (-1): passes run on the plan of "
                        "each fed batch size");
    tg_graph_free(g);
    return r;
}

/* the run partitioned over o->devices devices (the training step with
 * --backward, else the forward) */
typedef struct parts_ctx {
    lenet_graph *lg;
    bool step;
} parts_ctx;

static tg_status partitions_dot(void *ctx, const char *path)
{
    parts_ctx *c = ctx;
    tg_tensor *feeds[2] = {c->lg->x, c->lg->y};
    return c->step ? tg_session_partitions_to_dot(c->lg->session, 2, feeds, 1, &c->lg->loss,
                                                  c->lg->n_params, c->lg->updates, path)
                   : tg_session_partitions_to_dot(c->lg->session, 1, feeds, 1,
                                                  &c->lg->logits, 0, NULL, path);
}

static int write_partitions(lenet_graph *lg, const graph_opts *o)
{
    char names[64][16];
    const char *list[64];
    for (int i = 0; i < o->devices; i++) {
        snprintf(names[i], sizeof names[i], "cpu:%d", i);
        list[i] = names[i];
    }
    parts_ctx c = {lg, o->backward};
    if (tg_session_set_devices(lg->session, o->devices, list) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    int r = write_dot_or_render(partitions_dot, &c, o);
    int n = tg_graph_num_nodes(lg->graph), count[64] = {0};
    tg_device *place = r ? NULL : malloc((size_t)n * sizeof *place);
    tg_tensor *feeds[2] = {lg->x, lg->y};
    if (place && (o->backward ? tg_session_placement(lg->session, 2, feeds, 1, &lg->loss,
                                                     lg->n_params, lg->updates, n, place)
                              : tg_session_placement(lg->session, 1, feeds, 1, &lg->logits, 0,
                                                     NULL, n, place)) == TG_OK) {
        for (int i = 0; i < n; i++)
            if (place[i].index >= 0 && place[i].index < 64)
                count[place[i].index]++;
        printf("wrote %s (%s over %d devices; nodes per device:", o->out,
               o->backward ? "the training step" : "the forward", o->devices);
        for (int d = 0; d < o->devices; d++)
            printf(" cpu:%d %d", d, count[d]);
        printf(")\n");
    }
    free(place);
    return r;
}

static int report_memory(lenet_graph *lg, const graph_opts *o)
{
    tg_tensor *feeds[2] = {lg->x, lg->y};
    tg_memory_stats m;
    int n_rec, nodes = 0;
    tg_graph *g = optimized(lg, true, NULL, 0, &n_rec);
    if (g)
        nodes = tg_graph_num_nodes(g);
    tg_graph_free(g);
    if (!g || tg_session_memory_stats(lg->session, 2, feeds, 1, &lg->loss, lg->n_params,
                                      lg->updates, &m) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    if (o->json)
        printf("{\"graph\":\"lenet_train_step\",\"batch\":%d,\"opt_level\":%d,\"nodes\":%d,"
               "\"naive_bytes\":%lld,\"planned_peak_bytes\":%lld,\"planned_fraction\":%.4f,"
               "\"values\":%d,\"reused\":%d,\"in_place\":%d}\n",
               o->batch, o->level, nodes, (long long)m.naive_bytes,
               (long long)m.planned_bytes, (double)m.planned_bytes / (double)m.naive_bytes,
               m.n_values, m.n_reused, m.n_inplace);
    else
        printf("lenet_train_step (batch %d, level %d): %d nodes, %d values computed\n"
               "  naive (every value its own buffer): %.2f MiB\n"
               "  planned peak: %.2f MiB (%.0f%%): %d values reuse memory, %d run in place\n",
               o->batch, o->level, nodes, m.n_values,
               (double)m.naive_bytes / 1048576, (double)m.planned_bytes / 1048576,
               100.0 * (double)m.planned_bytes / (double)m.naive_bytes, m.n_reused, m.n_inplace);
    return 0;
}

static int set_level(lenet_graph *lg, int level)
{
    tg_session_options so = tg_session_default_options();
    so.opt_level = level;
    if (tg_session_set_options(lg->session, &so) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    return 0;
}

/* the explorer page of the drawn graph (the training step with
 * --backward), for the signature tg train runs */
static int write_html(lenet_graph *lg, const graph_opts *o)
{
    tg_tensor *feeds[2] = {lg->x, lg->y};
    tg_html_options h = {.title = o->backward ? "LeNet-5 training step" : "LeNet-5 forward",
                         .n_feeds = o->backward ? 2 : 1, .feeds = feeds,
                         .n_fetches = 1, .fetches = o->backward ? &lg->loss : &lg->logits,
                         .n_targets = o->backward ? lg->n_params : 0, .targets = lg->updates,
                         .profile = o->profile, .level = o->level};
    if (tg_graph_to_html(lg->graph, o->html, &h) != TG_OK) {
        fprintf(stderr, "tg: %s\n", tg_last_error());
        return 1;
    }
    printf("wrote %s (%d nodes as built%s)\n", o->html, tg_graph_num_nodes(lg->graph),
           o->profile ? ", with the profile" : "");
    return 0;
}

/* the model's parameters and the optimizer's state (buffers, step
 * counts), copied aside */
static tg_state_dict *snapshot(tg_module *model, tg_optimizer *opt)
{
    tg_state_dict *live = tg_state_dict_new(), *copy = tg_state_dict_new();
    tg_status s = live && copy ? tg_module_state_dict(model, live, NULL) : TG_ERR_NOMEM;
    if (s == TG_OK)
        s = tg_optim_state_dict(opt, live);
    tg_scope_begin();
    tg_no_grad_begin();
    for (int i = 0; s == TG_OK && i < tg_state_dict_size(live); i++)
        s = tg_state_dict_add(copy, tg_state_dict_name(live, i),
                              tg_clone(tg_state_dict_tensor(live, i)));
    tg_no_grad_end();
    tg_scope_end();
    for (int i = 0; s == TG_OK && i < tg_state_dict_meta_size(live); i++)
        s = tg_state_dict_set_meta(copy, tg_state_dict_meta_key(live, i),
                                   tg_state_dict_meta_value(live, i));
    tg_state_dict_free(live);
    if (s != TG_OK) {
        tg_state_dict_free(copy);
        return NULL;
    }
    return copy;
}

/* two training steps from the snapshot at `level`: the losses and the
 * parameters after them (kept) */
static tg_status two_steps(lenet_graph *lg, tg_module *model, tg_optimizer *opt,
                           const tg_state_dict *saved, int level, tg_tensor *const *batch,
                           double *loss, tg_tensor **params)
{
    tg_status s = set_level(lg, level) ? tg_last_status()
                                       : tg_module_load_state_dict(model, saved, NULL, false);
    if (s == TG_OK)
        s = tg_optim_load_state_dict(opt, saved);
    for (int k = 0; k < 2 && s == TG_OK; k++)
        s = lenet_graph_step(lg, batch[0], batch[1], &loss[k]);
    tg_no_grad_begin();
    for (int i = 0; i < tg_optim_num_params(opt) && s == TG_OK; i++)
        if (!(params[i] = tg_clone(tg_optim_param(opt, i))))
            s = tg_last_status();
    tg_no_grad_end();
    return s;
}

static double max_abs_diff(tg_tensor *a, tg_tensor *b)
{
    tg_tensor *d = tg_max(tg_abs(tg_sub(a, b)), 0, NULL, false);
    double v = d ? tg_item(d) : INFINITY;
    return v;
}

/* one JSON line (or a text line) per pass record, then the comparison */
static void print_records(const tg_pass_record *rec, int n, bool json)
{
    for (int i = 0; i < n; i++) {
        const tg_pass_record *r = &rec[i];
        printf(json ? "{\"pass\":\"%s\",\"nodes_before\":%d,\"nodes_after\":%d"
                    : "%-10s %4d -> %4d nodes",
               r->pass, r->nodes_before, r->nodes_after);
        for (int k = 0; k < r->n_counts; k++)
            printf(json ? ",\"%s\":%d" : ", %s %d", r->counts[k].what, r->counts[k].n);
        printf(json ? "}\n" : "\n");
    }
}

static int report_passes(lenet_graph *lg, tg_module *model, tg_optimizer *opt,
                         const graph_opts *o)
{
    tg_pass_record rec[64];
    int n_rec = 0, r = 1;
    tg_scope_begin();
    tg_graph *g = optimized(lg, o->backward || o->passes, rec, 64, &n_rec);
    int nodes = g ? tg_graph_num_nodes(g) : 0, nodes0 = tg_graph_num_nodes(lg->graph);
    tg_graph_free(g);
    tg_generator *gen = tg_generator_new(7);
    tg_tensor *batch[2] = {tg_rand_uniform(gen, TG_FLOAT32, 4, (int64_t[]){o->batch, 1, 28, 28}, 0, 1),
                           tg_cast(tg_mul_scalar(tg_rand_uniform(gen, TG_FLOAT64, 1,
                                                                 (int64_t[]){o->batch}, 0, 1), 9.99),
                                   TG_INT64)};
    tg_tensor *p0[LENET_MAX_PARAMS] = {0}, *p1[LENET_MAX_PARAMS] = {0};
    double l0[2], l1[2], diff = 0;
    tg_state_dict *saved = g && batch[1] ? snapshot(model, opt) : NULL;
    tg_status s = saved ? TG_OK : tg_last_status();
    if (s == TG_OK)
        s = two_steps(lg, model, opt, saved, 0, batch, l0, p0);
    if (s == TG_OK)
        s = two_steps(lg, model, opt, saved, o->level, batch, l1, p1);
    tg_state_dict_free(saved);
    for (int i = 0; i < tg_optim_num_params(opt) && s == TG_OK; i++)
        diff = fmax(diff, max_abs_diff(p0[i], p1[i]));
    if (s == TG_OK) {
        print_records(rec, n_rec, o->json);
        bool equal = l0[0] == l1[0] && l0[1] == l1[1] && diff == 0;
        printf(o->json ? "{\"graph\":\"lenet_train_step\",\"optimizer\":\"%s\",\"batch\":%d,\"opt_level\":%d,"
                         "\"nodes_level0\":%d,\"nodes\":%d,\"node_fraction\":%.4f,"
                         "\"loss_level0\":[%.9g,%.9g],\"loss\":[%.9g,%.9g],"
                         "\"max_param_diff\":%.3g,\"bitwise_equal\":%s}\n"
                       : "lenet_train_step (%s, batch %d), level %d: %d nodes at level 0, %d "
                         "now (%.0f%%)\n  losses of two steps: level 0 %.9g %.9g, now %.9g "
                         "%.9g; parameters differ by at most %.3g (%s)\n",
               o->optimizer, o->batch, o->level, nodes0, nodes,
               100.0 * nodes / nodes0 * (o->json ? 0.01 : 1),
               l0[0], l0[1], l1[0], l1[1], diff,
               o->json ? (equal ? "true" : "false") : (equal ? "bitwise equal" : "not bitwise"));
        r = 0;
    } else {
        fprintf(stderr, "tg: %s\n", tg_last_error());
    }
    tg_generator_free(gen);
    tg_scope_end();
    return r;
}

static int parse(int argc, char **argv, graph_opts *o)
{
    *o = (graph_opts){.format = "dot", .out = "lenet.dot", .optimizer = "sgd", .lr = 0.02,
                      .batch = 64, .level = 2, .devices = -1};
    const opt table[] = {
        {"backward", OPT_FLAG, &o->backward, "draw the whole training step, not just the forward"},
        {"format", OPT_STRING, &o->format, "dot | svg | png (svg and png need Graphviz)"},
        {"o", OPT_STRING, &o->out, "output file (default lenet.dot)"},
        {"output", OPT_STRING, &o->out, "the same as -o"},
        {"memory", OPT_FLAG, &o->memory, "report the training step's memory plan"},
        {"json", OPT_FLAG, &o->json, "with --memory or --passes: JSON lines"},
        {"opt", OPT_INT, &o->level, "optimization level: 0 as built, 1 cleanups, 2 fusion "
                                    "(default 2)"},
        {"passes", OPT_FLAG, &o->passes, "report what each pass did and check results"},
        {"batch", OPT_INT, &o->batch, "batch size (default 64); -1 draws the graph as tg train "
                                      "builds it, for every batch size (the batch dim unknown)"},
        {"optimizer", OPT_STRING, &o->optimizer, "the update in the training step: sgd (momentum "
                                                 "0.9) | adam | adamw | adadelta (default sgd)"},
        {"lr", OPT_DOUBLE, &o->lr, "its learning rate (default 0.02)"},
        {"devices", OPT_INT, &o->devices, "draw the run partitioned over N virtual CPU devices "
                                          "(placed by the session's cost model)"},
        {"html", OPT_STRING, &o->html, "write the graph explorer page to FILE"},
        {"profile", OPT_STRING, &o->profile, "with --html: a Chrome trace (tg train --profile) "
                                             "to show"},
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
    if (o->level < 0 || o->level > 2) {
        fprintf(stderr, "tg: --opt must be 0, 1 or 2, got %d\n", o->level);
        return 1;
    }
    if (o->batch < 1 && o->batch != -1) {
        fprintf(stderr, "tg: --batch must be >= 1, or -1 for the symbolic batch, got %d\n",
                o->batch);
        return 1;
    }
    if (o->batch == -1 && (o->memory || o->passes)) {
        fprintf(stderr, "tg: --%s needs a batch size (--batch B): %s\n",
                o->memory ? "memory" : "passes",
                o->memory ? "a memory plan is made for fed shapes"
                          : "the check runs training steps");
        return 1;
    }
    if (strcmp(o->optimizer, "sgd") && strcmp(o->optimizer, "adam") &&
        strcmp(o->optimizer, "adamw") && strcmp(o->optimizer, "adadelta")) {
        fprintf(stderr, "tg: unknown optimizer '%s' (sgd, adam, adamw, adadelta)\n",
                o->optimizer);
        return 1;
    }
    /* -1: not given (0 is refused, as the help says 1..64) */
    if (o->devices != -1 && (o->devices < 1 || o->devices > 64 || o->memory || o->passes)) {
        fprintf(stderr, "tg: --devices takes 1..64 and draws a picture (not with --memory "
                        "or --passes), got %d\n", o->devices);
        return 1;
    }
    if (!(o->lr > 0)) {
        fprintf(stderr, "tg: --lr must be > 0, got %g\n", o->lr);
        return 1;
    }
    if (o->html && (o->memory || o->passes)) {
        fprintf(stderr, "tg: --html cannot go with --%s\n", o->memory ? "memory" : "passes");
        return 1;
    }
    if (o->profile && !o->html) {
        fprintf(stderr, "tg: --profile goes with --html (it is shown on the page)\n");
        return 1;
    }
    const path_role files[] = {{"--profile", o->profile, false}, {"--html", o->html, true}};
    if (o->html && (!path_check_output("--html", o->html) || !path_check_distinct(2, files)))
        return 1;
    if (!o->html && !o->memory && !o->passes && !path_check_output("-o", o->out))
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
    tg_optimizer *opt = model ? lenet_optimizer(o.optimizer, model, o.lr, 0.9) : NULL;
    lenet_graph lg;
    bool step = o.backward || o.memory || o.passes;
    o.backward = step; /* what --html draws */
    r = 1;
    if (!opt)
        fprintf(stderr, "tg: %s\n", tg_last_error());
    else if (lenet_graph_build(&lg, model, step ? opt : NULL, o.batch, step) != TG_OK)
        fprintf(stderr, "tg: building the graph: %s\n", tg_last_error());
    else {
        r = set_level(&lg, o.level);
        if (!r)
            r = o.passes    ? report_passes(&lg, model, opt, &o)
                : o.memory  ? report_memory(&lg, &o)
                : o.html    ? write_html(&lg, &o)
                : o.devices > 0 ? write_partitions(&lg, &o)
                            : write_picture(&lg, &o);
        lenet_graph_free(&lg);
    }
    tg_optim_free(opt);
    tg_module_free(model);
    tg_generator_free(gen);
    return r;
}
