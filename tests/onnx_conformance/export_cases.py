#!/usr/bin/env python3
"""Dumps ONNX's node test cases (onnx.backend.test.case.node) for the ops
tensorgraph imports into OUT_DIR, one directory per case in ONNX's backend
test layout: model.onnx and test_data_set_0/{input,output}_N.pb
(TensorProtos; SequenceProtos and OptionalProtos for inputs and outputs
the model declares as sequences or optionals). OUT_DIR/cases.txt lists "name op_type kind" per line
(kind: node, expanded for a function op's expansion whose ops are all on
the list, older for a node case re-expressed at an older opset by
older_opsets.py, named NAME_opsetN, or model for one of ONNX's "simple"
model cases whose ops are all on the list). tests/onnx_conformance/runner.c runs them.

    python3 export_cases.py OUT_DIR

Exits 77 (CTest's skip code) when the onnx package is not available."""
import os
import sys

try:
    import numpy as np
    # Debian's onnx 1.12 still uses aliases that numpy 1.24 removed
    for _alias, _type in (("float", float), ("int", int), ("bool", bool),
                          ("object", object)):
        if _alias not in np.__dict__:
            setattr(np, _alias, _type)
    import onnx  # noqa: E402
    from onnx import numpy_helper  # noqa: E402
    from onnx.backend.test.case import node as node_cases  # noqa: E402
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import older_opsets  # noqa: E402
except Exception as e:  # pragma: no cover - depends on the machine
    print("SKIP: python3 onnx is not available (%s)" % e)
    sys.exit(77)

OPS = """Abs Add And ArgMax ArgMin AveragePool BatchNormalization Cast Ceil Clip
Concat Constant ConstantOfShape Conv Cos Div Dropout Elu Equal Erf Exp Expand
Flatten Floor Gather GatherElements Gemm GlobalAveragePool Greater GreaterOrEqual HardSwish Identity
LayerNormalization LeakyRelu Less LessOrEqual Log LogSoftmax MatMul Max MaxPool
Mean Min Mul Neg Not Or Pad Pow Reciprocal ReduceLogSumExp ReduceMax ReduceMean
ReduceMin ReduceProd ReduceSum Relu Reshape Round Shape Sigmoid Sign Sin Slice
Softmax Softplus Split Sqrt Squeeze Sub Sum Tanh Tile Transpose Unsqueeze Where
Xor SoftmaxCrossEntropyLoss NegativeLogLikelihoodLoss HardSigmoid Selu ConvTranspose
LSTM GRU RNN
InstanceNormalization Resize Einsum Mod CumSum
QuantizeLinear DequantizeLinear DynamicQuantizeLinear MatMulInteger ConvInteger QLinearMatMul QLinearConv
Range ReduceL1 ReduceL2 TopK Trilu IsNaN IsInf CastLike ReduceSumSquare ReduceLogSum
BitShift ReverseSequence Compress NonZero Unique Det MaxUnpool GridSample RoiAlign
NonMaxSuppression HannWindow HammingWindow BlackmanWindow DFT MelWeightMatrix STFT
RandomUniform RandomNormal RandomUniformLike RandomNormalLike Bernoulli Multinomial
Hardmax GlobalMaxPool PRelu Size EyeLike MeanVarianceNormalization DepthToSpace SpaceToDepth
Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Softsign Celu Shrink ThresholdedRelu
LpPool GlobalLpPool LpNormalization
ScatterElements GatherND OneHot Upsample Scatter If Loop Scan LRN ScatterND
TfIdfVectorizer Adagrad Adam Momentum
SequenceConstruct SequenceEmpty SequenceLength SequenceAt SequenceInsert SequenceErase
SplitToSequence ConcatFromSequence SequenceMap Optional OptionalHasElement OptionalGetElement""".split()


def tensor_proto(value, name, elem_type, kind="tensor_type"):
    """the value's TensorProto, or for a declared sequence or optional its
    SequenceProto or OptionalProto; None for other values (maps)"""
    if kind == "sequence_type" and isinstance(value, list):
        return numpy_helper.from_list([np.asarray(v) for v in value], name)
    if kind == "optional_type":
        if isinstance(value, list):
            value = [np.asarray(v) for v in value]
        elif value is not None:
            value = np.asarray(value)
        return numpy_helper.from_optional(value, name)
    if not isinstance(value, (np.ndarray, np.generic)):  # numpy scalars too
        return None
    tp = numpy_helper.from_array(np.asarray(value), name)
    # numpy has no bfloat16: the cases hold its bits as uint16
    if elem_type == onnx.TensorProto.BFLOAT16 and tp.data_type == onnx.TensorProto.UINT16:
        tp.data_type = onnx.TensorProto.BFLOAT16
    return tp


def write_case(out, name, model, inputs, outputs):
    """the case's directory; False when a value is not a tensor"""
    graph = model.graph
    d = os.path.join(out, name)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    tensors = True
    for kind, values, infos in (("input", inputs, graph.input),
                                ("output", outputs, graph.output)):
        for i, v in enumerate(values):
            info = infos[i] if i < len(infos) else None
            tp = tensor_proto(v, info.name if info else "",
                              info.type.tensor_type.elem_type if info else 0,
                              info.type.WhichOneof("value") if info else "tensor_type")
            if tp is None:
                tensors = False
                continue
            with open(os.path.join(ds, "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(tp.SerializeToString())
    return tensors


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = node_cases.collect_testcases(None)
    # the op each test is about (expanded tests: their unexpanded twin's)
    op_of = {tc.name: tc.model.graph.node[0].op_type for tc in cases
             if not tc.name.endswith("_expanded")}
    lines = []
    for tc in cases:
        graph = tc.model.graph
        expanded = tc.name.endswith("_expanded")
        op = op_of.get(tc.name[:-len("_expanded")] if expanded else tc.name, "?")
        if expanded:
            if not set(n.op_type for n in graph.node) <= set(OPS):
                continue
        elif op not in OPS:
            continue
        inputs, outputs = tc.data_sets[0]
        tensors = write_case(out, tc.name, tc.model, inputs, outputs)
        lines.append("%s %s %s%s" % (tc.name, op, "expanded" if expanded else "node",
                                     "" if tensors else " nontensor"))
        # sequence and optional cases are not re-expressed at older opsets
        plain = all(isinstance(v, (np.ndarray, np.generic)) for v in list(inputs) + list(outputs))
        if expanded or not tensors or not plain:
            continue
        for suffix, model, ins in older_opsets.variants(tc.model, inputs):
            write_case(out, tc.name + suffix, model, ins, outputs)
            lines.append("%s %s older" % (tc.name + suffix, op))
    # the "simple" model cases (onnx.backend.test.case.model) whose ops
    # are all imported; the "real" ones are downloads, not run here
    from onnx.backend.test.case import model as model_cases
    for tc in model_cases.collect_testcases():
        if tc.kind != "simple" or tc.model is None or not tc.data_sets:
            continue
        ops = set(n.op_type for n in tc.model.graph.node)
        if not ops <= set(OPS):
            continue
        inputs, outputs = tc.data_sets[0]
        tensors = write_case(out, tc.name, tc.model, inputs, outputs)
        lines.append("%s %s model%s" % (tc.name, sorted(ops)[0], "" if tensors else " nontensor"))
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(sorted(lines)) + "\n")
    print("%d cases written to %s" % (len(lines), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
