/* SHA-256 (FIPS 180-4), used to verify downloaded datasets. Internal. */
#ifndef TG_DATA_SHA256_H
#define TG_DATA_SHA256_H

#include "tg/core.h"

typedef struct tg__sha256 {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    unsigned char buf[64];
    size_t nbuf;
} tg__sha256;

void tg__sha256_init(tg__sha256 *c);
void tg__sha256_update(tg__sha256 *c, const void *data, size_t n);
void tg__sha256_final(tg__sha256 *c, unsigned char out[32]);
/* one-shot digest as 64 lowercase hex digits plus NUL */
void tg__sha256_hex(const void *data, size_t n, char out[65]);
/* digest of a file's contents (hex); sets TG_ERR_IO when unreadable */
tg_status tg__sha256_file(const char *path, char out[65]);

#endif
