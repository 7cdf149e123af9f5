"""nn.AdaptiveLogSoftmaxWithLoss, nn.DataParallel and nn.SyncBatchNorm
against PyTorch 1.13 (CPU): values, gradients, state_dict keys, reprs and
the checks."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
from conftest import torch, needs_torch, SANITIZED

nn = tg.nn


def _copy_state(ours, theirs):
    ours.load_state_dict({k: tg.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})


def _asm_pair(in_features, n_classes, cutoffs, div_value=4.0, head_bias=False):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # zero-element tail projections
        ours = nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value,
                                             head_bias)
        theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs,
                                                     div_value=div_value, head_bias=head_bias)
    theirs = theirs.double()
    ours = ours.double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        assert tuple(ours.state_dict()[k].shape) == tuple(v.shape), k
    _copy_state(ours, theirs)
    return ours, theirs


SETTINGS = [(16, 20, [5, 10], 4.0, False), (16, 20, [5, 10], 2.0, True),
            (12, 30, [3, 8, 20], 2.0, False), (10, 6, [2], 1.5, True),
            (8, 20, [5, 10], 4.0, False)]   # 8 // 16 = 0: an empty projection


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
@pytest.mark.parametrize("setting", SETTINGS)
def test_adaptive_batched_matches_torch(setting):
    in_features, n_classes = setting[:2]
    ours, theirs = _asm_pair(*setting)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((9, in_features))
    t = rng.integers(0, n_classes, 9)
    t[:3] = [0, n_classes - 1, setting[2][0]]   # the shortlist, the last cluster's edge
    xo = tg.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out, loss = ours(xo, tg.tensor(t))
    want = theirs(xt, torch.tensor(t))
    np.testing.assert_allclose(out.detach().numpy(), want.output.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(loss.item(), want.loss.item(), rtol=1e-10)
    (loss * 2 + out[0]).backward()
    (want.loss * 2 + want.output[0]).backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    got = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        g = got[name].grad
        want_g = p.grad.numpy() if p.grad is not None else np.zeros(tuple(p.shape))
        np.testing.assert_allclose(g.numpy() if g is not None else np.zeros(tuple(p.shape)),
                                   want_g, rtol=1e-9, atol=1e-12, err_msg=name)

    np.testing.assert_allclose(ours.log_prob(tg.tensor(x)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    np.testing.assert_array_equal(ours.predict(tg.tensor(x)).detach().numpy(),
                                  theirs.predict(torch.tensor(x)).detach().numpy())


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
@pytest.mark.parametrize("target", [0, 7, 19])
def test_adaptive_unbatched_matches_torch(target):
    ours, theirs = _asm_pair(16, 20, [5, 10], 2.0, True)
    x = np.random.default_rng(2).standard_normal(16)
    xo = tg.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out, loss = ours(xo, tg.tensor(target))
    want = theirs(xt, torch.tensor(target))
    assert out.ndim == 0 and loss.ndim == 0
    np.testing.assert_allclose(out.item(), want.output.item(), rtol=1e-10)
    np.testing.assert_allclose(loss.item(), want.loss.item(), rtol=1e-10)
    loss.backward()
    want.loss.backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.head.weight.grad.numpy(), theirs.head.weight.grad.numpy(),
                               rtol=1e-9, atol=1e-12)


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
def test_adaptive_predict_mixed_rows_and_log_prob_grad():
    ours, theirs = _asm_pair(6, 12, [2, 5], 1.0, True)
    with torch.no_grad():   # a head that favours the clusters for some rows
        theirs.head.bias.copy_(torch.tensor([0.0, 0.0, 3.0, -3.0], dtype=torch.float64))
    _copy_state(ours, theirs)
    x = np.random.default_rng(3).standard_normal((40, 6)) * 3
    got = ours.predict(tg.tensor(x)).detach().numpy()
    want = theirs.predict(torch.tensor(x)).detach().numpy()
    np.testing.assert_array_equal(got, want)
    assert (want < 2).any() and (want >= 2).any()
    np.testing.assert_array_equal(got, ours.log_prob(tg.tensor(x)).detach().numpy().argmax(1))
    xo = tg.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    (ours.log_prob(xo) ** 2).sum().backward()
    (theirs.log_prob(xt) ** 2).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(ours.tail[1][0].weight.grad.numpy(),
                               theirs.tail[1][0].weight.grad.numpy(), rtol=1e-9)


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
def test_adaptive_repr_and_float32():
    ours = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10], head_bias=True)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10], head_bias=True)
    assert repr(ours) == repr(theirs)
    _copy_state(ours, theirs)
    x = np.random.default_rng(4).standard_normal((5, 16)).astype(np.float32)
    t = np.array([0, 4, 5, 12, 19])
    out, loss = ours(tg.tensor(x), tg.tensor(t))
    want = theirs(torch.tensor(x), torch.tensor(t))
    assert out.dtype == tg.float32
    np.testing.assert_allclose(out.detach().numpy(), want.output.detach().numpy(), rtol=1e-5)


def test_adaptive_structure_and_checks():
    m = nn.AdaptiveLogSoftmaxWithLoss(16, 20, (5, 10), div_value=2.0)
    assert m.cutoffs == [5, 10, 20] and m.shortlist_size == 5 and m.n_clusters == 2
    assert m.head_size == 7 and m.head.bias is None
    assert [tuple(p.shape) for p in m.parameters()] == [(7, 16), (8, 16), (5, 8), (4, 16),
                                                        (10, 4)]
    before = m.head.weight.detach().numpy().copy()
    m.reset_parameters()
    assert not np.array_equal(before, m.head.weight.detach().numpy())
    msg = "cutoffs should be a sequence of unique, positive integers"
    for bad in ([10, 5], [0, 5], [5, 20], [5, 5], [2.5], [5, 19, 30]):
        with pytest.raises(ValueError, match=msg):
            nn.AdaptiveLogSoftmaxWithLoss(16, 20, bad)
    with pytest.raises(ValueError):
        nn.AdaptiveLogSoftmaxWithLoss(16, 20, [])
    x = tg.randn(3, 16)
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(x, tg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input"):
        m(tg.randn(3), tg.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="0D target tensor expects 1D input"):
        m(x, tg.tensor(1))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        m(x, tg.tensor([[0], [1], [2]]))
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 19\], but "
                                           r"values in range \[-1, 20\] were found"):
        m(x, tg.tensor([-1, 3, 20]))
    res = m(x, tg.tensor([0, 6, 19]))
    assert type(res).__name__ == '_ASMoutput' and res._fields == ('output', 'loss')
    assert res.output is res[0] and tuple(res.output.shape) == (3,)


def test_data_parallel_cpu():
    inner = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    for dp in (nn.DataParallel(inner), nn.parallel.DataParallel(inner, [0, 1], 1, dim=1)):
        assert dp.module is inner and dp.device_ids == []
        assert list(dp.state_dict()) == ['module.' + k for k in inner.state_dict()]
        x = tg.randn(5, 3)
        inner.eval()
        np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    seen = {}

    class Kw(nn.Module):
        def forward(self, a, b=0, *, c=1):
            seen.update(a=a, b=b, c=c)
            return a

    nn.DataParallel(Kw())(7, b=2, c=3)
    assert seen == {'a': 7, 'b': 2, 'c': 3}
    assert nn.DataParallel is nn.parallel.DataParallel


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
def test_data_parallel_like_torch():
    ours = nn.DataParallel(nn.Linear(2, 3), device_ids=[0], output_device=0, dim=1)
    theirs = torch.nn.DataParallel(torch.nn.Linear(2, 3), device_ids=[0], output_device=0,
                                   dim=1)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.device_ids == theirs.device_ids
    for attr in ('dim', 'output_device', 'src_device_obj'):
        assert hasattr(ours, attr) == hasattr(theirs, attr), attr
    _copy_state(ours, theirs)
    x = np.random.default_rng(5).standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_allclose(ours(tg.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6)


def test_sync_batchnorm_cpu():
    m = nn.SyncBatchNorm(3, process_group='pg')
    assert m.process_group == 'pg'
    assert list(m.state_dict()) == ['weight', 'bias', 'running_mean', 'running_var',
                                    'num_batches_tracked']
    for mode in (m.train, m.eval):
        mode()
        with pytest.raises(ValueError, match="SyncBatchNorm expected input tensor to be on GPU"):
            m(tg.randn(4, 3))
    assert m.num_batches_tracked.item() == 0   # raised before any update


def test_convert_sync_batchnorm():
    bn1 = nn.BatchNorm1d(4, eps=1e-3, momentum=0.2)
    bn1.running_mean.fill_(0.5)
    bn2 = nn.BatchNorm2d(2, affine=False, track_running_stats=False)
    inner = nn.Sequential(nn.Linear(3, 4), bn1)
    tree = nn.Sequential(inner, nn.Sequential(nn.Conv2d(1, 2, 1), bn2), nn.BatchNorm3d(5))
    tree.eval()
    keys = list(tree.state_dict())
    out = nn.SyncBatchNorm.convert_sync_batchnorm(tree, process_group='g')
    assert out is tree and list(out.state_dict()) == keys
    s1, s2, s3 = out[0][1], out[1][1], out[2]
    assert all(type(s) is nn.SyncBatchNorm for s in (s1, s2, s3))
    assert s1.weight is bn1.weight and s1.bias is bn1.bias
    assert s1.running_mean is bn1.running_mean and s1.running_var is bn1.running_var
    assert s1.num_batches_tracked is bn1.num_batches_tracked
    assert (s1.eps, s1.momentum, s1.process_group) == (1e-3, 0.2, 'g')
    assert s2.weight is None and s2.running_mean is None and not s2.track_running_stats
    assert s1.training and not out[0][0].training   # new modules start training
    assert repr(s1) == ("SyncBatchNorm(4, eps=0.001, momentum=0.2, affine=True, "
                        "track_running_stats=True)")
    bn = nn.BatchNorm1d(3)
    bn.qconfig = 'q'
    single = nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert single is not bn and single.qconfig == 'q' and single.process_group is None
    lin = nn.Linear(2, 2)
    assert nn.SyncBatchNorm.convert_sync_batchnorm(lin) is lin


@needs_torch
@pytest.mark.skipif(SANITIZED, reason="torch under the sanitizers")
def test_sync_batchnorm_like_torch():
    for args in [(3,), (3, 1e-3, 0.2, False, False)]:
        assert repr(nn.SyncBatchNorm(*args)) == repr(torch.nn.SyncBatchNorm(*args))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.BatchNorm2d(2, affine=False))
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.BatchNorm2d(2, affine=False))
    theirs.eval()
    ours.eval()
    theirs = torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs)
    ours = nn.SyncBatchNorm.convert_sync_batchnorm(ours)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
