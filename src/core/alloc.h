/* Buffer allocation for tensor storage: 64-byte aligned, with a cache of
 * freed blocks by size class so that training loops do not pay the
 * kernel's mmap/munmap and page faults for every large tensor of every
 * step, nor malloc's aligned path for every small one. */
#ifndef TG_ALLOC_H
#define TG_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* a block of at least `size` bytes, 64-byte aligned, or NULL */
void *tg__buffer_alloc(size_t size);
/* returns a block from tg__buffer_alloc of the same requested size */
void tg__buffer_free(void *p, size_t size);
/* the bytes a block for `size` has: its size class's (a cached size), or
 * size rounded to TG_ALIGN (tests) */
size_t tg__buffer_block_bytes(size_t size);
/* whether freed blocks (and tensor structs, core/tensor.c) are kept for
 * reuse: not under AddressSanitizer, nor with TG_ALLOC_CACHE=0 in the
 * environment (read once: scripts/valgrind.sh sets it, so that memcheck
 * sees every use after free) */
bool tg__alloc_caching(void);
/* drops every cached block (also done at exit) */
void tg__buffer_trim(void);

#endif
