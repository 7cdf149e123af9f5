/* Internal pieces of the io layer shared with the optimizers and tests:
 * borrowed lookups in state dicts and a write-failure hook for testing
 * the atomic save. Nothing here is public API. */
#ifndef TG_IO_IMPL_H
#define TG_IO_IMPL_H

#include "tg/io.h"

/* the tensor called name (borrowed) or NULL; sets no error */
tg_tensor *tg__state_dict_find(const tg_state_dict *sd, const char *name);

/* adds t under name taking over the caller's reference (released on
 * failure too) */
tg_status tg__state_dict_add_owned(tg_state_dict *sd, const char *name,
                                   tg_tensor *t);

/* testing: when >= 0, a safetensors save fails (as if the disk were full)
 * once this many bytes have been written to the temporary file. Per
 * thread; -1 (the default) disables it. */
extern _Thread_local int64_t tg__io_fail_after_bytes;

#endif
