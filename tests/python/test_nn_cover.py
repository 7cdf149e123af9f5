"""nn additions (functional_more.py, layers_more.py): in-place activations,
bilinear, local_response_norm, gumbel_softmax, alpha dropout,
adaptive_avg_pool3d, max pooling with indices or dilation, and the
modules over them; values and gradients against PyTorch."""
import numpy as np
import pytest

import tensorgraph as tg
import tensorgraph.nn.functional as F
from conftest import close, grads_match, needs_torch, pair, torch

NAN = float('nan')


@needs_torch
@pytest.mark.parametrize("name,args", [("relu_", ()), ("elu_", (0.5,)),
                                       ("leaky_relu_", (0.2,)), ("selu_", ())])
def test_inplace_activations_write_input(name, args):
    x = np.random.RandomState(0).normal(size=(3, 4))
    a, ta = pair(x)
    y, ty = a * 1.0, ta * 1.0
    out, tout = getattr(F, name)(y, *args), getattr(torch.nn.functional, name)(ty, *args)
    assert out is y
    close(y, ty.detach().numpy(), 1e-12)
    grads_match(out, tout, [a], [ta])


@needs_torch
@pytest.mark.parametrize("name,args", [("selu", ()), ("hardswish", ()), ("hardsigmoid", ()),
                                       ("silu", ()), ("mish", ()), ("hardtanh", (-0.5, 0.5)),
                                       ("relu6", ()), ("celu", (0.7,)),
                                       ("threshold", (0.1, -2.0))])
def test_inplace_true_on_an_intermediate_keeps_the_gradient(name, args):
    # the op used to save the tensor it then overwrote (backward refused)
    x = np.random.RandomState(0).normal(size=(3, 4)) * 3
    a, ta = pair(x)
    y, ty = a * 1.0, ta * 1.0
    out = getattr(F, name)(y, *args, inplace=True)
    tout = getattr(torch.nn.functional, name)(ty, *args, inplace=True)
    assert out is y
    grads_match(out, tout, [a], [ta], 1e-6, 1e-9)  # some kernels' constants are float32


@needs_torch
def test_bilinear_function_and_module():
    rs = np.random.RandomState(2)
    x1, x2, w, b = rs.normal(size=(2, 3, 4)), rs.normal(size=(2, 3, 5)), \
        rs.normal(size=(6, 4, 5)), rs.normal(size=(6,))
    ins = [pair(v) for v in (x1, x2, w, b)]
    grads_match(F.bilinear(*[p[0] for p in ins]),
                torch.nn.functional.bilinear(*[p[1] for p in ins]),
                [p[0] for p in ins], [p[1] for p in ins])
    m = tg.nn.Bilinear(4, 5, 6)
    assert m.weight.shape == (6, 4, 5) and m.bias.shape == (6,)
    assert float(m.weight.abs().max()) <= 0.5
    assert m(tg.zeros(7, 4), tg.zeros(7, 5)).shape == (7, 6)
    assert F.bilinear(tg.zeros(0, 4), tg.zeros(0, 5), tg.zeros(6, 4, 5)).shape == (0, 6)
    with pytest.raises(RuntimeError, match="do not match"):
        m(tg.zeros(7, 3), tg.zeros(7, 5))


@needs_torch
@pytest.mark.parametrize("shape,size", [((2, 5, 7), 3), ((2, 6, 3, 4), 2), ((1, 4, 2, 2, 3), 5),
                                        ((2, 3, 4), 1)])
def test_local_response_norm_against_torch(shape, size):
    x = np.random.RandomState(3).normal(size=shape)
    a, ta = pair(x)
    grads_match(F.local_response_norm(a, size, 1e-2, 0.75, 2.0),
                torch.nn.functional.local_response_norm(ta, size, 1e-2, 0.75, 2.0), [a], [ta])
    m = tg.nn.LocalResponseNorm(size)
    close(m(tg.tensor(x)), torch.nn.LocalResponseNorm(size)(torch.tensor(x)).numpy(), 1e-6)
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(tg.zeros(2, 3), 2)


def test_gumbel_softmax_samples():
    tg.manual_seed(0)
    logits = tg.tensor([[0.0, 1.0, 2.0]] * 4000, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5)
    close(y.sum(-1), np.ones(4000))
    h = F.gumbel_softmax(logits, hard=True)
    assert set(h.detach().reshape(-1).tolist()) == {0.0, 1.0}
    close(h.sum(-1), np.ones(4000))
    # hard samples are categorical with p = softmax(logits)
    freq = h.detach().mean(0).numpy()
    close(freq, np.exp([0, 1, 2]) / np.exp([0, 1, 2]).sum(), 0, 0.03)
    (h * tg.tensor([1.0, 2.0, 3.0])).sum().backward()  # straight through: soft gradient
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0


def test_alpha_dropout_keeps_mean_and_variance():
    tg.manual_seed(1)
    x = tg.randn(200000, dtype=tg.float64)
    y = F.alpha_dropout(x, 0.3, training=True)
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02
    alpha_p = -1.7580993408473766
    a = 1 / np.sqrt((alpha_p ** 2 * 0.3 + 1) * 0.7)
    dropped = np.isclose(y.numpy(), a * alpha_p + a * (-alpha_p) * 0.3)
    assert abs(dropped.mean() - 0.3) < 0.01
    assert F.alpha_dropout(x, 0.3) is x  # training=False: the input
    assert float(F.alpha_dropout(x, 1.0, True).abs().sum()) == 0
    z = tg.randn(50, 40, 3, 3)
    f = F.feature_alpha_dropout(z, 0.5, True)
    per_map = f.reshape(50, 40, 9)
    # a dropped feature map is constant
    const = (per_map.amax(-1) == per_map.amin(-1)).to(tg.float32).mean().item()
    assert 0.4 < const < 0.6
    m = tg.nn.AlphaDropout(0.2)
    m.eval()
    assert m(z) is z
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.alpha_dropout(x, 1.5, True)


@needs_torch
def test_adaptive_avg_pool3d_and_module():
    x = np.random.RandomState(4).normal(size=(2, 3, 5, 6, 7))
    for size in (1, 2, (3, 2, 4), (None, 3, 1)):
        a, ta = pair(x)
        grads_match(F.adaptive_avg_pool3d(a, size),
                    torch.nn.functional.adaptive_avg_pool3d(ta, size), [a], [ta])
    close(tg.nn.AdaptiveAvgPool3d(2)(tg.tensor(x[0])),
          torch.nn.AdaptiveAvgPool3d(2)(torch.tensor(x[0])).numpy())


@needs_torch
@pytest.mark.parametrize("args", [(2,), (3, 2, 1), ((3, 2), (2, 1), (1, 0), (2, 1)),
                                  (2, 1, 0, 2)])
def test_max_pool2d_with_indices_against_torch(args):
    x = np.random.RandomState(5).normal(size=(2, 3, 7, 6))
    x[0, 0, 1, 1] = NAN
    x[1, 1, 2:4, 2:4] = 5.0  # ties: the first position, as PyTorch
    x[1, 2] = -np.inf
    a, ta = pair(x, requires_grad=False)
    v, i = F.max_pool2d(a, *args, return_indices=True)
    tv, ti = torch.nn.functional.max_pool2d(ta, *args, return_indices=True)
    close(v, tv.numpy())
    assert i.dtype == tg.int64 and i.tolist() == ti.tolist()
    v2, i2 = F.max_pool2d_with_indices(a, *args)
    assert i2.tolist() == ti.tolist()
    y = np.random.RandomState(6).normal(size=(3, 7, 6))  # unbatched
    a, ta = pair(y)
    grads_match(F.max_pool2d(a, *args, return_indices=True)[0],
                torch.nn.functional.max_pool2d(ta, *args, return_indices=True)[0], [a], [ta])
    m = tg.nn.MaxPool2d(*args, return_indices=True)
    assert m(tg.tensor(x))[1].tolist() == ti.tolist()


@needs_torch
def test_max_pool1d_with_indices_and_dilation():
    x = np.random.RandomState(7).normal(size=(2, 3, 11))
    for args in ((2,), (3, 2, 1), (3, 1, 1, 2)):
        a, ta = pair(x)
        v, i = F.max_pool1d(a, *args, return_indices=True)
        tv, ti = torch.nn.functional.max_pool1d(ta, *args, return_indices=True)
        assert i.tolist() == ti.tolist()
        grads_match(v, tv, [a], [ta])
    close(tg.nn.MaxPool1d(3, 1, 1, 2)(tg.tensor(x)),
          torch.nn.MaxPool1d(3, 1, 1, 2)(torch.tensor(x)).numpy())
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool1d(tg.tensor(x), 2, 1, 2, return_indices=True)
    # ceil_mode with indices: the last window hangs over the end, as PyTorch's
    vg, ig = F.max_pool1d(tg.tensor(x), 2, ceil_mode=True, return_indices=True)
    vt, it = torch.nn.functional.max_pool1d(torch.tensor(x), 2, ceil_mode=True,
                                            return_indices=True)
    close(vg, vt.numpy())
    assert ig.tolist() == it.tolist()


@needs_torch
@pytest.mark.parametrize("name,shape,pad", [
    ("ReflectionPad1d", (2, 3, 5), (2, 1)), ("ReflectionPad2d", (1, 2, 4, 5), 2),
    ("ReflectionPad3d", (1, 2, 3, 4, 5), (1, 2, 0, 1, 2, 1)),
    ("ReplicationPad1d", (3, 5), 3), ("ReplicationPad2d", (1, 2, 4, 5), (1, 0, 3, 2)),
    ("ReplicationPad3d", (1, 2, 3, 4, 5), 2)])
def test_padding_modules_against_torch(name, shape, pad):
    x = np.random.RandomState(8).normal(size=shape)
    a, ta = pair(x)
    grads_match(getattr(tg.nn, name)(pad)(a), getattr(torch.nn, name)(pad)(ta), [a], [ta])
    with pytest.raises(ValueError, match="padding"):
        getattr(tg.nn, name)((1, 2, 3))


@needs_torch
def test_softmax2d_batchnorm3d_lazylinear():
    x = np.random.RandomState(9).normal(size=(2, 3, 4, 5))
    a, ta = pair(x)
    grads_match(tg.nn.Softmax2d()(a), torch.nn.Softmax2d()(ta), [a], [ta])
    close(tg.nn.Softmax2d()(tg.tensor(x[0])), torch.nn.Softmax2d()(torch.tensor(x[0])).numpy())
    with pytest.raises(ValueError, match="3D or 4D"):
        tg.nn.Softmax2d()(tg.zeros(3, 4))
    v = np.random.RandomState(10).normal(size=(4, 3, 2, 3, 2))
    bn, tbn = tg.nn.BatchNorm3d(3).double(), torch.nn.BatchNorm3d(3).double()
    a, ta = pair(v)
    grads_match(bn(a), tbn(ta), [a], [ta], 1e-9, 1e-10)
    close(bn.running_mean, tbn.running_mean.numpy(), 1e-10)
    close(bn.running_var, tbn.running_var.numpy(), 1e-10)
    bn.eval(), tbn.eval()
    close(bn(tg.tensor(v)), tbn(torch.tensor(v)).detach().numpy(), 1e-9)
    with pytest.raises(ValueError, match="expected 5D"):
        bn(tg.zeros(2, 3, 4, 4))
    lin = tg.nn.LazyLinear(4)
    assert list(lin.parameters()) == [] and lin.in_features == 0
    y = lin(tg.ones(2, 7))
    assert y.shape == (2, 4) and type(lin) is tg.nn.Linear
    assert lin.weight.shape == (4, 7) and lin.bias.shape == (4,)
    assert repr(lin) == "Linear(in_features=7, out_features=4, bias=True)"
    assert len(list(lin.parameters())) == 2
    assert tg.nn.LazyLinear(3, bias=False)(tg.ones(5)).shape == (3,)
