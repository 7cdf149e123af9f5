/* Packed forms of frozen weights kept between calls: the pointwise
 * convolution (conv_pw.c) packs its weights for the GEMM's micro-kernel on
 * every call; when the weights' storage is frozen (core/tensor_impl.h: an
 * ONNX model's initializers), the packed form is kept here under a key
 * that changes whenever the weights may have: the storage's serial and
 * version, the data pointer, and everything the layout depends on. */
#ifndef TG_KERNELS_PACK_CACHE_H
#define TG_KERNELS_PACK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* all 8-byte fields (compared as bytes): zero what a user leaves unused */
typedef struct tg__pack_key {
    uint64_t serial, version;
    const void *data;
    const void *kern;   /* the instruction set's GEMM kernel (its tile sizes) */
    int64_t layout[6];  /* the user's layout parameters */
} tg__pack_key;

typedef struct tg__pack_entry tg__pack_entry;

/* a buffer of `bytes` for key, or NULL (too large for the cache, or no
 * memory: pack elsewhere). *ready: it holds the packed form already;
 * otherwise the caller packs into it and says so by release(entry, true).
 * Every non-NULL answer is released once, after the last use. */
void *tg__pack_cache_get(const tg__pack_key *key, size_t bytes, bool *ready,
                         tg__pack_entry **entry);
/* the caller is done with entry; packed: it filled a buffer that was not
 * ready (false: the packing failed and the buffer is dropped) */
void tg__pack_cache_release(tg__pack_entry *entry, bool packed);
/* frees every entry nobody uses (tests) and the bytes held */
void tg__pack_cache_clear(void);
size_t tg__pack_cache_bytes(void);

#endif
