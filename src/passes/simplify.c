/* Algebraic simplification, each rule exact (bitwise the same results):
 *  - identities: x*1, 1*x, x/1, x**1, x+0, 0+x, x-0 (a constant of ones
 *    or zeros that does not broadcast x to a larger shape or another
 *    dtype), cast to the same dtype, view/expand to the same shape, the
 *    identity permutation, clone, and reductions (sum, mean, prod, max,
 *    min) over axes of size 1 only, become x (or a view of x when the
 *    reduction drops those axes). x+0 turns -0 into +0, so forwarding x
 *    keeps a -0 the graph as built would have made +0: the one difference,
 *    invisible to every comparison and arithmetic result but 1/x and the
 *    sign bit;
 *  - chains: view(view(x)) is one view of x, permute(permute(x)) one
 *    permutation (none when they cancel), neg(neg(x)) is x;
 *  - x - x is zeros for integer and bool dtypes only (for floats it is
 *    NaN where x is infinite or NaN, so it stays).
 * A value computed from a variable that an assign writes is a snapshot
 * taken where it was computed: it is replaced by the variable itself only
 * through views, which alias the variable anyway. */
#include "ops/reduce.h"
#include "ops/shape.h"
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

typedef struct simp {
    tg_rw *r;
    const tg_state *st;
    const int *ctrl_in;
    int n_rules;
} simp;

static const tg_op_def *op(const char *name) { return tg_op_find(name); }
static bool is(const tg_gnode *n, const char *name)
{
    return n->kind == TG_GNODE_OP && !strcmp(n->op->name, name);
}

static bool meta_eq(const tg_meta *a, const tg_meta *b)
{
    return a->dtype == b->dtype && tg__shape_eq(a->ndim, a->shape, b->ndim, b->shape);
}

/* does dst value dv alias a variable that some node writes? */
static bool aliases_written(const simp *S, int dv)
{
    int var = tg__variable_behind(S->r->dst, dv);
    if (var < 0)
        return false;
    int sid = tg__hmap_get(&S->r->src->names, S->r->dst->nodes[var].name);
    return sid < 0 || S->st->wstart[sid] != S->st->wstart[sid + 1];
}

static int dst_in(const simp *S, const tg_gnode *n, int i) { return S->r->vmap[n->in[i]]; }
static const tg_meta *dmeta(const simp *S, int dv) { return &S->r->dst->values[dv].meta; }

static bool const_is(const simp *S, int dv, double x)
{
    return tg__tensor_all_equal(tg__const_tensor(S->r->dst, dv), x);
}

/* binary identities: which input the node equals, or -1 */
static int binary_identity(const simp *S, const tg_gnode *n)
{
    int a = dst_in(S, n, 0), b = dst_in(S, n, 1);
    if (is(n, "mul") || is(n, "add")) {
        double unit = is(n, "mul") ? 1.0 : 0.0;
        if (const_is(S, b, unit))
            return 0;
        if (const_is(S, a, unit))
            return 1;
    }
    if ((is(n, "div") || is(n, "pow")) && const_is(S, b, 1.0))
        return 0;
    if (is(n, "sub") && const_is(S, b, 0.0))
        return 0;
    return -1;
}

/* every reduced axis has size 1 (or the input is 0-d) */
static bool reduces_nothing(const simp *S, const tg_gnode *n)
{
    static const char *const names[] = {"sum", "mean", "prod", "max", "min"};
    bool family = false;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        family |= is(n, names[i]);
    if (!family)
        return false;
    const tg_meta *x = dmeta(S, dst_in(S, n, 0));
    const tg_red_attrs *a = n->attr;
    const int64_t *axes = a->axes.v;
    int na = a->axes.n;
    for (int d = 0; d < x->ndim; d++) {
        bool reduced = na == 0;
        for (int k = 0; k < na; k++)
            reduced |= axes[k] == d || axes[k] + x->ndim == d;
        if (reduced && x->shape[d] != 1)
            return false;
    }
    return true;
}

static bool identity_perm(const tg_gnode *n)
{
    const tg_ints *p = &((const tg_permute_attrs *)n->attr)->perm;
    for (int i = 0; i < p->n; i++)
        if (p->v[i] != i)
            return false;
    return true;
}

/* unary identities: the node equals its input 0 (same dtype and shape) */
static bool unary_identity(const simp *S, const tg_gnode *n)
{
    return is(n, "cast") || is(n, "view") || is(n, "expand") || is(n, "clone") ||
           (is(n, "permute") && identity_perm(n)) || reduces_nothing(S, n);
}

/* makes src value sv stand for dst value dv when that is exact */
static bool forward(simp *S, const tg_gnode *n, int dv)
{
    if (!meta_eq(dmeta(S, dv), &S->r->src->values[n->out[0]].meta))
        return false;
    if (!n->op->make_view && aliases_written(S, dv))
        return false; /* a snapshot of state: it must stay where it is */
    tg__rw_forward(S->r, n->out[0], dv);
    S->n_rules++;
    return true;
}

/* a new node standing for n's output */
static bool emit(simp *S, const tg_gnode *n, const char *opname, const tg_attr *a, int na,
                 int in, tg_status *s)
{
    int id = tg__rw_op(S->r, op(opname), n->name, a, na, 1, &in);
    if (id < 0) {
        *s = tg_last_status();
        return false;
    }
    tg__rw_forward(S->r, n->out[0], S->r->dst->nodes[id].out[0]);
    S->n_rules++;
    return true;
}

static const tg_gnode *producer(const simp *S, int dv)
{
    return &S->r->dst->nodes[S->r->dst->values[dv].node];
}

/* view(view(x)), a reduction over nothing that drops dims: one view */
static bool as_view(simp *S, const tg_gnode *n, tg_status *s)
{
    int x = dst_in(S, n, 0);
    const tg_gnode *p = producer(S, x);
    bool chain = is(n, "view") && is(p, "view");
    if (!chain && !reduces_nothing(S, n))
        return false;
    if (chain)
        x = p->in[0];
    const tg_meta *m = &S->r->src->values[n->out[0]].meta;
    if (meta_eq(dmeta(S, x), m))
        return forward(S, n, x);
    if (dmeta(S, x)->dtype != m->dtype)
        return false;
    tg_attr a = TG_AINTS("shape", m->shape, m->ndim);
    return emit(S, n, "view", &a, 1, x, s);
}

static bool permute_chain(simp *S, const tg_gnode *n, tg_status *s)
{
    const tg_gnode *p = producer(S, dst_in(S, n, 0));
    if (!is(n, "permute") || !is(p, "permute"))
        return false;
    const tg_ints *a1 = &((const tg_permute_attrs *)p->attr)->perm;
    const tg_ints *a2 = &((const tg_permute_attrs *)n->attr)->perm;
    const int64_t *p1 = a1->v, *p2 = a2->v;
    int n1 = a1->n, n2 = a2->n;
    if (n1 != n2 || n1 > TG_MAX_DIMS)
        return false;
    int64_t q[TG_MAX_DIMS];
    bool identity = true;
    for (int i = 0; i < n1; i++) {
        q[i] = p1[p2[i]];
        identity &= q[i] == i;
    }
    if (identity)
        return forward(S, n, p->in[0]);
    tg_attr a = TG_AINTS("perm", q, n1);
    return emit(S, n, "permute", &a, 1, p->in[0], s);
}

static bool neg_neg(simp *S, const tg_gnode *n)
{
    const tg_gnode *p = producer(S, dst_in(S, n, 0));
    return is(n, "neg") && is(p, "neg") && forward(S, n, p->in[0]);
}

/* x - x for integers and bools: zeros */
static bool self_sub(simp *S, const tg_gnode *n, tg_status *s)
{
    const tg_meta *m = &S->r->src->values[n->out[0]].meta;
    if (!is(n, "sub") || dst_in(S, n, 0) != dst_in(S, n, 1) || tg_dtype_is_float(m->dtype))
        return false;
    int floor = tg__scope_suspend();
    tg_tensor *z = tg_zeros(m->dtype, m->ndim, m->shape);
    tg__scope_resume(floor);
    int v = z ? tg__rw_constant(S->r, n->name, z) : -1;
    if (v < 0) {
        *s = tg_last_status();
        return false;
    }
    tg__rw_forward(S->r, n->out[0], v);
    S->n_rules++;
    return true;
}

static bool simplify_node(simp *S, const tg_gnode *n, tg_status *s)
{
    if (n->n_in == 2 && n->n_out == 1) {
        int k = binary_identity(S, n);
        if (k >= 0 && forward(S, n, dst_in(S, n, k)))
            return true;
        return self_sub(S, n, s);
    }
    if (n->n_in != 1 || n->n_out != 1)
        return false;
    if (unary_identity(S, n) && forward(S, n, dst_in(S, n, 0)))
        return true;
    return as_view(S, n, s) || permute_chain(S, n, s) || neg_neg(S, n);
}

tg_status tg__pass_simplify(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    int *ctrl_in = tg__ctrl_in_counts(g);
    tg_state st;
    tg_rw r = {0};
    bool have_state = false;
    tg_status s = ctrl_in ? TG_OK : tg_last_status();
    if (s == TG_OK && (s = tg__state_init(&st, g)) == TG_OK)
        have_state = true;
    if (s == TG_OK)
        s = tg__rw_begin(&r, g);
    simp S = {&r, &st, ctrl_in, 0};
    for (int id = 0; id < g->n_nodes && s == TG_OK; id++) {
        const tg_gnode *n = &g->nodes[id];
        bool done = tg__pass_rewritable(g, ctrl_in, id) && simplify_node(&S, n, &s);
        if (s == TG_OK && !done && tg__rw_copy(&r, id) < 0)
            s = tg_last_status();
    }
    if (have_state)
        tg__state_free(&st);
    s = tg__rw_finish(&r, c, s, S.n_rules > 0);
    tg__pass_count(c, "simplified", S.n_rules);
    free(ctrl_in);
    return s;
}
