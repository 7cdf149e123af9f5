"""The package as installed: one version everywhere, the tg tool's commands
from `python -m tensorgraph`, and the configuration report. Runs against
whichever tensorgraph is imported (the build's build/python under ctest,
an installed wheel under scripts/check_wheel.sh)."""
import importlib.metadata
import os
import re
import subprocess
import sys

import tensorgraph as tg

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)


def run_tool(*args):
    return subprocess.run([sys.executable, "-m", "tensorgraph", *args], capture_output=True,
                          text=True, timeout=120)


def test_version_is_the_c_librarys():
    with open(os.path.join(SOURCE, "include", "tg", "core.h"), encoding="utf-8") as f:
        header = re.search(r'^#define TG_VERSION "([^"]+)"', f.read(), re.M).group(1)
    assert tg.__version__ == header
    out = run_tool("version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"tensorgraph {tg.__version__}"


def test_distribution_version_when_installed():
    try:
        dist = importlib.metadata.distribution("tensorgraph")
    except importlib.metadata.PackageNotFoundError:
        return  # the source build's build/python: no distribution metadata
    files = [str(f) for f in dist.files or []]
    if not any(f.endswith("tensorgraph/__init__.py") for f in files):
        return  # metadata of another copy than the one imported
    assert dist.version == tg.__version__


def test_tool_commands():
    out = run_tool("--help")
    assert out.returncode == 0, out.stderr
    for command in ("train", "eval", "graph", "run", "inspect", "data", "version"):
        assert re.search(rf"^\s+{command}\s", out.stdout, re.M), out.stdout
    bad = run_tool("no-such-command")
    assert bad.returncode == 1
    assert "unknown command 'no-such-command'" in bad.stderr


def test_tool_runs_the_package_library():
    # the tool and the extension report the same kernels: one library
    out = run_tool("version", "--verbose")
    assert out.returncode == 0, out.stderr
    assert f"tensorgraph {tg.__version__}" in out.stdout
    assert "kernels:" in out.stdout


def test_show_config(capsys):
    tg.show_config()
    out = capsys.readouterr().out
    assert out.startswith(f"tensorgraph {tg.__version__}\n")
    for field in ("build:", "cpu:", "kernels:", "per instruction set, chosen at run time:",
                  "blas:", "threads:", "package:"):
        assert field in out, out
    # the tool links the same library: the same report
    tool = run_tool("version", "--verbose").stdout
    assert out.split("\nthreads:")[0].split("\n", 1)[1] in tool


def test_show_config_says_why(monkeypatch):
    # TG_CPU is read once per process: ask a fresh one
    env = dict(os.environ, TG_CPU="no-such-level")
    out = subprocess.run([sys.executable, "-c", "import tensorgraph; tensorgraph.show_config()"],
                         capture_output=True, text=True, env=env, timeout=120).stdout
    assert "TG_CPU=no-such-level is not generic, avx2 or avx512: ignored" in out, out
