"""The composed activations, layer functions, losses and their modules
(nn/functional_act.py, nn/functional_loss.py, nn/activation.py,
nn/loss.py) against PyTorch: values, gradients, module state_dicts,
error types."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch
from test_ops_extra import a, check

pytestmark = needs_torch
if torch is not None:
    import torch.nn.functional as TF


def fpair(name):
    return getattr(F, name), getattr(TF, name)


ACT = {
    'silu': (), 'mish': (), 'hardtanh': (), 'relu6': (), 'logsigmoid': (), 'softsign': (),
    'tanhshrink': (), 'softshrink': (0.7,), 'hardshrink': (0.3,), 'celu': (0.8,),
    'softplus': (2.0, 3.0), 'threshold': (0.2, -1.5), 'glu': (-1,), 'softmin': (1,),
    'logsigmoid_big': (),
}


@pytest.mark.parametrize('name', sorted(ACT))
def test_activations(name):
    base = name.replace('_big', '')
    f_tg, f_t = fpair(base)
    x = a(3, 4) * (40 if name.endswith('_big') else 3)
    args = ACT[name]
    check(lambda t: f_tg(t, *args), lambda t: f_t(t, *args), x)


def test_activation_variants():
    check(lambda t: F.hardtanh(t, -0.5, 2.0), lambda t: TF.hardtanh(t, -0.5, 2.0), a(3, 4) * 3)
    check(lambda t: F.prelu(t, tg.tensor([0.1, 0.2, 0.3], dtype=tg.float64)),
          lambda t: TF.prelu(t, torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)), a(2, 3, 4))
    check(F.prelu, TF.prelu, a(2, 3, 4), np.array([0.25]))
    check(lambda t: F.glu(t, 1), lambda t: TF.glu(t, 1), a(2, 6, 3))
    check(lambda u, v: F.cosine_similarity(u, v), lambda u, v: TF.cosine_similarity(u, v),
          a(3, 5), a(3, 5))
    check(lambda u, v: F.cosine_similarity(u, v, dim=-1), lambda u, v: TF.cosine_similarity(u, v, dim=-1),
          a(2, 3, 5), a(1, 5))
    for p in (2.0, 1.0, 3.0, float('inf')):
        check(lambda u, v: F.pairwise_distance(u, v, p), lambda u, v: TF.pairwise_distance(u, v, p),
              a(4, 5), a(4, 5))
    check(lambda u, v: F.pairwise_distance(u, v, keepdim=True),
          lambda u, v: TF.pairwise_distance(u, v, keepdim=True), a(4, 5), a(5))
    check(lambda t: F.pixel_shuffle(t, 2), lambda t: TF.pixel_shuffle(t, 2), a(2, 8, 3, 2))
    check(lambda t: F.pixel_unshuffle(t, 2), lambda t: TF.pixel_unshuffle(t, 2), a(2, 2, 4, 6))
    for size in [(2, 3), 1, (5, 4), (None, 2), 3]:
        check(lambda t: F.adaptive_avg_pool2d(t, size), lambda t: TF.adaptive_avg_pool2d(t, size),
              a(2, 3, 7, 6))
        check(lambda t: F.adaptive_max_pool2d(t, size), lambda t: TF.adaptive_max_pool2d(t, size),
              a(2, 3, 7, 6))
    check(lambda t: F.adaptive_avg_pool1d(t, 3), lambda t: TF.adaptive_avg_pool1d(t, 3), a(2, 3, 7))
    check(lambda t: F.adaptive_max_pool1d(t, 4), lambda t: TF.adaptive_max_pool1d(t, 4), a(2, 3, 7))
    for kw in [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2, padding=1, dilation=(1, 2))]:
        check(lambda t: F.unfold(t, **kw), lambda t: TF.unfold(t, **kw), a(2, 3, 5, 6))
        n_cols = TF.unfold(torch.zeros(2, 3, 5, 6), **kw).shape
        check(lambda t: F.fold(t, (5, 6), **kw), lambda t: TF.fold(t, (5, 6), **kw),
              a(*n_cols))
    check(lambda t: F.unfold(t, 2), lambda t: TF.unfold(t, 2), a(3, 4, 4))


def test_scaled_dot_product_attention():
    q, k, v = a(2, 3, 4, 8), a(2, 3, 5, 8), a(2, 3, 5, 6)
    sdpa = TF.scaled_dot_product_attention if hasattr(TF, 'scaled_dot_product_attention') else None

    def ref(q, k, v, mask=None, causal=False, scale=None):
        s = scale if scale is not None else 1 / np.sqrt(q.shape[-1])
        att = q @ k.transpose(-2, -1) * s
        if causal:
            mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        if mask is not None:
            att = att.masked_fill(~mask, float('-inf')) if mask.dtype == torch.bool else att + mask
        return torch.softmax(att, -1) @ v
    ref = sdpa or ref
    check(F.scaled_dot_product_attention, ref, q, k, v)
    m = np.random.default_rng(1).uniform(size=(4, 5)) > 0.3
    m[:, 0] = True
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, tg.tensor(m)),
          lambda q, k, v: ref(q, k, v, torch.tensor(m)), q, k, v)
    fm = a(4, 5)
    check(lambda q, k, v, f: F.scaled_dot_product_attention(q, k, v, f),
          lambda q, k, v, f: ref(q, k, v, f), q, k, v, fm)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
          lambda q, k, v: ref(q, k, v, causal=True), q, k[:, :, :4], v[:, :, :4])


def test_channel_dropout():
    x = tg.ones(4, 6, 5, 5)
    y = F.dropout2d(x, 0.5)
    per_channel = y.numpy().reshape(4, 6, -1)
    assert ((per_channel == 0) | (per_channel == 2)).all()
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # whole channels
    assert F.dropout2d(x, 0.5, training=False) is x
    m = nn.Dropout2d(0.3)
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError):
        F.dropout2d(x, 1.5)
    with pytest.raises(ValueError):
        nn.Dropout2d(-0.1)
    assert F.dropout1d(tg.ones(2, 3, 4), 1.0).numpy().sum() == 0


LOSSES = {
    'l1_loss': (a(3, 4), a(3, 4)), 'smooth_l1_loss': (a(3, 4) * 2, a(3, 4)),
    'huber_loss': (a(3, 4) * 2, a(3, 4)),
    'binary_cross_entropy': (a(3, 4, lo=0.05, hi=0.95), a(3, 4, lo=0, hi=1)),
    'kl_div': (np.log(a(3, 4, lo=0.1, hi=1)), a(3, 4, lo=0, hi=1)),
    'soft_margin_loss': (a(3, 4), np.sign(a(3, 4))),
    'poisson_nll_loss': (a(3, 4), a(3, 4, lo=0, hi=3)),
    'multilabel_soft_margin_loss': (a(3, 4), (a(3, 4) > 0).astype(np.float64)),
    'binary_cross_entropy_with_logits': (a(3, 4) * 3, a(3, 4, lo=0, hi=1)),
}


@pytest.mark.parametrize('name', sorted(LOSSES))
@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
def test_losses(name, reduction):
    f_tg, f_t = fpair(name)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        check(lambda x, t: f_tg(x, t, reduction=reduction),
              lambda x, t: f_t(x, t, reduction=reduction), *LOSSES[name],
              nograd=(1,) if name == 'soft_margin_loss' else ())


def test_loss_variants():
    import warnings
    x, t = a(3, 4), a(3, 4)
    check(lambda x, t: F.smooth_l1_loss(x, t, beta=0.5), lambda x, t: TF.smooth_l1_loss(x, t, beta=0.5), x * 2, t)
    check(lambda x, t: F.smooth_l1_loss(x, t, beta=0.0), lambda x, t: TF.smooth_l1_loss(x, t, beta=0.0), x, t)
    check(lambda x, t: F.huber_loss(x, t, delta=0.3), lambda x, t: TF.huber_loss(x, t, delta=0.3), x, t)
    p, q = a(3, 4, lo=0.05, hi=0.95), a(3, 4, lo=0, hi=1)
    w = a(4, lo=0.1, hi=1)
    check(lambda x, t, w: F.binary_cross_entropy(x, t, w), lambda x, t, w: TF.binary_cross_entropy(x, t, w),
          p, q, w, nograd=(2,))
    check(lambda x, t: F.kl_div(x, t, reduction='batchmean'),
          lambda x, t: TF.kl_div(x, t, reduction='batchmean'), np.log(p), np.where(q > 0.3, q, 0),
          nograd=(1,))  # d/dtarget at target 0: PyTorch's is NaN, ours 0
    check(lambda x, t: F.kl_div(x, t, reduction='sum', log_target=True),
          lambda x, t: TF.kl_div(x, t, reduction='sum', log_target=True), np.log(p), np.log(q))
    pw = a(4, lo=0.5, hi=3)
    check(lambda x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
          lambda x, t, w, pw: TF.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
          x * 3, q, w, pw, nograd=(2, 3))
    y = np.sign(a(5))
    check(lambda a_, b_, y_: F.margin_ranking_loss(a_, b_, y_, 0.3),
          lambda a_, b_, y_: TF.margin_ranking_loss(a_, b_, y_, 0.3), a(5), a(5), y)
    check(lambda a_, y_: F.hinge_embedding_loss(a_, y_, 0.5),
          lambda a_, y_: TF.hinge_embedding_loss(a_, y_, 0.5), a(5), y)
    y3 = np.sign(a(3))
    check(lambda u, v, y_: F.cosine_embedding_loss(u, v, y_, 0.1),
          lambda u, v, y_: TF.cosine_embedding_loss(u, v, y_, 0.1), a(3, 4), a(3, 4), y3)
    for swap in (False, True):
        check(lambda u, v, w_: F.triplet_margin_loss(u, v, w_, swap=swap, p=1.5),
              lambda u, v, w_: TF.triplet_margin_loss(u, v, w_, swap=swap, p=1.5),
              a(3, 4), a(3, 4), a(3, 4))
    check(lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True),
          lambda x, t: TF.poisson_nll_loss(x, t, log_input=False, full=True),
          a(3, 4, lo=0.1, hi=3), a(3, 4, lo=0, hi=4))
    check(lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
          lambda x, t, v: TF.gaussian_nll_loss(x, t, v, full=True), a(3, 4), a(3, 4),
          a(3, 4, lo=1e-8, hi=2))
    check(lambda x, t, v: F.gaussian_nll_loss(x, t, v), lambda x, t, v: TF.gaussian_nll_loss(x, t, v),
          a(3, 4), a(3, 4), a(3, lo=0.1, hi=2))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        check(lambda x, t: F.l1_loss(x, t), lambda x, t: TF.l1_loss(x, t), a(3, 4), a(4))


@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
def test_cross_entropy_smoothing_and_soft_targets(reduction):
    x = a(5, 4)
    tgt = np.array([0, 3, 1, -100, 2])
    w = a(4, lo=0.2, hi=1.5)
    ti, tt = tg.tensor(tgt), torch.tensor(tgt)
    check(lambda x: F.cross_entropy(x, ti, reduction=reduction, label_smoothing=0.2),
          lambda x: TF.cross_entropy(x, tt, reduction=reduction, label_smoothing=0.2), x)
    check(lambda x, w: F.cross_entropy(x, ti, w, reduction=reduction, label_smoothing=0.1),
          lambda x, w: TF.cross_entropy(x, tt, w, reduction=reduction, label_smoothing=0.1), x, w,
          nograd=(1,))
    probs = a(5, 4, lo=0, hi=1)
    probs /= probs.sum(1, keepdims=True)
    check(lambda x, p: F.cross_entropy(x, p, reduction=reduction),
          lambda x, p: TF.cross_entropy(x, p, reduction=reduction), x, probs)
    check(lambda x, p, w: F.cross_entropy(x, p, w, reduction=reduction, label_smoothing=0.3),
          lambda x, p, w: TF.cross_entropy(x, p, w, reduction=reduction, label_smoothing=0.3),
          x, probs, w, nograd=(2,))
    x4 = a(2, 3, 4, 2)
    t4 = np.random.default_rng(2).integers(0, 3, size=(2, 4, 2))
    check(lambda x: F.cross_entropy(x, tg.tensor(t4), reduction=reduction, label_smoothing=0.1),
          lambda x: TF.cross_entropy(x, torch.tensor(t4), reduction=reduction, label_smoothing=0.1),
          x4)
    m = nn.CrossEntropyLoss(label_smoothing=0.2, reduction=reduction)
    mt = torch.nn.CrossEntropyLoss(label_smoothing=0.2, reduction=reduction)
    check(lambda x: m(x, ti), lambda x: mt(x, tt), x)


def test_loss_errors():
    x = tg.rand(3, 4)
    with pytest.raises(ValueError):
        F.l1_loss(x, x, reduction='avg')
    with pytest.raises(ValueError):
        F.binary_cross_entropy(x, tg.rand(4))
    with pytest.raises(RuntimeError):
        F.binary_cross_entropy(x + 1, x)
    with pytest.raises(ValueError):
        F.binary_cross_entropy_with_logits(x, tg.rand(4), pos_weight=tg.ones(4))
    with pytest.raises(RuntimeError):
        F.cross_entropy(x, tg.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(RuntimeError):
        F.glu(tg.zeros(3, 5))
    with pytest.raises(RuntimeError):
        F.pixel_shuffle(tg.zeros(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError):
        F.prelu(tg.zeros(2, 3), tg.zeros(4))
    with pytest.raises(ValueError):
        F.gaussian_nll_loss(x, x, -tg.ones(3, 4))
    with pytest.warns(UserWarning, match="size_average and reduce args"):
        assert nn.L1Loss(size_average=True).reduction == 'mean'


MODULES = [
    ('SiLU', (), (3, 4)), ('Mish', (), (3, 4)), ('Hardtanh', (-0.5, 0.5), (3, 4)),
    ('ReLU6', (), (3, 4)), ('LogSigmoid', (), (3, 4)), ('Softsign', (), (3, 4)),
    ('GLU', (1,), (3, 4)), ('Threshold', (0.1, 20.0), (3, 4)), ('CELU', (0.5,), (3, 4)),
    ('Softmin', (1,), (3, 4)), ('Tanhshrink', (), (3, 4)), ('Softshrink', (0.3,), (3, 4)),
    ('Hardshrink', (), (3, 4)), ('Softplus', (2.0, 5.0), (3, 4)),
    ('PixelShuffle', (2,), (1, 8, 2, 3)), ('PixelUnshuffle', (2,), (1, 2, 4, 6)),
    ('AdaptiveAvgPool2d', ((3, 2),), (1, 2, 7, 5)), ('AdaptiveMaxPool2d', (2,), (1, 2, 7, 5)),
    ('AdaptiveAvgPool1d', (3,), (2, 3, 7)), ('Unfold', (2,), (1, 2, 4, 4)),
    ('Unflatten', (1, (2, 2)), (3, 4)), ('ZeroPad2d', ((1, 2, 0, 1),), (1, 2, 3, 3)),
    ('ConstantPad2d', (2, 3.5), (1, 2, 3, 3)), ('ConstantPad1d', ((1, 0), -1.0), (2, 3)),
    ('PReLU', (), (2, 3, 4)), ('PReLU', (3,), (2, 3, 4)),
]


@pytest.mark.parametrize('name,args,shape', MODULES)
def test_modules(name, args, shape):
    m_tg, m_t = getattr(nn, name)(*args).double(), getattr(torch.nn, name)(*args).double()
    sd = {k: v.detach().numpy() for k, v in m_t.state_dict().items()}
    assert sorted(m_tg.state_dict()) == sorted(sd)
    m_tg.load_state_dict({k: tg.tensor(v) for k, v in sd.items()})
    check(m_tg, m_t, a(*shape))
    assert type(m_tg).__name__ in repr(m_tg)


def test_two_input_modules():
    check(nn.CosineSimilarity(dim=-1), torch.nn.CosineSimilarity(dim=-1), a(3, 5), a(3, 5))
    check(nn.PairwiseDistance(p=1.0, keepdim=True), torch.nn.PairwiseDistance(p=1.0, keepdim=True),
          a(3, 5), a(3, 5))
    for name, args in [('L1Loss', {}), ('SmoothL1Loss', {'beta': 0.5}), ('HuberLoss', {'delta': 0.5}),
                       ('MSELoss', {'reduction': 'sum'}), ('SoftMarginLoss', {})]:
        check(getattr(nn, name)(**args), getattr(torch.nn, name)(**args), a(3, 4), a(3, 4),
              nograd=(1,))
    p, q = a(3, 4, lo=0.05, hi=0.95), a(3, 4, lo=0, hi=1)
    w = a(4, lo=0.2, hi=1)
    check(nn.BCELoss(tg.tensor(w)), torch.nn.BCELoss(torch.tensor(w)), p, q)
    check(nn.BCEWithLogitsLoss(pos_weight=tg.tensor(w)),
          torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(w)), a(3, 4), q)
    check(nn.KLDivLoss(reduction='batchmean'), torch.nn.KLDivLoss(reduction='batchmean'), np.log(p), q)
    check(nn.GaussianNLLLoss(), torch.nn.GaussianNLLLoss(), a(3, 4), a(3, 4), a(3, 4, lo=0.1))
    check(nn.PoissonNLLLoss(), torch.nn.PoissonNLLLoss(), a(3, 4), a(3, 4, lo=0))
    y = np.sign(a(3))
    check(nn.TripletMarginLoss(margin=0.5), torch.nn.TripletMarginLoss(margin=0.5),
          a(3, 4), a(3, 4), a(3, 4))
    check(nn.CosineEmbeddingLoss(), torch.nn.CosineEmbeddingLoss(), a(3, 4), a(3, 4), y)
    check(nn.MarginRankingLoss(0.2), torch.nn.MarginRankingLoss(0.2), a(3), a(3), y)
    check(nn.MultiLabelSoftMarginLoss(), torch.nn.MultiLabelSoftMarginLoss(), a(3, 4),
          (a(3, 4) > 0).astype(np.float64))
    check(nn.HingeEmbeddingLoss(), torch.nn.HingeEmbeddingLoss(), a(3), y)


def test_nn_utils():
    from tensorgraph.nn.utils.rnn import pad_sequence
    seqs = [a(3, 2), a(1, 2), a(4, 2)]
    for bf in (False, True):
        check(lambda *s: pad_sequence(list(s), batch_first=bf, padding_value=-1.0),
              lambda *s: torch.nn.utils.rnn.pad_sequence(list(s), batch_first=bf, padding_value=-1.0),
              *seqs)
    for norm_type in (2.0, 1.0, float('inf')):
        grads = [a(3, 2), a(4)]
        ps_tg = [tg.zeros(*g.shape, dtype=tg.float64, requires_grad=True) for g in grads]
        ps_t = [torch.zeros(*g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
        for p, q, g in zip(ps_tg, ps_t, grads):
            p.grad, q.grad = tg.tensor(g), torch.tensor(g)
        n1 = nn.utils.clip_grad_norm_(ps_tg, 0.5, norm_type)
        n2 = torch.nn.utils.clip_grad_norm_(ps_t, 0.5, norm_type)
        np.testing.assert_allclose(n1.item(), n2.item(), 1e-12)
        for p, q in zip(ps_tg, ps_t):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), 1e-12)
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,)
    nn.utils.vector_to_parameters(v * 0 + 1, m.parameters())
    assert (m.weight.detach().numpy() == 1).all() and (m.bias.detach().numpy() == 1).all()


def test_embedding_options():
    idx = np.array([[0, 2, 1], [2, 2, 3]])
    w = a(5, 3)
    for pad in (None, 2, -1):
        check(lambda ww: F.embedding(tg.tensor(idx), ww, padding_idx=pad),
              lambda ww: TF.embedding(torch.tensor(idx), ww, padding_idx=pad), w)
    m_tg, m_t = nn.Embedding(5, 3, 1), torch.nn.Embedding(5, 3, 1)
    assert (m_tg.weight.detach().numpy()[1] == 0).all()
    assert repr(m_tg) == repr(m_t)
    m_tg = nn.Embedding.from_pretrained(tg.tensor(w), padding_idx=0)
    m_t = torch.nn.Embedding.from_pretrained(torch.tensor(w), padding_idx=0)
    assert not m_tg.weight.requires_grad
    check(lambda i: m_tg(i), lambda i: m_t(i), idx)
    m_tg = nn.Embedding.from_pretrained(tg.tensor(w), freeze=False, max_norm=0.5)
    m_t = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, max_norm=0.5)
    out_tg, out_t = m_tg(tg.tensor(idx)), m_t(torch.tensor(idx))
    np.testing.assert_allclose(out_tg.detach().numpy(), out_t.detach().numpy(), 1e-6)
    np.testing.assert_allclose(m_tg.weight.detach().numpy(), m_t.weight.detach().numpy(), 1e-6)
    with pytest.raises(AssertionError):
        nn.Embedding(5, 3, padding_idx=7)
    # sparse=True is accepted; the gradient is dense (test_torch_parity_nn_embedding.py)
    assert F.embedding(tg.tensor(idx), tg.tensor(w), sparse=True).shape == (*idx.shape, 3)
