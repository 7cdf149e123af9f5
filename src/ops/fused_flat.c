/* The fused-program interpreter's flat path (fused.h: tg__fused_run_flat).
 *
 * The optimizer updates fuse_updates makes (SGD with momentum: five
 * instructions of mul, add and where over a parameter, its gradient, its
 * momentum buffer and a few single-element scalars) ran through the
 * general interpreter at about a quarter of the eager step's speed: each
 * instruction is its op's own kernel over a block of 8192 elements, with
 * its iterator set up per block, and each passes its block through the
 * cache once more (LeNet's step at level 2: 120 us in updates against 31
 * in the eager optimizer).
 *
 * Programs of float32 add, sub, mul, div and where (bool conditions),
 * without attributes, over contiguous operands of the output's size or
 * single elements, run here instead, a chunk of CHUNK elements at a time:
 * every instruction's chunk stays in L1, single elements are spread over
 * a chunk once, and each loop is a plain vector loop. Each element gets
 * the same IEEE float32 operation, in the same order, as the ops' kernels
 * give it (no contraction in C11 mode), so the bits are the same. The
 * results are written after the chunk's instructions have read their
 * inputs, as the staged interpreter does, so results may overwrite inputs
 * that are the same elements (an update's variables). */
#include "core/tensor_impl.h"
#include "core/threadpool.h"
#include "kernels/cpu/isa_clone.h"
#include "kernels/cpu/iter.h"
#include "kernels/cpu/vmath.h"
#include "ops/fused.h"

#include <stdbool.h>
#include <string.h>

#define CHUNK 256
/* instructions and inputs at most (the chunk buffers live on the stack:
 * 36 KB) */
#define FLAT_MAX 16

typedef enum flat_op { F_ADD, F_SUB, F_MUL, F_DIV, F_WHERE } flat_op;

typedef struct flat {
    const tg_fused_prog *p;
    int n_in, n_res;
    flat_op op[FLAT_MAX];
    const char *data[FLAT_MAX]; /* input i's first element */
    bool single[FLAT_MAX];      /* one element, spread over the chunk */
    bool is_bool[FLAT_MAX];
    float *dst[TG_FUSED_MAX_RESULTS];
    int64_t res[TG_FUSED_MAX_RESULTS];
    int64_t numel;
} flat;

/* ---- the ops over a chunk (restrict: the loops vectorize) ----------------------------- */
static void f_add(float *restrict t, const float *restrict a, const float *restrict b, int n)
{
    for (int i = 0; i < n; i++)
        t[i] = a[i] + b[i];
}
static void f_sub(float *restrict t, const float *restrict a, const float *restrict b, int n)
{
    for (int i = 0; i < n; i++)
        t[i] = a[i] - b[i];
}
static void f_mul(float *restrict t, const float *restrict a, const float *restrict b, int n)
{
    for (int i = 0; i < n; i++)
        t[i] = a[i] * b[i];
}
static void f_div(float *restrict t, const float *restrict a, const float *restrict b, int n)
{
    for (int i = 0; i < n; i++)
        t[i] = a[i] / b[i];
}
/* selected by bits (vmath.h): a conditional expression would read a[i]
 * and b[i] under a condition, which keeps the loop scalar */
static void f_where(float *restrict t, const unsigned char *restrict c,
                    const float *restrict a, const float *restrict b, int n)
{
    for (int i = 0; i < n; i++)
        t[i] = tg__vsel(c[i] != 0, a[i], b[i]);
}

/* ---- which programs qualify ------------------------------------------------------------ */
/* no attributes, but div's true_div = 1 (its default: true division) */
static bool plain_attrs(const tg_fused_instr *I)
{
    if (I->n_attrs == 0)
        return true;
    const tg_attr *a = &I->attrs[0];
    return I->n_attrs == 1 && !strcmp(I->op->name, "div") && !strcmp(a->name, "true_div") &&
           a->type == TG_ATTR_INT && a->u.i == 1;
}

static bool op_of(const tg_fused_instr *I, flat_op *op)
{
    static const char *const names[] = {"add", "sub", "mul", "div", "where"};
    if (!plain_attrs(I) || I->n_args != (!strcmp(I->op->name, "where") ? 3 : 2))
        return false;
    for (int k = 0; k < 5; k++)
        if (!strcmp(I->op->name, names[k])) {
            *op = (flat_op)k;
            return true;
        }
    return false;
}

static bool contiguous_like(const tg_tensor *t, const tg_tensor *out)
{
    return tg_is_contiguous(t) && tg__shape_eq(t->ndim, t->shape, out->ndim, out->shape);
}

/* inputs: float32 or bool, the output's shape and contiguous or a single
 * element; an input sharing a result's storage is that result's elements */
static bool inputs_ok(flat *F, int n_in, tg_tensor *const *in, int n_res,
                      tg_tensor *const *dst)
{
    for (int i = 0; i < n_in; i++) {
        const tg_tensor *t = in[i];
        if (t->dtype != TG_FLOAT32 && t->dtype != TG_BOOL)
            return false;
        F->single[i] = t->numel == 1;
        F->is_bool[i] = t->dtype == TG_BOOL;
        if (!F->single[i] && !contiguous_like(t, dst[0]))
            return false;
        for (int r = 0; r < n_res; r++)
            if (t->storage == dst[r]->storage &&
                (F->single[i] || t->offset != dst[r]->offset))
                return false;
        F->data[i] = (const char *)tg__base(t);
    }
    return true;
}

/* operands: float32 where arithmetic needs them, bool for where's condition */
static bool operands_ok(const flat *F, const tg_fused_prog *p, const tg_dtype *dt)
{
    for (int k = 0; k < p->n; k++) {
        if (dt[k] != TG_FLOAT32)
            return false;
        const tg_fused_instr *I = &p->ins[k];
        for (int a = 0; a < I->n_args; a++) {
            int v = I->args[a];
            bool want_bool = F->op[k] == F_WHERE && a == 0;
            bool is_bool = v >= 0 ? F->is_bool[v] : false; /* results are float32 */
            if (is_bool != want_bool)
                return false;
        }
    }
    return true;
}

static bool prepare(flat *F, const tg_fused_prog *p, const tg_dtype *dt, int n_in,
                    tg_tensor *const *in, int n_res, const int64_t *res, tg_tensor *const *dst)
{
    if (p->n < 1 || p->n > FLAT_MAX || n_res < 1 || n_res > TG_FUSED_MAX_RESULTS ||
        n_in > FLAT_MAX)
        return false;
    for (int k = 0; k < p->n; k++)
        if (!op_of(&p->ins[k], &F->op[k]))
            return false;
    for (int r = 0; r < n_res; r++) {
        if (dst[r]->dtype != TG_FLOAT32 || !contiguous_like(dst[r], dst[0]) || res[r] < 0 ||
            res[r] >= p->n)
            return false;
        F->dst[r] = (float *)tg__base(dst[r]);
        F->res[r] = res[r];
    }
    if (!inputs_ok(F, n_in, in, n_res, dst) || !operands_ok(F, p, dt))
        return false;
    F->p = p;
    F->n_in = n_in;
    F->n_res = n_res;
    F->numel = dst[0]->numel;
    return true;
}

/* ---- running ----------------------------------------------------------------------- */
typedef struct chunk_bufs {
    _Alignas(64) float t[FLAT_MAX][CHUNK];
    _Alignas(64) float spread[FLAT_MAX][CHUNK]; /* single float elements */
    _Alignas(64) unsigned char spread_b[FLAT_MAX][CHUNK]; /* single bools */
} chunk_bufs;

static const void *operand(const flat *F, chunk_bufs *B, int v, int64_t c0)
{
    if (v < 0)
        return B->t[-1 - v];
    if (F->single[v])
        return F->is_bool[v] ? (const void *)B->spread_b[v] : (const void *)B->spread[v];
    return F->data[v] + (size_t)c0 * (F->is_bool[v] ? 1 : sizeof(float));
}

static void run_chunk(const flat *F, chunk_bufs *B, int64_t c0, int n)
{
    const tg_fused_prog *p = F->p;
    for (int k = 0; k < p->n; k++) {
        const int *a = p->ins[k].args;
        const void *x = operand(F, B, a[0], c0), *y = operand(F, B, a[1], c0);
        float *t = B->t[k];
        switch (F->op[k]) {
        case F_ADD: f_add(t, x, y, n); break;
        case F_SUB: f_sub(t, x, y, n); break;
        case F_MUL: f_mul(t, x, y, n); break;
        case F_DIV: f_div(t, x, y, n); break;
        case F_WHERE: f_where(t, x, y, operand(F, B, a[2], c0), n); break;
        }
    }
    for (int r = 0; r < F->n_res; r++)
        memcpy(F->dst[r] + c0, B->t[F->res[r]], sizeof(float) * (size_t)n);
}

/* chunks [b, e), built per instruction set (isa_clone.h: the loops above
 * are inlined into each copy and vectorize at its width) */
TG_ISA_DISPATCH(static, void, flat_chunks, (const flat *F, int64_t b, int64_t e), (F, b, e))
{
    chunk_bufs B;
    for (int i = 0; i < F->n_in; i++) {
        if (!F->single[i])
            continue;
        for (int k = 0; k < CHUNK; k++) {
            if (F->is_bool[i])
                B.spread_b[i][k] = *(const unsigned char *)F->data[i] != 0;
            else
                B.spread[i][k] = *(const float *)F->data[i];
        }
    }
    for (int64_t c = b; c < e; c++) {
        int64_t c0 = c * CHUNK;
        run_chunk(F, &B, c0, (int)(F->numel - c0 < CHUNK ? F->numel - c0 : CHUNK));
    }
}

static void run_range(void *ctx, int64_t b, int64_t e)
{
    flat_chunks(ctx, b, e);
}

bool tg__fused_run_flat(const tg_fused_prog *p, const tg_dtype *dt, int n_in,
                        tg_tensor *const *in, int n_res, const int64_t *res,
                        tg_tensor *const *dst)
{
    flat F;
    if (!prepare(&F, p, dt, n_in, in, n_res, res, dst))
        return false;
    /* split by work, element-operations, as the elementwise kernels split
     * their elements: an update's five instructions make a 48k-element
     * parameter (LeNet's largest) worth two threads */
    int64_t chunks = (F.numel + CHUNK - 1) / CHUNK, work = F.numel * p->n;
    int64_t grain = TG_ITER_GRAIN / ((int64_t)CHUNK * p->n);
    if (work >= 2 * TG_ITER_GRAIN && chunks > 1 && !tg_in_parallel_region())
        tg_parallel_for(chunks, grain > 0 ? grain : 1, run_range, &F);
    else if (chunks > 0)
        run_range(&F, 0, chunks);
    return true;
}
