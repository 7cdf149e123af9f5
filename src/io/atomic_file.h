/* Files replaced atomically, for checkpoints and exported models: readers
 * (and a crash) see the old content or the new, never a mix. Internal. */
#ifndef TG_IO_ATOMIC_FILE_H
#define TG_IO_ATOMIC_FILE_H

#include "tg/core.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct tg__atomic_file {
    FILE *f;          /* write the new content here */
    char *tmp;        /* "<path>.tmp.<pid>.<n>", next to path */
    const char *path; /* the file replaced: the caller's path or target */
    char *target;     /* the caller's path with its symbolic links resolved, or NULL */
} tg__atomic_file;

/* Removes the temporaries of path that dead processes left behind (our
 * own naming only: "<name>.tmp.<pid>.<n>" whose pid no longer runs), then
 * creates a fresh one exclusively, with mode 0666 minus the umask (what
 * a plain fopen would give the file). who names the caller in errors.
 * A symbolic link is followed: the file it points to is replaced and the
 * link stays. An existing path that is neither a regular file nor a
 * directory (a device such as /dev/null, a FIFO, a socket) is refused:
 * renaming over it would replace the device node itself. */
tg_status tg__atomic_begin(tg__atomic_file *af, const char *path, const char *who);

/* With ok (the content was written): flushes, fsyncs and closes the
 * temporary file, renames it over path and fsyncs the directory, so the
 * new file survives a power cut once this returns. Without ok, or when a
 * step fails: removes the temporary file and fails with TG_ERR_IO naming
 * path and strerror(err) (err: the errno of the caller's failed write)
 * and saying that the old file, if any, is unchanged. */
tg_status tg__atomic_end(tg__atomic_file *af, bool ok, int err, const char *who);

/* The whole of data[0, len) as path's new content: begin, one write, end. */
tg_status tg__atomic_write(const char *path, const void *data, size_t len, const char *who);

#endif
