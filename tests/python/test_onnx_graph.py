"""ONNX models inside graph mode and as nn.Modules: a model exported by
torch.onnx is called inside tg.function (its nodes join the traced graph),
and tg.onnx.load(path, as_module=True) gives a module whose initializers
are parameters: gradients equal torch's, and an SGD step changes them.
Skipped without torch (the models are exported at test time)."""
import os

import numpy as np
import pytest

import tensorgraph as tg

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        y = torch.nn.functional.max_pool2d(y, 2)
        return torch.softmax(self.fc(y.flatten(1)), dim=1)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    torch.manual_seed(0)
    net = Small().eval()
    x = torch.randn(2, 3, 8, 8)
    path = os.path.join(tmp_path_factory.mktemp("onnx"), "small.onnx")
    torch.onnx.export(net, (x,), path, opset_version=13, input_names=["x"],
                      output_names=["y"], do_constant_folding=False)
    return net, x, path


def test_model_inside_function(exported):
    net, x, path = exported
    m = tg.onnx.load(path)
    xt = tg.tensor(x.numpy())
    eager = m(xt).numpy()
    np.testing.assert_allclose(eager, net(x).detach().numpy(), rtol=1e-4, atol=1e-6)
    f = tg.function(lambda a: m(a) * 2)
    np.testing.assert_allclose(f(xt).numpy(), 2 * eager, rtol=1e-5, atol=1e-7)
    dump = f.graph.dump()
    assert "conv2d" in dump and "softmax" in dump  # the model's nodes are in the graph
    # gradients through the traced model to its input equal eager ones
    xa = tg.tensor(x.numpy(), requires_grad=True)
    (f(xa) * tg.tensor(np.arange(10, dtype=np.float32).reshape(2, 5))).sum().backward()
    xb = tg.tensor(x.numpy(), requires_grad=True)
    (m(xb) * 2 * tg.tensor(np.arange(10, dtype=np.float32).reshape(2, 5))).sum().backward()
    np.testing.assert_allclose(xa.grad.numpy(), xb.grad.numpy(), rtol=1e-4, atol=1e-7)


def test_module_gradients_match_torch(exported):
    net, x, path = exported
    mod = tg.onnx.load(path, as_module=True)
    names = dict(mod.onnx_names)
    assert sorted(names.values()) == ["conv.bias", "conv.weight", "fc.bias", "fc.weight"]
    w = np.arange(10, dtype=np.float32).reshape(2, 5)
    out = mod(tg.tensor(x.numpy()))
    (out * tg.tensor(w)).sum().backward()
    net.zero_grad()
    (net(x) * torch.from_numpy(w)).sum().backward()
    tp = dict(net.named_parameters())
    for attr, p in mod.named_parameters():
        ref = tp[names[attr]].grad.numpy()
        np.testing.assert_allclose(p.grad.numpy(), ref, rtol=1e-3, atol=1e-6 * abs(ref).max())
    # an SGD step changes the parameters by -lr * grad, and the output
    before = {a: p.detach().numpy().copy() for a, p in mod.named_parameters()}
    opt = tg.optim.SGD(mod.parameters(), lr=0.5)
    opt.step()
    for a, p in mod.named_parameters():
        np.testing.assert_allclose(p.detach().numpy(), before[a] - 0.5 * p.grad.numpy(),
                                   rtol=1e-6, atol=1e-7)
    assert not np.allclose(mod(tg.tensor(x.numpy())).detach().numpy(), out.detach().numpy())
    # the loaded model itself is unchanged
    m = tg.onnx.load(path)
    np.testing.assert_allclose(m(tg.tensor(x.numpy())).numpy(), out.detach().numpy(), rtol=1e-5)


def test_module_inside_function(exported):
    net, x, path = exported
    mod = tg.onnx.to_module(tg.onnx.load(path))
    f = tg.function(lambda a: mod(a).sum(1).mean() + (mod(a) ** 2).sum())
    xt = tg.tensor(x.numpy())
    loss = f(xt)
    loss.backward()
    grads = {a: p.grad.numpy().copy() for a, p in mod.named_parameters()}
    mod.zero_grad()
    (mod(xt).sum(1).mean() + (mod(xt) ** 2).sum()).backward()
    for a, p in mod.named_parameters():
        np.testing.assert_allclose(grads[a], p.grad.numpy(), rtol=1e-4,
                                   atol=1e-6 * abs(grads[a]).max())


def test_wrong_initializer_is_an_error(exported):
    _, x, path = exported
    m = tg.onnx.load(path)
    inits = [None] * len(m.initializers())
    inits[0] = tg.zeros(7)
    with pytest.raises(Exception, match="initializer"):
        m.run({"x": tg.tensor(x.numpy())}, inits)
