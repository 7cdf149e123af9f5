#!/usr/bin/env python3
"""Optional cross-check of tensorgraph's safetensors files with an
independent reader (numpy only; the C tests never need Python).

    safetensors_crosscheck.py check FILE...   parse, validate, print each tensor
    safetensors_crosscheck.py write FILE      write a file of every dtype with numpy
                                              (for tg_safetensors_load to read)
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "U8": "u1", "BOOL": "?"}


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert 8 + n <= len(data), "header length past the end"
    header = json.loads(data[8:8 + n].decode("utf-8"))
    assert data[8:9] == b"{", "header must start with '{'"
    body = data[8 + n:]
    meta = header.pop("__metadata__", {})
    assert all(isinstance(v, str) for v in meta.values()), "metadata values are strings"
    ranges, out = [], {}
    for name, info in header.items():
        dt = np.dtype(DTYPES[info["dtype"]])
        shape = tuple(info["shape"])
        begin, end = info["data_offsets"]
        count = int(np.prod(shape, dtype=np.int64))
        assert end - begin == count * dt.itemsize, f"{name}: size mismatch"
        out[name] = np.frombuffer(body[begin:end], dtype=dt).reshape(shape)
        ranges.append((begin, end))
    at = 0
    for begin, end in sorted(ranges):
        assert begin == at, "overlap or hole in the data"
        at = end
    assert at == len(body), "bytes after the last tensor"
    return out, meta


def write(path):
    tensors = {
        "f32": np.array([[1.5, -0.0, 3.4e38], [np.inf, np.nan, 1e-40]], dtype="<f4"),
        "f64": np.array([np.pi, -2.5e-310], dtype="<f8"),
        "i32": np.array([-(2**31), 0, 2**31 - 1], dtype="<i4"),
        "i64": np.array([[-(2**63)], [2**63 - 1]], dtype="<i8"),
        "u8": np.arange(0, 256, 51, dtype="u1"),
        "bool": np.array([True, False, True]),
        "scalar": np.array(7.25, dtype="<f4"),
        "empty": np.zeros((0, 2), dtype="<f8"),
    }
    header, blobs, off = {"__metadata__": {"writer": "numpy"}}, [], 0
    for name, a in tensors.items():
        b = a.tobytes()
        dt = [k for k, v in DTYPES.items() if np.dtype(v) == a.dtype][0]
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-(8 + len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "check":
        for path in sys.argv[2:]:
            tensors, meta = read(path)
            print(f"{path}: {len(tensors)} tensors, metadata {meta}")
            for name, a in tensors.items():
                print(f"  {name!r}: {a.dtype} {list(a.shape)} {a.ravel()[:6].tolist()}")
    elif len(sys.argv) == 3 and sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
