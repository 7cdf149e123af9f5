"""nn API gaps found by comparing tensorgraph's classes and functions with
PyTorch 1.13's: F.multi_margin_loss's positional order, the norms'
reset_parameters / reset_running_stats, EmbeddingBag.from_pretrained and
reset_parameters, PackedSequence's dtype conversions and
nn.utils.rnn.invert_permutation."""
import numpy as np
import pytest

import tensorgraph as tg
from conftest import SANITIZED, needs_torch, torch

pytestmark = needs_torch


def test_multi_margin_loss_positional_p_margin_weight():
    x = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    t, w = np.array([1, 0, 3]), np.array([0.5, 1.0, 2.0, 1.5], np.float32)
    got = tg.nn.functional.multi_margin_loss(tg.tensor(x), tg.tensor(t), 2, 0.4, tg.tensor(w))
    want = torch.nn.functional.multi_margin_loss(torch.tensor(x), torch.tensor(t), 2, 0.4,
                                                 torch.tensor(w))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


NORMS = [('BatchNorm1d', (3,), (4, 3)), ('BatchNorm2d', (3,), (4, 3, 2, 2)),
         ('BatchNorm3d', (3,), (2, 3, 2, 2, 2)), ('InstanceNorm1d', (3,), (2, 3, 5)),
         ('InstanceNorm2d', (3,), (2, 3, 2, 3)), ('LayerNorm', (3,), (2, 3)),
         ('GroupNorm', (1, 3), (2, 3, 4))]


@pytest.mark.parametrize('name,args,shape', NORMS)
def test_norm_reset_parameters_and_running_stats(name, args, shape):
    kw = {} if name in ('LayerNorm', 'GroupNorm') else dict(affine=True,
                                                             track_running_stats=True)
    x = (np.random.RandomState(1).randn(*shape) * 3 + 2).astype(np.float32)
    states = []
    for L in (torch, tg):
        m = getattr(L.nn, name)(*args, **kw)
        m(L.tensor(x))
        with L.no_grad():
            for p in m.parameters():
                p.fill_(5.0)
        if hasattr(m, 'reset_running_stats'):
            m.reset_running_stats()
            assert int(m.num_batches_tracked) == 0
        m.reset_parameters()
        states.append({k: v.numpy() for k, v in m.state_dict().items()})
    assert list(states[1]) == list(states[0])
    for k in states[0]:
        np.testing.assert_array_equal(states[1][k], states[0][k])


def test_norm_reset_without_affine_or_stats():
    for m in (tg.nn.BatchNorm1d(3, affine=False, track_running_stats=False),
              tg.nn.InstanceNorm1d(3), tg.nn.LayerNorm(3, elementwise_affine=False),
              tg.nn.GroupNorm(1, 3, affine=False)):
        m.reset_parameters()
        assert m.weight is None


@pytest.mark.parametrize('freeze', [True, False])
def test_embedding_bag_from_pretrained(freeze):
    w = np.random.RandomState(2).randn(6, 3).astype(np.float32)
    kw = dict(freeze=freeze, mode='sum', padding_idx=1, include_last_offset=True)
    a = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), **kw)
    b = tg.nn.EmbeddingBag.from_pretrained(tg.tensor(w), **kw)
    assert repr(b) == repr(a)
    assert b.weight.requires_grad == a.weight.requires_grad == (not freeze)
    idx, offs = [0, 1, 2, 5, 4], [0, 2, 5]
    np.testing.assert_allclose(b(tg.tensor(idx), tg.tensor(offs)).detach().numpy(),
                               a(torch.tensor(idx), torch.tensor(offs)).detach().numpy(),
                               rtol=1e-6)
    with pytest.raises(AssertionError, match="2-dimensional"):
        tg.nn.EmbeddingBag.from_pretrained(tg.zeros(3))


def test_embedding_bag_reset_parameters_zeroes_padding_row():
    m = tg.nn.EmbeddingBag(5, 2, padding_idx=3)
    with tg.no_grad():
        m.weight.fill_(7.0)
    m.reset_parameters()
    w = m.weight.detach().numpy()
    assert (w[3] == 0).all() and (w[[0, 1, 2, 4]] != 7.0).all()


@pytest.mark.parametrize('method', ['cpu', 'double', 'float', 'long', 'int', 'byte'])
def test_packed_sequence_conversions(method):
    seqs = [np.arange(6.0).reshape(3, 2), np.arange(4.0).reshape(2, 2)]
    p = {L: getattr(L.nn.utils.rnn.pack_sequence([L.tensor(s) for s in seqs],
                                                 enforce_sorted=False), method)()
         for L in (torch, tg)}
    assert type(p[tg]).__name__ == 'PackedSequence'
    assert str(p[tg].data.dtype).split('.')[-1] == str(p[torch].data.dtype).split('.')[-1]
    np.testing.assert_array_equal(p[tg].data.numpy(), p[torch].data.numpy())
    np.testing.assert_array_equal(p[tg].batch_sizes.numpy(), p[torch].batch_sizes.numpy())


def test_invert_permutation():
    perm = [2, 0, 3, 1]
    np.testing.assert_array_equal(
        tg.nn.utils.rnn.invert_permutation(tg.tensor(perm)).numpy(),
        torch.nn.utils.rnn.invert_permutation(torch.tensor(perm)).numpy())
    assert tg.nn.utils.rnn.invert_permutation(None) is None


@pytest.mark.parametrize('kw', [dict(num_layers=1.5), dict(hidden_size=4.0)])
def test_rnn_non_integer_sizes_are_type_errors(kw):
    args = {**dict(input_size=3, hidden_size=4), **kw}
    if not SANITIZED:  # PyTorch's argument parser throws a C++ exception
        with pytest.raises(TypeError):
            torch.nn.LSTM(**args)
    with pytest.raises(TypeError, match="should be of type int"):
        tg.nn.LSTM(**args)
    with pytest.raises(ValueError, match="greater than zero"):
        tg.nn.GRU(3, 4, num_layers=0)


@pytest.mark.parametrize('cls', ['Upsample', 'UpsamplingNearest2d', 'UpsamplingBilinear2d'])
def test_upsample_name_attribute(cls):
    assert getattr(tg.nn, cls)(scale_factor=2).name == getattr(torch.nn, cls)(scale_factor=2).name


def _same_error(fn):
    """fn(L) raises the same exception type for PyTorch and tensorgraph"""
    kinds = []
    for L in (torch, tg):
        with pytest.raises(Exception) as e:
            fn(L)
        kinds.append(type(e.value))
    assert kinds[1] is kinds[0]
    return e.value


def test_transformer_checks_feature_size():
    def run(L):
        m = L.nn.Transformer(4, 2, 1, 1, 8, 0.0)
        m(L.zeros(3, 2, 5), L.zeros(3, 2, 5))
    assert "feature number of src and tgt" in str(_same_error(run))

    def batch(L):
        L.nn.Transformer(4, 2, 1, 1, 8, 0.0)(L.zeros(3, 2, 4), L.zeros(3, 3, 4))
    assert "batch number of src and tgt" in str(_same_error(batch))


def test_instance_norm_one_spatial_element():
    err = _same_error(lambda L: L.nn.InstanceNorm2d(3)(L.zeros(2, 3, 1, 1)))
    assert "Expected more than 1 spatial element when training" in str(err)


@pytest.mark.parametrize('offsets,words', [([1], "offsets[0] has to be 0"),
                                           ([0, 5], "can not be greater than input's length"),
                                           ([0, 2, 1], None)])
def test_embedding_bag_offsets_checked(offsets, words):
    def run(L):
        L.nn.EmbeddingBag(4, 2)(L.tensor([1, 2, 3]), L.tensor(offsets))
    if SANITIZED:
        pytest.skip("drives PyTorch into a C++ exception")
    err = _same_error(run)
    if words:
        assert words in str(err)
