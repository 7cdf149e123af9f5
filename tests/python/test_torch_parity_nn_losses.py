"""Losses' deprecated size_average / reduce arguments against PyTorch 1.13:
every functional loss and loss module that takes them gives PyTorch's
values (the reduction they stand for), reduction attribute and warning."""
import itertools
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch

pytestmark = needs_torch

RS = np.random.RandomState(0)
X = RS.randn(4, 5).astype(np.float32)
Y = RS.randn(4, 5).astype(np.float32)
T = np.array([0, 3, 1, 4])
P = (RS.rand(4, 5) > 0.5).astype(np.float32)
S = np.sign(RS.randn(4)).astype(np.float32)

# name: (arrays, positional args after them, differentiate the first)
FUNCS = {
    'l1_loss': ((X, Y), ()), 'mse_loss': ((X, Y), ()), 'smooth_l1_loss': ((X, Y), ()),
    'soft_margin_loss': ((X, np.sign(Y)), ()), 'nll_loss': ((X, T), ()),
    'cross_entropy': ((X, T), ()), 'binary_cross_entropy': ((1 / (1 + np.exp(-X)), P), ()),
    'binary_cross_entropy_with_logits': ((X, P), ()), 'kl_div': ((X, np.abs(Y)), ()),
    'hinge_embedding_loss': ((X, np.sign(Y)), ()),
    'multilabel_soft_margin_loss': ((X, P), ()), 'multi_margin_loss': ((X, T), ()),
    'multilabel_margin_loss': ((X, np.array([[1, 2, -1, 0, 0]] * 4)), ()),
    'poisson_nll_loss': ((X, np.abs(Y)), ()),
    'margin_ranking_loss': ((X[:, 0], Y[:, 0], S), ()),
    'cosine_embedding_loss': ((X, Y, S), ()),
    'triplet_margin_loss': ((X, Y, X[::-1].copy()), ()),
}
LEGACY = [dict(size_average=a, reduce=r) for a, r in
          itertools.product([None, True, False], [None, True, False]) if (a, r) != (None, None)]


def _call(L, name, arrays, kw):
    ts = [L.tensor(a) for a in arrays]
    ts[0].requires_grad_(True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        y = getattr(L.nn.functional, name)(*ts, **kw)
    y.sum().backward()
    words = [str(m.message) for m in w if 'size_average' in str(m.message)]
    return y.detach().numpy(), ts[0].grad.numpy(), words


@pytest.mark.parametrize('name', sorted(FUNCS))
@pytest.mark.parametrize('kw', LEGACY, ids=str)
def test_functional_legacy_reduction(name, kw):
    arrays, _ = FUNCS[name]
    (ty, tgr, tw), (gy, ggr, gw) = (_call(L, name, arrays, kw) for L in (torch, tg))
    assert gy.shape == ty.shape
    np.testing.assert_allclose(gy, ty, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ggr, tgr, rtol=1e-4, atol=1e-5)
    assert gw == tw


MODULES = ['L1Loss', 'MSELoss', 'SmoothL1Loss', 'SoftMarginLoss', 'NLLLoss', 'CrossEntropyLoss',
           'BCELoss', 'BCEWithLogitsLoss', 'KLDivLoss', 'HingeEmbeddingLoss',
           'MultiLabelSoftMarginLoss', 'MultiMarginLoss', 'MultiLabelMarginLoss',
           'PoissonNLLLoss', 'MarginRankingLoss', 'CosineEmbeddingLoss', 'TripletMarginLoss']


@pytest.mark.parametrize('name', MODULES)
def test_modules_legacy_reduction(name):
    for kw in LEGACY:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            a, b = getattr(torch.nn, name)(**kw), getattr(tg.nn, name)(**kw)
        assert b.reduction == a.reduction, kw
        assert repr(b) == repr(a)


def _kink_grads(L, name, arrays, kw):
    n = DIFFERENTIABLE.get(name, 1)
    ts = [L.tensor(a).requires_grad_(i < n) for i, a in enumerate(arrays)]
    getattr(L.nn.functional, name)(*ts, reduction='sum', **kw).backward()
    return [t.grad.numpy() for t in ts if t.requires_grad]


F32 = np.float32
DIFFERENTIABLE = {'margin_ranking_loss': 2, 'cosine_embedding_loss': 2, 'triplet_margin_loss': 3}
KINKS = [  # each hinge exactly at its kink
    ('margin_ranking_loss', (np.array([1.0, 0.0], F32), np.array([1.0, 0.5], F32),
                             np.array([1.0, 1.0], F32)), {}),
    ('hinge_embedding_loss', (np.array([1.0, 0.5, 2.0], F32), np.array([-1.0, -1.0, 1.0], F32)),
     {}),
    ('cosine_embedding_loss', (np.array([[1.0, 0.0]], F32), np.array([[0.0, 1.0]], F32),
                               np.array([-1.0], F32)), {}),
    ('triplet_margin_loss', (np.array([[0.0, 0.0]], F32), np.array([[1.0, 0.0]], F32),
                             np.array([[0.0, 1.0]], F32)), dict(margin=0.0)),
    ('multi_margin_loss', (np.array([[1.0, 0.0, 2.0]], F32), np.array([0])), {}),
    ('multilabel_margin_loss', (np.array([[1.0, 0.0, 2.0, 1.0]], F32), np.array([[0, -1, 0, 0]])),
     {}),
]


@pytest.mark.parametrize('name,arrays,kw', KINKS, ids=[k[0] for k in KINKS])
def test_hinge_losses_gradient_at_the_kink(name, arrays, kw):
    # PyTorch: clamp_min's gradient 1 at 0 for the composed losses, its
    # kernels' z > 0 for multi_margin / multilabel_margin
    want, got = _kink_grads(torch, name, arrays, kw), _kink_grads(tg, name, arrays, kw)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_cross_entropy_probabilities_refuse_ignore_index():
    x, p = tg.zeros(2, 3), tg.full((2, 3), 1 / 3)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        tg.nn.functional.cross_entropy(x, p, ignore_index=1)
    assert tg.nn.functional.cross_entropy(x, p, ignore_index=-5).ndim == 0
