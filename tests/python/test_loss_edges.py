"""Loss edge cases against PyTorch: unbatched cross_entropy / nll_loss
(logits [C], 0-d target), mse_loss broadcasting a target, every label
ignored (NaN loss, zero gradient), binary_cross_entropy's gradient at
probabilities of exactly 0 and 1, kl_div at targets of 0 and below,
hinge_embedding_loss at targets other than 1 and -1."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch
from torch_compare import compare_with_torch

RNG = np.random.default_rng(3)
LOGITS = RNG.normal(size=(4, 5)).astype(np.float32)


def _run(fn, *arrays, grad=(0,)):
    compare_with_torch(fn, *arrays, grad=grad)


@needs_torch
@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
def test_unbatched_class_index(reduction):
    F = lambda L: L.nn.functional  # noqa: E731
    _run(lambda L, x, t: F(L).cross_entropy(x, t, reduction=reduction), LOGITS[0], np.array(2))
    _run(lambda L, x, t: F(L).cross_entropy(x, t, label_smoothing=0.2, reduction=reduction),
         LOGITS[0], np.array(2))
    _run(lambda L, x, t: F(L).nll_loss(x, t, reduction=reduction), LOGITS[0], np.array(4))


@needs_torch
def test_mse_broadcasts_target_with_warning():
    _run(lambda L, x, t: L.nn.functional.mse_loss(x, t), LOGITS, LOGITS[1], grad=(0, 1))
    _run(lambda L, x, t: L.nn.MSELoss(reduction='none')(x, t), LOGITS, LOGITS[:, :1],
         grad=(0, 1))
    with pytest.warns(UserWarning, match="target size"):
        tg.nn.functional.mse_loss(tg.tensor(LOGITS), tg.tensor(LOGITS[0]))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        tg.nn.functional.mse_loss(tg.tensor(LOGITS), tg.tensor(LOGITS))


@needs_torch
@pytest.mark.parametrize('kw', [{}, {'label_smoothing': 0.1}, {'weight': True}])
def test_all_labels_ignored_nan_loss_zero_grad(kw):
    w = np.linspace(0.5, 2, 5).astype(np.float32)
    if 'weight' in kw:
        _run(lambda L, x, t, w: L.nn.functional.cross_entropy(x, t, weight=w, ignore_index=1),
             LOGITS, np.array([1, 1, 1, 1]), w)
    else:
        _run(lambda L, x, t: L.nn.functional.cross_entropy(x, t, ignore_index=1, **kw),
             LOGITS, np.array([1, 1, 1, 1]))
    _run(lambda L, x, t: L.nn.functional.nll_loss(x, t, ignore_index=1), LOGITS,
         np.array([1, 1, 1, 1]))


@needs_torch
@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
def test_bce_gradient_at_zero_and_one(reduction):
    # exact 0 and 1 (both matching and opposite targets) and within 1e-12 of 0
    x = np.array([0., 1., 0., 1., 0.5, 1e-30], dtype=np.float32)
    y = np.array([0., 1., 1., 0., 0.3, 1.0], dtype=np.float32)
    _run(lambda L, p, t: L.nn.functional.binary_cross_entropy(p, t, reduction=reduction), x, y)
    w = np.linspace(0.1, 1, 6).astype(np.float32)
    _run(lambda L, p, t, w: L.nn.functional.binary_cross_entropy(p, t, w, reduction=reduction),
         x, y, w)


@needs_torch
@pytest.mark.parametrize('reduction', ['sum', 'none', 'batchmean'])
def test_kl_div_with_zero_and_negative_targets(reduction):
    """PyTorch's formula xlogy(t, t) - t x: 0 where t is 0, NaN where it is
    negative, and the input's gradient -t everywhere"""
    target = np.array([[0.0, -1.0, 0.5, 2.0], [0.25, 0.0, 1.0, 3.0]])
    x = np.array([[0.3, 0.2, -0.1, 1.0], [1.5, -2.0, 0.0, 0.5]])
    _run(lambda L, a, t: L.nn.functional.kl_div(a, t, reduction=reduction), x, target)
    _run(lambda L, a, t: L.nn.functional.kl_div(a, t, reduction=reduction, log_target=True),
         x, target, grad=(0, 1))


@needs_torch
@pytest.mark.parametrize('reduction', ['mean', 'none'])
def test_hinge_embedding_loss_targets_other_than_plus_minus_one(reduction):
    """a target that is neither 1 nor -1 takes both of PyTorch's terms;
    a 0-d input broadcast against the targets"""
    target = np.array([1.0, -1.0, 0.47, 1.4, 0.0, -2.0])
    x = np.array([-0.8, 0.3, -0.8, 0.5, 2.0, 0.9])
    _run(lambda L, a, t: L.nn.functional.hinge_embedding_loss(a, t, reduction=reduction),
         x, target)
    _run(lambda L, a, t: L.nn.functional.hinge_embedding_loss(a, t, 0.5, reduction=reduction),
         np.array(-0.81), target)


def test_hinge_embedding_loss_of_integers_stays_integer():
    # PyTorch fills the margin into the input's dtype (truncated) and so
    # computes in integers: its mean then refuses them, bools are refused
    F = tg.nn.functional
    t = tg.tensor([1.0, -1.0, -1.0, 1.0])
    y = F.hinge_embedding_loss(tg.tensor([0, 1, 2, -3]), t, margin=2.7, reduction='none')
    assert y.dtype == tg.int64 and y.tolist() == [0, 1, 0, -3]
    y = F.hinge_embedding_loss(tg.tensor([-2]), tg.tensor([-1.0]), margin=-0.5, reduction='sum')
    assert y.dtype == tg.int64 and y.item() == 2
    with pytest.raises(RuntimeError, match='mean'):
        F.hinge_embedding_loss(tg.tensor([0, 1]), tg.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match='two bool tensors'):
        F.hinge_embedding_loss(tg.tensor([True]), tg.tensor([-1.0]), reduction='none')


def test_regression_losses_take_integer_and_bool_targets():
    # PyTorch's kernels promote a mixed pair (float predictions, integer or
    # bool targets) to a float dtype; two integer operands are refused
    F = tg.nn.functional
    x = tg.tensor([1.5, 0.0, 1.0], dtype=tg.float64, requires_grad=True)
    for target in (tg.tensor([0, 0, 1]), tg.tensor([False, False, True])):
        for fn, want in ((F.mse_loss, 0.75), (F.smooth_l1_loss, 1.0 / 3),
                         (F.huber_loss, 1.0 / 3)):
            loss = fn(x, target)
            assert loss.dtype == tg.float64 and abs(loss.item() - want) < 1e-12
            g, = tg.autograd.grad(loss, x)
            assert g.tolist()[1:] == [0.0, 0.0]
    assert F.mse_loss(tg.tensor([1, 0]), tg.tensor([0.5, 0.0])).item() == 0.125
    for fn, kernel in ((F.mse_loss, 'mse_cpu'), (F.smooth_l1_loss, 'smooth_l1_cpu'),
                       (F.huber_loss, 'huber_cpu')):
        with pytest.raises(RuntimeError, match=f'"{kernel}" not implemented for \'Long\''):
            fn(tg.tensor([1, 0]), tg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        F.huber_loss(tg.tensor([1, 0]), tg.tensor([0.5, 1.0], dtype=tg.float64))
