/* ONNX's recurrent ops (LSTM, GRU, RNN), shared between the node checks
 * (ops_rnn.c) and the cells unrolled over the sequence (ops_rnn_cell.c). */
#ifndef TG_ONNX_OPS_RNN_H
#define TG_ONNX_OPS_RNN_H

#include "onnx/ops.h"

/* the most time steps one node is unrolled into: each step is a handful
 * of graph nodes, so a hostile sequence length must not build millions */
#define ONNX_RNN_MAX_STEPS 16384

typedef enum { RNN_PLAIN, RNN_GRU, RNN_LSTM } rnn_kind;

typedef enum {
    ACT_RELU,
    ACT_TANH,
    ACT_SIGMOID,
    ACT_AFFINE,
    ACT_LEAKY_RELU,
    ACT_THRESHOLDED_RELU,
    ACT_SCALED_TANH,
    ACT_HARD_SIGMOID,
    ACT_ELU,
    ACT_SOFTSIGN,
    ACT_SOFTPLUS,
} rnn_act_kind;

typedef struct rnn_act {
    rnn_act_kind kind;
    double alpha, beta;
} rnn_act;

/* what the node asks for, checked */
typedef struct rnn_spec {
    rnn_kind kind;
    int gates;  /* 1 (RNN), 3 (GRU: z r h), 4 (LSTM: i o f c) */
    int n_act;  /* activations per direction: 1, 2 (f g), 3 (f g h) */
    int dirs;   /* 1 or 2 */
    bool reverse; /* a single direction running backwards */
    int64_t seq, batch, input, hidden;
    bool layout_batch_first; /* layout = 1 */
    bool has_clip;
    double clip;
    bool input_forget;        /* LSTM: f = 1 - i */
    bool linear_before_reset; /* GRU */
    rnn_act act[2][3];        /* per direction */
    tg_dtype dt;
} rnn_spec;

/* per direction: its weights as [gates*H, input] and [gates*H, H], the
 * bias added to the input projection ([gates*H] or NULL), GRU's
 * recurrent h-gate bias with linear_before_reset ([H] or NULL), LSTM's
 * peepholes ([3H] or NULL), the initial states [batch, H] */
typedef struct rnn_dir_in {
    tg_tensor *w, *r, *proj_bias, *rbh, *p, *h0, *c0;
    /* set by onnx_rnn_direction, once for every step: GRU's R split into
     * its z-r rows and h rows, LSTM's peepholes pi, po, pf */
    tg_tensor *r_zr, *r_h, *peep[3];
} rnn_dir_in;

/* runs one direction over x [seq, batch, input]; masks[t] ([batch, 1]
 * bool: step t is within the row's length) or masks NULL when every row
 * is full length; ys[t] the outputs [batch, H] (zero past a row's
 * length; ys NULL: not wanted), *h_last and *c_last the final states (the last valid step's;
 * zeros for a row of length 0) */
tg_status onnx_rnn_direction(onnx_ictx *c, const rnn_spec *sp, int d, tg_tensor *x,
                             rnn_dir_in *in, tg_tensor *const *masks, tg_tensor **ys,
                             tg_tensor **h_last, tg_tensor **c_last);

#endif
