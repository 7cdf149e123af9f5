/* One check for an op (or a composite the public API offers) at given
 * inputs, the way issue 10 asks every new op to be checked:
 *   - backward against float64 central finite differences (gradcheck, on
 *     contiguous and strided inputs);
 *   - forward mode against reverse mode: u . (J v) from tg_jvp equals
 *     (J^T u) . v from tg_autograd_grad, for random u and v;
 *   - graph mode against eager: the traced function's outputs and its
 *     symbolic gradients (tg_graph_gradients run in a session) equal the
 *     eager ones.
 * Inputs that require grad are differentiated; the others (labels,
 * indices) are fed as they are. Header-only, for test programs. */
#ifndef TG_TEST_OP_CHECK_H
#define TG_TEST_OP_CHECK_H

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct oc_fn {
    tg_gradcheck_fn f;
    void *user;
    int n;
} oc_fn;

static tg_status oc_trace(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const oc_fn *o = user;
    out[0] = o->f(o->n, in, o->user);
    return out[0] ? TG_OK : tg_last_status();
}

/* sum of a * b over all elements, as a double */
static double oc_dot(tg_tensor *a, tg_tensor *b)
{
    double v = NAN;
    tg_tensor *s = tg_sum(tg_mul(tg_cast(a, TG_FLOAT64), tg_cast(b, TG_FLOAT64)), 0, NULL,
                          false);
    if (s)
        tg_copy_to(s, TG_FLOAT64, &v);
    return v;
}

static tg_generator *oc_gen(void)
{
    static tg_generator *g;
    if (!g)
        g = tg_generator_new(99);
    return g;
}

#define CHECK_OP(f, user, n, inputs) oc_check(f, user, n, inputs, #f, __FILE__, __LINE__)

static void oc_check(tg_gradcheck_fn f, void *user, int n, tg_tensor **in, const char *what,
                     const char *file, int line)
{
    tg_scope_begin();
    tt_gradcheck(f, user, n, in, what, file, line);
    /* eager output and reverse-mode gradients for a random u */
    tg_tensor *y = f(n, in, user);
    tt_checks++;
    if (!y) {
        tt_fail(file, line, "%s: %s", what, tg_last_error());
        tg_scope_end();
        return;
    }
    tg_tensor *u = tg_rand_uniform(oc_gen(), tg_dtype_of(y), tg_ndim(y), tg_shape(y), -1, 1);
    tg_tensor *diff[16], *g[16], *v[16], *tangents[16];
    int nd = 0;
    for (int i = 0; i < n; i++) {
        tangents[i] = NULL;
        if (tg_requires_grad(in[i])) {
            diff[nd++] = in[i];
            tangents[i] = tg_rand_uniform(oc_gen(), tg_dtype_of(in[i]), tg_ndim(in[i]),
                                          tg_shape(in[i]), -1, 1);
        }
    }
    tt_checks++;
    if (tg_autograd_grad(1, &y, &u, nd, diff, g, false, false) != TG_OK) {
        tt_fail(file, line, "%s: backward: %s", what, tg_last_error());
        tg_scope_end();
        return;
    }
    double back = 0;
    for (int i = 0, k = 0; i < n; i++)
        if (tangents[i]) {
            v[k] = tangents[i];
            back += g[k] ? oc_dot(g[k], v[k]) : 0;
            k++;
        }
    /* forward mode: u . (J v) */
    tg_tensor *yj = NULL, *tj = NULL;
    oc_fn o = {f, user, n};
    tt_checks++;
    if (tg_jvp(oc_trace, &o, n, in, tangents, 1, &yj, &tj) != TG_OK) {
        tt_fail(file, line, "%s: tg_jvp: %s", what, tg_last_error());
    } else {
        double fwd = oc_dot(u, tj);
        if (!(fabs(fwd - back) <= 1e-9 * (1 + fabs(back))))
            tt_fail(file, line, "%s: u.(Jv) = %.15g from forward mode, (J^T u).v = %.15g "
                    "from reverse mode", what, fwd, back);
        if (!(tt_rel_diff(yj, y, 1e-12) <= 1e-12))
            tt_fail(file, line, "%s: tg_jvp's output differs from eager", what);
    }
    /* graph mode: the traced function, its symbolic gradients */
    tg_graph *gr = tg_graph_new("op_check");
    tg_tensor *ph[16], *gy = NULL, *dph[16], *fetch[17], *res[17];
    tt_checks++;
    if (tg_graph_trace(gr, oc_trace, &o, n, in, NULL, ph, 1, &gy) != TG_OK) {
        tt_fail(file, line, "%s: trace: %s", what, tg_last_error());
    } else {
        tg_tensor *dph_x[16];
        int k = 0;
        for (int i = 0; i < n; i++)
            if (tg_requires_grad(in[i]))
                dph_x[k++] = ph[i];
        tg_status s = tg_graph_gradients(gr, 1, &gy, &u, nd, dph_x, dph);
        int nf = 0;
        fetch[nf++] = gy;
        for (int i = 0; s == TG_OK && i < nd; i++)
            if (dph[i])
                fetch[nf++] = dph[i];
        tg_session *sess = s == TG_OK ? tg_session_new(gr) : NULL;
        if (sess)
            s = tg_session_run(sess, n, ph, in, nf, fetch, res, 0, NULL);
        if (s != TG_OK) {
            tt_fail(file, line, "%s: graph mode: %s", what, tg_last_error());
        } else {
            if (!(tt_rel_diff(res[0], y, 1e-12) <= 1e-12))
                tt_fail(file, line, "%s: graph output differs from eager", what);
            for (int i = 0, j = 1; i < nd; i++) {
                if (!dph[i] != !g[i]) {
                    tt_fail(file, line, "%s: input %d has a gradient in one mode only",
                            what, i);
                } else if (dph[i] && !(tt_rel_diff(res[j++], g[i], 1e-9) <= 1e-9)) {
                    tt_fail(file, line, "%s: graph gradient %d differs from eager", what, i);
                }
            }
        }
        tg_session_free(sess);
    }
    tg_graph_free(gr);
    for (int i = 0; i < nd; i++)
        tg_release(g[i]);
    tg_scope_end();
}

/* exports fn(inputs) traced into a graph to ONNX, imports it back and
 * checks that both modes give fn's output (to 1e-6: ONNX float
 * attributes are float32) */
#define CHECK_ONNX_ROUNDTRIP(f, user, n, inputs) \
    oc_roundtrip(f, user, n, inputs, #f, __FILE__, __LINE__)

static void oc_roundtrip(tg_gradcheck_fn f, void *user, int n, tg_tensor **in,
                         const char *what, const char *file, int line)
{
    tg_scope_begin();
    oc_fn o = {f, user, n};
    tg_graph *gr = tg_graph_new("roundtrip");
    tg_tensor *ph[16], *y = NULL;
    const char *names[16];
    char buf[16][16];
    for (int i = 0; i < n; i++) {
        snprintf(buf[i], sizeof buf[i], "in%d", i);
        names[i] = buf[i];
    }
    char path[] = "/tmp/tg_roundtrip_XXXXXX";
    int fd = mkstemp(path);
    tt_checks++;
    tg_status s = fd < 0 ? TG_ERR_IO
                         : tg_graph_trace(gr, oc_trace, &o, n, in, names, ph, 1, &y);
    if (s == TG_OK)
        s = tg_onnx_export(gr, 1, &y, path);
    tg_onnx_model *m = s == TG_OK ? tg_onnx_load(path) : NULL;
    tg_tensor *want = f(n, in, user);
    for (int mode = 0; m && mode < 2; mode++) {
        tg_state_dict *outs = NULL;
        s = tg_onnx_run(m, mode ? TG_ONNX_GRAPH : TG_ONNX_EAGER, n, names, in, &outs, NULL);
        if (s != TG_OK || tg_state_dict_size(outs) != 1 ||
            !(tt_rel_diff(tg_state_dict_tensor(outs, 0), want, 1e-6) <= 1e-6)) /* float32 attributes */
            tt_fail(file, line, "%s: ONNX round trip (%s mode) %s", what,
                    mode ? "graph" : "eager", s != TG_OK ? tg_last_error() : "differs");
        tg_state_dict_free(outs);
    }
    if (!m)
        tt_fail(file, line, "%s: ONNX export/import: %s", what, tg_last_error());
    tg_onnx_free(m);
    if (fd >= 0) {
        close(fd);
        remove(path);
    }
    tg_graph_free(gr);
    tg_scope_end();
}

#endif
