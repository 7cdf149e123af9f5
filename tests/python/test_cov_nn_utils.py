"""nn.utils.parametrize / parametrizations (orthogonal, spectral_norm),
the older spectral_norm hook, fusion, stateless.functional_call,
clip_grad_norm and skip_init against PyTorch."""
import warnings

import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn as nn
from conftest import close, needs_torch, torch

P = nn.utils.parametrize
R = np.random.RandomState(0)


def _copy_linear(ours, theirs):
    """ours gets theirs' parameters (float64)"""
    ours.load_state_dict({k: tg.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):
        return A.triu()


@needs_torch
def test_register_parametrization_as_torch():
    class TSymmetric(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    ours, theirs = nn.Linear(3, 3, dtype=tg.float64), torch.nn.Linear(3, 3).double()
    _copy_linear(ours, theirs)
    P.register_parametrization(ours, 'weight', Symmetric())
    torch.nn.utils.parametrize.register_parametrization(theirs, 'weight', TSymmetric())
    assert type(ours).__name__ == type(theirs).__name__ == 'ParametrizedLinear'
    assert P.type_before_parametrizations(ours) is nn.Linear
    assert P.is_parametrized(ours) and P.is_parametrized(ours, 'weight')
    assert not P.is_parametrized(ours, 'bias')
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    close(ours.weight, theirs.weight.detach().numpy())
    x = R.normal(size=(4, 3))
    out_o, out_t = ours(tg.tensor(x)), theirs(torch.tensor(x))
    out_o.sum().backward()
    out_t.sum().backward()
    close(ours.parametrizations.weight.original.grad,
          theirs.parametrizations.weight.original.grad.numpy())
    # assignment goes through right_inverse
    a = R.normal(size=(3, 3))
    a = a + a.T
    ours.weight = tg.tensor(a)
    close(ours.weight, a)
    close(ours.parametrizations.weight.original, np.triu(a))
    with P.cached():
        assert ours.weight is ours.weight
    assert ours.weight is not ours.weight
    P.remove_parametrizations(ours, 'weight')
    assert type(ours) is nn.Linear and isinstance(ours.weight, nn.Parameter)
    close(ours.weight, a)
    with pytest.raises(ValueError):
        P.remove_parametrizations(ours, 'weight')
    with pytest.raises(ValueError):
        P.register_parametrization(ours, 'nope', Symmetric())


def test_parametrization_shape_check_and_stacking():
    class Double(nn.Module):
        def forward(self, X):
            return X * 2

    class Flatten(nn.Module):
        def forward(self, X):
            return X.flatten()

    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match='may not change the shape'):
        P.register_parametrization(m, 'weight', Flatten())
    w = m.weight.detach().clone()
    P.register_parametrization(m, 'weight', Double())
    P.register_parametrization(m, 'weight', Double())
    close(m.weight, w.numpy() * 4)
    P.remove_parametrizations(m, 'weight', leave_parametrized=False)
    close(m.weight, w.numpy())


@needs_torch
@pytest.mark.parametrize('omap', ['matrix_exp', 'cayley', 'householder'])
@pytest.mark.parametrize('shape', [(3, 3), (5, 3), (3, 5)])
@pytest.mark.parametrize('triv', [True, False])
def test_orthogonal_as_torch(omap, shape, triv):
    ours, theirs = nn.Linear(shape[1], shape[0], dtype=tg.float64), \
        torch.nn.Linear(shape[1], shape[0]).double()
    _copy_linear(ours, theirs)
    orth, torth = nn.utils.parametrizations.orthogonal, torch.nn.utils.parametrizations.orthogonal
    orth(ours, orthogonal_map=omap, use_trivialization=triv)
    torth(theirs, orthogonal_map=omap, use_trivialization=triv)
    assert repr(ours) == repr(theirs)
    close(ours.weight, theirs.weight.detach().numpy(), rtol=1e-9, atol=1e-12)
    # after training steps on the same originals: the same weights and gradients
    _copy_linear(ours, theirs)
    x = R.normal(size=(4, shape[1]))
    (ours(tg.tensor(x)) ** 2).sum().backward()
    (theirs(torch.tensor(x)) ** 2).sum().backward()
    close(ours.parametrizations.weight.original.grad,
          theirs.parametrizations.weight.original.grad.numpy(), rtol=1e-8, atol=1e-10)
    if not triv and omap != 'householder':
        # PyTorch takes right_inverse as the identity at registration, but
        # assigning needs it
        with pytest.raises(NotImplementedError):
            theirs.weight = theirs.weight.detach()
        with pytest.raises(NotImplementedError):
            ours.weight = ours.weight.detach()


def test_orthogonal_errors():
    with pytest.raises(ValueError, match='orthogonal_map'):
        nn.utils.parametrizations.orthogonal(nn.Linear(2, 2), orthogonal_map='nope')
    with pytest.raises(ValueError, match='matrix'):
        nn.utils.parametrizations.orthogonal(nn.Linear(2, 2), name='bias')


@needs_torch
@pytest.mark.parametrize('kind', ['parametrizations', 'hook'])
def test_spectral_norm_converges_to_torch(kind):
    ours, theirs = nn.Conv2d(3, 4, 3, dtype=tg.float64), torch.nn.Conv2d(3, 4, 3).double()
    # singular values 3, 1, ...: power iteration converges fast from any start
    u, _, vt = np.linalg.svd(R.normal(size=(4, 27)), full_matrices=False)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor((u * [3.0, 1.0, 0.5, 0.2]) @ vt).reshape(4, 3, 3, 3))
    _copy_linear(ours, theirs)
    if kind == 'hook':
        nn.utils.spectral_norm(ours)
        torch.nn.utils.spectral_norm(theirs)
        names = ['bias', 'weight_orig']
    else:
        nn.utils.parametrizations.spectral_norm(ours)
        torch.nn.utils.parametrizations.spectral_norm(theirs)
        names = ['bias', 'parametrizations.weight.original']
    assert [n for n, _ in ours.named_parameters()] == names
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    x = R.normal(size=(2, 3, 5, 5))
    for _ in range(30):   # power iterations from different random starts converge
        out_o, out_t = ours(tg.tensor(x)), theirs(torch.tensor(x))
    close(out_o, out_t.detach().numpy(), rtol=1e-6, atol=1e-8)
    sigma = np.linalg.svd(theirs.weight.detach().numpy().reshape(4, -1), compute_uv=False)[0]
    assert abs(sigma - 1) < 1e-6
    ours.eval()
    before = ours(tg.tensor(x)).detach().numpy()
    close(ours(tg.tensor(x)), before)   # no power iteration in eval
    if kind == 'hook':
        nn.utils.remove_spectral_norm(ours)
        torch.nn.utils.remove_spectral_norm(theirs)
        assert [n for n, _ in ours.named_parameters()] == \
            [n for n, _ in theirs.named_parameters()]
        assert list(ours.state_dict()) == list(theirs.state_dict())
        with pytest.raises(ValueError):
            nn.utils.remove_spectral_norm(ours)
    with pytest.raises(ValueError, match='positive'):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


@needs_torch
@pytest.mark.parametrize('transpose', [False, True])
def test_fuse_conv_bn_eval(transpose):
    if transpose:
        conv, tconv = nn.ConvTranspose2d(3, 4, 3, dtype=tg.float64), \
            torch.nn.ConvTranspose2d(3, 4, 3).double()
    else:
        conv, tconv = nn.Conv2d(3, 4, 3, dtype=tg.float64), torch.nn.Conv2d(3, 4, 3).double()
    bn, tbn = nn.BatchNorm2d(4, dtype=tg.float64), torch.nn.BatchNorm2d(4).double()
    for _ in range(3):
        tbn(tconv(torch.randn(2, 3, 5, 5, dtype=torch.float64)))
    tbn.weight.data.uniform_(0.5, 2)
    tbn.bias.data.uniform_(-1, 1)
    _copy_linear(conv, tconv)
    _copy_linear(bn, tbn)
    conv.eval(), bn.eval(), tconv.eval(), tbn.eval()
    fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    tfused = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose=transpose)
    close(fused.weight, tfused.weight.detach().numpy(), rtol=1e-12)
    close(fused.bias, tfused.bias.detach().numpy(), rtol=1e-12)
    x = R.normal(size=(2, 3, 5, 5))
    close(fused(tg.tensor(x)), bn(conv(tg.tensor(x))).detach().numpy(), rtol=1e-10, atol=1e-12)
    lin, blin = nn.Linear(3, 4, dtype=tg.float64), nn.BatchNorm1d(4, dtype=tg.float64)
    blin(lin(tg.randn(5, 3, dtype=tg.float64)))
    lin.eval(), blin.eval()
    fl = nn.utils.fuse_linear_bn_eval(lin, blin)
    xl = tg.randn(2, 3, dtype=tg.float64)
    close(fl(xl), blin(lin(xl)).detach().numpy(), rtol=1e-10, atol=1e-12)
    conv.train()
    with pytest.raises(AssertionError, match='eval'):
        nn.utils.fuse_conv_bn_eval(conv, bn)


def test_functional_call():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    x = tg.randn(4, 3)
    w = tg.zeros(2, 3)
    b = tg.ones(2, requires_grad=True)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.eval()
    out = nn.utils.stateless.functional_call(model, {'0.weight': w, '0.bias': b,
                                                     '1.running_var': tg.ones(2) * 4}, (x,))
    eps = model[1].eps
    close(out, np.ones((4, 2)) / np.sqrt(4 + eps) * model[1].weight.detach().numpy()
          + model[1].bias.detach().numpy(), rtol=1e-5)
    out.sum().backward()
    assert b.grad is not None
    for k, v in model.state_dict().items():
        close(v, before[k].numpy())
    assert model[0].weight is model[0]._parameters['weight']

    class Boom(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            raise RuntimeError('boom')
    m = Boom()
    w0 = m.lin.weight
    with pytest.raises(RuntimeError, match='boom'):
        nn.utils.stateless.functional_call(m, {'lin.weight': tg.zeros(2, 2)}, tg.ones(2))
    assert m.lin.weight is w0


def test_clip_grad_norm_alias_and_skip_init():
    p = nn.Parameter(tg.ones(3))
    p.grad = tg.ones(3) * 4
    with pytest.warns(UserWarning, match='deprecated'):
        total = nn.utils.clip_grad_norm([p], 1.0)
    close(total, np.sqrt(48))
    close(p.grad, np.ones(3) * 4 / np.sqrt(48), rtol=1e-5)
    # modules take device= now (as PyTorch's): skip_init builds them; a class
    # without it is PyTorch's error
    assert nn.utils.skip_init(nn.Linear, 3, 2).weight.shape == (2, 3)
    with pytest.raises(RuntimeError, match="'device'"):
        nn.utils.skip_init(nn.ReLU)


@needs_torch
@pytest.mark.parametrize('name,args', [('uniform', (-1.0, 2.0)), ('normal', (0.5, 2.0)),
                                       ('constant', (3.0,)), ('eye', ()), ('dirac', ()),
                                       ('xavier_uniform', ()), ('xavier_normal', ()),
                                       ('kaiming_uniform', ()), ('kaiming_normal', ()),
                                       ('orthogonal', ()), ('sparse', (0.5,))])
def test_init_deprecated_aliases(name, args):
    shape = (4, 2, 3) if name == 'dirac' else (6, 5)
    t = tg.zeros(*shape)
    with pytest.warns(UserWarning, match=f"nn.init.{name} is now deprecated in favor of "
                                         f"nn.init.{name}_"):
        out = getattr(nn.init, name)(t, *args)
    assert out is t
    tt = torch.zeros(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        getattr(torch.nn.init, name)(tt, *args)
    if name in ('constant', 'eye', 'dirac'):
        close(t, tt.numpy())
    elif name == 'sparse':
        assert int((t == 0).sum()) == int((tt == 0).sum())
    else:
        assert float(t.abs().sum()) > 0
