/* Opening a file the user named for reading, refusing anything that is not
 * a regular file. Internal. */
#ifndef TG_IO_REGULAR_FILE_H
#define TG_IO_REGULAR_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Opens path for binary reading and returns its size through *size. A FIFO
 * would block a plain fopen until some writer appears (forever, for a
 * hostile path) and a device may never end, so the open does not wait
 * (O_NONBLOCK) and anything but a regular file is closed again. NULL on
 * failure, with *not_regular true when the path exists but is not a
 * regular file (a directory, FIFO, socket or device), else errno set by
 * the failed open or stat. */
FILE *tg__open_regular(const char *path, int64_t *size, bool *not_regular);

#endif
