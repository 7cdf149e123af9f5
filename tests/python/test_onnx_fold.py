"""Batch norm folded into the convolution before it when an ONNX model is
loaded (src/onnx/fold_bn.c): torchvision architectures exported by
torch.onnx with their BatchNormalization nodes kept (training=PRESERVE in
eval mode, no constant folding; torch's own export folds them otherwise),
random weights and statistics. The loaded model (folded) agrees with the
module form, whose initializers are parameters and are never folded, within
1e-5 relative, and with torch. Skipped without torch and torchvision."""
import os

import numpy as np
import pytest

import tensorgraph as tg

from conftest import SANITIZED

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")
pytestmark = pytest.mark.skipif(SANITIZED, reason="torch.onnx.export aborts under the "
                                "ASan preload (C++ exceptions inside torch)")


def export_with_bn(name, path):
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None).eval()
    g = torch.Generator().manual_seed(1)
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    x = torch.randn(2, 3, 64, 64)
    torch.onnx.export(net, (x,), path, opset_version=17, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE, input_names=["x"],
                      output_names=["y"])
    with torch.no_grad():
        return x.numpy(), net(x).numpy()


@pytest.mark.parametrize("name", ["mobilenet_v2", "mobilenet_v3_small", "resnet18"])
def test_folded_equals_unfolded(name, tmp_path):
    path = os.fspath(tmp_path / (name + ".onnx"))
    x, want = export_with_bn(name, path)
    n_bn = sum(n.op_type == "BatchNormalization" for n in onnx.load(path).graph.node)
    assert n_bn >= 20  # the export kept them
    xt = tg.tensor(x)
    with tg.no_grad():
        folded = tg.onnx.load(path)(xt).numpy()
        unfolded = tg.onnx.load(path, as_module=True)(xt).numpy()
    scale = np.abs(unfolded).max()
    assert np.abs(folded - unfolded).max() <= 1e-5 * scale
    assert not np.array_equal(folded, unfolded)  # two computations, not one
    assert np.abs(folded - want).max() <= 1e-5 * np.abs(want).max()
