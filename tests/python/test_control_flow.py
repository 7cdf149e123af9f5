"""tg.cond, tg.while_loop and tg.scan: Python control flow on concrete
values (eager, on the tape), one graph node on symbolic ones (inside
tg.function), with the same values and gradients (float64)."""
import numpy as np
import pytest

import tensorgraph as tg

needs_primitives = pytest.mark.skipif(not hasattr(tg._C, "_while_loop"),
                                      reason="tensorgraph._C._cond/_while_loop not built yet")


def f64(v):
    return tg.tensor(v, dtype=tg.float64)


def branchy(x):
    return tg.cond(x.sum() > 0, lambda a: a * a, lambda a: -a, (x,))


def loop(x):
    i, y = tg.while_loop(lambda i, y: y.sum() < 50, lambda i, y: (i + 1, y * 1.5 + 1),
                         (tg.tensor(0), x))
    return i, y


def run(fn, x, compiled):
    x = x.detach().clone().requires_grad_(True)
    out = (compiled if compiled else fn)(x)
    y = out[-1] if isinstance(out, tuple) else out
    y.sum().backward()
    return [o.detach().numpy() for o in (out if isinstance(out, tuple) else (out,))], x.grad.numpy()


def test_eager_cond_and_while_loop_are_python():
    assert tg.cond(True, lambda: 1, lambda: 2) == 1
    assert tg.cond(f64(0.0), lambda x: x + 1, lambda x: x - 1, (f64(1.0),)).item() == 0.0
    x = f64([1.0, 2.0]).requires_grad_(True)
    y = branchy(x)
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    i, y = loop(f64([1.0, 2.0]))
    assert int(i) == 6
    with pytest.raises(RuntimeError, match="max_iterations=3"):
        tg.while_loop(lambda v: v < 10, lambda v: v + 1, (tg.tensor(0),), max_iterations=3)
    with pytest.raises(ValueError, match="exactly one element"):
        tg.cond(f64([1.0, 2.0]), lambda: 1, lambda: 2)


def test_scan_eager():
    xs = f64([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    carry, ys = tg.scan(lambda c, x: (c + x, c * x), f64([0.0, 1.0]), xs)
    np.testing.assert_array_equal(carry.numpy(), [9.0, 13.0])
    np.testing.assert_array_equal(ys.numpy(), [[0.0, 2.0], [3.0, 12.0], [20.0, 42.0]])
    (a, b), (p, q) = tg.scan(lambda c, x: ((c[0] + x[0], c[1] * x[1]), (x[0] * 2, c[1])),
                             (f64(0.0), f64(1.0)), (f64([1.0, 2.0]), f64([3.0, 4.0])))
    assert (a.item(), b.item()) == (3.0, 12.0)
    assert p.tolist() == [2.0, 4.0] and q.tolist() == [1.0, 3.0]


@needs_primitives
@pytest.mark.parametrize("v", [[1.0, 2.0], [-3.0, 1.0]])
def test_symbolic_cond_matches_eager(v):
    f = tg.function(branchy, autograph=False)  # tg.cond itself, no conversion
    want, want_g = run(branchy, f64(v), None)
    got, got_g = run(branchy, f64(v), f)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-12)


@needs_primitives
def test_symbolic_while_loop_matches_eager():
    f = tg.function(loop, autograph=False)
    for v in ([1.0, 2.0], [10.0, 20.0], [0.1, 0.0]):
        (wi, wy), wg = run(loop, f64(v), None)
        (gi, gy), gg = run(loop, f64(v), f)
        assert int(gi) == int(wi)
        np.testing.assert_allclose(gy, wy, rtol=1e-12)
        np.testing.assert_allclose(gg, wg, rtol=1e-12)
    assert f.trace_count == 1


def scanned(c0, xs):
    return tg.scan(lambda c, x: (c * x + 1, tg.sin(c) * x), c0, xs)


@needs_primitives
def test_symbolic_scan_matches_eager():
    f = tg.function(scanned, autograph=False)
    tg.manual_seed(2)
    for _ in range(3):
        c0, xs = tg.randn(2, dtype=tg.float64), tg.randn(5, 2, dtype=tg.float64)
        res = []
        for fn in (scanned, f):
            a = c0.detach().clone().requires_grad_(True)
            b = xs.detach().clone().requires_grad_(True)
            carry, ys = fn(a, b)
            (carry.sum() + (ys * ys).sum()).backward()
            res.append([carry.detach().numpy(), ys.detach().numpy(), a.grad.numpy(),
                        b.grad.numpy()])
        for w, g in zip(*res):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert f.trace_count == 1
