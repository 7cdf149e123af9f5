"""python -m tensorgraph ARGS (and the `tg` console script pip installs):
the tg command-line tool's commands, from the installed package.

A wheel (setup.py) ships the tool itself inside the package, next to
libtg.so; this replaces the interpreter with it (exec), so its output,
exit status and signals are the tool's own. In a source build's
build/python layout the tool is the build's build/tg."""
import os
import sys


def tool_path():
    """The tg executable of this package: inside it (wheel, pip install)
    or two folders up (CMake's build/python/tensorgraph -> build/tg)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "tg"), os.path.join(here, os.pardir, os.pardir, "tg")):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.normpath(path)
    return None


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    path = tool_path()
    if path is None:
        sys.stderr.write("python -m tensorgraph: the tg tool is not next to this package "
                         f"({os.path.dirname(os.path.abspath(__file__))}); install it with "
                         "pip (docs/PYTHON.md) or build the source tree's build/tg\n")
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, ["tg"] + args)


if __name__ == "__main__":
    sys.exit(main())
