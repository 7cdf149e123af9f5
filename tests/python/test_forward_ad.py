"""tg.autograd.forward_ad (dual tensors) against torch.autograd.forward_ad:
tangents of ops, modules and losses equal PyTorch's; levels, errors and
unpacking as PyTorch's; forward over reverse (Hessian-vector products)
and reverse over forward."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.autograd.forward_ad as fwAD
import tensorgraph.nn.functional as F
from conftest import needs_torch, torch

if torch is not None:
    import torch.autograd.forward_ad as tfwAD
    import torch.nn.functional as TF


def _jvp_both(fn_tg, fn_torch, primals, tangents):
    """(tg's value and tangent, torch's) of fn at primals along tangents
    (numpy arrays, float64)"""
    with fwAD.dual_level():
        duals = [fwAD.make_dual(tg.tensor(p), tg.tensor(t)) for p, t in zip(primals, tangents)]
        out = fwAD.unpack_dual(fn_tg(*duals))
        ours = (out.primal.detach().numpy(),
                None if out.tangent is None else out.tangent.detach().numpy())
    with tfwAD.dual_level():
        duals = [tfwAD.make_dual(torch.tensor(p), torch.tensor(t))
                 for p, t in zip(primals, tangents)]
        out = tfwAD.unpack_dual(fn_torch(*duals))
        theirs = (out.primal.detach().numpy(),
                  None if out.tangent is None else out.tangent.detach().numpy())
    return ours, theirs


def _rand(*shape):
    return np.random.uniform(-1, 1, shape)


CASES = [
    ("sin*x", lambda x: x.sin() * x, lambda x: x.sin() * x, [(3, 4)]),
    ("exp/tanh/sigmoid", lambda x: x.exp() + x.tanh() - x.sigmoid(),
     lambda x: x.exp() + x.tanh() - x.sigmoid(), [(5,)]),
    ("pow/div", lambda x, y: x.pow(3) / (y * y + 1), lambda x, y: x.pow(3) / (y * y + 1),
     [(2, 3), (2, 3)]),
    ("broadcast", lambda x, y: x * y + y, lambda x, y: x * y + y, [(4, 3), (3,)]),
    ("matmul", lambda a, b: a @ b, lambda a, b: a @ b, [(3, 4), (4, 5)]),
    ("sum/mean", lambda x: x.sum(0) + x.mean(1, keepdim=True).sum(),
     lambda x: x.sum(0) + x.mean(1, keepdim=True).sum(), [(3, 4)]),
    ("softmax", lambda x: F.softmax(x, dim=-1), lambda x: TF.softmax(x, dim=-1), [(2, 5)]),
    ("log_softmax", lambda x: F.log_softmax(x, dim=0), lambda x: TF.log_softmax(x, dim=0),
     [(4, 3)]),
    ("relu/gelu", lambda x: F.relu(x) + F.gelu(x), lambda x: TF.relu(x) + TF.gelu(x), [(6,)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b),
     lambda x, w, b: TF.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    ("linear", lambda x, w, b: F.linear(x, w, b), lambda x, w, b: TF.linear(x, w, b),
     [(2, 3), (4, 3), (4,)]),
    ("conv2d", lambda x, w: F.conv2d(x, w, padding=1), lambda x, w: TF.conv2d(x, w, padding=1),
     [(1, 2, 5, 5), (3, 2, 3, 3)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2),
     [(1, 2, 4, 4)]),
    ("views", lambda x: x.t()[1:, :2].reshape(-1) * 2, lambda x: x.t()[1:, :2].reshape(-1) * 2,
     [(3, 4)]),
    ("cat/stack", lambda x, y: tg.cat([x, tg.stack([y, y])]),
     lambda x, y: torch.cat([x, torch.stack([y, y])]), [(2, 3), (3,)]),
    ("mse_loss", lambda x, y: F.mse_loss(x, y), lambda x, y: TF.mse_loss(x, y),
     [(3, 4), (3, 4)]),
    ("where/clamp", lambda x: tg.where(x > 0, x * x, x.clamp(-0.5, 0.5)),
     lambda x: torch.where(x > 0, x * x, x.clamp(-0.5, 0.5)), [(8,)]),
]


@needs_torch
@pytest.mark.parametrize("name,fn_tg,fn_torch,shapes", CASES, ids=[c[0] for c in CASES])
def test_tangents_equal_torch(name, fn_tg, fn_torch, shapes):
    primals = [_rand(*s) for s in shapes]
    tangents = [_rand(*s) for s in shapes]
    (v, t), (tv, tt) = _jvp_both(fn_tg, fn_torch, primals, tangents)
    np.testing.assert_allclose(v, tv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(t, tt, rtol=1e-10, atol=1e-12)


@needs_torch
def test_module_and_loss():
    """a tangent on the input of an MLP with a cross-entropy loss"""
    lin1, lin2 = tg.nn.Linear(4, 5).double(), tg.nn.Linear(5, 3).double()
    tl1, tl2 = torch.nn.Linear(4, 5).double(), torch.nn.Linear(5, 3).double()
    with torch.no_grad():
        for a, b in ((lin1, tl1), (lin2, tl2)):
            b.weight.copy_(torch.tensor(a.weight.detach().numpy()))
            b.bias.copy_(torch.tensor(a.bias.detach().numpy()))
    labels = np.array([0, 2])
    x, v = _rand(2, 4), _rand(2, 4)
    (val, t), (tval, tt) = _jvp_both(
        lambda x: F.cross_entropy(lin2(tg.tanh(lin1(x))), tg.tensor(labels)),
        lambda x: TF.cross_entropy(tl2(torch.tanh(tl1(x))), torch.tensor(labels)), [x], [v])
    np.testing.assert_allclose(val, tval, rtol=1e-10)
    np.testing.assert_allclose(t, tt, rtol=1e-9)


def test_levels_and_errors():
    x, t = tg.tensor([1., 2., 3.]), tg.tensor([1., 0., 0.])
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, t)
    assert fwAD.unpack_dual(x) == (x, None)
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, tg.ones(2))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(tg.tensor([1, 2]), tg.tensor([1, 2]))
        d = fwAD.make_dual(x, t)
        assert fwAD.unpack_dual(x).tangent is None  # the primal itself has none
        primal, tangent = fwAD.unpack_dual(d)
        assert fwAD.unpack_dual(primal).tangent is None
        np.testing.assert_array_equal(tangent.numpy(), [1, 0, 0])
        assert fwAD.unpack_dual(x > 1).tangent is None  # not differentiable
        y = d * 3
    assert fwAD.unpack_dual(y).tangent is None  # dropped with the level
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None
    with pytest.raises(RuntimeError):
        fwAD.exit_dual_level()


def test_in_place_ops():
    with fwAD.dual_level():
        d = fwAD.make_dual(tg.tensor([1., 2., 3.]).clone(), tg.tensor([1., 1., 1.]))
        d.mul_(2)
        np.testing.assert_array_equal(fwAD.unpack_dual(d).tangent.numpy(), [2, 2, 2])
        d.add_(fwAD.make_dual(tg.zeros(3), tg.tensor([0., 1., 2.])))
        np.testing.assert_array_equal(fwAD.unpack_dual(d).tangent.numpy(), [2, 3, 4])


def test_forward_over_reverse_hvp():
    """the tangent of a gradient is a Hessian-vector product: f = sum(x^4)
    gives H v = 12 x^2 v"""
    x = tg.tensor([1., -2., 0.5], dtype=tg.float64, requires_grad=True)
    v = tg.tensor([0.5, 1., -1.], dtype=tg.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        (g,) = tg.autograd.grad((d ** 4).sum(), d, create_graph=True)
        hv = fwAD.unpack_dual(g).tangent
    np.testing.assert_allclose(hv.detach().numpy(), 12 * x.detach().numpy() ** 2 * v.numpy())


def test_reverse_over_forward():
    """backward through a tangent: d/dx sum((x^3)' v) = 6 x v"""
    x = tg.tensor([1., 2.], dtype=tg.float64, requires_grad=True)
    v = tg.tensor([1., -1.], dtype=tg.float64)
    with fwAD.dual_level():
        t = fwAD.unpack_dual(fwAD.make_dual(x, v) ** 3).tangent
        t.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy() * v.numpy())


def test_jvp_of_everything_in_one_pass():
    """the directional derivative of a function with many ops equals its
    central difference"""
    rng = np.random.default_rng(1)
    x0, v0 = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))

    def f(x):
        return (tg.tanh(x @ x.t()).sum(1) * x.exp().mean(1)).logsumexp(0)

    with fwAD.dual_level():
        t = fwAD.unpack_dual(f(fwAD.make_dual(tg.tensor(x0), tg.tensor(v0)))).tangent.item()
    eps = 1e-6
    fd = (f(tg.tensor(x0 + eps * v0)).item() - f(tg.tensor(x0 - eps * v0)).item()) / (2 * eps)
    assert abs(t - fd) < 1e-8


@needs_torch
def test_functional_jacobian_forward_mode():
    """jacobian(strategy='forward-mode') and hessian(outer_jacobian_strategy=
    'forward-mode') with dual tensors, against PyTorch's and reverse mode"""
    from tensorgraph.autograd.functional import hessian, jacobian
    from torch.autograd.functional import hessian as thessian, jacobian as tjacobian
    a0, b0 = _rand(2, 3), _rand(3)

    def f(a, b):
        return (a * b).tanh(), (a.exp() @ b).sum() * b

    ours = jacobian(f, (tg.tensor(a0), tg.tensor(b0)), vectorize=True, strategy='forward-mode')
    rev = jacobian(f, (tg.tensor(a0), tg.tensor(b0)))
    theirs = tjacobian(lambda a, b: ((a * b).tanh(), (a.exp() @ b).sum() * b),
                       (torch.tensor(a0), torch.tensor(b0)), vectorize=True,
                       strategy='forward-mode')
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(ours[i][j].numpy(), theirs[i][j].numpy(), rtol=1e-10,
                                       atol=1e-12)
            np.testing.assert_allclose(ours[i][j].numpy(), rev[i][j].numpy(), rtol=1e-10,
                                       atol=1e-12)
    x0 = _rand(4)
    h = hessian(lambda x: (x.sin() * x.pow(3)).sum(), tg.tensor(x0), vectorize=True,
                outer_jacobian_strategy='forward-mode')
    th = thessian(lambda x: (x.sin() * x.pow(3)).sum(), torch.tensor(x0), vectorize=True,
                  outer_jacobian_strategy='forward-mode')
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-10)
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        jacobian(lambda x: x * 2, tg.tensor(x0), strategy='forward-mode')
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        jacobian(lambda x: x * 2, tg.tensor(x0), strategy='forward-mode', vectorize=True,
                 create_graph=True)
    with pytest.raises(AssertionError, match="Expected strategy"):
        jacobian(lambda x: x * 2, tg.tensor(x0), strategy='sideways')


def test_compiled_function_refuses_tangents():
    """a tg.function graph would drop the tangent: refused, not silent"""
    f = tg.function(lambda x: x * 2)
    x = tg.tensor([1., 2.])
    f(x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="does not propagate tangents"):
            f(fwAD.make_dual(x, tg.ones(2)))
        np.testing.assert_array_equal(f(x).numpy(), [2, 4])  # plain arguments still run


MODULES = [
    ("Conv2d", lambda n: n.Conv2d(3, 4, 3, padding=1), (2, 3, 6, 6), False),
    ("ConvTranspose2d", lambda n: n.ConvTranspose2d(3, 4, 3, stride=2), (2, 3, 5, 5), False),
    ("BatchNorm2d-train", lambda n: n.BatchNorm2d(3), (2, 3, 4, 4), True),
    ("GroupNorm", lambda n: n.GroupNorm(2, 4), (2, 4, 3), False),
    ("LSTM", lambda n: n.LSTM(4, 5, batch_first=True), (2, 3, 4), False),
    ("GRU", lambda n: n.GRU(4, 5), (3, 2, 4), False),
    ("TransformerEncoderLayer",
     lambda n: n.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), (2, 3, 8),
     False),
    ("AdaptiveAvgPool2d", lambda n: n.AdaptiveAvgPool2d(2), (1, 2, 5, 5), False),
    ("Upsample-bilinear", lambda n: n.Upsample(scale_factor=2, mode='bilinear'), (1, 2, 3, 3),
     False),
    ("PReLU", lambda n: n.PReLU(), (3, 4), False),
]


@needs_torch
@pytest.mark.parametrize("name,make,shape,train", MODULES, ids=[m[0] for m in MODULES])
def test_module_tangents_equal_torch(name, make, shape, train):
    """the same module (PyTorch's initial parameters copied) gives PyTorch's
    tangent of its output for a tangent on its input"""
    torch.manual_seed(0)
    tm, gm = make(torch.nn).double(), make(tg.nn).double()
    gm.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tm.train(train)
    gm.train(train)
    x, v = _rand(*shape), _rand(*shape)

    def first(out):
        return out[0] if isinstance(out, tuple) else out
    (_, ours), (_, theirs) = _jvp_both(lambda x: first(gm(x)), lambda x: first(tm(x)), [x], [v])
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
