/* Long-option parsing for the tg subcommands (see args.h). */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void args_usage(const char *usage, const opt *opts, int n_opts)
{
    printf("%s\n", usage);
    if (n_opts)
        printf("\noptions:\n");
    for (int i = 0; i < n_opts; i++) {
        const char *arg = opts[i].kind == OPT_INT      ? " N"
                          : opts[i].kind == OPT_DOUBLE ? " X"
                          : opts[i].kind == OPT_STRING ? " VALUE"
                                                       : "";
        char left[64];
        snprintf(left, sizeof left, "--%s%s", opts[i].name, arg);
        printf("  %-20s %s\n", left, opts[i].help);
    }
}

static bool set_value(const opt *o, const char *v)
{
    char *end;
    errno = 0;
    switch (o->kind) {
    case OPT_INT: {
        long x = strtol(v, &end, 10);
        if (errno || *end || end == v || x < -2147483647L || x > 2147483647L)
            return false;
        *(int *)o->dst = (int)x;
        return true;
    }
    case OPT_DOUBLE: {
        double x = strtod(v, &end);
        if (errno || *end || end == v || !isfinite(x))
            return false;
        *(double *)o->dst = x;
        return true;
    }
    case OPT_STRING:
        *(const char **)o->dst = v;
        return true;
    case OPT_FLAG:
        return false;
    }
    return false;
}

static const opt *find(const opt *opts, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len))
            return &opts[i];
    return NULL;
}

bool args_check_range(const char *flag, double value, double min, double max)
{
    if (value >= min && value <= max)
        return true;
    if (max == INFINITY)
        fprintf(stderr, "tg: --%s must be >= %g, got %g\n", flag, min, value);
    else
        fprintf(stderr, "tg: --%s must be between %g and %g, got %g\n", flag, min, max, value);
    return false;
}

args_result args_parse(const char *usage, int argc, char **argv, int first,
                       const opt *opts, int n_opts, const char **positional,
                       int max_pos, int *n_pos)
{
    *n_pos = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            args_usage(usage, opts, n_opts);
            return ARGS_HELP;
        }
        if (strncmp(a, "--", 2) != 0) {
            if (*n_pos == max_pos) {
                fprintf(stderr, "tg: unexpected argument '%s'\n", a);
                return ARGS_ERROR;
            }
            positional[(*n_pos)++] = a;
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        const opt *o = find(opts, n_opts, name, eq ? (size_t)(eq - name) : strlen(name));
        if (!o) {
            fprintf(stderr, "tg: unknown option '%s' (see --help)\n", a);
            return ARGS_ERROR;
        }
        if (o->kind == OPT_FLAG) {
            if (eq) {
                fprintf(stderr, "tg: option --%s takes no value\n", o->name);
                return ARGS_ERROR;
            }
            *(bool *)o->dst = true;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v || !set_value(o, v)) {
            fprintf(stderr, "tg: option --%s needs %s, got '%s'\n", o->name,
                    o->kind == OPT_INT ? "an integer" : o->kind == OPT_DOUBLE ? "a finite number"
                                                                              : "a value",
                    v ? v : "nothing");
            return ARGS_ERROR;
        }
    }
    return ARGS_OK;
}
