"""Differential fuzzing of the nn modules against PyTorch: each case builds
one module with random constructor arguments in both libraries, copies
PyTorch's parameters and buffers into tensorgraph's, runs the same random
input forward (train or eval mode), then backward from the same random
output gradient, and compares the outputs, the input gradients, the
parameter gradients and the buffers afterwards (running statistics).
A case PyTorch refuses must be refused by tensorgraph too (any exception);
a case tensorgraph refuses that PyTorch runs is reported.

    /usr/bin/python3 fuzz/python/diff_modules.py [--cases N] [--seed S] [--only NAME]
                                                 [--default-float64]

--second-order backs a gradient penalty instead: the input gradients,
taken with create_graph, times random weights (what WGAN-GP and Hessian
products run); a gradient it does not reach counts as zeros either way.
PyTorch 1.13's L1Loss and TripletMarginLoss and PairwiseDistance with
p=1 give a non-zero second derivative of |x - y| there (theirs, not
tensorgraph's, is off: it is 0).

--default-float64 sets both libraries' default dtype to float64
(set_default_dtype) and builds the modules in it instead of converting
them with .double(): their parameters, buffers and the Python numbers
inside their computations must then come out float64 unasked.

PYTHONPATH must hold the built package (build/python). Prints one line per
disagreement and a summary; exit status 1 when any case disagrees."""
import argparse
import random
import sys
import traceback

import numpy as np
import torch

import tensorgraph as tg

RTOL, ATOL = 2e-4, 2e-5


def _conv_case(r, dims, transpose=False):
    c_in = r.choice([1, 2, 3, 4, 6])
    groups = r.choice([g for g in (1, 2, 3) if c_in % g == 0])
    c_out = groups * r.randint(1, 3)
    k = tuple(r.randint(1, 3) for _ in range(dims))
    kw = dict(stride=tuple(r.randint(1, 2) for _ in range(dims)),
              dilation=tuple(r.randint(1, 2) for _ in range(dims)),
              groups=groups, bias=r.random() < 0.7)
    if transpose:
        kw["padding"] = tuple(r.randint(0, 1) for _ in range(dims))
        kw["output_padding"] = tuple(r.randint(0, min(s, d) - 1)
                                     for s, d in zip(kw["stride"], kw["dilation"]))
    else:
        kw["padding"] = r.choice(["same", "valid", tuple(r.randint(0, 2) for _ in range(dims))])
        if kw["padding"] == "same":
            kw["stride"] = 1
        kw["padding_mode"] = r.choice(["zeros", "zeros", "reflect", "replicate", "circular"])
    shape = (r.randint(1, 2), c_in) + tuple(r.randint(4, 7) for _ in range(dims))
    name = ("ConvTranspose%dd" if transpose else "Conv%dd") % dims
    return name, (c_in, c_out, k), kw, [shape]


def _norm_case(r):
    kind = r.choice(["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d",
                     "InstanceNorm2d", "GroupNorm", "LayerNorm", "LocalResponseNorm"])
    c = r.randint(1, 6)
    n = r.randint(1, 3) if "Instance" not in kind else r.randint(1, 3)
    if kind.startswith("BatchNorm") or kind.startswith("InstanceNorm"):
        d = int(kind[-2])
        kw = dict(eps=r.choice([1e-5, 1e-3]), momentum=r.choice([0.1, 0.5, None]),
                  affine=r.random() < 0.6, track_running_stats=r.random() < 0.6)
        spatial = tuple(r.randint(2, 4) for _ in range(d - 1 if d > 1 else r.randint(0, 1)))
        if kind.startswith("InstanceNorm"):
            spatial = tuple(r.randint(2, 4) for _ in range(d))
        if kind == "BatchNorm1d" and not spatial and n == 1:
            n = 2
        return kind, (c,), kw, [(n, c) + spatial]
    if kind == "GroupNorm":
        g = r.choice([x for x in (1, 2, 3) if c % x == 0])
        return kind, (g, c), dict(affine=r.random() < 0.7), [(n, c, r.randint(1, 4), 3)]
    if kind == "LayerNorm":
        shape = (n, r.randint(1, 3), c)
        norm = shape[-r.randint(1, 2):]
        return kind, (list(norm),), dict(elementwise_affine=r.random() < 0.7), [shape]
    return kind, (r.randint(1, 4),), dict(alpha=r.choice([1e-4, 0.1]), beta=0.75, k=r.choice([1.0, 2.0])), \
        [(n, c, 3, 4)]


def _rnn_case(r):
    kind = r.choice(["RNN", "LSTM", "GRU"])
    inp, hid = r.randint(1, 5), r.randint(1, 5)
    kw = dict(num_layers=r.randint(1, 2), bias=r.random() < 0.7, batch_first=r.random() < 0.5,
              bidirectional=r.random() < 0.5)
    if kind == "RNN":
        kw["nonlinearity"] = r.choice(["tanh", "relu"])
    if kind == "LSTM" and r.random() < 0.3:
        kw["proj_size"] = r.randint(1, hid - 1) if hid > 1 else 0
    t, b = r.randint(1, 4), r.randint(1, 3)
    shape = (b, t, inp) if kw["batch_first"] else (t, b, inp)
    if r.random() < 0.2:
        shape = (t, inp)
    return kind, (inp, hid), kw, [shape]


def _cell_case(r):
    kind = r.choice(["RNNCell", "LSTMCell", "GRUCell"])
    inp, hid = r.randint(1, 5), r.randint(1, 5)
    kw = dict(bias=r.random() < 0.7)
    if kind == "RNNCell":
        kw["nonlinearity"] = r.choice(["tanh", "relu"])
    b = r.randint(1, 3)
    shapes = [(b, inp) if r.random() < 0.8 else (inp,)]
    if r.random() < 0.5:
        h = (b, hid) if len(shapes[0]) == 2 else (hid,)
        shapes.append(h)
    if kind == "LSTMCell" and len(shapes) == 2:
        return kind, (inp, hid), kw, [shapes[0], ("pair", shapes[1])]
    return kind, (inp, hid), kw, shapes


def _mha_case(r):
    heads = r.choice([1, 2])
    e = heads * r.randint(1, 3)
    kw = dict(bias=r.random() < 0.7, batch_first=r.random() < 0.5,
              add_bias_kv=r.random() < 0.2, add_zero_attn=r.random() < 0.2)
    if r.random() < 0.3:
        kw["kdim"], kw["vdim"] = r.randint(1, 4), r.randint(1, 4)
    b, lq, lk = r.randint(1, 2), r.randint(1, 4), r.randint(1, 4)
    def s(length, d):
        return (b, length, d) if kw["batch_first"] else (length, b, d)
    shapes = [s(lq, e), s(lk, kw.get("kdim", e)), s(lk, kw.get("vdim", e))]
    if r.random() < 0.6:
        # key_padding_mask, need_weights, attn_mask, average_attn_weights
        kpm = ("boolmask", (b, lk)) if r.random() < 0.5 else ("const", None)
        extra = lk + (1 if kw["add_bias_kv"] else 0)
        am = r.choice([("const", None), ("boolmask", (lq, lk)), ("x", (lq, lk)),
                       ("boolmask", (b * heads, lq, lk))])
        if kw["add_bias_kv"] or kw["add_zero_attn"]:
            am, kpm = ("const", None), ("const", None)  # their masks grow by a column
        del extra
        shapes += [kpm, ("const", r.random() < 0.7), am, ("const", r.random() < 0.5)]
    return "MultiheadAttention", (e, heads), kw, shapes


def _transformer_case(r):
    kind = r.choice(["TransformerEncoderLayer", "TransformerDecoderLayer"])
    heads = r.choice([1, 2])
    d = heads * r.randint(1, 3)
    kw = dict(dim_feedforward=r.randint(2, 8), dropout=0.0, batch_first=r.random() < 0.5,
              norm_first=r.random() < 0.5, activation=r.choice(["relu", "gelu"]),
              layer_norm_eps=r.choice([1e-5, 1e-3]))
    b, l1, l2 = r.randint(1, 2), r.randint(1, 4), r.randint(1, 4)
    def s(length):
        return (b, length, d) if kw["batch_first"] else (length, b, d)
    shapes = [s(l1)] + ([s(l2)] if kind.endswith("DecoderLayer") else [])
    if r.random() < 0.6:
        def mask(lq, lk):
            return r.choice([("const", None), ("boolmask", (lq, lk)), ("x", (lq, lk))])
        def kpm(length):
            return r.choice([("const", None), ("boolmask", (b, length))])
        if kind == "TransformerEncoderLayer":
            shapes += [mask(l1, l1), kpm(l1)]
        else:
            shapes += [mask(l1, l1), mask(l1, l2), kpm(l1), kpm(l2)]
    return kind, (d, heads), kw, shapes


def _pool_case(r):
    kind = r.choice(["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d",
                     "LPPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d",
                     "Upsample", "PixelShuffle", "PixelUnshuffle", "ZeroPad2d", "ReflectionPad1d",
                     "ReplicationPad2d", "CircularPad1d" if hasattr(torch.nn, "CircularPad1d") else "ZeroPad2d",
                     "Flatten", "Unflatten", "ChannelShuffle", "Fold", "Unfold"])
    n, c = r.randint(1, 2), r.randint(1, 4)
    if kind[-2:] in ("1d", "2d", "3d") and "Pad" not in kind:
        d = int(kind[-2])
        shape = (n, c) + tuple(r.randint(3, 8) for _ in range(d))
        if kind.startswith("Adaptive"):
            args = (tuple(r.randint(1, 4) for _ in range(d)),) if d > 1 else (r.randint(1, 4),)
            return kind, args, {}, [shape]
        k = r.randint(1, 3)
        kw = dict(stride=r.randint(1, 3), ceil_mode=r.random() < 0.4)
        if kind.startswith("LPPool"):
            return kind, (r.choice([1, 2, 3]), k), kw, [shape]
        kw["padding"] = r.randint(0, k // 2)
        if kind.startswith("Max"):
            kw["dilation"] = r.randint(1, 2)
        else:
            kw["count_include_pad"] = r.random() < 0.5
        return kind, (k,), kw, [shape]
    if "Pad" in kind:
        d = int(kind[-2])
        shape = (n, c) + tuple(r.randint(3, 5) for _ in range(d))
        return kind, (tuple(r.randint(0, 2) for _ in range(2 * d)),), {}, [shape]
    if kind == "Upsample":
        mode = r.choice(["nearest", "linear", "bilinear", "bicubic", "nearest-exact"])
        d = 1 if mode == "linear" else 2
        kw = dict(scale_factor=r.choice([2, 1.5, 0.7]), mode=mode)
        if mode not in ("nearest", "nearest-exact"):
            kw["align_corners"] = r.random() < 0.5
        return kind, (), kw, [(n, c) + tuple(r.randint(2, 5) for _ in range(d))]
    if kind == "PixelShuffle":
        f = r.randint(1, 3)
        return kind, (f,), {}, [(n, c * f * f, 2, 3)]
    if kind == "PixelUnshuffle":
        f = r.randint(1, 2)
        return kind, (f,), {}, [(n, c, 2 * f, 4 * f)]
    if kind == "Flatten":
        return kind, (r.randint(0, 1), r.choice([-1, 2])), {}, [(n, c, 2, 3)]
    if kind == "Unflatten":
        return kind, (1, (2, c)), {}, [(n, 2 * c, 3)]
    if kind == "ChannelShuffle":
        return kind, (2,), {}, [(n, 2 * c, 2, 2)]
    if kind == "Fold":
        return kind, ((4, 5), (2, 2)), dict(stride=1), [(n, c * 4, 12)]
    return kind, ((2, 2),), dict(stride=r.randint(1, 2), padding=r.randint(0, 1),
                                 dilation=r.randint(1, 2)), [(n, c, 5, 5)]


def _embedding_case(r):
    num, dim = r.randint(2, 8), r.randint(1, 4)
    kind = r.choice(["Embedding", "EmbeddingBag"])
    kw = {}
    if r.random() < 0.4:
        kw["padding_idx"] = r.randint(-num, num - 1)
    if kind == "Embedding":
        if r.random() < 0.3:
            kw["max_norm"], kw["norm_type"] = r.choice([0.5, 1.0]), r.choice([1.0, 2.0])
        return kind, (num, dim), kw, [("idx", num, (r.randint(1, 3), r.randint(1, 4)))]
    kw["mode"] = r.choice(["sum", "mean", "max"])
    return kind, (num, dim), kw, [("idx", num, (r.randint(1, 3), r.randint(1, 4)))]


def _loss_case(r):
    kind = r.choice(["CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MSELoss",
                     "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "PoissonNLLLoss",
                     "GaussianNLLLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
                     "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
                     "MultiLabelMarginLoss", "CosineEmbeddingLoss", "TripletMarginLoss"])
    red = r.choice(["mean", "sum", "none"])
    n, c = r.randint(1, 4), r.randint(2, 5)
    kw = dict(reduction=red)
    if kind in ("CrossEntropyLoss", "NLLLoss"):
        if r.random() < 0.4:
            kw["ignore_index"] = r.randint(0, c - 1)
        if r.random() < 0.4:
            kw["weight"] = ("param", (c,))
        spatial = tuple(r.randint(1, 3) for _ in range(r.randint(0, 2)))
        if kind == "CrossEntropyLoss":
            kw["label_smoothing"] = r.choice([0.0, 0.0, 0.1, 0.5])
            if r.random() < 0.3:
                return kind, (), kw, [(n, c) + spatial, ("prob", (n, c) + spatial)]
        return kind, (), kw, [(n, c) + spatial, ("idx", c, (n,) + spatial)]
    if kind in ("BCELoss", "BCEWithLogitsLoss"):
        if r.random() < 0.3:
            kw["weight"] = ("param", (c,))
        if kind == "BCEWithLogitsLoss" and r.random() < 0.3:
            kw["pos_weight"] = ("param", (c,))
        return kind, (), kw, [("prob" if kind == "BCELoss" else "x", (n, c)), ("prob", (n, c))]
    if kind in ("SmoothL1Loss", "HuberLoss"):
        kw["beta" if kind == "SmoothL1Loss" else "delta"] = r.choice([0.5, 1.0, 2.0])
    if kind == "KLDivLoss":
        kw["log_target"] = r.random() < 0.5
        if red == "mean":
            kw["reduction"] = r.choice(["mean", "batchmean"])
    if kind == "PoissonNLLLoss":
        kw["log_input"], kw["full"] = r.random() < 0.5, r.random() < 0.5
        return kind, (), kw, [("pos", (n, c)), ("pos", (n, c))]
    if kind == "GaussianNLLLoss":
        kw["full"] = r.random() < 0.5
        return kind, (), kw, [(n, c), (n, c), ("pos", (n, c) if r.random() < 0.7 else (n, 1))]
    if kind in ("MarginRankingLoss", "CosineEmbeddingLoss"):
        kw["margin"] = r.choice([0.0, 0.3])
        if kind == "CosineEmbeddingLoss":
            return kind, (), kw, [(n, c), (n, c), ("sign", (n,))]
        return kind, (), kw, [(n,), (n,), ("sign", (n,))]
    if kind in ("HingeEmbeddingLoss", "SoftMarginLoss"):
        return kind, (), kw, [(n, c), ("sign", (n, c))]
    if kind == "MultiLabelSoftMarginLoss":
        return kind, (), kw, [(n, c), ("bits", (n, c))]
    if kind == "MultiMarginLoss":
        kw["p"], kw["margin"] = r.choice([1, 2]), r.choice([1.0, 0.5])
        return kind, (), kw, [(n, c), ("idx", c, (n,))]
    if kind == "MultiLabelMarginLoss":
        return kind, (), kw, [(n, c), ("labels", c, (n, c))]
    if kind == "TripletMarginLoss":
        kw["margin"], kw["p"], kw["swap"] = r.choice([1.0, 0.5]), r.choice([1.0, 2.0]), r.random() < 0.5
        return kind, (), kw, [(n, c), (n, c), (n, c)]
    return kind, (), kw, [(n, c), (n, c)]


def _activation_case(r):
    kind = r.choice(["ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
                     "Mish", "Softplus", "Softshrink", "Hardshrink", "Tanhshrink", "Hardtanh",
                     "Hardsigmoid", "Hardswish", "LogSigmoid", "Softsign", "Threshold", "GLU",
                     "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "RReLU", "Identity",
                     "Dropout", "AlphaDropout", "Bilinear", "Linear", "CosineSimilarity",
                     "PairwiseDistance"])
    shape = (r.randint(1, 3), 4, r.randint(1, 3))
    kw, args = {}, ()
    if kind == "PReLU":
        args = (r.choice([1, 4]),)
    elif kind in ("Softplus",):
        kw = dict(beta=r.choice([1.0, 2.0]), threshold=r.choice([20.0, 1.0]))
    elif kind in ("Softshrink", "Hardshrink"):
        args = (r.choice([0.1, 0.5]),)
    elif kind == "Threshold":
        args = (0.1, r.choice([0.0, 2.0]))
    elif kind == "GELU":
        kw = dict(approximate=r.choice(["none", "tanh"]))
    elif kind in ("GLU", "Softmax", "LogSoftmax", "Softmin"):
        args = (r.choice([0, 1, -1]),)
    elif kind in ("ELU", "CELU"):
        args = (r.choice([1.0, 0.5]),)
    elif kind == "Hardtanh":
        args = (-0.5, r.choice([0.5, 1.0]))
    elif kind in ("Dropout", "AlphaDropout"):
        args = (0.0,)
    elif kind == "Bilinear":
        return kind, (3, 2, 4), dict(bias=r.random() < 0.7), [(r.randint(1, 3), 3), (1, 2)]
    elif kind == "Linear":
        return kind, (shape[-1], r.randint(1, 3)), dict(bias=r.random() < 0.7), [shape]
    elif kind in ("CosineSimilarity", "PairwiseDistance"):
        kw = dict(eps=1e-6)
        if kind == "PairwiseDistance":
            kw["p"], kw["keepdim"] = r.choice([1.0, 2.0, 3.0]), r.random() < 0.5
        return kind, (), kw, [shape, shape]
    elif kind == "Softmax2d":
        return kind, (), {}, [(1, 2, 3, 3)]
    elif kind == "RReLU":
        return kind, (), {}, [shape]
    return kind, args, kw, [shape]


FAMILIES = {
    "conv": lambda r: _conv_case(r, r.randint(1, 3)),
    "conv_transpose": lambda r: _conv_case(r, r.randint(1, 3), transpose=True),
    "norm": _norm_case, "rnn": _rnn_case, "cell": _cell_case, "mha": _mha_case, "transformer": _transformer_case,
    "pool": _pool_case, "embedding": _embedding_case, "loss": _loss_case,
    "activation": _activation_case,
}


def _make_input(spec, nr):
    """(numpy float64 array, differentiable?) for one input spec"""
    if isinstance(spec, tuple) and spec and isinstance(spec[0], str):
        kind = spec[0]
        if kind == "idx":
            return nr.integers(0, spec[1], size=spec[2]).astype(np.int64), False
        if kind == "labels":
            c, shape = spec[1], spec[2]
            out = np.full(shape, -1, np.int64)
            for row in np.ndindex(shape[:-1]):
                k = nr.integers(0, c + 1)
                out[row][:k] = nr.choice(c, size=k, replace=False)
            return out, False
        shape = spec[1]
        if kind == "prob":
            return nr.uniform(0.05, 0.95, size=shape), True
        if kind == "pos":
            return nr.uniform(0.1, 2.0, size=shape), True
        if kind == "sign":
            return nr.choice([-1.0, 1.0], size=shape), False
        if kind == "bits":
            return nr.integers(0, 2, size=shape).astype(np.float64), False
        if kind == "boolmask":
            m = nr.random(shape) < 0.3
            m[..., 0] = False  # a row all masked is NaN in both libraries
            return m, False
        if kind == "const":
            return spec[1], False
        if kind == "pair":
            return (nr.standard_normal(shape), nr.standard_normal(shape)), True
        return nr.standard_normal(shape), True
    return nr.standard_normal(spec), True


def _resolve_kw(kw, nr):
    """the constructor's arguments, ("param", shape) drawn as an array"""
    return {k: nr.uniform(0.2, 2.0, size=v[1]) if isinstance(v, tuple) and v and v[0] == "param"
            else v for k, v in kw.items()}


def _to(lib, arr, dtype):
    return lib.tensor(arr, dtype=dtype)


def _flatten(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res += _flatten(o)
        return res
    return [] if out is None else [out]


DEFAULT64 = False


def _check_default_dtypes(lib, mod):
    """under set_default_dtype(float64), a module's floating parameters
    and buffers are made in it"""
    for k, v in mod.state_dict().items():
        if v.dtype.is_floating_point and v.dtype != lib.float64:
            raise AssertionError(f"{lib.__name__}: {k} is {v.dtype} under a float64 default")


SECOND_ORDER = False


def run_case(r, family):
    name, args, kw, specs = FAMILIES[family](r)
    seed = r.randrange(1 << 30)
    # RReLU draws its slopes at random in training mode
    train = r.random() < 0.6 and name != "RReLU"
    nr = np.random.default_rng(seed)
    kw = _resolve_kw(kw, nr)
    inputs = [_make_input(s, nr) for s in specs]
    results, errors = {}, {}
    for lib in (torch, tg):
        try:
            fdt = torch.float64 if lib is torch else tg.float64
            idt = torch.int64 if lib is torch else tg.int64
            kwl = {k: (_to(lib, v, fdt) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
            mod = getattr(lib.nn, name)(*args, **kwl)
            mod = mod if DEFAULT64 else mod.double()
            mod.train(train)
            if DEFAULT64:
                _check_default_dtypes(lib, mod)
            if lib is torch:
                start = {k: v.detach().numpy().copy() for k, v in mod.state_dict().items()}
            else:
                mod.load_state_dict({k: tg.tensor(v) for k, v in start.items()})
            xs, leaves = [], []
            for arr, diff in inputs:
                if not isinstance(arr, (tuple, np.ndarray)):  # a Python value
                    xs.append(arr)
                    continue
                parts = arr if isinstance(arr, tuple) else (arr,)
                ts = []
                for p in parts:
                    dt = fdt if p.dtype == np.float64 else idt
                    if p.dtype == np.bool_:
                        dt = torch.bool if lib is torch else tg.bool
                    t = _to(lib, p, dt)
                    if diff:
                        t.requires_grad_(True)
                    ts.append(t)
                leaves += ts
                xs.append(tuple(ts) if isinstance(arr, tuple) else ts[0])
            if lib is torch:
                torch.manual_seed(0)
            out = _flatten(mod(*xs))
            gnr = np.random.default_rng(seed + 1)
            gouts = [gnr.standard_normal(tuple(o.shape)) for o in out]
            floats = [(o, g) for o, g in zip(out, gouts) if o.dtype in (torch.float64, tg.float64)]
            first = None
            if floats and any(o.requires_grad for o, _ in floats):
                outs = [o for o, _ in floats if o.requires_grad]
                gs = [_to(lib, g, fdt) for o, g in floats if o.requires_grad]
                ls = [x for x in leaves if x.requires_grad]
                if SECOND_ORDER and ls:  # a gradient penalty: the input gradients' own
                    g1 = lib.autograd.grad(outs, ls, gs, create_graph=True, allow_unused=True)
                    first = [None if g is None else g.detach().numpy() for g in g1]
                    wnr = np.random.default_rng(seed + 2)
                    pen = [(g * _to(lib, wnr.standard_normal(tuple(g.shape)), fdt)).sum()
                           for g in g1 if g is not None and g.requires_grad]
                    if pen:
                        sum(pen).backward()
                else:
                    lib.autograd.backward(outs, gs)
            res = {"out": [o.detach().numpy() for o in out], "first": first}
            res["xgrad"] = [None if x.grad is None else x.grad.numpy() for x in leaves]
            res["pgrad"] = {k: (None if p.grad is None else p.grad.numpy())
                            for k, p in mod.named_parameters()}
            res["buf"] = {k: b.numpy() for k, b in mod.named_buffers()}
            results[lib.__name__] = res
        except Exception as e:  # noqa: BLE001 - compared below
            errors[lib.__name__] = "%s: %s" % (type(e).__name__, str(e)[:200])
            if lib is torch:
                break
    desc = "%s(%s, %s) train=%s inputs=%s" % (
        name, args, {k: (v if not isinstance(v, np.ndarray) else "arr") for k, v in kw.items()},
        train, [getattr(a, "shape", a if not isinstance(a, tuple) else "pair") for a, _ in inputs])
    if "torch" in errors:
        return "SKIP"
    if "tensorgraph" in errors:
        return "REFUSED %s: %s" % (desc, errors["tensorgraph"])
    a, b = results["torch"], results["tensorgraph"]
    probs = []
    def cmp(what, x, y):
        if x is None and y is None:
            return
        if (x is None) != (y is None):
            if SECOND_ORDER:  # a gradient the penalty does not reach: None or zeros
                x, y = (np.zeros_like(y) if x is None else x), (np.zeros_like(x) if y is None else y)
            else:
                probs.append("%s: None mismatch (torch %s, tg %s)" % (what, x is None, y is None))
                return
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            probs.append("%s: shape %s vs %s" % (what, x.shape, y.shape))
            return
        if x.dtype.kind != y.dtype.kind and not (x.dtype.kind in "fc" and y.dtype.kind in "fc"):
            probs.append("%s: dtype %s vs %s" % (what, x.dtype, y.dtype))
        if not np.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True):
            d = np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64))) if x.size else 0
            probs.append("%s: max diff %.3g" % (what, d))
    if len(a["out"]) != len(b["out"]):
        probs.append("outputs: %d vs %d" % (len(a["out"]), len(b["out"])))
    for i, (x, y) in enumerate(zip(a["out"], b["out"])):
        cmp("out%d" % i, x, y)
    for i, (x, y) in enumerate(zip(a["first"] or [], b["first"] or [])):
        cmp("first-order xgrad%d" % i, x, y)
    for i, (x, y) in enumerate(zip(a["xgrad"], b["xgrad"])):
        cmp("xgrad%d" % i, x, y)
    if set(a["pgrad"]) != set(b["pgrad"]):
        probs.append("params %s vs %s" % (sorted(a["pgrad"]), sorted(b["pgrad"])))
    for k in a["pgrad"]:
        if k in b["pgrad"]:
            cmp("grad " + k, a["pgrad"][k], b["pgrad"][k])
    for k in a["buf"]:
        if k in b["buf"]:
            cmp("buffer " + k, a["buf"][k], b["buf"][k])
        else:
            probs.append("buffer %s missing" % k)
    return ("MISMATCH %s: %s" % (desc, "; ".join(probs))) if probs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only")
    ap.add_argument("--default-float64", action="store_true")
    ap.add_argument("--second-order", action="store_true",
                    help="backward a gradient penalty: the input gradients (taken with "
                         "create_graph) times random weights")
    a = ap.parse_args()
    global SECOND_ORDER
    SECOND_ORDER = a.second_order
    if a.default_float64:
        global DEFAULT64
        DEFAULT64 = True
        torch.set_default_dtype(torch.float64)
        tg.set_default_dtype(tg.float64)
    import warnings
    warnings.simplefilter("ignore")
    r = random.Random(a.seed)
    fams = [a.only] if a.only else sorted(FAMILIES)
    bad, skipped = 0, 0
    for i in range(a.cases):
        fam = fams[i % len(fams)]
        try:
            msg = run_case(r, fam)
        except Exception:  # noqa: BLE001 - a bug in this script, shown
            msg = "HARNESS %s: %s" % (fam, traceback.format_exc(limit=3))
        if msg == "SKIP":
            skipped += 1
        elif msg:
            bad += 1
            print("[%d %s] %s" % (i, fam, msg), flush=True)
    print("%d cases (%d PyTorch refused), %d disagreements" % (a.cases, skipped, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
