/* The eager graph's nodes as the public API shows them (tg_grad_node):
 * references, names, the edges to the next nodes or leaves (PyTorch's
 * next_functions), and node hooks, which the engine runs around a node's
 * rule (engine.c calls tg__node_run_hooks). */
#include "autodiff/node.h"

#include <stdlib.h>

tg_grad_node *tg_grad_fn(const tg_tensor *t)
{
    return t ? tg_grad_node_retain(t->grad_fn) : NULL;
}

tg_grad_node *tg_grad_node_retain(tg_grad_node *n)
{
    if (n)
        n->refcount++;
    return n;
}

void tg_grad_node_release(tg_grad_node *n)
{
    tg__node_release(n);
}

const char *tg_grad_node_name(const tg_grad_node *n)
{
    return n ? n->name : NULL;
}

int tg_grad_node_num_next(const tg_grad_node *n)
{
    if (!n) {
        tg__error(TG_ERR_ARG, "tg_grad_node_num_next: node is NULL");
        return -1;
    }
    return n->n_in;
}

int tg_grad_node_num_outputs(const tg_grad_node *n)
{
    if (!n) {
        tg__error(TG_ERR_ARG, "tg_grad_node_num_outputs: node is NULL");
        return -1;
    }
    return n->n_out;
}

tg_status tg_grad_node_next(const tg_grad_node *n, int i, tg_grad_node **node, int *output_nr,
                            tg_tensor **leaf)
{
    if (!n || !node || !output_nr || !leaf)
        return tg__error(TG_ERR_ARG, "tg_grad_node_next: NULL argument");
    if (i < 0 || i >= n->n_in)
        return tg__error(TG_ERR_ARG, "tg_grad_node_next: input %d of a node with %d inputs", i,
                         n->n_in);
    const tg_edge *e = &n->edges[i];
    *node = tg_grad_node_retain(e->node);
    *output_nr = e->node ? e->index : 0;
    *leaf = e->leaf;
    return TG_OK;
}

tg_status tg_grad_node_add_hook(tg_grad_node *n, bool pre, tg_grad_node_hook hook, void *user,
                                void (*user_free)(void *user))
{
    if (!n || !hook)
        return tg__error(TG_ERR_ARG, "tg_grad_node_add_hook: NULL argument");
    tg_node_hook *h = calloc(1, sizeof *h);
    if (!h)
        return tg__error(TG_ERR_NOMEM, "tg_grad_node_add_hook: out of memory");
    *h = (tg_node_hook){hook, user, user_free, pre, NULL};
    tg_node_hook **end = &n->hooks;
    while (*end)
        end = &(*end)->next;
    *end = h;
    return TG_OK;
}

void *tg_grad_node_hook_user(const tg_grad_node *n, bool pre, tg_grad_node_hook hook)
{
    for (const tg_node_hook *h = n ? n->hooks : NULL; h; h = h->next)
        if (h->fn == hook && h->pre == pre)
            return h->user;
    return NULL;
}

void tg__node_free_hooks(tg_node *n)
{
    while (n->hooks) {
        tg_node_hook *h = n->hooks;
        n->hooks = h->next;
        if (h->user_free)
            h->user_free(h->user);
        free(h);
    }
}

/* a gradient a hook put in place of another: shaped as the tensor it is
 * the gradient of, cast to its dtype (consumes g; NULL with an error) */
static tg_tensor *conform(const tg_node *n, const char *what, int i, const tg_meta *m,
                          tg_tensor *g)
{
    if (!tg__shape_agree(g->ndim, g->shape, m->ndim, m->shape)) {
        char a[160], b[160];
        tg_shape_str(g->ndim, g->shape, a, sizeof a);
        tg_shape_str(m->ndim, m->shape, b, sizeof b);
        tg_release(g);
        return tg__error_null(TG_ERR_AUTOGRAD, "backward: a hook of '%s' gave a gradient of "
                              "shape %s for %s %d of shape %s", n->name, a, what, i, b);
    }
    if (g->dtype == m->dtype)
        return g;
    tg_tensor *c = tg_cast(g, m->dtype);
    tg_release(g);
    return c;
}

tg_status tg__node_run_hooks(tg_node *n, bool pre, tg_tensor **grad_inputs,
                             tg_tensor **grad_outputs)
{
    /* the node may lose its last other reference inside a hook (a front
     * end's handle dropped): hold one while they run */
    tg_grad_node_retain(n);
    tg_status s = TG_OK;
    for (tg_node_hook *h = n->hooks; h && s == TG_OK; h = h->next)
        if (h->pre == pre)
            s = h->fn(h->user, n, n->n_in, pre ? NULL : grad_inputs, n->n_out, grad_outputs);
    tg_tensor **gs = pre ? grad_outputs : grad_inputs;
    const tg_meta *meta = pre ? n->out_meta : n->in_meta;
    for (int i = 0; s == TG_OK && i < (pre ? n->n_out : n->n_in); i++)
        if (gs[i] && !(gs[i] = conform(n, pre ? "output" : "input", i, &meta[i], gs[i])))
            s = tg_last_status();
    tg__node_release(n);
    return s;
}
