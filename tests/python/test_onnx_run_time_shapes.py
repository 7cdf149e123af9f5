"""ONNX models whose shapes are known only when the graph runs, inside
tg.function: Shape and Size of a NonZero's result (read at run time,
where the -1 standing for the count was once folded in as a value),
Slice bounds computed from them, and Range on an input's value. One
trace serves every input; results and gradients equal eager mode's and
numpy's. Expand and Tile whose target or repeats the graph computes, and
Unique over computed values (each refused in graphs before). Hand-made
models: needs the onnx package only (torch, where present, is the
gradients' oracle)."""
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


def test_expand_of_a_one_to_a_run_time_size(tmp_path):
    """a dim of 1 expanded to a size known only when the graph runs (a
    NonZero's count): expand_by, the same values as eager mode's (it was
    refused in graphs)"""
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["target"]),
             helper.make_node("Expand", ["c", "target"], ["y"])]
    inits = [helper.make_tensor("one", T.INT64, [], [1]), ints("ax0", [0]),
             helper.make_tensor("c", T.FLOAT, [1], [7.0])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, ["k"])], inits)
    m = tg.onnx.load(path)
    xs = [np.array([1, 0, 1, 1], np.float32), np.zeros(4, np.float32),
          np.ones(4, np.float32)]
    for x, (got, eager) in zip(xs, traced_and_eager(m, [(x,) for x in xs])):
        want = np.full(np.count_nonzero(x), 7, np.float32)
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(eager.numpy(), want)


def test_expand_of_a_one_to_a_run_time_batch_with_gradients(tmp_path):
    """Expand(w [1, 3], Shape(y)) * y with y the rows of d a mask selects
    (Compress): w broadcast to a batch known only when the graph runs;
    w's gradient sums over it (torch's expand as the oracle); one trace
    serves every batch"""
    torch = pytest.importorskip("torch")
    nodes = [helper.make_node("Compress", ["d", "mask"], ["y"], axis=0),
             helper.make_node("Shape", ["y"], ["s"]),
             helper.make_node("Expand", ["w", "s"], ["e"]),
             helper.make_node("Mul", ["e", "y"], ["z"])]
    path = model(tmp_path, nodes, [vi("w", T.FLOAT, [1, 3]), vi("d", T.FLOAT, [5, 3]),
                                   vi("mask", T.BOOL, [5])], [vi("z", T.FLOAT, ["b", 3])])
    m = tg.onnx.load(path)

    def loss(w, d, mask):
        return (m(w, d, mask) ** 2).sum()

    fn, fwd = tg.function(loss), tg.function(lambda *a: m(*a))
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1, 3)).astype(np.float32)
    d = rng.standard_normal((5, 3)).astype(np.float32)
    for mask in ([1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]):
        mask = np.array(mask, bool)
        y = d[mask]
        np.testing.assert_array_equal(fwd(tg.tensor(w), tg.tensor(d), tg.tensor(mask)).numpy(),
                                      np.broadcast_to(w, y.shape) * y)
        grads = []
        for f in (fn, loss):  # compiled, eager
            wt = tg.tensor(w, requires_grad=True)
            f(wt, tg.tensor(d), tg.tensor(mask)).backward()
            grads.append(wt.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])
        wt = torch.tensor(w, requires_grad=True)
        ((wt.expand(len(y), 3) * torch.tensor(y)) ** 2).sum().backward()
        np.testing.assert_allclose(grads[0], wt.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert fn.trace_count == 1 and fwd.trace_count == 1


def test_expand_to_a_shape_given_as_an_input(tmp_path):
    """the whole target an input: ONNX's broadcast both ways (a 1 in the
    shape keeps the input's dim), as numpy's; values the shape cannot
    broadcast fail when the graph runs, naming the dims"""
    nodes = [helper.make_node("Expand", ["x", "shape"], ["y"])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [3, 1]), vi("shape", T.INT64, [3])],
                 [vi("y", T.FLOAT, None)])
    m = tg.onnx.load(path)
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    shapes = [[2, 1, 4], [1, 1, 1], [2, 3, 5], [1, 1, 0]]
    args = [(x, np.array(s, np.int64)) for s in shapes]
    for s, (got, eager) in zip(shapes, traced_and_eager(m, args)):
        want = x * np.ones(s, np.float32)  # ONNX Expand: numpy's broadcast of both
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(eager.numpy(), want)
    fn = tg.function(lambda a, b: m(a, b))
    for bad, msg in (([2, 2, 2], "do not broadcast"), ([-1, 1, 4], "negative")):
        with pytest.raises(Exception, match=msg):
            fn(tg.tensor(x), tg.tensor(np.array(bad, np.int64)))


def test_tile_by_repeats_computed_in_the_graph(tmp_path):
    """Tile(x, [count, 2]) with count a NonZero's: tile_by, gradients
    summing the tiles (torch's repeat as the oracle)"""
    torch = pytest.importorskip("torch")
    nodes = [helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["s"]),
             helper.make_node("Slice", ["s", "one", "two"], ["n"]),
             helper.make_node("Concat", ["n", "two"], ["reps"], axis=0),
             helper.make_node("Tile", ["x", "reps"], ["y"])]
    inits = [ints("one", [1]), ints("two", [2])]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [2, 3]), vi("m", T.FLOAT, [5])],
                 [vi("y", T.FLOAT, ["k", 6])], inits)
    m = tg.onnx.load(path)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    masks = [np.array([1, 0, 1, 1, 0], np.float32), np.zeros(5, np.float32),
             np.ones(5, np.float32)]
    for mk, (got, eager) in zip(masks, traced_and_eager(m, [(x, mk) for mk in masks])):
        want = np.tile(x, (np.count_nonzero(mk), 2))
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(eager.numpy(), want)

    def loss(a, b):
        return (m(a, b) ** 3).sum()

    fn = tg.function(loss)
    for mk in masks:
        grads = []
        for f in (fn, loss):
            xt = tg.tensor(x, requires_grad=True)
            f(xt, tg.tensor(mk)).backward()
            grads.append(xt.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])
        xt = torch.tensor(x, requires_grad=True)
        (xt.repeat(np.count_nonzero(mk), 2) ** 3).sum().backward()
        np.testing.assert_allclose(grads[0], xt.grad.numpy(), rtol=1e-6)
    assert fn.trace_count == 1


def test_reshape_to_a_product_of_run_time_dims(tmp_path):
    """Reshape(e, [Shape(e)[0] * Shape(e)[1]]) with e's second dim a
    NonZero's count: the product is a value the graph computes (no dim of
    it stays in place), so reshape_by; a Reshape to an input's value too.
    Both were refused in graphs"""
    nodes = [helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Cast", ["nz"], ["nzf"], to=T.FLOAT),
             helper.make_node("Mul", ["nzf", "w"], ["e"]),  # [3, count]
             helper.make_node("Shape", ["e"], ["s"]),
             helper.make_node("ReduceProd", ["s"], ["n"], keepdims=1),
             helper.make_node("Reshape", ["e", "n"], ["flat"]),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    inits = [helper.make_tensor("w", T.FLOAT, [3, 1], [1, 10, 100])]
    path = model(tmp_path, nodes, [vi("m", T.FLOAT, [5]), vi("x", T.FLOAT, [2, 6]),
                                   vi("target", T.INT64, [3])],
                 [vi("flat", T.FLOAT, ["k"]), vi("y", T.FLOAT, None)], inits)
    m = tg.onnx.load(path)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    cases = [(np.array([0, 1, 0, 1, 1], np.float32), [0, 3, -1]),
             (np.array([0, 0, 0, 0, 2], np.float32), [0, 2, 3]),
             (np.ones(5, np.float32), [-1, 1, 1])]
    args = [(mk, x, np.array(t, np.int64)) for mk, t in cases]
    for (mk, t), (got, eager) in zip(cases, traced_and_eager(m, args)):
        flat = (np.nonzero(mk)[0][None, :] * np.array([[1], [10], [100]])).reshape(-1)
        want_y = x.reshape([x.shape[i] if v == 0 else v for i, v in enumerate(t)])
        for g, e, w in zip(got, eager, (flat.astype(np.float32), want_y)):
            np.testing.assert_array_equal(g.numpy(), w)
            np.testing.assert_array_equal(e.numpy(), w)


def np_unique(x, axis, sorted_):
    """ONNX Unique's four outputs by numpy (the operator's reference)"""
    y, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis)
    if not sorted_:  # order of first occurrence
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        y, first, counts = np.take(y, order, axis=0 if axis is None else axis), \
            first[order], counts[order]
        inverse = rank[inverse.reshape(-1)]
    return y, first, inverse.reshape(-1), counts


@pytest.mark.parametrize("sorted_", [1, 0])
@pytest.mark.parametrize("axis", [None, 0])
def test_unique_over_values_computed_in_the_graph(tmp_path, sorted_, axis):
    """Unique(Relu(x)): its length known only when the graph runs, as
    NonZero's; all four outputs as numpy's, one trace for every count,
    and Y's gradient reaches x at the first occurrences"""
    attrs = {"sorted": sorted_} if axis is None else {"sorted": sorted_, "axis": axis}
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Unique", ["r"], ["y", "first", "inverse", "counts"], **attrs)]
    path = model(tmp_path, nodes, [vi("x", T.FLOAT, [4, 2])],
                 [vi("y", T.FLOAT, None), vi("first", T.INT64, ["u"]),
                  vi("inverse", T.INT64, ["n"]), vi("counts", T.INT64, ["u"])])
    m = tg.onnx.load(path)
    xs = [np.array([[1, 2], [-1, 0], [1, 2], [3, -5]], np.float32),
          np.array([[-1, -2], [-3, -1], [-1, 0], [0, -7]], np.float32),
          np.array([[4, 3], [2, 1], [4, 2], [3, 1]], np.float32)]
    for x, (got, eager) in zip(xs, traced_and_eager(m, [(x,) for x in xs])):
        want = np_unique(np.maximum(x, 0), axis, sorted_)
        for g, e, w in zip(got, eager, want):
            np.testing.assert_array_equal(g.numpy(), w)
            np.testing.assert_array_equal(e.numpy(), w)

    def loss(a):
        return (m(a)[0] ** 2).sum()

    fn = tg.function(loss)
    for x in xs:
        grads = []
        for f in (fn, loss):
            xt = tg.tensor(x, requires_grad=True)
            f(xt).backward()
            grads.append(xt.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])
        r = np.maximum(x, 0) if axis is not None else np.maximum(x, 0).reshape(-1)
        first = np_unique(r, axis, sorted_)[1]
        want = np.zeros_like(r)
        want[first] = 2 * r[first]  # Relu's gradient is 0 where r is 0
        np.testing.assert_array_equal(grads[0], want.reshape(x.shape))
    assert fn.trace_count == 1


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


def test_expand_by_and_tile_by_bindings():
    """the C ops behind Expand and Tile on computed targets, bound in
    Python: inside tg.function the target is a traced value, one trace
    for every target; gradients as torch's expand/repeat sum them"""
    from tensorgraph import _C
    fn = tg.function(lambda x, s, r: (_C._expand_by(x, s), _C._tile_by(x, r)))
    x = np.array([[1.0], [2.0], [3.0]], np.float32)
    for s, r in (([2, 3, 4], [1, 2]), ([1, 1, 1], [3, 1])):
        e, t = fn(tg.tensor(x), tg.tensor(np.array(s)), tg.tensor(np.array(r)))
        np.testing.assert_array_equal(e.numpy(), x * np.ones(s, np.float32))
        np.testing.assert_array_equal(t.numpy(), np.tile(x, r))
    assert fn.trace_count == 1
    xt = tg.tensor(x, requires_grad=True)
    (_C._expand_by(xt, tg.tensor(np.array([2, 3, 4]))).sum()
     + (_C._tile_by(xt, tg.tensor(np.array([2, 3]))) ** 2).sum()).backward()
    np.testing.assert_array_equal(xt.grad.numpy(), 8 + 6 * 2 * x)
    with pytest.raises(RuntimeError, match="do not broadcast"):
        _C._expand_by(tg.tensor(x), tg.tensor(np.array([2, 2])))
