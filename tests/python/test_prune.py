"""nn.utils.prune against PyTorch's on the same weights: masks, pruned
weights, forwards, state_dict keys and the gradients reaching weight_orig;
iterative pruning (PruningContainer), global pruning, remove/is_pruned,
the random methods' counts, and PyTorch's errors (written out by hand:
torch is never driven into its error paths here)."""
import math
import re

import numpy as np
import pytest

import tensorgraph as tg
from tensorgraph.nn.utils import prune
from conftest import torch, needs_torch, SANITIZED

torch_only = [needs_torch, pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")]


def _with_torch(f):
    for mark in torch_only:
        f = mark(f)
    return f


def _tp():
    """torch.nn.utils.prune (torch.nn.utils does not import it)"""
    import torch.nn.utils.prune as tp
    return tp


def _pair(kind):
    """a tensorgraph and a torch module with the same (distinct-valued) weights"""
    rs = np.random.RandomState(1)
    if kind == 'linear':
        a, b = tg.nn.Linear(4, 6), torch.nn.Linear(4, 6)
    else:
        a, b = tg.nn.Conv2d(3, 4, 3), torch.nn.Conv2d(3, 4, 3)
    for name, p in b.named_parameters():
        w = rs.randn(*p.shape).astype(np.float32)
        with torch.no_grad():
            p.copy_(torch.tensor(w))
        with tg.no_grad():
            getattr(a, name).copy_(tg.tensor(w))
    return a, b


def _input(kind):
    rs = np.random.RandomState(2)
    shape = (3, 4) if kind == 'linear' else (2, 3, 6, 6)
    return rs.randn(*shape).astype(np.float32)


def _np(t):
    return t.detach().numpy()


def _same(a, b, kind, name='weight'):
    """masks, pruned tensors, state_dict keys, forwards and weight_orig's
    gradients equal"""
    np.testing.assert_array_equal(_np(getattr(a, name + '_mask')),
                                  _np(getattr(b, name + '_mask')))
    np.testing.assert_allclose(_np(getattr(a, name)), _np(getattr(b, name)), rtol=1e-6)
    assert list(a.state_dict()) == list(b.state_dict())
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    assert [n for n, _ in a.named_buffers()] == [n for n, _ in b.named_buffers()]
    a.zero_grad(set_to_none=True)
    b.zero_grad(set_to_none=True)
    x = _input(kind)
    ya, yb = a(tg.tensor(x)), b(torch.tensor(x))
    np.testing.assert_allclose(_np(ya), _np(yb), rtol=1e-5, atol=1e-5)
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    np.testing.assert_allclose(_np(getattr(a, name + '_orig').grad),
                               _np(getattr(b, name + '_orig').grad), rtol=1e-4, atol=1e-4)
    # the pruned entries get no gradient
    g = _np(getattr(a, name + '_orig').grad)
    assert np.all(g[_np(getattr(a, name + '_mask')) == 0] == 0)


# ---- deterministic methods against torch -------------------------------------------

@_with_torch
@pytest.mark.parametrize('kind', ['linear', 'conv'])
@pytest.mark.parametrize('amount', [0, 3, 10, 0.0, 0.25, 0.5, 1.0])
def test_l1_unstructured(kind, amount):
    a, b = _pair(kind)
    assert prune.l1_unstructured(a, 'weight', amount=amount) is a
    _tp().l1_unstructured(b, 'weight', amount=amount)
    _same(a, b, kind)
    n = a.weight.numel()
    k = amount if isinstance(amount, int) else round(amount * n)
    assert int((a.weight_mask == 0).sum()) == k


@_with_torch
@pytest.mark.parametrize('kind', ['linear', 'conv'])
def test_l1_unstructured_bias_and_importance_scores(kind):
    a, b = _pair(kind)
    prune.l1_unstructured(a, 'bias', amount=2)
    _tp().l1_unstructured(b, 'bias', amount=2)
    _same(a, b, kind, 'bias')
    a, b = _pair(kind)
    s = np.random.RandomState(5).randn(*b.weight.shape).astype(np.float32)
    prune.l1_unstructured(a, 'weight', amount=0.4, importance_scores=tg.tensor(s))
    _tp().l1_unstructured(b, 'weight', amount=0.4,
                                         importance_scores=torch.tensor(s))
    _same(a, b, kind)


@_with_torch
@pytest.mark.parametrize('kind', ['linear', 'conv'])
@pytest.mark.parametrize('n', [1, 2, math.inf, -math.inf])
@pytest.mark.parametrize('dim', [0, 1, -1])
@pytest.mark.parametrize('amount', [1, 0.5])
def test_ln_structured(kind, n, dim, amount):
    a, b = _pair(kind)
    prune.ln_structured(a, 'weight', amount=amount, n=n, dim=dim)
    _tp().ln_structured(b, 'weight', amount=amount, n=n, dim=dim)
    _same(a, b, kind)


@_with_torch
def test_ln_structured_importance_scores():
    a, b = _pair('conv')
    s = np.random.RandomState(6).randn(*b.weight.shape).astype(np.float32)
    prune.ln_structured(a, 'weight', 2, 2, 0, importance_scores=tg.tensor(s))
    _tp().ln_structured(b, 'weight', 2, 2, 0, importance_scores=torch.tensor(s))
    _same(a, b, 'conv')


@_with_torch
def test_custom_from_mask():
    a, b = _pair('linear')
    m = (np.random.RandomState(3).rand(6, 4) > 0.5).astype(np.float32)
    prune.custom_from_mask(a, 'weight', mask=tg.tensor(m))
    _tp().custom_from_mask(b, 'weight', mask=torch.tensor(m))
    _same(a, b, 'linear')
    np.testing.assert_array_equal(_np(a.weight_mask), m)


@_with_torch
@pytest.mark.parametrize('amount', [0.3, 7])
def test_global_unstructured(amount):
    a1, b1 = _pair('linear')
    a2, b2 = _pair('conv')
    prune.global_unstructured([(a1, 'weight'), (a2, 'weight'), (a2, 'bias')],
                              pruning_method=prune.L1Unstructured, amount=amount)
    _tp().global_unstructured(
        [(b1, 'weight'), (b2, 'weight'), (b2, 'bias')],
        pruning_method=_tp().L1Unstructured, amount=amount)
    _same(a1, b1, 'linear')
    _same(a2, b2, 'conv')
    np.testing.assert_array_equal(_np(a2.bias_mask), _np(b2.bias_mask))
    assert isinstance(list(a2._forward_pre_hooks.values())[0], prune.CustomFromMask)


@_with_torch
def test_global_unstructured_importance_scores_and_repeat():
    a1, b1 = _pair('linear')
    a2, b2 = _pair('conv')
    s = np.abs(np.random.RandomState(4).randn(6, 4)).astype(np.float32) * 0.1
    prune.global_unstructured([(a1, 'weight'), (a2, 'weight')], prune.L1Unstructured,
                              importance_scores={(a1, 'weight'): tg.tensor(s)}, amount=0.3)
    _tp().global_unstructured(
        [(b1, 'weight'), (b2, 'weight')], _tp().L1Unstructured,
        importance_scores={(b1, 'weight'): torch.tensor(s)}, amount=0.3)
    # again: only what is left is pruned further (a container of two masks)
    prune.global_unstructured([(a1, 'weight'), (a2, 'weight')], prune.L1Unstructured,
                              amount=10)
    _tp().global_unstructured(
        [(b1, 'weight'), (b2, 'weight')], _tp().L1Unstructured, amount=10)
    _same(a1, b1, 'linear')
    _same(a2, b2, 'conv')
    hook = list(a1._forward_pre_hooks.values())[0]
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 2


@_with_torch
@pytest.mark.parametrize('kind', ['linear', 'conv'])
def test_iterative_pruning(kind):
    a, b = _pair(kind)
    tp = _tp()
    prune.l1_unstructured(a, 'weight', amount=0.3)
    tp.l1_unstructured(b, 'weight', amount=0.3)
    prune.ln_structured(a, 'weight', amount=1, n=2, dim=0)
    tp.ln_structured(b, 'weight', amount=1, n=2, dim=0)
    _same(a, b, kind)
    prune.l1_unstructured(a, 'weight', amount=0.3)
    tp.l1_unstructured(b, 'weight', amount=0.3)
    _same(a, b, kind)
    prune.ln_structured(a, 'weight', amount=0.5, n=1, dim=-1)
    tp.ln_structured(b, 'weight', amount=0.5, n=1, dim=-1)
    _same(a, b, kind)
    hooks = list(a._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert [type(m).__name__ for m in hooks[0]] == \
        ['L1Unstructured', 'LnStructured', 'L1Unstructured', 'LnStructured']
    assert hooks[0][1].dim == 0 and hooks[0]._tensor_name == 'weight'
    # remove: weight is a parameter again, with the pruned values
    pruned = _np(a.weight).copy()
    prune.remove(a, 'weight')
    tp.remove(b, 'weight')
    assert isinstance(a.weight, tg.nn.Parameter)
    np.testing.assert_array_equal(_np(a.weight), pruned)
    np.testing.assert_allclose(_np(a.weight), _np(b.weight), rtol=1e-6)
    assert list(a.state_dict()) == list(b.state_dict())
    assert not prune.is_pruned(a) and not tp.is_pruned(b)


@_with_torch
def test_prune_method_prune():
    w = np.random.RandomState(7).randn(5, 3).astype(np.float32)
    for ours, theirs in [(prune.L1Unstructured(0.4), _tp().L1Unstructured(0.4)),
                         (prune.LnStructured(2, 1, 0), _tp().LnStructured(2, 1, 0))]:
        np.testing.assert_allclose(_np(ours.prune(tg.tensor(w))),
                                   theirs.prune(torch.tensor(w)).numpy())


# ---- no torch needed: hand-computed masks -------------------------------------------

def _linear(w, b=None):
    w = np.asarray(w, np.float32)
    m = tg.nn.Linear(w.shape[1], w.shape[0])
    with tg.no_grad():
        m.weight.copy_(tg.tensor(w))
        if b is not None:
            m.bias.copy_(tg.tensor(np.asarray(b, np.float32)))
    return m


W = [[1.0, -5.0, 2.0], [0.5, 3.0, -4.0]]


def test_l1_by_hand():
    m = _linear(W)
    orig = m.weight
    prune.l1_unstructured(m, 'weight', amount=2)
    np.testing.assert_array_equal(_np(m.weight_mask), [[0, 1, 1], [0, 1, 1]])
    np.testing.assert_array_equal(_np(m.weight), [[0, -5, 2], [0, 3, -4]])
    assert m.weight_orig is orig  # the same Parameter object
    assert 'weight' not in m._parameters and 'weight_mask' in m._buffers
    assert list(m.state_dict()) == ['bias', 'weight_orig', 'weight_mask']
    assert not m.weight_mask.requires_grad
    # round(0.5 * 6) == 3 (Python's rounding, as PyTorch's)
    m = _linear(W)
    prune.l1_unstructured(m, 'weight', amount=0.5)
    np.testing.assert_array_equal(_np(m.weight_mask), [[0, 1, 0], [0, 1, 1]])
    m = _linear(W)
    prune.l1_unstructured(m, 'weight', amount=0.25)  # round(1.5) == 2
    assert int((m.weight_mask == 0).sum()) == 2


def test_ln_structured_by_hand():
    m = _linear(W)
    prune.ln_structured(m, 'weight', amount=1, n=1, dim=0)  # row norms 8, 7.5
    np.testing.assert_array_equal(_np(m.weight_mask), [[1, 1, 1], [0, 0, 0]])
    m = _linear(W)
    prune.ln_structured(m, 'weight', amount=1, n=math.inf, dim=1)  # 1, 5, 4
    np.testing.assert_array_equal(_np(m.weight_mask), [[0, 1, 1], [0, 1, 1]])
    # then the next column among the kept ones (2-norms: -, 5.83, 4.47)
    prune.ln_structured(m, 'weight', amount=1, n=2, dim=1)
    np.testing.assert_array_equal(_np(m.weight_mask), [[0, 1, 0], [0, 1, 0]])


def test_iterative_respects_earlier_mask_by_hand():
    m = _linear(W)
    prune.custom_from_mask(m, 'weight', tg.tensor([[1., 0., 1.], [1., 1., 1.]]))
    prune.l1_unstructured(m, 'weight', amount=1)  # of 1, 2, .5, 3, -4: the 0.5
    np.testing.assert_array_equal(_np(m.weight_mask), [[1, 0, 1], [0, 1, 1]])
    prune.l1_unstructured(m, 'weight', amount=0.5)  # round(0.5 * 4) == 2 of 1, 2, 3, -4
    np.testing.assert_array_equal(_np(m.weight_mask), [[0, 0, 0], [0, 1, 1]])


def test_forward_hook_recomputes_and_gradients():
    m = _linear(W, [0.0, 0.0])
    prune.l1_unstructured(m, 'weight', amount=2)
    hook = list(m._forward_pre_hooks.values())[0]
    assert isinstance(hook, prune.L1Unstructured) and hook._tensor_name == 'weight'
    with tg.no_grad():
        m.weight_orig.add_(1.0)
    y = m(tg.tensor([[1.0, 1.0, 1.0]]))
    np.testing.assert_allclose(_np(y), [[0 - 4 + 3, 0 + 4 - 3]])
    np.testing.assert_array_equal(_np(m.weight), [[0, -4, 3], [0, 4, -3]])
    y.sum().backward()
    np.testing.assert_array_equal(_np(m.weight_orig.grad), [[0, 1, 1], [0, 1, 1]])
    # an optimizer step on weight_orig: the pruned entries stay 0 in weight
    opt = tg.optim.SGD(m.parameters(), lr=0.1)
    opt.step()
    m(tg.tensor([[1.0, 1.0, 1.0]]))
    assert _np(m.weight)[0, 0] == 0 and _np(m.weight)[1, 0] == 0


def test_identity_remove_is_pruned():
    net = tg.nn.Sequential(_linear(W), tg.nn.ReLU())
    assert not prune.is_pruned(net)
    prune.identity(net[0], 'weight')
    assert prune.is_pruned(net) and prune.is_pruned(net[0])
    np.testing.assert_array_equal(_np(net[0].weight_mask), np.ones((2, 3)))
    prune.random_unstructured(net[0], 'bias', amount=1)
    prune.remove(net[0], 'weight')
    assert isinstance(net[0].weight, tg.nn.Parameter) and 'weight_orig' not in net[0]._parameters
    assert prune.is_pruned(net)
    prune.remove(net[0], 'bias')
    assert not prune.is_pruned(net)
    assert [n for n, _ in net.named_parameters()] == ['0.weight', '0.bias']
    assert int((net[0].bias == 0).sum()) >= 1
    with pytest.raises(ValueError, match=re.escape(
            "Parameter 'weight' of module Linear(in_features=3, out_features=2, bias=True) "
            "has to be pruned before pruning can be removed")):
        prune.remove(net[0], 'weight')


def test_random_unstructured_counts():
    m = tg.nn.Linear(10, 8)
    prune.random_unstructured(m, 'weight', amount=0.3)  # round(24.0) == 24
    mask = _np(m.weight_mask)
    assert set(np.unique(mask)) <= {0.0, 1.0} and (mask == 0).sum() == 24
    prune.random_unstructured(m, 'weight', amount=10)
    mask2 = _np(m.weight_mask)
    assert (mask2 == 0).sum() == 34 and np.all(mask2[mask == 0] == 0)
    prune.random_unstructured(m, 'weight', amount=0.5)  # of the 46 left
    mask3 = _np(m.weight_mask)
    assert (mask3 == 0).sum() == 34 + 23 and np.all(mask3[mask2 == 0] == 0)
    np.testing.assert_array_equal(_np(m.weight), _np(m.weight_orig) * mask3)


def test_random_structured_counts():
    m = tg.nn.Conv2d(6, 8, 3)
    prune.random_structured(m, 'weight', amount=3, dim=0)
    mask = _np(m.weight_mask)
    assert set(np.unique(mask)) <= {0.0, 1.0}
    gone = np.all(mask == 0, axis=(1, 2, 3))
    assert gone.sum() == 3 and np.all(mask[~gone] == 1)
    prune.random_structured(m, 'weight', amount=0.5, dim=1)  # 3 of the 6 input channels
    mask2 = _np(m.weight_mask)
    assert np.all(mask2[mask == 0] == 0)
    assert np.all(mask2[gone] == 0)
    cols = np.all(mask2[~gone] == 0, axis=(0, 2, 3))
    assert cols.sum() == 3
    prune.random_structured(m, 'weight', amount=2, dim=0)  # 2 of the 5 rows left
    gone3 = np.all(_np(m.weight_mask) == 0, axis=(1, 2, 3))
    assert gone3.sum() == 5 and np.all(gone3[gone])


def test_pruning_container_api():
    a = prune.L1Unstructured(1)
    a._tensor_name = 'weight'
    c = prune.PruningContainer(a)
    assert len(c) == 1 and c[0] is a and list(c) == [a]
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)
    b = prune.L1Unstructured(1)
    b._tensor_name = 'bias'
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the "
                                         "parameter named 'weight' to PruningContainer"):
        c.add_pruning_method(b)
    with pytest.raises(TypeError):
        prune.BasePruningMethod()  # abstract


# ---- errors (PyTorch's messages) -------------------------------------------------------

@pytest.mark.parametrize('fn', [
    lambda m, a: prune.l1_unstructured(m, 'weight', amount=a),
    lambda m, a: prune.random_unstructured(m, 'weight', amount=a),
    lambda m, a: prune.random_structured(m, 'weight', amount=a, dim=0),
    lambda m, a: prune.ln_structured(m, 'weight', amount=a, n=2, dim=0),
])
def test_amount_errors(fn):
    m = _linear(W)
    with pytest.raises(ValueError, match=re.escape(
            "amount=-1 should either be a float in the range [0, 1] or a non-negative "
            "integer")):
        fn(m, -1)
    with pytest.raises(ValueError, match=re.escape(
            "amount=1.5 should either be a float in the range [0, 1] or a non-negative "
            "integer")):
        fn(m, 1.5)
    with pytest.raises(TypeError, match=re.escape(
            "Invalid type for amount: x. Must be int or float.")):
        fn(m, 'x')
    # nothing changed by the failed calls
    assert list(m.state_dict()) == ['weight', 'bias'] and not prune.is_pruned(m)


def test_amount_too_large_restores_module():
    m = _linear(W)
    w = m.weight
    with pytest.raises(ValueError, match=re.escape(
            "amount=7 should be smaller than the number of parameters to prune=6")):
        prune.l1_unstructured(m, 'weight', amount=7)
    # the parameter is put back (last, as PyTorch's re-registration does)
    assert m.weight is w and list(m.state_dict()) == ['bias', 'weight']
    assert not prune.is_pruned(m)
    with pytest.raises(ValueError, match=re.escape(
            "amount=3 should be smaller than the number of parameters to prune=2")):
        prune.ln_structured(m, 'weight', amount=3, n=1, dim=0)
    assert m.weight is w and not prune.is_pruned(m)
    # iterative: the count is checked against what is left
    prune.l1_unstructured(m, 'weight', amount=4)
    with pytest.raises(ValueError, match=re.escape(
            "amount=3 should be smaller than the number of parameters to prune=2")):
        prune.l1_unstructured(m, 'weight', amount=3)
    # (PyTorch drops the earlier hook here; tensorgraph keeps it and its mask)
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.L1Unstructured)
    assert int((m.weight_mask == 0).sum()) == 4
    prune.l1_unstructured(m, 'weight', amount=1)
    with pytest.raises(ValueError, match="amount=2 should be smaller"):
        prune.l1_unstructured(m, 'weight', amount=2)
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and len(hooks[0]) == 2
    np.testing.assert_array_equal(_np(m.weight_mask), [[0, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(_np(m(tg.eye(3)) - m.bias), [[0, 0], [-5, 0], [0, 0]])


def test_structured_errors():
    m = _linear(W)
    with pytest.raises(ValueError, match=re.escape(
            "Structured pruning can only be applied to multidimensional tensors. Found "
            "tensor of shape tensorgraph.Size([2]) with 1 dims")):
        prune.ln_structured(m, 'bias', amount=1, n=1, dim=0)
    with pytest.raises(IndexError, match=re.escape(
            "Invalid index 2 for tensor of size tensorgraph.Size([2, 3])")):
        prune.random_structured(m, 'weight', amount=1, dim=2)
    assert not prune.is_pruned(m)


def test_global_unstructured_errors():
    m = _linear(W)
    with pytest.raises(TypeError, match="global_unstructured\\(\\): parameters is not an "
                                        "Iterable"):
        prune.global_unstructured(3, prune.L1Unstructured, amount=1)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        prune.global_unstructured([(m, 'weight')], prune.L1Unstructured,
                                  importance_scores=[1], amount=1)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported for the '
                                        '`pruning_method`'):
        prune.global_unstructured([(m, 'weight')], prune.RandomStructured, amount=1)
