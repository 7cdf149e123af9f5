/* ONNX ops: LSTM, GRU, RNN (versions 7 and 14; GRU-3 and the version-1
 * forms import as 7). This file reads and checks the node (attributes,
 * the shapes of W, R, B, P, initial states, sequence_lens), lays the
 * weights out per direction and assembles Y, Y_h, Y_c; ops_rnn_cell.c
 * unrolls the cells over the sequence. Layout 1 (version 14) is handled by
 * transposing X and the states to layout 0 and the outputs back. */
#include "onnx/ops_rnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- activations ------------------------------------------------------------------ */
static const struct {
    const char *name;
    rnn_act_kind kind;
    bool takes_alpha, takes_beta;
    double alpha, beta; /* defaults: those of the ONNX operator of that name */
} act_table[] = {
    {"Relu", ACT_RELU, false, false, 0, 0},
    {"Tanh", ACT_TANH, false, false, 0, 0},
    {"Sigmoid", ACT_SIGMOID, false, false, 0, 0},
    {"Affine", ACT_AFFINE, true, true, 1.0, 0.0},
    {"LeakyRelu", ACT_LEAKY_RELU, true, false, 0.01, 0},
    {"ThresholdedRelu", ACT_THRESHOLDED_RELU, true, false, 1.0, 0},
    {"ScaledTanh", ACT_SCALED_TANH, true, true, 1.0, 1.0},
    {"HardSigmoid", ACT_HARD_SIGMOID, true, true, 0.2, 0.5},
    {"Elu", ACT_ELU, true, false, 1.0, 0},
    {"Softsign", ACT_SOFTSIGN, false, false, 0, 0},
    {"Softplus", ACT_SOFTPLUS, false, false, 0, 0},
};

static const char *const default_acts[3][3] = {
    {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};

/* the act_table entry of activation j: its name (b), or dflt when the
 * attribute is absent */
static tg_status act_entry(onnx_ictx *c, const onnx_bytes *b, const char *dflt, int j,
                           size_t *e)
{
    char name[32] = {0};
    if (b && (b->len >= sizeof name || (b->len && memchr(b->data, 0, b->len))))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "activation %d is not a known name", j);
    if (b && b->len)
        memcpy(name, b->data, b->len);
    else if (!b)
        snprintf(name, sizeof name, "%s", dflt ? dflt : "");
    size_t ne = sizeof act_table / sizeof act_table[0];
    *e = 0;
    while (*e < ne && strcasecmp(act_table[*e].name, name))
        ++*e;
    if (*e == ne)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "activation '%s' is not supported (Relu, Tanh, "
                        "Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, "
                        "Elu, Softsign, Softplus are)", name);
    return TG_OK;
}

/* the activations attribute (names, case as onnxruntime: any) with
 * activation_alpha/beta consumed in order by the activations that take
 * them; one direction's list serves both of a bidirectional node */
static tg_status read_activations(onnx_ictx *c, rnn_spec *sp)
{
    const onnx_attribute *a = onnx_attr(c, "activations");
    if (a && a->type != ONNX_ATTR_STRINGS && a->type != ONNX_ATTR_UNDEFINED)
        return onnx_err(c, TG_ERR_IO, "attribute 'activations' should be STRINGS");
    int n = a ? (int)(a->n_strings > 64 ? 64 : a->n_strings) : 0;
    if (a && (size_t)n != a->n_strings)
        return onnx_err(c, TG_ERR_IO, "attribute 'activations' has %zu names", a->n_strings);
    if (n && n != sp->n_act * sp->dirs && !(sp->dirs == 2 && n == sp->n_act))
        return onnx_err(c, TG_ERR_IO, "activations has %d names; %s takes %d per direction "
                        "(%d directions)", n, c->node->op_type, sp->n_act, sp->dirs);
    const float *alpha, *beta;
    int n_alpha, n_beta, ia = 0, ib = 0;
    tg_status s = oa_floats(c, "activation_alpha", &alpha, &n_alpha);
    if (s == TG_OK)
        s = oa_floats(c, "activation_beta", &beta, &n_beta);
    if (s != TG_OK)
        return s;
    int listed = n ? n : sp->n_act;
    for (int j = 0; j < listed; j++) {
        size_t e;
        if (n)
            s = act_entry(c, &a->strings[j], NULL, j, &e);
        else
            s = act_entry(c, NULL, default_acts[sp->n_act - 1][j], j, &e);
        if (s != TG_OK)
            return s;
        rnn_act *act = &sp->act[j / sp->n_act][j % sp->n_act];
        act->kind = act_table[e].kind;
        act->alpha = act_table[e].alpha;
        act->beta = act_table[e].beta;
        if (act_table[e].takes_alpha && ia < n_alpha)
            act->alpha = alpha[ia++];
        if (act_table[e].takes_beta && ib < n_beta)
            act->beta = beta[ib++];
    }
    if (sp->dirs == 2 && listed == sp->n_act) /* one list for both directions */
        memcpy(sp->act[1], sp->act[0], sizeof sp->act[0]);
    return TG_OK;
}

/* ---- attributes and shapes ------------------------------------------------------------ */
static tg_status read_attributes(onnx_ictx *c, rnn_spec *sp)
{
    const char *dir;
    int64_t hidden = -1, layout = 0, flag = 0;
    tg_status s = oa_string(c, "direction", "forward", &dir);
    if (s == TG_OK)
        s = oa_int(c, "hidden_size", -1, &hidden);
    if (s == TG_OK)
        s = oa_int(c, "layout", 0, &layout);
    if (s == TG_OK)
        s = oa_float(c, "clip", 0.0, &sp->clip);
    if (s != TG_OK)
        return s;
    if (!strcmp(dir, "forward") || !strcmp(dir, "reverse")) {
        sp->dirs = 1;
        sp->reverse = dir[0] == 'r';
    } else if (!strcmp(dir, "bidirectional")) {
        sp->dirs = 2;
    } else {
        return onnx_err(c, TG_ERR_IO, "direction '%s' should be forward, reverse or "
                        "bidirectional", dir);
    }
    if (layout != 0 && layout != 1)
        return onnx_err(c, TG_ERR_IO, "layout %lld should be 0 or 1", (long long)layout);
    if (layout == 1 && c->version < 14)
        return onnx_err(c, TG_ERR_IO, "attribute layout exists from version 14 (this node "
                        "is version %d)", c->version);
    sp->layout_batch_first = layout == 1;
    sp->has_clip = onnx_attr(c, "clip") != NULL;
    if (sp->has_clip && !(sp->clip > 0))
        return onnx_err(c, TG_ERR_IO, "clip %g should be positive", sp->clip);
    sp->hidden = hidden;
    if (sp->kind == RNN_LSTM && (s = oa_int(c, "input_forget", 0, &flag)) != TG_OK)
        return s;
    sp->input_forget = flag != 0;
    if (sp->kind == RNN_GRU && (s = oa_int(c, "linear_before_reset", 0, &flag)) != TG_OK)
        return s;
    sp->linear_before_reset = sp->kind == RNN_GRU && flag != 0;
    return read_activations(c, sp);
}

/* t has rank n and the given dims */
static tg_status check_shape(onnx_ictx *c, tg_tensor *t, const char *what, int n,
                             const int64_t *dims)
{
    bool ok = tg_ndim(t) == n;
    for (int i = 0; ok && i < n; i++)
        ok = tg_shape(t)[i] == dims[i];
    if (ok)
        return TG_OK;
    char want[160] = "", got[160] = "";
    for (int i = 0; i < n; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? ", " : "",
                 (long long)dims[i]);
    for (int i = 0; i < tg_ndim(t); i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? ", " : "",
                 (long long)tg_shape(t)[i]);
    return onnx_err(c, TG_ERR_IO, "%s should be [%s], is [%s]", what, want, got);
}

/* a float input of X's dtype (ONNX's T), or NULL when absent */
static tg_status opt_float_input(onnx_ictx *c, const rnn_spec *sp, int i, const char *what,
                                 tg_tensor **out)
{
    *out = i < c->n_in ? c->in[i] : NULL;
    if (*out && tg_dtype_of(*out) != sp->dt)
        return onnx_err(c, TG_ERR_IO, "%s is %s; it should have X's type %s", what,
                        tg_dtype_name(tg_dtype_of(*out)), tg_dtype_name(sp->dt));
    return TG_OK;
}

/* X, hidden_size against W and R, and the sizes of the unrolled node */
static tg_status read_sizes(onnx_ictx *c, rnn_spec *sp, tg_tensor *x, tg_tensor *w,
                            tg_tensor *r)
{
    sp->dt = tg_dtype_of(x);
    if (sp->dt != TG_FLOAT32 && sp->dt != TG_FLOAT64)
        return onnx_err(c, TG_ERR_IO, "X is %s; float32 and float64 are supported",
                        tg_dtype_name(sp->dt));
    if (tg_ndim(x) != 3)
        return onnx_err(c, TG_ERR_IO, "X should be [%s, input_size], has rank %d",
                        sp->layout_batch_first ? "batch, seq" : "seq, batch", tg_ndim(x));
    for (int i = 0; i < 3; i++)
        if (tg_shape(x)[i] < 0)
            return onnx_err(c, TG_ERR_UNSUPPORTED, "X's dim %d is not known: the node is "
                            "unrolled over a sequence of known length and batch", i);
    sp->seq = tg_shape(x)[sp->layout_batch_first ? 1 : 0];
    sp->batch = tg_shape(x)[sp->layout_batch_first ? 0 : 1];
    sp->input = tg_shape(x)[2];
    if (sp->seq > ONNX_RNN_MAX_STEPS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "a sequence of %lld steps; at most %d are "
                        "unrolled", (long long)sp->seq, ONNX_RNN_MAX_STEPS);
    if (tg_ndim(r) != 3)
        return onnx_err(c, TG_ERR_IO, "R should be [num_directions, %d*hidden_size, "
                        "hidden_size], has rank %d", sp->gates, tg_ndim(r));
    if (sp->hidden < 0 && !onnx_attr(c, "hidden_size"))
        sp->hidden = tg_shape(r)[2]; /* optional in the schema: R says it */
    if (sp->hidden < 1 || sp->hidden > ONNX_IMPORT_MAX_ELEMENTS)
        return onnx_err(c, TG_ERR_IO, "hidden_size %lld should be in [1, 2^28]",
                        (long long)sp->hidden);
    int64_t gh = sp->gates * sp->hidden;
    tg_status s = check_shape(c, w, "W", 3, (int64_t[]){sp->dirs, gh, sp->input});
    if (s == TG_OK)
        s = check_shape(c, r, "R", 3, (int64_t[]){sp->dirs, gh, sp->hidden});
    if (s == TG_OK)
        s = onnx_check_numel(c, 4, (int64_t[]){sp->seq, sp->dirs, sp->batch, sp->hidden},
                             "Y");
    if (s == TG_OK)
        s = onnx_check_numel(c, 3, (int64_t[]){sp->seq, sp->batch, gh},
                             "the input projection");
    return s;
}

/* an initial state: [dirs, batch, H] (layout 1: [batch, dirs, H]) as
 * [dirs, batch, H], or NULL when absent */
static tg_status read_state(onnx_ictx *c, const rnn_spec *sp, int i, const char *what,
                            tg_tensor **out)
{
    tg_status s = opt_float_input(c, sp, i, what, out);
    if (s != TG_OK || !*out)
        return s;
    int64_t d0 = sp->layout_batch_first ? sp->batch : sp->dirs;
    int64_t d1 = sp->layout_batch_first ? sp->dirs : sp->batch;
    s = check_shape(c, *out, what, 3, (int64_t[]){d0, d1, sp->hidden});
    if (s == TG_OK && sp->layout_batch_first)
        *out = tg_transpose(*out, 0, 1);
    return s == TG_OK && !*out ? tg_last_status() : s;
}

/* per step, [batch, 1]: t < sequence_lens[b]; *masks NULL when every row
 * has the full length (known lengths) */
static tg_status read_lengths(onnx_ictx *c, const rnn_spec *sp, tg_tensor ***masks)
{
    *masks = NULL;
    tg_tensor *lens = c->n_in > 4 ? c->in[4] : NULL;
    if (!lens)
        return TG_OK;
    tg_dtype ldt = tg_dtype_of(lens);
    if (ldt != TG_INT32 && ldt != TG_INT64)
        return onnx_err(c, TG_ERR_IO, "sequence_lens is %s; it should be int32",
                        tg_dtype_name(ldt));
    tg_status s = check_shape(c, lens, "sequence_lens", 1, (int64_t[]){sp->batch});
    if (s != TG_OK)
        return s;
    bool known = c->val[4] && !tg_is_symbolic(c->val[4]);
    if (known) { /* checked; full lengths need no masks */
        int64_t *v = onnx_tmp_alloc(c, (size_t)sp->batch * sizeof *v);
        if (!v || (s = tg_copy_to(c->val[4], TG_INT64, v)) != TG_OK)
            return v ? s : tg_last_status();
        bool full = true;
        for (int64_t b = 0; b < sp->batch; b++) {
            if (v[b] < 0 || v[b] > sp->seq)
                return onnx_err(c, TG_ERR_IO, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                                (long long)b, (long long)v[b], (long long)sp->seq);
            full = full && v[b] == sp->seq;
        }
        if (full)
            return TG_OK;
        lens = c->val[4];
    }
    tg_tensor **m = onnx_tmp_alloc(c, (size_t)(sp->seq ? sp->seq : 1) * sizeof *m);
    if (!m)
        return tg_last_status();
    int tok = known ? onnx_eager_begin() : 0; /* known lengths: constant masks */
    tg_tensor *lf = tg_reshape(tg_cast(lens, sp->dt), 2, (int64_t[]){sp->batch, 1});
    for (int64_t t = 0; t < sp->seq; t++)
        m[t] = tg_gt(lf, tg_scalar(sp->dt, (double)t));
    if (known)
        onnx_eager_end(tok);
    for (int64_t t = 0; t < sp->seq; t++)
        if (!m[t])
            return tg_last_status();
    *masks = m;
    return TG_OK;
}

/* row d of a [dirs, ...] tensor as the given shape */
static tg_tensor *dir_row(tg_tensor *t, int d, int n, const int64_t *shape)
{
    return t ? tg_reshape(tg_slice(t, 0, d, d + 1, 1), n, shape) : NULL;
}

/* the bias of the input projection: Wb + Rb, except GRU's recurrent h-gate
 * bias with linear_before_reset, which is applied inside the reset (rbh) */
static void dir_bias(const rnn_spec *sp, tg_tensor *b, int d, rnn_dir_in *in)
{
    int64_t H = sp->hidden, gh = sp->gates * H;
    tg_tensor *row = dir_row(b, d, 1, (int64_t[]){2 * gh});
    tg_tensor *wb = tg_slice(row, 0, 0, gh, 1), *rb = tg_slice(row, 0, gh, 2 * gh, 1);
    if (!sp->linear_before_reset) {
        in->proj_bias = tg_add(wb, rb);
        return;
    }
    tg_tensor *zr = tg_add(tg_slice(wb, 0, 0, 2 * H, 1), tg_slice(rb, 0, 0, 2 * H, 1));
    in->proj_bias = tg_concat(2, (tg_tensor *[]){zr, tg_slice(wb, 0, 2 * H, 3 * H, 1)}, 0);
    in->rbh = tg_slice(rb, 0, 2 * H, 3 * H, 1);
}

typedef struct rnn_inputs {
    tg_tensor *x, *w, *r, *b, *h0, *c0, *p;
    tg_tensor **masks;
} rnn_inputs;

/* the node's inputs, checked, X and the states in layout 0 */
static tg_status read_inputs(onnx_ictx *c, rnn_spec *sp, rnn_inputs *io)
{
    io->x = oi_req(c, 0, "X");
    io->w = io->x ? oi_req(c, 1, "W") : NULL;
    io->r = io->w ? oi_req(c, 2, "R") : NULL;
    if (!io->r)
        return tg_last_status();
    tg_status s = read_attributes(c, sp);
    if (s == TG_OK)
        s = read_sizes(c, sp, io->x, io->w, io->r);
    if (s == TG_OK)
        s = opt_float_input(c, sp, 1, "W", &io->w);
    if (s == TG_OK)
        s = opt_float_input(c, sp, 2, "R", &io->r);
    if (s == TG_OK)
        s = opt_float_input(c, sp, 3, "B", &io->b);
    if (s == TG_OK && io->b)
        s = check_shape(c, io->b, "B", 2, (int64_t[]){sp->dirs, 2 * sp->gates * sp->hidden});
    if (s == TG_OK)
        s = read_lengths(c, sp, &io->masks);
    if (s == TG_OK)
        s = read_state(c, sp, 5, "initial_h", &io->h0);
    if (s == TG_OK && sp->kind == RNN_LSTM)
        s = read_state(c, sp, 6, "initial_c", &io->c0);
    if (s == TG_OK && sp->kind == RNN_LSTM)
        s = opt_float_input(c, sp, 7, "P", &io->p);
    if (s == TG_OK && io->p)
        s = check_shape(c, io->p, "P", 2, (int64_t[]){sp->dirs, 3 * sp->hidden});
    if (s == TG_OK && sp->layout_batch_first && !(io->x = tg_transpose(io->x, 0, 1)))
        s = tg_last_status();
    return s;
}

/* the inputs of direction d; absent initial states are zeros */
static tg_status dir_inputs(const rnn_spec *sp, const rnn_inputs *io, int d, rnn_dir_in *in)
{
    int64_t H = sp->hidden, gh = sp->gates * H, bh[2] = {sp->batch, H};
    memset(in, 0, sizeof *in);
    in->w = dir_row(io->w, d, 2, (int64_t[]){gh, sp->input});
    in->r = dir_row(io->r, d, 2, (int64_t[]){gh, H});
    if (io->b)
        dir_bias(sp, io->b, d, in);
    in->p = dir_row(io->p, d, 1, (int64_t[]){3 * H});
    int tok = onnx_eager_begin();
    in->h0 = io->h0 ? NULL : tg_zeros(sp->dt, 2, bh);
    in->c0 = io->c0 || sp->kind != RNN_LSTM ? NULL : tg_zeros(sp->dt, 2, bh);
    onnx_eager_end(tok);
    if (io->h0)
        in->h0 = dir_row(io->h0, d, 2, bh);
    if (io->c0)
        in->c0 = dir_row(io->c0, d, 2, bh);
    bool ok = in->w && in->r && in->h0 && (!io->b || (in->proj_bias && (in->rbh ||
              !sp->linear_before_reset))) && (!io->p || in->p) &&
              (sp->kind != RNN_LSTM || in->c0);
    return ok ? TG_OK : tg_last_status();
}

static bool wanted(const onnx_ictx *c, int j)
{
    return j < c->n_out && c->node->output[j] && c->node->output[j][0];
}

/* Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]) from the
 * per-direction steps ys[d * seq + t] */
static tg_tensor *assemble_y(const rnn_spec *sp, tg_tensor **ys)
{
    int64_t seq = sp->seq;
    tg_tensor *y;
    if (seq == 0) {
        int tok = onnx_eager_begin();
        y = tg_zeros(sp->dt, 4, (int64_t[]){0, sp->dirs, sp->batch, sp->hidden});
        onnx_eager_end(tok);
    } else {
        tg_tensor *per_dir[2];
        for (int d = 0; d < sp->dirs; d++)
            per_dir[d] = tg_stack((int)seq, ys + d * seq, 0);
        y = tg_stack(sp->dirs, per_dir, 1);
    }
    return sp->layout_batch_first ? tg_permute(y, (int[]){2, 0, 1, 3}) : y;
}

/* a final state per direction, [dirs, batch, H] (layout 1: [batch, dirs, H]) */
static tg_tensor *assemble_state(const rnn_spec *sp, tg_tensor **last)
{
    tg_tensor *s = tg_stack(sp->dirs, last, 0);
    return sp->layout_batch_first ? tg_transpose(s, 0, 1) : s;
}

static tg_status import_recurrent(onnx_ictx *c, rnn_kind kind)
{
    static const int gates[] = {1, 3, 4};
    rnn_spec sp = {.kind = kind, .gates = gates[kind], .n_act = kind + 1};
    rnn_inputs io = {0};
    tg_status s = read_inputs(c, &sp, &io);
    if (s != TG_OK)
        return s;
    tg_tensor **ys = onnx_tmp_alloc(c, (size_t)(sp.dirs * sp.seq + 1) * sizeof *ys);
    if (!ys)
        return tg_last_status();
    tg_tensor *h_last[2], *c_last[2];
    for (int d = 0; d < sp.dirs; d++) {
        rnn_dir_in in;
        if ((s = dir_inputs(&sp, &io, d, &in)) != TG_OK ||
            (s = onnx_rnn_direction(c, &sp, d, io.x, &in, io.masks,
                                    wanted(c, 0) ? ys + d * sp.seq : NULL,
                                    &h_last[d], &c_last[d])) != TG_OK)
            return s;
    }
    if (wanted(c, 0) && !(c->out[0] = assemble_y(&sp, ys)))
        return tg_last_status();
    if (wanted(c, 1) && !(c->out[1] = assemble_state(&sp, h_last)))
        return tg_last_status();
    if (wanted(c, 2) && !(c->out[2] = assemble_state(&sp, c_last)))
        return tg_last_status();
    return TG_OK;
}

static tg_status n_rnn(onnx_ictx *c) { return import_recurrent(c, RNN_PLAIN); }
static tg_status n_gru(onnx_ictx *c) { return import_recurrent(c, RNN_GRU); }
static tg_status n_lstm(onnx_ictx *c) { return import_recurrent(c, RNN_LSTM); }

/* versions before 7 (RNN-1, GRU-1/3, LSTM-1) are not imported: the one in
 * effect at opset 7 is the oldest (see "Op versions" in docs/ONNX.md) */
const onnx_op_entry onnx_ops_rnn[] = {
    {"RNN", {1, 7, 14}, 3, 6, 0, 2, n_rnn, 0},
    {"GRU", {1, 3, 7, 14}, 3, 6, 0, 2, n_gru, 0},
    {"LSTM", {1, 7, 14}, 3, 8, 0, 3, n_lstm, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
