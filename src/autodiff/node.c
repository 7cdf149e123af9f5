/* Recording op applications on the tape, and node lifetime. Nodes are
 * freed iteratively so that long chains cannot overflow the C stack. */
#include "autodiff/node.h"
#include "autodiff/forward_ad.h"
#include "graph/graph_impl.h"
#include "util/grow.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- grad mode (per thread, nestable) -------------------------------- */
#define GRAD_MODE_STACK 64
static _Thread_local bool grad_disabled;
static _Thread_local bool grad_stack[GRAD_MODE_STACK];
static _Thread_local int grad_depth;

bool tg_grad_enabled(void) { return !grad_disabled; }
void tg_set_grad_enabled(bool on) { grad_disabled = !on; }

void tg_no_grad_begin(void)
{
    if (grad_depth < GRAD_MODE_STACK)
        grad_stack[grad_depth] = grad_disabled;
    grad_depth++;
    grad_disabled = true;
}

void tg_no_grad_end(void)
{
    if (grad_depth == 0)
        return;
    grad_depth--;
    grad_disabled = grad_depth < GRAD_MODE_STACK ? grad_stack[grad_depth] : true;
}

bool tg__should_record(int n_in, tg_tensor *const *in)
{
    if (grad_disabled)
        return false;
    for (int i = 0; i < n_in; i++)
        if (in[i]->requires_grad || (in[i]->nograd_base && in[i]->nograd_base->requires_grad))
            return true; /* PyTorch records ops on a no-grad view of such a tensor too,
                          * with no edge to it (no gradient flows there) */
    return false;
}

/* ---- nodes ------------------------------------------------------------- */
tg_node *tg__node_new(int n_in, int n_out)
{
    size_t size = sizeof(tg_node) + (size_t)n_in * sizeof(tg_edge) +
                  (size_t)(n_in + n_out) *
                      (sizeof(tg_tensor *) + sizeof(uint64_t) + sizeof(tg_meta));
    tg_node *n = calloc(1, size);
    if (!n)
        return tg__error_null(TG_ERR_NOMEM, "out of memory recording a node");
    n->refcount = 1;
    n->n_in = n_in;
    n->n_out = n_out;
    char *p = (char *)(n + 1);
    n->in_meta = (tg_meta *)p;
    p += (size_t)n_in * sizeof(tg_meta);
    n->out_meta = (tg_meta *)p;
    p += (size_t)n_out * sizeof(tg_meta);
    n->edges = (tg_edge *)p;
    p += (size_t)n_in * sizeof(tg_edge);
    n->ver_in = (uint64_t *)p;
    p += (size_t)n_in * sizeof(uint64_t);
    n->ver_out = (uint64_t *)p;
    p += (size_t)n_out * sizeof(uint64_t);
    n->saved_in = (tg_tensor **)p;
    p += (size_t)n_in * sizeof(tg_tensor *);
    n->saved_out = (tg_tensor **)p;
    return n;
}

void tg__node_set_edge(tg_node *n, int i, tg_tensor *in)
{
    tg_edge *e = &n->edges[i];
    if (!in->requires_grad)
        return;
    if (in->grad_fn) {
        e->node = in->grad_fn;
        e->node->refcount++;
        e->index = in->out_index;
    } else {
        e->leaf = tg_retain(in);
    }
}

tg_tensor *tg__alias_whole(tg_tensor *t)
{
    if (t->graph) /* symbolic: no storage to share; a fresh tensor for its value */
        return tg__graph_symbolic(t->graph, t->value);
    tg_tensor *a = tg__alias(t, t->ndim, t->shape, t->strides, t->offset);
    tg__dual_share(a, t);
    return a;
}

static bool saves(uint32_t mask, int i)
{
    return mask == TG_SAVE_ALL || (i < 32 && ((mask >> i) & 1u));
}

/* input i of op applied to in[0..n) is needed by the gradient: saved by
 * the op's mask, and for TG_OP_SAVES_FOR_OTHERS only when another input
 * requires grad (only those inputs' gradients read it) */
static bool keeps_input(const tg_op_def *op, tg_tensor *const *in, int n, int i)
{
    if (!saves(op->save_inputs, i))
        return false;
    if (!(op->flags & TG_OP_SAVES_FOR_OTHERS))
        return true;
    for (int j = 0; j < n; j++)
        if (j != i && in[j]->requires_grad)
            return true;
    return false;
}

static void attach_outputs(tg_node *n, tg_op_ctx *c)
{
    for (int o = 0; o < c->n_out; o++) {
        tg_tensor *y = c->out[o];
        if (!tg_dtype_is_float(y->dtype))
            continue; /* integer and bool results carry no gradient */
        /* an in-place op's output is its input: the tensor's history goes
         * on through n (whose edge holds the node it had) */
        tg_node *before = y->grad_fn;
        y->requires_grad = true;
        y->grad_fn = n;
        y->out_index = o;
        n->refcount++;
        tg__node_release(before);
    }
}

tg_status tg__record(tg_op_ctx *c)
{
    const tg_op_def *op = c->op;
    if (op->nondiff)
        return TG_OK;
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i]->inference && keeps_input(op, c->in, c->n_in, i))
            return tg__error(TG_ERR_AUTOGRAD, "Inference tensors cannot be saved for "
                             "backward. To work around you can make a clone to get a "
                             "normal tensor and use it in autograd.");
    tg_status s;
    tg_node *n = tg__node_new(c->n_in, c->n_out);
    if (!n)
        return TG_ERR_NOMEM;
    n->op = op;
    n->name = op->name;
    n->n_attrs = c->n_attrs;
    if (c->n_attrs && !(n->attrs = tg_attrs_copy(c->attrs, c->n_attrs))) {
        free(n);
        return TG_ERR_NOMEM;
    }
    n->attr = tg__attrs_decode_copy(op, n->attrs, n->n_attrs, &s);
    if (s != TG_OK) {
        free(n->attrs);
        free(n);
        return s;
    }
    for (int i = 0; i < c->n_in; i++) {
        tg_tensor *x = c->in[i];
        tg__node_set_edge(n, i, x);
        tg_meta_of(x, &n->in_meta[i]);
        if (keeps_input(op, c->in, c->n_in, i)) {
            n->saved_in[i] = tg_retain(x);
            n->ver_in[i] = x->storage->version;
        }
    }
    for (int o = 0; o < c->n_out; o++) {
        tg_tensor *y = c->out[o];
        tg_meta_of(y, &n->out_meta[o]);
        if (saves(op->save_outputs, o)) {
            if (!(n->saved_out[o] = tg__alias_whole(y))) {
                tg__node_release(n);
                return TG_ERR_NOMEM;
            }
            n->ver_out[o] = y->storage->version;
        }
    }
    attach_outputs(n, c);
    tg__node_release(n); /* the outputs hold the node now */
    return TG_OK;
}

tg_status tg_autograd_saved_result_is(tg_tensor *result, tg_tensor *dst)
{
    if (!result || !dst)
        return tg__error(TG_ERR_ARG, "tg_autograd_saved_result_is: NULL tensor");
    tg_node *n = result->grad_fn;
    int o = result->out_index;
    if (!n || o < 0 || o >= n->n_out || !n->saved_out[o] || n->released ||
        result->dtype != dst->dtype || !tg__shape_eq(result->ndim, result->shape, dst->ndim,
                                                      dst->shape))
        return TG_OK;
    tg_tensor *now = tg__alias_whole(dst);
    if (!now)
        return TG_ERR_NOMEM;
    tg_release(n->saved_out[o]);
    n->saved_out[o] = now;
    n->ver_out[o] = dst->storage->version;
    return TG_OK;
}

void tg__node_free_saved(tg_node *n)
{
    if (n->fn_ctx)
        tg__function_ctx_free_saved(n->fn_ctx);
    for (int i = 0; i < n->n_in; i++) {
        tg_release(n->saved_in[i]);
        n->saved_in[i] = NULL;
    }
    for (int o = 0; o < n->n_out; o++) {
        tg_release(n->saved_out[o]);
        n->saved_out[o] = NULL;
    }
}

/* Freeing a node releases the nodes its edges point to, and the tensors it
 * saved, whose own nodes may then go too: a worklist instead of recursion. */
static _Thread_local tg_node **worklist;
static _Thread_local size_t work_n, work_cap;
static _Thread_local bool draining;

static void destroy(tg_node *n)
{
    tg__node_free_saved(n);
    for (int i = 0; i < n->n_in; i++) {
        tg__node_release(n->edges[i].node);
        tg_release(n->edges[i].leaf);
    }
    if (n->fn_ctx)
        tg__function_ctx_free(n->fn_ctx);
    tg__node_free_hooks(n);
    free(n->attrs);
    free(n->attr);
    free(n);
}

void tg__node_release(tg_node *n)
{
    if (!n || --n->refcount > 0)
        return;
    if (draining) {
        if (!TG_GROW(worklist, work_cap, work_n + 1)) {
            /* cannot defer: free now, recursion is bounded by memory */
            destroy(n);
            return;
        }
        worklist[work_n++] = n;
        return;
    }
    draining = true;
    destroy(n);
    while (work_n > 0)
        destroy(worklist[--work_n]);
    free(worklist);
    worklist = NULL;
    work_cap = 0;
    draining = false;
}

void tg__node_display_name(const tg_node *n, char *buf, size_t len)
{
    if (strstr(n->name, "Backward") || (!n->fn && isupper((unsigned char)n->name[0]))) {
        /* PyTorch's name already (tg_set_grad_fn_name) */
        snprintf(buf, len, "%s", n->name);
        return;
    }
    size_t k = 0;
    for (const char *p = n->name; *p && k + 12 < len; p++)
        if (*p != '_')
            buf[k++] = (char)(p == n->name || p[-1] == '_' ? toupper((unsigned char)*p) : *p);
    snprintf(buf + k, len - k, "%s", n->fn ? "Backward" : "Backward0");
}
