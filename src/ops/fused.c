/* Fused ops, made only by the level-2 graph passes (docs/PASSES.md), never
 * by user code: both run a program of elementwise ops (ops/fused.h) with
 * the interpreter of fused_exec.c.
 *
 *   fused_elementwise(inputs...)  the program's last result, a new value;
 *   fused_epilogue(inputs...)  a product (gemm, conv2d, ...: the program's
 *       first instruction, any pure one-output op) and elementwise ops
 *       applied to its output right after, over the output buffer itself
 *       (bias + relu, or relu_grad's mask in the backward pass): a lone
 *       op that may write over its input runs its own kernel in place,
 *       longer chains run block by block;
 *   fused_update(vars..., inputs...)  a training step's update chain:
 *       result `results[k]` is written over input k (a variable) in place,
 *       block by block after the whole block is computed, so every read
 *       of a variable in the program sees its value before the update;
 *       the output aliases input 0, as assign's does.
 *
 * Neither is differentiated (passes run on the graph a plan executes,
 * after gradients were built), so both are nondiff. */
#include "ops/fused.h"
#include "ops/unary.h"

#include "tg/autograd.h"

#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

extern const tg_op_def tg_op_fused_elementwise, tg_op_fused_update, tg_op_fused_epilogue;

static const tg_attr_spec elementwise_specs[] = {
    {.name = "program", .type = TG_ATTR_STRING, .field = TG_FIELD_STRING,
     .offset = offsetof(tg_fused_attrs, program), .required = true},
    {0}};
static const tg_attr_spec update_specs[] = {
    {.name = "program", .type = TG_ATTR_STRING, .field = TG_FIELD_STRING,
     .offset = offsetof(tg_fused_attrs, program), .required = true},
    TG_SPEC_INTS(tg_fused_attrs, results, TG_MIN(0), TG_REQUIRED),
    {0}};

static tg_status parse(const tg_op_ctx *c, tg_fused_prog *p)
{
    const tg_fused_attrs *a = c->attr;
    return tg__fused_parse(c->op->name, a->program, c->n_in, a->results.v, a->results.n,
                           c->op == &tg_op_fused_epilogue, p);
}

/* the node's program for its kernel: parsed once per process (cached) */
static tg_status program(const tg_op_ctx *c, tg_fused_prog *local, const tg_fused_prog **p)
{
    const tg_fused_attrs *a = c->attr;
    return tg__fused_parse_cached(c->op->name, a->program, c->n_in, a->results.v,
                                  a->results.n, c->op == &tg_op_fused_epilogue, local, p);
}

/* frees what program() parsed for this call only */
static void done(tg_fused_prog *local, const tg_fused_prog *p)
{
    if (p == local)
        tg__fused_free(local);
}

static bool broadcasts_to(const tg_meta *m, const tg_meta *to)
{
    if (m->ndim > to->ndim)
        return false;
    for (int i = 0; i < m->ndim; i++) {
        int64_t d = m->shape[m->ndim - 1 - i], t = to->shape[to->ndim - 1 - i];
        if (d != t && d != 1)
            return false;
    }
    return true;
}

/* every result broadcasts to the iteration shape `to` (a result that is
 * smaller is computed per output element: the same values, repeated) */
static tg_status check_results(const char *who, const tg_fused_prog *p, const tg_meta *m,
                               const tg_meta *to)
{
    for (int k = 0; k < p->n; k++)
        if (!broadcasts_to(&m[k], to)) {
            char a[160], b[160];
            return tg__error(TG_ERR_SHAPE, "%s: instruction %d's shape %s does not "
                             "broadcast to the output's %s", who, k,
                             tg_shape_str(m[k].ndim, m[k].shape, a, sizeof a),
                             tg_shape_str(to->ndim, to->shape, b, sizeof b));
        }
    return TG_OK;
}

/* what every instruction's result must broadcast to: the output, which is
 * the last instruction's (fused_elementwise), the first's (fused_epilogue's
 * product) or input 0's (fused_update's first variable) */
enum { RESULT_LAST, RESULT_FIRST, RESULT_INPUT0 };

/* the infer functions' common part: parses c's program into p and infers
 * each instruction's result into m, checked against the output's shape
 * (`out`, one of the above); on failure p is freed */
static tg_status parse_infer(tg_op_ctx *c, tg_fused_prog *p, tg_meta *m, int out)
{
    tg_status s = parse(c, p);
    if (s != TG_OK)
        return s;
    tg_meta in0;
    if (out == RESULT_INPUT0)
        tg_meta_of(c->in[0], &in0);
    s = tg__fused_infer(c->op->name, p, c->n_in, c->in, m);
    if (s == TG_OK)
        s = check_results(c->op->name, p, m, out == RESULT_LAST    ? &m[p->n - 1]
                                             : out == RESULT_FIRST ? &m[0]
                                                                   : &in0);
    if (s != TG_OK)
        tg__fused_free(p);
    return s;
}

/* ---- fused_elementwise -------------------------------------------------------------- */
static tg_status elementwise_infer(tg_op_ctx *c)
{
    tg_fused_prog p;
    tg_meta m[TG_FUSED_MAX_INSTRS];
    tg_status s = parse_infer(c, &p, m, RESULT_LAST);
    if (s != TG_OK)
        return s;
    s = tg_infer_set(c, 0, m[p.n - 1].dtype, m[p.n - 1].ndim, m[p.n - 1].shape);
    tg__fused_free(&p);
    return s;
}

static tg_status elementwise_kernel(tg_op_ctx *c)
{
    tg_fused_prog local;
    const tg_fused_prog *p;
    tg_status s = program(c, &local, &p);
    if (s != TG_OK)
        return s;
    int64_t last = p->n - 1;
    tg_dtype dt[TG_FUSED_MAX_INSTRS];
    s = tg__fused_dtypes(c->op->name, p, c->n_in, c->in, dt);
    if (s == TG_OK)
        s = tg__fused_run(c->op->name, p, dt, c->n_in, c->in, 1, &last, c->out, false);
    done(&local, p);
    return s;
}

/* ---- fused_epilogue ------------------------------------------------------------------ */
static tg_status epilogue_infer(tg_op_ctx *c)
{
    tg_fused_prog p;
    tg_meta m[TG_FUSED_MAX_INSTRS];
    tg_status s = parse_infer(c, &p, m, RESULT_FIRST);
    if (s != TG_OK)
        return s;
    if (p.n < 2 || m[p.n - 1].dtype != m[0].dtype ||
        !tg__shape_eq(m[p.n - 1].ndim, m[p.n - 1].shape, m[0].ndim, m[0].shape))
        s = tg__error(TG_ERR_SHAPE, "%s: the epilogue must end with the product's dtype and "
                      "shape, after at least one instruction", c->op->name);
    if (s == TG_OK)
        s = tg_infer_set(c, 0, m[0].dtype, m[0].ndim, m[0].shape);
    tg__fused_free(&p);
    return s;
}

/* the program is conv2d(...); act($0) with act the op named act: the
 * convolution applies relu, clamp and hardswish as it writes (the
 * pointwise, depthwise and few-channel paths; the others relu as they
 * write, clamp and hardswish right after) */
static bool conv_then(const tg_fused_prog *p, const char *act)
{
    const tg_fused_instr *r = &p->ins[1];
    return p->n == 2 && strcmp(p->ins[0].op->name, "conv2d") == 0 &&
           strcmp(r->op->name, act) == 0 && r->n_args == 1 && r->args[0] == -1;
}

/* conv2d(...); add($0, r) or add(r, $0) [; relu($1)]: ResNet's shortcut,
 * which the convolution can add (and relu) as it writes; *res: r's input
 * index, *relu: whether relu follows */
static bool residual_in_product(const tg_fused_prog *p, int *res, bool *relu)
{
    if ((p->n != 2 && p->n != 3) || strcmp(p->ins[0].op->name, "conv2d") != 0)
        return false;
    const tg_fused_instr *a = &p->ins[1];
    if (strcmp(a->op->name, "add") != 0 || a->n_args != 2)
        return false;
    if (a->args[0] == -1 && a->args[1] >= 0)
        *res = a->args[1];
    else if (a->args[1] == -1 && a->args[0] >= 0)
        *res = a->args[0];
    else
        return false;
    const tg_fused_instr *r = &p->ins[2];
    *relu = p->n == 3;
    return p->n == 2 ||
           (strcmp(r->op->name, "relu") == 0 && r->n_args == 1 && r->args[0] == -2);
}

/* the context of instruction I of an epilogue's program on args, writing
 * the fused node's output; set field by field: an initializer would clear
 * all of out_meta (kilobytes) */
static void instr_ctx(tg_op_ctx *ic, const tg_fused_instr *I, tg_tensor **args,
                      const tg_op_ctx *c)
{
    ic->op = I->op;
    ic->n_in = I->n_args;
    ic->n_out = 1;
    ic->in = args;
    ic->out = c->out;
    ic->attr = I->attr;
    ic->attrs = I->attrs;
    ic->n_attrs = I->n_attrs;
    ic->out_meta[0] = c->out_meta[0];
}

/* a chain of one op that may write over the product's input slot (relu,
 * relu_grad's mask, a bias add): its own kernel, in place over the output
 * (for small products the block-by-block runner costs more than the op);
 * false when the chain is not of that kind */
static bool single_in_place(const tg_fused_prog *p, const tg_op_ctx *c, tg_status *s)
{
    if (p->n != 2)
        return false;
    const tg_fused_instr *I = &p->ins[1];
    tg_tensor *args[TG_FUSED_MAX_ARGS];
    for (int a = 0; a < I->n_args; a++) {
        if (I->args[a] == -1 && !(TG_INPLACE_INPUTS(I->op->flags) & (1u << a)))
            return false; /* the product's slot is not one it may overwrite */
        args[a] = I->args[a] == -1 ? c->out[0] : c->in[I->args[a]];
        if (args[a]->dtype != c->out[0]->dtype)
            return false;
    }
    tg_op_ctx ic;
    instr_ctx(&ic, I, args, c);
    *s = I->op->kernel[TG_CPU](&ic);
    return true;
}

/* the product straight into the output, then the rest of the program over
 * it in place ($0 becomes input n_in: the output itself), or both at once
 * where the product's kernel can apply the rest (conv_then) */
static tg_status epilogue_kernel(tg_op_ctx *c)
{
    tg_fused_prog local;
    const tg_fused_prog *p;
    tg_status s = program(c, &local, &p);
    if (s != TG_OK)
        return s;
    const tg_fused_instr *P = &p->ins[0];
    tg_tensor *args[TG_FUSED_MAX_ARGS], *in[TG_MAX_OP_INPUTS + 1];
    for (int a = 0; a < P->n_args; a++)
        args[a] = c->in[P->args[a]];
    tg_op_ctx pc;
    instr_ctx(&pc, P, args, c);
    int res;
    bool relu;
    if (residual_in_product(p, &res, &relu) &&
        tg__conv2d_residual_kernel(&pc, c->in[res], relu, &s)) {
        /* done in the product's store */
    } else if (conv_then(p, "relu")) {
        s = tg__conv2d_relu_kernel(&pc);
    } else if (conv_then(p, "clamp")) {
        const unary_attrs *bounds = p->ins[1].attr;
        s = tg__conv2d_clamp_kernel(&pc, bounds->a, bounds->b);
    } else if (conv_then(p, "hardswish")) {
        s = tg__conv2d_hardswish_kernel(&pc);
    } else if ((s = P->op->kernel[TG_CPU](&pc)) == TG_OK && single_in_place(p, c, &s)) {
        /* done */
    } else if (s == TG_OK && c->n_in < TG_MAX_OP_INPUTS) {
        tg_fused_prog rest_prog, *rest = &rest_prog; /* no malloc per call */
        rest->cache_entry = 0;
        rest->n = p->n - 1;
        for (int k = 1; k < p->n; k++) {
            tg_fused_instr I = p->ins[k];
            for (int a = 0; a < I.n_args; a++)
                if (I.args[a] == -1)
                    I.args[a] = c->n_in; /* $0: the product, in the output */
                else if (I.args[a] < 0)
                    I.args[a] += 1;
            rest->ins[k - 1] = I;
        }
        tg__fused_slots(rest, NULL, 0);
        for (int i = 0; i < c->n_in; i++)
            in[i] = c->in[i];
        in[c->n_in] = c->out[0];
        int64_t last = rest->n - 1;
        tg_dtype dt[TG_FUSED_MAX_INSTRS]; /* p's: rest's are from the second on */
        s = tg__fused_dtypes(c->op->name, p, c->n_in, c->in, dt);
        if (s == TG_OK)
            s = tg__fused_run(c->op->name, rest, dt + 1, c->n_in + 1, in, 1, &last, c->out,
                              false);
        /* rest's instructions' attributes are p's: nothing to free */
    } else if (s == TG_OK) {
        s = tg__error(TG_ERR_ARG, "%s: too many inputs", c->op->name);
    }
    done(&local, p);
    return s;
}

/* ---- fused_update ------------------------------------------------------------------- */
static tg_status update_infer(tg_op_ctx *c)
{
    const tg_fused_attrs *a = c->attr;
    tg_fused_prog p;
    tg_meta m[TG_FUSED_MAX_INSTRS], var;
    if (a->results.n < 1 || a->results.n > c->n_in || a->results.n > TG_FUSED_MAX_RESULTS)
        return tg__error(TG_ERR_ARG, "%s: %d results for %d inputs (1 to %d variables "
                         "first)", c->op->name, a->results.n, c->n_in, TG_FUSED_MAX_RESULTS);
    tg_status s = parse_infer(c, &p, m, RESULT_INPUT0);
    if (s != TG_OK)
        return s;
    tg_meta_of(c->in[0], &var);
    for (int k = 0; s == TG_OK && k < a->results.n; k++) {
        const tg_tensor *v = c->in[k];
        const tg_meta *r = &m[a->results.v[k]];
        if (v->dtype != r->dtype || !tg__shape_eq(v->ndim, v->shape, var.ndim, var.shape) ||
            !tg__shape_eq(r->ndim, r->shape, var.ndim, var.shape))
            s = tg__error(TG_ERR_SHAPE, "%s: result %d (instruction %lld) must have the "
                          "dtype and shape of variable %d, and all variables input 0's",
                          c->op->name, k, (long long)a->results.v[k], k);
    }
    tg__fused_free(&p);
    return s == TG_OK ? tg_infer_set(c, 0, var.dtype, var.ndim, var.shape) : s;
}

static tg_status update_write(tg_op_ctx *c)
{
    const tg_fused_attrs *a = c->attr;
    for (int k = 0; k < a->results.n; k++)
        if (c->in[k]->requires_grad && tg_grad_enabled())
            return tg__error(TG_ERR_AUTOGRAD, "%s: in-place update of a tensor that "
                             "requires grad; do it inside tg_no_grad_begin/end",
                             c->op->name);
    tg_fused_prog local;
    const tg_fused_prog *p;
    tg_status s = program(c, &local, &p);
    if (s != TG_OK)
        return s;
    tg_dtype dt[TG_FUSED_MAX_INSTRS];
    s = tg__fused_dtypes(c->op->name, p, c->n_in, c->in, dt);
    if (s == TG_OK)
        s = tg__fused_run(c->op->name, p, dt, c->n_in, c->in, a->results.n, a->results.v,
                          c->in, true);
    done(&local, p);
    for (int k = 0; s == TG_OK && k < a->results.n; k++)
        tg__bump_version(c->in[k]);
    if (s != TG_OK)
        return s;
    const tg_tensor *v = c->in[0];
    c->out[0] = tg__alias(v, v->ndim, v->shape, v->strides, v->offset);
    return c->out[0] ? TG_OK : TG_ERR_NOMEM;
}

static const tg_arg_spec fused_in[] = {{"x", TG_DTS_ANY | TG_ARG_VARIADIC}, {0}};
static const tg_arg_spec fused_out[] = {{"y", TG_DTS_ANY}, {0}};
static const tg_arg_spec update_in[] = {{"vars_then_inputs", TG_DTS_ANY | TG_ARG_VARIADIC},
                                        {0}};
static const tg_arg_spec update_out[] = {{"ref", TG_DTS_ANY}, {0}};

/* the output may overwrite any of the first 16 inputs of its dtype and
 * shape: a block's inputs are read before its output is written, and
 * every element is read and written at the same index (the memory
 * planner checks that no other input is a view of it) */
const tg_op_def tg_op_fused_elementwise = {
    .name = "fused_elementwise", .n_in = -1, .n_out = 1, .inputs = fused_in,
    .outputs = fused_out, .attrs = {elementwise_specs, sizeof(tg_fused_attrs)},
    .flags = TG_OP_PURE | TG_OP_ELEMENTWISE | (0xffffu << 16), .nondiff = true,
    .infer = elementwise_infer, .kernel = {[TG_CPU] = elementwise_kernel}};

const tg_op_def tg_op_fused_update = {
    .name = "fused_update", .n_in = -1, .n_out = 1, .inputs = update_in,
    .outputs = update_out, .attrs = {update_specs, sizeof(tg_fused_attrs)},
    .flags = TG_OP_SIDE_EFFECTS | TG_OP_VIEW, .nondiff = true,
    .infer = update_infer, .make_view = update_write};

/* not elementwise: its output cannot overwrite an input (the product
 * reads all of them before the first element is written) */
const tg_op_def tg_op_fused_epilogue = {
    .name = "fused_epilogue", .n_in = -1, .n_out = 1, .inputs = fused_in,
    .outputs = fused_out, .attrs = {elementwise_specs, sizeof(tg_fused_attrs)},
    .flags = TG_OP_PURE, .nondiff = true,
    .infer = epilogue_infer, .kernel = {[TG_CPU] = epilogue_kernel}};

const tg_op_def *const tg_ops_fused[] = {&tg_op_fused_elementwise, &tg_op_fused_epilogue,
                                         &tg_op_fused_update, NULL};
