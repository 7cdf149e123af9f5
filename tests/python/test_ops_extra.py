"""The composed tensor functions (_ops_shape, _ops_math) against PyTorch:
values, result dtypes, gradients (torch's autograd on the same float64
inputs) and error types."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

pytestmark = needs_torch
rng = np.random.default_rng(0)


def a(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape)


def ints(*shape, hi=5):
    return rng.integers(0, hi, size=shape)


def both(x, grad=True):
    """the same float64 data as a tensorgraph and a torch tensor"""
    x = np.asarray(x)
    rg = grad and x.dtype == np.float64
    return tg.tensor(x, requires_grad=rg), torch.tensor(x, requires_grad=rg)


def check(fn_tg, fn_torch, *arrays, grad=True, rtol=1e-6, atol=1e-9, nograd=()):
    """same values, dtype and (for float inputs but those at positions
    nograd) gradients of sum(out * w)"""
    pairs = [both(x, grad and i not in nograd) if isinstance(x, np.ndarray) else (x, x)
             for i, x in enumerate(arrays)]
    out_tg = fn_tg(*[p[0] for p in pairs])
    out_t = fn_torch(*[p[1] for p in pairs])
    if isinstance(out_t, (tuple, list)):
        assert len(out_tg) == len(out_t)
        for o, e in zip(out_tg, out_t):
            assert o.shape == tuple(e.shape)
            np.testing.assert_allclose(o.detach().numpy(), e.detach().numpy(), rtol, atol)
        return
    assert out_tg.shape == tuple(out_t.shape), (out_tg.shape, out_t.shape)
    assert str(out_tg.dtype).split('.')[-1] == str(out_t.dtype).split('.')[-1]
    np.testing.assert_allclose(out_tg.detach().numpy(), out_t.detach().numpy(), rtol, atol)
    if grad and out_t.requires_grad and out_t.dtype.is_floating_point:
        w = a(*out_t.shape)
        (out_tg * tg.tensor(w)).sum().backward()
        (out_t * torch.tensor(w)).sum().backward()
        for (xt, xr) in pairs:
            if isinstance(xr, torch.Tensor) and xr.requires_grad:
                g = xr.grad
                if g is None:
                    assert xt.grad is None or not xt.grad.numpy().any()
                elif xt.grad is None:  # PyTorch's zeros where the input is not used
                    assert not g.numpy().any()
                else:
                    np.testing.assert_allclose(xt.grad.numpy(), g.numpy(), rtol, atol)


SHAPE_CASES = {
    'tril': (lambda m: m.tril(), (a(3, 4),)),
    'tril_k': (lambda m: m.tril(1), (a(2, 3, 4),)),
    'triu_neg': (lambda m: m.triu(-1), (a(4, 3),)),
    'tril_fn': ((tg.tril, torch.tril) if torch else None, (a(3, 3),)),
    'flip': (lambda m: m.flip(0, 2), (a(2, 3, 4),)),
    'flip_list': (lambda m: m.flip([1]), (a(2, 3),)),
    'flip_kw': (lambda m: m.flip(dims=(0, 1)), (a(2, 3),)),
    'fliplr': (lambda m: m.fliplr(), (a(2, 3),)),
    'flipud': (lambda m: m.flipud(), (a(2, 3),)),
    'roll': (lambda m: m.roll(2, 1), (a(3, 5),)),
    'roll_flat': (lambda m: m.roll(-3), (a(3, 5),)),
    'roll_multi': (lambda m: m.roll((1, -2), (0, 1)), (a(3, 5),)),
    'rot90': (lambda m: m.rot90(), (a(2, 3),)),
    'rot90_k': (lambda m: m.rot90(3, [1, 2]), (a(2, 3, 4),)),
    'rot90_2': (lambda m: m.rot90(-2), (a(2, 3),)),
    'diag_1d': (lambda m: m.diag(), (a(3),)),
    'diag_1d_k': (lambda m: m.diag(2), (a(3),)),
    'diag_1d_neg': (lambda m: m.diag(-1), (a(3),)),
    'diag_2d': (lambda m: m.diag(), (a(3, 4),)),
    'diag_2d_k': (lambda m: m.diag(-1), (a(3, 4),)),
    'diagonal': (lambda m: m.diagonal(1, 0, 2), (a(3, 2, 4),)),
    'diag_embed': (lambda m: m.diag_embed(), (a(2, 3),)),
    'trace': (lambda m: m.trace(), (a(3, 4),)),
    'trace_int': (lambda m: m.trace(), (ints(3, 3),)),
    'repeat_interleave': (lambda m: m.repeat_interleave(2), (a(2, 3),)),
    'repeat_interleave_dim': (lambda m: m.repeat_interleave(3, dim=1), (a(2, 3),)),
    'narrow': (lambda m: m.narrow(1, 1, 2), (a(2, 4),)),
    'narrow_neg': (lambda m: m.narrow(-1, -3, 2), (a(2, 4),)),
    'select': (lambda m: m.select(1, -1), (a(2, 4),)),
    'unbind': (lambda m: m.unbind(1), (a(2, 3),)),
    'movedim': (lambda m: m.movedim(0, -1), (a(2, 3, 4),)),
    'movedim_multi': (lambda m: m.movedim((0, 1), (2, 0)), (a(2, 3, 4),)),
    'moveaxis': (lambda m: m.moveaxis(2, 0), (a(2, 3, 4),)),
    'unflatten': (lambda m: m.unflatten(1, (2, 3)), (a(2, 6),)),
    'unflatten_neg': (lambda m: m.unflatten(-1, (-1, 2)), (a(2, 6),)),
    'broadcast_to': (lambda m: m.broadcast_to((2, 3, 4)), (a(3, 1),)),
    'outer': (lambda u, v: u.outer(v), (a(3), a(4))),
    'dot': (lambda u, v: u.dot(v), (a(5), a(5))),
    'inner': (lambda u, v: u.inner(v), (a(2, 5), a(3, 5))),
    'count_nonzero': (lambda m: m.count_nonzero(), (ints(3, 4, hi=2),)),
    'count_nonzero_dim': (lambda m: m.count_nonzero(1), (ints(3, 4, hi=2),)),
    'masked_select': (lambda m: m.masked_select(m > 0), (a(3, 4),)),
    'take': (lambda m: m.take(torch.tensor([[0, 5], [11, 2]]) if isinstance(m, torch.Tensor)
                              else tg.tensor([[0, 5], [11, 2]])), (a(3, 4),)),
    'repeat': (lambda m: m.repeat(2, 1, 3), (a(2, 3),)),
    'repeat_list': (lambda m: m.repeat([2, 2]), (a(2, 3),)),
}


def _fns(name, entry):
    f, arrays = entry
    if isinstance(f, tuple):
        return f[0], f[1], arrays
    return f, f, arrays


@pytest.mark.parametrize('name', sorted(SHAPE_CASES))
def test_shape_functions(name):
    f_tg, f_t, arrays = _fns(name, SHAPE_CASES[name])
    check(f_tg, f_t, *arrays)


def module_pair(name):
    return getattr(tg, name), getattr(torch, name)


@pytest.mark.parametrize('name,args', [
    ('tensordot', (a(2, 3, 4), a(3, 4, 5))),
    ('hstack', None), ('vstack', None), ('dstack', None), ('column_stack', None),
])
def test_module_functions(name, args):
    f_tg, f_t = module_pair(name)
    if name == 'tensordot':
        check(f_tg, f_t, *args)
        check(lambda x, y: f_tg(x, y, dims=([1, 0], [0, 1])),
              lambda x, y: f_t(x, y, dims=([1, 0], [0, 1])), a(3, 2, 4), a(2, 3, 5))
        check(lambda x, y: f_tg(x, y, 0), lambda x, y: f_t(x, y, 0), a(2), a(3))
        return
    for shapes in [((3,), (3,)), ((2, 3), (2, 3)), ((3,), (2, 3))] if name == 'vstack' else \
            [((3,), (3,)), ((2, 3), (2, 3))]:
        check(lambda *xs: f_tg(list(xs)), lambda *xs: f_t(list(xs)), *[a(*s) for s in shapes])


def test_meshgrid_and_broadcast():
    x, y = a(3), a(4)
    for ix in ('ij', 'xy'):
        check(lambda u, v: tg.meshgrid(u, v, indexing=ix),
              lambda u, v: torch.meshgrid(u, v, indexing=ix), x, y)
    check(lambda u, v: tg.meshgrid([u, v], indexing='ij'),
          lambda u, v: torch.meshgrid([u, v], indexing='ij'), x, y)
    check(lambda u, v: tg.broadcast_tensors(u, v), lambda u, v: torch.broadcast_tensors(u, v),
          a(3, 1), a(4))
    assert tg.broadcast_shapes((3, 1), (4,)) == tuple(torch.broadcast_shapes((3, 1), (4,)))
    for n in (1, 2, 3):
        f_tg, f_t = module_pair(f'atleast_{n}d')
        for s in [(), (3,), (2, 3)]:
            check(f_tg, f_t, a(*s) if s else np.array(1.5))


def test_scatter_family():
    idx = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
    ti, tt = tg.tensor(idx), torch.tensor(idx)
    src = a(2, 4)
    check(lambda x, s: x.scatter(0, ti, s), lambda x, s: x.scatter(0, tt, s), a(3, 5), src)
    check(lambda x: x.scatter(1, ti, 7.5), lambda x: x.scatter(1, tt, 7.5), a(2, 5))
    check(lambda x, s: x.scatter_add(0, ti, s), lambda x, s: x.scatter_add(0, tt, s),
          a(3, 5), src)
    check(lambda x, s: tg.scatter_add(x, 1, ti, s), lambda x, s: torch.scatter_add(x, 1, tt, s),
          a(2, 4), a(2, 4))
    check(lambda x, s: x.scatter(0, ti, s, reduce='add'),
          lambda x, s: x.scatter(0, tt, s, reduce='add'), a(3, 5), src, grad=False)
    v = np.array([2, 0, 2])
    check(lambda x, s: x.index_add(1, tg.tensor(v), s, alpha=2),
          lambda x, s: x.index_add(1, torch.tensor(v), s, alpha=2), a(2, 4), a(2, 3))
    check(lambda x, s: x.index_add(0, tg.tensor(v), s), lambda x, s: x.index_add(0, torch.tensor(v), s),
          a(4), a(3))
    check(lambda x: x.index_fill(1, tg.tensor([0, 2]), -1.0),
          lambda x: x.index_fill(1, torch.tensor([0, 2]), -1.0), a(2, 4))
    check(lambda x, s: x.index_copy(0, tg.tensor([2, 0]), s),
          lambda x, s: x.index_copy(0, torch.tensor([2, 0]), s), a(3, 2), a(2, 2))
    # integer scatter_add keeps the dtype
    check(lambda x, s: x.scatter_add(0, ti, s), lambda x, s: x.scatter_add(0, tt, s),
          ints(3, 4), ints(2, 4))
    with pytest.raises(RuntimeError):
        tg.zeros(2, 3).scatter_add(0, tg.tensor([[5, 0, 0]]), tg.ones(1, 3))
    with pytest.raises(RuntimeError):
        tg.zeros(2, 3).scatter_add(0, tg.tensor([0, 0, 0]), tg.ones(1, 3))


def test_nonzero_and_masks():
    m = ints(3, 4, hi=2)
    check(lambda x: x.nonzero(), lambda x: x.nonzero(), m)
    check(lambda x: tg.nonzero(x, as_tuple=True), lambda x: torch.nonzero(x, as_tuple=True), m)
    check(tg.argwhere, torch.argwhere, m)
    assert tg.nonzero(tg.tensor(m)).dtype == tg.int64


def test_inplace_forms():
    for name, args in [('tril_', ()), ('triu_', (1,)), ('clamp_min_', (0.1,)),
                       ('square_', ()), ('trunc_', ()), ('frac_', ()), ('reciprocal_', ())]:
        x = a(3, 3)
        t1, t2 = tg.tensor(x), torch.tensor(x)
        r1 = getattr(t1, name)(*args)
        getattr(t2, name)(*args)
        assert r1 is t1
        np.testing.assert_allclose(t1.numpy(), t2.numpy(), 1e-6)


def test_shape_errors():
    x = tg.zeros(2, 3)
    for f in [lambda: x.narrow(1, 2, 2),
              lambda: x.rot90(1, [0, 0]), lambda: x.repeat(2), lambda: tg.diag(tg.zeros(2, 2, 2)),
              lambda: tg.dot(tg.zeros(3), tg.zeros(4)),
              lambda: tg.dot(tg.zeros(3), tg.zeros(3, dtype=tg.float64)),
              lambda: tg.outer(x, x), lambda: x.roll((1, 2), 0), lambda: x.flip(0, 0),
              lambda: tg.tensordot(x, x, ([0], [1])), lambda: x.movedim((0, 1), 0)]:
        with pytest.raises(RuntimeError):
            f()
    with pytest.raises(IndexError):  # PyTorch's: its dim -2 is out of range
        tg.tril(tg.zeros(3))
    with pytest.raises(IndexError):
        x.select(0, 2)
    with pytest.raises(IndexError):
        x.movedim(3, 0)


MATH_UNARY = {
    'square': (a(3, 4),), 'reciprocal': (a(3, 4, lo=0.5),), 'trunc': (a(3, 4) * 3,),
    'fix': (a(3, 4) * 3,), 'frac': (a(3, 4) * 3,), 'log1p': (a(3, 4, lo=-0.9),),
    'expm1': (a(3, 4),), 'logit': (a(3, 4, lo=0.05, hi=0.95),), 'cumprod': (a(3, 4), 1),
    'sinh': (a(3, 4),), 'cosh': (a(3, 4),), 'deg2rad': (a(3, 4),), 'rad2deg': (a(3, 4),),
    'isnan': (np.array([1.0, np.nan, np.inf]),), 'isinf': (np.array([1.0, np.nan, -np.inf]),),
    'isfinite': (np.array([1.0, np.nan, -np.inf]),),
    'isposinf': (np.array([1.0, np.inf, -np.inf]),),
    'isneginf': (np.array([1.0, np.inf, -np.inf]),),
    'signbit': (np.array([1.0, -0.0, 0.0, -2.0]),),
}


@pytest.mark.parametrize('name', sorted(MATH_UNARY))
def test_math_unary(name):
    f_tg, f_t = module_pair(name)
    check(f_tg, f_t, *MATH_UNARY[name])
    if name not in ('cumprod',):
        check(lambda x: getattr(x, name)(), lambda x: getattr(x, name)(), *MATH_UNARY[name][:1])


@pytest.mark.parametrize('name,args', [
    ('atan2', (a(3, 4), a(4))), ('hypot', (a(3, 4), a(3, 4))),
    ('logaddexp', (a(3, 4) * 30, a(3, 4))), ('logaddexp2', (a(3, 4), a(3, 1))),
    ('floor_divide', (a(3, 4) * 5, a(3, 4, lo=0.5), 'nograd')), ('lerp', (a(3, 4), a(3, 4), 0.3)),
    ('lerp', (a(3, 4), a(3, 4), a(3, 4))), ('addcmul', (a(3, 4), a(3, 4), a(4))),
    ('addcdiv', (a(3, 4), a(3, 4), a(4, lo=0.5))), ('clamp_min', (a(3, 4), 0.3)),
    ('clamp_max', (a(3, 4), -0.2)), ('clamp', (a(3, 4), a(3, 4) - 1, a(3, 4) + 1)),
    ('diff', (a(3, 5),)), ('float_power', (a(3, lo=0.5), 2.5)),
])
def test_math_binary(name, args):
    f_tg, f_t = module_pair(name)
    grad = not (isinstance(args[-1], str) and args[-1] == 'nograd')
    check(f_tg, f_t, *(args if grad else args[:-1]), grad=grad)


def test_math_variants_and_dtypes():
    check(lambda x: x.addcmul(x, x, value=0.5), lambda x: x.addcmul(x, x, value=0.5), a(3))
    check(lambda x: x.diff(2, 0), lambda x: x.diff(2, 0), a(4, 3))
    p, q = a(3, 1), a(3, 2)
    check(lambda x, y, z: x.diff(dim=1, prepend=y, append=z),
          lambda x, y, z: x.diff(dim=1, prepend=y, append=z), a(3, 4), p, q)
    check(lambda x: x.diff(), lambda x: x.diff(), np.array([True, False, False, True]))
    check(lambda x: x.logit(0.1), lambda x: x.logit(0.1), a(6, lo=0, hi=1))
    check(lambda x: tg.cumprod(x, 0), lambda x: torch.cumprod(x, 0), ints(5, 2).astype(np.int32))
    check(lambda x: x.cumprod(0), lambda x: x.cumprod(0), np.array([2.0, 0.0, 3.0, -1.0, 0.5]))
    check(lambda x: x.reciprocal(), lambda x: x.reciprocal(), ints(4, hi=4) + 1)
    check(lambda x: x.square(), lambda x: x.square(), ints(4))
    check(lambda x, y: x // y, lambda x, y: x // y, np.array([7, -7, 6]), np.array([2, 2, -4]))
    check(lambda x, y: x.isclose(y), lambda x, y: x.isclose(y),
          np.array([1.0, np.nan, np.inf, 1e-9]), np.array([1.0 + 1e-7, np.nan, np.inf, 0.0]))
    check(lambda x, y: x.isclose(y, equal_nan=True), lambda x, y: x.isclose(y, equal_nan=True),
          np.array([1.0, np.nan, 2.0]), np.array([1.0, np.nan, 2.1]))
    e1, e2 = tg.eye(3, 4, dtype=tg.int64), torch.eye(3, 4, dtype=torch.int64)
    np.testing.assert_array_equal(e1.numpy(), e2.numpy())
    assert tg.eye(2).dtype == tg.float32 and tg.get_default_dtype() == tg.float32
    assert tg.isnan(tg.tensor([1, 2])).dtype == tg.bool
    with pytest.raises(RuntimeError):
        tg.clamp(tg.zeros(2))
    with pytest.raises(RuntimeError):
        tg.isclose(tg.zeros(2), tg.zeros(2, dtype=tg.float64))
    with pytest.raises(RuntimeError):
        tg.frac(tg.tensor([1, 2]))


def test_log1p_expm1_precision():
    x = np.array([1e-30, -1e-20, 1e-10, 3e-8, -4e-6, 1e-4, 0.3, -0.5, 5.0, 50.0],
                 dtype=np.float32)
    for name in ('log1p', 'expm1'):
        got = getattr(tg, name)(tg.tensor(x)).numpy()
        want = getattr(torch, name)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)
    xd = x.astype(np.float64)
    np.testing.assert_allclose(tg.log1p(tg.tensor(xd)).numpy(), np.log1p(xd), rtol=4e-16)
    np.testing.assert_allclose(tg.expm1(tg.tensor(xd)).numpy(), np.expm1(xd), rtol=4e-16)
    # second derivatives run through the composed backward
    t = tg.tensor([0.5, 2.0], dtype=tg.float64, requires_grad=True)
    g, = tg.autograd.grad(tg.log1p(t).sum(), t, create_graph=True)
    g2, = tg.autograd.grad(g.sum(), t)
    np.testing.assert_allclose(g2.numpy(), -1 / (1 + t.detach().numpy()) ** 2)


def test_tensor_methods_misc():
    x = tg.zeros(2, 3)
    assert x.type() == 'torch.FloatTensor' and tg.zeros(1, dtype=tg.int64).type() == \
        'torch.LongTensor'
    assert x.type(tg.float64).dtype == tg.float64
    assert x.type('torch.IntTensor').dtype == tg.int32
    assert x.nbytes == 24 and x.itemsize == 4 and x.ndimension() == 2
    assert not x.is_complex() and not tg.is_complex(x)
    e = x.new_empty((4,))
    assert e.shape == (4,) and e.dtype == tg.float32
    y = tg.zeros(1, 3, 1)
    assert y.squeeze_() is y and y.shape == (3,)
    y.unsqueeze_(0)
    assert y.shape == (1, 3)
    y.t_()
    assert y.shape == (3, 1)
    y.transpose_(0, 1)
    assert y.shape == (1, 3)
    w = tg.ones(2, requires_grad=True)
    z = w * 2
    z.detach_()
    assert not z.requires_grad and z.is_leaf and z.grad_fn is None
    # storage is shared with numpy views taken before the change
    v = tg.arange(6).reshape(2, 3)
    arr = v.numpy()
    v.t_()
    arr[0, 1] = 100
    assert v[1, 0].item() == 100


def test_grad_assignment():
    x = tg.ones(3, requires_grad=True)
    g = tg.tensor([1.0, 2.0, 3.0])
    x.grad = g
    (x * 2).sum().backward()
    np.testing.assert_array_equal(g.numpy(), [3, 4, 5])  # accumulated into g itself
    with pytest.raises(RuntimeError):
        x.grad = tg.zeros(2)
    with pytest.raises(TypeError):
        x.grad = 3


def test_hooks_against_torch():
    data = a(3)
    for lib in (tg, torch):
        pass
    results = []
    for lib in (tg, torch):
        x = lib.tensor(data, requires_grad=True)
        seen = []
        y = x * x
        hy = y.register_hook(lambda g: seen.append(g.detach().numpy().copy()) or g * 3)
        x.register_hook(lambda g: g + 1)
        z = y.exp()
        z.retain_grad()
        (z.sum() + y.sum()).backward(retain_graph=True)
        results.append((x.grad.numpy().copy(), seen[0], z.grad.numpy().copy(), z.retains_grad))
        hy.remove()
        x.grad = None
        (y * 2).sum().backward()
        results.append(x.grad.numpy().copy())
    (ga, sa, za, ra), gb2, (gt, st, zt, rt), gt2 = results
    np.testing.assert_allclose(ga, gt)
    np.testing.assert_allclose(sa, st)
    np.testing.assert_allclose(za, zt)
    np.testing.assert_allclose(gb2, gt2)
    assert ra and rt
    # autograd.grad passes a hooked leaf's gradient through its hooks
    x = tg.tensor(data, requires_grad=True)
    x.register_hook(lambda g: g * 0 + 5)
    g, = tg.autograd.grad((x * x).sum(), x)
    np.testing.assert_array_equal(g.numpy(), 5)
    with pytest.raises(RuntimeError):
        tg.zeros(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError):
        tg.zeros(2).retain_grad()


def test_composites_in_graphs():
    """the composed functions trace into tg.function graphs (values and
    gradients as in eager mode)"""
    fns = [lambda x: tg.tril(x, -1), lambda x: x.flip(0).roll(1, 1), lambda x: tg.diag(x),
           lambda x: tg.log1p(x.abs()), lambda x: tg.expm1(x), lambda x: x.cumprod(1),
           lambda x: x.scatter_add(0, tg.tensor([[0, 1, 0, 1]]), x[:1] * 2),
           lambda x: tg.hypot(x, x.t()), lambda x: tg.logaddexp(x, -x)]
    data = a(4, 4)
    for fn in fns:
        x1 = tg.tensor(data, requires_grad=True)
        x2 = tg.tensor(data, requires_grad=True)
        y1, y2 = fn(x1), tg.function(fn)(x2)
        np.testing.assert_allclose(y2.detach().numpy(), y1.detach().numpy(), 1e-12, 1e-12)
        y1.sum().backward()
        y2.sum().backward()
        np.testing.assert_allclose(x2.grad.numpy(), x1.grad.numpy(), 1e-10, 1e-12)
