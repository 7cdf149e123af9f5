"""Ops called with the shapes a hostile-argument fuzz of the package found
killing the interpreter (tests/test_hostile_ops.c has the C side). Each
case runs in a child process, so a regression fails this test instead of
taking the suite down; PyTorch's results are the reference."""
import pytest

from conftest import run_child


@pytest.mark.parametrize("a, b, want", [
    ((3, 3, 3), (3, 3, 0), [3, 3, 0]),
    ((2, 0, 3), (2, 3, 4), [2, 0, 4]),
    ((4, 2, 0), (0, 5), [4, 2, 5]),
])
def test_batched_matmul_of_empty_matrices(a, b, want):
    # the batches' split over threads divided by the work of one product: 0
    out = run_child(f"""
        import tensorgraph as tg
        x = tg.ones({a}, requires_grad=True)
        y = tg.matmul(x, tg.ones({b}))
        y.sum().backward()
        print(list(y.shape), float(y.sum()), list(x.grad.shape), float(x.grad.sum()))
        print(list(tg.bmm(tg.ones(3, 3, 3), tg.ones(3, 3, 0)).shape))
        """)
    lines = out.split("\n")
    assert lines[0] == f"{want} 0.0 {list(a)} 0.0"
    assert lines[1] == "[3, 3, 0]"


def test_ints_beyond_a_c_int_are_errors_not_other_values():
    # the op table cast Python ints to C ints: dim 2**32 reduced dim 0,
    # stride 2**32 + 1 ran as stride 1, sort(dim=2**32) sorted dim 0
    import tensorgraph as tg
    F = tg.nn.functional
    x = tg.ones(2, 3)
    for call in (lambda: x.sum(dim=2**32), lambda: x.sum(dim=(0, 2**32 + 1)),
                 lambda: x.softmax(2**32 + 1), lambda: x.transpose(2**32, 1),
                 lambda: x.unsqueeze(-2**31 - 1), lambda: tg.cat([x, x], 2**32),
                 lambda: F.conv2d(tg.ones(1, 3, 5, 5), tg.ones(4, 3, 1, 3), stride=2**32 + 1),
                 lambda: F.conv2d(tg.ones(1, 3, 5, 5), tg.ones(4, 3, 1, 3),
                                  dilation=(1, 2**32 + 1)),
                 lambda: F.conv1d(tg.ones(1, 2, 5), tg.ones(2, 1, 1), groups=2**32 + 2),
                 lambda: F.max_pool2d(tg.ones(1, 1, 4, 4), 2, stride=2**32 + 2)):
        with pytest.raises(RuntimeError, match=r"argument '\w+' is -?\d+, out of the range of "
                                               r"a C int"):
            call()
    for call in (lambda: x.sort(dim=2**32), lambda: x.argsort(dim=2**32 + 1),
                 lambda: x.topk(1, dim=-2**32)):
        with pytest.raises(IndexError, match=r"Dimension out of range .*but got -?4294967"):
            call()
    # correction was cast to an int too (NaN and inf are undefined there)
    for c in (float("nan"), float("inf"), 1e300, 0.5):
        with pytest.raises(RuntimeError, match="correction must be a whole number"):
            tg.var(x, correction=c)
    # int64 parameters keep their full range: an exact, in-range error
    assert tg.tril(x, diagonal=2**40).tolist() == x.tolist()
    assert tg.triu(x, diagonal=-2**40).tolist() == x.tolist()
    with pytest.raises(RuntimeError):
        F.one_hot(tg.tensor([0, 1]), 2**62 + 1)
    # values in range are as before
    assert x.sum(dim=-1).tolist() == [3.0, 3.0]
    assert tg.var(tg.tensor([1.0, 2.0, 3.0]), correction=0).item() == pytest.approx(2 / 3)
