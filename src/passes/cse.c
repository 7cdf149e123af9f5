/* Common subexpression elimination: two pure nodes with the same op, the
 * same attributes and the same inputs compute the same thing, so readers
 * of the second read the first (inputs in either order for commutative
 * ops). Reads of a variable that an assign writes count as the same input
 * only when they see the same version of it (no write in between), so
 * nothing moves across a state update. Constants with equal contents
 * (small ones: scalars the builders make over and over) merge too.
 * Symbolic backward graphs share work with the forward this way. */
#include "passes/passes.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CONST_KEY_BYTES 256 /* constants compared by contents up to this size */

static void put_attrs(tg_strbuf *b, const tg_gnode *n)
{
    for (int i = 0; i < n->n_attrs; i++) {
        const tg_attr *a = &n->attrs[i];
        tg__strbuf_printf(b, "|%s=%d:", a->name, (int)a->type);
        switch (a->type) {
        case TG_ATTR_INT: tg__strbuf_printf(b, "%lld", (long long)a->u.i); break;
        case TG_ATTR_FLOAT: tg__strbuf_printf(b, "%a", a->u.f); break;
        case TG_ATTR_STRING: tg__strbuf_puts(b, a->u.s ? a->u.s : "(null)"); break;
        case TG_ATTR_INTS:
            for (int k = 0; k < a->u.ints.n; k++)
                tg__strbuf_printf(b, "%lld,", (long long)a->u.ints.v[k]);
            break;
        case TG_ATTR_FLOATS:
            for (int k = 0; k < a->u.floats.n; k++)
                tg__strbuf_printf(b, "%a,", a->u.floats.v[k]);
            break;
        case TG_ATTR_TENSOR: tg__strbuf_printf(b, "%p", (void *)a->u.t); break;
        case TG_ATTR_GRAPH: tg__strbuf_printf(b, "%p", a->u.g); break;
        }
    }
}

/* the key of op node id (src) with inputs mapped into dst; NULL when the
 * node is not a candidate */
static char *op_key(const tg_rw *r, const tg_state *st, int id)
{
    const tg_gnode *n = &r->src->nodes[id];
    int in[TG_MAX_OP_INPUTS];
    for (int i = 0; i < n->n_in; i++)
        in[i] = r->vmap[n->in[i]];
    if ((n->op->flags & TG_OP_COMMUTATIVE) && n->n_in == 2 && in[0] > in[1]) {
        int t = in[0];
        in[0] = in[1];
        in[1] = t;
    }
    tg_strbuf b = {0};
    tg__strbuf_printf(&b, "op:%s/%d", n->op->name, n->n_in);
    for (int i = 0; i < n->n_in; i++)
        tg__strbuf_printf(&b, "|%d", in[i]);
    for (int i = 0; i < n->n_in; i++) {
        int ver = tg__state_version(st, n->in[i], id);
        if (ver >= 0) /* a written variable: which version is read */
            tg__strbuf_printf(&b, "|v%d@%d", i, ver);
    }
    put_attrs(&b, n);
    return tg__strbuf_take(&b);
}

static char *const_key(const tg_gnode *n)
{
    const tg_tensor *t = n->tensor;
    int64_t bytes = t->numel * (int64_t)tg_dtype_size(t->dtype);
    if (bytes > MAX_CONST_KEY_BYTES)
        return NULL;
    tg_strbuf b = {0};
    char s[160];
    tg__strbuf_printf(&b, "const:%s%s:", tg_dtype_name(t->dtype),
                      tg_shape_str(t->ndim, t->shape, s, sizeof s));
    size_t es = tg_dtype_size(t->dtype);
    for (int64_t i = 0; i < t->numel; i++) {
        const unsigned char *p = tg__elem_ptr(t, i);
        for (size_t k = 0; k < es; k++)
            tg__strbuf_printf(&b, "%02x", p[k]);
    }
    return tg__strbuf_take(&b);
}

typedef struct cse_run {
    tg_hmap seen;  /* key -> dst node */
    char **keys;   /* owned: the map borrows them */
    int n_keys;
} cse_run;

/* visits src node id: merged into an equal dst node (true), or copied */
static tg_status visit(tg_pass_ctx *c, tg_rw *r, const tg_state *st, const int *ctrl_in,
                       cse_run *cr, int id, bool *merged)
{
    const tg_gnode *n = &r->src->nodes[id];
    char *key = NULL;
    *merged = false;
    if (n->kind == TG_GNODE_CONSTANT && n->n_ctrl == 0 && ctrl_in[id] == 0)
        key = const_key(n);
    else if (tg__pass_rewritable(r->src, ctrl_in, id))
        key = op_key(r, st, id);
    int same = key ? tg__hmap_get(&cr->seen, key) : -1;
    if (same >= 0 && n->kind == TG_GNODE_CONSTANT) {
        /* captured by reference: an in-place change of either makes the
         * plan stale */
        tg_status gs = tg__pass_add_guard(c, n->tensor);
        if (gs == TG_OK)
            gs = tg__pass_add_guard(c, r->dst->nodes[same].tensor);
        if (gs != TG_OK) {
            free(key);
            return gs;
        }
    }
    if (same >= 0) {
        for (int o = 0; o < n->n_out; o++)
            tg__rw_forward(r, n->out[o], r->dst->nodes[same].out[o]);
        free(key);
        *merged = true;
        return TG_OK;
    }
    int d = tg__rw_copy(r, id);
    if (d < 0) {
        free(key);
        return tg_last_status();
    }
    if (key) {
        cr->keys[cr->n_keys++] = key;
        if (!tg__hmap_put(&cr->seen, key, d))
            return tg__error(TG_ERR_NOMEM, "cse: out of memory");
    }
    return TG_OK;
}

tg_status tg__pass_cse(tg_pass_ctx *c)
{
    const tg_graph *g = c->g;
    tg_state st;
    tg_rw r = {0};
    bool have_state = false;
    cse_run cr = {tg__hmap_strings(), calloc((size_t)g->n_nodes + 1, sizeof(char *)), 0};
    int *ctrl_in = tg__ctrl_in_counts(g);
    tg_status s = cr.keys && ctrl_in ? TG_OK : tg__error(TG_ERR_NOMEM, "cse: out of memory");
    if (s == TG_OK && (s = tg__state_init(&st, g)) == TG_OK)
        have_state = true;
    if (s == TG_OK)
        s = tg__rw_begin(&r, g);
    int n_merged = 0;
    for (int id = 0; s == TG_OK && id < g->n_nodes; id++) {
        bool merged;
        s = visit(c, &r, &st, ctrl_in, &cr, id, &merged);
        n_merged += merged;
    }
    if (have_state)
        tg__state_free(&st);
    s = tg__rw_finish(&r, c, s, n_merged > 0);
    tg__pass_count(c, "merged", n_merged);
    for (int i = 0; i < cr.n_keys; i++)
        free(cr.keys[i]);
    free(cr.keys);
    tg__hmap_free(&cr.seen);
    free(ctrl_in);
    return s;
}
