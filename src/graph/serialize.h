/* A graph's own wire form (serialize.c): what the master ships to a
 * worker process (src/dist/master.c, worker.c). Little-endian binary:
 *
 *   "TGGRAPH1"  str graph_name  u32 n_nodes  node...  function
 *   node:  u8 kind  str name  str device ("" unplaced)
 *          op:          str op  u32 n_attrs attr...  u32 n_in (u32 node, u32 output)...
 *          placeholder: u8 dtype  u8 ndim  i64 dims...
 *          constant:    tensor
 *          variable:    u64 key  tensor    (key: the variable's identity on the sender)
 *          u32 n_ctrl u32 node...  u32 n_order u32 node...
 *   function: u8 0 (a graph), or u8 1 (a control-flow body): u32 n_params
 *          u32 n_captures (u32 node, u32 output)... (the inputs, placeholders)
 *          u32 n_results (u32 node, u32 output)...
 *   attr:  str name  u8 type  payload (i64 | f64 | str | u32 n i64... | u32 n f64... |
 *          tensor | u64 n graph bytes: a body, nested, to depth 32)
 *   tensor: u8 dtype  u8 ndim  i64 dims...  u64 n_bytes  bytes (row-major)
 *   str:   u32 length  bytes (no NUL)
 *
 * Reading checks every length, count, id, dtype and rank against the
 * bytes it has and rebuilds each node through the op dispatcher, which
 * infers and checks it again: bytes from another process are treated as
 * hostile as a file. */
#ifndef TG_GRAPH_SERIALIZE_H
#define TG_GRAPH_SERIALIZE_H

#include "graph/graph_impl.h"
#include "util/strbuf.h"

/* appends g's wire form to b */
tg_status tg__graph_serialize(const tg_graph *g, tg_strbuf *b);

/* the tensor a received variable node holds: the receiver's own storage
 * for the sender's variable `key` (shipped: its value as sent, which the
 * resolver may adopt, retaining it); a new reference, or NULL with an
 * error */
typedef tg_tensor *(*tg_var_resolver)(void *ctx, const char *name, uint64_t key,
                                      tg_tensor *shipped);

/* a new graph read from data[0..len) (all of it: trailing bytes are an
 * error); errors name `what` ("partition from rank 0") and the byte
 * offset. resolve NULL: variables hold the shipped values. */
tg_graph *tg__graph_deserialize(const void *data, size_t len, const char *what,
                                tg_var_resolver resolve, void *ctx);

#endif
