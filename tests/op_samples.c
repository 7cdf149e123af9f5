/* The per-op sample table (see op_samples.h): the one place that says how
 * each op is exercised by tests/test_op_samples.c. Add an op's samples
 * here when adding the op (docs/ARCHITECTURE.md, "Adding an op"); a
 * differentiable op with no sample must be listed in os_exempt_ops with
 * its reason, or tests/test_registry.c fails.
 *
 * Ranges keep finite differences (eps 1e-6) away from kinks and poles:
 * log, sqrt and divisors on [0.5, 2], ties of maximum/minimum/max have
 * probability zero with random values. */
#include "op_samples.h"

#include <string.h>

#define OS_N(...) ((int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
/* an input: differentiable, constant, integer indices in [0, hi), bool */
#define X(lo, hi, ...) {OS_DIFF, OS_N(__VA_ARGS__), {__VA_ARGS__}, lo, hi}
#define K(lo, hi, ...) {OS_CONST, OS_N(__VA_ARGS__), {__VA_ARGS__}, lo, hi}
#define I(hi, ...) {OS_INDEX, OS_N(__VA_ARGS__), {__VA_ARGS__}, 0, hi}
#define B(p, ...) {OS_BOOL, OS_N(__VA_ARGS__), {__VA_ARGS__}, 0, p}
#define X0(lo, hi) {OS_DIFF, 0, {0}, lo, hi} /* a 0-d input */
#define V1(v) {OS_INDEX, 1, {1}, v, (v) + 1} /* int64 [1] holding v */
#define VN(n, v) {OS_INDEX, 1, {n}, v, (v) + 1} /* int64 [n] holding v in each */
/* attributes */
#define AI(nm, v) {.name = nm, .type = TG_ATTR_INT, .u.i = (v)}
#define AF(nm, v) {.name = nm, .type = TG_ATTR_FLOAT, .u.f = (v)}
#define AINTS(nm, ...) \
    {.name = nm, .type = TG_ATTR_INTS, .u.ints = {(const int64_t[]){__VA_ARGS__}, OS_N(__VA_ARGS__)}}
#define IN(...) .n_in = (int)(sizeof((os_input[]){__VA_ARGS__}) / sizeof(os_input)), .in = {__VA_ARGS__}
#define AT(...) .n_attrs = (int)(sizeof((tg_attr[]){__VA_ARGS__}) / sizeof(tg_attr)), .attrs = {__VA_ARGS__}

/* a unary op on [2, 3] values in [lo, hi), also strided */
#define UNARY(name, lo, hi) {name, "[2,3]", IN(X(lo, hi, 2, 3)), .flags = OS_STRIDED}
/* a binary op: broadcasting [2,3] with [3], and [2,1] with 0-d */
#define BINARY(name, lo, hi, blo, bhi)                                              \
    {name, "[2,3] with [3]", IN(X(lo, hi, 2, 3), X(blo, bhi, 3)), .flags = OS_STRIDED}, \
    {name, "[4,1] with [1,3]", IN(X(lo, hi, 4, 1), X(blo, bhi, 1, 3))},            \
    {name, "[2,2] with 0-d", IN(X(lo, hi, 2, 2), X0(blo, bhi))}

const os_sample os_samples[] = {
    /* ---- elementwise, binary (binary.c) ---- */
    BINARY("add", -1, 1, -1, 1),
    BINARY("sub", -1, 1, -1, 1),
    BINARY("mul", -1, 1, -1, 1),
    BINARY("div", -1, 1, 0.5, 2),
    BINARY("pow", 0.5, 2, -1.5, 1.5),
    BINARY("maximum", -1, 1, -1, 1),
    BINARY("minimum", -1, 1, -1, 1),
    /* quotients of several units, divisors of both signs; the jumps (a / b
     * an integer) have probability zero */
    BINARY("fmod", -3, 3, 0.6, 1.4),
    {"fmod", "negative divisor", IN(X(-3, 3, 2, 3), X(-1.4, -0.6, 3))},
    /* known exception: floating-point remainder has no ONNX operator (Mod
     * with fmod=0 is for integers); integer remainder exports as Mod */
    {"remainder", "[2,3] with [3]", IN(X(-3, 3, 2, 3), X(0.6, 1.4, 3)), .flags = OS_STRIDED | OS_NO_ONNX},
    {"remainder", "negative divisor, [4,1] with [1,3]", IN(X(-3, 3, 4, 1), X(-1.4, -0.6, 1, 3)),
     .flags = OS_NO_ONNX},
    /* rounded quotients: zero gradients away from the jumps (no ONNX form) */
    BINARY("floor_divide", -3, 3, 0.6, 1.4),
    {"floor_divide", "negative divisor", IN(X(-3, 3, 2, 3), X(-1.4, -0.6, 3))},
    BINARY("trunc_divide", -3, 3, 0.6, 1.4),
    {"trunc_divide", "negative divisor", IN(X(-3, 3, 2, 3), X(-1.4, -0.6, 3))},
    {"cast", "float64 to float64", IN(X(-1, 1, 2, 3)), AT(AI("to", TG_FLOAT64))},
    /* ---- unary (unary.c) ---- */
    UNARY("neg", -1, 1),
    UNARY("abs", -1, 1),
    UNARY("exp", -1, 1),
    UNARY("log", 0.5, 2),
    UNARY("sqrt", 0.5, 2),
    UNARY("rsqrt", 0.5, 2),
    UNARY("sin", -3, 3),
    UNARY("cos", -3, 3),
    UNARY("tanh", -2, 2),
    UNARY("sigmoid", -3, 3),
    UNARY("relu", -1, 1),
    UNARY("erf", -2, 2),
    /* ONNX Gelu is opset 20, beyond the exporter's 17: no ONNX check */
    {"gelu", "[2,3]", IN(X(-3, 3, 2, 3)), .flags = OS_STRIDED | OS_NO_ONNX},
    {"gelu", "tanh approximation", IN(X(-3, 3, 2, 3)), AT(AF("a", 1)),
     .flags = OS_STRIDED | OS_NO_ONNX},
    UNARY("softplus", -3, 3),
    UNARY("floor", -2, 2),
    UNARY("ceil", -2, 2),
    UNARY("round", -2, 2),
    UNARY("sign", -1, 1),
    UNARY("hardswish", -4, 4),
    UNARY("selu", -2, 2),
    {"leaky_relu", "a 0.1", IN(X(-1, 1, 2, 3)), AT(AF("a", 0.1)), OS_STRIDED},
    {"elu", "a 0.7", IN(X(-2, 2, 2, 3)), AT(AF("a", 0.7))},
    {"clamp", "[-0.5, 0.5]", IN(X(-1, 1, 2, 3)), AT(AF("a", -0.5), AF("b", 0.5)), OS_STRIDED},
    {"hardsigmoid", "ONNX's 0.2, 0.5", IN(X(-4, 4, 2, 3)), AT(AF("a", 0.2), AF("b", 0.5))},
    {"relu_grad", "dy, y", IN(X(-1, 1, 2, 3), K(-1, 1, 2, 3))},
    {"gelu_grad", "dy, x", IN(X(-1, 1, 2, 3), X(-3, 3, 2, 3)), .flags = OS_STRIDED},
    {"gelu_tanh_grad", "dy, x", IN(X(-1, 1, 2, 3), X(-3, 3, 2, 3)), .flags = OS_STRIDED},
    /* y is any positive tensor for the rule's algebra, not only a softmax */
    {"softmax_grad", "last axis", IN(X(-1, 1, 2, 5), X(0.1, 1, 2, 5)), AT(AI("axis", 1)),
     .flags = OS_STRIDED},
    {"softmax_grad", "axis 0 of [3,2,2]", IN(X(-1, 1, 3, 2, 2), X(0.1, 1, 3, 2, 2)),
     AT(AI("axis", 0))},
    /* ---- where (compare.c) ---- */
    {"where", "broadcast a and b", IN(B(0.5, 2, 3), X(-1, 1, 2, 3), X(-1, 1, 3)), .flags = OS_STRIDED},
    /* ---- reductions (reduce*.c) ---- */
    {"sum", "axis 1", IN(X(-1, 1, 2, 3, 4)), AT(AINTS("axes", 1)), OS_STRIDED},
    {"sum", "all, keepdim", IN(X(-1, 1, 2, 3)), AT(AI("keepdim", 1))},
    {"mean", "axes 0, 2 keepdim", IN(X(-1, 1, 2, 3, 4)), AT(AINTS("axes", 0, 2), AI("keepdim", 1))},
    {"prod", "axis 1", IN(X(0.5, 1.5, 2, 3)), AT(AINTS("axes", 1)), OS_STRIDED},
    {"prod", "all", IN(X(-1.5, 1.5, 2, 2))},
    {"max", "axis 1", IN(X(-1, 1, 2, 3)), AT(AINTS("axes", 1)), OS_STRIDED},
    {"min", "axis -1 keepdim", IN(X(-1, 1, 2, 3)), AT(AINTS("axes", -1), AI("keepdim", 1))},
    {"var", "axis 1", IN(X(-1, 1, 2, 4)), AT(AINTS("axes", 1)), OS_STRIDED},
    {"std", "axis 0, correction 0", IN(X(-1, 1, 3, 2)), AT(AINTS("axes", 0), AI("correction", 0))},
    {"logsumexp", "axis 1", IN(X(-2, 2, 2, 3)), AT(AINTS("axes", 1))},
    {"vector_norm", "L2 over axis 1", IN(X(-1, 1, 2, 3, 4)), AT(AINTS("axes", 1), AI("ord", 2)),
     OS_STRIDED},
    {"vector_norm", "L2 of all, keepdim", IN(X(-1, 1, 2, 3)), AT(AI("keepdim", 1))},
    /* |x| >= 0.2 keeps finite differences away from the kink of |x| at 0 */
    {"vector_norm", "L1 over axes 0, 2", IN(X(0.2, 1, 2, 3, 4)), AT(AINTS("axes", 0, 2), AI("ord", 1)),
     OS_STRIDED},
    /* ---- sorting (sort.c): ties have probability zero ---- */
    {"topk", "k 2 of axis 1, largest", IN(X(-1, 1, 2, 4)), AT(AI("k", 2), AI("axis", 1)),
     OS_STRIDED},
    {"topk", "k 3 of axis 0, smallest", IN(X(-1, 1, 4, 3)),
     AT(AI("k", 3), AI("axis", 0), AI("largest", 0))},
    /* ---- scans (scan.c) ---- */
    {"cumsum", "axis 1 of [2,3,4]", IN(X(-1, 1, 2, 3, 4)), AT(AI("axis", 1)), OS_STRIDED},
    {"cumsum", "axis -1, exclusive, reverse", IN(X(-1, 1, 3, 4)),
     AT(AI("axis", -1), AI("exclusive", 1), AI("reverse", 1))},
    {"cumsum", "axis 0, reverse", IN(X(-1, 1, 3, 2)), AT(AI("axis", 0), AI("reverse", 1))},
    /* ---- shape (shape.c) ---- */
    {"view", "[2,3] to [2,1,3]", IN(X(-1, 1, 2, 3)), AT(AINTS("shape", 2, 1, 3))},
    {"permute", "2,0,1", IN(X(-1, 1, 2, 3, 4)), AT(AINTS("perm", 2, 0, 1)), OS_STRIDED},
    {"slice", "axis 1, 1:4:2", IN(X(-1, 1, 2, 5)),
     AT(AI("axis", 1), AI("start", 1), AI("stop", 4), AI("step", 2)), OS_STRIDED},
    /* slice_by (slice_by.c): ONNX's bounds as tensors, fed as graph inputs */
    {"slice_by", "axis 1, 1:4:2 of [2,5]", IN(X(-1, 1, 2, 5), V1(1), V1(4), V1(1), V1(2)),
     .flags = OS_STRIDED},
    {"slice_by", "axis -2, -1 down to -5 by -2 of [4,3]",
     IN(X(-1, 1, 4, 3), V1(-1), V1(-5), V1(-2), V1(-2))},
    {"slice_by_grad", "axis 1, 1:4:2 of [2,5]",
     IN(X(-1, 1, 2, 2), K(-1, 1, 2, 5), V1(1), V1(4), V1(1), V1(2))},
    /* expand_by, tile_by (expand_by.c): ONNX's target shape and repeats as
     * tensors, fed as graph inputs; both ways of Expand's broadcast */
    {"expand_by", "[1,3] to [3,3,3]", IN(X(-1, 1, 1, 3), VN(3, 3)), .flags = OS_STRIDED},
    {"expand_by", "[3,1] by [4]", IN(X(-1, 1, 3, 1), VN(1, 4))},
    {"expand_by", "[2,3] by [1,1]", IN(X(-1, 1, 2, 3), VN(2, 1))},
    {"tile_by", "[2,3] by 2,2", IN(X(-1, 1, 2, 3), VN(2, 2)), .flags = OS_STRIDED},
    {"tile_by", "[2,1,3] by 3,3,3", IN(X(-1, 1, 2, 1, 3), VN(3, 3))},
    {"tile_like", "[1,3] to [2,6]", IN(X(-1, 1, 1, 3), K(-1, 1, 2, 6))},
    {"tile_sum", "[2,6] into [1,3]", IN(X(-1, 1, 2, 6), K(-1, 1, 1, 3))},
    /* reshape_by (reshape_by.c): ONNX Reshape's target as a tensor, fed */
    {"reshape_by", "[2,3] to 6", IN(X(-1, 1, 2, 3), VN(1, 6)), .flags = OS_STRIDED},
    {"reshape_by", "[4,1] to -1", IN(X(-1, 1, 4, 1), VN(1, -1))},
    {"reshape_by", "[2,2] to 0,0 (copies)", IN(X(-1, 1, 2, 2), VN(2, 0))},
    {"reshape_like", "[2,3] as [3,1,2]", IN(X(-1, 1, 2, 3), K(-1, 1, 3, 1, 2))},
    /* grad_link (grad_link.c): v, with a zero derivative in x; made by
     * gradient rules under create_graph, never exported */
    {"grad_link", "[2,3] tied to [2,3]", IN(X(-1, 1, 2, 3), X(-1, 1, 2, 3))},
    {"grad_link", "[2,3] tied to [4]", IN(X(-1, 1, 2, 3), X(-1, 1, 4))},
    /* grad_tie (grad_link.c): x, its gradient tied to x (tg_grad_tie) */
    {"grad_tie", "[2,3]", IN(X(-1, 1, 2, 3))},
    {"grad_tie", "[4]", IN(X(-1, 1, 4))},
    /* append_row (append_row.c): a row onto a list */
    {"append_row", "[3,2] and [2]", IN(X(-1, 1, 3, 2), X(-1, 1, 2)), .flags = OS_NO_ONNX},
    {"slice_grad", "axis 1, 1:4:2 of [2,5]", IN(X(-1, 1, 2, 2)),
     AT(AI("axis", 1), AI("start", 1), AI("stop", 4), AI("step", 2), AINTS("input_shape", 2, 5))},
    {"expand", "[1,3] to [4,2,3]", IN(X(-1, 1, 1, 3)), AT(AINTS("shape", 4, 2, 3)), OS_STRIDED},
    {"clone", "[2,3]", IN(X(-1, 1, 2, 3)), .flags = OS_STRIDED},
    /* ---- diagonal (diagonal.c) ---- */
    {"diagonal", "offset 1 of dims (2,0) of [3,2,4]", IN(X(-1, 1, 3, 2, 4)),
     AT(AI("offset", 1), AI("dim1", 2), AI("dim2", 0)), OS_STRIDED},
    {"diagonal", "offset -1 of [3,4]", IN(X(-1, 1, 3, 4)),
     AT(AI("offset", -1), AI("dim1", 0), AI("dim2", 1)), OS_STRIDED},
    {"diagonal_grad", "offset 1 of dims (2,0) of [3,2,4]", IN(X(-1, 1, 2, 2)),
     AT(AI("offset", 1), AI("dim1", 2), AI("dim2", 0), AINTS("input_shape", 3, 2, 4))},
    /* ---- as_strided_grad (as_strided.c; the view itself is exempt, below):
     * both directions, over an input that overlaps itself (stride 0) ---- */
    {"as_strided_grad", "view [4,3] (2,1) of [9]", IN(X(-1, 1, 4, 3)),
     AT(AINTS("size", 4, 3), AINTS("stride", 2, 1), AINTS("input_shape", 9),
        AINTS("input_stride", 1))},
    {"as_strided_grad", "adjoint, input [3,4] (4,0) overlapping", IN(X(-1, 1, 3, 4)),
     AT(AINTS("size", 2, 5), AINTS("stride", 3, 1), AI("offset", 1), AINTS("input_shape", 3, 4),
        AINTS("input_stride", 4, 0), AI("adjoint", 1))},
    /* ---- array (array.c, array_index.c) ---- */
    {"concat", "axis 1", IN(X(-1, 1, 2, 1), X(-1, 1, 2, 3), X(-1, 1, 2, 2)), AT(AI("axis", 1)),
     OS_STRIDED},
    {"pad", "(1,0), (0,2), value 0.5", IN(X(-1, 1, 2, 3)), AT(AINTS("pads", 1, 0, 0, 2),
     AF("value", 0.5)), OS_STRIDED},
    {"pad", "reflect (1,2) on [2,4]", IN(X(-1, 1, 2, 4)), AT(AINTS("pads", 1, 1, 2, 1),
     AI("mode", TG_PAD_REFLECT)), OS_STRIDED},
    {"pad", "replicate (0,0), (3,1)", IN(X(-1, 1, 2, 3)), AT(AINTS("pads", 0, 0, 3, 1),
     AI("mode", TG_PAD_REPLICATE))},
    {"pad_grad", "reflect into [2,3]", IN(X(-1, 1, 2, 6)),
     AT(AINTS("pads", 0, 0, 2, 1), AI("mode", TG_PAD_REFLECT), AINTS("input_shape", 2, 3))},
    {"pad_grad", "replicate into [3,2]", IN(X(-1, 1, 5, 4)),
     AT(AINTS("pads", 1, 1, 0, 2), AI("mode", TG_PAD_REPLICATE), AINTS("input_shape", 3, 2))},
    {"tile", "reps 2,1", IN(X(-1, 1, 2, 3)), AT(AINTS("reps", 2, 1))},
    {"gather", "axis 1", IN(X(-1, 1, 2, 4), I(4, 2, 3)), AT(AI("axis", 1)), OS_STRIDED},
    /* known exception: no ONNX export writer for scatter_add (ScatterElements
     * needs a zero data input of the shape attribute and reduction "add") */
    {"scatter_add", "axis 1 into [2,4]", IN(X(-1, 1, 2, 3), I(4, 2, 3)),
     AT(AI("axis", 1), AINTS("shape", 2, 4)), OS_NO_ONNX},
    {"index_select", "axis 0", IN(X(-1, 1, 4, 3), I(4, 5)), AT(AI("axis", 0)), OS_STRIDED},
    {"index_add", "axis 0 into [4,3]", IN(X(-1, 1, 5, 3), I(4, 5)),
     AT(AI("axis", 0), AINTS("shape", 4, 3))},
    {"embedding", "[5,3] by [2,3]", IN(X(-1, 1, 5, 3), I(5, 2, 3)), .flags = OS_STRIDED},
    /* ---- linear algebra (linalg.c) ---- */
    {"matmul", "[2,3] @ [3,4]", IN(X(-1, 1, 2, 3), X(-1, 1, 3, 4)), .flags = OS_STRIDED},
    {"matmul", "batched [2,2,3] @ [3,4]", IN(X(-1, 1, 2, 2, 3), X(-1, 1, 3, 4))},
    {"matmul", "[3] @ [3,2]", IN(X(-1, 1, 3), X(-1, 1, 3, 2))},
    {"gemm", "alpha, beta, b transposed, c broadcast", IN(X(-1, 1, 2, 3), X(-1, 1, 4, 3), X(-1, 1, 4)),
     AT(AF("alpha", 0.5), AF("beta", 2.0), AI("trans_b", 1)), OS_STRIDED},
    {"gemm", "a transposed, no c", IN(X(-1, 1, 3, 2), X(-1, 1, 3, 4)), AT(AI("trans_a", 1))},
    /* ---- convolution and pooling (conv.c, pool.c) ---- */
    {"conv2d", "3x3 with bias", IN(X(-1, 1, 1, 2, 4, 4), X(-1, 1, 3, 2, 3, 3), X(-1, 1, 3)),
     .flags = OS_STRIDED},
    {"conv2d", "groups 2, stride (2,1), padding (1,0), dilation (1,2)",
     IN(X(-1, 1, 1, 2, 5, 6), X(-1, 1, 2, 1, 2, 2)),
     AT(AINTS("stride", 2, 1), AINTS("padding", 1, 0), AINTS("dilation", 1, 2), AI("groups", 2))},
    {"conv2d_grad_input", "of a 3x3", IN(X(-1, 1, 1, 3, 2, 2), X(-1, 1, 3, 2, 3, 3)),
     AT(AINTS("input_shape", 1, 2, 4, 4))},
    {"conv2d_grad_weight", "of a 3x3", IN(X(-1, 1, 1, 3, 2, 2), X(-1, 1, 1, 2, 4, 4)),
     AT(AINTS("weight_shape", 3, 2, 3, 3))},
    {"conv_transpose2d", "3x3 with bias", IN(X(-1, 1, 1, 2, 3, 3), X(-1, 1, 2, 3, 3, 3),
     X(-1, 1, 3)), .flags = OS_STRIDED},
    {"conv_transpose2d", "groups 2, stride (2,1), padding (1,0), output_padding (1,0), "
     "dilation (1,2)", IN(X(-1, 1, 1, 4, 3, 4), X(-1, 1, 4, 1, 2, 2)),
     AT(AINTS("stride", 2, 1), AINTS("padding", 1, 0), AINTS("output_padding", 1, 0),
        AINTS("dilation", 1, 2), AI("groups", 2))},
    {"conv3d", "2x2x2 with bias", IN(X(-1, 1, 1, 2, 3, 3, 3), X(-1, 1, 2, 2, 2, 2, 2),
     X(-1, 1, 2)), .flags = OS_STRIDED},
    {"conv3d", "groups 2, stride (2,1,1), padding (1,0,1), dilation (1,2,1)",
     IN(X(-1, 1, 1, 2, 3, 4, 3), X(-1, 1, 2, 1, 2, 2, 2)),
     AT(AINTS("stride", 2, 1, 1), AINTS("padding", 1, 0, 1), AINTS("dilation", 1, 2, 1),
        AI("groups", 2))},
    {"conv3d_grad_input", "of a 2x2x2", IN(X(-1, 1, 1, 2, 2, 2, 2), X(-1, 1, 2, 2, 2, 2, 2)),
     AT(AINTS("input_shape", 1, 2, 3, 3, 3))},
    {"conv3d_grad_weight", "of a 2x2x2", IN(X(-1, 1, 1, 2, 2, 2, 2), X(-1, 1, 1, 2, 3, 3, 3)),
     AT(AINTS("weight_shape", 2, 2, 2, 2, 2))},
    {"conv_transpose3d", "stride 2, padding (1,0,0), output_padding (1,0,1), groups 2",
     IN(X(-1, 1, 1, 2, 2, 2, 2), X(-1, 1, 2, 1, 2, 2, 2), X(-1, 1, 2)),
     AT(AINTS("stride", 2, 2, 2), AINTS("padding", 1, 0, 0), AINTS("output_padding", 1, 0, 1),
        AI("groups", 2)), OS_STRIDED},
    {"max_pool3d", "2x2x2 stride (2,1,2) padding (1,0,0)", IN(X(-1, 1, 1, 2, 3, 3, 4)),
     AT(AINTS("kernel", 2, 2, 2), AINTS("stride", 2, 1, 2), AINTS("padding", 1, 0, 0)),
     OS_STRIDED},
    {"avg_pool3d", "2x2x3 stride (1,2,2) padding (1,1,1) ceil_mode without the padding",
     IN(X(-1, 1, 1, 2, 3, 4, 4)), AT(AINTS("kernel", 2, 2, 3), AINTS("stride", 1, 2, 2),
     AINTS("padding", 1, 1, 1), AI("ceil_mode", 1), AI("count_include_pad", 0)), OS_STRIDED},
    {"avg_pool3d", "2x2x2", IN(X(-1, 1, 2, 1, 4, 2, 4)),
     AT(AINTS("kernel", 2, 2, 2), AINTS("stride", 2, 2, 2), AINTS("padding", 0, 0, 0))},
    {"avg_pool3d_grad", "2x2x2 stride 2 into 4x2x4", IN(X(-1, 1, 1, 2, 2, 1, 2)),
     AT(AINTS("kernel", 2, 2, 2), AINTS("stride", 2, 2, 2), AINTS("padding", 0, 0, 0),
        AINTS("input_size", 4, 2, 4))},
    {"max_pool2d", "2x2 stride 2", IN(X(-1, 1, 1, 2, 4, 4)),
     AT(AINTS("kernel", 2, 2), AINTS("stride", 2, 2), AINTS("padding", 0, 0)), OS_STRIDED},
    {"max_pool2d", "3x3 stride 2 padding 1 ceil_mode", IN(X(-1, 1, 1, 1, 5, 5)),
     AT(AINTS("kernel", 3, 3), AINTS("stride", 2, 2), AINTS("padding", 1, 1), AI("ceil_mode", 1))},
    {"max_pool2d_grad", "into 4x4", IN(X(-1, 1, 1, 2, 2, 2), I(16, 1, 2, 2, 2)),
     AT(AINTS("input_size", 4, 4))},
    {"max_pool2d_select", "from 4x4", IN(X(-1, 1, 1, 2, 4, 4), I(16, 1, 2, 2, 2))},
    {"avg_pool2d", "2x2 stride (1,2) padding (1,0) without the padding",
     IN(X(-1, 1, 1, 2, 4, 5)), AT(AINTS("kernel", 2, 2), AINTS("stride", 1, 2),
     AINTS("padding", 1, 0), AI("count_include_pad", 0)), OS_STRIDED},
    {"avg_pool2d_grad", "2x2 stride 2 into 4x4", IN(X(-1, 1, 1, 2, 2, 2)),
     AT(AINTS("kernel", 2, 2), AINTS("stride", 2, 2), AINTS("padding", 0, 0),
        AINTS("input_size", 4, 4))},
    /* ---- normalisation (norm.c) ---- */
    /* known exception: training-mode batch_norm has no ONNX export (ONNX's
     * training_mode outputs are updated running stats, not the batch's) */
    {"batch_norm", "[3,2,2]", IN(X(-1, 1, 3, 2, 2), X(0.5, 1.5, 2), X(-1, 1, 2)),
     AT(AF("eps", 1e-3)), OS_STRIDED | OS_NO_ONNX},
    /* layer norm's fused backward, differentiable (norm_ln_grad.c): x, dy,
     * made-up statistics (var > 0), weight, and gradients reaching them */
    {"layer_norm_grad", "last axis of [2,3,4]",
     IN(X(-1, 1, 2, 3, 4), X(-1, 1, 2, 3, 4), X(-0.5, 0.5, 2, 3, 1), X(0.5, 1.5, 2, 3, 1),
        X(0.5, 1.5, 4), X(-1, 1, 2, 3, 1), X(-1, 1, 2, 3, 1)),
     AT(AI("n_axes", 1)), .flags = OS_STRIDED},
    {"layer_norm_grad", "last 2 axes of [2,3,4]",
     IN(X(-1, 1, 2, 3, 4), X(-1, 1, 2, 3, 4), X(-0.5, 0.5, 2, 1, 1), X(0.5, 1.5, 2, 1, 1),
        X(0.5, 1.5, 3, 4), X(-1, 1, 2, 1, 1), X(-1, 1, 2, 1, 1)),
     AT(AI("n_axes", 2), AF("eps", 1e-3))},
    {"layer_norm", "last 2 axes of [2,3,4]", IN(X(-1, 1, 2, 3, 4), X(0.5, 1.5, 3, 4), X(-1, 1, 3, 4)),
     AT(AI("n_axes", 2), AF("eps", 1e-3)), OS_STRIDED},
    /* ---- nn and losses (nn.c, loss.c) ---- */
    {"softmax", "axis 1", IN(X(-2, 2, 2, 3)), AT(AI("axis", 1)), OS_STRIDED},
    {"log_softmax", "axis 0", IN(X(-2, 2, 3, 2)), AT(AI("axis", 0))},
    {"nll_loss", "[3,4] labels [3]", IN(X(-2, 0, 3, 4), I(4, 3)), .flags = OS_STRIDED},
    {"nll_loss_grad", "[3] into 4 classes", IN(X(-1, 1, 3), I(4, 3)), AT(AI("num_classes", 4))},
    {"bce_with_logits", "logits and targets", IN(X(-2, 2, 2, 3), X(0, 1, 2, 3)), .flags = OS_STRIDED},
    /* ---- triangles (trilu.c) ---- */
    {"trilu", "tril, diagonal -1, batch of [2,3,4]", IN(X(-1, 1, 2, 3, 4)),
     AT(AI("diagonal", -1)), OS_STRIDED},
    {"trilu", "triu, diagonal 1, [4,3]", IN(X(-1, 1, 4, 3)), AT(AI("upper", 1), AI("diagonal", 1)),
     OS_STRIDED},
    /* ---- unary math (unary_math.c): inside each smooth domain ---- */
    UNARY("tan", -1.2, 1.2),
    UNARY("asin", -0.9, 0.9),
    UNARY("acos", -0.9, 0.9),
    UNARY("atan", -3, 3),
    UNARY("sinh", -2, 2),
    UNARY("cosh", -2, 2),
    UNARY("asinh", -3, 3),
    UNARY("acosh", 1.2, 3),
    UNARY("atanh", -0.9, 0.9),
    UNARY("expm1", -2, 2),
    UNARY("log1p", -0.5, 2),
    UNARY("log2", 0.5, 2),
    UNARY("log10", 0.5, 2),
    UNARY("reciprocal", 0.5, 2),
    {"reciprocal", "negative", IN(X(-2, -0.5, 2, 3))},
    UNARY("square", -2, 2),
    /* ---- unary activations (unary_act.c); the kinks and jumps (hardtanh's
     * bounds, shrink's +-lambd, threshold's threshold) have probability
     * zero ---- */
    UNARY("softsign", -3, 3),
    UNARY("silu", -4, 4),
    UNARY("mish", -4, 4),
    UNARY("logsigmoid", -4, 4),
    {"celu", "a 0.7", IN(X(-2, 2, 2, 3)), AT(AF("a", 0.7)), OS_STRIDED},
    {"hardtanh", "[-0.5, 0.5]", IN(X(-1, 1, 2, 3)), AT(AF("a", -0.5), AF("b", 0.5)), OS_STRIDED},
    {"shrink", "softshrink 0.5", IN(X(-1.5, 1.5, 2, 3)), AT(AF("a", 0.5), AF("b", 0.5)), OS_STRIDED},
    {"shrink", "hardshrink 0.3", IN(X(-1.5, 1.5, 2, 3)), AT(AF("a", 0.3), AF("b", 0.0))},
    {"threshold", "0.2 to -1.5", IN(X(-1, 1, 2, 3)), AT(AF("a", 0.2), AF("b", -1.5)), OS_STRIDED},
    {"threshold", "ThresholdedRelu 0.1", IN(X(-1, 1, 2, 3)), AT(AF("a", 0.1), AF("b", 0.0))},
    /* ---- scatter (scatter.c): one index per row along the axis, so that no
     * position is written twice (a later write would hide an earlier src
     * element, which gradcheck would see) ---- */
    {"scatter", "axis 1, [2,1] into [2,4]", IN(X(-1, 1, 2, 4), I(4, 2, 1), X(-1, 1, 2, 1)),
     AT(AI("axis", 1)), OS_STRIDED},
    /* known exception: ONNX ScatterElements wants updates of the indices'
     * shape; src larger than index has no ONNX form */
    {"scatter", "axis 0, [1,2] into [3,2], src [2,3] larger",
     IN(X(-1, 1, 3, 2), I(3, 1, 2), X(-1, 1, 2, 3)), AT(AI("axis", 0)), OS_NO_ONNX},
    /* ---- shape-dependent helpers for unknown dims (dynamic.c); last, so
     * that their random inputs do not shift the other samples' draws ---- */
    {"expand_as", "[1,3] to [4,2,3]", IN(X(-1, 1, 1, 3), K(-1, 1, 4, 2, 3)), .flags = OS_STRIDED},
    {"count_scale", "1/n over axes 0, 2", IN(X(-1, 1, 2, 3), K(-1, 1, 4, 2, 3)),
     AT(AINTS("axes", 0, 2), AF("alpha", 0.5))},
    {"count_scale", "n/(n-1), all", IN(X(-1, 1, 2, 3), K(-1, 1, 4, 2)),
     AT(AI("bessel", 1), AF("alpha", 2.0))},
    {NULL, NULL, 0, {{0}}, 0, {{0}}, 0},
};

const os_exempt os_exempt_ops[] = {
    {"custom_function", "marks a custom autograd Function's output in a graph; its gradient "
                        "rule is an error by design (the Function's backward cannot run "
                        "there): tests/python/test_custom_function_graph.py"},
    {"as_strided", "a view defined on its input's strides, so the harness's strided copies of "
                   "an input are another function (refused with an error); "
                   "and it is refused in graphs (values there have no layout); "
                   "tests/test_as_strided.c checks values, gradients (finite differences, "
                   "second order), tangents and the refusal"},
    {"batch_norm_grad", "fused first-order backward of batch_norm (TG_OP_NO_VJP/NO_JVP: "
                        "create_graph builds the composite instead); run by batch_norm's samples"},
    {"copy_", "in-place update (TG_OP_INPLACE): eager only, never a graph node, no forward "
              "rule; tests/test_autograd.c checks its recorded gradients"},
    {"fill_", "in-place update (TG_OP_INPLACE), see copy_"},
    {"add_", "in-place update (TG_OP_INPLACE), see copy_"},
    {"mul_scalar_", "in-place update (TG_OP_INPLACE), see copy_"},
    {"cond", "control flow: its attributes are body graphs traced from callbacks, which the "
             "sample table cannot describe; tests/test_control.c checks values, gradients "
             "(graph against the eager tape, finite differences, second order) and tangents"},
    {"while_loop", "control flow, see cond"},
    {"while_grad", "the backward loop of while_loop's gradient (TG_OP_NO_VJP/NO_JVP); run by "
                   "tests/test_control.c"},
    {"append_row_grad", "append_row's gradient, a row or the rows before it (TG_OP_NO_VJP/NO_JVP); "
                        "run by append_row's samples and ONNX Loop's scan outputs "
                        "(tests/test_onnx_control.c)"},
    {NULL, NULL},
};

const os_sample *os_find_sample(const char *op)
{
    for (const os_sample *s = os_samples; s->op; s++)
        if (!strcmp(s->op, op))
            return s;
    return NULL;
}

const char *os_exempt_reason(const char *op)
{
    for (const os_exempt *e = os_exempt_ops; e->op; e++)
        if (!strcmp(e->op, op))
            return e->reason;
    return NULL;
}
