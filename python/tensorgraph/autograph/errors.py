"""Errors of source conversion, located in the user's code.

Every error autograph raises names the file and line of the user's
statement and shows that line, whether it is found while converting the
source (a node of the parsed function) or while tracing the converted code
(the innermost frame of user code on the stack: converted code is compiled
with the user's file name and line numbers, so its frames point there).
"""
import linecache
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ConversionError(ValueError):
    """A construct tg.function cannot turn into graph control flow, or a
    Python program whose meaning a graph cannot keep (a variable defined in
    one branch only, a loop variable changing dtype, a Python side effect
    in a loop). `filename`, `lineno` and `source_line` locate it."""

    def __init__(self, message, filename=None, lineno=None):
        self.filename, self.lineno = filename, lineno
        self.source_line = linecache.getline(filename, lineno).strip() if filename else ""
        self.reason = message
        where = ""
        if filename:
            where = f'File "{filename}", line {lineno}\n    {self.source_line}\n'
        super().__init__(where + message)


def is_library_file(filename):
    """True for tensorgraph's own files (frames error locations skip)."""
    return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


def user_frame(depth=1):
    """The innermost frame outside tensorgraph (the converted user statement
    that called into autograph), or None."""
    f = sys._getframe(depth)
    while f is not None and is_library_file(f.f_code.co_filename):
        f = f.f_back
    return f

