/* Linear algebra ops: matmul (numpy semantics: 1-D promotion, broadcast
 * batch dims), gemm (alpha * op(a) @ op(b) + beta * c) and linear (x @ w^T
 * + b, a composite over gemm). Float products go to the GEMM kernels,
 * taking strided and transposed operands without copies where BLAS can;
 * integer products use plain loops. */
#include "autodiff/jvp.h"
#include "core/threadpool.h"
#include "kernels/cpu/gemm.h"
#include "ops/elementwise.h"

#include <stdlib.h>
#include <string.h>

/* ---- operands as (batched) matrices ---------------------------------------
 * An operand is a rows x cols matrix at element strides rs/cs, repeated
 * over the output's batch dims at bstride (0 where broadcast). A 1-D a is
 * a row [1, K], a 1-D b a column [K, 1]. */
typedef struct operand {
    tg_tensor *t; /* owned: the input, or a converted/contiguous copy */
    int64_t rows, cols, rs, cs;
    int64_t bstride[TG_MAX_DIMS];
    bool trans;  /* BLAS view: stored transposed (column-major) */
    int64_t ld;  /* BLAS view: leading dimension */
    /* the input's storage's serial and version when it is frozen (an ONNX
     * model's weights, core/tensor_impl.h) and read as it is, not a
     * converted copy: the GEMM keeps its packed form (tg__sgemm_frozen_b);
     * else 0 */
    uint64_t serial, version;
} operand;

/* how BLAS can read a rows x cols matrix at strides (rs, cs): row-major
 * with ld = rs, or column-major (transposed) with ld = cs; strides of
 * size-1 dims are free. False when neither works (a copy is needed). */
static bool blas_layout(operand *o)
{
    int64_t r1 = o->rows > 1 ? o->rows : 1, c1 = o->cols > 1 ? o->cols : 1;
    if (o->rows == 0 || o->cols == 0) { /* never read */
        o->trans = false;
        o->ld = c1;
        return true;
    }
    if ((o->cols == 1 || o->cs == 1) && (o->rows == 1 || o->rs >= c1)) {
        o->trans = false;
        o->ld = o->rows == 1 ? c1 : o->rs;
        return true;
    }
    if ((o->rows == 1 || o->rs == 1) && (o->cols == 1 || o->cs >= r1)) {
        o->trans = true;
        o->ld = o->cols == 1 ? r1 : o->cs;
        return true;
    }
    return false;
}

/* fills the geometry of o from o->t; is_b says how a 1-D input promotes */
static void operand_geometry(operand *o, bool is_b, int nb)
{
    const tg_tensor *t = o->t;
    int n = t->ndim;
    if (n == 1) {
        o->rows = is_b ? t->shape[0] : 1;
        o->cols = is_b ? 1 : t->shape[0];
        o->rs = is_b ? t->strides[0] : 0;
        o->cs = is_b ? 0 : t->strides[0];
    } else {
        o->rows = t->shape[n - 2];
        o->cols = t->shape[n - 1];
        o->rs = t->strides[n - 2];
        o->cs = t->strides[n - 1];
    }
    int tb = n > 2 ? n - 2 : 0; /* the operand's batch dims */
    for (int d = 0; d < nb; d++) {
        int xd = d - (nb - tb);
        o->bstride[d] = xd < 0 || t->shape[xd] == 1 ? 0 : t->strides[xd];
    }
}

/* o->t = x as dtype dt; for BLAS (need_layout) copied to contiguous when
 * its strides do not fit. Returns false on allocation failure. */
static bool operand_init(operand *o, tg_tensor *x, tg_dtype dt, bool is_b,
                         int nb, bool need_layout)
{
    o->t = tg__as_dtype(x, dt);
    if (!o->t)
        return false;
    operand_geometry(o, is_b, nb);
    if (!need_layout || blas_layout(o))
        return true;
    tg_tensor *c = tg__alloc(dt, o->t->ndim, o->t->shape);
    if (!c)
        return false;
    tg__convert_into(c, o->t);
    tg_release(o->t);
    o->t = c;
    operand_geometry(o, is_b, nb);
    return blas_layout(o); /* always true for a contiguous copy */
}

/* operand_init, then the frozen input's key (operand.serial) */
static bool operand_init_tagged(operand *o, tg_tensor *x, tg_dtype dt, bool is_b,
                                int nb, bool need_layout)
{
    if (!operand_init(o, x, dt, is_b, nb, need_layout))
        return false;
    o->serial = o->version = 0;
    if (o->t->storage == x->storage && x->storage->frozen) {
        o->serial = x->storage->serial;
        o->version = x->storage->version;
    }
    return true;
}

static int64_t batch_offset(int64_t bi, int nb, const int64_t *bshape,
                            const int64_t *bstride)
{
    int64_t off = 0;
    for (int d = nb - 1; d >= 0; d--) {
        off += (bi % bshape[d]) * bstride[d];
        bi /= bshape[d];
    }
    return off;
}

/* one float GEMM of the product: c = alpha * op(A) @ op(B) + beta * c */
static tg_status float_gemm(tg_dtype dt, bool ta, bool tb, int64_t m,
                            int64_t n, int64_t k, double alpha,
                            const operand *a, const char *pa,
                            const operand *b, const char *pb, double beta,
                            char *pc, int64_t ldc)
{
    bool fa = ta != a->trans, fb = tb != b->trans;
    if (dt == TG_FLOAT32)
        return tg__sgemm_frozen_b(fa, fb, m, n, k, (float)alpha, (const float *)pa,
                                  a->ld, (const float *)pb, b->ld, (float)beta,
                                  (float *)pc, ldc, b->serial, b->version);
    return tg__dgemm_frozen_b(fa, fb, m, n, k, alpha, (const double *)pa, a->ld,
                              (const double *)pb, b->ld, beta, (double *)pc, ldc,
                              b->serial, b->version);
}

/* ---- matmul ------------------------------------------------------------------ */
/* the batch shape of the product (inputs already checked to be >= 1-D) */
static tg_status matmul_shapes(const tg_tensor *a, const tg_tensor *b,
                               int *nb, int64_t *bshape)
{
    char sa[160], sb[160];
    int64_t ka = a->shape[a->ndim - 1];
    int64_t kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    if (ka != kb)
        return tg__error(TG_ERR_SHAPE,
                         "matmul: shapes %s and %s cannot be multiplied "
                         "(a's last dim %lld != b's %s dim %lld)",
                         tg_shape_str(a->ndim, a->shape, sa, sizeof sa),
                         tg_shape_str(b->ndim, b->shape, sb, sizeof sb),
                         (long long)ka, b->ndim == 1 ? "only" : "second-to-last",
                         (long long)kb);
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nbb = b->ndim > 2 ? b->ndim - 2 : 0;
    int n = na > nbb ? na : nbb;
    for (int d = 0; d < n; d++) {
        int64_t da = d < n - na ? 1 : a->shape[d - (n - na)];
        int64_t db = d < n - nbb ? 1 : b->shape[d - (n - nbb)];
        if (da != db && da != 1 && db != 1)
            return tg__error(TG_ERR_SHAPE,
                             "matmul: batch dims of %s and %s cannot be "
                             "broadcast (%lld vs %lld; sizes must match or be 1)",
                             tg_shape_str(a->ndim, a->shape, sa, sizeof sa),
                             tg_shape_str(b->ndim, b->shape, sb, sizeof sb),
                             (long long)da, (long long)db);
        bshape[d] = da == 1 ? db : da;
    }
    *nb = n;
    return TG_OK;
}

static tg_status matmul_infer(tg_op_ctx *c)
{
    const tg_tensor *a = c->in[0], *b = c->in[1];
    for (int i = 0; i < 2; i++) {
        const tg_tensor *x = c->in[i];
        if (x->ndim == 0)
            return tg__error(TG_ERR_SHAPE, "matmul: input %d is 0-d; expected "
                             "at least 1 dim (use tg_mul for scalars)", i);
        if (x->dtype == TG_BOOL)
            return tg__error(TG_ERR_DTYPE, "matmul: input %d is bool; cast it "
                             "to a numeric dtype first", i);
    }
    int nb;
    int64_t shape[TG_MAX_DIMS + 2];
    tg_status s = matmul_shapes(a, b, &nb, shape);
    if (s != TG_OK)
        return s;
    int n = nb;
    if (a->ndim >= 2)
        shape[n++] = a->shape[a->ndim - 2];
    if (b->ndim >= 2)
        shape[n++] = b->shape[b->ndim - 1];
    return tg_infer_set(c, 0, tg_promote_types(a->dtype, b->dtype), n, shape);
}

typedef struct mm_job {
    const operand *a, *b;
    char *out;
    tg_dtype dt;
    int nb;
    const int64_t *bshape;
    int64_t m, n, k;
    tg_status status;
} mm_job;

#define IGEMM_CASE(DT, T, FN)                                                  \
    case DT:                                                                   \
        FN(j->m, j->n, j->k, (const T *)pa, a->rs, a->cs, (const T *)pb,       \
           b->rs, b->cs, (T *)pc, j->n);                                       \
        break;

static void mm_batches(void *ctx, int64_t begin, int64_t end)
{
    mm_job *j = ctx;
    const operand *a = j->a, *b = j->b;
    size_t z = tg_dtype_size(j->dt);
    for (int64_t bi = begin; bi < end; bi++) {
        const char *pa = tg__base(a->t) +
                         batch_offset(bi, j->nb, j->bshape, a->bstride) * (int64_t)z;
        const char *pb = tg__base(b->t) +
                         batch_offset(bi, j->nb, j->bshape, b->bstride) * (int64_t)z;
        char *pc = j->out + bi * j->m * j->n * (int64_t)z;
        tg_status s = TG_OK;
        switch (j->dt) {
        case TG_FLOAT32:
        case TG_FLOAT64:
            s = float_gemm(j->dt, false, false, j->m, j->n, j->k, 1.0, a, pa, b,
                           pb, 0.0, pc, j->n);
            break;
        IGEMM_CASE(TG_INT32, int32_t, tg__gemm_i32)
        IGEMM_CASE(TG_INT64, int64_t, tg__gemm_i64)
        IGEMM_CASE(TG_UINT8, uint8_t, tg__gemm_u8)
        default:
            break;
        }
        if (s != TG_OK)
            j->status = s;
    }
}

/* when b is shared by every batch and a's batches follow each other at
 * its row stride, the whole batch is one GEMM with m = batch * rows */
static bool foldable(const operand *a, const operand *b, int nb,
                     const int64_t *bshape)
{
    if (a->trans)
        return false;
    int64_t expect = a->ld * a->rows;
    for (int d = nb - 1; d >= 0; d--) {
        if (bshape[d] == 1)
            continue;
        if (b->bstride[d] != 0 || a->bstride[d] != expect)
            return false;
        expect *= bshape[d];
    }
    return true;
}

/* when b is shared by every batch and a's rows over all its batches,
 * taken in some order, are the rows of one contiguous matrix (a's batch
 * and row dims permuted, as attention's [L, N, E] view of a batch-first
 * [N, L, E] input): the number of those rows, else 0. Each row's product
 * does not depend on the others, so they can be multiplied in memory
 * order as one GEMM (gather_rows): one GEMM with m = 512 instead of 64
 * with m = 8 took 0.26 instead of 0.69 ms ([64, 8, 128] @ [128, 384],
 * one thread) */
static int64_t rows_in_memory(const operand *a, const operand *b, int nb,
                              const int64_t *bshape)
{
    int64_t size[TG_MAX_DIMS + 1], stride[TG_MAX_DIMS + 1];
    int n = 0;
    if (a->trans || (a->cols > 1 && a->cs != 1))
        return 0;
    if (a->rows > 1)
        size[n] = a->rows, stride[n++] = a->rs;
    for (int d = 0; d < nb; d++) {
        if (bshape[d] == 1)
            continue;
        if (b->bstride[d] != 0 || a->bstride[d] == 0)
            return 0;
        size[n] = bshape[d], stride[n++] = a->bstride[d];
    }
    for (int i = 1; i < n; i++) /* by stride, smallest first (insertion) */
        for (int j = i; j > 0 && stride[j] < stride[j - 1]; j--) {
            int64_t s = stride[j], z = size[j];
            stride[j] = stride[j - 1], size[j] = size[j - 1];
            stride[j - 1] = s, size[j - 1] = z;
        }
    int64_t expect = a->cols;
    for (int i = 0; i < n; i++) {
        if (stride[i] != expect)
            return 0;
        expect *= size[i];
    }
    return expect / (a->cols > 0 ? a->cols : 1);
}

/* the product of rows_in_memory's case: one GEMM over a's rows in memory
 * order into a scratch matrix, then each output row copied from the row
 * of the input it came from */
static tg_status gather_rows(mm_job *j, int64_t mem_rows, int64_t batch)
{
    const operand *a = j->a, *b = j->b;
    size_t z = tg_dtype_size(j->dt), row = (size_t)j->n * z;
    char *c = malloc((size_t)mem_rows * row + 1);
    if (!c)
        return TG_ERR_NOMEM;
    operand dense = *a; /* the rows as one [mem_rows, k] matrix */
    dense.ld = a->cols;
    tg_status s = float_gemm(j->dt, false, false, mem_rows, j->n, j->k, 1.0, &dense,
                             tg__base(a->t), b, tg__base(b->t), 0.0, c, j->n);
    for (int64_t bi = 0; s == TG_OK && bi < batch; bi++) {
        int64_t off = batch_offset(bi, j->nb, j->bshape, a->bstride);
        for (int64_t r = 0; r < j->m; r++)
            memcpy(j->out + (size_t)(bi * j->m + r) * row,
                   c + (size_t)((off + r * a->rs) / a->cols) * row, row);
    }
    free(c);
    return s;
}

/* rows per matrix below which gather_rows' one GEMM beats a GEMM per
 * batch: [L, B, 128] @ [128, 384] views with B L = 1024, one thread,
 * per-batch against gather: B = 32: 368 against 266 us, 64: 288 against
 * 266, 128: 278 against 267, 256: 258 against 269 */
#define GATHER_ROWS_BELOW 64

static tg_status matmul_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    tg_dtype dt = out->dtype;
    bool is_float = tg_dtype_is_float(dt);
    int nb;
    int64_t bshape[TG_MAX_DIMS];
    matmul_shapes(c->in[0], c->in[1], &nb, bshape);
    operand a = {0}, b = {0};
    tg_status s = TG_ERR_NOMEM;
    if (!operand_init(&a, c->in[0], dt, false, nb, is_float) ||
        !operand_init_tagged(&b, c->in[1], dt, true, nb, is_float))
        goto done;
    int64_t batch = tg__shape_numel(nb, bshape);
    mm_job j = {&a, &b, tg__base(out), dt, nb, bshape, a.rows, b.cols, a.cols, TG_OK};
    if (is_float && batch > 1 && foldable(&a, &b, nb, bshape)) {
        j.m *= batch;
        batch = 1;
    }
    int64_t mem_rows = 0;
    if (is_float && batch > 1 && j.m < GATHER_ROWS_BELOW && j.k > 0 &&
        (mem_rows = rows_in_memory(&a, &b, nb, bshape)) > 0) {
        s = gather_rows(&j, mem_rows, batch);
        goto done;
    }
    /* many matrices: one per thread at a time (each GEMM then serial);
     * fewer matrices than threads: one after another, each GEMM split */
    int64_t work = j.m * j.n * (j.k > 0 ? j.k : 1);
    if (work < 1)
        work = 1; /* empty matrices (m or n 0): the batches still run, each doing nothing */
    if (batch >= 2 && batch >= tg_get_num_threads())
        tg_parallel_for(batch, (TG__GEMM_PAR_WORK + work - 1) / work, mm_batches, &j);
    else
        mm_batches(&j, 0, batch);
    s = j.status;
done:
    tg_release(a.t);
    tg_release(b.t);
    return s;
}

/* dC = dY @ B^T and dB = A^T @ dY, with 1-D operands promoted to matrices
 * and the results summed back over broadcast batch dims */
static tg_status matmul_grad(tg_grad_ctx *g)
{
    tg_tensor *a = g->in[0], *b = g->in[1], *dy = g->dy[0];
    const tg_meta *ma = &g->in_meta[0], *mb = &g->in_meta[1];
    tg_tensor *a2 = ma->ndim == 1 ? tg_unsqueeze(a, 0) : a;
    tg_tensor *b2 = mb->ndim == 1 ? tg_unsqueeze(b, 1) : b;
    if (mb->ndim == 1)
        dy = tg_unsqueeze(dy, -1);
    if (ma->ndim == 1)
        dy = tg_unsqueeze(dy, -2);
    if (g->needs_grad[0]) {
        tg_tensor *da = tg_matmul(dy, tg_transpose(b2, -1, -2));
        if (da && da->ndim > 2)
            da = tg_sum_to(da, a2->ndim, a2->shape);
        g->dx[0] = tg_reshape(da, ma->ndim, ma->shape);
    }
    if (g->needs_grad[1]) {
        tg_tensor *db;
        if (b2->ndim == 2 && a2->ndim > 2 && dy) {
            /* b shared over a's batch: one GEMM over the flattened batch */
            /* -1: unknown batch dims (graph mode), inferred when fed */
            int64_t ra = tg__shape_has_unknown(a2->ndim, a2->shape)
                             ? -1 : tg__shape_numel(a2->ndim - 1, a2->shape);
            int64_t rd = tg__shape_has_unknown(dy->ndim, dy->shape)
                             ? -1 : tg__shape_numel(dy->ndim - 1, dy->shape);
            tg_tensor *af = tg_reshape(a2, 2, (int64_t[]){ra, a2->shape[a2->ndim - 1]});
            tg_tensor *df = tg_reshape(dy, 2, (int64_t[]){rd, dy->shape[dy->ndim - 1]});
            db = tg_matmul(tg_transpose(af, 0, 1), df);
        } else {
            db = tg_matmul(tg_transpose(a2, -1, -2), dy);
            if (db && db->ndim > 2)
                db = tg_sum_to(db, b2->ndim, b2->shape);
        }
        g->dx[1] = tg_reshape(db, mb->ndim, mb->shape);
    }
    return TG_OK;
}

static const tg_arg_spec matmul_in[] = {{"a", TG_DTS_NUMBER}, {"b", TG_DTS_NUMBER}, {0}};
static const tg_arg_spec matmul_out[] = {{"y", TG_DTS_NUMBER}, {0}};

const tg_op_def tg_op_matmul = {
    .name = "matmul", .n_in = 2, .n_out = 1, .inputs = matmul_in, .outputs = matmul_out,
    .flags = TG_OP_PURE, .save_inputs = TG_SAVE_ALL, .infer = matmul_infer,
    .kernel = {[TG_CPU] = matmul_kernel}, .grad = matmul_grad,
    .jvp = tg__jvp_multilinear, .onnx = {"MatMul", 13}};

tg_tensor *tg_matmul(tg_tensor *a, tg_tensor *b)
{
    tg_tensor *in[2] = {a, b};
    return tg_op_call(&tg_op_matmul, 2, in, NULL, 0);
}

/* ---- gemm ---------------------------------------------------------------------- */
/* y = alpha op(a) op(b) + beta c; inputs a, b[, c] */
typedef struct gemm_attrs {
    double alpha, beta;
    bool trans_a, trans_b;
} gemm_attrs;
static const tg_attr_spec gemm_specs[] = {
    TG_SPEC_FLOAT(gemm_attrs, alpha, 1.0), TG_SPEC_FLOAT(gemm_attrs, beta, 1.0),
    TG_SPEC_BOOL(gemm_attrs, trans_a, 0), TG_SPEC_BOOL(gemm_attrs, trans_b, 0), {0}};

static tg_status gemm_infer(tg_op_ctx *c)
{
    if (c->n_in != 2 && c->n_in != 3)
        return tg__error(TG_ERR_ARG, "gemm: expected 2 or 3 inputs (a, b[, c]), "
                         "got %d", c->n_in);
    const tg_tensor *a = c->in[0], *b = c->in[1];
    bool ta = ((const gemm_attrs *)c->attr)->trans_a;
    bool tb = ((const gemm_attrs *)c->attr)->trans_b;
    char sa[160], sb[160], sc[160];
    if (a->ndim != 2 || b->ndim != 2)
        return tg__error(TG_ERR_SHAPE, "gemm: a and b must be 2-D, got %s and %s "
                         "(tg_matmul handles other ranks)",
                         tg_shape_str(a->ndim, a->shape, sa, sizeof sa),
                         tg_shape_str(b->ndim, b->shape, sb, sizeof sb));
    tg_dtype dt = tg_promote_types(a->dtype, b->dtype);
    if (c->n_in == 3)
        dt = tg_promote_types(dt, c->in[2]->dtype);
    for (int i = 0; i < c->n_in; i++)
        if (tg_require_float("gemm", c->in[i], i) != TG_OK)
            return tg_last_status();
    int64_t m = a->shape[ta], k = a->shape[!ta];
    int64_t k2 = b->shape[tb], n = b->shape[!tb];
    if (k != k2)
        return tg__error(TG_ERR_SHAPE, "gemm: op(a) of %s%s has %lld columns but "
                         "op(b) of %s%s has %lld rows",
                         tg_shape_str(2, a->shape, sa, sizeof sa), ta ? "^T" : "",
                         (long long)k, tg_shape_str(2, b->shape, sb, sizeof sb),
                         tb ? "^T" : "", (long long)k2);
    int64_t shape[2] = {m, n};
    if (c->n_in == 3) {
        const tg_tensor *cc = c->in[2];
        bool ok = cc->ndim <= 2;
        for (int i = 0; ok && i < cc->ndim; i++) {
            int64_t want = shape[2 - cc->ndim + i];
            ok = cc->shape[i] == want || cc->shape[i] == 1;
        }
        if (!ok)
            return tg__error(TG_ERR_SHAPE, "gemm: c of shape %s does not "
                             "broadcast to the product's shape %s",
                             tg_shape_str(cc->ndim, cc->shape, sc, sizeof sc),
                             tg_shape_str(2, shape, sa, sizeof sa));
    }
    return tg_infer_set(c, 0, dt, 2, shape);
}

static tg_status gemm_kernel(tg_op_ctx *c)
{
    tg_tensor *out = c->out[0];
    const gemm_attrs *at = c->attr;
    double alpha = at->alpha, beta = at->beta;
    bool ta = at->trans_a, tb = at->trans_b;
    operand a = {0}, b = {0};
    tg_status s = TG_ERR_NOMEM;
    if (!operand_init(&a, c->in[0], out->dtype, false, 0, true) ||
        !operand_init_tagged(&b, c->in[1], out->dtype, true, 0, true))
        goto done;
    if (c->n_in == 3 && beta != 0)
        tg__convert_into(out, c->in[2]); /* broadcasts c; GEMM scales it */
    else
        beta = 0;
    int64_t m = out->shape[0], n = out->shape[1], k = c->in[0]->shape[!ta];
    s = float_gemm(out->dtype, ta, tb, m, n, k, alpha, &a, tg__base(a.t), &b,
                   tg__base(b.t), beta, tg__base(out), n);
done:
    tg_release(a.t);
    tg_release(b.t);
    return s;
}

static tg_tensor *gemm_call(tg_tensor *a, tg_tensor *b, tg_tensor *c,
                            double alpha, double beta, bool ta, bool tb);

/* y = alpha op(A) op(B) + beta C:
 *   d op(A) = alpha dY op(B)^T,  d op(B) = alpha op(A)^T dY,
 * written as gemms on the stored A and B so no transpose is copied */
static tg_status gemm_grad(tg_grad_ctx *g)
{
    tg_tensor *a = g->in[0], *b = g->in[1], *dy = g->dy[0];
    const gemm_attrs *at = g->attr;
    double alpha = at->alpha, beta = at->beta;
    bool ta = at->trans_a, tb = at->trans_b;
    if (g->needs_grad[0])
        g->dx[0] = ta ? gemm_call(b, dy, NULL, alpha, 0, tb, true)
                      : gemm_call(dy, b, NULL, alpha, 0, false, !tb);
    if (g->needs_grad[1])
        g->dx[1] = tb ? gemm_call(dy, a, NULL, alpha, 0, true, ta)
                      : gemm_call(a, dy, NULL, alpha, 0, !ta, false);
    if (g->n_in == 3 && g->needs_grad[2]) {
        const tg_meta *mc = &g->in_meta[2];
        g->dx[2] = tg_sum_to(beta == 1 ? dy : tg_mul_scalar(dy, beta), mc->ndim,
                             mc->shape);
    }
    return TG_OK;
}

/* alpha (op(ta) op(b) + op(a) op(tb)) + beta tc */
static tg_status gemm_jvp(tg_jvp_ctx *c)
{
    const gemm_attrs *at = c->attr;
    tg_tensor *acc = NULL;
    if (c->dx[0])
        TG_JVP_TERM(c, acc, gemm_call(c->dx[0], c->in[1], NULL, at->alpha, 0.0, at->trans_a,
                                      at->trans_b));
    if (c->dx[1])
        TG_JVP_TERM(c, acc, gemm_call(c->in[0], c->dx[1], NULL, at->alpha, 0.0, at->trans_a,
                                      at->trans_b));
    if (c->n_in == 3 && c->dx[2] && at->beta != 0) /* beta 0: c is not read at all */
        TG_JVP_TERM(c, acc, at->beta == 1 ? c->dx[2] : tg_mul_scalar(c->dx[2], at->beta));
    c->dy[0] = acc;
    return TG_OK;
}

static const tg_arg_spec gemm_in[] = {
    {"a", TG_DTS_FLOAT}, {"b", TG_DTS_FLOAT}, {"c", TG_DTS_FLOAT | TG_ARG_OPTIONAL}, {0}};
static const tg_arg_spec gemm_out[] = {{"y", TG_DTS_FLOAT}, {0}};

const tg_op_def tg_op_gemm = {
    .name = "gemm", .n_in = -1, .n_out = 1, .inputs = gemm_in, .outputs = gemm_out,
    .attrs = {gemm_specs, sizeof(gemm_attrs)}, .flags = TG_OP_PURE, .save_inputs = 0x3,
    .infer = gemm_infer, .kernel = {[TG_CPU] = gemm_kernel}, .grad = gemm_grad,
    .jvp = gemm_jvp, .onnx = {"Gemm", 13}};

static tg_tensor *gemm_call(tg_tensor *a, tg_tensor *b, tg_tensor *c,
                            double alpha, double beta, bool ta, bool tb)
{
    tg_tensor *in[3] = {a, b, c};
    tg_attr attrs[4] = {TG_AF("alpha", alpha), TG_AF("beta", beta),
                        TG_AI("trans_a", ta), TG_AI("trans_b", tb)};
    return tg_op_call(&tg_op_gemm, c ? 3 : 2, in, attrs, 4);
}

tg_tensor *tg_gemm(tg_tensor *a, tg_tensor *b, tg_tensor *c, double alpha,
                   double beta, bool trans_a, bool trans_b)
{
    return gemm_call(a, b, c, alpha, beta, trans_a, trans_b);
}

/* linear with a bias of another shape than [out]: PyTorch adds it to the
 * product (addmm's broadcast), so it may be any shape that broadcasts to
 * the product's without changing it ([N, out], [N, 1], a 0-d tensor) */
static tg_tensor *linear_broadcast_bias(tg_tensor *x, tg_tensor *w, tg_tensor *b)
{
    int64_t shape[TG_MAX_DIMS], joint[TG_MAX_DIMS];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
    shape[x->ndim - 1] = w->shape[0];
    int nd;
    if (tg_broadcast_shapes("linear", x->ndim, shape, b->ndim, b->shape, &nd, joint) != TG_OK ||
        !tg__shape_eq(nd, joint, x->ndim, shape)) {
        char sy[160], sb[160];
        return tg__error_null(TG_ERR_SHAPE, "linear: bias %s does not broadcast to the "
                              "output %s", tg_shape_str(b->ndim, b->shape, sb, sizeof sb),
                              tg_shape_str(x->ndim, shape, sy, sizeof sy));
    }
    TG_LOCAL_BEGIN();
    tg_tensor *y = tg_linear(x, w, NULL);
    TG_LOCAL_RETURN(y ? tg_add(y, b) : NULL);
}

/* ---- linear: x [..., in] @ w[out, in]^T + b, as one gemm over the
 * flattened leading dims (a view when x is contiguous) ------------------- */
tg_tensor *tg_linear(tg_tensor *x, tg_tensor *w, tg_tensor *b)
{
    if (!x || !w) {
        if (!tg__error_is_set())
            tg__error(TG_ERR_ARG, "linear: %s is NULL", x ? "weight" : "input");
        return NULL;
    }
    char sx[160], sw[160];
    if (w->ndim != 2)
        return tg__error_null(TG_ERR_SHAPE, "linear: weight must be 2-D "
                              "[out_features, in_features], got %s",
                              tg_shape_str(w->ndim, w->shape, sw, sizeof sw));
    if (x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
        return tg__error_null(TG_ERR_SHAPE, "linear: input %s does not end in "
                              "in_features = %lld (weight %s)",
                              tg_shape_str(x->ndim, x->shape, sx, sizeof sx),
                              (long long)w->shape[1],
                              tg_shape_str(2, w->shape, sw, sizeof sw));
    if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
        return linear_broadcast_bias(x, w, b);
    int64_t in = w->shape[1], outf = w->shape[0];
    int64_t rows = tg__shape_numel(x->ndim - 1, x->shape);
    if (tg__shape_has_unknown(x->ndim, x->shape))
        rows = -1; /* graph mode: the reshape infers it when fed */
    TG_LOCAL_BEGIN();
    tg_tensor *x2 = x->ndim == 2 ? x : tg_reshape(x, 2, (int64_t[]){rows, in});
    tg_tensor *y = gemm_call(x2, w, b, 1.0, 1.0, false, true);
    if (y && x->ndim != 2) {
        int64_t shape[TG_MAX_DIMS];
        memcpy(shape, x->shape, (size_t)(x->ndim - 1) * sizeof *shape);
        shape[x->ndim - 1] = outf;
        y = tg_reshape(y, x->ndim, shape);
    }
    TG_LOCAL_RETURN(y);
}

const tg_op_def *const tg_ops_linalg[] = {&tg_op_matmul, &tg_op_gemm, NULL};
