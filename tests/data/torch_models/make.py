#!/usr/bin/env python3
"""Builds the small PyTorch models of tests/test_torch_models.c, exports each
with torch.onnx.export at opsets 13 and 17 to NAME_opN.onnx, and writes
NAME_opN.safetensors with what PyTorch computes for it:
  input.X   the inputs (keyed by ONNX input name)
  output.Y  the outputs (keyed by ONNX output name)
  grad.P    the gradients of the sum of all floating-point outputs with
            respect to every floating-point input and every parameter
            that is an ONNX initializer of the same name
so that the test runs without PyTorch. Run it with Debian's interpreter
when python3-torch is present, from anywhere:

    /usr/bin/python3 tests/data/torch_models/make.py

It rewrites every file; the outputs depend only on the seeds here (and
PyTorch's kernels). Keep the models small: the directory stays < 2 MB."""
import json
import os
import struct
import sys

import numpy as np
for _alias, _type in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if _alias not in np.__dict__:  # Debian's onnx 1.12 still uses numpy's removed aliases
        setattr(np, _alias, _type)
import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DT = {np.float32: "F32", np.float64: "F64", np.int64: "I64", np.int32: "I32"}


def save_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.array(a, order="C")  # ascontiguousarray would make 0-d arrays 1-d
        b = a.tobytes()
        header[name] = {"dtype": DT[a.dtype.type], "shape": list(a.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, sort_keys=True).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


# ---- the models ----------------------------------------------------------------------
class ConvGeometry(nn.Module):
    """strides, padding, dilation, groups, a non-square kernel, no bias"""
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2)
        self.b = nn.Conv2d(6, 4, (3, 1), stride=(1, 2), padding=(1, 0), bias=False)
        self.c = nn.Conv1d(4, 3, 3, padding=2, dilation=2)

    def forward(self, x):
        y = self.b(torch.relu(self.a(x)))
        return self.c(y.flatten(2))


class Pools(nn.Module):
    def forward(self, x):
        a = F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)
        b = F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)
        c = F.adaptive_avg_pool2d(x, 1)
        return a.sum(dim=(2, 3)) + b.mean(dim=(2, 3)) + c.flatten(1)


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 5 * 5, 3)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(4)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(4)

    def forward(self, x):
        h = torch.relu(self.b1(self.c1(x)))
        return torch.relu(x + self.b2(self.c2(h)))


class NormMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.ln = nn.LayerNorm(8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


class GroupNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.gn = nn.GroupNorm(3, 6)
        self.gn1 = nn.GroupNorm(1, 6, affine=False)

    def forward(self, x):  # tanh: the sum of a normalised tensor is constant
        return torch.tanh(self.gn1(F.silu(self.gn(self.conv(x)))))


class InstanceNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, bias=False)  # a bias would be normalised away
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.inorm1d = nn.InstanceNorm1d(4)

    def forward(self, x):
        y = torch.tanh(self.inorm(self.conv(x)))
        return torch.tanh(self.inorm1d(y.flatten(2)))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8)
        self.ln = nn.LayerNorm(8)
        self.qkv = nn.Linear(8, 24)
        self.out = nn.Linear(8, 3)

    def forward(self, tokens):
        h = self.ln(self.emb(tokens))
        q, k, v = self.qkv(h).split(8, dim=-1)
        a = torch.softmax(q @ k.transpose(1, 2) / 8 ** 0.5, dim=-1)
        return self.out(a @ v + h).mean(dim=1)


class TiedLM(nn.Module):
    """the embedding matrix is also the output projection"""
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(13, 6)
        self.fc = nn.Linear(6, 6)

    def forward(self, tokens):
        h = torch.tanh(self.fc(self.emb(tokens)))
        return F.log_softmax(h @ self.emb.weight.t(), dim=-1)


class Float64Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 7)
        self.fc2 = nn.Linear(7, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)) * torch.sigmoid(x.sum(dim=1, keepdim=True)))


class DynamicBatch(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, stride=2)
        self.fc = nn.Linear(3 * 3 * 3, 4)

    def forward(self, x):
        return F.log_softmax(self.fc(torch.relu(self.conv(x)).flatten(1)), dim=1)


class CrossEntropy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x, labels):
        logits = self.fc(x)
        return F.cross_entropy(logits, labels), F.cross_entropy(logits, labels, reduction="sum")


class Gather(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x, index):
        return torch.gather(self.fc(x), 1, index)


class Interpolate(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        a = F.interpolate(y, scale_factor=2, mode="nearest")
        b = F.interpolate(y, size=(7, 5), mode="bilinear", align_corners=False)
        c = F.interpolate(y, scale_factor=1.5, mode="bilinear", align_corners=True)
        d = F.interpolate(y, size=(6, 5), mode="bicubic", align_corners=False)
        return a.mean(dim=(2, 3)), b, c, d


class Upsampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.conv = nn.Conv2d(3, 2, 3)

    def forward(self, x):
        return self.conv(self.up(x))


class Einsum(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 5))

    def forward(self, a, b):
        y = torch.einsum("bij,jk->bik", a, self.w)
        z = torch.einsum("bik,bkl->bil", y, b)
        return torch.einsum("bii->b", z[:, :, :3]), torch.einsum("bij,bij->b", y, y)


class MultiUse(nn.Module):
    """one value used many times, a duplicated output, a passthrough"""
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))

    def forward(self, x):
        c = torch.cat([x, x * self.w, x], dim=1)
        s = torch.tanh(c)
        return s, s, x


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        return F.hardswish(h) + F.hardsigmoid(h) + F.selu(h) + F.elu(h) + F.leaky_relu(h, 0.2)


class ConvTranspose(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return torch.tanh(self.up(x))


class MathOps(nn.Module):
    """fmod (Mod fmod=1) and cumsum (CumSum), if the installed exporter has them"""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):
        h = self.fc(x)
        return torch.fmod(h, 0.7), torch.cumsum(h, dim=1)


class Conv1dNet(nn.Module):
    """1-D convolution, pooling and transposed convolution"""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        h = F.max_pool1d(torch.relu(self.conv(x)), 3, stride=1, padding=1)
        return self.up(F.avg_pool1d(h, 2, ceil_mode=True))


class Pool3d(nn.Module):
    def forward(self, x):
        return F.max_pool3d(x, 2, stride=(1, 2, 2)), F.avg_pool3d(x, (1, 2, 2), padding=(0, 1, 0))


class Positions(nn.Module):
    """torch.arange over a dynamic dim (ONNX Range fed by Shape)"""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        pos = torch.arange(x.shape[1], dtype=torch.float32).unsqueeze(1)
        return torch.tanh(self.fc(x) + 0.1 * pos)


class Conv3dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 3, 3, stride=(1, 2, 2), padding=1)
        self.up = nn.ConvTranspose3d(3, 2, 2, stride=2)

    def forward(self, x):
        return self.up(F.max_pool3d(torch.relu(self.conv(x)), 2, stride=1))


class PadTopK(nn.Module):
    """reflect and replicate padding (Pad modes reflect, edge), torch.topk"""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        p = F.pad(h, (2, 1), mode="reflect") + 2 * F.pad(h, (2, 1), mode="replicate")  # no ties
        values, indices = torch.topk(p, 3, dim=-1)
        return values, indices


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype)


# name, module, example inputs (names -> tensors), output names, extra; each
# model is exported at both OPSETS as NAME_opN
MODELS = [
    ("conv_geometry", ConvGeometry, {"x": lambda: r(2, 4, 9, 8)}, ["y"], {}),
    ("pools", Pools, {"x": lambda: r(2, 3, 7, 6)}, ["y"], {}),
    ("conv_bn", ConvBN, {"x": lambda: r(2, 3, 5, 5)}, ["y"], {"bn": True}),  # BN folded
    ("residual", Residual, {"x": lambda: r(1, 4, 6, 6)}, ["y"],
     {"bn": True, "training": torch.onnx.TrainingMode.PRESERVE}),
    ("norm_mlp", NormMLP, {"x": lambda: r(4, 6)}, ["y"], {}),
    ("group_norm", GroupNormNet, {"x": lambda: r(2, 3, 4, 5)}, ["y"], {}),
    ("instance_norm", InstanceNormNet, {"x": lambda: r(2, 2, 6, 5)}, ["y"], {}),
    ("attention", Attention, {"tokens": lambda: torch.tensor([[1, 5, 7, 2], [3, 3, 10, 0]])},
     ["y"], {}),
    ("tied_lm", TiedLM, {"tokens": lambda: torch.tensor([[1, 12, 4], [0, 4, 7]])}, ["y"],
     {}),
    ("float64", Float64Net, {"x": lambda: r(3, 5, dtype=torch.float64)}, ["y"],
     {"double": True}),
    ("dynamic_batch", DynamicBatch, {"x": lambda: r(2, 1, 8, 8)}, ["y"],
     {"dynamic": {"x": {0: "batch"}, "y": {0: "batch"}}, "run_batch": 3}),
    ("cross_entropy", CrossEntropy, {"x": lambda: r(4, 6),
                                     "labels": lambda: torch.tensor([0, 3, 4, 1])},
     ["mean", "sum"], {}),
    ("gather", Gather, {"x": lambda: r(3, 5),
                        "index": lambda: torch.tensor([[0, 4], [2, 2], [1, 3]])}, ["y"], {}),
    ("interpolate", Interpolate, {"x": lambda: r(1, 2, 4, 3)}, ["a", "b", "c", "d"], {}),
    ("upsample", Upsampler, {"x": lambda: r(1, 3, 3, 4)}, ["y"], {}),
    ("einsum", Einsum, {"a": lambda: r(2, 3, 4), "b": lambda: r(2, 5, 3)}, ["trace", "sq"],
     {}),
    ("multi_use", MultiUse, {"x": lambda: r(2, 4)}, ["s", "s2", "x_out"], {}),
    ("activations", Activations, {"x": lambda: r(3, 6) * 3}, ["y"], {}),
    ("conv_transpose", ConvTranspose, {"x": lambda: r(1, 3, 4, 3)}, ["y"], {}),
    ("conv1d", Conv1dNet, {"x": lambda: r(2, 3, 11)}, ["y"], {}),
    ("pool3d", Pool3d, {"x": lambda: r(1, 2, 3, 4, 5)}, ["max", "avg"], {}),
    ("positions", Positions, {"x": lambda: r(2, 5, 4)}, ["y"],
     {"dynamic": {"x": {1: "n"}, "y": {1: "n"}}}),
    ("conv3d", Conv3dNet, {"x": lambda: r(1, 2, 4, 6, 5)}, ["y"], {}),
    ("pad_topk", PadTopK, {"x": lambda: r(2, 3, 6)}, ["values", "indices"], {}),
    ("math_ops", MathOps, {"x": lambda: r(3, 5)}, ["fmod", "cumsum"], {}),
]


OPSETS = (13, 17)


def build(base, cls, inputs, outputs, extra, opset):
    name = "%s_op%d" % (base, opset)
    torch.manual_seed(sum(map(ord, base)))
    model = cls()
    if extra.get("double"):
        model = model.double()
    if extra.get("bn"):  # non-trivial running statistics
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 2.0)
                    # distinct values: the exporter merges equal initializers
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)
    model.eval()
    example = {k: f() for k, f in inputs.items()}
    path = os.path.join(HERE, name + ".onnx")
    torch.onnx.export(model, tuple(example.values()), path, input_names=list(example),
                      output_names=outputs, opset_version=opset, do_constant_folding=False,
                      dynamic_axes=extra.get("dynamic"),
                      training=extra.get("training", torch.onnx.TrainingMode.EVAL))
    run = example
    if "run_batch" in extra:  # a batch size other than the exported one
        run = {k: torch.randn(extra["run_batch"], *v.shape[1:]) for k, v in example.items()}
    run = {k: v.clone().requires_grad_(v.is_floating_point()) for k, v in run.items()}
    outs = model(*run.values())
    outs = outs if isinstance(outs, tuple) else (outs,)
    total = sum(o.sum() for o in outs if o.is_floating_point())
    total.backward()
    inits = {i.name for i in onnx.load(path).graph.initializer}
    data = {}
    for k, v in run.items():
        data["input." + k] = v.detach().numpy()
        if v.is_floating_point():
            data["grad." + k] = v.grad.numpy()
    for k, o in zip(outputs, outs):
        data["output." + k] = o.detach().numpy()
    params = dict(model.named_parameters())
    for k, p in params.items():
        if k in inits:
            data["grad." + k] = p.grad.numpy()
    save_safetensors(os.path.join(HERE, name + ".safetensors"), data)
    n_grads = sum(k.startswith("grad.") for k in data)
    print("%-16s opset %d  %2d of %2d parameters compared, %d gradients" %
          (name, opset, sum(k in inits for k in params), len(params), n_grads))


def main():
    only = set(sys.argv[1:])
    for spec in MODELS:
        if not only or spec[0] in only:
            for opset in OPSETS:
                build(*spec, opset)


if __name__ == "__main__":
    main()
