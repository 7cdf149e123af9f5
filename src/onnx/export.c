/* ONNX export (opset 17): the part of a static graph the fetches need, op by
 * op through a table by op name; tg_onnx_export_module traces a module first. */
#include "onnx/ops.h"

#include "graph/graph_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ex {
    const tg_graph *g;
    onnx_graph *og;
    size_t cap_node, cap_init, cap_in;
    char **vname;          /* per value: its ONNX name (owned) */
    int n_aux;             /* counter for helper names */
    /* names for constant tensors (module parameters) */
    int n_hints;
    const tg_tensor *const *hint_tensor;
    const char *const *hint_name;
    tg_status err;
} ex;

static bool grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? 2 * *cap : 16;
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return false;
    memset((char *)p + *cap * elem, 0, (nc - *cap) * elem);
    *arr = p;
    *cap = nc;
    return true;
}

static tg_status ex_fail(ex *e, tg_status s, const char *fmt, ...) TG_PRINTF(3, 4);
static tg_status ex_fail(ex *e, tg_status s, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (e->err == TG_OK)
        e->err = tg__error(s, "tg_onnx_export: %s", msg);
    return e->err;
}

static char *dupstr(ex *e, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        ex_fail(e, TG_ERR_NOMEM, "out of memory");
    return d;
}

/* a fresh name for a helper value: "<base>__<n>" */
static char *aux_name(ex *e, const char *base)
{
    char buf[300];
    snprintf(buf, sizeof buf, "%s__%d", base, e->n_aux++);
    return dupstr(e, buf);
}

/* ---- building ONNX messages ------------------------------------------------------ */
static onnx_node *add_node(ex *e, const char *op, const char *name)
{
    onnx_graph *og = e->og;
    if (e->err || !grow((void **)&og->node, &e->cap_node, og->n_node, sizeof *og->node)) {
        ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    onnx_node *n = &og->node[og->n_node++];
    memset(n, 0, sizeof *n);
    n->op_type = dupstr(e, op);
    n->name = dupstr(e, name);
    return n;
}

static void node_io(ex *e, onnx_node *n, int n_in, const char *const *in, int n_out,
                    const char *const *out)
{
    n->input = calloc((size_t)n_in + 1, sizeof *n->input);
    n->output = calloc((size_t)n_out + 1, sizeof *n->output);
    if (!n->input || !n->output) {
        ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    n->n_input = (size_t)n_in;
    n->n_output = (size_t)n_out;
    for (int i = 0; i < n_in; i++)
        n->input[i] = dupstr(e, in[i]);
    for (int i = 0; i < n_out; i++)
        n->output[i] = dupstr(e, out[i]);
}

static onnx_attribute *add_attr(ex *e, onnx_node *n, const char *name, int type)
{
    onnx_attribute *a = realloc(n->attribute, (n->n_attribute + 1) * sizeof *a);
    if (!a) {
        ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return NULL;
    }
    n->attribute = a;
    a = &a[n->n_attribute++];
    memset(a, 0, sizeof *a);
    a->name = dupstr(e, name);
    a->type = type;
    a->has_type = true;
    return a;
}

static void attr_int(ex *e, onnx_node *n, const char *name, int64_t v)
{
    onnx_attribute *a = n ? add_attr(e, n, name, ONNX_ATTR_INT) : NULL;
    if (a) {
        a->i = v;
        a->has_i = true;
    }
}

static void attr_float(ex *e, onnx_node *n, const char *name, double v)
{
    onnx_attribute *a = n ? add_attr(e, n, name, ONNX_ATTR_FLOAT) : NULL;
    if (a) {
        a->f = (float)v;
        a->has_f = true;
    }
}

static void attr_ints(ex *e, onnx_node *n, const char *name, int k, const int64_t *v)
{
    onnx_attribute *a = n ? add_attr(e, n, name, ONNX_ATTR_INTS) : NULL;
    if (!a)
        return;
    a->ints = malloc(((size_t)k + 1) * sizeof *a->ints);
    if (!a->ints) {
        ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    memcpy(a->ints, v, (size_t)k * sizeof *v);
    a->n_ints = (size_t)k;
}

static void add_initializer(ex *e, const char *name, const tg_tensor *t)
{
    onnx_graph *og = e->og;
    if (e->err)
        return;
    if (!grow((void **)&og->initializer, &e->cap_init, og->n_initializer,
              sizeof *og->initializer)) {
        ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    onnx_tensor *tp = &og->initializer[og->n_initializer];
    if (onnx_tensor_from_tg(t, name, true, tp) != TG_OK) {
        ex_fail(e, tg_last_status(), "initializer '%s': %s", name, tg_last_error());
        return;
    }
    og->n_initializer++;
}

/* an int64 initializer (Reshape's shape, ...): returns its name */
static char *init_ints(ex *e, const char *base, int n, const int64_t *v, bool scalar)
{
    char *name = aux_name(e, base);
    int64_t len = n;
    tg_scope_begin(); /* owns t, scope or not */
    tg_tensor *t = tg_from_data(TG_INT64, scalar ? 0 : 1, &len, v);
    if (!t)
        ex_fail(e, tg_last_status(), "%s", tg_last_error());
    else
        add_initializer(e, name, t);
    tg_scope_end();
    return name;
}

static char *init_scalar(ex *e, const char *base, tg_dtype dt, double v)
{
    char *name = aux_name(e, base);
    tg_scope_begin();
    tg_tensor *t = tg_scalar(dt, v);
    if (!t)
        ex_fail(e, tg_last_status(), "%s", tg_last_error());
    else
        add_initializer(e, name, t);
    tg_scope_end();
    return name;
}

static void set_type(onnx_value_info *vi, const tg_meta *m)
{
    vi->has_type = true;
    vi->type.has_tensor_type = true;
    vi->type.elem_type = onnx_dtype_from_tg(m->dtype);
    vi->type.has_elem_type = true;
    vi->type.has_shape = true;
    vi->type.n_dims = (size_t)m->ndim;
    vi->type.dims = calloc((size_t)m->ndim + 1, sizeof *vi->type.dims);
    for (int d = 0; vi->type.dims && d < m->ndim; d++) {
        vi->type.dims[d].kind = ONNX_DIM_VALUE;
        vi->type.dims[d].value = m->shape[d];
    }
}

static void add_value_info(ex *e, onnx_value_info **arr, size_t *n, size_t *cap,
                           const char *name, const tg_meta *m)
{
    if (e->err)
        return;
    if (!grow((void **)arr, cap, *n, sizeof **arr)) {
        ex_fail(e, TG_ERR_NOMEM, "out of memory");
        return;
    }
    onnx_value_info *vi = &(*arr)[(*n)++];
    memset(vi, 0, sizeof *vi);
    vi->name = dupstr(e, name);
    set_type(vi, m);
}

/* ---- op mappings ---------------------------------------------------------------------- */
typedef struct exnode {
    const tg_gnode *n;
    const char *in[TG_MAX_OP_INPUTS];
    const char *out[TG_MAX_OP_OUTPUTS];
    const tg_meta *in_meta[TG_MAX_OP_INPUTS];
    const tg_meta *out_meta;
} exnode;

static int64_t aint(const exnode *x, const char *name, int64_t dflt)
{
    return tg_attr_int(x->n->attrs, x->n->n_attrs, name, dflt);
}

static double afloat(const exnode *x, const char *name, double dflt)
{
    return tg_attr_float(x->n->attrs, x->n->n_attrs, name, dflt);
}

static int aints(const exnode *x, const char *name, const int64_t **v)
{
    return tg_attr_ints(x->n->attrs, x->n->n_attrs, name, v);
}

/* one ONNX node with the tg node's inputs (first n_in) and output 0 */
static onnx_node *simple(ex *e, const exnode *x, const char *op, int n_in)
{
    onnx_node *n = add_node(e, op, x->n->name);
    if (n)
        node_io(e, n, n_in, x->in, 1, x->out);
    return n;
}

/* input i cast to dt when of another dtype (ONNX wants equal types) */
static const char *input_as(ex *e, const exnode *x, int i, tg_dtype dt)
{
    if (x->in_meta[i]->dtype == dt)
        return x->in[i];
    char *name = aux_name(e, x->n->name);
    onnx_node *c = add_node(e, "Cast", name);
    if (c) {
        node_io(e, c, 1, &x->in[i], 1, (const char *const *)&name);
        attr_int(e, c, "to", onnx_dtype_from_tg(dt));
    }
    return name; /* kept alive by the node (copied) and freed below */
}

static tg_status ex_binary(ex *e, const exnode *x, const char *op)
{
    tg_dtype dt = x->out_meta->dtype;
    if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "LessOrEqual") ||
        !strcmp(op, "Greater") || !strcmp(op, "GreaterOrEqual"))
        dt = tg_promote_types(x->in_meta[0]->dtype, x->in_meta[1]->dtype);
    char *a = (char *)input_as(e, x, 0, dt), *b = (char *)input_as(e, x, 1, dt);
    const char *in[2] = {a, b};
    onnx_node *n = add_node(e, op, x->n->name);
    if (n)
        node_io(e, n, 2, in, 1, x->out);
    if (a != x->in[0])
        free(a);
    if (b != x->in[1])
        free(b);
    return e->err;
}

static const struct { const char *tg, *onnx; } unary_map[] = {
    {"neg", "Neg"}, {"abs", "Abs"}, {"exp", "Exp"}, {"log", "Log"}, {"sqrt", "Sqrt"},
    {"sin", "Sin"}, {"cos", "Cos"}, {"tanh", "Tanh"}, {"sigmoid", "Sigmoid"},
    {"relu", "Relu"}, {"erf", "Erf"}, {"softplus", "Softplus"}, {"floor", "Floor"},
    {"ceil", "Ceil"}, {"round", "Round"}, {"sign", "Sign"}, {"logical_not", "Not"},
    {"clone", "Identity"}, {NULL, NULL}};

static const struct { const char *tg, *onnx; } binary_map[] = {
    {"add", "Add"}, {"sub", "Sub"}, {"mul", "Mul"}, {"div", "Div"}, {"pow", "Pow"},
    {"maximum", "Max"}, {"minimum", "Min"}, {"eq", "Equal"}, {"lt", "Less"},
    {"le", "LessOrEqual"}, {"gt", "Greater"}, {"ge", "GreaterOrEqual"},
    {"logical_and", "And"}, {"logical_or", "Or"}, {"logical_xor", "Xor"}, {NULL, NULL}};

static const struct { const char *tg, *onnx; } reduce_map[] = {
    {"sum", "ReduceSum"}, {"mean", "ReduceMean"}, {"max", "ReduceMax"},
    {"min", "ReduceMin"}, {"prod", "ReduceProd"}, {"logsumexp", "ReduceLogSumExp"},
    {NULL, NULL}};

static tg_status ex_reduce(ex *e, const exnode *x, const char *op)
{
    const int64_t *ax;
    int na = aints(x, "axes", &ax);
    int keep = (int)aint(x, "keepdim", 0);
    tg_dtype in_dt = x->in_meta[0]->dtype, out_dt = x->out_meta->dtype;
    /* ONNX keeps the input type (tg sums integers as int64): cast after */
    bool cast = in_dt != out_dt;
    char *mid = cast ? aux_name(e, x->n->name) : NULL;
    const char *outs[1] = {cast ? mid : x->out[0]};
    onnx_node *n = add_node(e, op, x->n->name);
    char *axes = NULL;
    if (n && !strcmp(op, "ReduceSum") && na > 0) {
        axes = init_ints(e, "axes", na, ax, false);
        const char *in[2] = {x->in[0], axes};
        node_io(e, n, 2, in, 1, outs);
    } else if (n) {
        node_io(e, n, 1, x->in, 1, outs);
        if (na > 0)
            attr_ints(e, n, "axes", na, ax);
    }
    attr_int(e, n, "keepdims", keep);
    if (cast) {
        onnx_node *c = add_node(e, "Cast", mid);
        if (c) {
            node_io(e, c, 1, outs, 1, x->out);
            attr_int(e, c, "to", onnx_dtype_from_tg(out_dt));
        }
    }
    free(mid);
    free(axes);
    return e->err;
}

static tg_status ex_op(ex *e, const exnode *x)
{
    const char *op = x->n->op->name;
    const int64_t *v;
    int nv;
    onnx_node *n;
    for (int i = 0; unary_map[i].tg; i++)
        if (!strcmp(op, unary_map[i].tg))
            return simple(e, x, unary_map[i].onnx, 1), e->err;
    for (int i = 0; binary_map[i].tg; i++)
        if (!strcmp(op, binary_map[i].tg))
            return ex_binary(e, x, binary_map[i].onnx);
    for (int i = 0; reduce_map[i].tg; i++)
        if (!strcmp(op, reduce_map[i].tg))
            return ex_reduce(e, x, reduce_map[i].onnx);
    if (!strcmp(op, "rsqrt")) {
        char *mid = aux_name(e, x->n->name);
        const char *m1[1] = {mid};
        if ((n = add_node(e, "Sqrt", mid)))
            node_io(e, n, 1, x->in, 1, m1);
        if ((n = add_node(e, "Reciprocal", x->n->name)))
            node_io(e, n, 1, m1, 1, x->out);
        free(mid);
    } else if (!strcmp(op, "leaky_relu")) {
        attr_float(e, simple(e, x, "LeakyRelu", 1), "alpha", afloat(x, "a", 0.01));
    } else if (!strcmp(op, "elu")) {
        attr_float(e, simple(e, x, "Elu", 1), "alpha", afloat(x, "a", 1.0));
    } else if (!strcmp(op, "clamp")) {
        tg_dtype dt = x->in_meta[0]->dtype;
        char *lo = init_scalar(e, "min", dt, afloat(x, "a", 0));
        char *hi = init_scalar(e, "max", dt, afloat(x, "b", 0));
        const char *in[3] = {x->in[0], lo, hi};
        if ((n = add_node(e, "Clip", x->n->name)))
            node_io(e, n, 3, in, 1, x->out);
        free(lo);
        free(hi);
    } else if (!strcmp(op, "cast")) {
        attr_int(e, simple(e, x, "Cast", 1), "to",
                 onnx_dtype_from_tg((tg_dtype)aint(x, "to", 0)));
    } else if (!strcmp(op, "ne")) {
        char *mid = aux_name(e, x->n->name);
        exnode y = *x;
        y.out[0] = mid;
        ex_binary(e, &y, "Equal");
        const char *m1[1] = {mid};
        if ((n = add_node(e, "Not", x->n->name)))
            node_io(e, n, 1, m1, 1, x->out);
        free(mid);
    } else if (!strcmp(op, "where")) {
        simple(e, x, "Where", 3);
    } else if (!strcmp(op, "argmax") || !strcmp(op, "argmin")) {
        n = simple(e, x, op[3] == 'm' && op[4] == 'a' ? "ArgMax" : "ArgMin", 1);
        attr_int(e, n, "axis", aint(x, "axis", 0));
        attr_int(e, n, "keepdims", aint(x, "keepdim", 0));
    } else if (!strcmp(op, "view")) {
        char *shape = init_ints(e, "shape", x->out_meta->ndim, x->out_meta->shape, false);
        const char *in[2] = {x->in[0], shape};
        if ((n = add_node(e, "Reshape", x->n->name)))
            node_io(e, n, 2, in, 1, x->out);
        free(shape);
    } else if (!strcmp(op, "permute")) {
        nv = aints(x, "perm", &v);
        attr_ints(e, simple(e, x, "Transpose", 1), "perm", nv, v);
    } else if (!strcmp(op, "expand")) {
        char *shape = init_ints(e, "shape", x->out_meta->ndim, x->out_meta->shape, false);
        const char *in[2] = {x->in[0], shape};
        if ((n = add_node(e, "Expand", x->n->name)))
            node_io(e, n, 2, in, 1, x->out);
        free(shape);
    } else if (!strcmp(op, "slice")) {
        int64_t s[4] = {aint(x, "start", 0), aint(x, "stop", 0), aint(x, "axis", 0),
                        aint(x, "step", 1)};
        char *names[4] = {init_ints(e, "starts", 1, &s[0], false),
                          init_ints(e, "ends", 1, &s[1], false),
                          init_ints(e, "axes", 1, &s[2], false),
                          init_ints(e, "steps", 1, &s[3], false)};
        const char *in[5] = {x->in[0], names[0], names[1], names[2], names[3]};
        if ((n = add_node(e, "Slice", x->n->name)))
            node_io(e, n, 5, in, 1, x->out);
        for (int i = 0; i < 4; i++)
            free(names[i]);
    } else if (!strcmp(op, "concat")) {
        if ((n = add_node(e, "Concat", x->n->name)))
            node_io(e, n, x->n->n_in, x->in, 1, x->out);
        attr_int(e, n, "axis", aint(x, "axis", 0));
    } else if (!strcmp(op, "pad")) {
        nv = aints(x, "pads", &v);
        int r = x->in_meta[0]->ndim;
        int64_t pads[2 * TG_MAX_DIMS] = {0};
        for (int i = 0; i < nv / 2 && i < r; i++) {
            pads[i] = v[2 * i];
            pads[r + i] = v[2 * i + 1];
        }
        char *p = init_ints(e, "pads", 2 * r, pads, false);
        char *val = init_scalar(e, "value", x->in_meta[0]->dtype, afloat(x, "value", 0));
        const char *in[3] = {x->in[0], p, val};
        if ((n = add_node(e, "Pad", x->n->name)))
            node_io(e, n, 3, in, 1, x->out);
        free(p);
        free(val);
    } else if (!strcmp(op, "tile")) {
        nv = aints(x, "reps", &v);
        int r = x->out_meta->ndim;
        int64_t reps[TG_MAX_DIMS];
        for (int i = 0; i < r; i++) /* torch.tile aligns reps at the right */
            reps[i] = i - (r - nv) >= 0 ? v[i - (r - nv)] : 1;
        char *rp = init_ints(e, "repeats", r, reps, false);
        const char *in[2] = {x->in[0], rp};
        if (r != x->in_meta[0]->ndim)
            ex_fail(e, TG_ERR_UNSUPPORTED, "tile that adds dims cannot be exported");
        else if ((n = add_node(e, "Tile", x->n->name)))
            node_io(e, n, 2, in, 1, x->out);
        free(rp);
    } else if (!strcmp(op, "index_select")) {
        attr_int(e, simple(e, x, "Gather", 2), "axis", aint(x, "axis", 0));
    } else if (!strcmp(op, "matmul")) {
        simple(e, x, "MatMul", 2);
    } else if (!strcmp(op, "gemm")) {
        n = simple(e, x, "Gemm", x->n->n_in);
        attr_float(e, n, "alpha", afloat(x, "alpha", 1));
        attr_float(e, n, "beta", afloat(x, "beta", 1));
        attr_int(e, n, "transA", aint(x, "trans_a", 0));
        attr_int(e, n, "transB", aint(x, "trans_b", 0));
    } else if (!strcmp(op, "conv2d")) {
        n = simple(e, x, "Conv", x->n->n_in);
        const int64_t *st, *pd, *dl;
        if (aints(x, "stride", &st) != 2 || aints(x, "padding", &pd) != 2 ||
            aints(x, "dilation", &dl) != 2)
            return ex_fail(e, TG_ERR_INTERNAL, "conv2d node '%s' lacks attributes",
                           x->n->name);
        int64_t pads[4] = {pd[0], pd[1], pd[0], pd[1]};
        attr_ints(e, n, "kernel_shape", 2, x->in_meta[1]->shape + 2);
        attr_ints(e, n, "strides", 2, st);
        attr_ints(e, n, "pads", 4, pads);
        attr_ints(e, n, "dilations", 2, dl);
        attr_int(e, n, "group", aint(x, "groups", 1));
    } else if (!strcmp(op, "max_pool2d") || !strcmp(op, "avg_pool2d")) {
        const int64_t *k, *st, *pd;
        if (aints(x, "kernel", &k) != 2 || aints(x, "stride", &st) != 2 ||
            aints(x, "padding", &pd) != 2)
            return ex_fail(e, TG_ERR_INTERNAL, "pool node '%s' lacks attributes", x->n->name);
        bool max = op[0] == 'm';
        n = simple(e, x, max ? "MaxPool" : "AveragePool", 1);
        int64_t pads[4] = {pd[0], pd[1], pd[0], pd[1]};
        attr_ints(e, n, "kernel_shape", 2, k);
        attr_ints(e, n, "strides", 2, st);
        attr_ints(e, n, "pads", 4, pads);
        attr_int(e, n, "ceil_mode", aint(x, "ceil_mode", 0));
        if (!max)
            attr_int(e, n, "count_include_pad", aint(x, "count_include_pad", 1));
    } else if (!strcmp(op, "softmax") || !strcmp(op, "log_softmax")) {
        n = simple(e, x, op[0] == 's' ? "Softmax" : "LogSoftmax", 1);
        attr_int(e, n, "axis", aint(x, "axis", -1));
    } else if (!strcmp(op, "layer_norm")) {
        int64_t na = aint(x, "n_axes", 1);
        if ((n = add_node(e, "LayerNormalization", x->n->name)))
            node_io(e, n, 3, x->in, 1, x->out);
        attr_int(e, n, "axis", -na);
        attr_float(e, n, "epsilon", afloat(x, "eps", 1e-5));
    } else {
        return ex_fail(e, TG_ERR_UNSUPPORTED, "op '%s' (node '%s') has no ONNX mapping", op,
                       x->n->name);
    }
    return e->err;
}

/* ---- the walk ------------------------------------------------------------------------------ */
static const char *hint_for(const ex *e, const tg_tensor *t)
{
    for (int i = 0; i < e->n_hints; i++)
        if (e->hint_tensor[i] == t)
            return e->hint_name[i];
    return NULL;
}

/* marks the nodes the fetches need (data edges only) */
static bool *needed_nodes(const tg_graph *g, int n, const int *fetch_vals)
{
    bool *need = calloc((size_t)g->n_nodes + 1, 1);
    if (!need)
        return NULL;
    for (int i = 0; i < n; i++)
        need[g->values[fetch_vals[i]].node] = true;
    for (int id = g->n_nodes - 1; id >= 0; id--)
        if (need[id])
            for (int j = 0; j < g->nodes[id].n_in; j++)
                need[g->values[g->nodes[id].in[j]].node] = true;
    return need;
}

static tg_status export_graph(tg_graph *g, int n_fetches, tg_tensor *const *fetches,
                              const char *path, int n_hints, const tg_tensor *const *ht,
                              const char *const *hn)
{
    if (!g || !path || n_fetches < 1 || !fetches)
        return tg__error(TG_ERR_ARG, "tg_onnx_export: needs a graph, fetches and a path");
    int *fv = calloc((size_t)n_fetches, sizeof *fv);
    if (!fv)
        return tg__error(TG_ERR_NOMEM, "tg_onnx_export: out of memory");
    for (int i = 0; i < n_fetches; i++)
        if ((fv[i] = tg__graph_value_of(g, fetches[i], "tg_onnx_export", "fetch")) < 0) {
            free(fv);
            return tg_last_status();
        }
    onnx_model *m = calloc(1, sizeof *m);
    ex e = {.g = g, .n_hints = n_hints, .hint_tensor = ht, .hint_name = hn};
    bool *need = needed_nodes(g, n_fetches, fv);
    e.vname = calloc((size_t)g->n_values + 1, sizeof *e.vname);
    if (m) {
        m->graph = calloc(1, sizeof *m->graph);
        m->opset_import = calloc(1, sizeof *m->opset_import);
    }
    if (!m || !need || !e.vname || !m->graph || !m->opset_import) {
        ex_fail(&e, TG_ERR_NOMEM, "out of memory");
        goto out;
    }
    e.og = m->graph;
    m->ir_version = 8;
    m->has_ir_version = true;
    m->n_opset_import = 1;
    m->opset_import[0].domain = dupstr(&e, "");
    m->opset_import[0].version = 17;
    m->opset_import[0].has_version = true;
    m->producer_name = dupstr(&e, "tensorgraph");
    m->producer_version = dupstr(&e, TG_VERSION);
    m->graph->name = dupstr(&e, g->name);
    size_t cap_out = 0;
    for (int id = 0; id < g->n_nodes && !e.err; id++) {
        const tg_gnode *n = &g->nodes[id];
        if (!need[id])
            continue;
        for (int j = 0; j < n->n_out; j++) {
            char buf[300];
            const char *hint = n->kind != TG_GNODE_OP ? hint_for(&e, n->tensor) : NULL;
            e.vname[n->out[j]] = dupstr(&e, hint ? hint
                                        : tg__value_name(g, n->out[j], buf, sizeof buf));
        }
        if (n->kind == TG_GNODE_PLACEHOLDER) {
            add_value_info(&e, &m->graph->input, &m->graph->n_input, &e.cap_in,
                           e.vname[n->out[0]], &g->values[n->out[0]].meta);
        } else if (n->kind == TG_GNODE_VARIABLE || n->kind == TG_GNODE_CONSTANT) {
            add_initializer(&e, e.vname[n->out[0]], n->tensor);
        } else {
            exnode x = {.n = n, .out_meta = &g->values[n->out[0]].meta};
            for (int j = 0; j < n->n_in; j++) {
                x.in[j] = e.vname[n->in[j]];
                x.in_meta[j] = &g->values[n->in[j]].meta;
            }
            for (int j = 0; j < n->n_out; j++)
                x.out[j] = e.vname[n->out[j]];
            /* a second output (max_pool2d's indices) must be unused */
            for (int k = id + 1; k < g->n_nodes && n->n_out > 1; k++)
                for (int j = 0; need[k] && j < g->nodes[k].n_in; j++)
                    for (int o = 1; o < n->n_out; o++)
                        if (g->nodes[k].in[j] == n->out[o])
                            ex_fail(&e, TG_ERR_UNSUPPORTED, "output %d of node '%s' (%s) "
                                    "has no ONNX counterpart", o, n->name, n->op->name);
            for (int o = 1; o < n->n_out; o++)
                for (int i = 0; i < n_fetches; i++)
                    if (fv[i] == n->out[o])
                        ex_fail(&e, TG_ERR_UNSUPPORTED, "output %d of node '%s' (%s) has "
                                "no ONNX counterpart", o, n->name, n->op->name);
            if (!e.err)
                ex_op(&e, &x);
        }
    }
    for (int i = 0; i < n_fetches && !e.err; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup = dup || fv[j] == fv[i];
        if (!dup)
            add_value_info(&e, &m->graph->output, &m->graph->n_output, &cap_out,
                           e.vname[fv[i]], &g->values[fv[i]].meta);
    }
    if (!e.err && onnx_model_save_file(m, path) != TG_OK)
        e.err = tg_last_status();
out:
    if (e.vname)
        for (int v = 0; v < g->n_values; v++)
            free(e.vname[v]);
    free(e.vname);
    free(need);
    free(fv);
    onnx_model_free(m);
    return e.err;
}

tg_status tg_onnx_export(tg_graph *g, int n_fetches, tg_tensor *const *fetches,
                         const char *path)
{
    return export_graph(g, n_fetches, fetches, path, 0, NULL, NULL);
}

tg_status tg_onnx_export_module(tg_module *m, int ndim, const int64_t *shape,
                                const char *path)
{
    if (!m || !shape || ndim < 1 || ndim > TG_MAX_DIMS || !path)
        return tg__error(TG_ERR_ARG, "tg_onnx_export_module: needs a module, a shape "
                         "and a path");
    tg_named_tensor *state = NULL;
    int ns = tg_module_state(m, &state);
    if (ns < 0)
        return tg_last_status();
    const tg_tensor **ht = calloc((size_t)ns + 1, sizeof *ht);
    const char **hn = calloc((size_t)ns + 1, sizeof *hn);
    tg_graph *g = tg_graph_new("module");
    tg_status s = ht && hn && g ? TG_OK : tg__error(TG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ns && s == TG_OK; i++) {
        ht[i] = state[i].tensor;
        hn[i] = state[i].name;
    }
    bool training = tg_module_is_training(m);
    tg_scope_begin();
    if (s == TG_OK && (s = tg_graph_begin(g)) == TG_OK) {
        tg_module_train(m, false);
        tg_tensor *x = tg_placeholder(g, "input", TG_FLOAT32, ndim, shape);
        tg_tensor *y = tg_module_forward(m, x);
        tg_module_train(m, training);
        tg_graph_end();
        if (!y)
            s = tg_last_status();
        else if (tg_graph_set_name(y, "output") != TG_OK)
            s = tg_last_status();
        if (s == TG_OK)
            s = export_graph(g, 1, &y, path, ns, ht, hn);
    }
    tg_scope_end();
    tg_graph_free(g);
    free(ht);
    free(hn);
    tg_named_tensors_free(state);
    return s;
}
