/* Custom operators from user code (PyTorch's autograd.Function): a C
 * forward run with grad off, a C backward run by the engine, and a
 * context that saves tensors for backward with version checks. */
#include "autodiff/node.h"
#include "tg/graph.h"
#include "util/grow.h"

#include <stdlib.h>

struct tg_function_ctx {
    int n_saved, cap_saved, cap_versions;
    tg_tensor **saved;
    uint64_t *versions;
    int n_in;
    bool needs[TG_MAX_OP_INPUTS];
    const char *name;
    void *user; /* owned through user_free (tg_function_apply_owned) */
    void (*user_free)(void *user);
};

void tg__function_ctx_free_saved(struct tg_function_ctx *ctx)
{
    for (int i = 0; i < ctx->n_saved; i++)
        tg_release(ctx->saved[i]);
    free(ctx->saved);
    free(ctx->versions);
    ctx->saved = NULL;
    ctx->versions = NULL;
    ctx->n_saved = ctx->cap_saved = ctx->cap_versions = 0;
}

void tg__function_ctx_free(struct tg_function_ctx *ctx)
{
    tg__function_ctx_free_saved(ctx);
    if (ctx->user_free)
        ctx->user_free(ctx->user);
    free(ctx);
}

tg_status tg_ctx_save_for_backward(tg_function_ctx *ctx, int n,
                                   tg_tensor *const *tensors)
{
    if (!ctx || n < 0 || (n > 0 && !tensors))
        return tg__error(TG_ERR_ARG, "tg_ctx_save_for_backward: bad arguments");
    if (!TG_GROW(ctx->saved, ctx->cap_saved, ctx->n_saved + n) ||
        !TG_GROW(ctx->versions, ctx->cap_versions, ctx->n_saved + n))
        return tg__error(TG_ERR_NOMEM, "out of memory saving tensors");
    for (int i = 0; i < n; i++) {
        if (!tensors[i])
            return tg__error(TG_ERR_ARG, "tg_ctx_save_for_backward: tensor %d is NULL", i);
        /* a graph's value (the function traced): kept, though a graph never
         * runs the backward that would read it (see tg_op_custom_function) */
        ctx->saved[ctx->n_saved] = tg_retain(tensors[i]);
        ctx->versions[ctx->n_saved++] = tensors[i]->storage ? tensors[i]->storage->version : 0;
    }
    return TG_OK;
}

int tg_ctx_num_saved(const tg_function_ctx *ctx) { return ctx ? ctx->n_saved : 0; }

/* the words of rule.c's check_version, which front ends translate to
 * PyTorch's version-counter error */
static tg_status check_saved(const tg_function_ctx *ctx, int i)
{
    const tg_tensor *t = ctx->saved[i];
    if (t->storage->version == ctx->versions[i])
        return TG_OK;
    char shape[160];
    return tg__error(TG_ERR_AUTOGRAD,
                     "backward: saved tensor %d of custom function '%s', saved for its "
                     "gradient, was modified by an in-place operation (it is at version "
                     "%llu, expected %llu). Clone it before modifying it, or modify it after "
                     "backward. The tensor: %s %s.",
                     i, ctx->name, (unsigned long long)t->storage->version,
                     (unsigned long long)ctx->versions[i], tg_dtype_name(t->dtype),
                     tg_shape_str(t->ndim, t->shape, shape, sizeof shape));
}

/* the engine checks every saved tensor before a backward starts */
tg_status tg__function_check_saved(const tg_function_ctx *ctx)
{
    tg_status s = TG_OK;
    for (int i = 0; i < ctx->n_saved && s == TG_OK; i++)
        s = check_saved(ctx, i);
    return s;
}

tg_tensor *tg_ctx_saved(tg_function_ctx *ctx, int i)
{
    if (!ctx || i < 0 || i >= ctx->n_saved)
        return tg__error_null(TG_ERR_INDEX, "tg_ctx_saved: no saved tensor %d "
                              "(%d saved)", i, ctx ? ctx->n_saved : 0);
    return check_saved(ctx, i) == TG_OK ? ctx->saved[i] : NULL;
}

bool tg_ctx_needs_input_grad(const tg_function_ctx *ctx, int i)
{
    return ctx && i >= 0 && i < ctx->n_in && ctx->needs[i];
}

extern const tg_op_def tg_op_custom_function;

/* a graph is being built, or an input is one of a graph's values */
static bool in_graph(int n_in, tg_tensor *const *in)
{
    bool graph = tg_graph_current() != NULL;
    for (int i = 0; i < n_in; i++)
        graph |= tg_is_symbolic(in[i]);
    return graph;
}

/* eagerly the forward's ops are not recorded (the node records the
 * function); in a graph they are its nodes, built in the caller's grad
 * mode (no_grad would cut them) */
static tg_tensor *run_forward(const tg_function *fn, tg_function_ctx *ctx, bool graph,
                              int n_in, tg_tensor *const *in, void *user)
{
    if (!graph)
        tg_no_grad_begin();
    tg_scope_begin();
    tg_tensor *y = fn->forward(ctx, n_in, in, user);
    /* a fresh alias: the output gets a grad_fn without touching y, which
     * may be an input passed through */
    tg_tensor *out = y ? tg__alias_whole(y) : NULL;
    tg_scope_end();
    if (!graph)
        tg_no_grad_end();
    if (!y && !tg__error_is_set())
        tg__error(TG_ERR_ARG, "custom function '%s': forward returned NULL",
                  fn->name);
    return out;
}

tg_tensor *tg_function_apply(const tg_function *fn, int n_in,
                             tg_tensor *const *in, void *user)
{
    return tg_function_apply_owned(fn, n_in, in, user, NULL);
}

/* the context owns user from here on, so every exit frees it once */
static tg_tensor *fail_owned(void *user, void (*user_free)(void *), tg_tensor *r)
{
    if (user_free)
        user_free(user);
    return r;
}

tg_tensor *tg_function_apply_owned(const tg_function *fn, int n_in,
                                   tg_tensor *const *in, void *user,
                                   void (*user_free)(void *user))
{
    if (!fn || !fn->forward || !fn->backward || n_in < 0 || n_in > TG_MAX_OP_INPUTS ||
        (n_in > 0 && !in))
        return fail_owned(user, user_free,
                          tg__error_null(TG_ERR_ARG, "tg_function_apply: need forward "
                                         "and backward callbacks and 0 to %d inputs (an array)",
                                         TG_MAX_OP_INPUTS));
    for (int i = 0; i < n_in; i++)
        if (!in[i])
            return fail_owned(user, user_free, tg__error_is_set() ? NULL
                              : tg__error_null(TG_ERR_ARG, "custom function "
                                               "'%s': input %d is NULL", fn->name, i));
    tg_function_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return fail_owned(user, user_free, tg__error_null(TG_ERR_NOMEM, "out of memory"));
    ctx->user = user;
    ctx->user_free = user_free;
    ctx->n_in = n_in;
    ctx->name = fn->name ? fn->name : "custom";
    for (int i = 0; i < n_in; i++)
        ctx->needs[i] = in[i]->requires_grad && tg_grad_enabled();
    bool graph = in_graph(n_in, in);
    tg_tensor *out = run_forward(fn, ctx, graph, n_in, in, user);
    if (out && graph) { /* the forward's nodes, marked: see tg_op_custom_function */
        tg__function_ctx_free(ctx);
        tg_tensor *marked = tg_op_call(&tg_op_custom_function, 1, &out, NULL, 0);
        tg_release(out);
        return marked;
    }
    if (!out || !tg__should_record(n_in, in) || !tg_dtype_is_float(out->dtype)) {
        tg__function_ctx_free(ctx);
        return tg__publish(out);
    }
    tg_node *n = tg__node_new(n_in, 1);
    if (!n) {
        tg__function_ctx_free(ctx);
        tg_release(out);
        return NULL;
    }
    n->fn = fn;
    n->fn_user = user;
    n->fn_ctx = ctx;
    n->name = ctx->name;
    for (int i = 0; i < n_in; i++) {
        tg__node_set_edge(n, i, in[i]);
        tg_meta_of(in[i], &n->in_meta[i]);
    }
    tg_meta_of(out, &n->out_meta[0]);
    out->requires_grad = true;
    out->grad_fn = n; /* takes the node's first reference */
    out->out_index = 0;
    return tg__publish(out);
}

/* called by the engine inside a scope of its own */
tg_status tg__function_backward(tg_node *n, tg_tensor *dy, tg_tensor **dx)
{
    tg_status s = n->fn->backward(n->fn_ctx, dy, n->n_in, dx, n->fn_user);
    if (s != TG_OK && !tg__error_is_set())
        tg__error(s, "custom function '%s': backward failed", n->name);
    return s;
}
