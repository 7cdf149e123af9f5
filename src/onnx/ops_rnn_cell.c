/* The cells of ONNX's RNN, GRU and LSTM, unrolled over the sequence with
 * tensorgraph's differentiable ops: the input projection of every step is
 * one GEMM before the loop (it does not depend on the state), each step
 * one GEMM with the recurrent weights that adds the step's projection
 * (two for GRU without linear_before_reset) and elementwise gate arithmetic. Rows past their
 * sequence length keep their state (where) and output zeros; a row of
 * length 0 has final states of zeros (onnxruntime's choice: ONNX's text
 * says nothing). */
#include "onnx/ops_rnn.h"

static tg_tensor *activate(const rnn_act *a, tg_tensor *x)
{
    switch (a->kind) {
    case ACT_RELU:
        return tg_relu(x);
    case ACT_TANH:
        return tg_tanh(x);
    case ACT_SIGMOID:
        return tg_sigmoid(x);
    case ACT_AFFINE:
        return tg_add_scalar(tg_mul_scalar(x, a->alpha), a->beta);
    case ACT_LEAKY_RELU:
        return tg_leaky_relu(x, a->alpha);
    case ACT_THRESHOLDED_RELU:
        return tg_threshold(x, a->alpha, 0.0);
    case ACT_SCALED_TANH:
        return tg_mul_scalar(tg_tanh(tg_mul_scalar(x, a->beta)), a->alpha);
    case ACT_HARD_SIGMOID:
        return tg_hardsigmoid(x, a->alpha, a->beta);
    case ACT_ELU:
        return tg_elu(x, a->alpha);
    case ACT_SOFTSIGN:
        return tg_softsign(x);
    case ACT_SOFTPLUS:
        return tg_softplus(x);
    }
    return NULL;
}

/* activation of a gate's pre-activation, clipped first when asked */
static tg_tensor *gate(const rnn_spec *sp, const rnn_act *a, tg_tensor *pre)
{
    return activate(a, sp->has_clip ? tg_clamp(pre, -sp->clip, sp->clip) : pre);
}

/* columns [k*H, (k+1)*H) of a [batch, n*H] tensor: gate k */
static tg_tensor *part(const rnn_spec *sp, tg_tensor *t, int k)
{
    return tg_slice(t, 1, k * sp->hidden, (k + 1) * sp->hidden, 1);
}

/* h @ w^T (+ bias), w [n, H] */
static tg_tensor *recur(tg_tensor *h, tg_tensor *w, tg_tensor *bias)
{
    return tg_gemm(h, w, bias, 1.0, bias ? 1.0 : 0.0, false, true);
}

typedef struct cell_state {
    tg_tensor *h, *c;
} cell_state;

/* the step's input projection xp is the GEMM's C: h R^T + xp in one op */
static cell_state rnn_step(const rnn_spec *sp, const rnn_act *act, const rnn_dir_in *in,
                           tg_tensor *xp, cell_state s)
{
    return (cell_state){gate(sp, &act[0], recur(s.h, in->r, xp)), NULL};
}

/* the first k gates' columns of a [batch, n*H] tensor */
static tg_tensor *first_gates(const rnn_spec *sp, tg_tensor *t, int k)
{
    return tg_slice(t, 1, 0, k * sp->hidden, 1);
}

/* z = f(xz + h Rz), r = f(xr + h Rr) (one activation over both); the
 * candidate g(xh + (r h) Rh + Rbh) or, with linear_before_reset,
 * g(xh + r (h Rh + Rbh)); h' = hh + z (h - hh) = (1 - z) hh + z h */
static cell_state gru_step(const rnn_spec *sp, const rnn_act *act, const rnn_dir_in *in,
                           tg_tensor *xp, cell_state s)
{
    tg_tensor *zr, *hh_pre;
    if (sp->linear_before_reset) {
        tg_tensor *hp = recur(s.h, in->r, NULL);
        zr = gate(sp, &act[0], tg_add(first_gates(sp, xp, 2), first_gates(sp, hp, 2)));
        tg_tensor *rh = part(sp, hp, 2);
        if (in->rbh)
            rh = tg_add(rh, in->rbh);
        hh_pre = tg_add(part(sp, xp, 2), tg_mul(part(sp, zr, 1), rh));
    } else {
        zr = gate(sp, &act[0], recur(s.h, in->r_zr, first_gates(sp, xp, 2)));
        hh_pre = recur(tg_mul(part(sp, zr, 1), s.h), in->r_h, part(sp, xp, 2));
    }
    tg_tensor *hh = gate(sp, &act[1], hh_pre);
    return (cell_state){tg_add(hh, tg_mul(part(sp, zr, 0), tg_sub(s.h, hh))), NULL};
}

/* gates i o f c; peepholes p = [pi po pf]:
 * i = f(xi + h Ri + pi C), f = f(xf + h Rf + pf C) (1 - i with input_forget),
 * C' = f C + i g(xc + h Rc), o = f(xo + h Ro + po C'), h' = o h(C');
 * without peepholes one activation covers i, o and f */
static cell_state lstm_step(const rnn_spec *sp, const rnn_act *act, const rnn_dir_in *in,
                            tg_tensor *xp, cell_state s)
{
    tg_tensor *pre = recur(s.h, in->r, xp), *i, *o = NULL, *f;
    if (in->p) {
        i = gate(sp, &act[0], tg_add(part(sp, pre, 0), tg_mul(in->peep[0], s.c)));
        f = gate(sp, &act[0], tg_add(part(sp, pre, 2), tg_mul(in->peep[2], s.c)));
    } else {
        tg_tensor *iof = gate(sp, &act[0], first_gates(sp, pre, 3));
        i = part(sp, iof, 0);
        o = part(sp, iof, 1);
        f = part(sp, iof, 2);
    }
    if (sp->input_forget)
        f = tg_add_scalar(tg_neg(i), 1.0);
    tg_tensor *g = gate(sp, &act[1], part(sp, pre, 3));
    tg_tensor *cn = tg_add(tg_mul(f, s.c), tg_mul(i, g));
    if (in->p)
        o = gate(sp, &act[0], tg_add(part(sp, pre, 1), tg_mul(in->peep[1], cn)));
    return (cell_state){tg_mul(o, activate(&act[2], cn)), cn};
}

tg_status onnx_rnn_direction(onnx_ictx *c, const rnn_spec *sp, int d, tg_tensor *x,
                             rnn_dir_in *in, tg_tensor *const *masks, tg_tensor **ys,
                             tg_tensor **h_last, tg_tensor **c_last)
{
    int64_t seq = sp->seq, batch = sp->batch, H = sp->hidden, gh = sp->gates * H;
    if (sp->kind == RNN_GRU && !sp->linear_before_reset) {
        in->r_zr = tg_slice(in->r, 0, 0, 2 * H, 1);
        in->r_h = tg_slice(in->r, 0, 2 * H, 3 * H, 1);
        if (!in->r_zr || !in->r_h)
            return tg_last_status();
    }
    for (int k = 0; in->p && k < 3; k++)
        if (!(in->peep[k] = tg_slice(in->p, 0, k * H, (k + 1) * H, 1)))
            return tg_last_status();
    *h_last = in->h0;
    *c_last = in->c0;
    if (seq == 0)
        return TG_OK;
    /* every step's input projection, one GEMM: [seq*batch, input] W^T + b */
    tg_tensor *x2 = tg_reshape(x, 2, (int64_t[]){seq * batch, sp->input});
    tg_tensor *proj = tg_gemm(x2, in->w, in->proj_bias, 1.0, in->proj_bias ? 1.0 : 0.0,
                              false, true);
    proj = tg_reshape(proj, 3, (int64_t[]){seq, batch, gh});
    if (!proj)
        return onnx_err(c, tg_last_status(), "the input projection: %s", tg_last_error());
    tg_tensor *zero = tg_scalar(sp->dt, 0.0);
    cell_state s = {in->h0, in->c0};
    bool backward = sp->reverse || d == 1;
    for (int64_t k = 0; k < seq; k++) {
        int64_t t = backward ? seq - 1 - k : k;
        tg_tensor *xp = tg_reshape(tg_slice(proj, 0, t, t + 1, 1), 2,
                                   (int64_t[]){batch, gh});
        cell_state n;
        if (sp->kind == RNN_LSTM)
            n = lstm_step(sp, sp->act[d], in, xp, s);
        else if (sp->kind == RNN_GRU)
            n = gru_step(sp, sp->act[d], in, xp, s);
        else
            n = rnn_step(sp, sp->act[d], in, xp, s);
        tg_tensor *y = n.h;
        if (masks) { /* past a row's length: state kept, output zero */
            y = ys ? tg_where(masks[t], n.h, zero) : NULL;
            n.h = tg_where(masks[t], n.h, s.h);
            if (n.c)
                n.c = tg_where(masks[t], n.c, s.c);
        }
        if (ys)
            ys[t] = y;
        if ((ys && !y) || !n.h || (sp->kind == RNN_LSTM && !n.c))
            return onnx_err(c, tg_last_status(), "step %lld of direction %d: %s",
                            (long long)t, d, tg_last_error());
        s = n;
    }
    if (masks) { /* a row of length 0 ends in zeros, as onnxruntime's */
        s.h = tg_where(masks[0], s.h, zero);
        s.c = s.c ? tg_where(masks[0], s.c, zero) : NULL;
        if (!s.h || (sp->kind == RNN_LSTM && !s.c))
            return tg_last_status();
    }
    *h_last = s.h;
    *c_last = s.c;
    return TG_OK;
}
