"""tg.device: names as torch.device, and device scopes while tracing a
tg.function, whose session then partitions the graph over virtual CPU
devices (Send/Recv between them): the losses, outputs and gradients equal
the unplaced function's bit for bit."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
import tensorgraph.nn.functional as F


def test_names():
    assert str(tg.device('cpu:1')) == 'cpu:1'
    assert repr(tg.device('cpu', 2)) == "device(type='cpu', index=2)"
    assert repr(tg.device('cpu')) == "device(type='cpu')"
    assert tg.device('cpu:0') == 'cpu:0'
    assert tg.device('/rank:1/cpu:0').rank == 1
    with pytest.raises(Exception, match="invalid device name"):
        tg.device('cpu:x')
    with pytest.raises(Exception, match="GPU"):
        tg.device('cuda:0')


def twin(seed=0):
    tg.manual_seed(seed)
    a = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    tg.manual_seed(seed)
    b = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    return a, b


def test_function_over_two_devices_equals_one():
    plain, placed = twin()

    @tg.function
    def loss_plain(x, y):
        return F.cross_entropy(plain(x), y)

    @tg.function
    def loss_placed(x, y):
        with tg.device('cpu:0'):
            h = placed[1](placed[0](x))
        with tg.device('cpu:1'):
            out = placed[2](h)
        return F.cross_entropy(out, y)

    opt_a = tg.optim.SGD(plain.parameters(), lr=0.1, momentum=0.9)
    opt_b = tg.optim.SGD(placed.parameters(), lr=0.1, momentum=0.9)
    tg.manual_seed(1)
    x, y = tg.randn(8, 16), tg.randint(0, 4, (8,))
    for _ in range(5):
        for opt, fn in ((opt_a, loss_plain), (opt_b, loss_placed)):
            opt.zero_grad()
            loss = fn(x, y)
            loss.backward()
            opt.step()
        assert loss_plain(x, y).item() == loss_placed(x, y).item()
    for p, q in zip(plain.parameters(), placed.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())


def test_scope_reaches_the_session():
    """A node placed on another process's device makes the run partition and
    ask for a transport to that rank (the MPI layer's): proof the scope
    reached the graph's nodes."""
    @tg.function
    def f(x):
        with tg.device('/rank:1/cpu:0'):
            return x * 2

    with pytest.raises(Exception, match="a device of another process"):
        f(tg.ones(3))


def test_unbalanced_scopes_fail_clearly():
    d = tg.device('cpu:1')
    with d:
        pass
    with pytest.raises(Exception, match="no device scope is open"):
        tg._C._device_scope_end()
