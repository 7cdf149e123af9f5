/* Long-option parsing shared by the tg subcommands: --name VALUE or
 * --name=VALUE, flags without a value, and --help from the same table. */
#ifndef TG_TOOL_ARGS_H
#define TG_TOOL_ARGS_H

#include <stdbool.h>

typedef enum { OPT_INT, OPT_DOUBLE, OPT_STRING, OPT_FLAG } opt_kind;

typedef struct opt {
    const char *name; /* without the leading -- */
    opt_kind kind;
    void *dst;        /* int*, double*, const char**, bool* */
    const char *help;
} opt;

typedef enum { ARGS_OK, ARGS_HELP, ARGS_ERROR } args_result;

/* parses argv[first..argc) into the table; positional arguments are
 * collected in order into positional (at most max_pos). Prints a one-line
 * error or the usage (for --help) itself. */
args_result args_parse(const char *usage, int argc, char **argv, int first,
                       const opt *opts, int n_opts, const char **positional,
                       int max_pos, int *n_pos);
/* min <= value <= max (max INFINITY: no upper bound), else prints
 * "tg: --flag must be >= min, got value" and returns false */
bool args_check_range(const char *flag, double value, double min, double max);
void args_usage(const char *usage, const opt *opts, int n_opts);

#endif
