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
