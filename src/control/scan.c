/* tg_scan: carry, y_t = body(carry, x_t) along the xs' first dim, the ys
 * stacked. Eagerly a host loop (the ops go on the tape) and tg_stack; in a
 * graph a while_loop over (t, carry, ys) whose body writes y_t into row t
 * of the ys (where over a one-hot row mask), so scan needs no op of its
 * own: its gradients, forward mode, DOT and runtime are the loop's. */
#include "control/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scan_call {
    tg_trace_fn body;
    void *user;
    int nc, nx, ny;
    tg_tensor *const *xs;
    int64_t len;
} scan_call;

/* x_t for each of the xs: row t (an int64 0-d tensor) without its axis */
static tg_status rows(const scan_call *sc, tg_tensor *t, tg_tensor **x)
{
    tg_tensor *idx = tg_reshape(t, 1, (int64_t[]){1});
    for (int k = 0; k < sc->nx; k++)
        if (!(x[k] = tg_squeeze(tg_index_select(sc->xs[k], 0, idx), 0)))
            return tg_last_status();
    return TG_OK;
}

/* the user's body on (carry, x_t) into res: returns the number of ys
 * (counted from the results when sc->ny is -1), or -1 on failure */
static int step(const scan_call *sc, tg_tensor *const *carry, tg_tensor *t, tg_tensor **res)
{
    tg_tensor *in[TG_MAX_OP_INPUTS];
    int room = sc->ny < 0 ? TG_MAX_OP_OUTPUTS : sc->nc + sc->ny;
    memcpy(in, carry, (size_t)sc->nc * sizeof *in);
    for (int i = 0; i < room; i++)
        res[i] = NULL;
    tg_status s = rows(sc, t, in + sc->nc);
    if (s == TG_OK)
        s = sc->body(sc->user, in, res);
    int n = sc->ny < 0 ? tg__count_results(res) : room;
    if (s == TG_OK && n < sc->nc + 1)
        s = tg__error(TG_ERR_ARG, "tg_scan: the body gives %d results, expected the %d "
                      "carried values and at least one y", n, sc->nc);
    for (int i = 0; i < n && s == TG_OK; i++)
        if (!res[i])
            s = tg__error_is_set() ? tg_last_status()
                                   : tg__error(TG_ERR_ARG, "tg_scan: the body left result "
                                               "%d NULL", i);
    return s == TG_OK ? n - sc->nc : -1;
}

static tg_status scan_cond(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const scan_call *sc = user;
    out[0] = tg_lt(in[0], tg_scalar(TG_INT64, (double)sc->len));
    return out[0] ? TG_OK : tg_last_status();
}

/* loop variables: t, the carry, the ys so far */
static tg_status scan_body(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const scan_call *sc = user;
    tg_tensor *res[TG_MAX_OP_OUTPUTS];
    if (step(sc, in + 1, in[0], res) < 0)
        return tg_last_status();
    out[0] = tg_add_scalar(in[0], 1);
    memcpy(out + 1, res, (size_t)sc->nc * sizeof *out);
    tg_tensor *at = tg_eq(tg_arange(TG_INT64, 0, (double)sc->len, 1), in[0]);
    for (int k = 0; k < sc->ny; k++) {
        tg_tensor *buf = in[1 + sc->nc + k];
        int64_t shape[TG_MAX_DIMS] = {sc->len};
        for (int d = 1; d < tg_ndim(buf); d++)
            shape[d] = 1;
        tg_tensor *mask = tg_reshape(at, tg_ndim(buf), shape);
        out[1 + sc->nc + k] = tg_where(mask, tg_unsqueeze(res[sc->nc + k], 0), buf);
    }
    for (int i = 0; i < 1 + sc->nc + sc->ny; i++)
        if (!out[i])
            return tg_last_status();
    return TG_OK;
}

/* the probe: the body traced once for the dtypes and shapes of the ys */
static tg_status probe(const scan_call *sc_in, tg_graph *g, tg_tensor *const *init, int *ny,
                       tg_meta *ym)
{
    scan_call sc = *sc_in;
    tg_meta m[TG_MAX_OP_INPUTS];
    for (int i = 0; i < sc.nc; i++)
        tg_meta_of(init[i], &m[i]);
    for (int k = 0; k < sc.nx; k++) {
        tg_meta_of(sc.xs[k], &m[sc.nc + k]);
        memmove(m[sc.nc + k].shape, m[sc.nc + k].shape + 1, (TG_MAX_DIMS - 1) * sizeof(int64_t));
        m[sc.nc + k].ndim--;
    }
    tg_graph *b = tg__fgraph_trace(g, "scan_body", "tg_scan: body", sc.body, sc.user,
                                   sc.nc + sc.nx, m, *ny < 0 ? -1 : sc.nc + *ny);
    if (!b)
        return tg_last_status();
    tg_status s = TG_OK;
    int n = b->fn->n_results - sc.nc;
    if (n < 1)
        s = tg__error(TG_ERR_ARG, "tg_scan: the body gives %d results, expected the %d "
                      "carried values and at least one y", b->fn->n_results, sc.nc);
    for (int k = 0; k < n && s == TG_OK; k++) {
        ym[k] = b->values[b->fn->results[sc.nc + k]].meta;
        if (tg__shape_has_unknown(ym[k].ndim, ym[k].shape) || ym[k].ndim >= TG_MAX_DIMS)
            s = tg__error(TG_ERR_UNSUPPORTED, "tg_scan: y %d has unknown dims (or %d dims); "
                          "stacked ys need known shapes", k, ym[k].ndim);
    }
    *ny = n;
    tg__fgraph_seal(b);
    tg_graph_free(b);
    return s;
}

static tg_status scan_graph(scan_call *sc, tg_graph *g, tg_tensor *const *init,
                            tg_tensor **carry_out, tg_tensor **ys)
{
    tg_meta ym[TG_MAX_OP_OUTPUTS];
    tg_status s = probe(sc, g, init, &sc->ny, ym);
    if (s == TG_OK && 1 + sc->nc + sc->ny > TG_MAX_OP_OUTPUTS)
        s = tg__error(TG_ERR_ARG, "tg_scan: %d carried values and %d ys, at most %d in all",
                      sc->nc, sc->ny, TG_MAX_OP_OUTPUTS - 1);
    if (s != TG_OK)
        return s;
    tg_tensor *vars[TG_MAX_OP_OUTPUTS], *out[TG_MAX_OP_OUTPUTS];
    tg_scope_begin(); /* the counter and the zero buffers */
    vars[0] = tg_scalar(TG_INT64, 0);
    memcpy(vars + 1, init, (size_t)sc->nc * sizeof *vars);
    for (int k = 0; k < sc->ny; k++) {
        int64_t shape[TG_MAX_DIMS] = {sc->len};
        memcpy(shape + 1, ym[k].shape, (size_t)ym[k].ndim * sizeof *shape);
        vars[1 + sc->nc + k] = tg_zeros(ym[k].dtype, ym[k].ndim + 1, shape);
    }
    tg_loop_options o = {.name = "scan"};
    s = tg_while_loop(scan_cond, scan_body, sc, 1 + sc->nc + sc->ny, vars, out, &o);
    for (int i = 1; i < 1 + sc->nc + sc->ny && s == TG_OK; i++)
        tg_keep(out[i]);
    tg_scope_end();
    if (s != TG_OK)
        return s;
    memcpy(carry_out, out + 1, (size_t)sc->nc * sizeof *out);
    memcpy(ys, out + 1 + sc->nc, (size_t)sc->ny * sizeof *out);
    return TG_OK;
}

/* eagerly: a host loop; each step in a scope of its own, its results
 * retained (a front end's callback may hold the only other reference) */
static tg_status scan_eager(scan_call *sc, tg_tensor *const *init, tg_tensor **carry_out,
                            tg_tensor **ys)
{
    tg_tensor *carry[TG_MAX_OP_OUTPUTS], *res[TG_MAX_OP_OUTPUTS];
    size_t len = (size_t)sc->len;
    tg_tensor **rows_y = calloc((len ? len : 1) * TG_MAX_OP_OUTPUTS, sizeof *rows_y);
    for (int i = 0; i < sc->nc; i++)
        carry[i] = tg_retain(init[i]);
    tg_status s = rows_y ? TG_OK : tg__error(TG_ERR_NOMEM, "tg_scan: out of memory");
    if (s == TG_OK && len == 0)
        s = tg__error(TG_ERR_ARG, "tg_scan: xs have no rows");
    for (size_t t = 0; t < len && s == TG_OK; t++) {
        tg_scope_begin();
        int ny = step(sc, carry, tg_scalar(TG_INT64, (double)t), res);
        for (int i = 0; i < sc->nc + ny; i++)
            tg_retain(res[i]);
        tg_scope_end();
        if (ny < 0) {
            s = tg_last_status();
            break;
        }
        sc->ny = ny; /* counted at the first step when it was -1 */
        for (int i = 0; i < sc->nc; i++) {
            tg_release(carry[i]);
            carry[i] = res[i];
        }
        for (int k = 0; k < ny; k++)
            rows_y[(size_t)k * len + t] = res[sc->nc + k];
    }
    for (int k = 0; s == TG_OK && k < sc->ny; k++)
        if (!(ys[k] = tg_stack((int)len, rows_y + (size_t)k * len, 0)))
            s = tg_last_status();
    for (int i = 0; i < sc->nc; i++)
        if (s == TG_OK)
            carry_out[i] = tg__publish(carry[i]);
        else
            tg_release(carry[i]);
    for (size_t k = 0; rows_y && k < len * TG_MAX_OP_OUTPUTS; k++)
        tg_release(rows_y[k]);
    free(rows_y);
    return s;
}

tg_status tg_scan(tg_trace_fn body, void *user, int n_carry, tg_tensor *const *init, int n_xs,
                  tg_tensor *const *xs, int n_ys, tg_tensor **carry_out, tg_tensor **ys)
{
    if (!body || n_carry < 0 || n_xs < 1 || n_ys == 0 || n_ys < -1 ||
        (n_carry && (!init || !carry_out)) || !xs || !ys ||
        n_carry + n_xs > TG_MAX_OP_INPUTS)
        return tg__error(TG_ERR_ARG, "tg_scan: NULL body or arrays, or bad counts (%d carried, "
                         "%d xs, %d ys)", n_carry, n_xs, n_ys);
    for (int i = 0; i < n_carry; i++)
        carry_out[i] = NULL;
    for (int k = 0; k < (n_ys < 0 ? TG_MAX_OP_OUTPUTS : n_ys); k++)
        ys[k] = NULL;
    tg_tensor *all[TG_MAX_OP_INPUTS];
    for (int i = 0; i < n_carry + n_xs; i++)
        if (!(all[i] = i < n_carry ? init[i] : xs[i - n_carry]))
            return tg__error_is_set() ? tg_last_status()
                                      : tg__error(TG_ERR_ARG, "tg_scan: input %d is NULL", i);
    int64_t len = tg_ndim(xs[0]) > 0 ? tg_shape(xs[0])[0] : -1;
    for (int k = 0; k < n_xs; k++)
        if (tg_ndim(xs[k]) < 1 || tg_shape(xs[k])[0] != len || len < 0)
            return tg__error(TG_ERR_SHAPE, "tg_scan: xs[%d] has %s; every x needs the same "
                             "known first dim", k, tg_ndim(xs[k]) < 1 ? "no dims"
                                                                     : "another first dim");
    scan_call sc = {body, user, n_carry, n_xs, n_ys, xs, len};
    tg_graph *g = tg__control_graph(n_carry + n_xs, all);
    return g ? scan_graph(&sc, g, init, carry_out, ys) : scan_eager(&sc, init, carry_out, ys);
}
