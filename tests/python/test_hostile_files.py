"""Hostile paths and names given to the file functions: each fails at once
with a clear exception and leaves what was on disk as it was. The calls
that used to hang (a FIFO blocked the reader's open forever) run in a
child process with a timeout, so a regression fails instead of hanging the
suite."""
import os
import stat

import pytest

import tensorgraph as tg
import tensorgraph.nn as nn

from conftest import run_child


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def test_load_of_a_fifo_fails_without_blocking(fifo):
    out = run_child(f"""
        import tensorgraph as tg
        try:
            tg.load({str(fifo)!r})
        except OSError as e:
            print("OSError", e)
        """)
    assert "OSError" in out and "not a regular file" in out


def test_onnx_model_of_a_fifo_fails_without_blocking(fifo):
    out = run_child(f"""
        import tensorgraph as tg
        try:
            tg.onnx.OnnxModel({str(fifo)!r})
        except OSError as e:
            print("OSError", e)
        """)
    assert "OSError" in out and "not a regular file" in out


def test_save_onto_a_fifo_fails_and_keeps_it(fifo):
    with pytest.raises(OSError, match="not a regular file"):
        tg.save({"w": tg.ones(3)}, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(fifo.parent) == ["fifo"]


def test_onnx_export_onto_a_fifo_fails_and_keeps_it(fifo):
    with pytest.raises(OSError, match="not a regular file"):
        tg.onnx.export(nn.Linear(2, 2), (tg.ones(1, 2),), fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_save_through_a_symlink_keeps_the_link(tmp_path):
    target, link = tmp_path / "real.st", tmp_path / "link.st"
    tg.save({"w": tg.zeros(2)}, target)
    os.symlink("real.st", link)
    tg.save({"w": tg.ones(2)}, link)
    assert os.path.islink(link)
    assert tg.load(target)["w"].tolist() == [1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["link.st", "real.st"]


def test_save_refuses_a_name_with_nul(tmp_path):
    # the name used to be cut at the NUL in the file, which then could not be
    # loaded back ("the structure ... does not match its tensors")
    path = tmp_path / "x.st"
    with pytest.raises(ValueError, match="NUL"):
        tg.save({"a\x00b": tg.ones(2)}, path)
    assert not path.exists()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("meta", [
    {"tensorgraph.nonTensor": "[1, 2]"},                       # not an object
    {"tensorgraph.nonTensor": "{"},                            # not JSON
    {"tensorgraph.nonTensor": '{"": "__single_tensor__"}'},    # no tensor 'tensor'
    {"tensorgraph.structure": '{"t": "nope"}'},                # a tensor not in the file
    {"tensorgraph.structure": '{"l": [' * 100000 + ']}' * 100000},  # nested past recursion
])
def test_load_of_hostile_metadata_is_a_runtime_error(tmp_path, meta):
    # the metadata of a file is as hostile as its tensors: these used to
    # raise AttributeError, JSONDecodeError, KeyError or RecursionError
    path = str(tmp_path / "m.st")
    tg._C._save_safetensors(path, {"a": tg.ones(2)}, meta)
    with pytest.raises(RuntimeError, match="does not match its tensors"):
        tg.load(path)
