/* ONNX's Loop when its loop-carried values include sequences or
 * optionals (ops_control.c sends such loops here): unrolled on the host
 * while the model is built, since a sequence's length depends on the
 * iterations. */
#include "onnx/import.h"

#include <stdio.h>
#include <string.h>

/* the value of input j where the build knows it (a known or given
 * input, or any input of an eager build), else NULL */
static tg_tensor *value_of(const onnx_ictx *c, int j)
{
    tg_tensor *v = c->val[j] ? c->val[j] : c->in[j];
    return v && !tg_is_symbolic(v) ? v : NULL;
}

/* the most iterations a loop over sequences is unrolled to */
#define MAX_UNROLL 4096

/* A Loop whose loop-carried values include sequences or optionals: the
 * sequences' lengths depend on the iterations, so the loop is unrolled
 * while the model is built, on the host: eagerly always; in a graph when
 * the trip count, the condition and the body's condition after each
 * iteration are known then (given inputs, constants), else
 * TG_ERR_UNSUPPORTED naming the node. Scan outputs are stacked. */
tg_status onnx_loop_unrolled(onnx_ictx *c, int n_carried, int n_scan)
{
    int64_t trip = -1;
    bool go = true, has_trip = false;
    for (int j = 0; j < 2 && j < c->n_in; j++) {
        if (!c->node->input[j][0])
            continue;
        tg_tensor *v = value_of(c, j);
        if (!v)
            return onnx_err(c, TG_ERR_UNSUPPORTED, "the loop carries sequences or optionals, "
                            "so it is unrolled when the model is built: its %s ('%s') must "
                            "be known then (a constant, or a given input)",
                            j ? "condition" : "trip count", c->node->input[j]);
        /* one element each: tg_copy_to writes all of them */
        if (j ? onnx_one_flag(v, "Loop's condition") != TG_OK
              : tg_dtype_of(v) != TG_INT64 || tg_numel(v) != 1)
            return onnx_err(c, TG_ERR_IO, "%s", j ? tg_last_error()
                            : "the trip count M must be an int64 tensor of one element");
        tg_status s = j ? tg_copy_to(v, TG_BOOL, &go) : tg_copy_to(v, TG_INT64, &trip);
        if (s != TG_OK)
            return s;
        has_trip |= j == 0;
    }
    /* a given trip count bounds the iterations (none below 0, as the tensor-only
     * Loop's i < M: it was taken for no trip count, and 4096 iterations ran
     * before the error); one above the unroll limit fails before any */
    if (has_trip && trip > MAX_UNROLL)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "a loop over sequences is unrolled to at most "
                        "%d iterations; its trip count is %lld", MAX_UNROLL, (long long)trip);
    if (!has_trip && (c->n_in < 2 || !c->node->input[1][0]))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "a loop over sequences without a trip count or "
                        "condition would not end");
    int nv = 2 + n_carried;
    tg_tensor *cur[ONNX_MAX_IO] = {0};
    onnx_seq *cur_seq[ONNX_MAX_IO] = {0}, *scan[ONNX_MAX_IO] = {0};
    bool cur_none[ONNX_MAX_IO] = {0};
    tg_status s = TG_OK;
    for (int j = 0; s == TG_OK && j < n_carried; j++) {
        cur[2 + j] = c->in[2 + j];
        cur_seq[2 + j] = c->seq_in[2 + j] ? onnx_seq_copy(c->seq_in[2 + j]) : NULL;
        cur_none[2 + j] = c->none_in[2 + j];
        if (c->seq_in[2 + j] && !cur_seq[2 + j])
            s = tg_last_status();
        else if (!cur[2 + j] && !cur_seq[2 + j] && !cur_none[2 + j])
            s = onnx_err(c, TG_ERR_IO, "loop-carried input %d is missing", j);
    }
    for (int k = 0; k < n_scan && s == TG_OK; k++)
        s = (scan[k] = onnx_seq_new(TG_FLOAT32)) ? TG_OK : tg_last_status();
    int64_t i = 0;
    for (; s == TG_OK && go && (!has_trip || i < trip); i++) {
        if (i == MAX_UNROLL) {
            s = onnx_err(c, TG_ERR_UNSUPPORTED, "a loop over sequences is unrolled to at most "
                         "%d iterations", MAX_UNROLL);
            break;
        }
        /* the iteration number and the condition are constants of the unrolled body */
        int tok = onnx_eager_begin();
        cur[0] = tg_scalar(TG_INT64, (double)i);
        cur[1] = tg_scalar(TG_BOOL, 1);
        if (cur[1] && c->n_in > 1 && c->in[1])
            cur[1] = tg_reshape(cur[1], tg_ndim(c->in[1]), tg_shape(c->in[1]));
        onnx_eager_end(tok);
        const bool known[ONNX_MAX_IO] = {true, true};
        tg_tensor *res[ONNX_MAX_IO] = {0};
        onnx_seq *res_seq[ONNX_MAX_IO] = {0};
        bool res_none[ONNX_MAX_IO] = {0};
        int n;
        s = cur[0] && cur[1] ? onnx_build_body_any(c, "body", nv, cur,
                                                   (const onnx_seq *const *)cur_seq, cur_none,
                                                   known, ONNX_MAX_IO, res, res_seq, res_none, &n)
                             : tg_last_status();
        tg_tensor *cond = s == TG_OK ? res[0] : NULL;
        if (s == TG_OK && (!cond || onnx_one_flag(cond, "the body's condition output") != TG_OK))
            s = cond ? tg_last_status()
                     : tg__error(TG_ERR_IO, "the body's condition output is not a tensor");
        if (s == TG_OK && tg_is_symbolic(cond))
            s = tg__error(TG_ERR_UNSUPPORTED, "the body's condition output is known only when "
                          "the graph runs: a loop over sequences is unrolled when the model "
                          "is built");
        if (s == TG_OK)
            s = tg_copy_to(cond, TG_BOOL, &go);
        for (int j = 0; s == TG_OK && j < n_carried; j++) {
            onnx_seq_free(cur_seq[2 + j]);
            cur[2 + j] = res[1 + j];
            cur_seq[2 + j] = res_seq[1 + j];
            cur_none[2 + j] = res_none[1 + j];
            res_seq[1 + j] = NULL;
        }
        for (int k = 0; s == TG_OK && k < n_scan; k++) {
            tg_tensor *e = res[1 + n_carried + k];
            if (!e)
                s = tg__error(TG_ERR_UNSUPPORTED, "scan output %d is not a tensor", k);
            else if (i == 0)
                scan[k]->dtype = tg_dtype_of(e);
            if (s == TG_OK)
                s = onnx_seq_push(scan[k], e);
        }
        for (int k = 0; k < ONNX_MAX_IO; k++)
            onnx_seq_free(res_seq[k]);
        if (s != TG_OK && strncmp(tg_last_error(), "ONNX node", 9)) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", tg_last_error());
            s = onnx_err(c, s, "iteration %lld: %s", (long long)i, msg);
        }
    }
    for (int j = 0; s == TG_OK && j < n_carried; j++) {
        c->out[j] = cur[2 + j];
        c->seq_out[j] = cur_seq[2 + j];
        c->none_out[j] = cur_none[2 + j];
        cur_seq[2 + j] = NULL;
    }
    for (int k = 0; s == TG_OK && k < n_scan; k++) {
        if (!scan[k]->n)
            s = onnx_err(c, TG_ERR_UNSUPPORTED, "the loop ran no iteration: the shape of "
                         "scan output %d is unknown", k);
        else if (!(c->out[n_carried + k] = tg_stack(scan[k]->n, scan[k]->elem, 0)))
            s = tg_last_status();
    }
    for (int j = 0; j < ONNX_MAX_IO; j++) {
        onnx_seq_free(cur_seq[j]);
        onnx_seq_free(scan[j]);
    }
    return s;
}
