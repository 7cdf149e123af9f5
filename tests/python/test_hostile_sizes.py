"""Sizes no memory could hold, given to functions composed in Python: each
fails at once with PyTorch's exception instead of building a list or a
loop of that length until the machine runs out of memory (the calls run in
a child process with a timeout, so a regression fails instead of taking the
suite down). Found by a hostile-argument fuzz of the package."""
import pytest

import tensorgraph as tg

from conftest import run_child


def test_tensor_split_into_too_many_sections_fails_at_once():
    # used to loop 2**40 times building views
    out = run_child("""
        import tensorgraph as tg
        for n in (2**40, 2**64):
            try:
                tg.tensor_split(tg.ones(2, 3), n)
            except RuntimeError as e:
                print("RuntimeError", e)
        print(len(tg.tensor_split(tg.ones(2, 3), 5)))
        """)
    assert out.count("RuntimeError") == 2
    assert out.strip().endswith("5")


def test_combinations_too_many_fails_at_once():
    # used to list C(100, 50) tuples
    out = run_child("""
        import tensorgraph as tg
        try:
            tg.combinations(tg.ones(100), r=50)
        except RuntimeError as e:
            print("RuntimeError", e)
        """)
    assert "RuntimeError" in out


def test_combinations_edges_match_torch():
    with pytest.raises(RuntimeError, match="non-negative"):
        tg.combinations(tg.arange(3), r=-1)
    r = tg.combinations(tg.arange(3), r=0)
    assert r.shape == (0,) and r.dtype == tg.int64
    assert tg.combinations(tg.arange(4), r=2).tolist() == [
        [0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]


def test_huge_orders_fail_at_once():
    # mvlgamma listed p halves in Python and vander made N column tensors:
    # p = N = 2**62 grew until the machine ran out of memory
    out = run_child("""
        import tensorgraph as tg
        for f in (lambda: tg.mvlgamma(tg.empty(0), 2**62),
                  lambda: tg.empty(0).mvlgamma_(2**62),
                  lambda: tg.vander(tg.ones(2), N=2**62),
                  lambda: tg.vander(tg.empty(0), N=2**62)):  # [0, 2**62]: shape too large
            try:
                f()
            except RuntimeError as e:
                print("RuntimeError", e)
        print(tg.vander(tg.empty(0), N=5).shape)
        """)
    assert out.count("RuntimeError") == 4
    assert "[0, 5]" in out


def test_mvlgamma_and_vander_values():
    assert tg.allclose(tg.mvlgamma(tg.tensor([2.5, 3.0]), 3), tg.tensor([1.8810, 2.6949]),
                       atol=1e-4)
    assert tg.vander(tg.tensor([1, 2, 3]), N=4).tolist() == [
        [1, 1, 1, 1], [8, 4, 2, 1], [27, 9, 3, 1]]


def test_adaptive_pools_of_huge_output_sizes_fail_at_once():
    # each output position's window was a Tensor made in a Python loop:
    # output_size 2**62 ran until the machine ran out of memory
    out = run_child("""
        import tensorgraph as tg
        F = tg.nn.functional
        for f in (lambda: F.adaptive_max_pool1d(tg.ones(2, 3, requires_grad=True), 2**62),
                  lambda: F.adaptive_avg_pool2d(tg.ones(1, 2, 3, 3), (2**62, 2)),
                  lambda: F.adaptive_max_pool2d(tg.ones(1, 2, 3, 3), 2**40)):
            try:
                f()
            except RuntimeError as e:
                print("RuntimeError", e)
        print(F.adaptive_max_pool1d(tg.arange(6.).reshape(1, 6), 4).tolist())
        """)
    assert out.count("RuntimeError") == 3
    assert "[[1.0, 2.0, 4.0, 5.0]]" in out


def test_empty_shapes_with_huge_dims_are_too_large():
    # [0, 2**62] has no elements, but its strides (and the kernels' byte
    # offsets) overflowed int64 (undefined behaviour, caught by UBSan); the
    # dims other than 0 must now multiply within the bound whatever their
    # order, as [2**62, 3, 0] already had to
    for f in (lambda: tg.zeros(0, 2**62), lambda: tg.zeros(2**62, 3, 0),
              lambda: tg.empty(0, 4).reshape(0, 3, 1, 2**62),
              lambda: tg.empty(0, 4).view(2, 0, 3, 2**63 - 1)):
        with pytest.raises(RuntimeError, match="shape too large"):
            f()
    assert tg.empty(0, 4).reshape(0, 1000, 1000).shape == (0, 1000, 1000)


def test_zeta_of_a_huge_negative_q_is_immediate():
    # the number of direct terms of the sum came from the smallest q, also
    # where the domain rules give the value: q = -2**63 asked for 2**63 terms
    out = run_child("""
        import tensorgraph as tg
        print(tg.special.zeta(tg.ones(3, 2, dtype=tg.float64), -2**63).tolist())
        print(tg.special.zeta(tg.tensor([2., 3., 2.5]), tg.tensor([-2.**62, -3.5, -3.5])).tolist())
        print(tg.special.polygamma(1, tg.tensor([-2.**62])).tolist())
        """)
    lines = out.split("\n")
    assert lines[0] == str([[float("inf")] * 2] * 3)
    assert lines[1].startswith("[inf, 0.0307784") and lines[1].endswith("nan]")
    # a negative integer: PyTorch's trigamma reflection, pi^2 / sin^2 of the
    # rounded float32 pi x, a finite number (PyTorch's too)
    assert lines[2] == "[16.9527587890625]"


def test_polygamma_of_a_huge_order_is_quick():
    # n! was an exact Python int: math.factorial(2**62) ran until the machine
    # ran out of memory. Now float64's, as PyTorch's exp(lgamma(n + 1)): inf
    # past 170!, so the values are infinite where zeta(n + 1, x) is not 0
    out = run_child("""
        import tensorgraph as tg
        x = tg.tensor([1.0, 0.5], dtype=tg.float64)
        for n in (2**62, 2**62 + 1, 200):
            print(tg.polygamma(n, x).tolist(), x.polygamma(n).tolist())
        print(tg.polygamma(170, tg.tensor([1.0], dtype=tg.float64)).item())
        """)
    lines = out.strip().split("\n")
    assert lines[0] == "[-inf, -inf] [-inf, -inf]"
    assert lines[1] == "[inf, inf] [inf, inf]"
    assert lines[2] == "[-inf, -inf] [-inf, -inf]"
    assert abs(float(lines[3]) / -7.257415615307999e306 - 1) < 1e-12
