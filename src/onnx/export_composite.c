/* ONNX export of the ops without an ONNX operator at the export opset
 * (export_ops.c's onnx_ex_op asks here): unary chains of ONNX nodes, GELU
 * in its two forms, var and std. */
#include "onnx/export.h"

#include <stdlib.h>
#include <string.h>

/* Unary ops without an ONNX operator at the export opset, written as a
 * chain of ONNX nodes (PyTorch's exports of them, where it has one): each
 * step's operands are x (the input, cast to the output dtype), p (the
 * previous step's result) or c (the step's constant, of the output
 * dtype). log1p and expm1 lose their accuracy near 0 this way, as in
 * PyTorch's export; GELU (ONNX's Gelu is opset 20) is its erf form
 * x (1 + erf(x / sqrt 2)) / 2 or its tanh form, as torch.onnx writes them. */
typedef struct chain_step {
    const char *op, *args;
    double c;
} chain_step;

#define CHAIN_STEPS 9
#define S(op, args) {op, args, 0}
static const struct {
    const char *op;
    chain_step steps[CHAIN_STEPS];
} chains[] = {
    {"rsqrt", {S("Sqrt", "x"), S("Reciprocal", "p")}},
    {"silu", {S("Sigmoid", "x"), S("Mul", "xp")}},
    {"mish", {S("Softplus", "x"), S("Tanh", "p"), S("Mul", "xp")}},
    {"logsigmoid", {S("Neg", "x"), S("Softplus", "p"), S("Neg", "p")}},
    {"square", {S("Mul", "xx")}},
    {"log1p", {{"Add", "xc", 1}, S("Log", "p")}},
    {"expm1", {S("Exp", "x"), {"Sub", "pc", 1}}},
    {"log2", {S("Log", "x"), {"Div", "pc", 0.69314718055994530942}}},
    {"log10", {S("Log", "x"), {"Div", "pc", 2.30258509299404568402}}},
};
/* gelu's two forms by its attribute a: 0 erf, 1 tanh, 0.5 x (1 + tanh(sqrt(2 / pi)
 * (x + 0.044715 x^3))) */
static const chain_step gelu_forms[2][CHAIN_STEPS] = {
    {{"Mul", "xc", 0.70710678118654752440}, S("Erf", "p"), {"Add", "pc", 1}, S("Mul", "xp"),
     {"Mul", "pc", 0.5}},
    {S("Mul", "xx"), S("Mul", "px"), {"Mul", "pc", 0.044715}, S("Add", "xp"),
     {"Mul", "pc", 0.79788456080286535588}, S("Tanh", "p"), {"Add", "pc", 1}, S("Mul", "xp"),
     {"Mul", "pc", 0.5}}};
#undef S

static tg_status ex_chain(ex *e, const exnode *x, const chain_step *steps)
{
    tg_dtype dt = x->out_meta->dtype;
    char *xin = (char *)onnx_ex_input_as(e, x, 0, dt), *prev = NULL;
    int n = 0;
    while (n < CHAIN_STEPS && steps[n].op)
        n++;
    for (int i = 0; i < n && e->err == TG_OK; i++) {
        const char *in[2];
        char *cn = NULL;
        int n_in = 0;
        for (const char *a = steps[i].args; *a; a++) {
            if (*a == 'c')
                cn = onnx_ex_init_scalar(e, x->n->name, dt, steps[i].c);
            in[n_in++] = *a == 'x' ? xin : *a == 'p' ? prev : cn;
        }
        /* the last step makes the node's output under the node's name */
        char *out = i < n - 1 ? onnx_ex_aux_name(e, x->n->name) : NULL;
        const char *outs[1] = {out ? out : x->out[0]};
        onnx_node *nd = onnx_ex_node(e, steps[i].op, out ? out : x->n->name);
        if (nd)
            onnx_ex_io(e, nd, n_in, in, 1, outs);
        free(prev);
        free(cn);
        prev = out;
    }
    free(prev);
    if (xin != x->in[0])
        free(xin);
    return e->err;
}

/* the steps of the chain of op `name`, or NULL */
static const chain_step *chain_of(const char *name)
{
    for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++)
        if (!strcmp(name, chains[i].op))
            return chains[i].steps;
    return NULL;
}

static tg_status ex_gelu(ex *e, const exnode *x)
{
    return ex_chain(e, x, gelu_forms[onnx_ex_afloat(x, "a", 0) != 0]);
}

/* a node op(in) -> out named out, with axes (when na > 0) and keepdims */
static void ex_reduce_node(ex *e, const char *op, const char *in, const char *out, int na,
                           const int64_t *ax, int64_t keep)
{
    onnx_node *n = onnx_ex_node(e, op, out);
    if (n) {
        onnx_ex_io(e, n, 1, &in, 1, &out);
        if (na > 0)
            onnx_ex_attr_ints(e, n, "axes", na, ax);
        onnx_ex_attr_int(e, n, "keepdims", keep);
    }
}

/* var and std over axes with a correction: ReduceSumSquare(x -
 * ReduceMean(x)) / max(0, N - correction), N the elements a result
 * reduces (known from the input's shape), and for std its Sqrt: the
 * two-pass form PyTorch's export writes */
static tg_status ex_var(ex *e, const exnode *x)
{
    const tg_meta *in = x->in_meta[0];
    const int64_t *ax;
    int na = tg_attr_ints(x->n->attrs, x->n->n_attrs, "axes", &ax);
    int64_t count = 1;
    for (int d = 0; d < in->ndim; d++) {
        bool reduced = na == 0;
        for (int i = 0; i < na; i++)
            reduced = reduced || (ax[i] < 0 ? ax[i] + in->ndim : ax[i]) == d;
        count *= reduced ? in->shape[d] : 1;
    }
    double denom = (double)count - (double)onnx_ex_aint(x, "correction", 1);
    bool is_std = !strcmp(x->n->op->name, "std");
    char *mean = onnx_ex_aux_name(e, x->n->name), *dev = onnx_ex_aux_name(e, x->n->name);
    char *ss = onnx_ex_aux_name(e, x->n->name), *var = onnx_ex_aux_name(e, x->n->name);
    char *dn = onnx_ex_init_scalar(e, x->n->name, x->out_meta->dtype, denom > 0 ? denom : 0);
    const char *i_dev[2] = {x->in[0], mean}, *i_div[2] = {ss, dn};
    const char *o_var = is_std ? var : x->out[0];
    onnx_node *n;
    ex_reduce_node(e, "ReduceMean", x->in[0], mean, na, ax, 1);
    if ((n = onnx_ex_node(e, "Sub", dev)))
        onnx_ex_io(e, n, 2, i_dev, 1, (const char *const *)&dev);
    ex_reduce_node(e, "ReduceSumSquare", dev, ss, na, ax, onnx_ex_aint(x, "keepdim", 0));
    if ((n = onnx_ex_node(e, "Div", is_std ? var : x->n->name)))
        onnx_ex_io(e, n, 2, i_div, 1, &o_var);
    if (is_std && (n = onnx_ex_node(e, "Sqrt", x->n->name)))
        onnx_ex_io(e, n, 1, &o_var, 1, x->out);
    free(mean);
    free(dev);
    free(ss);
    free(var);
    free(dn);
    return e->err;
}

bool onnx_ex_composite(ex *e, const exnode *x)
{
    const char *name = x->n->op->name;
    if (!strcmp(name, "gelu"))
        ex_gelu(e, x);
    else if (!strcmp(name, "var") || !strcmp(name, "std"))
        ex_var(e, x);
    else if (chain_of(name))
        ex_chain(e, x, chain_of(name));
    else
        return false;
    return true;
}
