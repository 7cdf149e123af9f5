/* Little-endian binary records (wire.c): what the graph's wire form
 * (graph/serialize.c) and the MPI layer's messages (dist/) are made of.
 * Writers append to a string builder; the reader checks every length
 * against the bytes it has, so bytes from another process or a file are
 * read as safely as any hostile input. */
#ifndef TG_IO_WIRE_H
#define TG_IO_WIRE_H

#include "ops/op.h" /* tg_meta */
#include "util/strbuf.h"

#include <stdint.h>

void tg__wire_put(tg_strbuf *b, const void *p, size_t n);
void tg__wire_u8(tg_strbuf *b, unsigned v);
void tg__wire_u32(tg_strbuf *b, uint32_t v);
void tg__wire_u64(tg_strbuf *b, uint64_t v);
void tg__wire_f64(tg_strbuf *b, double v);
void tg__wire_str(tg_strbuf *b, const char *s); /* u32 length, bytes; NULL as "" */
/* u8 dtype, u8 ndim, i64 dims */
void tg__wire_meta(tg_strbuf *b, tg_dtype dt, int ndim, const int64_t *shape);
/* meta, u64 byte count, the elements row-major (a view is copied) */
tg_status tg__wire_tensor(tg_strbuf *b, const tg_tensor *t);

typedef struct tg_wire_reader {
    const uint8_t *p;
    size_t len, off;
    const char *what; /* named in errors: "graph from rank 0" */
    bool failed;      /* an error is set; later reads give zeros */
} tg_wire_reader;

/* fails the reader with "<what>: byte N: <msg><detail>" (the first
 * failure's message is kept); returns false */
bool tg__wire_fail(tg_wire_reader *r, const char *msg, const char *detail);
bool tg__wire_take(tg_wire_reader *r, void *out, size_t n);
unsigned tg__wire_get_u8(tg_wire_reader *r);
uint32_t tg__wire_get_u32(tg_wire_reader *r);
uint64_t tg__wire_get_u64(tg_wire_reader *r);
double tg__wire_get_f64(tg_wire_reader *r);
/* a u32 count of items of at least min_size bytes each that must fit */
uint32_t tg__wire_get_count(tg_wire_reader *r, size_t min_size);
/* a new NUL-terminated string (free it), or NULL */
char *tg__wire_get_str(tg_wire_reader *r);
/* dims >= 0 (>= -1 with unknown_ok), at most 2^40 each */
bool tg__wire_get_meta(tg_wire_reader *r, tg_meta *m, bool unknown_ok);
/* a new tensor, or NULL */
tg_tensor *tg__wire_get_tensor(tg_wire_reader *r);
/* everything read: trailing bytes are an error */
bool tg__wire_end(tg_wire_reader *r);

#endif
