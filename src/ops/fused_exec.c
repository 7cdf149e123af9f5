/* The fused-program interpreter: the output is cut into blocks of at most
 * TG_FUSED_BLOCK elements (whole trailing dims, a range of one dim, one
 * index of the dims before it), and for each block every instruction runs
 * its op's own kernel on views of the inputs over the block (broadcast
 * dims have stride 0) and on scratch buffers of block size for the
 * intermediates, so a chain streams through cache instead of memory and
 * each element gets exactly the operations the unfused ops would give it.
 * Blocks are independent: large outputs are split across the pool. */
#include "core/threadpool.h"
#include "kernels/cpu/iter.h"
#include "ops/elementwise.h"
#include "ops/fused.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct run {
    const char *who;
    const tg_fused_prog *p;
    int n_in, n_res;
    tg_tensor *const *in;
    const int64_t *res;
    tg_tensor *const *dst;
    bool staged;
    tg_dtype dt[TG_FUSED_MAX_INSTRS]; /* result dtypes */
    /* geometry: nd iteration dims S; blocks split dim j into ranges of m */
    int nd, j;
    int64_t S[TG_MAX_DIMS], inner, m, nbj, nblocks;
    int64_t slot_bytes; /* a scratch slot: one block of 8-byte elements, 64-byte aligned */
    int64_t ist[TG_MAX_OP_INPUTS][TG_MAX_DIMS];  /* input strides per iteration dim */
    int64_t dst_st[TG_FUSED_MAX_RESULTS][TG_MAX_DIMS];
    atomic_int failed;
    tg_status status;
    char msg[512];
} run;

/* strides of t over the iteration dims (right-aligned; 0 where broadcast) */
static void iter_strides(const run *R, const tg_tensor *t, int64_t *st)
{
    for (int i = 0; i < R->nd; i++) {
        int ti = i - (R->nd - t->ndim);
        st[i] = ti < 0 || t->shape[ti] == 1 ? 0 : t->strides[ti];
    }
}

static void geometry(run *R, const tg_tensor *out)
{
    R->nd = out->ndim ? out->ndim : 1;
    for (int i = 0; i < R->nd; i++)
        R->S[i] = out->ndim ? out->shape[i] : 1;
    int64_t suffix[TG_MAX_DIMS + 1];
    suffix[R->nd] = 1;
    for (int i = R->nd - 1; i >= 0; i--)
        suffix[i] = suffix[i + 1] * R->S[i];
    int k = 0; /* the first dim whose suffix fits a block */
    while (k < R->nd && suffix[k] > TG_FUSED_BLOCK)
        k++;
    if (k == 0) { /* everything in one block */
        R->j = 0;
        R->m = R->S[0];
        R->inner = suffix[1];
    } else {
        R->j = k - 1;
        R->inner = suffix[k];
        R->m = TG_FUSED_BLOCK / suffix[k];
    }
    if (R->m < 1)
        R->m = 1;
    R->nbj = R->S[R->j] == 0 ? 0 : (R->S[R->j] + R->m - 1) / R->m;
    R->nblocks = R->nbj;
    for (int i = 0; i < R->j; i++)
        R->nblocks *= R->S[i];
    if (suffix[0] == 0)
        R->nblocks = 0;
    /* slots as large as a block, not TG_FUSED_BLOCK: small tensors (most
     * of a small model's) would otherwise allocate and clear 64 KB per
     * slot at every run */
    R->slot_bytes = (R->m * R->inner * 8 + 63) / 64 * 64;
}

static void record_failure(run *R, tg_status s)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&R->failed, &expected, 1)) {
        R->status = s;
        snprintf(R->msg, sizeof R->msg, "%s", tg_last_error());
    }
}

/* the block views and scratch live on the stack, not the heap: a fused
 * node on small tensors used to spend more on allocating and freeing a
 * tensor struct per instruction, input and result (and the scratch) at
 * every call than on computing. Kernels only read these structs during
 * the call; nobody keeps a reference to them. */
#define STACK_SCRATCH (16 * 1024)

/* fills v as a view of t's storage over a block: shape [m, S[j+1..]],
 * strides st[j..] */
static void block_view(const run *R, tg_tensor *v, const tg_tensor *t, tg_storage *storage,
                       tg_dtype dt, const int64_t *st)
{
    memset(v, 0, sizeof *v);
    v->refcount = 1;
    v->dtype = dt;
    v->ndim = R->nd - R->j;
    v->numel = 1;
    for (int i = R->j; i < R->nd; i++) {
        v->shape[i - R->j] = i == R->j ? R->m : R->S[i];
        v->strides[i - R->j] = st[i];
        v->numel *= v->shape[i - R->j];
    }
    v->device = t ? t->device : (tg_device){0};
    v->storage = storage;
}

static void set_block(tg_tensor *v, int64_t offset, int64_t len, int64_t inner)
{
    v->offset = offset;
    v->shape[0] = len;
    v->numel = len * inner;
}

typedef struct chunk {
    tg_tensor *scratch;  /* owns heap scratch storage; NULL when on the stack */
    tg_storage stack_storage;
    _Alignas(64) unsigned char stack_scratch[STACK_SCRATCH];
    tg_tensor res[TG_FUSED_MAX_INSTRS]; /* result views into the scratch */
    tg_tensor in[TG_MAX_OP_INPUTS];
    tg_tensor dst[TG_FUSED_MAX_RESULTS];
} chunk;

static void chunk_free(chunk *C)
{
    tg_release(C->scratch);
}

static tg_status chunk_init(const run *R, chunk *C)
{
    C->scratch = NULL;
    int64_t bytes = (int64_t)(R->p->n_slots ? R->p->n_slots : 1) * R->slot_bytes;
    tg_storage *storage = &C->stack_storage;
    if (bytes <= STACK_SCRATCH) {
        memset(storage, 0, sizeof *storage);
        storage->refcount = 1;
        storage->nbytes = (size_t)bytes;
        storage->data = C->stack_scratch;
    } else if ((C->scratch = tg__alloc(TG_UINT8, 1, &bytes))) {
        storage = C->scratch->storage;
    } else {
        return TG_ERR_NOMEM;
    }
    int64_t contiguous[TG_MAX_DIMS] = {0};
    int64_t acc = 1;
    for (int i = R->nd - 1; i >= R->j; i--) {
        contiguous[i] = acc;
        acc *= R->S[i];
    }
    for (int k = 0; k < R->p->n; k++) {
        tg_tensor *v = &C->res[k];
        /* scratch is raw bytes: reinterpret per result */
        block_view(R, v, NULL, storage, R->dt[k], contiguous);
        v->device = R->dst[0]->device;
        v->offset = (int64_t)R->p->ins[k].slot * R->slot_bytes /
                    (int64_t)tg_dtype_size(R->dt[k]);
    }
    for (int i = 0; i < R->n_in; i++)
        block_view(R, &C->in[i], R->in[i], R->in[i]->storage, R->in[i]->dtype, R->ist[i]);
    for (int r = 0; r < R->n_res; r++)
        block_view(R, &C->dst[r], R->dst[r], R->dst[r]->storage, R->dst[r]->dtype,
                   R->dst_st[r]);
    return TG_OK;
}

static tg_status run_block(const run *R, chunk *C, int64_t b)
{
    int64_t outer = b / R->nbj, r0 = (b % R->nbj) * R->m;
    int64_t len = R->S[R->j] - r0 < R->m ? R->S[R->j] - r0 : R->m;
    int64_t idx[TG_MAX_DIMS];
    for (int i = R->j - 1; i >= 0; i--) {
        idx[i] = outer % R->S[i];
        outer /= R->S[i];
    }
    for (int i = 0; i < R->n_in; i++) {
        int64_t off = R->in[i]->offset + r0 * R->ist[i][R->j];
        for (int t = 0; t < R->j; t++)
            off += idx[t] * R->ist[i][t];
        set_block(&C->in[i], off, len, R->inner);
    }
    for (int r = 0; r < R->n_res; r++) {
        int64_t off = R->dst[r]->offset + r0 * R->dst_st[r][R->j];
        for (int t = 0; t < R->j; t++)
            off += idx[t] * R->dst_st[r][t];
        set_block(&C->dst[r], off, len, R->inner);
    }
    const tg_fused_prog *p = R->p;
    for (int k = 0; k < p->n; k++) {
        set_block(&C->res[k], C->res[k].offset, len, R->inner);
        const tg_fused_instr *I = &p->ins[k];
        tg_tensor *args[TG_FUSED_MAX_ARGS], *out[1];
        for (int a = 0; a < I->n_args; a++)
            args[a] = I->args[a] >= 0 ? &C->in[I->args[a]] : &C->res[-1 - I->args[a]];
        out[0] = k == p->n - 1 && !R->staged ? &C->dst[0] : &C->res[k];
        /* set field by field: an initializer would clear all of out_meta
         * (kilobytes) for each instruction of each block */
        tg_op_ctx c;
        c.op = I->op;
        c.n_in = I->n_args;
        c.n_out = 1;
        c.in = args;
        c.out = out;
        c.attr = I->attr;
        c.attrs = I->attrs;
        c.n_attrs = I->n_attrs;
        c.out_meta[0] = (tg_meta){.dtype = out[0]->dtype, .ndim = out[0]->ndim};
        memcpy(c.out_meta[0].shape, out[0]->shape, (size_t)out[0]->ndim * sizeof(int64_t));
        tg_status s = I->op->kernel[TG_CPU](&c);
        if (s != TG_OK)
            return s;
    }
    for (int r = 0; R->staged && r < R->n_res; r++)
        tg__convert_into(&C->dst[r], &C->res[R->res[r]]);
    return TG_OK;
}

static void run_range(void *ctx, int64_t b0, int64_t b1)
{
    run *R = ctx;
    chunk C;
    tg_status s = chunk_init(R, &C);
    if (s != TG_OK)
        s = tg__error(TG_ERR_NOMEM, "%s: out of memory", R->who);
    for (int64_t b = b0; b < b1 && s == TG_OK && !atomic_load(&R->failed); b++)
        s = run_block(R, &C, b);
    if (s != TG_OK)
        record_failure(R, s);
    chunk_free(&C);
}

tg_status tg__fused_run(const char *who, const tg_fused_prog *p, const tg_dtype *dt,
                        int n_in, tg_tensor *const *in, int n_res, const int64_t *res,
                        tg_tensor *const *dst, bool staged)
{
    if (n_in > TG_MAX_OP_INPUTS || n_res < 1 || n_res > TG_FUSED_MAX_RESULTS)
        return tg__error(TG_ERR_INTERNAL, "%s: %d inputs and %d results", who, n_in, n_res);
    if (tg__fused_run_flat(p, dt, n_in, in, n_res, res, dst))
        return TG_OK;
    /* on the stack and set field by field: the struct is kilobytes (strides
     * for every possible input), and clearing it cost more per call than
     * computing a small block */
    run state, *R = &state;
    R->who = who;
    R->p = p;
    R->n_in = n_in;
    R->n_res = n_res;
    R->in = in;
    R->res = res;
    R->dst = dst;
    R->staged = staged;
    atomic_init(&R->failed, 0);
    R->status = TG_OK;
    R->msg[0] = '\0';
    for (int k = 0; k < p->n; k++)
        R->dt[k] = dt[k];
    geometry(R, dst[0]);
    for (int i = 0; i < n_in; i++)
        iter_strides(R, in[i], R->ist[i]);
    for (int r = 0; r < n_res; r++)
        iter_strides(R, dst[r], R->dst_st[r]);
    int64_t numel = R->nblocks * R->m * R->inner; /* about: the grain decides */
    if (numel >= 2 * TG_ITER_GRAIN && R->nblocks > 1 && !tg_in_parallel_region()) {
        int64_t per = R->m * R->inner;
        tg_parallel_for(R->nblocks, per >= TG_ITER_GRAIN ? 1 : TG_ITER_GRAIN / per,
                        run_range, R);
    } else if (R->nblocks > 0) {
        run_range(R, 0, R->nblocks);
    }
    tg_status s = TG_OK;
    if (atomic_load(&R->failed))
        s = tg__error(R->status, "%s", R->msg);
    return s;
}
