/* Views' and bases' histories across in-place writes (view_history.h).
 * Both repairs are ordinary recorded ops over the view's element
 * positions in its base (the base as one flat row: bases are the
 * contiguous results of ops), whose history is then handed to the
 * tensor being repaired:
 *   rebase:  b <- reshape(scatter(reshape(b, [n]), 0, pos, reshape(v, [k])), b's shape)
 *   refresh: v <- reshape(index_select(reshape(b, [n]), 0, pos), v's shape)
 * scatter's rule gives the old b the gradient with v's elements zeroed
 * and the new v those elements; index_select's gives b the view's
 * gradient at its positions. The values computed are the ones already
 * in memory; only the histories matter. */
#include "autodiff/view_history.h"
#include "autodiff/node.h"
#include "core/status_impl.h"
#include "tg/tg.h"

#include <string.h>


void tg__view_track(tg_tensor *y, tg_tensor *x)
{
    if (y == x || !y->storage || y->storage != x->storage || y->view_base || y->nograd_base)
        return;
    if (!tg_grad_enabled() || x->nograd_base) { /* a no-grad view, or a view of one */
        y->nograd_base = tg_retain(x->nograd_base ? x->nograd_base
                                                  : x->view_base ? x->view_base : x);
        y->view_version = y->storage->version;
        return;
    }
    y->view_base = tg_retain(x->view_base ? x->view_base : x);
    y->view_version = y->storage->version;
    if (x->view_multi) { /* a view of a multi-output view is one too (output 0 of its op) */
        y->view_multi = true;
        y->view_output = 0;
    }
}

/* the functions whose outputs are multi-output views, as the grad_fn
 * names their outputs take (static strings: nodes keep the pointer) */
static const char *const multi_output_fns[] = {"split", "split_with_sizes", "unbind", NULL};

tg_status tg_mark_multi_output_view(tg_tensor *t, const char *fn, int output_nr)
{
    if (!t || !fn)
        return tg__error(TG_ERR_ARG, "tg_mark_multi_output_view: NULL argument");
    const char *name = NULL;
    for (int i = 0; multi_output_fns[i]; i++)
        if (!strcmp(fn, multi_output_fns[i]))
            name = multi_output_fns[i];
    if (!name)
        return tg__error(TG_ERR_ARG, "tg_mark_multi_output_view: unknown function '%s' "
                         "(split, split_with_sizes or unbind)", fn);
    if (output_nr < 0)
        return tg__error(TG_ERR_ARG, "tg_mark_multi_output_view: output number %d < 0",
                         output_nr);
    if (!t->view_base)
        return TG_OK; /* not a tracked view: made with grad mode off, or not a view */
    t->view_multi = true;
    t->view_output = output_nr;
    if (t->grad_fn && t->grad_fn->op && t->grad_fn->n_out == 1 && t->grad_fn->refcount == 1)
        t->grad_fn->name = name; /* PyTorch's grad_fn: SplitBackward0, UnbindBackward0 */
    return TG_OK;
}

/* PyTorch's refusal of a write to (indirect: through its base or another
 * view of its base) a view made with grad mode off */
static tg_status nograd_view_error(bool indirect)
{
    return tg__error(TG_ERR_AUTOGRAD, "A view was created in no_grad mode and %s modified "
                     "inplace with grad mode enabled. Given that this use case is ambiguous "
                     "and error-prone, it is forbidden. You can clarify your code by moving "
                     "both the view and the inplace either both inside the no_grad block (if "
                     "you don't want the inplace to be tracked) or both outside (if you want "
                     "the inplace to be tracked).",
                     indirect ? "its base or another view of its base has been" : "is being");
}

/* PyTorch's refusal of a write to (indirect: through its base or another
 * view of its base) multi-output view t */
static tg_status multi_output_error(const tg_tensor *t, bool indirect)
{
    const char *how = indirect ? "its base or another view of its base has been"
                               : "is being";
    const char *why = " This view is the output of a function that returns multiple views. "
                      "Such functions do not allow the output views to be modified inplace. "
                      "You should replace the inplace operation by an out-of-place one.";
    if (!t->grad_fn)
        return tg__error(TG_ERR_AUTOGRAD, "A view was created in no_grad mode and %s "
                         "modified inplace with grad mode enabled.%s", how, why);
    char name[128];
    tg__node_display_name(t->grad_fn, name, sizeof name);
    return tg__error(TG_ERR_AUTOGRAD, "Output %d of %s is a view and %s modified inplace.%s",
                     t->view_output, name, how, why);
}

/* the position in base b (contiguous, as one flat row) of each element of
 * v, v's elements in row-major order; NULL on failure */
static tg_tensor *positions(const tg_tensor *v, const tg_tensor *b)
{
    tg_tensor *p = tg_empty(TG_INT64, 1, &v->numel);
    if (!p)
        return NULL;
    int64_t *out = tg_data(p), idx[TG_MAX_DIMS] = {0};
    for (int64_t k = 0; k < v->numel; k++) {
        int64_t pos = v->offset - b->offset;
        for (int i = 0; i < v->ndim; i++)
            pos += idx[i] * v->strides[i];
        out[k] = pos;
        for (int i = v->ndim - 1; i >= 0 && ++idx[i] == v->shape[i]; i--)
            idx[i] = 0;
    }
    return p;
}

/* may two elements of v share memory? Its dims of more than one element,
 * by stride from the smallest, must each step past everything the
 * smaller ones span (exact for slices, transposes, diagonals and the
 * like; a view that fails it, such as a sliding window, is refused) */
static bool may_overlap(const tg_tensor *v)
{
    if (!v->numel)
        return false;
    int order[TG_MAX_DIMS], n = 0;
    for (int i = 0; i < v->ndim; i++)
        if (v->shape[i] > 1)
            order[n++] = i;
    for (int i = 1; i < n; i++) /* insertion sort by stride */
        for (int j = i; j > 0 && v->strides[order[j]] < v->strides[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int64_t span = 0; /* the largest offset the smaller dims reach */
    for (int i = 0; i < n; i++) {
        int64_t st = v->strides[order[i]];
        if (st <= span)
            return true;
        span += (v->shape[order[i]] - 1) * st;
    }
    return false;
}

/* dst takes src's history (src: a result computed for it) */
static void take_history(tg_tensor *dst, const tg_tensor *src)
{
    tg_node *old = dst->grad_fn;
    dst->grad_fn = src->grad_fn;
    if (dst->grad_fn)
        dst->grad_fn->refcount++;
    dst->out_index = src->out_index;
    dst->requires_grad = src->requires_grad;
    tg__node_release(old);
}

static tg_status unsupported_base(const char *what)
{
    return tg__error(TG_ERR_UNSUPPORTED, "%s: the view's base is not contiguous (only views "
                     "of contiguous tensors are tracked across in-place writes); clone the "
                     "base first", what);
}

static tg_status refresh_one(tg_tensor *v)
{
    tg_tensor *b = v->view_base;
    if (!b->requires_grad && !v->grad_fn) {
        v->view_version = v->storage->version;
        return TG_OK; /* nothing to differentiate through the base */
    }
    if (v->view_multi) /* stays stale: every use fails, as PyTorch's */
        return multi_output_error(v, true);
    v->view_version = v->storage->version;
    if (!b->requires_grad)
        return TG_OK;
    if (!tg_is_contiguous(b))
        return unsupported_base("a view read after its base was written in place");
    tg_scope_begin();
    tg_tensor *pos = positions(v, b);
    tg_tensor *flat = pos ? tg_reshape(b, 1, &b->numel) : NULL;
    tg_tensor *sel = flat ? tg_index_select(flat, 0, pos) : NULL;
    tg_tensor *now = sel ? tg_reshape(sel, v->ndim, v->shape) : NULL;
    if (now)
        take_history(v, now);
    tg_scope_end();
    return now ? TG_OK : tg_last_status();
}

tg_status tg__view_refresh(int n, tg_tensor *const *in)
{
    if (!tg_grad_enabled())
        return TG_OK;
    for (int i = 0; i < n; i++) {
        tg_tensor *v = in[i];
        if (v && v->nograd_base && v->storage && v->storage->version != v->view_version &&
            v->nograd_base->requires_grad)
            return nograd_view_error(true);
        if (v && v->view_base && v->storage && v->storage->version != v->view_version) {
            tg_status s = refresh_one(v);
            if (s != TG_OK)
                return s;
        }
    }
    return TG_OK;
}

/* PyTorch's refusals of in-place changes to multi-output and no-grad
 * views (grad mode on) */
static tg_status view_rules(const tg_tensor *t, bool src_requires_grad)
{
    const tg_tensor *b = t->view_base;
    if (b && t->view_multi && (b->requires_grad || t->requires_grad || src_requires_grad))
        return multi_output_error(t, false);
    if (t->nograd_base &&
        (t->nograd_base->requires_grad || t->requires_grad || src_requires_grad))
        return nograd_view_error(false);
    return TG_OK;
}

tg_status tg_check_view_inplace(const tg_tensor *t, bool other_requires_grad)
{
    if (!t)
        return tg__error(TG_ERR_ARG, "tg_check_view_inplace: NULL tensor");
    return tg_grad_enabled() ? view_rules(t, other_requires_grad) : TG_OK;
}

tg_status tg_view_rebind(tg_tensor *to, const tg_tensor *from)
{
    if (!to || !from)
        return tg__error(TG_ERR_ARG, "tg_view_rebind: NULL tensor");
    const tg_tensor *root = from->nograd_base ? from->nograd_base
                            : from->view_base ? from->view_base : from;
    if (to->nograd_base != root || to->storage != from->storage)
        return TG_OK; /* not a view of from made with grad mode off */
    tg_release(to->nograd_base);
    to->nograd_base = from->nograd_base ? tg_retain(from->nograd_base) : NULL;
    to->view_base = from->view_base ? tg_retain(from->view_base) : NULL;
    to->view_multi = from->view_multi;
    to->view_output = from->view_output;
    to->view_version = from->view_version;
    return TG_OK;
}

tg_tensor *tg_view_base(const tg_tensor *t)
{
    return !t ? NULL : t->view_base ? t->view_base : t->nograd_base;
}

bool tg_is_nograd_view(const tg_tensor *t) { return t && t->nograd_base; }

void tg_view_untrack_temporary(tg_tensor *t)
{
    tg_tensor **b = !t ? NULL : t->view_base ? &t->view_base : &t->nograd_base;
    if (!b || !*b || t->view_multi || (*b)->refcount != 1)
        return; /* no view, or its base is reachable elsewhere */
    tg_release(*b);
    *b = NULL;
}

tg_status tg__view_check_write(const char *op, const tg_tensor *t, bool src_requires_grad,
                               bool one_value)
{
    const tg_tensor *b = t->view_base;
    tg_status s = view_rules(t, src_requires_grad);
    if (s != TG_OK)
        return s;
    if (!b || !(b->requires_grad || t->requires_grad))
        return TG_OK; /* not a view (or one made with grad mode off), or no history */
    if (b->requires_grad && !b->grad_fn)
        return tg__error(TG_ERR_AUTOGRAD, "%s: a view of a leaf tensor that requires grad "
                         "is being used in an in-place operation; update the leaf inside "
                         "tg_no_grad_begin/end", op);
    if (!tg_is_contiguous(b))
        return unsupported_base(op);
    if (!one_value && may_overlap(t))
        return tg__error(TG_ERR_ARG, "%s: some elements of the view refer to a single memory "
                         "location; clone it before writing to it", op);
    return TG_OK;
}

int tg__expanded_axis(const tg_tensor *t)
{
    if (!t->numel)
        return -1; /* an empty view overlaps nothing */
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] > 1 && t->strides[i] == 0)
            return i;
    return -1;
}

static void mark_node(tg_node *n)
{
    if (n)
        n->backward_error = "unsupported operation: more than one element of the written-to "
                            "tensor refers to a single memory location. Please clone() the "
                            "tensor before performing the operation.";
}

/* the write's node in the view and in its base: a backward from either
 * reaches one of them */
static void mark_overlap(tg_tensor *t)
{
    tg_tensor *b = tg_view_base(t);
    mark_node(t->grad_fn);
    if (b)
        mark_node(b->grad_fn);
}

tg_status tg_autograd_mark_overlapping_write(tg_tensor *t)
{
    if (!t)
        return tg__error(TG_ERR_ARG, "tg_autograd_mark_overlapping_write: NULL tensor");
    mark_overlap(t);
    return TG_OK;
}

tg_status tg__view_rebase(tg_tensor *t)
{
    tg_tensor *b = t->view_base;
    if (!b)
        return TG_OK;
    if (t->view_multi && !tg_grad_enabled())
        return TG_OK; /* unrecorded: t is now stale, and fails when next read with grad */
    t->view_version = t->storage->version; /* t's history (the write) is current */
    if (!t->requires_grad || !tg_grad_enabled())
        return TG_OK;
    if (!tg_is_contiguous(b))
        return unsupported_base("in-place write to a view");
    tg_scope_begin();
    tg_tensor *pos = positions(t, b);
    tg_tensor *flat = pos ? tg_reshape(b, 1, &b->numel) : NULL;
    tg_tensor *src = flat ? tg_reshape(t, 1, &t->numel) : NULL;
    tg_tensor *r = src ? tg_scatter(flat, 0, pos, src) : NULL;
    tg_tensor *whole = r ? tg_reshape(r, b->ndim, b->shape) : NULL;
    if (whole)
        take_history(b, whole);
    tg_scope_end();
    if (!whole)
        return tg_last_status();
    /* PyTorch's name for a base written through a view */
    tg_set_grad_fn_name(b, "CopySlices");
    if (tg__expanded_axis(t) >= 0) /* fill_ of an expanded view: its gradient is refused */
        mark_overlap(t);
    /* b's other views saw the write bump the version: they take b's new
     * history when they are next read */
    return TG_OK;
}
