/* One suite over every op with samples in tests/op_samples.c (PyTorch's
 * OpInfo idea). For each sample, through the op's registered definition:
 *   - gradcheck: the VJP against float64 central finite differences, on
 *     contiguous and strided inputs;
 *   - forward mode against reverse mode (u . Jv == J^T u . v);
 *   - graph mode against eager: outputs and symbolic gradients in
 *     float64 (tests/op_check.h), and outputs in float32, bitwise;
 *   - ONNX export and re-import (both modes), where the op has an ONNX
 *     mapping.
 * Samples flagged OS_STRIDED run the checks again on non-contiguous
 * inputs. A multi-output op is checked on its float outputs flattened and
 * concatenated (ONNX: its first output). */
#include "op_check.h"
#include "op_samples.h"

#include <stdio.h>
#include <string.h>

typedef struct os_call {
    const os_sample *s;
    const tg_op_def *op;
    bool first_only; /* only output 0 (ONNX); else every float output */
} os_call;

static tg_tensor *sample_fn(int n, tg_tensor *const *in, void *user)
{
    const os_call *c = user;
    tg_tensor *out[TG_MAX_OP_OUTPUTS], *parts[TG_MAX_OP_OUTPUTS], *y = NULL;
    TG_LOCAL_BEGIN();
    if (tg_op_run(c->op, n, in, c->s->attrs, c->s->n_attrs, out) == TG_OK) {
        int k = 0;
        for (int o = 0; o < c->op->n_out && !(c->first_only && o > 0); o++)
            if (tg_dtype_is_float(tg_dtype_of(out[o])))
                parts[k++] = tg_reshape(out[o], 1, (int64_t[]){-1});
        y = c->op->n_out == 1 || c->first_only ? out[0] : tg_concat(k, parts, 0);
    }
    TG_LOCAL_RETURN(y);
}

/* the sample's input d: float inputs in fdt (float64 ones take part in
 * gradients when OS_DIFF), strided copies when asked */
static tg_tensor *make_input(const os_input *d, tg_dtype fdt, bool strided)
{
    tg_tensor *x = tt_rand(d->ndim, d->shape, d->lo, d->hi);
    switch (d->kind) {
    case OS_INDEX: return tg_detach(tg_cast(tg_floor(x), TG_INT64));
    case OS_BOOL: return tg_detach(tg_lt(tt_rand(d->ndim, d->shape, 0, 1),
                                         tg_full(TG_FLOAT64, 0, NULL, d->hi)));
    case OS_CONST: x = tg_detach(x); break;
    case OS_DIFF: break;
    }
    if (fdt != TG_FLOAT64)
        x = tg_detach(tg_cast(x, fdt));
    return strided ? tt_strided(x) : x;
}

static void make_inputs(const os_sample *s, tg_dtype fdt, bool strided, tg_tensor **in)
{
    for (int i = 0; i < s->n_in; i++)
        in[i] = make_input(&s->in[i], fdt, strided);
}

/* float32 inputs: the traced graph's output equals the eager one exactly */
static void check_f32_graph(os_call *c, const char *label)
{
    tg_tensor *in[OS_MAX_IN], *ph[OS_MAX_IN], *gy = NULL, *res = NULL;
    make_inputs(c->s, TG_FLOAT32, false, in);
    int n = c->s->n_in;
    tg_tensor *want = sample_fn(n, in, c);
    oc_fn o = {sample_fn, c, n};
    tg_graph *g = tg_graph_new("f32");
    tg_session *sess = NULL;
    tt_checks++;
    tg_status st = tg_graph_trace(g, oc_trace, &o, n, in, NULL, ph, 1, &gy);
    if (st == TG_OK && !(sess = tg_session_new(g)))
        st = tg_last_status();
    if (st == TG_OK)
        st = tg_session_run(sess, n, ph, in, 1, &gy, &res, 0, NULL);
    if (st != TG_OK || !want)
        tt_fail(__FILE__, __LINE__, "%s: float32: %s", label, tg_last_error());
    else if (!(tt_rel_diff(res, want, 1e-30) == 0))
        tt_fail(__FILE__, __LINE__, "%s: float32 graph output differs from eager by %g "
                "(relative)", label, tt_rel_diff(res, want, 1e-30));
    tg_session_free(sess);
    tg_graph_free(g);
}

static void run_sample(const os_sample *s, const tg_op_def *op)
{
    char label[256];
    snprintf(label, sizeof label, "%s (%s)", s->op, s->what);
    os_call c = {s, op, false};
    tg_tensor *in[OS_MAX_IN];
    tg_scope_begin();
    for (int strided = 0; strided <= !!(s->flags & OS_STRIDED); strided++) {
        char what[300];
        snprintf(what, sizeof what, "%s%s", label, strided ? ", strided" : "");
        make_inputs(s, TG_FLOAT64, strided, in);
        oc_check(sample_fn, &c, s->n_in, in, what, __FILE__, __LINE__);
    }
    if (!(s->flags & OS_NO_F32))
        check_f32_graph(&c, label);
    if (op->onnx.op && !(s->flags & OS_NO_ONNX)) {
        os_call first = {s, op, true};
        make_inputs(s, TG_FLOAT64, false, in);
        oc_roundtrip(sample_fn, &first, s->n_in, in, label, __FILE__, __LINE__);
    }
    tg_scope_end();
}

static void test_every_sample(void)
{
    int samples = 0, ops = 0, onnx = 0;
    const char *last = "";
    for (const os_sample *s = os_samples; s->op; s++) {
        const tg_op_def *op = tg_op_find(s->op);
        tt_checks++;
        if (!op) {
            tt_fail(__FILE__, __LINE__, "sample for %s: no such op", s->op);
            continue;
        }
        tg_clear_error();
        run_sample(s, op);
        samples++;
        if (strcmp(last, s->op)) {
            ops++;
            onnx += op->onnx.op != NULL;
        }
        last = s->op;
    }
    printf("  %d samples of %d ops (%d with an ONNX mapping) of %d registered\n", samples,
           ops, onnx, tg_op_count());
}

int main(void)
{
    RUN(test_every_sample);
    return tt_finish();
}
