"""What a tg.function may return: a tensor, a tuple of tensors, and now
(as tf.function and torch.compile) a list, a named tuple, or a sequence
mixing tensors with Python values, which are constants of the trace
(before: "output 1 of a tg.function is a int, not a Tensor")."""
import collections

import pytest

import tensorgraph as tg

Pair = collections.namedtuple('Pair', 'value name scale')


def test_mixed_outputs_and_their_gradients():
    f = tg.function(lambda x: (x.sum(), 3, x.shape, None))
    x = tg.ones(2, requires_grad=True)
    s, three, shape, none = f(x)
    assert (three, tuple(shape), none) == (3, (2,), None)
    s.backward()
    assert x.grad.tolist() == [1.0, 1.0]
    assert f(tg.ones(2))[1] == 3 and f.trace_count == 1


def test_list_and_named_tuple():
    g = tg.function(lambda x: [x * 2, x + 1])
    out = g(tg.ones(2))
    assert isinstance(out, list) and [o.tolist() for o in out] == [[2, 2], [2, 2]]
    h = tg.function(lambda x: Pair(x * 2, 'twice', x.mean()))
    p = h(tg.ones(3))
    assert isinstance(p, Pair) and p.name == 'twice' and p.scale.item() == 1.0
    assert p.value.tolist() == [2, 2, 2]


def test_no_tensor_returned():
    with pytest.raises(TypeError, match="returned no tensor"):
        tg.function(lambda x: (1, 2))(tg.ones(1))
