/* ONNX control flow: If, Loop and Scan onto tg_cond and tg_while_loop.
 * Each branch or body is a subgraph loaded as a model of its own
 * (subgraph.c); the callbacks build it with onnx_build_body, so in graph
 * mode the subgraph is traced into the control node's body graph (values
 * of the enclosing graph it reads become the node's captures), and in
 * eager mode it runs on the host once per branch taken or iteration. */
#include "onnx/import.h"

#include "ops/op.h"
#include "tg/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a bool tensor of one element shaped as `want` declares ([] unless it
 * declares [1]) */
static tg_tensor *as_flag(tg_tensor *t, const tg_onnx_value_info *want)
{
    if (!t)
        return NULL;
    int nd = want && want->ndim == 1 ? 1 : 0;
    int64_t one = 1;
    return tg_reshape(onnx_as(t, TG_BOOL), nd, &one);
}

tg_status onnx_one_flag(const tg_tensor *t, const char *what)
{
    if (tg_dtype_of(t) != TG_BOOL || tg_numel(t) != 1)
        return tg__error(TG_ERR_IO, "%s must be a bool tensor of one element", what);
    return TG_OK;
}

/* a placeholder of g shaped like t when t is symbolic (of another graph) */
static tg_tensor *stand_in(tg_graph *g, tg_tensor *t)
{
    if (!t || !tg_is_symbolic(t))
        return t;
    return tg_placeholder(g, NULL, tg_dtype_of(t), tg_ndim(t), tg_shape(t));
}

/* what a dry trace runs on its stand-in context: the body, results to res */
typedef tg_status (*dry_fn)(onnx_ictx *dry, void *user, tg_tensor **res);

static tg_status dry_run(onnx_ictx *c, tg_graph *g, dry_fn fn, void *user, tg_tensor **res)
{
    onnx_ictx dry = *c;
    const mnode *mn = c->mnode;
    /* every value the node reads, explicitly or from its subgraphs: a
     * subgraph may read a value the node also takes as an input */
    int n_vals = 0;
    for (int j = 0; j < mnode_n_reads(mn); j++)
        n_vals = mnode_read(mn, j) + 1 > n_vals ? mnode_read(mn, j) + 1 : n_vals;
    tg_tensor **vals = calloc((size_t)n_vals + 1, sizeof *vals);
    if (!vals)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    tg_status st = TG_OK;
    for (int j = 0; st == TG_OK && j < mnode_n_reads(mn); j++) {
        int v = mnode_read(mn, j);
        if (v < 0 || vals[v])
            continue;
        vals[v] = stand_in(g, c->scope_vals[v]);
        st = vals[v] || !c->scope_vals[v] ? TG_OK : tg_last_status();
    }
    for (int j = 0; st == TG_OK && j < dry.n_in; j++)
        st = dry.in[j] && !(dry.in[j] = stand_in(g, dry.in[j])) ? tg_last_status() : TG_OK;
    dry.scope_vals = vals;
    if (st == TG_OK)
        st = fn(&dry, user, res);
    free(vals);
    return st;
}

/* The dtypes and shapes of results first .. first + n of a body: fn runs
 * it in a scratch graph on stand-ins for the node's inputs and for the
 * outer values it reads (symbolic values of the graph being built cannot
 * enter another graph). Their dims must be known unless any_dims (-1:
 * known when the graph runs). */
static tg_status dry_trace(onnx_ictx *c, dry_fn fn, void *user, int first, int n,
                           bool any_dims, tg_meta *metas)
{
    tg_graph *g = tg_graph_new("onnx_body_shapes");
    if (!g || tg_graph_begin(g) != TG_OK) {
        tg_graph_free(g);
        return tg_last_status();
    }
    tg_scope_begin();
    tg_tensor *res[ONNX_MAX_IO] = {0};
    tg_status st = dry_run(c, g, fn, user, res);
    for (int k = 0; st == TG_OK && k < n; k++) {
        tg_tensor *e = res[first + k];
        metas[k].dtype = tg_dtype_of(e);
        metas[k].ndim = tg_ndim(e);
        memcpy(metas[k].shape, tg_shape(e), (size_t)tg_ndim(e) * sizeof(int64_t));
        if (tg_numel(e) < 0 && !any_dims)
            st = tg__error(TG_ERR_UNSUPPORTED, "a scan output's element (output %d of the "
                           "body) has unknown dims", first + k);
    }
    tg_scope_end();
    tg_graph_end();
    tg_graph_free(g);
    return st;
}

/* ---- If ----------------------------------------------------------------------------- */
static tg_status if_branch(onnx_ictx *c, const char *attr, tg_tensor **out)
{
    int n;
    return onnx_build_body(c, attr, 0, NULL, c->n_out, out, &n);
}

static tg_status if_then(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)in;
    return if_branch(user, "then_branch", out);
}

static tg_status if_else(void *user, tg_tensor *const *in, tg_tensor **out)
{
    (void)in;
    return if_branch(user, "else_branch", out);
}

/* An If whose branches give sequences or optionals: the condition must be
 * known when the model is built (always so eagerly), and the branch taken
 * is built in place, its results the node's (a graph cannot choose
 * between sequences at run time). */
static tg_status if_values(onnx_ictx *c, tg_tensor *cond)
{
    tg_tensor *v = c->val[0] ? c->val[0] : !tg_is_symbolic(cond) ? cond : NULL;
    if (!v || tg_is_symbolic(v))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "its branches give sequences or optionals: "
                        "the condition ('%s') must be known when the model is built (a "
                        "constant, or a given input), or the model built eagerly",
                        c->node->input[0]);
    bool b;
    tg_status s = tg_copy_to(v, TG_BOOL, &b);
    int n;
    if (s == TG_OK)
        s = onnx_build_body_any(c, b ? "then_branch" : "else_branch", 0, NULL, NULL, NULL,
                                NULL, c->n_out, c->out, c->seq_out, c->none_out, &n);
    if (s != TG_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tg_last_error());
        return onnx_err(c, s, "%s", msg);
    }
    return TG_OK;
}

/* The dry run that checks output sizes before an eager node runs (build.c)
 * does not trace a subgraph: its nodes check their own sizes as they run,
 * and it may need values of the run (a Slice starting at the iteration
 * number) that a trace does not have. */
static tg_status x_if(onnx_ictx *c)
{
    if (c->sizing)
        return TG_OK;
    tg_tensor *cond = oi_req(c, 0, "cond");
    if (!cond)
        return tg_last_status();
    tg_status s = onnx_one_flag(cond, "If's condition");
    if (s != TG_OK)
        return s;
    int nt = onnx_body_outputs(c, "then_branch"), ne = onnx_body_outputs(c, "else_branch");
    if (nt < 0 || ne < 0)
        return onnx_err(c, TG_ERR_IO, "If needs the graph attributes then_branch and "
                        "else_branch");
    if (nt != ne || nt != c->n_out)
        return onnx_err(c, TG_ERR_IO, "then_branch has %d outputs and else_branch %d; the "
                        "node has %d", nt, ne, c->n_out);
    /* a condition known when the graph is built (exporters write If on
     * shapes: squeeze a dim when it is 1) builds the branch taken in place,
     * so the branches may differ in rank */
    bool known = c->graph_mode && (c->val[0] || !tg_is_symbolic(cond));
    if (known || onnx_body_gives_seq(c, "then_branch") ||
        onnx_body_gives_seq(c, "else_branch"))
        return if_values(c, cond);
    tg_tensor *no_params[1] = {NULL}; /* the branches read what they need by name */
    return tg_cond(as_flag(cond, NULL), if_then, if_else, c, 0, no_params, c->n_out, c->out);
}

/* ---- Loop ----------------------------------------------------------------------------
 * Loop variables: the iteration number, the condition, then the N
 * loop-carried values. Scan outputs (the body's outputs after those) are
 * stacked per iteration: on the host in eager mode; in graph mode as more
 * loop variables that grow by a row each iteration (a leading dim -1 in
 * their shape invariant), from [0, element...], the element's shape
 * taken from a dry trace of the body. */
typedef struct loop_ctx {
    onnx_ictx *c;
    tg_tensor *trip; /* M, or NULL */
    tg_tensor *first[2]; /* the initial iteration number and condition */
    int n_carried, n_scan;
    bool grow;                  /* graph mode: scan outputs as loop variables */
    tg_meta elem[ONNX_MAX_IO];  /* graph mode: the scan outputs' elements */
    tg_tensor **scan; /* eager: per output, the elements so far (owned) */
    int64_t n_iter, cap_iter;
    tg_status failed;
} loop_ctx;

static tg_status loop_test(void *user, tg_tensor *const *in, tg_tensor **out)
{
    loop_ctx *l = user;
    tg_tensor *go = tg_reshape(in[1], 0, NULL);
    if (l->trip)
        go = tg_logical_and(tg_lt(in[0], tg_reshape(l->trip, 0, NULL)), go);
    out[0] = go;
    return go ? TG_OK : tg_last_status();
}

/* eager mode: keeps this iteration's scan elements */
static tg_status keep_scan(loop_ctx *l, tg_tensor *const *elems)
{
    if (l->n_iter == l->cap_iter) {
        int64_t cap = l->cap_iter * 2 + 8;
        tg_tensor **grown = realloc(l->scan, (size_t)(cap * l->n_scan) * sizeof *grown);
        if (!grown)
            return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
        l->scan = grown;
        l->cap_iter = cap;
    }
    for (int k = 0; k < l->n_scan; k++)
        l->scan[l->n_iter * l->n_scan + k] = tg_retain(elems[k]);
    l->n_iter++;
    return TG_OK;
}

static tg_status loop_body(void *user, tg_tensor *const *in, tg_tensor **out)
{
    loop_ctx *l = user;
    onnx_ictx *c = l->c;
    int nv = 2 + l->n_carried, n_out;
    tg_tensor *res[TG_CONTROL_MAX_RESULTS + 2] = {0};
    tg_status s = onnx_build_body(c, "body", nv, in, TG_CONTROL_MAX_RESULTS, res, &n_out);
    if (s != TG_OK)
        return s;
    if (n_out != 1 + l->n_carried + l->n_scan)
        return tg__error(TG_ERR_IO, "the body has %d outputs; 1 + %d loop-carried + %d "
                        "scan outputs expected", n_out, l->n_carried, l->n_scan);
    s = onnx_one_flag(res[0], "the body's condition output");
    if (s != TG_OK)
        return s;
    out[0] = tg_add_scalar(in[0], 1.0);
    out[1] = tg_reshape(res[0], tg_ndim(in[1]), tg_shape(in[1]));
    for (int j = 0; j < l->n_carried; j++)
        out[2 + j] = res[1 + j];
    for (int k = 0; l->grow && k < l->n_scan; k++)
        if (!(out[2 + l->n_carried + k] =
                  tg__append_row(in[2 + l->n_carried + k], res[1 + l->n_carried + k])))
            return tg_last_status();
    return l->n_scan && !l->grow ? keep_scan(l, res + 1 + l->n_carried) : TG_OK;
}

/* the stacked scan outputs after an eager loop */
static tg_status stack_scan(loop_ctx *l)
{
    onnx_ictx *c = l->c;
    tg_tensor **col = malloc(((size_t)l->n_iter + 1) * sizeof *col);
    if (!col)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    tg_status s = TG_OK;
    for (int k = 0; s == TG_OK && k < l->n_scan; k++) {
        if (!l->n_iter) {
            s = onnx_err(c, TG_ERR_UNSUPPORTED, "the loop ran no iteration: the shape of "
                         "scan output %d is unknown", k);
            break;
        }
        for (int64_t i = 0; i < l->n_iter; i++)
            col[i] = l->scan[i * l->n_scan + k];
        c->out[l->n_carried + k] = tg_stack((int)l->n_iter, col, 0);
        if (!c->out[l->n_carried + k])
            s = tg_last_status();
    }
    free(col);
    return s;
}

static tg_status loop_dry(onnx_ictx *dry, void *user, tg_tensor **res)
{
    const loop_ctx *l = user;
    tg_graph *g = tg_graph_current();
    tg_tensor *formal[TG_CONTROL_MAX_RESULTS + 2];
    for (int j = 0; j < 2; j++)
        formal[j] = tg_placeholder(g, NULL, tg_dtype_of(l->first[j]), tg_ndim(l->first[j]),
                                   tg_shape(l->first[j]));
    for (int j = 0; j < l->n_carried; j++)
        formal[2 + j] = dry->in[2 + j];
    int n;
    return formal[0] && formal[1]
        ? onnx_build_body(dry, "body", 2 + l->n_carried, formal, ONNX_MAX_IO, res, &n)
        : tg_last_status();
}

/* graph mode: the growing variables of the scan outputs, from [0, elem]
 * (a dim of elem known only when the graph runs is 0 there: append_row
 * takes a list's other dims from its first row) */
static tg_status loop_growing(loop_ctx *l, tg_tensor **init, tg_shape_spec *inv)
{
    int nv = 2 + l->n_carried;
    tg_status s = dry_trace(l->c, loop_dry, l, 1 + l->n_carried, l->n_scan, true, l->elem);
    for (int j = 0; j < nv; j++)
        inv[j].ndim = -1;
    for (int k = 0; s == TG_OK && k < l->n_scan; k++) {
        const tg_meta *e = &l->elem[k];
        inv[nv + k].ndim = e->ndim + 1;
        inv[nv + k].shape[0] = -1;
        memcpy(inv[nv + k].shape + 1, e->shape, (size_t)e->ndim * sizeof(int64_t));
        int64_t shape[TG_MAX_DIMS + 1] = {0};
        for (int d = 0; d < e->ndim; d++)
            shape[d + 1] = e->shape[d] < 0 ? 0 : e->shape[d];
        init[nv + k] = tg_zeros(e->dtype, e->ndim + 1, shape);
        if (!init[nv + k])
            s = tg_last_status();
    }
    return s;
}

static tg_status loop_run(loop_ctx *l)
{
    onnx_ictx *c = l->c;
    int nv = 2 + l->n_carried;
    const tg_onnx_model *body = NULL;
    for (int k = 0; k < c->mnode->n_subs; k++)
        if (!strcmp(c->mnode->sub_names[k], "body"))
            body = c->mnode->subs[k];
    tg_tensor *init[TG_CONTROL_MAX_RESULTS + 2], *res[TG_CONTROL_MAX_RESULTS + 2] = {0};
    init[0] = tg_scalar(TG_INT64, 0);
    init[1] = c->n_in > 1 && c->in[1] ? as_flag(c->in[1], &body->inputs[1])
                                      : as_flag(tg_scalar(TG_BOOL, 1), &body->inputs[1]);
    if (init[0] && body->inputs[0].ndim == 1)
        init[0] = tg_reshape(init[0], 1, (const int64_t[]){1});
    if (!init[0] || !init[1])
        return tg_last_status();
    l->first[0] = init[0];
    l->first[1] = init[1];
    for (int j = 0; j < l->n_carried; j++)
        init[2 + j] = c->in[2 + j];
    tg_shape_spec inv[TG_CONTROL_MAX_RESULTS + 2];
    tg_loop_options opt = {.name = onnx_node_label(c->node)};
    l->grow = l->n_scan && c->graph_mode && !c->folding;
    if (l->grow) {
        if (nv + l->n_scan > TG_CONTROL_MAX_RESULTS)
            return tg__error(TG_ERR_UNSUPPORTED, "at most %d loop-carried values and scan "
                             "outputs in graph mode", TG_CONTROL_MAX_RESULTS - 2);
        tg_status s = loop_growing(l, init, inv);
        if (s != TG_OK)
            return s;
        opt.shape_invariants = inv;
        nv += l->n_scan;
    }
    tg_status s = tg_while_loop(loop_test, loop_body, l, nv, init, res, &opt);
    for (int j = 0; s == TG_OK && j < l->n_carried + (l->grow ? l->n_scan : 0); j++)
        c->out[j] = res[2 + j];
    return s == TG_OK && l->n_scan && !l->grow ? stack_scan(l) : s;
}

static tg_status x_loop(onnx_ictx *c)
{
    if (c->sizing)
        return TG_OK;
    for (int j = 0; j < 2 && j < c->n_in; j++)
        if (c->seq_in[j] || c->none_in[j])
            return onnx_err(c, TG_ERR_IO, "input %d ('%s') is %s; the %s is a tensor", j,
                            c->node->input[j], c->seq_in[j] ? "a sequence"
                            : "an optional without a value", j ? "condition" : "trip count");
    int nb_in = onnx_body_inputs(c, "body"), nb_out = onnx_body_outputs(c, "body");
    if (nb_in < 0)
        return onnx_err(c, TG_ERR_IO, "Loop needs the graph attribute body");
    loop_ctx l = {.c = c, .n_carried = c->n_in - 2};
    if (l.n_carried < 0)
        l.n_carried = 0;
    l.n_scan = c->n_out - l.n_carried;
    if (nb_in != 2 + l.n_carried || nb_out != 1 + c->n_out || l.n_scan < 0)
        return onnx_err(c, TG_ERR_IO, "the body takes %d inputs and gives %d outputs; with "
                        "%d loop-carried values and %d node outputs it must take %d and "
                        "give %d", nb_in, nb_out, l.n_carried, c->n_out, 2 + l.n_carried,
                        1 + c->n_out);
    bool values = onnx_body_gives_seq(c, "body");
    for (int j = 0; j < l.n_carried; j++)
        values = values || c->seq_in[2 + j] || c->none_in[2 + j];
    if (values)
        return onnx_loop_unrolled(c, l.n_carried, l.n_scan);
    if (2 + l.n_carried > TG_CONTROL_MAX_RESULTS)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "at most %d loop-carried values",
                        TG_CONTROL_MAX_RESULTS - 2);
    for (int j = 0; j < l.n_carried; j++)
        if (!c->in[2 + j])
            return onnx_err(c, TG_ERR_IO, "loop-carried input %d is missing", j);
    if (c->n_in > 0 && c->in[0]) {
        if (tg_dtype_of(c->in[0]) != TG_INT64 || tg_numel(c->in[0]) != 1)
            return onnx_err(c, TG_ERR_IO, "the trip count M must be an int64 tensor of one "
                            "element");
        l.trip = c->in[0];
    }
    if (c->n_in > 1 && c->in[1]) {
        tg_status s = onnx_one_flag(c->in[1], "Loop's condition");
        if (s != TG_OK)
            return s;
    }
    tg_status s = loop_run(&l);
    for (int64_t i = 0; i < l.n_iter * l.n_scan; i++)
        tg_release(l.scan[i]);
    free(l.scan);
    return s;
}


/* ---- Scan (9 and later; Scan-8 below) -------------------------------------------------
 * A loop over the T slices of the scan inputs along their axes, with the
 * states as loop variables. Each scan output is a loop variable too: a
 * [T, element...] buffer that iteration i writes at row i (T - 1 - i when
 * reversed) by adding the element under a one-hot row mask, which keeps
 * every shape fixed and the gradient exact (work O(T) per row: fine for
 * the short sequences of exported models, see docs/ONNX.md). The element
 * shapes come from a dry trace of the body in a scratch graph. */
typedef struct scan_ctx {
    onnx_ictx *c;
    int n_state, n_in, n_out; /* N, M, K */
    int64_t T;
    int64_t in_axis[ONNX_MAX_IO], out_axis[ONNX_MAX_IO];
    bool in_rev[ONNX_MAX_IO], out_rev[ONNX_MAX_IO];
    tg_meta elem[ONNX_MAX_IO]; /* of each scan output's element */
    const char *in_dirs;       /* the attribute of the inputs' directions */
} scan_ctx;

/* slice t of scan input k (position i, or T - 1 - i reversed) */
static tg_tensor *scan_slice(const scan_ctx *s, int k, tg_tensor *i)
{
    tg_tensor *x = s->c->in[s->n_state + k];
    tg_tensor *pos = s->in_rev[k] ? tg_sub(tg_scalar(TG_INT64, (double)(s->T - 1)), i) : i;
    int a = (int)s->in_axis[k];
    return tg_squeeze(tg_index_select(x, a, tg_reshape(pos, 1, (const int64_t[]){1})), a);
}

/* the body on states and slices: results new references in the scope */
static tg_status scan_apply(scan_ctx *s, tg_tensor *const *states, tg_tensor *i,
                            tg_tensor **res)
{
    tg_tensor *formal[ONNX_MAX_IO];
    for (int j = 0; j < s->n_state; j++)
        formal[j] = states[j];
    for (int k = 0; k < s->n_in; k++)
        if (!(formal[s->n_state + k] = scan_slice(s, k, i)))
            return tg_last_status();
    int n;
    tg_status st = onnx_build_body(s->c, "body", s->n_state + s->n_in, formal,
                                   ONNX_MAX_IO, res, &n);
    if (st == TG_OK && n != s->n_state + s->n_out)
        st = tg__error(TG_ERR_IO, "the body gives %d outputs; %d states + %d scan "
                      "outputs expected", n, s->n_state, s->n_out);
    return st;
}

static tg_status scan_dry(onnx_ictx *dry, void *user, tg_tensor **res)
{
    scan_ctx ds = *(scan_ctx *)user;
    ds.c = dry;
    tg_tensor *i = tg_placeholder(tg_graph_current(), NULL, TG_INT64, 0, NULL);
    return i ? scan_apply(&ds, dry->in, i, res) : tg_last_status();
}

/* the element shapes of the scan outputs, from a dry trace of the body */
static tg_status scan_elements(scan_ctx *s)
{
    return dry_trace(s->c, scan_dry, s, s->n_state, s->n_out, false, s->elem);
}

static tg_status scan_test(void *user, tg_tensor *const *in, tg_tensor **out)
{
    const scan_ctx *s = user;
    out[0] = tg_lt(in[0], tg_scalar(TG_INT64, (double)s->T));
    return out[0] ? TG_OK : tg_last_status();
}

/* buf + (row == pos) * elem: element e written at row pos of the buffer */
static tg_tensor *scan_write(const scan_ctx *s, int k, tg_tensor *buf, tg_tensor *pos,
                             tg_tensor *e)
{
    int64_t shape[TG_MAX_DIMS + 1] = {s->T};
    for (int d = 1; d <= s->elem[k].ndim; d++)
        shape[d] = 1;
    tg_tensor *rows = tg_reshape(tg_arange(TG_INT64, 0, (double)s->T, 1),
                                 s->elem[k].ndim + 1, shape);
    tg_tensor *mask = onnx_as(tg_eq(rows, pos), s->elem[k].dtype);
    return tg_add(buf, tg_mul(mask, tg_unsqueeze(e, 0)));
}

static tg_status scan_body(void *user, tg_tensor *const *in, tg_tensor **out)
{
    scan_ctx *s = user;
    tg_tensor *res[ONNX_MAX_IO] = {0};
    tg_status st = scan_apply(s, in + 1, in[0], res);
    if (st != TG_OK)
        return st;
    out[0] = tg_add_scalar(in[0], 1.0);
    for (int j = 0; j < s->n_state; j++)
        out[1 + j] = res[j];
    for (int k = 0; k < s->n_out; k++) {
        tg_tensor *pos = s->out_rev[k]
            ? tg_sub(tg_scalar(TG_INT64, (double)(s->T - 1)), in[0]) : in[0];
        int v = 1 + s->n_state + k;
        out[v] = scan_write(s, k, in[v], pos, res[s->n_state + k]);
        if (!out[v])
            return tg_last_status();
    }
    return TG_OK;
}

/* the axes and directions of the attributes, checked; T from the inputs */
static tg_status scan_layout(scan_ctx *s)
{
    onnx_ictx *c = s->c;
    const char *names[4] = {"scan_input_axes", s->in_dirs, "scan_output_axes",
                            "scan_output_directions"};
    int counts[4] = {s->n_in, s->n_in, s->n_out, s->n_out};
    for (int a = 0; a < 4; a++) {
        const int64_t *v;
        int n;
        tg_status st = oa_ints(c, names[a], &v, &n);
        if (st != TG_OK)
            return st;
        if (n >= 0 && n != counts[a])
            return onnx_err(c, TG_ERR_IO, "%s has %d entries, %d expected", names[a], n,
                            counts[a]);
        for (int k = 0; k < counts[a]; k++) {
            int64_t x = n > 0 ? v[k] : 0;
            if (a % 2 && x != 0 && x != 1)
                return onnx_err(c, TG_ERR_IO, "%s[%d] is %lld (0 or 1)", names[a], k,
                                (long long)x);
            int rank = a < 2 ? tg_ndim(c->in[s->n_state + k]) : s->elem[k].ndim + 1;
            int ax = 0;
            if (a % 2 == 0 && (st = onnx_axis(c, x, rank, names[a], &ax)) != TG_OK)
                return st;
            if (a == 0) s->in_axis[k] = ax;
            if (a == 1) s->in_rev[k] = x;
            if (a == 2) s->out_axis[k] = ax;
            if (a == 3) s->out_rev[k] = x;
        }
        if (a == 1) { /* the trip count, then the element shapes */
            for (int k = 0; k < s->n_in; k++) {
                int64_t t = tg_shape(c->in[s->n_state + k])[s->in_axis[k]];
                if (k && t != s->T)
                    return onnx_err(c, TG_ERR_IO, "scan input %d has %lld slices, input 0 "
                                    "%lld", k, (long long)t, (long long)s->T);
                s->T = t;
            }
            if ((st = scan_elements(s)) != TG_OK)
                return st;
        }
    }
    return TG_OK;
}

/* y with its dim 0 moved to position a */
static tg_tensor *rows_to_axis(tg_tensor *y, int a)
{
    int perm[TG_MAX_DIMS];
    for (int d = 0, src = 1; d < tg_ndim(y); d++)
        perm[d] = d == a ? 0 : src++;
    return tg_permute(y, perm);
}

/* Scan-9 and later on c's inputs (states, then scan inputs) */
static tg_status scan_core(onnx_ictx *c, const char *in_dirs)
{
    int64_t m;
    tg_status st = oa_int(c, "num_scan_inputs", -1, &m);
    if (st != TG_OK)
        return st;
    scan_ctx s = {.c = c, .n_in = (int)m, .in_dirs = in_dirs};
    s.n_state = c->n_in - s.n_in;
    s.n_out = c->n_out - s.n_state;
    if (m < 1 || s.n_state < 0 || s.n_out < 0 ||
        1 + s.n_state + s.n_out > TG_CONTROL_MAX_RESULTS)
        return onnx_err(c, TG_ERR_IO, "num_scan_inputs is %lld with %d inputs and %d outputs",
                        (long long)m, c->n_in, c->n_out);
    for (int j = 0; j < c->n_in; j++)
        if (!c->in[j])
            return onnx_err(c, TG_ERR_IO, "input %d is missing", j);
    if ((st = scan_layout(&s)) != TG_OK)
        return st;
    tg_tensor *init[TG_CONTROL_MAX_RESULTS], *res[TG_CONTROL_MAX_RESULTS] = {0};
    init[0] = tg_scalar(TG_INT64, 0);
    for (int j = 0; j < s.n_state; j++)
        init[1 + j] = c->in[j];
    for (int k = 0; k < s.n_out; k++) {
        int64_t shape[TG_MAX_DIMS + 1] = {s.T};
        memcpy(shape + 1, s.elem[k].shape, (size_t)s.elem[k].ndim * sizeof *shape);
        init[1 + s.n_state + k] = tg_zeros(s.elem[k].dtype, s.elem[k].ndim + 1, shape);
    }
    tg_loop_options opt = {.name = onnx_node_label(c->node)};
    st = tg_while_loop(scan_test, scan_body, &s, 1 + s.n_state + s.n_out, init, res, &opt);
    for (int j = 0; st == TG_OK && j < s.n_state; j++)
        c->out[j] = res[1 + j];
    for (int k = 0; st == TG_OK && k < s.n_out; k++) {
        tg_tensor *y = res[1 + s.n_state + k];
        int a = (int)s.out_axis[k];
        c->out[s.n_state + k] = a ? rows_to_axis(y, a) : y;
        if (!c->out[s.n_state + k])
            st = tg_last_status();
    }
    return st;
}

/* ---- Scan-8 ----------------------------------------------------------------------------
 * Every input and output has a batch axis first (scan inputs and outputs
 * scan along axis 1), after an optional sequence_lens input; the inputs'
 * directions are the attribute "directions". Imported as Scan-9 per batch
 * row: a row's states and scan inputs (the batch axis dropped) run through
 * the same loop, and its results are stacked back along the batch axis.
 * sequence_lens, when given, must be a constant equal to the sequence
 * length for every row (shorter rows would need a loop per row length). */
static tg_status scan8_lengths(onnx_ictx *c, tg_tensor *lens, int64_t B, int64_t T)
{
    if (!lens)
        return TG_OK;
    if (tg_is_symbolic(lens))
        return onnx_err(c, TG_ERR_UNSUPPORTED, "Scan-8's sequence_lens must be a constant "
                        "(an initializer), not a value known only when the model runs");
    if (tg_numel(lens) != B)
        return onnx_err(c, TG_ERR_IO, "sequence_lens has %lld entries for a batch of %lld",
                        (long long)tg_numel(lens), (long long)B);
    for (int64_t b = 0; b < B; b++)
        if ((int64_t)tg__load(tg_dtype_of(lens), tg__elem_ptr(lens, b)) != T)
            return onnx_err(c, TG_ERR_UNSUPPORTED, "sequence_lens[%lld] is %lld, shorter than "
                            "the %lld steps of the scan inputs (not supported)", (long long)b,
                            (long long)tg__load(tg_dtype_of(lens), tg__elem_ptr(lens, b)),
                            (long long)T);
    return TG_OK;
}

static tg_status x_scan8(onnx_ictx *c)
{
    int n = c->n_in - 1, n_out = c->n_out;
    tg_tensor *orig[ONNX_MAX_IO];
    for (int j = 0; j < n; j++)
        if (!(orig[j] = c->in[1 + j]) || tg_ndim(orig[j]) < 1)
            return onnx_err(c, TG_ERR_IO, "input %d is missing or has no batch axis", 1 + j);
    int64_t B = tg_shape(orig[0])[0], T = tg_ndim(orig[n - 1]) > 1 ? tg_shape(orig[n - 1])[1] : 0;
    for (int j = 1; j < n; j++)
        if (tg_shape(orig[j])[0] != B)
            return onnx_err(c, TG_ERR_IO, "input %d has a batch of %lld, input 1 %lld", 1 + j,
                            (long long)tg_shape(orig[j])[0], (long long)B);
    if (B < 1 || B > 64)
        return onnx_err(c, TG_ERR_UNSUPPORTED, "a batch of %lld (Scan-8 is imported for "
                        "batches of 1 to 64)", (long long)B);
    tg_status st = scan8_lengths(c, c->in[0], B, T);
    if (st != TG_OK)
        return st;
    tg_tensor *(*rows)[64] = calloc((size_t)n_out, sizeof *rows); /* per output, per row */
    if (!rows)
        return tg__error(TG_ERR_NOMEM, "onnx: out of memory");
    tg_tensor *lens = c->in[0];
    c->n_in = n;
    for (int64_t b = 0; st == TG_OK && b < B; b++) {
        tg_tensor *at = tg_from_data(TG_INT64, 1, (const int64_t[]){1}, &b);
        for (int j = 0; j < n && st == TG_OK; j++)
            if (!(c->in[j] = tg_squeeze(tg_index_select(orig[j], 0, at), 0)))
                st = tg_last_status();
        if (st == TG_OK)
            st = scan_core(c, "directions");
        for (int k = 0; st == TG_OK && k < n_out; k++)
            rows[k][b] = c->out[k];
    }
    c->n_in = n + 1; /* the node's own inputs again */
    c->in[0] = lens;
    for (int j = 0; j < n; j++)
        c->in[1 + j] = orig[j];
    for (int k = 0; st == TG_OK && k < n_out; k++)
        if (!(c->out[k] = tg_stack((int)B, rows[k], 0)))
            st = tg_last_status();
    free(rows);
    return st;
}

static tg_status x_scan(onnx_ictx *c)
{
    if (c->sizing)
        return TG_OK;
    return c->version < 9 ? x_scan8(c) : scan_core(c, "scan_input_directions");
}

const onnx_op_entry onnx_ops_control[] = {
    {"If", {1, 11, 13}, 1, 1, 1, ONNX_MAX_IO, x_if, 0},
    {"Loop", {1, 11, 13}, 2, ONNX_MAX_IO, 1, ONNX_MAX_IO, x_loop, ONNX_OP_SEQ},
    {"Scan", {8, 9, 11}, 1, ONNX_MAX_IO, 1, ONNX_MAX_IO, x_scan, 0},
    {NULL, {0}, 0, 0, 0, 0, NULL, 0},
};
