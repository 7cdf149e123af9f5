/* layer_norm and layer_norm_grad on float32: the row kernels of
 * kernels/cpu/layer_norm_arch.h (built per instruction set, the same bits
 * at each) over the thread pool. Eager and graph mode run these same
 * kernels.
 *
 * The backward takes dx row by row and adds each row's dweight and dbias
 * terms to the partial sums of its part of the rows. The parts are fixed
 * by the shape, not the threads, and their sums are added in order at the
 * end, so the results do not depend on the number of threads. */
#include "ops/norm_ln_f32.h"

#include "kernels/cpu/layer_norm.h"
#include "kernels/cpu/scratch.h"
#include "ops/nn_util.h"

#include <math.h>
#include <string.h>

/* partial sums of dweight and dbias: at most this many floats in all, and
 * this many parts */
#define LN_PART_FLOATS (1 << 19)
#define LN_MAX_PARTS 64

static void ln_fwd_range(void *ctx, int64_t b, int64_t e)
{
    TG_ISA_CALL(tg__ln32_fwd_rows, (ctx, b, e));
}

static void ln_bwd_range(void *ctx, int64_t b, int64_t e)
{
    TG_ISA_CALL(tg__ln32_bwd_parts, (ctx, b, e));
}

/* dw, db: the parts' sums added in order */
static void ln_sum_parts(const tg__ln32_bwd *t, int64_t n_parts)
{
    const int64_t K = t->K;
    memcpy(t->dw, t->parts, (size_t)K * sizeof(float));
    memcpy(t->db, t->parts + K, (size_t)K * sizeof(float));
    for (int64_t p = 1; p < n_parts; p++) {
        const float *pw = t->parts + 2 * K * p, *pb = pw + K;
        for (int64_t k = 0; k < K; k++) {
            t->dw[k] += pw[k];
            t->db[k] += pb[k];
        }
    }
}

/* t->R >= 1, t->K >= 1 */
static tg_status ln_backward(tg__ln32_bwd *t)
{
    const int64_t K = t->K;
    int64_t n_parts = LN_PART_FLOATS / (2 * K);
    n_parts = n_parts < 1 ? 1 : n_parts > LN_MAX_PARTS ? LN_MAX_PARTS : n_parts;
    n_parts = n_parts < t->R ? n_parts : t->R;
    t->rows_per = (t->R + n_parts - 1) / n_parts;
    n_parts = (t->R + t->rows_per - 1) / t->rows_per;
    t->parts = tg__scratch(TG_SCRATCH_SHARED, (size_t)(2 * K * n_parts) * sizeof(float));
    if (!t->parts)
        return tg__error(TG_ERR_NOMEM, "layer_norm_grad: no memory for %lld partial sums "
                         "of %lld floats", (long long)n_parts, (long long)(2 * K));
    tg__nn_parallel(n_parts, 4 * K * t->rows_per, ln_bwd_range, t);
    ln_sum_parts(t, n_parts);
    return TG_OK;
}

#define F32(t) ((float *)tg__base(t))

/* n inputs of c from `first` as contiguous float32 (owned) */
static bool ln_inputs(tg_op_ctx *c, int first, int n, tg_tensor **in)
{
    bool ok = true;
    for (int i = 0; i < n; i++)
        ok = (in[i] = tg__nn_contig(c->in[first + i], TG_FLOAT32)) != NULL && ok;
    return ok;
}

static void ln_release(int n, tg_tensor **in)
{
    for (int i = 0; i < n; i++)
        tg_release(in[i]);
}

tg_status tg__ln32_kernel(tg_op_ctx *c, int64_t R, int64_t K, double eps)
{
    tg_tensor *in[3] = {NULL};
    tg_status s = ln_inputs(c, 0, 3, in) ? TG_OK : TG_ERR_NOMEM;
    if (s == TG_OK && K == 0) { /* 0 / 0, as in double */
        for (int64_t r = 0; r < R; r++)
            F32(c->out[1])[r] = F32(c->out[2])[r] = NAN;
    } else if (s == TG_OK) {
        tg__ln32_fwd t = {.x = F32(in[0]), .w = F32(in[1]), .b = F32(in[2]),
                          .y = F32(c->out[0]), .mean = F32(c->out[1]),
                          .var = F32(c->out[2]), .R = R, .K = K, .eps = eps};
        tg__nn_parallel(R, 3 * K, ln_fwd_range, &t);
    }
    ln_release(3, in);
    return s;
}

tg_status tg__ln32_grad_kernel(tg_op_ctx *c, int64_t R, int64_t K, double eps)
{
    tg_tensor *in[7] = {NULL};
    tg_status s = ln_inputs(c, 0, 7, in) ? TG_OK : TG_ERR_NOMEM;
    if (s == TG_OK && R == 0) { /* sums of nothing */
        memset(F32(c->out[1]), 0, (size_t)K * sizeof(float));
        memset(F32(c->out[2]), 0, (size_t)K * sizeof(float));
    } else if (s == TG_OK && K > 0) {
        tg__ln32_bwd t = {.x = F32(in[0]), .dy = F32(in[1]), .mean = F32(in[2]),
                          .var = F32(in[3]), .w = F32(in[4]), .dmean = F32(in[5]),
                          .dvar = F32(in[6]), .dx = F32(c->out[0]), .dw = F32(c->out[1]),
                          .db = F32(c->out[2]), .R = R, .K = K, .eps = eps};
        s = ln_backward(&t);
    }
    ln_release(7, in);
    return s;
}
