/* The op registry and the op schema: every registered op is complete (a
 * reverse and a forward rule, or an explicit mark; inputs, outputs and
 * attributes declared; one effect flag; flags consistent with the
 * functions it has), lookups by name, and the dispatcher's checking and
 * decoding of attributes against the schema. */
#include "harness.h"
#include "op_samples.h"
#include "ops/op.h"

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_args(const tg_arg_spec *a)
{
    int n = 0;
    while (a && a[n].name)
        n++;
    return n;
}

/* inputs and outputs: named, with dtypes, as many as the op takes */
static void check_args(const tg_op_def *op)
{
    int ni = count_args(op->inputs), no = count_args(op->outputs);
    if (!op->inputs || !op->outputs)
        tt_fail(__FILE__, __LINE__, "%s: inputs or outputs not declared", op->name);
    if (op->n_in >= 0 && ni != op->n_in)
        tt_fail(__FILE__, __LINE__, "%s: %d inputs declared, the op takes %d", op->name,
                ni, op->n_in);
    if (op->n_out < 0 && (!op->count_out || no != 1 ||
                          !(op->outputs[0].dtypes & TG_ARG_VARIADIC)))
        tt_fail(__FILE__, __LINE__, "%s: a counted output list needs count_out and one "
                "variadic output", op->name);
    if (no != op->n_out && op->n_out >= 0)
        tt_fail(__FILE__, __LINE__, "%s: %d outputs declared, the op makes %d", op->name,
                no, op->n_out);
    for (int i = 0; i < ni; i++) {
        uint32_t d = op->inputs[i].dtypes;
        if (!(d & TG_DTS_ANY))
            tt_fail(__FILE__, __LINE__, "%s: input %s allows no dtype", op->name,
                    op->inputs[i].name);
        if ((d & (TG_ARG_OPTIONAL | TG_ARG_VARIADIC)) && op->n_in >= 0)
            tt_fail(__FILE__, __LINE__, "%s: optional or variadic input %s, but a fixed "
                    "input count", op->name, op->inputs[i].name);
        if ((d & TG_ARG_VARIADIC) && i != ni - 1)
            tt_fail(__FILE__, __LINE__, "%s: variadic input %s is not the last", op->name,
                    op->inputs[i].name);
    }
    for (int o = 0; o < no; o++)
        if (!(op->outputs[o].dtypes & TG_DTS_ANY) ||
            (op->outputs[o].dtypes & TG_ARG_FLAGS & ~(op->n_out < 0 ? TG_ARG_VARIADIC : 0u)))
            tt_fail(__FILE__, __LINE__, "%s: output %s is malformed", op->name,
                    op->outputs[o].name);
    tt_checks += 4;
}

static size_t field_size(const tg_attr_spec *p)
{
    switch (p->field) {
    case TG_FIELD_INT: return sizeof(int64_t);
    case TG_FIELD_BOOL: return sizeof(bool);
    case TG_FIELD_FLOAT: return sizeof(double);
    case TG_FIELD_STRING: return sizeof(const char *);
    case TG_FIELD_INTS: return sizeof(tg_ints);
    case TG_FIELD_INT_ARRAY: return (size_t)p->count * sizeof(int64_t);
    case TG_FIELD_TENSOR: return sizeof(tg_tensor *);
    case TG_FIELD_GRAPH: return sizeof(void *);
    }
    return (size_t)-1;
}

/* attribute specs: named once, fields inside the struct and apart, the
 * types ONNX-like, defaults that meet the constraints */
static void check_attrs(const tg_op_def *op)
{
    const tg_attr_spec *specs = op->attrs.specs;
    tt_checks++;
    if (!specs) {
        if (op->attrs.size)
            tt_fail(__FILE__, __LINE__, "%s: a struct size without specs", op->name);
        return;
    }
    if (op->attrs.size == 0 || op->attrs.size > TG_MAX_ATTR_SIZE)
        tt_fail(__FILE__, __LINE__, "%s: attribute struct of %zu bytes", op->name,
                op->attrs.size);
    if (!specs[0].name)
        tt_fail(__FILE__, __LINE__, "%s: an empty spec list (use NULL)", op->name);
    for (int i = 0; specs[i].name; i++) {
        const tg_attr_spec *p = &specs[i];
        size_t size = field_size(p);
        tt_checks++;
        if (p->offset + size > op->attrs.size)
            tt_fail(__FILE__, __LINE__, "%s: field %s lies outside the struct", op->name,
                    p->name);
        for (int k = 0; k < i; k++) {
            const tg_attr_spec *q = &specs[k];
            if (!strcmp(q->name, p->name))
                tt_fail(__FILE__, __LINE__, "%s: attribute %s declared twice", op->name,
                        p->name);
            if (p->offset < q->offset + field_size(q) && q->offset < p->offset + size)
                tt_fail(__FILE__, __LINE__, "%s: fields %s and %s overlap", op->name,
                        q->name, p->name);
        }
        if (p->field == TG_FIELD_INT_ARRAY && !p->ints && !p->required)
            tt_fail(__FILE__, __LINE__, "%s: %s has neither a default nor TG_REQUIRED",
                    op->name, p->name);
        if (p->field == TG_FIELD_INT && !p->required &&
            ((p->has_min && p->i < p->min) || (p->has_max && p->i > p->max)))
            tt_fail(__FILE__, __LINE__, "%s: the default of %s breaks its range",
                    op->name, p->name);
    }
}

/* Every op can be differentiated both ways or says it cannot; effects,
 * views and in-place safety agree with what the op has. */
static void test_every_op_is_complete(void)
{
    int n = tg_op_count();
    CHECK(n > 80);
    for (int i = 0; i < n; i++) {
        const tg_op_def *op = tg_op_at(i);
        tt_checks++;
        if (!op || !op->name || !op->infer || tg_op_find(op->name) != op) {
            tt_fail(__FILE__, __LINE__, "op %d (%s) is malformed or not found by name", i,
                    op && op->name ? op->name : "?");
            continue;
        }
        const char *name = op->name;
        uint32_t f = op->flags;
        int effects = !!(f & TG_OP_PURE) + !!(f & TG_OP_SIDE_EFFECTS) + !!(f & TG_OP_RANDOM);
        tt_checks += 8;
        if (effects != 1)
            tt_fail(__FILE__, __LINE__, "%s: needs exactly one of PURE, SIDE_EFFECTS, "
                    "RANDOM", name);
        if (!op->nondiff && !tg_op_has_vjp(op) && !(f & TG_OP_NO_VJP))
            tt_fail(__FILE__, __LINE__, "%s: no gradient rule (give one, or mark it "
                    "TG_OP_NO_VJP or nondiff)", name);
        if (!op->nondiff && !tg_op_has_jvp(op) && !(f & TG_OP_NO_JVP))
            tt_fail(__FILE__, __LINE__, "%s: no forward-mode rule (give one, or mark it "
                    "TG_OP_NO_JVP or nondiff)", name);
        if ((tg_op_has_vjp(op) && (f & TG_OP_NO_VJP)) ||
            (tg_op_has_jvp(op) && (f & TG_OP_NO_JVP)))
            tt_fail(__FILE__, __LINE__, "%s: has a rule it is marked as lacking", name);
        if (op->nondiff && (tg_op_has_vjp(op) || tg_op_has_jvp(op)))
            tt_fail(__FILE__, __LINE__, "%s: nondiff, but with rules", name);
        if (op->deriv && (op->grad || op->jvp || op->n_in != 1 ||
                          !(f & TG_OP_ELEMENTWISE)))
            tt_fail(__FILE__, __LINE__, "%s: deriv is for unary elementwise ops, "
                    "instead of grad and jvp", name);
        if (!!(f & TG_OP_VIEW) != !!op->make_view || !op->kernel[TG_CPU] == !op->make_view)
            tt_fail(__FILE__, __LINE__, "%s: a view op has make_view and no kernel, "
                    "others a CPU kernel", name);
        uint32_t inplace = TG_INPLACE_INPUTS(f);
        if (inplace && (!(f & TG_OP_ELEMENTWISE) || op->n_out != 1 ||
                        inplace >> (op->n_in < 0 ? 16 : op->n_in)))
            tt_fail(__FILE__, __LINE__, "%s: in-place inputs only for elementwise ops "
                    "with one output, and inputs that exist", name);
        if ((f & TG_OP_COMMUTATIVE) && op->n_in != 2)
            tt_fail(__FILE__, __LINE__, "%s: commutative, but not binary", name);
        if (!op->onnx.op != !op->onnx.opset)
            tt_fail(__FILE__, __LINE__, "%s: an ONNX name needs its opset", name);
        if ((op->n_out < 1 && !(op->n_out == -1 && op->count_out)) ||
            op->n_out > TG_MAX_OP_OUTPUTS)
            tt_fail(__FILE__, __LINE__, "%s: %d outputs", name, op->n_out);
        check_args(op);
        check_attrs(op);
        for (int j = 0; j < i; j++)
            if (strcmp(tg_op_at(j)->name, name) == 0)
                tt_fail(__FILE__, __LINE__, "op name %s appears twice", name);
    }
    CHECK(tg_op_at(n) == NULL && tg_op_at(-1) == NULL);
}

/* lookups go through the hash table; the names the families define */
static void test_lookup(void)
{
    CHECK(tg_op_find("no_such_op") == NULL);
    CHECK(tg_op_find("") == NULL && tg_op_find(NULL) == NULL);
    const char *names[] = {
        "add", "sub", "mul", "div", "pow", "maximum", "minimum", "cast", "neg", "abs",
        "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "erf",
        "gelu", "softplus", "floor", "ceil", "round", "sign", "leaky_relu", "elu",
        "clamp", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
        "logical_xor", "logical_not", "where", "view", "permute", "slice",
        "slice_grad", "expand", "clone", "sum", "conv2d", "max_pool2d", "layer_norm",
        "assign", "assign_sub"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        tt_checks++;
        const tg_op_def *op = tg_op_find(names[k]);
        if (!op || strcmp(op->name, names[k]) != 0)
            tt_fail(__FILE__, __LINE__, "op %s is not found by name", names[k]);
    }
    /* an op found by name runs like its public function */
    tg_tensor *in[2] = {tg_full(TG_INT32, 1, (int64_t[]){2}, 3), tg_full(TG_INT32, 0, NULL, 4)};
    CHECK_TENSOR(tg_op_call(tg_op_find("mul"), 2, in, NULL, 0), ((double[]){12, 12}), 0);
    CHECK_ERROR(tg_op_call(tg_op_find("mul"), 1, in, NULL, 0), TG_ERR_ARG,
                "mul: expected 2 inputs, got 1");
}

/* the flags the passes read, on ops whose properties are known */
static void test_flags(void)
{
    const tg_op_def *add = tg_op_find("add"), *sub = tg_op_find("sub");
    CHECK(add->flags & TG_OP_COMMUTATIVE && !(sub->flags & TG_OP_COMMUTATIVE));
    CHECK(add->flags & TG_OP_ELEMENTWISE && add->flags & TG_INPLACE_OK(1));
    CHECK(tg_op_find("view")->flags & TG_OP_VIEW);
    CHECK(tg_op_find("assign")->flags & TG_OP_SIDE_EFFECTS);
    CHECK(!(tg_op_find("matmul")->flags & (TG_OP_ELEMENTWISE | TG_OP_VIEW)));
    CHECK(tg_op_find("batch_norm_grad")->flags & TG_OP_NO_VJP);
    CHECK(tg_op_find("exp")->deriv && !tg_op_find("exp")->grad);
    CHECK(!strcmp(tg_op_find("relu")->onnx.op, "Relu"));
    CHECK(tg_op_find("relu_grad")->onnx.op == NULL);
}

/* the dispatcher decodes attributes against the schema, once */
static void test_attributes_checked(void)
{
    tg_tensor *x = tg_arange(TG_FLOAT32, 0, 6, 1);
    const tg_op_def *elu = tg_op_find("elu"), *cv = tg_op_find("conv2d");
    /* undeclared, repeated, mistyped, missing */
    tg_attr bad = TG_AF("alpha", 1.0);
    CHECK_ERROR(tg_op_call(elu, 1, &x, &bad, 1), TG_ERR_ARG,
                "elu: unknown attribute 'alpha' (it takes: a)");
    tg_attr none = TG_AI("axis", 0);
    CHECK_ERROR(tg_op_call(tg_op_find("exp"), 1, &x, &none, 1), TG_ERR_ARG,
                "exp: unknown attribute 'axis' (the op takes none)");
    tg_attr twice[2] = {TG_AF("a", 1.0), TG_AF("a", 2.0)};
    CHECK_ERROR(tg_op_call(elu, 1, &x, twice, 2), TG_ERR_ARG, "'a' is given twice");
    tg_attr typed = TG_AI("a", 1);
    CHECK_ERROR(tg_op_call(elu, 1, &x, &typed, 1), TG_ERR_ARG,
                "elu: attribute 'a' must be a float, got an int");
    CHECK_ERROR(tg_op_call(tg_op_find("clamp"), 1, &x, NULL, 0), TG_ERR_ARG,
                "clamp: attribute 'a' is required");
    /* defaults: elu's alpha is 1 (PyTorch's) when absent */
    tg_tensor *y = tg_op_call(elu, 1, (tg_tensor *[]){tg_full(TG_FLOAT64, 0, NULL, -1)}, NULL, 0);
    CHECK(y && fabs(tg_item(y) - expm1(-1.0)) < 1e-15);
    /* constraints and fixed counts */
    tg_tensor *img = tg_zeros(TG_FLOAT32, 4, (int64_t[]){1, 1, 4, 4});
    tg_tensor *w = tg_zeros(TG_FLOAT32, 4, (int64_t[]){1, 1, 3, 3});
    tg_tensor *xw[2] = {img, w};
    tg_attr st3 = TG_AINTS("stride", ((const int64_t[]){1, 1, 1}), 3);
    CHECK_ERROR(tg_op_call(cv, 2, xw, &st3, 1), TG_ERR_ARG, "conv2d: stride needs 2 values, got 3");
    tg_attr st0 = TG_AINTS("stride", ((const int64_t[]){1, 0}), 2);
    CHECK_ERROR(tg_op_call(cv, 2, xw, &st0, 1), TG_ERR_ARG,
                "conv2d: stride 0 is invalid (expected >= 1)");
    CHECK_SHAPE(tg_op_call(cv, 2, xw, NULL, 0), 1, 1, 2, 2); /* defaults */
    /* decoding by hand: the struct as the op's code sees it */
    typedef struct { double a, b; } two;
    two d;
    tg_attr ab[2] = {TG_AF("b", 3.0), TG_AF("a", -2.0)};
    CHECK_OK(tg_attrs_decode(tg_op_find("clamp"), ab, 2, &d));
    CHECK(d.a == -2.0 && d.b == 3.0);
}

/* Op code reads its attributes from its decoded struct only, so that an
 * attribute it uses is one its schema declares: no source file looks
 * attributes up by name, except the lookups themselves (attrs.c) and ONNX
 * export, which reads stored lists. Returns the files scanned. */
static int scan_sources(const char *dir)
{
    static const char *lookups[] = {"tg_attr_int(", "tg_attr_float(", "tg_attr_ints("};
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[1024];
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len < 2 || strcmp(e->d_name + len - 2, ".c") != 0) {
            files += scan_sources(path); /* a folder (or nothing) */
            continue;
        }
        /* the ONNX code reads stored lists by name; judged below the source
         * dir, so that a checkout in a folder named "onnx..." is scanned */
        if (!strcmp(e->d_name, "attrs.c") || strstr(path + strlen(TG_SOURCE_DIR), "onnx"))
            continue;
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        files++;
        char line[4096];
        for (int no = 1; fgets(line, sizeof line, f); no++)
            for (size_t k = 0; k < sizeof lookups / sizeof *lookups; k++)
                if (strstr(line, lookups[k]))
                    tt_fail(path, no, "reads an attribute by name (%s...); use the op's "
                            "decoded struct, whose specs declare it", lookups[k]);
        fclose(f);
    }
    closedir(d);
    return files;
}

static void test_attributes_read_from_structs(void)
{
    CHECK(scan_sources(TG_SOURCE_DIR "/src") > 50);
    CHECK(scan_sources(TG_SOURCE_DIR "/tools") > 5);
}

/* Every differentiable op is exercised by tests/test_op_samples.c: it has
 * samples in tests/op_samples.c or is listed there as exempt with a reason;
 * samples and exemptions name registered ops, and no op is both. */
static void test_every_op_has_samples(void)
{
    for (int i = 0; i < tg_op_count(); i++) {
        const tg_op_def *op = tg_op_at(i);
        const os_sample *s = os_find_sample(op->name);
        const char *why = os_exempt_reason(op->name);
        tt_checks++;
        if (!op->nondiff && !s && !why)
            tt_fail(__FILE__, __LINE__, "%s: no samples in tests/op_samples.c (add some, or "
                    "list the op in os_exempt_ops with the reason)", op->name);
        if (s && why)
            tt_fail(__FILE__, __LINE__, "%s: both sampled and exempt", op->name);
        if (why && !*why)
            tt_fail(__FILE__, __LINE__, "%s: exempt without a reason", op->name);
    }
    for (const os_sample *s = os_samples; s->op; s++) {
        tt_checks++;
        if (!tg_op_find(s->op))
            tt_fail(__FILE__, __LINE__, "a sample names %s, which is not an op", s->op);
    }
    for (const os_exempt *e = os_exempt_ops; e->op; e++) {
        tt_checks++;
        if (!tg_op_find(e->op))
            tt_fail(__FILE__, __LINE__, "os_exempt_ops names %s, which is not an op", e->op);
    }
}

int main(void)
{
    RUN(test_every_op_is_complete);
    RUN(test_lookup);
    RUN(test_flags);
    RUN(test_attributes_checked);
    RUN(test_attributes_read_from_structs);
    RUN(test_every_op_has_samples);
    return tt_finish();
}
