"""ONNX's node test cases re-expressed at older opsets (7 and up), for
export_cases.py. onnx 1.12's version_converter cannot take most of these
cases down (it lacks the downward adapters, and crashes on some models),
so each node is rewritten here into the form its op had at the older
opset: inputs that used to be attributes become attributes again (their
values taken from the case's data or initializers), and a case is only
re-expressed where the older version computes the same thing (Softmax
before 13 only along the last axis, Resize-10 only with asymmetric
coordinates, ...). Every rewritten model must pass onnx.checker with
full_check (the older schema's attributes, inputs and type constraints);
the expected outputs are the case's own.

    variants(model, inputs) -> [(suffix, model, inputs), ...]"""
import numpy as np
import onnx
import onnx.defs
from onnx import helper, numpy_helper

# (op, until, input, attribute): versions before `until` take input
# number `input` as this attribute. The importer's own table is
# src/onnx/versions.c; this one is the test's independent statement.
LIFTED = [
    ("Slice", 10, 1, "starts"), ("Slice", 10, 2, "ends"), ("Slice", 10, 3, "axes"),
    ("Clip", 11, 1, "min"), ("Clip", 11, 2, "max"),
    ("Pad", 11, 1, "pads"), ("Pad", 11, 2, "value"),
    ("TopK", 10, 1, "k"),
    ("Upsample", 9, 1, "scales"),
    ("Dropout", 12, 1, "ratio"),
    ("Split", 13, 1, "split"),
    ("Squeeze", 13, 1, "axes"), ("Unsqueeze", 13, 1, "axes"),
    ("ReduceSum", 13, 1, "axes"),
]
SCALAR_ATTRS = {("Clip", "min"), ("Clip", "max"), ("Pad", "value"), ("Dropout", "ratio"),
                ("TopK", "k")}


def since(op, opset, domain=""):
    try:
        return onnx.defs.get_schema(op, opset, domain).since_version
    except Exception:
        return None


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


class Skip(Exception):
    pass


def attr(node, name, dflt=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return dflt


def set_attr(node, name, value):
    for i, a in enumerate(node.attribute):
        if a.name == name:
            del node.attribute[i]
            break
    node.attribute.extend([helper.make_attribute(name, value)])


def same_semantics(node, old, new, ranks):
    """Raises Skip where version `old` of node's op computes something else
    than version `new` for this node; adjusts attributes whose defaults
    changed"""
    op = node.op_type
    if op in ("Softmax", "LogSoftmax", "Hardmax") and old < 13 <= new:
        r = ranks.get(node.input[0])
        axis = attr(node, "axis", -1)
        if r is None or axis % r != r - 1:
            raise Skip("before 13 the op works on the input coerced to 2-D")
        set_attr(node, "axis", r - 1)
    if op == "Resize" and old < 11 <= new:
        if (attr(node, "coordinate_transformation_mode", b"half_pixel") != b"asymmetric" or
                attr(node, "nearest_mode", b"round_prefer_floor") != b"floor" or
                attr(node, "mode", b"nearest") == b"cubic"):
            raise Skip("Resize-10 has asymmetric coordinates and rounds down only")
        for a in ("coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                  "exclude_outside", "extrapolation_value"):
            for i, at in enumerate(node.attribute):
                if at.name == a:
                    del node.attribute[i]
                    break
        if len(node.input) < 3 or not node.input[2]:
            raise Skip("Resize-10 takes scales, not sizes")
        node.input[:] = [node.input[0], node.input[2]]
    if op in ("QuantizeLinear", "DequantizeLinear") and old < 13 <= new and \
            ranks.get(node.input[1]) != 0:
        raise Skip("before 13 the scale and zero point are per tensor (scalars) only")
    if op == "BatchNormalization" and old < 14 <= new and attr(node, "training_mode", 0):
        raise Skip("training_mode is new in 14")
    if op == "BatchNormalization" and old < 14 <= new and len(node.output) > 1:
        raise Skip("before 14, more outputs means training")
    if op == "Dropout" and old < 12 <= new and len(node.input) > 2 and node.input[2]:
        raise Skip("training_mode is new in 12")
    if op == "Dropout" and old < 10 and len(node.output) > 1:
        raise Skip("Dropout-7's mask has the data's type, the case's is bool")


def lift(node, old, values):
    """input -> attribute for the inputs version `old` took as attributes"""
    rules = [r for r in LIFTED if r[0] == node.op_type and old < r[1]]
    if not rules:
        return
    first = min(r[2] for r in rules)
    lifted = set(r[2] for r in rules)
    for i in range(first, len(node.input)):
        if node.input[i] and i not in lifted:
            raise Skip("input %d is new after version %d" % (i, old))
    for _, _, i, name in rules:
        if i >= len(node.input) or not node.input[i]:
            continue
        v = values.get(node.input[i])
        if v is None:
            raise Skip("input %s is computed, version %d needs it as an attribute" %
                       (node.input[i], old))
        v = np.asarray(v)
        if (node.op_type, name) in SCALAR_ATTRS:
            if v.size != 1:
                raise Skip("%s is not a scalar" % name)
            v = v.reshape(()).item()
            v = int(v) if name == "k" else float(v)
        else:
            v = [float(x) for x in v.ravel()] if v.dtype.kind == "f" else \
                [int(x) for x in v.ravel()]
        set_attr(node, name, v)
    del node.input[first:]


def rewrite(model, inputs, opset):
    """model at `opset` with the case's inputs, or Skip"""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    names = [vi.name for vi in g.input]
    values = {n: np.asarray(v) for n, v in zip(names, inputs)
              if isinstance(v, (np.ndarray, np.generic))}
    for t in g.initializer:
        values[t.name] = numpy_helper.to_array(t)
    ranks = {n: np.ndim(v) for n, v in values.items()}
    now = default_opset(model)
    used = set()
    for node in g.node:
        if node.domain not in ("", "ai.onnx"):
            raise Skip("not the default domain")
        old, new = since(node.op_type, opset), since(node.op_type, now)
        if old is None:
            raise Skip("%s is not in opset %d" % (node.op_type, opset))
        if old != new:
            same_semantics(node, old, new, ranks)
            lift(node, old, values)
        if node.op_type == "Constant":
            for o in node.output:
                for a in node.attribute:
                    if a.name == "value":
                        values[o] = numpy_helper.to_array(a.t)
        used.update(node.input)
    # graph inputs now read as attributes are dropped, with their data
    keep = [i for i, n in enumerate(names) if n in used or
            any(n == o.name for o in g.output)]
    new_inputs = [inputs[i] for i in keep if i < len(inputs)]
    vis = [g.input[i] for i in keep]
    del g.input[:]
    g.input.extend(vis)
    inits = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(inits)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = opset
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:
        raise Skip("onnx.checker: %s" % str(e).splitlines()[0][:120])
    return m, new_inputs


def variants(model, inputs):
    """the case at each older opset (>= 7) where some node's version differs"""
    now = default_opset(model)
    if now is None:
        return []
    out, seen = [], set()
    sig_now = tuple(since(n.op_type, now, n.domain) for n in model.graph.node)
    seen.add(sig_now)
    for opset in range(now - 1, 6, -1):
        sig = tuple(since(n.op_type, opset, n.domain) for n in model.graph.node)
        if sig in seen or None in sig:
            continue
        seen.add(sig)
        try:
            m, ins = rewrite(model, inputs, opset)
        except Skip:
            continue
        out.append(("_opset%d" % opset, m, ins))
    return out
