"""tensorgraph.onnx: export a model's forward to ONNX (opset 17) by tracing
it into a graph (as tg.function does, in eval mode), and load an ONNX model
to run it eagerly on tensors (the C importer, opsets 11-17; docs/ONNX.md)."""
import os

from . import _C
from .function import Function


def export(model, args, f, input_names=None, output_names=None, opset_version=None):
    """Writes model(*args) as an ONNX file at path f. Parameters become
    initializers with their current values; the inputs are named
    input_0, ... and the outputs after the nodes that make them."""
    if opset_version not in (None, 17):
        raise ValueError("export writes opset 17")
    args = (args,) if isinstance(args, _C.Tensor) else tuple(args)
    was_training = getattr(model, "training", False)
    if hasattr(model, "eval"):
        model.eval()
    try:
        cf = Function(lambda *a: model(*a)).get_concrete_function(*args)
        cf.export_onnx(os.fspath(f))
    finally:
        if was_training:
            model.train()


class OnnxModel:
    """A loaded ONNX model: model(*tensors) or model.run({name: tensor})
    runs it eagerly (gradients flow to the inputs)."""

    def __init__(self, path):
        self._m, self.input_names, self.output_names = _C._onnx_load(os.fspath(path))

    def run(self, inputs):
        names = list(inputs)
        return _C._onnx_run(self._m, names, [inputs[n] for n in names])

    def __call__(self, *tensors):
        out = self.run(dict(zip(self.input_names, tensors)))
        vals = [out[n] for n in self.output_names if n in out]
        return vals[0] if len(vals) == 1 else tuple(vals)


def load(path):
    return OnnxModel(path)
