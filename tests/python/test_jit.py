"""tensorgraph.jit: torch.jit's names over tg.function. script and trace
compile functions and modules (the source converted: data-dependent
branches stay right on every input), modules keep their parameters
shared; the annotations let TorchScript-flavoured code run; archives
raise with what to use instead."""
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        if x.sum() > 0:
            return self.lin(x).relu()
        return self.lin(x) * 2


@tg.jit.ignore
def _helper(x):
    return x + 1


def _twice(a):
    return _helper(a) * 2


@pytest.mark.parametrize('how', ['script', 'trace'])
def test_module_compiled_shares_parameters(how):
    m = Branchy()
    x = tg.randn(4, 3).abs()
    c = tg.jit.script(m) if how == 'script' else tg.jit.trace(m, x)
    assert isinstance(c, Branchy) and isinstance(c, tg.jit.ScriptModule)
    assert type(c).__name__ == 'Branchy' and repr(c) == repr(m)
    for inp in (x, -x):  # both branches, one trace
        tg.testing.assert_close(c(inp), m(inp))
    assert c.forward.trace_count == 1
    assert c.lin.weight is m.lin.weight
    c(x).sum().backward()
    assert m.lin.weight.grad is not None
    assert set(c.state_dict()) == set(m.state_dict())


def test_functions_and_annotations():
    f = tg.jit.script(_twice)
    x = tg.ones(3)
    tg.testing.assert_close(f(x), tg.full((3,), 4.))
    assert tg.jit.script(f) is f
    t = tg.jit.trace(_twice, (x,))
    tg.testing.assert_close(t(x * 2), tg.full((3,), 6.))
    assert tg.jit.annotate(list, [1]) == [1] and tg.jit.Attribute(3, int) == 3
    assert tg.jit.export(_twice) is _twice and tg.jit.unused(_twice) is _twice
    assert tg.jit.isinstance([1, 2], list) and not tg.jit.isinstance(1, str)
    assert tg.jit.wait(tg.jit.fork(lambda a: a + 1, 1)) == 2
    assert not tg.jit.is_scripting()


def test_is_tracing_only_while_a_trace_runs():
    seen = []

    def probe(a):
        seen.append(tg.jit.is_tracing())
        return a + 1
    assert not tg.jit.is_tracing()
    tg.jit.trace(probe, tg.ones(2))
    assert seen == [True] and not tg.jit.is_tracing()


def test_errors():
    with pytest.raises(NotImplementedError, match='tg.save'):
        tg.jit.save(Branchy(), 'm.pt')
    with pytest.raises(NotImplementedError, match='TorchScript'):
        tg.jit.load('m.pt')
    with pytest.raises(TypeError, match='example_inputs'):
        tg.jit.trace(_twice)
    with pytest.raises(TypeError, match='classes'):
        tg.jit.script(Branchy)
