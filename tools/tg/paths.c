/* Output-path checks for the tg subcommands (see paths.h). */
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the directory part of path ("." when it has none) in buf */
static const char *dir_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    if (slash == path)
        return "/";
    snprintf(buf, n, "%.*s", (int)(slash - path), path);
    return buf;
}

bool path_check_output(const char *flag, const char *path)
{
    if (!path)
        return true;
    char buf[4096];
    const char *dir = dir_of(path, buf, sizeof buf);
    struct stat st;
    const char *why = NULL;
    if (!path[0])
        why = "the path is empty";
    else if (path[strlen(path) - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        why = "is a directory, expected a file name";
    else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        why = "is a device, FIFO or socket, expected a regular file";
    else if (stat(dir, &st) != 0)
        why = errno == ENOENT ? "the directory does not exist" : strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "the directory part is not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = "the directory is not writable";
    if (!why)
        return true;
    fprintf(stderr, "tg: %s %s: %s (checked before starting; nothing was written)\n",
            flag, path, why);
    return false;
}

/* a file's identity: (device, inode) when it exists, else its
 * directory's (device, inode) and its name */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    const char *name; /* NULL when the file exists */
    bool known;
} file_id;

static file_id identify(const char *path)
{
    file_id id = {0};
    struct stat st;
    if (stat(path, &st) == 0) {
        id = (file_id){st.st_dev, st.st_ino, NULL, true};
        return id;
    }
    char buf[4096];
    const char *slash = strrchr(path, '/');
    if (stat(dir_of(path, buf, sizeof buf), &st) == 0)
        id = (file_id){st.st_dev, st.st_ino, slash ? slash + 1 : path, true};
    return id;
}

static bool same_file(const file_id *a, const file_id *b)
{
    if (!a->known || !b->known || a->dev != b->dev || a->ino != b->ino)
        return false;
    if (!a->name || !b->name)
        return !a->name && !b->name;
    return strcmp(a->name, b->name) == 0;
}

bool path_check_distinct(int n, const path_role *roles)
{
    file_id ids[16];
    if (n > 16)
        n = 16;
    for (int i = 0; i < n; i++)
        ids[i] = roles[i].path ? identify(roles[i].path) : (file_id){0};
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            if (!(roles[i].output || roles[j].output) || !same_file(&ids[i], &ids[j]))
                continue;
            const path_role *in = roles[i].output ? &roles[j] : &roles[i];
            const path_role *out = in == &roles[i] ? &roles[j] : &roles[i];
            fprintf(stderr, "tg: %s %s and %s %s are the same file: writing one would %s "
                            "(nothing was written)\n", out->flag, out->path, in->flag, in->path,
                    in->output ? "lose the other" : "destroy the input");
            return false;
        }
    }
    return true;
}
