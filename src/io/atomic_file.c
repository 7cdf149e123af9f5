/* Atomic file replacement (see atomic_file.h): a temporary file next to
 * the target, fsync, rename, fsync of the directory; stale temporaries of
 * dead writers are removed on the next save to the same path. */
#include "io/atomic_file.h"
#include "tg/io.h"
#include "core/status_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_INFIX ".tmp."

/* path split into its directory ("." or "/" when it has none) and name */
static char *split_dir(const char *path, const char **name)
{
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* "<digits>.<digits>" and nothing else; the first number in *pid */
static bool is_pid_counter(const char *s, long *pid)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    *pid = strtol(s, &end, 10);
    if (*end != '.' || end[1] < '0' || end[1] > '9')
        return false;
    for (end++; *end; end++)
        if (*end < '0' || *end > '9')
            return false;
    return true;
}

/* a writer that no longer runs (a kill, a crash) left this file: the
 * process is gone, so nobody will rename it. Another live process (even a
 * stranger that reused the pid) keeps its file. */
static bool writer_is_dead(long pid)
{
    return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void remove_stale_temporaries(const char *path)
{
    const char *name;
    char *dir = split_dir(path, &name);
    DIR *d = dir ? opendir(dir) : NULL;
    size_t nlen = strlen(name), ilen = strlen(TMP_INFIX);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        long pid;
        if (strncmp(e->d_name, name, nlen) != 0 ||
            strncmp(e->d_name + nlen, TMP_INFIX, ilen) != 0 ||
            !is_pid_counter(e->d_name + nlen + ilen, &pid) || !writer_is_dead(pid))
            continue;
        int dfd = dirfd(d);
        if (dfd >= 0)
            unlinkat(dfd, e->d_name, 0);
    }
    if (d)
        closedir(d);
    free(dir);
}

/* "<path>.tmp.<pid>.<n>", created exclusively */
static int create_temp(const char *path, char **tmp_out)
{
    static _Atomic unsigned counter;
    size_t len = strlen(path) + 64;
    char *tmp = malloc(len);
    if (!tmp)
        return -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(tmp, len, "%s" TMP_INFIX "%ld.%u", path, (long)getpid(), counter++);
        /* 0666: the umask decides, as for any new file */
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *tmp_out = tmp;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    free(tmp);
    errno = e;
    return -1;
}

/* what af replaces: path, or the file a symbolic link at path points to;
 * fails for devices, FIFOs and sockets */
static tg_status choose_target(tg__atomic_file *af, const char *path, const char *who)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return TG_OK; /* a new file (or a dangling link, replaced) */
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return tg__error(TG_ERR_IO, "%s: cannot write '%s': it is not a regular file (a "
                         "device, FIFO or socket), which a saved file must not replace",
                         who, path);
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        af->target = realpath(path, NULL);
        if (!af->target)
            return tg__error(TG_ERR_IO, "%s: cannot resolve the symbolic link '%s': %s", who,
                             path, strerror(errno));
        af->path = af->target;
    }
    return TG_OK;
}

tg_status tg__atomic_begin(tg__atomic_file *af, const char *path, const char *who)
{
    *af = (tg__atomic_file){NULL, NULL, path, NULL};
    if (!path || !path[0])
        return tg__error(TG_ERR_ARG, "%s: the path is NULL or empty", who);
    tg_status s = choose_target(af, path, who);
    if (s != TG_OK)
        return s;
    path = af->path;
    remove_stale_temporaries(path);
    int fd = create_temp(path, &af->tmp);
    if (fd < 0) {
        int err = errno;
        free(af->target);
        af->target = NULL;
        return tg__error(TG_ERR_IO, "%s: cannot write '%s': cannot create a temporary "
                         "file next to it: %s", who, path, strerror(err));
    }
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        int err = errno;
        close(fd);
        unlink(af->tmp);
        free(af->tmp);
        af->tmp = NULL;
        tg_status st = tg__error(TG_ERR_IO, "%s: '%s': %s", who, path, strerror(err));
        free(af->target);
        af->target = NULL;
        return st;
    }
    return TG_OK;
}

/* makes the rename durable; failures here do not undo the save */
static void sync_dir_of(const char *path)
{
    const char *name;
    char *dir = split_dir(path, &name);
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

tg_status tg__atomic_end(tg__atomic_file *af, bool ok, int err, const char *who)
{
    if (!af->f)
        return tg__error(TG_ERR_INTERNAL, "%s: no file open", who);
    if (ok && (fflush(af->f) != 0 || fsync(fileno(af->f)) != 0)) {
        ok = false;
        err = errno;
    }
    if (fclose(af->f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    af->f = NULL;
    if (ok && rename(af->tmp, af->path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok)
        unlink(af->tmp);
    free(af->tmp);
    af->tmp = NULL;
    tg_status s = TG_OK;
    if (!ok)
        s = tg__error(TG_ERR_IO, "%s: cannot write '%s': %s (the old file, if any, "
                      "is unchanged)", who, af->path, strerror(err ? err : EIO));
    else
        sync_dir_of(af->path);
    free(af->target);
    af->target = NULL;
    return s;
}

tg_status tg__atomic_write(const char *path, const void *data, size_t len, const char *who)
{
    tg__atomic_file af;
    tg_status s = tg__atomic_begin(&af, path, who);
    if (s != TG_OK)
        return s;
    bool ok = len == 0 || fwrite(data, 1, len, af.f) == len; /* fwrite's data is never NULL */
    return tg__atomic_end(&af, ok, ok ? 0 : errno, who);
}

tg_status tg_write_file(const char *path, const void *data, size_t len)
{
    if (!path || (!data && len))
        return tg__error(TG_ERR_ARG, "tg_write_file: %s is NULL", path ? "data" : "path");
    return tg__atomic_write(path, data, len, "tg_write_file");
}
