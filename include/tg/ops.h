/* tensorgraph operators: the one public function per op.
 * Each call runs the op now (eager mode) and, when an input requires grad
 * and grad mode is on, records a node on the autograd tape.
 * All return a new reference (see tg/tensor.h on ownership) or NULL with
 * tg_last_error() set. Binary ops broadcast like numpy. Axes may be
 * negative (counted from the end). */
#ifndef TG_OPS_H
#define TG_OPS_H

#include "tg/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the public API: see tg/core.h */

/* ---- views: share storage, never copy ---------------------------------- */
/* one dim may be -1 (inferred). tg_view fails when the strides do not
 * allow a view; tg_reshape then copies (like PyTorch's reshape). In a
 * graph, for an input with one unknown dim (a symbolic batch), whose size
 * tg_size gives as -1, a -1 at that dim's position is that dim kept in
 * place, and one other -1 may be inferred: x [-1, 3, 4] to
 * {tg_size(x, 0), -1} is [-1, 12]. Other targets with several -1 fail. */
tg_tensor *tg_view(tg_tensor *x, int ndim, const int64_t *shape);
tg_tensor *tg_reshape(tg_tensor *x, int ndim, const int64_t *shape);
tg_tensor *tg_permute(tg_tensor *x, const int *perm); /* ndim entries */
tg_tensor *tg_transpose(tg_tensor *x, int axis0, int axis1);
/* start:stop:step on one axis, Python semantics (negative start/stop
 * count from the end and are clamped); step must be >= 1 */
tg_tensor *tg_slice(tg_tensor *x, int axis, int64_t start, int64_t stop,
                    int64_t step);
tg_tensor *tg_expand(tg_tensor *x, int ndim, const int64_t *shape);
tg_tensor *tg_squeeze(tg_tensor *x, int axis);     /* the size-1 axis */
tg_tensor *tg_squeeze_all(tg_tensor *x);           /* every size-1 axis */
tg_tensor *tg_unsqueeze(tg_tensor *x, int axis);
tg_tensor *tg_flatten(tg_tensor *x, int start_axis, int end_axis);
/* a C-contiguous tensor: x itself (new reference) when already so */
tg_tensor *tg_contiguous(tg_tensor *x);
tg_tensor *tg_clone(tg_tensor *x); /* always a contiguous copy */
/* the diagonal of the (dim1, dim2) planes (dims may be negative), offset
 * above (> 0) or below (< 0) the main one, as a view: the other dims in
 * order, then the diagonal as the last dim (PyTorch's torch.diagonal) */
tg_tensor *tg_diagonal(tg_tensor *x, int64_t offset, int dim1, int dim2);
/* a view of x's memory of any sizes and (non-negative) strides, starting
 * `offset` elements from x's first element (PyTorch's torch.as_strided,
 * its storage offset counted from x's); every element must lie within the
 * memory x spans. Gradients: the view's gradient added at its positions,
 * each of x's elements reading its own (divided by how many of x's
 * elements share it, where x overlaps itself) */
tg_tensor *tg_as_strided(tg_tensor *x, int ndim, const int64_t *size, const int64_t *stride,
                         int64_t offset);
/* the coordinates of x's nonzero elements (NaN counts), in C order: int64
 * [count, ndim] (PyTorch's torch.nonzero). In a graph count is unknown
 * (-1) until run time, and so is every dim computed from it */
tg_tensor *tg_nonzero(tg_tensor *x);
/* ONNX Slice-13 with its bounds as int64 (or int32) 1-D tensors of one
 * length each: for each i, axis axes[i] (negative counts from the end)
 * from starts[i] towards ends[i] by steps[i] (non-zero, negative walks
 * backwards); negative bounds count from the end and are clamped to the
 * axis. The bounds may be values of a graph: the sliced dims are then
 * unknown (-1) until the graph runs (so are all dims when axes is such a
 * value). A copy; gradients flow to x. */
tg_tensor *tg_slice_by(tg_tensor *x, tg_tensor *starts, tg_tensor *ends, tg_tensor *axes,
                       tg_tensor *steps);
/* ONNX Expand and Tile with the target shape or the repeats as a 1-D
 * int64 (or int32) tensor: expand_by broadcasts x and shape both ways
 * (each output dim the larger of x's and the shape's where one is 1),
 * tile_by repeats x repeats[d] times along dim d. The shape or repeats may
 * be values of a graph: the dims they decide are then unknown (-1) until
 * the graph runs. Negative values and shapes that do not broadcast are
 * errors. A copy; gradients flow to x. */
tg_tensor *tg_expand_by(tg_tensor *x, tg_tensor *shape);
tg_tensor *tg_tile_by(tg_tensor *x, tg_tensor *repeats);
/* x's shape as an int64 [ndim] tensor, read when it runs: in a graph, a
 * dim unknown when the graph is built (-1) gives the run's size */
tg_tensor *tg_shape_of(tg_tensor *x);

/* ---- elementwise, binary (broadcasting) -------------------------------- */
tg_tensor *tg_add(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_sub(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_mul(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_div(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_pow(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_maximum(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_minimum(tg_tensor *a, tg_tensor *b);
/* remainders of a / b, integer and float dtypes (PyTorch's result type):
 * fmod has the sign of a (C's fmod, torch.fmod), remainder the sign of b
 * (Python's %, torch.remainder). An integer divisor of 0 is an error;
 * a float one gives NaN. Gradients as PyTorch: d/da = 1, d/db =
 * -trunc(a / b) (fmod) or -floor(a / b) (remainder). */
tg_tensor *tg_fmod(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_remainder(tg_tensor *a, tg_tensor *b);
/* a / b rounded down (torch.floor_divide, Python's //) or toward zero
 * (torch.div's rounding_mode='trunc'), in PyTorch's result type:
 * integers stay integers (exact; a divisor of 0 is an error), floats
 * round as PyTorch does (1 // 0.1 is 9; a zero divisor gives inf or
 * NaN). The gradients are zero, as PyTorch's. */
tg_tensor *tg_floor_divide(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_trunc_divide(tg_tensor *a, tg_tensor *b);
/* scalar conveniences; the scalar takes x's dtype (a fractional scalar
 * with an integer x computes in floating point). As in PyTorch, an integer x to
 * a negative integral power fails ("Integers to negative integer powers
 * are not allowed"), while tg_pow with a tensor exponent gives 1 / x
 * rounded toward zero (0, or 1 and -1 for x = 1 and -1). */
tg_tensor *tg_add_scalar(tg_tensor *x, double s);
tg_tensor *tg_mul_scalar(tg_tensor *x, double s);
tg_tensor *tg_pow_scalar(tg_tensor *x, double s);

/* ---- gradients at kinks and ties: PyTorch's choices ----------------------
 * Where an op is not differentiable, its gradient is the one PyTorch
 * gives (tests/test_kinks.c holds PyTorch's values):
 *   relu        0 at x == 0; a NaN input passes its gradient (x <= 0 ? 0 : 1)
 *   abs         0 at x == 0 (sign(x)); sign, floor, ceil, round: 0 everywhere
 *   leaky_relu  the slope at x == 0 (x > 0 ? 1 : slope)
 *   elu         alpha at x == 0 (x > 0 ? 1 : alpha * exp(x))
 *   hardswish   x/3 + 1/2 on the closed [-3, 3]: -1/2 at -3, 3/2 at 3
 *   hardsigmoid alpha on the open interval where 0 < alpha x + beta < 1: 0
 *               at the kinks
 *   selu        gamma alpha at x == 0 (the negative branch)
 *   clamp       1 on the closed [lo, hi]: a bound passes the gradient, as
 *               torch.clamp does (ONNX Clip too, also with computed or
 *               trained bounds, which get it only where x is strictly
 *               beyond them). PyTorch's F.hardtanh and F.relu6 give 0 at
 *               their bounds instead (tg_hardtanh, tg_relu6); they export to
 *               ONNX as Clip, so an imported model follows clamp there.
 *   hardtanh, relu6  0 at min_val and max_val (and beyond and at NaN),
 *               1 strictly between
 *   softshrink, hardshrink  0 on the closed [-lambd, lambd] and at NaN,
 *               1 outside
 *   threshold   0 where x <= threshold, 1 above and at NaN (as relu)
 *   celu        1 at x == 0 (both sides agree)
 *   maximum, minimum  a tie splits the gradient: 1/2 to each input
 *   max, min (reductions)  tied extremes share it evenly (PyTorch's amax)
 *   max_pool2d  the first maximum of each window (row-major) takes it all
 *   where       the condition decides; it has no gradient itself */

/* ---- elementwise, unary ------------------------------------------------- */
tg_tensor *tg_neg(tg_tensor *x);
tg_tensor *tg_abs(tg_tensor *x);
tg_tensor *tg_exp(tg_tensor *x);
tg_tensor *tg_log(tg_tensor *x);
tg_tensor *tg_sqrt(tg_tensor *x);
tg_tensor *tg_rsqrt(tg_tensor *x);
tg_tensor *tg_sin(tg_tensor *x);
tg_tensor *tg_cos(tg_tensor *x);
tg_tensor *tg_tanh(tg_tensor *x);
tg_tensor *tg_sigmoid(tg_tensor *x);
tg_tensor *tg_relu(tg_tensor *x);
tg_tensor *tg_leaky_relu(tg_tensor *x, double negative_slope);
tg_tensor *tg_elu(tg_tensor *x, double alpha);
tg_tensor *tg_gelu(tg_tensor *x); /* exact (erf) form */
/* PyTorch's approximate='tanh': 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
tg_tensor *tg_gelu_tanh(tg_tensor *x);
tg_tensor *tg_erf(tg_tensor *x);
tg_tensor *tg_softplus(tg_tensor *x);
tg_tensor *tg_floor(tg_tensor *x);
tg_tensor *tg_ceil(tg_tensor *x);
tg_tensor *tg_round(tg_tensor *x); /* half to even, like PyTorch */
tg_tensor *tg_sign(tg_tensor *x);
/* x * relu6(x + 3) / 6 (MobileNetV3's activation, ONNX HardSwish) */
tg_tensor *tg_hardswish(tg_tensor *x);
/* clamp(alpha x + beta, 0, 1): PyTorch's F.hardsigmoid is alpha 1/6, beta
 * 1/2 (ONNX HardSigmoid's defaults are 0.2, 0.5) */
tg_tensor *tg_hardsigmoid(tg_tensor *x, double alpha, double beta);
/* gamma (x > 0 ? x : alpha (exp(x) - 1)) with PyTorch's (and ONNX's)
 * alpha 1.6732632423543772, gamma 1.0507009873554805 */
tg_tensor *tg_selu(tg_tensor *x);
/* x within [lo, hi] (NaN passes through); lo > hi gives hi everywhere
 * and no gradient, as PyTorch's clamp, NumPy's clip and ONNX Clip */
tg_tensor *tg_clamp(tg_tensor *x, double lo, double hi);
/* float functions (integer and bool inputs give float32, as for exp, sin
 * and the other math functions above; activations refuse bools), values
 * outside a domain as PyTorch's: NaN (asin, acos of |x| > 1, acosh of
 * x < 1, atanh of |x| > 1, log2 and log10 of x < 0), infinities at the
 * poles */
tg_tensor *tg_tan(tg_tensor *x);
tg_tensor *tg_asin(tg_tensor *x);
tg_tensor *tg_acos(tg_tensor *x);
tg_tensor *tg_atan(tg_tensor *x);
tg_tensor *tg_sinh(tg_tensor *x);
tg_tensor *tg_cosh(tg_tensor *x);
tg_tensor *tg_asinh(tg_tensor *x);
tg_tensor *tg_acosh(tg_tensor *x);
tg_tensor *tg_atanh(tg_tensor *x);
tg_tensor *tg_expm1(tg_tensor *x); /* exp(x) - 1, accurate near 0 */
tg_tensor *tg_log1p(tg_tensor *x); /* log(1 + x), accurate near 0; -inf at -1 */
tg_tensor *tg_log2(tg_tensor *x);
tg_tensor *tg_log10(tg_tensor *x);
tg_tensor *tg_reciprocal(tg_tensor *x); /* 1 / x; integers compute in float32 */
tg_tensor *tg_square(tg_tensor *x);     /* x * x in x's dtype (integers wrap) */
/* x / (1 + |x|) (ONNX Softsign) */
tg_tensor *tg_softsign(tg_tensor *x);
/* x * sigmoid(x) (SiLU, swish) */
tg_tensor *tg_silu(tg_tensor *x);
/* x * tanh(softplus(x)) */
tg_tensor *tg_mish(tg_tensor *x);
/* log(sigmoid(x)), computed as -softplus(-x) (finite for x << 0) */
tg_tensor *tg_logsigmoid(tg_tensor *x);
/* x > 0 ? x : alpha (exp(x / alpha) - 1) (ONNX Celu); alpha 0 is an error */
tg_tensor *tg_celu(tg_tensor *x, double alpha);
/* clamp(x, min_val, max_val) with PyTorch's F.hardtanh gradient: 0 at the
 * bounds (clamp's is 1); min_val > max_val is an error */
tg_tensor *tg_hardtanh(tg_tensor *x, double min_val, double max_val);
tg_tensor *tg_relu6(tg_tensor *x); /* hardtanh(x, 0, 6), as PyTorch */
/* ONNX Shrink with bias lambd: x - lambd above lambd, x + lambd below
 * -lambd, 0 between (lambd < 0 is an error, as PyTorch's) */
tg_tensor *tg_softshrink(tg_tensor *x, double lambd);
/* x where |x| > lambd, else 0 (ONNX Shrink with bias 0) */
tg_tensor *tg_hardshrink(tg_tensor *x, double lambd);
/* F.threshold: x > threshold ? x : value (ONNX ThresholdedRelu(alpha) is
 * threshold(alpha, 0)); the numbers take x's dtype first */
tg_tensor *tg_threshold(tg_tensor *x, double threshold, double value);
tg_tensor *tg_where(tg_tensor *cond, tg_tensor *a, tg_tensor *b);
tg_tensor *tg_cast(tg_tensor *x, tg_dtype dt);

/* ---- comparisons and logic (bool results, no gradient) ----------------- */
tg_tensor *tg_eq(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_ne(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_lt(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_le(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_gt(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_ge(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_logical_and(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_logical_or(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_logical_xor(tg_tensor *a, tg_tensor *b);
tg_tensor *tg_logical_not(tg_tensor *x);
/* tests of floating-point values (torch.isnan, isinf, isposinf, isneginf,
 * isfinite; ONNX IsNaN, IsInf): integer and bool inputs are all false
 * (isfinite: all true). isfinite is composed: not (isnan or isinf). */
tg_tensor *tg_isnan(tg_tensor *x);
tg_tensor *tg_isinf(tg_tensor *x);
tg_tensor *tg_isposinf(tg_tensor *x);
tg_tensor *tg_isneginf(tg_tensor *x);
tg_tensor *tg_isfinite(tg_tensor *x);

/* ---- reductions ---------------------------------------------------------
 * Over n_axes axes (n_axes == 0: all axes). keepdim keeps them as size 1.
 * var/std use `correction` (1: unbiased, as PyTorch's default).
 * Dtypes as in PyTorch: sum/prod of integers give int64; mean/var/std need
 * float inputs; logsumexp of integers computes in float32; bool inputs
 * are rejected. Over an axis of size 0, sum gives 0, prod 1, mean NaN,
 * while max/min/argmax/argmin fail. NaN propagates through max/min, and
 * argmax/argmin return the first extreme (the first NaN if any). The
 * gradient of max/min is shared evenly by tied extremes (PyTorch's amax). */
tg_tensor *tg_sum(tg_tensor *x, int n_axes, const int *axes, bool keepdim);
tg_tensor *tg_mean(tg_tensor *x, int n_axes, const int *axes, bool keepdim);
tg_tensor *tg_max(tg_tensor *x, int n_axes, const int *axes, bool keepdim);
tg_tensor *tg_min(tg_tensor *x, int n_axes, const int *axes, bool keepdim);
tg_tensor *tg_prod(tg_tensor *x, int n_axes, const int *axes, bool keepdim);
tg_tensor *tg_var(tg_tensor *x, int n_axes, const int *axes, int correction,
                  bool keepdim);
tg_tensor *tg_std(tg_tensor *x, int n_axes, const int *axes, int correction,
                  bool keepdim);
tg_tensor *tg_logsumexp(tg_tensor *x, int n_axes, const int *axes,
                        bool keepdim);
/* the L1 (ord 1: sum |x|) or L2 (ord 2: sqrt(sum x^2)) norm over the axes
 * (torch.linalg.vector_norm; ONNX ReduceL1/ReduceL2), float inputs, sums
 * in double. Gradients as PyTorch: ord 1 sign(x) (0 at 0); ord 2 x / norm,
 * 0 where the norm is 0 (no NaN). Other ords: TG_ERR_UNSUPPORTED. */
tg_tensor *tg_vector_norm(tg_tensor *x, int ord, int n_axes, const int *axes,
                          bool keepdim);
tg_tensor *tg_argmax(tg_tensor *x, int axis, bool keepdim); /* int64, nondiff */
tg_tensor *tg_argmin(tg_tensor *x, int axis, bool keepdim);
/* running sums along axis (torch.cumsum with exclusive = reverse =
 * false); exclusive leaves each element out of its own sum (ONNX CumSum's
 * exclusive: the first output is 0), reverse sums from the end. Floats
 * keep their dtype (float32 accumulates in double, as PyTorch's CPU
 * kernel); integers and bool give int64. The gradient is the scan the
 * other way. */
tg_tensor *tg_cumsum(tg_tensor *x, int axis, bool exclusive, bool reverse);
/* start, start + delta, ... while before limit (ONNX Range, torch.arange):
 * max(ceil((limit - start) / delta), 0) elements of dtype dt, element i
 * computed as start + i * delta in double (integers beyond 2^53 are not
 * exact). An op without inputs: in a graph it is a node (tg_arange makes
 * the same values as a plain tensor). No gradient. */
tg_tensor *tg_range(tg_dtype dt, double start, double limit, double delta);
/* tg_range with the bounds as 0-d tensors of one numeric dtype (the
 * output's): in a graph, a length computed from values it has not yet is
 * unknown (-1) until the graph runs */
tg_tensor *tg_range_by(tg_tensor *start, tg_tensor *limit, tg_tensor *delta);
/* the k largest (smallest) elements along axis and their int64 positions
 * (torch.topk, ONNX TopK), always in order (sorted is accepted for
 * ONNX's sake); ties keep the lower index first, NaN counts as larger than
 * every number. Writes new references to *values and *indices (indices
 * may be NULL). The gradient goes back to the chosen positions. */
tg_status tg_topk(tg_tensor *x, int64_t k, int axis, bool largest, bool sorted,
                  tg_tensor **values, tg_tensor **indices);
/* the whole axis in ascending (descending) order, stable: torch.sort with
 * stable=True; argsort gives only the positions */
tg_status tg_sort(tg_tensor *x, int axis, bool descending, tg_tensor **values,
                  tg_tensor **indices);
tg_tensor *tg_argsort(tg_tensor *x, int axis, bool descending);
/* sums broadcast dims away so the result has `shape` (the gradient of a
 * broadcast); shape must broadcast to x's shape; bools sum as int64
 * counts (x itself when nothing is summed) */
tg_tensor *tg_sum_to(tg_tensor *x, int ndim, const int64_t *shape);

/* the lower (tril: column - row <= diagonal) or upper (triu: column - row
 * >= diagonal) triangle of each matrix of the last two dims, the rest
 * zero (torch.tril / torch.triu, ONNX Trilu); any dtype, at least 2 dims.
 * The gradient is the same triangle of the output's gradient. */
tg_tensor *tg_tril(tg_tensor *x, int64_t diagonal);
tg_tensor *tg_triu(tg_tensor *x, int64_t diagonal);

/* ---- linear algebra ------------------------------------------------------ */
/* numpy matmul: 1-D operands promoted, batch dims broadcast */
tg_tensor *tg_matmul(tg_tensor *a, tg_tensor *b);
/* torch.einsum: "ij,jk->ik" over n operands (letters a-z, A-Z, one "..."
 * per term for unnamed leading dims, broadcast; implicit output without
 * "->"). Repeated subscripts in a term take diagonals. Composed from
 * permute, reshape, index_select, sum and matmul. */
tg_tensor *tg_einsum(const char *equation, int n, tg_tensor *const *inputs);
/* alpha * op(a) @ op(b) + beta * c, a and b 2-D, c broadcast (may be NULL) */
tg_tensor *tg_gemm(tg_tensor *a, tg_tensor *b, tg_tensor *c, double alpha,
                   double beta, bool trans_a, bool trans_b);
/* x @ w^T + b, w is [out, in], b is [out] or NULL (PyTorch's Linear) */
tg_tensor *tg_linear(tg_tensor *x, tg_tensor *w, tg_tensor *b);

/* ---- neural network ops -------------------------------------------------- */
typedef struct tg_conv2d_opts {
    int stride[2], padding[2], dilation[2], groups;
} tg_conv2d_opts;
/* x [N, C, H, W], w [O, C/groups, kh, kw], b [O] or NULL; opts NULL means
 * stride 1, padding 0, dilation 1, groups 1 */
tg_tensor *tg_conv2d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                     const tg_conv2d_opts *opts);

typedef struct tg_conv_transpose2d_opts {
    int stride[2], padding[2], output_padding[2], dilation[2], groups;
} tg_conv_transpose2d_opts;
/* the transposed convolution (PyTorch's conv_transpose2d, ONNX
 * ConvTranspose): the input gradient of a conv2d. x [N, C, H, W], w [C,
 * O/groups, kh, kw], b [O] or NULL; output [N, O, Hout, Wout] with Hout =
 * (H-1)*stride - 2*padding + dilation*(kh-1) + output_padding + 1;
 * output_padding must be smaller than the stride. opts NULL means stride
 * 1, no padding, dilation 1, groups 1 */
tg_tensor *tg_conv_transpose2d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                               const tg_conv_transpose2d_opts *opts);

typedef struct tg_pool2d_opts {
    int kernel[2], stride[2], padding[2];
    bool ceil_mode;
    bool count_include_pad; /* avg_pool2d only */
} tg_pool2d_opts;
/* stride {0,0} means stride = kernel */
tg_tensor *tg_max_pool2d(tg_tensor *x, const tg_pool2d_opts *opts);
tg_tensor *tg_avg_pool2d(tg_tensor *x, const tg_pool2d_opts *opts);
tg_tensor *tg_global_avg_pool2d(tg_tensor *x); /* [N,C,H,W] -> [N,C,1,1] */
/* x itself, but when x requires grad (and grad mode is on) an identity
 * whose gradient, while a gradient is being recorded (create_graph),
 * is tied to x with a zero derivative: a function composed of ops whose
 * gradients do not depend on x (gathers, means, maxima) applied to
 * grad_tie(x) gets PyTorch's gradients for ops whose backward is an op of
 * the input (adaptive_max_pool2d_backward(grad, self, indices)), which
 * require grad under create_graph and give x zeros when differentiated */
tg_tensor *tg_grad_tie(tg_tensor *x);

/* 1-D convolution and pooling over x [N, C, L]: the 2-D ops on [N, C, 1, L]
 * views (PyTorch's conv1d, conv_transpose1d, max_pool1d, avg_pool1d);
 * w [O, C/groups, k] (conv_transpose1d: [C, O/groups, k]), b [O] or NULL;
 * opts NULL means stride 1, no padding, dilation 1, groups 1 */
typedef struct tg_conv1d_opts {
    int stride, padding, dilation, groups;
} tg_conv1d_opts;
tg_tensor *tg_conv1d(tg_tensor *x, tg_tensor *w, tg_tensor *b, const tg_conv1d_opts *opts);
typedef struct tg_conv_transpose1d_opts {
    int stride, padding, output_padding, dilation, groups;
} tg_conv_transpose1d_opts;
tg_tensor *tg_conv_transpose1d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                               const tg_conv_transpose1d_opts *opts);
typedef struct tg_pool1d_opts {
    int kernel, stride, padding; /* stride 0 means stride = kernel */
    bool ceil_mode;
    bool count_include_pad; /* avg_pool1d only */
} tg_pool1d_opts;
tg_tensor *tg_max_pool1d(tg_tensor *x, const tg_pool1d_opts *opts);
tg_tensor *tg_avg_pool1d(tg_tensor *x, const tg_pool1d_opts *opts);

/* 3-D convolution and pooling over x [N, C, D, H, W] (PyTorch's conv3d,
 * conv_transpose3d, max_pool3d, avg_pool3d); w [O, C/groups, kd, kh, kw]
 * (conv_transpose3d: [C, O/groups, kd, kh, kw], output_padding smaller
 * than the stride), b [O] or NULL; opts NULL means stride 1, no padding,
 * dilation 1, groups 1 */
typedef struct tg_conv3d_opts {
    int stride[3], padding[3], dilation[3], groups;
} tg_conv3d_opts;
tg_tensor *tg_conv3d(tg_tensor *x, tg_tensor *w, tg_tensor *b, const tg_conv3d_opts *opts);
typedef struct tg_conv_transpose3d_opts {
    int stride[3], padding[3], output_padding[3], dilation[3], groups;
} tg_conv_transpose3d_opts;
tg_tensor *tg_conv_transpose3d(tg_tensor *x, tg_tensor *w, tg_tensor *b,
                               const tg_conv_transpose3d_opts *opts);
typedef struct tg_pool3d_opts {
    int kernel[3], stride[3], padding[3]; /* stride {0,0,0} means stride = kernel */
    bool ceil_mode;
    bool count_include_pad; /* avg_pool3d only */
} tg_pool3d_opts;
tg_tensor *tg_max_pool3d(tg_tensor *x, const tg_pool3d_opts *opts);
tg_tensor *tg_avg_pool3d(tg_tensor *x, const tg_pool3d_opts *opts);

/* x [N, C, ...]. training: normalise with batch statistics and update
 * running_mean/running_var in place (unbiased var, PyTorch's momentum
 * convention) when they are not NULL; eval: use the running stats.
 * weight/bias [C] or NULL. In a graph the running stats become variables
 * (by reference) updated by assign nodes that run whenever the result is
 * computed. */
tg_tensor *tg_batch_norm(tg_tensor *x, tg_tensor *running_mean,
                         tg_tensor *running_var, tg_tensor *weight,
                         tg_tensor *bias, bool training, double momentum,
                         double eps);
/* normalises over the last n_axes axes; weight/bias of that shape or NULL */
tg_tensor *tg_layer_norm(tg_tensor *x, int n_axes, tg_tensor *weight,
                         tg_tensor *bias, double eps);
/* F.instance_norm with batch statistics (no running stats): x [N, C, ...]
 * (at least one spatial dim, more than one spatial element) normalised per
 * sample and channel over its spatial dims; weight/bias [C] or NULL.
 * Composed from layer_norm (its gradients and forward-mode rule). */
tg_tensor *tg_instance_norm(tg_tensor *x, tg_tensor *weight, tg_tensor *bias,
                            double eps);
/* F.group_norm: x [N, C, *] with C divisible by num_groups, normalised per
 * sample over each group of C / num_groups channels (and all spatial
 * elements); weight/bias [C] or NULL. Composed from layer_norm. */
tg_tensor *tg_group_norm(tg_tensor *x, int num_groups, tg_tensor *weight,
                         tg_tensor *bias, double eps);
/* F.interpolate on x [N, C, d1 (, d2 (, d3))] with n = ndim - 2 values in
 * exactly one of size and scale_factor (the other NULL; with a scale
 * factor the output is floor(d * s) and the coordinates use 1 / s, as
 * PyTorch's default recompute_scale_factor=None does). Modes: nearest
 * (source floor(i * in / out)), nearest-exact, linear (bilinear for 2
 * spatial dims, trilinear for 3), bicubic; align_corners for linear and
 * bicubic only.
 * Composed from index_select, mul and add (gradients come with them). */
typedef enum tg_interp_mode {
    TG_INTERP_NEAREST = 0,
    TG_INTERP_NEAREST_EXACT,
    TG_INTERP_LINEAR,
    TG_INTERP_BICUBIC /* 4-D inputs; Keys' kernel with a = -0.75, as PyTorch */
} tg_interp_mode;
tg_tensor *tg_interpolate(tg_tensor *x, int n, const int64_t *size,
                          const double *scale_factor, tg_interp_mode mode,
                          bool align_corners);
/* zeroes with probability p, scales by 1/(1-p); identity when !training.
 * In a graph the mask is a random node that draws from gen at every run
 * (gen's state is a variable of the graph, held by reference), the same
 * numbers eager calls draw for the same seed and sequence of draws. */
tg_tensor *tg_dropout(tg_tensor *x, double p, bool training,
                      tg_generator *gen);
tg_tensor *tg_softmax(tg_tensor *x, int axis);
tg_tensor *tg_log_softmax(tg_tensor *x, int axis);
/* F.prelu: x where x > 0, else weight * x; weight 0-d or 1-D with 1 element
 * or x.shape[1] (one per channel, broadcast on dim 1). Composed (gt, mul,
 * where): gradients for both inputs. */
tg_tensor *tg_prelu(tg_tensor *x, tg_tensor *weight);
/* F.pixel_shuffle: [*, C r^2, H, W] -> [*, C, H r, W r] (ONNX DepthToSpace,
 * CRD mode) and F.pixel_unshuffle, its inverse; r > 0, at least 3 dims,
 * C divisible by r^2 (H and W by r). Composed of reshape and permute. */
tg_tensor *tg_pixel_shuffle(tg_tensor *x, int64_t upscale_factor);
tg_tensor *tg_pixel_unshuffle(tg_tensor *x, int64_t downscale_factor);
/* weight [V, D], indices int32/int64 of any shape -> [..., D] */
tg_tensor *tg_embedding(tg_tensor *weight, tg_tensor *indices);

/* ---- losses -------------------------------------------------------------- */
typedef enum tg_reduction {
    TG_REDUCTION_MEAN = 0,
    TG_REDUCTION_SUM,
    TG_REDUCTION_NONE
} tg_reduction;
tg_tensor *tg_mse_loss(tg_tensor *pred, tg_tensor *target, tg_reduction r);
/* logits [N, C], labels int32/int64 [N] in 0..C-1 */
tg_tensor *tg_cross_entropy(tg_tensor *logits, tg_tensor *labels,
                            tg_reduction r);
tg_tensor *tg_nll_loss(tg_tensor *log_probs, tg_tensor *labels,
                       tg_reduction r);
/* nll_loss / cross_entropy with PyTorch's weight and ignore_index: input
 * [N, C, d...], labels [N, d...]; the loss of an element is
 * -weight[label] * log_prob[label], 0 where label == ignore_index (which
 * need not be a class); "mean" divides by the sum of the weights taken
 * (NaN when every label is ignored, as in PyTorch). */
typedef struct tg_nll_opts {
    tg_tensor *weight;     /* [C] or NULL (all 1) */
    bool has_ignore_index; /* PyTorch's default is -100: set it to match */
    int64_t ignore_index;
    tg_reduction reduction;
} tg_nll_opts;
tg_tensor *tg_nll_loss_ex(tg_tensor *log_probs, tg_tensor *labels, const tg_nll_opts *opts);
tg_tensor *tg_cross_entropy_ex(tg_tensor *logits, tg_tensor *labels, const tg_nll_opts *opts);
tg_tensor *tg_bce_with_logits(tg_tensor *logits, tg_tensor *targets,
                              tg_reduction r);

/* ---- array ops -----------------------------------------------------------
 * concat/stack promote mixed dtypes (tg_promote_types), as torch.cat does.
 * Index ops (gather, index_select, one_hot, embedding) take int32/int64
 * indices; a negative or too large one fails with TG_ERR_INDEX. */
tg_tensor *tg_concat(int n, tg_tensor *const *xs, int axis);
tg_tensor *tg_stack(int n, tg_tensor *const *xs, int axis);
/* splits into n parts of sizes[i] along axis (sizes must sum to the dim);
 * writes n new references to out; returns TG_OK or an error */
tg_status tg_split(tg_tensor *x, int axis, int n, const int64_t *sizes,
                   tg_tensor **out);
/* out[i][j] = x[index[i][j]][j] along axis (index same ndim as x) */
tg_tensor *tg_gather(tg_tensor *x, int axis, tg_tensor *index);
tg_tensor *tg_index_select(tg_tensor *x, int axis, tg_tensor *index); /* 1-D */
/* torch.scatter(x, axis, index, src): a copy of x with src[p] written at p
 * with its axis coordinate replaced by index[p], for each position p of
 * index (same rank as x and src, no larger than src, nor than x off the
 * axis); x and src of one dtype; of repeated indices the last in index
 * order wins. Gradients: x's is dy zeroed where written, src's dy gathered
 * at index (zero beyond index's extent). ONNX ScatterElements. */
tg_tensor *tg_scatter(tg_tensor *x, int axis, tg_tensor *index, tg_tensor *src);
/* pads[2*i] and pads[2*i+1] elements of `value` go before and after
 * axis i, for axes 0 .. n_pads/2 - 1 (n_pads even, <= 2 * ndim; the
 * remaining axes are not padded). Pads must be >= 0. */
tg_tensor *tg_pad(tg_tensor *x, int n_pads, const int64_t *pads,
                  double value);
/* the same with a mode: constant (value), reflect (mirrored about the
 * edge element, which is not repeated: pads must be smaller than the dim,
 * as PyTorch checks) or replicate (the edge element repeated; ONNX's
 * "edge"; the dim must not be empty). value is used by constant only.
 * The gradient of reflect / replicate sums into the source positions. */
typedef enum tg_pad_mode {
    TG_PAD_CONSTANT = 0,
    TG_PAD_REFLECT = 1,
    TG_PAD_REPLICATE = 2
} tg_pad_mode;
tg_tensor *tg_pad_ex(tg_tensor *x, int n_pads, const int64_t *pads,
                     tg_pad_mode mode, double value);
/* int64 result [..., num_classes]; num_classes >= 0 (not inferred) */
tg_tensor *tg_one_hot(tg_tensor *indices, int64_t num_classes);
/* torch.tile: reps and shape aligned at the right, the shorter padded
 * with leading 1s */
tg_tensor *tg_tile(tg_tensor *x, int n_reps, const int64_t *reps);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
