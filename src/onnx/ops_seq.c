/* ONNX sequences and optionals (docs/ONNX.md, "Sequences and
 * optionals"): a sequence's length is known when the model is built, so
 * every op maps onto tensor ops at known positions; positions must be
 * known then too (in eager builds they are: the values of the run). An
 * optional is its value, or none. */
#include "onnx/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* input i as a sequence (TG_ERR_IO naming the node when it is not one) */
static const onnx_seq *seq_req(onnx_ictx *c, int i, const char *what)
{
    if (i < c->n_in && c->seq_in[i])
        return c->seq_in[i];
    onnx_err(c, TG_ERR_IO, "input %d (%s, '%s') is %s, not a sequence", i, what,
             i < c->n_in ? c->node->input[i] : "", i >= c->n_in || !c->node->input[i][0]
             ? "absent" : c->none_in[i] ? "an optional without a value" : "a tensor");
    return NULL;
}

/* a tensor input where the op takes tensors (not a sequence or none) */
static tg_tensor *tensor_req(onnx_ictx *c, int i, const char *what)
{
    if (i < c->n_in && (c->seq_in[i] || c->none_in[i])) {
        onnx_err(c, TG_ERR_IO, "input %d (%s, '%s') is %s; a tensor is expected", i, what,
                 c->node->input[i], c->seq_in[i] ? "a sequence" : "an optional without a value");
        return NULL;
    }
    return oi_req(c, i, what);
}

/* the value of position input i, in [lo, hi] after adding n to a negative
 * one; *pos = dflt when the input is absent. The value must be known when
 * the model is built (always so eagerly). */
static tg_status position(onnx_ictx *c, int i, int n, int lo, int hi, int dflt, int *pos)
{
    if (i >= c->n_in || !c->node->input[i][0]) {
        *pos = dflt;
        return TG_OK;
    }
    tg_tensor *p = tensor_req(c, i, "position");
    if (!p)
        return tg_last_status();
    if (tg_dtype_of(p) != TG_INT64 && tg_dtype_of(p) != TG_INT32)
        return onnx_err(c, TG_ERR_IO, "the position ('%s') must be int32 or int64, is %s",
                        c->node->input[i], tg_dtype_name(tg_dtype_of(p)));
    if (tg_numel(p) != 1)
        return onnx_err(c, TG_ERR_IO, "the position ('%s') must have one element, has %lld",
                        c->node->input[i], (long long)tg_numel(p));
    tg_tensor *v = c->val[i] ? c->val[i] : !tg_is_symbolic(p) ? p : NULL;
    if (!v || tg_is_symbolic(v))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "the position ('%s') is known only when the "
                        "model runs: in a graph, sequences need positions known when the "
                        "model is built (a constant, or a given input)", c->node->input[i]);
    int64_t at;
    tg_status s = tg_copy_to(v, TG_INT64, &at);
    if (s != TG_OK)
        return s;
    int64_t norm = at < 0 ? at + n : at;
    if (norm < lo || norm > hi)
        return onnx_err(c, TG_ERR_IO, "position %lld is out of range for a sequence of %d "
                        "tensors (%d to %d)", (long long)at, n, lo - n, hi);
    *pos = (int)norm;
    return TG_OK;
}

static tg_status out_seq(onnx_ictx *c, int j, onnx_seq *q)
{
    if (!q)
        return tg_last_status();
    c->seq_out[j] = q;
    return TG_OK;
}

/* ---- SequenceEmpty, SequenceConstruct, SequenceLength -------------------------------- */
static tg_status x_seq_empty(onnx_ictx *c)
{
    int64_t type;
    tg_status s = oa_int(c, "dtype", 1 /* FLOAT */, &type);
    tg_dtype dt;
    if (s == TG_OK && (type < 0 || type > INT32_MAX ||
                       onnx_storage_dtype((int32_t)type, &dt) != TG_OK))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "dtype %lld (%s) is not supported",
                        (long long)type, onnx_data_type_name((int32_t)type));
    return s == TG_OK ? out_seq(c, 0, onnx_seq_new(dt)) : s;
}

static tg_status x_seq_construct(onnx_ictx *c)
{
    tg_tensor *first = tensor_req(c, 0, "inputs");
    if (!first)
        return tg_last_status();
    onnx_seq *q = onnx_seq_new(tg_dtype_of(first));
    tg_status s = q ? TG_OK : tg_last_status();
    for (int j = 0; s == TG_OK && j < c->n_in; j++) {
        tg_tensor *t = tensor_req(c, j, "inputs");
        if (t && tg_dtype_of(t) != q->dtype)
            s = onnx_err(c, TG_ERR_IO, "input %d ('%s') is %s; input 0 is %s: a sequence "
                         "holds tensors of one dtype", j, c->node->input[j],
                         tg_dtype_name(tg_dtype_of(t)), tg_dtype_name(q->dtype));
        else
            s = t ? onnx_seq_push(q, t) : tg_last_status();
    }
    if (s != TG_OK) {
        onnx_seq_free(q);
        return s;
    }
    return out_seq(c, 0, q);
}

static tg_status x_seq_length(onnx_ictx *c)
{
    const onnx_seq *q = seq_req(c, 0, "input_sequence");
    if (!q)
        return tg_last_status();
    c->out[0] = tg_scalar(TG_INT64, q->n);
    c->out_known[0] = true; /* the length is fixed when the model is built */
    return c->out[0] ? TG_OK : tg_last_status();
}

/* ---- SequenceAt, SequenceInsert, SequenceErase ------------------------------------ */
static tg_status x_seq_at(onnx_ictx *c)
{
    const onnx_seq *q = seq_req(c, 0, "input_sequence");
    int pos = 0;
    tg_status s = q ? position(c, 1, q->n, 0, q->n - 1, 0, &pos) : tg_last_status();
    if (s == TG_OK && !c->node->input[1][0])
        s = onnx_err(c, TG_ERR_IO, "input 1 (position) is required");
    if (s != TG_OK)
        return s;
    c->out[0] = q->elem[pos];
    c->out_known[0] = q->known;
    return TG_OK;
}

static tg_status x_seq_insert(onnx_ictx *c)
{
    const onnx_seq *q = seq_req(c, 0, "input_sequence");
    tg_tensor *t = q ? tensor_req(c, 1, "tensor") : NULL;
    int pos = 0;
    tg_status s = t ? position(c, 2, q->n, 0, q->n, q->n, &pos) : tg_last_status();
    if (s != TG_OK)
        return s;
    if (tg_dtype_of(t) != q->dtype)
        return onnx_err(c, TG_ERR_IO, "the tensor ('%s') is %s; the sequence holds %s tensors",
                        c->node->input[1], tg_dtype_name(tg_dtype_of(t)),
                        tg_dtype_name(q->dtype));
    onnx_seq *r = onnx_seq_copy(q);
    s = r ? onnx_seq_insert(r, pos, t) : tg_last_status();
    if (s != TG_OK) {
        onnx_seq_free(r);
        return onnx_err(c, s, "%s", tg_last_error());
    }
    return out_seq(c, 0, r);
}

static tg_status x_seq_erase(onnx_ictx *c)
{
    const onnx_seq *q = seq_req(c, 0, "input_sequence");
    if (!q)
        return tg_last_status();
    if (!q->n)
        return onnx_err(c, TG_ERR_IO, "the sequence ('%s') is empty: nothing to erase",
                        c->node->input[0]);
    int pos = 0;
    tg_status s = position(c, 1, q->n, 0, q->n - 1, q->n - 1, &pos);
    if (s != TG_OK)
        return s;
    onnx_seq *r = onnx_seq_new(q->dtype);
    for (int k = 0; r && s == TG_OK && k < q->n; k++)
        if (k != pos)
            s = onnx_seq_push(r, q->elem[k]);
    if (s != TG_OK) {
        onnx_seq_free(r);
        return s;
    }
    return out_seq(c, 0, r);
}

/* ---- SplitToSequence, ConcatFromSequence --------------------------------------------- */
static tg_status x_split_to_seq(onnx_ictx *c)
{
    tg_tensor *x = tensor_req(c, 0, "input");
    if (!x)
        return tg_last_status();
    int64_t axis_attr, keepdims;
    tg_status s = oa_int(c, "axis", 0, &axis_attr);
    if (s == TG_OK)
        s = oa_int(c, "keepdims", 1, &keepdims);
    int axis;
    if (s == TG_OK && tg_ndim(x) == 0)
        s = onnx_err(c, TG_ERR_IO, "the input is a scalar: there is no axis to split");
    if (s == TG_OK)
        s = onnx_axis(c, axis_attr, tg_ndim(x), "axis", &axis);
    if (s != TG_OK)
        return s;
    int64_t len = tg_shape(x)[axis], *sizes = NULL, n = 0, chunk = 1;
    bool has_split = c->n_in > 1 && c->node->input[1][0];
    if (len < 0)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "the split axis %d has an unknown length: the "
                        "sequence's length must be known when the model is built", axis);
    if (has_split) {
        tg_tensor *sp = tensor_req(c, 1, "split");
        if (!sp)
            return tg_last_status();
        s = oi_ints(c, 1, "split", &sizes, &n);
        if (s != TG_OK)
            return s;
        if (tg_ndim(sp) == 0) { /* chunks of that length, the last one shorter */
            chunk = sizes[0];
            if (chunk < 1)
                return onnx_err(c, TG_ERR_IO, "split is %lld; a chunk length must be "
                                "positive", (long long)chunk);
            sizes = NULL;
        } else if (tg_ndim(sp) != 1) {
            return onnx_err(c, TG_ERR_IO, "split must be a scalar or 1-D, has %d dims",
                            tg_ndim(sp));
        } else {
            int64_t sum = 0;
            for (int64_t k = 0; k < n; k++) {
                if (sizes[k] < 0)
                    return onnx_err(c, TG_ERR_IO, "split[%lld] is negative (%lld)",
                                    (long long)k, (long long)sizes[k]);
                sum += sizes[k];
            }
            if (sum != len)
                return onnx_err(c, TG_ERR_IO, "the split sizes add up to %lld; axis %d has "
                                "length %lld", (long long)sum, axis, (long long)len);
        }
    }
    int64_t count = sizes ? n : (len + chunk - 1) / chunk;
    if (count > ONNX_MAX_SEQ)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "the split gives %lld tensors (at most %d)",
                        (long long)count, ONNX_MAX_SEQ);
    onnx_seq *q = onnx_seq_new(tg_dtype_of(x));
    s = q ? TG_OK : tg_last_status();
    for (int64_t k = 0, at = 0; s == TG_OK && k < count; k++) {
        int64_t size = sizes ? sizes[k] : (len - at < chunk ? len - at : chunk);
        tg_tensor *part = tg_slice(x, axis, at, at + size, 1);
        /* without split, keepdims 0 drops the axis (each part has length 1) */
        if (part && !has_split && !keepdims)
            part = tg_squeeze(part, axis);
        s = part ? onnx_seq_push(q, part) : tg_last_status();
        at += size;
    }
    if (s != TG_OK) {
        onnx_seq_free(q);
        return s;
    }
    return out_seq(c, 0, q);
}

static tg_status x_concat_from_seq(onnx_ictx *c)
{
    const onnx_seq *q = seq_req(c, 0, "input_sequence");
    if (!q)
        return tg_last_status();
    int64_t axis_attr, new_axis;
    tg_status s = oa_int(c, "new_axis", 0, &new_axis);
    if (s != TG_OK)
        return s;
    if (!onnx_attr(c, "axis"))
        return onnx_err(c, TG_ERR_IO, "the attribute 'axis' is required");
    s = oa_int(c, "axis", 0, &axis_attr);
    if (s == TG_OK && !q->n)
        s = onnx_err(c, TG_ERR_IO, "the sequence ('%s') is empty: nothing to concatenate",
                     c->node->input[0]);
    if (s == TG_OK && new_axis != 0 && new_axis != 1)
        s = onnx_err(c, TG_ERR_IO, "new_axis must be 0 or 1, is %lld", (long long)new_axis);
    int r = q->n ? tg_ndim(q->elem[0]) : 0, axis;
    if (s == TG_OK)
        s = onnx_axis(c, axis_attr, r + (int)new_axis, "axis", &axis);
    for (int k = 1; s == TG_OK && k < q->n; k++)
        if (tg_ndim(q->elem[k]) != r)
            s = onnx_err(c, TG_ERR_IO, "element %d has %d dims, element 0 has %d", k,
                         tg_ndim(q->elem[k]), r);
    if (s != TG_OK)
        return s;
    c->out[0] = new_axis ? tg_stack(q->n, q->elem, axis) : tg_concat(q->n, q->elem, axis);
    c->out_known[0] = q->known;
    return c->out[0] ? TG_OK : tg_last_status();
}

/* ---- SequenceMap ----------------------------------------------------------------------
 * The body built once per position on the sequences' elements at that
 * position and the tensor inputs as they are; output k of the node is
 * the sequence of the body's output k. */
static tg_status x_seq_map(onnx_ictx *c)
{
    const onnx_seq *first = seq_req(c, 0, "input_sequence");
    if (!first)
        return tg_last_status();
    int n_body_out = onnx_body_outputs(c, "body");
    if (n_body_out < 0)
        return onnx_err(c, TG_ERR_IO, "the graph attribute 'body' is required");
    if (n_body_out != c->n_out)
        return onnx_err(c, TG_ERR_IO, "the body has %d outputs; the node has %d", n_body_out,
                        c->n_out);
    int len = first->n;
    for (int j = 0; j < c->n_in; j++) {
        if (c->seq_in[j] && c->seq_in[j]->n != len)
            return onnx_err(c, TG_ERR_IO, "input %d ('%s') has %d tensors, input 0 has %d: "
                            "the sequences must have one length", j, c->node->input[j],
                            c->seq_in[j]->n, len);
        if (!c->seq_in[j] && !tensor_req(c, j, "additional_inputs"))
            return tg_last_status();
    }
    tg_status s = TG_OK;
    for (int k = 0; s == TG_OK && k < c->n_out; k++) {
        c->seq_out[k] = onnx_seq_new(TG_FLOAT32);
        s = c->seq_out[k] ? TG_OK : tg_last_status();
    }
    for (int p = 0; s == TG_OK && p < len; p++) {
        tg_tensor *formal[ONNX_MAX_IO], *res[ONNX_MAX_IO] = {0};
        for (int j = 0; j < c->n_in; j++)
            formal[j] = c->seq_in[j] ? c->seq_in[j]->elem[p] : c->in[j];
        int n;
        tg_scope_begin();
        s = onnx_build_body(c, "body", c->n_in, formal, ONNX_MAX_IO, res, &n);
        for (int k = 0; s == TG_OK && k < c->n_out; k++) {
            if (p == 0)
                c->seq_out[k]->dtype = tg_dtype_of(res[k]);
            s = onnx_seq_push(c->seq_out[k], res[k]);
        }
        tg_scope_end();
        if (s != TG_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", tg_last_error());
            s = onnx_err(c, s, "position %d: %s", p, msg);
        }
    }
    /* an empty sequence maps to empty sequences; their dtype is what the
     * body declares, when it does */
    return s;
}

/* ---- Optional, OptionalHasElement, OptionalGetElement, Identity -------------------------- */
/* result 0 is input 0 as it is: a tensor, a sequence (copied) or none */
static tg_status pass_through(onnx_ictx *c)
{
    if (c->none_in[0]) {
        c->none_out[0] = true;
        return TG_OK;
    }
    if (c->seq_in[0])
        return out_seq(c, 0, onnx_seq_copy(c->seq_in[0]));
    c->out[0] = oi_req(c, 0, "input");
    return c->out[0] ? TG_OK : tg_last_status();
}

static tg_status x_optional(onnx_ictx *c)
{
    if (c->n_in < 1 || !c->node->input[0][0]) {
        if (!onnx_attr(c, "type"))
            return onnx_err(c, TG_ERR_IO, "an Optional without input needs the attribute "
                            "'type'");
        c->none_out[0] = true;
        return TG_OK;
    }
    return pass_through(c);
}

static tg_status x_optional_has(onnx_ictx *c)
{
    bool has = c->n_in > 0 && c->node->input[0][0] && !c->none_in[0];
    c->out[0] = tg_scalar(TG_BOOL, has);
    c->out_known[0] = true; /* whether a value is there is known when building */
    return c->out[0] ? TG_OK : tg_last_status();
}

static tg_status x_optional_get(onnx_ictx *c)
{
    if (c->none_in[0])
        return onnx_err(c, TG_ERR_IO, "the optional input '%s' has no value",
                        c->node->input[0]);
    return pass_through(c);
}

tg_status onnx_identity_any(onnx_ictx *c) { return pass_through(c); }

#define SEQ_OP ONNX_OP_SEQ
const onnx_op_entry onnx_ops_seq[] = {
    {"SequenceEmpty", {11}, 0, 0, 1, 1, x_seq_empty, SEQ_OP},
    {"SequenceConstruct", {11}, 1, -1, 1, 1, x_seq_construct, SEQ_OP},
    {"SequenceLength", {11}, 1, 1, 1, 1, x_seq_length, SEQ_OP},
    {"SequenceAt", {11}, 2, 2, 1, 1, x_seq_at, SEQ_OP},
    {"SequenceInsert", {11}, 2, 3, 1, 1, x_seq_insert, SEQ_OP},
    {"SequenceErase", {11}, 1, 2, 1, 1, x_seq_erase, SEQ_OP},
    {"SplitToSequence", {11}, 1, 2, 1, 1, x_split_to_seq, SEQ_OP},
    {"ConcatFromSequence", {11}, 1, 1, 1, 1, x_concat_from_seq, SEQ_OP},
    {"SequenceMap", {17}, 1, -1, 1, ONNX_MAX_IO, x_seq_map, SEQ_OP},
    {"Optional", {15}, 0, 1, 1, 1, x_optional, SEQ_OP},
    {"OptionalHasElement", {15}, 1, 1, 1, 1, x_optional_has, SEQ_OP},
    {"OptionalGetElement", {15}, 1, 1, 1, 1, x_optional_get, SEQ_OP},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
