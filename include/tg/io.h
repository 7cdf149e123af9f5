/* tensorgraph checkpoints: named collections of tensors with string
 * metadata (state dicts) and the safetensors file format that stores them.
 * Loaders treat their input as hostile: a malformed file is TG_ERR_IO with
 * a message saying what is wrong, never a crash. */
#ifndef TG_IO_H
#define TG_IO_H

#include "tg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* ---- state dicts ----------------------------------------------------------
 * An ordered set of uniquely named tensors plus string metadata (key ->
 * value). It is what a checkpoint holds: a model's parameters, an
 * optimizer's state (tg/optim.h), anything else. Tensors are held by
 * reference, not copied: saving a dict writes their values at that time.
 * A dict is not a tensor and is never owned by a scope: free it. */
typedef struct tg_state_dict tg_state_dict;

tg_state_dict *tg_state_dict_new(void);
void tg_state_dict_free(tg_state_dict *sd); /* NULL is ignored */
/* adds t (retained) under name; fails with TG_ERR_ARG if name is taken,
 * empty, or "__metadata__" (reserved by safetensors) */
tg_status tg_state_dict_add(tg_state_dict *sd, const char *name,
                            tg_tensor *t);
int tg_state_dict_size(const tg_state_dict *sd);
/* the i-th name (borrowed; valid while sd lives), in insertion/file order */
const char *tg_state_dict_name(const tg_state_dict *sd, int i);
/* the i-th tensor / the tensor called name, as a new reference (see
 * tg/tensor.h on ownership). tg_state_dict_get fails with TG_ERR_ARG
 * naming the missing entry; tg_state_dict_has only asks. */
tg_tensor *tg_state_dict_tensor(const tg_state_dict *sd, int i);
tg_tensor *tg_state_dict_get(const tg_state_dict *sd, const char *name);
bool tg_state_dict_has(const tg_state_dict *sd, const char *name);

/* metadata: set replaces an existing key's value */
tg_status tg_state_dict_set_meta(tg_state_dict *sd, const char *key,
                                 const char *value);
/* the value (borrowed) or NULL when the key is absent (not an error) */
const char *tg_state_dict_meta(const tg_state_dict *sd, const char *key);
int tg_state_dict_meta_size(const tg_state_dict *sd);
const char *tg_state_dict_meta_key(const tg_state_dict *sd, int i);
const char *tg_state_dict_meta_value(const tg_state_dict *sd, int i);

/* ---- files --------------------------------------------------------------------
 * data[0, len) as path's whole new content, replaced atomically as every
 * file tensorgraph writes (checkpoints, exported models, traces): readers
 * and a crash see the old file or the new one; a symbolic link is
 * followed, a device, FIFO or socket refused; on failure (TG_ERR_IO, naming
 * path and why) the old file is unchanged and no temporary is left. For
 * front ends writing their own formats (Python's Chrome traces). */
tg_status tg_write_file(const char *path, const void *data, size_t len);

/* ---- safetensors ------------------------------------------------------------
 * https://huggingface.co/docs/safetensors: an 8-byte little-endian header
 * length N, N bytes of JSON header {"name": {"dtype": "F32", "shape": [...],
 * "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}}, then the
 * raw little-endian C-order data (offsets relative to the end of the
 * header). dtypes: F32 F64 I32 I64 U8 BOOL. 0-d and empty tensors are fine.
 *
 * Saving is atomic: the data goes to a temporary file in the same
 * directory, which is flushed, fsync'ed and renamed over path. On any
 * failure path keeps its old contents and the temporary file is removed. */
typedef struct tg_kv {
    const char *key;
    const char *value;
} tg_kv;

tg_status tg_safetensors_save(const char *path, int n,
                              const char *const *names,
                              tg_tensor *const *tensors, int n_meta,
                              const tg_kv *meta);
tg_status tg_safetensors_save_dict(const char *path, const tg_state_dict *sd);
/* reads a whole file into a new state dict (free it), tensors and
 * metadata in file order */
tg_state_dict *tg_safetensors_load(const char *path);
/* the same from bytes in memory (len bytes at data) */
tg_state_dict *tg_safetensors_parse(const void *data, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
