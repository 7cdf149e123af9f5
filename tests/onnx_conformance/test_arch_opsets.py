"""More published architectures at every opset (arch_models.py: random
weights, batch-norm statistics randomised, small inputs): torchvision's
squeezenet1_1, shufflenet_v2_x0_5, efficientnet_b0, googlenet, regnet_y_400mf,
ConvNeXt and Swin (convnext_tiny's and swin_t's blocks at small widths), mnasnet0_5, lraspp_mobilenet_v3_large, a small
VisionTransformer, torch.nn's
TransformerEncoder and TransformerDecoder, LSTM and GRU (batch_first and
not, bidirectional), exported by torch.onnx at test time and imported by
tensorgraph, run eagerly and inside tg.function: the max error relative to
the largest output below 1e-4 (the recurrent layers also at opsets 7
and 8). The opsets per model keep the test under a
minute: all of 9, 11, 13 and 17 for the small models, fewer for the
slower exports (arch_sweep.py runs every model at every opset, also
through `tg run` and onnxruntime; docs/ONNX.md has its table). Skipped
without torch, torchvision or onnx, and under the sanitizers."""
import os
import sys

import numpy as np
import pytest

import tensorgraph as tg

if os.environ.get("TG_PY_SANITIZED") == "1":
    pytest.skip("torch.onnx.export aborts under the ASan preload", allow_module_level=True)
torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
pytest.importorskip("onnx")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch_models import MODELS_ALL as MODELS  # noqa: E402

ALL = (9, 11, 13, 17)
CASES = {
    "squeezenet1_1": ALL,
    "shufflenet_v2_x0_5": ALL,
    "efficientnet_b0": (9, 17),
    "googlenet": (11, 17),
    "regnet_y_400mf": (9, 13),
    "convnext_mini": (9, 17),
    "swin_mini": (11, 17),  # opset 9 cannot export its padding (torch.onnx needs 11)
    "vit_tiny": ALL,
    "mnasnet0_5": (9, 13),
    "lraspp_mobilenet_v3_large": (11,),  # bilinear Resize (opset 9 exports another rule)
    "transformer_encoder": ALL,
    "transformer_encoder_bf_normfirst_gelu": ALL,
    "transformer_decoder": ALL,
    "transformer_decoder_bf": ALL,
    # below opset 9 torch.onnx writes ConstantFill for the zero initial states
    "lstm_2layer": (7, 8) + ALL,
    "lstm_bidir_bf": (8,) + ALL,
    "gru_bf": (7,) + ALL,
    "gru_bidir": (8,) + ALL,
}


def rel(got, want):
    scale = max(float(np.abs(w).max()) for w in want)
    return max(float(np.abs(g - w).max()) for g, w in zip(got, want)) / scale


@pytest.mark.parametrize("name,opset", [(n, o) for n, os_ in CASES.items() for o in os_])
def test_architecture(name, opset, tmp_path):
    net, args, in_names, out_names = MODELS[name]()
    with torch.no_grad():
        ref = net(*args)
    ref = [r.numpy() for r in (ref if isinstance(ref, tuple) else (ref,))]
    assert max(np.abs(r).max() for r in ref) > 1e-2  # outputs are not near zero
    path = str(tmp_path / ("%s_%d.onnx" % (name, opset)))
    torch.onnx.export(net, args, path, opset_version=opset, input_names=in_names,
                      output_names=out_names)
    m = tg.onnx.load(path)
    assert m.output_names == out_names
    ts = [tg.tensor(a.numpy()) for a in args]
    with tg.no_grad():
        eager = m(*ts)
        graph = tg.function(lambda *a: m(*a))(*ts)
    for mode, out in (("eager", eager), ("graph", graph)):
        out = [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]
        assert [o.shape for o in out] == [r.shape for r in ref], mode
        assert rel(out, ref) < 1e-4, (mode, rel(out, ref))
