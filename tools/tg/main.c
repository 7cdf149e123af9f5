/* tg: the tensorgraph command-line tool. Dispatches to one file per
 * subcommand; errors become one line on stderr and exit status 1. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const tg_command commands[] = {
    {"bench", "benchmarks (JSON lines): tg bench dispatch | onnx MODEL", tg_cmd_bench},
    {"data", "datasets: tg data mnist [--dir DIR] fetches and verifies MNIST", tg_cmd_data},
    {"graph", "LeNet-5 as a static graph: tg graph lenet [--backward] --format dot|svg|png -o FILE; --html FILE (the explorer page); --devices N; --memory", tg_cmd_graph},
    {"eval", "test accuracy of a checkpoint: tg eval lenet|lenet-bn --load PATH", tg_cmd_eval},
    {"inspect", "describe an ONNX model: tg inspect MODEL.onnx [--dot FILE] [--html FILE]", tg_cmd_inspect},
    {"run", "run an ONNX model: tg run MODEL.onnx --input IN --output OUT [--grad G]", tg_cmd_run},
    {"train", "train a model: tg train lenet|lenet-bn [--epochs N --batch B --mode eager|graph --devices N ...]; under mpirun: --distributed, --model-parallel, --ranks", tg_cmd_train},
    {"version", "print the version (--verbose: how the kernels run here)", tg_cmd_version},
};
#define N_COMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: tg <command> [options]\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nRun 'tg <command> --help' for a command's options.\n"
               "Environment: TG_NUM_THREADS sets the number of threads; graph mode's\n"
               "optimizations: TG_OPT_LEVEL=0|1|2 (default 2) and TG_DISABLE_PASSES=a,b\n"
               "(passes to leave out, as 'tg graph lenet --passes' lists them).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    if (!strcmp(argv[1], "--version"))
        return tg_cmd_version(argc - 1, argv + 1);
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tg: unknown command '%s' (see 'tg --help')\n", argv[1]);
    return 1;
}
