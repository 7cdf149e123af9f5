/* tensorgraph core: status codes and errors, dtypes and promotion, devices,
 * threading. Everything else in the public API builds on these. */
#ifndef TG_CORE_H
#define TG_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Symbol visibility: the library is built with -fvisibility=hidden, so
 * libtg.so exports only what the public headers declare. Each header in
 * include/tg/ wraps its declarations in "#pragma GCC visibility
 * push(default)" ... "pop" (GCC and Clang), which makes every function
 * declared there, and only those, visible; internal functions (tg__*, the
 * ONNX and JSON readers, ...) stay hidden. A new public header does the
 * same; scripts/check_exports.sh (the ctest "exported_symbols") checks
 * both directions against `nm -D`. */
#pragma GCC visibility push(default)

#define TG_VERSION "0.1.0"
#define TG_MAX_DIMS 8

/* ---- status and errors ------------------------------------------------
 * Library calls never abort on user error. Functions returning a pointer
 * return NULL on failure; functions returning tg_status return non-TG_OK.
 * Either way tg_last_error() (thread-local) says what went wrong, naming
 * the op, the shapes and what was expected. Every op returns NULL when
 * one of its inputs is NULL, keeping the first error, so chained calls
 * such as tg_add(tg_mul(a, b), c) report the failure that happened. */
typedef enum tg_status {
    TG_OK = 0,
    TG_ERR_ARG,         /* invalid argument (NULL, bad value, bad option) */
    TG_ERR_SHAPE,       /* shapes incompatible */
    TG_ERR_DTYPE,       /* dtype not supported or mismatched */
    TG_ERR_INDEX,       /* axis or index out of range */
    TG_ERR_AUTOGRAD,    /* misuse of autograd (double backward, ...) */
    TG_ERR_NOMEM,       /* allocation failed */
    TG_ERR_IO,          /* file or data error */
    TG_ERR_UNSUPPORTED, /* op or feature not available */
    TG_ERR_INTERNAL     /* a bug in tensorgraph: please report */
} tg_status;

const char *tg_last_error(void);   /* "" when no error since last clear */
tg_status tg_last_status(void);
void tg_clear_error(void);
const char *tg_status_name(tg_status s);

/* ---- dtypes ------------------------------------------------------------
 * Type promotion (tg_promote_types) follows PyTorch's tensor-tensor rules:
 *   bool < uint8 < int32 < int64 < float32 < float64
 * the result is the larger of the two in that order, except that mixing
 * uint8 with a signed integer gives the signed type (int32/int64).
 * Comparisons and logical ops give bool. Integer division (tg_div) of
 * integer inputs promotes to the default float type, as true division in
 * PyTorch; so do math functions of integers (tg_sqrt, ...), means of them
 * and a 0-d float tensor meeting an integer tensor. */
typedef enum tg_dtype {
    TG_FLOAT32 = 0,
    TG_FLOAT64,
    TG_INT32,
    TG_INT64,
    TG_UINT8,
    TG_BOOL,
    TG_NUM_DTYPES
} tg_dtype;

size_t tg_dtype_size(tg_dtype dt);
const char *tg_dtype_name(tg_dtype dt); /* "float32", ... */
bool tg_dtype_is_float(tg_dtype dt);
bool tg_dtype_is_valid(int dt);
tg_dtype tg_promote_types(tg_dtype a, tg_dtype b);

/* The default float type (torch.get_default_dtype): TG_FLOAT32 until
 * tg_set_default_float changes it. One setting for the process, read when
 * an op's output dtype is decided (eagerly, or when a graph node is
 * built): set it before starting threads that build ops. Only the float
 * dtypes are accepted (TG_ERR_DTYPE otherwise, the setting unchanged). */
tg_dtype tg_default_float(void);
tg_status tg_set_default_float(tg_dtype dt);

/* ---- devices -----------------------------------------------------------
 * A device is a kind (the CPU only; a GPU stays on paper, see
 * docs/DISTRIBUTED.md), an index (the virtual CPU devices cpu:0, cpu:1,
 * ... of one process, each running its own partition of a graph) and the
 * rank of the process it belongs to (0 without MPI). Names and placement
 * are in tg/device.h. */
typedef enum tg_device_type { TG_CPU = 0 } tg_device_type;
typedef struct tg_device {
    tg_device_type type;
    int index;
    int rank;
} tg_device;

/* ---- threads -----------------------------------------------------------
 * One thread pool serves the whole library (intra-op parallelism).
 * Default size: TG_NUM_THREADS from the environment, else the cores. */
tg_status tg_set_num_threads(int n);
int tg_get_num_threads(void);

/* ---- kernels -----------------------------------------------------------
 * How the CPU kernels run on this machine, for reports (`tg version
 * --verbose`). The instruction set is read from the CPU at run time:
 * "avx512", "avx2" or "generic" (TG_CPU=generic|avx2 asks for a lower
 * one). The BLAS is the one the library was built with, and the CPU
 * kernels it picked ("openblas (Haswell)"), or "none". A float GEMM runs
 * on the built-in kernel when the kernels' instruction set is avx2 or
 * avx512, on the BLAS below that (when there is one): a fixed rule, so
 * that runs with the same seed give the same bits; TG_GEMM=builtin|blas
 * forces one. tg_gemm_choice says which one serves the shape at the
 * current thread count: "built-in" or "blas". */
const char *tg_kernels_isa(void);
const char *tg_kernels_blas(void);
const char *tg_gemm_choice(tg_dtype dt, bool trans_a, bool trans_b, int64_t m,
                           int64_t n, int64_t k);
/* Lines of text: what the build targets (portable: an x86-64-v2 baseline,
 * or native: the build machine's CPU), the CPU's level, the level the
 * kernels use and why (TG_CPU), which kernels are built per instruction
 * set and chosen at run time, and the BLAS. Fixed at the first call. */
const char *tg_kernels_report(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
