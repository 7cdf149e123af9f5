"""Helpers for tests/python/test_autograd_api_*.py: run one snippet,
written against a module T, with T = tensorgraph and T = torch, and
compare what it returns (tensors as float64 arrays with requires_grad,
nested tuples, plain values) or raises (the exception type and the words
of its message). Under the sanitizers torch's own C++ errors abort the
process, so raising snippets then run on tensorgraph alone."""
import numpy as np

from conftest import SANITIZED, torch

import tensorgraph as tg


def plain(v):
    if isinstance(v, (tg.Tensor,) + ((torch.Tensor,) if torch is not None else ())):
        return ('T', np.asarray(v.detach().numpy(), dtype=float), bool(v.requires_grad))
    if isinstance(v, (tuple, list)):
        return tuple(plain(x) for x in v)
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def equal(a, b):
    """plain values equal, arrays within float32 rounding"""
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and \
            np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(equal, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    return a == b


def same(f):
    """f(tg) and f(torch) give equal results; returns tensorgraph's"""
    a, b = f(tg), f(torch)
    assert equal(plain(a), plain(b)), (plain(a), plain(b))
    return a


def raises_same(f, exc, words):
    """f raises exc with words in its message, with tensorgraph and (when
    torch's errors can run here) with torch"""
    for m in (tg,) if SANITIZED else (tg, torch):
        try:
            f(m)
        except exc as e:
            assert words in str(e), (m.__name__, str(e))
        else:
            raise AssertionError(f"{m.__name__}: no {exc.__name__}")
