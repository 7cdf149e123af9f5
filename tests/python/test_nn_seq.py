"""Recurrent layers, attention and transformer layers, parameter
containers (nn/rnn.py, nn/transformer.py, nn/param_containers.py) against
PyTorch: state_dict keys and shapes, outputs with PyTorch's weights loaded,
gradients of inputs and of every parameter, errors."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
from conftest import needs_torch, torch

pytestmark = needs_torch
rng = np.random.default_rng(0)


def a(*shape):
    return rng.uniform(-1, 1, size=shape)


def twin(name, *args, **kwargs):
    """the tensorgraph and torch modules, float64, torch's weights loaded"""
    m_t = getattr(torch.nn, name)(*args, **kwargs).double()
    m_tg = getattr(nn, name)(*args, **kwargs).double()
    sd = m_t.state_dict()
    assert list(m_tg.state_dict()) == list(sd), (list(m_tg.state_dict()), list(sd))
    for k, v in m_tg.state_dict().items():
        assert tuple(v.shape) == tuple(sd[k].shape), k
    m_tg.load_state_dict({k: tg.tensor(v.numpy()) for k, v in sd.items()})
    m_t.eval()
    m_tg.eval()
    return m_tg, m_t


def flat(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r += flat(o)
        return r
    return [] if out is None else [out]


def compare(m_tg, m_t, *arrays, call=None, rtol=1e-7, atol=1e-9, **kw):
    """forward outputs and gradients (inputs and parameters) of
    sum(out_i * w_i) over all outputs"""
    xs_tg = [tg.tensor(x, requires_grad=x.dtype == np.float64) if isinstance(x, np.ndarray)
             else x for x in arrays]
    xs_t = [torch.tensor(x, requires_grad=x.dtype == np.float64) if isinstance(x, np.ndarray)
            else x for x in arrays]
    call = call or (lambda m, *xs: m(*xs, **kw))
    o_tg, o_t = flat(call(m_tg, *xs_tg)), flat(call(m_t, *xs_t))
    assert len(o_tg) == len(o_t)
    loss_tg, loss_t = 0, 0
    for p, q in zip(o_tg, o_t):
        assert p.shape == tuple(q.shape), (p.shape, q.shape)
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol, atol)
        w = a(*q.shape)
        loss_tg = loss_tg + (p * tg.tensor(w)).sum()
        loss_t = loss_t + (q * torch.tensor(w)).sum()
    loss_tg.backward()
    loss_t.backward()
    for x, y in zip(xs_tg, xs_t):
        if isinstance(y, torch.Tensor) and y.requires_grad:
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol, atol)
    pt = dict(m_t.named_parameters())
    for name, p in m_tg.named_parameters():
        g = pt[name].grad
        if g is None:
            assert p.grad is None or not p.grad.numpy().any(), name
        else:
            np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol, atol, err_msg=name)


RNN_CASES = [
    dict(), dict(num_layers=2), dict(batch_first=True), dict(bidirectional=True),
    dict(num_layers=2, bidirectional=True, batch_first=True), dict(bias=False),
]


@pytest.mark.parametrize('kind', ['RNN', 'LSTM', 'GRU'])
@pytest.mark.parametrize('cfg', range(len(RNN_CASES)))
def test_recurrent(kind, cfg):
    kw = RNN_CASES[cfg]
    m_tg, m_t = twin(kind, 3, 4, **kw)
    x = a(2, 5, 3) if kw.get('batch_first') else a(5, 2, 3)
    compare(m_tg, m_t, x)
    # with an initial state
    d = (2 if kw.get('bidirectional') else 1) * kw.get('num_layers', 1)
    h0 = a(d, 2, 4)
    if kind == 'LSTM':
        c0 = a(d, 2, 4)
        compare(m_tg, m_t, x, h0, c0, call=lambda m, x, h, c: m(x, (h, c)))
    else:
        compare(m_tg, m_t, x, h0)


def test_recurrent_variants():
    m_tg, m_t = twin('RNN', 3, 4, 2, nonlinearity='relu')
    compare(m_tg, m_t, a(5, 2, 3))
    m_tg, m_t = twin('LSTM', 3, 4, bidirectional=True)
    compare(m_tg, m_t, a(5, 3))  # unbatched
    compare(m_tg, m_t, a(5, 3), a(2, 4), a(2, 4), call=lambda m, x, h, c: m(x, (h, c)))
    m_tg, m_t = twin('GRU', 3, 4)
    compare(m_tg, m_t, a(5, 3), a(1, 4))
    for cell in ('RNNCell', 'LSTMCell', 'GRUCell'):
        m_tg, m_t = twin(cell, 3, 4)
        compare(m_tg, m_t, a(2, 3))
        compare(m_tg, m_t, a(3))
        if cell == 'LSTMCell':
            compare(m_tg, m_t, a(2, 3), a(2, 4), a(2, 4), call=lambda m, x, h, c: m(x, (h, c)))
        else:
            compare(m_tg, m_t, a(2, 3), a(2, 4))
    m_tg, m_t = twin('RNNCell', 3, 4, nonlinearity='relu', bias=False)
    compare(m_tg, m_t, a(2, 3))
    assert repr(nn.LSTM(3, 4, 2, batch_first=True)) == repr(torch.nn.LSTM(3, 4, 2, batch_first=True))


def test_recurrent_init_and_errors():
    m = nn.LSTM(10, 16)
    for p in m.parameters():
        v = p.detach().numpy()
        assert np.abs(v).max() <= 0.25 and v.std() > 0.1
    with pytest.raises(RuntimeError):
        m(tg.zeros(5, 2, 9))
    with pytest.raises(RuntimeError):
        m(tg.zeros(5, 2, 10), (tg.zeros(2, 2, 16), tg.zeros(2, 2, 16)))
    with pytest.raises(ValueError):
        nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(ValueError):
        m(tg.zeros(1, 2, 3, 10))
    # dropout between layers runs in training mode
    g = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    out, h = g(tg.zeros(5, 2, 3) + 1)
    assert out.shape == (5, 2, 4) and h.shape == (2, 2, 4)


MHA_CASES = [
    (dict(), {}), (dict(batch_first=True), {}),
    (dict(), {'mask': 'bool'}), (dict(batch_first=True), {'mask': 'float', 'kpm': True}),
    (dict(kdim=5, vdim=3), {'kpm': True}), (dict(add_bias_kv=True), {'mask': 'bool', 'kpm': True}),
    (dict(add_zero_attn=True, bias=False), {'mask': 'float'}),
    (dict(), {'average': False}), (dict(), {'need_weights': False}),
    (dict(), {'mask3d': True}),
]


@pytest.mark.parametrize('case', range(len(MHA_CASES)))
def test_multihead_attention(case):
    kw, opt = MHA_CASES[case]
    E, H, L, S, N = 8, 2, 4, 5, 3
    m_tg, m_t = twin('MultiheadAttention', E, H, **kw)
    bf = kw.get('batch_first')
    shp = (lambda n, e: (N, n, e)) if bf else (lambda n, e: (n, N, e))
    q, k, v = a(*shp(L, E)), a(*shp(S, kw.get('kdim', E))), a(*shp(S, kw.get('vdim', E)))
    bool_mask = rng.uniform(size=(L, S)) > 0.7
    bool_mask[:, 0] = False
    kpm = np.zeros((N, S), dtype=bool)
    kpm[0, -2:] = True
    args = {}
    extra = []
    if opt.get('mask') == 'bool':
        extra.append(('attn_mask', bool_mask))
    if opt.get('mask') == 'float':
        extra.append(('attn_mask', a(L, S)))
    if opt.get('mask3d'):
        extra.append(('attn_mask', a(N * H, L, S)))
    if opt.get('kpm'):
        extra.append(('key_padding_mask', kpm))
    names = [n for n, _ in extra]
    for flag in ('need_weights',):
        if flag in opt:
            args[flag] = opt[flag]
    if 'average' in opt:
        args['average_attn_weights'] = opt['average']
    compare(m_tg, m_t, q, k, v, *[x for _, x in extra],
            call=lambda m, q, k, v, *ms: m(q, k, v, **dict(zip(names, ms)), **args))


def test_multihead_attention_unbatched_and_errors():
    m_tg, m_t = twin('MultiheadAttention', 6, 3)
    compare(m_tg, m_t, a(4, 6), a(5, 6), a(5, 6))
    with pytest.raises(AssertionError):
        nn.MultiheadAttention(7, 2)
    m = nn.MultiheadAttention(6, 3)
    with pytest.raises(RuntimeError):
        m(tg.zeros(4, 2, 6), tg.zeros(5, 2, 6), tg.zeros(5, 2, 6), attn_mask=tg.zeros(4, 4))
    with pytest.raises(AssertionError):
        m(tg.zeros(4, 2, 5), tg.zeros(5, 2, 5), tg.zeros(5, 2, 5))


@pytest.mark.parametrize('norm_first', [False, True])
@pytest.mark.parametrize('batch_first', [False, True])
def test_transformer_layers(norm_first, batch_first):
    kw = dict(dim_feedforward=16, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    m_tg, m_t = twin('TransformerEncoderLayer', 8, 2, **kw)
    x = a(3, 5, 8)
    mask = np.triu(np.full((5, 5), -np.inf), 1) if batch_first else np.zeros((3, 3))
    kpm = np.zeros((3, 5) if batch_first else (5, 3), dtype=bool)
    kpm[1, -1] = True
    compare(m_tg, m_t, x, mask, kpm, call=lambda m, x, mk, p: m(x, src_mask=mk,
                                                                  src_key_padding_mask=p))
    m_tg, m_t = twin('TransformerDecoderLayer', 8, 2, activation='gelu', **kw)
    compare(m_tg, m_t, a(3, 5, 8), a(3, 5, 8) if batch_first else a(4, 5, 8))


def test_transformer_stacks():
    layer_t = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0)
    layer_g = nn.TransformerEncoderLayer(8, 2, 16, 0.0)
    m_t = torch.nn.TransformerEncoder(layer_t, 2, torch.nn.LayerNorm(8)).double().eval()
    m_tg = nn.TransformerEncoder(layer_g, 2, nn.LayerNorm(8)).double().eval()
    assert list(m_tg.state_dict()) == list(m_t.state_dict())
    m_tg.load_state_dict({k: tg.tensor(v.numpy()) for k, v in m_t.state_dict().items()})
    compare(m_tg, m_t, a(4, 2, 8))
    m_tg, m_t = twin('Transformer', 8, 2, 1, 1, 16, 0.0)
    compare(m_tg, m_t, a(4, 2, 8), a(3, 2, 8))
    mask_tg = nn.Transformer.generate_square_subsequent_mask(4)
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(mask_tg.numpy(), mask_t.numpy())


def test_parameter_containers():
    pl = nn.ParameterList([nn.Parameter(tg.zeros(2)), tg.ones(3)])
    pl.append(nn.Parameter(tg.zeros(1)))
    assert len(pl) == 3 and isinstance(pl[1], nn.Parameter) and pl[-1].shape == (1,)
    assert list(pl.state_dict()) == ['0', '1', '2']
    assert len(list(pl.parameters())) == 3
    pd = nn.ParameterDict({'a': nn.Parameter(tg.zeros(2)), 'b': tg.ones(1)})
    pd['c'] = nn.Parameter(tg.zeros(3))
    assert list(pd.keys()) == ['a', 'b', 'c'] and 'b' in pd and len(pd) == 3
    assert isinstance(pd['b'], nn.Parameter)

    class M(nn.Module):
        def __init__(self, lib):
            super().__init__()
            self.ps = lib.nn.ParameterList([lib.nn.Parameter(lib.zeros(2)) for _ in range(2)])
            self.pd = lib.nn.ParameterDict({'w': lib.nn.Parameter(lib.zeros(3))})
    mt = torch.nn.Module()
    mt.ps = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(2)) for _ in range(2)])
    mt.pd = torch.nn.ParameterDict({'w': torch.nn.Parameter(torch.zeros(3))})
    assert list(M(tg).state_dict()) == list(mt.state_dict())
    with pytest.raises(IndexError):
        pl[5]


@pytest.mark.parametrize("kw", [dict(proj_size=2),
                                dict(proj_size=2, num_layers=2, bidirectional=True,
                                     batch_first=True),
                                dict(proj_size=1, bias=False)])
def test_lstm_proj_size(kw):
    # PyTorch's projected LSTM: h = (o * tanh(c)) @ weight_hr^T, h of size
    # proj_size (outputs, h_n, the next layer's input), c of hidden_size
    m = tg.nn.LSTM(3, 4, **kw).double()
    dirs, layers, p = 2 if kw.get('bidirectional') else 1, kw.get('num_layers', 1), kw['proj_size']
    names = dict(m.named_parameters())
    assert names['weight_hr_l0'].shape == (p, 4) and names['weight_hh_l0'].shape == (16, p)
    assert m.proj_size == p and f"proj_size={p}" in repr(m)
    rs = np.random.RandomState(0)
    x = rs.randn(2, 5, 3)
    n = 2 if kw.get('batch_first') else 5
    h0, c0 = rs.randn(layers * dirs, n, p), rs.randn(layers * dirs, n, 4)
    xg = tg.tensor(x, requires_grad=True)
    out, (h, c) = m(xg, (tg.tensor(h0), tg.tensor(c0)))
    assert out.shape[-1] == p * dirs and h.shape == h0.shape and c.shape == c0.shape
    (out.sum() + h.sum()).backward()
    # the last step of a one-layer forward run by hand
    if layers == 1 and dirs == 1:
        w = {k: v.detach().numpy() for k, v in names.items()}
        hh, cc = h0[0], c0[0]
        for t in range(x.shape[0]):
            g = x[t] @ w['weight_ih_l0'].T + hh @ w['weight_hh_l0'].T
            if 'bias_ih_l0' in w:
                g = g + w['bias_ih_l0'] + w['bias_hh_l0']
            i, f, gg, o = np.split(g, 4, -1)
            sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
            cc = sig(f) * cc + sig(i) * np.tanh(gg)
            hh = (sig(o) * np.tanh(cc)) @ w['weight_hr_l0'].T
        np.testing.assert_allclose(h.detach().numpy()[0], hh, rtol=1e-12)
        np.testing.assert_allclose(c.detach().numpy()[0], cc, rtol=1e-12)
    if torch is not None:
        t = torch.nn.LSTM(3, 4, **kw).double()
        t.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
        xt = torch.tensor(x, requires_grad=True)
        ot, (ht, ct) = t(xt, (torch.tensor(h0), torch.tensor(c0)))
        (ot.sum() + ht.sum()).backward()
        np.testing.assert_allclose(out.detach().numpy(), ot.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(c.detach().numpy(), ct.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), atol=1e-12)
        assert repr(m) == repr(t)


def test_lstm_proj_size_errors():
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        tg.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="positive integer or zero"):
        tg.nn.LSTM(3, 4, proj_size=-1)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        tg.nn.GRU(3, 4, proj_size=2)
    m = tg.nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 1, 2\), got \[1, 1, 4\]"):
        m(tg.zeros(5, 1, 3), (tg.zeros(1, 1, 4), tg.zeros(1, 1, 4)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 1, 4\)"):
        m(tg.zeros(5, 1, 3), (tg.zeros(1, 1, 2), tg.zeros(1, 1, 2)))
    packed = tg.nn.utils.rnn.pack_sequence([tg.ones(3, 3), tg.ones(2, 3)])
    out, (h, c) = m(packed)
    assert out.data.shape == (5, 2) and h.shape == (1, 2, 2) and c.shape == (1, 2, 4)
