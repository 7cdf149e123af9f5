/* The derivatives of layer_norm_grad(x, dy, mean, var, w, dmean, dvar) ->
 * (dx, dw, db), so that layer norm's backward is the fused kernel in every
 * mode: eager first order, create_graph, and symbolic gradients in graphs
 * (where the rule used to be twenty elementwise and reduction nodes over
 * the activations, since a graph's gradient may be differentiated again).
 * Both rules are written with public ops, so higher orders follow.
 *
 * The function differentiated, per row, with S a sum over the normalised
 * (last n) axes kept as size 1, R a sum down to w's shape, M their size:
 *   a = (var + eps)^-1/2,  c = x - mean,  u = dy w,
 *   dx = a u - a S(u)/M + c (2 dvar - a^3 S(u c))/M + dmean/M,
 *   dw = R(dy c a),  db = R(dy). */
#include "autodiff/jvp.h"
#include "ops/norm_ln_grad.h"

/* the pieces both rules read */
typedef struct ln_parts {
    int n, axes[TG_MAX_DIMS];
    double M;
    tg_tensor *a, *c, *u, *sg, *sgx; /* sg = S(u), sgx = S(u c) */
} ln_parts;

static tg_tensor *S(const ln_parts *p, tg_tensor *v)
{
    return tg_sum(v, p->n, p->axes, true);
}

static void parts(ln_parts *p, tg_tensor *const *in, const tg_meta *x, int n_axes, double eps)
{
    p->n = n_axes;
    for (int i = 0; i < n_axes; i++)
        p->axes[i] = x->ndim - n_axes + i;
    p->M = (double)tg__shape_numel(n_axes, x->shape + x->ndim - n_axes);
    p->a = tg_rsqrt(tg_add_scalar(in[3], eps));
    p->c = tg_sub(in[0], in[2]);
    p->u = tg_mul(in[1], in[4]);
    p->sg = S(p, p->u);
    p->sgx = S(p, tg_mul(p->u, p->c));
}

/* VJP: upstream gx, gw, gb (zeros where no gradient flows) */
tg_status tg__ln_grad_vjp(tg_grad_ctx *g, int n_axes, double eps)
{
    ln_parts p;
    tg_tensor *const *in = g->in;
    tg_tensor *dy = in[1], *w = in[4], *dvar = in[6];
    tg_tensor *gx = g->dy[0], *gw = g->dy[1], *gb = g->dy[2];
    parts(&p, in, &g->in_meta[0], n_axes, eps);
    tg_tensor *a3 = tg_mul(p.a, tg_mul(p.a, p.a));
    tg_tensor *s_gx = S(&p, gx), *s_gxc = S(&p, tg_mul(gx, p.c));
    /* through u (in dx's a u, a S(u), a^3 S(u c) terms) */
    tg_tensor *gu = tg_sub(tg_sub(tg_mul(p.a, gx), tg_mul_scalar(tg_mul(p.a, s_gx), 1.0 / p.M)),
                           tg_mul_scalar(tg_mul(tg_mul(a3, s_gxc), p.c), 1.0 / p.M));
    /* through c: dx's c (2 dvar - a^3 sgx)/M, S(u c), and dw's dy c a */
    tg_tensor *k = tg_mul_scalar(tg_sub(tg_mul_scalar(dvar, 2.0), tg_mul(a3, p.sgx)), 1.0 / p.M);
    tg_tensor *gc = tg_add(tg_sub(tg_mul(gx, k), tg_mul_scalar(tg_mul(tg_mul(a3, s_gxc), p.u),
                                                               1.0 / p.M)),
                           tg_mul(tg_mul(gw, dy), p.a));
    if (g->needs_grad[0])
        g->dx[0] = gc;
    if (g->needs_grad[1])
        g->dx[1] = tg_add(tg_add(tg_mul(gu, w), tg_mul(tg_mul(gw, p.c), p.a)), gb);
    if (g->needs_grad[2])
        g->dx[2] = tg_neg(S(&p, gc));
    if (g->needs_grad[3]) {
        /* through a: S(gx u) - sg S(gx)/M - 3 a^2 sgx S(gx c)/M + S(gw dy c) */
        tg_tensor *ga = tg_add(
            tg_sub(tg_sub(S(&p, tg_mul(gx, p.u)), tg_mul_scalar(tg_mul(p.sg, s_gx), 1.0 / p.M)),
                   tg_mul_scalar(tg_mul(tg_mul(tg_mul(p.a, p.a), p.sgx), s_gxc), 3.0 / p.M)),
            S(&p, tg_mul(tg_mul(gw, dy), p.c)));
        g->dx[3] = tg_mul(ga, tg_mul_scalar(a3, -0.5)); /* da/dvar = -a^3 / 2 */
    }
    const tg_meta *mw = &g->in_meta[4];
    if (g->needs_grad[4])
        g->dx[4] = tg_sum_to(tg_mul(gu, dy), mw->ndim, mw->shape);
    if (g->needs_grad[5])
        g->dx[5] = tg_mul_scalar(s_gx, 1.0 / p.M);
    if (g->needs_grad[6])
        g->dx[6] = tg_mul_scalar(s_gxc, 2.0 / p.M);
    return TG_OK;
}

/* the tangent of input i, zeros when it has none */
static tg_tensor *tangent(const tg_jvp_ctx *c, int i)
{
    return c->dx[i] ? c->dx[i] : tg_zeros_like(c->in[i]);
}

/* JVP: the product rule through the same formulas */
tg_status tg__ln_grad_jvp(tg_jvp_ctx *c, int n_axes, double eps)
{
    ln_parts p;
    tg_tensor *const *in = c->in;
    tg_tensor *dy = in[1], *w = in[4], *dvar = in[6];
    parts(&p, in, &c->in_meta[0], n_axes, eps);
    tg_tensor *tx = tangent(c, 0), *tdy = tangent(c, 1), *tmean = tangent(c, 2);
    tg_tensor *tvar = tangent(c, 3), *tw = tangent(c, 4), *tdmean = tangent(c, 5);
    tg_tensor *tdvar = tangent(c, 6);
    tg_tensor *a3 = tg_mul(p.a, tg_mul(p.a, p.a));
    tg_tensor *ta = tg_mul(tg_mul_scalar(a3, -0.5), tvar);
    tg_tensor *tc = tg_sub(tx, tmean);
    tg_tensor *tu = tg_add(tg_mul(tdy, w), tg_mul(dy, tw));
    tg_tensor *tsg = S(&p, tu);
    tg_tensor *tsgx = S(&p, tg_add(tg_mul(tu, p.c), tg_mul(p.u, tc)));
    /* d(a u - a sg/M) */
    tg_tensor *t1 = tg_sub(tg_add(tg_mul(ta, p.u), tg_mul(p.a, tu)),
                           tg_mul_scalar(tg_add(tg_mul(ta, p.sg), tg_mul(p.a, tsg)), 1.0 / p.M));
    /* d(c (2 dvar - a^3 sgx)/M): d(a^3) = 3 a^2 ta */
    tg_tensor *k = tg_sub(tg_mul_scalar(dvar, 2.0), tg_mul(a3, p.sgx));
    tg_tensor *tk = tg_sub(tg_sub(tg_mul_scalar(tdvar, 2.0),
                                  tg_mul(tg_mul_scalar(tg_mul(tg_mul(p.a, p.a), ta), 3.0), p.sgx)),
                           tg_mul(a3, tsgx));
    tg_tensor *t2 = tg_mul_scalar(tg_add(tg_mul(tc, k), tg_mul(p.c, tk)), 1.0 / p.M);
    tg_tensor *tdx = tg_add(tg_add(t1, t2), tg_mul_scalar(tdmean, 1.0 / p.M));
    const tg_meta *mw = &c->in_meta[4];
    tg_tensor *tdw = tg_sum_to(tg_add(tg_add(tg_mul(tg_mul(tdy, p.c), p.a),
                                             tg_mul(tg_mul(dy, tc), p.a)),
                                      tg_mul(tg_mul(dy, p.c), ta)),
                               mw->ndim, mw->shape);
    tg_tensor *tdb = tg_sum_to(tdy, mw->ndim, mw->shape);
    tg_status s = tg__jvp_set(c, 0, tdx);
    if (s == TG_OK)
        s = tg__jvp_set(c, 1, tdw);
    return s == TG_OK ? tg__jvp_set(c, 2, tdb) : s;
}
