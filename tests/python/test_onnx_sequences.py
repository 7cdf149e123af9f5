"""ONNX sequences and optionals (src/onnx/ops_seq.c, values.c; docs/ONNX.md,
"Sequences and optionals"): small models built with onnx.helper, run
eagerly and inside tg.function (graph mode) through the API's naming (a
sequence S given and returned as S[0], S[1], ...; an optional without a
value absent), against numpy references of the operator specs (and
onnx.reference where the installed onnx has it), and their error paths.
onnx's own node cases run in tests/onnx_conformance."""
import numpy as np
import pytest

import tensorgraph as tg

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def seq_info(name, elem=F, shape=None):
    return helper.make_tensor_sequence_value_info(name, elem, shape)


def opt_info(name, elem=F, shape=None, seq=False):
    inner = helper.make_tensor_type_proto(elem, shape)
    if seq:
        inner = helper.make_sequence_type_proto(inner)
    return helper.make_value_info(name, helper.make_optional_type_proto(inner))


def ten(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def save(tmp_path, nodes, inputs, outputs, opset=17, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    return path, model


def run_both(path, feeds):
    """{name: numpy} eagerly and inside tg.function (the same outputs)"""
    m = tg.onnx.load(path)
    names = sorted(feeds)
    eager = {k: v.numpy() for k, v in m.run({n: tg.tensor(feeds[n]) for n in names}).items()}
    keys = sorted(eager)

    def f(*xs):
        out = m.run(dict(zip(names, xs)))
        assert sorted(out) == keys
        return tuple(out[k] for k in keys)
    if keys:
        res = tg.function(f)(*[tg.tensor(feeds[n]) for n in names])
        res = res if isinstance(res, tuple) else (res,)
        graph = {k: r.numpy() for k, r in zip(keys, res)}
        assert graph.keys() == eager.keys()
        for k in keys:
            np.testing.assert_array_equal(graph[k], eager[k])
    return eager


def check_reference(model, feeds, got):
    """against onnx.reference (onnx >= 1.13) when it is there"""
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        return
    ref_feeds = {}
    for vi in model.graph.input:
        kind = vi.type.WhichOneof("value")
        if kind == "sequence_type":
            ref_feeds[vi.name] = [feeds[k] for k in sorted(
                (k for k in feeds if k.startswith(vi.name + "[")),
                key=lambda s: int(s[len(vi.name) + 1:-1]))]
        else:
            ref_feeds[vi.name] = feeds.get(vi.name)
    outs = ReferenceEvaluator(model).run(None, ref_feeds)
    for vi, want in zip(model.graph.output, outs):
        if isinstance(want, list):
            for k, w in enumerate(want):
                np.testing.assert_allclose(got["%s[%d]" % (vi.name, k)], w, rtol=1e-6)
            assert "%s[%d]" % (vi.name, len(want)) not in got
        elif want is None:
            assert vi.name not in got
        else:
            np.testing.assert_allclose(got[vi.name], want, rtol=1e-6)


def elems(out, name):
    res, k = [], 0
    while "%s[%d]" % (name, k) in out:
        res.append(out["%s[%d]" % (name, k)])
        k += 1
    return res


RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---- the API: sequences in and out ---------------------------------------------


def test_sequence_through_identity(tmp_path):
    path, model = save(tmp_path, [helper.make_node("Identity", ["S"], ["Y"])],
                       [seq_info("S", F, [2])], [seq_info("Y", F, [2])])
    xs = [rand(2) for _ in range(3)]
    feeds = {"S[%d]" % k: x for k, x in enumerate(xs)}
    out = run_both(path, feeds)
    assert sorted(out) == ["Y[0]", "Y[1]", "Y[2]"]
    for k, x in enumerate(xs):
        np.testing.assert_array_equal(out["Y[%d]" % k], x)
    check_reference(model, feeds, out)
    # no element given: the empty sequence, no output entries
    assert tg.onnx.load(path).run({}) == {}


def test_sequence_input_errors(tmp_path):
    path, _ = save(tmp_path, [helper.make_node("Identity", ["S"], ["Y"])],
                   [seq_info("S", F, [2])], [seq_info("Y", F, [2])])
    m = tg.onnx.load(path)
    x = tg.tensor(rand(2))
    with pytest.raises(Exception, match=r"element 'S\[1\]' of sequence input 'S' is missing"):
        m.run({"S[0]": x, "S[2]": x})
    with pytest.raises(Exception, match=r"'S' is a sequence: give its elements as 'S\[0\]'"):
        m.run({"S": x})
    with pytest.raises(Exception, match=r"element 'S\[1\]' has dtype int64"):
        m.run({"S[0]": x, "S[1]": tg.tensor(np.arange(2))})
    with pytest.raises(Exception, match=r"element 'S\[0\]' has shape \[3\]"):
        m.run({"S[0]": tg.tensor(rand(3))})
    with pytest.raises(Exception, match=r"'T\[0\]' is not an input"):
        m.run({"T[0]": x})
    with pytest.raises(Exception, match=r"'S\[x\]' is not an input"):
        m.run({"S[x]": x})


def test_optional_inputs_and_outputs(tmp_path):
    nodes = [helper.make_node("OptionalHasElement", ["O"], ["has"]),
             helper.make_node("Identity", ["O"], ["P"])]
    path, model = save(tmp_path, nodes, [opt_info("O", F, [3])],
                       [ten("has", TensorProto.BOOL, []), opt_info("P", F, [3])])
    x = rand(3)
    out = run_both(path, {"O": x})
    assert out["has"] == True  # noqa: E712
    np.testing.assert_array_equal(out["P"], x)
    out = run_both(path, {})
    assert out["has"] == False and "P" not in out  # noqa: E712
    # an optional sequence: present with elements, none without
    path, _ = save(tmp_path, [helper.make_node("OptionalHasElement", ["O"], ["has"])],
                   [opt_info("O", F, [3], seq=True)], [ten("has", TensorProto.BOOL, [])])
    assert run_both(path, {"O[0]": x})["has"] == True  # noqa: E712
    assert run_both(path, {})["has"] == False  # noqa: E712


def test_optional_get_element(tmp_path):
    nodes = [helper.make_node("OptionalGetElement", ["O"], ["y"], name="get")]
    path, _ = save(tmp_path, nodes, [opt_info("O", F, [3])], [ten("y", F, [3])])
    x = rand(3)
    np.testing.assert_array_equal(run_both(path, {"O": x})["y"], x)
    with pytest.raises(Exception, match=r"ONNX node 'get' \(OptionalGetElement\): the "
                                         r"optional input 'O' has no value"):
        tg.onnx.load(path).run({})
    # Optional with and without an input
    t = helper.make_tensor_type_proto(F, [3])
    nodes = [helper.make_node("Optional", ["x"], ["a"]),
             helper.make_node("Optional", [], ["b"], type=t),
             helper.make_node("OptionalHasElement", ["a"], ["ha"]),
             helper.make_node("OptionalHasElement", ["b"], ["hb"])]
    path, model = save(tmp_path, nodes, [ten("x", F, [3])],
                       [ten("ha", TensorProto.BOOL, []), ten("hb", TensorProto.BOOL, []),
                        opt_info("a", F, [3]), opt_info("b", F, [3])])
    out = run_both(path, {"x": x})
    assert out["ha"] == True and out["hb"] == False and "b" not in out  # noqa: E712
    np.testing.assert_array_equal(out["a"], x)
    check_reference(model, {"x": x}, out)


# ---- the sequence ops against the specs -------------------------------------------


def test_construct_at_length_insert_erase(tmp_path):
    c = lambda name, v: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=helper.make_tensor(name, I64, [], [v]))
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             c("m1", -1), c("one", 1), c("zero", 0),
             helper.make_node("SequenceAt", ["s", "m1"], ["last"]),
             helper.make_node("SequenceLength", ["s"], ["len"]),
             helper.make_node("SequenceInsert", ["s", "b", "zero"], ["ins_front"]),
             helper.make_node("SequenceInsert", ["s", "a"], ["ins_back"]),
             helper.make_node("SequenceErase", ["s", "one"], ["erased"]),
             helper.make_node("SequenceErase", ["s"], ["erased_last"])]
    outs = [ten("last", F, [2]), ten("len", I64, []), seq_info("ins_front", F),
            seq_info("ins_back", F), seq_info("erased", F), seq_info("erased_last", F)]
    path, model = save(tmp_path, nodes, [ten(n, F, [2]) for n in "abc"], outs)
    a, b, cc = rand(2), rand(2), rand(2)
    feeds = {"a": a, "b": b, "c": cc}
    out = run_both(path, feeds)
    np.testing.assert_array_equal(out["last"], cc)
    assert out["len"] == 3 and out["len"].dtype == np.int64
    for name, want in (("ins_front", [b, a, b, cc]), ("ins_back", [a, b, cc, a]),
                       ("erased", [a, cc]), ("erased_last", [a, b])):
        got = elems(out, name)
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    check_reference(model, feeds, out)


def test_position_errors(tmp_path):
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
             helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at")]
    path, _ = save(tmp_path, nodes, [ten("a", F, [2]), ten("b", F, [2]), ten("p", I64, [])],
                   [ten("y", F, [2])])
    m = tg.onnx.load(path)
    a, b = tg.tensor(rand(2)), tg.tensor(rand(2))
    np.testing.assert_array_equal(m.run({"a": a, "b": b, "p": tg.tensor(np.int64(-2))})["y"].numpy(),
                                  a.numpy())
    with pytest.raises(Exception, match=r"ONNX node 'at' \(SequenceAt\): position 2 is out of "
                                         r"range for a sequence of 2 tensors \(-2 to 1\)"):
        m.run({"a": a, "b": b, "p": tg.tensor(np.int64(2))})
    with pytest.raises(Exception, match=r"position -3 is out of range"):
        m.run({"a": a, "b": b, "p": tg.tensor(np.int64(-3))})
    path_f, _ = save(tmp_path, nodes, [ten("a", F, [2]), ten("b", F, [2]), ten("p", F, [])],
                     [ten("y", F, [2])])
    with pytest.raises(Exception, match=r"position \('p'\) must be int32 or int64"):
        tg.onnx.load(path_f).run({"a": a, "b": b, "p": tg.tensor(np.float32(0))})
    # in a graph, a position computed from a traced value is refused by name
    with pytest.raises(Exception, match=r"ONNX node 'at' \(SequenceAt\): the position \('p'\) "
                                         r"is known only when the model runs"):
        tg.function(lambda a, b, p: m.run({"a": a, "b": b, "p": p})["y"])(
            a, b, tg.tensor(np.int64(0)))


def test_split_and_concat(tmp_path):
    x = rand(5, 3)
    cases = [  # (attrs, split value or None, numpy parts)
        ({"axis": 0}, None, [x[i:i + 1] for i in range(5)]),
        ({"axis": 0, "keepdims": 0}, None, [x[i] for i in range(5)]),
        ({"axis": -1}, np.int64(2), [x[:, 0:2], x[:, 2:3]]),
        ({"axis": 0}, np.array([1, 4], np.int64), [x[0:1], x[1:5]]),
        ({"axis": 0}, np.array([0, 5], np.int64), [x[0:0], x]),
    ]
    for attrs, split, parts in cases:
        ins = ["x"] + (["split"] if split is not None else [])
        inits = [numpy_helper.from_array(split, "split")] if split is not None else []
        nodes = [helper.make_node("SplitToSequence", ins, ["s"], **attrs)]
        path, model = save(tmp_path, nodes, [ten("x", F, [5, 3])], [seq_info("s", F)],
                           inits=inits)
        got = elems(run_both(path, {"x": x}), "s")
        assert len(got) == len(parts), attrs
        for g, w in zip(got, parts):
            np.testing.assert_array_equal(g, w)
    ys = [rand(2, 3) for _ in range(3)]
    for attrs, want in (({"axis": 0}, np.concatenate(ys, 0)),
                        ({"axis": -1}, np.concatenate(ys, 1)),
                        ({"axis": 1, "new_axis": 1}, np.stack(ys, 1)),
                        ({"axis": -1, "new_axis": 1}, np.stack(ys, 2))):
        nodes = [helper.make_node("ConcatFromSequence", ["S"], ["y"], **attrs)]
        path, model = save(tmp_path, nodes, [seq_info("S", F, [2, 3])], [ten("y", F)])
        feeds = {"S[%d]" % k: y for k, y in enumerate(ys)}
        out = run_both(path, feeds)
        np.testing.assert_array_equal(out["y"], want)
        check_reference(model, feeds, out)


def test_sequence_op_errors(tmp_path):
    def refused(nodes, inputs, outputs, feeds, pattern, inits=()):
        path, _ = save(tmp_path, nodes, inputs, outputs, inits=inits)
        with pytest.raises(Exception, match=pattern):
            tg.onnx.load(path).run({k: tg.tensor(v) for k, v in feeds.items()})
    x, i = rand(2), np.arange(2)
    refused([helper.make_node("SequenceConstruct", ["a", "b"], ["s"], name="mk")],
            [ten("a", F, [2]), ten("b", I64, [2])], [seq_info("s", F)], {"a": x, "b": i},
            r"ONNX node 'mk' \(SequenceConstruct\): input 1 \('b'\) is int64; input 0 is "
            r"float32")
    refused([helper.make_node("SequenceInsert", ["S", "b"], ["s"], name="ins")],
            [seq_info("S", F, [2]), ten("b", I64, [2])], [seq_info("s", F)],
            {"S[0]": x, "b": i}, r"ONNX node 'ins' \(SequenceInsert\): the tensor \('b'\) is "
            r"int64; the sequence holds float32 tensors")
    refused([helper.make_node("ConcatFromSequence", ["S"], ["y"], name="cat", axis=0)],
            [seq_info("S", F, [2])], [ten("y", F)], {},
            r"ONNX node 'cat' \(ConcatFromSequence\): the sequence \('S'\) is empty")
    refused([helper.make_node("ConcatFromSequence", ["S"], ["y"], name="cat")],
            [seq_info("S", F, [2])], [ten("y", F)], {"S[0]": x},
            r"the attribute 'axis' is required")
    refused([helper.make_node("ConcatFromSequence", ["S"], ["y"], name="cat", axis=2)],
            [seq_info("S", F, [2])], [ten("y", F)], {"S[0]": x}, r"ONNX node 'cat'.*axis")
    refused([helper.make_node("SequenceErase", ["S"], ["y"], name="er")],
            [seq_info("S", F, [2])], [seq_info("y", F)], {},
            r"ONNX node 'er' \(SequenceErase\): the sequence \('S'\) is empty")
    refused([helper.make_node("SplitToSequence", ["x", "sp"], ["s"], name="sp")],
            [ten("x", F, [2])], [seq_info("s", F)], {"x": x},
            r"ONNX node 'sp' \(SplitToSequence\): the split sizes add up to 3; axis 0 has "
            r"length 2", inits=[numpy_helper.from_array(np.array([1, 2], np.int64), "sp")])
    refused([helper.make_node("SplitToSequence", ["x", "sp"], ["s"], name="sp")],
            [ten("x", F, [2])], [seq_info("s", F)], {"x": x},
            r"split is 0; a chunk length must be positive",
            inits=[numpy_helper.from_array(np.int64(0), "sp")])
    # a sequence where an op takes tensors
    refused([helper.make_node("Relu", ["S"], ["y"], name="r")], [seq_info("S", F, [2])],
            [ten("y", F)], {"S[0]": x},
            r"ONNX node 'r' \(Relu\): input 0 \('S'\) is a sequence; Relu takes tensors")
    # a tensor where a sequence is expected
    refused([helper.make_node("SequenceLength", ["x"], ["n"], name="len")],
            [ten("x", F, [2])], [ten("n", I64, [])], {"x": x},
            r"ONNX node 'len' \(SequenceLength\): input 0 \(input_sequence, 'x'\) is a tensor")
    # the declared kind of an output
    refused([helper.make_node("SequenceConstruct", ["x"], ["s"])], [ten("x", F, [2])],
            [ten("s", F, [2])], {"x": x}, r"output 's' is a sequence but the model declares "
            r"a tensor")


def test_sequence_map(tmp_path):
    body = helper.make_graph([helper.make_node("Add", ["a", "b"], ["s"]),
                              helper.make_node("Mul", ["s", "t"], ["p"])], "body",
                             [ten("a", F, ["N"]), ten("b", F, ["N"]), ten("t", F, ["N"])],
                             [ten("s", F, ["N"]), ten("p", F, ["N"])])
    nodes = [helper.make_node("SequenceMap", ["A", "B", "t"], ["S", "P"], body=body, name="map")]
    path, model = save(tmp_path, nodes, [seq_info("A", F, ["N"]), seq_info("B", F, ["N"]),
                                         ten("t", F, ["N"])],
                       [seq_info("S", F, ["N"]), seq_info("P", F, ["N"])])
    t = rand(4)
    A = [rand(4) for _ in range(3)]
    B = [rand(4) for _ in range(3)]
    feeds = {"t": t}
    feeds.update({"A[%d]" % k: a for k, a in enumerate(A)})
    feeds.update({"B[%d]" % k: b for k, b in enumerate(B)})
    out = run_both(path, feeds)
    for k in range(3):
        np.testing.assert_allclose(out["S[%d]" % k], A[k] + B[k], rtol=1e-6)
        np.testing.assert_allclose(out["P[%d]" % k], (A[k] + B[k]) * t, rtol=1e-6)
    assert "S[3]" not in out
    check_reference(model, feeds, out)
    del feeds["B[2]"]
    with pytest.raises(Exception, match=r"ONNX node 'map' \(SequenceMap\): input 1 \('B'\) has "
                                         r"2 tensors, input 0 has 3"):
        tg.onnx.load(path).run({k: tg.tensor(v) for k, v in feeds.items()})


def test_if_with_sequences(tmp_path):
    def branch(name, v):
        return helper.make_graph(
            [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(v)),
             helper.make_node("SequenceConstruct", ["c", "c"], ["o"])],
            name, [], [seq_info("o", F, [2])])
    one, two = np.ones(2, np.float32), np.full(2, 2, np.float32)
    nodes = [helper.make_node("If", ["cond"], ["r"], name="if",
                              then_branch=branch("then", one), else_branch=branch("else", two))]
    path, model = save(tmp_path, nodes, [ten("cond", TensorProto.BOOL, [])],
                       [seq_info("r", F, [2])])
    # eagerly (graph builds with the condition given: tg_onnx_run, the
    # conformance runner's test_if_seq)
    for cond, want in ((True, one), (False, two)):
        out = {k: v.numpy() for k, v in
               tg.onnx.load(path).run({"cond": tg.tensor(np.array(cond))}).items()}
        assert sorted(out) == ["r[0]", "r[1]"]
        np.testing.assert_array_equal(out["r[1]"], want)
    # a condition only known when the graph runs
    m = tg.onnx.load(path)
    with pytest.raises(Exception, match=r"ONNX node 'if' \(If\): its branches give sequences "
                                         r"or optionals: the condition \('cond'\) must be known"):
        tg.function(lambda c: m.run({"cond": c})["r[0]"])(
            tg.tensor(np.array(True)))


def test_gradient_through_sequence(tmp_path):
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    path, _ = save(tmp_path, nodes, [ten("a", F, [2]), ten("b", F, [3])], [ten("y", F, [5])])
    a = tg.tensor(rand(2), requires_grad=True)
    b = tg.tensor(rand(3), requires_grad=True)
    y = tg.onnx.load(path).run({"a": a, "b": b})["y"]
    w = tg.tensor(np.arange(5, dtype=np.float32))
    (y * w).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0, 1])
    np.testing.assert_array_equal(b.grad.numpy(), [2, 3, 4])


def test_hostile_sequence_types(tmp_path):
    """sequence types the importer does not take are refused at load"""
    def load_with(vi, pattern):
        path, _ = save(tmp_path, [helper.make_node("Identity", ["S"], ["Y"])], [vi],
                       [seq_info("Y", F)])
        with pytest.raises(Exception, match=pattern):
            tg.onnx.load(path)
    seq_of_seq = helper.make_sequence_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2])))
    load_with(helper.make_value_info("S", seq_of_seq), r"graph input 'S' is a sequence of "
              r"sequences")
    seq_of_opt = helper.make_sequence_type_proto(
        helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2])))
    load_with(helper.make_value_info("S", seq_of_opt), r"a sequence of optionals")
    no_elem = onnx.TypeProto()
    no_elem.sequence_type.SetInParent()
    load_with(helper.make_value_info("S", no_elem), r"its sequence type has no element type")
    m = onnx.TypeProto()
    m.map_type.key_type = I64
    m.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(F, [2]))
    load_with(helper.make_value_info("S", m), r"graph input 'S' is a map")


def test_loop_over_sequences(tmp_path):
    """a Loop growing a sequence is unrolled when the model is built"""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Cast", ["i"], ["f"], to=F),
         helper.make_node("Add", ["x", "f"], ["y"]),
         helper.make_node("SequenceInsert", ["s_in", "y"], ["s_out"]),
         helper.make_node("Mul", ["y", "y"], ["sq"])],
        "body", [ten("i", I64, []), ten("c_in", TensorProto.BOOL, []), seq_info("s_in", F)],
        [ten("c_out", TensorProto.BOOL, []), seq_info("s_out", F), ten("sq", F, [2])])
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"]),
             helper.make_node("Loop", ["M", "", "empty"], ["S", "squares"], body=body,
                              name="loop")]
    path, model = save(tmp_path, nodes, [ten("M", I64, []), ten("x", F, [2])],
                       [seq_info("S", F, [2]), ten("squares", F, [None, 2])])
    x = rand(2)
    m = tg.onnx.load(path)
    out = {k: v.numpy() for k, v in
           m.run({"M": tg.tensor(np.int64(3)), "x": tg.tensor(x)}).items()}
    assert sorted(out) == ["S[0]", "S[1]", "S[2]", "squares"]
    for k in range(3):
        np.testing.assert_allclose(out["S[%d]" % k], x + k, rtol=1e-6)
    np.testing.assert_allclose(out["squares"], np.stack([(x + k) ** 2 for k in range(3)]),
                               rtol=1e-6)
    # gradients reach x through the unrolled iterations
    xt = tg.tensor(x, requires_grad=True)
    m.run({"M": tg.tensor(np.int64(3)), "x": xt})["squares"].sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), sum(2 * (x + k) for k in range(3)), rtol=1e-5)
    # a trip count below 0 runs no iteration, as i < M in the tensor-only Loop (it
    # was taken for no trip count: 4096 iterations, then an error), and one
    # above the unroll limit is refused before the first
    with pytest.raises(NotImplementedError, match=r"the loop ran no iteration: the shape "
                                                   r"of scan output 0 is unknown"):
        m.run({"M": tg.tensor(np.int64(-1)), "x": tg.tensor(x)})
    with pytest.raises(Exception, match=r"ONNX node 'loop' \(Loop\): a loop over sequences "
                                         r"is unrolled to at most 4096 iterations; its trip "
                                         r"count is 1099511627776"):
        m.run({"M": tg.tensor(np.int64(2**40)), "x": tg.tensor(x)})
    # a trip count traced in a graph is known only when it runs
    with pytest.raises(Exception, match=r"ONNX node 'loop' \(Loop\): the loop carries "
                                         r"sequences or optionals, so it is unrolled when the "
                                         r"model is built: its trip count \('M'\) must be known"):
        tg.function(lambda M, x: m.run({"M": M, "x": x})["S[0]"])(
            tg.tensor(np.int64(3)), tg.tensor(x))
    # a loop without trip count or condition would not end
    nodes[1] = helper.make_node("Loop", ["", "", "empty"], ["S", "squares"], body=body,
                                name="loop")
    path, _ = save(tmp_path, nodes, [ten("x", F, [2])],
                   [seq_info("S", F, [2]), ten("squares", F, [None, 2])])
    with pytest.raises(Exception, match=r"without a trip count or condition would not end"):
        tg.onnx.load(path).run({"x": tg.tensor(x)})
    # a loop-carried input left out (the first of two)
    body2 = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("SequenceInsert", ["s_in", "z_in"], ["s_out"]),
         helper.make_node("Identity", ["z_in"], ["z_out"])],
        "body2", [ten("i", I64, []), ten("c_in", TensorProto.BOOL, []), seq_info("s_in", F),
                  ten("z_in", F, [2])],
        [ten("c_out", TensorProto.BOOL, []), seq_info("s_out", F), ten("z_out", F, [2])])
    nodes = [helper.make_node("Loop", ["M", "", "", "x"], ["S", "z"], body=body2,
                              name="loop")]
    path, _ = save(tmp_path, nodes, [ten("M", I64, []), ten("x", F, [2])],
                   [seq_info("S", F, [2]), ten("z", F, [2])])
    with pytest.raises(Exception, match=r"ONNX node 'loop' \(Loop\): loop-carried input 0 is "
                                         r"missing"):
        tg.onnx.load(path).run({"M": tg.tensor(np.int64(2)), "x": tg.tensor(x)})
    # a trip count or condition of several elements (their shapes not declared): an
    # error, not a copy of every element into one int64 or bool (a stack overflow,
    # found by fuzzing under ASan)
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"]),
             helper.make_node("Loop", ["M", "c", "empty"], ["S", "squares"], body=body,
                              name="loop")]
    path, _ = save(tmp_path, nodes, [ten("M", I64), ten("c", TensorProto.BOOL),
                                     ten("x", F, [2])],
                   [seq_info("S", F, [2]), ten("squares", F, [None, 2])])
    m = tg.onnx.load(path)
    for M, c, msg in ((np.arange(3), [True], r"the trip count M must be an int64 tensor of "
                                             r"one element"),
                      (np.int64(2), [True, True], r"Loop's condition must be a bool tensor "
                                                  r"of one element")):
        with pytest.raises(Exception, match=r"ONNX node 'loop' \(Loop\): " + msg):
            m.run({"M": tg.tensor(M), "c": tg.tensor(c), "x": tg.tensor(x)})
