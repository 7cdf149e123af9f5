"""nn.Module bookkeeping, layers against the functional ops, optimizers
(against PyTorch's formulas via torch when installed), schedulers, data
loading, checkpoints."""
import os

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F
from tensorgraph.utils.data import DataLoader, TensorDataset
from conftest import close, needs_torch, torch


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * 4 * 4, 3), nn.ReLU())
        self.register_buffer("steps", tg.zeros(1))

    def forward(self, x):
        return self.head(F.relu(self.bn(self.conv(x))))


def test_module_bookkeeping():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["conv.weight", "conv.bias", "bn.weight", "bn.bias", "head.1.weight",
                     "head.1.bias"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    sd = net.state_dict()
    assert list(sd)[0] == "steps" and list(sd)[1:3] == names[:2]  # own buffers first
    assert "bn.running_mean" in sd
    assert "bn.num_batches_tracked" in sd
    assert [n for n, _ in net.named_children()] == ["conv", "bn", "head"]
    assert len(list(net.modules())) == 7
    net.eval()
    assert not net.training and not net.head[1].training
    net.train()
    assert net.bn.training
    y = net(tg.randn(5, 1, 4, 4))
    assert y.shape == (5, 3)
    y.sum().backward()
    assert net.conv.weight.grad is not None
    g = net.conv.weight.grad
    net.zero_grad()  # PyTorch 1.13's default: zeroed in place, kept
    w = net.conv.weight.grad
    assert w.data_ptr() == g.data_ptr() and not w.any() and not w.requires_grad
    net.zero_grad(set_to_none=True)
    assert net.conv.weight.grad is None
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and "Linear" in seen
    assert "Linear(in_features=32, out_features=3, bias=True)" in repr(net)
    with pytest.raises(TypeError):
        net.conv = tg.ones(2)  # not a Module: refused for a child's name
    with pytest.raises(AttributeError):
        net.nope


def test_state_dict_round_trip(tmp_path):
    a, b = Net(), Net()
    assert not np.allclose(a.conv.weight.detach().numpy(), b.conv.weight.detach().numpy())
    path = os.path.join(tmp_path, "net.safetensors")
    tg.save(a.state_dict(), path)
    loaded = tg.load(path)
    assert list(loaded) == list(a.state_dict())
    b.load_state_dict(loaded)
    x = tg.randn(2, 1, 4, 4)
    a.eval(), b.eval()
    close(a(x), b(x).detach().numpy())
    with pytest.raises(RuntimeError, match="Missing"):
        b.load_state_dict({"conv.weight": loaded["conv.weight"]})
    r = b.load_state_dict({"conv.weight": loaded["conv.weight"]}, strict=False)
    assert "conv.bias" in r.missing_keys
    with pytest.raises(RuntimeError, match="size mismatch"):
        b.load_state_dict({**loaded, "conv.bias": tg.zeros(5)})
    with pytest.raises(OSError):
        tg.load(os.path.join(tmp_path, "missing.safetensors"))
    with open(os.path.join(tmp_path, "bad.safetensors"), "wb") as f:
        f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(OSError):
        tg.load(os.path.join(tmp_path, "bad.safetensors"))
    t = tg.arange(3.0)
    tg.save(t, path)
    assert tg.load(path).tolist() == [0.0, 1.0, 2.0]


def test_containers():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()})
    assert list(md.keys()) == ["a", "b"] and "a" in md
    seq = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Dropout(0.5), nn.Linear(4, 1))
    seq.eval()
    x = tg.randn(2, 3)
    close(seq(x), seq[3](F.gelu(seq[0](x))).detach().numpy())
    emb = nn.Embedding(10, 4)
    assert emb(tg.tensor([[1, 2], [3, 4]])).shape == (2, 2, 4)
    ln = nn.LayerNorm(4)
    close(ln(tg.randn(3, 4)).mean(-1), np.zeros(3), atol=1e-5)


def test_dropout_and_batchnorm_modes():
    d = nn.Dropout(0.5)
    x = tg.ones(1000)
    y = d(x)
    assert 300 < (y == 0).sum().item() < 700 and set(np.unique(y.numpy())) <= {0.0, 2.0}
    d.eval()
    assert d(x) is x or d(x).tolist() == x.tolist()
    bn = nn.BatchNorm2d(3)
    xb = tg.randn(4, 3, 2, 2) * 3 + 1
    bn(xb)
    assert bn.num_batches_tracked.item() == 1
    close(bn.running_mean, 0.1 * xb.mean((0, 2, 3)).numpy(), atol=1e-5)
    bn.eval()
    assert bn(xb).shape == (4, 3, 2, 2)


def _fit(opt_fn, steps=50):
    tg.manual_seed(0)
    model = nn.Linear(3, 1)
    x = tg.randn(64, 3)
    y = x @ tg.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    opt = opt_fn(model.parameters())
    first = None
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    return first, loss.item()


@pytest.mark.parametrize("opt", [
    lambda p: tg.optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: tg.optim.Adam(p, lr=0.05),
    lambda p: tg.optim.AdamW(p, lr=0.05),
    lambda p: tg.optim.RMSprop(p, lr=0.01),
    lambda p: tg.optim.Adadelta(p, lr=1.0),
])
def test_optimizers_reduce_the_loss(opt):
    first, last = _fit(opt)
    assert last < first * 0.9


@needs_torch
def test_sgd_and_adam_match_torch():
    for make, tmake in ((lambda p: tg.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
                         lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True)),
                        (lambda p: tg.optim.Adam(p, lr=0.01, weight_decay=0.1),
                         lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1))):
        w0 = np.random.default_rng(1).normal(size=(4,)).astype(np.float32)
        w = nn.Parameter(tg.tensor(w0))
        tw = torch.nn.Parameter(torch.tensor(w0))
        opt, topt = make([w]), tmake([tw])
        for step in range(5):
            opt.zero_grad(), topt.zero_grad()
            ((w - 1.0) ** 2 * tg.arange(4.0)).sum().backward()
            ((tw - 1.0) ** 2 * torch.arange(4.0)).sum().backward()
            opt.step(), topt.step()
        close(w, tw.detach().numpy(), rtol=1e-5)


def test_lr_schedulers():
    p = [nn.Parameter(tg.ones(1))]
    opt = tg.optim.SGD(p, lr=1.0)
    s = tg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        s.step()
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25]
    opt2 = tg.optim.SGD(p, lr=1.0)
    c = tg.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=4)
    got = []
    for _ in range(5):
        got.append(c.get_last_lr()[0])
        c.step()
    close(got, [1.0, 0.8535534, 0.5, 0.1464466, 0.0], atol=1e-6)


def test_optimizer_state_dict_round_trip():
    w = nn.Parameter(tg.ones(3))
    opt = tg.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    opt.step()
    sd = opt.state_dict()
    w2 = nn.Parameter(tg.ones(3))
    opt2 = tg.optim.SGD([w2], lr=0.5, momentum=0.9)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="empty"):
        tg.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError):
        tg.optim.SGD([w], lr=-1)


def test_dataloader():
    x = tg.arange(10.0).reshape(10, 1)
    y = tg.arange(10)
    ds = TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][1].item() == 3
    dl = DataLoader(ds, batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and [b[0].shape[0] for b in batches] == [4, 4, 2]
    assert batches[0][1].tolist() == [0, 1, 2, 3]
    dl = DataLoader(ds, batch_size=4, drop_last=True, shuffle=True,
                    generator=tg.Generator().manual_seed(3))
    e1 = [b[1].tolist() for b in dl]
    e2 = [b[1].tolist() for b in dl]
    assert len(e1) == 2 and e1 != e2  # every epoch reshuffles
    again = DataLoader(ds, batch_size=4, drop_last=True, shuffle=True,
                       generator=tg.Generator().manual_seed(3))
    assert [b[1].tolist() for b in again] == e1  # the seed fixes the order

    class Squares(tg.utils.data.Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            return tg.tensor([float(i * i)]), i

    py = list(DataLoader(Squares(), batch_size=3))
    assert [b[1].tolist() for b in py] == [[0, 1, 2], [3, 4, 5], [6]]
    assert py[1][0].shape == (3, 1)
    with pytest.raises(ValueError):
        DataLoader(ds, batch_size=0)


@needs_torch
def test_zero_grad_defaults_match_torch():
    """Module.zero_grad and Optimizer.zero_grad as the installed PyTorch:
    1.13 zeroes in place by default (2.x drops the gradient), and a
    gradient with history is detached first"""
    def run(L):
        m = L.nn.Linear(3, 2)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        m(L.ones(1, 3)).sum().backward()
        seen = []
        for zero in (m.zero_grad, opt.zero_grad):
            zero()
            seen.append(None if m.weight.grad is None else m.weight.grad.tolist())
            m(L.ones(1, 3)).sum().backward()
        m.weight.grad = m.weight * 2  # a gradient with history
        m.zero_grad()
        seen.append(None if m.weight.grad is None else
                    (m.weight.grad.tolist(), m.weight.grad.requires_grad))
        return seen
    assert run(tg) == run(torch)


def test_zero_grad_edges():
    """a gradient that requires grad is zeroed in place and stops requiring
    it; set_to_none drops it; any iterable of tensors; anything else is
    refused"""
    m = nn.Linear(3, 2)
    m.weight.grad = tg.ones(2, 3).requires_grad_()
    kept = m.weight.grad
    m.zero_grad()
    assert m.weight.grad.data_ptr() == kept.data_ptr()
    assert not m.weight.grad.requires_grad and m.weight.grad.tolist() == [[0.0] * 3] * 2
    assert m.bias.grad is None  # none before: none after
    tg.optim.SGD(m.parameters(), lr=0.1).zero_grad(set_to_none=True)
    assert m.weight.grad is None
    with pytest.raises(TypeError, match="parameters must be Tensors"):
        tg._C._zero_grads([m.weight, 3], False)
