/* tg_onnx_run: a model's outputs, and with grads the gradients of their
 * float sum with respect to every float input and initializer, eagerly
 * (autograd) or as a graph (symbolic gradients, one session run). */
#include "onnx/import.h"

#include "core/tensor_impl.h"

#include <stdlib.h>
#include <string.h>

static tg_tensor *float_sum(tg_onnx_net *net)
{
    tg_tensor *total = NULL;
    for (int i = 0; i < net->n_outputs; i++) {
        tg_tensor *o = net->outputs[i];
        if (!tg_dtype_is_float(tg_dtype_of(o)))
            continue;
        tg_tensor *s = tg_sum(onnx_as(o, TG_FLOAT64), 0, NULL, false);
        total = total ? tg_add(total, s) : s;
    }
    return total;
}

/* a value may be listed as an output more than once (PyTorch exports
 * `return y, y` so): it counts once per listing in the sum that --grad
 * differentiates, as in PyTorch, but is written once. The net's outputs
 * are the API's (a sequence's elements as S[0], S[1], ...). */
static bool listed_earlier(const tg_onnx_net *net, int i)
{
    for (int j = 0; j < i; j++)
        if (!strcmp(net->output_names[j], net->output_names[i]))
            return true;
    return false;
}

static tg_status add_zeros_or(tg_state_dict *sd, const char *name, tg_tensor *like,
                              tg_tensor *grad)
{
    /* grad: a new reference the caller releases; zeros: scope-owned */
    tg_tensor *z = grad ? grad : tg_zeros(tg_dtype_of(like), tg_ndim(like), tg_shape(like));
    return z ? tg_state_dict_add(sd, name, z) : tg_last_status();
}

/* the float inputs and initializers gradients are taken for */
static int grad_targets(const tg_onnx_model *m, tg_onnx_net *net, tg_tensor **xs,
                        const char **names)
{
    int n = 0;
    for (int i = 0; i < net->n_inputs; i++)
        if (tg_dtype_is_float(tg_dtype_of(net->inputs[i]))) {
            names[n] = net->input_names[i];
            xs[n++] = net->inputs[i];
        }
    for (int i = 0; i < m->n_inits; i++)
        if (tg_dtype_is_float(tg_dtype_of(m->inits[i]))) {
            names[n] = m->init_names[i];
            xs[n++] = net->inits[i];
        }
    return n;
}

static tg_status run_eager(const tg_onnx_model *m, int n, const char *const *names,
                           tg_tensor *const *inputs, tg_state_dict *outs,
                           tg_state_dict *grads)
{
    tg_tensor **ins = calloc((size_t)n + 1, sizeof *ins);
    if (!ins)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    tg_status s = TG_OK;
    for (int i = 0; i < n; i++) {
        ins[i] = inputs[i] ? tg_detach(inputs[i]) : NULL;
        if (grads && ins[i] && tg_dtype_is_float(tg_dtype_of(ins[i])))
            tg_set_requires_grad(ins[i], true);
    }
    tg_onnx_opts o = {.trainable = grads != NULL, .specialize = true};
    tg_onnx_net *net = tg_onnx_build(m, n, names, ins, &o);
    if (!net)
        s = tg_last_status();
    for (int i = 0; s == TG_OK && i < net->n_outputs; i++)
        if (!listed_earlier(net, i))
            s = tg_state_dict_add(outs, net->output_names[i], tg_detach(net->outputs[i]));
    if (s == TG_OK && grads) {
        int nx = net->n_inputs + m->n_inits;
        tg_tensor **xs = calloc((size_t)nx + 1, sizeof *xs);
        tg_tensor **res = calloc((size_t)nx + 1, sizeof *res);
        const char **xn = calloc((size_t)nx + 1, sizeof *xn);
        if (!xs || !res || !xn)
            s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        nx = s == TG_OK ? grad_targets(m, net, xs, xn) : 0;
        tg_tensor *loss = s == TG_OK ? float_sum(net) : NULL;
        if (s == TG_OK && !loss)
            s = tg__error(TG_ERR_ARG, "onnx: --grad needs a floating-point output");
        bool any = false;
        for (int i = 0; i < nx; i++)
            any = any || tg_requires_grad(xs[i]);
        if (s == TG_OK && any && tg_requires_grad(loss)) {
            /* only the xs requiring grad can be asked for */
            tg_tensor **req = calloc((size_t)nx + 1, sizeof *req);
            tg_tensor **rr = calloc((size_t)nx + 1, sizeof *rr);
            int nr = 0;
            for (int i = 0; req && i < nx; i++)
                if (tg_requires_grad(xs[i]))
                    req[nr++] = xs[i];
            s = req && rr ? tg_autograd_grad(1, &loss, NULL, nr, req, rr, false, false)
                          : tg__error(TG_ERR_NOMEM, "onnx: out of memory");
            for (int i = 0, k = 0; s == TG_OK && i < nx; i++)
                if (tg_requires_grad(xs[i]))
                    res[i] = rr[k++];
            free(req);
            free(rr);
        }
        for (int i = 0; s == TG_OK && i < nx; i++)
            s = add_zeros_or(grads, xn[i], xs[i], res[i]);
        for (int i = 0; res && i < nx; i++)
            tg_release(res[i]);
        free(xs);
        free(res);
        free(xn);
    }
    tg_onnx_net_free(net);
    free(ins); /* the detached inputs belong to tg_onnx_run's scope */
    return s;
}

static tg_status run_graph(const tg_onnx_model *m, int n, const char *const *names,
                           tg_tensor *const *inputs, tg_state_dict *outs,
                           tg_state_dict *grads)
{
    tg_graph *g = tg_graph_new("onnx");
    if (!g)
        return tg_last_status();
    if (tg_graph_begin(g) != TG_OK) {
        tg_graph_free(g);
        return tg_last_status();
    }
    tg_onnx_opts o = {.trainable = grads != NULL, .specialize = true};
    tg_onnx_net *net = tg_onnx_build(m, n, names, inputs, &o);
    tg_status s = net ? TG_OK : tg_last_status();
    int n_in = net ? net->n_inputs : 0, n_out = net ? net->n_outputs : 0;
    int nx = n_in + m->n_inits, nf = 0;
    tg_tensor **xs = calloc((size_t)nx + 1, sizeof *xs);
    tg_tensor **dxs = calloc((size_t)nx + 1, sizeof *dxs);
    const char **xn = calloc((size_t)nx + 1, sizeof *xn);
    int nfetch_max = n_out + nx;
    tg_tensor **fetch = calloc((size_t)nfetch_max + 1, sizeof *fetch);
    tg_tensor **res = calloc((size_t)nfetch_max + 1, sizeof *res);
    tg_tensor **feed_v = calloc((size_t)n_in + 1, sizeof *feed_v);
    tg_tensor **feed_t = calloc((size_t)n_in + 1, sizeof *feed_t);
    if (s == TG_OK && (!xs || !dxs || !xn || !fetch || !res || !feed_v || !feed_t))
        s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    if (s == TG_OK && grads) {
        nx = grad_targets(m, net, xs, xn);
        tg_tensor *loss = float_sum(net);
        if (!loss)
            s = tg__error(TG_ERR_ARG, "onnx: --grad needs a floating-point output");
        else if (tg_is_symbolic(loss) && nx)
            s = tg_graph_gradients(g, 1, &loss, NULL, nx, xs, dxs);
    }
    tg_graph_end();
    /* feeds: the model's inputs, matched by name */
    int n_feeds = 0;
    for (int i = 0; s == TG_OK && i < n_in; i++)
        for (int k = 0; k < n; k++)
            if (!strcmp(names[k], net->input_names[i])) {
                feed_v[n_feeds] = net->inputs[i];
                feed_t[n_feeds++] = inputs[k];
            }
    /* fetches: symbolic results that are not fed */
    tg_tensor **want = calloc((size_t)nfetch_max + 1, sizeof *want);
    int n_want = 0;
    if (s == TG_OK && !want)
        s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (int i = 0; s == TG_OK && i < n_out; i++)
        want[n_want++] = net->outputs[i];
    for (int i = 0; s == TG_OK && grads && i < nx; i++)
        want[n_want++] = dxs[i];
    int *slot = calloc((size_t)nfetch_max + 1, sizeof *slot);
    if (s == TG_OK && !slot)
        s = tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    for (int i = 0; s == TG_OK && i < n_want; i++) {
        slot[i] = -1;
        tg_tensor *w = want[i];
        if (!w || !tg_is_symbolic(w))
            continue;
        bool fed = false;
        for (int k = 0; k < n_feeds; k++)
            if (feed_v[k] == w || (feed_v[k]->graph == w->graph && feed_v[k]->value == w->value))
                fed = true, want[i] = feed_t[k];
        if (fed)
            continue;
        int found = -1;
        for (int k = 0; k < nf; k++)
            if (fetch[k]->value == w->value)
                found = k;
        if (found < 0) {
            fetch[nf] = w;
            found = nf++;
        }
        slot[i] = found;
    }
    if (s == TG_OK && nf > 0) {
        tg_session *sess = tg_session_new(g);
        s = sess ? tg_session_run(sess, n_feeds, feed_v, feed_t, nf, fetch, res, 0, NULL)
                 : tg_last_status();
        tg_session_free(sess);
    }
    for (int i = 0; s == TG_OK && i < n_want; i++) {
        tg_tensor *v = slot[i] >= 0 ? res[slot[i]] : want[i];
        if (i < n_out && listed_earlier(net, i)) {
            continue;
        } else if (i < n_out) {
            tg_tensor *c = tg_clone(v);
            s = c ? tg_state_dict_add(outs, net->output_names[i], c) : tg_last_status();
        } else {
            s = add_zeros_or(grads, xn[i - n_out], xs[i - n_out], v);
        }
    }
    free(slot); /* results and gradients belong to tg_onnx_run's scope */
    free(want);
    free(xs);
    free(dxs);
    free(xn);
    free(fetch);
    free(res);
    free(feed_v);
    free(feed_t);
    tg_onnx_net_free(net);
    tg_graph_free(g);
    return s;
}

tg_status tg_onnx_run(const tg_onnx_model *m, tg_onnx_mode mode, int n_inputs,
                      const char *const *names, tg_tensor *const *inputs,
                      tg_state_dict **outputs, tg_state_dict **grads)
{
    if (!m || !outputs)
        return tg__error(TG_ERR_ARG, "tg_onnx_run: model or outputs is NULL");
    if (n_inputs < 0 || (n_inputs && (!names || !inputs)))
        return tg__error(TG_ERR_ARG, "tg_onnx_run: bad inputs");
    for (int i = 0; i < n_inputs; i++)
        if (!names[i] || !inputs[i])
            return tg__error(TG_ERR_ARG, "tg_onnx_run: input %d has no name or tensor", i);
    *outputs = tg_state_dict_new();
    if (grads)
        *grads = tg_state_dict_new();
    if (!*outputs || (grads && !*grads)) {
        tg_state_dict_free(*outputs);
        *outputs = NULL;
        if (grads) {
            tg_state_dict_free(*grads);
            *grads = NULL;
        }
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    }
    tg_scope_begin();
    tg_status s = mode == TG_ONNX_GRAPH
                      ? run_graph(m, n_inputs, names, inputs, *outputs, grads ? *grads : NULL)
                      : run_eager(m, n_inputs, names, inputs, *outputs, grads ? *grads : NULL);
    tg_scope_end();
    if (s != TG_OK) {
        tg_state_dict_free(*outputs);
        *outputs = NULL;
        if (grads) {
            tg_state_dict_free(*grads);
            *grads = NULL;
        }
    }
    return s;
}

