"""PyTorch names closed after a dir(torch) scan, compared with PyTorch:
the torch-level in-place functions (torch.relu_(x) & co.: value, identity,
gradient through a non-leaf, the leaf error), the functional in-place and
dropout forms, top-level losses with the integer reduction enum, window
functions, range, gradient, frexp, frombuffer, asarray, empty_strided,
Tensor.H / mH / adjoint, new, the samplers' moments and dtype rules, and
the special functions as methods."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import close, needs_torch, torch

pytestmark = needs_torch


def _unit(shape=(3, 4), lo=0.1, hi=0.9, seed=0):
    return np.random.RandomState(seed).uniform(lo, hi, shape)


# name: (input array, args as (tg args, torch args) maker, differentiable)
def _same(*a):
    return lambda m: a


def _other(lo=0.2, hi=0.8):
    return lambda m: (m.tensor(_unit(lo=lo, hi=hi, seed=1), dtype=m.float64),)


_UNARY = ('relu_ sigmoid_ tanh_ abs_ neg_ negative_ exp_ exp2_ expm1_ log_ log2_ log10_ '
          'log1p_ sqrt_ rsqrt_ reciprocal_ sin_ cos_ tan_ asin_ acos_ atan_ arcsin_ arccos_ '
          'arctan_ sinh_ cosh_ asinh_ atanh_ arcsinh_ arctanh_ ceil_ floor_ round_ trunc_ '
          'fix_ frac_ sinc_ square_ erf_ erfc_ deg2rad_ rad2deg_ i0_').split()
INPLACE = {n: (_unit(), _same(), True) for n in _UNARY}
INPLACE.update({
    'acosh_': (_unit(lo=1.1, hi=3.0), _same(), True),
    'arccosh_': (_unit(lo=1.1, hi=3.0), _same(), True),
    'clamp_': (_unit(), _same(0.3, 0.6), True),
    'clip_': (_unit(), _same(0.3, 0.6), True),
    'clamp_min_': (_unit(), _same(0.4), True),
    'clamp_max_': (_unit(), _same(0.4), True),
    'logit_': (_unit(), _same(), True),
    'nan_to_num_': (_unit(), _same(0.0), True),
    'xlogy_': (_unit(), _other(), True),
    'ldexp_': (_unit(), lambda m: (m.tensor([[1, 2, -1, 0]] * 3),), False),
    'fill_': (_unit(), _same(2.5), True),
    'zero_': (_unit(), _same(), True),
    'detach_': (_unit(), _same(), False),
    'index_put_': (_unit(), lambda m: ((m.tensor([0, 2]), m.tensor([1, 3])),
                                       m.tensor([5.0, 6.0], dtype=m.float64)), True),
    'threshold_': (_unit(), _same(0.5, -1.0), True),
    'selu_': (_unit(lo=-1, hi=1), _same(), True),
    'celu_': (_unit(lo=-1, hi=1), _same(0.7), True),
    'rrelu_': (_unit(lo=-1, hi=1), _same(0.1, 0.3, False), True),
})


@pytest.mark.parametrize('name', sorted(INPLACE))
def test_torch_level_inplace(name):
    data, args, diff = INPLACE[name]
    a = tg.tensor(data, dtype=tg.float64, requires_grad=diff)
    b = torch.tensor(data, dtype=torch.float64, requires_grad=diff)
    ya, yb = a * 1, b * 1  # non-leaves: in-place allowed, history rewritten
    ra = getattr(tg, name)(ya, *args(tg))
    if name in ('acosh_', 'arccosh_', 'asinh_', 'arcsinh_', 'atanh_', 'arctanh_'):
        yb = getattr(torch, name[:-1])(yb)  # torch 1.13 has no in-place derivative for these
    else:
        assert getattr(torch, name)(yb, *args(torch)) is yb
    assert ra is ya  # the same tensor object, as PyTorch's
    tol = 1e-7 if name == 'celu_' else 1e-10  # celu's C kernel: exp to ~1e-8 relative
    close(ya, yb.detach().numpy(), tol, 1e-12)
    assert ya.dtype == tg.float64 and ya.shape == tuple(yb.shape)
    if diff:
        w = _unit(seed=2)
        (ya * tg.tensor(w)).sum().backward()
        (yb * torch.tensor(w)).sum().backward()
        close(a.grad, b.grad.numpy(), tol, 1e-12)
    if name != 'detach_':  # a leaf that requires grad refuses in-place ops
        leaf = tg.tensor(data, requires_grad=True)
        with pytest.raises(RuntimeError, match='a leaf Variable that requires grad'):
            getattr(tg, name)(leaf, *args(tg))


def test_torch_level_inplace_int_and_errors():
    for name, o in (('gcd_', [4, 6, 9]), ('lcm_', [4, 6, 9])):
        x, y = tg.tensor([6, 4, 12]), torch.tensor([6, 4, 12])
        assert getattr(tg, name)(x, tg.tensor(o)) is x
        getattr(torch, name)(y, torch.tensor(o))
        assert x.tolist() == y.tolist() and x.dtype == tg.int64
    with pytest.raises(TypeError, match=r"relu_\(\): argument 'input' \(position 1\) must be "
                       r"Tensor, not int"):
        tg.relu_(3)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tg.sqrt_(tg.tensor([4, 9]))  # an int tensor cannot hold sqrt's floats


def test_detach_and_is_inference():
    x = tg.ones(3, requires_grad=True)
    y = tg.detach(x * 2)
    assert not y.requires_grad and y.tolist() == [2.0, 2.0, 2.0]
    assert tg.is_inference(x) is False and x.is_inference() is False
    assert x.output_nr == 0 and (x * 2).output_nr == 0


def test_dropouts_torch_level():
    x = tg.ones(4, 5, 6)
    assert tg.dropout_(x, 0.5, False) is x and x.tolist() == tg.ones(4, 5, 6).tolist()
    assert tg.dropout_(x, 0.5, True) is x
    vals = set(np.unique(x.numpy()).tolist())
    assert vals <= {0.0, 2.0} and vals == {0.0, 2.0}
    # feature dropout: one draw per (sample, channel), kept ones scaled by 1 / (1 - p)
    y = tg.feature_dropout(tg.ones(8, 50, 3), 0.25, True)
    per_channel = y.numpy()
    assert (per_channel == per_channel[:, :, :1]).all()
    assert set(np.unique(per_channel).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert 0.6 < (per_channel[:, :, 0] > 0).mean() < 0.9
    z = tg.ones(2, 3)
    assert tg.feature_dropout_(z, 1.0, True) is z and z.sum().item() == 0
    assert tg.feature_dropout(z, 0.5, False) is z
    with pytest.raises(RuntimeError, match='Feature dropout requires at least 2 dimensions'):
        tg.feature_dropout(tg.ones(5), 0.5, True)
    with pytest.raises(RuntimeError, match='dropout probability has to be between 0 and 1'):
        tg.feature_dropout(tg.ones(5, 2), 1.5, True)
    # alpha dropouts: identity when not training, SELU's saturation kept otherwise
    u = tg.randn(100, 20)
    assert tg.alpha_dropout(u, 0.5, False) is u and tg.feature_alpha_dropout(u, 0.5, False) is u
    v = u.clone()
    assert tg.alpha_dropout_(v, 0.2, True) is v
    assert tg.feature_alpha_dropout_(v, 0.2, True) is v
    r = tg.feature_alpha_dropout(tg.zeros(50, 4, 3), 0.5, True).numpy()
    assert (r == r[:, :, :1]).all() and len(np.unique(r)) == 2


def test_rrelu_eval_matches_torch():
    data = _unit(lo=-1, hi=1)
    a, b = tg.tensor(data), torch.tensor(data)
    close(tg.rrelu(a), torch.rrelu(b).numpy(), 1e-12, 1e-12)
    r = tg.rrelu(a, 0.1, 0.3, True).numpy()  # training: slopes drawn from U(0.1, 0.3)
    neg = data < 0
    assert np.allclose(r[~neg], data[~neg])
    slope = r[neg] / data[neg]
    assert (slope >= 0.1 - 1e-12).all() and (slope <= 0.3 + 1e-12).all()


# -- losses and layers at top level ---------------------------------------------

def _pairs(*shapes, seed=0):
    rs = np.random.RandomState(seed)
    out = []
    for s in shapes:
        d = rs.randn(*s)
        out.append((tg.tensor(d, requires_grad=True),
                    torch.tensor(d, requires_grad=True)))
    return out


@pytest.mark.parametrize('reduction', [0, 1, 2])
def test_top_level_losses(reduction):
    (x1, t1), (x2, t2) = _pairs((4, 5), (4, 5))
    sign = np.array([1.0, -1.0, 1.0, -1.0])
    cases = [
        ('cosine_embedding_loss', (x1, x2, tg.tensor(sign), 0.1), (t1, t2, torch.tensor(sign),
                                                                   0.1)),
        ('hinge_embedding_loss', (x1, tg.tensor(np.sign(x2.detach().numpy())), 0.5),
         (t1, torch.tensor(np.sign(x2.detach().numpy())), 0.5)),
        ('margin_ranking_loss', (x1[:, 0], x2[:, 0], tg.tensor(sign), 0.2),
         (t1[:, 0], t2[:, 0], torch.tensor(sign), 0.2)),
        ('triplet_margin_loss', (x1, x2, x1 * 0.5, 1.0, 2, 1e-6, True),
         (t1, t2, t1 * 0.5, 1.0, 2, 1e-6, True)),
        ('poisson_nll_loss', (x1, x2.abs(), True, True, 1e-8), (t1, t2.abs(), True, True, 1e-8)),
        ('kl_div', (x1, x2.exp()), (t1, t2.exp())),
    ]
    for name, ta, tt in cases:
        ra = getattr(tg, name)(*ta, reduction=reduction)
        rb = getattr(torch, name)(*tt, reduction=reduction)
        close(ra, rb.detach().numpy(), 1e-10, 1e-12)
        ga = tg.autograd.grad(ra.sum(), [x1, x2], allow_unused=True)
        gb = torch.autograd.grad(rb.sum(), [t1, t2], allow_unused=True)
        for g, h in zip(ga, gb):
            assert (g is None) == (h is None)
            if h is not None:
                close(g, h.numpy(), 1e-9, 1e-12)
    # log_target is keyword-only in torch.kl_div
    close(tg.kl_div(x1, x2, reduction, log_target=True),
          torch.kl_div(t1, t2, reduction, log_target=True).detach().numpy(), 1e-10, 1e-12)


def test_top_level_losses_do_not_reduce_by_default():
    """PyTorch 1.13's top-level losses (its Python binding) return the
    elementwise losses unless a reduction is given; F's forms take 'mean'"""
    a, b = tg.randn(4, 3), tg.rand(4, 3)
    y = tg.tensor([1.0, -1.0, 1.0, -1.0])
    assert tg.kl_div(a, b).shape == (4, 3)
    assert tg.hinge_embedding_loss(a, b).shape == (4, 3)
    assert tg.binary_cross_entropy_with_logits(a, b).shape == (4, 3)
    assert tg.binary_cross_entropy_with_logits(a, b, None, None, 1).shape == ()
    assert tg.margin_ranking_loss(a[:, 0], b[:, 0], y).shape == (4,)
    assert tg.cosine_embedding_loss(a, b, y).shape == (4,)
    assert tg.triplet_margin_loss(a, b, b).shape == (4,)
    assert tg.nn.functional.kl_div(a, b).shape == ()
    if torch is not None:
        ta, tb, ty = (torch.tensor(v.numpy()) for v in (a, b, y))
        for name, args, targs in (('kl_div', (a, b), (ta, tb)),
                                  ('binary_cross_entropy_with_logits', (a, b), (ta, tb)),
                                  ('cosine_embedding_loss', (a, b, y), (ta, tb, ty))):
            close(getattr(tg, name)(*args), getattr(torch, name)(*targs).numpy(), 1e-6, 1e-7)


def test_reduction_enum_errors():
    x = tg.ones(3)
    with pytest.raises(TypeError, match="argument 'reduction' must be int"):
        tg.kl_div(x, x, 'mean')
    with pytest.raises(TypeError, match="argument 'reduction' must be int, not bool"):
        tg.kl_div(x, x, True)
    # values past at::Reduction's leave the loss unreduced, as ATen's
    assert tg.hinge_embedding_loss(x, x, 1.0, 5).shape == (3,)
    assert tg.kl_div(x, x, -1).shape == (3,)


def test_ctc_loss_top_level():
    rs = np.random.RandomState(0)
    lp = rs.randn(12, 2, 5)
    a = tg.tensor(lp, requires_grad=True)
    b = torch.tensor(lp, requires_grad=True)
    tgts = [[1, 2, 2], [3, 1, 4]]
    il, tl = [12, 10], [3, 2]
    for red in (0, 1, 2):
        ra = tg.ctc_loss(a.log_softmax(2), tg.tensor(tgts), il, tl, 0, red, False)
        rb = torch.ctc_loss(b.log_softmax(2), torch.tensor(tgts), il, tl, 0, red, False)
        close(ra, rb.detach().numpy(), 1e-8, 1e-10)
    ra.backward()
    rb.backward()
    close(a.grad, b.grad.numpy(), 1e-7, 1e-9)


def test_bilinear_instance_norm_pad_shuffle():
    (x1, t1), (x2, t2), (w, tw), (bias, tb) = _pairs((3, 4), (3, 5), (2, 4, 5), (2,))
    ra, rb = tg.bilinear(x1, x2, w, bias), torch.bilinear(t1, t2, tw, tb)
    close(ra, rb.detach().numpy(), 1e-10, 1e-12)
    ra.sum().backward()
    rb.sum().backward()
    for p, q in ((x1, t1), (x2, t2), (w, tw), (bias, tb)):
        close(p.grad, q.grad.numpy(), 1e-10, 1e-12)
    (x, tx), (g, tg_), (bb, tbb) = _pairs((2, 3, 5, 4), (3,), (3,))
    ra = tg.instance_norm(x, g, bb, None, None, True, 0.1, 1e-5, False)
    rb = torch.instance_norm(tx, tg_, tbb, None, None, True, 0.1, 1e-5, False)
    close(ra, rb.detach().numpy(), 1e-8, 1e-10)
    d = np.arange(24.0).reshape(2, 3, 4)
    for pad, value in (((1, 2), 0), ((1, 1, 0, 2), -1.5), ((-1, 1), 0), ((0, 0, 0, 0, 1, 1), 2)):
        close(tg.constant_pad_nd(tg.tensor(d), pad, value),
              torch.constant_pad_nd(torch.tensor(d), pad, value).numpy())
    with pytest.raises(RuntimeError, match='Length of pad must be even'):
        tg.constant_pad_nd(tg.tensor(d), (1, 2, 3))
    with pytest.raises(RuntimeError, match='Length of pad should be no more than twice'):
        tg.constant_pad_nd(tg.tensor(d), (1,) * 8)
    e = np.arange(2 * 6 * 2.0).reshape(2, 6, 2)
    close(tg.channel_shuffle(tg.tensor(e), 3), torch.channel_shuffle(torch.tensor(e), 3).numpy())


# -- windows -------------------------------------------------------------------------

WINDOWS = {'hann_window': (), 'hamming_window': (), 'blackman_window': (),
           'bartlett_window': (), 'kaiser_window': ()}


@pytest.mark.parametrize('name', sorted(WINDOWS))
def test_windows(name):
    for n in (0, 1, 2, 3, 5, 8, 13):
        for periodic in (True, False):
            a = getattr(tg, name)(n, periodic)
            b = getattr(torch, name)(n, periodic)
            assert a.dtype == tg.float32 and a.shape == tuple(b.shape)
            close(a, b.numpy(), 1e-5, 2e-6)
            a = getattr(tg, name)(n, periodic, dtype=tg.float64)
            b = getattr(torch, name)(n, periodic, dtype=torch.float64)
            assert a.dtype == tg.float64
            close(a, b.numpy(), 1e-12, 1e-12)
    assert getattr(tg, name)(4, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match=f'{name} requires non-negative window_length, got '
                       'window_length=-1'):
        getattr(tg, name)(-1)
    with pytest.raises(RuntimeError, match=f'{name} expects floating point dtypes'):
        getattr(tg, name)(4, dtype=tg.int64)


def test_window_parameters():
    close(tg.hamming_window(7, False, 0.6, 0.4), torch.hamming_window(7, False, 0.6, 0.4).numpy())
    for beta in (0.0, 2.5, 8.0):
        close(tg.kaiser_window(9, True, beta, dtype=tg.float64),
              torch.kaiser_window(9, True, beta, dtype=torch.float64).numpy(), 1e-12, 1e-12)


# -- creation ----------------------------------------------------------------------------

def test_range_inclusive_and_deprecated():
    cases = [(1, 4), (0, 1, 0.25), (5, 1, -2), (0, 3)]
    for args in cases:
        with pytest.warns(UserWarning, match='torch.range is deprecated'):
            a = tg.range(*args)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            b = torch.range(*args)
        assert a.dtype == tg.float32
        close(a, b.numpy())
    with pytest.warns(UserWarning):
        c = tg.range(0, 3, dtype=tg.int64)
    assert c.dtype == tg.int64 and c.tolist() == [0, 1, 2, 3]
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match='upper bound and larger'):
        tg.range(3, 0)


def test_empty_strided():
    t = tg.empty_strided((2, 3), (3, 1))
    assert t.shape == (2, 3) and t.stride() == (3, 1) and t.dtype == tg.float32
    t = tg.empty_strided((2, 3), (1, 2), dtype=tg.float64)
    assert t.stride() == (1, 2) and t.dtype == tg.float64
    assert tuple(torch.empty_strided((2, 3), (1, 2)).stride()) == t.stride()
    with pytest.raises(NotImplementedError, match='not a dense layout'):
        tg.empty_strided((2, 3), (0, 1))
    with pytest.raises(RuntimeError, match='mismatch in length of strides and shape'):
        tg.empty_strided((2, 3), (1,))


def test_frombuffer():
    buf = bytearray(np.arange(6, dtype=np.int32).tobytes())
    a = tg.frombuffer(buf, dtype=tg.int32)
    b = torch.frombuffer(bytearray(buf), dtype=torch.int32)
    assert a.tolist() == b.tolist() and a.dtype == tg.int32
    a = tg.frombuffer(buf, dtype=tg.int32, count=2, offset=8)
    b = torch.frombuffer(bytearray(buf), dtype=torch.int32, count=2, offset=8)
    assert a.tolist() == b.tolist() == [2, 3]
    f = tg.frombuffer(np.array([1.5, 2.5]).tobytes(), dtype=tg.float64, requires_grad=True)
    assert f.requires_grad and f.tolist() == [1.5, 2.5]
    with pytest.raises(ValueError, match='must be a multiple of element size'):
        tg.frombuffer(bytearray(7), dtype=tg.int32)
    with pytest.raises(ValueError, match='must not be greater than actual buffer length'):
        tg.frombuffer(buf, dtype=tg.int32, count=10)
    with pytest.raises(ValueError, match='must not be 0'):
        tg.frombuffer(bytearray(), dtype=tg.uint8)


def test_asarray():
    x = tg.tensor([1.0, 2.0])
    assert tg.asarray(x) is x
    assert tg.asarray(x, dtype=tg.float32) is x
    y = tg.asarray(x, copy=True)
    assert y is not x and y.tolist() == x.tolist()
    z = tg.asarray(x, dtype=tg.float64)
    assert z.dtype == tg.float64
    with pytest.raises(ValueError):
        tg.asarray(x, dtype=tg.float64, copy=False)
    for obj in ([1, 2, 3], [1.5, 2.0], 3.0, np.arange(3, dtype=np.int32), [[True, False]]):
        a, b = tg.asarray(obj), torch.asarray(obj)
        assert str(a.dtype).split('.')[-1] == str(b.dtype).split('.')[-1]
        assert a.tolist() == b.tolist()
    assert tg.asarray([1.0], requires_grad=True).requires_grad
    assert tg.asarray([1.0], dtype=tg.float64).dtype == tg.float64


# -- gradient --------------------------------------------------------------------------

def test_gradient_matches_torch():
    d = np.random.RandomState(0).randn(5, 6)
    a, b = tg.tensor(d), torch.tensor(d)
    kw_cases = [{}, {'spacing': 2.0}, {'dim': 1}, {'dim': -1, 'edge_order': 2},
                {'spacing': [0.5, 3.0]}, {'edge_order': 2, 'spacing': (1.5, 0.5)},
                {'spacing': (1.5,), 'dim': 0}]
    for kw in kw_cases:
        kb = dict(kw, dim=[kw['dim']]) if 'dim' in kw else kw  # (torch's int dim overload
        ra, rb = tg.gradient(a, **kw), torch.gradient(b, **kb)  # can misfire under pytest)
        assert len(ra) == len(rb)
        for p, q in zip(ra, rb):
            close(p, q.numpy(), 1e-12, 1e-12)
    coords = np.cumsum(np.random.RandomState(1).uniform(0.5, 1.5, 6))
    for order in (1, 2):
        ra = tg.gradient(a, spacing=(tg.tensor(coords),), dim=1, edge_order=order)
        rb = torch.gradient(b, spacing=(torch.tensor(coords),), dim=[1], edge_order=order)
        close(ra[0], rb[0].numpy(), 1e-10, 1e-12)
    x = tg.tensor(d, requires_grad=True)
    tx = torch.tensor(d, requires_grad=True)
    tg.gradient(x, dim=0)[0].pow(2).sum().backward()
    torch.gradient(tx, dim=[0])[0].pow(2).sum().backward()
    close(x.grad, tx.grad.numpy(), 1e-10, 1e-12)
    ints = tg.gradient(tg.tensor([1, 4, 9, 16]))[0]
    assert ints.dtype == tg.float32 and ints.tolist() == [3.0, 4.0, 6.0, 7.0]
    with pytest.raises(RuntimeError, match='edge_order=1 and edge_order=2'):
        tg.gradient(a, edge_order=3)
    with pytest.raises(RuntimeError, match='at least edge_order\\+1'):
        tg.gradient(tg.ones(2), edge_order=2)
    with pytest.raises(IndexError, match='Dimension out of range'):
        tg.gradient(a, dim=2)
    # (torch 1.13 reads past a short spacing list and returns inf; later versions raise)
    with pytest.raises(RuntimeError, match='torch.gradient expected spacing to be unspecified, '
                       'a scalar or'):
        tg.gradient(a, spacing=[1.5])


# -- Tensor methods ------------------------------------------------------------------------

def test_conjugate_transposes():
    d = np.arange(24.0).reshape(2, 3, 4)
    x, t = tg.tensor(d), torch.tensor(d)
    close(x[0].H, t[0].H.numpy())
    close(x.mH, t.mH.numpy())
    close(x.adjoint(), t.adjoint().numpy())
    close(tg.adjoint(x), torch.adjoint(t).numpy())
    assert tg.tensor(2.0).H.item() == 2.0 and tg.tensor(2.0).H.shape == ()
    with pytest.raises(RuntimeError, match=r'tensor.H is only supported on matrices \(2-D '
                       r'tensors\). Got 1-D tensor.$'):
        tg.ones(3).H
    with pytest.raises(RuntimeError, match='Got 3-D tensor. For batches of matrices, consider '
                       'using tensor.mH'):
        x.H
    with pytest.raises(RuntimeError, match='tensor.mH is only supported on matrices or batches'):
        tg.ones(3).mH
    with pytest.raises(RuntimeError, match=r'tensor.adjoint\(\) is only supported on matrices'):
        tg.ones(3).adjoint()
    # gradients flow through the transposes
    w = tg.tensor(d[0], requires_grad=True)
    (w.H * tg.tensor(np.arange(12.0).reshape(4, 3))).sum().backward()
    close(w.grad, np.arange(12.0).reshape(4, 3).T)


def test_conj_neg_bits():
    x = tg.ones(3)
    assert x.resolve_conj() is x and x.resolve_neg() is x and x.conj_physical() is x
    assert tg.resolve_conj(x) is x and tg.resolve_neg(x) is x and tg.conj_physical(x) is x
    assert x.is_neg() is False and tg.is_neg(x) is False
    assert x.conj_physical_() is x and tg.conj_physical_(x) is x


@pytest.mark.parametrize('name', ['half', 'bfloat16', 'short', 'char'])
def test_missing_dtypes_raise(name):
    with pytest.raises(TypeError, match='tensorgraph has no'):
        getattr(tg.ones(2), name)()


def test_legacy_new():
    x = tg.ones(2, dtype=tg.float64)
    e = x.new()
    assert e.shape == (0,) and e.dtype == tg.float64
    z = x.new(2, 3)
    assert z.shape == (2, 3) and z.dtype == tg.float64
    assert x.new(tg.Size([4])).shape == (4,)
    d = x.new([1, 2])
    assert d.dtype == tg.float64 and d.tolist() == [1.0, 2.0]
    assert x.new(x) is x
    i = tg.tensor([1, 2]).new((2, 3))
    assert i.tolist() == torch.tensor([1, 2]).new((2, 3)).tolist() and i.dtype == tg.int64


def test_narrow_copy_and_float_power_and_renorm_():
    d = np.arange(12.0).reshape(3, 4)
    x = tg.tensor(d)
    n = x.narrow_copy(1, 1, 2)
    assert n.tolist() == torch.tensor(d).narrow_copy(1, 1, 2).tolist()
    n[0, 0] = 100.0  # a copy, not a view
    assert x[0, 1].item() == 1.0
    assert tg.narrow_copy(x, 0, 1, 1).tolist() == [d[1].tolist()]
    y = tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64)
    assert y.float_power_(2) is y and y.tolist() == [1.0, 4.0, 9.0]
    with pytest.raises(RuntimeError, match='the base given to float_power_ has dtype Float but '
                       "the operation's result requires dtype Double"):
        tg.tensor([1.0, 2.0]).float_power_(2)
    a = tg.tensor(d, requires_grad=True)
    b = torch.tensor(d, requires_grad=True)
    ya, yb = a * 1, b * 1
    assert ya.renorm_(2, 0, 5.0) is ya
    yb.renorm_(2, 0, 5.0)
    close(ya, yb.detach().numpy(), 1e-12, 1e-12)
    ya.sum().backward()
    yb.sum().backward()
    close(a.grad, b.grad.numpy(), 1e-10, 1e-12)


# -- samplers: moments, ranges and dtype rules ----------------------------------------------

N = 200000


def test_exponential_():
    x = tg.empty(N, dtype=tg.float64)
    assert x.exponential_(2.0) is x
    v = x.numpy()
    assert v.min() >= 0 and abs(v.mean() - 0.5) < 0.01 and abs(v.var() - 0.25) < 0.01
    assert tg.empty(4).exponential_().dtype == tg.float32
    with pytest.raises(RuntimeError, match="\"exponential_cpu\" not implemented for 'Long'"):
        tg.zeros(3, dtype=tg.int64).exponential_()
    with pytest.raises(RuntimeError, match='exponential_ expects lambda >= 0.0, but found '
                       'lambda=-1'):
        tg.zeros(3).exponential_(-1)
    with pytest.raises(RuntimeError, match='a leaf Variable that requires grad'):
        tg.zeros(3, requires_grad=True).exponential_()


def test_geometric_():
    x = tg.empty(N, dtype=tg.float64).geometric_(0.3)
    v = x.numpy()
    assert v.min() >= 1 and (v == np.round(v)).all()
    assert abs(v.mean() - 1 / 0.3) < 0.03 and abs(v.var() - 0.7 / 0.09) < 0.3
    i = tg.zeros(1000, dtype=tg.int64).geometric_(0.5)
    assert i.dtype == tg.int64 and i.min().item() >= 1
    assert tg.zeros(10, dtype=tg.uint8).geometric_(0.5).min().item() >= 1
    with pytest.raises(RuntimeError, match="\"geometric_cpu\" not implemented for 'Bool'"):
        tg.zeros(3, dtype=tg.bool).geometric_(0.5)
    for p in (0, 1, 1.5):
        with pytest.raises(RuntimeError, match='geometric_ expects p to be in \\(0, 1\\)'):
            tg.zeros(3).geometric_(p)


def test_cauchy_():
    v = tg.empty(N, dtype=tg.float64).cauchy_(1.0, 2.0).numpy()
    # median 1, quartiles at 1 -+ 2
    assert abs(np.median(v) - 1.0) < 0.05
    q1, q3 = np.percentile(v, [25, 75])
    assert abs(q1 + 1.0) < 0.06 and abs(q3 - 3.0) < 0.06
    with pytest.raises(RuntimeError, match="\"cauchy_cpu\" not implemented for 'Int'"):
        tg.zeros(3, dtype=tg.int32).cauchy_()


def test_log_normal_():
    v = tg.empty(N, dtype=tg.float64).log_normal_(0.5, 0.4).numpy()
    assert v.min() > 0
    lv = np.log(v)
    assert abs(lv.mean() - 0.5) < 0.01 and abs(lv.std() - 0.4) < 0.01
    with pytest.raises(RuntimeError, match='log_normal_ expects std > 0.0, but found std=0'):
        tg.zeros(3).log_normal_(1, 0)
    with pytest.raises(RuntimeError, match="\"log_normal_cpu\" not implemented for 'Byte'"):
        tg.zeros(3, dtype=tg.uint8).log_normal_()


def test_random_():
    v = tg.empty(N, dtype=tg.float64).random_(2, 7).numpy()
    assert set(np.unique(v).tolist()) == {2.0, 3.0, 4.0, 5.0, 6.0}
    assert abs(v.mean() - 4.0) < 0.02
    w = tg.zeros(N, dtype=tg.int64).random_(10)
    assert w.dtype == tg.int64 and w.min().item() == 0 and w.max().item() == 9
    f = tg.zeros(N).random_().numpy()
    assert f.min() >= 0 and f.max() <= 2 ** 24 and f.max() > 2 ** 23 and (f == np.round(f)).all()
    u8 = tg.zeros(N, dtype=tg.uint8).random_()
    assert u8.min().item() == 0 and u8.max().item() == 255
    b = tg.zeros(1000, dtype=tg.bool).random_()
    assert set(b.tolist()) == {False, True}
    big = tg.zeros(1000, dtype=tg.int64).random_().numpy()
    assert big.min() >= 0 and big.max() > 2 ** 60
    assert tg.zeros(5, dtype=tg.int64).random_(-3, -1).max().item() <= -2
    assert tg.zeros(100, dtype=tg.int64).random_(to=3, **{'from': 1}).min().item() >= 1
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but "
                       "got from=5 >= to=2"):
        tg.zeros(3).random_(5, 2)
    with pytest.raises(RuntimeError, match='to - 1 is out of bounds for unsigned char'):
        tg.zeros(3, dtype=tg.uint8).random_(0, 300)
    with pytest.raises(RuntimeError, match='to - 1 is out of bounds for bool'):
        tg.zeros(3, dtype=tg.bool).random_(5)


def test_samplers_follow_the_generator():
    g = tg.Generator().manual_seed(7) if hasattr(tg.Generator(), 'manual_seed') else None
    tg.manual_seed(3)
    a = tg.empty(10).exponential_()
    tg.manual_seed(3)
    b = tg.empty(10).exponential_()
    assert a.tolist() == b.tolist()
    if g is not None:
        c = tg.empty(10).cauchy_(generator=tg.Generator().manual_seed(7))
        d = tg.empty(10).cauchy_(generator=tg.Generator().manual_seed(7))
        assert c.tolist() == d.tolist()


def test_poisson_and_binomial():
    rates = tg.tensor([0.0, 0.5, 4.0, 50.0, 1000.0], dtype=tg.float64).repeat(40000, 1)
    r = tg.poisson(rates).numpy()
    assert r.dtype == np.float64 and (r == np.round(r)).all() and r.min() >= 0
    lam = np.array([0.0, 0.5, 4.0, 50.0, 1000.0])
    assert np.allclose(r.mean(0), lam, rtol=0.01, atol=0.01)
    assert np.allclose(r.var(0), lam, rtol=0.05, atol=0.01)
    assert tg.poisson(tg.ones(3)).dtype == tg.float32
    with pytest.raises(RuntimeError, match='invalid Poisson rate'):
        tg.poisson(tg.tensor([-1.0]))
    with pytest.raises(RuntimeError, match="\"poisson_cpu\" not implemented for 'Long'"):
        tg.poisson(tg.tensor([1]))
    n = tg.tensor([[10.0, 100.0, 20.0, 5000.0]]).repeat(40000, 1)
    p = tg.tensor([0.3, 0.9, 0.0, 0.5])
    b = tg.binomial(n, p).numpy()
    nn_, pp = np.array([10, 100, 20, 5000.0]), np.array([0.3, 0.9, 0.0, 0.5])
    assert (b >= 0).all() and (b <= nn_).all() and (b == np.round(b)).all()
    assert np.allclose(b.mean(0), nn_ * pp, rtol=0.01, atol=0.02)
    assert np.allclose(b.var(0), nn_ * pp * (1 - pp), rtol=0.05, atol=0.02)
    assert (tg.binomial(tg.tensor([7.0]), tg.tensor([1.0])).tolist() == [7.0])
    with pytest.raises(RuntimeError, match='probabilities must be in'):
        tg.binomial(tg.tensor([5.0]), tg.tensor([1.5]))


# -- frexp, nextafter, special methods -------------------------------------------------

def test_frexp():
    d = np.array([1.5, -2.0, 0.0, 3e-40, np.inf, -7.25, 1e30])
    for dt in ('float32', 'float64'):
        a = tg.tensor(d, dtype=getattr(tg, dt))
        b = torch.tensor(d, dtype=getattr(torch, dt))
        ma, ea = tg.frexp(a)
        mb, eb = torch.frexp(b)
        assert ea.dtype == tg.int32 and ma.dtype == a.dtype
        np.testing.assert_array_equal(ma.numpy(), mb.numpy())
        np.testing.assert_array_equal(ea.numpy(), eb.numpy())
        assert a.frexp().mantissa.tolist() == ma.tolist()
        assert type(tg.frexp(a)).__name__ == 'frexp'
    with pytest.raises(RuntimeError, match=r'torch.frexp\(\) only supports floating-point'):
        tg.frexp(tg.tensor([1, 2]))


def test_nextafter():
    for dt in ('float32', 'float64'):
        a = tg.tensor([1.0, 0.0, -1.0, 2.0], dtype=getattr(tg, dt))
        o = tg.tensor([2.0, -1.0, -1.0, 0.0], dtype=getattr(tg, dt))
        ta = torch.tensor([1.0, 0.0, -1.0, 2.0], dtype=getattr(torch, dt))
        to = torch.tensor([2.0, -1.0, -1.0, 0.0], dtype=getattr(torch, dt))
        r = tg.nextafter(a, o)
        assert r.dtype == a.dtype
        np.testing.assert_array_equal(r.numpy(), torch.nextafter(ta, to).numpy())
        assert a.nextafter_(o) is a
        np.testing.assert_array_equal(a.numpy(), torch.nextafter(ta, to).numpy())
    with pytest.raises(RuntimeError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        tg.nextafter(tg.tensor([1]), tg.tensor([2]))


def test_special_methods():
    d = np.array([0.3, 1.2, 2.5, 4.0])
    o = np.array([0.5, 1.0, 3.0, 2.5])
    a, b = tg.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    close(a.i0(), b.i0().detach().numpy(), 1e-12, 1e-12)
    a.i0().sum().backward()
    b.i0().sum().backward()
    close(a.grad, b.grad.numpy(), 1e-10, 1e-12)
    for n in (0, 1, 2):
        close(a.polygamma(n), b.polygamma(n).detach().numpy(), 1e-8, 1e-12)
    close(a.igamma(tg.tensor(o)), b.igamma(torch.tensor(o)).detach().numpy(), 1e-8, 1e-12)
    close(a.igammac(tg.tensor(o)), b.igammac(torch.tensor(o)).detach().numpy(), 1e-8, 1e-12)
    for name, args in (('i0_', ()), ('polygamma_', (1,)), ('igamma_', ('o',)),
                       ('igammac_', ('o',))):
        x, y = tg.tensor(d), torch.tensor(d)
        ta = [tg.tensor(o) if v == 'o' else v for v in args]
        tb = [torch.tensor(o) if v == 'o' else v for v in args]
        assert getattr(x, name)(*ta) is x
        getattr(y, name)(*tb)
        close(x, y.numpy(), 1e-8, 1e-12)
    m = np.array([[0.1, 0.4], [-0.3, 0.2]])
    x, y = tg.tensor(m, requires_grad=True), torch.tensor(m, requires_grad=True)
    close(x.matrix_exp(), y.matrix_exp().detach().numpy(), 1e-12, 1e-12)
    close(tg.matrix_exp(x), torch.matrix_exp(y).detach().numpy(), 1e-12, 1e-12)
    x.matrix_exp().sum().backward()
    y.matrix_exp().sum().backward()
    close(x.grad, y.grad.numpy(), 1e-10, 1e-12)


def test_new_composites_gradcheck():
    """float64 finite differences through the new differentiable composites"""
    x = tg.tensor(_unit((4, 5)), dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda t: tg.gradient(t, dim=1, edge_order=2)[0], (x,))
    assert tg.autograd.gradcheck(lambda t: (t * 1).renorm_(2, 0, 1.0), (x,))
    assert tg.autograd.gradcheck(lambda t: tg.constant_pad_nd(t, (1, 2), 0.5), (x,))
    assert tg.autograd.gradcheck(lambda t: t.mH * 2, (x,))


# -- nn.functional.multi_head_attention_forward ----------------------------------------------

@pytest.mark.parametrize('separate', [False, True])
def test_multi_head_attention_forward(separate):
    rs = np.random.RandomState(0)
    E, H, L, S, N = 8, 2, 5, 6, 3
    shapes = {'q': (L, N, E), 'k': (S, N, E), 'v': (S, N, E), 'in_w': (3 * E, E),
              'in_b': (3 * E,), 'bk': (1, 1, E), 'bv': (1, 1, E), 'out_w': (E, E),
              'out_b': (E,), 'qw': (E, E), 'kw': (E, E), 'vw': (E, E)}
    data = {k: rs.randn(*s) * 0.5 for k, s in shapes.items()}
    kpm = np.zeros((N, S), dtype=bool)
    kpm[0, -2:] = True
    mask = rs.randn(L, S)

    def run(m, F):
        t = {k: m.tensor(v, requires_grad=True) for k, v in data.items()}
        out, w = F.multi_head_attention_forward(
            t['q'], t['k'], t['v'], E, H, None if separate else t['in_w'], t['in_b'], t['bk'],
            t['bv'], False, 0.0, t['out_w'], t['out_b'], training=False,
            key_padding_mask=m.tensor(kpm), attn_mask=m.tensor(mask),
            use_separate_proj_weight=separate, q_proj_weight=t['qw'] if separate else None,
            k_proj_weight=t['kw'] if separate else None,
            v_proj_weight=t['vw'] if separate else None, average_attn_weights=False)
        (out.pow(2).sum() + w.sum()).backward()
        return out, w, t

    oa, wa, ta = run(tg, tg.nn.functional)
    ob, wb, tb = run(torch, torch.nn.functional)
    close(oa, ob.detach().numpy(), 1e-10, 1e-12)
    close(wa, wb.detach().numpy(), 1e-10, 1e-12)
    assert wa.shape == tuple(wb.shape) == (N, H, L, S + 1)
    for k in ta:
        if tb[k].grad is not None:
            close(ta[k].grad, tb[k].grad.numpy(), 1e-9, 1e-12)


def test_multi_head_attention_forward_errors():
    x = tg.ones(2, 1, 4)
    F = tg.nn.functional
    with pytest.raises(AssertionError, match='was expecting embedding dimension of 6'):
        F.multi_head_attention_forward(x, x, x, 6, 2, tg.ones(12, 4), None, None, None, False,
                                       0.0, tg.ones(4, 4), None)
    with pytest.raises(AssertionError, match='use_separate_proj_weight is True but'):
        F.multi_head_attention_forward(x, x, x, 4, 2, None, None, None, None, False, 0.0,
                                       tg.ones(4, 4), None, use_separate_proj_weight=True)
    with pytest.raises(NotImplementedError, match='static_k and static_v'):
        F.multi_head_attention_forward(x, x, x, 4, 2, tg.ones(12, 4), None, None, None, False,
                                       0.0, tg.ones(4, 4), None, static_k=x)


def test_names_present():
    """every name this file covers is where PyTorch has it"""
    torch_level = ['relu_', 'clamp_', 'fill_', 'zero_', 'detach', 'detach_', 'index_put_',
                   'threshold_', 'selu_', 'celu_', 'rrelu', 'rrelu_', 'dropout_',
                   'alpha_dropout', 'alpha_dropout_', 'feature_alpha_dropout',
                   'feature_alpha_dropout_', 'feature_dropout', 'feature_dropout_', 'kl_div',
                   'bilinear', 'cosine_embedding_loss', 'hinge_embedding_loss',
                   'margin_ranking_loss', 'triplet_margin_loss', 'poisson_nll_loss',
                   'ctc_loss', 'instance_norm', 'constant_pad_nd', 'channel_shuffle',
                   'empty_strided', 'gradient', 'frexp', 'frombuffer', 'asarray',
                   'is_inference', 'range', 'poisson', 'binomial', 'hann_window',
                   'hamming_window', 'blackman_window', 'bartlett_window', 'kaiser_window',
                   'adjoint', 'resolve_conj', 'resolve_neg', 'is_neg', 'conj_physical',
                   'conj_physical_', 'narrow_copy', 'matrix_exp', 'nextafter', 'i0_']
    for n in torch_level:
        assert hasattr(torch, n) and callable(getattr(tg, n)), n
    methods = ['H', 'mH', 'adjoint', 'resolve_conj', 'resolve_neg', 'is_neg', 'conj_physical',
               'new', 'narrow_copy', 'float_power_', 'renorm', 'renorm_', 'random_',
               'exponential_', 'geometric_', 'cauchy_', 'log_normal_', 'frexp', 'i0', 'i0_',
               'nextafter', 'nextafter_', 'polygamma', 'polygamma_', 'igamma', 'igamma_',
               'igammac', 'igammac_', 'matrix_exp', 'output_nr', 'is_inference']
    for n in methods:
        assert hasattr(torch.Tensor, n) and hasattr(tg.Tensor, n), n
    assert callable(tg.nn.functional.multi_head_attention_forward)


# -- *_copy and unsafe_ forms, constants, small torch-level and Tensor extras ------------------

COPIES = [('alias_copy', ()), ('detach_copy', ()), ('diagonal_copy', (0, 0, 1)),
          ('expand_copy', ((2, 2, 3, 4),)), ('permute_copy', ((2, 0, 1),)),
          ('select_copy', (1, 2)), ('split_copy', (2, 2)), ('split_with_sizes_copy', ([1, 3], 2)),
          ('squeeze_copy', ()), ('t_copy', None), ('transpose_copy', (0, 2)),
          ('unbind_copy', (1,)), ('unfold_copy', (2, 2, 1)), ('unsqueeze_copy', (1,)),
          ('view_copy', ((6, 4),)), ('slice_copy', (2, 0, 4, 2)), ('unsafe_chunk', (2, 2)),
          ('unsafe_split', (1, 1)), ('unsafe_split_with_sizes', ([1, 2], 1))]


@pytest.mark.parametrize('name,args', COPIES)
def test_copy_forms(name, args):
    d = np.arange(24.0).reshape(2, 3, 4)
    if args is None:
        d, args = d[0], ()
    a = tg.tensor(d, requires_grad=True)
    b = torch.tensor(d, requires_grad=True)
    ra, rb = getattr(tg, name)(a, *args), getattr(torch, name)(b, *args)
    if isinstance(rb, torch.Tensor):
        ra, rb = (ra,), (rb,)
    assert len(ra) == len(rb)
    for p, q in zip(ra, rb):
        assert p.shape == tuple(q.shape)
        close(p, q.detach().numpy())
        if name.endswith('_copy') and name != 'detach_copy':  # copies: writes stay there
            assert p.requires_grad
            p2 = p.detach()
            p2.fill_(-7.0)
            assert a.min().item() == 0.0
    if name != 'detach_copy':
        sum(p.sum() for p in ra).backward()
        sum(q.sum() for q in rb).backward()
        close(a.grad, b.grad.numpy())


def test_constants_fill_pools_renorm():
    assert (tg.e, tg.pi) == (torch.e, torch.pi) and tg.inf == math_inf()
    assert tg.nan != tg.nan
    x = tg.arange(6.0).reshape(2, 3)
    f = tg.fill(x, 2.5)
    assert f is not x and f.tolist() == [[2.5] * 3] * 2 and x[0, 0].item() == 0.0
    d = np.random.RandomState(0).randn(2, 3, 9)
    va, ia = tg.max_pool1d_with_indices(tg.tensor(d), 3, 2, 1)
    vb, ib = torch.max_pool1d_with_indices(torch.tensor(d), 3, 2, 1)
    close(va, vb.numpy())
    assert ia.tolist() == ib.tolist()
    close(tg.adaptive_avg_pool1d(tg.tensor(d), 4), torch.adaptive_avg_pool1d(torch.tensor(d), 4)
          .numpy(), 1e-12, 1e-12)
    w = np.random.RandomState(1).randn(6, 4) * 2
    wa, wb = tg.tensor(w), torch.tensor(w)
    idx = [0, 3, 3, 5]
    assert tg.embedding_renorm_(wa, tg.tensor(idx), 1.5, 2.0) is wa
    torch.embedding_renorm_(wb, torch.tensor(idx), 1.5, 2.0)
    close(wa, wb.numpy(), 1e-12, 1e-12)
    m = np.random.RandomState(2).randn(3, 4)
    v, y = np.random.RandomState(3).randn(4), np.random.RandomState(4).randn(3)
    ya = tg.tensor(y)
    assert tg.addmv_(ya, tg.tensor(m), tg.tensor(v), beta=0.5, alpha=2.0) is ya
    close(ya, torch.addmv_(torch.tensor(y), torch.tensor(m), torch.tensor(v), beta=0.5,
                           alpha=2.0).numpy(), 1e-12, 1e-12)
    r = tg.arange(6.0)
    assert tg.resize_as_(r, x) is r and r.shape == (2, 3) and r.tolist() == x.tolist()
    with pytest.raises(RuntimeError, match='not supported by tensorgraph'):
        tg.zeros(2).resize_as_(x)  # resize_'s limit: a storage does not grow in place


def math_inf():
    return float('inf')


def test_tensor_predicates_and_host_maps():
    x = tg.ones(2, 3)
    t = torch.ones(2, 3)
    for n in ('is_sparse', 'is_quantized', 'is_meta', 'is_mkldnn', 'is_nested', 'is_sparse_csr',
              'is_vulkan', 'is_xpu', 'is_ipu', 'is_mps', 'is_ort'):
        assert getattr(x, n) is False is getattr(t, n), n
    assert x.names == t.names == (None, None) and x.has_names() is t.has_names() is False
    assert x.is_pinned() is False and x.is_shared() is False and x.share_memory_() is x
    assert x.new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)
    assert x.new_empty_strided((2, 2), (1, 2)).dtype == x.dtype
    z = tg.arange(4.0)
    assert z.apply_(lambda v: v * v + 1) is z and z.tolist() == [1.0, 2.0, 5.0, 10.0]
    assert z.map_(tg.tensor([1.0]), lambda a, b: a - b) is z and z.tolist() == [0.0, 1.0, 4.0, 9.0]
    i = tg.tensor([1, 2, 3])
    assert i.apply_(lambda v: v * 10).tolist() == [10, 20, 30] and i.dtype == tg.int64
    with pytest.raises(RuntimeError, match='apply_ is not differentiable'):
        tg.ones(2, requires_grad=True).apply_(lambda v: v)


@pytest.mark.parametrize('name,gates', [('rnn_tanh_cell', 1), ('rnn_relu_cell', 1),
                                        ('lstm_cell', 4), ('gru_cell', 3)])
@pytest.mark.parametrize('bias', [True, False])
def test_rnn_cells(name, gates, bias):
    rs = np.random.RandomState(0)
    N, I, Hs = 3, 4, 5
    data = [rs.randn(N, I), rs.randn(N, Hs), rs.randn(gates * Hs, I) * 0.5,
            rs.randn(gates * Hs, Hs) * 0.5, rs.randn(gates * Hs), rs.randn(gates * Hs)]
    if name == 'lstm_cell':
        data.append(rs.randn(N, Hs))

    def run(m):
        t = [m.tensor(d, requires_grad=True) for d in data]
        hx = (t[1], t[6]) if name == 'lstm_cell' else t[1]
        b = (t[4], t[5]) if bias else (None, None)
        out = getattr(m, name)(t[0], hx, t[2], t[3], *b)
        outs = out if isinstance(out, tuple) else (out,)
        sum((o * o).sum() for o in outs).backward()
        return outs, t

    oa, ta = run(tg)
    ob, tb = run(torch)
    for p, q in zip(oa, ob):
        close(p, q.detach().numpy(), 1e-10, 1e-12)
    for p, q in zip(ta, tb):
        if q.grad is not None:
            close(p.grad, q.grad.numpy(), 1e-9, 1e-12)


# -- adaptive max pooling with indices -------------------------------------------------------

ADAPTIVE = [(1, (2, 3, 10), 4), (1, (3, 7), 3), (2, (2, 3, 7, 9), (3, 4)), (2, (3, 7, 9), (5, 2)),
            (2, (2, 3, 8, 8), 4), (2, (1, 2, 5, 6), (None, 4)), (3, (1, 2, 5, 6, 7), (2, 3, 4)),
            (3, (2, 4, 4, 5), 2)]


@pytest.mark.parametrize('nd,shape,out', ADAPTIVE)
def test_adaptive_max_pool_with_indices(nd, shape, out):
    d = np.random.RandomState(0).randn(*shape)
    d.reshape(-1)[::7] = d.reshape(-1)[1]  # ties: the first position wins, as PyTorch's
    a = tg.tensor(d, requires_grad=True)
    b = torch.tensor(d, requires_grad=True)
    fa = getattr(tg.nn.functional, f'adaptive_max_pool{nd}d_with_indices')
    va, ia = fa(a, out)
    vb, ib = getattr(torch.nn.functional, f'adaptive_max_pool{nd}d')(b, out, True)
    assert va.shape == tuple(vb.shape) and ia.dtype == tg.int64
    close(va, vb.detach().numpy(), 1e-12, 1e-12)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    w = np.random.RandomState(1).randn(*vb.shape)
    (va * tg.tensor(w)).sum().backward()
    (vb * torch.tensor(w)).sum().backward()
    close(a.grad, b.grad.numpy(), 1e-12, 1e-12)
    # the return_indices flag of the plain form and of the module
    v2, i2 = getattr(tg.nn.functional, f'adaptive_max_pool{nd}d')(a, out, return_indices=True)
    assert i2.tolist() == ia.tolist()
    m = getattr(tg.nn, f'AdaptiveMaxPool{nd}d')(out, return_indices=True)
    assert m(a)[1].tolist() == ia.tolist()


def test_adaptive_max_pool_special_values_and_errors():
    d = np.array([[[1.0, np.nan, 3.0, -np.inf, -np.inf, 2.0, np.inf, 0.0]]])
    va, ia = tg.nn.functional.adaptive_max_pool1d_with_indices(tg.tensor(d), 3)
    assert ia.tolist() == [[[1, 2, 6]]]  # windows [0, 3), [2, 6), [5, 8): NaN is the maximum
    assert np.isnan(va[0, 0, 0].item()) and va[0, 0, 1].item() == 3.0
    vb, ib = torch.nn.functional.adaptive_max_pool1d(torch.tensor(d), 3, True)
    assert ia.tolist() == ib.tolist()
    np.testing.assert_array_equal(va.numpy(), vb.numpy())
    va, ia = tg.adaptive_max_pool1d(tg.tensor(d), 2)
    vb, ib = torch.adaptive_max_pool1d(torch.tensor(d), 2)
    assert ia.tolist() == ib.tolist()
    with pytest.raises(RuntimeError, match='Expected 3D or 4D tensor'):
        tg.nn.functional.adaptive_max_pool2d_with_indices(tg.ones(4), 2)
    with pytest.raises(RuntimeError, match='not implemented for'):
        tg.nn.functional.adaptive_max_pool2d_with_indices(tg.ones(1, 4, 4, dtype=tg.int64), 2)
    v, i = tg.nn.functional.adaptive_max_pool2d_with_indices(tg.ones(1, 4, 4), (0, 2))
    assert v.shape == (1, 0, 2) and i.dtype == tg.int64


# -- older linear-algebra names, native_* forms, ATen convolution and grid names -------------

def test_lu_family():
    rs = np.random.RandomState(0)
    for shape in ((4, 4), (2, 3, 3), (5, 3), (3, 5)):
        d = rs.randn(*shape)
        a, t = tg.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
        LU, piv = tg.lu(a)
        LUt, pivt = torch.linalg.lu_factor(t)
        close(LU, LUt.detach().numpy(), 1e-10, 1e-12)
        assert piv.dtype == tg.int32 and piv.tolist() == pivt.tolist()
        assert len(tg.lu(a, get_infos=True)) == 3
        P, L, U = tg.lu_unpack(LU, piv)
        Pt, Lt, Ut = torch.lu_unpack(LUt, pivt)
        for x, y in ((P, Pt), (L, Lt), (U, Ut)):
            assert x.shape == tuple(y.shape)
            close(x, y.detach().numpy(), 1e-10, 1e-12)
        close(P @ L @ U, d, 1e-10, 1e-12)
        (L.sum() + (U * U).sum()).backward()
        (Lt.sum() + (Ut * Ut).sum()).backward()
        close(a.grad, t.grad.numpy(), 1e-8, 1e-10)
        assert type(tg.lu_unpack(LU, piv)).__name__ == 'lu_unpack'
    P, L, U = tg.lu_unpack(LU, piv, unpack_data=False)
    assert L.numel() == 0 and U.numel() == 0 and P.numel() > 0
    A = rs.randn(2, 4, 4)
    b = rs.randn(2, 4, 3)
    LU, piv = tg.lu(tg.tensor(A))
    close(tg.lu_solve(tg.tensor(b), LU, piv), np.linalg.solve(A, b), 1e-10, 1e-12)
    with pytest.raises(RuntimeError, match='torch.int32'):
        tg.lu_unpack(LU, piv.long())


def test_orgqr_and_norms():
    rs = np.random.RandomState(1)
    A = rs.randn(5, 3)
    geqrf = torch.geqrf(torch.tensor(A))
    close(tg.orgqr(tg.tensor(geqrf.a.numpy()), tg.tensor(geqrf.tau.numpy())),
          torch.orgqr(geqrf.a, geqrf.tau).numpy(), 1e-10, 1e-12)
    d = rs.randn(3, 4, 5)
    a, t = tg.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    for args in ((), ((0, 2),), ((1,), True)):
        close(tg.frobenius_norm(a, *args), torch.frobenius_norm(t, *args).detach().numpy(),
              1e-12, 1e-12)
    close(tg.nuclear_norm(a[0]), torch.nuclear_norm(t[0]).detach().numpy(), 1e-10, 1e-12)
    close(tg.nuclear_norm(a[0], True), torch.nuclear_norm(t[0], True).detach().numpy(),
          1e-10, 1e-12)
    close(tg.nuclear_norm(a, (0, 2)), torch.nuclear_norm(t, (0, 2)).detach().numpy(),
          1e-10, 1e-12)
    for p_, dim in ((2, 0), (2, 2), (1, 1), (2, -1)):
        close(tg.norm_except_dim(a, p_, dim), torch.norm_except_dim(t, p_, dim).detach().numpy(),
              1e-12, 1e-12)


def test_native_layer_norm_dropout_shuffle():
    rs = np.random.RandomState(2)
    d, w, b = rs.randn(2, 3, 4), rs.randn(3, 4), rs.randn(3, 4)
    ta = [tg.tensor(v, requires_grad=True) for v in (d, w, b)]
    tt = [torch.tensor(v, requires_grad=True) for v in (d, w, b)]
    ra = tg.native_layer_norm(ta[0], [3, 4], ta[1], ta[2], 1e-5)
    rb = torch.native_layer_norm(tt[0], [3, 4], tt[1], tt[2], 1e-5)
    for x, y in zip(ra, rb):
        assert x.shape == tuple(y.shape)
        close(x, y.detach().numpy(), 1e-10, 1e-12)
    (ra[0] ** 2).sum().backward()
    (rb[0] ** 2).sum().backward()
    for x, y in zip(ta, tt):
        close(x.grad, y.grad.numpy(), 1e-9, 1e-12)
    out, mask = tg.native_dropout(tg.ones(1000), 0.25, True)
    assert mask.dtype == tg.bool and 0.65 < mask.float().mean().item() < 0.85
    assert np.allclose(out.numpy(), mask.numpy() / 0.75)
    out, mask = tg.native_dropout(tg.ones(4), 0.25, False)
    assert mask.tolist() == [True] * 4 and out.tolist() == [1.0] * 4
    e = np.arange(24.0).reshape(1, 6, 4)
    close(tg.native_channel_shuffle(tg.tensor(e), 2),
          torch.native_channel_shuffle(torch.tensor(e), 2).numpy())


def test_convolution_and_grid_names():
    rs = np.random.RandomState(3)
    cases = [((2, 4, 9), (6, 2, 3), False, [2], [1], [1], [0], 2),
             ((1, 3, 7, 8), (4, 3, 3, 3), False, [1, 2], [1, 0], [2, 1], [0, 0], 1),
             ((1, 4, 5, 5), (4, 2, 3, 3), True, [2, 2], [1, 1], [1, 1], [1, 0], 1),
             ((1, 2, 4, 4, 4), (3, 2, 2, 2, 2), False, [1, 1, 1], [0, 0, 0], [1, 1, 1],
              [0, 0, 0], 1)]
    for xs, ws, transposed, stride, padding, dilation, opad, groups in cases:
        x, w = rs.randn(*xs), rs.randn(*ws)
        bias = rs.randn(ws[1] * groups if transposed else ws[0])
        ra = tg.convolution(tg.tensor(x), tg.tensor(w), tg.tensor(bias), stride, padding,
                            dilation, transposed, opad, groups)
        rb = torch.convolution(torch.tensor(x), torch.tensor(w), torch.tensor(bias), stride,
                               padding, dilation, transposed, opad, groups)
        close(ra, rb.numpy(), 1e-10, 1e-12)
    x, w, b = rs.randn(7, 2, 3), rs.randn(3, 3, 5), rs.randn(5)
    close(tg.conv_tbc(tg.tensor(x), tg.tensor(w), tg.tensor(b), 1),
          torch.conv_tbc(torch.tensor(x), torch.tensor(w), torch.tensor(b), 1).numpy(),
          1e-10, 1e-12)
    theta = rs.randn(2, 2, 3)
    ga = tg.affine_grid_generator(tg.tensor(theta), [2, 1, 4, 5], False)
    gb = torch.affine_grid_generator(torch.tensor(theta), [2, 1, 4, 5], False)
    close(ga, gb.numpy(), 1e-12, 1e-12)
    img = rs.randn(2, 1, 4, 5)
    for mode, pad in ((0, 0), (1, 1), (0, 2)):
        close(tg.grid_sampler(tg.tensor(img), ga * 1.2, mode, pad, False),
              torch.grid_sampler(torch.tensor(img), gb * 1.2, mode, pad, False).numpy(),
              1e-10, 1e-12)


def test_names_and_settings():
    assert tg.typename(tg.ones(2)) == torch.typename(torch.ones(2)) == 'torch.FloatTensor'
    assert tg.typename(tg.ones(2, dtype=tg.float64)) == 'torch.DoubleTensor'
    assert tg.typename(3) == torch.typename(3) == 'int'
    assert tg.typename(tg.nn.Linear).endswith('.Linear')
    assert tg.is_storage(tg.ones(2)) is False
    assert tg.get_float32_matmul_precision() == 'highest'
    tg.set_float32_matmul_precision('high')
    assert tg.get_float32_matmul_precision() == 'high'
    tg.set_float32_matmul_precision('highest')
    with pytest.raises(RuntimeError, match='Invalid precision'):
        tg.set_float32_matmul_precision('low')
    assert tg.is_warn_always_enabled() is False
    tg.set_warn_always(True)
    assert tg.is_warn_always_enabled() is True
    tg.set_warn_always(False)
    assert tg.get_num_interop_threads() >= 1
    assert tg.get_deterministic_debug_mode() == 0
    try:
        tg.set_deterministic_debug_mode('warn')
        assert tg.get_deterministic_debug_mode() == 1
        assert tg.is_deterministic_algorithms_warn_only_enabled() is True
        assert tg.are_deterministic_algorithms_enabled() is True
        tg.set_deterministic_debug_mode(2)
        assert tg.get_deterministic_debug_mode() == 2
        with pytest.raises(RuntimeError, match='invalid value of debug_mode'):
            tg.set_deterministic_debug_mode('loud')
    finally:
        tg.set_deterministic_debug_mode('default')
    assert tg.get_deterministic_debug_mode() == 0
    assert tg.are_deterministic_algorithms_enabled() is False


def test_method_forms_of_unsafe_splits_and_lu_helpers():
    a = np.array([[4.0, 3.0, 2.0], [2.0, 1.0, 3.0], [3.0, 2.0, 1.0]])
    x = tg.tensor(a)
    assert [p.shape for p in x.unsafe_chunk(2, 1)] == [(3, 2), (3, 1)]
    assert [p.shape for p in x.unsafe_split(2)] == [(2, 3), (1, 3)]
    assert [p.shape for p in x.unsafe_split_with_sizes([1, 2], 1)] == [(3, 1), (3, 2)]
    LU, piv = x.lu()
    b = tg.tensor([[1.0], [2.0], [3.0]], dtype=tg.float64)
    np.testing.assert_allclose(b.lu_solve(LU, piv).numpy(), np.linalg.solve(a, b.numpy()),
                               rtol=1e-12)
    # orgqr of Householder reflectors: a reflector with tau 0 is the identity
    eye = tg.eye(3, dtype=tg.float64).orgqr(tg.zeros(3, dtype=tg.float64))
    np.testing.assert_array_equal(eye.numpy(), np.eye(3))


def test_native_batch_and_group_norm():
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((4, 3, 5)))
    rm, rv = tg.zeros(3, dtype=tg.float64), tg.ones(3, dtype=tg.float64)
    out, mean, invstd = tg.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    xn = x.numpy()
    np.testing.assert_allclose(mean.numpy(), xn.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(invstd.numpy(), 1 / np.sqrt(xn.var((0, 2)) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.1 * xn.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), (xn - xn.mean((0, 2), keepdims=True)[0][None]) *
                               invstd.numpy()[None, :, None], rtol=1e-10)
    out, mean, invstd = tg.native_batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5)
    assert mean.shape == invstd.shape == (0,)
    y = tg.tensor(rng.standard_normal((2, 6, 4, 4)))
    out, mean, rstd = tg.native_group_norm(y, None, None, 2, 6, 16, 3, 1e-5)
    g = y.numpy().reshape(2, 3, -1)
    np.testing.assert_allclose(mean.numpy(), g.mean(-1), rtol=1e-12)
    np.testing.assert_allclose(rstd.numpy(), 1 / np.sqrt(g.var(-1) + 1e-5), rtol=1e-12)
    assert out.shape == (2, 6, 4, 4)
    assert tg.get_device(y) == -1
