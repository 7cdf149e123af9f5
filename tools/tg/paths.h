/* Output paths of the tg subcommands, checked before any work starts: a
 * run that cannot write its result fails in milliseconds, not after an
 * epoch, and never overwrites one of its own inputs. */
#ifndef TG_TOOL_PATHS_H
#define TG_TOOL_PATHS_H

#include <stdbool.h>

/* path (given as flag, e.g. "--save"; NULL = not given, fine) can be written: its
 * directory exists and is writable and path is not a directory, device,
 * FIFO or socket (a save would have to replace those). Prints
 * "tg: --save PATH: <why>" and returns false otherwise. */
bool path_check_output(const char *flag, const char *path);

/* A file named on the command line: how it was given ("--input", or
 * "model" for a positional), its path (NULL: absent) and whether the command writes it. */
typedef struct path_role {
    const char *flag, *path;
    bool output;
} path_role;

/* no output is the same file as an input or as another output, compared
 * by device and inode (so ./x, x and hard links are the same file; a path
 * that does not exist yet is identified by its directory and name).
 * Prints "tg: --output X and --input Y are the same file ..." and returns false. */
bool path_check_distinct(int n, const path_role *roles);

#endif
