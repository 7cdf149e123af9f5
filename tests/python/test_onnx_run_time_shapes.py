"""ONNX models whose shapes are known only when the graph runs, inside
tg.function: Shape and Size of a NonZero's result (read at run time,
where the -1 standing for the count was once folded in as a value),
Slice bounds computed from them, and Range on an input's value. One
trace serves every input; results and gradients equal eager mode's and
numpy's. Hand-made models: needs the onnx package only."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import onnx_model_file

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper  # noqa: E402


def model(tmp_path, nodes, inputs, outputs, inits=(), name="m", opset=15):
    return onnx_model_file(tmp_path, nodes, inputs, outputs, inits, opset, name)


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def ints(name, values):
    return helper.make_tensor(name, T.INT64, [len(values)], values)


def traced_and_eager(m, inputs):
    """m's outputs for each input tuple, through one tg.function and eagerly"""
    fn = tg.function(lambda *a: m(*a))
    for args in inputs:
        yield fn(*map(tg.tensor, args)), m(*map(tg.tensor, args))
    assert fn.trace_count == 1


def test_shape_and_size_of_a_run_time_length(tmp_path):
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["s"]),
             helper.make_node("Size", ["nz"], ["n"]),
             helper.make_node("Shape", ["nz"], ["s1"], start=1)]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [2, 3])],
                 [vi("s", T.INT64, [2]), vi("n", T.INT64, []), vi("s1", T.INT64, [1])])
    m = tg.onnx.load(path)
    xs = [np.array([[1, 0, 2], [0, 0, 3]], np.float32), np.zeros((2, 3), np.float32),
          np.ones((2, 3), np.float32)]
    for x, (got, eager) in zip(xs, traced_and_eager(m, [(x,) for x in xs])):
        count = int(np.count_nonzero(x))
        for g, e, want in zip(got, eager, ([2, count], 2 * count, [count])):
            np.testing.assert_array_equal(g.numpy(), want)
            np.testing.assert_array_equal(e.numpy(), want)


def test_slice_bounds_computed_in_the_graph(tmp_path):
    """y[k:] where k counts x's positive elements; and the gradient of its
    sum of squares reaches y at the kept positions"""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("NonZero", ["r"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["s"], start=1),
             helper.make_node("Slice", ["y", "s", "end", "axes"], ["z"])]
    inits = [ints("end", [2**63 - 1]), ints("axes", [0])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [4]), vi("y", T.FLOAT, [5, 2])],
                 [vi("z", T.FLOAT, ["k", 2])], inits)
    m = tg.onnx.load(path)

    def loss(x, y):
        return (m(x, y) ** 2).sum()

    fn = tg.function(loss)
    y = np.arange(10, dtype=np.float32).reshape(5, 2)
    for x in ([1, -1, 2, 0], [-1, -1, -1, -1], [3, 3, 3, 3]):
        x = np.array(x, np.float32)
        k = int((x > 0).sum())
        z = tg.function(lambda a, b: m(a, b))(tg.tensor(x), tg.tensor(y)).numpy()
        np.testing.assert_array_equal(z, y[k:])
        want = np.zeros_like(y)
        want[k:] = 2 * y[k:]
        for f in (fn, loss):  # compiled, eager
            yt = tg.tensor(y, requires_grad=True)
            f(tg.tensor(x), yt).backward()
            np.testing.assert_array_equal(yt.grad.numpy(), want)
    assert fn.trace_count == 1


def test_negative_step_on_a_run_time_length(tmp_path):
    """the count dim of NonZero's result reversed by Slice(-1, INT64_MIN, -1):
    the dim sliced is unknown when the graph is built"""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Slice", ["nz", "st", "en", "ax", "sp"], ["z"])]
    inits = [ints("st", [-1]), ints("en", [-2**63]), ints("ax", [1]), ints("sp", [-1])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [6])], [vi("z", T.INT64, [1, "k"])], inits)
    m = tg.onnx.load(path)
    xs = [np.array([0, 1, 0, 2, 3, 0], np.float32), np.array([5, 0, 0, 0, 0, 1], np.float32)]
    for x, (got, eager) in zip(xs, traced_and_eager(m, [(x,) for x in xs])):
        want = np.nonzero(x)[0][::-1][None]
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(eager.numpy(), want)


def test_range_on_an_input_value(tmp_path):
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"])]
    path = model(tmp_path, nodes, [vi("start", T.FLOAT, []), vi("limit", T.FLOAT, []),
                                   vi("delta", T.FLOAT, [])], [vi("r", T.FLOAT, ["n"])])
    m = tg.onnx.load(path)
    cases = [(0.0, 5.0, 1.5), (3.0, -1.0, -0.5), (1.0, 1.0, 1.0)]
    args = [tuple(np.float32(v) for v in c) for c in cases]
    for c, (got, eager) in zip(cases, traced_and_eager(m, args)):
        want = np.arange(*c, dtype=np.float64).astype(np.float32)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(eager.numpy(), want, rtol=1e-6)


def test_reshape_to_a_target_computed_from_a_run_time_shape(tmp_path):
    """Reshape(t, Concat(Shape(t)[0:1], [-1])) on a t whose first dim is a
    NonZero's count: the target keeps that dim in place and infers the
    other, so the MatMul after it sees its known contracted dim when the
    graph is built"""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["t"]),
             helper.make_node("Shape", ["t"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["t", "target"], ["r"]),
             helper.make_node("Cast", ["r"], ["rf"], to=T.FLOAT),
             helper.make_node("MatMul", ["rf", "w"], ["y"])]
    inits = [helper.make_tensor("zero", T.INT64, [], [0]), ints("ax0", [0]),
             ints("minus1", [-1]), helper.make_tensor("w", T.FLOAT, [1, 2], [1.0, 10.0])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [5])], [vi("y", T.FLOAT, ["k", 2])],
                 inits)
    m = tg.onnx.load(path)
    xs = [np.array([0, 1, 0, 2, 3], np.float32), np.array([1, 0, 0, 0, 0], np.float32)]
    for x, (got, eager) in zip(xs, traced_and_eager(m, [(x,) for x in xs])):
        want = np.nonzero(x)[0][:, None].astype(np.float32) @ np.array([[1.0, 10.0]], np.float32)
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(eager.numpy(), want)


def test_if_on_a_shape_known_when_built_takes_its_branch(tmp_path):
    """torch.onnx writes squeeze(1) as If(Shape(x)[1] == 1, Squeeze, Identity),
    whose branches differ in rank: with the dim known when the graph is
    built, the branch taken is built in place"""
    sq = helper.make_graph([helper.make_node("Squeeze", ["x", "ax1"], ["a"])], "then", [],
                           [vi("a", T.FLOAT, None)])
    keep = helper.make_graph([helper.make_node("Identity", ["x"], ["b"])], "else", [],
                             [vi("b", T.FLOAT, None)])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["d"], axis=0),
             helper.make_node("Equal", ["d", "one"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=sq, else_branch=keep)]
    inits = [helper.make_tensor("one", T.INT64, [], [1]), ints("ax1", [1])]
    for shape in ([3, 1], [3, 2]):
        path = model(tmp_path, nodes, [vi("x", T.FLOAT, shape)], [vi("y", T.FLOAT, None)],
                     inits, name=f"if{shape[1]}")
        m = tg.onnx.load(path)
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        want = x[:, 0] if shape[1] == 1 else x
        np.testing.assert_array_equal(tg.function(lambda a: m(a))(tg.tensor(x)).numpy(), want)
        np.testing.assert_array_equal(m(tg.tensor(x)).numpy(), want)


def test_roi_align_over_boxes_selected_when_the_graph_runs(tmp_path):
    """RoiAlign on the boxes whose score passes a threshold: their count R
    is known only when the graph runs"""
    nodes = [helper.make_node("Greater", ["score", "t"], ["keep"]),
             helper.make_node("NonZero", ["keep"], ["nz"]),
             helper.make_node("Squeeze", ["nz", "ax0"], ["idx"]),
             helper.make_node("Gather", ["boxes", "idx"], ["rois"], axis=0),
             helper.make_node("Gather", ["bidx", "idx"], ["bi"], axis=0),
             helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], output_height=2,
                              output_width=2, sampling_ratio=2, spatial_scale=0.5)]
    inits = [helper.make_tensor("t", T.FLOAT, [], [0.5]), ints("ax0", [0])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [2, 3, 8, 8]), vi("boxes", T.FLOAT, [4, 4]),
                                   vi("bidx", T.INT64, [4]), vi("score", T.FLOAT, [4])],
                 [vi("y", T.FLOAT, ["r", 3, 2, 2])], inits, opset=16)
    m = tg.onnx.load(path)
    rs = np.random.RandomState(3)
    x = rs.randn(2, 3, 8, 8).astype(np.float32)
    boxes = np.array([[0, 0, 6, 6], [2, 2, 14, 10], [4, 0, 12, 8], [1, 3, 9, 15]], np.float32)
    bidx = np.array([0, 1, 1, 0], np.int64)
    scores = [np.array([0.9, 0.1, 0.7, 0.2], np.float32), np.array([0.1, 0.2, 0.3, 0.4],
                                                                   np.float32)]
    args = [(x, boxes, bidx, s) for s in scores]
    for s, (got, eager) in zip(scores, traced_and_eager(m, args)):
        assert got.shape[0] == int((s > 0.5).sum())
        np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=1e-6, atol=1e-6)


def test_expand_to_a_target_computed_from_a_run_time_shape(tmp_path):
    """torch.onnx's expand: Expand(t, Where(Equal(target, -1), 1, target))
    with target [count, 3], count a NonZero's: the count keeps t's own dim,
    the 3 is known when the graph is built (the MatMul after needs it)"""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["t"]),
             helper.make_node("Shape", ["t"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
             helper.make_node("Concat", ["n1", "three"], ["target"], axis=0),
             helper.make_node("Equal", ["target", "minus1"], ["is_keep"]),
             helper.make_node("Where", ["is_keep", "ones", "target"], ["w"]),
             helper.make_node("Expand", ["t", "w"], ["e"]),
             helper.make_node("Cast", ["e"], ["ef"], to=T.FLOAT),
             helper.make_node("MatMul", ["ef", "m"], ["y"])]
    inits = [helper.make_tensor("zero", T.INT64, [], [0]), ints("ax0", [0]), ints("three", [3]),
             ints("minus1", [-1, -1]), ints("ones", [1, 1]),
             helper.make_tensor("m", T.FLOAT, [3, 2], [1, 0, 0, 1, 1, 1])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [6])], [vi("y", T.FLOAT, ["k", 2])],
                 inits)
    m = tg.onnx.load(path)
    xs = [np.array([0, 2, 0, 1, 1, 0], np.float32), np.array([0, 0, 0, 0, 0, 9], np.float32)]
    mat = np.array([[1, 0], [0, 1], [1, 1]], np.float32)
    for x, (got, eager) in zip(xs, traced_and_eager(m, [(x,) for x in xs])):
        want = np.repeat(np.nonzero(x)[0][:, None], 3, 1).astype(np.float32) @ mat
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(eager.numpy(), want)


def test_equal_on_a_run_time_dim_is_not_folded(tmp_path):
    """Shape(nz)[1] == 2 depends on the count: it stays a value the graph
    computes (only comparisons with negative values, which no size equals,
    fold)"""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
             helper.make_node("Equal", ["n", "two"], ["y"])]
    inits = [helper.make_tensor("one", T.INT64, [], [1]),
             helper.make_tensor("two", T.INT64, [], [2])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.BOOL, [])], inits)
    m = tg.onnx.load(path)
    xs = [np.array([1, 0, 1, 0], np.float32), np.array([1, 1, 1, 0], np.float32)]
    for x, (got, eager) in zip(xs, traced_and_eager(m, [(x,) for x in xs])):
        assert bool(got.item()) == (np.count_nonzero(x) == 2) == bool(eager.item())


def test_expand_of_a_one_to_a_run_time_size_is_refused_in_graphs(tmp_path):
    """a dim of 1 expanded to a size known only when the graph runs has no
    graph form yet: refused naming the node, while eager mode computes it"""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["target"]),
             helper.make_node("Expand", ["c", "target"], ["y"])]
    inits = [helper.make_tensor("one", T.INT64, [], [1]), ints("ax0", [0]),
             helper.make_tensor("c", T.FLOAT, [1], [7.0])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, ["k"])], inits)
    m = tg.onnx.load(path)
    x = tg.tensor(np.array([1, 0, 1, 1], np.float32))
    np.testing.assert_array_equal(m(x).numpy(), [7, 7, 7])
    with pytest.raises(NotImplementedError, match="Expand.*known only when the graph runs"):
        tg.function(lambda a: m(a))(x)


def test_topk_whose_k_and_axis_are_run_time_lengths(tmp_path):
    """detection post-processing: the scores above a threshold, then the
    best min(count, 3) of them; every length known only when the graph
    runs (TopK as a sort and slice_by)"""
    nodes = [helper.make_node("Greater", ["s", "t"], ["keep"]),
             helper.make_node("NonZero", ["keep"], ["nz"]),
             helper.make_node("Squeeze", ["nz", "ax0"], ["idx"]),
             helper.make_node("Gather", ["s", "idx"], ["kept"], axis=0),
             helper.make_node("Shape", ["kept"], ["n"]),
             helper.make_node("Min", ["n", "three"], ["k"]),
             helper.make_node("TopK", ["kept", "k"], ["v", "i"]),
             helper.make_node("ConstantOfShape", ["n"], ["ones"],
                              value=helper.make_tensor("v", T.FLOAT, [1], [2.0]))]
    inits = [helper.make_tensor("t", T.FLOAT, [], [0.0]), ints("ax0", [0]), ints("three", [3])]
    path = model(tmp_path, nodes, [vi("s", T.FLOAT, [6])],
                 [vi("v", T.FLOAT, ["k"]), vi("i", T.INT64, ["k"]), vi("ones", T.FLOAT, ["n"])],
                 inits)
    m = tg.onnx.load(path)
    ss = [np.array([0.5, -1, 0.9, 0.1, 0.7, -2], np.float32),
          np.array([-1, 0.3, -1, -1, -1, -1], np.float32), -np.ones(6, np.float32)]
    for s, (got, eager) in zip(ss, traced_and_eager(m, [(s,) for s in ss])):
        kept = s[s > 0]
        order = np.argsort(-kept, kind="stable")[:3]
        for g, e, want in zip(got, eager, (kept[order], order, np.full(kept.size, 2.0))):
            np.testing.assert_array_equal(g.numpy(), want)
            np.testing.assert_array_equal(e.numpy(), want)


def test_a_run_time_length_used_as_a_number_is_not_folded(tmp_path):
    """a Slice of a constant starting at a NonZero's count: the count is a
    number there, known only when the graph runs (a marked dim must not
    be read as a bound when the import folds what it can)"""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["n"], start=1),
             helper.make_node("Slice", ["c", "n", "end"], ["y"])]
    inits = [ints("c", [10, 20, 30, 40, 50]), ints("end", [2**63 - 1])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.INT64, ["k"])], inits)
    m = tg.onnx.load(path)
    xs = [np.array([1, 0, 1, 0], np.float32), np.array([0, 0, 0, 1], np.float32)]
    for x, (got, eager) in zip(xs, traced_and_eager(m, [(x,) for x in xs])):
        want = np.array([10, 20, 30, 40, 50])[np.count_nonzero(x):]
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(eager.numpy(), want)
