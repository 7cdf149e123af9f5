"""_C._cond and _C._while_loop: eager and inside tg.function (graph mode),
gradients against plain Python control flow, and errors."""
import pytest
import tensorgraph as tg
from tensorgraph import _C


def branchy(x, w):
    def then_fn(a):
        return a * w

    def else_fn(a):
        return a.sin() + w

    (y,) = _C._cond((x.sum() > 0), then_fn, else_fn, (x,))
    return (y * y).sum()


def branchy_python(x, w):
    y = x * w if float(x.sum()) > 0 else x.sin() + w
    return (y * y).sum()


def loopy(x, w):
    def cond_fn(a, k):
        return a.sum() < 10

    def body_fn(a, k):
        return a * w + 0.25, k + 1

    a, k = _C._while_loop(cond_fn, body_fn, (x, tg.tensor(0)), 1000, None)
    return (a * a).sum(), k


def loopy_python(x, w):
    k = 0
    while float(x.sum()) < 10:
        x = x * w + 0.25
        k += 1
    return (x * x).sum(), k


XS = [[0.5, -0.2, 0.9], [-0.5, -0.2, 0.3], [0.1, 0.2, 0.3], [4.0, 4.0, 4.0]]


def grads(f, xs, ws):
    x = tg.tensor(xs, dtype=tg.float64, requires_grad=True)
    w = tg.tensor(ws, dtype=tg.float64, requires_grad=True)
    out = f(x, w)
    loss = out[0] if isinstance(out, tuple) else out
    loss.backward()
    return loss.item(), x.grad, w.grad, out


@pytest.mark.parametrize("xs", XS)
def test_cond_eager_and_function(xs):
    ws = [1.5, -2.0, 0.25]
    want, dx, dw, _ = grads(branchy_python, xs, ws)
    got, gx, gw, _ = grads(branchy, xs, ws)
    assert abs(got - want) < 1e-12
    assert tg.allclose(gx, dx) and tg.allclose(gw, dw)
    f = tg.function(branchy)
    got, gx, gw, _ = grads(f, xs, ws)
    assert abs(got - want) <= 1e-9 * abs(want)
    assert tg.allclose(gx, dx, atol=1e-9) and tg.allclose(gw, dw, atol=1e-9)


def test_cond_one_graph_serves_both_branches():
    f = tg.function(branchy)
    w = tg.tensor([1.5, -2.0, 0.25], dtype=tg.float64)
    for xs in XS:
        x = tg.tensor(xs, dtype=tg.float64)
        assert abs(f(x, w).item() - branchy_python(x, w).item()) < 1e-9


@pytest.mark.parametrize("xs", XS)
def test_while_eager_and_function(xs):
    ws = [1.5, 1.2, 1.25]
    want, dx, dw, (_, k_want) = grads(loopy_python, xs, ws)
    got, gx, gw, (_, k) = grads(loopy, xs, ws)
    assert k.item() == k_want and abs(got - want) <= 1e-12 * abs(want)
    assert tg.allclose(gx, dx)
    if dw is not None:
        assert tg.allclose(gw, dw)
    f = tg.function(loopy)
    got, gx, gw, (_, k) = grads(f, xs, ws)
    assert k.item() == k_want and abs(got - want) <= 1e-9 * abs(want)
    assert tg.allclose(gx, dx, atol=1e-9)
    if dw is not None:
        assert tg.allclose(gw, dw, atol=1e-9)


def test_python_exception_propagates():
    class Boom(Exception):
        pass

    def bad(a):
        raise Boom("inside the branch")

    x = tg.ones(3)
    with pytest.raises(Boom, match="inside the branch"):
        _C._cond(x.sum() > 0, bad, bad, (x,))
    with pytest.raises(Boom):
        tg.function(lambda x: _C._cond(x.sum() > 0, lambda a: a, bad, (x,))[0])(x)
    with pytest.raises(Boom):
        _C._while_loop(lambda a: a.sum() < 5, bad, (x,), None, None)


def test_errors():
    x = tg.ones(3)
    with pytest.raises(RuntimeError, match="max_iterations"):  # the C status TG_ERR_ARG
        _C._while_loop(lambda a: a.sum() > 0, lambda a: a + 1, (x,), 10, None)
    f = tg.function(lambda x: _C._cond(x.sum() > 0, lambda a: a, lambda a: a.sum(), (x,))[0])
    with pytest.raises(Exception, match="else branch"):
        f(x)
    # eager: a dim declared -1 may change
    (y,) = _C._while_loop(lambda a: a.shape[0] < 8, lambda a: tg.cat([a, a]), (x,), None,
                          [[-1]])
    assert tuple(y.shape) == (12,)


def test_scan_eager_and_function():
    def f(x, w):
        xs = tg.stack([x, x.sin(), x.cos()])
        (c,), (ys, zs) = _C._scan(lambda c, r: (c * r + w, (c * r).sum(), r * 2), (x,), (xs,))
        return (ys * ys).sum() + c.sum() + zs.sum()

    def g(x, w):
        c, ys, zs = x, [], []
        for r in (x, x.sin(), x.cos()):
            ys.append((c * r).sum())
            zs.append(r * 2)
            c = c * r + w
        return (tg.stack(ys) ** 2).sum() + c.sum() + tg.stack(zs).sum()

    want, dx, dw, _ = grads(g, [0.5, -0.2, 0.9], [0.3, -1.0, 0.25])
    for fn in (f, tg.function(f)):
        got, gx, gw, _ = grads(fn, [0.5, -0.2, 0.9], [0.3, -1.0, 0.25])
        assert abs(got - want) <= 1e-9 * abs(want)
        assert tg.allclose(gx, dx, atol=1e-9) and tg.allclose(gw, dw, atol=1e-9)
