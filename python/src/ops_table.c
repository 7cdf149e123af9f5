/* The op table: per op its PyTorch name, signature and public C function
 * with its calling shape (see ops.c for the kinds), and the calls through
 * each shape; the argument checks made before a call are ops_checks.c's. */
#include "ops.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const op_row tgpy_op_rows[] = {
    /* elementwise binary, broadcasting */
    {"add", "input:T other:T alpha:f=1", C_TT, F(tg_add), true},
    {"sub", "input:T other:T alpha:f=1", C_TT, F(tg_sub), true},
    {"subtract", "input:T other:T alpha:f=1", C_TT, F(tg_sub), true},
    {"mul", "input:T other:T", C_TT, F(tg_mul), true},
    {"multiply", "input:T other:T", C_TT, F(tg_mul), true},
    {"div", "input:T other:T", C_TT, F(tg_div), true},
    {"divide", "input:T other:T", C_TT, F(tg_div), true},
    {"true_divide", "input:T other:T", C_TT, F(tg_div), true},
    {"pow", "input:T exponent:T", C_TT, F(tg_pow), true},
    {"maximum", "input:T other:T", C_TT, F(tg_maximum), true},
    {"minimum", "input:T other:T", C_TT, F(tg_minimum), true},
    {"fmod", "input:T other:T", C_TT, F(tg_fmod), true},
    {"remainder", "input:T other:T", C_TT, F(tg_remainder), true},
    {"floor_divide", "input:T other:T", C_TT, F(tg_floor_divide), false},
    {"_trunc_divide", "input:T other:T", C_TT, F(tg_trunc_divide), false},
    {"eq", "input:T other:T", C_TT, F(tg_eq), true},
    {"ne", "input:T other:T", C_TT, F(tg_ne), true},
    {"lt", "input:T other:T", C_TT, F(tg_lt), true},
    {"le", "input:T other:T", C_TT, F(tg_le), true},
    {"gt", "input:T other:T", C_TT, F(tg_gt), true},
    {"ge", "input:T other:T", C_TT, F(tg_ge), true},
    {"logical_and", "input:T other:T", C_TT, F(tg_logical_and), true},
    {"logical_or", "input:T other:T", C_TT, F(tg_logical_or), true},
    {"logical_xor", "input:T other:T", C_TT, F(tg_logical_xor), true},
    {"where", "condition:T input:T other:T", C_TTT, F(tg_where), false},
    /* elementwise unary */
    {"neg", "input:T", C_T, F(tg_neg), true},
    {"negative", "input:T", C_T, F(tg_neg), true},
    {"abs", "input:T", C_T, F(tg_abs), true},
    {"exp", "input:T", C_T, F(tg_exp), true},
    {"log", "input:T", C_T, F(tg_log), true},
    {"sqrt", "input:T", C_T, F(tg_sqrt), true},
    {"rsqrt", "input:T", C_T, F(tg_rsqrt), true},
    {"sin", "input:T", C_T, F(tg_sin), true},
    {"cos", "input:T", C_T, F(tg_cos), true},
    {"tanh", "input:T", C_T, F(tg_tanh), true},
    {"sigmoid", "input:T", C_T, F(tg_sigmoid), true},
    {"relu", "input:T", C_T, F(tg_relu), true},
    {"gelu", "input:T", C_T, F(tg_gelu), false},
    {"_gelu_tanh", "input:T", C_T, F(tg_gelu_tanh), false},
    {"erf", "input:T", C_T, F(tg_erf), true},
    {"softplus", "input:T", C_T, F(tg_softplus), false},
    {"hardswish", "input:T", C_T, F(tg_hardswish), false},
    {"selu", "input:T", C_T, F(tg_selu), false},
    {"_hardsigmoid", "input:T alpha:f beta:f", C_TDD, F(tg_hardsigmoid), false},
    {"floor", "input:T", C_T, F(tg_floor), true},
    {"ceil", "input:T", C_T, F(tg_ceil), true},
    {"round", "input:T", C_T, F(tg_round), true},
    {"sign", "input:T", C_T, F(tg_sign), true},
    {"logical_not", "input:T", C_T, F(tg_logical_not), true},
    {"leaky_relu", "input:T negative_slope:f=0.01", C_TD, F(tg_leaky_relu), false},
    {"elu", "input:T alpha:f=1.0", C_TD, F(tg_elu), false},
    {"clamp", "input:T min:d=None max:d=None", C_TDD, F(tg_clamp), true},
    {"clip", "input:T min:d=None max:d=None", C_TDD, F(tg_clamp), true},
    {"tan", "input:T", C_T, F(tg_tan), true},
    {"asin", "input:T", C_T, F(tg_asin), true},
    {"arcsin", "input:T", C_T, F(tg_asin), true},
    {"acos", "input:T", C_T, F(tg_acos), true},
    {"arccos", "input:T", C_T, F(tg_acos), true},
    {"atan", "input:T", C_T, F(tg_atan), true},
    {"arctan", "input:T", C_T, F(tg_atan), true},
    {"sinh", "input:T", C_T, F(tg_sinh), true},
    {"cosh", "input:T", C_T, F(tg_cosh), true},
    {"asinh", "input:T", C_T, F(tg_asinh), true},
    {"arcsinh", "input:T", C_T, F(tg_asinh), true},
    {"acosh", "input:T", C_T, F(tg_acosh), true},
    {"arccosh", "input:T", C_T, F(tg_acosh), true},
    {"atanh", "input:T", C_T, F(tg_atanh), true},
    {"arctanh", "input:T", C_T, F(tg_atanh), true},
    {"expm1", "input:T", C_T, F(tg_expm1), true},
    {"log1p", "input:T", C_T, F(tg_log1p), true},
    {"log2", "input:T", C_T, F(tg_log2), true},
    {"log10", "input:T", C_T, F(tg_log10), true},
    {"reciprocal", "input:T", C_T, F(tg_reciprocal), true},
    {"square", "input:T", C_T, F(tg_square), true},
    /* torch.nn.functional's activations (nn/functional_act.py adds inplace=) */
    {"softsign", "input:T", C_T, F(tg_softsign), false},
    {"silu", "input:T", C_T, F(tg_silu), false},
    {"mish", "input:T", C_T, F(tg_mish), false},
    {"logsigmoid", "input:T", C_T, F(tg_logsigmoid), false},
    {"celu", "input:T alpha:f=1.0", C_TD, F(tg_celu), false},
    {"hardtanh", "input:T min_val:f=-1.0 max_val:f=1.0", C_TDD, F(tg_hardtanh), false},
    {"relu6", "input:T", C_T, F(tg_relu6), false},
    {"softshrink", "input:T lambd:f=0.5", C_TD, F(tg_softshrink), false},
    {"hardshrink", "input:T lambd:f=0.5", C_TD, F(tg_hardshrink), true},
    {"threshold", "input:T threshold:f value:f", C_TDD, F(tg_threshold), false},
    {"_cast", "input:T dtype:D", C_CAST, F(tg_cast), false},
    /* reductions */
    {"sum", "input:T dim:A=None keepdim:b=False dtype:D=None", C_TAB, F(tg_sum), true},
    {"mean", "input:T dim:A=None keepdim:b=False dtype:D=None", C_TAB, F(tg_mean), true},
    {"prod", "input:T dim:A=None keepdim:b=False dtype:D=None", C_TAB, F(tg_prod), true},
    {"amax", "input:T dim:A=None keepdim:b=False", C_TAB, F(tg_max), true},
    {"amin", "input:T dim:A=None keepdim:b=False", C_TAB, F(tg_min), true},
    {"logsumexp", "input:T dim:A keepdim:b=False", C_TAB, F(tg_logsumexp), true},
    {"var", "input:T dim:A=None unbiased:b=True keepdim:b=False correction:d=None", C_VAR,
     F(tg_var), true},
    {"std", "input:T dim:A=None unbiased:b=True keepdim:b=False correction:d=None", C_VAR,
     F(tg_std), true},
    {"cumsum", "input:T dim:i dtype:D=None", C_CUMSUM, F(tg_cumsum), true},
    {"_vector_norm", "input:T ord:f=2 dim:A=None keepdim:b=False", C_NORM, F(tg_vector_norm),
     false},
    {"argmax", "input:T dim:j=None keepdim:b=False", C_ARG, F(tg_argmax), true},
    {"argmin", "input:T dim:j=None keepdim:b=False", C_ARG, F(tg_argmin), true},
    /* views and copies */
    {"view", "input:T shape:S", C_TS, F(tg_view), true},
    {"reshape", "input:T shape:S", C_TS, F(tg_reshape), true},
    {"expand", "input:T size:S", C_TS, F(tg_expand), true},
    {"tile", "input:T dims:S", C_TS, F(tg_tile), true},
    {"permute", "input:T dims:S", C_TP, F(tg_permute), true},
    {"transpose", "input:T dim0:i dim1:i", C_TII, F(tg_transpose), true},
    {"swapaxes", "input:T axis0:i axis1:i", C_TII, F(tg_transpose), true},
    {"flatten", "input:T start_dim:i=0 end_dim:i=-1", C_TII, F(tg_flatten), true},
    {"squeeze", "input:T dim:j=None", C_SQUEEZE, F(tg_squeeze), true},
    {"unsqueeze", "input:T dim:i", C_TI, F(tg_unsqueeze), true},
    {"contiguous", "input:T", C_T, F(tg_contiguous), true},
    {"sum_to_size", "input:T size:S", C_TS, F(tg_sum_to), true},
    {"clone", "input:T", C_T, F(tg_clone), true},
    /* linear algebra and networks */
    {"matmul", "input:T other:T", C_TT, F(tg_matmul), true},
    {"mm", "input:T mat2:T", C_TT, F(tg_matmul), true},
    {"bmm", "input:T mat2:T", C_TT, F(tg_matmul), true},
    {"addmm", "input:T mat1:T mat2:T beta:f=1 alpha:f=1", C_ADDMM, F(tg_gemm), true},
    {"linear", "input:T weight:T bias:O=None", C_TTO, F(tg_linear), false},
    {"conv2d", "input:T weight:T bias:O=None stride:P=1 padding:P=0 dilation:P=1 groups:i=1",
     C_CONV, F(tg_conv2d), false},
    {"conv_transpose2d", "input:T weight:T bias:O=None stride:P=1 padding:P=0 "
     "output_padding:P=0 groups:i=1 dilation:P=1", C_CONVT, F(tg_conv_transpose2d), false},
    {"max_pool2d", "input:T kernel_size:P stride:p=None padding:P=0 dilation:P=1 "
     "ceil_mode:b=False return_indices:b=False", C_POOL, F(tg_max_pool2d), false},
    {"avg_pool2d", "input:T kernel_size:P stride:p=None padding:P=0 ceil_mode:b=False "
     "count_include_pad:b=True divisor_override:d=None", C_POOL, F(tg_avg_pool2d), false},
    {"_global_avg_pool2d", "input:T", C_T, F(tg_global_avg_pool2d), false},
    {"_grad_tie", "input:T", C_T, F(tg_grad_tie), false},
    {"conv1d", "input:T weight:T bias:O=None stride:U=1 padding:U=0 dilation:U=1 groups:i=1",
     C_CONV1, F(tg_conv1d), false},
    {"conv_transpose1d", "input:T weight:T bias:O=None stride:U=1 padding:U=0 "
     "output_padding:U=0 groups:i=1 dilation:U=1", C_CONVT1, F(tg_conv_transpose1d), false},
    {"max_pool1d", "input:T kernel_size:U stride:u=None padding:U=0 dilation:U=1 "
     "ceil_mode:b=False return_indices:b=False", C_POOL1, F(tg_max_pool1d), false},
    {"avg_pool1d", "input:T kernel_size:U stride:u=None padding:U=0 ceil_mode:b=False "
     "count_include_pad:b=True", C_POOL1, F(tg_avg_pool1d), false},
    {"conv3d", "input:T weight:T bias:O=None stride:Q=1 padding:Q=0 dilation:Q=1 groups:i=1",
     C_CONV3, F(tg_conv3d), false},
    {"conv_transpose3d", "input:T weight:T bias:O=None stride:Q=1 padding:Q=0 "
     "output_padding:Q=0 groups:i=1 dilation:Q=1", C_CONVT3, F(tg_conv_transpose3d), false},
    {"max_pool3d", "input:T kernel_size:Q stride:q=None padding:Q=0 dilation:Q=1 "
     "ceil_mode:b=False return_indices:b=False", C_POOL3, F(tg_max_pool3d), false},
    {"avg_pool3d", "input:T kernel_size:Q stride:q=None padding:Q=0 ceil_mode:b=False "
     "count_include_pad:b=True divisor_override:d=None", C_POOL3, F(tg_avg_pool3d), false},
    {"batch_norm", "input:T running_mean:O running_var:O weight:O=None bias:O=None "
     "training:b=False momentum:f=0.1 eps:f=1e-05", C_BN, F(tg_batch_norm), false},
    {"layer_norm", "input:T normalized_shape:S weight:O=None bias:O=None eps:f=1e-05", C_LN,
     F(tg_layer_norm), false},
    {"_instance_norm", "input:T weight:O=None bias:O=None eps:f=1e-05", C_INORM,
     F(tg_instance_norm), false},
    {"group_norm", "input:T num_groups:i weight:O=None bias:O=None eps:f=1e-05", C_GNORM,
     F(tg_group_norm), false},
    /* mode: a tg_interp_mode; nn.functional.interpolate maps PyTorch's names */
    {"_interpolate", "input:T size:A=None scale_factor:F=None mode:i=0 align_corners:b=False",
     C_INTERP, F(tg_interpolate), false},
    {"_einsum", "equation:s operands:L", C_EINSUM, F(tg_einsum), false},
    {"dropout", "input:T p:f=0.5 training:b=True inplace:b=False generator:G=None", C_DROP,
     F(tg_dropout), false},
    {"softmax", "input:T dim:i", C_TI, F(tg_softmax), true},
    {"log_softmax", "input:T dim:i", C_TI, F(tg_log_softmax), true},
    {"embedding", "input:T weight:T", C_EMB, F(tg_embedding), false},
    /* losses */
    {"mse_loss", "input:T target:T reduction:R=mean", C_TTR, F(tg_mse_loss), false},
    {"cross_entropy", "input:T target:T weight:O=None size_average:O=None ignore_index:l=-100 "
     "reduce:O=None reduction:R=mean label_smoothing:f=0", C_NLL, F(tg_cross_entropy), false},
    {"nll_loss", "input:T target:T weight:O=None size_average:O=None ignore_index:l=-100 "
     "reduce:O=None reduction:R=mean", C_NLL, F(tg_nll_loss), false},
    {"binary_cross_entropy_with_logits", "input:T target:T reduction:R=mean", C_TTR,
     F(tg_bce_with_logits), false},
    /* array ops */
    {"cat", "tensors:L dim:i=0", C_LIST, F(tg_concat), false},
    {"concat", "tensors:L dim:i=0", C_LIST, F(tg_concat), false},
    {"stack", "tensors:L dim:i=0", C_LIST, F(tg_stack), false},
    {"gather", "input:T dim:i index:T", C_TIT, F(tg_gather), true},
    {"index_select", "input:T dim:i index:T", C_TIT, F(tg_index_select), true},
    {"_scatter", "input:T dim:i index:T src:T", C_SCATTER, F(tg_scatter), false},
    {"_pad", "input:T pad:W value:f=0 mode:i=0", C_PAD, F(tg_pad), false},
    {"_one_hot", "input:T num_classes:l", C_ONEHOT, F(tg_one_hot), false},
    /* masks (Tensor methods and their in-place forms: _tensor_extra.py) */
    {"_diagonal", "input:T offset:l=0 dim1:i=0 dim2:i=1", C_TLII, F(tg_diagonal), false},
    {"_as_strided", "input:T size:S stride:S offset:l=0", C_STRIDED, F(tg_as_strided), false},
    {"_nonzero", "input:T", C_T, F(tg_nonzero), false},
    /* sizes a graph knows when it runs (tg.function: arange over traced values) */
    {"_shape_of", "input:T", C_T, F(tg_shape_of), false},
    {"_range_by", "start:T end:T step:T", C_TTT, F(tg_range_by), false},
    {"_expand_by", "input:T shape:T", C_TT, F(tg_expand_by), false},
    {"_tile_by", "input:T repeats:T", C_TT, F(tg_tile_by), false},
    {"_slice_by", "input:T starts:T ends:T axes:T steps:T", C_SLICE_BY, F(tg_slice_by), false},
    {"tril", "input:T diagonal:l=0", C_TL, F(tg_tril), false},
    {"triu", "input:T diagonal:l=0", C_TL, F(tg_triu), false},
    {"isnan", "input:T", C_T, F(tg_isnan), true},
    {"isinf", "input:T", C_T, F(tg_isinf), true},
    {"isposinf", "input:T", C_T, F(tg_isposinf), true},
    {"isneginf", "input:T", C_T, F(tg_isneginf), true},
    {"isfinite", "input:T", C_T, F(tg_isfinite), true},
    {"prelu", "input:T weight:T", C_TT, F(tg_prelu), true},
    {"pixel_shuffle", "input:T upscale_factor:l", C_TL, F(tg_pixel_shuffle), false},
    {"pixel_unshuffle", "input:T downscale_factor:l", C_TL, F(tg_pixel_unshuffle), false},
};
const int tgpy_n_ops = (int)(sizeof tgpy_op_rows / sizeof tgpy_op_rows[0]);

/* what PyTorch checks that these ops' C functions accept, or report with
 * another exception (ops.h, ROW_*); looked up by name when the ops are made */
const op_checks tgpy_op_checks[] = {
    {"matmul", 0, ROW_SAME_DTYPE},
    {"mm", 2, ROW_SAME_DTYPE},
    {"bmm", 3, ROW_SAME_DTYPE},
    {"addmm", 0, ROW_SAME_DTYPE},
    {"linear", 0, ROW_SAME_DTYPE},
    {"conv1d", 0, ROW_SAME_DTYPE},
    {"conv2d", 0, ROW_SAME_DTYPE},
    {"conv3d", 0, ROW_SAME_DTYPE},
    {"conv_transpose1d", 0, ROW_SAME_DTYPE},
    {"conv_transpose2d", 0, ROW_SAME_DTYPE},
    {"conv_transpose3d", 0, ROW_SAME_DTYPE},
    {"gather", 0, ROW_INDEX_RUNTIME},
    {"_scatter", 0, ROW_INDEX_RUNTIME},
    {"_one_hot", 0, ROW_INDEX_RUNTIME},
};
const int tgpy_n_op_checks = (int)(sizeof tgpy_op_checks / sizeof tgpy_op_checks[0]);

/* PyTorch's grad_fn names where the C function records another op's
 * (tgpy_set_grad_fn_name); GRAD_DIM_GIVEN: `other` when a dim is given,
 * GRAD_COPIED: `other` when the result is a copy (reshape could not view),
 * GRAD_MATMUL: by the operands' ranks (dot, mv, mm, or a batched product),
 * GRAD_TENSOR_ARG: `other` when the second argument is a Tensor (not a
 * number), GRAD_LINEAR: by the input's rank and the bias, GRAD_COPY: `name`
 * for a result made as a view of a temporary, which PyTorch's is not; the
 * matmul and linear results are no views either */
const op_grad_name tgpy_op_grad_names[] = {
    {"transpose", GRAD_ALWAYS, "TransposeBackward0", NULL},
    {"swapaxes", GRAD_ALWAYS, "TransposeBackward0", NULL},
    {"unsqueeze", GRAD_ALWAYS, "UnsqueezeBackward0", NULL},
    {"squeeze", GRAD_DIM_GIVEN, "SqueezeBackward0", "SqueezeBackward1"},
    {"reshape", GRAD_COPIED, "ReshapeAliasBackward0", "UnsafeViewBackward0"},
    {"flatten", GRAD_COPIED, "ReshapeAliasBackward0", "UnsafeViewBackward0"},
    {"sum", GRAD_DIM_GIVEN, "SumBackward0", "SumBackward1"},
    {"mean", GRAD_DIM_GIVEN, "MeanBackward0", "MeanBackward1"},
    {"prod", GRAD_DIM_GIVEN, "ProdBackward0", "ProdBackward1"},
    {"amax", GRAD_ALWAYS, "AmaxBackward0", NULL},
    {"amin", GRAD_ALWAYS, "AminBackward0", NULL},
    {"matmul", GRAD_MATMUL, NULL, NULL},
    {"mm", GRAD_ALWAYS, "MmBackward0", NULL},
    {"bmm", GRAD_ALWAYS, "BmmBackward0", NULL},
    {"addmm", GRAD_ALWAYS, "AddmmBackward0", NULL},
    {"cat", GRAD_ALWAYS, "CatBackward0", NULL},
    {"concat", GRAD_ALWAYS, "CatBackward0", NULL},
    {"stack", GRAD_ALWAYS, "StackBackward0", NULL},
    {"clamp", GRAD_ALWAYS, "ClampBackward1", NULL},
    {"clip", GRAD_ALWAYS, "ClampBackward1", NULL},
    {"tril", GRAD_ALWAYS, "TrilBackward0", NULL},
    {"triu", GRAD_ALWAYS, "TriuBackward0", NULL},
    {"tile", GRAD_ALWAYS, "RepeatBackward0", NULL},
    {"square", GRAD_ALWAYS, "PowBackward0", NULL},
    {"pow", GRAD_TENSOR_ARG, "PowBackward0", "PowBackward1"},
    {"linear", GRAD_LINEAR, NULL, NULL},
    {"mse_loss", GRAD_ALWAYS, "MseLossBackward0", NULL},
    {"cross_entropy", GRAD_ALWAYS, "NllLossBackward0", NULL},
    {"nll_loss", GRAD_ALWAYS, "NllLossBackward0", NULL},
    {"binary_cross_entropy_with_logits", GRAD_ALWAYS, "BinaryCrossEntropyWithLogitsBackward0",
     NULL},
    {"batch_norm", GRAD_ALWAYS, "NativeBatchNormBackward0", NULL},
    {"conv1d", GRAD_COPY, "ConvolutionBackward0", NULL},
    {"conv_transpose1d", GRAD_COPY, "ConvolutionBackward0", NULL},
};
const int tgpy_n_op_grad_names = (int)(sizeof tgpy_op_grad_names / sizeof tgpy_op_grad_names[0]);

/* ---- calling through the C function's shape ------------------------------------- */
static tg_pool2d_opts pool_opts(const argval *v, bool avg)
{
    tg_pool2d_opts o = {{v[1].ints[0], v[1].ints[1]}, {0, 0}, {v[3].ints[0], v[3].ints[1]},
                        false, false};
    if (!v[2].none) {
        o.stride[0] = v[2].ints[0];
        o.stride[1] = v[2].ints[1];
    }
    o.ceil_mode = avg ? v[4].f != 0 : v[5].f != 0;
    o.count_include_pad = avg && v[5].f != 0;
    return o;
}


/* does any label equal `value`? (symbolic labels cannot be read: yes) */
static bool has_label(tg_tensor *labels, int64_t value)
{
    if (tg_is_symbolic(labels))
        return true;
    int64_t n = tg_numel(labels), *buf = malloc((size_t)(n ? n : 1) * sizeof *buf);
    bool found = !buf || tg_copy_to(labels, TG_INT64, buf) != TG_OK;
    for (int64_t i = 0; !found && i < n; i++)
        found = buf[i] == value;
    free(buf);
    return found;
}

/* cross_entropy / nll_loss(input, target, weight, size_average,
 * ignore_index, reduce, reduction[, label_smoothing]): the plain op
 * unless a weight, more than 2 dims or an ignored label need the
 * general one */
/* PyTorch's squeeze(dim): a dim whose size is not 1 leaves the shape as it
 * is (still a view, so autograd and version counters see an alias). The C
 * tg_squeeze keeps its error for that case because ONNX's Squeeze requires
 * it; an out-of-range dim still reaches tg_squeeze for its IndexError. An
 * unknown (graph) size also goes to tg_squeeze, which decides. */
static tg_tensor *squeeze_dim(tg_tensor *x, int dim)
{
    int nd = tg_ndim(x);
    int d = dim < 0 ? dim + (nd ? nd : 1) : dim;
    if (nd > 0 && d >= 0 && d < nd && tg_shape(x)[d] >= 0 && tg_shape(x)[d] != 1)
        return tg_view(x, nd, tg_shape(x));
    return tg_squeeze(x, dim);
}

static tg_tensor *nll(any_fn f, const argval *v)
{
    tg_nll_opts o = {v[2].t, true, v[4].i, v[6].red};
    bool ce = (fn_ttr)f == tg_cross_entropy;
    if (!o.weight && tg_ndim(v[0].t) == 2 && !has_label(v[1].t, o.ignore_index))
        return ((fn_ttr)f)(v[0].t, v[1].t, o.reduction);
    return ce ? tg_cross_entropy_ex(v[0].t, v[1].t, &o) : tg_nll_loss_ex(v[0].t, v[1].t, &o);
}

/* the dtype tgpy_binary(fn, a, b) gives (PyTorch's promotion, 0-d
 * operands included), read off one-element stand-ins */
static int binary_result_dtype(binary_fn fn, tg_tensor *a, tg_tensor *b, tg_dtype *out)
{
    static const int64_t one = 1;
    tg_tensor *sa = tg_zeros(tg_dtype_of(a), tg_ndim(a) ? 1 : 0, &one);
    tg_tensor *sb = tg_zeros(tg_dtype_of(b), tg_ndim(b) ? 1 : 0, &one);
    tg_tensor *r = sa && sb ? tgpy_binary(fn, sa, sb) : NULL;
    if (r)
        *out = tg_dtype_of(r);
    tg_release(sa);
    tg_release(sb);
    tg_release(r);
    return r ? 0 : -1;
}

/* a binary op with PyTorch's rules (tgpy_binary); add and sub scale
 * other by their alpha first, in the result's dtype when that is a float
 * one (PyTorch's input + alpha * other computed there: alpha 0.5 times an
 * integer other next to a float input is not truncated, nor a float32
 * other next to a float64 input rounded in float32) */
static tg_tensor *call_tt(const OpObject *op, argval *v, any_fn f)
{
    if (op->n_params < 3 || v[2].f == 1)
        return tgpy_binary((binary_fn)f, v[0].t, v[1].t);
    tg_dtype dt = tg_dtype_of(v[1].t), rt;
    if (binary_result_dtype((binary_fn)f, v[0].t, v[1].t, &rt) < 0)
        return NULL;
    if (tg_dtype_is_float(rt) && rt != dt) {
        tg_tensor *other = tg_cast(v[1].t, rt);
        if (!other)
            return NULL;
        argval w[3] = {v[0], v[1], v[2]};
        w[1].t = other;
        tg_tensor *y = call_tt(op, w, f);
        tg_release(other);
        return y;
    }
    tg_tensor *k = tg_scalar(tg_dtype_is_float(dt) ? dt : TG_INT64, v[2].f);
    tg_tensor *scaled = k ? tgpy_binary(tg_mul, v[1].t, k) : NULL;
    tg_tensor *y = scaled ? tgpy_binary((binary_fn)f, v[0].t, scaled) : NULL;
    tg_release(k);
    tg_release(scaled);
    return y;
}

/* where(cond, a, b): a 0-d float64 value next to a dimensioned integer or
 * bool one gives float64, as PyTorch (the C op ranks every 0-d operand as
 * a Python number, in the default float32), like tgpy_binary */
static tg_tensor *call_ttt(argval *v, any_fn f)
{
    tg_tensor *a = v[1].t, *b = v[2].t;
    if ((fn_ttt)f == tg_where && tg_dtype_of(a) != tg_dtype_of(b) &&
        (tg_ndim(a) == 0) != (tg_ndim(b) == 0)) {
        tg_tensor *zero = tg_ndim(a) == 0 ? a : b, *dim = zero == a ? b : a;
        if (tg_dtype_of(zero) == TG_FLOAT64 && !tg_dtype_is_float(tg_dtype_of(dim))) {
            tg_tensor *c = tg_cast(dim, TG_FLOAT64);
            tg_tensor *y = c ? tg_where(v[0].t, zero == a ? a : c, zero == b ? b : c) : NULL;
            tg_release(c);
            return y;
        }
    }
    return ((fn_ttt)f)(v[0].t, a, b);
}

/* a reduction over dims: sum, mean and prod's dtype casts the input first
 * and keeps the result in it, as PyTorch; amax / amin of bools reduce in
 * uint8 and give bools */
static tg_tensor *call_tab(const OpObject *op, argval *v, any_fn f)
{
    bool bool_extremum = ((fn_tab)f == tg_max || (fn_tab)f == tg_min) &&
                         tg_dtype_of(v[0].t) == TG_BOOL;
    bool cast = (op->n_params > 3 && !v[3].none) || bool_extremum;
    tg_dtype to = bool_extremum ? TG_BOOL : cast ? v[3].dt : tg_dtype_of(v[0].t);
    tg_tensor *x = !cast ? v[0].t : tg_cast(v[0].t, bool_extremum ? TG_UINT8 : to);
    tg_tensor *y = x ? ((fn_tab)f)(x, v[1].n, v[1].ints, v[2].f != 0) : NULL;
    if (cast)
        tg_release(x);
    if (cast && y && tg_dtype_of(y) != to) { /* an int sum is int64 otherwise */
        tg_tensor *c = tg_cast(y, to);
        tg_release(y);
        y = c;
    }
    return y;
}

tg_tensor *tgpy_op_invoke(const OpObject *op, argval *v)
{
    any_fn f = op->row->fn;
    switch (op->row->call) {
    case C_T: /* PyTorch: the sign of a bool is itself (the C op has no bool rows) */
        if ((fn_t)f == tg_sign && tg_dtype_of(v[0].t) == TG_BOOL)
            return tg_clone(v[0].t);
        return ((fn_t)f)(v[0].t);
    case C_TT: return call_tt(op, v, f);
    case C_TTT: return call_ttt(v, f);
    case C_TD: return ((fn_td)f)(v[0].t, v[1].f);
    case C_TDD: {
        double lo = v[1].none ? -INFINITY : v[1].f, hi = v[2].none ? INFINITY : v[2].f;
        return ((fn_tdd)f)(v[0].t, lo, hi);
    }
    case C_TI: return ((fn_ti)f)(v[0].t, (int)v[1].f);
    case C_TII: return ((fn_tii)f)(v[0].t, (int)v[1].f, (int)v[2].f);
    case C_TL: return ((fn_tl)f)(v[0].t, v[1].i);
    case C_TLII: return ((fn_tlii)f)(v[0].t, v[1].i, (int)v[2].i, (int)v[3].i);
    case C_STRIDED: /* as many strides as sizes (else -1 dims: the C error) */
        return ((fn_strided)f)(v[0].t, v[1].n == v[2].n ? v[1].n : -1, v[1].shape, v[2].shape,
                               v[3].i);
    case C_SCATTER: return tg_scatter(v[0].t, (int)v[1].f, v[2].t, v[3].t);
    case C_SLICE_BY: return tg_slice_by(v[0].t, v[1].t, v[2].t, v[3].t, v[4].t);
    case C_TAB: return call_tab(op, v, f);
    case C_VAR: {
        int corr = v[4].none ? (v[2].f != 0) : (int)v[4].f;
        return ((fn_var)f)(v[0].t, v[1].n, v[1].ints, corr, v[3].f != 0);
    }
    case C_ARG:
        if (v[1].none) { /* over all elements: of the flattened tensor */
            tg_tensor *flat = tg_reshape(v[0].t, 1, (int64_t[]){-1});
            tg_tensor *r = ((fn_arg)f)(flat, 0, false);
            tg_release(flat);
            if (r && v[2].f != 0) {
                int64_t ones[TG_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
                tg_tensor *k = tg_reshape(r, tg_ndim(v[0].t), ones);
                tg_release(r);
                r = k;
            }
            return r;
        }
        if (tg_dtype_of(v[0].t) == TG_BOOL) { /* checked: a dim of 1 or nothing to do */
            tg_tensor *u = tg_cast(v[0].t, TG_UINT8);
            tg_tensor *r = u ? ((fn_arg)f)(u, (int)v[1].f, v[2].f != 0) : NULL;
            tg_release(u);
            return r;
        }
        return ((fn_arg)f)(v[0].t, (int)v[1].f, v[2].f != 0);
    case C_TS: return ((fn_ts)f)(v[0].t, v[1].n, v[1].shape);
    case C_TP: { /* checked by check_permutation; negative dims count from the end */
        int perm[TG_MAX_DIMS], nd = v[1].n;
        for (int i = 0; i < nd; i++)
            perm[i] = (int)(v[1].shape[i] < 0 ? v[1].shape[i] + nd : v[1].shape[i]);
        return ((fn_tp)f)(v[0].t, perm);
    }
    case C_TTR: return ((fn_ttr)f)(v[0].t, v[1].t, v[2].red);
    case C_TTO: return ((fn_ttt)f)(v[0].t, v[1].t, v[2].t);
    case C_CAST: return ((fn_cast)f)(v[0].t, v[1].dt);
    case C_CONV: {
        tg_conv2d_opts o = {{v[3].ints[0], v[3].ints[1]}, {v[4].ints[0], v[4].ints[1]},
                            {v[5].ints[0], v[5].ints[1]}, (int)v[6].f};
        return tg_conv2d(v[0].t, v[1].t, v[2].t, &o);
    }
    case C_CONVT: {
        tg_conv_transpose2d_opts o = {{v[3].ints[0], v[3].ints[1]}, {v[4].ints[0], v[4].ints[1]},
                                      {v[5].ints[0], v[5].ints[1]},
                                      {v[7].ints[0], v[7].ints[1]}, (int)v[6].f};
        return tg_conv_transpose2d(v[0].t, v[1].t, v[2].t, &o);
    }
    case C_POOL: {
        bool avg = (fn_pool)f == tg_avg_pool2d;
        tg_pool2d_opts o = pool_opts(v, avg);
        return ((fn_pool)f)(v[0].t, &o);
    }
    case C_CONV1: {
        tg_conv1d_opts o = {v[3].ints[0], v[4].ints[0], v[5].ints[0], (int)v[6].f};
        return tg_conv1d(v[0].t, v[1].t, v[2].t, &o);
    }
    case C_CONVT1: {
        tg_conv_transpose1d_opts o = {v[3].ints[0], v[4].ints[0], v[5].ints[0], v[7].ints[0],
                                      (int)v[6].f};
        return tg_conv_transpose1d(v[0].t, v[1].t, v[2].t, &o);
    }
    case C_CONV3: {
        tg_conv3d_opts o = {{v[3].ints[0], v[3].ints[1], v[3].ints[2]},
                            {v[4].ints[0], v[4].ints[1], v[4].ints[2]},
                            {v[5].ints[0], v[5].ints[1], v[5].ints[2]}, (int)v[6].f};
        return tg_conv3d(v[0].t, v[1].t, v[2].t, &o);
    }
    case C_CONVT3: {
        tg_conv_transpose3d_opts o = {{v[3].ints[0], v[3].ints[1], v[3].ints[2]},
                                      {v[4].ints[0], v[4].ints[1], v[4].ints[2]},
                                      {v[5].ints[0], v[5].ints[1], v[5].ints[2]},
                                      {v[7].ints[0], v[7].ints[1], v[7].ints[2]}, (int)v[6].f};
        return tg_conv_transpose3d(v[0].t, v[1].t, v[2].t, &o);
    }
    case C_POOL3: {
        bool avg = f == F(tg_avg_pool3d);
        tg_pool3d_opts o = {{v[1].ints[0], v[1].ints[1], v[1].ints[2]}, {0, 0, 0},
                            {v[3].ints[0], v[3].ints[1], v[3].ints[2]},
                            avg ? v[4].f != 0 : v[5].f != 0, avg && v[5].f != 0};
        if (!v[2].none)
            for (int i = 0; i < 3; i++)
                o.stride[i] = v[2].ints[i];
        return ((fn_pool3)f)(v[0].t, &o);
    }
    case C_POOL1: {
        bool avg = f == F(tg_avg_pool1d);
        tg_pool1d_opts o = {v[1].ints[0], v[2].none ? 0 : v[2].ints[0], v[3].ints[0],
                            avg ? v[4].f != 0 : v[5].f != 0, avg && v[5].f != 0};
        return ((fn_pool1)f)(v[0].t, &o);
    }
    case C_BN:
        return tg_batch_norm(v[0].t, v[1].t, v[2].t, v[3].t, v[4].t, v[5].f != 0, v[6].f,
                             v[7].f);
    case C_LN: return tg_layer_norm(v[0].t, v[1].n, v[2].t, v[3].t, v[4].f);
    case C_DROP: return tg_dropout(v[0].t, v[1].f, v[2].f != 0, v[4].g);
    case C_EMB: return tg_embedding(v[1].t, v[0].t);
    case C_LIST: return ((fn_list)f)(v[0].n, v[0].list, (int)v[1].f);
    case C_TIT: return ((fn_tit)f)(v[0].t, (int)v[1].f, v[2].t);
    case C_PAD: /* mode: tg_pad_mode */
        return v[3].f == 0 ? tg_pad(v[0].t, v[1].n, v[1].shape, v[2].f)
                           : tg_pad_ex(v[0].t, v[1].n, v[1].shape, (tg_pad_mode)v[3].f, v[2].f);
    case C_ONEHOT: return tg_one_hot(v[0].t, v[1].i);
    case C_SQUEEZE: return v[1].none ? tg_squeeze_all(v[0].t) : squeeze_dim(v[0].t, (int)v[1].f);
    case C_NLL: return nll(f, v);
    case C_ADDMM: return tg_gemm(v[1].t, v[2].t, v[0].t, v[4].f, v[3].f, false, false);
    case C_NORM: return tg_vector_norm(v[0].t, (int)v[1].f, v[2].n, v[2].ints, v[3].f != 0);
    case C_INORM: return tg_instance_norm(v[0].t, v[1].t, v[2].t, v[3].f);
    case C_GNORM: return tg_group_norm(v[0].t, (int)v[1].f, v[2].t, v[3].t, v[4].f);
    case C_INTERP: {
        int64_t size[TG_MAX_DIMS];
        for (int i = 0; i < v[1].n; i++)
            size[i] = v[1].ints[i];
        int n = v[1].none ? v[2].n : v[1].n;
        return tg_interpolate(v[0].t, n, v[1].none ? NULL : size,
                              v[2].none ? NULL : v[2].floats, (tg_interp_mode)v[3].f,
                              v[4].f != 0);
    }
    case C_EINSUM: return tg_einsum(v[0].str, v[1].n, v[1].list);
    case C_CUMSUM: { /* torch.cumsum(input, dim, dtype=None): input cast to dtype first */
        tg_tensor *x = v[2].none ? v[0].t : tg_cast(v[0].t, v[2].dt);
        tg_tensor *y = tg_cumsum(x, (int)v[1].f, false, false);
        if (x != v[0].t)
            tg_release(x);
        if (y && !v[2].none && tg_dtype_of(y) != v[2].dt) { /* integers sum in int64 */
            tg_tensor *c = tg_cast(y, v[2].dt);
            tg_release(y);
            y = c;
        }
        return y;
    }
    }
    return NULL;
}

