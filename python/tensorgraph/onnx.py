"""tensorgraph.onnx: export a model's forward to ONNX (opset 17) by tracing
it into a graph (as tg.function does, in eval mode), and load an ONNX model
(the C importer, opsets 7-17; docs/ONNX.md) to call it on tensors: eagerly
(autograd records it) or inside tg.function (its nodes join the traced
graph), or as an nn.Module whose initializers are parameters."""
import os

from . import _C
from .function import Function
from .nn.module import Module
from .nn.parameter import Parameter


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
    builds it on the tensors where it is called: eagerly (gradients flow to
    the inputs) or, inside tg.function, into the traced graph."""

    def __init__(self, path):
        self._m, self.input_names, self.output_names = _C._onnx_load(os.fspath(path))

    def run(self, inputs, initializers=None):
        """{output name: tensor}; initializers: None, or per initializer
        (model order) a tensor to use in its place or None"""
        names = list(inputs)
        return _C._onnx_call(self._m, names, [inputs[n] for n in names], initializers)

    def _outputs(self, out):
        vals = [out[n] for n in self.output_names if n in out]
        return vals[0] if len(vals) == 1 else tuple(vals)

    def __call__(self, *tensors):
        return self._outputs(self.run(dict(zip(self.input_names, tensors))))

    def initializers(self):
        """[(name, tensor)] in model order (the model's own tensors)"""
        return _C._onnx_inits(self._m)


def _attr_name(name, taken):
    base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "init"
    if base[0].isdigit():
        base = "_" + base
    attr, k = base, 1
    while attr in taken:
        attr, k = "%s_%d" % (base, k), k + 1
    taken.add(attr)
    return attr


class OnnxModule(Module):
    """An ONNX model as an nn.Module: every floating-point initializer is a
    Parameter (a copy: training does not change the loaded model), named
    after it with non-identifier characters as '_' ('conv1.weight' ->
    conv1_weight); integer initializers (shapes, indices) stay the
    model's. forward(*inputs) returns the model's output(s)."""

    def __init__(self, model):
        super().__init__()
        if not isinstance(model, OnnxModel):
            model = OnnxModel(model)
        self.__dict__["onnx_model"] = model
        self.__dict__["_slots"] = []
        self.__dict__["onnx_names"] = {}  # parameter name -> initializer name
        taken = set()
        for name, t in model.initializers():
            if t.dtype.is_floating_point:
                attr = _attr_name(name, taken)
                self.register_parameter(attr, Parameter(t.clone()))
                self.onnx_names[attr] = name
                self._slots.append(attr)
            else:
                self._slots.append(None)

    def forward(self, *tensors):
        m = self.onnx_model
        inits = [self._parameters[a] if a else None for a in self._slots]
        return m._outputs(m.run(dict(zip(m.input_names, tensors)), inits))


def to_module(model):
    """an OnnxModel (or a path) as an nn.Module with its initializers as parameters"""
    return OnnxModule(model)


def load(path, as_module=False):
    """the model at path: an OnnxModel, or with as_module an OnnxModule"""
    model = OnnxModel(path)
    return OnnxModule(model) if as_module else model
