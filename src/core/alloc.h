/* Buffer allocation for tensor storage: 64-byte aligned, with a cache of
 * freed large blocks so that training loops do not pay the kernel's
 * mmap/munmap and page faults for every large tensor of every step. */
#ifndef TG_ALLOC_H
#define TG_ALLOC_H

#include <stddef.h>

/* a block of at least `size` bytes, 64-byte aligned, or NULL */
void *tg__buffer_alloc(size_t size);
/* returns a block from tg__buffer_alloc of the same requested size */
void tg__buffer_free(void *p, size_t size);
/* drops every cached block (also done at exit) */
void tg__buffer_trim(void);

#endif
