"""tg.load of files written by torch.save (_torch_checkpoint.py): state
dicts and training checkpoints as PyTorch saved them (views, shared
storages, every storage type, parameters), a PyTorch run resumed in
tensorgraph, and hostile files built by hand (no PyTorch needed): globals
outside the allowed set, storages too short or missing, views past their
storage, damaged zips and pickles, the format before PyTorch 1.6."""
import struct
import zipfile

import numpy as np
import pytest

import tensorgraph as tg
from conftest import needs_torch, torch


# ---- a torch.save file written by hand --------------------------------------------

def _s(text):
    b = text.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def _i(v):
    return b"J" + struct.pack("<i", v)


def _tup(*items):
    return b"(" + b"".join(items) + b"t"


def _tensor(key, kind="FloatStorage", numel=6, offset=0, size=(2, 3), stride=(3, 1),
            rebuild=b"ctorch._utils\n_rebuild_tensor_v2\n"):
    storage = _tup(_s("storage"), b"ctorch\n" + kind.encode() + b"\n", _s(key), _s("cpu"),
                   _i(numel)) + b"Q"
    return rebuild + _tup(storage, _i(offset), _tup(*map(_i, size)), _tup(*map(_i, stride)),
                          b"\x89", b"ccollections\nOrderedDict\n)R") + b"R"


def _dict(**items):
    body = b"".join(_s(k) + v for k, v in items.items())
    return b"\x80\x02ccollections\nOrderedDict\n)R(" + body + b"u."


def _write(path, pkl, storages, prefix="archive/"):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(prefix + "data.pkl", pkl)
        for key, data in storages.items():
            z.writestr(prefix + "data/" + key, data)
        z.writestr(prefix + "version", b"3\n")
    return path


def _floats(*v):
    return np.array(v, dtype="<f4").tobytes()


def test_a_hand_written_state_dict_loads(tmp_path):
    p = _write(tmp_path / "tg_ck_ok.pt", _dict(weight=_tensor("0"),
                                         bias=_tensor("1", numel=2, size=(2,), stride=(1,))),
               {"0": _floats(1, 2, 3, 4, 5, 6), "1": _floats(7, 8)})
    sd = tg.load(p)
    assert list(sd) == ["weight", "bias"]
    assert sd["weight"].tolist() == [[1, 2, 3], [4, 5, 6]] and sd["bias"].tolist() == [7, 8]
    m = tg.nn.Linear(3, 2)
    m.load_state_dict(sd)
    assert m.weight.tolist() == [[1, 2, 3], [4, 5, 6]]


def test_views_read_their_storage_with_offset_and_stride(tmp_path):
    p = _write(tmp_path / "tg_ck_view.pt", _dict(t=_tensor("0", offset=1, size=(2, 2), stride=(1, 2)),
                                           e=_tensor("0", size=(0, 3))),
               {"0": _floats(0, 1, 2, 3, 4, 5)})
    sd = tg.load(p)
    assert sd["t"].tolist() == [[1, 3], [2, 4]] and tuple(sd["e"].shape) == (0, 3)


@pytest.mark.parametrize("kind,data,want,dtype", [
    ("HalfStorage", np.array([1.5, -2], "<f2").tobytes(), [1.5, -2.0], "float32"),
    ("BFloat16Storage", np.array([0x3FC0, 0xC000], "<u2").tobytes(), [1.5, -2.0], "float32"),
    ("CharStorage", np.array([-3, 4], "i1").tobytes(), [-3, 4], "int32"),
    ("ShortStorage", np.array([-300, 4], "<i2").tobytes(), [-300, 4], "int32"),
    ("ByteStorage", bytes([0, 255]), [0, 255], "uint8"),
    ("BoolStorage", bytes([1, 0]), [True, False], "bool"),
    ("LongStorage", np.array([2 ** 40, -1], "<i8").tobytes(), [2 ** 40, -1], "int64"),
    ("DoubleStorage", np.array([0.1, 2], "<f8").tobytes(), [0.1, 2.0], "float64"),
])
def test_every_storage_type_is_read_or_widened_losslessly(tmp_path, kind, data, want, dtype):
    p = _write(tmp_path / "tg_ck_kind.pt", _dict(t=_tensor("0", kind, 2, size=(2,), stride=(1,))),
               {"0": data})
    t = tg.load(p)["t"]
    assert t.tolist() == want and t.dtype == getattr(tg, dtype)


@pytest.mark.parametrize("pkl,storages,words", [
    (b"\x80\x02cos\nsystem\n" + _s("true") + b"\x85R.", {}, "pickles a 'os.system'"),
    (b"\x80\x02cbuiltins\neval\n" + _s("1") + b"\x85R.", {}, "pickles a 'builtins.eval'"),
    (_dict(t=_tensor("0")), {"0": _floats(1, 2)}, "holds 8 bytes"),
    (_dict(t=_tensor("0")), {}, "storage '0' is missing"),
    (_dict(t=_tensor("0", numel=6, offset=4)), {"0": _floats(*range(6))}, "reads element"),
    (_dict(t=_tensor("0", size=(2, -3))), {"0": _floats(*range(6))}, "size (2, -3)"),
    (_dict(t=_tensor("0", kind="ComplexFloatStorage")), {"0": b"\0" * 48}, "ComplexFloatStorage"),
    (_dict(t=_tensor("0"))[:40], {"0": _floats(*range(6))}, "damaged|pickles a"),
    (b"\x80\x02ccollections\nOrderedDict\n)R(" + _s("x") + b"Q" + b"u.", {},
     "unknown persistent id"),
])
def test_hostile_files_are_refused_with_a_reason(tmp_path, pkl, storages, words):
    p = _write(tmp_path / "tg_ck_bad.pt", pkl, storages)
    with pytest.raises(RuntimeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        tg.load(p)


def test_damaged_zips_and_the_old_format_are_refused(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with pytest.raises(RuntimeError, match="damaged PyTorch checkpoint"):
        tg.load(bad)
    empty = tmp_path / "nodata.pt"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("a/version", b"3")
    with pytest.raises(RuntimeError, match="no data.pkl"):
        tg.load(empty)
    old = tmp_path / "old.pt"
    old.write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19." + b"\x00" * 20)
    with pytest.raises(RuntimeError, match="before PyTorch 1.6"):
        tg.load(old)


# ---- files torch.save wrote ---------------------------------------------------------

@needs_torch
def test_torch_saved_checkpoint_loads_as_pytorch_reads_it(tmp_path):
    base = torch.arange(12, dtype=torch.float32)
    obj = {"model": torch.nn.Linear(3, 2).state_dict(), "epoch": 3, "view": base[2:10:3],
           "again": base.view(3, 4).t(), "half": torch.tensor([1.5, -2.0], dtype=torch.float16),
           "param": torch.nn.Parameter(torch.ones(2)), "size": torch.Size([2, 3]),
           "mixed": [1, "a", None, 2.5, (torch.zeros(0, 2),)], "scalar": torch.tensor(4)}
    torch.save(obj, tmp_path / "ck.pt")
    got, want = tg.load(tmp_path / "ck.pt"), torch.load(tmp_path / "ck.pt")
    assert list(got) == list(want) and got["epoch"] == 3 and got["size"] == (2, 3)
    for k in ("view", "again", "half", "scalar"):
        assert got[k].tolist() == want[k].tolist() and tuple(got[k].shape) == tuple(want[k].shape)
    for k in want["model"]:
        assert got["model"][k].tolist() == want["model"][k].tolist()
    assert isinstance(got["param"], tg.nn.Parameter) and got["param"].requires_grad
    assert got["mixed"][:4] == [1, "a", None, 2.5] and tuple(got["mixed"][4][0].shape) == (0, 2)


@needs_torch
def test_numpy_values_in_a_checkpoint(tmp_path):
    # what training scripts save beside the model: a best score as a NumPy
    # scalar, NumPy's RNG state (an array in a tuple), arrays
    obj = {"best": np.float64(0.25), "n": np.int64(7), "rng": np.random.get_state(),
           "a": np.arange(6).reshape(2, 3), "every_other": np.ones(5, dtype=np.float32)[::2]}
    torch.save(obj, tmp_path / "np.pt")
    got = tg.load(tmp_path / "np.pt")
    assert got["best"] == 0.25 and isinstance(got["best"], np.float64) and got["n"] == 7
    assert got["rng"][0] == "MT19937" and np.array_equal(got["rng"][1], obj["rng"][1])
    assert got["a"].tolist() == [[0, 1, 2], [3, 4, 5]] and got["every_other"].tolist() == [1.0] * 3


@needs_torch
def test_a_pickled_module_is_refused_by_name(tmp_path):
    torch.save(torch.nn.Linear(2, 2), tmp_path / "m.pt")
    with pytest.raises(RuntimeError, match="torch.nn.modules.linear.Linear'.*state_dict"):
        tg.load(tmp_path / "m.pt")


@needs_torch
def test_a_pytorch_run_resumes_in_tensorgraph(tmp_path):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    x = torch.randn(5, 4)
    for _ in range(3):
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
    torch.save({"model": m.state_dict(), "opt": opt.state_dict()}, tmp_path / "run.pt")
    ck = tg.load(tmp_path / "run.pt")
    tm = tg.nn.Sequential(tg.nn.Linear(4, 3), tg.nn.ReLU(), tg.nn.Linear(3, 2))
    tm.load_state_dict(ck["model"])
    topt = tg.optim.Adam(tm.parameters(), lr=0.01)
    topt.load_state_dict(ck["opt"])
    tx = tg.tensor(x.numpy())
    for _ in range(2):
        opt.zero_grad()
        m(x).pow(2).sum().backward()
        opt.step()
        topt.zero_grad()
        tm(tx).pow(2).sum().backward()
        topt.step()
    for a, b in zip(m.parameters(), tm.parameters()):
        assert np.allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-7)


def test_buffer_opcodes_are_refused(tmp_path):
    # a bytearray under a NumPy array would leave it on freed memory once
    # the pickle drops it: protocol 5's buffer opcodes are refused
    pkl = (b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n" + _tup(_i(0)) +
           b"C\x01b\x87R" + _tup(_i(1), _tup(_i(4)), b"cnumpy\ndtype\n" + _s("u1") +
                                 b"\x89\x88\x87R", b"\x89",
                                 b"\x96" + struct.pack("<Q", 4) + b"abcd") + b"b.")
    with pytest.raises(RuntimeError, match="buffers"):
        tg.load(_write(tmp_path / "ba.pt", pkl, {}))
