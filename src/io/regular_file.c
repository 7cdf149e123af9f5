/* See regular_file.h. */
#include "io/regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *tg__open_regular(const char *path, int64_t *size, bool *not_regular)
{
    *not_regular = false;
    *size = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *not_regular = true;
        close(fd);
        return NULL;
    }
    /* reads of a regular file never wait; blocking mode only for tidiness */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int err = errno;
        close(fd);
        errno = err;
        return NULL;
    }
    *size = (int64_t)st.st_size;
    return f;
}
